"""Train a 3-5-8 player with MaskablePPO (sb3-contrib) over the batched SergeantMajorVecEnv.

    python train.py                                    # the default run: ~8 min on 2 CPU cores
    python train.py --total-timesteps 200000 --option num_deals=3 --name quick
    python train.py --opponents heuristic=1,self=1 --no-curriculum
    python train.py --resume runs/quick                # continue a run from its latest checkpoint
    python evaluate.py --agents ppo:runs/quick/model.zip,heuristic,heuristic --games 600

One learner plays --num-envs games at once in ONE batched engine state; its seat rotates
over the games of each slot (seat (slot + game number) % 3), so it learns all three roles
(dealer, playmaker, third). Rewards are each deal's points (an episode's rewards sum to the
learner's final score). The two other seats of a game are played by opponents drawn from a
pool when the game starts (SergeantMajorVecEnv.set_opponent_pool): each opponent round calls
each pool member once on all the games waiting on it.

Opponent pool (--opponents NAME=WEIGHT,...): any agents.make_agent name ("random",
"greedy", "heuristic", "ppo:PATH" of an earlier run) and "self", the self-play league: a
frozen copy of the learner is taken every --snapshot-every updates and the last
--league-size copies share the weight of "self" equally. A snapshot plays by sampling from
its masked policy (--snapshot-actions sample; "argmax" plays its most likely legal action).
"self" has weight 0 until the first snapshot exists.

Curriculum (on by default, --no-curriculum to turn it off): during the first
--curriculum-end fraction of the run the pool weights move linearly from the weak members
only (random and greedy, at their --opponents weights) to the full --opponents weights, which
then hold to the end. Without weak members in the pool the weights are constant.

Imitation warm start (--imitate heuristic; off by default): before PPO, the network learns
to copy an agent's moves (behaviour cloning: cross-entropy of the masked logits) and the
value network the returns of its games, over --imitate-steps decisions of games the teacher
plays in all three seats. PPO then starts from a player close to the teacher instead of
from random play (see the longer recipe below).

Evaluation: at the start and every --eval-every timesteps the learner (its most likely
legal action, no sampling: agents.PPOAgent on the live model) plays --eval-games
duplicate-deal games (sergeant_major_env.evaluation.play_tables) at the table "learner,
random, random" and at "learner, heuristic, heuristic", with the same deals each time
(--eval-seed). Its mean points per game with a 95% interval are logged to TensorBoard
(eval/*) and to eval_history.json. At the end the saved model plays --final-eval-games
games at both tables as agents.make_agent("ppo:OUT/model.zip"), exactly as evaluate.py
plays it: the final table of summary.json.

Outputs in --out (default runs/<--name or a timestamp>): model.zip (the final model, loadable
by MaskablePPO.load and as agent "ppo:PATH"), summary.json (configuration, timesteps, wall
time, env steps per second, final evaluation table with 95% CIs, machine load),
learning_curve.png (eval mean points vs timesteps with 95% bands, vs random and vs
heuristic), eval_history.json, checkpoints/model_<timesteps>.zip (every --checkpoint-every
timesteps and at the end), league/self_<timesteps>.pt (the league's snapshot weights, for
--resume) and tb/ (TensorBoard: SB3's rollout/train/time curves, eval/*, imitation/*,
curriculum/* weights and rollout/ep_rew_vs_<opponent>: the learner's mean game score against
each opponent kind).
Throughput (env steps per second: learner decisions, with the PPO updates included,
evaluation and checkpoints excluded) is printed and recorded.

Reproducibility: --seed seeds Python, numpy, torch (SB3's set_random_seed), the engine's
games (slot i plays seeds S+i, S+i+N, ...), the opponents' and the pool's generators and
the evaluation deals. The same command on the same machine (same library versions, torch on
CPU with one thread, as set here) reproduces the same run: same model, same curves. Limits:
GPU kernels, another torch thread count or library version may change floating-point sums;
a resumed run is not bit-identical to an uninterrupted one (the games in progress and the
generators' states are not checkpointed: the resumed env starts new games from seed
--seed + timesteps done, and the rollout boundary restarts).

Resume (--resume CHECKPOINT.zip or a run folder, which means its latest checkpoint): the
network, optimizer state and PPO hyper-parameters come from the checkpoint, the timestep
count continues from it (up to --total-timesteps in all), the league snapshots and the
evaluation history are reloaded from the checkpoint's run folder (league/, eval_history.json).
Output goes to that folder unless --out is given. Other options come from the command line.

Longer recipe, aimed at beating "heuristic" in duplicate evaluation (about 2.5 hours on this
2-core machine: ~10 min of imitation, then 25M PPO timesteps at ~3-4k env steps/s against
heuristic-heavy opponents and the league, no curriculum since imitation already starts strong):

    python train.py --name long --imitate heuristic --imitate-steps 4000000 \
        --total-timesteps 25000000 --num-envs 512 --n-steps 16 --batch-size 1024 --net-arch 256,256 \
        --learning-rate 3e-4 --anneal-lr --ent-coef 0.003 --no-curriculum \
        --opponents greedy=1,heuristic=4,self=3 --snapshot-every 50 --league-size 8 \
        --eval-every 2000000 --eval-games 600 --checkpoint-every 2000000

Its 19-minute version (the same options but --imitate-steps 2000000 --total-timesteps 3000000
--snapshot-every 25 --league-size 5 --eval-every 1000000 --checkpoint-every 1000000) went from
-7.9 points/game against heuristic,heuristic after imitation to +2.3 [+0.7, +3.9] after PPO
(final evaluation, 600 games), and +1.8 [+0.7, +2.9] on other deals
(evaluate.py --agents ppo:runs/NAME/model.zip,heuristic,heuristic --games 1200 --seed 0).
"""

