"""One rule for the files every command writes (sergeant_major_env.files).

* An output file that exists is refused with one line, before any work, unless the command
  is given ``--overwrite`` (``files.check_new_file``): evaluate's --json/--csv/--plot/--record,
  play's --record, records simulate's and records html's --out.
* A file is written whole or not at all: on a full disk the error line names the output
  that failed, and the file that was there is kept.
"""

from __future__ import annotations

import errno
import io
import json
import os
from pathlib import Path

import pytest

from conftest import needs

from sergeant_major_env import files
from sergeant_major_env.cli import evaluate, play
from sergeant_major_env.cli import records as records_cli
from sergeant_major_env.files import check_new_file
from sergeant_major_env.records import simulate, write_jsonl

OLD = "the old content\n"

SMALL_EVALUATE = ["--agents", "random,random,greedy", "--games", "6", "--option", "num_deals=1", "--workers", "1",
                  "--no-progress"]


def test_check_new_file_refuses_an_existing_file_unless_overwrite(tmp_path):
    path = tmp_path / "out.json"
    check_new_file(path, overwrite=False, what="--json file")  # a new file: fine
    path.write_text(OLD)
    with pytest.raises(ValueError, match=r"^--json file '.*out.json' exists; add --overwrite to replace it$"):
        check_new_file(path, overwrite=False, what="--json file")
    check_new_file(path, overwrite=True, what="--json file")
    assert path.read_text() == OLD and [p.name for p in tmp_path.iterdir()] == ["out.json"]


def _record_file(tmp_path: Path) -> Path:
    path = tmp_path / "games.jsonl"
    write_jsonl(simulate(1, seed=0), path)
    return path


def _commands(tmp_path: Path, existing: Path) -> dict[str, tuple]:
    """command -> (its main, argv writing ``existing``)."""
    records_file = _record_file(tmp_path)
    return {
        "evaluate --json": (evaluate.main, [*SMALL_EVALUATE, "--json", str(existing)]),
        "evaluate --csv": (evaluate.main, [*SMALL_EVALUATE, "--csv", str(existing)]),
        "evaluate --record": (evaluate.main, [*SMALL_EVALUATE, "--record", str(existing)]),
        "play --record": (lambda argv: play.main(argv, input_fn=_first_legal, output=io.StringIO()),
                          ["--opponents", "random,random", "--seed", "3", "--option", "num_deals=1", "--record",
                           str(existing)]),
        "records simulate": (records_cli.main, ["simulate", "--games", "2", "--option", "num_deals=1", "--out",
                                                str(existing)]),
        "records html": (records_cli.main, ["html", str(records_file), "--out", str(existing)]),
    }


COMMANDS = ["evaluate --json", "evaluate --csv", "evaluate --record", "play --record", "records simulate",
            "records html"]


def _first_legal(prompt: str) -> str:
    raise AssertionError("the game must not start: the --record file is checked first")


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_refuses_an_existing_output_without_overwrite(tmp_path, capsys, name):
    """Issue 20, item 10: evaluate and play replaced files silently, records refused them."""
    existing = tmp_path / "existing.out"
    existing.write_text(OLD)
    main, argv = _commands(tmp_path, existing)[name]
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.endswith(f"'{existing}' exists; add --overwrite to replace it"), error
    assert existing.read_text() == OLD


@pytest.mark.parametrize("name", ["evaluate --json", "evaluate --record", "records simulate", "records html"])
def test_overwrite_replaces_an_existing_output(tmp_path, capsys, name):
    existing = tmp_path / "existing.out"
    existing.write_text(OLD)
    main, argv = _commands(tmp_path, existing)[name]
    assert main([*argv, "--overwrite"]) == 0
    assert existing.read_text() != OLD
    assert not list(tmp_path.glob(".*.tmp"))


def _enospc_for(fragment: str):
    """An ``os.fsync`` that fails with ENOSPC for the temporary file of the output whose name
    holds ``fragment`` (the disk fills up while that output is written), and works for the others."""
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        if fragment in os.readlink(f"/proc/self/fd/{fd}"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_fsync(fd)
    return fsync


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to name a file descriptor's file")
def test_a_full_disk_names_the_output_that_failed_and_keeps_its_old_file(tmp_path, monkeypatch, capsys):
    """Issue 20, item 5: evaluate said "cannot write an output file". Here the disk fills up
    while --csv is written: --json is written, the old --csv is kept, --record is not tried."""
    json_path, csv_path, record_path = tmp_path / "r.json", tmp_path / "r.csv", tmp_path / "games.jsonl"
    csv_path.write_text(OLD)
    monkeypatch.setattr(files.os, "fsync", _enospc_for(".r.csv."))
    status = evaluate.main([*SMALL_EVALUATE, "--json", str(json_path), "--csv", str(csv_path), "--record",
                            str(record_path), "--overwrite"])
    assert status == 1
    captured = capsys.readouterr()
    assert captured.err.strip().splitlines() == [
        f"sergeant-major evaluate: error: cannot write --csv file '{csv_path}': No space left on device "
        f"(the file there, if any, is kept)"]
    assert f"wrote {json_path}" in captured.out
    assert json.loads(json_path.read_text())["games"] == 6
    assert csv_path.read_text() == OLD
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.csv", "r.json"]  # no temporary file, no record


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to name a file descriptor's file")
@pytest.mark.parametrize("flag, name", [("--json", "r.json"), ("--plot", "r.png"), ("--record", "r.jsonl")])
def test_a_full_disk_on_each_evaluate_output_is_one_line_naming_it(tmp_path, monkeypatch, capsys, flag, name):
    if flag == "--plot":
        needs("matplotlib")
    path = tmp_path / name
    path.write_text(OLD)
    monkeypatch.setattr(files.os, "fsync", _enospc_for(f".{name}."))
    assert evaluate.main([*SMALL_EVALUATE, flag, str(path), "--overwrite"]) == 1
    assert capsys.readouterr().err.strip().splitlines() == [
        f"sergeant-major evaluate: error: cannot write {flag} file '{path}': No space left on device "
        f"(the file there, if any, is kept)"]
    assert path.read_text() == OLD and [p.name for p in tmp_path.iterdir()] == [name]
