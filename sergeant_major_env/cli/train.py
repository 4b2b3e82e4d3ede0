"""Train a 3-5-8 player with MaskablePPO (sb3-contrib) over the batched SergeantMajorVecEnv.

    sergeant-major train                                    # the default run: beats the heuristic, ~6 min on 2 cores
    sergeant-major train --name quick --total-timesteps 200000 --imitate-steps 100000 --option num_deals=3 \\
        --eval-games 60 --final-eval-games 60   # about 40 s, 1.2 GB (docs: Speed and results)
    sergeant-major train --opponents heuristic=1,self=1 --no-curriculum
    sergeant-major train --resume runs/quick                # continue a run (its own options) from its checkpoint
    sergeant-major evaluate --agents ppo:runs/quick,heuristic,heuristic --games 60    # what its last line says

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
"self" has weight 0 until the first snapshot exists. The weights are the members' shares of
the games: each name once, each weight above 0; a name alone plays every game (--opponents
self: pure self-play, against the learner itself until the first snapshot). The weight follows
the last "=", so an agent with options ends with its weight: pimc:worlds=8=1.

Curriculum (on by default, --no-curriculum to turn it off): during the first
--curriculum-end fraction of the run the pool weights move linearly from the weak members
only (random and greedy, at their --opponents weights) to the full --opponents weights, which
then hold to the end. Without weak members in the pool the weights are constant.

Imitation warm start (--imitate heuristic, the default; --imitate none starts PPO from random
play): before PPO, the network learns to copy an agent's moves (behaviour cloning:
cross-entropy of the masked logits) and the value network the returns of its games, over
--imitate-steps decisions of games the teacher plays in all three seats (each seat's
decisions labelled, from the raw engine, in shuffled rounds of --imitate-round decisions with
a falling learning rate: sergeant_major_env.training.imitation). PPO then starts from a player close to the
teacher instead of from random play.

Starting from a policy (--init learned, learned-ppo, a run folder or its policy.safetensors):
PPO starts from that policy's weights, read from its code-free files, with no imitation
unless --imitate is given; its networks must have --net-arch and --activation (learned's:
128,128 relu, the defaults). sergeant-major exploit trains its best responses this way.

The defaults are one measured run (docs: Training): 1.2M imitated decisions of the
heuristic (ReLU 128x128 networks), then 3M PPO timesteps against two heuristics (the player
to beat), 512 games at once, 2 epochs a rollout (the update is most of the CPU), a small
learning rate annealed to 0 and a small entropy bonus, so PPO refines the imitated player
instead of unlearning it.

Evaluation: at the start and every --eval-every timesteps the learner (its most likely
legal action, no sampling: agents.PPOAgent on the live model) plays --eval-games
duplicate-deal games (sergeant_major_env.evaluation.play_tables) at the table "learner,
X, X" for each X of --eval-opponents (default: "learner, random, random" and "learner,
heuristic, heuristic"), with the same deals each time (--eval-seed). Its mean points per
game with a 95% interval are logged to TensorBoard (eval/*) and to eval_history.json (with
its mean in each duplicate group, which pairs two evaluations deal by deal). At the end the
saved policy plays --final-eval-games games at every table as agents.make_agent("ppo:OUT"),
exactly as sergeant-major evaluate plays it: the final table of summary.json.

Outputs in --out (default runs/<--name>, or runs/<timestamp>, "-2", "-3" ... if taken; a
folder that already holds files is refused unless --overwrite, which empties it first):
run.json (written at the start: every option, the rule options, observation layout version,
network shape, the command lines that ran it), policy.safetensors + policy.json (the final
policy as code-free files: agent "ppo:OUT", see sergeant_major_env.agents.policy_file), model.zip (the final
SB3 model, for MaskablePPO.load or agent "ppo-unsafe-pickle:OUT/model.zip": it unpickles),
summary.json (configuration, timesteps, wall time, env steps per second, final evaluation
table with 95% CIs, machine load; whether the run completed or was interrupted),
learning_curve.png (eval mean points vs timesteps with 95% bands, one line per evaluation
table), eval_history.json, checkpoints/model_<timesteps>.zip (every --checkpoint-every
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
CPU with one thread, as set here: sergeant_major_env.agents.torch_setup) reproduces the same run: same
model, same curves. Limits:
GPU kernels, another torch thread count or library version may change floating-point sums;
a resumed run is not bit-identical to an uninterrupted one (the games in progress and the
generators' states are not checkpointed: the resumed env starts new games from seed
--seed + timesteps done, and the rollout boundary restarts).

Options: every option is a field of one typed, frozen config
(sergeant_major_env.training.train_config.TrainConfig) from which this parser is built; the config
checks every value when it is made (ranges, the network's size, the memory the run holds at
once against this machine's, the derived seeds). A run name (--name) is 1 to 100 letters,
digits, '.', '_' or '-'. The human agent cannot train nor be imitated (it needs a person at
a terminal): refused at once.

Resume (--resume RUN, or one checkpoint RUN/checkpoints/model_T.zip): the run continues with
its own options, read from RUN/run.json (rule options, network, PPO settings, opponents,
seeds: everything), rebuilt through the same checks as the command line's: a value this
command refuses is refused in run.json too (one line naming the option and what is allowed,
exit status 2, nothing written). run.json is read only if at most 1 MB and nested at most 32
deep, and its observation layout must be this package's. An option given again with another
value is an error naming both; only --total-timesteps (it may be raised), --out, --name,
--device, --no-progress, --eval-every, --eval-games, --final-eval-games and
--checkpoint-every may change. The network, optimizer
state and timestep count come from the newest checkpoint; a broken one (truncated, bad
data) is reported and the previous one is used. The league snapshots and the evaluation
history are reloaded from RUN. Output goes to RUN unless --out names a new folder.
--resume loads the run's own SB3 checkpoint with MaskablePPO.load, which unpickles it:
resume only runs you trust (your own). Nothing else this command reads unpickles.

A file that cannot be written (a full disk): one line, "sergeant-major train: error: cannot
write FILE: REASON", exit status 1. A new run without a checkpoint yet is removed (nothing is
left behind); a run with a checkpoint of its own, or one resumed in its own folder, is kept at
its last checkpoint and the line gives the --resume command that continues it.

Interrupts: Ctrl-C (SIGINT) or SIGTERM finishes the current env step (or imitation pass;
an evaluation in progress is dropped), then saves a checkpoint, the model files and a
summary marked "interrupted", prints the --resume command and exits with status 130
(SIGINT) or 143 (SIGTERM). The PPO update of the unfinished rollout is lost: at most
--num-envs x --n-steps timesteps are counted but not learned from. An interrupted
imitation continues, with the steps still to do, on --resume.

Longer runs: more imitation (--imitate-steps), wider networks (--net-arch 256,256) and more
PPO timesteps, with the league in the pool (--opponents heuristic=3,self=1); the docs' Speed
and results page says what has been measured.
"""

