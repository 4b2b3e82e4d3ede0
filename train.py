"""Train a 3-5-8 player with MaskablePPO (sb3-contrib) over the batched SergeantMajorVecEnv.

    python train.py                                    # the default run: ~8 min on 2 CPU cores
    python train.py --total-timesteps 200000 --option num_deals=3 --name quick
    python train.py --opponents heuristic=1,self=1 --no-curriculum
    python train.py --resume runs/quick                # continue a run (its own options) from its checkpoint
    python evaluate.py --agents ppo:runs/quick,heuristic,heuristic --games 600

One learner plays --num-envs games at once in ONE batched engine state; its seat rotates
over the games of each slot (seat (slot + game number) % 3), so it learns all three roles
(dealer, playmaker, third). Rewards are each deal's points (an episode's rewards sum to the
learner's final score). The two other seats of a game are played by opponents drawn from a
pool when the game starts (SergeantMajorVecEnv.set_opponent_pool): each opponent round calls
each pool member once on all the games waiting on it.

Opponent pool (--opponents NAME=WEIGHT,...): any agents.make_agent name ("random",
"greedy", "heuristic", "ppo:RUN" of an earlier run) and "self", the self-play league: a
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
plays in all three seats (each seat's decisions labelled, from the raw engine:
training/imitation.py). PPO then starts from a player close to the teacher instead of
from random play (see the longer recipe below).

Evaluation: at the start and every --eval-every timesteps the learner (its most likely
legal action, no sampling: agents.PPOAgent on the live model) plays --eval-games
duplicate-deal games (sergeant_major_env.evaluation.play_tables) at the table "learner,
random, random" and at "learner, heuristic, heuristic", with the same deals each time
(--eval-seed). Its mean points per game with a 95% interval are logged to TensorBoard
(eval/*) and to eval_history.json. At the end the saved policy plays --final-eval-games
games at both tables as agents.make_agent("ppo:OUT"), exactly as evaluate.py plays it: the
final table of summary.json.

Outputs in --out (default runs/<--name>, or runs/<timestamp>, "-2", "-3" ... if taken; a
folder that already holds files is refused unless --overwrite, which empties it first):
run.json (written at the start: every option, the rule options, observation layout version,
network shape, the command lines that ran it), policy.safetensors + policy.json (the final
policy as code-free files: agent "ppo:OUT", see agents/policy_file.py), model.zip (the final
SB3 model, for MaskablePPO.load or agent "ppo-unsafe-pickle:OUT/model.zip": it unpickles),
summary.json (configuration, timesteps, wall time, env steps per second, final evaluation
table with 95% CIs, machine load; whether the run completed or was interrupted),
learning_curve.png (eval mean points vs timesteps with 95% bands, vs random and vs
heuristic), eval_history.json, checkpoints/model_<timesteps>.zip (every --checkpoint-every
timesteps and at the end, with the optimizer state, for --resume), league/self_<timesteps>
.safetensors + .json (the league's snapshots, policy files too) and tb/ (TensorBoard: SB3's
rollout/train/time curves, eval/*, imitation/*, curriculum/* weights and
rollout/ep_rew_vs_<opponent>: the learner's mean game score against each opponent kind).
Every file but TensorBoard's logs is written to a temporary name and renamed once complete.
Throughput (env steps per second: learner decisions, with the PPO updates included,
evaluation and checkpoints excluded) is printed and recorded.

Reproducibility: --seed seeds Python, numpy, torch (SB3's set_random_seed), the engine's
games (slot i plays seeds S+i, S+i+N, ...), the opponents' and the pool's generators and
the evaluation deals (numpy's and torch's global generators get --seed modulo 2**32, the
most they take). The same command on the same machine (same library versions, torch on
CPU with one thread, as set here: agents/torch_setup.py) reproduces the same run: same
model, same curves. Limits:
GPU kernels, another torch thread count or library version may change floating-point sums;
a resumed run is not bit-identical to an uninterrupted one (the games in progress and the
generators' states are not checkpointed: the resumed env starts new games from seed
--seed + timesteps done, and the rollout boundary restarts).

Resume (--resume RUN, or one checkpoint RUN/checkpoints/model_T.zip): the run continues with
its own options, read from RUN/run.json (rule options, network, PPO settings, opponents,
seeds: everything). An option given again with another value is an error naming both;
only --total-timesteps (it may be raised), --out, --device, --no-progress, --eval-every,
--eval-games, --final-eval-games and --checkpoint-every may change. The network, optimizer
state and timestep count come from the newest checkpoint; a broken one (truncated, bad
data) is reported and the previous one is used. The league snapshots and the evaluation
history are reloaded from RUN. Output goes to RUN unless --out names a new folder.
--resume loads the run's own SB3 checkpoint with MaskablePPO.load, which unpickles it:
resume only runs you trust (your own). Nothing else train.py reads unpickles.

Interrupts: Ctrl-C (SIGINT) or SIGTERM finishes the current env step (or imitation chunk;
an evaluation in progress is dropped), then saves a checkpoint, the model files and a
summary marked "interrupted", prints the --resume command and exits with status 130
(SIGINT) or 143 (SIGTERM). The PPO update of the unfinished rollout is lost: at most
--num-envs x --n-steps timesteps are counted but not learned from. An interrupted
imitation continues, with the steps still to do, on --resume.

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
(evaluate.py --agents ppo:runs/NAME,heuristic,heuristic --games 1200 --seed 0).
"""

