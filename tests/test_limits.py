"""The one bounded-size rule (sergeant_major_env/limits.py) and the bounded readers (issue 20,
items 7 and 9): every size a user or a file gives is checked against what this machine can
hold before work starts, every file read has a size and depth bound, and every error is one
short line. Each test fails fast: nothing big is ever allocated."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from conftest import needs

from sergeant_major_env import Rules, SergeantMajorEnv, engine, limits, records
from sergeant_major_env.evaluation import TablePlan, check_tournament_fits, make_schedule, play_tables
from sergeant_major_env.files import json_depth, read_json

ROOT = Path(__file__).resolve().parents[1]
AVAILABLE = r"[\d,.]+ [GM]iB available"


@pytest.fixture
def small_machine(monkeypatch):
    """A machine with 64 MiB available, so that modest sizes show the rule at work."""
    monkeypatch.setattr(limits, "available_bytes", lambda: 64 * 2**20)


# ---------------------------------------------------------------- the rule itself

def test_available_memory_is_read_from_the_system():
    available = limits.available_bytes()
    assert available is None or 0 < available < 2**50


def test_check_fits_is_one_line_naming_both_sizes_and_what_to_do(small_machine):
    limits.check_fits("a thing", 64 * 2**20)  # exactly what there is: fine
    with pytest.raises(ValueError, match=r"^a thing would need about 1.5 GiB of memory; this machine has 64.0 MiB "
                                         r"available; give less$"):
        limits.check_fits("a thing", 1.5 * 2**30, "give less")


def test_everyday_sizes_do_not_ask_the_system(monkeypatch):
    """An env's reset and a vec env's autoreset call engine.init: no /proc read for them."""
    def asked():
        raise AssertionError("available_bytes was called")
    monkeypatch.setattr(limits, "available_bytes", asked)
    limits.check_fits("a reset", limits.ALWAYS_FITS)
    engine.init([5])


def test_a_system_that_does_not_say_checks_nothing(monkeypatch):
    monkeypatch.setattr(limits, "available_bytes", lambda: None)
    limits.check_fits("anything", 10**30)


@pytest.mark.parametrize("value, expected", [
    ("x" * 100_000, "'" + "x" * 56 + "..."),
    (10**100_000, "an integer of 100001 digits"),
    ([1, 2], "[1, 2]"),
], ids=["long-text", "huge-integer", "short-list"])
def test_echoed_values_are_short(value, expected):
    assert limits.shorten(value) == expected and len(limits.shorten(value)) <= 60


def test_cut_middle_keeps_the_start_and_the_end_within_the_limit():
    assert limits.cut_middle("abc", 10) == "abc"
    cut = limits.cut_middle("s" * 50 + "e" * 50, 21)
    assert cut == "s" * 9 + "..." + "e" * 9 and len(cut) == 21


# ---------------------------------------------------------------- the engine

@pytest.mark.parametrize("call, message", [
    (lambda: engine.init(5), r"^engine.init: seeds must be a 1-D sequence of per-game seeds \(one game each\), got 5; "
                             r"for N games from seed S give engine.game_seeds\(S, N\)$"),
    (lambda: engine.init([1], rules={"num_deals": 3}),
     r"^engine.init: rules must be a Rules \(Rules.from_dict\(options\) makes one from a dict\) or None, got "
     r"\{'num_deals': 3\}$"),
    (lambda: engine.game_seeds(2**63 - 1, 2), r"^seed 9223372036854775807 is too large for 2 games: .* give a seed of "
                                              r"at most 9223372036854775806$"),
    (lambda: engine.game_seeds(0, "3"), r"^engine.game_seeds: batch_size must be an integer >= 0, got '3'$"),
    (lambda: engine.game_seeds(0, 10**12), r"^engine.game_seeds of 1,000,000,000,000 games would need about "
                                           r"[\d,.]+ GiB of memory; this machine has " + AVAILABLE),
])
def test_engine_entry_points_refuse_bad_types_seeds_and_sizes_in_one_line(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_game_seeds_reach_the_documented_maximum_and_no_further():
    assert engine.game_seeds(2**63 - 2, 2).tolist() == [2**63 - 2, 2**63 - 1]


def test_engine_init_is_bounded_by_this_machines_memory(small_machine):
    engine.init(np.arange(1000))  # 1.5 MB
    with pytest.raises(ValueError, match=r"^engine.init of 100,000 games would need about 148.8 MiB of memory"):
        engine.init(np.arange(100_000))


# ---------------------------------------------------------------- environments

def test_vec_env_num_envs_is_checked_before_anything_is_made():
    needs("stable_baselines3")
    from sergeant_major_env import SergeantMajorVecEnv

    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"^SergeantMajorVecEnv: 1,000,000,000 environments would need about "
                                         r"9,313.2 GiB of memory; this machine has " + AVAILABLE + "; give fewer"):
        SergeantMajorVecEnv(num_envs=10**9)
    assert time.perf_counter() - start < 2


@pytest.mark.parametrize("options, message", [
    ("x", r"options must be a dict or None, got str"),
    ({"num_deals": 3}, r"unknown reset option\(s\) num_deals; known: learner_seat; rule options such as num_deals "
                       r"are given to the constructor"),
])
def test_single_seat_reset_refuses_options_in_one_line(options, message):
    with pytest.raises(ValueError, match=rf"^SergeantMajorEnv.reset: {message}$"):
        SergeantMajorEnv().reset(seed=0, options=options)


# ---------------------------------------------------------------- tournaments

def test_a_tournament_beyond_memory_is_refused_before_its_schedule_is_made():
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"^a tournament of 100,000,000,002 games would need about 93,132.3 GiB"):
        make_schedule(3, 99_999_999_999, 0)
    with pytest.raises(ValueError, match=r"^a tournament of 100,000,000,002 games"):
        play_tables("random,random,random", TablePlan(games=99_999_999_999, progress=False))
    assert time.perf_counter() - start < 2


def test_records_and_tables_count_in_a_tournaments_memory(small_machine):
    check_tournament_fits(3, 600)  # 600 KB
    with pytest.raises(ValueError, match=r"^a tournament of 600 games with their records would need about 143.6 MiB"
                                         r".*; give fewer games or record none$"):
        check_tournament_fits(3, 600, record=True)
    with pytest.raises(ValueError, match=r"^a tournament of 70,020 games \(10 tables of 7,002\) would need"):
        check_tournament_fits(5, 7000)


def test_evaluate_games_beyond_memory_is_one_usage_line():
    """It tried to allocate 124 GiB."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-m", "sergeant_major_env", "evaluate", "--games", "99999999999",
                           "--no-progress"], cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    line = done.stderr.strip().splitlines()[-1]
    assert line.startswith("sergeant-major evaluate: error: --games 99999999999: a tournament of 100,000,000,002 "
                           "games would need about") and len(line) < 250, line


