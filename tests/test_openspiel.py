"""The game python_sergeant_major in OpenSpiel (sergeant_major_env/openspiel.py), OpenSpiel's own
checks on it, its IS-MCTS bot as the ``ismcts`` agent, and OpenSpiel's RL environment."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from conftest import assert_states_equal, needs

pyspiel = needs("pyspiel")

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
    assert game.get_parameters() == {**Rules().to_dict(), "num_deals": 2, "reward": "points"}
    # section 9's names and defaults, and the reward (options.py)
    assert game.get_type().parameter_specification == {**Rules().to_dict(), "reward": "points"}
    assert pyspiel.load_game("python_sergeant_major").rules == Rules()


def test_bad_parameter_is_one_clear_line():
    with pytest.raises(ValueError, match="num_deals must be an integer from 1 to 18"):
        pyspiel.load_game("python_sergeant_major(num_deals=19)")


@pytest.mark.parametrize("params, message", [
    ({"num_deals": 0}, "rule option num_deals must be an integer from 1 to 18, got 0"),
    ({"num_deals": -1}, "rule option num_deals must be an integer from 1 to 18, got -1"),
    ({"num_deals": 2**31 - 1}, "rule option num_deals must be an integer from 1 to 18, got 2147483647"),
])
def test_parameters_out_of_the_rule_options_ranges_are_one_line(params, message):
    with pytest.raises(ValueError, match=f"^{message}$"):
        pyspiel.load_game("python_sergeant_major", params)


@pytest.mark.parametrize("params, message", [
    ({"num_deals": 2**63}, "rule option num_deals must be an integer from 1 to 18, got 9223372036854775808"),
    ({"num_deals": 2**31}, "rule option num_deals must be an integer from 1 to 18, got 2147483648"),
    ({"num_deals": "x"}, "rule option num_deals must be an integer from 1 to 18, got 'x'"),
    ({"num_deals": 2.0}, "rule option num_deals must be an integer from 1 to 18, got 2.0"),
    ({"num_deals": True}, "rule option num_deals must be an integer from 1 to 18, got True"),
    ({"exchanges": 1}, "rule option exchanges must be true or false, got 1"),
    ({"must_overtake": "yes"}, "rule option must_overtake must be true or false, got 'yes'"),
    ({"foo": 1}, "unknown rule option.s. foo; known options: num_deals, exchanges, "),
])
def test_the_games_constructor_checks_every_parameter_in_one_line(params, message):
    with pytest.raises(ValueError, match=f"^{message}"):
        smo.SergeantMajorGame(params)



@pytest.mark.parametrize("args, message", [
    (("python_sergeant_major(num_deals=1,num_deals=2)",),
     "python_sergeant_major: parameter 'num_deals' given twice ('num_deals=1' and 'num_deals=2'); "
     "give each parameter once"),
    (("python_sergeant_major(reward=score, exchanges=false, reward=rank)",),
     "python_sergeant_major: parameter 'reward' given twice ('reward=score' and 'reward=rank'); "
     "give each parameter once"),
    (("python_sergeant_major", {"num_deals": 2**63}),
     "rule option num_deals must be an integer from 1 to 18, got 9223372036854775808"),
    (("python_sergeant_major", {"num_deals": 2**31}),
     "rule option num_deals must be an integer from 1 to 18, got 2147483648"),
    (("python_sergeant_major", {"num_deals": -2**31 - 1}),
     "rule option num_deals must be an integer from 1 to 18, got -2147483649"),
    (("python_sergeant_major(num_deals=99999999999999999999)",),
     "rule option num_deals must be an integer from 1 to 18, got 99999999999999999999"),
    (("python_sergeant_major", {"reward": 2**40}),
     "python_sergeant_major: reward must be one of 'points', 'score', 'rank', got 1099511627776"),
])
def test_load_game_refuses_a_repeated_parameter_and_an_integer_beyond_cpp_int_in_one_line(args, message):
    """Issue 50: pyspiel's parser kept the last of a repeated parameter (the game sees only the
    parsed dict), and an integer beyond C++ int ended in pybind11's "Unable to cast" error."""
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        pyspiel.load_game(*args)
    assert pyspiel.load_game("python_sergeant_major(num_deals=2,reward=score)").rules == Rules(num_deals=2)
    assert pyspiel.load_game("tic_tac_toe").num_distinct_actions() == 9  # other games as before