from __future__ import annotations

import os
import platform
import shutil
import sys
import time
from pathlib import Path

import numpy as np

import agents
from agents import PPOAgent
from sergeant_major_env import files
from sergeant_major_env.cards import NUM_ACTIONS
from sergeant_major_env.evaluation import play_tables
from sergeant_major_env.observation import OBSERVATION_SIZE
from sergeant_major_env.observation import VERSION as OBSERVATION_VERSION
from sergeant_major_env.seeding import seed_argument
from training import options, run_folder
from training.imitation import imitate
from training.options import integer, layer_sizes, number, run_name
from training.stopping import StopSignals, TrainingStopped

TRAIN_EXTRA = 'pip install -e ".[train]"'
TRAIN_EXTRA_MODULES = ("safetensors", "tensorboard", "matplotlib", "tqdm")
"""The train extra's modules imported only when used (policy files, logs, the plot, the bar)."""
try:  # The train extra. Missing, it is reported after parsing (require_train_extra), so that
    # --help and usage errors work without it; the classes below are then never used.
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.logger import configure
    from stable_baselines3.common.utils import set_random_seed
    from stable_baselines3.common.vec_env import VecEnvWrapper

    from agents import policy_file
    from agents.torch_setup import use_torch_threads
    from sergeant_major_env import SergeantMajorVecEnv  # an SB3 VecEnv
    MISSING_EXTRA = None
except ImportError as missing:
    MISSING_EXTRA = missing.name
    BaseCallback = VecEnvWrapper = object


# ============================================================================ options