# ---------------------------------------------------------------- records

def test_a_recorder_fits_long_player_names_and_records_check():
    state = engine.init([3], Rules(num_deals=1))
    recorder = records.Recorder(state, ["n" * 100_000, "b", "c"])
    while state.phase[0] != engine.OVER:
        legal = engine.legal_bits(state)
        recorder.step(np.array([int(np.flatnonzero(engine.legal_action_mask(state)[0])[0])]))
        del legal
    record = recorder.finished[0]
    assert len(record["players"][0]) == records.MAX_PLAYER_NAME and records.check_record(record) is None


def test_a_record_with_a_name_beyond_the_bound_is_refused_in_a_short_line():
    record = next(iter(records.simulate(1, seed=0, rules=Rules(num_deals=1))))
    record["players"] = ["a", "n" * 100_000, "c"]
    problem = records.check_record(record)
    assert problem == "players[1]: a name is at most 200 characters, got 100,000"


def test_a_line_beyond_the_bound_refuses_the_file_without_being_read_whole(tmp_path, monkeypatch):
    """Issue 50: the rest of an over-long line was skipped up to its newline, which a link to
    /dev/zero never gives; the file is refused at that line, having read at most the bound of it."""
    record = next(iter(records.simulate(1, seed=0, rules=Rules(num_deals=1))))
    good = json.dumps(record)
    path = tmp_path / "games.jsonl"
    path.write_text(good + "\n" + json.dumps({**record, "players": ["x" * 3_000_000, "b", "c"]}) + "\n" + good + "\n")
    found = records.parse_lines(str(path))
    assert next(found) == (1, record)
    with pytest.raises(records.RecordError, match=r"^.*games\.jsonl line 2: longer than 1,000,000 characters \(a game "
                                                  r"record of 18 deals is about 26,000\); not a game-record file$"):
        next(found)


