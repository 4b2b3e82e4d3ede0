"""Compiled kernels: how the project compiles its hot loops (numba), in one place.

Every kernel of the package is declared with `kernel`: `numba.njit` with

- `cache=True`: the machine code is kept on disk and reused by later runs, worker
  processes and CI. numba writes it beside the module (`__pycache__`) and, when the
  package's folder is not writable (a wheel in a read-only site-packages), in the user's
  cache folder (`~/.cache/numba`, or `$NUMBA_CACHE_DIR`). numba judges a cached kernel
  fresh by its own file alone, but a kernel's machine code holds the helpers it calls from
  other modules (the rollout kernel holds the engine's rules, the observation and the
  network): each kernel's cache is also stamped with a digest of every kernel module's source
  (`kernel_sources_digest`), so an edit to any of them compiles again instead of running
  stale code;
- `nogil=True`: a kernel releases the GIL, so Python threads run kernels on every core;
- `error_model="numpy"`: division follows numpy (no Python exception checks in the loop).

A first run (or the first after an edit) compiles: about 45 s of CPU for the kernels a game
with the heuristic needs. The entry kernels (those Python calls) declare their signatures, in
the argument types this module names once (`BUFFER`, `GAMES`, `RULES`, `SETS`, ...), and a
group (`@kernel(ahead="game", signature=(BUFFER, GAMES, FLAG, RULES))`), and the first use of a group compiles
its cold kernels on every core at once (`compile_ahead`: this process and a helper
process per other core), so that a cold `evaluate` takes about half as long. The groups:
`"game"` (the engine, observation and heuristic kernels a batched game calls; at the first
`engine.init`), `"one game"` (the one-game views' kernel), `"threads"` (the chunk
kernels of big batches) and `"search"` (pimc's worlds and rollouts).

Big batches run on every core: `parallel=True` kernels (`numba.prange`) where numba's
threading layer is tbb, elsewhere chunks of games on a pool of Python threads:
`sergeant_major_env.threads` (the thread pool) spreads them.

The kernels never see unchecked input: the public functions check shapes, dtypes and ranges
first and give their one-line errors; a kernel receives arrays of the dtypes it was written
for (`contiguous` makes sure of the layout).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
import time
from typing import Any, Callable

import numba
import numpy as np
from numba.core import cgutils, sigutils, types
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array

prange = numba.prange


# ----------------------------------------------------------------------------- the kernels' argument types

INT, FLAG, REAL = "int64", "boolean", "float64"
"""Scalars: a whole number (a count, a game's start or stop, a seat), a flag, a real."""
BUFFER = "uint8[::1]"
"""A state's bytes, every array of its games (`engine.State.buffer`)."""
RULES = INT
"""The rule options as one number (`engine.State.rule_code`)."""
INTS, FLAGS, REALS, REALS32 = "int64[::1]", "boolean[::1]", "float64[::1]", "float32[::1]"
"""Vectors: one value a game (or a card, a world)."""
SETS = "uint64[::1]"
"""Bit sets, one a game: cards (bit c: card c) or actions (bit a: action a)."""
GAMES = INTS
"""Game numbers (the rows of a state a kernel reads or writes)."""
SEEDS = SETS
"""Random seeds, one a game (or a world): 64-bit unsigned numbers, as `SETS`."""
INT_ROWS, INT8_ROWS, INT16_ROWS, FLAG_ROWS = "int64[:, ::1]", "int8[:, ::1]", "int16[:, ::1]", "boolean[:, ::1]"
REAL_ROWS, REAL32_ROWS, SET_ROWS = "float64[:, ::1]", "float32[:, ::1]", "uint64[:, ::1]"
"""Matrices: one row a game (or a world)."""
REAL_CUBE = "float64[:, :, ::1]"
"""Three axes of reals (a game, a suit or a card, a count)."""


def tuple_of(*types: str) -> str:
    """The type of a tuple of arguments of `types` (named above), e.g. a kernel's scratch
    arrays grouped in one named tuple: `tuple_of(REALS, REALS)`."""
    return f"Tuple(({', '.join(types)},))"


def kernel(function: Callable | None = None, *, parallel: bool = False, inline: bool = False,
           counted: bool = True, ahead: str | tuple[str, ...] = (), signature: tuple[str, ...] | str | None = None,
           seconds: float = 1.0) -> Any:
    """`numba.njit` with the project's settings (module docstring); usable bare
    (`@kernel`) or with options (`@kernel(parallel=True)`). `inline=True` marks a small
    helper that numba inlines into its callers (a helper called per card or per game).
    `counted=False` compiles without numba's reference counting: for a helper that only
    reads and writes the arrays its caller holds (it allocates none), many times a game; each
    array taken from a tuple otherwise costs two atomic operations (about 13x slower rules).

    `ahead` names the groups of `compile_ahead` an entry kernel (one that Python calls)
    belongs to, `signature` the argument types Python calls it with, one a parameter, named
    once in this module's types (`(BUFFER, GAMES, FLAG, RULES)`; numba's notation underneath:
    `"uint8[::1], int64[::1], boolean, int64"`, C-contiguous arrays, then scalars), and
    `seconds` about how long it takes to compile (measured here; it orders the work between
    the cores). `tests/test_jit.py` checks each signature against the calls programs make."""
    options = dict(cache=True, nogil=True, error_model="numpy", parallel=parallel)
    if inline:
        options["inline"] = "always"
    if not counted:
        options["_nrt"] = False
    groups = (ahead,) if isinstance(ahead, str) else tuple(ahead)
    if groups and not signature:
        raise ValueError("kernel: a kernel compiled ahead (ahead=...) needs its signature")

    def compiled(f: Callable) -> Any:
        dispatcher = numba.njit(**options)(f)
        _stamp_cache(dispatcher)
        if groups:
            types_ = signature if isinstance(signature, str) else ", ".join(signature)
            arguments = sigutils.normalize_signature(f"({types_},)")[0]
            _AHEAD_KERNELS[(f.__module__, f.__qualname__)] = (dispatcher, arguments, float(seconds))
            for group in groups:
                _AHEAD_GROUPS.setdefault(group, []).append((f.__module__, f.__qualname__))
        return dispatcher

    return compiled if function is None else compiled(function)


@intrinsic
def buffer_view(typingctx, buffer, start, dtype, shape):
    """Inside a kernel: the C-contiguous array of `dtype` and `shape` (an int or a tuple of
    ints) whose data begins at byte `start` of `buffer` (a C-contiguous uint8 array), sharing
    its memory. What `buffer[start:stop].view(dtype).reshape(shape)` gives, without numba's
    checks and its reshape helper's call: about 30 ns an array, so a state's 41 arrays took 1.3
    us at every kernel call (a third of a decision one game at a time); this takes a few ns.
    Unchecked: the caller makes sure that the bytes lie inside `buffer` and are aligned for
    `dtype` (the engine's packed layout, engine.state_arrays_k)."""
    if not (isinstance(buffer, types.Array) and buffer.dtype == types.uint8 and buffer.layout == "C"
            and isinstance(start, types.Integer) and isinstance(dtype, types.NumberClass)):
        return None
    if isinstance(shape, types.Integer):
        ndim = 1
    elif isinstance(shape, types.BaseTuple) and all(isinstance(size, types.Integer) for size in shape.types):
        ndim = len(shape)  # (b, 3): a literal beside a variable may type as a Tuple, not a UniTuple
    else:
        return None
    result = types.Array(dtype.dtype, ndim, "C")

    def codegen(context, builder, signature, arguments):
        source_value, start_value, _, shape_value = arguments
        source = make_array(signature.args[0])(context, builder, source_value)
        view = make_array(result)(context, builder)
        offset = context.cast(builder, start_value, signature.args[1], types.intp)
        data = builder.bitcast(builder.gep(source.data, [offset]), view.data.type)
        shapes = [shape_value] if ndim == 1 else cgutils.unpack_tuple(builder, shape_value, ndim)
        shapes = [context.cast(builder, size, size_type, types.intp)
                  for size, size_type in zip(shapes, [shape] if ndim == 1 else shape.types)]
        itemsize = context.get_constant(types.intp, context.get_abi_sizeof(context.get_data_type(dtype.dtype)))
        strides, stride = [], itemsize
        for size in reversed(shapes):
            strides.insert(0, stride)
            stride = builder.mul(stride, size)
        populate_array(view, data=data, shape=shapes, strides=strides, itemsize=itemsize, meminfo=source.meminfo)
        return impl_ret_borrowed(context, builder, result, view._getvalue())

    return result(buffer, start, dtype, shape), codegen


_AHEAD_KERNELS: dict[tuple[str, str], tuple[Any, tuple, float]] = {}
"""(module, name) of each kernel declared with `ahead`: its dispatcher, argument types, seconds."""
_AHEAD_GROUPS: dict[str, list[tuple[str, str]]] = {}
"""The kernels of each `compile_ahead` group, of the modules imported so far."""


_PACKAGE = os.path.dirname(os.path.abspath(__file__))
_digest: str | None = None


def kernel_source_files() -> list[str]:
    """The package's modules that declare kernels (`@kernel`; this module too), as paths
    relative to the package, sorted (`agents/...` a link to ../agents in a checkout)."""
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
    """sha256 of `kernel_source_files`' paths and sources: the stamp that makes a cached
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
    """Adds `kernel_sources_digest` to the source stamp numba's cache index keeps for the
    kernel (its file's time and size): the index is stale, and the kernel compiled again, when
    the digest differs. Left as numba has it if another numba version lays its cache out
    otherwise."""
    cache_file = getattr(getattr(dispatcher, "_cache", None), "_cache_file", None)
    if cache_file is not None and hasattr(cache_file, "_source_stamp"):
        cache_file._source_stamp = (cache_file._source_stamp, kernel_sources_digest())


def contiguous(array: np.ndarray, dtype) -> np.ndarray:
    """`array` as a C-contiguous array of `dtype` (no copy when it already is one)."""
    return np.ascontiguousarray(array, dtype=dtype)


_announced: set[str] = set()


def _cold(dispatcher: Any) -> bool:
    """Whether `dispatcher` has no machine code in numba's disk cache (missing or stale)."""
    return not dispatcher._cache._cache_file._load_index()


def announce_compiling(kernels: tuple, what: str) -> None:
    """Print one line to stderr, once per process and `what`, when any of `kernels` has no
    machine code in the disk cache yet (a first run, or the source changed), so that the
    pause of compiling them (seconds to a minute) is explained; silent when the cache is warm.
    The kernels compile when first called (`compile_ahead` compiles a group at once)."""
    if what in _announced:
        return
    _announced.add(what)
    try:  # numba's cache index: empty when missing or stale
        cold = [k for k in kernels if _cold(k)]
        where = kernels[0]._cache._cache_path
    except Exception:  # another numba version: say nothing rather than fail
        return
    if cold:
        print(f"compiling {what} (once; cached in {where})", file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------- compiling ahead

AHEAD = True
"""Whether `compile_ahead` compiles a cold group before its first use (on every core);
False leaves each kernel to compile when it is first called (the tests use it to see which
signatures programs call)."""

_ahead_done: set[str] = set()


def _cold_signature(dispatcher: Any, arguments: tuple) -> bool:
    """Whether `dispatcher` has neither loaded nor cached machine code for `arguments`."""
    if arguments in dispatcher.overloads:
        return False
    cache = dispatcher._cache
    return cache._index_key(arguments, dispatcher.targetctx.codegen()) not in cache._cache_file._load_index()


def compile_ahead(group: str, what: str, *, unless: tuple[str, ...] = ()) -> None:
    """Compiles the kernels of `group` (those declared `@kernel(ahead=group, ...)` in the
    modules imported so far) that the disk cache lacks, before the program needs them: on a
    first run (or after an edit) the group compiles on every core at once instead of one kernel
    after another as the program reaches them. This process compiles its share and starts one
    helper process (`python -c`, this interpreter and `sys.path`) per other core it may use
    (`threads.threads`: `SERGEANT_MAJOR_THREADS=1` keeps it to one) for the rest;
    each writes the machine code to numba's cache, from where this process loads it at the
    kernel's first call. The work is shared out by each kernel's `seconds`.

    Once per process and group; nothing when the cache is warm (the check reads numba's cache
    index: a millisecond), or once `unless` names a group already compiled ahead in this
    process (the one-game views say `"one game"` before starting their game, which would
    otherwise compile the batched game's kernels). Prints one line on stderr while compiling (one
    for all the workers of a `workers_compiling` block) and counts the time in `compile_seconds`.
    Each kernel is compiled under a lock file beside its cache, so processes started together
    (evaluate's workers) compile it once and the others wait for it. Anything unexpected (a
    helper that cannot start or fails, a numba that keeps its cache otherwise, no `fcntl`)
    leaves the kernels to compile at their first call, as without this function."""
    if group in _ahead_done or _ahead_done.intersection(unless):
        return
    _ahead_done.add(group)
    try:
        jobs = [_AHEAD_KERNELS[name] for name in _AHEAD_GROUPS.get(group, ())]
        jobs = [job for job in jobs if _cold_signature(job[0], job[1])]
        where = jobs[0][0]._cache._cache_path if jobs else ""
    except Exception:  # another numba version: the kernels compile when called
        return
    if not jobs:
        return
    from .threads import threads  # the cap on the cores (the thread pool's module imports this one)

    helpers = min(threads(), len(jobs)) - 1 if AHEAD and _can_start_helpers() else 0
    _announce(group, what, where, helpers + 1)
    if not AHEAD:
        return
    start = time.perf_counter()
    try:
        _compile_with_helpers(jobs, helpers)
    finally:
        _count_seconds(time.perf_counter() - start)


def _compile_with_helpers(jobs: list, helpers: int) -> None:
    """`jobs` compiled by this process and `helpers` helper processes, each its share."""
    shares = _shares(jobs, helpers + 1)
    started = [_start_helper(share) for share in shares[1:]]
    finished = False
    try:
        _compile_here(shares[0])
        finished = True
    finally:
        for helper in started:
            if helper is not None:
                if not finished:  # interrupted: the helpers stop too
                    helper.kill()
                helper.wait()


@dataclasses.dataclass
class _Workers:
    """What the worker processes forked by one `workers_compiling` block share: which groups one
    of them has announced (a bit each, in the order of `groups`), the longest time one of them
    has spent compiling (`before`: the parent's count, which they inherit), and how many work
    side by side."""

    parent: int
    processes: int
    groups: tuple[str, ...]
    before: float
    lock: Any
    announced: Any
    seconds: Any


_workers: _Workers | None = None
_seconds = 0.0


@contextlib.contextmanager
def workers_compiling(context: Any, processes: int):
    """Inside the block, the `processes` worker processes forked from this one (with the
    multiprocessing `context`: `processes.run_jobs`'s) compile side by side and say so once: the
    first to compile a group prints its line for all of them (on the cores they use together),
    the others compile their part of it silently. Their compile time (the longest of theirs)
    counts in this process's `compile_seconds` when the block ends."""
    global _workers, _seconds
    shared = _Workers(os.getpid(), processes, tuple(sorted(_AHEAD_GROUPS)), _seconds, context.Lock(),
                      context.Value("q", 0), context.Value("d", 0.0))
    _workers = shared
    try:
        yield
    finally:
        _workers = None
        _seconds += shared.seconds.value


def compile_seconds() -> float:
    """Seconds this process has spent compiling groups ahead (`compile_ahead`), its workers' included
    (those of finished `workers_compiling` blocks): what a command subtracts from its wall time to
    report the time of the work itself."""
    return _seconds


def _in_worker() -> _Workers | None:
    """The shared state of the `workers_compiling` block this process is a worker of, or None."""
    return _workers if _workers is not None and _workers.parent != os.getpid() else None


def _announce(group: str, what: str, where: str, cores: int) -> None:
    """The one line on stderr that `group` compiles (`cores`: this process's and its helpers');
    in a worker, only the first worker to compile the group prints it, for all of them."""
    shared = _in_worker()
    if shared is not None and group in shared.groups:
        bit = 1 << shared.groups.index(group)
        with shared.lock:
            if shared.announced.value & bit:
                return
            shared.announced.value |= bit
        cores *= shared.processes
    on = f" on {cores} cores" if cores > 1 else ""
    print(f"compiling {what}{on} (once; cached in {where})", file=sys.stderr, flush=True)


def _count_seconds(seconds: float) -> None:
    """Adds `seconds` of compiling to this process's count, and in a worker to the shared one
    (the longest worker's, since the workers compile side by side)."""
    global _seconds
    _seconds += seconds
    shared = _in_worker()
    if shared is not None:
        with shared.lock:
            shared.seconds.value = max(shared.seconds.value, _seconds - shared.before)


def _can_start_helpers() -> bool:
    try:
        import fcntl  # noqa: F401  (the lock files; Windows has none: one process compiles)
    except ImportError:
        return False
    return bool(sys.executable) and not getattr(sys, "frozen", False)


def _shares(jobs: list, count: int) -> list[list]:
    """`jobs` split into `count` shares of nearly equal seconds (the longest first, each to
    the share with the fewest seconds so far); the first share is this process's."""
    shares: list[list] = [[] for _ in range(count)]
    loads = [0.0] * count
    for job in sorted(jobs, key=lambda job: -job[2]):
        k = loads.index(min(loads))
        shares[k].append(job)
        loads[k] += job[2]
    return shares


_HELPER = """
import importlib, json, sys
request = json.loads(sys.argv[1])
sys.path[:] = request["path"]
from sergeant_major_env import jit
jit._compile_here([jit._AHEAD_KERNELS[(module, name)] for module, name in request["kernels"]
                   if getattr(importlib.import_module(module), name, None) is not None])
"""


def _start_helper(share: list):
    """A process that compiles `share` into the disk cache (its output discarded: a kernel it
    fails on compiles again, and says why, where the program calls it); None if it cannot start."""
    import json
    import subprocess

    names = [[job[0].py_func.__module__, job[0].py_func.__qualname__] for job in share]
    if any(module == "__main__" for module, _ in names):  # not importable by the helper
        _compile_here(share)
        return None
    request = json.dumps({"path": sys.path, "kernels": names})
    try:
        return subprocess.Popen([sys.executable, "-c", _HELPER, request], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except OSError:
        _compile_here(share)
        return None


def _compile_here(share: list) -> None:
    """Compiles each job of `share` in this process (into the disk cache), under its lock.
    A job whose lock another process holds (it is compiling that kernel) is taken up after the
    others, waiting for the lock then: processes that work through the same jobs at once
    (evaluate's workers, each on its share of the cores) so share them out."""
    busy = [job for job in share if not _compile_job(job, wait=False)]
    for job in busy:
        _compile_job(job, wait=True)


def _compile_job(job: tuple, wait: bool) -> bool:
    """Compiles `job`'s kernel if it is still cold, under its lock; False (nothing done) when
    `wait` is False and another process holds the lock."""
    dispatcher, arguments, _ = job
    with _kernel_lock(dispatcher, wait) as locked:
        if not locked:
            return False
        try:
            if _cold_signature(dispatcher, arguments):
                dispatcher.compile(arguments)
        except Exception:  # the kernel compiles (and says why it cannot) where it is called
            pass
    return True


@contextlib.contextmanager
def _kernel_lock(dispatcher: Any, wait: bool):
    """An exclusive lock on a file beside `dispatcher`'s cache index, held while it compiles:
    yields True once held (at once when no lock file can be made), False when `wait` is
    False and another process holds it."""
    try:
        import fcntl

        dispatcher._cache._impl.locator.ensure_cache_path()
        handle = open(os.path.join(dispatcher._cache._cache_path,
                                   dispatcher._cache._cache_file._index_name + ".lock"), "a")
    except Exception:
        yield True
        return
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        except OSError:  # a file system without locks: compile without one
            yield True
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