def build_parser() -> options.OneLineParser:
    """Every option, one line of help each; --help adds its default and the values it allows."""
    parser = options.OneLineParser(
        prog="train.py", description=__doc__.split("\n\n")[0].strip(), epilog="\n\n".join(__doc__.split("\n\n")[1:]),
        formatter_class=options.HelpFormatter)
    option = parser.add_argument_group("run").add_argument
    option("--total-timesteps", type=integer(1), default=2_000_000, metavar="T",
           help="learner decisions (env steps) to train for, in all (--resume may raise it)")
    option("--num-envs", type=integer(1, 1_000_000), default=256, metavar="N", help="games played in parallel")
    option("--seed", type=seed_argument, default=0, metavar="S", help="seed of everything, 0 to 2**63-1")
    option("--option", "--options", dest="option", action="extend", nargs="+", default=[], metavar="NAME=VALUE",
           help="rule options (RULES.md section 9), e.g. num_deals=3 exchanges=false")
    option("--name", type=run_name, default=None, help="run name: output in runs/NAME (default: a new timestamp)")
    option("--out", default=None, metavar="DIR", help="output folder (default runs/NAME; on --resume, RUN itself)")
    option("--overwrite", action="store_true", help="empty the output folder first if it holds a run (else refused)")
    option("--resume", default=None, metavar="RUN",
           help="continue a run folder or checkpoint .zip with its own options (it unpickles: your own runs only)")
    option("--device", default="cpu", help="torch device of the learner: cpu, cuda, cuda:N, mps or auto")
    option("--no-progress", action="store_true", help="no progress bar")

    option = parser.add_argument_group("opponents").add_argument
    option("--opponents", default="random=1,greedy=1,heuristic=2,self=2", metavar="NAME=W,...",
           help="opponent pool and weights: agents.make_agent names and 'self', the league of learner snapshots")
    option("--opponent-pairs", choices=("same", "independent"), default="same",
           help="same: one pool member plays both opponent seats of a game; independent: one draw per seat")
    option("--no-curriculum", dest="curriculum", action="store_false",
           help="constant pool weights (default: a curriculum from weak to strong opponents)")
    option("--curriculum-end", type=number(0, 1, low_open=True), default=0.5, metavar="F",
           help="fraction of the run after which the --opponents weights hold")
    option("--snapshot-every", type=integer(1), default=20, metavar="K", help="PPO updates between league snapshots")
    option("--league-size", type=integer(1), default=3, metavar="M", help="snapshots kept in the league (the latest)")
    option("--snapshot-actions", choices=("sample", "argmax"), default="sample",
           help="snapshots play a sample of their masked policy, or its most likely action")

    option = parser.add_argument_group("imitation warm start").add_argument
    option("--imitate", default="none", metavar="AGENT",
           help="before PPO, copy this agent's moves and fit the value to its returns ('heuristic', ...)")
    option("--imitate-steps", type=integer(0), default=1_000_000, metavar="T",
           help="teacher decisions to learn from (not counted in --total-timesteps)")
    option("--imitate-lr", type=number(0, 1, low_open=True), default=1e-3, metavar="LR", help="imitation learning rate")
    option("--imitate-epochs", type=integer(1), default=2, metavar="E",
           help="passes over each chunk of num_envs * n_steps teacher decisions")

    option = parser.add_argument_group("network and PPO").add_argument
    option("--net-arch", type=layer_sizes, default="128,128", metavar="H,H",
           help="hidden layer sizes of the policy and of the (separate) value network")
    option("--learning-rate", type=number(0, 1, low_open=True), default=3e-4, metavar="LR", help="Adam learning rate")
    option("--anneal-lr", action="store_true", help="decay the learning rate linearly to 0 over the run")
    option("--n-steps", type=integer(1), default=16, metavar="K", help="steps per game slot per rollout")
    option("--batch-size", type=integer(2), default=1024, metavar="B", help="minibatch size")
    option("--n-epochs", type=integer(1), default=4, metavar="E", help="epochs per rollout")
    option("--gamma", type=number(0, 1), default=0.995, help="discount factor")
    option("--gae-lambda", type=number(0, 1), default=0.95, help="GAE lambda")
    option("--clip-range", type=number(0, 1, low_open=True), default=0.2, help="PPO clip range")
    option("--reward-scale", type=number(0, low_open=True), default=1.0, metavar="C",
           help="PPO's rewards are each deal's points times C (logged returns stay in points)")
    option("--ent-coef", type=number(0), default=0.01, help="entropy bonus coefficient")
    option("--vf-coef", type=number(0), default=0.5, help="value loss coefficient")
    option("--max-grad-norm", type=number(0, low_open=True), default=0.5, help="gradient clipping norm")

    option = parser.add_argument_group("evaluation and checkpoints").add_argument
    option("--eval-every", type=integer(0), default=500_000, metavar="T",
           help="timesteps between evaluations (0: only the final one)")
    option("--eval-games", type=integer(1), default=180, metavar="G",
           help="games per evaluation table, rounded up to a multiple of 6")
    option("--final-eval-games", type=integer(1), default=600, metavar="G", help="games per final evaluation table")
    option("--eval-seed", type=seed_argument, default=1_000_000, metavar="S",
           help="first engine seed of the evaluation deals, the same at every evaluation")
    option("--checkpoint-every", type=integer(0), default=1_000_000, metavar="T",
           help="timesteps between checkpoints (0: only at the end; an interrupt writes one too)")
    return parser