def test_a_checkpoint_whose_data_is_beyond_the_bound_is_refused_before_it_is_decompressed(tmp_path):
    """Issue 50: `train --resume`'s checkpoint_spaces read the zip's "data" member whole, however
    large its header said it was."""
    import zipfile

    from sergeant_major_env.training import run_folder

    path = tmp_path / "model_000000000256.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("data", b" " * (run_folder.MAX_CHECKPOINT_DATA_BYTES + 1))
    with pytest.raises(ValueError, match=r"^not a readable SB3 checkpoint \(ValueError: its data is 16,000,001 bytes; "
                                         r"an SB3 checkpoint's is about 113 kB\)$"):
        run_folder.checkpoint_spaces(path)


# ---------------------------------------------------------------- bounded JSON

def test_json_depth_counts_brackets_outside_strings():
    assert json_depth('{"a": "[[[[", "b": [1, {"c": []}], "d": "\\"["}') == 4
    assert json_depth("3") == 0


@pytest.mark.parametrize("content, message", [
    (b"[" * 5000 + b"]" * 5000, r"is nested 5000 levels deep; such a file has at most 32$"),
    (b" " * 2000, r"is larger than 1,000 bytes: not such a file$"),
    (b"{not json", r"is not valid JSON: Expecting property name enclosed in double quotes \(line 1, column 2\)$"),
    (b"\xff\xfe", r"is not UTF-8 text \(byte 0\)$"),
    (b"[" + b"9" * 5000 + b"]", r"is not valid JSON: Exceeds the limit \(4300 digits\)"),
], ids=["deep", "large", "invalid", "not-utf8", "huge-integer"])
def test_read_json_refuses_in_one_line(tmp_path, content, message):
    path = tmp_path / "file.json"
    path.write_bytes(content)
    limit = 1000 if content.startswith(b" ") else 100_000
    with pytest.raises(ValueError, match=r"^the thing '.*file.json' " + message):
        read_json(path, limit, 32, "the thing")


def test_read_json_reads_a_good_file_and_names_a_missing_one(tmp_path):
    (tmp_path / "good.json").write_text('{"a": [1, 2]}')
    assert read_json(tmp_path / "good.json", 100, 2) == {"a": [1, 2]}
    with pytest.raises(ValueError, match=r"^JSON file '.*missing.json' cannot be read: No such file or directory$"):
        read_json(tmp_path / "missing.json", 100, 2)


@pytest.mark.parametrize("make", [lambda path: path.mkdir(), lambda path: path.symlink_to("/dev/zero"),
                                  lambda path: os.mkfifo(path)], ids=["folder", "dev-zero", "pipe"])
def test_read_json_refuses_what_is_not_a_regular_file_without_reading_it(tmp_path, make):
    make(tmp_path / "file.json")
    with pytest.raises(ValueError, match=r"^JSON file '.*file.json' is not a regular file$"):
        read_json(tmp_path / "file.json", 100, 2)


def test_a_deeply_nested_learned_json_is_one_line(tmp_path):
    needs("safetensors")
    from sergeant_major_env.agents import learned

    folder = tmp_path / "learned"
    shutil.copytree(learned.LEARNED_FOLDER, folder, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    (folder / "learned.json").write_text('{"deep": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(ValueError, match=r"^agent 'learned': metadata '.*learned.json' is nested 100001 levels deep; "
                                         r"such a file has at most 32$"):
        learned.read_learned_metadata(folder)
    (folder / "learned.json").write_text(json.dumps({"format": learned.FORMAT, "format_version": 1, "files": [1]}))
    with pytest.raises(ValueError, match=r"is not the file learned.json describes"):  # not 'list' has no 'get'
        learned.read_learned_metadata(folder)
