"""A train.py run folder: created once, recorded completely, never mixed with another run.

    RUN/run.json                  what the run is: every option, rule options, observation
                                  layout, network, command lines (written at the start)
    RUN/checkpoints/model_T.zip   SB3 checkpoints (optimizer state included) at T timesteps
    RUN/model.zip                 the last model, RUN/policy.safetensors + policy.json its
                                  code-free policy (agents.policy_file), RUN/summary.json ...

A new run never writes into a folder that already holds something (unless asked to empty
it), default names never collide (a timestamp plus a counter, the folder created with
``exist_ok=False``), and every file goes to a temporary name first
(:mod:`sergeant_major_env.files`). ``--resume`` reads ``run.json`` to continue the run with
its own options; checkpoints are tried newest first, falling back past broken ones.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import shutil
import zipfile
from pathlib import Path
from typing import Any, Callable, Iterator

from sergeant_major_env import files

RUN_FILE = "run.json"
RUN_FORMAT = "sergeant-major-env train.py run"
RUN_FORMAT_VERSION = 1
CHECKPOINTS = "checkpoints"
RUN_MARKERS = (RUN_FILE, "summary.json", CHECKPOINTS, "model.zip", "policy.safetensors")
"""What makes a folder a train.py run folder (one of these is enough)."""


# ============================================================================ the folder

def is_run_folder(folder: Path) -> bool:
    return any((folder / marker).exists() for marker in RUN_MARKERS)


def check_new_run_folder(folder: Path, overwrite: bool) -> None:
    """A one-line ValueError unless a new run may write into ``folder``: it does not exist
    or is empty, or ``overwrite`` is set and it is a run folder; and it can be created."""
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"output folder {str(folder)!r} is a file")
    if folder.is_dir() and any(folder.iterdir()):
        if not overwrite:
            raise ValueError(f"output folder {str(folder)!r} already holds files: continue that run with "
                             f"--resume {folder}, choose another --name/--out, or add --overwrite to empty it first")
        if not is_run_folder(folder):
            raise ValueError(f"--overwrite empties only train.py run folders; {str(folder)!r} holds other files")
    check_can_create(folder)


def check_can_create(folder: Path) -> None:
    """A one-line ValueError unless ``folder`` exists writable or can be created (the
    nearest existing folder above it is writable; checked by creating a file there)."""
    existing = folder
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise ValueError(f"output folder {str(folder)!r} cannot be created: {str(existing)!r} is a file")
    try:
        files.check_writable(existing / ".train-write-test", "output folder")
    except ValueError:
        raise ValueError(f"output folder {str(folder)!r} cannot be created: {str(existing)!r} is not writable") from None


def default_folder_stem(now: datetime.datetime | None = None) -> str:
    return (now or datetime.datetime.now()).strftime("%Y%m%d-%H%M%S")


def create_run_folder(folder: Path | None, base: Path, overwrite: bool = False) -> Path:
    """Create the run's folder: ``folder`` (emptied first with ``overwrite``), or a new
    ``base/<timestamp>`` (``-2``, ``-3``, ... when taken), made with ``exist_ok=False`` so
    that two runs started in the same second never share one."""
    if folder is not None:
        if overwrite and folder.is_dir():
            empty_folder(folder)
        folder.mkdir(parents=True, exist_ok=True)
        return folder
    base.mkdir(parents=True, exist_ok=True)
    stem = default_folder_stem()
    for counter in range(1, 10_000):
        candidate = base / (stem if counter == 1 else f"{stem}-{counter}")
        try:
            candidate.mkdir(exist_ok=False)
            return candidate
        except FileExistsError:
            continue
    raise ValueError(f"no free run folder name {stem}-N in {str(base)!r}")


def empty_folder(folder: Path) -> None:
    for entry in folder.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


def open_run_folder(folder: Path | None, in_place: bool, overwrite: bool) -> tuple[Path, bool]:
    """(the run folder, whether this call created it), with its checkpoints folder: ``folder``
    as it is when ``in_place`` (a run resumed in its own folder), else :func:`create_run_folder`
    (``runs/<timestamp>`` when ``folder`` is None)."""
    if in_place:
        created = False
    else:
        created = folder is None or not folder.exists()
        folder = create_run_folder(folder, Path("runs"), overwrite=overwrite)
    (folder / CHECKPOINTS).mkdir(exist_ok=True)
    return folder, created


@contextlib.contextmanager
def removed_on_failure(folder: Path, created: bool) -> Iterator[None]:
    """Setting up a run in ``folder``: if it fails, a folder this run ``created`` goes again."""
    try:
        yield
    except BaseException:
        if created:
            shutil.rmtree(folder, ignore_errors=True)
        raise


# ============================================================================ run.json

def write_run_record(folder: Path, record: dict[str, Any]) -> None:
    files.write_json(folder / RUN_FILE, {"format": RUN_FORMAT, "format_version": RUN_FORMAT_VERSION, **record})


def read_run_record(folder: Path) -> dict[str, Any] | None:
    """The run's run.json, or None when it has none (a run from before run.json)."""
    path = folder / RUN_FILE
    if not path.is_file():
        return None
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{str(path)!r} is not readable JSON: {error}") from None
    if not isinstance(record, dict) or record.get("format") != RUN_FORMAT or "options" not in record:
        raise ValueError(f"{str(path)!r} is not a train.py run record")
    if record.get("format_version") != RUN_FORMAT_VERSION:
        raise ValueError(f"{str(path)!r} has run format version {record.get('format_version')!r}; this train.py "
                         f"reads version {RUN_FORMAT_VERSION}")
    return record