@pytest.mark.parametrize("params, message", [
    ({"num_deals": "x"}, "Wrong type for parameter num_deals. Expected type: kInt, got kString"),
    ({"exchanges": 1}, "Wrong type for parameter exchanges. Expected type: kBool, got kInt"),
    ({"foo": 1}, "Unknown parameter 'foo'. Available parameters are: dealer_builds_talon, exchanges"),
])
def test_pyspiel_refuses_wrong_types_and_names_in_one_line_before_the_game(params, message):
    with pytest.raises(pyspiel.SpielError, match=message):
        pyspiel.load_game("python_sergeant_major", params)


def test_game_type_and_info_are_declared_truthfully():
    game = pyspiel.load_game("python_sergeant_major(num_deals=3)")
    kind = game.get_type()
    assert kind.dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
    assert kind.information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
    assert kind.chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    assert kind.utility == pyspiel.GameType.Utility.ZERO_SUM and game.utility_sum() == 0.0
    assert kind.reward_model == pyspiel.GameType.RewardModel.REWARDS
    assert kind.provides_information_state_tensor and kind.provides_information_state_string
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

@pytest.mark.slow
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


# ----------------------------------------------------------------------------- refused actions

def snapshot(state):
    """What a refused action must leave as it was: history, player to act, the deal so far,
    the chance outcomes or legal actions, rewards, and every array of the engine state."""
    moves = state.chance_outcomes() if state.is_chance_node() else state.legal_actions()
    return (state.history(), state.move_number(), int(state.current_player()), state.is_terminal(),
            list(state._deal), moves, state.rewards(), state.returns(), state.engine_state.copy())


def assert_refused(state, action, message):
    """``state.apply_action(action)`` raises one line matching ``message`` and changes nothing."""
    before = snapshot(state)
    with pytest.raises(smo.IllegalActionError, match=message) as refusal:
        state.apply_action(action)
    assert "\n" not in str(refusal.value) and str(refusal.value).endswith("The state is unchanged.")
    after = snapshot(state)
    assert after[:-1] == before[:-1]
    assert_states_equal(after[-1], before[-1])


def dealt_game(num_deals=1, dealer=0):
    """A state at the playmaker's first decision, the cards dealt in order 0..51."""
    state = pyspiel.load_game(f"python_sergeant_major(num_deals={num_deals})").new_initial_state()
    for action in [dealer, *range(52)]:
        state.apply_action(action)
    return state


def test_the_lot_refuses_any_seat_but_0_1_2():
    """R4: issue 27's `apply_action(7)` made seat 7 the dealer."""
    state = pyspiel.load_game("python_sergeant_major(num_deals=1)").new_initial_state()
    for action in (7, 3, 52, -1, 1000, 2**63, 2**70):
        assert_refused(state, action, f"^R4: the first dealer is drawn by lot, outcomes 0, 1, 2 .a seat., got {action}")
    state.apply_action(2)
    assert state.history() == [2] and state.engine_state.dealer[0] == 2


def test_dealing_refuses_a_card_dealt_already_or_not_a_card():
    """R10: dealing a card twice, card 52, 57, 1000 or -1 was accepted or a traceback."""
    state = pyspiel.load_game("python_sergeant_major(num_deals=1)").new_initial_state()
    state.apply_action(0)
    state.apply_action(7)
    assert_refused(state, 7, "^R10: chance deals one of the 51 cards not dealt yet "
                             "\\(chance_outcomes\\(\\)\\); card 7 was dealt already")
    for action in (52, 57, 1000, -1, 2**63):
        assert_refused(state, action, f"card {action} is not a card id .0..51.")
    assert 7 not in [card for card, _ in state.chance_outcomes()]
    assert state.legal_actions() == [card for card, _ in state.chance_outcomes()]  # OpenSpiel's view of chance


def test_card_7_fifty_two_times_is_refused_from_the_second():
    """Issue 27: card 7 fifty-two times gave one-card hands and play went on."""
    state = pyspiel.load_game("python_sergeant_major(num_deals=1)").new_initial_state()
    state.apply_action(0)
    state.apply_action(7)
    for _ in range(51):
        assert_refused(state, 7, "card 7 was dealt already")
    assert state.history() == [0, 7] and state.is_chance_node()


