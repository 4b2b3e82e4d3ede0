"""sergeant-major distill: label positions with the search, and fit a policy to the labels.

    sergeant-major distill labels --out labels/r1 --games 2000                 # pimc:rollout=learned on learned's games
    sergeant-major distill labels --out labels/r1 --games 4000                 # the same labels, 2000 games more
    sergeant-major distill labels --out labels/h --player heuristic --epsilon 0.1 --teacher pimc:worlds=32
    sergeant-major distill labels --out labels/r2 --games 100000 --ray --address auto   # on a Ray cluster
    sergeant-major distill fit --labels labels/r1 --out runs/distilled          # from the shipped learned policy
    sergeant-major evaluate --agents ppo:runs/distilled,pimc,pimc --games 120
    sergeant-major distill curve --labels labels/r1 --out runs/curve --counts 0,100000,300000   # strength per label count
    sergeant-major distill belief --out runs/belief                            # a belief model, for pimc:belief=runs/belief
    sergeant-major distill rounds --out runs/rounds --rounds 2                 # search then distil, twice over

`labels` plays games with --player in every seat and asks --teacher (a pimc spec) for its
value of every legal action at each decision with a real choice; the labels go to --out in
shards of --shard-games games, made in --workers processes (one per CPU by default), or with
--ray as Ray tasks, one a shard, on a local Ray or the cluster at --address (every node needs
this project installed; Ray comes with pip install "sergeant-major-env[rllib]"): each task
sends its shard back and this process writes it. The labels never depend on --workers or
--ray. Ctrl-C (or a crash) keeps every finished shard: the same command continues with the
missing ones, and a larger --games adds shards.

`fit` starts from a policy file (--init: `learned`, the shipped policy, by default, or a
run folder / policy file) and fits it to the labels of one or more --labels folders:
cross-entropy to the teacher's choice where it beats the policy's own by more than --margin
points (else to the policy's own choice), or to the softmax of its values at --temperature
points, and the value head to the position's value (--value-weight). Measure the result on
other deals than the labels' games (their default seed is far from evaluate's). It writes OUT/policy.safetensors
and OUT/policy.json (code-free; play it as ppo:OUT) and OUT/fit.json (the options, the label
count, and per epoch the held-out agreement with the teacher's choice); any of them already in
OUT is replaced only with --overwrite. Every label is checked before the fit (one line naming
the file, array and row of anything malformed), and a folder given twice is refused.

`curve` fits the same way to the first N labels for each N of --counts and plays each fit
at two duplicate tables on deals of its own --seed (head to head against --against, and
against two heuristics); it writes the fits, curve.json (after every point: the same command
continues a stopped curve) and curve.png, replacing a file it did not write only with --overwrite.

`belief` plays --games games with --players at the tables (every mix of them), keeps every
position with a real choice (the seat's observation, and where each unseen card truly is) and
fits a belief model to them (sergeant_major_env.training.belief): OUT/belief.safetensors
and OUT/belief.json (code-free; the search uses it as `pimc:belief=OUT`), each replaced only
with --overwrite, checked before any work. It prints the held-out measures of the model and of
uniform worlds.

`rounds` repeats search then distil (expert iteration): in round k the policy of round
k-1 (--init in round 1) plays --games games, the search with it inside (--teacher, its
`{policy}` the policy) labels them, the policy fitted to those labels is round k's
(OUT/round-K, play it as ppo:OUT/round-K), and it is measured on fresh deals (--table-seed)
head to head against round k-1's and against two pimc. OUT/rounds.json records every
stage's command and result as it finishes (the same command continues a stopped run, and a
larger --rounds adds rounds); OUT/rounds.png plots them.

The machinery and the label format are in sergeant_major_env.training.distill (the rounds in
sergeant_major_env.training.rounds).
Exit status: 0 done, 2 bad arguments (checked before any work), 1 the work failed, 130, 143
or 129 stopped by Ctrl-C, SIGTERM or SIGHUP (finished shards are kept; a fit writes nothing).
"""

