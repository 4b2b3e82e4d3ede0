"""The PettingZoo AEC environment (sergeant_major_env.aec): API conformance, and that it is
the engine's game (same seed + same actions = same game) seen through the AEC API."""

from __future__ import annotations

import pickle
import random
import sys
import types
import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, performance_benchmark, seed_test

from sergeant_major_env import engine, env, raw_env, records
from sergeant_major_env.aec import AGENTS, NOT_TO_ACT
from sergeant_major_env.cards import NUM_ACTIONS, SUIT_SYMBOLS
from sergeant_major_env.engine import DECISIONS, IllegalActionError
from sergeant_major_env.observation import OBSERVATION_SIZE, observe
from sergeant_major_env.options import ILLEGAL_REWARD, rank_rewards

# api_test hard-codes the names of the classic envs whose observations are dicts; for any other
# env it warns about a Dict observation space. These two warnings are expected, no others.
EXPECTED_API_WARNINGS = ("Observation space for each agent probably should be", "Observation is not a NumPy array")


def play(game, seed: int, steps: int | None = None):
    """Random masked play through the AEC API from reset(seed); yields (agent, obs, reward, info, action)
    for each decision, before stepping it, until the game is over (finished agents step None) or
    ``steps`` decisions were made."""
    rnd = random.Random(seed)
    game.reset(seed=seed)
    done = 0
    for agent in game.agent_iter():
        obs, reward, termination, truncation, info = game.last()
        if termination or truncation:
            game.step(None)
            continue
        action = rnd.choice(np.flatnonzero(obs["action_mask"]).tolist())
        yield agent, obs, reward, info, action
        game.step(action)
        done += 1
        if done == steps:
            return


def to_decision(game, seed: int, decision: str):
    """A wrapped env after reset(seed) and random play up to the first ``decision``."""
    for agent, obs, reward, info, action in play(game, seed):
        if DECISIONS[info["decision"]] == decision:
            return game
    raise AssertionError(f"no {decision} decision in game {seed}")


# ----------------------------------------------------------------------------- PettingZoo tests

@pytest.mark.parametrize("options", [{"num_deals": 2}, {}], ids=["num_deals=2", "default"])
def test_api_test_passes(options):
    game = env(**options)
    for i, agent in enumerate(game.possible_agents):
        game.action_space(agent).seed(100 + i)  # api_test samples actions; make the run reproducible
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(game, num_cycles=3000)
    unexpected = [str(w.message) for w in caught if not str(w.message).startswith(EXPECTED_API_WARNINGS)]
    assert not unexpected


def test_api_test_passes_with_terminate_on_illegal_and_every_rule_option():
    api_test(env(num_deals=3, must_overtake=True, must_overtrump=True, dealer_builds_talon=True,
                 exchanges=False, reward="rank", illegal_action="terminate"), num_cycles=1000)


@pytest.mark.parametrize("options", [{"num_deals": 2}, {}], ids=["num_deals=2", "default"])
def test_seed_test_passes(options):
    seed_test(lambda: env(**options), num_cycles=3000)


def test_performance_benchmark_runs(monkeypatch, capsys):
    # performance_benchmark runs for 5 s of time.time(); a fake clock makes it a short smoke run
    # (about 100 cycles of 3 agents: several one-deal games, with resets).
    module = sys.modules["pettingzoo.test.performance_benchmark"]
    clock = iter(np.arange(0.0, 1e6, 0.05))
    monkeypatch.setattr(module, "time", types.SimpleNamespace(time=lambda: float(next(clock))))
    performance_benchmark(env(num_deals=1))
    assert "turns per second" in capsys.readouterr().out


def test_a_default_game_reaches_every_decision():
    seen = {DECISIONS[info["decision"]] for _, _, _, info, _ in play(env(), seed=3)}
    assert seen == set(DECISIONS) - {"game_over"}


# ----------------------------------------------------------------------------- spaces, agents, infos