from __future__ import annotations

import argparse
import datetime
import glob
import json
import os
import platform
import sys
import time

import numpy as np
import sb3_contrib
import stable_baselines3
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import configure
from stable_baselines3.common.utils import set_random_seed
from stable_baselines3.common.vec_env import VecEnvWrapper

import agents
from agents import PPOAgent
from sergeant_major_env import Rules, SergeantMajorVecEnv
from sergeant_major_env.evaluation import play_tables

# Training runs on CPU with one thread: reproducible and fair to the other users of the machine.
torch.set_num_threads(1)


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="train.py", description=__doc__.split("\n\n")[0].strip(),
        epilog="\n\n".join(__doc__.split("\n\n")[1:]), formatter_class=argparse.RawDescriptionHelpFormatter)
    g = p.add_argument_group("run")
    g.add_argument("--total-timesteps", type=int, default=2_000_000, metavar="T",
                   help="learner decisions (env steps) to train for, in all (a resumed run continues up to T) "
                        "(default 2000000)")
    g.add_argument("--num-envs", type=int, default=256, metavar="N",
                   help="games played in parallel in one batched engine state (default 256)")
    g.add_argument("--seed", type=int, default=0, metavar="S",
                   help="seed of everything: torch, numpy, the games, the opponents (default 0)")
    g.add_argument("--option", "--options", dest="option", action="extend", nargs="+", default=[],
                   metavar="NAME=VALUE", help="rule options (RULES.md section 9), e.g. num_deals=3 exchanges=false")
    g.add_argument("--name", default=None, help="run name: output in runs/NAME (default: a timestamp)")
    g.add_argument("--out", default=None, metavar="DIR",
                   help="output folder (default runs/<name or timestamp>; with --resume, the checkpoint's run)")
    g.add_argument("--resume", default=None, metavar="PATH",
                   help="continue from a checkpoint .zip, or from the latest checkpoint of a run folder")
    g.add_argument("--device", default="cpu", help="torch device for the learner (default cpu)")
    g.add_argument("--no-progress", action="store_true", help="no progress bar")

    g = p.add_argument_group("opponents")
    g.add_argument("--opponents", default="random=1,greedy=1,heuristic=2,self=2", metavar="NAME=W,...",
                   help="opponent pool and sampling weights: agents.make_agent names (random, greedy, heuristic, "
                        "ppo:PATH) and 'self' (the league of learner snapshots) "
                        "(default random=1,greedy=1,heuristic=2,self=2)")
    g.add_argument("--opponent-pairs", choices=("same", "independent"), default="same",
                   help="same: one pool member plays both opponent seats of a game (default); "
                        "independent: each seat is drawn on its own")
    g.add_argument("--no-curriculum", dest="curriculum", action="store_false",
                   help="constant pool weights (default: curriculum from weak to strong opponents)")
    g.add_argument("--curriculum-end", type=float, default=0.5, metavar="F",
                   help="fraction of the run after which the --opponents weights hold (default 0.5)")
    g.add_argument("--snapshot-every", type=int, default=20, metavar="K",
                   help="PPO updates between learner snapshots added to the self-play league (default 20)")
    g.add_argument("--league-size", type=int, default=3, metavar="M",
                   help="snapshots kept in the league (the latest M) (default 3)")
    g.add_argument("--snapshot-actions", choices=("sample", "argmax"), default="sample",
                   help="how snapshots play: sample from the masked policy (default) or its most likely action")

    g = p.add_argument_group("imitation warm start")
    g.add_argument("--imitate", default="none", metavar="AGENT",
                   help="before PPO, train the policy to copy this agent's moves (behaviour cloning) and the value "
                        "network on the returns of its games: 'heuristic', 'greedy', ... or 'none' (default none)")
    g.add_argument("--imitate-steps", type=int, default=1_000_000, metavar="T",
                   help="teacher decisions to learn from (not counted in --total-timesteps) (default 1000000)")
    g.add_argument("--imitate-lr", type=float, default=1e-3, metavar="LR", help="imitation learning rate (default 1e-3)")
    g.add_argument("--imitate-epochs", type=int, default=2, metavar="E",
                   help="passes over each chunk of num_envs * n_steps teacher decisions (default 2)")

    g = p.add_argument_group("network and PPO")
    g.add_argument("--net-arch", default="128,128", metavar="H,H",
                   help="hidden layer sizes of the policy and value MLPs (separate networks) (default 128,128)")
    g.add_argument("--learning-rate", type=float, default=3e-4, metavar="LR", help="Adam learning rate (default 3e-4)")
    g.add_argument("--anneal-lr", action="store_true", help="decay the learning rate linearly to 0 over the run")
    g.add_argument("--n-steps", type=int, default=16, metavar="K",
                   help="steps per game slot per rollout (rollout = num_envs * n_steps) (default 16)")
    g.add_argument("--batch-size", type=int, default=1024, metavar="B", help="minibatch size (default 1024)")
    g.add_argument("--n-epochs", type=int, default=4, metavar="E", help="epochs per rollout (default 4)")
    g.add_argument("--gamma", type=float, default=0.995, help="discount factor (default 0.995)")
    g.add_argument("--gae-lambda", type=float, default=0.95, help="GAE lambda (default 0.95)")
    g.add_argument("--clip-range", type=float, default=0.2, help="PPO clip range (default 0.2)")
    g.add_argument("--reward-scale", type=float, default=1.0, metavar="C",
                   help="PPO's rewards are each deal's points times C (logged returns stay in points; 1 learned "
                        "faster than 0.1 in short tests) (default 1)")
    g.add_argument("--ent-coef", type=float, default=0.01, help="entropy bonus coefficient (default 0.01)")
    g.add_argument("--vf-coef", type=float, default=0.5, help="value loss coefficient (default 0.5)")
    g.add_argument("--max-grad-norm", type=float, default=0.5, help="gradient clipping norm (default 0.5)")

    g = p.add_argument_group("evaluation and checkpoints")
    g.add_argument("--eval-every", type=int, default=500_000, metavar="T",
                   help="timesteps between evaluations (0: only the final one) (default 500000)")
    g.add_argument("--eval-games", type=int, default=180, metavar="G",
                   help="games per evaluation table, rounded up to a multiple of 6 (default 180)")
    g.add_argument("--final-eval-games", type=int, default=600, metavar="G",
                   help="games per table of the final evaluation (default 600)")
    g.add_argument("--eval-seed", type=int, default=1_000_000, metavar="S",
                   help="first engine seed of the evaluation deals, the same at every evaluation (default 1000000)")
    g.add_argument("--checkpoint-every", type=int, default=1_000_000, metavar="T",
                   help="timesteps between checkpoints (one is also written at the end) (default 1000000)")
    args = p.parse_args(argv)

    # Checks: every problem is reported before anything runs (exit status 2).
    try:
        args.rules = Rules.from_strings(args.option)
    except ValueError as error:
        p.error(str(error))
    try:
        args.pool = parse_pool(args.opponents)
        args.hidden = [int(x) for x in args.net_arch.split(",") if x.strip()]
    except ValueError as error:
        p.error(str(error))
    if min(args.total_timesteps, args.num_envs, args.n_steps, args.batch_size, args.n_epochs, args.imitate_epochs,
           args.snapshot_every, args.league_size, args.eval_games, args.final_eval_games) < 1 or not args.hidden:
        p.error("sizes, counts and --net-arch must be positive")
    if min(args.seed, args.eval_seed, args.eval_every, args.checkpoint_every, args.imitate_steps) < 0 or not 0 < args.curriculum_end <= 1:
        p.error("seeds and intervals must be >= 0 and --curriculum-end in (0, 1]")
    return args


