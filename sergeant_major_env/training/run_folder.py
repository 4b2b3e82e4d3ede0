"""A train.py run folder: created once, recorded completely, never mixed with another run.

```text
RUN/run.json                  what the run is: every option, rule options, observation
                              layout, network, command lines (written at the start)
RUN/checkpoints/model_T.zip   SB3 checkpoints (optimizer state included) at T timesteps
RUN/model.zip                 the last model, RUN/policy.safetensors + policy.json its
                              code-free policy (agents.policy_file), RUN/summary.json ...
```

A new run never writes into a folder that already holds something (unless asked to empty
it), default names never collide (a timestamp plus a counter, the folder created with
`exist_ok=False`), and every file goes to a temporary name first
(`sergeant_major_env.files`). `--resume` reads `run.json` to continue the run with
its own options; checkpoints are tried newest first, falling back past broken ones.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import shutil
import zipfile
from pathlib import Path
from typing import Any, Callable, Iterator

from sergeant_major_env import files, limits

RUN_FILE = "run.json"
RUN_FORMAT = "sergeant-major-env train.py run"
RUN_FORMAT_VERSION = 1
CHECKPOINTS = "checkpoints"
EVALUATED = "evaluated"
"""The folder of the policies the evaluations played (`--save-evaluated`)."""
RUN_MARKERS = (RUN_FILE, "summary.json", CHECKPOINTS, "model.zip", "policy.safetensors")
"""What makes a folder a train.py run folder (one of these is enough)."""


# ============================================================================ the folder

def is_run_folder(folder: Path) -> bool:
    return any((folder / marker).exists() for marker in RUN_MARKERS)


def check_new_run_folder(folder: Path, overwrite: bool) -> None:
    """A one-line ValueError unless a new run may write into `folder`: it does not exist
    or is empty, or `overwrite` is set and it is a run folder; and it can be created."""
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"output folder {str(folder)!r} is a file")
    if folder.is_dir() and any(folder.iterdir()):
        if not overwrite:
            raise ValueError(f"output folder {str(folder)!r} already holds files: continue that run with "
                             f"--resume {folder}, choose another --name/--out, or add --overwrite to empty it first")
        if not is_run_folder(folder):
            raise ValueError(f"--overwrite empties only sergeant-major train run folders; {str(folder)!r} holds "
                             f"other files")
    check_can_create(folder)


def check_can_create(folder: Path) -> None:
    """A one-line ValueError unless `folder` exists writable or can be created (the
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
    """Create the run's folder: `folder` (emptied first with `overwrite`), or a new
    `base/<timestamp>` (`-2`, `-3`, ... when taken), made with `exist_ok=False` so
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
    """(the run folder, whether this call created it), with its checkpoints folder: `folder`
    as it is when `in_place` (a run resumed in its own folder), else `create_run_folder`
    (`runs/<timestamp>` when `folder` is None)."""
    if in_place:
        created = False
    else:
        created = folder is None or not folder.exists()
        folder = create_run_folder(folder, Path("runs"), overwrite=overwrite)
    (folder / CHECKPOINTS).mkdir(exist_ok=True)
    return folder, created


@contextlib.contextmanager
def removed_on_failure(folder: Path, created: bool) -> Iterator[None]:
    """Setting up a run in `folder`: if it fails, a folder this run `created` goes again."""
    try:
        yield
    except BaseException:
        if created:
            shutil.rmtree(folder, ignore_errors=True)
        raise


# ============================================================================ run.json

def write_run_record(folder: Path, record: dict[str, Any]) -> None:
    """`folder/run.json` (atomically); an OSError (a full disk) names it."""
    try:
        files.write_json(folder / RUN_FILE, {"format": RUN_FORMAT, "format_version": RUN_FORMAT_VERSION, **record})
    except OSError as error:
        if error.filename is None:
            raise OSError(error.errno, error.strerror or str(error), str(folder / RUN_FILE)) from error
        raise


def read_run_record(folder: Path) -> dict[str, Any] | None:
    """The run's run.json, or None when it has none (a run from before run.json). A one-line
    ValueError when it is not a readable run record: over `MAX_RECORD_BYTES`, nested
    deeper than `MAX_DEPTH`, not JSON, another format, or its command lines not text."""
    path = folder / RUN_FILE
    if not path.is_file():
        return None
    record = read_bounded_json(path, MAX_RECORD_BYTES)
    if not isinstance(record, dict) or record.get("format") != RUN_FORMAT or "options" not in record:
        raise ValueError(f"{str(path)!r} is not a sergeant-major train run record")
    if record.get("format_version") != RUN_FORMAT_VERSION:
        shown = repr(record.get("format_version"))[:40]
        raise ValueError(f"{str(path)!r} has run format version {shown}; this sergeant-major train reads version "
                         f"{RUN_FORMAT_VERSION}")
    commands = record.get("commands", [])
    if not isinstance(commands, list) or not all(isinstance(command, str) for command in commands):
        raise ValueError(f"{str(path)!r}: 'commands' must be a list of command lines (text)")
    return record


MAX_RECORD_BYTES = limits.RUN_RECORD_BYTES
"""run.json's size, at most (a run's record is a few kB)."""
MAX_CHECKPOINT_DATA_BYTES = 16_000_000
"""The size of a checkpoint's plain-JSON "data" member, at most (SB3 writes about 113 kB for
this game's spaces): a larger one is refused before it is decompressed."""
MAX_OUTPUT_BYTES = 64_000_000
"""summary.json's and eval_history.json's size, at most, when a resumed run reads them."""
MAX_DEPTH = 32
"""How deeply the JSON a resumed run reads may nest (a run's records nest 4 deep)."""