def test_a_decision_refuses_an_illegal_action_with_the_engines_reason():
    state = dealt_game()
    assert state.current_player() == 1 and state.legal_actions() == list(range(52, 58))
    assert_refused(state, 0, "^illegal action 0 .2S. for seat 1 in decision 'mode': R8: the playmaker must choose "
                             "a mode .actions 52..57., not a card; legal actions: mode S, ")
    for action in (58, 1000, -1, 2**63):
        assert_refused(state, action, f"^illegal action {action} .out of range. for seat 1 .*action ids are 0..57")
    state.apply_action(52)  # mode S; then a refused discard, with the cached legal actions of the new decision
    assert_refused(state, 57, "R10: a card is expected in this decision .discard., not a mode")


def test_a_finished_game_refuses_every_action():
    """Issue 27: actions on a finished game were accepted."""
    state = play_random(pyspiel.load_game("python_sergeant_major(num_deals=1)"), 0)
    assert state.is_terminal()
    for action in (0, 2, 51, 52, 57, -1, 1000):
        assert_refused(state, action, f"^the game is over: no action is legal, got action {action}")


def test_a_search_horizon_state_refuses_actions_past_its_last_deal():
    game = pyspiel.load_game("python_sergeant_major(num_deals=2)")
    world = game.state_from_engine(engine.init(engine.game_seeds(1, 1), Rules(num_deals=2)), last_deal=0)
    rng = np.random.default_rng(0)
    while not world.is_terminal():
        world.apply_action(int(rng.choice(world.legal_actions())))
    assert_refused(world, 0, "^the search horizon .deal 1. has ended: no action is legal")


def test_the_check_covers_openspiels_own_paths():
    """apply_action_with_legality_check and OpenSpiel's C++ tools reach the same check."""
    state = dealt_game()
    with pytest.raises(pyspiel.SpielError):
        state.apply_action_with_legality_check(0)
    with pytest.raises(smo.IllegalActionError, match="^illegal action 0 .2S. for seat 1 in decision 'mode'"):
        pyspiel.State.apply_action(state, 0)  # OpenSpiel's C++ ApplyAction, as C++ bots and tools call it
    assert len(state.history()) == 53 and state.current_player() == 1
    error = smo.IllegalActionError("x")
    assert isinstance(error, pyspiel.SpielError) and isinstance(error, ValueError)
    assert isinstance(error, engine.IllegalActionError)


def test_a_non_integer_action_is_one_line():
    state = pyspiel.load_game("python_sergeant_major(num_deals=1)").new_initial_state()
    with pytest.raises(TypeError, match="^an action is an integer id, got 'x'$"):
        state.apply_action("x")
    assert state.history() == []


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


@pytest.mark.parametrize("text, message", [
    ("history=7:0", "^history entry 1 '7:0' is not a legal action here: player 7 does not act here, chance .-1. does$"),
    ("history=-1:0,0:3", "^history entry 2 '0:3' is not a legal action here: player 0 does not act here, chance"),
    ("history=-1:7", "^history entry 1 '-1:7' is not a legal action here: R4: the first dealer is drawn by lot"),
    ("history=-1:0,-1:3,-1:3",
     "^history entry 3 '-1:3' is not a legal action here: R10: .* card 3 was dealt already\\.$"),
    ("history=-1:0,-1:-1", "card -1 is not a card id"),
    ("history=-1:99999999999999999999", "got 99999999999999999999\\.$"),
    ("history=-1:0," + ",".join(f"-1:{c}" for c in range(52)) + ",1:0",
     "^history entry 54 '1:0' is not a legal action here: illegal action 0 .2S. for seat 1 in decision 'mode'"),
    ("history=-1:0," + ",".join(f"-1:{c}" for c in range(52)) + ",0:52",
     "^history entry 54 '0:52' is not a legal action here: player 0 does not act here, seat 1 does$"),
])
def test_safe_deserialize_checks_each_entrys_player_and_action(text, message):
    """Issue 27: `history=7:0` was read as the lot's seat 0, the player field ignored."""
    game = pyspiel.load_game("python_sergeant_major(num_deals=1)")
    with pytest.raises(smo.IllegalActionError, match=message):
        smo.deserialize_state(game, text + "\nmove_number=0\n__dict__=")


def test_safe_deserialize_refuses_an_action_after_the_end():
    game = pyspiel.load_game("python_sergeant_major(num_deals=1)")
    finished = play_random(game, 0)
    history = finished.serialize().split("\n", 1)[0]
    assert smo.deserialize_state(game, history).is_terminal()
    last = len(finished.history()) + 1
    with pytest.raises(smo.IllegalActionError, match=f"^history entry {last} '-4:0' is not a legal action here: "
                                                     "the game is over: no action is legal, got action 0.$"):
        smo.deserialize_state(game, history + ",-4:0")
    with pytest.raises(smo.IllegalActionError, match="player 0 does not act here, nobody"):
        smo.deserialize_state(game, history + ",0:0")
    with pytest.raises(ValueError, match="^bad history entry 1 'x': expected PLAYER:ACTION .integers.$"):
        smo.deserialize_state(game, "history=x")


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


