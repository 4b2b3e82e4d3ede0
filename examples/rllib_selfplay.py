"""Train a 3-5-8 player with RLlib's PPO on the PettingZoo AEC env, locally or on a Ray cluster.

    pip install -e ".[rllib]"
    python examples/rllib_selfplay.py                                   # self-play, local Ray, 20 iterations
    python examples/rllib_selfplay.py --iterations 5 --option num_deals=3 --checkpoint-dir runs/rllib_quick
    python examples/rllib_selfplay.py --opponents heuristic,greedy,self  # fixed opponents in two seats
    python examples/rllib_selfplay.py --policy per-seat --num-env-runners 2
    python examples/rllib_selfplay.py --address auto --num-env-runners 32   # an existing Ray cluster
    sergeant-major evaluate --agents rllib-unsafe-pickle:runs/rllib/checkpoint,heuristic,greedy --games 600

The env is sergeant_major_env.env (PettingZoo AEC, agents player_0..2 = seats 0-2) wrapped by
RLlib's PettingZooEnv; an agent's reward is its points of each deal (so its episode return is
its game score). RLlib's new API stack runs it: env runners (Ray actors) play games and the
learner, in this process, runs the PPO updates.

Policies (--policy): "shared" (default) trains one module, "shared", for the three seats;
"per-seat" trains one module per seat ("seat_0", "seat_1", "seat_2"). Roles (dealer,
playmaker, third) rotate every deal within a game while RLlib maps an agent to one module
for a whole episode, so a module per seat is the per-agent split that RLlib can express.
Every learner module is RLlib's default PPO network (--hidden) with the env's action mask
applied to its logits (agents.rllib_agent.MaskedPPOTorchRLModule): illegal actions are
never sampled.

Opponents (--opponents A,B,...): in every game one seat, drawn at random, is the learner;
each other seat draws a member of this list: "self" (the learner itself, trained in that
seat too) or any fixed agent of agents.make_agent ("heuristic", "greedy", "random"),
wrapped as a non-trainable RLlib module (agents.rllib_agent.FixedAgentRLModule) that calls
the agent's batched act() on the env runner's batch. The default "self" is pure self-play.
Fixed opponents are RLlib modules rather than part of the env so that the env stays the
project's unmodified PettingZoo env and RLlib's multi-agent machinery (policy mapping,
per-module metrics) does the bookkeeping.

Ray: without --address the script starts a local Ray with --num-cpus CPUs (default: all)
and stops it at the end; --address ADDR (e.g. "auto" or "ray://head:10001") joins an
existing cluster, whose nodes need this project installed (pip install
"sergeant-major-env[rllib]"). --num-env-runners actors of --num-cpus-per-env-runner CPUs
each sample in parallel, each playing --num-envs-per-env-runner games at once.

Output: the final checkpoint (Algorithm.save_to_path) in --checkpoint-dir, loadable by
Algorithm.from_checkpoint and as evaluate.py's agent "rllib-unsafe-pickle:DIR" (the "shared"
module; with --policy per-seat name a module folder, DIR/learner_group/learner/rl_module/seat_0).
Loading an RLlib checkpoint unpickles it, which can run code stored in it: the agent's name
says so, and the short name "rllib:DIR" refuses. Load only checkpoints you trust.
Progress is printed per iteration: env steps (decisions of all seats), learner steps, env
steps per second (sampling and PPO update together), the learner's mean game score.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import random
import re
import sys
import time
import zlib
from pathlib import Path

SHARED = "shared"
SEAT_MODULES = ("seat_0", "seat_1", "seat_2")
AGENT_IDS = ("player_0", "player_1", "player_2")  # sergeant_major_env.aec.AGENTS
ENV_NAME = "sergeant_major_aec"
SELF = "self"


def parse_args(argv=None) -> argparse.Namespace:
    from sergeant_major_env.arguments import add_rule_options

    parser = argparse.ArgumentParser(
        prog="rllib_selfplay.py", description=__doc__.split("\n\n")[0].strip(),
        epilog="\n\n".join(__doc__.split("\n\n")[1:]), formatter_class=argparse.RawDescriptionHelpFormatter)
    g = parser.add_argument_group("run")
    g.add_argument("--iterations", type=int, default=20, metavar="N", help="training iterations (default 20)")
    g.add_argument("--checkpoint-dir", default="runs/rllib/checkpoint", metavar="DIR",
                   help="where the final checkpoint goes (default runs/rllib/checkpoint)")
    g.add_argument("--seed", type=int, default=0, metavar="S", help="RLlib's seed (env resets, networks; default 0)")
    add_rule_options(g)
    g = parser.add_argument_group("policies")
    g.add_argument("--policy", choices=("shared", "per-seat"), default="shared",
                   help="one module for the three seats (default) or one per seat")
    g.add_argument("--opponents", default=SELF, metavar="A,B",
                   help="what plays the seats other than the learner's: 'self' and/or fixed agents "
                        "(heuristic, greedy, random), drawn per seat and game (default: self)")
    g = parser.add_argument_group("Ray")
    g.add_argument("--address", default=None, metavar="ADDR",
                   help="join an existing Ray cluster (e.g. auto, ray://head:10001); default: start a local Ray")
    g.add_argument("--num-cpus", type=int, default=None, metavar="C",
                   help="CPUs of the local Ray (default: all of this machine); ignored with --address")
    g.add_argument("--num-env-runners", type=int, default=1, metavar="R",
                   help="sampling actors; 0 samples in this process (default 1)")
    g.add_argument("--num-cpus-per-env-runner", type=float, default=1, metavar="C", help="default 1")
    g.add_argument("--num-envs-per-env-runner", type=int, default=32, metavar="E",
                   help="games each env runner plays at once (default 32)")
    g.add_argument("--torch-threads", type=int, default=1, metavar="T",
                   help="torch threads of this process (the learner; env runners get one per CPU from Ray). "
                        "Default 1, as train.py: the networks are small, and on a busy machine a second "
                        "thread that waits for a core slows every step down")
    g = parser.add_argument_group("PPO")
    g.add_argument("--train-batch-size", type=int, default=4000, metavar="B",
                   help="env steps (decisions of all seats) sampled per iteration; the PPO update uses the "
                        "learner's share of them (default 4000)")
    g.add_argument("--minibatch-size", type=int, default=1000, metavar="M", help="default 1000")
    g.add_argument("--num-epochs", type=int, default=4, metavar="E", help="default 4")
    g.add_argument("--lr", type=float, default=3e-4, help="default 3e-4")
    g.add_argument("--gamma", type=float, default=0.995, help="default 0.995")
    g.add_argument("--entropy-coeff", type=float, default=0.01, help="default 0.01")
    g.add_argument("--hidden", default="128,128", metavar="H,H", help="hidden layers of the networks (default 128,128)")
    args = parser.parse_args(argv)
    check_args(parser, args)
    return args


def check_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Report every bad argument before Ray starts (exit status 2)."""
    from sergeant_major_env import Rules

    try:
        args.rules = Rules.from_strings(args.option)
    except ValueError as error:
        parser.error(str(error))
    args.opponent_names = [name.strip() for name in args.opponents.split(",") if name.strip()]
    if not args.opponent_names:
        parser.error("--opponents needs at least one name: self, or an agent such as heuristic")
    for name in set(args.opponent_names) - {SELF}:
        try:
            from sergeant_major_env.agents import make_agent

            make_agent(name)
        except ValueError as error:
            parser.error(f"--opponents: {error} (or {SELF!r}: the learner itself)")
    try:
        args.hidden_sizes = [int(size) for size in args.hidden.split(",")]
    except ValueError:
        parser.error(f"--hidden must be comma-separated layer sizes such as 128,128, got {args.hidden!r}")
    if min(args.iterations, args.num_envs_per_env_runner, args.torch_threads) < 1 or args.num_env_runners < 0:
        parser.error("--iterations, --num-envs-per-env-runner and --torch-threads must be at least 1, "
                     "--num-env-runners at least 0")
    if args.minibatch_size > args.train_batch_size:
        parser.error("--minibatch-size must not exceed --train-batch-size")


