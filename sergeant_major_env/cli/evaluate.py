"""Evaluate 3-5-8 agents against each other on duplicate deals.

    sergeant-major evaluate                                                  # the baselines, 120 games
    sergeant-major evaluate --agents heuristic,random,random --games 1200 --seed 0
    sergeant-major evaluate --agents ppo:runs/ppo,heuristic,greedy --games 600 \\
        --json eval.json --csv eval.csv --plot eval.png --record games.jsonl
    sergeant-major evaluate --agents heuristic,greedy,random,random --option num_deals=6 exchanges=false
    sergeant-major evaluate --agents rllib-unsafe-pickle:runs/rllib/checkpoint,heuristic,greedy --games 6000 --batch-size 600 --ray
    sergeant-major evaluate --agents heuristic,greedy,random --games 60000 --ray --address auto   # a Ray cluster

Agents are names for agents.make_agent ("random", "greedy", "heuristic", "learned", "ppo:PATH", ...);
naming one twice seats two copies of it. Games come in duplicate groups of six: the same
deals (seed + j for group j) are played under all six seatings of the three agents, so the
luck of the cards largely cancels. With four or more agents every 3-agent table plays
--games games (a round robin, same deals at every table). The table shows each agent's mean
points per game with a 95% confidence interval (Student t over the duplicate groups), its
win rate (R6: equal totals share the win) and its mean place (the place column, 1 = first to
3 = last; ties share places: a line under the table says so), then the head-to-head margins
(two copies of one agent, X and X#2, get a note: when every agent at their tables is
deterministic they play the same games in swapped seats, so their margin is 0 by
construction), then one leaderboard of ratings across all the tables: a Bradley-Terry
fit of who finished above whom in each game, in Elo points with mean 0 over the agents (a
gap of 400 points is 10:1 odds of finishing above), with 95% intervals from a bootstrap over
the duplicate groups (seeded by --seed). The machinery is
sergeant_major_env.evaluation.play_tables; the statistics are sergeant_major_env.statistics.

Games are played in chunks of --batch-size games (whole duplicate groups), each chunk with
its own random generator for the agents (seeded by --seed and the chunk's index), in
--workers processes of this machine (one per CPU by default; forked on Linux, elsewhere this
process alone): the chunks apart and, when
every agent is deterministic (all but random, a sampling ppo policy and pimc with random
rollouts), each chunk's games shared out by whole groups. Any --workers gives the same
numbers; --workers 1 plays in this process alone. --ray plays
the chunks as Ray tasks in parallel, on a local Ray (started and stopped here) or on the
cluster at --address, and gives the same numbers as the run without --ray: lower
--batch-size to spread a tournament over more workers (the same --batch-size without --ray
then still gives the same numbers). Ray comes with pip install "sergeant-major-env[rllib]";
every node of a cluster needs this project installed.

Rule options: a model of a training run (ppo:RUN) is played under the rule options it was
trained with, unless --option gives the table's options: then a note says where they differ.
Two models trained under different options need --option (an error names both otherwise).

Every argument is checked before any game is played: the agents, the rule options, the seed
(S + groups - 1 must stay at most 2**63 - 1), and the output files (their folders must exist
and be writable; one that exists is refused unless --overwrite; --plot needs matplotlib from
the train extra). Output files are written whole or not at all (a temporary file, then
renamed): on a full disk the error names the output that failed and its old file is kept.
--agents human needs a terminal, and no agent that sees the hidden cards (pimc:cheat) sits with
a person; a table with pimc:cheat gets a note under its report.

Exit status: 0 on success, 2 for bad arguments (an unknown agent or rule option, a bad seed,
an output file that cannot be written or exists without --overwrite), 1 when the games or
the writing fail afterwards, 130 when interrupted by Ctrl-C, 143 by SIGTERM (kill), 129 by
SIGHUP (the terminal closed): the worker processes are stopped and nothing is written.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

from sergeant_major_env import interrupts
from sergeant_major_env.agents import make_agent
from sergeant_major_env.agents.human import check_terminal, is_human
from sergeant_major_env.evaluation import (
    SEATINGS, TablePlan, check_tournament_fits, check_tournament_seed, copy_pairs, group_count, play_tables,
    resolve_agents, rules_for_table)
from sergeant_major_env.files import atomic_write, check_new_file
from sergeant_major_env.jit import compile_seconds
from sergeant_major_env.policies import refuse_cheats
from sergeant_major_env.processes import available_cpus
from sergeant_major_env.ray_jobs import RAY_EXTRA
from sergeant_major_env.rules import Rules
from sergeant_major_env.statistics import format_rich

from .. import arguments
from ..arguments import FLAG, Choice, Integer, Text, build_parser, check_fields, opt, parse_config

PLOT_EXTRA = 'pip install "sergeant-major-env[train]" (in a checkout: pip install -e ".[train]")'
OUTPUTS = (("json", "--json"), ("csv", "--csv"), ("plot", "--plot"), ("record", "--record"))


@dataclasses.dataclass(frozen=True)
class EvaluateOptions:
    """Every option of `sergeant-major evaluate`; the attribute docstrings are their lines of `--help`."""

    agents: str = opt("heuristic,greedy,random", Text(), metavar="A,B,C")
    """comma-separated agent names, at least three"""
    games: int = arguments.games(120)
    """games per table, rounded up to a multiple of 6"""
    seed: int = arguments.seed(0)
    """group j plays engine seed S+j; also seeds the agents' randomness"""
    option: tuple[str, ...] | None = arguments.rule_options(
        None, default_help="the options a ppo:RUN model was trained with, else the rule book's")
    seatings: str = opt("duplicate", Choice(*SEATINGS))
    """duplicate: each deal under all six seatings; fixed: agents in the order given, one game per seed"""
    json: str | None = opt(None, Text(optional=True), metavar="FILE")
    """write the results as JSON"""
    csv: str | None = opt(None, Text(optional=True), metavar="FILE")
    """write one row per agent as CSV"""
    plot: str | None = opt(None, Text(optional=True), metavar="FILE.png")
    """bar chart of mean points with 95% error bars and the ratings' leaderboard (needs matplotlib, the train
    extra)"""
    record: str | None = opt(None, Text(optional=True), metavar="FILE")
    """write every game's record (Rule book, section 11) as JSON Lines"""
    overwrite: bool = arguments.overwrite()
    """replace --json, --csv, --plot and --record files that exist (default: refuse them)"""
    batch_size: int = opt(12_000, Integer(6), metavar="B")
    """most games played together in one batch"""
    workers: int | None = arguments.workers()
    no_progress: bool = arguments.no_progress()
    ray: bool = opt(False, FLAG, kind="flag")
    """play the chunks of --batch-size games as Ray tasks (same results as without)"""
    address: str | None = opt(None, Text(optional=True), metavar="ADDR")
    """with --ray: the Ray cluster to join (e.g. auto, ray://head:10001); default: a local Ray"""

    def __post_init__(self) -> None:
        check_fields(self)