def test_observers_for_each_observation_type():
    game = pyspiel.load_game("python_sergeant_major(num_deals=2)")
    recall = game.make_py_observer(pyspiel.IIGObservationType(perfect_recall=True))
    assert isinstance(recall, smo.InformationStateObserver)
    assert recall.tensor.size == smo.information_state_size(2) == OBSERVATION_SIZE + 2 * smo.DEAL_BLOCK
    assert game.information_state_tensor_shape() == [smo.information_state_size(2)]
    assert isinstance(game.make_py_observer(), smo.SergeantMajorObserver)
    public_only = pyspiel.IIGObservationType(perfect_recall=False, public_info=True,
                                             private_info=pyspiel.PrivateInfoType.NONE)
    assert game.make_py_observer(public_only) is None  # not provided


# ----------------------------------------------------------------------------- information state

def deal_in_order(game, order, dealer=0):
    """A state after the lot (``dealer``) and the 52 cards of ``order`` (dealing order)."""
    state = game.new_initial_state()
    for action in [dealer, *order]:
        state.apply_action(action)
    return state


def info(state, player):
    return state.information_state_string(player), np.asarray(state.information_state_tensor(player))


def assert_same_info(a, b, player):
    (text_a, tensor_a), (text_b, tensor_b) = info(a, player), info(b, player)
    assert text_a == text_b and np.array_equal(tensor_a, tensor_b)


def assert_other_info(a, b, player):
    (text_a, tensor_a), (text_b, tensor_b) = info(a, player), info(b, player)
    assert text_a != text_b and not np.array_equal(tensor_a, tensor_b)


def test_the_game_declares_information_states_and_the_tensor_has_its_shape():
    game = pyspiel.load_game("python_sergeant_major(num_deals=2)")
    assert game.get_type().provides_information_state_string and game.get_type().provides_information_state_tensor
    state = play_random(game, 3, stop=lambda s: len(s.history()) > 120)
    for player in range(3):
        text, tensor = info(state, player)
        assert text.startswith(f"seat {player}'s information state (perfect recall)")
        assert tensor.shape == (smo.information_state_size(2),)
        assert np.array_equal(tensor[:OBSERVATION_SIZE], state.observation_tensor(player))  # the observation first


def test_hidden_cards_of_other_seats_do_not_change_a_seats_information_state():
    """Two deals that differ only in cards seat 0 never sees (seat 2's first card and a talon
    card, dealer 0: the playmaker is seat 1) give seat 0 and seat 1 the same information
    state, seat 2 a different one; once the talon is turned face up (section 5) seat 0 sees
    the difference too."""
    game = pyspiel.load_game("python_sergeant_major(num_deals=1)")
    order = list(range(52))
    swapped = order.copy()
    swapped[1], swapped[48] = swapped[48], swapped[1]  # position 1: seat 2's first card; 48: the talon
    a, b = deal_in_order(game, order), deal_in_order(game, swapped)
    assert a.engine_state.hands[0, 2] != b.engine_state.hands[0, 2]
    assert_same_info(a, b, 0)
    assert_same_info(a, b, 1)  # the playmaker, choosing from its first six (R9)
    assert_other_info(a, b, 2)
    for state in (a, b):
        state.apply_action(56)  # mode NT: the talon is turned face up
    assert_other_info(a, b, 0)


def test_a_hidden_discard_changes_only_the_playmakers_information_state():
    game = pyspiel.load_game("python_sergeant_major(num_deals=1)")
    a, b = deal_in_order(game, range(52)), deal_in_order(game, range(52))
    for state in (a, b):
        state.apply_action(56)  # seat 1 (the playmaker) chooses NT
    hand = smo._members(int(a.engine_state.hands[0, 1]))
    for card in hand[:4]:
        a.apply_action(card)
    for card in hand[4:8]:
        b.apply_action(card)
    assert_same_info(a, b, 0) and assert_same_info(a, b, 2)
    assert_other_info(a, b, 1)
    # the same discards in another order: the observation is the same, the recall is not
    c = deal_in_order(game, range(52))
    c.apply_action(56)
    for card in reversed(hand[:4]):
        c.apply_action(card)
    assert np.array_equal(a.observation_tensor(1), c.observation_tensor(1))
    assert_other_info(a, c, 1)
    assert_same_info(a, c, 0)