# ============================================================================ the RLlib config

def make_env(env_config: dict):
    """The PettingZoo AEC env (rule options from ``env_config``) in RLlib's PettingZooEnv."""
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    from sergeant_major_env import env

    return PettingZooEnv(env(**env_config))


def learner_modules(policy: str) -> tuple[str, ...]:
    return (SHARED,) if policy == "shared" else SEAT_MODULES


def fixed_module_id(name: str) -> str:
    """The module id of a fixed opponent: a folder name in checkpoints, so "ppo:runs/quick"
    becomes "fixed_ppo_runs_quick"."""
    return "fixed_" + re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def make_policy_mapping(policy: str, opponents: list[str]):
    """``policy_mapping_fn(agent_id, episode)``: the module that plays a seat for a whole game.

    RLlib asks once per seat and game; the game's choices (the learner's seat, each other
    seat's opponent) come from one generator seeded by the episode id, so the three answers
    of one game agree. Episode ids are random, so these draws are not reproduced by --seed."""
    def learner_module(seat: int) -> str:
        return SHARED if policy == "shared" else SEAT_MODULES[seat]

    def mapping(agent_id, episode, **kwargs) -> str:
        seat = AGENT_IDS.index(agent_id)
        draw = random.Random(zlib.crc32(str(episode.id_).encode()))
        learner_seat = draw.randrange(3)
        picks = [draw.choice(opponents) for _ in range(3)]
        if seat == learner_seat or picks[seat] == SELF:
            return learner_module(seat)
        return fixed_module_id(picks[seat])

    return mapping