from __future__ import annotations

import shlex
import shutil
import sys
import time
from pathlib import Path

import sergeant_major_env.agents as agents
from sergeant_major_env import files
from sergeant_major_env.training import imitation, learning_curve, run_folder
from sergeant_major_env.training.train_config import TrainConfig

from . import train_plan
from .train_plan import Plan
from sergeant_major_env.training.stopping import StopSignals

TRAIN_EXTRA = 'pip install "sergeant-major-env[train]" (in a checkout of the repository: pip install -e ".[train]")'
TRAIN_EXTRA_MODULES = ("safetensors", "tensorboard", "matplotlib", "tqdm")
"""The train extra's modules imported only when used (policy files, logs, the plot, the bar)."""
try:  # The train extra (torch, SB3). Missing, it is reported after parsing (require_train_extra),
    # so that --help and usage errors work without it.
    from stable_baselines3.common.logger import configure

    from sergeant_major_env.agents.torch_setup import unchecked_distributions, use_torch_threads
    from sergeant_major_env import SergeantMajorVecEnv  # an SB3 VecEnv
    from sergeant_major_env.training import export, learner
    from sergeant_major_env.training.callbacks import TrainingCallback
    from sergeant_major_env.training.league import League
    MISSING_EXTRA = None
except ImportError as missing:
    MISSING_EXTRA = missing.name

PROG = "sergeant-major train"

