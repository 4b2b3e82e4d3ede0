"""Ctrl-C (SIGINT), SIGTERM and SIGHUP during training: finish the current step, save, exit cleanly.

`StopSignals` replaces the two signals' default actions (a KeyboardInterrupt
traceback, or death without a word) by a request that the training loops read at safe
points: the PPO callback after each env step, imitation after each chunk. Work that can
be dropped without losing anything (an evaluation) runs inside `StopSignals.abandonable`,
where a signal ends it at once with `TrainingStopped`. train.py then saves a
checkpoint, the model files and a summary that says what was done, prints how to resume
and exits with 128 + the signal number (130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP), as shells do.
"""

from __future__ import annotations

import contextlib
import signal
import sys
from typing import Callable, Iterator

from ..interrupts import STOP_SIGNALS

HANDLED = STOP_SIGNALS
"""SIGINT, SIGTERM and SIGHUP (a closed terminal): what every command treats as a stop (interrupts)."""


class TrainingStopped(Exception):
    """Raised inside `StopSignals.abandonable` when a stop signal arrives."""


class StopSignals:
    """While installed (a context manager), SIGINT and SIGTERM set `signal` instead of
    stopping the process; a second signal only repeats that the run is being saved."""

    def __init__(self, log: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True)) -> None:
        self.signal: int | None = None
        self.log = log
        self._abandonable = 0
        self._previous: dict[int, object] = {}

    @property
    def requested(self) -> bool:
        return self.signal is not None

    @property
    def name(self) -> str | None:
        return None if self.signal is None else signal.Signals(self.signal).name

    @property
    def exit_status(self) -> int:
        return 128 + (self.signal or 0)

    def __enter__(self) -> "StopSignals":
        for number in HANDLED:
            self._previous[number] = signal.signal(number, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        for number, handler in self._previous.items():
            signal.signal(number, handler)
        self._previous.clear()

    def _handle(self, number: int, frame) -> None:
        first = self.signal is None
        self.signal = number if first else self.signal
        name = signal.Signals(number).name
        if first:
            self.log(f"{name} received: stopping after the current step, then saving the run")
        else:
            self.log(f"{name} received: already stopping, the run is being saved")
        if self._abandonable:
            raise TrainingStopped(name)

    @contextlib.contextmanager
    def abandonable(self) -> Iterator[None]:
        """Work inside may be cut short by a stop signal (TrainingStopped); if a stop was
        requested already, it does not start."""
        if self.requested:
            raise TrainingStopped(self.name)
        self._abandonable += 1
        try:
            yield
        finally:
            self._abandonable -= 1
