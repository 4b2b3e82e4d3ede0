"""Writing output files safely: never half written, and checked before long work starts.

Every file this project writes (records, evaluation tables, plots, model files, run
summaries) goes through :func:`atomic_write`: the content is written to a temporary file
in the same folder and renamed over the target only once it is complete, so an
interrupted command leaves either the old file or the new one, never a truncated one.

Commands that work for minutes before they write call :func:`check_writable` first, so a
bad output path is a one-line error before the work, not a traceback after it.

One rule for existing outputs, in every command: an output file that exists is refused
with one line unless the command is given ``--overwrite`` (:func:`check_new_file`).
The temporary file is removed on every way out that Python sees: an error, a full disk,
Ctrl-C, and SIGTERM or SIGHUP under :func:`sergeant_major_env.interrupts.handled` (as every
``sergeant-major`` command runs); only SIGKILL or a power cut can leave a ``.NAME.*.tmp``.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import IO, Any, Iterator


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO]:
    """Open a temporary file beside ``path`` for writing; on a clean exit it replaces
    ``path`` (``os.replace``, atomic on POSIX), on an exception it is removed and ``path``
    is left as it was. ``mode`` is ``"w"`` (text) or ``"wb"``."""
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


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` atomically."""
    with atomic_write(path) as file:
        file.write(text)


def write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_write(path, "wb") as file:
        file.write(data)


def write_json(path: str | os.PathLike, value: Any, indent: int | None = 2, **kwargs: Any) -> None:
    """Write ``value`` as JSON (plus a final newline) to ``path`` atomically."""
    with atomic_write(path) as file:
        json.dump(value, file, indent=indent, **kwargs)
        file.write("\n")


def check_writable(path: str | os.PathLike, what: str = "output file") -> None:
    """Raise a one-line ``ValueError`` unless a file can be created (or replaced) at ``path``:
    its folder exists and is writable, and ``path`` is not a folder. Nothing is written."""
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
    """:func:`check_writable`, and an existing file is replaced only with ``overwrite``: the
    one rule of every command for its outputs (as train's run folders and ship's
    destination). A one-line ValueError otherwise; nothing is written."""
    check_writable(path, what)
    if not overwrite and Path(path).exists():
        raise ValueError(f"{what} {str(path)!r} exists; add --overwrite to replace it")
