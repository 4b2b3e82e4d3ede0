"""What a train.py run writes about itself: run.json first, the model files and summary.json last.

* `run.json` (at the start): every option, the rule options, observation layout, network
  and the command lines, so that --resume continues the run as it was (`sergeant_major_env.training.run_folder`);
* `model.zip`: the final SB3 model (MaskablePPO.load unpickles it);
* `policy.safetensors` + `policy.json`: the final policy as code-free files
  (`sergeant_major_env.agents.policy_file`), with how it was trained (`policy_metadata`): agent `ppo:RUN`;
* `summary.json`: configuration, timesteps, times and throughput, the final evaluation, the
  league, the machine; "complete" or "interrupted" (`run_summary`).

Needs the train extra at import (torch); train.py imports it after checking that it is there.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import math
import os
import platform
import time
from pathlib import Path

import torch

from sergeant_major_env.agents import policy_file
from sergeant_major_env.cards import NUM_ACTIONS
from sergeant_major_env.observation import OBSERVATION_SIZE
from sergeant_major_env.observation import VERSION as OBSERVATION_VERSION

from . import run_folder

PACKAGES = ("sergeant-major-env", "numpy", "torch", "stable-baselines3", "sb3-contrib", "safetensors")
"""The package versions every record names (with Python's)."""


@dataclasses.dataclass
class Clock:
    """This command's time, for summary.json: from `start` (`time.perf_counter()`), with the
    load average when it was made and what model.learn did (`learned`)."""

    start: float
    load_start: tuple[float, float, float] = dataclasses.field(default_factory=os.getloadavg)
    steps: int = 0                          # env steps model.learn took in this command
    train_seconds: float = 0.0              # its time, evaluations and checkpoints included
    steps_per_second: float = math.nan      # its throughput, evaluations and checkpoints excluded

    def learned(self, steps: int, seconds: float, excluded_seconds: float) -> None:
        """model.learn took `steps` env steps in `seconds`, `excluded_seconds` of them in
        evaluations and checkpoints."""
        self.steps, self.train_seconds = steps, seconds
        learn_seconds = seconds - excluded_seconds
        self.steps_per_second = steps / learn_seconds if learn_seconds > 0 and steps else math.nan

    def times(self, eval_seconds: float) -> dict:
        """summary.json's times, the wall time up to now."""
        wall = time.perf_counter() - self.start
        return {"timesteps_this_run": self.steps, "wall_time_s": round(wall, 2),
                "train_time_s": round(self.train_seconds, 2), "eval_time_s": round(eval_seconds, 2),
                "env_steps_per_s": round(self.steps_per_second, 1),
                "env_steps_per_s_overall": round(self.steps / wall, 1) if wall > 0 else None}


def package_versions() -> dict:
    versions = {"python": platform.python_version()}
    for package in PACKAGES:
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            versions[package] = None
    return versions


def write_run_record(plan, out: Path, model, resumed_from: Path | None) -> None:
    """run.json: everything needed to continue the run and to play its policy (the command
    lines of the resumed run first). `plan`: the checked command line (`Plan`)."""
    config = plan.config
    run_folder.write_run_record(out, {
        "options": config.run_options(),
        "rules": config.rules.to_dict(),
        "observation": {"version": OBSERVATION_VERSION, "size": OBSERVATION_SIZE},
        "actions": NUM_ACTIONS,
        "network": policy_file.describe_sb3_policy(model.policy),
        "commands": [*plan.earlier_commands, plan.command],
        "resumed_from": None if resumed_from is None else str(resumed_from),
        "device": config.device,
        "packages": package_versions(),
    })


def policy_metadata(plan, timesteps: int) -> dict:
    """What policy.json says beside the network: how the policy was trained."""
    config = plan.config
    return {"rules": config.rules.to_dict(),
            "training": {"command": plan.command, "timesteps": timesteps, "seed": config.seed,
                         "options": config.run_options()},
            "packages": package_versions()}


def save_model_files(plan, model, out: Path) -> dict[str, str]:
    """RUN/model.zip and RUN/policy.safetensors + policy.json; their paths by summary.json's names."""
    model_path = run_folder.save_sb3_model(model, out / "model.zip")
    policy_path = policy_file.save_policy(model.policy, out, policy_metadata(plan, model.num_timesteps))
    return {"policy": str(policy_path), "policy_metadata": str(policy_path.with_suffix(".json")),
            "model": str(model_path)}


def run_summary(plan, out: Path, model, *, stop, clock: Clock, eval_seconds: float, resumed_from: Path | None,
                imitation: dict | None, final: dict | None, history: list, league: list[str], saved: dict) -> dict:
    """summary.json's record of the run now. `eval_seconds`: this command's time in evaluations;
    `saved`: the paths of the files written at the end, by summary.json's names."""
    config = plan.config
    t = model.num_timesteps
    phase = "imitation" if imitation and not imitation["complete"] else \
        "final evaluation" if t >= config.total_timesteps else "ppo"
    return {
        "status": "interrupted" if stop.requested else "complete",
        "interrupted": {"signal": stop.name, "during": phase, "resume": f"sergeant-major train --resume {out}"}
        if stop.requested else None,
        "config": {**config.run_options(), "rules": config.rules.to_dict(), "pool": config.pool, "out": str(out),
                   "device": config.device, "resume": config.resume, "command": plan.command},
        "timesteps": t,
        "resumed_from": None if resumed_from is None else str(resumed_from),
        **clock.times(eval_seconds),
        "ppo_updates": model._n_updates // max(model.n_epochs, 1),
        "imitation": imitation,
        "final_evaluation": None if final is None else {
            "agent": f"ppo:{out}", "games_per_table": config.final_eval_games, "seed": config.eval_seed,
            **{f"vs_{o}": r for o, r in final.items()}},
        "eval_history": history,
        "league": league,
        "outputs": {"run_record": str(out / run_folder.RUN_FILE), **saved, "tensorboard": str(out / "tb"),
                    "learning_curve": str(out / "learning_curve.png")},
        "machine": {"load_average_start": [round(x, 2) for x in clock.load_start],
                    "load_average_end": [round(x, 2) for x in os.getloadavg()], "cpus": os.cpu_count(),
                    "torch_threads": torch.get_num_threads(), **package_versions()},
    }
