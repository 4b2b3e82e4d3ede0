"""The benchmark scripts' command lines: every option says what it does and what its default is,
bad input is one line, and the seed follows the one seed rule (seeding.py)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import extra_reason

pytestmark = pytest.mark.slow  # pytest -m "not slow" leaves this file out (issue 31)

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = sorted(p.name for p in (ROOT / "benchmarks").glob("*.py"))
UNSEEDED = {"exploit_table.py": "reads finished exploit runs; plays no game",
            "first_run.py": "times a command, which takes its own --seed"}
"""The scripts without a --seed (and why)."""


def help_text(script: str) -> str:
    done = subprocess.run([sys.executable, f"benchmarks/{script}", "--help"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "COLUMNS": "100"})  # wrapping as parsed
    assert done.returncode == 0, done.stderr
    return done.stdout


def option_entries(text: str) -> dict[str, str]:
    """{option flags: its help text} of the "options:" section of an argparse --help."""
    section = text.split("\noptions:\n", 1)[1]
    entries: dict[str, str] = {}
    flags = None
    for line in section.splitlines():
        if not line.strip() or not line.startswith(" "):
            break  # the end of the section (a blank line or the next heading)
        match = re.match(r"^  (-\S.*?)(?:\s{2,}(.*))?$", line)
        if match:  # "  --seed S    help..." or "  --option NAME=VALUE [...], --options ..." alone
            flags = match.group(1)
            entries[flags] = match.group(2) or ""
        elif flags is not None:
            entries[flags] += " " + line.strip()
    return entries


@pytest.mark.parametrize("script", BENCHMARKS)
def test_every_benchmark_option_has_help_and_shows_its_default(script):
    entries = option_entries(help_text(script))
    assert len(entries) > 1, entries
    for flags, text in entries.items():
        if flags.startswith("-h, --help"):
            continue
        assert text.strip(), f"{script} {flags}: no help text"
        assert re.search(r"\(default[ :]", text), f"{script} {flags}: help does not show the default: {text!r}"


@pytest.mark.parametrize("script", [name for name in BENCHMARKS if name not in UNSEEDED])
def test_every_benchmark_refuses_a_seed_beyond_the_seed_rule_in_one_line(script):
    argv = ["greedy", "random", "random"] if script == "agents_strength.py" else []
    done = subprocess.run([sys.executable, f"benchmarks/{script}", *argv, "--seed", str(2**64)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "--seed: must be an integer from 0 to 2**63 - 1" in done.stderr.splitlines()[-1]


@pytest.mark.parametrize("script, argv", [
    ("agents_strength.py", ["greedy", "random", "random", "--options", "num_deals=1", "exchanges=false",
                            "--groups", "1", "--json"]),
    ("engine.py", ["--options", "num_deals=1", "exchanges=false", "--batch", "4", "--seconds", "0.05",
                   "--repeats", "1", "--json"]),
])
def test_benchmarks_take_rule_options_like_the_other_clis(script, argv):
    """`--option NAME=VALUE ...`, with `--options` as an alias, as evaluate.py and train.py take them."""
    done = subprocess.run([sys.executable, f"benchmarks/{script}", *argv], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("script, argv, message", [
    ("agents_speed.py", ["nosuchagent"], "unknown agent 'nosuchagent'"),
    ("agents_strength.py", ["greedy", "nosuchagent", "random"], "unknown agent 'nosuchagent'"),
    ("agents_strength.py", ["greedy", "random", "random", "--option", "num_deals=99"], "num_deals"),
    ("pimc_speed.py", ["--num-deals", "40"], "num_deals must be an integer from 1 to 18"),
    ("pimc_speed.py", ["--agent", "nosuchagent"], "unknown agent 'nosuchagent'"),
    ("fit_modes.py", ["--out", "nosuchfolder/samples.npz"], "folder 'nosuchfolder' does not exist"),
    ("vec_env.py", ["--json", "nosuchfolder/results.json"], "folder 'nosuchfolder' does not exist"),
    ("vec_env.py", ["--sizes", "0"], "--sizes must be positive integers"),
    ("vec_env.py", ["--opponents", "heuristic", "--observing-opponents"], "it needs --opponents random"),
    ("vec_env.py", ["--opponents", "pimc"], "invalid choice: 'pimc'"),
    ("gym_vector.py", ["--sizes", "0"], "--sizes must be positive integers"),
    ("gym_vector.py", ["--json", "nosuchfolder/results.json"], "folder 'nosuchfolder' does not exist"),
    ("labels_speed.py", ["--teacher", "heuristic"], "the teacher must be a pimc search bot"),
    ("labels_speed.py", ["--player", "nosuchagent"], "unknown agent 'nosuchagent'"),
    ("labels_speed.py", ["--games", "0"], "--games: must be an integer, 1 or more, got '0'"),
    ("labels_speed.py", ["--against", "nosuchfolder"], "--against: nosuchfolder is not a checkout"),
    ("gap_share.py", ["nosuchfile", "--agent", "a", "--base", "b", "--bound", "c"], "nosuchfile is not a file"),
    ("gap_share.py", ["README.md", "--agent", "a", "--base", "a", "--bound", "c"], "must be three different agents"),
    ("gap_share.py", ["README.md", "--agent", "a", "--base", "b", "--bound", "c"], "README.md line 1: not a game record"),
])
def test_benchmark_bad_arguments_are_one_line_before_any_work(script, argv, message):
    done = subprocess.run([sys.executable, f"benchmarks/{script}", *argv], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert message in done.stderr.splitlines()[-1]


# ---------------------------------------------------------------- sizes and times (issue 20, items 7 and 8)

TIMED = ("aec.py", "agents_speed.py", "engine.py", "vec_env.py", "gym_vector.py", "openspiel_speed.py")
"""The benchmarks with a --seconds option: one shared check, sergeant_major_env.arguments.SECONDS."""


def run_benchmark(script: str, argv: list[str], timeout: float = 120) -> subprocess.CompletedProcess:
    """The script as a user runs it, importing this checkout's package."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, f"benchmarks/{script}", *argv], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout, env=env)