def read_json_or_none(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None


def merge_resumed_options(given: dict[str, Any], saved: dict[str, Any], may_change: set[str],
                          flag: Callable[[str], str]) -> dict[str, Any]:
    """The options of a resumed run: ``saved`` (the run's), with the ``given`` ones (those on
    the command line) that may change. A given option in neither ``may_change`` nor equal
    to the run's value is a one-line ValueError naming both values."""
    merged = dict(saved)
    for dest, value in given.items():
        if dest in may_change or dest not in saved:
            merged[dest] = value
        elif value != saved[dest]:
            raise ValueError(f"{flag(dest)} {_show(value)} conflicts with the resumed run's {_show(saved[dest])}: "
                             f"leave it out to continue the run as it was, or start a new run")
    return merged


def _show(value: Any) -> str:
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return str(value)


# ============================================================================ what an earlier run left

def earlier_summary(run: Path | None) -> dict | None:
    """The summary.json of the run folder ``run`` (None without a run, or when it has none)."""
    summary = read_json_or_none(run / "summary.json") if run is not None else None
    return summary if isinstance(summary, dict) else None


def earlier_status(run: Path | None) -> str | None:
    """"complete" or "interrupted" (what the run's summary says), None without a summary."""
    summary = earlier_summary(run)
    return None if summary is None else summary.get("status", "complete")


def unfinished_imitation(run: Path | None) -> dict | None:
    """The imitation record of the run if its imitation was interrupted, else None."""
    record = (earlier_summary(run) or {}).get("imitation")
    return record if isinstance(record, dict) and record.get("complete") is False else None


def earlier_eval_history(run: Path | None, done: int) -> list[dict]:
    """The run's evaluations (eval_history.json) up to ``done`` timesteps (``[]`` without a run)."""
    history = read_json_or_none(run / "eval_history.json") if run is not None else None
    return [h for h in history if h["timesteps"] <= done] if isinstance(history, list) else []


# ============================================================================ checkpoints

def checkpoint_name(timesteps: int) -> str:
    return f"model_{timesteps:012d}.zip"


def find_checkpoints(folder: Path) -> list[Path]:
    """The run's checkpoints, newest (most timesteps) first."""
    return sorted((folder / CHECKPOINTS).glob("model_*.zip"), reverse=True)


def resume_candidates(path: Path) -> tuple[Path, list[Path]]:
    """(run folder, checkpoints to try in order) of ``--resume PATH``: a run folder (its
    checkpoints, newest first) or one checkpoint .zip (only that one). One-line
    ValueErrors for anything else."""
    if path.is_dir():
        found = find_checkpoints(path)
        if not found:
            raise ValueError(f"--resume {path}: no checkpoint in {str(path / CHECKPOINTS)!r} (not a train.py run "
                             f"folder, or it was stopped before its first checkpoint)")
        return path, found
    if not path.exists():
        raise ValueError(f"--resume {path}: no such run folder or checkpoint")
    if path.suffix != ".zip":
        raise ValueError(f"--resume {path}: not a run folder or an SB3 checkpoint .zip")
    if not zipfile.is_zipfile(path):
        raise ValueError(f"--resume {path}: broken checkpoint (not a readable zip file: truncated or damaged)")
    run = path.parent.parent if path.parent.name == CHECKPOINTS else path.parent
    return run, [path]


def checkpoint_spaces(path: Path) -> tuple[tuple[int, ...], int | None]:
    """(observation shape, number of actions) a checkpoint was trained with, read from the
    plain-JSON fields SB3 writes beside the pickled ones: nothing is unpickled. A
    ValueError says why when the file is not a readable SB3 zip."""
    try:
        with zipfile.ZipFile(path) as archive:
            data = json.loads(archive.read("data"))
        shape = tuple(int(n) for n in data["observation_space"]["_shape"])
        actions = data["action_space"].get("n")
        return shape, None if actions is None else int(actions)
    except (OSError, zipfile.BadZipFile, KeyError, TypeError, ValueError) as error:
        raise ValueError(f"not a readable SB3 checkpoint ({type(error).__name__}: {error})") from None


def load_first_good(candidates: list[Path], load: Callable[[Path], Any], log: Callable[[str], None],
                    fatal: tuple[type[Exception], ...] = ()) -> tuple[Path, Any]:
    """``(path, load(path))`` of the first candidate that loads; each broken one is reported
    in one line (and the next one tried). A ValueError when none loads; an exception of a
    ``fatal`` type is not a broken file and is raised at once."""
    problems = []
    for index, path in enumerate(candidates):
        try:
            return path, load(path)
        except fatal:
            raise
        except Exception as error:  # a broken file: truncated, bad data, foreign
            reason = f"{type(error).__name__}: {error}".splitlines()[0][:200]
            problems.append(f"{path.name} ({reason})")
            if index + 1 < len(candidates):
                log(f"checkpoint {path} is broken ({reason}); falling back to {candidates[index + 1].name}")
    raise ValueError(f"no checkpoint could be loaded: {'; '.join(problems)}")


def save_sb3_model(model, path: Path) -> Path:
    """``model.save`` to a temporary file beside ``path``, renamed once complete."""
    with files.atomic_write(path, "wb") as file:
        model.save(file)
    return path