def hidden_from(state, player):
    """The cards ``player`` cannot have seen now: the other seats' hands (less what it handed
    them in this deal's exchanges and the talon once shown) and, unless it is the playmaker,
    the discards."""
    e = state.engine_state
    hidden = 0
    for seat in range(3):
        if seat != player:
            hidden |= int(e.hands[0, seat])
    playmaker = (int(e.dealer[0]) + 1) % 3
    if player != playmaker:
        hidden |= int(e.discards[0])
    if e.phase[0] >= engine.DISCARD:
        hidden &= ~int(e.talon[0])
    hidden &= ~int(e.given[0, player])
    return smo._members(hidden)


def test_the_information_state_never_shows_a_hidden_card():
    """Against the engine's real hands: no card hidden from the seat appears in its
    information string (as a card seen) or in its tensor's current deal."""
    game = pyspiel.load_game("python_sergeant_major(num_deals=2)")
    checked = 0
    for seed in range(6):
        for length in (60, 120, 175, 230):
            state = play_random(game, seed, stop=lambda s: len(s.history()) > length and not s.is_chance_node())
            if state.is_terminal():
                continue
            deal = int(state.engine_state.deal[0])
            for player in range(3):
                text, tensor = info(state, player)
                # this deal's lines: from the first card of the deal on
                lines = text.split(f"a card of deal {deal + 1} dealt", 1)[1]
                block = tensor[OBSERVATION_SIZE + deal * smo.DEAL_BLOCK:][:smo.DEAL_BLOCK]
                for card in hidden_from(state, player):
                    name = smo.card_name(card)
                    assert f"+{name}" not in lines and f" {name} |" not in lines and not lines.endswith(f" {name}")
                    for piece in ("hand_arrival", "talon", "discards", "card_trick", "exchange_given",
                                  "exchange_received"):
                        assert block[smo._DEAL_OFFSETS[piece] + card] == 0, (piece, name)
                    assert not block[smo._DEAL_OFFSETS["played"] + np.arange(3) * 52 + card].any()
                    checked += 1
    assert checked > 100


def test_the_information_state_recalls_earlier_deals():
    game = pyspiel.load_game("python_sergeant_major(num_deals=2)")
    state = play_random(game, 4, stop=lambda s: s.engine_state.deal[0] == 1 and not s.is_chance_node())
    played = np.asarray(state.observation_tensor(0))[SEGMENTS["played"]]
    assert not played.any()  # the observation has forgotten deal 1's tricks
    first = np.asarray(state.information_state_tensor(0))[OBSERVATION_SIZE:][:smo.DEAL_BLOCK]
    assert first[smo._DEAL_OFFSETS["played"]:][:156].sum() == 48  # every card played in deal 1, by whom
    assert sorted(first[smo._DEAL_OFFSETS["card_trick"]:][:52][first[smo._DEAL_OFFSETS["card_trick"]:][:52] > 0]
                  * 16) == [t for t in range(1, 17) for _ in range(3)]
    assert first[smo._DEAL_OFFSETS["hand_arrival"]:][:52].astype(bool).sum() >= 16  # its cards as dealt


def test_exchanges_in_the_information_state_show_the_pair_its_cards_and_the_third_seat_the_counts():
    """R22: after an exchange each seat's deal-2 block has the exchange steps (which pairs
    handed a card, public counts); only the pair's seats have the cards given and received."""
    game = pyspiel.load_game("python_sergeant_major(num_deals=2)")
    found = thirds = 0
    for seed in range(80):
        state = play_random(game, seed, stop=lambda s: s.engine_state.deal[0] == 1
                            and s.engine_state.phase[0] >= engine.DISCARD)
        e = state.engine_state
        if state.is_terminal() or not e.given[0].any():
            continue
        pair = {int(seat) for seat in (*e.exchange_giver[0], *e.exchange_receiver[0]) if seat >= 0}  # any pair
        for player in range(3):
            block = np.asarray(state.information_state_tensor(player))[OBSERVATION_SIZE + smo.DEAL_BLOCK:]
            piece = lambda name, size: block[smo._DEAL_OFFSETS[name]:][:size]  # noqa: E731
            assert piece("exchange_steps", 156).any()
            cards = piece("exchange_given", 52).any() or piece("exchange_received", 52).any()
            assert cards == (player in pair)
            if player not in pair:  # the third seat: counts, no cards
                text = state.information_state_string(player).split("a card of deal 2 dealt")[-1]
                played = int(np.bitwise_or.reduce(e.played[0].reshape(-1)))
                for card in smo._members(int(np.bitwise_or.reduce(e.given[0])) & ~played):
                    assert f"+{smo.card_name(card)}" not in text
                    thirds += 1
        found += 1
        if found >= 3 and thirds:
            break
    assert found >= 3 and thirds > 0


