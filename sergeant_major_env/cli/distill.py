"""``sergeant-major distill``: label positions with the search, and fit a policy to the labels.

    sergeant-major distill labels --out labels/r1 --games 2000                 # pimc:rollout=learned on learned's games
    sergeant-major distill labels --out labels/r1 --games 4000                 # the same labels, 2000 games more
    sergeant-major distill labels --out labels/h --player heuristic --epsilon 0.1 --teacher pimc:worlds=32
    sergeant-major distill fit --labels labels/r1 --out runs/distilled          # from the shipped learned policy
    sergeant-major evaluate --agents ppo:runs/distilled,pimc,pimc --games 120
    sergeant-major distill curve --labels labels/r1 --out runs/curve --counts 0,100000,300000   # strength per label count

``labels`` plays games with --player in every seat and asks --teacher (a pimc spec) for its
value of every legal action at each decision with a real choice; the labels go to --out in
shards of --shard-games games, made in --workers processes (one per CPU by default). The
labels never depend on --workers. Ctrl-C (or a crash) keeps every finished shard: the same
command continues with the missing ones, and a larger --games adds shards.

``fit`` starts from a policy file (--init: ``learned``, the shipped policy, by default, or a
run folder / policy file) and fits it to the labels of one or more --labels folders:
cross-entropy to the teacher's choice where it beats the policy's own by more than --margin
points (else to the policy's own choice), or to the softmax of its values at --temperature
points, and the value head to the position's value (--value-weight). Measure the result on
other deals than the labels' games (their default seed is far from evaluate's). It writes OUT/policy.safetensors
and OUT/policy.json (code-free; play it as ppo:OUT) and OUT/fit.json (the options, the label
count, and per epoch the held-out agreement with the teacher's choice); any of them already in
OUT is replaced only with --overwrite. Every label is checked before the fit (one line naming
the file, array and row of anything malformed), and a folder given twice is refused.

``curve`` fits the same way to the first N labels for each N of --counts and plays each fit
at two duplicate tables on deals of its own --seed (head to head against --against, and
against two heuristics); it writes the fits, curve.json (after every point: the same command
continues a stopped curve) and curve.png, replacing a file it did not write only with --overwrite.

The module :mod:`sergeant_major_env.training.distill` holds the machinery and the label format.
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
from typing import Sequence

from .. import files, interrupts
from ..processes import available_cpus
from ..progress import progress_bar
from ..rules import Rules, add_rule_options
from ..seeding import SEED_RULE, seed_argument
from ..statistics import format_ci

PROG = "sergeant-major distill"


def _parser() -> argparse.ArgumentParser:
    from ..training.distill import CURVE_SEED, FitOptions, LabelPlan

    plan = LabelPlan()
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0],
                                     epilog="\n\n".join(__doc__.split("\n\n")[1:]),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    labels = commands.add_parser("labels", help="label positions with a search bot's action values",
                                 description="Play games with --player and label each decision with a real choice "
                                             "with --teacher's value of every legal action.")
    labels.add_argument("--out", required=True, metavar="FOLDER", help="the labels folder (created; resumed if it "
                                                                       "holds labels of the same options)")
    labels.add_argument("--teacher", default=plan.teacher, metavar="PIMC",
                        help=f"the search bot, a pimc spec (default {plan.teacher})")
    labels.add_argument("--player", default=plan.player, metavar="AGENT",
                        help=f"the agent playing the games in all three seats (default {plan.player})")
    labels.add_argument("--epsilon", type=float, default=plan.epsilon, metavar="P",
                        help=f"chance of a random legal move instead of the player's (default {plan.epsilon})")
    labels.add_argument("--games", type=int, default=plan.games, metavar="N",
                        help=f"games to label (default {plan.games})")
    labels.add_argument("--shard-games", type=int, default=plan.shard_games, metavar="K",
                        help=f"games per shard, the unit of resuming (default {plan.shard_games})")
    labels.add_argument("--seed", type=seed_argument, default=plan.seed, metavar="S",
                        help=f"game g plays engine seed S+g; {SEED_RULE} (default {plan.seed})")
    add_rule_options(labels)
    labels.add_argument("--workers", type=int, default=None, metavar="W",
                        help="worker processes (default: one per CPU; the labels are the same for any W)")
    labels.add_argument("--no-progress", action="store_true", help="no progress bar")
    labels.set_defaults(run=_labels_command)

    fitting = commands.add_parser("fit", help="fit a policy to labels",
                                  description="Fit a policy file's network to the labels of one or more folders.")
    fitting.add_argument("--labels", required=True, nargs="+", metavar="FOLDER", help="labels folders")
    fitting.add_argument("--out", required=True, metavar="FOLDER", help="where the fitted policy is written")
    fitting.add_argument("--overwrite", action="store_true",
                         help="replace policy.safetensors, policy.json and fit.json already in --out")
    fitting.add_argument("--init", default="learned", metavar="POLICY",
                         help="the policy to start from: learned or learned-ppo (shipped), a run folder or a "
                              "policy file (default learned)")
    fitting.add_argument("--limit", type=int, default=None, metavar="N",
                         help="use only the first N labels (default: all; a curve over label counts uses several)")
    _add_fit_options(fitting, FitOptions)
    fitting.set_defaults(run=_fit_command)

    curve = commands.add_parser("curve", help="the fitted policy's strength against the number of labels",
                                description="Fit the policy to the first N labels for each N of --counts and "
                                            "measure each fit at two duplicate tables on fresh deals: head to head "
                                            "(X,--against,heuristic) and X,heuristic,heuristic. Each point is kept "
                                            "as it is measured: the same command continues a stopped curve.")
    curve.add_argument("--labels", required=True, nargs="+", metavar="FOLDER", help="labels folders")
    curve.add_argument("--out", required=True, metavar="FOLDER",
                       help="where the fits, curve.json and curve.png are written (continued if it holds a curve "
                            "of the same options)")
    curve.add_argument("--counts", required=True, type=_counts, metavar="N,N,...",
                       help="label counts, e.g. 0,150000,450000 (0: the starting policy itself)")
    curve.add_argument("--init", default="learned", metavar="POLICY",
                       help="the policy every fit starts from: learned or learned-ppo (shipped), a run folder or a "
                            "policy file (default learned)")
    curve.add_argument("--against", default="learned", metavar="AGENT",
                       help="the head-to-head opponent (default learned)")
    curve.add_argument("--games", type=int, default=600, metavar="N", help="games per table (default 600)")
    curve.add_argument("--seed", type=seed_argument, default=CURVE_SEED, metavar="S",
                       help=f"the tables' deals, as evaluate's --seed; {SEED_RULE} (default {CURVE_SEED}: not the "
                            f"labels' deals)")
    curve.add_argument("--workers", type=int, default=None, metavar="W",
                       help="worker processes for the tables (default: one per CPU)")
    curve.add_argument("--no-progress", action="store_true", help="no progress bars")
    curve.add_argument("--overwrite", action="store_true",
                       help="replace files in --out that another command wrote (curve.png, a point's policy)")
    _add_fit_options(curve, FitOptions, CURVE_RENAMED)
    curve.set_defaults(run=_curve_command)
    parser.set_defaults(parsers={"labels": labels, "fit": fitting, "curve": curve})
    return parser


def _add_fit_options(parser: argparse.ArgumentParser, options_class, renamed: dict[str, str] | None = None) -> None:
    """One flag per field of :class:`~sergeant_major_env.training.distill.FitOptions`, its help the
    field's docstring; ``renamed``: {field: flag name} where the parser has a flag of that name already."""
    defaults = options_class()
    for field in dataclasses.fields(options_class):
        default = getattr(defaults, field.name)
        name = (renamed or {}).get(field.name, field.name)
        parser.add_argument("--" + name.replace("_", "-"), dest=name, type=type(default), default=default,
                            help=f"{_field_help(options_class, field.name)} (default {default})")


