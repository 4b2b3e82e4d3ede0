"""What train.py does while MaskablePPO learns: one SB3 callback for everything periodic.

At each rollout boundary (after the PPO update of the previous rollout), in this order: a
league snapshot every --snapshot-every updates, the opponent pool's weights for the run's
progress (curriculum), an evaluation every --eval-every timesteps, a checkpoint every
--checkpoint-every timesteps. After every env step: the learner's game scores per kind of
opponent (`rollout/ep_rew_vs_<opponent>`), the progress bar and the stop request. Torch's
threads: --update-threads for the learner's rollouts and updates, one for each evaluation and
after training (agents.torch_setup.UpdateThreads).

Needs the train extra at import (SB3); train.py imports it after checking that it is there.
"""

from __future__ import annotations

import time
from pathlib import Path

from stable_baselines3.common.callbacks import BaseCallback

from sergeant_major_env.agents import PPOAgent, policy_file
from sergeant_major_env.agents.torch_setup import UpdateThreads
from sergeant_major_env import files
from sergeant_major_env.progress import progress_bar

from . import run_folder
from .learning_curve import ci_text, play_learner_tables
from .league import League, pool_weights
from .stopping import StopSignals, TrainingStopped


class TrainingCallback(BaseCallback):
    """League snapshots, curriculum weights, per-opponent returns, evaluations (appended to
    `history` and eval_history.json), checkpoints, progress bar; the stop request after
    every env step. `config` is the run's `TrainConfig`, `opponents` the fixed pool members by
    name, `out` the run folder."""

    def __init__(self, config, env, opponents: dict, league: League, out: Path, history: list,
                 stop: StopSignals) -> None:
        super().__init__()
        self.config, self.env, self.opponents, self.league, self.out = config, env, opponents, league, out
        self.history, self.stop = history, stop
        self.rollout = config.num_envs * config.n_steps
        self.next_eval = float("inf")
        self.next_checkpoint = 0
        self.eval_seconds = self.checkpoint_seconds = 0.0
        self.bar = None
        self.threads = UpdateThreads(config.update_threads)

    def _on_training_start(self) -> None:
        t = self.num_timesteps
        self.start_timesteps = t
        self.next_checkpoint = (t // self.config.checkpoint_every + 1) * self.config.checkpoint_every \
            if self.config.checkpoint_every else float("inf")
        if self.config.eval_every:  # evaluate at the start too, unless the history already has it
            self.next_eval = t if not self.history or self.history[-1]["timesteps"] < t else t + self.config.eval_every
        self.bar = progress_bar(self.config.total_timesteps, "step", "train", not self.config.no_progress, lines=True,
                                initial=t, unit_scale=True)
        self.threads.learning()

    def _on_rollout_start(self) -> None:  # after the update of the previous rollout
        t, config = self.num_timesteps, self.config
        updates = t // self.rollout
        if "self" in config.pool and t > self.start_timesteps and updates % config.snapshot_every == 0:
            self.league.add(self.model.policy, t)
        self.set_pool(t)
        if t >= self.next_eval:
            self.evaluate(t)
            self.next_eval = t + config.eval_every
        if t >= self.next_checkpoint:
            self.checkpoint(t)
            self.next_checkpoint = (t // config.checkpoint_every + 1) * config.checkpoint_every

    def set_pool(self, t: int) -> None:
        """The env's opponent pool for the games that start from now (its weights logged)."""
        config = self.config
        weights = pool_weights(config.pool, t / config.total_timesteps, config.curriculum, config.curriculum_end)
        if "self" in weights and not self.league.snapshots:
            weights["self"] = 0.0  # no snapshot yet
        for name, weight in weights.items():
            self.logger.record(f"curriculum/weight_{name}", weight / max(sum(weights.values()), 1e-12))
        policies, shares = self.league.pool(weights, self.opponents)
        if sum(shares) <= 0:  # e.g. --opponents self=1 before the first snapshot: play the learner itself
            policies, shares = [PPOAgent.from_sb3(self.model, "self@live", sample=True)], [1.0]
        self.env.set_opponent_pool(policies, shares, pairs=config.opponent_pairs)

    def _on_step(self) -> bool:
        for info in self.locals["infos"]:
            if "episode" in info:
                left, right = (name.split("@")[0] for name in info["opponents"])
                key = left if left == right else f"{left}+{right}"
                self.logger.record_mean(f"rollout/ep_rew_vs_{key}", info["episode"]["r"])
        if self.bar is not None:  # never past its total: the last rollout may go beyond --total-timesteps
            self.bar.update(max(0, min(self.training_env.num_envs, self.bar.total - self.bar.n)))
        return not self.stop.requested  # False ends model.learn after this step

    def evaluate(self, t: int, agent=None, games: int | None = None, final: bool = False) -> dict | None:
        """Evaluate `agent` (default: the live learner, playing as "ppo:RUN" does: the most
        likely legal action), log the curves, append to the history. A stop signal drops
        the evaluation (None)."""
        start = time.perf_counter()
        learner = agent if agent is not None else PPOAgent.from_sb3(self.model, "learner")
        try:
            with self.stop.abandonable(), self.threads.evaluating():
                result = play_learner_tables(learner, games or self.config.eval_games, self.config.eval_seed,
                                             self.config.rules, self.config.eval_tables)
        except TrainingStopped:
            self.eval_seconds += time.perf_counter() - start
            return None
        if agent is None and self.config.save_evaluated:
            self.save_evaluated(t)
        row = {"timesteps": t, "final": True} if final else {"timesteps": t}
        for opponent, r in result.items():
            row[opponent] = {k: v for k, v in r.items() if k != "table"}
            self._log_evaluation(opponent, r)
        self.history.append(row)
        files.write_json(self.out / "eval_history.json", self.history, indent=1)
        self.eval_seconds += time.perf_counter() - start
        text = " ".join(f"vs {o}: {row[o]['mean_points']:+.1f} {ci_text(row[o]['ci95'])}" for o in result)
        if final:
            self.logger.dump(t)  # training has ended: nothing else will write these records
        elif self.bar is not None:
            self.bar.set_postfix_str(self.eval_status(t, text))  # which evaluation the bar shows (issues 31, 50)
            self.bar.write(f"eval at {t:,}: {text}")
        else:
            print(f"eval at {t:,}: {text}", flush=True)
        return result

    def eval_status(self, t: int, text: str) -> str:
        """The bar's status after the evaluation at timestep `t`: its results and when the next
        one comes (`eval_every` on, or the final evaluation at the end of the run)."""
        upcoming = t + self.config.eval_every
        after = f"next at {upcoming:,}" if upcoming < self.config.total_timesteps else "next at the end"
        return f"last eval at {t:,}: {text}; {after}"

    def save_evaluated(self, t: int) -> Path:
        """--save-evaluated: the live learner's policy as code-free files, RUN/evaluated/policy_T
        .safetensors + .json, the policy the evaluation at timestep `t` played."""
        config, path = self.config, run_folder.evaluated_policy(self.out, t)
        path.parent.mkdir(exist_ok=True)
        return policy_file.save_policy(self.model.policy, path, {
            "rules": config.rules.to_dict(),
            "training": {"timesteps": t, "seed": config.seed, "options": config.run_options()}})

    def _log_evaluation(self, opponent: str, result: dict) -> None:
        self.logger.record(f"eval/vs_{opponent}_mean_points", result["mean_points"])
        if result["ci95"]:
            self.logger.record(f"eval/vs_{opponent}_ci95_low", result["ci95"][0])
            self.logger.record(f"eval/vs_{opponent}_ci95_high", result["ci95"][1])
        self.logger.record(f"eval/vs_{opponent}_win_rate", result["win_rate"])

    def checkpoint(self, t: int) -> Path:
        start = time.perf_counter()
        path = run_folder.save_sb3_model(self.model, self.out / run_folder.CHECKPOINTS / run_folder.checkpoint_name(t))
        self.checkpoint_seconds += time.perf_counter() - start
        return path

    def _on_training_end(self) -> None:
        self.threads.done()  # the final evaluation plays as the ppo: agent does
        if self.bar is not None:
            self.bar.close()
