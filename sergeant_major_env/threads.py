"""The thread pool: how a batch's games are spread over the cores, in one place.

Big batches run on every core, in one of two ways:

- `parallel=True` kernels spread a batch over the cores with `numba.prange`, where
  numba's threading layer is tbb (`PARALLEL_SAFE`); the number of threads is numba's
  (`NUMBA_NUM_THREADS`, by default every core);
- elsewhere (GNU OpenMP, or numba's own workqueue: most pip installs, this project's CI),
  `spread` runs a kernel's chunks of games on a pool of Python threads, one per core:
  the kernels release the GIL (`jit.kernel`), so the chunks run side by side. The pool
  belongs to the process that made it: a forked worker process (evaluate's, the tournaments')
  makes its own at its first big batch and never touches its parent's threads, which it does
  not have. `SERGEANT_MAJOR_THREADS=1` (or `set_threads`, or the block `one_core`) keeps
  every batch on one core, e.g. to measure what the threads bring; `=N` caps the threads at N.

Each job is one range kernel over the games start..stop-1, and `over_games` picks the way
for a batch: one call, chunks on the pool's threads, or the job's `prange` wrapper. Either
way the games of a batch are independent and each is computed by the same per-game code, so
a batch gives the same numbers, bit for bit, on any number of threads.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

import numba

from .jit import compile_ahead


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
"""Whether the `parallel=True` kernels may run (numba's tbb layer loads): without it every
batch runs on the serial kernels, one core a call (a process's threads may still run serial
kernels side by side: they release the GIL)."""


THREADS_VARIABLE = "SERGEANT_MAJOR_THREADS"
"""The environment variable that caps the threads of `spread` (1: every batch on one core)."""


def _cores() -> int:
    """The cores this process may run on (its affinity), at most `NUMBA_NUM_THREADS` (read
    from numba's configuration: asking numba for its threads would start its threading layer,
    GNU OpenMP where tbb is missing, which this path avoids)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        cores = os.cpu_count() or 1
    return max(1, min(cores, numba.config.NUMBA_NUM_THREADS))


def _threads_from_environment() -> int | None:
    """`SERGEANT_MAJOR_THREADS` as a cap, None when unset; anything but a whole number from 1
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
    """How many threads `spread` uses: one per core (`_cores`), capped by
    `set_threads` or `SERGEANT_MAJOR_THREADS`."""
    return _cores() if _limit is None else max(1, min(_limit, _cores()))


def set_threads(count: int | None) -> int | None:
    """Caps `spread`'s threads at `count` (1: one core; None: every core); returns the
    previous cap, so that a benchmark or a test can put it back."""
    global _limit
    if count is not None and (not isinstance(count, int) or count < 1):
        raise ValueError(f"threads must be a whole number, 1 or more, or None (every core), got {count!r}")
    previous, _limit = _limit, count
    return previous


@contextlib.contextmanager
def one_core():
    """Every batch on one core inside the block (no `spread` threads, one numba thread for
    the `prange` kernels): what the benchmarks compare the cores against."""
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
    """Whether a batch of `games` goes to `spread`: from `from_games` games on, with
    two threads or more, where the `parallel=True` kernels are not safe (no tbb). The first
    such batch of a process compiles the threaded kernels ahead (`compile_ahead`)."""
    if games >= from_games and not PARALLEL_SAFE and threads() >= 2:
        compile_ahead("threads", "the threaded kernels")
        return True
    return False


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
    """`range(games)` cut into `count` (default `threads`) ranges (start, stop) of
    nearly equal size, in order; none empty."""
    count = max(1, min(threads() if count is None else count, games))
    bounds = [games * k // count for k in range(count + 1)]
    return [(bounds[k], bounds[k + 1]) for k in range(count)]


CHUNKS_PER_THREAD = 4
"""`spread` cuts a batch into this many chunks per thread: the threads take them in turn,
so a thread that waits for its core (a shared machine) leaves its share to the others."""


def spread(run: Callable[[int, int], Any], games: int) -> list:
    """Calls `run(start, stop)` on each chunk of `range(games)` (`chunks`, `CHUNKS_PER_THREAD`
    a thread) and returns their results in chunk order once all have finished. `run` calls a
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


PARALLEL_CHUNK = 64
"""Games a thread of a `parallel=True` kernel takes at a time (the `prange` wrappers of the
range kernels loop over chunks of this many games)."""


def over_games(range_kernel: Callable, games: int, *arguments, threads_from: int,
               parallel: Callable | None = None) -> list:
    """Runs one job over the games `range(games)`, spread as the batch calls for, from one
    place: each job is one kernel, `range_kernel(start, stop, *arguments)`, that loops over
    the games start..stop-1 (and writes only their rows). Where `parallel` is given (a
    `prange` wrapper of the same range kernel: the caller gives it where `PARALLEL_SAFE` and
    the batch is big enough), `parallel(*arguments)` runs it on numba's threads; else from
    `threads_from` games on (`use_threads`) its chunks run on `spread`'s threads; else one call
    over every game on this thread. Returns the results of the calls (one a chunk), in order."""
    if parallel is not None:
        return [parallel(*arguments)]
    if games >= threads_from and use_threads(games, threads_from):  # one test for small batches
        return spread(lambda start, stop: range_kernel(start, stop, *arguments), games)
    return [range_kernel(0, games, *arguments)]