# The pieces main uses: cli/train_plan.py (the command line and --resume's run read into a
# Plan), and in the training package train_config.py (every option, typed and checked: TrainConfig),
# learner.py (a new MaskablePPO or the resumed checkpoint), league.py (snapshots, opponent
# pool, curriculum), imitation.py (the warm start), callbacks.py (everything periodic while PPO
# learns), learning_curve.py (the evaluation tables, the learning curve), export.py (run.json, model
# files, summary.json), run_folder.py (the folder, checkpoints), stopping.py (SIGINT, SIGTERM).


# ============================================================================ options

def build_parser() -> train_plan.OneLineParser:
    """Every option of `TrainConfig`, one line of help each; --help adds its default and
    the values it allows."""
    return train_plan.build_parser(PROG, description=__doc__.split("\n\n")[0].strip(),
                                   epilog="\n\n".join(__doc__.split("\n\n")[1:]))


def parse_args(argv=None) -> Plan:
    """The checked options (cli/train_plan.py): every problem is one line and exit status 2,
    before anything is created; with --resume, the run's own options (run.json)."""
    return train_plan.parse(build_parser(), argv)


def usage_error(message: str):
    build_parser().error(message)


def fail(message: str):
    """A problem found before or during training (not a usage error): one line, exit status 1."""
    sys.exit(f"{PROG}: error: {message}")


def require_train_extra() -> None:
    """One line naming the extra to install, before any work, if part of it is missing."""
    import importlib.util

    missing = MISSING_EXTRA or next((m for m in TRAIN_EXTRA_MODULES if importlib.util.find_spec(m) is None), None)
    if missing is not None:
        fail(f"training needs the train extra ({missing} is not installed): {TRAIN_EXTRA}")


# ============================================================================ main

def main(argv=None) -> int:
    """`sergeant-major train`: train as the options say; 0 when the run is complete (after a
    stop signal it saves and exits 130, 143 or 129; a problem is one line and exit status 1 or 2).
    A stop signal before training starts is the dispatcher's (`sergeant_major_env.interrupts`):
    one line, nothing saved, no folder left."""
    train(argv)
    return 0


def train(argv=None, continue_command: str | None = None) -> dict:
    """Train as the options say; returns summary.json's record (after a stop signal: saves, exits 130, 143 or 129).
    `continue_command`: the command that continues the run, for the line after a stop signal
    (default `sergeant-major train --resume RUN`; `sergeant-major exploit` names its own)."""
    started = time.perf_counter()
    plan = parse_args(argv)
    config = plan.config
    require_train_extra()
    check_device(config.device)
    use_torch_threads()
    clock = export.Clock(started)  # it reads the load average now
    opponents = make_opponents(config)
    init = load_init(config)

    # The env and the learner (seeded: SB3 seeds python, numpy, torch and the env).
    env = SergeantMajorVecEnv(config.num_envs, seed=config.seed, rules=config.rules)
    venv = learner.ScaleReward(env, config.reward_scale) if config.reward_scale != 1 else env
    model, resumed_from = resume_learner(plan, env, venv) if config.resume else (learner.new_model(config, venv, init), None)
    check_timesteps_left(plan, model.num_timesteps)
    out, created = open_run_folder(plan)
    with write_failures(plan, out, created, model):
        with run_folder.removed_on_failure(out, created):  # a failed start leaves no folder behind
            league, history, earlier_imitation = start_run(plan, out, model, resumed_from)
        with StopSignals() as stop, unchecked_distributions():  # the same numbers, without torch's checks
            callback = TrainingCallback(config, env, opponents, league, out, history, stop)
            callback.init_callback(model)
            callback.set_pool(model.num_timesteps)
            imitated = warm_start(config, model, stop, earlier_imitation)
            learn(config, model, callback, out, stop, clock)

            # Save (even when stopped: a signal is only read here), evaluate, summarize.
            checkpoint = callback.checkpoint(model.num_timesteps)
            saved = {**export.save_model_files(plan, model, out), "checkpoint": str(checkpoint)}
            final = None if stop.requested else callback.evaluate(  # the saved policy, as evaluate plays it
                model.num_timesteps, agent=agents.make_agent(f"ppo:{out}"), games=config.final_eval_games,
                final=True)
            learning_curve.plot_curve(history, out / "learning_curve.png", curve_title(config, imitated),
                                      config.eval_tables)
            summary = export.run_summary(plan, out, model, stop=stop, clock=clock,
                                         eval_seconds=callback.eval_seconds, resumed_from=resumed_from,
                                         imitation=imitated, final=final, history=history, league=league.names,
                                         saved=saved)
            files.write_json(out / "summary.json", summary, default=float)
    report(out, summary, final, stop, continue_command)
    return summary