from __future__ import annotations

import argparse
import dataclasses
import shlex
import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from .. import files, interrupts
from ..processes import available_cpus
from ..progress import progress_bar
from ..rules import Rules
from ..statistics import format_ci
from ..training.belief import BeliefOptions
from ..training.distill import CURVE_SEED, FitOptions, LabelPlan
from ..training.rounds import RoundsPlan
from .. import arguments
from ..arguments import (FLAG, REAL, WHOLE, HelpFormatter, OneLineParser, Parsed, Text, Texts, add_arguments, check_fields,
                        make_config, opt, parse_command, subcommand)

PROG = "sergeant-major distill"


PLAN = LabelPlan()
MAX_WORKERS = 256
"""The most --workers a distill command takes."""


@dataclasses.dataclass(frozen=True)
class LabelsOptions:
    """`distill labels`'s options; the attribute docstrings are their lines of `--help`."""

    out: str | None = opt(None, Text(optional=True), metavar="FOLDER", required=True)
    """the labels folder (created; resumed if it holds labels of the same options)"""
    teacher: str = opt(PLAN.teacher, Text(), metavar="PIMC")
    """the search bot, a pimc spec"""
    player: str = opt(PLAN.player, Text(), metavar="AGENT")
    """the agent playing the games in all three seats"""
    epsilon: float = opt(PLAN.epsilon, REAL, metavar="P")
    """chance of a random legal move instead of the player's"""
    games: int = arguments.games(PLAN.games)
    """games to label"""
    shard_games: int = opt(PLAN.shard_games, WHOLE, metavar="K")
    """games per shard, the unit of resuming"""
    seed: int = arguments.seed(PLAN.seed)
    """game g plays engine seed S+g"""
    option: tuple[str, ...] = arguments.rule_options(())
    workers: int | None = arguments.workers(most=MAX_WORKERS)
    no_progress: bool = arguments.no_progress()
    ray: bool = opt(False, FLAG, kind="flag")
    """make the shards as Ray tasks (the same labels as without; instead of --workers)"""
    address: str | None = opt(None, Text(optional=True), metavar="ADDR")
    """with --ray: the Ray cluster to join (e.g. auto, ray://head:10001); default: a local Ray"""

    def __post_init__(self) -> None:
        check_fields(self)


@dataclasses.dataclass(frozen=True)
class FitCommandOptions:
    """`distill fit`'s options besides `FitOptions`'."""

    labels: tuple[str, ...] | None = opt(None, Texts(), metavar="FOLDER", kind="values", required=True)
    """labels folders"""
    out: str | None = opt(None, Text(optional=True), metavar="FOLDER", required=True)
    """where the fitted policy is written"""
    overwrite: bool = arguments.overwrite()
    """replace policy.safetensors, policy.json and fit.json already in --out"""
    init: str = opt("learned", Text(), metavar="POLICY")
    """the policy to start from: learned or learned-ppo (shipped), a run folder or a policy file"""
    limit: int | None = opt(None, WHOLE, metavar="N")
    """use only the first N labels (default: all; a curve over label counts uses several)"""

    def __post_init__(self) -> None:
        check_fields(self)


def _counts(text: str) -> tuple[int, ...]:
    try:
        counts = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected label counts separated by commas (0,150000,450000), got {text!r}")
    if not counts or min(counts) < 0 or len(set(counts)) != len(counts):
        raise argparse.ArgumentTypeError(f"label counts must be distinct and at least 0, got {text!r}")
    return counts


