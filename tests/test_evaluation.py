"""The tournament machinery (sergeant_major_env.evaluation) and evaluate.py."""

from __future__ import annotations

import csv
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sergeant_major_env import Rules, engine, records
from sergeant_major_env.evaluation import (
    PERMUTATIONS, Schedule, make_schedule, mean_ci, places, play_tables, summarize, t_quantile_95, win_credits)
from sergeant_major_env.policies import RandomPolicy

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
        assert observations.shape == (len(legal_mask), 641) or observations.shape[0] == len(legal_mask)
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
    result = play_tables(agents, games=12, seed=3, rules=Rules(num_deals=2), record=True, progress=False)
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
    result = play_tables(agents, games=30, seed=0, rules=ONE_DEAL, progress=False)
    assert result.games == 30
    calls = [len(a.calls) for a in agents]
    # one deal has ~60-90 decisions; one call per decision (not per game) for each agent
    assert all(10 < c < 150 for c in calls), calls
    assert max(max(a.calls) for a in agents) > 1  # batched subsets
    assert sum(sum(a.calls) for a in agents) < 30 * 200


def test_results_do_not_depend_on_the_batch_size():
    def run(batch_size):
        agents = [FirstLegal("a"), FirstLegal("b"), FirstLegal("c")]
        return play_tables(agents, games=18, seed=11, rules=Rules(num_deals=2), progress=False,
                           batch_size=batch_size).scores

    np.testing.assert_array_equal(run(6), run(1000))


def test_round_robin_of_four_agents():
    agents = [RandomPolicy(), FirstLegal("first"), ObservingRandom(), RandomPolicy()]
    result = play_tables(agents, games=6, seed=0, rules=ONE_DEAL, progress=False)
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
        play_tables([RandomPolicy(), RandomPolicy()], games=6, progress=False)
    with pytest.raises(ValueError, match="seatings"):
        play_tables([RandomPolicy()] * 3, games=6, seatings="shuffled", progress=False)
    with pytest.raises(ValueError, match="games"):
        play_tables([RandomPolicy()] * 3, games=0, progress=False)
    with pytest.raises(ValueError, match="num_deals"):
        play_tables([RandomPolicy()] * 3, games=6, rules={"num_deals": 40}, progress=False)


# ============================================================================ statistics

def test_t_quantiles():
    assert t_quantile_95(1) == pytest.approx(12.706)
    assert t_quantile_95(10) == pytest.approx(2.228)
    assert t_quantile_95(10_000) == pytest.approx(1.96, abs=0.001)
    scipy_stats = pytest.importorskip("scipy.stats")
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
    result = play_tables([FirstLegal("first"), RandomPolicy(), ObservingRandom()], games=12, seed=5,
                         rules=ONE_DEAL, progress=False)
    result.to_json(tmp_path / "r.json")
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["games"] == 12
    for agent in data["agents"]:
        assert set(agent) >= {"name", "mean_points", "ci95", "win_rate", "mean_place"}
        assert len(agent["ci95"]) == 2 and agent["ci95"][0] <= agent["mean_points"] <= agent["ci95"][1]
    assert {"tables", "head_to_head", "rules", "seed"} <= set(data)
    assert data["rules"]["num_deals"] == 1
    assert data["head_to_head"][0].keys() >= {"a", "b", "margin", "ci95"}

    result.to_csv(tmp_path / "r.csv")
    rows = list(csv.DictReader(open(tmp_path / "r.csv", encoding="utf-8")))
    assert [r["agent"] for r in rows] == ["first", "random", "observing"]
    assert set(rows[0]) >= {"agent", "games", "mean_points", "ci95_low", "ci95_high", "win_rate", "mean_place"}

    sys.path.insert(0, str(ROOT))
    try:
        import evaluate
    finally:
        sys.path.remove(str(ROOT))
    evaluate.plot(result, str(tmp_path / "r.png"))
    assert (tmp_path / "r.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "points/game" in result.format_text()


# ============================================================================ evaluate.py

# Runs evaluate.py with the real agent registry, or with a stand-in registry of "random" when
# the agents package is not there (yet).
_RUNNER = """
import runpy, sys, types
try:
    from agents import make_agent
except ImportError:
    from sergeant_major_env.policies import RandomPolicy
    registry = types.ModuleType("agents")
    def make_agent(name):
        if name != "random":
            raise ValueError(f"unknown agent {name!r}; known agents: random")
        return RandomPolicy()
    registry.make_agent = make_agent
    sys.modules["agents"] = registry
sys.argv = ["evaluate.py", *sys.argv[1:]]
runpy.run_path("evaluate.py", run_name="__main__")
"""


def run_evaluate(*args, timeout=60):
    return subprocess.run([sys.executable, "-c", _RUNNER, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONIOENCODING": "utf-8"})


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