def check_device(device: str) -> None:
    """A usage error unless torch can use --device here."""
    try:
        train_plan.check_device(device)
    except ValueError as error:
        usage_error(str(error))


def make_opponents(config: TrainConfig) -> dict:
    """The fixed opponents by name (the league is "self"); a name that makes no agent, in
    --opponents, --imitate or --eval-opponents, is a usage error naming the option."""
    members = {}
    named = (("--opponents", [name for name in config.pool if name != "self"]),
             ("--imitate", [config.imitate] if config.imitate != "none" else []),
             ("--eval-opponents", list(config.eval_tables)))
    for flag, names in named:
        for name in names:
            try:
                agent = agents.make_agent(name)
            except ValueError as error:
                usage_error(f"argument {flag}: {error}")
            if flag == "--opponents":
                members[name] = agent
    return members


def load_init(config: TrainConfig):
    """--init's policy network (None: new weights), loaded and checked before any work; a policy
    that cannot be loaded or does not fit the run is a usage error. A resumed run's weights
    come from its checkpoint."""
    if config.resume:
        return None
    try:
        return learner.init_network(config)
    except ValueError as error:
        usage_error(f"argument --init: {error}")


def resume_learner(plan: Plan, env, venv):
    """(model, checkpoint) of the resumed run: its newest good checkpoint (MaskablePPO.load, which
    unpickles the run's own file); none that loads is one line, exit status 1."""
    if plan.resume_note:
        print(plan.resume_note, flush=True)
    try:
        return learner.load_checkpoint(plan.config, plan.resume_checkpoints, env, venv)
    except ValueError as error:
        fail(f"--resume {plan.config.resume}: {error}")


def check_timesteps_left(plan: Plan, done: int) -> None:
    """A resumed run trains on only if --total-timesteps is beyond its timesteps (or equal to them
    when it was interrupted, to finish it)."""
    total = plan.config.total_timesteps
    finished = total == done and run_folder.earlier_status(plan.resume_run) == "complete"
    if total < done or finished:
        usage_error(f"argument --total-timesteps: the run has done {done:,} timesteps already; give a larger "
                    f"--total-timesteps to train it further (it was {total})")


def open_run_folder(plan: Plan) -> tuple[Path, bool]:
    """(the run folder, whether this command created it), now that every check has passed."""
    try:
        return run_folder.open_run_folder(plan.out_folder, plan.in_place, plan.config.overwrite)
    except OSError as error:
        fail(f"cannot create the run folder {error.filename or plan.out_folder or 'runs/'}: "
             f"{error.strerror or error}")


def start_run(plan: Plan, out: Path, model, resumed_from):
    """(league, evaluation history, unfinished imitation record) of the run in `out`: run.json
    written, and what the resumed run left (its league, evaluations, unfinished imitation)."""
    config, done = plan.config, model.num_timesteps
    export.write_run_record(plan, out, model, resumed_from)
    league = League(out, config.league_size, sample=config.snapshot_actions == "sample", rules=config.rules)
    if "self" in config.pool and plan.resume_run:
        league.load(plan.resume_run, done)
    history = run_folder.earlier_eval_history(plan.resume_run, done)
    earlier_imitation = run_folder.unfinished_imitation(plan.resume_run) if config.imitate != "none" else None
    model.set_logger(configure(str(out / "tb"), ["tensorboard"]))
    return league, history, earlier_imitation