def test_spaces_agents_and_metadata():
    game = env()
    assert game.possible_agents == ["player_0", "player_1", "player_2"]
    for agent in game.possible_agents:
        assert game.action_space(agent).n == NUM_ACTIONS
        assert game.action_space(agent) is game.action_space(agent)
        space = game.observation_space(agent)
        assert space is game.observation_space(agent)
        assert space["observation"].shape == (OBSERVATION_SIZE,) and space["observation"].dtype == np.float32
        assert space["action_mask"].shape == (NUM_ACTIONS,) and space["action_mask"].dtype == np.int8
    metadata = game.unwrapped.metadata
    assert metadata["name"] == "sergeant_major_v0" and metadata["is_parallelizable"] is False
    assert set(metadata["render_modes"]) == {"human", "ansi"} and "render_fps" in metadata


def test_agent_selection_is_the_engine_seat_to_act_and_the_playmaker_discards_four_times_in_a_row():
    game = to_decision(env(), 4, "discard")
    state = game.unwrapped.engine_state
    playmaker = f"player_{(int(state.dealer[0]) + engine.PLAYMAKER) % 3}"
    for _ in range(4):
        assert game.agent_selection == playmaker == f"player_{int(state.to_act[0])}"
        assert game.infos[playmaker]["decision"] == engine.DISCARD
        game.step(int(np.flatnonzero(game.observe(playmaker)["action_mask"])[0]))
    assert game.infos[game.agent_selection]["decision"] == engine.PLAY
    assert game.agent_selection == playmaker  # the playmaker leads the first trick


def test_infos_carry_decision_deal_and_role_as_numbers():
    """Tensor-friendly infos (TorchRL, Tianshou): ids with names in engine.DECISIONS and
    engine.ROLE_NAMES, -1 for an agent not to act, the same four keys at every step."""
    game = env(num_deals=2)
    deals = set()
    for agent, obs, reward, info, action in play(game, seed=8):
        state = game.unwrapped.engine_state
        for seat, name in enumerate(AGENTS):
            info_of = game.infos[name]
            assert set(info_of) == {"decision", "deal", "role", "illegal_action"}
            assert info_of["deal"] == int(state.deal[0])
            assert info_of["role"] == (seat - int(state.dealer[0])) % 3
            assert info_of["decision"] == (int(state.phase[0]) if name == agent else NOT_TO_ACT)
            assert info_of["illegal_action"] is False
            assert all(type(value) in (int, bool) for value in info_of.values())
        deals.add(info["deal"])
    assert deals == {0, 1}
    assert all(info["decision"] == engine.OVER and info["deal"] == 2 for info in game.infos.values())


# ----------------------------------------------------------------------------- the engine's game

@pytest.mark.parametrize("options", [{"num_deals": 3}, {"num_deals": 2, "must_overtake": True, "must_overtrump": True,
                                                          "dealer_builds_talon": True}],
                         ids=["default rules", "rule options"])
def test_same_seed_and_actions_give_the_engine_game(options):
    seed = 21
    game = env(**options)
    game.reset(seed=seed)
    state = engine.init([seed], game.unwrapped.rules)
    rnd = random.Random(seed)
    pending = dict.fromkeys(AGENTS, 0.0)  # rewards since each agent last acted
    for agent in game.agent_iter():
        obs, reward, termination, truncation, info = game.last()
        assert reward == pending[agent]  # last() gives what the agent earned since it last acted
        pending[agent] = 0.0
        if termination or truncation:
            game.step(None)
            continue
        seat = int(state.to_act[0])
        assert agent == AGENTS[seat]
        np.testing.assert_array_equal(obs["observation"], observe(state, seat)[0])
        np.testing.assert_array_equal(obs["action_mask"], engine.legal_action_mask(state)[0].astype(np.int8))
        for other in AGENTS:  # observe works for every agent; only the acting one has a mask
            other_obs = game.observe(other)
            np.testing.assert_array_equal(other_obs["observation"], observe(state, AGENTS.index(other))[0])
            if other != agent:
                assert not other_obs["action_mask"].any()
        action = rnd.choice(np.flatnonzero(obs["action_mask"]).tolist())
        game.step(action)
        engine.step(state, np.array([action]))
        points = state.deal_points[0].tolist() if state.deal_ended[0] else [0, 0, 0]
        assert [game.rewards[name] for name in AGENTS] == points
        for name, p in zip(AGENTS, points):
            pending[name] += p
    assert bool(state.game_ended[0])
    assert game.agents == []


