"""The tournament machinery (sergeant_major_env.evaluation) and evaluate.py."""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import needs

from sergeant_major_env import Rules, engine, records
from sergeant_major_env.engine import places, win_credits
from sergeant_major_env.evaluation import PERMUTATIONS, TablePlan, make_schedule, play_tables, rules_for_table
from sergeant_major_env.statistics import Schedule, mean_ci, summarize, t_quantile_95
from sergeant_major_env.observation import OBSERVATION_SIZE
from sergeant_major_env.policies import RandomPolicy
from sergeant_major_env.seeding import MAX_SEED

ROOT = Path(__file__).resolve().parents[1]
ONE_DEAL = Rules(num_deals=1)


class FirstLegal:
    """Deterministic stand-in agent: the lowest legal action. Counts its calls."""

    needs_observations = False

    def __init__(self, name: str = "first") -> None:
        self.name = name
        self.calls: list[int] = []

    def act(self, observations, legal_mask, rng):
        self.calls.append(len(legal_mask))
        return np.asarray(legal_mask).argmax(axis=1).astype(np.int64)


class ObservingRandom(RandomPolicy):
    """Random, but asks for observations and checks their shape (the observation path)."""

    name = "observing"
    needs_observations = True

    def act(self, observations, legal_mask, rng):
        assert observations.shape == (len(legal_mask), OBSERVATION_SIZE)
        assert observations.dtype == np.float32
        return super().act(observations, legal_mask, rng)


# ============================================================================ duplicate deals

def test_schedule_duplicate_groups_hold_all_six_seatings():
    schedule = make_schedule(3, games=20, seed=100)
    assert schedule.seeds.size == 24  # rounded up to whole groups of six
    for j in range(4):
        games = np.flatnonzero(schedule.group == j)
        assert games.size == 6
        assert set(schedule.seeds[games].tolist()) == {100 + j}
        assert sorted(map(tuple, schedule.seat_players[games].tolist())) == sorted(PERMUTATIONS)
        # every agent sits in every seat twice per group
        for seat in range(3):
            assert np.bincount(schedule.seat_players[games, seat], minlength=3).tolist() == [2, 2, 2]


def test_duplicate_groups_replay_identical_deals_at_every_deal_start():
    """Step the schedule's games in one batch; at each deal start record state.dealt and the
    talon; the six games of a group must see exactly the same cards deal by deal."""
    rules = Rules(num_deals=4)
    schedule = make_schedule(3, games=18, seed=7)
    state = engine.init(schedule.seeds, rules)
    rng = np.random.default_rng(0)
    seen: dict[tuple[int, int], tuple[bytes, bytes]] = {}

    def note(games):
        for g in games:
            seen[(int(g), int(state.deal[g]))] = (state.dealt[g].tobytes(), state.talon_cards[g].tobytes())

    note(range(state.batch_size))
    while (state.phase != engine.OVER).any():
        engine.step(state, records.random_actions(state, rng))
        note(np.flatnonzero(state.deal_ended & ~state.game_ended))
    assert len(seen) == 18 * 4
    for j in range(3):
        games = np.flatnonzero(schedule.group == j)
        for deal in range(4):
            cards = {seen[(int(g), deal)] for g in games}
            assert len(cards) == 1, f"group {j}, deal {deal + 1}: the six seatings were dealt different cards"
    # and different groups get different deals
    assert seen[(0, 0)] != seen[(6, 0)]


def test_play_tables_records_show_same_deals_under_each_seating():
    agents = [FirstLegal("a"), RandomPolicy(), ObservingRandom()]
    result = play_tables(agents, TablePlan(games=12, seed=3, rules=Rules(num_deals=2), record=True, progress=False))
    recs = result.records
    assert len(recs) == 12
    for j in range(2):
        group = recs[6 * j: 6 * j + 6]
        assert {r["seed"] for r in group} == {3 + j}
        for deal in range(2):
            assert len({json.dumps([r["deals"][deal]["hands"], r["deals"][deal]["talon"]]) for r in group}) == 1
        # the players by seat are the six permutations of the three names
        assert sorted(tuple(r["players"]) for r in group) == sorted(
            tuple(["a", "random", "observing"][i] for i in p) for p in PERMUTATIONS)
    for record in recs:
        records.replay(record)  # raises on any inconsistency
    # scores of the result are the records' scores
    assert [r["scores"] for r in recs] == result.scores.tolist()


# ============================================================================ batching

def test_each_agent_is_called_once_per_decision_on_its_games():
    agents = [FirstLegal("a"), FirstLegal("b"), FirstLegal("c")]
    result = play_tables(agents, TablePlan(games=30, seed=0, rules=ONE_DEAL, progress=False))
    assert result.games == 30
    calls = [len(a.calls) for a in agents]
    # one deal has ~60-90 decisions; one call per decision (not per game) for each agent
    assert all(10 < c < 150 for c in calls), calls
    assert max(max(a.calls) for a in agents) > 1  # batched subsets
    assert sum(sum(a.calls) for a in agents) < 30 * 200


def test_results_do_not_depend_on_the_batch_size():
    def run(batch_size):
        agents = [FirstLegal("a"), FirstLegal("b"), FirstLegal("c")]
        return play_tables(agents, TablePlan(games=18, seed=11, rules=Rules(num_deals=2), progress=False,
                                             batch_size=batch_size)).scores

    np.testing.assert_array_equal(run(6), run(1000))