def test_information_state_of_clones_and_deserialised_states_is_the_same():
    game = pyspiel.load_game("python_sergeant_major(num_deals=2)")
    state = play_random(game, 5, stop=lambda s: len(s.history()) > 170)
    clone = state.clone()  # asked nothing yet: it replays its history when asked
    state.information_state_string(0)  # the original records from now on
    later = state.clone()
    rng = np.random.default_rng(0)
    for _ in range(20):
        action = int(rng.choice(state.legal_actions())) if not state.is_chance_node() else \
            state.chance_outcomes()[0][0]
        for s in (state, clone, later):
            s.apply_action(action)
    text = state.serialize()
    for other in (clone, later, smo.deserialize_state(game, text), game.deserialize_state(text)):
        for player in range(3):
            assert_same_info(state, other, player)


@pytest.mark.parametrize("player", [3, -2, 2**70, "x", 1.5])
def test_a_bad_player_is_one_line(player):
    state = dealt_game()
    for method in (state.information_state_string, state.information_state_tensor):
        with pytest.raises((pyspiel.SpielError, TypeError)) as error:
            method(player)
        assert "\n" not in str(error.value).strip()


def test_no_player_at_a_chance_node_is_one_line():
    state = pyspiel.load_game("python_sergeant_major(num_deals=1)").new_initial_state()
    with pytest.raises(pyspiel.SpielError, match="^information_state_string: no player to act here .chance .-1..; "
                                                 "name a seat 0, 1 or 2$"):
        state.information_state_string()
    assert state.information_state_string(0) == "seat 0's information state (perfect recall)"  # nothing seen yet


def test_resample_keeps_the_seats_information_state_and_redraws_what_it_has_not_seen():
    game = pyspiel.load_game("python_sergeant_major(num_deals=2)")
    changed = 0
    for seed, length in ((1, 60), (2, 120), (3, 160), (4, 200), (5, 230)):
        state = play_random(game, seed, stop=lambda s: len(s.history()) > length and not s.is_chance_node())
        if state.is_terminal():
            continue
        player = state.current_player()
        for draw in range(3):
            world = state.resample_from_infostate(player, pyspiel.UniformProbabilitySampler(0.0, 1.0))
            assert_same_info(state, world, player)
            # what it sees is kept (its hand; while choosing its mode, its first six cards: R9)
            assert np.array_equal(world.observation_tensor(player), state.observation_tensor(player))
            assert world.legal_actions() == state.legal_actions()
            changed += int((world.engine_state.hands[0] != state.engine_state.hands[0]).any())
            if state.engine_state.phase[0] not in (engine.DISCARD, engine.PLAY):
                continue  # a mode choice shows the playmaker the rest of its hand (R9), which differs
            action = state.legal_actions()[draw % len(state.legal_actions())]
            after, world_after = state.clone(), world.clone()
            after.apply_action(action)
            world_after.apply_action(action)
            assert_same_info(after, world_after, player)  # and stays so after its own action
    assert changed >= 5


def test_resample_refuses_bad_input_in_one_line_and_changes_nothing():
    game = pyspiel.load_game("python_sergeant_major(num_deals=1)")
    state = play_random(game, 2, stop=lambda s: len(s.history()) > 70 and not s.is_chance_node())
    before = (state.history(), state.information_state_string(0), state.engine_state.copy())
    to_act = state.current_player()
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    cases = [((to_act + 1) % 3, sampler, "samples for the seat to act"),
             (3, sampler, "player must be a seat 0, 1 or 2, got 3"),
             ("x", sampler, "player must be a seat"),
             (to_act, None, "probability_sampler must be callable"),
             (to_act, lambda: 1.5, "must return a number in .0, 1., got 1.5"),
             (to_act, lambda: float("nan"), "got nan"),
             (to_act, lambda: "x", "got 'x'"),
             (to_act, lambda: True, "got True")]
    for player, draw, message in cases:
        with pytest.raises(pyspiel.SpielError, match=message) as error:
            state.resample_from_infostate(player, draw)
        assert "\n" not in str(error.value)
    assert state.history() == before[0] and state.information_state_string(0) == before[1]
    assert_states_equal(state.engine_state, before[2])
    with pytest.raises(pyspiel.SpielError, match="needs a decision, not a chance node"):
        game.new_initial_state().resample_from_infostate(0, sampler)
    with pytest.raises(pyspiel.SpielError, match="needs a decision, not a finished state"):
        play_random(game, 0).resample_from_infostate(0, sampler)