def parse_pool(text: str) -> dict[str, float]:
    """'random=1,heuristic=2,self=2' -> {name: weight}; a name alone has weight 1."""
    pool: dict[str, float] = {}
    for item in (x.strip() for x in text.split(",")):
        if not item:
            continue
        name, sep, weight = item.rpartition("=") if "=" in item else (item, "", "1")
        try:
            w = float(weight)
        except ValueError:
            raise ValueError(f"--opponents: bad weight in {item!r}") from None
        if w < 0 or not np.isfinite(w):
            raise ValueError(f"--opponents: weights must be >= 0, got {item!r}")
        pool[name.strip()] = pool.get(name.strip(), 0.0) + w
    if not pool or sum(pool.values()) <= 0:
        raise ValueError(f"--opponents needs at least one opponent with a positive weight, got {text!r}")
    return pool


# ============================================================================ policies

class TorchPolicy:
    """A MaskablePPO policy network as a batched opponent (sergeant_major_env.policies):
    ``act(obs[B, D], legal_mask[B, 58], rng)`` runs the network once on the batch, masks the
    illegal actions' logits to -inf and plays their argmax (``sample=False``) or samples
    from the masked softmax (``sample=True``, Gumbel-max with the caller's numpy ``rng``,
    so the env's generator keeps it reproducible). ``frozen=True`` copies the network (a
    league snapshot); otherwise it follows the live learner."""

    needs_observations = True

    def __init__(self, policy, name: str, sample: bool = False, frozen: bool = True) -> None:
        self.name, self.sample = name, sample
        self.net = policy
        if frozen:  # a new network of the same architecture, with a copy of the weights
            self.net = type(policy)(**policy._get_constructor_parameters()).to("cpu")
            self.net.load_state_dict(policy.state_dict())
            self.net.set_training_mode(False)
            for param in self.net.parameters():
                param.requires_grad_(False)

    @torch.no_grad()
    def logits(self, observations: np.ndarray) -> np.ndarray:
        net = self.net
        obs = torch.as_tensor(np.asarray(observations, dtype=np.float32), device=net.device)
        features = net.extract_features(obs, net.pi_features_extractor)
        return net.action_net(net.mlp_extractor.forward_actor(features)).cpu().numpy()

    def act(self, observations: np.ndarray, legal_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        logits = self.logits(observations).astype(np.float64)
        if self.sample:
            logits += rng.gumbel(size=logits.shape)
        logits[~np.asarray(legal_mask, dtype=bool)] = -np.inf
        return logits.argmax(axis=1).astype(np.int64)


class ScaleReward(VecEnvWrapper):
    """Rewards times ``scale`` (the episode infos, in points, are left as they are)."""

    def __init__(self, venv, scale: float) -> None:
        super().__init__(venv)
        self.scale = scale

    def reset(self):
        return self.venv.reset()

    def step_wait(self):
        obs, rewards, dones, infos = self.venv.step_wait()
        return obs, rewards * np.float32(self.scale), dones, infos


# ============================================================================ imitation

IMITATION_SEED = 2_000_000_000  # the imitation games' seeds start here (+ --seed): apart from training and eval


def imitate(model, args, logger) -> dict:
    """Behaviour cloning warm start: the teacher plays all three seats of num_envs games; in
    chunks of n_steps decisions of the learner's seat, the policy minimises the cross-entropy
    of its masked logits against the teacher's moves and the value network the squared error
    to the chunk's discounted returns (bootstrapped with its own value at the chunk's end),
    ``--imitate-epochs`` passes over each chunk in minibatches of --batch-size."""
    teacher = agents.make_agent(args.imitate)
    env = SergeantMajorVecEnv(args.num_envs, seed=args.seed + IMITATION_SEED, opponents=teacher, rules=args.rules)
    rng = np.random.default_rng([args.seed, 3])
    policy = model.policy
    optimizer = torch.optim.Adam(policy.parameters(), lr=args.imitate_lr)
    obs, done_steps, start = env.reset(), 0, time.perf_counter()
    bar = None if args.no_progress else __import__("tqdm").tqdm(total=args.imitate_steps, unit="step",
                                                                    unit_scale=True, desc=f"imitate {args.imitate}")
    policy.set_training_mode(True)
    while done_steps < args.imitate_steps:
        observations, masks, actions, rewards, dones = [], [], [], [], []
        for _ in range(args.n_steps):
            mask = env.action_masks()
            action = teacher.act(obs, mask, rng)
            observations.append(obs), masks.append(mask), actions.append(action)
            obs, reward, done, _ = env.step(action)
            rewards.append(reward * args.reward_scale), dones.append(done)
        with torch.no_grad():
            ret = policy.predict_values(torch.as_tensor(obs, device=policy.device)).cpu().numpy().reshape(-1)
        returns = np.zeros((args.n_steps, args.num_envs), dtype=np.float32)
        for k in reversed(range(args.n_steps)):
            ret = rewards[k] + args.gamma * ret * (1 - dones[k])
            returns[k] = ret
        o, m, a, r = (torch.as_tensor(x, device=policy.device) for x in (
            np.concatenate(observations), np.concatenate(masks), np.concatenate(actions), returns.reshape(-1)))
        for _ in range(args.imitate_epochs):
            for idx in torch.randperm(len(a), device=policy.device).split(args.batch_size):
                features = policy.extract_features(o[idx], policy.pi_features_extractor)
                latent_pi, latent_vf = policy.mlp_extractor(features)
                logits = policy.action_net(latent_pi).masked_fill(~m[idx], -1e9)
                policy_loss = torch.nn.functional.cross_entropy(logits, a[idx])
                value_loss = torch.nn.functional.mse_loss(policy.value_net(latent_vf).reshape(-1), r[idx])
                optimizer.zero_grad()
                (policy_loss + args.vf_coef * value_loss).backward()
                torch.nn.utils.clip_grad_norm_(policy.parameters(), args.max_grad_norm)
                optimizer.step()
        accuracy = float((logits.argmax(1) == a[idx]).float().mean())
        done_steps += len(a)
        logger.record("imitation/policy_loss", policy_loss.item())
        logger.record("imitation/value_loss", value_loss.item())
        logger.record("imitation/accuracy", accuracy)
        logger.dump(done_steps)
        if bar is not None:
            bar.update(len(a))
            bar.set_postfix_str(f"accuracy {accuracy:.2f}")
    if bar is not None:
        bar.close()
    policy.set_training_mode(False)
    seconds = time.perf_counter() - start
    print(f"imitated {args.imitate} for {done_steps:,} decisions in {seconds:.1f} s "
          f"(last minibatch: accuracy {accuracy:.2f}, value loss {value_loss.item():.2f})", flush=True)
    return {"teacher": args.imitate, "steps": done_steps, "seconds": round(seconds, 2), "accuracy": accuracy,
            "policy_loss": policy_loss.item(), "value_loss": value_loss.item()}


# ============================================================================ curriculum

WEAK = ("random", "greedy")


def pool_weights(pool: dict[str, float], progress: float, curriculum: bool, end: float) -> dict[str, float]:
    """The pool's weights at ``progress`` (fraction of the run done): see the docstring."""
    final = dict(pool)
    start = {k: (w if k in WEAK else 0.0) for k, w in pool.items()}
    if not curriculum or sum(start.values()) <= 0:
        return final
    t = min(1.0, progress / end)
    return {k: (1 - t) * start[k] + t * final[k] for k in pool}


# ============================================================================ evaluation

def evaluate(learner, games: int, seed: int, rules, tables=("random", "heuristic")) -> dict:
    """Duplicate-deal tables "learner, X, X" for each X: the learner's points with 95% CIs."""
    out = {}
    for opponent in tables:
        result = play_tables([learner, opponent, opponent], games=games, seed=seed, rules=rules, progress=False,
                             names=["ppo", opponent, opponent + "#2"])
        stats = result.agent("ppo")
        out[opponent] = {"mean_points": stats.mean_points, "ci95": stats.ci95, "win_rate": stats.win_rate,
                         "mean_place": stats.mean_place, "games": result.games, "table": result.to_dict()}
    return out


def plot_curve(history: list[dict], path: str, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 4.2))
    for opponent, color in (("random", "tab:blue"), ("heuristic", "tab:red")):
        rows = [h for h in history if opponent in h]
        if not rows:
            continue
        x = np.array([h["timesteps"] for h in rows])
        mean = np.array([h[opponent]["mean_points"] for h in rows])
        low = np.array([(h[opponent]["ci95"] or [m, m])[0] for h, m in zip(rows, mean)])
        high = np.array([(h[opponent]["ci95"] or [m, m])[1] for h, m in zip(rows, mean)])
        axes.plot(x, mean, "o-", color=color, label=f"vs {opponent}, {opponent}")
        axes.fill_between(x, low, high, color=color, alpha=0.2)
    axes.axhline(0, color="black", linewidth=0.8)
    axes.set_xlabel("timesteps (learner decisions)")
    axes.set_ylabel("learner's mean points per game (95% CI)")
    axes.set_title(title)
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


