"""Compiled kernels: how the project compiles its hot loops (numba), in one place.

Every kernel of the package is declared with :func:`kernel`: ``numba.njit`` with

- ``cache=True``: the machine code is kept on disk and reused by later runs, worker
  processes and CI. numba writes it beside the module (``__pycache__``) and, when the
  package's folder is not writable (a wheel in a read-only site-packages), in the user's
  cache folder (``~/.cache/numba``, or ``$NUMBA_CACHE_DIR``). numba judges a cached kernel
  fresh by its own file alone, but a kernel's machine code holds the helpers it calls from
  other modules (the rollout kernel holds the engine's rules, the observation and the
  network): each kernel's cache is also stamped with a digest of every kernel module's source
  (:func:`kernel_sources_digest`), so an edit to any of them compiles again instead of running
  stale code;
- ``nogil=True``: a kernel releases the GIL, so Python threads run kernels on every core;
- ``error_model="numpy"``: division follows numpy (no Python exception checks in the loop).

Big batches run on every core, in one of two ways:

- ``parallel=True`` kernels spread a batch over the cores with ``numba.prange``, where
  numba's threading layer is tbb (:data:`PARALLEL_SAFE`); the number of threads is numba's
  (``NUMBA_NUM_THREADS``, by default every core);
- elsewhere (GNU OpenMP, or numba's own workqueue: most pip installs, this project's CI),
  :func:`spread` runs a kernel's chunks of games on a pool of Python threads, one per core:
  the kernels release the GIL, so the chunks run side by side. The pool belongs to the
  process that made it: a forked worker process (evaluate's, the tournaments') makes its own
  at its first big batch and never touches its parent's threads, which it does not have.
  ``SERGEANT_MAJOR_THREADS=1`` (or :func:`set_threads`, or the block :func:`one_core`) keeps
  every batch on one core, e.g. to measure what the threads bring; ``=N`` caps the threads at N.

Either way the games of a batch are independent and each is computed by the same per-game
code, so a batch gives the same numbers, bit for bit, on any number of threads.

The kernels never see unchecked input: the public functions check shapes, dtypes and ranges
first and give their one-line errors; a kernel receives arrays of the dtypes it was written
for (:func:`contiguous` makes sure of the layout).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
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

    def compiled(f: Callable) -> Any:
        dispatcher = numba.njit(**options)(f)
        _stamp_cache(dispatcher)
        return dispatcher

    return compiled if function is None else compiled(function)


_PACKAGE = os.path.dirname(os.path.abspath(__file__))
_digest: str | None = None


def kernel_source_files() -> list[str]:
    """The package's modules that declare kernels (``@kernel``; this module too), as paths
    relative to the package, sorted (``agents/...`` a link to ../agents in a checkout)."""
    found = set()
    for root, skip in ((_PACKAGE, "agents"), (os.path.join(_PACKAGE, "agents"), None)):
        for folder, subfolders, names in os.walk(root):
            subfolders[:] = [name for name in subfolders if name != skip or folder != root]
            for name in names:
                path = os.path.join(folder, name)
                if name.endswith(".py") and (name == "jit.py" and folder == _PACKAGE or b"@kernel" in _read(path)):
                    found.add(os.path.relpath(path, _PACKAGE).replace(os.sep, "/"))
    return sorted(found)


def _read(path: str) -> bytes:
    with open(path, "rb") as source:
        return source.read()


def kernel_sources_digest() -> str:
    """sha256 of :func:`kernel_source_files`' paths and sources: the stamp that makes a cached
    kernel stale when any code compiled into it changes. Made once per process (reading about
    a hundred small files: a few milliseconds)."""
    global _digest
    if _digest is None:
        import hashlib

        digest = hashlib.sha256()
        for name in kernel_source_files():
            digest.update(name.encode() + b"\0" + _read(os.path.join(_PACKAGE, name)) + b"\0")
        _digest = digest.hexdigest()
    return _digest


def _stamp_cache(dispatcher: Any) -> None:
    """Adds :func:`kernel_sources_digest` to the source stamp numba's cache index keeps for the
    kernel (its file's time and size): the index is stale, and the kernel compiled again, when
    the digest differs. Left as numba has it if another numba version lays its cache out
    otherwise."""
    cache_file = getattr(getattr(dispatcher, "_cache", None), "_cache_file", None)
    if cache_file is not None and hasattr(cache_file, "_source_stamp"):
        cache_file._source_stamp = (cache_file._source_stamp, kernel_sources_digest())


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


# ----------------------------------------------------------------------------- threads

THREADS_VARIABLE = "SERGEANT_MAJOR_THREADS"
"""The environment variable that caps the threads of :func:`spread` (1: every batch on one core)."""


def _cores() -> int:
    """The cores this process may run on (its affinity), at most ``NUMBA_NUM_THREADS`` (read
    from numba's configuration: asking numba for its threads would start its threading layer,
    GNU OpenMP where tbb is missing, which this path avoids)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        cores = os.cpu_count() or 1
    return max(1, min(cores, numba.config.NUMBA_NUM_THREADS))


def _threads_from_environment() -> int | None:
    """``SERGEANT_MAJOR_THREADS`` as a cap, None when unset; anything but a whole number from 1
    is ignored with one line on stderr (the kernels' results do not depend on it)."""
    value = os.environ.get(THREADS_VARIABLE, "").strip()
    if not value:
        return None
    if not value.isdigit() or int(value) < 1:
        print(f"{THREADS_VARIABLE} must be a whole number of threads, 1 or more, got {value!r}: ignored "
              f"(every core)", file=sys.stderr)
        return None
    return int(value)


_limit: int | None = _threads_from_environment()
_pool: ThreadPoolExecutor | None = None
_pool_pid = -1
_pool_lock = threading.Lock()


def threads() -> int:
    """How many threads :func:`spread` uses: one per core (:func:`_cores`), capped by
    :func:`set_threads` or ``SERGEANT_MAJOR_THREADS``."""
    return _cores() if _limit is None else max(1, min(_limit, _cores()))


def set_threads(count: int | None) -> int | None:
    """Caps :func:`spread`'s threads at ``count`` (1: one core; None: every core); returns the
    previous cap, so that a benchmark or a test can put it back."""
    global _limit
    if count is not None and (not isinstance(count, int) or count < 1):
        raise ValueError(f"threads must be a whole number, 1 or more, or None (every core), got {count!r}")
    previous, _limit = _limit, count
    return previous


@contextlib.contextmanager
def one_core():
    """Every batch on one core inside the block (no :func:`spread` threads, one numba thread for
    the ``prange`` kernels): what the benchmarks compare the cores against."""
    previous = set_threads(1)
    numba_threads = numba.get_num_threads() if PARALLEL_SAFE else None  # the prange kernels run (tbb)
    if numba_threads is not None:
        numba.set_num_threads(1)
    try:
        yield
    finally:
        if numba_threads is not None:
            numba.set_num_threads(numba_threads)
        set_threads(previous)


def use_threads(games: int, from_games: int) -> bool:
    """Whether a batch of ``games`` goes to :func:`spread`: from ``from_games`` games on, with
    two threads or more, where the ``parallel=True`` kernels are not safe (no tbb)."""
    return games >= from_games and not PARALLEL_SAFE and threads() >= 2


def _executor() -> ThreadPoolExecutor:
    """This process's pool, made at its first use, and made again in a forked child (whose
    copy of the parent's pool has no threads behind it)."""
    global _pool, _pool_pid
    pid = os.getpid()
    if _pool is None or _pool_pid != pid:
        with _pool_lock:
            if _pool is None or _pool_pid != pid:
                _pool = ThreadPoolExecutor(max_workers=_cores(), thread_name_prefix="sergeant-major-kernels")
                _pool_pid = pid
    return _pool


def _after_fork_in_child() -> None:
    global _pool, _pool_pid, _pool_lock
    _pool, _pool_pid, _pool_lock = None, -1, threading.Lock()  # the parent's threads are not here


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def chunks(games: int, count: int | None = None) -> list[tuple[int, int]]:
    """``range(games)`` cut into ``count`` (default :func:`threads`) ranges (start, stop) of
    nearly equal size, in order; none empty."""
    count = max(1, min(threads() if count is None else count, games))
    bounds = [games * k // count for k in range(count + 1)]
    return [(bounds[k], bounds[k + 1]) for k in range(count)]


CHUNKS_PER_THREAD = 4
""":func:`spread` cuts a batch into this many chunks per thread: the threads take them in turn,
so a thread that waits for its core (a shared machine) leaves its share to the others."""


def spread(run: Callable[[int, int], Any], games: int) -> list:
    """Calls ``run(start, stop)`` on each chunk of ``range(games)`` (:func:`chunks`, ``CHUNKS_PER_THREAD``
    a thread) and returns their results in chunk order once all have finished. ``run`` calls a
    nogil kernel over the games start..stop-1 and writes only their rows, so the chunks run side
    by side on the cores and give what one call over every game would.

    The calling thread works too: it takes the chunks in turn with the pool's threads, and it
    waits only for chunks a pool thread has begun; a pool thread that has not woken by the time
    every chunk is taken is called off. On a busy machine the batch so costs little more than on
    one core. An exception of a chunk is raised here, after every begun chunk finished."""
    count = threads()
    parts = chunks(games, count * CHUNKS_PER_THREAD)
    if count < 2 or len(parts) < 2:
        return [run(start, stop) for start, stop in parts]
    results: list = [None] * len(parts)
    taken = iter(range(len(parts)))  # next() on it is atomic under the GIL: each chunk is taken once

    def work() -> None:
        for k in taken:
            results[k] = run(*parts[k])

    pool = _executor()
    helpers = [pool.submit(work) for _ in range(min(count, len(parts)) - 1)]
    try:
        work()
    finally:
        for helper in helpers:
            if not helper.cancel():  # begun: wait for its chunk
                helper.result()
    return results