def parse_args(argv=None) -> tuple[EvaluateOptions, argparse.ArgumentParser]:
    parser = build_parser("sergeant-major evaluate", EvaluateOptions,
                          description=__doc__.split("\n\n")[0].strip() + " Example runs and details below.",
                          epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    return parse_config(parser, EvaluateOptions, argv), parser


# ============================================================================ checks before any game

def check_outputs(args: EvaluateOptions) -> None:
    """Every output file can be written (and exists only with --overwrite), and no two options
    name the same file (ValueError)."""
    seen: dict[Path, str] = {}
    for attribute, flag in OUTPUTS:
        path = getattr(args, attribute)
        if path is None:
            continue
        check_new_file(path, args.overwrite, f"{flag} file")
        resolved = Path(path).resolve()
        if resolved in seen:
            raise ValueError(f"{seen[resolved]} and {flag} name the same file {path!r}; give each its own")
        seen[resolved] = flag
    if args.plot is not None:
        plot_format(args.plot)


def plot_format(path: str) -> str:
    """The image format of `path` (its suffix), checked against matplotlib's (ValueError)."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ValueError(f"--plot needs matplotlib, which is not installed: {PLOT_EXTRA}") from None
    image_format = Path(path).suffix.lstrip(".").lower() or "png"
    supported = Figure().canvas.get_supported_filetypes()
    if image_format not in supported:
        raise ValueError(f"--plot {path!r}: matplotlib cannot write .{image_format} images; "
                         f"use one of {', '.join('.' + name for name in sorted(supported))}")
    return image_format


def plays_human(names: list[str]) -> bool:
    """Whether a person plays (the human agent): at this process's terminal, so in this process."""
    return any(map(is_human, names))


# ============================================================================ outputs

def plot(result, path: str) -> None:
    """Two panels: mean points per game with 95% error bars, and the ratings' leaderboard."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points_width, ratings_width = 1.6 * len(result.agents) + 2.5, 4.5  # inches
    figure, (points_axes, ratings_axes) = plt.subplots(
        1, 2, figsize=(points_width + ratings_width, 4.2), gridspec_kw={"width_ratios": [points_width, ratings_width]})
    plot_points(points_axes, result)
    plot_ratings(ratings_axes, result)
    figure.suptitle(f"3-5-8: {result.games} games, {result.seatings} seatings, "
                    f"{result.rules.num_deals} deals a game, seed {result.seed}")
    figure.tight_layout()
    try:
        with atomic_write(path, "wb") as file:  # a file object: matplotlib needs the format named
            figure.savefig(file, dpi=120, format=plot_format(path))
    finally:
        plt.close(figure)


def error_bars(values, intervals) -> list[list[float]]:
    """matplotlib's [below, above] error lengths from [low, high] intervals (0 where there is none)."""
    return [[v - ci[0] if ci else 0.0 for v, ci in zip(values, intervals)],
            [ci[1] - v if ci else 0.0 for v, ci in zip(values, intervals)]]


def plot_points(axes, result) -> None:
    """Each agent's mean points per game, best first, with its 95% interval."""
    stats = sorted(result.agents, key=lambda s: -s.mean_points)
    means = [s.mean_points for s in stats]
    bars = axes.bar([s.name for s in stats], means, yerr=error_bars(means, [s.ci95 for s in stats]), capsize=6,
                    color=["tab:green" if m >= 0 else "tab:red" for m in means], alpha=0.8)
    axes.bar_label(bars, labels=[f"{m:+.2f}" for m in means], padding=3, label_type="center")
    axes.axhline(0, color="black", linewidth=0.8)
    axes.set_ylabel("mean points per game (95% CI)")


def plot_ratings(axes, result) -> None:
    """The leaderboard, highest at the top: each rating (Elo points, mean 0) with its 95% interval."""
    board = result.ratings[::-1]
    ratings = [r.rating for r in board]
    rows = range(len(board))
    axes.errorbar(ratings, rows, xerr=error_bars(ratings, [r.ci95 for r in board]), fmt="o", capsize=5,
                  color="tab:blue")
    for row, rating in zip(rows, ratings):
        axes.annotate(f"{rating:+.0f}", (rating, row), textcoords="offset points", xytext=(0, 7), ha="center")
    axes.set_yticks(list(rows), [r.name for r in board])
    axes.set_ylim(-0.6, len(board) - 0.4)
    axes.axvline(0, color="black", linewidth=0.8)
    axes.set_xlabel("rating, Elo points (mean 0; 95% bootstrap CI)")
    axes.set_title("ratings (Bradley-Terry)")


class OutputError(Exception):
    """An output file that could not be written: `flag` and `path` name it."""

    def __init__(self, flag: str, path: str, error: Exception) -> None:
        self.flag, self.path = flag, path
        reason = getattr(error, "strerror", None) or str(error) or type(error).__name__
        super().__init__(f"cannot write {flag} file {path!r}: {reason} (the file there, if any, is kept)")


def write_outputs(args: EvaluateOptions, result) -> None:
    """Each output that was asked for, in turn (OutputError names the first that fails; those
    before it are written, those after it are not tried)."""
    def write_record(path: str) -> str:
        from sergeant_major_env.records import write_jsonl

        return f"wrote {write_jsonl(result.records, path)} game records to {path}"

    writers = {"json": lambda path: result.to_json(path), "csv": lambda path: result.to_csv(path),
               "plot": lambda path: plot(result, path), "record": write_record}
    for attribute, flag in OUTPUTS:
        path = getattr(args, attribute)
        if path is None:
            continue
        try:
            said = writers[attribute](path)
        except (OSError, ValueError) as error:
            raise OutputError(flag, path, error) from error
        print(said or f"wrote {path}")


def print_report(args: EvaluateOptions, result, elapsed: float, compiling: float = 0.0) -> None:
    """A table on the terminal (rich when installed), then notes on how the games were played
    (`elapsed` seconds, `compiling` of them compiling the kernels: `timing_line`)."""
    try:
        from rich.console import Console

        console = Console()
        for renderable in format_rich(result):
            console.print(renderable)
    except ImportError:
        print(result.format_text())
    if args.seatings == "duplicate" and args.games % 6:
        print(f"(--games {args.games} rounded up to {result.games // len(result.tables)} per table: "
              f"duplicate groups hold six games)")
    print(timing_line(result.games, elapsed, compiling))
    if args.ray and result.games <= args.batch_size:
        print(f"(--ray: the {result.games} games fit in one chunk of --batch-size {args.batch_size}, so one Ray "
              f"task played them all; a smaller --batch-size spreads them over more workers)")


def timing_line(games: int, elapsed: float, compiling: float = 0.0) -> str:
    """`N games in T s (pace)`; on a first run, whose `elapsed` seconds include `compiling`
    seconds of compiling the kernels, the play and the compiling apart (issue 50: a cold run read
    as if the games were slow)."""
    play = max(elapsed - compiling, 1e-9)
    rate = games / play
    pace = f"{rate:,.0f} games/s" if rate >= 10 else f"{play / games:.2f} s a game"
    if compiling <= 0:
        return f"{games} games in {play:.1f} s ({pace})"
    return f"{games} games in {play:.1f} s of play ({pace}); compiling the kernels took {compiling:.1f} s"


# ============================================================================ main

def main(argv=None) -> int:
    args, parser = parse_args(argv)

    # Arguments: every problem is reported before any game is played (exit status 2).
    try:
        asked = Rules.from_strings(args.option) if args.option is not None else None
    except ValueError as error:
        parser.error(str(error))
    try:
        check_tournament_seed(args.seed, group_count(args.games, args.seatings), args.seatings)
        check_outputs(args)
    except ValueError as error:
        parser.error(str(error))
    if args.address and not args.ray:
        parser.error("--address needs --ray (it names the Ray cluster that plays the games)")
    if args.ray:
        try:
            import ray  # noqa: F401  (only checked here; play_tables imports it again)
        except ImportError:
            parser.error(f"--ray needs Ray: {RAY_EXTRA}")
    names = [name.strip() for name in args.agents.split(",") if name.strip()]
    if len(names) < 3:
        parser.error(f"--agents needs at least three agents (name one twice to seat it twice), got {names}")
    try:
        check_tournament_fits(len(names), args.games, args.seatings, record=bool(args.record),
                              batch_size=args.batch_size, workers=1 if args.ray else args.workers or available_cpus())
    except ValueError as error:
        parser.error(f"--games {args.games}: {error}")
    try:
        check_terminal(names)
        agents, labels = resolve_agents(names, make_agent)
        if plays_human(names):  # a person is promised a fair table
            refuse_cheats(agents, labels)
        asked_names = [item.partition("=")[0].strip() for item in args.option or []]
        rules, notes = rules_for_table(agents, labels, asked, asked_names, asked_by="--option")
    except ValueError as error:
        parser.error(str(error))
    for note in notes:
        print(note)

    # Play: all games of all tables advance together through the batched engine.
    start, compiled = time.perf_counter(), compile_seconds()
    try:
        # With --ray the agents travel as names: each Ray task builds its own with make_agent.
        plan = TablePlan(games=args.games, seed=args.seed, rules=rules, seatings=args.seatings,
                         record=bool(args.record), progress=not args.no_progress, batch_size=args.batch_size,
                         workers=1 if plays_human(names) else args.workers, ray=args.ray, ray_address=args.address)
        result = play_tables(names if args.ray else agents, plan, names=labels, make_agent=make_agent)
    except KeyboardInterrupt as error:  # the workers are stopped already (processes.run_jobs)
        interrupts.say(f"sergeant-major evaluate: {interrupts.describe(error)}; no results written")
        return interrupts.exit_status(error)
    except ValueError as error:  # an agent that cannot play these games (e.g. another observation layout)
        print(f"sergeant-major evaluate: error: {error}", file=sys.stderr)
        return 1
    # The agents were given as objects: the names say which are copies of one agent (X, X#2).
    result.copies = copy_pairs(names, labels)
    print_report(args, result, time.perf_counter() - start, compile_seconds() - compiled)

    # Files: checked writable before the games; each is written whole or not at all.
    try:
        write_outputs(args, result)
    except OutputError as error:
        print(f"sergeant-major evaluate: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as error:  # the file being written is left as it was (files.atomic_write)
        interrupts.say(f"sergeant-major evaluate: {interrupts.describe(error)} while writing the outputs; "
                       f"the one being written is left as it was")
        return interrupts.exit_status(error)
    return 0


if __name__ == "__main__":
    from sergeant_major_env.cli import guarded

    sys.exit(guarded("evaluate", main))
