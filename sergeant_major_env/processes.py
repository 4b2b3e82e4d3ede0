"""Jobs played in worker processes of this machine: its cores, without Ray.

:func:`run_jobs` calls ``play(job, on_deals)`` for every job in forked worker processes and
returns the outcomes in job order, as a plain loop would. The workers are forked, so they
inherit ``play`` and the jobs (the agents already built, models loaded): only a job's
index goes to a worker and only its outcome comes back, pickled. ``on_deals(n)``, the
progress of the deals played, is summed over the workers in a shared counter and
reported from this process.

An error in a job is raised here, once, as the job raised it; a worker that dies (killed,
out of memory) is an error too, never a hang. Ctrl-C (or any error) stops every worker
before the exception leaves :func:`run_jobs`.

Workers are forked on Linux only (:func:`can_fork`; elsewhere the jobs run in this process,
one after the other, with the same outcomes), and not from a daemonic worker process;
:func:`available_cpus` says how many processes are worth starting here.
``evaluation.play_tables`` decides which jobs may run apart (``workers``).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from concurrent.futures import FIRST_EXCEPTION, ProcessPoolExecutor, wait
from typing import Any, Callable, Sequence

_INHERITED: tuple[Callable, Sequence[Any], Any] | None = None
"""(play, jobs, deals counter) of the run in progress: set before the workers fork, so that
they inherit it rather than receive it pickled."""

PROGRESS_SECONDS = 0.5
"""How often the progress of the workers is reported."""


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
    """``[play(job, on_deals) for job in jobs]``, played in ``workers`` forked processes (in
    this one when ``workers`` is 1, there is one job, or the process cannot fork)."""
    global _INHERITED
    report = on_deals if on_deals is not None else (lambda deals: None)
    if workers <= 1 or len(jobs) <= 1 or not can_fork():
        return [play(job, report) for job in jobs]
    if _INHERITED is not None:
        raise RuntimeError("run_jobs is already running in this process")
    context = multiprocessing.get_context("fork")
    deals = context.Value("q", 0)
    for stream in (sys.stdout, sys.stderr):  # a forked child flushes its copy of what is buffered
        if stream is not None:
            stream.flush()
    _INHERITED = (play, jobs, deals)
    executor = ProcessPoolExecutor(min(workers, len(jobs)), mp_context=context, initializer=_leave_interrupts)
    finished = False
    try:
        futures = [executor.submit(_run_job, index) for index in range(len(jobs))]  # forks the workers
        reported = 0
        while True:
            done, pending = wait(futures, timeout=PROGRESS_SECONDS, return_when=FIRST_EXCEPTION)
            total = deals.value
            if total > reported:
                report(total - reported)
                reported = total
            failed = next((future for future in done if future.exception() is not None), None)
            if failed is not None:
                failed.result()  # raises the job's error (or BrokenProcessPool for a dead worker)
            if not pending:
                break
        outcomes = [future.result() for future in futures]
        finished = True
        return outcomes
    finally:
        _INHERITED = None
        if not finished:  # an error or Ctrl-C: stop the jobs still running
            processes = getattr(executor, "_processes", None) or {}
            for process in list(processes.values()):
                process.terminate()
        executor.shutdown(wait=True, cancel_futures=True)


def _leave_interrupts() -> None:
    """In a worker: ignore Ctrl-C, which the terminal sends to every process of the group;
    the parent stops the workers itself (no worker tracebacks)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _run_job(index: int) -> Any:
    """In a worker: play job ``index`` of the inherited run, counting its deals in the shared counter."""
    play, jobs, deals = _INHERITED

    def on_deals(count: int) -> None:
        with deals.get_lock():
            deals.value += count

    return play(jobs[index], on_deals)