def one_usage_error(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and len(errors[0]) < 300, done.stderr
    return errors[0]


@pytest.mark.parametrize("script, seconds", [
    *(("engine.py", seconds) for seconds in ("nan", "inf", "-inf", "1e-9", "0", "-1", "3601", "abc")),
    *((script, seconds) for script in TIMED[:2] + TIMED[3:] for seconds in ("nan", "inf", "1e-9")),
])
def test_seconds_outside_0_01_to_3600_is_one_usage_line(script, seconds):
    """Not an UnboundLocalError (nan), a ZeroDivisionError (1e-9), a run that never ends (inf)
    or "0% of the target": one line naming the range, exit status 2, nothing timed."""
    line = one_usage_error(run_benchmark(script, [f"--seconds={seconds}"]))
    assert line.endswith(f"argument --seconds: must be a number of seconds from 0.01 to 3600, got {seconds!r}")


def test_the_smallest_seconds_runs():
    done = run_benchmark("engine.py", ["--batch", "2", "--seconds", "0.01", "--repeats", "1", "--json"])
    assert done.returncode == 0, done.stderr



def test_the_engine_benchmark_times_the_bulk_way_beside_skat_in_one_run():
    """Issue 52 item 2: one command times the batched API with a new observation array every
    decision and with one reused array (`observe`'s out=), OpenSpiel's skat where pyspiel is
    installed, and prints each of ours over skat, with the load average."""
    done = run_benchmark("engine.py", ["--batch", "4", "--seconds", "0.01", "--repeats", "1", "--compare",
                                       "--option", "num_deals=1"])
    assert done.returncode == 0, done.stderr
    assert "batched API, reused out=: " in done.stdout and "load average" in done.stdout
    if importlib.util.find_spec("pyspiel"):
        for ours in ("batched API", "batched API, reused out="):
            assert f"{ours} / openspiel skat = " in done.stdout, done.stdout
    done = run_benchmark("engine.py", ["--batch", "4", "--seconds", "0.01", "--repeats", "1", "--json"])
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout)
    assert figures["batched_api_reused_out_decisions_per_s"] > 0 and set(figures["load_average"]) == {"before", "after"}