def _fit_options(args: argparse.Namespace, renamed: dict[str, str] | None = None):
    """The checked FitOptions of the flags :func:`_add_fit_options` declared."""
    from ..training.distill import FitOptions

    return FitOptions(**{field.name: getattr(args, (renamed or {}).get(field.name, field.name))
                         for field in dataclasses.fields(FitOptions)}).check()


CURVE_RENAMED = {"seed": "fit_seed"}
"""The curve's --seed is its tables' deals (as evaluate's); the fit's seed is --fit-seed there."""


def _counts(text: str) -> tuple[int, ...]:
    try:
        counts = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected label counts separated by commas (0,150000,450000), got {text!r}")
    if not counts or min(counts) < 0 or len(set(counts)) != len(counts):
        raise argparse.ArgumentTypeError(f"label counts must be distinct and at least 0, got {text!r}")
    return counts


def _field_help(cls, name: str) -> str:
    """The docstring written under a dataclass field (read from the source: one place for it)."""
    import ast
    import inspect

    body = ast.parse(inspect.getsource(cls)).body[0].body
    for node, following in zip(body, body[1:]):
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", None) == name and isinstance(
                following, ast.Expr) and isinstance(following.value, ast.Constant):
            return " ".join(str(following.value.value).split())
    return name.replace("_", " ")


# ============================================================================ labels

