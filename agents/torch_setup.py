"""How every process of this project that runs torch sets torch's CPU threads.

The networks here are small MLPs run on batches of a few hundred rows. On a machine whose
cores are busy with other work, torch's default (one thread per core) makes each forward
pass wait for threads that cannot run: 60 evaluation games of a ``ppo:`` model took 55 s
with the default and 2.1 s with one thread on a loaded 2-core machine. One thread is also
what makes a training run reproducible (floating-point sums in a fixed order).

So train.py, the ``ppo:`` agent and the RLlib agent all call :func:`use_torch_threads`.
Set ``OMP_NUM_THREADS`` to choose another count: it is then left to torch, which follows it.
"""

from __future__ import annotations

import os

TORCH_THREADS = 1
"""Torch CPU threads used unless ``OMP_NUM_THREADS`` says otherwise."""


def use_torch_threads() -> int:
    """Set torch's CPU threads (see the module docstring); return the count in use."""
    import torch

    if not os.environ.get("OMP_NUM_THREADS"):
        torch.set_num_threads(TORCH_THREADS)
    return torch.get_num_threads()