def test_the_openspiel_benchmark_times_sergeant_major_beside_skat_in_one_run():
    """Issue 52 item 1: one run times random play through pyspiel on python_sergeant_major and
    on skat in the same loop (nothing asked, the observation tensor, the information-state
    tensor at each decision) and the AEC env, with the ratios and the load average."""
    if not importlib.util.find_spec("pyspiel"):
        pytest.skip(extra_reason("pyspiel"))
    done = run_benchmark("openspiel_speed.py", ["--seconds", "0.01", "--repeats", "1", "--option", "num_deals=1"])
    assert done.returncode == 0, done.stderr
    lines = {line.split()[0]: line for line in done.stdout.splitlines() if line.strip()}
    assert "/ skat = " in lines["play"] and "/ skat = " in lines["observation"] and "/ aec = " in lines["observation"]
    assert re.match(r"information +[\d,]+ +- +- *$", lines["information"]), done.stdout
    assert "load average" in done.stdout and "load average after" in done.stdout


def test_the_vec_env_benchmark_against_the_heuristic_with_its_breakdown():
    """train.py's default opponents: the opponents' share of a step under policies.decide."""
    done = run_benchmark("vec_env.py", ["--opponents", "heuristic", "--sizes", "3", "--dummy-envs", "1",
                                        "--num-deals", "1", "--seconds", "0.01", "--repeats", "1", "--breakdown"])
    assert done.returncode == 0, done.stderr
    assert "opponents: heuristic" in done.stdout and "policies.decide (opponents)" in done.stdout


def test_the_gym_vector_benchmark_measures_both_modes_in_one_run():
    done = run_benchmark("gym_vector.py", ["--sizes", "2", "--num-deals", "1", "--seconds", "0.01", "--repeats", "1",
                                           "--json"])
    assert done.returncode == 0, done.stderr
    assert "load average" in done.stdout and "vector entry point / sync" in done.stdout


@pytest.mark.parametrize("script, argv, message", [
    ("engine.py", ["--batch", "100000000"], "--batch: a batch of 100,000,000 games would need about"),
    ("agents_speed.py", ["--batch", "1000000000"], "--batch: a batch of 1,000,000,000 games would need about"),
    ("vec_env.py", ["--sizes", "1,1000000000"], "--sizes 1000000000: 1,000,000,000 environments would need about"),
    ("pimc_speed.py", ["--games", "100000000000"], "a table of 600,000,000,000 games would need about"),
    ("agents_strength.py", ["greedy", "random", "random", "--groups", "100000000000"], "--groups 100000000000 would"),
    ("fit_modes.py", ["--games", "100000000000"], "the mode choices of 100,000,000,000 games would need about"),
])
def test_sizes_beyond_this_machines_memory_are_one_usage_line_before_any_work(script, argv, message):
    line = one_usage_error(run_benchmark(script, argv))
    assert message in line and "GiB available" in line, line


def test_pimc_speed_refuses_an_agent_that_does_not_search_the_state():
    """It times act_on_state: --agent heuristic was an AttributeError after the first game started."""
    line = one_usage_error(run_benchmark("pimc_speed.py", ["--agent", "heuristic"]))
    assert "--agent 'heuristic' does not search the engine state" in line and "agents_speed.py" in line