def parse_args(argv=None):
    """The checked options (training/options.py): every problem is one line and exit status 2,
    before anything is created; with --resume, the run's own options (run.json)."""
    return options.parse(build_parser, argv)


def usage_error(message: str):
    build_parser().error(message)


def fail(message: str):
    """A problem found before training (not a usage error): one line, exit status 1."""
    sys.exit(f"train.py: error: {message}")


def require_train_extra() -> None:
    """One line naming the extra to install, before any work, if part of it is missing."""
    import importlib.util

    missing = MISSING_EXTRA or next((m for m in TRAIN_EXTRA_MODULES if importlib.util.find_spec(m) is None), None)
    if missing is not None:
        sys.exit(f"train.py: error: training needs the train extra ({missing} is not installed): {TRAIN_EXTRA}")


def check_device(device: str) -> None:
    """A usage error unless torch can use --device here."""
    try:
        options.check_device(device)
    except ValueError as error:
        usage_error(str(error))


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

    def logits(self, observations: np.ndarray) -> np.ndarray:
        net = self.net
        obs = torch.as_tensor(np.asarray(observations, dtype=np.float32), device=net.device)
        with torch.no_grad():
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
        table = [learner, agents.make_agent(opponent), agents.make_agent(opponent)]
        result = play_tables(table, games=games, seed=seed, rules=rules, progress=False,
                             names=["ppo", opponent, opponent + "#2"])
        stats = result.agent("ppo")
        out[opponent] = {"mean_points": stats.mean_points, "ci95": stats.ci95, "win_rate": stats.win_rate,
                         "mean_place": stats.mean_place, "games": result.games, "table": result.to_dict()}
    return out


def plot_curve(history: list[dict], path: Path, title: str) -> None:
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
    if axes.get_legend_handles_labels()[0]:
        axes.legend()
    figure.tight_layout()
    with files.atomic_write(path, "wb") as file:
        figure.savefig(file, format="png", dpi=120)
    plt.close(figure)


# ============================================================================ the callback