def test_round_robin_of_four_agents():
    agents = [RandomPolicy(), FirstLegal("first"), ObservingRandom(), RandomPolicy()]
    result = play_tables(agents, TablePlan(games=6, seed=0, rules=ONE_DEAL, progress=False))
    assert [s.name for s in result.agents] == ["random", "first", "observing", "random#2"]
    assert len(result.tables) == 4 and result.games == 24
    assert all(s.games == 18 for s in result.agents)  # three tables of six games each
    assert len(result.head_to_head) == 6
    assert all(h.games == 12 for h in result.head_to_head)  # each pair meets at two tables
    data = result.to_dict()
    assert len(data["tables"]) == 4 and all(len(t["agents"]) == 3 for t in data["tables"])
    # points of a deal sum to zero (R25): so do the mean points over all seats
    assert result.scores.sum() == 0


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="three agents"):
        play_tables([RandomPolicy(), RandomPolicy()], TablePlan(games=6, progress=False))
    with pytest.raises(ValueError, match="seatings"):
        play_tables([RandomPolicy()] * 3, TablePlan(games=6, seatings="shuffled", progress=False))
    with pytest.raises(ValueError, match="games"):
        play_tables([RandomPolicy()] * 3, TablePlan(games=0, progress=False))
    with pytest.raises(ValueError, match="num_deals"):
        play_tables([RandomPolicy()] * 3, TablePlan(games=6, rules={"num_deals": 40}, progress=False))


@pytest.mark.parametrize("fields, message", [
    ({"games": 0}, r"^games must be a positive integer, got 0$"),
    ({"games": True}, r"^games must be a positive integer, got True$"),
    ({"seatings": "shuffled"}, r"^seatings must be one of 'duplicate', 'fixed', got 'shuffled'$"),
    ({"batch_size": 0}, r"^batch_size must be a positive integer, got 0$"),
    ({"workers": 0}, r"^workers must be a positive integer or None \(one per CPU\), got 0$"),
    ({"rng_seed": -1}, r"^rng_seed must be "),
    ({"seed": MAX_SEED, "games": 12}, r"^seed \d+ is too large for 2 duplicate groups: "),
    ({"rules": {"num_deals": 40}}, r"num_deals"),
])
def test_a_table_plan_is_checked_when_made(fields, message):
    """Every option of a tournament is checked once, when its TablePlan is made: one line each
    (issue 31: play_tables took 14 loose arguments, checked inside)."""
    with pytest.raises(ValueError, match=message) as error:
        TablePlan(**fields)
    assert "\n" not in str(error.value)


def test_a_table_plan_keeps_its_rules_as_rules_and_is_frozen(tmp_path):
    plan = TablePlan(games=6, seed=3, rules={"num_deals": 1}, progress=False)
    assert plan.rules == ONE_DEAL and TablePlan().rules == Rules()
    assert plan.agent_seed == 3 and dataclasses.replace(plan, rng_seed=9).agent_seed == 9
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.games = 12
    with pytest.raises(ValueError, match="record file"):
        TablePlan(record=str(tmp_path / "nosuchfolder" / "games.jsonl"))
    with pytest.raises(TypeError, match="rules must be a Rules"):
        TablePlan(rules="num_deals=1")


def test_one_plan_plays_several_tables_and_play_tables_takes_no_loose_options():
    plan = TablePlan(games=6, seed=1, rules=ONE_DEAL, progress=False, workers=1)
    first = play_tables([FirstLegal("a"), FirstLegal("b"), FirstLegal("c")], plan)
    again = play_tables([FirstLegal("a"), FirstLegal("b"), FirstLegal("c")], plan)
    np.testing.assert_array_equal(first.scores, again.scores)
    assert first.seed == 1 and first.games == 6
    with pytest.raises(TypeError):
        play_tables([FirstLegal("a"), FirstLegal("b"), FirstLegal("c")], games=6)  # the plan's fields are its own
    with pytest.raises(TypeError, match="plan must be a TablePlan"):
        play_tables([FirstLegal("a"), FirstLegal("b"), FirstLegal("c")], {"games": 6})


class Registry:
    """A stand-in for agents.make_agent: FirstLegal agents by name; counts what it was asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def __call__(self, name: str):
        self.asked.append(name)
        if name == "broken":
            raise OSError("model file is truncated")
        if name not in ("a", "b", "c"):
            raise ValueError(f"unknown agent {name!r}; known agents: a, b, c")
        return FirstLegal(name)


def test_names_need_an_injected_resolver():
    """Section 7: the library does not know the project's agents; names need make_agent."""
    with pytest.raises(ValueError, match="pass make_agent .*or pass agent objects"):
        play_tables("random,random,random", TablePlan(games=6, progress=False))


def test_names_are_made_by_the_given_make_agent():
    registry = Registry()
    result = play_tables("a,b,a", TablePlan(games=6, seed=1, rules=ONE_DEAL, progress=False), make_agent=registry)
    assert registry.asked == ["a", "b", "a"]
    assert [s.name for s in result.agents] == ["a", "b", "a#2"]
    same = play_tables([FirstLegal("a"), FirstLegal("b"), FirstLegal("a")],
                       TablePlan(games=6, seed=1, rules=ONE_DEAL, progress=False))
    np.testing.assert_array_equal(result.scores, same.scores)
    with pytest.raises(ValueError, match="unknown agent 'zzz'; known agents: a, b, c"):
        play_tables("a,b,zzz", TablePlan(games=6, progress=False), make_agent=registry)
    with pytest.raises(ValueError, match="cannot make agent 'broken': OSError: model file is truncated"):
        play_tables("a,b,broken", TablePlan(games=6, progress=False), make_agent=registry)