def build_config(args: argparse.Namespace):
    """The PPOConfig of a run (the Ray session must exist already for env runners to start)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.tune.registry import register_env

    from sergeant_major_env.agents.rllib_agent import FixedAgentRLModule, MaskedPPOTorchRLModule

    if __name__ != "__main__":
        # Imported as a module (tests, notebooks): the Ray workers cannot import this script,
        # so ship its functions (env creator, policy mapping) by value, as for __main__.
        import ray.cloudpickle

        ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    register_env(ENV_NAME, make_env)
    trained = learner_modules(args.policy)
    fixed = sorted(set(args.opponent_names) - {SELF})
    network = DefaultModelConfig(fcnet_hiddens=args.hidden_sizes, fcnet_activation="tanh", vf_share_layers=False)
    specs = {module: RLModuleSpec(module_class=MaskedPPOTorchRLModule, model_config=network) for module in trained}
    specs.update({fixed_module_id(name): RLModuleSpec(module_class=FixedAgentRLModule,
                                                      model_config={"agent": name, "seed": args.seed})
                  for name in fixed})
    return (
        PPOConfig()
        # RLlib's env check steps random actions without the mask, which the env refuses (it
        # raises on an illegal action): PettingZoo's api_test covers the env in the test suite.
        .environment(ENV_NAME, env_config=args.rules.to_dict(), disable_env_checking=True)
        .env_runners(num_env_runners=args.num_env_runners, num_cpus_per_env_runner=args.num_cpus_per_env_runner,
                     num_envs_per_env_runner=args.num_envs_per_env_runner)
        .multi_agent(policies=set(trained) | {fixed_module_id(name) for name in fixed},
                     policy_mapping_fn=make_policy_mapping(args.policy, args.opponent_names),
                     policies_to_train=list(trained))
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
        .training(train_batch_size_per_learner=args.train_batch_size, minibatch_size=args.minibatch_size,
                  num_epochs=args.num_epochs, lr=args.lr, gamma=args.gamma, lambda_=0.95,
                  entropy_coeff=args.entropy_coeff, vf_loss_coeff=0.5, grad_clip=0.5)
        .debugging(seed=args.seed, log_level="ERROR")
    )


# ============================================================================ training

@dataclasses.dataclass
class Progress:
    """What one iteration did, read from RLlib's result dict."""

    iteration: int
    env_steps: int          # decisions of all seats, this iteration
    learner_steps: int      # decisions of the trained modules, this iteration
    seconds: float          # wall time of the iteration (sampling and PPO update)
    games: int              # games finished this iteration
    learner_score: float    # mean game score of the trained modules in those games (NaN if none)

    @property
    def env_steps_per_s(self) -> float:
        return self.env_steps / self.seconds

    def line(self, show_score: bool) -> str:
        shown = "n/a" if math.isnan(self.learner_score) else f"{self.learner_score:+.2f}"
        score = f"  learner's mean score {shown:>6}" if show_score else ""
        return (f"iter {self.iteration:>4}  env steps {self.env_steps:>7,}  learner steps {self.learner_steps:>7,}  "
                f"{self.env_steps_per_s:>6,.0f} env steps/s  games {self.games:>3}{score}")