def test_a_state_from_an_engine_state_starts_its_record_there():
    game = pyspiel.load_game("python_sergeant_major(num_deals=1)")
    state = game.state_from_engine(engine.init(engine.game_seeds(2, 1), Rules(num_deals=1)))
    text = state.information_state_string(1)
    assert "1. deal 1: from here (earlier history not recorded), seeing | hand +" in text
    state.apply_action(state.legal_actions()[0])
    assert state.information_state_string(1).count("\n") == 2


# ----------------------------------------------------------------------------- the reward parameter

def test_reward_parameter_terminal_rewards_for_score_and_rank():
    for reward in ("score", "rank"):
        game = pyspiel.load_game(f"python_sergeant_major(num_deals=2,reward={reward})")
        assert game.get_type().reward_model == pyspiel.GameType.RewardModel.TERMINAL
        assert game.max_utility() == (26.0 if reward == "score" else 1.0)
        state = play_random(game, 7, stop=lambda s: len(s.history()) > 150)
        assert state.returns() == state.rewards() == [0.0, 0.0, 0.0]
        state = play_random(game, 7)
        scores = state.engine_state.final_scores[0]
        expected = scores.tolist() if reward == "score" else smo.rank_rewards(scores).tolist()
        assert state.returns() == state.rewards() == expected and sum(expected) == 0
    points = pyspiel.load_game("python_sergeant_major(num_deals=2)")
    assert points.get_type().reward_model == pyspiel.GameType.RewardModel.REWARDS
    assert play_random(points, 7).returns() == play_random(game, 7).engine_state.final_scores[0].tolist()


def test_a_bad_reward_is_one_line():
    with pytest.raises(ValueError, match="^python_sergeant_major: reward must be one of 'points', 'score', 'rank', "
                                         "got 'terminal'$"):
        pyspiel.load_game("python_sergeant_major(reward=terminal)")
    with pytest.raises(pyspiel.SpielError, match="Wrong type for parameter reward"):
        pyspiel.load_game("python_sergeant_major", {"reward": 1})


def test_random_sim_test_with_terminal_rewards():
    game = pyspiel.load_game("python_sergeant_major(num_deals=2,reward=score)")
    pyspiel.random_sim_test(game, num_sims=1, serialize=True, verbose=False)


def test_cpp_search_bots_refuse_the_game_in_one_line_instead_of_crashing():
    """pyspiel's C++ MCTSBot / ISMCTSBot crash the interpreter on Python games; importing the
    module makes them refuse this one (other games are unchanged)."""
    game = pyspiel.load_game("python_sergeant_major(num_deals=1,reward=score)")
    with pytest.raises(pyspiel.SpielError, match="^OpenSpiel's C.. MCTSBot cannot search a Python game"):
        pyspiel.MCTSBot(game, pyspiel.RandomRolloutEvaluator(1, 0), 2.0, 10, 100, False, 0, False)
    bot = pyspiel.ISMCTSBot(0, pyspiel.RandomRolloutEvaluator(1, 0), 2.0, 10)
    with pytest.raises(pyspiel.SpielError, match="ISMCTSBot cannot .* use open_spiel.python.algorithms.ismcts"):
        bot.step(dealt_game())
    tic_tac_toe = pyspiel.load_game("tic_tac_toe")
    cpp = pyspiel.MCTSBot(tic_tac_toe, pyspiel.RandomRolloutEvaluator(1, 0), 2.0, 10, 100, False, 0, False)
    assert cpp.step(tic_tac_toe.new_initial_state()) in range(9)



