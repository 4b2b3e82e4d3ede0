"""Signals that stop a command: Ctrl-C, ``kill`` and a closed terminal all take one path.

Python turns Ctrl-C (SIGINT) into a :class:`KeyboardInterrupt`, which unwinds the stack:
``finally`` blocks run, :func:`sergeant_major_env.files.atomic_write` removes its temporary
file, :func:`sergeant_major_env.processes.run_jobs` stops its workers, and the command prints
one line. By default SIGTERM (``kill PID``) and SIGHUP (the terminal closed) end the process
at once instead, with no cleanup and no word. While :func:`handled` is active they raise
:class:`Interrupted`, a KeyboardInterrupt that remembers its signal, so every command and its
workers clean up the same way for the three signals, and exit with the shells' status
128 + the signal's number (:func:`exit_status`): 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP.

The ``sergeant-major`` command (:mod:`sergeant_major_env.cli`) installs it before importing a
subcommand's module, so a signal during the imports is one line too. SIGKILL cannot be
caught: after it, a command's temporary files may remain (named ``.NAME.*.tmp``) and the
worker processes stop on their own (they are told to die with their parent).
``sergeant-major train`` saves its run on a stop signal instead
(:mod:`sergeant_major_env.training.stopping`, which handles the same :data:`STOP_SIGNALS`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from typing import Iterator

STOP_SIGNALS: tuple[int, ...] = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
                                      if hasattr(signal, name))
"""The signals that stop a command as Ctrl-C does (SIGHUP does not exist on Windows)."""

_pending: int | None = None
"""The stop signal received under :func:`handled` whose interruption no command has dealt
with yet (:func:`exit_status` deals with it): see :func:`check`."""

_deferring = 0
"""How many :func:`deferred` blocks are open: inside one, a signal is only remembered."""


class Interrupted(KeyboardInterrupt):
    """A stop signal raised as Ctrl-C is; :attr:`signal` is its number."""

    def __init__(self, number: int) -> None:
        super().__init__(signal_name(number))
        self.signal = number


def signal_name(number: int) -> str:
    """``"SIGTERM"`` for ``signal.SIGTERM``; ``"signal N"`` for a number without a name."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def signal_of(error: BaseException) -> int:
    """The signal behind an interruption: :attr:`Interrupted.signal`, else SIGINT (a plain
    KeyboardInterrupt is Ctrl-C)."""
    return getattr(error, "signal", signal.SIGINT)


def exit_status(error: BaseException) -> int:
    """The exit status after ``error`` (a KeyboardInterrupt) as shells report a signal: 128 +
    its number. Calling it says that the interruption has been dealt with (see :func:`check`)."""
    global _pending
    _pending = None
    return 128 + signal_of(error)


def check() -> None:
    """Raise :class:`Interrupted` again if a stop signal came and its exception was lost.

    An exception from a signal handler can land where Python ignores exceptions (printing
    "Exception ignored in ..."): in a fork handler, a ``__del__``, a weakref callback. The
    signal would then be lost and the command would run on. Long loops call this at safe
    points (:func:`sergeant_major_env.processes.run_jobs` while it waits for its workers),
    and :func:`sergeant_major_env.cli.guarded` after a command that returned 0 as if no
    signal had come."""
    if _pending is not None:
        raise Interrupted(_pending)


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Inside, a stop signal is remembered but not raised; it is raised on the way out
    (:func:`check`). For short work that Python would not let an exception leave: forking
    runs the fork handlers (logging's among them), where an exception is ignored."""
    global _deferring
    _deferring += 1
    try:
        yield
    finally:
        _deferring -= 1
    if not _deferring:
        check()


def describe(error: BaseException) -> str:
    """``"interrupted (SIGTERM)"``: the start of a command's one line about it."""
    return f"interrupted ({signal_name(signal_of(error))})"


def say(line: str) -> None:
    """Print ``line`` on stderr; nothing if it cannot be written (the terminal was closed: SIGHUP)."""
    with contextlib.suppress(OSError, ValueError):
        print(line, file=sys.stderr, flush=True)


@contextlib.contextmanager
def handled() -> Iterator[None]:
    """While active, SIGINT, SIGTERM and SIGHUP raise :class:`Interrupted` (a KeyboardInterrupt,
    as Ctrl-C does by default) in this process and are remembered (:func:`check`); the
    previous handlers come back on exit. A signal this process was started ignoring stays
    ignored (``nohup`` keeps SIGHUP away). Only the main thread can install handlers: from
    another thread this does nothing.

    A process forked while it is active (a worker) inherits the handlers; there a signal
    takes its default action (the worker ends), as if they had never been installed."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    global _pending
    owner = os.getpid()

    def interrupt(number: int, frame) -> None:
        global _pending
        if os.getpid() != owner:  # in a forked child: the default action, as before
            signal.signal(number, signal.SIG_DFL if number != signal.SIGINT else signal.default_int_handler)
            os.kill(os.getpid(), number)
            return
        if _pending is None:
            _pending = number
        if not _deferring:
            raise Interrupted(number)

    previous = {number: signal.getsignal(number) for number in STOP_SIGNALS}
    outer, _pending = _pending, None
    try:
        for number in STOP_SIGNALS:
            if previous[number] is not signal.SIG_IGN:
                signal.signal(number, interrupt)
        yield
    finally:
        for number, handler in previous.items():
            if handler is not None:  # None: set outside Python, cannot be restored from here
                signal.signal(number, handler)
        _pending = outer


def reset_in_worker() -> None:
    """In a worker process: ignore Ctrl-C (the terminal sends it to every process of the
    group; the parent stops its workers itself, without worker tracebacks), and let SIGTERM
    and SIGHUP end it at once (their default action)."""
    global _pending
    _pending = None
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for number in STOP_SIGNALS:
        if number != signal.SIGINT:
            signal.signal(number, signal.SIG_DFL)