def read_bounded_json(path: Path, max_bytes: int, max_depth: int = MAX_DEPTH) -> Any:
    """The JSON value in `path`, read only if it is at most `max_bytes` long and nests at
    most `max_depth` deep (`sergeant_major_env.files.read_json`: checked before parsing,
    no RecursionError); else a one-line ValueError naming the file and the limit."""
    return files.read_json(path, max_bytes, max_depth, what="run file")


def read_json_or_none(path: Path) -> Any:
    """The JSON in `path` (bounded as `read_bounded_json`), or None if there is none
    or it is not readable."""
    if not path.is_file():
        return None
    try:
        return read_bounded_json(path, MAX_OUTPUT_BYTES)
    except ValueError:
        return None


# ============================================================================ what an earlier run left

def earlier_summary(run: Path | None) -> dict | None:
    """The summary.json of the run folder `run` (None without a run, or when it has none)."""
    summary = read_json_or_none(run / "summary.json") if run is not None else None
    return summary if isinstance(summary, dict) else None


def earlier_status(run: Path | None) -> str | None:
    """"complete" or "interrupted" (what the run's summary says), None without a summary."""
    summary = earlier_summary(run)
    return None if summary is None else summary.get("status", "complete")


def unfinished_imitation(run: Path | None) -> dict | None:
    """The imitation record of the run if its imitation was interrupted, else None."""
    record = (earlier_summary(run) or {}).get("imitation")
    if not isinstance(record, dict) or record.get("complete") is not False:
        return None
    steps, seconds = record.get("steps", 0), record.get("seconds", 0.0)
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0 or isinstance(seconds, bool) \
            or not isinstance(seconds, (int, float)) or not 0 <= seconds < float("inf"):
        return None  # not what train.py wrote: the imitation is not continued
    return record


def earlier_eval_history(run: Path | None, done: int) -> list[dict]:
    """The run's evaluations (eval_history.json) up to `done` timesteps (`[]` without a run)."""
    history = read_json_or_none(run / "eval_history.json") if run is not None else None
    if not isinstance(history, list):
        return []
    return [row for row in history if history_row_ok(row) and row["timesteps"] <= done]


def history_row_ok(row: Any) -> bool:
    """An evaluation as train.py writes it: its timesteps, and for each table a mean with its
    interval (two numbers, or none)."""
    if not isinstance(row, dict) or isinstance(row.get("timesteps"), bool) or not isinstance(row.get("timesteps"), int):
        return False
    for key, table in row.items():
        if key in ("timesteps", "final"):
            continue
        if not isinstance(table, dict) or not _is_number(table.get("mean_points")):
            return False
        ci = table.get("ci95")
        if ci is not None and not (isinstance(ci, list) and len(ci) == 2 and all(map(_is_number, ci))):
            return False
    return True


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# ============================================================================ checkpoints

def evaluated_policy(folder: Path, timesteps: int) -> Path:
    """RUN/evaluated/policy_T.safetensors: the policy the evaluation at `timesteps` played
    (`--save-evaluated`)."""
    return folder / EVALUATED / f"policy_{timesteps:012d}.safetensors"


def checkpoint_name(timesteps: int) -> str:
    return f"model_{timesteps:012d}.zip"


def find_checkpoints(folder: Path) -> list[Path]:
    """The run's checkpoints, newest (most timesteps) first."""
    return sorted((folder / CHECKPOINTS).glob("model_*.zip"), reverse=True)


def resume_candidates(path: Path) -> tuple[Path, list[Path]]:
    """(run folder, checkpoints to try in order) of `--resume PATH`: a run folder (its
    checkpoints, newest first) or one checkpoint .zip (only that one). One-line
    ValueErrors for anything else."""
    if path.is_dir():
        found = find_checkpoints(path)
        if not found:
            raise ValueError(f"--resume {path}: no checkpoint in {str(path / CHECKPOINTS)!r} (not a sergeant-major "
                             f"train run folder, or it was stopped before its first checkpoint)")
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
            info = archive.getinfo("data")
            if info.file_size > MAX_CHECKPOINT_DATA_BYTES:
                raise ValueError(f"its data is {info.file_size:,} bytes; an SB3 checkpoint's is about 113 kB")
            data = json.loads(archive.read(info))
        shape = tuple(int(n) for n in data["observation_space"]["_shape"])
        actions = data["action_space"].get("n")
        return shape, None if actions is None else int(actions)
    except (OSError, zipfile.BadZipFile, KeyError, TypeError, ValueError, RecursionError) as error:
        raise ValueError(f"not a readable SB3 checkpoint ({type(error).__name__}: {error})") from None


def load_first_good(candidates: list[Path], load: Callable[[Path], Any], log: Callable[[str], None],
                    fatal: tuple[type[Exception], ...] = ()) -> tuple[Path, Any]:
    """`(path, load(path))` of the first candidate that loads; each broken one is reported
    in one line (and the next one tried). A ValueError when none loads; an exception of a
    `fatal` type is not a broken file and is raised at once."""
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
    """`model.save` to a temporary file beside `path`, renamed once complete. An OSError
    (a full disk) names `path`."""
    try:
        with files.atomic_write(path, "wb") as file:
            model.save(file)
    except OSError as error:
        if error.filename is None:
            raise OSError(error.errno, error.strerror or str(error), str(path)) from error
        raise
    return path