def test_evaluate_bots_refuses_a_cpp_search_bot_on_the_game_in_the_guards_line():
    """Issue 50: pyspiel.evaluate_bots's C++ loop calls ISMCTSBot's C++ Step directly, which
    failed with "ResampleFromInfostate() not implemented."; it now gives the guard's line."""
    state = dealt_game()
    bots = [pyspiel.ISMCTSBot(seed, pyspiel.RandomRolloutEvaluator(1, seed), 2.0, 10) for seed in range(3)]
    with pytest.raises(pyspiel.SpielError, match="^OpenSpiel's C.. ISMCTSBot cannot search a Python game .*"
                                                 "use open_spiel.python.algorithms.ismcts.ISMCTSBot$"):
        pyspiel.evaluate_bots(state, bots, 0)
    assert state.history() == [0, *range(52)]
    tic_tac_toe = pyspiel.load_game("tic_tac_toe")
    mcts_bot = pyspiel.MCTSBot(tic_tac_toe, pyspiel.RandomRolloutEvaluator(1, 0), 2.0, 10, 100, False, 0, False)
    with pytest.raises(pyspiel.SpielError, match="^OpenSpiel's C.. MCTSBot cannot search"):
        pyspiel.evaluate_bots(state, [mcts_bot] * 3, 0)
    with pytest.raises(pyspiel.SpielError, match="^OpenSpiel's C.. MCTSBot cannot search"):
        mcts_bot.step(state)  # built for another game, handed this one
    random_bots = [pyspiel.make_uniform_random_bot(seat, seat) for seat in range(3)]
    assert sum(pyspiel.evaluate_bots(pyspiel.load_game("python_sergeant_major(num_deals=1)").new_initial_state(),
                                     random_bots, 0)) == 0  # other C++ bots still play it
    assert len(pyspiel.evaluate_bots(tic_tac_toe.new_initial_state(), [mcts_bot, mcts_bot], 0)) == 2


def test_the_cpp_bot_guards_are_in_pyspiels_own_classes():
    """Issue 50: `from pyspiel import MCTSBot` before importing the package kept the unguarded
    class (exit 139 at its first step); the guards are now patched into pyspiel's classes, the
    ones pybind11 registered (found here through their base class, not pyspiel's names)."""
    registered = {cls.__name__: cls for cls in pyspiel.Bot.__subclasses__()
                  if cls.__module__ == "pyspiel"}  # not open_spiel's Python bots of the same names
    game = pyspiel.load_game("python_sergeant_major(num_deals=1,reward=score)")
    assert registered["MCTSBot"] is pyspiel.MCTSBot and registered["ISMCTSBot"] is pyspiel.ISMCTSBot
    with pytest.raises(pyspiel.SpielError, match="^OpenSpiel's C.. MCTSBot cannot search"):
        registered["MCTSBot"](game, pyspiel.RandomRolloutEvaluator(1, 0), 2.0, 10, 100, False, 0, False)
    bot = registered["ISMCTSBot"](0, pyspiel.RandomRolloutEvaluator(1, 0), 2.0, 10)
    with pytest.raises(pyspiel.SpielError, match="^OpenSpiel's C.. ISMCTSBot cannot search"):
        bot.step_with_policy(dealt_game())


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


def test_ismcts_settings_are_one_checked_object_that_the_spec_and_the_fields_both_make():
    """ISMCTSAgent's options are one frozen ISMCTSSettings, as pimc's (issue 31)."""
    import dataclasses

    from sergeant_major_env.agents import make_agent
    from sergeant_major_env.agents.ismcts import DEFAULTS, ISMCTSAgent, ISMCTSSettings

    settings = ISMCTSSettings(simulations=8, exploration=3, final="value")
    by_spec = make_agent("ismcts:simulations=8:exploration=3:final=value")
    assert by_spec.settings == ISMCTSAgent(simulations=8, exploration=3, final="value").settings == settings
    assert repr(by_spec) == repr(ISMCTSAgent(settings)) == (
        "ISMCTSAgent(simulations=8, exploration=3.0, rollouts=1, rollout='random', worlds=0, final='value', "
        "horizon='deal')")
    assert DEFAULTS == dataclasses.asdict(ISMCTSSettings())
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.simulations = 9
    with pytest.raises(ValueError, match=r"^ismcts: final must be one of visits, value, sample, got 'best'$"):
        ISMCTSSettings(final="best")
    with pytest.raises(ValueError, match=r"^ismcts: exploration must be a number >= 0, got 'high'$"):
        ISMCTSSettings(exploration="high")
    with pytest.raises(TypeError, match="ISMCTSAgent takes an ISMCTSSettings or its fields"):
        ISMCTSAgent(settings, simulations=4)


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
    # the game provides information-state tensors, so rl_environment hands those to agents
    assert env.observation_spec()["info_state"] == (smo.information_state_size(1),)
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
