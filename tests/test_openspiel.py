"""The game python_sergeant_major in OpenSpiel (sergeant_major_env/openspiel.py), OpenSpiel's own
checks on it, its IS-MCTS bot as the ``ismcts`` agent, and OpenSpiel's RL environment."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from sergeant_major_env import engine  # noqa: E402
from sergeant_major_env import openspiel as smo  # noqa: E402  (registers the game)
from sergeant_major_env.observation import OBSERVATION_SIZE, SEGMENTS, observe  # noqa: E402
from sergeant_major_env.records import check_record  # noqa: E402
from sergeant_major_env.rules import Rules  # noqa: E402
from sergeant_major_env.worlds import sample_worlds  # noqa: E402

PLAYTHROUGH = Path(__file__).parent / "data" / "openspiel_playthrough.txt"
PLAYTHROUGH_GAME = "python_sergeant_major(num_deals=1)"
PLAYTHROUGH_SEED = 7


def play_random(game, seed: int, stop=lambda state: False):
    """A state of ``game`` after uniformly random chance outcomes and decisions (until ``stop``)."""
    rng = np.random.default_rng(seed)
    state = game.new_initial_state()
    while not state.is_terminal() and not stop(state):
        if state.is_chance_node():
            outcomes, probabilities = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(outcomes, p=probabilities)))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    return state


# ----------------------------------------------------------------------------- the game's declarations

def test_load_game_with_rule_options_as_parameters():
    game = pyspiel.load_game("python_sergeant_major(num_deals=2)")
    assert isinstance(game, smo.SergeantMajorGame)
    assert game.rules == Rules(num_deals=2)
    assert game.get_parameters() == {**Rules().to_dict(), "num_deals": 2}
    assert game.get_type().parameter_specification == Rules().to_dict()  # section 9's names and defaults
    assert pyspiel.load_game("python_sergeant_major").rules == Rules()


def test_bad_parameter_is_one_clear_line():
    with pytest.raises(ValueError, match="num_deals must be an integer from 1 to 18"):
        pyspiel.load_game("python_sergeant_major(num_deals=19)")


def test_game_type_and_info_are_declared_truthfully():
    game = pyspiel.load_game("python_sergeant_major(num_deals=3)")
    kind = game.get_type()
    assert kind.dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
    assert kind.information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
    assert kind.chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    assert kind.utility == pyspiel.GameType.Utility.ZERO_SUM and game.utility_sum() == 0.0
    assert kind.reward_model == pyspiel.GameType.RewardModel.REWARDS
    assert not kind.provides_information_state_tensor and not kind.provides_information_state_string
    assert kind.provides_observation_tensor and kind.provides_observation_string
    assert game.num_players() == 3
    assert game.num_distinct_actions() == 58  # RULES.md section 10
    assert game.max_chance_outcomes() == 52
    assert (game.min_utility(), game.max_utility()) == (-39.0, 39.0)  # 13 points a deal (R23, R24)
    assert game.max_game_length() == 53 * 3 + 26 * 2
    assert game.max_chance_nodes_in_history() >= 1 + 52 * 3
    assert game.observation_tensor_shape() == [OBSERVATION_SIZE]


def test_r25_points_sum_to_zero_every_deal_so_zero_sum_holds():
    game = pyspiel.load_game("python_sergeant_major(num_deals=3)")
    for seed in range(3):
        state = play_random(game, seed)
        assert sum(state.returns()) == 0
        record = smo.game_record(state)
        assert all(sum(deal["points"]) == 0 for deal in record["deals"])


def test_chance_nodes_draw_the_first_dealer_then_deal_52_cards_uniformly():
    game = pyspiel.load_game("python_sergeant_major(num_deals=1)")
    state = game.new_initial_state()
    assert state.is_chance_node() and state.chance_outcomes() == [(0, 1 / 3), (1, 1 / 3), (2, 1 / 3)]
    state.apply_action(2)  # R4: seat 2 deals
    for dealt in range(52):
        outcomes = state.chance_outcomes()
        assert len(outcomes) == 52 - dealt and all(p == pytest.approx(1 / (52 - dealt)) for _, p in outcomes)
        state.apply_action(outcomes[0][0])  # the lowest card left: 2S, 3S, ...
    assert state.current_player() == 0  # the playmaker, left of dealer 2 (R5)
    e = state.engine_state
    # R10: card k to seat (dealer + 1 + k) % 3; the last four to the talon
    assert e.dealt[0, 0, :3].tolist() == [0, 3, 6] and e.dealt[0, 1, :2].tolist() == [1, 4]
    assert e.talon_cards[0].tolist() == [48, 49, 50, 51]
    assert state.legal_actions() == list(range(52, 58))  # R8: any mode


def test_rewards_are_each_deals_points_and_returns_their_sum():
    game = pyspiel.load_game("python_sergeant_major(num_deals=2)")
    rng = np.random.default_rng(4)
    state = game.new_initial_state()
    total = np.zeros(3)
    deals_rewarded = 0
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(int(rng.choice([a for a, _ in state.chance_outcomes()])))
            continue
        total += state.rewards()  # as OpenSpiel reads them: at decisions
        deals_rewarded += any(state.rewards())
        state.apply_action(int(rng.choice(state.legal_actions())))
    total += state.rewards()
    assert total.tolist() == state.returns() == state.engine_state.final_scores[0].tolist()
    assert deals_rewarded >= 1


# ----------------------------------------------------------------------------- OpenSpiel's own checks

def test_random_sim_test_default_game():
    pyspiel.random_sim_test(pyspiel.load_game("python_sergeant_major"), num_sims=1, serialize=True, verbose=False)


@pytest.mark.parametrize("option", ["exchanges=False", "must_overtake=True", "must_overtrump=True",
                                    "dealer_builds_talon=True"])
def test_random_sim_test_each_rule_option(option):
    game = pyspiel.load_game(f"python_sergeant_major(num_deals=2,{option})")
    pyspiel.random_sim_test(game, num_sims=1, serialize=True, verbose=False)


def test_committed_playthrough_replays_identically():
    from absl import flags
    from open_spiel.python.algorithms import generate_playthrough

    if not flags.FLAGS.is_parsed():
        flags.FLAGS.mark_as_parsed()  # the playthrough reader reads a flag's default
    original, replayed = generate_playthrough.replay(str(PLAYTHROUGH))
    assert original.splitlines()[0] == f"game: {PLAYTHROUGH_GAME}"
    assert replayed == original, ("the game's behaviour changed; if on purpose, regenerate with "
                                  "python -m tests.test_openspiel")


# ----------------------------------------------------------------------------- clone, serialisation, strings

def test_clone_is_independent_of_the_original():
    game = pyspiel.load_game("python_sergeant_major(num_deals=1)")
    state = play_random(game, 1, stop=lambda s: len(s.history()) > 70)
    clone = state.clone()
    before = state.engine_state.hands.copy()
    clone.apply_action(clone.legal_actions()[0])
    assert (state.engine_state.hands == before).all() and state.history() != clone.history()


def test_safe_deserialize_replays_the_history_without_unpickling():
    game = pyspiel.load_game("python_sergeant_major(num_deals=2)")
    state = play_random(game, 2, stop=lambda s: len(s.history()) > 150)
    text = state.serialize()
    restored = smo.deserialize_state(game, text)
    assert restored.history() == state.history() and str(restored) == str(state)
    assert str(game.deserialize_state(text)) == str(state)  # OpenSpiel's own path agrees
    with pytest.raises(ValueError, match="not a legal action"):
        smo.deserialize_state(game, "history=-1:0,-1:99\nmove_number=0\n__dict__=")


def test_action_strings_name_cards_modes_and_chance_outcomes():
    game = pyspiel.load_game("python_sergeant_major(num_deals=1)")
    state = game.new_initial_state()
    assert state.action_to_string(pyspiel.PlayerId.CHANCE, 1) == "first dealer seat 1"
    state.apply_action(1)
    assert state.action_to_string(pyspiel.PlayerId.CHANCE, 36) == "deal QH to seat 2"
    assert state.action_to_string(0, 36) == "QH" and state.action_to_string(0, 56) == "mode NT"


# ----------------------------------------------------------------------------- observation

def test_observation_tensor_is_the_packages_observe_with_named_segments():
    game = pyspiel.load_game("python_sergeant_major(num_deals=2)")
    state = play_random(game, 3, stop=lambda s: len(s.history()) > 120)
    for player in range(3):
        expected = observe(state.engine_state, player)[0]
        assert np.array_equal(np.asarray(state.observation_tensor(player)), expected)
    observer = game.make_py_observer()
    observer.set_from(state, 1)
    assert list(observer.dict) == list(SEGMENTS)
    assert np.array_equal(observer.dict["hand"], observe(state.engine_state, 1)[0, SEGMENTS["hand"]])


def test_observation_during_the_deal_shows_only_cards_dealt_so_far():
    game = pyspiel.load_game("python_sergeant_major(num_deals=1)")
    state = game.new_initial_state()
    assert not any(state.observation_tensor(0))  # before the lot (R4)
    state.apply_action(0)  # dealer 0: seat 1 is the playmaker and gets the first card
    for card in range(10):  # cards 0..9: seats 1, 2, 0, 1, 2, 0, ...
        state.apply_action(card)
    hand = SEGMENTS["hand"]
    assert np.flatnonzero(np.asarray(state.observation_tensor(0))[hand]).tolist() == [2, 5, 8]
    assert np.flatnonzero(np.asarray(state.observation_tensor(1))[hand]).tolist() == [0, 3, 6, 9]
    assert "4 of 52" not in state.observation_string(0) and "10 of 52 cards dealt" in state.observation_string(0)


def test_observation_is_the_same_in_every_world_the_seat_cannot_tell_apart():
    """The observation never reveals hidden cards: redrawing everything the seat to act cannot
    see (worlds.sample_worlds) leaves its tensor and string unchanged."""
    game = pyspiel.load_game("python_sergeant_major(num_deals=2)")
    rng = np.random.default_rng(0)
    for seed, length in ((5, 60), (6, 100), (7, 150), (8, 190)):
        state = play_random(game, seed, stop=lambda s: len(s.history()) > length and not s.is_chance_node())
        if state.is_terminal():
            continue
        seat = state.current_player()
        for _ in range(3):
            world = game.state_from_engine(sample_worlds(state.engine_state, np.zeros(1, np.intp), 1, rng))
            assert np.array_equal(world.observation_tensor(seat), state.observation_tensor(seat))
            assert world.observation_string(seat) == state.observation_string(seat)


def test_no_information_state_observer_is_claimed():
    game = pyspiel.load_game("python_sergeant_major(num_deals=1)")
    assert game.make_py_observer(pyspiel.IIGObservationType(perfect_recall=True)) is None


# ----------------------------------------------------------------------------- records

def test_game_record_of_a_finished_state_passes_records_check():
    for options in ("num_deals=3", "num_deals=2,must_overtake=True,dealer_builds_talon=True"):
        game = pyspiel.load_game(f"python_sergeant_major({options})")
        state = play_random(game, 11)
        record = smo.game_record(state, players=["a", "b", "c"])
        assert check_record(record) is None
        assert record["scores"] == [int(r) for r in state.returns()]
        assert record["first_dealer"] == state.history()[0]
        first_deal = state.history()[1:53]
        assert record["deals"][0]["talon"] == [smo.card_name(c) for c in first_deal[48:]]


def test_game_record_refuses_an_unfinished_game():
    game = pyspiel.load_game("python_sergeant_major(num_deals=1)")
    with pytest.raises(ValueError, match="finished game"):
        smo.game_record(game.new_initial_state())


# ----------------------------------------------------------------------------- bots as agents

def test_ismcts_agent_plays_legal_moves_in_evaluate_games():
    from sergeant_major_env.agents import make_agent
    from sergeant_major_env.evaluation import play_games

    agent = make_agent("ismcts:simulations=8:exploration=3")
    assert agent.name == "ismcts" and agent.simulations == 8 and agent.exploration == 3.0
    players = [agent, make_agent("random"), make_agent("random")]
    seats = np.array([[0, 1, 2], [1, 0, 2]])  # ismcts in seat 0, then in seat 1
    scores, records = play_games(players, engine.game_seeds(0, 2), seats, Rules(num_deals=1),
                                 np.random.default_rng(0), recorder_names=[["ismcts", "random", "random"]] * 2)
    assert scores.shape == (2, 3) and (scores.sum(axis=1) == 0).all()  # R25
    assert all(check_record(record) is None for record in records)  # every move legal


def test_ismcts_options_are_checked_with_one_line():
    from sergeant_major_env.agents import make_agent

    with pytest.raises(ValueError, match="ismcts: bad option 'depth=3'"):
        make_agent("ismcts:depth=3")
    with pytest.raises(ValueError, match="ismcts: simulations must be an integer"):
        make_agent("ismcts:simulations=many")
    with pytest.raises(ValueError, match="ismcts: horizon must be one of deal, game"):
        make_agent("ismcts:horizon=week")


def test_pyspiel_bot_adapter_hands_bots_a_world_not_the_real_cards():
    from sergeant_major_env.agents.ismcts import PyspielBotAgent

    seen = []

    class Spy(pyspiel.Bot):
        def __init__(self):
            pyspiel.Bot.__init__(self)

        def step(self, state):
            seen.append(state.engine_state.hands.copy())
            return state.legal_actions()[0]

    agent = PyspielBotAgent(lambda game, rng: Spy(), name="spy")
    state = engine.init(engine.game_seeds(3, 1), Rules(num_deals=1))
    engine.step(state, np.array([52]))  # mode S; the playmaker now discards from 20 cards
    action = agent.act_on_state(state, np.zeros(1, np.intp), np.random.default_rng(0))
    assert engine.legal_bits(state)[0] >> np.uint64(action[0]) & np.uint64(1)
    seat = int(state.to_act[0])
    world_hands = seen[0][0]
    assert world_hands[seat] == state.hands[0, seat]  # its own hand is kept
    assert (world_hands != state.hands[0]).any()  # the others' are redrawn


# ----------------------------------------------------------------------------- OpenSpiel's RL tools

def test_rl_environment_plays_episodes_with_openspiels_random_agents():
    from open_spiel.python import rl_environment
    from open_spiel.python.algorithms import random_agent

    env = rl_environment.Environment("python_sergeant_major(num_deals=1)")
    env.seed(0)
    assert env.observation_spec()["info_state"] == (OBSERVATION_SIZE,)
    assert env.action_spec()["num_actions"] == 58
    agents = [random_agent.RandomAgent(player_id=p, num_actions=58) for p in range(3)]
    for _ in range(2):
        time_step = env.reset()
        total = np.zeros(3)
        while not time_step.last():
            player = time_step.observations["current_player"]
            time_step = env.step([agents[player].step(time_step).action])
            total += time_step.rewards
        assert total.sum() == 0 and total.tolist() == env.get_state.returns()


def _write_playthrough() -> None:
    """Regenerate tests/data/openspiel_playthrough.txt (after an intended change of the game)."""
    from open_spiel.python.algorithms import generate_playthrough

    PLAYTHROUGH.write_text(generate_playthrough.playthrough(PLAYTHROUGH_GAME, None, seed=PLAYTHROUGH_SEED),
                           encoding="utf-8")


if __name__ == "__main__":
    _write_playthrough()
