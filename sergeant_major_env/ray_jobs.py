"""Jobs played as Ray tasks, on a local Ray or a cluster: the Ray counterpart of `processes`.

`run_on_ray` runs `task(shared, job)` for every job as one Ray task each and returns
`on_done(job, outcome)` for every job in job order, as a plain loop would; `on_done` is
called in this process as each task finishes (in the order they finish), so the caller can
report progress or keep each outcome (a file written) as soon as it exists. `shared` (what
every task needs: agent names, a plan) is shipped to the cluster once, not once per task.

It uses this process's Ray session, or starts one (`ray.init(address=address)`: a local Ray
for None, or the cluster at `address`) and shuts it down when done, keeping this process's
own handlers of the stop signals (`kept_stop_handlers`). An error in a task is raised
here, as is Ctrl-C (SIGTERM, SIGHUP); the tasks not yet finished then end with the Ray this
function started (`ray.shutdown`), or run on in the caller's own session. They are not
cancelled one by one: with Ray 2.60 a cancellation that meets the task's completion can abort
this process (a failed RAY_CHECK of its task manager, "Tried to complete task that was not
pending", seen in this project's tests; Ray's issues report such races, e.g. ray-project/ray#54846). Every node must have this project installed; the tasks build
their own agents from names, so what they compute is what this process would.

Ray is optional (`pip install "sergeant-major-env[rllib]"`, or only `pip install ray`):
without it `run_on_ray` raises a one-line ImportError naming the caller (`needed_by`).
Used by `evaluation.play_tables` (`evaluate --ray`) and `training.distill.make_labels`
(`distill labels --ray`).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from typing import Any, Callable, Iterator, Sequence

from . import interrupts
from .interrupts import STOP_SIGNALS

RAY_EXTRA = 'pip install "sergeant-major-env[rllib]"'
"""How to get Ray: the extra that brings it."""


def import_ray(needed_by: str):
    """The `ray` module, or a one-line ImportError saying that `needed_by` needs it and how to get it."""
    try:
        import ray
    except ImportError:
        raise ImportError(f"{needed_by} needs Ray: {RAY_EXTRA} (or only pip install ray)") from None
    return ray


@contextlib.contextmanager
def kept_stop_handlers() -> Iterator[None]:
    """The handlers of the stop signals as they were before the block, put back after it.
    `ray.init` replaces the driver's SIGTERM handler (seen with Ray 2.60: a `kill` printed a
    C++ stack dump and ended the process with status 1), which would skip the command's cleanup
    and its one line (`interrupts`)."""
    if threading.current_thread() is not threading.main_thread():  # only the main thread sets handlers
        yield
        return
    before = {number: signal.getsignal(number) for number in STOP_SIGNALS}
    try:
        yield
    finally:
        for number, handler in before.items():
            if handler is not None and signal.getsignal(number) is not handler:
                signal.signal(number, handler)


def run_on_ray(task: Callable[[Any, Any], Any], shared: Any, jobs: Sequence[Any], address: str | None = None,
               on_done: Callable[[Any, Any], Any] = lambda job, outcome: outcome,
               needed_by: str = "run_on_ray") -> list[Any]:
    """`[on_done(job, task(shared, job)) for job in jobs]`, each `task` a Ray task (see the
    module docstring); `on_done` runs here, as each task finishes."""
    ray = import_ray(needed_by)
    if not jobs:
        return []  # nothing to do: no Ray started for it
    started_here = not ray.is_initialized()
    if started_here:
        with kept_stop_handlers():
            ray.init(address=address, include_dashboard=False, log_to_driver=False)
    try:
        remote = ray.remote(task)
        shared_ref = ray.put(shared)  # shipped once, not once per task
        pending = {remote.remote(shared_ref, job): index for index, job in enumerate(jobs)}
        results: dict[int, Any] = {}
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            index = pending.pop(done[0])
            results[index] = on_done(jobs[index], ray.get(done[0]))
        return [results[index] for index in range(len(jobs))]
    except KeyboardInterrupt:
        interrupts.check()  # Ray's wait and get raise a stop signal's Interrupted again as a plain Ctrl-C
        raise
    finally:
        if started_here:
            ray.shutdown()