def test_observe_for_a_non_acting_agent_has_an_all_zero_mask():
    game = env()
    game.reset(seed=0)
    for agent in AGENTS:
        mask = game.observe(agent)["action_mask"]
        assert mask.any() == (agent == game.agent_selection)
        assert mask.dtype == np.int8 and mask.shape == (NUM_ACTIONS,)


def test_observation_is_within_the_observation_space_over_a_full_game():
    game = env(reward="score")
    space = game.observation_space("player_0")
    for agent, obs, *_ in play(game, seed=2):
        assert space.contains(obs)
    assert space.contains(game.observe("player_1"))


def test_reset_with_a_seed_is_the_engine_game_of_that_seed_and_unseeded_resets_continue_reproducibly():
    a, b = env(), env()
    a.reset(seed=123)
    assert int(a.unwrapped.engine_state.seed[0]) == 123
    b.reset(seed=123)
    a.reset()
    b.reset()
    assert int(a.unwrapped.engine_state.seed[0]) == int(b.unwrapped.engine_state.seed[0])
    fresh = env()
    fresh.reset()  # never seeded: OS entropy
    assert fresh.unwrapped.engine_state.seed[0] >= 0


# ----------------------------------------------------------------------------- rewards

def game_totals(game, seed: int) -> dict[str, float]:
    """Sum of every reward last() reports to each agent over a whole game (the final dead steps included)."""
    rnd = random.Random(seed)
    totals = dict.fromkeys(AGENTS, 0.0)
    game.reset(seed=seed)
    for agent in game.agent_iter():
        obs, reward, termination, truncation, info = game.last()
        totals[agent] += reward
        game.step(None if termination or truncation else rnd.choice(np.flatnonzero(obs["action_mask"]).tolist()))
    return totals


def test_points_reward_sums_to_the_final_score():
    totals = game_totals(game := env(), seed=5)
    assert list(totals.values()) == [float(s) for s in game.unwrapped.engine_state.final_scores[0]]


def test_score_reward_is_the_final_score_once_at_the_end():
    game = env(num_deals=3, reward="score")
    nonzero = [reward for *_, reward, info, action in play(game, seed=6) if reward]
    assert nonzero == []  # nothing before the game ends
    assert game_totals(game, seed=6) == dict(zip(AGENTS, map(float, game.unwrapped.engine_state.final_scores[0])))


def test_rank_reward_at_the_end_of_a_game():
    game = env(num_deals=2, reward="rank")
    totals = game_totals(game, seed=9)
    assert list(totals.values()) == rank_rewards(game.unwrapped.engine_state.final_scores[0]).tolist()
    assert sum(totals.values()) == 0


# ----------------------------------------------------------------------------- illegal actions

def snapshot(game):
    raw = game.unwrapped
    return (raw.engine_state.copy(), raw.agent_selection, dict(raw.rewards), dict(raw._cumulative_rewards),
            {k: dict(v) for k, v in raw.infos.items()}, list(raw._actions), game.observe(raw.agent_selection))


def test_illegal_action_raises_a_clear_value_error_and_changes_nothing():
    game = to_decision(env(illegal_action="raise"), 1, "play")
    game.step(int(np.flatnonzero(game.observe(game.agent_selection)["action_mask"])[0]))  # a trick is started
    state = game.unwrapped.engine_state
    mask = game.observe(game.agent_selection)["action_mask"]
    illegal = int(np.flatnonzero(mask[:52] == 0)[0])
    before = snapshot(game)
    with pytest.raises(ValueError) as error:
        game.step(illegal)
    assert isinstance(error.value, IllegalActionError)
    message = str(error.value)
    assert f"illegal action {illegal}" in message and "'play'" in message and "legal actions:" in message
    after = snapshot(game)
    for name, value in before[0].arrays().items():
        np.testing.assert_array_equal(value, getattr(state, name), err_msg=name)
    assert before[1:6] == after[1:6]
    for key in ("observation", "action_mask"):
        np.testing.assert_array_equal(before[6][key], after[6][key])
    game.step(int(np.flatnonzero(mask)[0]))  # and the game goes on