class write_failures:
    """A file of the run that cannot be written (a full disk, a quota, a read-only folder) ends
    the command with one line and exit status 1. A run with a checkpoint of its own (or resumed
    in its own folder) is kept, resumable, and the line says how; a new run without one is
    removed (`run_folder.removed_on_failure`), leaving nothing behind."""

    def __init__(self, plan: Plan, out: Path, created: bool, model) -> None:
        self.plan, self.out, self.created, self.model = plan, out, created, model

    def __enter__(self) -> "write_failures":
        return self

    def __exit__(self, kind, error, traceback) -> bool:
        if not isinstance(error, OSError):
            return False
        logger = getattr(self.model, "_logger", None)
        if logger is not None:
            logger.close()  # TensorBoard's open event file
        what = error.filename or self.out
        reason = error.strerror or str(error)
        if self.plan.in_place or run_folder.find_checkpoints(self.out):
            fail(f"cannot write {what}: {reason}; the run is kept at its last checkpoint: free some space and "
                 f"continue it with {PROG} --resume {shlex.quote(str(self.out))}")
        if self.created:
            shutil.rmtree(self.out, ignore_errors=True)
        elif self.out.is_dir():
            run_folder.empty_folder(self.out)  # it was empty (or emptied by --overwrite) when the run began
        fail(f"cannot write {what}: {reason}; nothing of the run was kept")


def warm_start(config: TrainConfig, model, stop, earlier_imitation: dict | None) -> dict | None:
    """--imitate: behaviour cloning before PPO (on --resume only to finish an interrupted one)."""
    if (config.imitate != "none" and not config.resume) or earlier_imitation:
        return imitation.imitate(model, config, model.logger, stop, earlier_imitation)
    return None


def learn(config: TrainConfig, model, callback, out, stop, clock) -> None:
    """PPO up to --total-timesteps (not after a stop signal); its steps and times go to `clock`."""
    done = model.num_timesteps
    start = time.perf_counter()
    if config.total_timesteps > done and not stop.requested:
        print(f"training {config.total_timesteps - done:,} timesteps, {config.num_envs} games in parallel, "
              f"output in {out}", flush=True)
        model.learn(config.total_timesteps - done, callback=callback, reset_num_timesteps=not config.resume,
                    progress_bar=False)
    clock.learned(model.num_timesteps - done, time.perf_counter() - start,
                  callback.eval_seconds + callback.checkpoint_seconds)
    if clock.steps:
        print(f"{clock.steps:,} env steps in {clock.train_seconds:.1f} s: {clock.steps_per_second:,.0f} env steps/s "
              f"(learner updates included; {callback.eval_seconds:.1f} s of evaluation and "
              f"{callback.checkpoint_seconds:.1f} s of checkpoints excluded)", flush=True)


def curve_title(config: TrainConfig, imitated: dict | None) -> str:
    return (f"MaskablePPO, seed {config.seed}, {config.rules.num_deals} deals a game"
            + (f", after imitating {config.imitate}" if imitated else ""))


def report(out, summary: dict, final: dict | None, stop: StopSignals, continue_command: str | None = None) -> None:
    """The last lines: the final evaluation, the files and how to evaluate the run; after a stop
    signal, how to resume (then exit 128+N)."""
    for opponent, r in (final or {}).items():
        print(f"final ({r['games']} games, duplicate): ppo vs {opponent},{opponent}: {r['mean_points']:+.2f} "
              f"points/game, 95% CI {learning_curve.ci_text(r['ci95'])}, win rate {r['win_rate']:.1%}")
    print(f"wall time {summary['wall_time_s']:.1f} s; wrote {out}/policy.safetensors, policy.json, model.zip, "
          f"summary.json, learning_curve.png", flush=True)
    if stop.requested:
        print(f"{PROG}: interrupted by {stop.name} during {summary['interrupted']['during']} at "
              f"{summary['timesteps']:,} timesteps; the run is saved. Continue it with: "
              f"{continue_command or PROG + ' --resume ' + shlex.quote(str(out))}", file=sys.stderr, flush=True)
        sys.exit(stop.exit_status)
    print(f"evaluate it: {evaluate_command(out, summary)}", flush=True)


def evaluate_command(out, summary: dict) -> str:
    """The command that plays the run's policy (under the rule options it was trained with)
    against two copies of its last evaluation opponent (the heuristic by default), as the final
    evaluation did."""
    config = summary["config"]
    games, opponent = str(config["final_eval_games"]), config.get("eval_opponents", "heuristic").split(",")[-1]
    return shlex.join(["sergeant-major", "evaluate", "--agents", f"ppo:{out},{opponent},{opponent}", "--games", games,
                       "--seed", str(config["eval_seed"])])


if __name__ == "__main__":  # as `sergeant-major train`, with its handling of stop signals
    from sergeant_major_env.cli import run

    run(["train", *sys.argv[1:]])
