"""Signals that stop a command: Ctrl-C, `kill` and a closed terminal all take one path.

Python turns Ctrl-C (SIGINT) into a `KeyboardInterrupt`, which unwinds the stack:
`finally` blocks run, `sergeant_major_env.files.atomic_write` removes its temporary
file, `sergeant_major_env.processes.run_jobs` stops its workers, and the command prints
one line. By default SIGTERM (`kill PID`) and SIGHUP (the terminal closed) end the process
at once instead, with no cleanup and no word. While `handled` is active they raise
`Interrupted`, a KeyboardInterrupt that remembers its signal, so every command and its
workers clean up the same way for the three signals, and exit with the shells' status
128 + the signal's number (`exit_status`): 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP.

The `sergeant-major` command (`sergeant_major_env.cli`) installs it before importing a
subcommand's module, so a signal during the imports is one line too. Earlier still, while
Python loads the package itself (numpy, gymnasium, the observation tables: the first ~0.3 s),
`guard_command_start`, the first line of the package's `__init__` (this module needs
only the standard library), installs handlers that end the command with that same line and
status when the process is the command: `sergeant-major`, `python -m sergeant_major_env`
or a checkout's `train.py`, `evaluate.py`, `play.py`, told apart by the process's own
command line (`sys.orig_argv`), so that a program importing the package is left alone.
Only during Python's own start, before any code of ours runs (~0.05 s: the interpreter and
its site packages), does a signal keep Python's behaviour: Ctrl-C may print Python's own
traceback, SIGTERM and SIGHUP end the process silently (the shells' status is the same). SIGKILL cannot be
caught: after it, a command's temporary files may remain (named `.NAME.*.tmp`) and the
worker processes stop on their own (they are told to die with their parent).
`sergeant-major train` saves its run on a stop signal instead
(`sergeant_major_env.training.stopping`, which handles the same `STOP_SIGNALS`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from typing import Iterator, Sequence

STOP_SIGNALS: tuple[int, ...] = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
                                      if hasattr(signal, name))
"""The signals that stop a command as Ctrl-C does (SIGHUP does not exist on Windows)."""

_pending: int | None = None
"""The stop signal received under `handled` whose interruption no command has dealt
with yet (`exit_status` deals with it): see `check`."""

_deferring = 0
"""How many `deferred` blocks are open: inside one, a signal is only remembered."""


class Interrupted(KeyboardInterrupt):
    """A stop signal raised as Ctrl-C is; `signal` is its number."""

    def __init__(self, number: int) -> None:
        super().__init__(signal_name(number))
        self.signal = number


def signal_name(number: int) -> str:
    """`"SIGTERM"` for `signal.SIGTERM`; `"signal N"` for a number without a name."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def signal_of(error: BaseException) -> int:
    """The signal behind an interruption: `Interrupted.signal`, else SIGINT (a plain
    KeyboardInterrupt is Ctrl-C)."""
    return getattr(error, "signal", signal.SIGINT)


def exit_status(error: BaseException) -> int:
    """The exit status after `error` (a KeyboardInterrupt) as shells report a signal: 128 +
    its number. Calling it says that the interruption has been dealt with (see `check`)."""
    global _pending
    _pending = None
    return 128 + signal_of(error)


def check() -> None:
    """Raise `Interrupted` again if a stop signal came and its exception was lost.

    An exception from a signal handler can land where Python ignores exceptions (printing
    "Exception ignored in ..."): in a fork handler, a `__del__`, a weakref callback. The
    signal would then be lost and the command would run on. Long loops call this at safe
    points (`sergeant_major_env.processes.run_jobs` while it waits for its workers),
    and `sergeant_major_env.cli.guarded` after a command that returned 0 as if no
    signal had come."""
    if _pending is not None:
        raise Interrupted(_pending)


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Inside, a stop signal is remembered but not raised; it is raised on the way out
    (`check`). For short work that Python would not let an exception leave: forking
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
    """`"interrupted (SIGTERM)"`: the start of a command's one line about it."""
    return f"interrupted ({signal_name(signal_of(error))})"


def say(line: str) -> None:
    """Print `line` on stderr; nothing if it cannot be written (the terminal was closed: SIGHUP)."""
    with contextlib.suppress(OSError, ValueError):
        print(line, file=sys.stderr, flush=True)