@dataclasses.dataclass(frozen=True)
class CurveOptions:
    """`distill curve`'s options besides `FitOptions`'
    (whose seed is --fit-seed here: `CURVE_RENAMED`)."""

    labels: tuple[str, ...] | None = opt(None, Texts(), metavar="FOLDER", kind="values", required=True)
    """labels folders"""
    out: str | None = opt(None, Text(optional=True), metavar="FOLDER", required=True)
    """where the fits, curve.json and curve.png are written (continued if it holds a curve of the same options)"""
    counts: tuple[int, ...] | None = opt(None, Parsed(_counts, "label counts"), metavar="N,N,...", required=True)
    """label counts, e.g. 0,150000,450000 (0: the starting policy itself)"""
    init: str = opt("learned", Text(), metavar="POLICY")
    """the policy every fit starts from: learned or learned-ppo (shipped), a run folder or a policy file"""
    against: str = opt("learned", Text(), metavar="AGENT")
    """the head-to-head opponent"""
    games: int = arguments.games(600)
    """games per table"""
    seed: int = arguments.seed(CURVE_SEED)
    """the tables' deals, as evaluate's --seed (not the labels' deals)"""
    workers: int | None = arguments.workers(most=MAX_WORKERS)
    no_progress: bool = arguments.no_progress()
    overwrite: bool = arguments.overwrite()
    """replace files in --out that another command wrote (curve.png, a point's policy)"""

    def __post_init__(self) -> None:
        check_fields(self)


def _names(text: str) -> tuple[str, ...]:
    names = tuple(part.strip() for part in text.split(","))
    if not all(names):
        raise argparse.ArgumentTypeError(f"expected agent names separated by commas (heuristic,learned), got {text!r}")
    return names