def test_agents_speed_times_the_heuristic_of_030_in_the_same_run():
    """--reference adds the frozen 0.3.0 heuristic (tests/reference_heuristic_030.py); --card-sets
    asks through act_on_card_sets, as policies.decide does."""
    done = run_benchmark("agents_speed.py", ["heuristic", "--reference", "--card-sets", "--batch", "1", "4",
                                             "--seconds", "0.05"])
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split(" B=")[0].strip() for line in lines] == ["heuristic"] * 2 + ["heuristic-0.3.0"] * 2, lines
    assert all("decisions/s" in line for line in lines), lines


def test_labels_speed_times_two_checkouts_alternately_and_compares_their_labels():
    """--against this same checkout: each run's labels a second, each round's ratio and whether
    the two runs' labels are the same (they are: the same code), then the medians (issue 28)."""
    # Five `distill labels` processes, each starting the package; in a fresh clone the first
    # compiles the search's kernels, and beside the other test worker that took over 120 s once.
    done = run_benchmark("labels_speed.py", ["--teacher", "pimc:worlds=2", "--player", "random", "--games", "1",
                                              "--against", str(ROOT), "--repeat", "2"], timeout=600)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    runs = [line for line in lines if " labels/s" in line and line.startswith("  round ")]
    assert len(runs) == 4 and all(re.search(r"[\d,]+ labels, +[\d.]+ labels/s$", line) for line in runs), lines
    rounds = [line for line in lines if "ratio" in line and line.startswith("  round ")]
    assert len(rounds) == 2 and all(line.endswith("the labels: the same") for line in rounds), lines
    assert re.search(r"^ratio: [\d.]+x \(median of the rounds' [\d.]+x, [\d.]+x;", lines[-2]), lines


def test_gap_share_reads_an_evaluate_tables_records(tmp_path):
    """The share of the gap and its bootstrap interval from `evaluate --record` (issue 29): the
    margins are the per-group averages evaluate's head to head prints, and the share their ratio."""
    import json

    from sergeant_major_env.agents import make_agent
    from sergeant_major_env.evaluation import TablePlan, play_tables

    records = tmp_path / "games.jsonl"
    result = play_tables("greedy,random,heuristic", TablePlan(games=12, seed=3, record=str(records), progress=False,
                                                              workers=1), make_agent=make_agent)
    done = run_benchmark("gap_share.py", [str(records), "--agent", "greedy", "--base", "random",
                                          "--bound", "heuristic", "--samples", "200"])
    assert done.returncode == 0, done.stderr
    margins = {(h.a, h.b): h.margin for h in result.head_to_head}
    greedy, heuristic = margins[("greedy", "random")], -margins[("random", "heuristic")]
    first, second = done.stdout.splitlines()
    assert first == (f"2 groups: greedy over random {greedy:+.2f}, heuristic over random {heuristic:+.2f} "
                     "points a game"), first
    assert second.startswith(f"greedy closes {greedy / heuristic:.1%} of the gap [95% bootstrap over the groups, "
                             "200 resamples: "), second
    lines = records.read_text().splitlines()
    assert len(lines) == 12 and {"seed", "players", "scores"} <= json.loads(lines[0]).keys()
    # Two files are pooled: the same groups, so the same figures as the one file.
    halves = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    halves[0].write_text("\n".join(lines[:5]) + "\n")
    halves[1].write_text("\n".join(lines[5:]) + "\n")
    pooled = run_benchmark("gap_share.py", [str(halves[0]), str(halves[1]), "--agent", "greedy", "--base", "random",
                                            "--bound", "heuristic", "--samples", "200"])
    assert pooled.returncode == 0 and pooled.stdout == done.stdout, (pooled.stdout, pooled.stderr)
    missing = run_benchmark("gap_share.py", [str(halves[0]), "nosuchfile", "--agent", "greedy", "--base", "random",
                                             "--bound", "heuristic"])
    assert missing.returncode == 2 and missing.stderr.strip().splitlines()[-1].endswith(
        "records: nosuchfile is not a file"), missing.stderr