def _labels_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from ..training import distill

    try:
        plan = distill.LabelPlan(teacher=args.teacher, player=args.player, epsilon=float(args.epsilon),
                                 games=args.games, shard_games=args.shard_games, seed=args.seed,
                                 rules=Rules.from_strings(args.option)).check()
        workers = available_cpus() if args.workers is None else args.workers
        if not 1 <= workers <= 256:
            raise ValueError(f"--workers must be in 1..256, got {workers}")
        distill.build_agents(plan)  # an unknown or unsuitable agent: a usage error, before any folder
        missing = distill.open_labels(Path(args.out), plan)
    except ValueError as error:
        parser.error(str(error))
    except OSError as error:
        parser.error(f"cannot use --out {args.out}: {error.strerror or error}")
    print(f"{len(missing)} of {plan.shards} shards to make in {args.out} ({plan.games} games, teacher "
          f"{plan.teacher}, player {plan.player}, {workers} worker(s))", file=sys.stderr, flush=True)
    estimate = sum(min(plan.shard_games, plan.games - shard * plan.shard_games) for shard in missing) \
        * plan.rules.num_deals * distill.LABELS_PER_DEAL
    bar = progress_bar(estimate, "label", enabled=not args.no_progress and bool(missing))
    try:
        done = distill.make_labels(args.out, plan, workers, on_labels=bar.update if bar is not None else lambda count: None)
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
    print(f"made {done['labels']:,} labels in {done['shards']} shards in {done['seconds']:.0f} s "
          f"({rate:.1f} labels/s, {rate / workers:.1f} per worker); {args.out} is complete for {plan.games} games")
    return 0


# ============================================================================ fit

def _fit_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from ..agents.learned import policy_source
    from ..agents.policy_file import TENSORS_FILE, load_policy, save_network
    from ..training import distill

    out = Path(args.out)
    init = policy_source(args.init)
    try:
        options = _fit_options(args)
        if args.limit is not None and args.limit < 1:
            raise ValueError(f"--limit must be at least 1, got {args.limit}")
        distill.check_out_folder(out, distill.FIT_FILES, args.overwrite)
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
    command = shlex.join(["sergeant-major", "distill", *args.argv])
    label_commands = [dataclasses.replace(plan, games=distill.games_made(Path(folder), plan)).command(folder)
                      for folder, plan in zip(args.labels, plans)]
    made = {"from": str(args.init), "labels": [str(folder) for folder in args.labels], "label_count": count,
            "label_commands": label_commands,
            "teachers": sorted({plan.teacher for plan in plans}), "players": sorted({plan.player for plan in plans}),
            "options": dataclasses.asdict(options), "history": history, "seconds": time.perf_counter() - start}
    try:
        out.mkdir(parents=True, exist_ok=True)
        # Beside the command, the commands that make its --labels folders: no one else has them.
        training = {"command": command, "labels_made_by": label_commands, "distilled": made}
        save_network(network, out, metadata["network"], {"rules": plans[0].rules.to_dict(), "training": training,
                                                         "packages": metadata.get("packages")})
        files.write_json(out / "fit.json", made)
    except OSError as error:
        print(f"{PROG}: error: cannot write {out}: {error.strerror or error}", file=sys.stderr)
        return 1
    print(f"wrote {out / TENSORS_FILE}; evaluate it: sergeant-major evaluate --agents ppo:{out},pimc,pimc --games 120")
    return 0


# ============================================================================ curve

def _curve_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from ..agents import make_agent
    from ..agents.learned import policy_source
    from ..agents.policy_file import load_policy
    from ..training import distill

    out = Path(args.out)
    try:
        options = _fit_options(args, CURVE_RENAMED)
        plan = distill.CurvePlan(labels=tuple(args.labels), counts=args.counts, init=args.init, against=args.against,
                                 games=args.games, seed=args.seed, fit=options)
        if args.games < 1:
            raise ValueError(f"--games must be at least 1, got {args.games}")
        if args.workers is not None and not 1 <= args.workers <= 256:
            raise ValueError(f"--workers must be in 1..256, got {args.workers}")
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

    try:
        out.mkdir(parents=True, exist_ok=True)
        points = distill.label_curve(plan, out, plans[0].rules, args.workers, not args.no_progress, on_point=said,
                                     labels=labels)
    except KeyboardInterrupt as error:
        interrupts.say(f"{PROG}: {interrupts.describe(error)}; the measured points are kept in {out}: run the same "
                       f"command to continue")
        return interrupts.exit_status(error)
    except ValueError as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"{PROG}: error: cannot write in {out}: {error.strerror or error}; the points measured before are "
              f"kept", file=sys.stderr)
        return 1
    try:
        distill.plot_label_curve(points, plan, out / distill.CURVE_PLOT)
    except ImportError:
        print(f"{PROG}: no plot: curve.png needs matplotlib (pip install 'sergeant-major-env[train]')", file=sys.stderr)
    except OSError as error:
        print(f"{PROG}: error: cannot write {out / distill.CURVE_PLOT}: {error.strerror or error}", file=sys.stderr)
        return 1
    print(f"wrote {out / distill.CURVE_FILE} ({len(points)} points)")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _parser()
    args = parser.parse_args(argv)
    args.argv = argv
    return args.run(args, args.parsers[args.command])