def test_a_mode_already_chosen_is_illegal():
    game = env(illegal_action="raise")
    game.reset(seed=0)
    with pytest.raises(IllegalActionError, match="'mode'"):
        game.step(0)  # a card, not a mode


@pytest.mark.parametrize("action", [NUM_ACTIONS, 2**70, -2**70, 1.5, True, "3"])
def test_the_wrapped_env_refuses_an_action_outside_the_space_with_the_envs_one_line(action):
    """Not PettingZoo's bare AssertionError, nor an OverflowError converting 2**70 to a C long."""
    game = env()
    game.reset(seed=0)
    agent = game.agent_selection
    before = game.unwrapped.engine_state.copy()
    with pytest.raises(ValueError, match=rf"^raw_env.step\({agent}\): an action is an integer id 0..57 "
                                         rf"\(RULES.md section 10\), got .{{1,60}}$"):
        game.step(action)
    for name, value in before.arrays().items():
        np.testing.assert_array_equal(value, getattr(game.unwrapped.engine_state, name), err_msg=name)
    assert game.agent_selection == agent and not any(game.terminations.values())


@pytest.mark.parametrize("options, message", [
    ({"num_deals": 3}, r"unknown reset option\(s\) num_deals; known: none; rule options such as num_deals are "
                       r"given to the constructor"),
    ("x", r"options must be a dict or None, got str"),
    ({"learner_seat": 1}, r"unknown reset option\(s\) learner_seat; known: none"),
    ({"reward": "deal"}, r"unknown reset option\(s\) reward; known: none"),
])
def test_reset_refuses_options_it_does_not_take_as_the_single_seat_env_does(options, message):
    game = raw_env(num_deals=2)
    game.reset(seed=5)
    before = game.engine_state.copy()
    with pytest.raises(ValueError, match=rf"^raw_env.reset: {message}$"):
        game.reset(seed=6, options=options)
    for name, value in before.arrays().items():  # the game in progress is left as it was
        np.testing.assert_array_equal(value, getattr(game.engine_state, name), err_msg=name)
    game.reset(seed=6, options={})  # an empty dict and None are the API's "no options"
    game.reset(seed=6, options=None)


@pytest.mark.parametrize("options", [{}, {"illegal_action": "terminate"}], ids=["default", "explicit"])
def test_an_illegal_action_ends_the_game_with_minus_one_for_the_offender_by_default(options):
    """PettingZoo's classic convention, applied by the raw env itself so that infos say so."""
    game = env(**options)
    game.reset(seed=0)
    offender = game.agent_selection
    before = game.unwrapped.engine_state.copy()
    game.step(0)  # a card in the mode decision
    assert all(game.terminations.values()) and not any(game.truncations.values())
    assert {a: info["illegal_action"] for a, info in game.infos.items()} == {a: a == offender for a in AGENTS}
    assert all(info["decision"] == engine.OVER for info in game.infos.values())
    for name, value in before.arrays().items():  # the engine game stays where the action was tried
        np.testing.assert_array_equal(value, getattr(game.unwrapped.engine_state, name), err_msg=name)
    rewards = {}
    for agent in game.agent_iter():
        obs, reward, termination, truncation, info = game.last()
        assert termination and not obs["action_mask"].any()
        rewards[agent] = reward
        game.step(None)
    assert rewards == {a: (ILLEGAL_REWARD if a == offender else 0) for a in AGENTS} and ILLEGAL_REWARD == -1.0
    assert game.agents == []
    game.reset(seed=1)  # and the next game is a normal one
    assert not any(info["illegal_action"] for info in game.infos.values())


def test_illegal_reward_sets_the_offenders_penalty_and_keeps_the_others_earnings():
    game = env(num_deals=2, illegal_reward=-30)
    played = list(play(game, seed=3, steps=70))  # into deal 2: deal 1's points were paid
    assert played and game.unwrapped.engine_state.deal[0] == 1
    offender = game.agent_selection
    game.step(int(np.flatnonzero(game.observe(offender)["action_mask"] == 0)[0]))
    assert game.rewards == {a: (-30.0 if a == offender else 0.0) for a in AGENTS}
    assert game._cumulative_rewards[offender] == -30.0


