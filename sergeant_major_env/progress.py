"""Progress bars of long work: one helper for every command (evaluate, distill labels, records,
train and its imitation).

tqdm is an optional dependency: without it, or with `enabled` false, there is no bar (None).
A bar shows only when its stream (stderr) is a terminal. Elsewhere (a log file, a pipe, a
test) there is none, or, with `lines=True`, a `LineProgress`: one plain line at each tenth of
the work, never a carriage return, so a log of a long run says how far it got.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

LINE_STEPS = 10
"""A `LineProgress` writes a line each time the work passes another 1/LINE_STEPS of its total."""
LINE_SECONDS = 60.0
"""...and, when the total is unknown, at most once in this many seconds."""
MAX_LINE = 200
"""The longest line a `LineProgress` writes (its status is cut to fit)."""


def progress_bar(total: int | None, unit: str, description: str | None = None, enabled: bool = True,
                 leave: bool = True, *, lines: bool = False, initial: int = 0, unit_scale: bool = False,
                 file: TextIO | None = None) -> Any:
    """A tqdm bar on `file` (default stderr) counting `unit`s from `initial` up to `total` (None:
    unknown), or None. `leave` keeps the finished bar on screen. Where `file` is not a
    terminal: None, or with `lines` a `LineProgress` (the same methods: update, set_postfix_str,
    write, close)."""
    if not enabled:
        return None
    file = sys.stderr if file is None else file
    if not is_terminal(file):
        return LineProgress(total, unit, description, initial=initial, file=file) if lines else None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, initial=initial, unit=unit, unit_scale=unit_scale, desc=description, file=file,
                leave=leave, dynamic_ncols=True)


def is_terminal(stream: Any) -> bool:
    """Whether `stream` is a terminal (False for a file, a pipe, a closed or odd stream)."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


class LineProgress:
    """Progress as plain lines for a log file or a pipe: `train: 40,000/200,000 steps (20%) in
    45 s, 889 steps/s; STATUS`, one when the count passes each tenth of the total (at most once
    in `LINE_SECONDS` when the total is unknown) and one at `close` if the count moved since.
    The methods are tqdm's that the commands use; `write` prints a line on stdout, as tqdm's."""

    def __init__(self, total: int | None, unit: str, description: str | None = None, *, initial: int = 0,
                 file: TextIO | None = None) -> None:
        self.total, self.unit, self.description = total, unit, description
        self.n = self.shown = self.start_n = initial
        self.file = sys.stderr if file is None else file
        self.status = ""
        self.start = self.last_line = time.monotonic()

    def update(self, count: int = 1) -> None:
        self.n += count
        if self._step(self.n) > self._step(self.shown) or (
                not self.total and time.monotonic() - self.last_line >= LINE_SECONDS):
            self._line()

    def set_postfix_str(self, status: str = "", refresh: bool = True) -> None:
        self.status = status

    def write(self, text: str) -> None:
        print(text, flush=True)  # on stdout, as tqdm's write

    def close(self) -> None:
        if self.n != self.shown:
            self._line()

    def _step(self, n: int) -> int:
        return n * LINE_STEPS // self.total if self.total else 0

    def _line(self) -> None:
        self.shown, self.last_line = self.n, time.monotonic()
        print(self.format(self.last_line - self.start), file=self.file, flush=True)

    def format(self, seconds: float) -> str:
        """The line at `seconds` since the start (cut to `MAX_LINE` characters)."""
        unit = self.unit + ("" if self.unit.endswith("s") else "s")
        done = f"{self.n:,}/{self.total:,} {unit} ({self.n / self.total:.0%})" if self.total else f"{self.n:,} {unit}"
        rate = (self.n - self.start_n) / seconds if seconds > 0 else 0.0
        line = f"{self.description + ': ' if self.description else ''}{done} in {seconds:.0f} s, {rate:,.0f} {unit}/s"
        if self.status:
            line += f"; {self.status}"
        return line if len(line) <= MAX_LINE else line[:MAX_LINE - 3] + "..."