_IMPORT_EVERY_MODULE = """
import importlib, pkgutil, sys
import sergeant_major_env
from sergeant_major_env.evaluation import TablePlan, play_tables
for module in pkgutil.walk_packages(sergeant_major_env.__path__, "sergeant_major_env."):
    try:
        importlib.import_module(module.name)
    except ModuleNotFoundError as error:  # an optional dependency (e.g. stable-baselines3) not installed
        if (error.name or "").split(".")[0] in ("sergeant_major_env", "agents"):
            raise
try:
    play_tables("random,random,random", TablePlan(games=6, progress=False))
except ValueError:
    pass
loaded = sorted(name for name in sys.modules if name == "agents" or name.startswith("agents."))
print("agents modules loaded:", loaded)
sys.exit(1 if loaded else 0)
"""


@pytest.mark.slow
def test_the_library_never_imports_the_agents_package():
    """Section 7: importing every module of sergeant_major_env, and asking it for agents by name,
    leaves the top-level agents package unloaded (the scripts pass agents.make_agent in)."""
    done = subprocess.run([sys.executable, "-c", _IMPORT_EVERY_MODULE], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_play_tables_checks_the_seed_of_the_last_group_before_building_agents():
    """One seed rule (seeding.py): group j plays seed + j, so seed + groups - 1 must fit too."""
    registry = Registry()
    with pytest.raises(ValueError, match=r"seed must be an integer from 0 to 2\*\*63 - 1"):
        play_tables("a,b,c", TablePlan(games=6, seed=2**64, progress=False), make_agent=registry)
    with pytest.raises(ValueError, match=f"too large for 2 duplicate groups.* at most {MAX_SEED - 1}"):
        play_tables("a,b,c", TablePlan(games=12, seed=MAX_SEED, progress=False), make_agent=registry)
    with pytest.raises(ValueError, match=f"too large for 3 games: game i plays seed \\+ i.* at most {MAX_SEED - 2}"):
        play_tables("a,b,c", TablePlan(games=3, seed=MAX_SEED, seatings="fixed", progress=False), make_agent=registry)
    with pytest.raises(ValueError, match="rng_seed must be"):
        play_tables("a,b,c", TablePlan(games=6, rng_seed=-1, progress=False), make_agent=registry)
    assert registry.asked == []  # refused before any agent was made
    assert play_tables("a,b,c", TablePlan(games=6, seed=MAX_SEED, rules=ONE_DEAL, progress=False),
                       make_agent=registry).seed == MAX_SEED


def test_play_tables_checks_the_record_path_before_any_game(tmp_path):
    agents = [FirstLegal("a"), FirstLegal("b"), FirstLegal("c")]
    with pytest.raises(ValueError, match="does not exist"):
        play_tables(agents, TablePlan(games=6, record=str(tmp_path / "nosuchfolder" / "games.jsonl"), progress=False))
    assert all(not a.calls for a in agents)


# ============================================================================ rule options of trained agents

class Trained(FirstLegal):
    """An agent that says what it was trained under, as the ppo: agent of a run does (``.rules``)."""

    def __init__(self, name: str, rules: Rules | None) -> None:
        super().__init__(name)
        self.rules = rules


def test_a_trained_agent_plays_under_its_own_rule_options():
    trained = Trained("ppo", Rules(num_deals=3))
    rules, notes = rules_for_table([trained, FirstLegal(), FirstLegal()], ["ppo:run", "first", "first#2"])
    assert rules == Rules(num_deals=3)
    assert notes == ["note: playing num_deals=3, the rule options ppo:run was trained with"]
    # Trained under the defaults, or not saying (rules None): the defaults, silently.
    assert rules_for_table([Trained("x", Rules()), Trained("y", None), FirstLegal()], ["x", "y", "z"]) == (Rules(), [])


def test_options_asked_for_win_with_a_note_naming_both():
    trained = Trained("ppo", Rules(num_deals=3, exchanges=False))
    rules, notes = rules_for_table([trained, FirstLegal(), FirstLegal()], ["ppo:runs/quick", "b", "c"],
                                   asked=Rules(num_deals=18), asked_names=["num_deals"])
    assert rules == Rules()
    assert notes == ["note: ppo:runs/quick was trained with num_deals=3, exchanges=false; playing num_deals=18, "
                     "exchanges=true (default) as --option asks"]
    assert rules_for_table([trained, FirstLegal(), FirstLegal()], ["p", "b", "c"],
                           asked=Rules(num_deals=3, exchanges=False)) == (Rules(num_deals=3, exchanges=False), [])


def test_two_agents_trained_under_different_options_need_option():
    agents = [Trained("p", Rules(num_deals=3)), Trained("q", Rules(num_deals=18)), FirstLegal()]
    with pytest.raises(ValueError, match="ppo:a was trained with num_deals=3 and ppo:b with num_deals=18: "
                                         "choose the table's rule options with --option"):
        rules_for_table(agents, ["ppo:a", "ppo:b", "first"])
    assert rules_for_table(agents, ["ppo:a", "ppo:b", "first"], asked=Rules(num_deals=6))[0] == Rules(num_deals=6)


# ============================================================================ statistics

def test_t_quantiles():
    assert t_quantile_95(1) == pytest.approx(12.706)
    assert t_quantile_95(10) == pytest.approx(2.228)
    assert t_quantile_95(10_000) == pytest.approx(1.96, abs=0.001)
    scipy_stats = needs("scipy.stats")
    for df in (1, 2, 5, 19, 29, 35, 50, 75, 99, 150, 500, 5000):
        assert t_quantile_95(df) == pytest.approx(scipy_stats.t.ppf(0.975, df), abs=0.004)


def test_confidence_interval_on_synthetic_data():
    rng = np.random.default_rng(1)
    # width ~ 2 * 1.96 * sd / sqrt(n) for a large sample
    values = rng.normal(3.0, 2.0, size=2500)
    mean, (low, high) = mean_ci(values)
    assert low < 3.0 < high
    assert (high - low) == pytest.approx(2 * 1.96 * 2.0 / 50, rel=0.06)
    assert mean == pytest.approx(values.mean())
    # coverage of small-sample t intervals is ~95%
    samples = rng.normal(-1.0, 5.0, size=(4000, 8))
    covered = 0
    for sample in samples:
        _, (low, high) = mean_ci(sample)
        covered += low < -1.0 < high
    assert 0.93 < covered / len(samples) < 0.97
    # no interval from a single value
    assert mean_ci([4.0]) == (4.0, None)


def test_win_credits_and_places_share_ties():
    scores = np.array([[5, -2, -3], [4, 4, -8], [0, 0, 0], [-1, 3, -2], [-6, 3, 3]])
    np.testing.assert_allclose(win_credits(scores), [[1, 0, 0], [0.5, 0.5, 0], [1 / 3] * 3, [0, 1, 0], [0, 0.5, 0.5]])
    np.testing.assert_allclose(places(scores), [[1, 2, 3], [1.5, 1.5, 3], [2, 2, 2], [2, 1, 3], [3, 1.5, 1.5]])


def test_summarize_fixed_seatings_with_ties():
    scores = np.array([[4, 4, -8], [0, 0, 0], [6, -3, -3], [-2, 1, 1]])
    schedule = Schedule(seeds=np.arange(4, dtype=np.uint64), seat_players=np.tile(np.arange(3), (4, 1)),
                        table=np.zeros(4, dtype=np.int64), group=np.arange(4), tables=[(0, 1, 2)])
    result = summarize(["a", "b", "c"], schedule, scores, seatings="fixed")
    a, b, c = result.agents
    assert a.mean_points == pytest.approx(2.0) and b.mean_points == pytest.approx(0.5)
    assert a.win_rate == pytest.approx((0.5 + 1 / 3 + 1 + 0) / 4)
    assert b.win_rate == pytest.approx((0.5 + 1 / 3 + 0 + 0.5) / 4)
    assert c.win_rate == pytest.approx((0 + 1 / 3 + 0 + 0.5) / 4)
    assert a.mean_place == pytest.approx((1.5 + 2 + 1 + 3) / 4)
    assert c.mean_place == pytest.approx((3 + 2 + 2.5 + 1.5) / 4)
    assert a.win_rate + b.win_rate + c.win_rate == pytest.approx(1.0)
    h_ab = result.head_to_head[0]
    assert (h_ab.a, h_ab.b) == ("a", "b")
    assert h_ab.margin == pytest.approx(np.mean([0, 0, 9, -3]))
    assert h_ab.a_ahead == pytest.approx((0.5 + 0.5 + 1 + 0) / 4)
    expected = mean_ci([0, 0, 9, -3])[1]
    assert h_ab.ci95 == pytest.approx(expected)


def test_duplicate_ci_is_computed_on_group_averages():
    """Two groups: the interval uses the two group means (df = 1), not the 12 games."""
    schedule = make_schedule(3, games=12, seed=0)
    scores = np.zeros((12, 3), dtype=np.int64)
    # agent 0 scores +6 in every game of group 0 and +2 in group 1; the others share the loss
    for g in range(12):
        seat0 = int(np.flatnonzero(schedule.seat_players[g] == 0)[0])
        value = 6 if schedule.group[g] == 0 else 2
        scores[g] = -value / 2
        scores[g, seat0] = value
    result = summarize(["x", "y", "z"], schedule, scores)
    x = result.agents[0]
    assert x.mean_points == pytest.approx(4.0)
    half = 12.706 * np.std([6, 2], ddof=1) / math.sqrt(2)
    assert x.ci95 == pytest.approx([4 - half, 4 + half])
    assert x.groups == 2 and x.games == 12


# ============================================================================ outputs

def test_json_csv_and_plot_outputs(tmp_path):
    result = play_tables([FirstLegal("first"), RandomPolicy(), ObservingRandom()],
                         TablePlan(games=12, seed=5, rules=ONE_DEAL, progress=False))
    result.to_json(tmp_path / "r.json")
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["games"] == 12
    for agent in data["agents"]:
        assert set(agent) >= {"name", "mean_points", "ci95", "win_rate", "mean_place"}
        assert len(agent["ci95"]) == 2 and agent["ci95"][0] <= agent["mean_points"] <= agent["ci95"][1]
    assert {"tables", "head_to_head", "rules", "seed"} <= set(data)
    assert data["rules"]["num_deals"] == 1
    assert data["head_to_head"][0].keys() >= {"a", "b", "margin", "ci95"}
    # the leaderboard: every agent once, highest first, each rating inside its interval
    assert [set(r) for r in data["ratings"]] == [{"name", "rating", "ci95"}] * 3
    assert sorted(r["name"] for r in data["ratings"]) == ["first", "observing", "random"]
    ratings = [r["rating"] for r in data["ratings"]]
    assert ratings == sorted(ratings, reverse=True) and sum(ratings) == pytest.approx(0, abs=1e-4)
    assert all(r["ci95"][0] <= r["rating"] <= r["ci95"][1] for r in data["ratings"])
    assert "Bradley-Terry" in data["ratings_method"]

    result.to_csv(tmp_path / "r.csv")
    rows = list(csv.DictReader(open(tmp_path / "r.csv", encoding="utf-8")))
    assert [r["agent"] for r in rows] == ["first", "random", "observing"]
    assert set(rows[0]) >= {"agent", "games", "mean_points", "ci95_low", "ci95_high", "win_rate", "mean_place"}

    from sergeant_major_env.cli import evaluate

    evaluate.plot(result, str(tmp_path / "r.png"))
    assert (tmp_path / "r.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "points/game" in result.format_text()


# ============================================================================ ratings

@pytest.mark.parametrize("agents, games", [("random,greedy,heuristic", 60), ("random,greedy,heuristic,greedy", 36)])
def test_ratings_order_heuristic_over_greedy_over_random_with_intervals_apart(agents, games):
    """One table, and a round robin of four (two copies of greedy): one leaderboard, the baselines in
    their order of strength, each interval clear of the next agent's."""
    from sergeant_major_env.agents import make_agent

    result = play_tables(agents, TablePlan(games=games, seed=0, progress=False), make_agent=make_agent)
    board = {r.name: r for r in result.ratings}
    order = [r.name for r in result.ratings]
    assert order[0] == "heuristic" and order[-1] == "random", order
    for greedy in [name for name in order if name.startswith("greedy")]:
        assert board["heuristic"].ci95[0] > board[greedy].ci95[1], (board["heuristic"], board[greedy])
        assert board[greedy].ci95[0] > board["random"].ci95[1], (board[greedy], board["random"])


def test_evaluate_prints_the_leaderboard(capsys):
    evaluate = _evaluate_module()
    assert evaluate.main(["--agents", "random,greedy,heuristic,greedy", "--games", "12", "--option", "num_deals=2",
                          "--no-progress"]) == 0
    out = capsys.readouterr().out
    heading = "ratings (Bradley-Terry on finishing ahead, Elo points, mean 0; 95% bootstrap over 2 groups)"
    assert heading in out
    rows = out.split(heading)[1].splitlines()[1:6]
    assert rows[0].split() == ["rank", "agent", "rating", "95%", "CI"]
    ranked = [row.split() for row in rows[1:]]
    assert [row[0] for row in ranked] == ["1", "2", "3", "4"]
    assert sorted(row[1] for row in ranked) == ["greedy", "greedy#2", "heuristic", "random"]
    ratings = [int(row[2]) for row in ranked]
    assert ratings == sorted(ratings, reverse=True)
    assert re.fullmatch(r"\[[+-]\d+,", ranked[0][3]) and re.fullmatch(r"[+-]\d+\]", ranked[0][4])


def test_evaluate_plot_draws_the_leaderboard_as_its_second_panel(tmp_path):
    matplotlib = needs("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    evaluate = _evaluate_module()
    result = play_tables([FirstLegal("first"), RandomPolicy(), ObservingRandom()],
                         TablePlan(games=12, seed=5, rules=ONE_DEAL, progress=False))
    figure, axes = plt.subplots()
    try:
        evaluate.plot_ratings(axes, result)
        # highest at the top: tick labels from the bottom up are the leaderboard reversed
        assert [t.get_text() for t in axes.get_yticklabels()] == [r.name for r in result.ratings][::-1]
        data_line = axes.containers[0].lines[0]  # the error bar's points
        points = np.asarray(data_line.get_xdata(), dtype=float)
        np.testing.assert_allclose(points, [r.rating for r in result.ratings][::-1])
    finally:
        plt.close(figure)
    evaluate.plot(result, str(tmp_path / "r.png"))
    assert (tmp_path / "r.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# ============================================================================ evaluate.py

# Runs evaluate.py with the real agent registry, or with a stand-in registry of "random" when
# the agents package is not there (yet).
_RUNNER = """
import sys
from sergeant_major_env.cli import run
run(["evaluate", *sys.argv[1:]])
"""

# A registry entry "trained:N": an agent that says it was trained with num_deals=N (``.rules``,
# as the ppo: agent of a training run does).
_TRAINED_AGENT = """
from sergeant_major_env.agents import register_agent
from sergeant_major_env import Rules
from sergeant_major_env.policies import RandomPolicy

class Trained(RandomPolicy):
    def __init__(self, argument):
        self.name, self.rules, self.metadata = "trained", Rules(num_deals=int(argument)), {}

register_agent("trained", Trained, takes_argument=True)
"""


def run_evaluate(*args, timeout=60, preamble="", stdin=None):
    return subprocess.run([sys.executable, "-c", preamble + _RUNNER, *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout, stdin=stdin, env={**os.environ, "PYTHONIOENCODING": "utf-8"})


def error_line(done) -> str:
    """The one error line of a refused evaluate.py run (exit 2, argparse's usage, no traceback)."""
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1, done.stderr
    return errors[0]


def test_evaluate_help():
    done = subprocess.run([sys.executable, "evaluate.py", "--help"], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0
    for flag in ("--agents", "--games", "--seed", "--options", "--json", "--csv", "--plot", "--record",
                 "--no-progress"):
        assert flag in done.stdout


def test_evaluate_tiny_run_writes_every_output(tmp_path):
    out = {ext: tmp_path / f"eval.{ext}" for ext in ("json", "csv", "png", "jsonl")}
    done = run_evaluate("--agents", "random,random,random", "--games", "6", "--seed", "4", "--options", "num_deals=1",
                        "--json", str(out["json"]), "--csv", str(out["csv"]), "--plot", str(out["png"]),
                        "--record", str(out["jsonl"]), "--no-progress")
    assert done.returncode == 0, done.stderr
    assert "random#2" in done.stdout and "win rate" in done.stdout
    data = json.loads(out["json"].read_text())
    assert data["games"] == 6 and [a["name"] for a in data["agents"]] == ["random", "random#2", "random#3"]
    assert out["csv"].read_text().startswith("table,agent,games,mean_points")
    assert out["png"].stat().st_size > 1000
    recs = records.read_jsonl(str(out["jsonl"]))
    assert len(recs) == 6
    for record in recs:
        assert records.check_record(record) is None
        assert sorted(record["players"]) == ["random", "random#2", "random#3"]


@pytest.mark.parametrize("args, message", [
    (("--agents", "random,nosuchagent,random"), "nosuchagent"),
    (("--agents", "random,random"), "three agents"),
    (("--options", "nosuchoption=1"), "nosuchoption"),
    (("--options", "num_deals=99"), "num_deals"),
])
def test_evaluate_bad_arguments_exit_2(args, message):
    done = run_evaluate(*args, "--games", "6", "--no-progress")
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("args, message", [
    (("--seed", str(2**64)), r"--seed: must be an integer from 0 to 2\*\*63 - 1"),
    (("--seed", "-3"), r"--seed: must be an integer from 0 to 2\*\*63 - 1"),
    (("--seed", str(MAX_SEED), "--games", "12"), f"too large for 2 duplicate groups.*at most {MAX_SEED - 1}"),
])
def test_evaluate_refuses_seeds_beyond_the_seed_rule_in_one_line(args, message):
    line = error_line(run_evaluate("--agents", "random,random,random", *args, "--no-progress"))
    assert re.search(message, line), line


@pytest.mark.parametrize("flag", ["--json", "--csv", "--plot", "--record"])
def test_evaluate_checks_each_output_file_before_any_game(tmp_path, flag):
    """Today's failure: the games were played, then the file could not be written, and all was lost."""
    done = run_evaluate("--agents", "random,random,random", "--games", "6000", flag,
                        str(tmp_path / "nosuchfolder" / "out.png"), "--no-progress")
    line = error_line(done)
    assert f"{flag} file" in line and "does not exist" in line
    assert "games in" not in done.stdout  # refused before playing


def test_evaluate_refuses_two_outputs_in_one_file(tmp_path):
    line = error_line(run_evaluate("--agents", "random,random,random", "--json", str(tmp_path / "out"),
                                   "--csv", str(tmp_path / "out"), "--no-progress"))
    assert "--json and --csv name the same file" in line


def test_evaluate_plot_without_matplotlib_names_the_extra_before_any_game(tmp_path):
    no_matplotlib = "import sys\nsys.modules['matplotlib'] = None  # as if it were not installed\n"
    done = run_evaluate("--agents", "random,random,random", "--games", "6000", "--plot", str(tmp_path / "p.png"),
                        "--no-progress", preamble=no_matplotlib)
    line = error_line(done)
    assert "--plot needs matplotlib" in line and "[train]" in line
    assert "games in" not in done.stdout


def test_evaluate_plot_format_is_checked_before_any_game(tmp_path):
    line = error_line(run_evaluate("--agents", "random,random,random", "--games", "6000", "--plot",
                                   str(tmp_path / "p.bogus"), "--no-progress"))
    assert "cannot write .bogus images" in line and ".png" in line


def test_evaluate_human_without_a_terminal_is_refused_up_front():
    done = run_evaluate("--agents", "human,random,random", "--games", "6", "--no-progress",
                        stdin=subprocess.DEVNULL)
    assert "standard input is not a terminal" in error_line(done)


def test_outputs_are_never_half_written(tmp_path):
    """A failure while writing leaves the previous file as it was (a temporary file is renamed
    only once complete); today's open(path, "w") left a truncated file."""
    result = play_tables([FirstLegal("a"), FirstLegal("b"), FirstLegal("c")],
                         TablePlan(games=6, rules=ONE_DEAL, progress=False))
    json_path, csv_path = tmp_path / "r.json", tmp_path / "r.csv"
    json_path.write_text("previous json\n")
    csv_path.write_text("previous csv\n")
    good = result.to_dict()
    result.to_dict = lambda: {**good, "unserializable": object()}  # json.dump fails half way
    with pytest.raises(TypeError):
        result.to_json(json_path)
    rows = result.csv_rows()
    result.csv_rows = lambda: [rows[0], {"not a column": 1}]  # the writer fails after the header and a row
    with pytest.raises(ValueError):
        result.to_csv(csv_path)
    assert json_path.read_text() == "previous json\n" and csv_path.read_text() == "previous csv\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.csv", "r.json"]


def test_evaluate_plays_a_trained_model_under_its_rule_options(tmp_path):
    out = tmp_path / "eval.json"
    done = run_evaluate("--agents", "trained:2,random,random", "--games", "6", "--json", str(out), "--no-progress",
                        preamble=_TRAINED_AGENT)
    assert done.returncode == 0, done.stderr
    assert "note: playing num_deals=2, the rule options trained:2 was trained with" in done.stdout
    assert json.loads(out.read_text())["rules"]["num_deals"] == 2


def test_evaluate_option_overrides_a_trained_model_and_says_so(tmp_path):
    out = tmp_path / "eval.json"
    done = run_evaluate("--agents", "trained:2,random,random", "--games", "6", "--option", "num_deals=1",
                        "--json", str(out), "--no-progress", preamble=_TRAINED_AGENT)
    assert done.returncode == 0, done.stderr
    assert "note: trained:2 was trained with num_deals=2; playing num_deals=1 as --option asks" in done.stdout
    assert json.loads(out.read_text())["rules"]["num_deals"] == 1


def test_evaluate_two_models_with_different_rule_options_need_option():
    done = run_evaluate("--agents", "trained:2,trained:3,random", "--games", "6", "--no-progress",
                        preamble=_TRAINED_AGENT)
    line = error_line(done)
    assert "trained:2 was trained with num_deals=2 and trained:3 with num_deals=3" in line
    assert "--option num_deals=2" in line


def _evaluate_module():
    from sergeant_major_env.cli import evaluate

    return evaluate


def test_evaluate_interrupted_says_so_and_writes_nothing(tmp_path, monkeypatch, capsys):
    evaluate = _evaluate_module()

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(evaluate, "play_tables", interrupted)
    assert evaluate.main(["--agents", "random,random,random", "--json", str(tmp_path / "r.json"),
                          "--no-progress"]) == 130
    assert "interrupted (SIGINT); no results written" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_evaluate_an_agent_failing_during_play_is_one_line(monkeypatch, capsys):
    evaluate = _evaluate_module()

    def incompatible(*args, **kwargs):
        raise ValueError("observation shape (641,) does not match the model's (600,)")

    monkeypatch.setattr(evaluate, "play_tables", incompatible)
    assert evaluate.main(["--agents", "random,random,random", "--no-progress"]) == 1
    assert capsys.readouterr().err == "sergeant-major evaluate: error: observation shape (641,) does not match the model's (600,)\n"


def test_text_table_columns_fit_long_agent_names():
    """A name longer than the default column (pimc:rollout=learned) widens it: every row of a
    block stays as long as its header, and names never run into the numbers."""
    names = ["pimc:rollout=learned:worlds=12", "first", "second"]
    result = play_tables([FirstLegal(n) for n in names], TablePlan(games=6, rules=ONE_DEAL, progress=False, workers=1),
                         names=names)
    lines = result.format_text().splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("agent"))
    for line in lines[header + 2:header + 5]:
        assert len(line) == len(lines[header]) and line.split()[0] in names
    pairs = next(i for i, line in enumerate(lines) if line.startswith("head to head"))
    for line in lines[pairs + 1:pairs + 4]:
        assert len(line) == len(lines[pairs]) and "  " in line.split(" vs ")[1]
    ranks = next(i for i, line in enumerate(lines) if line.startswith("rank"))
    for line in lines[ranks + 1:ranks + 4]:
        assert len(line) == len(lines[ranks]) and line.split()[1] in names


def test_text_table_columns_size_to_a_wide_interval():
    """Issue 50: a wide interval ran into the next column ("+34.50[-105.27, +174.27]   83.3%"):
    every column is as wide as its widest cell, two spaces at least from the next."""
    import re

    names = ["first", "second", "third"]
    result = play_tables([FirstLegal(n) for n in names], TablePlan(games=6, rules=ONE_DEAL, progress=False, workers=1),
                         names=names)
    result.agents[0].mean_points, result.agents[0].ci95 = 1234.5, [-10234.56, 12703.25]
    result.head_to_head[0].margin, result.head_to_head[0].ci95, result.head_to_head[0].a_ahead = \
        34.5, [-105.27, 174.27], 0.833
    result.ratings[0].ci95 = [-12345, 23456]
    lines = result.format_text().splitlines()
    assert re.search(r"\+1234\.50 {2,}\[-10234\.56, \+12703\.25\] {2,}\d", "\n".join(lines))
    assert re.search(r"\+34\.50 {2,}\[-105\.27, \+174\.27\] {2,}83\.3%$", "\n".join(lines), re.M)
    assert re.search(r" {2,}\[-12345, \+23456\]$", "\n".join(lines), re.M)
    for title in ("agent", "head to head", "rank"):
        start = next(i for i, line in enumerate(lines) if line.startswith(title))
        rows = [lines[start]] + [line for line in lines[start + 1:start + 5] if line and line[0] not in "-pn"]
        assert len(rows) == 4 and len({len(row) for row in rows}) == 1, rows
        ends = [{m.end() for m in re.finditer(r"\S(?= {2}|$)", row)} for row in rows]
        numbers = set(sorted(ends[0])[2 if title == "rank" else 1:])  # where the header's number columns end
        assert all(numbers <= row_ends for row_ends in ends), rows  # every row's numbers end there too


def test_the_timing_line_reports_the_compiling_apart_from_the_play():
    """Issue 50: a cold run's "6 games in 30.9 s (5.15 s a game)" counted the kernels' compiling."""
    from sergeant_major_env.cli.evaluate import timing_line

    assert timing_line(6, 30.9, 26.8) == "6 games in 4.1 s of play (0.68 s a game); compiling the kernels took 26.8 s"
    assert timing_line(6, 4.1) == "6 games in 4.1 s (0.68 s a game)"
    assert timing_line(1200, 2.0) == "1200 games in 2.0 s (600 games/s)"


class Steady(FirstLegal):
    """FirstLegal that says it is deterministic (policies.is_deterministic)."""

    deterministic = True


def _steady_or_random(name: str):
    """A resolver: "r" is a random agent, any other name a Steady one."""
    return RandomPolicy() if name == "r" else Steady(name)


def _text_report(agents, seatings: str = "duplicate") -> tuple[object, list[str]]:
    plan = TablePlan(games=12, rules=ONE_DEAL, seatings=seatings, progress=False, workers=1)
    result = play_tables(agents, plan, make_agent=_steady_or_random)
    return result, result.format_text().splitlines()


def test_the_text_table_says_what_its_place_column_is_under_the_agents():
    """Issue 31: the place column was never explained; the line under the agents says it is the
    mean finishing place, 1 = first to 3 = last (what mean_place is)."""
    from sergeant_major_env.statistics import PLACE_LEGEND

    result, lines = _text_report("a,b,r")
    header = next(i for i, line in enumerate(lines) if line.startswith("agent"))
    assert header + 2 + 3 == lines.index(PLACE_LEGEND)  # right under the three agents' rows
    assert PLACE_LEGEND.startswith("place: ") and "mean finishing place, 1 = first to 3 = last" in PLACE_LEGEND
    assert all(1 <= s.mean_place <= 3 for s in result.agents)


def test_two_copies_of_one_deterministic_agent_are_noted_as_zero_by_construction():
    """Issue 31: "heuristic vs heuristic#2 +0.00 [+0.00, +0.00] 50.0%" puzzled readers: two copies
    of one deterministic agent, with deterministic agents only, play the same games in the swapped
    seatings of each duplicate deal. A note under the head-to-head rows says so."""
    result, lines = _text_report("a,b,b")
    assert result.copies == [("b", "b#2")] and set(result.deterministic) == {"a", "b", "b#2"}
    pair = next(h for h in result.head_to_head if (h.a, h.b) == ("b", "b#2"))
    assert pair.margin == 0 and pair.ci95 == [0, 0] and pair.a_ahead == 0.5
    rows = next(i for i, line in enumerate(lines) if line.startswith("head to head"))
    assert lines[rows + 4] == ("note: b and b#2 are two copies of one agent, all at their tables deterministic: "
                               "in swapped seats they play the same games, margin 0 by construction")
    assert "copies" not in result.to_dict()  # the JSON keeps its fields


@pytest.mark.parametrize("agents, seatings", [
    ("r,b,b", "duplicate"),   # a random agent at their table: the swapped games differ
    ("a,r,r", "duplicate"),   # copies of a random agent
    ("a,b,b", "fixed"),       # no swapped seatings
    ("a,b,b,r", "duplicate"),  # a round robin: they meet at the table of b, b#2 and r too
])
def test_copies_whose_games_may_differ_are_marked_without_a_claim(agents, seatings):
    result, lines = _text_report(agents, seatings)
    copy = [name for name in agents.split(",") if agents.count(name) == 2][0]
    assert result.copies == [(copy, copy + "#2")]
    assert f"note: {copy} and {copy}#2 are two copies of one agent" in lines
    assert "by construction" not in "\n".join(lines)


def test_distinct_agents_and_two_objects_of_one_name_get_no_copies_note():
    """Only one name given twice (or one object twice) is two copies: two objects that share a
    name may be different agents."""
    _, lines = _text_report("a,b,r")
    assert not any("copies" in line for line in lines)
    result = play_tables([Steady("a"), Steady("b"), Steady("b")],
                         TablePlan(games=6, rules=ONE_DEAL, progress=False, workers=1))
    assert result.names == ["a", "b", "b#2"] and result.copies == []
    assert "copies" not in result.format_text()
    twice = Steady("b")
    assert play_tables([Steady("a"), twice, twice], TablePlan(games=6, rules=ONE_DEAL, progress=False,
                                                                  workers=1)).copies == [("b", "b#2")]


@pytest.mark.parametrize("agents, note", [
    ("heuristic,greedy,greedy", "note: greedy and greedy#2 are two copies of one agent, all at their tables "
                                "deterministic: in swapped seats they play the same games, margin 0 by construction"),
    ("random,greedy,greedy", "note: greedy and greedy#2 are two copies of one agent"),
    ("heuristic,greedy,random", None),
])
def test_evaluate_prints_the_place_legend_and_notes_copies(agents, note, capsys):
    """The command plays agent objects it built from the names: the names say which are copies."""
    from sergeant_major_env.statistics import PLACE_LEGEND

    evaluate = _evaluate_module()
    assert evaluate.main(["--agents", agents, "--games", "6", "--option", "num_deals=1", "--no-progress",
                          "--workers", "1"]) == 0
    out = " ".join(capsys.readouterr().out.split())  # rich, where installed, wraps long lines
    assert PLACE_LEGEND.replace("place:", "") in out
    if note is None:
        assert "copies" not in out
    else:
        assert note in out and ("by construction" in out) == ("by construction" in note)
    assert "hidden card" not in out  # fair agents only: no cheat note


def test_evaluate_notes_an_agent_that_sees_the_hidden_cards(capsys):
    """Issue 29: a table with ``pimc:cheat`` says, in one line under the agents, that it cheats
    (its result is a bound, not a player's strength)."""
    from sergeant_major_env.statistics import PLACE_LEGEND

    evaluate = _evaluate_module()
    assert evaluate.main(["--agents", "pimc:cheat,heuristic,random", "--games", "6", "--option", "num_deals=1",
                          "--no-progress", "--workers", "1"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    note = ("note: pimc:cheat sees every hidden card (not a fair player: a measure of what perfect inference is "
            "worth)")
    assert out.count(note) == 1 and out.index(PLACE_LEGEND.replace("place:", "")) < out.index(note)


def test_the_cheat_note_is_one_line_under_the_agents_of_the_text_table():
    result, _ = _text_report("a,b,r")
    result.cheats = ["a", "b"]
    lines = result.format_text().splitlines()
    from sergeant_major_env.statistics import PLACE_LEGEND

    assert lines[lines.index(PLACE_LEGEND) + 1] == ("note: a, b see every hidden card (not a fair player: a measure "
                                                    "of what perfect inference is worth)")
    assert "cheats" not in result.to_dict()


def test_a_lopsided_table_gets_its_ratings():
    """README's `evaluate.py --agents heuristic,random,random --games 1200`: the heuristic above
    both random copies in nearly every game, which once left the ratings' fit unsettled."""
    from sergeant_major_env.agents import make_agent

    result = play_tables("heuristic,random,random", TablePlan(games=1200, rules=ONE_DEAL, progress=False),
                         make_agent=make_agent)
    assert [r.name for r in result.ratings][0] == "heuristic"
    assert all(math.isfinite(r.rating) and r.ci95[0] <= r.rating <= r.ci95[1] for r in result.ratings)
