"""How every process of this project that runs torch sets torch's CPU threads.

The networks here are small MLPs run on batches of a few hundred rows. On a machine whose
cores are busy with other work, torch's default (one thread per core) makes each forward
pass wait for threads that cannot run: 60 evaluation games of a `ppo:` model took 55 s
with the default and 2.1 s with one thread on a loaded 2-core machine. One thread is also
what makes a training run reproducible (floating-point sums in a fixed order).

So train.py, the `ppo:` agent and the RLlib agent all call `use_torch_threads`.
Set `OMP_NUM_THREADS` to choose another count: it is then left to torch, which follows it.
The learner of a training run is the exception: PPO's gradient updates are minibatches of a
thousand rows through every layer, forward and backward, which two threads do in about half
the time, and its forward passes over the run's 512 games gain a third; train.py gives the
learner (updates, rollouts' forward passes, the imitation's fit) `--update-threads` threads
(2 by default) and its evaluations one, as the `ppo:` agent plays (`UpdateThreads`).
The count is part of a run's bits (the updates sum in another order; a forward pass gives the
same numbers on one thread or two): a run is reproduced by its own command on a machine with at
least that many cores (on one core, two threads give one thread's run).

One thread is not enough for the same bits run after run: torch's CPU matrix products are
Intel MKL's, whose code path may depend on how each array happens to be aligned in memory, so
two runs of the same training command could end with different weights (1 in 3 runs of
`train.py --imitate none --total-timesteps 262144` did here). MKL's conditional numerical
reproducibility (`MKL_CBWR=AUTO,STRICT`) fixes the path; MKL reads it once, before its first
product, so the `sergeant-major` command sets it (`torch_environment`) before any
subcommand imports torch, unless `MKL_CBWR` is already set. A script of your own that trains with torch sets it
in the environment before Python starts.

A busy machine: torch's CPU threads are GNU OpenMP's, which by default spin for a while at
every barrier before they sleep. With two threads on a machine whose cores other jobs share,
the spinning thread takes the core its partner needs: the same PPO updates (two threads, a
2-core machine at load 5-8) took 9.2-18.9 s of CPU against 4.1-4.2 s with
`OMP_WAIT_POLICY=PASSIVE` (threads that sleep at once), and 3-4 times the wall time. So the
command sets `OMP_WAIT_POLICY=PASSIVE` too (unless set), before torch loads OpenMP; on a quiet
machine it costs nothing measurable.
"""

from __future__ import annotations

import contextlib
import os
from typing import Iterator

TORCH_THREADS = 1
"""Torch CPU threads used unless `OMP_NUM_THREADS` says otherwise."""

MKL_CBWR = "AUTO,STRICT"
"""MKL's reproducible mode that `torch_environment` sets (the module docstring)."""

TORCH_ENVIRONMENT = {"MKL_CBWR": MKL_CBWR, "OMP_WAIT_POLICY": "PASSIVE"}
"""What `torch_environment` sets where the user has not: MKL's reproducible mode, and OpenMP
threads that sleep instead of spinning while they wait (the module docstring)."""


def torch_environment() -> None:
    """Set `TORCH_ENVIRONMENT`'s variables (each unless set): to be called before torch is
    imported, which reads them once (the module docstring)."""
    for name, value in TORCH_ENVIRONMENT.items():
        os.environ.setdefault(name, value)


def use_torch_threads() -> int:
    """Set torch's CPU threads (see the module docstring); return the count in use."""
    import torch

    if not os.environ.get("OMP_NUM_THREADS"):
        torch.set_num_threads(TORCH_THREADS)
    return torch.get_num_threads()


class UpdateThreads:
    """Torch's threads for a training run's learner (`count`: PPO's rollouts and updates, the
    imitation's fit) and for its evaluations (the count `use_torch_threads` set, as the
    `ppo:` agent plays): `learning` when the learner starts, `evaluating` around
    an evaluation, `done` when training ends. Nothing changes where `OMP_NUM_THREADS` is set
    (torch follows it throughout)."""

    def __init__(self, count: int) -> None:
        import torch

        self.torch, self.count, self.others = torch, count, torch.get_num_threads()
        self.active = not os.environ.get("OMP_NUM_THREADS") and count != self.others

    def learning(self) -> None:
        if self.active:
            self.torch.set_num_threads(self.count)

    @contextlib.contextmanager
    def evaluating(self) -> Iterator[None]:
        """Within: the evaluations' count; after: the count that was set before."""
        before = self.torch.get_num_threads()
        if self.active:
            self.torch.set_num_threads(self.others)
        try:
            yield
        finally:
            if self.active:
                self.torch.set_num_threads(before)

    def done(self) -> None:
        """Training has ended: the evaluations' count from now on."""
        if self.active:
            self.torch.set_num_threads(self.others)


@contextlib.contextmanager
def unchecked_distributions() -> Iterator[None]:
    """Within: torch's distributions skip their argument checks (`validate_args`). SB3's masked
    categorical builds three distributions a forward pass and checks each (its logits finite,
    its probabilities a simplex): a tenth of a training run's rollout forward passes, with the
    same numbers without the checks. Restores torch's default after."""
    from torch.distributions import Distribution

    before = Distribution._validate_args
    Distribution.set_default_validate_args(False)
    try:
        yield
    finally:
        Distribution.set_default_validate_args(before)
