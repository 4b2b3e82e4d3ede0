"""The one rule for sizes: every size a user or a file gives is checked before work starts.

A size that decides how much memory a command will hold at once (games of a tournament,
environments of a vec env, a batch of engine games, a search's worlds and rollouts, the
layers of a policy file) is checked with `check_fits` against the memory this machine
has available now (`available_bytes`: `MemAvailable` of `/proc/meminfo`, or the
container's own limit when that is lower), before anything is allocated. A size that does
not fit is one line:

```text
evaluate: 600,000,000,000 games would need about 27,940.7 GiB of memory; this machine has 21.4 GiB available; give fewer games
```

Sizes that no machine needs (a policy file with 100,000 layers, a 100 KB player name) have
fixed maxima where they are read, documented there; `shorten` keeps any value a
message echoes short.
"""

from __future__ import annotations

import math
import numbers
import os
from pathlib import Path
from typing import Any

GIB = 2**30
ECHO_CHARS = 60
"""Most characters of a user's value that a message repeats (`shorten`)."""

ALWAYS_FITS = 16 * 2**20
"""Sizes up to this many bytes are taken without asking the system (reading /proc/meminfo
costs 30 us, an engine game's reset 250 us): every machine this runs on has that much."""

RUN_RECORD_BYTES, RUN_RECORD_DEPTH = 1_000_000, 32
"""Largest and deepest run.json (a train run's record, a few kB, nested 4 deep) read: by
`train --resume` and by an agent that loads a run's model."""


def available_bytes() -> int | None:
    """Bytes of memory this process can still take: `MemAvailable` (Linux `/proc/meminfo`),
    or the free physical pages (`os.sysconf`) elsewhere, lowered to what a cgroup (v2) memory
    limit leaves; None when the system does not say."""
    found = [value for value in (_meminfo_available(), _sysconf_available()) if value is not None][:1]
    cgroup = _cgroup_available()
    if cgroup is not None:
        found.append(cgroup)
    return min(found) if found else None


def _meminfo_available() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _sysconf_available() -> int | None:
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def _cgroup_available() -> int | None:
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if limit == "max":
            return None
        return max(0, int(limit) - int(Path("/sys/fs/cgroup/memory.current").read_text().strip()))
    except (OSError, ValueError):
        return None


def format_bytes(size: float) -> str:
    """`12.3 GiB` (or MiB below a GiB), with thousands separators."""
    return f"{size / GIB:,.1f} GiB" if size >= GIB else f"{size / 2**20:,.1f} MiB"


def check_fits(what: str, bytes_needed: float, advice: str = "") -> None:
    """A one-line `ValueError` unless `bytes_needed` fits in the memory this machine has
    available now (`available_bytes`; nothing is checked where the system does not say,
    nor up to `ALWAYS_FITS`).
    `what` names the work (`"SergeantMajorVecEnv: 10**9 environments"`), `advice` what
    to give instead (`"give fewer games"`)."""
    if bytes_needed <= ALWAYS_FITS:
        return  # no system call for the everyday sizes (an env's reset, a vec env's autoreset)
    available = available_bytes()
    if available is not None and bytes_needed > available:
        raise ValueError(f"{what} would need about {format_bytes(bytes_needed)} of memory; this machine has "
                         f"{format_bytes(available)} available" + (f"; {advice}" if advice else ""))


def is_integer(value: Any) -> bool:
    """Whether `value` is an integer: a Python int or any other `numbers.Integral` (numpy's
    `np.int64(3)` too), never a bool (`True` is no count; numpy's bool is not Integral). The
    one test of every integer option (rules, env options, command options, counts, seeds)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    """Whether `value` is a real number: an integer (`is_integer`) or a float, numpy's
    too, never a bool. The one test of every option that takes a number."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_count(value: Any, what: str, low: int = 1, high: int | None = None) -> int:
    """`value` as an int when it is an integer (`is_integer`) from `low` to `high`;
    else a one-line `ValueError` naming `what` and the range."""
    if not is_integer(value) or value < low or (high is not None and value > high):
        span = f"from {low:,} to {high:,}" if high is not None else f">= {low:,}"
        raise ValueError(f"{what} must be an integer {span}, got {shorten(value)}")
    return int(value)


def shorten(value: Any, limit: int = ECHO_CHARS) -> str:
    """`repr(value)`, cut to `limit` characters with `...` (a message never echoes a
    megabyte of user input). Huge integers are not converted to text whole."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 190:
        return f"{'-' if value < 0 else ''}an integer of {math.floor(value.bit_length() * math.log10(2)) + 1} digits"
    if isinstance(value, (str, bytes)) and len(value) > 4 * limit:
        value = value[:2 * limit]  # the repr of a huge text is never built
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def cut_middle(text: str, limit: int) -> str:
    """`text` when it has at most `limit` characters, else its start and end around `...`,
    `limit` characters in all (a long name keeps what tells it apart: often its end)."""
    if len(text) <= limit:
        return text
    tail = (limit - 3) // 2
    return f"{text[:limit - 3 - tail]}...{text[len(text) - tail:]}"
