"""train.py's opponents: the self-play league of learner snapshots, and the pool they are drawn from.

The league ("self" in --opponents): every --snapshot-every PPO updates the learner's policy
is saved as a policy file, `RUN/league/self_T.safetensors` + `.json` (T: timesteps done;
`sergeant_major_env.agents.policy_file`, code-free, so --resume reads it back without unpickling), and joins
the league as the agent that file loads into: an [`sergeant_major_env.agents.PPOAgent`][sergeant_major_env.agents.ppo.PPOAgent] named `self@T`
that samples from its masked policy (--snapshot-actions sample) or plays its most likely
legal action (argmax). The latest --league-size snapshots stay, in the league and on disk.

The pool (`SergeantMajorVecEnv.set_opponent_pool`): each fixed opponent (random, greedy,
heuristic, ppo:RUN) at its weight, the snapshots sharing the weight of "self" equally.
With the curriculum the weights move from the weak members only to the --opponents weights
over the first --curriculum-end fraction of the run (`pool_weights`).
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

from sergeant_major_env.agents import PPOAgent
from sergeant_major_env.agents import policy_file
from sergeant_major_env import Rules

WEAK = ("random", "greedy")
"""The pool members the curriculum starts with."""
FOLDER = "league"
"""The league's folder in a run folder."""


def pool_weights(pool: dict[str, float], progress: float, curriculum: bool, end: float) -> dict[str, float]:
    """The pool's weights at `progress` (fraction of the run done): with `curriculum`, from
    the weak members only (at their weights) at 0 linearly to `pool` at `end`, then
    `pool`; constant `pool` without the curriculum or without weak members."""
    final = dict(pool)
    start = {k: (w if k in WEAK else 0.0) for k, w in pool.items()}
    if not curriculum or sum(start.values()) <= 0:
        return final
    t = min(1.0, progress / end)
    return {k: (1 - t) * start[k] + t * final[k] for k in pool}


def snapshot_file(timesteps: int) -> str:
    return f"self_{timesteps:012d}.safetensors"


def snapshot_timesteps(path: Path) -> int:
    return int(path.stem[len("self_"):])


@dataclasses.dataclass
class Snapshot:
    timesteps: int
    path: Path
    agent: PPOAgent  # plays the policy file at ``path``


class League:
    """The snapshots of one run, oldest first, in `run/league`; at most `size` of them."""

    def __init__(self, run: Path, size: int, sample: bool, rules: Rules) -> None:
        self.folder, self.size, self.sample, self.rules = run / FOLDER, size, sample, rules
        self.snapshots: list[Snapshot] = []

    @property
    def names(self) -> list[str]:
        return [snapshot.agent.name for snapshot in self.snapshots]

    def add(self, policy, timesteps: int) -> None:
        """Save `policy` (the learner's SB3 policy) as snapshot `timesteps`; it joins the
        league, and the oldest snapshots beyond `size` leave it (and the disk)."""
        self.folder.mkdir(exist_ok=True)
        path = self.folder / snapshot_file(timesteps)
        policy_file.save_policy(policy, path, {"rules": self.rules.to_dict(),
                                               "league_snapshot": {"timesteps": timesteps}})
        self._join(path)
        for dropped in self.snapshots[:-self.size]:
            for stale in (dropped.path, dropped.path.with_suffix(".json")):
                if stale.exists():
                    stale.unlink()
        del self.snapshots[:-self.size]

    def load(self, earlier_run: Path, done: int) -> None:
        """--resume: the latest `size` snapshots of `earlier_run` taken at most `done`
        timesteps in (policy files: nothing is unpickled), copied into this run's folder
        first when the run continues in another one."""
        earlier = earlier_run / FOLDER
        if list(earlier.glob("self_*.pt")):
            print(f"note: {earlier} has league snapshots saved with torch.save (self_*.pt); they are not loaded "
                  f"(torch.load unpickles): the league starts empty", flush=True)
        paths = [p for p in sorted(earlier.glob("self_*.safetensors")) if snapshot_timesteps(p) <= done]
        for path in paths[-self.size:]:
            if earlier.resolve() != self.folder.resolve():
                self.folder.mkdir(exist_ok=True)
                for source in (path, path.with_suffix(".json")):
                    shutil.copyfile(source, self.folder / source.name)
            self._join(self.folder / path.name)

    def _join(self, path: Path) -> None:
        timesteps = snapshot_timesteps(path)
        self.snapshots.append(Snapshot(timesteps, path, PPOAgent(path, name=f"self@{timesteps}",
                                                                 sample=self.sample)))

    def pool(self, weights: dict[str, float], fixed: dict[str, object]) -> tuple[list[object], list[float]]:
        """(policies, weights) for `set_opponent_pool`: each `fixed` opponent at its weight in
        `weights`, and the snapshots sharing the weight of "self" equally."""
        policies: list[object] = []
        shares: list[float] = []
        for name, weight in weights.items():
            if name == "self":
                policies += [snapshot.agent for snapshot in self.snapshots]
                shares += [weight / max(len(self.snapshots), 1)] * len(self.snapshots)
            else:
                policies.append(fixed[name])
                shares.append(weight)
        return policies, shares
