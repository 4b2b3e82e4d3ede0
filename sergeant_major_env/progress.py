"""Progress bars of long work: one helper for every command (evaluate, distill labels, records).

tqdm is an optional dependency: without it, or with ``enabled`` false, there is no bar (None),
and a bar shows only when stderr is a terminal (logs, pipes and tests get none).
"""

from __future__ import annotations

import sys
from typing import Any


def progress_bar(total: int | None, unit: str, description: str | None = None, enabled: bool = True,
                 leave: bool = True) -> Any:
    """A tqdm bar on stderr counting ``unit``s up to ``total`` (None: unknown), or None.
    ``leave`` keeps the finished bar on screen."""
    if not enabled:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    # disable=None: no bar when stderr is not a terminal.
    return tqdm(total=total, unit=unit, desc=description, file=sys.stderr, leave=leave, dynamic_ncols=True,
                disable=None)
