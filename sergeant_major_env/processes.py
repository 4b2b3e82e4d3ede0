"""Jobs played in worker processes of this machine: its cores, without Ray.

`run_jobs` calls `play(job, on_deals)` for every job in forked worker processes and
returns the outcomes in job order, as a plain loop would. The workers are forked, so they
inherit `play` and the jobs (the agents already built, models loaded): only a job's
index goes to a worker and only its outcome comes back, pickled. `on_deals(n)`, the
progress of the deals played, is summed over the workers in a shared counter and
reported from this process.

An error in a job is raised here, once, as the job raised it; a worker that dies (killed,
out of memory) is an error too, never a hang. Ctrl-C, SIGTERM and SIGHUP (under
`sergeant_major_env.interrupts.handled`, as every `sergeant-major` command runs) or
any error stop and join every worker before the exception leaves `run_jobs`; a worker
also dies with this process (Linux's parent-death signal), so none outlives a SIGKILL of it.

Workers are forked on Linux only (`can_fork`; elsewhere the jobs run in this process,
one after the other, with the same outcomes), and not from a daemonic worker process;
`available_cpus` says how many processes are worth starting here. Workers that compile
the kernels on a first run compile them side by side and say so in one line
(`jit.workers_compiling`).
`evaluation.play_tables` decides which jobs may run apart (`workers`).
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
from concurrent.futures import FIRST_EXCEPTION, ProcessPoolExecutor, wait
from typing import Any, Callable, Sequence

from . import interrupts
from .interrupts import reset_in_worker

_INHERITED: tuple[Callable, Sequence[Any], Any] | None = None
"""(play, jobs, deals counter) of the run in progress: set before the workers fork, so that
they inherit it rather than receive it pickled."""

PROGRESS_SECONDS = 0.5
"""How often the progress of the workers is reported."""

PR_SET_PDEATHSIG = 1
"""Linux's prctl option: the signal a process gets when its parent dies (linux/prctl.h)."""

JOIN_SECONDS = 10.0
"""How long a stopped worker may take to end before it is killed."""


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity where the system says), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # no affinity on this system
        return max(1, os.cpu_count() or 1)


def can_fork() -> bool:
    """Whether this process forks worker processes: on Linux (macOS has fork, but its system
    libraries are not safe to use in a forked child), and not in a daemonic worker itself."""
    return (sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()
            and not multiprocessing.current_process().daemon)


def run_jobs(play: Callable[[Any, Callable[[int], None]], Any], jobs: Sequence[Any], workers: int,
             on_deals: Callable[[int], None] | None = None) -> list[Any]:
    """`[play(job, on_deals) for job in jobs]`, played in `workers` forked processes (in
    this one when `workers` is 1, there is one job, or the process cannot fork)."""
    global _INHERITED
    report = on_deals if on_deals is not None else (lambda deals: None)
    if workers <= 1 or len(jobs) <= 1 or not can_fork():
        return [play(job, report) for job in jobs]
    from . import jit  # numba: not imported by the commands' --help, which need available_cpus only
    if _INHERITED is not None:
        raise RuntimeError("run_jobs is already running in this process")
    context = multiprocessing.get_context("fork")
    deals = context.Value("q", 0)
    for stream in (sys.stdout, sys.stderr):  # a forked child flushes its copy of what is buffered
        if stream is not None:
            stream.flush()
    _INHERITED = (play, jobs, deals)
    before = set(multiprocessing.active_children())
    processes = min(workers, len(jobs))
    executor = ProcessPoolExecutor(processes, mp_context=context, initializer=_start_worker,
                                   initargs=(os.getpid(), max(1, available_cpus() // processes)))
    finished = False
    try:
        with jit.workers_compiling(context, processes):  # one compile line for all the workers
            outcomes = _outcomes(executor, len(jobs), deals, report)
        finished = True
        return outcomes
    finally:
        _INHERITED = None
        if finished:
            executor.shutdown(wait=True)
        else:  # an error or a stop signal: stop the jobs still running, then wait for the workers
            _stop_workers(executor, set(multiprocessing.active_children()) - before)


def _outcomes(executor: ProcessPoolExecutor, count: int, deals: Any, report: Callable[[int], None]) -> list[Any]:
    """The outcomes of the inherited run's `count` jobs, submitted to `executor` (which forks
    the workers), the deals the workers count in `deals` reported as they are played."""
    with interrupts.deferred():  # no exception inside the fork handlers: a signal waits until after
        futures = [executor.submit(_run_job, index) for index in range(count)]  # forks the workers
    reported = 0
    while True:
        interrupts.check()  # a stop signal whose exception was lost (see interrupts.check)
        done, pending = wait(futures, timeout=PROGRESS_SECONDS, return_when=FIRST_EXCEPTION)
        total = deals.value
        if total > reported:
            report(total - reported)
            reported = total
        failed = next((future for future in done if future.exception() is not None), None)
        if failed is not None:
            failed.result()  # raises the job's error (or BrokenProcessPool for a dead worker)
        if not pending:
            return [future.result() for future in futures]


def _stop_workers(executor: ProcessPoolExecutor, started: set) -> None:
    """Terminate the workers of `executor` (and any process forked for it that it did not
    record yet: a signal can come between a fork and its bookkeeping) and join them."""
    processes = set((getattr(executor, "_processes", None) or {}).values()) | started
    for process in processes:
        process.terminate()
    # Each worker ended (killed if SIGTERM did not end it in time) before the executor is shut
    # down: its shutdown joins every worker, and one left waiting for a job (a worker killed while
    # holding the job queue's lock leaves the others waiting on it) would keep it waiting forever.
    for process in set((getattr(executor, "_processes", None) or {}).values()) - processes:
        process.terminate()  # forked after the first look
        processes.add(process)
    for process in processes:
        process.join(JOIN_SECONDS)
        if process.is_alive():
            process.kill()
            process.join()
    executor.shutdown(wait=True, cancel_futures=True)


def _start_worker(parent: int, threads: int) -> None:
    """In a worker, first: the stop signals as a worker takes them
    (`sergeant_major_env.interrupts.reset_in_worker`), death with the parent, and its share
    of the cores for the kernels' threads (`sergeant_major_env.threads.set_threads`: the workers together use
    every core once, not each of them every core; the results are the same on any number)."""
    from . import threads as thread_pool

    reset_in_worker()
    _die_with_parent(parent)
    thread_pool.set_threads(min(threads, thread_pool.threads()))


def _die_with_parent(parent: int) -> None:
    """Ask Linux to kill this process when its parent dies (`prctl(PR_SET_PDEATHSIG)`), so
    that a parent killed by SIGKILL leaves no worker behind; if the parent is gone already,
    end now."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # no prctl here: the parent stops its workers itself
        pass
    if os.getppid() != parent:
        os._exit(1)


def _run_job(index: int) -> Any:
    """In a worker: play job `index` of the inherited run, counting its deals in the shared counter."""
    play, jobs, deals = _INHERITED

    def on_deals(count: int) -> None:
        with deals.get_lock():
            deals.value += count

    return play(jobs[index], on_deals)