# ============================================================================ the callback

class TrainingCallback(BaseCallback):
    """Curriculum weights, league snapshots, per-opponent returns, evaluations, checkpoints,
    progress bar: everything periodic, at rollout boundaries."""

    def __init__(self, args, env, members: dict, league: list, out: str, history: list) -> None:
        super().__init__()
        self.args, self.env, self.members, self.league, self.out, self.history = args, env, members, league, out, history
        self.rollout = args.num_envs * args.n_steps
        self.next_eval = float("inf")
        self.next_checkpoint = 0
        self.eval_seconds = self.checkpoint_seconds = 0.0
        self.bar = None

    def _on_training_start(self) -> None:
        t = self.num_timesteps
        self.start_timesteps = t
        self.next_checkpoint = (t // self.args.checkpoint_every + 1) * self.args.checkpoint_every \
            if self.args.checkpoint_every else float("inf")
        if self.args.eval_every:  # evaluate at the start too, unless the history already has it
            self.next_eval = t if not self.history or self.history[-1]["timesteps"] < t else t + self.args.eval_every
        if not self.args.no_progress:
            from tqdm import tqdm

            self.bar = tqdm(total=self.args.total_timesteps, initial=t, unit="step", unit_scale=True,
                            dynamic_ncols=True, desc="train")

    def _on_rollout_start(self) -> None:  # after the update of the previous rollout
        t, args = self.num_timesteps, self.args
        updates = t // self.rollout
        if "self" in args.pool and t > self.start_timesteps and updates % args.snapshot_every == 0:
            self.league.append(TorchPolicy(self.model.policy, f"self@{t}", sample=args.snapshot_actions == "sample"))
            os.makedirs(os.path.join(self.out, "league"), exist_ok=True)
            torch.save(self.model.policy.state_dict(), os.path.join(self.out, "league", f"self_{t:012d}.pt"))
            for dropped in self.league[:-args.league_size]:  # only the league's snapshots stay on disk
                path = os.path.join(self.out, "league", f"self_{int(dropped.name[5:]):012d}.pt")
                if os.path.exists(path):
                    os.remove(path)
            del self.league[:-args.league_size]
        self.set_pool(t)
        if t >= self.next_eval:
            self.evaluate(t)
            self.next_eval = t + args.eval_every
        if t >= self.next_checkpoint:
            self.checkpoint(t)
            self.next_checkpoint = (t // args.checkpoint_every + 1) * args.checkpoint_every

    def set_pool(self, t: int) -> None:
        weights = pool_weights(self.args.pool, t / self.args.total_timesteps, self.args.curriculum,
                               self.args.curriculum_end)
        if "self" in weights and not self.league:
            weights["self"] = 0.0
        policies, w = [], []
        for name, weight in weights.items():
            self.logger.record(f"curriculum/weight_{name}", weight / max(sum(weights.values()), 1e-12))
            if name == "self":
                policies += self.league
                w += [weight / max(len(self.league), 1)] * len(self.league)
            else:
                policies.append(self.members[name])
                w.append(weight)
        if sum(w) <= 0:  # e.g. --opponents self=1 before the first snapshot: play the learner itself
            policies, w = [TorchPolicy(self.model.policy, "self@live", sample=True, frozen=False)], [1.0]
        self.env.set_opponent_pool(policies, w, pairs=self.args.opponent_pairs)

    def _on_step(self) -> bool:
        for info in self.locals["infos"]:
            if "episode" in info:
                left, right = (name.split("@")[0] for name in info["opponents"])
                key = left if left == right else f"{left}+{right}"
                self.logger.record_mean(f"rollout/ep_rew_vs_{key}", info["episode"]["r"])
        if self.bar is not None:
            self.bar.update(self.training_env.num_envs)
        return True

    def evaluate(self, t: int, agent=None, games: int | None = None, final: bool = False) -> dict:
        """Evaluate ``agent`` (default: the live learner, playing as "ppo:PATH" does: the argmax
        of its masked policy), log the curves, append to the history."""
        start = time.perf_counter()
        learner = agent if agent is not None else PPOAgent("learner", model=self.model)
        result = evaluate(learner, games or self.args.eval_games, self.args.eval_seed, self.args.rules)
        row = {"timesteps": t, "final": True} if final else {"timesteps": t}
        for opponent, r in result.items():
            row[opponent] = {k: v for k, v in r.items() if k != "table"}
            self.logger.record(f"eval/vs_{opponent}_mean_points", r["mean_points"])
            if r["ci95"]:
                self.logger.record(f"eval/vs_{opponent}_ci95_low", r["ci95"][0])
                self.logger.record(f"eval/vs_{opponent}_ci95_high", r["ci95"][1])
            self.logger.record(f"eval/vs_{opponent}_win_rate", r["win_rate"])
        self.history.append(row)
        with open(os.path.join(self.out, "eval_history.json"), "w") as file:
            json.dump(self.history, file, indent=1)
        self.eval_seconds += time.perf_counter() - start
        text = " ".join(f"vs {o}: {row[o]['mean_points']:+.1f} {_ci(row[o]['ci95'])}" for o in result)
        if final:
            self.logger.dump(t)  # training has ended: nothing else will write these records
        elif self.bar is not None:
            self.bar.set_postfix_str(text)
            self.bar.write(f"eval at {t:,}: {text}")
        else:
            print(f"eval at {t:,}: {text}", flush=True)
        return result

    def checkpoint(self, t: int) -> str:
        start = time.perf_counter()
        path = os.path.join(self.out, "checkpoints", f"model_{t:012d}.zip")
        self.model.save(path)
        self.checkpoint_seconds += time.perf_counter() - start
        return path

    def _on_training_end(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _ci(ci) -> str:
    return "[n/a]" if not ci else f"[{ci[0]:+.1f}, {ci[1]:+.1f}]"


def latest_checkpoint(path: str) -> str:
    if os.path.isdir(path):
        found = sorted(glob.glob(os.path.join(path, "checkpoints", "model_*.zip")))
        if not found:
            sys.exit(f"train.py: error: no checkpoint in {path}/checkpoints")
        return found[-1]
    if not os.path.isfile(path):
        sys.exit(f"train.py: error: no checkpoint {path}")
    return path


# ============================================================================ main

def main(argv=None) -> dict:
    wall_start = time.perf_counter()
    args = parse_args(argv)

    # Output folder.
    resume = latest_checkpoint(args.resume) if args.resume else None
    if args.out:
        out = args.out
    elif resume:
        out = os.path.dirname(os.path.dirname(os.path.abspath(resume)))
    else:
        out = os.path.join("runs", args.name or datetime.datetime.now().strftime("%Y%m%d-%H%M%S"))
    os.makedirs(os.path.join(out, "checkpoints"), exist_ok=True)
    load_start = os.getloadavg()

    # The opponents: fixed agents by name, and the league (snapshots reloaded on resume).
    members = {}
    try:
        for name in args.pool:
            if name != "self":
                members[name] = agents.make_agent(name)
        if args.imitate != "none":
            agents.make_agent(args.imitate)
    except ValueError as error:
        sys.exit(f"train.py: error: {error}")

    # Environment and model (seeded: SB3 seeds python, numpy, torch and the env).
    env = SergeantMajorVecEnv(args.num_envs, seed=args.seed, rules=args.rules)
    venv = ScaleReward(env, args.reward_scale) if args.reward_scale != 1 else env
    lr = args.learning_rate
    schedule = (lambda remaining: lr * remaining) if args.anneal_lr else lr
    if resume:
        model = MaskablePPO.load(resume, env=venv, device=args.device)
        done = model.num_timesteps
        set_random_seed(args.seed + done)
        env.seed(args.seed + done)  # new deals: each slot's next seeds are beyond those already played
        print(f"resuming {resume} at {done:,} timesteps", flush=True)
    else:
        model = MaskablePPO(
            "MlpPolicy", venv, learning_rate=schedule, n_steps=args.n_steps, batch_size=args.batch_size,
            n_epochs=args.n_epochs, gamma=args.gamma, gae_lambda=args.gae_lambda, clip_range=args.clip_range,
            ent_coef=args.ent_coef, vf_coef=args.vf_coef, max_grad_norm=args.max_grad_norm,
            policy_kwargs=dict(net_arch=dict(pi=args.hidden, vf=args.hidden)), seed=args.seed,
            device=args.device, verbose=0)
        done = 0
    league: list[TorchPolicy] = []
    resumed_run = os.path.dirname(os.path.dirname(os.path.abspath(resume))) if resume else out
    if "self" in args.pool and resume:
        for path in sorted(glob.glob(os.path.join(resumed_run, "league", "self_*.pt")))[-args.league_size:]:
            t = int(os.path.basename(path)[5:-3])
            if t <= done:
                snapshot = TorchPolicy(model.policy, f"self@{t}", sample=args.snapshot_actions == "sample")
                snapshot.net.load_state_dict(torch.load(path, map_location="cpu"))
                league.append(snapshot)
    history = []
    if resume and os.path.exists(os.path.join(resumed_run, "eval_history.json")):
        with open(os.path.join(resumed_run, "eval_history.json")) as file:
            history = [h for h in json.load(file) if h["timesteps"] <= done]
    model.set_logger(configure(os.path.join(out, "tb"), ["tensorboard"]))
    imitation = imitate(model, args, model.logger) if args.imitate != "none" and not resume else None
    callback = TrainingCallback(args, env, members, league, out, history)
    callback.init_callback(model)
    callback.set_pool(done)

    # Train.
    print(f"training {args.total_timesteps - done:,} timesteps, {args.num_envs} games in parallel, "
          f"output in {out}", flush=True)
    train_start = time.perf_counter()
    if args.total_timesteps > done:
        model.learn(args.total_timesteps - done, callback=callback, reset_num_timesteps=not resume,
                    progress_bar=False)
    train_seconds = time.perf_counter() - train_start
    steps = model.num_timesteps - done
    learn_seconds = train_seconds - callback.eval_seconds - callback.checkpoint_seconds
    fps = steps / learn_seconds if learn_seconds > 0 else float("nan")
    print(f"{steps:,} env steps in {train_seconds:.1f} s: {fps:,.0f} env steps/s "
          f"(learner updates included; {callback.eval_seconds:.1f} s of evaluation and "
          f"{callback.checkpoint_seconds:.1f} s of checkpoints excluded)", flush=True)

    # Save, evaluate, summarize.
    model_path = os.path.join(out, "model.zip")
    model.save(model_path)
    checkpoint = callback.checkpoint(model.num_timesteps)
    final_agent = agents.make_agent(f"ppo:{model_path}")  # the saved model, as evaluate.py plays it
    final = callback.evaluate(model.num_timesteps, agent=final_agent, games=args.final_eval_games, final=True)
    plot_curve(history, os.path.join(out, "learning_curve.png"),
               f"MaskablePPO, seed {args.seed}, {args.rules.num_deals} deals a game"
               + (f", after imitating {args.imitate}" if imitation else ""))
    wall = time.perf_counter() - wall_start
    config = {k: v for k, v in vars(args).items() if k not in ("rules", "pool", "hidden")}
    config["rules"], config["pool"] = args.rules.to_dict(), args.pool
    summary = {
        "config": config,
        "timesteps": model.num_timesteps,
        "timesteps_this_run": steps,
        "resumed_from": resume,
        "wall_time_s": round(wall, 2),
        "train_time_s": round(train_seconds, 2),
        "eval_time_s": round(callback.eval_seconds, 2),
        "env_steps_per_s": round(fps, 1),
        "env_steps_per_s_overall": round(steps / wall, 1) if wall > 0 else None,
        "ppo_updates": model._n_updates // max(model.n_epochs, 1),
        "imitation": imitation,
        "final_evaluation": {
            "agent": f"ppo:{model_path}", "games_per_table": args.final_eval_games, "seed": args.eval_seed,
            **{f"vs_{o}": r for o, r in final.items()}},
        "eval_history": history,
        "league": [p.name for p in league],
        "outputs": {"model": model_path, "checkpoint": checkpoint, "tensorboard": os.path.join(out, "tb"),
                    "learning_curve": os.path.join(out, "learning_curve.png")},
        "machine": {"load_average_start": [round(x, 2) for x in load_start],
                    "load_average_end": [round(x, 2) for x in os.getloadavg()], "cpus": os.cpu_count(),
                    "torch_threads": torch.get_num_threads(), "python": platform.python_version(),
                    "torch": torch.__version__, "stable_baselines3": stable_baselines3.__version__,
                    "sb3_contrib": sb3_contrib.__version__, "numpy": np.__version__},
    }
    with open(os.path.join(out, "summary.json"), "w") as file:
        json.dump(summary, file, indent=2, default=float)
    for opponent, r in final.items():
        print(f"final ({r['games']} games, duplicate): ppo vs {opponent},{opponent}: "
              f"{r['mean_points']:+.2f} points/game, 95% CI {_ci(r['ci95'])}, win rate {r['win_rate']:.1%}")
    print(f"wall time {wall:.1f} s; wrote {out}/model.zip, summary.json, learning_curve.png", flush=True)
    return summary


if __name__ == "__main__":
    main()