def _sizes(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected layer sizes separated by commas (256,256), got {text!r}") from None


BELIEF = BeliefOptions()


@dataclasses.dataclass(frozen=True)
class BeliefCommandOptions:
    """`distill belief`'s options (`BeliefOptions`)."""

    out: str | None = opt(None, Text(optional=True), metavar="FOLDER", required=True)
    """where belief.safetensors and belief.json are written"""
    overwrite: bool = arguments.overwrite()
    """replace belief.safetensors and belief.json already in --out"""
    games: int = arguments.games(BELIEF.games)
    """games played for positions"""
    seed: int = arguments.seed(BELIEF.seed)
    """game g plays engine seed S+g (keep it apart from evaluation seeds)"""
    players: tuple[str, ...] = opt(BELIEF.players, Parsed(_names, "agent names"), metavar="A,B,...")
    """the agents at the tables, e.g. heuristic,learned (every mix of them)"""
    layers: tuple[int, ...] = opt(BELIEF.layers, Parsed(_sizes, "layer sizes"), metavar="N,N,...")
    """the network's hidden layer sizes"""
    epochs: int = opt(BELIEF.epochs, WHOLE, metavar="E")
    """passes over the positions"""
    batch_size: int = opt(BELIEF.batch_size, WHOLE, metavar="B")
    """positions per step"""
    learning_rate: float = opt(BELIEF.learning_rate, REAL, metavar="LR")
    """Adam's step size"""
    holdout: float = opt(BELIEF.holdout, REAL, metavar="P")
    """share of the games held out for measuring"""
    fit_seed: int = arguments.seed(BELIEF.fit_seed, flag="--fit-seed")
    """seeds the network's first weights and the positions' order"""
    option: tuple[str, ...] = arguments.rule_options(())
    no_progress: bool = arguments.no_progress()

    def __post_init__(self) -> None:
        check_fields(self)


ROUNDS = RoundsPlan()


@dataclasses.dataclass(frozen=True)
class RoundsCommandOptions:
    """`distill rounds`'s options besides `FitOptions`'
    (whose seed is --fit-seed here, as the curve's)."""

    out: str | None = opt(None, Text(optional=True), metavar="FOLDER", required=True)
    """the rounds folder (created; continued if it holds rounds of the same options)"""
    rounds: int = opt(ROUNDS.rounds, WHOLE, metavar="N")
    """rounds of labels, fit and tables"""
    from_round: int = opt(ROUNDS.from_round, WHOLE, metavar="K")
    """the round --init is (2 for learned-r2): this run makes rounds K+1, K+2, ..., whose label
    games follow round K's"""
    games: int = arguments.games(ROUNDS.games)
    """label games a round"""
    init: str = opt(ROUNDS.init, Text(), metavar="POLICY")
    """round K's policy (K: --from-round): learned, learned-ppo or a ladder rung such as learned-r2
    (shipped), a run folder or a policy file"""
    teacher: str = opt(ROUNDS.teacher, Text(), metavar="PIMC")
    """the search that labels, a pimc spec; {policy} is the round's starting policy"""
    shard_games: int = opt(ROUNDS.shard_games, WHOLE, metavar="K")
    """label games per shard, the unit of resuming"""
    seed: int = arguments.seed(ROUNDS.seed)
    """round k's label games play the engine seeds S+(k-1)*GAMES on"""
    table_games: int = opt(ROUNDS.table_games, WHOLE, metavar="N")
    """games per measuring table"""
    table_seed: int = arguments.seed(ROUNDS.table_seed, flag="--table-seed")
    """the measuring tables' deals, as evaluate's --seed (not the labels' deals)"""
    option: tuple[str, ...] = arguments.rule_options(())
    workers: int | None = arguments.workers(most=MAX_WORKERS)
    no_progress: bool = arguments.no_progress()

    def __post_init__(self) -> None:
        check_fields(self)


CURVE_RENAMED = {"seed": "fit_seed"}
"""The curve's --seed is its tables' deals (as evaluate's); the fit's seed is --fit-seed there."""
FITTED = {FitCommandOptions: None, CurveOptions: CURVE_RENAMED, RoundsCommandOptions: CURVE_RENAMED}
"""The commands that fit: {their options: FitOptions' renamed flags}."""


def _parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog=PROG, description=__doc__.split("\n\n")[0],
                           epilog="\n\n".join(__doc__.split("\n\n")[1:]), formatter_class=HelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    subcommand(commands, "labels", LabelsOptions, help="label positions with a search bot's action values",
               description="Play games with --player and label each decision with a real choice with --teacher's "
                           "value of every legal action.")
    fitting = subcommand(commands, "fit", FitCommandOptions, help="fit a policy to labels",
                         description="Fit a policy file's network to the labels of one or more folders.")
    add_arguments(fitting, FitOptions)
    curve = subcommand(commands, "curve", CurveOptions,
                       help="the fitted policy's strength against the number of labels",
                       description="Fit the policy to the first N labels for each N of --counts and measure each "
                                   "fit at two duplicate tables on fresh deals: head to head (X,--against,heuristic) "
                                   "and X,heuristic,heuristic. Each point is kept as it is measured: the same "
                                   "command continues a stopped curve.")
    add_arguments(curve, FitOptions, CURVE_RENAMED)
    rounds = subcommand(commands, "rounds", RoundsCommandOptions, help="rounds of search then distil (expert iteration)",
                        description="Repeat: the policy plays games, the search with it inside labels them, the "
                                    "policy fitted to the labels is the next round's; each round measured head to "
                                    "head against the previous one and against two pimc on fresh deals. Every "
                                    "finished stage is kept: the same command continues a stopped run.")
    add_arguments(rounds, FitOptions, CURVE_RENAMED)
    subcommand(commands, "belief", BeliefCommandOptions, help="train a belief model (where the unseen cards are)",
               description="Play games with --players, keep each position with a real choice and where every "
                           "unseen card is, and fit a belief model for pimc:belief=OUT.")
    return parser


# ============================================================================ labels

def _check_ray(args: LabelsOptions, parser: argparse.ArgumentParser) -> None:
    """--ray and --address: each refusal one line, before any folder."""
    from ..ray_jobs import RAY_EXTRA

    if args.address is not None and not args.ray:
        parser.error("--address needs --ray (it names the Ray cluster that makes the labels)")
    if args.ray and args.workers is not None:
        parser.error("--workers counts processes of this machine; with --ray the Ray tasks make the shards: "
                     "give one or the other")
    if args.ray:
        try:
            import ray  # noqa: F401  (only checked here; make_labels imports it again)
        except ImportError:
            parser.error(f"--ray needs Ray: {RAY_EXTRA}")


def _labels_command(args: LabelsOptions, parser: argparse.ArgumentParser) -> int:
    from ..training import distill

    _check_ray(args, parser)
    try:
        plan = distill.LabelPlan(teacher=args.teacher, player=args.player, epsilon=float(args.epsilon),
                                 games=args.games, shard_games=args.shard_games, seed=args.seed,
                                 rules=Rules.from_strings(args.option)).check()
        workers = min(available_cpus(), MAX_WORKERS) if args.workers is None else args.workers
        distill.build_agents(plan)  # an unknown or unsuitable agent: a usage error, before any folder
        missing = distill.open_labels(Path(args.out), plan)
    except ValueError as error:
        parser.error(str(error))
    except OSError as error:
        parser.error(f"cannot use --out {args.out}: {error.strerror or error}")
    where = (f"on the Ray cluster at {args.address}" if args.address else "on a local Ray") if args.ray \
        else f"{workers} worker(s)"
    print(f"{len(missing)} of {plan.shards} shards to make in {args.out} ({plan.games} games, teacher "
          f"{plan.teacher}, player {plan.player}, {where})", file=sys.stderr, flush=True)
    estimate = sum(min(plan.shard_games, plan.games - shard * plan.shard_games) for shard in missing) \
        * plan.rules.num_deals * distill.LABELS_PER_DEAL
    bar = progress_bar(estimate, "label", enabled=not args.no_progress and bool(missing))
    try:
        done = distill.make_labels(args.out, plan, workers, on_labels=bar.update if bar is not None else lambda count: None,
                                   ray=args.ray, ray_address=args.address)
    except KeyboardInterrupt as error:
        interrupts.say(f"{PROG}: {interrupts.describe(error)}; the finished shards are kept: run the same command "
                       f"to continue")
        return interrupts.exit_status(error)
    except OSError as error:
        print(f"{PROG}: error: cannot write a shard in {args.out}: {error.strerror or error}", file=sys.stderr)
        return 1
    finally:
        if bar is not None:
            bar.close()
    rate = done["labels"] / done["seconds"] if done["seconds"] > 0 else 0.0
    per_worker = "" if args.ray else f", {rate / workers:.1f} per worker"
    print(f"made {done['labels']:,} labels in {done['shards']} shards in {done['seconds']:.0f} s "
          f"({rate:.1f} labels/s{per_worker}); {args.out} is complete for {plan.games} games")
    return 0


# ============================================================================ fit

def _fit_command(args: FitCommandOptions, fit: FitOptions, parser: argparse.ArgumentParser,
                 argv: list[str]) -> int:
    from ..agents.learned import policy_source
    from ..agents.policy_file import TENSORS_FILE, load_policy, save_network
    from ..training import distill

    out = Path(args.out)
    init = policy_source(args.init)
    try:
        options = fit.check()
        if args.limit is not None and args.limit < 1:
            raise ValueError(f"--limit must be at least 1, got {args.limit}")
        distill.check_out_folder(out, distill.FIT_FILES, args.overwrite)
        distill.check_out_apart(out, args.labels)
        network, metadata = load_policy(init)
        plans = distill.read_plans(args.labels)
        labels = distill.load_labels(args.labels, args.limit)
        distill.check_held_out(labels, options)
    except ValueError as error:
        parser.error(str(error))
    count = int(labels["action"].size)
    print(f"fitting {init} to {count:,} labels of {', '.join(args.labels)} ({options.epochs} epochs)",
          file=sys.stderr, flush=True)
    start = time.perf_counter()
    try:
        history = distill.fit_policy(network, labels, options, on_epoch=lambda row: print(
            f"epoch {row['epoch']}: train loss {row['train_loss']:.4f}, " + (
                "no held-out games" if row["holdout_agreement"] is None else
                f"held-out cross-entropy {row['holdout_cross_entropy']:.4f}, agreement with the teacher "
                f"{row['holdout_agreement']:.1%}"), file=sys.stderr, flush=True))
    except KeyboardInterrupt as error:
        interrupts.say(f"{PROG}: {interrupts.describe(error)}; nothing written")
        return interrupts.exit_status(error)
    command = shlex.join(["sergeant-major", "distill", *argv])
    label_commands = [dataclasses.replace(plan, games=distill.games_made(Path(folder), plan)).command(folder)
                      for folder, plan in zip(args.labels, plans)]
    made = {"from": str(args.init), "labels": [str(folder) for folder in args.labels], "label_count": count,
            "label_commands": label_commands,
            "teachers": sorted({plan.teacher for plan in plans}), "players": sorted({plan.player for plan in plans}),
            "options": dataclasses.asdict(options), "history": history, "seconds": time.perf_counter() - start}
    try:
        out.mkdir(parents=True, exist_ok=True)
        # Beside the command, the commands that make its --labels folders: no one else has them.
        save_network(network, out, metadata["network"], distill.fitted_metadata(metadata, plans[0].rules, command, made))
        files.write_json(out / "fit.json", made)
    except OSError as error:
        print(f"{PROG}: error: cannot write {out}: {error.strerror or error}", file=sys.stderr)
        return 1
    print(f"wrote {out / TENSORS_FILE}; evaluate it: sergeant-major evaluate --agents ppo:{out},pimc,pimc --games 120")
    return 0


# ============================================================================ belief

def _belief_command(args: BeliefCommandOptions, parser: argparse.ArgumentParser, argv: list[str]) -> int:
    from ..agents import make_agent
    from ..agents.belief import METADATA_FILE, TENSORS_FILE, save_belief
    from ..training import belief, distill

    out = Path(args.out)
    try:
        options = belief.BeliefOptions(
            games=args.games, seed=args.seed, players=args.players, layers=args.layers, epochs=args.epochs,
            batch_size=args.batch_size, learning_rate=float(args.learning_rate), holdout=float(args.holdout),
            fit_seed=args.fit_seed, rules=Rules.from_strings(args.option)).check()
        distill.check_out_folder(out, (TENSORS_FILE, METADATA_FILE), args.overwrite)
        for name in options.players:
            if name.partition(":")[0] == "human":
                raise ValueError("a player cannot be human: the games are played without a person")
            make_agent(name)  # an unknown name: one line listing the known ones
    except ValueError as error:
        parser.error(str(error))
    estimate = options.games * options.rules.num_deals * belief.POSITIONS_PER_DEAL
    print(f"playing {options.games} games ({', '.join(options.players)}) for positions, then fitting "
          f"{options.epochs} epochs", file=sys.stderr, flush=True)
    bar = progress_bar(estimate, "position", enabled=not args.no_progress)

    def said(row: dict) -> None:
        if bar is not None and row["epoch"] == 0:
            bar.close()
        print(f"epoch {row['epoch']}: train loss {row['train_loss']:.4f}, held-out cross-entropy "
              f"{row['cross_entropy']:.4f}, true bin probability {row['true_bin_probability']:.3f}, top bin right "
              f"{row['top_bin_accuracy']:.1%}", file=sys.stderr, flush=True)

    try:
        network, report = belief.train_belief(options, bar.update if bar is not None else lambda n: None, said)
    except KeyboardInterrupt as error:
        interrupts.say(f"{PROG}: {interrupts.describe(error)}; nothing written")
        return interrupts.exit_status(error)
    uniform = report["history"][0]["uniform"]
    print(f"uniform worlds: cross-entropy {uniform['cross_entropy']:.4f}, true bin probability "
          f"{uniform['true_bin_probability']:.3f}, top bin right {uniform['top_bin_accuracy']:.1%}", file=sys.stderr)
    try:
        out.mkdir(parents=True, exist_ok=True)
        save_belief(network, out, list(options.layers),
                    {"training": {"command": shlex.join(["sergeant-major", "distill", *argv]), **report}})
    except OSError as error:
        print(f"{PROG}: error: cannot write {out}: {error.strerror or error}", file=sys.stderr)
        return 1
    print(f"wrote {out / TENSORS_FILE}; evaluate it: sergeant-major evaluate --agents pimc:belief={out},pimc,heuristic "
          f"--games 120 --seed 100000")
    return 0


# ============================================================================ curve

def _curve_command(args: CurveOptions, fit: FitOptions, parser: argparse.ArgumentParser,
                   argv: list[str]) -> int:
    from ..agents import make_agent
    from ..agents.learned import policy_source
    from ..agents.policy_file import load_policy
    from ..training import distill

    out = Path(args.out)
    try:
        options = fit.check()
        plan = distill.CurvePlan(labels=tuple(args.labels), counts=args.counts, init=args.init, against=args.against,
                                 games=args.games, seed=args.seed, fit=options)
        plans = distill.read_plans(args.labels)
        for name in {args.against, "heuristic"}:
            make_agent(name)  # an unknown name: one line listing the known ones
        load_policy(policy_source(args.init))  # a missing or unloadable policy: one line
        done = distill.read_curve(out, plan)
        distill.check_curve_out(out, plan, done, args.overwrite)
        missing = distill.missing_counts(plan, done)
        labels = distill.curve_labels(plan, missing) if missing else None
    except ValueError as error:
        parser.error(str(error))
    print(f"{len(missing)} of {len(set(plan.counts))} points to measure in {out}", file=sys.stderr, flush=True)

    def said(point: dict) -> None:
        head, field = point["head_to_head"], point["vs_heuristic"]
        print(f"{point['labels']:>10,} labels: head to head {head['margin']:+.2f} {format_ci(head['margin_ci95'])} "
              f"over {plan.against}, {field['mean_points']:+.2f} {format_ci(field['ci95'])} at X,heuristic,heuristic",
              flush=True)

    def measure() -> list:
        out.mkdir(parents=True, exist_ok=True)
        return distill.label_curve(plan, out, plans[0].rules, args.workers, not args.no_progress, on_point=said,
                                   labels=labels)

    points, status = _kept_work(measure, out, "the measured points")
    if status is None:
        status = _plot(lambda path: distill.plot_label_curve(points, plan, path), out / distill.CURVE_PLOT)
    if status == 0:
        print(f"wrote {out / distill.CURVE_FILE} ({len(points)} points)")
    return status


def _kept_work(work: Callable[[], Any], out: Path, kept: str) -> tuple[Any, int | None]:
    """(`work()`, None), or (None, the exit status) after one line: a stop signal (`kept`, the
    finished work, stays in `out` and the same command continues), an error, a failed write."""
    try:
        return work(), None
    except KeyboardInterrupt as error:
        interrupts.say(f"{PROG}: {interrupts.describe(error)}; {kept} are kept in {out}: run the same command to "
                       f"continue")
        return None, interrupts.exit_status(error)
    except ValueError as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
    except OSError as error:
        print(f"{PROG}: error: cannot write in {out}: {error.strerror or error}; {kept} are kept",
              file=sys.stderr)
    return None, 1


def _plot(plot: Callable[[Path], None], path: Path) -> int:
    """`plot(path)`: 0 when written or without matplotlib (one line says so), 1 on a failed write."""
    try:
        plot(path)
    except ImportError:
        print(f"{PROG}: no plot: {path.name} needs matplotlib (pip install 'sergeant-major-env[train]')",
              file=sys.stderr)
    except OSError as error:
        print(f"{PROG}: error: cannot write {path}: {error.strerror or error}", file=sys.stderr)
        return 1
    return 0


# ============================================================================ rounds

def _rounds_command(args: RoundsCommandOptions, fit: FitOptions, parser: argparse.ArgumentParser) -> int:
    from ..agents import make_agent
    from ..agents.learned import policy_source
    from ..agents.policy_file import load_policy
    from ..training import rounds
    from ..training.distill import LABELS_PER_DEAL

    out = Path(args.out)
    try:
        plan = rounds.RoundsPlan(rounds=args.rounds, from_round=args.from_round, games=args.games, init=args.init, teacher=args.teacher,
                                 shard_games=args.shard_games, seed=args.seed, table_games=args.table_games,
                                 table_seed=args.table_seed, rules=Rules.from_strings(args.option),
                                 fit=fit).check(out)
        load_policy(policy_source(args.init))  # a missing or unloadable policy: one line
        from ..training.distill import build_agents

        build_agents(plan.label_plan(out, plan.numbers()[0]))  # a teacher that is not pimc: one line
        make_agent("pimc")
        done = rounds.read_rounds(out, plan)
    except ValueError as error:
        parser.error(str(error))
    except OSError as error:
        parser.error(f"cannot use --out {args.out}: {error.strerror or error}")
    missing = sum(stage not in next((row for row in done if row["round"] == k), {})
                  for k in plan.numbers() for stage in rounds.STAGES)
    print(f"{missing} of {3 * plan.rounds} stages to run in {out} ({plan.rounds} rounds of {plan.games} label games "
          f"from {plan.init}, teacher {plan.teacher})", file=sys.stderr, flush=True)

    def said(k: int, stage: str, result: dict) -> None:
        if stage == "labels":
            print(f"round {k}: {result['labels']:,} labels ({result['teacher']} on {result['player']}'s games)",
                  flush=True)
        elif stage == "fit":
            agreement = result["holdout_agreement"]
            print(f"round {k}: fitted" + ("" if agreement is None else f", held-out agreement {agreement:.1%}"),
                  flush=True)
        else:
            head, pimc = result["head_to_head"], result["vs_pimc"]
            print(f"round {k}: head to head {head['margin']:+.2f} {format_ci(head['margin_ci95'])} over the "
                  f"previous round, {pimc['mean_points']:+.2f} {format_ci(pimc['ci95'])} at X,pimc,pimc", flush=True)

    label_rounds = sum("labels" not in next((row for row in done if row["round"] == k), {})
                       for k in plan.numbers())
    bar = progress_bar(label_rounds * plan.games * plan.rules.num_deals * LABELS_PER_DEAL, "label",
                       enabled=not args.no_progress and label_rounds > 0)
    try:
        records, status = _kept_work(lambda: rounds.run_rounds(
            plan, out, args.workers, not args.no_progress, on_stage=said,
            on_labels=bar.update if bar is not None else lambda count: None), out, "the finished stages")
    finally:
        if bar is not None:
            bar.close()
    if status is None:
        status = _plot(lambda path: rounds.plot_rounds(records, plan, path), out / rounds.ROUNDS_PLOT)
    if status == 0:
        print(f"wrote {out / rounds.ROUNDS_FILE} ({len(records)} rounds); the last policy: "
              f"{plan.policy(out, plan.numbers()[-1])}")
    return status


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    given, config, parser = parse_command(_parser(), argv)
    args = make_config(parser, config, given)
    if config is LabelsOptions:
        return _labels_command(args, parser)
    if config is BeliefCommandOptions:
        return _belief_command(args, parser, argv)
    fit = make_config(parser, FitOptions, given, FITTED[config])
    if config is RoundsCommandOptions:
        return _rounds_command(args, fit, parser)
    return (_fit_command if config is FitCommandOptions else _curve_command)(args, fit, parser, argv)
