"""Compiled kernels: how the project compiles its hot loops (numba), in one place.

Every kernel of the package is declared with :func:`kernel`: ``numba.njit`` with

- ``cache=True``: the machine code is kept on disk and reused by later runs, worker
  processes and CI. numba writes it beside the module (``__pycache__``) and, when the
  package's folder is not writable (a wheel in a read-only site-packages), in the user's
  cache folder (``~/.cache/numba``, or ``$NUMBA_CACHE_DIR``);
- ``nogil=True``: a kernel releases the GIL, so Python threads run kernels on every core;
- ``error_model="numpy"``: division follows numpy (no Python exception checks in the loop).

``parallel=True`` kernels spread a batch over the cores with ``numba.prange``; the number
of threads is numba's (``NUMBA_NUM_THREADS``, by default every core).

The kernels never see unchecked input: the public functions check shapes, dtypes and ranges
first and give their one-line errors; a kernel receives arrays of the dtypes it was written
for (:func:`contiguous` makes sure of the layout).
"""

from __future__ import annotations

import sys
from typing import Any, Callable

import numba
import numpy as np

prange = numba.prange


def _tbb_layer() -> bool:
    """Whether numba can run its parallel kernels on tbb: the one threading layer that is safe
    both with threads and with forked processes. Without tbb numba uses GNU OpenMP, and a
    process forked after an OpenMP kernel ran is killed at its first parallel kernel
    ("fork() called from a process already using GNU OpenMP"): the forked workers of
    evaluate, distill and the tournaments would die."""
    try:
        from numba.np.ufunc import tbbpool  # noqa: F401  (loads libtbb; numba prefers tbb when it loads)
    except ImportError:
        return False
    return True


PARALLEL_SAFE = _tbb_layer()
"""Whether the ``parallel=True`` kernels may run (numba's tbb layer loads): without it every
batch runs on the serial kernels, one core a call (a process's threads may still run serial
kernels side by side: they release the GIL)."""


def kernel(function: Callable | None = None, *, parallel: bool = False, inline: bool = False,
           counted: bool = True) -> Any:
    """``numba.njit`` with the project's settings (module docstring); usable bare
    (``@kernel``) or with options (``@kernel(parallel=True)``). ``inline=True`` marks a small
    helper that numba inlines into its callers (a helper called per card or per game).
    ``counted=False`` compiles without numba's reference counting: for a helper that only
    reads and writes the arrays its caller holds (it allocates none), many times a game; each
    array taken from a tuple otherwise costs two atomic operations (about 13x slower rules)."""
    options = dict(cache=True, nogil=True, error_model="numpy", parallel=parallel)
    if inline:
        options["inline"] = "always"
    if not counted:
        options["_nrt"] = False
    if function is None:
        return lambda f: numba.njit(**options)(f)
    return numba.njit(**options)(function)


def contiguous(array: np.ndarray, dtype) -> np.ndarray:
    """``array`` as a C-contiguous array of ``dtype`` (no copy when it already is one)."""
    return np.ascontiguousarray(array, dtype=dtype)


_announced: set[str] = set()


def announce_compiling(kernels: tuple, what: str) -> None:
    """Print one line to stderr, once per process and ``what``, when any of ``kernels`` has no
    machine code in the disk cache yet (a first run, or the source changed), so that the
    pause of compiling them (seconds to a minute) is explained; silent when the cache is warm."""
    if what in _announced:
        return
    _announced.add(what)
    try:  # numba's cache index: empty when missing or stale
        cold = [k for k in kernels if not k._cache._cache_file._load_index()]
        where = kernels[0]._cache._cache_path
    except Exception:  # another numba version: say nothing rather than fail
        return
    if cold:
        print(f"compiling {what} (once; cached in {where})", file=sys.stderr, flush=True)
