"""How every process of this project that runs torch sets torch's CPU threads.

The networks here are small MLPs run on batches of a few hundred rows. On a machine whose
cores are busy with other work, torch's default (one thread per core) makes each forward
pass wait for threads that cannot run: 60 evaluation games of a ``ppo:`` model took 55 s
with the default and 2.1 s with one thread on a loaded 2-core machine. One thread is also
what makes a training run reproducible (floating-point sums in a fixed order).

So train.py, the ``ppo:`` agent and the RLlib agent all call :func:`use_torch_threads`.
Set ``OMP_NUM_THREADS`` to choose another count: it is then left to torch, which follows it.
PPO's gradient updates are the exception: minibatches of a thousand rows through every layer,
forward and backward, which two threads do in about half the time; train.py gives them
``--update-threads`` threads (2 by default) and the rollouts one (:class:`UpdateThreads`). The
count is part of a run's bits: a run is reproduced by its own command on a machine with at least
that many cores (on one core, two threads give one thread's run).

One thread is not enough for the same bits run after run: torch's CPU matrix products are
Intel MKL's, whose code path may depend on how each array happens to be aligned in memory, so
two runs of the same training command could end with different weights (1 in 3 runs of
``train.py --imitate none --total-timesteps 262144`` did here). MKL's conditional numerical
reproducibility (``MKL_CBWR=AUTO,STRICT``) fixes the path; MKL reads it once, before its first
product, so the ``sergeant-major`` command sets it (:func:`reproducible_mkl`) before any
subcommand imports torch, unless ``MKL_CBWR`` is already set. A script of your own that trains with torch sets it
in the environment before Python starts.
"""

from __future__ import annotations

import os

TORCH_THREADS = 1
"""Torch CPU threads used unless ``OMP_NUM_THREADS`` says otherwise."""

MKL_CBWR = "AUTO,STRICT"
"""MKL's reproducible mode that :func:`reproducible_mkl` sets (the module docstring)."""


def reproducible_mkl() -> None:
    """Set ``MKL_CBWR`` (unless set) so that MKL's results do not depend on memory alignment:
    to be called before torch is imported (the module docstring)."""
    os.environ.setdefault("MKL_CBWR", MKL_CBWR)


def use_torch_threads() -> int:
    """Set torch's CPU threads (see the module docstring); return the count in use."""
    import torch

    if not os.environ.get("OMP_NUM_THREADS"):
        torch.set_num_threads(TORCH_THREADS)
    return torch.get_num_threads()


class UpdateThreads:
    """Torch's threads for PPO's gradient updates (``count``) and for everything else (the count
    :func:`use_torch_threads` set): :meth:`updating` before an update, :meth:`rolling_out` after it.
    Nothing changes where ``OMP_NUM_THREADS`` is set (torch follows it throughout)."""

    def __init__(self, count: int) -> None:
        import torch

        self.torch, self.count, self.others = torch, count, torch.get_num_threads()
        self.active = not os.environ.get("OMP_NUM_THREADS") and count != self.others

    def updating(self) -> None:
        if self.active:
            self.torch.set_num_threads(self.count)

    def rolling_out(self) -> None:
        if self.active:
            self.torch.set_num_threads(self.others)