@pytest.mark.parametrize("action", [True, False, 1.0, "3", None, 2**70, -1])
def test_an_action_that_is_not_an_id_0_to_57_is_one_value_error_line(action):
    game = raw_env(illegal_action="terminate")  # even where an illegal action would end the game
    game.reset(seed=0)
    before = snapshot(game)
    with pytest.raises(ValueError, match=r"^raw_env.step\(player_\d\): an action is an integer id 0..57 "
                                         r"\(RULES.md section 10\), got .*$"):
        game.step(action)
    after = snapshot(game)
    assert before[1:6] == after[1:6] and not any(game.terminations.values())


def test_observe_an_unknown_agent_names_the_agents():
    game = env()
    game.reset(seed=0)
    for agent in ("player_9", "player_3", 0, None):
        with pytest.raises(ValueError, match=r"unknown agent .*; agents: player_0, player_1, player_2"):
            game.unwrapped.observe(agent)


@pytest.mark.parametrize("call", ["observe", "last", "step"])
def test_calls_before_reset_on_the_raw_env_say_to_reset(call):
    game = raw_env()
    calls = {"observe": lambda: game.observe("player_0"), "last": game.last, "step": lambda: game.step(0)}
    with pytest.raises(RuntimeError, match=rf"^raw_env.{call}: no game yet: call reset\(\) first$"):
        calls[call]()


@pytest.mark.parametrize("seed", [2**63, 2**70, -1, True, 2.0, "7"])
def test_reset_refuses_a_seed_out_of_the_seed_rule_before_reseeding(seed):
    game = raw_env(num_deals=1)
    game.reset(seed=4)
    generator = game._np_random.bit_generator.state
    before = game.engine_state.copy()
    with pytest.raises(ValueError, match=r"raw_env.reset: seed must be an integer from 0 to 2\*\*63 - 1"):
        game.reset(seed=seed)
    assert game._np_random.bit_generator.state == generator  # not reseeded before the refusal
    for name, value in before.arrays().items():
        np.testing.assert_array_equal(value, getattr(game.engine_state, name), err_msg=name)
    game.reset(seed=2**63 - 1)  # the largest seed is allowed


# ----------------------------------------------------------------------------- render

def test_render_ansi_shows_mode_roles_scores_trick_and_hand_with_suit_symbols():
    game = to_decision(env(render_mode="ansi"), 3, "play")
    game.step(int(np.flatnonzero(game.observe(game.agent_selection)["action_mask"])[0]))
    state = game.unwrapped.engine_state
    text = game.render()
    assert isinstance(text, str)
    assert any(symbol in text for symbol in SUIT_SYMBOLS)
    for role in ("dealer", "playmaker", "third"):
        assert role in text
    assert "mode:" in text and "trick:" in text and f"hand of {game.agent_selection}" in text
    for seat in range(3):
        assert f"{int(state.scores[0, seat]):+d}" in text


def test_render_human_prints_the_table(capsys):
    game = env(render_mode="human", num_deals=1)
    game.reset(seed=0)
    assert game.render() is None
    out = capsys.readouterr().out
    assert "player_0" in out and "score" in out and any(symbol in out for symbol in SUIT_SYMBOLS)


def test_render_at_game_over_shows_final_scores():
    game = env(render_mode="ansi", num_deals=1)
    for _ in play(game, seed=4):
        pass
    text = game.render()
    assert "game over" in text
    for score in game.unwrapped.engine_state.final_scores[0]:
        assert f"{int(score):+d}" in text


# ----------------------------------------------------------------------------- pickle, records