def read_progress(result: dict, iteration: int, seconds: float, trained: tuple[str, ...]) -> Progress:
    from ray.rllib.utils.metrics import (
        ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED, NUM_EPISODES, NUM_MODULE_STEPS_SAMPLED)

    def count(value) -> int:  # RLlib reports NaN for a count it has no sample of yet
        return 0 if value is None or value != value else int(value)

    runners = result.get(ENV_RUNNER_RESULTS, {})
    module_steps = runners.get(NUM_MODULE_STEPS_SAMPLED, {})
    returns = runners.get("module_episode_returns_mean", {})
    scores = [returns[m] for m in trained if m in returns]
    return Progress(iteration=iteration, env_steps=count(runners.get(NUM_ENV_STEPS_SAMPLED)),
                    learner_steps=sum(count(module_steps.get(m)) for m in trained), seconds=seconds,
                    games=count(runners.get(NUM_EPISODES)),
                    learner_score=float(sum(scores) / len(scores)) if scores else float("nan"))


def train(args: argparse.Namespace, log=print) -> tuple[Path, list[Progress]]:
    """Build the algorithm, train --iterations, save the checkpoint; (checkpoint folder, progress)."""
    import torch

    previous_threads = torch.get_num_threads()
    torch.set_num_threads(args.torch_threads)
    algo = build_config(args).build_algo()
    trained = learner_modules(args.policy)
    history = []
    try:
        for iteration in range(1, args.iterations + 1):
            start = time.perf_counter()
            result = algo.train()
            history.append(read_progress(result, iteration, time.perf_counter() - start, trained))
            # In pure self-play the learner holds every seat: its mean score is 0 by construction (R25).
            log(history[-1].line(show_score=args.opponent_names != [SELF]))
        checkpoint = Path(args.checkpoint_dir).resolve()
        algo.save_to_path(str(checkpoint))
    finally:
        algo.stop()
        torch.set_num_threads(previous_threads)
    return checkpoint, history


def summary(history: list[Progress]) -> str:
    # The first iteration also starts the env runners' games: leave it out when there are more.
    steady = history[1:] or history
    steps = sum(p.env_steps for p in steady)
    seconds = sum(p.seconds for p in steady)
    return (f"{steps:,} env steps in {seconds:.1f} s over iterations {steady[0].iteration}-{steady[-1].iteration}: "
            f"{steps / seconds:,.0f} env steps/s (sampling and PPO updates)")


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        import ray
    except ImportError:
        print('rllib_selfplay.py: error: Ray RLlib is not installed: pip install "sergeant-major-env[rllib]"',
              file=sys.stderr)
        return 2
    started_here = not ray.is_initialized()
    if started_here:  # a caller (a test, a notebook) may have started Ray already
        ray.init(address=args.address, num_cpus=None if args.address else args.num_cpus,
                 include_dashboard=False, log_to_driver=False)
    try:
        checkpoint, history = train(args)
    finally:
        if started_here:
            ray.shutdown()
    print(summary(history))
    print(f"checkpoint: {checkpoint}")
    agent = f"rllib-unsafe-pickle:{checkpoint}"  # this run's own checkpoint: trusted
    if args.policy != "shared":
        agent += "/learner_group/learner/rl_module/seat_0"
    print(f"evaluate it: sergeant-major evaluate --agents {agent},heuristic,greedy --games 600")
    return 0


if __name__ == "__main__":
    sys.exit(main())
