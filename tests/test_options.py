"""The env options and rewards defined once (sergeant_major_env.options) and the Rules
constructor's one-line errors (sergeant_major_env.rules)."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import numpy as np
import pytest

from sergeant_major_env import RandomPolicy, Rules, engine, options
from sergeant_major_env.options import event_rewards, rank_rewards


# ----------------------------------------------------------------------------- R6: rank rewards

@pytest.mark.parametrize("scores, expected", [
    ([3, -1, -2], [1, 0, -1]),
    ([5, 5, -10], [0.5, 0.5, -1]),
    ([4, -2, -2], [1, -0.5, -0.5]),
    ([0, 0, 0], [0, 0, 0]),
    ([-7, 2, 5], [-1, 0, 1]),
])
def test_R6_rank_rewards_share_tied_places(scores, expected):
    assert rank_rewards(scores).tolist() == expected
    assert rank_rewards(np.array([scores, scores])).tolist() == [expected, expected]  # batched, one signature


def test_R6_rank_rewards_of_a_batch_sum_to_zero_per_game():
    scores = np.random.default_rng(0).integers(-20, 20, size=(500, 3))
    rewards = rank_rewards(scores)
    assert rewards.shape == (500, 3) and rewards.dtype == np.float64
    np.testing.assert_array_equal(rewards.sum(axis=1), 0)


# ----------------------------------------------------------------------------- event rewards

def play_until(state, rng, predicate):
    """Random legal actions in every game until predicate(state) holds after a step."""
    for _ in range(10_000):
        engine.step(state, RandomPolicy().act(None, engine.legal_action_mask(state), rng))
        if predicate(state):
            return
    raise AssertionError("the predicate never held")


def test_event_rewards_pay_R23_points_when_a_deal_ends_and_final_scores_when_the_game_ends():
    state = engine.init(engine.game_seeds(0, 4), Rules(num_deals=1))
    rng = np.random.default_rng(0)
    games = np.arange(4)
    rows, rewards = event_rewards("points", state, games)
    assert rows.size == 0 and rewards.shape == (0, 3)  # nothing happened yet
    play_until(state, rng, lambda s: s.game_ended.any())
    ended = np.flatnonzero(state.game_ended)
    for kind, expected in (("points", state.deal_points[ended]), ("score", state.final_scores[ended]),
                           ("rank", rank_rewards(state.final_scores[ended]))):
        rows, rewards = event_rewards(kind, state, games)
        np.testing.assert_array_equal(games[rows], ended)
        np.testing.assert_array_equal(rewards, expected)
        assert rewards.dtype == np.float64
    # a subset of the games: rows index into the subset given
    rows, _ = event_rewards("score", state, ended[::-1])
    np.testing.assert_array_equal(ended[::-1][rows], ended[::-1])


def test_points_are_paid_at_every_deal_end_and_score_only_at_the_game_end():
    state = engine.init([5], Rules(num_deals=2))
    rng = np.random.default_rng(5)
    play_until(state, rng, lambda s: s.deal_ended[0])
    assert not state.game_ended[0]
    assert event_rewards("points", state, np.zeros(1, np.intp))[0].tolist() == [0]
    assert event_rewards("score", state, np.zeros(1, np.intp))[0].size == 0
    assert event_rewards("rank", state, np.zeros(1, np.intp))[0].size == 0


# ----------------------------------------------------------------------------- checks

@pytest.mark.parametrize("value", [True, 1.0, "3", None, 58, -1, 2**70, [3], np.array([3])])
def test_check_action_refuses_anything_but_an_integer_id_0_to_57(value):
    with pytest.raises(ValueError, match=r"^here: an action is an integer id 0..57 \(RULES.md section 10\), got "):
        options.check_action(value, "here")


def test_check_action_accepts_python_and_numpy_integers():
    assert [options.check_action(v, "x") for v in (0, 57, np.int8(3), np.uint64(4), np.array(5))] == [0, 57, 3, 4, 5]
    assert all(type(options.check_action(v, "x")) is int for v in (np.int64(1), np.array(2)))


def test_one_place_for_the_reward_kinds_and_illegal_action_defaults():
    assert options.REWARDS == ("points", "score", "rank") and options.DEFAULT_REWARD == "points"
    assert options.AEC_ILLEGAL_ACTIONS[0] == options.SINGLE_SEAT_ILLEGAL_ACTIONS[0] == "terminate"
    assert options.VEC_ILLEGAL_ACTIONS[0] == "raise" and options.ILLEGAL_REWARD == -1.0
    from sergeant_major_env import aec, single_seat, vec_env

    for module in (aec, single_seat, vec_env):  # no second copy of the option values or rank_rewards
        for name in ("REWARDS", "ILLEGAL_ACTIONS", "rank_rewards", "make_rules", "check_choice", "parse_options"):
            assert not hasattr(module, name), (module.__name__, name)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), True, "x", None])
def test_check_illegal_reward_wants_a_finite_number(value):
    with pytest.raises(ValueError, match="w: illegal_reward must be a finite number"):
        options.check_illegal_reward(value, "w")
    assert options.check_illegal_reward(-5, "w") == -5.0 and options.check_illegal_reward(np.float32(0.5), "w") == 0.5


def test_split_options_separates_rule_and_env_options():
    rules, chosen = options.split_options({"num_deals": 2, "reward": "rank"}, {"reward": "points", "x": 1}, "w")
    assert rules == Rules(num_deals=2) and chosen == {"reward": "rank", "x": 1}
    with pytest.raises(ValueError, match=r"w: unknown option\(s\) bogus; rule options \(RULES.md section 9\): "
                                         r"num_deals, .*; env options: reward, x"):
        options.split_options({"bogus": 1}, {"reward": "points", "x": 1}, "w")


def test_make_rules_takes_rules_or_a_mapping_or_keywords_not_two():
    assert options.make_rules(Rules(num_deals=3), {}, "w") == Rules(num_deals=3)
    assert options.make_rules({"num_deals": 3}, {}, "w") == options.make_rules(None, {"num_deals": 3}, "w")
    with pytest.raises(ValueError, match="w: pass rule options either as rules=... or as keyword arguments"):
        options.make_rules(Rules(), {"num_deals": 3}, "w")
    with pytest.raises(ValueError, match="w: rules must be a Rules or a mapping"):
        options.make_rules(5, {}, "w")


# ----------------------------------------------------------------------------- Rules: one line

@pytest.mark.parametrize("call, match", [
    (lambda: Rules(bogus=1), r"^unknown rule option\(s\) bogus; known options: num_deals, exchanges, "
                             r"must_overtake, must_overtrump, dealer_builds_talon$"),
    (lambda: Rules(num_deals=3, talon=1, bogus=2), r"^unknown rule option\(s\) bogus, talon; known options: "),
    (lambda: Rules(3, num_deals=4), r"^rule option\(s\) num_deals given twice"),
    (lambda: Rules(3, True, False, False, False, 6), r"^Rules takes at most 5 rule options"),
    (lambda: Rules.from_dict({1: True}), r"^unknown rule option\(s\) 1; known options"),
    (lambda: Rules(num_deals=0), "num_deals must be an integer from 1 to 18"),
])
def test_rules_with_a_bad_option_is_one_value_error_line_naming_the_known_options(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("assignments", [
    ["num_deals=1", "num_deals=2"],
    ["num_deals=3", "exchanges=false", " num_deals = 3"],
])
def test_a_rule_option_named_twice_on_the_command_line_is_refused(assignments):
    """``--option num_deals=1 num_deals=2``: one line naming the option, not the last one winning."""
    with pytest.raises(ValueError, match=r"^rule option num_deals given twice \(num_deals=\d and num_deals ?= ?\d\); "
                                         r"give each option once$"):
        Rules.from_strings(assignments)


def test_every_command_declares_the_rule_options_with_the_one_helper():
    """``--option`` (and ``--options``) is declared by ``arguments.rule_options`` alone (a plain
    parser's ``add_rule_options`` adds that field): no parser spells it."""
    import argparse
    import re
    from pathlib import Path

    from sergeant_major_env.arguments import RULE_OPTIONS_FLAGS, add_rule_options

    parser = argparse.ArgumentParser()
    add_rule_options(parser)
    args = parser.parse_args(["--option", "num_deals=3", "--options", "exchanges=false"])
    assert Rules.from_strings(args.option) == Rules(num_deals=3, exchanges=False)
    assert parser.parse_args([]).option == []  # the default list was not extended in place
    asked = argparse.ArgumentParser()
    add_rule_options(asked.add_argument_group("rules"), default=None)
    assert asked.parse_args([]).option is None
    root = Path(__file__).resolve().parents[1]
    declared = re.compile(r"""add_argument\(\s*["']--options?["']|option\(\s*["']--options?["']""")
    spelled = [str(path.relative_to(root)) for folder in ("sergeant_major_env", "agents", "benchmarks", "examples")
               for path in (root / folder).rglob("*.py") if declared.search(path.read_text())]
    assert spelled == []  # train's parser is built from its config, whose option uses RULE_OPTIONS_FLAGS
    assert RULE_OPTIONS_FLAGS == ("--option", "--options")


def test_the_rule_options_old_place_in_rules_warns():
    """The command line's rule options moved from `rules` to `arguments`; the old names answer
    with a DeprecationWarning."""
    from sergeant_major_env import arguments, rules

    for name in ("RULE_OPTIONS_FLAGS", "add_rule_options", "rule_options_help"):
        with pytest.warns(DeprecationWarning, match=f"arguments.{name}"):
            assert getattr(rules, name) is getattr(arguments, name)
    with pytest.raises(AttributeError):
        rules.no_such_name


@pytest.mark.parametrize("integer", [np.int64(3), np.int8(3), np.uint16(3)])
def test_numpy_integers_are_integers_in_every_integer_check(integer):
    """Issue 50: Rules(num_deals=np.int64(3)) said "must be an integer from 1 to 18, got
    np.int64(3)". One test (limits.is_integer) for rules, env options, command options,
    counts and seeds; each keeps the value as a Python int; bools stay refused."""
    from sergeant_major_env import arguments, limits, seeding

    rules = Rules(num_deals=integer)
    assert rules == Rules(num_deals=3) and type(rules.num_deals) is int and rules.to_dict()["num_deals"] == 3
    checks = [options.check_learner_seat(integer - 1, "w"), limits.check_count(integer, "games"),
              seeding.check_seed(integer), arguments.Integer(1, 5).check(integer), arguments.Seed().check(integer),
              arguments.Plain(int).check(integer)]
    assert checks == [2, 3, 3, 3, 3, 3] and all(type(value) is int for value in checks)
    assert arguments.Number(0, 5).check(integer) == 3.0 and arguments.Number(0, 5).check(np.float32(0.5)) == 0.5
    assert options.check_illegal_reward(integer, "w") == 3.0
    for flag in (True, np.bool_(True)):
        with pytest.raises(ValueError, match="^rule option num_deals must be an integer from 1 to 18, got "):
            Rules(num_deals=flag)
        for check in (arguments.Integer(0, 5).check, arguments.Seed().check, arguments.Plain(int).check,
                      arguments.Number(0, 5).check, lambda value: limits.check_count(value, "games"),
                      seeding.check_seed, lambda value: options.check_learner_seat(value, "w")):
            with pytest.raises(ValueError):
                check(flag)


def test_rules_stay_a_picklable_hashable_frozen_dataclass():
    rules = Rules(num_deals=3, must_overtake=True)
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        assert pickle.loads(pickle.dumps(rules, protocol=protocol)) == rules
    assert hash(rules) == hash(Rules(3, True, True)) and copy.deepcopy(rules) == rules
    assert dataclasses.replace(rules, num_deals=5) == Rules(num_deals=5, must_overtake=True)
    assert Rules.from_dict(rules.to_dict()) == rules
    assert Rules.from_strings(["num_deals=3", "must_overtake=true"]) == rules
    with pytest.raises(dataclasses.FrozenInstanceError):
        rules.num_deals = 4


def _env_makers():
    from sergeant_major_env import aec
    from sergeant_major_env.gym_vector import SergeantMajorVectorEnv
    from sergeant_major_env.single_seat import SergeantMajorEnv

    makers = {"aec": aec.raw_env, "wrapped aec": aec.env, "single seat": SergeantMajorEnv,
              "gym vector": lambda **kw: SergeantMajorVectorEnv(2, **kw)}
    try:
        from sergeant_major_env.vec_env import SergeantMajorVecEnv
    except ImportError:  # stable-baselines3 is optional
        return makers
    makers["sb3 vector"] = lambda **kw: SergeantMajorVecEnv(2, **kw)
    return makers


@pytest.mark.parametrize("name", ["aec", "wrapped aec", "single seat", "gym vector", "sb3 vector"])
def test_every_env_takes_one_constructor_shape(name):
    """rules= or rule options (not both), reward=, illegal_action=: the same keywords for every
    env (the AEC env refused rules= before)."""
    from sergeant_major_env.rules import Rules

    makers = _env_makers()
    if name not in makers:
        pytest.skip("stable-baselines3 is not installed")
    make = makers[name]
    for env in (make(rules=Rules(num_deals=2), reward="rank", illegal_action="raise"),
                make(rules={"num_deals": 2}, reward="rank"), make(num_deals=2, reward="rank")):
        assert env.unwrapped.rules == Rules(num_deals=2)
    with pytest.raises(ValueError, match="not both") as error:
        make(rules=Rules(num_deals=2), num_deals=3)
    assert "\n" not in str(error.value)
    with pytest.raises(ValueError, match="rules must be a Rules") as error:
        make(rules=3)
    with pytest.raises(ValueError, match="reward must be one of"):
        make(reward="money")