@contextlib.contextmanager
def handled() -> Iterator[None]:
    """While active, SIGINT, SIGTERM and SIGHUP raise `Interrupted` (a KeyboardInterrupt,
    as Ctrl-C does by default) in this process and are remembered (`check`); the
    previous handlers come back on exit. A signal this process was started ignoring stays
    ignored (`nohup` keeps SIGHUP away). Only the main thread can install handlers: from
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
    and SIGHUP end it at once (their default action). A SIGTERM or SIGHUP that came between the
    fork and this call (the parent's handler remembered it: the fork happens inside `deferred`)
    ends the worker now, as it would have."""
    global _pending
    pending, _pending = _pending, None
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for number in STOP_SIGNALS:
        if number != signal.SIGINT:
            signal.signal(number, signal.SIG_DFL)
    if pending is not None and pending != signal.SIGINT:
        os._exit(128 + pending)


# ============================================================================ the command's first moments

COMMAND = "sergeant-major"
CONSOLE_SCRIPTS = ("sergeant-major", "sergeant-major.exe", "sergeant-major-script.py")
"""The names the installed console script has (pip's, on POSIX and on Windows)."""
CHECKOUT_SCRIPTS = ("train", "evaluate", "play")
"""A checkout's `NAME.py` scripts, each `sergeant-major NAME`."""
MODULES = ("sergeant_major_env", "sergeant_major_env.__main__")
"""What `python -m` runs as the command."""


def guard_command_start() -> None:
    """When this process is the `sergeant-major` command (`command_started`), make a stop
    signal from now until `handled` takes over print the command's one line and end it
    with 128 + the signal's number (`stop_at_once`). Called first by the package's
    `__init__`, before its heavy imports; a program that imports the package is left alone."""
    package = os.path.dirname(os.path.realpath(__file__))
    prefix = command_started(getattr(sys, "orig_argv", []), package)
    if prefix is not None:
        stop_at_once(prefix)


def command_started(orig_argv: Sequence[str], package: str) -> str | None:
    """`"sergeant-major evaluate"` when `orig_argv` (an interpreter's command line,
    `sys.orig_argv`) runs the command (the console script, `-m sergeant_major_env` or the
    checkout's scripts beside the `package` folder) with the subcommand `evaluate`; None
    for anything else (`-c`, another script or module, a script read from stdin)."""
    program = _program(orig_argv)
    if program is None:
        return None
    runs, arguments = program
    if runs.startswith("-m "):
        if runs[3:] not in MODULES:
            return None
    elif os.path.basename(runs) not in CONSOLE_SCRIPTS:
        scripts = {os.path.join(os.path.dirname(package), f"{name}.py"): name for name in CHECKOUT_SCRIPTS}
        name = scripts.get(os.path.realpath(runs))
        if name is None:
            return None
        arguments = [name]
    first = arguments[0] if arguments else ""
    return f"{COMMAND} {first}" if first.isidentifier() else COMMAND


def _program(orig_argv: Sequence[str]) -> tuple[str, list[str]] | None:
    """(`"-m MODULE"` or the script's path, the arguments after it) of an interpreter's command
    line, its own options skipped; None for `-c` and for a script read from stdin."""
    args, at = list(orig_argv[1:]), 0
    while at < len(args) and args[at].startswith("-") and args[at] != "-":
        option = args[at]
        at += 1
        if option == "--":
            break
        if option.startswith("--"):  # --check-hash-based-pycs MODE, the one long option with a value
            at += option == "--check-hash-based-pycs"
            continue
        for place, flag in enumerate(option[1:], 1):
            if flag in "mcWX":  # the options that take a value: the rest of this word or the next word
                value = option[place + 1:]
                if not value:
                    value, at = (args[at] if at < len(args) else ""), at + 1
                if flag == "m":
                    return f"-m {value}", args[at:]
                if flag == "c":
                    return None
                break
    if at >= len(args) or args[at] == "-":
        return None
    return args[at], args[at + 1:]


def stop_at_once(prefix: str) -> None:
    """Until replaced (`handled`), SIGINT, SIGTERM and SIGHUP print `PREFIX: interrupted
    (SIGNAL)` and end this process at once with 128 + the signal's number: no traceback, nothing
    to clean up (no file written, no worker started yet). A signal this process was started
    ignoring stays ignored; from a thread other than the main one this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        return

    def stop(number: int, frame) -> None:
        say(f"{prefix}: {describe(Interrupted(number))}")
        os._exit(128 + number)

    for number in STOP_SIGNALS:
        if signal.getsignal(number) is not signal.SIG_IGN:
            signal.signal(number, stop)
