"""Writing output files safely: never half written, and checked before long work starts.

Every file this project writes (records, evaluation tables, plots, model files, run
summaries) goes through `atomic_write`: the content is written to a temporary file
in the same folder and renamed over the target only once it is complete, so an
interrupted command leaves either the old file or the new one, never a truncated one.

Commands that work for minutes before they write call `check_writable` first, so a
bad output path is a one-line error before the work, not a traceback after it.

One rule for existing outputs, in every command: an output file that exists is refused
with one line unless the command is given `--overwrite` (`check_new_file`).
The temporary file is removed on every way out that Python sees: an error, a full disk,
Ctrl-C, and SIGTERM or SIGHUP under `sergeant_major_env.interrupts.handled` (as every
`sergeant-major` command runs); only SIGKILL or a power cut can leave a `.NAME.XXXXXXXX.tmp`.
A command that resumes its work in a folder removes such leftovers of its own outputs
(`leftover_temporaries`: exactly the names `atomic_write` makes, never another file).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import tempfile
from pathlib import Path
from typing import IO, Any, Iterator


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO]:
    """Open a temporary file beside `path` for writing; on a clean exit it replaces
    `path` (`os.replace`, atomic on POSIX), on an exception it is removed and `path`
    is left as it was. `mode` is `"w"` (text) or `"wb"`."""
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_write mode must be 'w' or 'wb', got {mode!r}")
    target = Path(path)
    temporary = None
    try:
        handle, temporary = tempfile.mkstemp(dir=target.parent if str(target.parent) else ".",
                                             prefix=f".{target.name}.", suffix=".tmp")
        with os.fdopen(handle, mode, encoding=None if "b" in mode else encoding) as file:
            yield file
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, 0o666 & ~_umask())
        os.replace(temporary, target)
    except BaseException:  # an error, a full disk, a stop signal: the target stays as it was
        if temporary is not None:
            with contextlib.suppress(FileNotFoundError):
                os.remove(temporary)
        raise


TEMPORARY_MIDDLE = r"\.[a-z0-9_]{8}\.tmp"
"""What `atomic_write` puts between `.NAME` and the end of a temporary file's name
(`tempfile.mkstemp`'s eight random characters and the `.tmp` suffix)."""


def leftover_temporaries(folder: str | os.PathLike, target: str) -> list[Path]:
    """The temporary files `atomic_write` left in `folder` (a killed run's) for the
    outputs whose names match the regular expression `target` (`shard_\\d{5}\\.npz`): only
    `.NAME.XXXXXXXX.tmp` files of such a NAME, so a user's `notes.tmp.txt` is never one."""
    pattern = re.compile(rf"\.(?:{target}){TEMPORARY_MIDDLE}")
    return sorted(path for path in Path(folder).iterdir() if pattern.fullmatch(path.name) and path.is_file())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text(path: str | os.PathLike, text: str) -> None:
    """Write `text` to `path` atomically."""
    with atomic_write(path) as file:
        file.write(text)


def write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write `data` to `path` atomically."""
    with atomic_write(path, "wb") as file:
        file.write(data)


def write_json(path: str | os.PathLike, value: Any, indent: int | None = 2, **kwargs: Any) -> None:
    """Write `value` as JSON (plus a final newline) to `path` atomically."""
    with atomic_write(path) as file:
        json.dump(value, file, indent=indent, **kwargs)
        file.write("\n")


def check_writable(path: str | os.PathLike, what: str = "output file") -> None:
    """Raise a one-line `ValueError` unless a file can be created (or replaced) at `path`:
    its folder exists and is writable, and `path` is not a folder. Nothing is written."""
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    if target.is_dir():
        raise ValueError(f"{what} {str(target)!r} is a folder; give a file name")
    if not folder.is_dir():
        raise ValueError(f"{what} {str(target)!r}: folder {str(folder)!r} does not exist")
    try:  # os.access is fooled by read-only mounts such as /proc: really create a file
        handle, probe = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=".probe")
    except OSError as error:
        raise ValueError(f"{what} {str(target)!r} cannot be written: {error.strerror or error}") from None
    os.close(handle)
    os.remove(probe)
    if target.exists() and not os.access(target, os.W_OK):
        raise ValueError(f"{what} {str(target)!r} exists and is not writable")


def check_new_file(path: str | os.PathLike, overwrite: bool, what: str = "--out file") -> None:
    """`check_writable`, and an existing file is replaced only with `overwrite`: the
    one rule of every command for its outputs (as train's run folders and ship's
    destination). A one-line ValueError otherwise; nothing is written."""
    check_writable(path, what)
    if not overwrite and Path(path).exists():
        raise ValueError(f"{what} {str(path)!r} exists; add --overwrite to replace it")


# ============================================================================ reading

def check_regular_file(path: str | os.PathLike, what: str = "file") -> None:
    """A one-line `ValueError` naming `what` and the file unless `path` (a link followed) is
    a regular file, asked before it is opened: a folder, a device (`/dev/zero` never ends) or a
    pipe (opening one waits for a writer). A path that cannot be looked at is the OSError."""
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise ValueError(f"{what} {short_path(path)} is not a regular file")


def read_json(path: str | os.PathLike, max_bytes: int, max_depth: int, what: str = "JSON file") -> Any:
    """The JSON value of the file at `path`, read with bounds: a file larger than `max_bytes`
    or nested deeper than `max_depth` (objects and lists within each other) is refused before
    it is parsed, as is unreadable or invalid JSON, each with one `ValueError` line naming
    `what` and the file. Nothing in the file is run, and no traceback (no RecursionError,
    no MemoryError) reaches the caller."""
    name = short_path(path)
    try:
        check_regular_file(path, what)
        with open(path, "rb") as file:
            data = file.read(max_bytes + 1)
    except OSError as error:
        raise ValueError(f"{what} {name} cannot be read: {error.strerror or error}") from None
    if len(data) > max_bytes:
        raise ValueError(f"{what} {name} is larger than {max_bytes:,} bytes: not such a file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"{what} {name} is not UTF-8 text (byte {error.start})") from None
    depth = json_depth(text)
    if depth > max_depth:
        raise ValueError(f"{what} {name} is nested {depth} levels deep; such a file has at most {max_depth}")
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{what} {name} is not valid JSON: {error.msg} (line {error.lineno}, column "
                         f"{error.colno})") from None
    except (ValueError, RecursionError) as error:  # e.g. an integer of more than 4300 digits
        raise ValueError(f"{what} {name} is not valid JSON: {str(error)[:80]}") from None


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKETS = re.compile(r"[\[\]{}]")


def json_depth(text: str) -> int:
    """The deepest nesting of objects and lists in JSON `text` (0 for a plain value), counted
    from its brackets outside strings, without parsing it (so without recursion)."""
    depth = deepest = 0
    for bracket in _BRACKETS.findall(_JSON_STRING.sub("", text)):
        depth += 1 if bracket in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


def short_path(path: str | os.PathLike, limit: int = 80) -> str:
    """A path as a message quotes it: at most `limit` characters, a long one `'...'` and its end."""
    text = str(path)
    return repr(text if len(text) <= limit - 2 else "..." + text[len(text) - (limit - 5):])