class TrainingCallback(BaseCallback):
    """Curriculum weights, league snapshots, per-opponent returns, evaluations, checkpoints,
    progress bar: everything periodic, at rollout boundaries; and the stop request, after
    every env step."""

    def __init__(self, args, env, members: dict, league: list, out: Path, history: list,
                 stop: StopSignals) -> None:
        super().__init__()
        self.args, self.env, self.members, self.league, self.out, self.history = args, env, members, league, out, history
        self.stop = stop
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
            self.snapshot(t)
        self.set_pool(t)
        if t >= self.next_eval:
            self.evaluate(t)
            self.next_eval = t + args.eval_every
        if t >= self.next_checkpoint:
            self.checkpoint(t)
            self.next_checkpoint = (t // args.checkpoint_every + 1) * args.checkpoint_every

    def snapshot(self, t: int) -> None:
        """A frozen copy of the learner joins the league; on disk as a policy file (for --resume)."""
        args = self.args
        self.league.append(TorchPolicy(self.model.policy, f"self@{t}", sample=args.snapshot_actions == "sample"))
        folder = self.out / "league"
        folder.mkdir(exist_ok=True)
        policy_file.save_policy(self.model.policy, folder / league_file(t),
                                {"rules": args.rules.to_dict(), "league_snapshot": {"timesteps": t}})
        for dropped in self.league[:-args.league_size]:  # only the league's snapshots stay on disk
            path = folder / league_file(int(dropped.name[5:]))
            for stale in (path, path.with_suffix(".json")):
                if stale.exists():
                    stale.unlink()
        del self.league[:-args.league_size]

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
        return not self.stop.requested  # False ends model.learn after this step

    def evaluate(self, t: int, agent=None, games: int | None = None, final: bool = False) -> dict | None:
        """Evaluate ``agent`` (default: the live learner, playing as "ppo:RUN" does: the most
        likely legal action), log the curves, append to the history. A stop signal drops
        the evaluation (None)."""
        start = time.perf_counter()
        learner = agent if agent is not None else PPOAgent.from_sb3(self.model, "learner")
        try:
            with self.stop.abandonable():
                result = evaluate(learner, games or self.args.eval_games, self.args.eval_seed, self.args.rules)
        except TrainingStopped:
            self.eval_seconds += time.perf_counter() - start
            return None
        row = {"timesteps": t, "final": True} if final else {"timesteps": t}
        for opponent, r in result.items():
            row[opponent] = {k: v for k, v in r.items() if k != "table"}
            self.logger.record(f"eval/vs_{opponent}_mean_points", r["mean_points"])
            if r["ci95"]:
                self.logger.record(f"eval/vs_{opponent}_ci95_low", r["ci95"][0])
                self.logger.record(f"eval/vs_{opponent}_ci95_high", r["ci95"][1])
            self.logger.record(f"eval/vs_{opponent}_win_rate", r["win_rate"])
        self.history.append(row)
        files.write_json(self.out / "eval_history.json", self.history, indent=1)
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

    def checkpoint(self, t: int) -> Path:
        start = time.perf_counter()
        path = run_folder.save_sb3_model(self.model, self.out / run_folder.CHECKPOINTS / run_folder.checkpoint_name(t))
        self.checkpoint_seconds += time.perf_counter() - start
        return path

    def _on_training_end(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _ci(ci) -> str:
    return "[n/a]" if not ci else f"[{ci[0]:+.1f}, {ci[1]:+.1f}]"


def league_file(t: int) -> str:
    return f"self_{t:012d}.safetensors"


# ============================================================================ setting up

def make_opponents(args) -> dict:
    """The fixed opponents by name (the league is "self"); a bad name is a usage error."""
    members = {}
    try:
        for name in args.pool:
            if name != "self":
                members[name] = agents.make_agent(name)
        if args.imitate != "none":
            agents.make_agent(args.imitate)
    except ValueError as error:
        usage_error(f"argument --opponents/--imitate: {error}")
    return members


def new_model(args, venv):
    lr = args.learning_rate
    schedule = (lambda remaining: lr * remaining) if args.anneal_lr else lr
    return MaskablePPO(
        "MlpPolicy", venv, learning_rate=schedule, n_steps=args.n_steps, batch_size=args.batch_size,
        n_epochs=args.n_epochs, gamma=args.gamma, gae_lambda=args.gae_lambda, clip_range=args.clip_range,
        ent_coef=args.ent_coef, vf_coef=args.vf_coef, max_grad_norm=args.max_grad_norm,
        policy_kwargs=dict(net_arch=dict(pi=args.net_arch, vf=args.net_arch)), seed=sb3_seed(args.seed),
        device=args.device, verbose=0)


def sb3_seed(seed: int) -> int:
    return seed % 2**32  # numpy's global generator (SB3's set_random_seed) takes at most 2**32 - 1


class SpacesMismatch(ValueError):
    """A checkpoint for other observations or actions: an error, not a broken file to skip."""


def load_resumed_model(args, env, venv):
    """The newest good checkpoint of the resumed run, loaded for this env (MaskablePPO.load:
    it unpickles the run's own file). Broken ones are skipped with one line each."""
    if args.resume_note:
        print(args.resume_note, flush=True)
    expected = (tuple(venv.observation_space.shape), int(venv.action_space.n))

    def load(path: Path):
        shape, actions = run_folder.checkpoint_spaces(path)
        if (shape, actions) != expected:
            raise SpacesMismatch(
                f"checkpoint {path} was trained on observations of shape {shape} with {actions} actions; this run's "
                f"env gives shape {expected[0]} with {expected[1]} actions (observation version "
                f"{OBSERVATION_VERSION}, rule options {args.rules.to_dict()})")
        return MaskablePPO.load(path, env=venv, device=args.device)

    try:
        path, model = run_folder.load_first_good(args.resume_checkpoints, load, log=lambda line: print(
            f"train.py: {line}", file=sys.stderr, flush=True), fatal=(SpacesMismatch,))
    except ValueError as error:
        fail(f"--resume {args.resume}: {error}")
    done = model.num_timesteps
    set_random_seed(sb3_seed(args.seed + done))
    env.seed(args.seed + done)  # new deals: each slot's next seeds are beyond those already played
    return model, path


def open_output_folder(args) -> tuple[Path, bool]:
    """(the run folder, whether this command created it), made only now, after every check."""
    if args.in_place:
        folder, created = args.out_folder, False
    else:
        existed = args.out_folder is not None and args.out_folder.exists()
        folder = run_folder.create_run_folder(args.out_folder, Path("runs"), overwrite=args.overwrite)
        created = not existed
    (folder / run_folder.CHECKPOINTS).mkdir(exist_ok=True)
    return folder, created


def package_versions() -> dict:
    import importlib.metadata

    versions = {"python": platform.python_version()}
    for package in ("sergeant-major-env", "numpy", "torch", "stable-baselines3", "sb3-contrib", "safetensors"):
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            versions[package] = None
    return versions


def write_run_record(args, out: Path, model, resumed_from: Path | None) -> None:
    """run.json: everything needed to continue the run and to play its policy."""
    earlier = run_folder.read_run_record(args.resume_run) if args.resume_run else None
    run_folder.write_run_record(out, {
        "options": args.run_options,
        "rules": args.rules.to_dict(),
        "observation": {"version": OBSERVATION_VERSION, "size": OBSERVATION_SIZE},
        "actions": NUM_ACTIONS,
        "network": policy_file.describe_sb3_policy(model.policy),
        "commands": (earlier or {}).get("commands", []) + [args.command],
        "resumed_from": None if resumed_from is None else str(resumed_from),
        "device": args.device,
        "packages": package_versions(),
    })


def load_league(args, model, done: int, out: Path) -> list[TorchPolicy]:
    """The resumed run's league snapshots (policy files, read without unpickling), copied
    into ``out`` when the run continues in another folder."""
    if "self" not in args.pool or not args.resume_run:
        return []
    folder = args.resume_run / "league"
    if list(folder.glob("self_*.pt")):
        print(f"note: {folder} has league snapshots saved with torch.save (self_*.pt); they are not loaded "
              f"(torch.load unpickles): the league starts empty", flush=True)
    league = []
    paths = [p for p in sorted(folder.glob("self_*.safetensors")) if int(p.stem[5:]) <= done]
    for path in paths[-args.league_size:]:
        t = int(path.stem[5:])
        snapshot = TorchPolicy(model.policy, f"self@{t}", sample=args.snapshot_actions == "sample")
        snapshot.net.load_state_dict(policy_file.read_tensors(path))
        league.append(snapshot)
        if out.resolve() != args.resume_run.resolve():
            (out / "league").mkdir(exist_ok=True)
            for source in (path, path.with_suffix(".json")):
                shutil.copyfile(source, out / "league" / source.name)
    return league


def load_history(args, done: int) -> list[dict]:
    if not args.resume_run:
        return []
    history = run_folder.read_json_or_none(args.resume_run / "eval_history.json")
    return [h for h in history if h["timesteps"] <= done] if isinstance(history, list) else []


def unfinished_imitation(args) -> dict | None:
    """The imitation record of the resumed run if its imitation was interrupted, else None."""
    if not args.resume_run or args.imitate == "none":
        return None
    summary = run_folder.read_json_or_none(args.resume_run / "summary.json")
    record = summary.get("imitation") if isinstance(summary, dict) else None
    return record if isinstance(record, dict) and record.get("complete") is False else None


def previous_status(args) -> str | None:
    summary = run_folder.read_json_or_none(args.resume_run / "summary.json") if args.resume_run else None
    return summary.get("status", "complete") if isinstance(summary, dict) else None


def policy_metadata(args, timesteps: int) -> dict:
    """What policy.json says beside the network: how the policy was trained."""
    return {"rules": args.rules.to_dict(),
            "training": {"command": args.command, "timesteps": timesteps, "seed": args.seed,
                         "options": args.run_options},
            "packages": package_versions()}


# ============================================================================ main

def main(argv=None) -> dict:
    wall_start = time.perf_counter()
    args = parse_args(argv)
    require_train_extra()
    check_device(args.device)
    use_torch_threads()
    load_start = os.getloadavg()
    members = make_opponents(args)

    # Environment and model (seeded: SB3 seeds python, numpy, torch and the env).
    env = SergeantMajorVecEnv(args.num_envs, seed=args.seed, rules=args.rules)
    venv = ScaleReward(env, args.reward_scale) if args.reward_scale != 1 else env
    model, resumed_from = load_resumed_model(args, env, venv) if args.resume else (new_model(args, venv), None)
    done = model.num_timesteps
    if args.total_timesteps < done or (args.total_timesteps == done and previous_status(args) == "complete"):
        usage_error(f"argument --total-timesteps: the run has done {done:,} timesteps already; give a larger "
                    f"--total-timesteps to train it further (it was {args.total_timesteps})")

    # The run folder: created now that every check has passed; removed again if setting up fails.
    out, created = open_output_folder(args)
    try:
        write_run_record(args, out, model, resumed_from)
        league = load_league(args, model, done, out)
        history = load_history(args, done)
        earlier_imitation = unfinished_imitation(args)
        model.set_logger(configure(str(out / "tb"), ["tensorboard"]))
    except BaseException:
        if created:
            shutil.rmtree(out, ignore_errors=True)
        raise
    with StopSignals() as stop:
        return train_and_save(args, env, model, members, league, history, earlier_imitation, out, resumed_from,
                              stop, wall_start, load_start)


def train_and_save(args, env, model, members, league, history, earlier_imitation, out, resumed_from, stop,
                   wall_start, load_start) -> dict:
    done = model.num_timesteps
    callback = TrainingCallback(args, env, members, league, out, history, stop)
    callback.init_callback(model)
    callback.set_pool(done)
    imitation = None
    if (args.imitate != "none" and not args.resume) or earlier_imitation:
        imitation = imitate(model, args, model.logger, stop, earlier_imitation)

    # Train.
    train_start = time.perf_counter()
    if args.total_timesteps > done and not stop.requested:
        print(f"training {args.total_timesteps - done:,} timesteps, {args.num_envs} games in parallel, "
              f"output in {out}", flush=True)
        model.learn(args.total_timesteps - done, callback=callback, reset_num_timesteps=not args.resume,
                    progress_bar=False)
    train_seconds = time.perf_counter() - train_start
    steps = model.num_timesteps - done
    learn_seconds = train_seconds - callback.eval_seconds - callback.checkpoint_seconds
    fps = steps / learn_seconds if learn_seconds > 0 and steps else float("nan")
    if steps:
        print(f"{steps:,} env steps in {train_seconds:.1f} s: {fps:,.0f} env steps/s "
              f"(learner updates included; {callback.eval_seconds:.1f} s of evaluation and "
              f"{callback.checkpoint_seconds:.1f} s of checkpoints excluded)", flush=True)

    # Save (even when stopped: a signal is only read here), evaluate, summarize.
    t = model.num_timesteps
    checkpoint = callback.checkpoint(t)
    model_path = run_folder.save_sb3_model(model, out / "model.zip")
    policy_path = policy_file.save_policy(model.policy, out, policy_metadata(args, t))
    final = None
    if not stop.requested:  # the saved policy, as evaluate.py plays it
        final = callback.evaluate(t, agent=agents.make_agent(f"ppo:{out}"), games=args.final_eval_games, final=True)
    plot_curve(history, out / "learning_curve.png",
               f"MaskablePPO, seed {args.seed}, {args.rules.num_deals} deals a game"
               + (f", after imitating {args.imitate}" if imitation else ""))
    wall = time.perf_counter() - wall_start
    phase = "imitation" if imitation and not imitation["complete"] else \
        "final evaluation" if t >= args.total_timesteps else "ppo"
    summary = {
        "status": "interrupted" if stop.requested else "complete",
        "interrupted": {"signal": stop.name, "during": phase, "resume": f"python train.py --resume {out}"}
        if stop.requested else None,
        "config": {**args.run_options, "rules": args.rules.to_dict(), "pool": args.pool, "out": str(out),
                   "device": args.device, "resume": args.resume, "command": args.command},
        "timesteps": t,
        "timesteps_this_run": steps,
        "resumed_from": None if resumed_from is None else str(resumed_from),
        "wall_time_s": round(wall, 2),
        "train_time_s": round(train_seconds, 2),
        "eval_time_s": round(callback.eval_seconds, 2),
        "env_steps_per_s": round(fps, 1),
        "env_steps_per_s_overall": round(steps / wall, 1) if wall > 0 else None,
        "ppo_updates": model._n_updates // max(model.n_epochs, 1),
        "imitation": imitation,
        "final_evaluation": None if final is None else {
            "agent": f"ppo:{out}", "games_per_table": args.final_eval_games, "seed": args.eval_seed,
            **{f"vs_{o}": r for o, r in final.items()}},
        "eval_history": history,
        "league": [p.name for p in league],
        "outputs": {"run_record": str(out / run_folder.RUN_FILE), "policy": str(policy_path),
                    "policy_metadata": str(policy_path.with_suffix(".json")), "model": str(model_path),
                    "checkpoint": str(checkpoint), "tensorboard": str(out / "tb"),
                    "learning_curve": str(out / "learning_curve.png")},
        "machine": {"load_average_start": [round(x, 2) for x in load_start],
                    "load_average_end": [round(x, 2) for x in os.getloadavg()], "cpus": os.cpu_count(),
                    "torch_threads": torch.get_num_threads(), **package_versions()},
    }
    files.write_json(out / "summary.json", summary, default=float)
    for opponent, r in (final or {}).items():
        print(f"final ({r['games']} games, duplicate): ppo vs {opponent},{opponent}: "
              f"{r['mean_points']:+.2f} points/game, 95% CI {_ci(r['ci95'])}, win rate {r['win_rate']:.1%}")
    print(f"wall time {wall:.1f} s; wrote {out}/policy.safetensors, policy.json, model.zip, summary.json, "
          f"learning_curve.png", flush=True)
    if stop.requested:
        print(f"train.py: interrupted by {stop.name} during {phase} at {t:,} timesteps; the run is saved. "
              f"Continue it with: python train.py --resume {out}", file=sys.stderr, flush=True)
        sys.exit(stop.exit_status)
    return summary


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # Ctrl-C before training started (nothing to save yet)
        print("train.py: interrupted before training started; nothing was saved", file=sys.stderr)
        sys.exit(130)
