"""Labels a second of ``sergeant-major distill labels`` on one core, beside another checkout's.

    python benchmarks/labels_speed.py                                # this checkout, the issue's command
    python benchmarks/labels_speed.py --against ../v030 --repeat 3   # alternately with 0.3.0's checkout
    python benchmarks/labels_speed.py --teacher pimc --player learned --games 6

Runs ``python -m sergeant_major_env distill labels --out NEW_FOLDER --games G --shard-games G
--workers 1 --teacher T --player P --seed S --no-progress`` with ``SERGEANT_MAJOR_THREADS=1``
(every batch on one core; torch uses one thread in every version) in a subprocess that imports
this checkout and, with ``--against TREE`` (a checkout of another version: ``git worktree add
../v030 v0.3.0``), one that imports TREE, alternately, ``--repeat`` rounds, so that both see
the same load. A run of one game of each comes first and is not timed: the kernels are
compiled or loaded there, as a user's earlier runs would have done.

Prints each run's labels a second as the command reports them (the labels' own time, start-up
excluded), each round's ratio and their median, whether the labels of the two checkouts are the
same (the rows that differ, if any), and the load average.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE))

from sergeant_major_env.arguments import COUNT, SEED  # noqa: E402
from sergeant_major_env.training.distill import LabelPlan, build_agents  # noqa: E402

RATE = re.compile(r"made ([\d,]+) labels in \d+ shards in \d+ s \(([\d.]+) labels/s")
"""The last line of ``distill labels``: the labels made and their rate (0.3.0 on)."""


def run_labels(tree: Path, out: Path, options: argparse.Namespace, games: int) -> tuple[int, float]:
    """(labels, labels/s) of ``distill labels`` importing ``tree``, writing to ``out`` (new)."""
    command = [sys.executable, "-m", "sergeant_major_env", "distill", "labels", "--out", str(out),
               "--games", str(games), "--shard-games", str(games), "--workers", "1", "--teacher", options.teacher,
               "--player", options.player, "--seed", str(options.seed), "--no-progress"]
    env = {**os.environ, "PYTHONPATH": str(tree), "SERGEANT_MAJOR_THREADS": "1"}
    done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True)
    lines = done.stdout.strip().splitlines()
    match = RATE.search(lines[-1]) if lines else None
    if done.returncode != 0 or match is None:
        last = (done.stderr.strip().splitlines() or lines or ["no message"])[-1]
        sys.exit(f"labels_speed: the command failed (status {done.returncode}) with {tree}: {last}")
    return int(match.group(1).replace(",", "")), float(match.group(2))


def read_labels(folder: Path) -> dict[str, np.ndarray]:
    """The arrays of a finished one-shard labels folder (no code runs on load)."""
    with np.load(next(folder.glob("shard_*.npz")), allow_pickle=False) as shard:
        return {name: shard[name] for name in shard.files}


def differing_rows(ours: dict[str, np.ndarray], theirs: dict[str, np.ndarray]) -> str:
    """How the two checkouts' labels compare: "the same" or the rows that differ."""
    if ours.keys() != theirs.keys() or ours["action"].shape != theirs["action"].shape:
        return f"different ({ours['action'].size:,} against {theirs['action'].size:,} labels)"
    differ = np.zeros(ours["action"].shape[0], dtype=bool)
    for name, array in ours.items():
        other = theirs[name]
        if array.dtype != other.dtype:
            return f"different (array {name}: {array.dtype} against {other.dtype})"
        same = array == other
        if np.issubdtype(array.dtype, np.floating):
            same |= np.isnan(array) & np.isnan(other)
        differ |= ~same.reshape(same.shape[0], -1).all(axis=1)
    return "the same" if not differ.any() else f"{int(differ.sum()):,} of {differ.size:,} rows differ"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--teacher", default="pimc:rollout=learned-ppo",
                        help="the search whose values are the labels (default: pimc:rollout=learned-ppo)")
    parser.add_argument("--player", default="learned-ppo", help="who plays the labels' games (default: learned-ppo)")
    parser.add_argument("--games", type=COUNT, default=20, metavar="G",
                        help="18-deal games, in one shard (default: 20)")
    parser.add_argument("--seed", type=SEED, default=5_000_000, help="the first game's seed (default: 5000000)")
    parser.add_argument("--against", type=Path, metavar="TREE",
                        help="a checkout of another version, timed alternately (default: none)")
    parser.add_argument("--repeat", type=COUNT, default=1, metavar="K",
                        help="timed runs of each checkout (default: 1)")
    options = parser.parse_args(argv)
    if options.against is not None and not (options.against / "sergeant_major_env" / "__main__.py").is_file():
        parser.error(f"--against: {options.against} is not a checkout of sergeant-major-env")
    try:  # the command's own checks, before any run: a bad agent or seed is one line here
        build_agents(LabelPlan(teacher=options.teacher, player=options.player, games=options.games,
                               shard_games=options.games, seed=options.seed).check())
    except ValueError as error:
        parser.error(str(error))
    trees = {"this checkout": HERE} | ({"--against": options.against.resolve()} if options.against else {})
    print(f"distill labels --games {options.games} --teacher {options.teacher} --player {options.player} "
          f"--seed {options.seed}, one core", flush=True)
    rates: dict[str, list[float]] = {name: [] for name in trees}
    with tempfile.TemporaryDirectory(prefix="labels-speed-") as folder:
        for k, tree in enumerate(trees.values()):  # kernels compiled or loaded: not timed
            run_labels(tree, Path(folder, f"warm-{k}"), options, 1)
        for round_ in range(1, options.repeat + 1):
            labels = {}
            for k, (name, tree) in enumerate(trees.items()):
                out = Path(folder, f"round-{round_}-{k}")
                made, rate = run_labels(tree, out, options, options.games)
                rates[name].append(rate)
                labels[name] = read_labels(out)
                print(f"  round {round_}  {name:14} {made:,} labels, {rate:7.1f} labels/s", flush=True)
            if options.against:
                ratio = rates["this checkout"][-1] / rates["--against"][-1]
                print(f"  round {round_}  ratio {ratio:.2f}x; the labels: "
                      f"{differing_rows(labels['this checkout'], labels['--against'])}", flush=True)
    medians = {name: statistics.median(values) for name, values in rates.items()}
    for name, median in medians.items():
        print(f"{name:14}: {median:.1f} labels/s (median of {options.repeat})")
    if options.against:
        ratios = [new / old for new, old in zip(rates["this checkout"], rates["--against"])]
        print(f"ratio: {statistics.median(ratios):.2f}x (median of the rounds' "
              f"{', '.join(f'{ratio:.2f}x' for ratio in ratios)}; the issue's goal: at least 5x)")
    try:
        print(f"load average: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    except OSError:
        pass


if __name__ == "__main__":
    main()
