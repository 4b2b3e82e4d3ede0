"""The one seed rule of every entry point (engine, environments, command lines).

A seed is an integer from 0 to `MAX_SEED` (2**63 - 1). The engine turns it into
per-game seeds `seed + i` (and `seed + i + k * batch` after automatic resets), which
stay within the engine's uint64 seeds for any run shorter than 2**63 games. Booleans,
floats and strings are refused, and so is anything out of range, with one line that says
what is allowed, before any state is changed.
"""

from __future__ import annotations

from typing import Any

from .limits import is_integer

MAX_SEED = 2**63 - 1
SEED_RULE = f"an integer from 0 to 2**63 - 1 ({MAX_SEED})"


def check_seed(seed: Any, what: str = "seed") -> int:
    """`seed` as a Python int, or a `ValueError` naming `what` and the allowed range."""
    if not is_integer(seed) or not 0 <= int(seed) <= MAX_SEED:
        raise ValueError(f"{what} must be {SEED_RULE}, got {seed!r}")
    return int(seed)


def check_seed_span(seed: Any, count: int, unit: str = "games", rule: str = "game i plays seed + i") -> int:
    """`seed` by the seed rule, and so is the last of `count` consecutive seeds,
    `seed + count - 1` (a batch of games, a tournament's groups): a one-line `ValueError`
    names the largest first seed that fits."""
    seed = check_seed(seed)
    if count > 0 and seed + count - 1 > MAX_SEED:
        raise ValueError(f"seed {seed} is too large for {count} {unit}: {rule}, and the last seed, "
                         f"seed + {count - 1}, must be at most 2**63 - 1 ({MAX_SEED}); give a seed of at most "
                         f"{MAX_SEED - count + 1}")
    return seed