def test_pickle_round_trip_continues_identically():
    original = env(num_deals=2)
    moves = list(play(original, seed=12, steps=70))  # into the second deal
    copy_ = pickle.loads(pickle.dumps(original))
    assert copy_.agent_selection == original.agent_selection
    rnd = random.Random(0)
    for a, b in zip(original.agent_iter(), copy_.agent_iter()):
        assert a == b
        obs_a, rew_a, term_a, trunc_a, info_a = original.last()
        obs_b, rew_b, term_b, trunc_b, info_b = copy_.last()
        np.testing.assert_array_equal(obs_a["observation"], obs_b["observation"])
        np.testing.assert_array_equal(obs_a["action_mask"], obs_b["action_mask"])
        assert (rew_a, term_a, trunc_a, info_a) == (rew_b, term_b, trunc_b, info_b)
        action = None if term_a or trunc_a else rnd.choice(np.flatnonzero(obs_a["action_mask"]).tolist())
        original.step(action)
        copy_.step(action)
    assert original.unwrapped.game_record() == copy_.unwrapped.game_record()
    assert moves


def test_game_record_of_a_finished_game_replays_clean():
    game = env(num_deals=3)
    actions = [action for *_, action in play(game, seed=15)]
    record = game.unwrapped.game_record()
    records.replay(record)
    assert record["seed"] == 15 and record["players"] == list(AGENTS) and len(record["deals"]) == 3
    assert record["scores"] == game.unwrapped.engine_state.final_scores[0].tolist()
    assert record["rules"] == game.unwrapped.rules.to_dict()
    # the same as recording the engine game live
    state = engine.init([15], game.unwrapped.rules)
    recorder = records.Recorder(state, list(AGENTS))
    for action in actions:
        recorder.step(np.array([action]))
    assert recorder.finished == [record]
    assert game.unwrapped.game_record(players=["a", "b", "c"])["players"] == ["a", "b", "c"]


def test_game_record_of_a_full_default_game_replays_clean():
    game = env()
    for _ in play(game, seed=16):
        pass
    records.replay(game.unwrapped.game_record())


def test_game_record_of_an_unfinished_game_holds_the_completed_deals():
    game = env(num_deals=3)
    game.reset(seed=17)
    empty = game.unwrapped.game_record()
    assert empty["deals"] == [] and empty["scores"] == [0, 0, 0] and empty["rules"]["num_deals"] == 3
    played = list(play(game, seed=17, steps=80))  # in deal 2
    partial = game.unwrapped.game_record()
    assert len(partial["deals"]) == 1 and partial["rules"]["num_deals"] == 3
    assert partial["scores"] == game.unwrapped.engine_state.scores[0].tolist()
    with pytest.raises(records.RecordError, match="R4"):
        records.replay(partial)
    for agent in game.agent_iter():  # finish the game
        obs, _, termination, truncation, _ = game.last()
        game.step(None if termination or truncation else int(np.flatnonzero(obs["action_mask"])[0]))
    final = game.unwrapped.game_record()
    assert final["deals"][0] == partial["deals"][0]
    assert played


# ----------------------------------------------------------------------------- options

@pytest.mark.parametrize("options, match", [
    ({"num_deal": 3}, r"unknown option\(s\) num_deal; rule options .*num_deals.*; "
                      r"env options: reward, illegal_action, illegal_reward"),
    ({"num_deals": 0}, "num_deals must be an integer from 1 to 18"),
    ({"num_deals": 19}, "num_deals must be an integer from 1 to 18"),
    ({"reward": "win"}, "reward must be one of 'points', 'score', 'rank'"),
    ({"illegal_action": "ignore"}, "illegal_action must be one of 'terminate', 'raise'"),
    ({"illegal_action": "replace"}, "illegal_action must be one of 'terminate', 'raise'"),
    ({"illegal_reward": float("inf")}, "illegal_reward must be a finite number"),
    ({"exchanges": "no"}, "exchanges must be true or false"),
    ({"render_mode": "rgb_array"}, "render_mode must be None or one of 'human', 'ansi'"),
])
def test_bad_options_raise_a_clear_value_error(options, match):
    with pytest.raises(ValueError, match=match):
        env(**options)
    with pytest.raises(ValueError, match=match):
        raw_env(**options)


def test_rule_options_reach_the_engine():
    game = env(num_deals=4, exchanges=False, must_overtake=True, reward="score")
    game.reset(seed=0)
    rules = game.unwrapped.engine_state.rules
    assert (rules.num_deals, rules.exchanges, rules.must_overtake, rules.must_overtrump) == (4, False, True, False)
