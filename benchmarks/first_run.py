"""How long a command takes on its first run (the kernels compiled) and on later runs (loaded).

    python benchmarks/first_run.py                          # evaluate, 6 games of one deal
    python benchmarks/first_run.py --against ../v030        # and 0.3.0's checkout, alternately
    python benchmarks/first_run.py --runs 5 -- evaluate --agents random,random,random --games 6

Runs ``python -m sergeant_major_env ARGS`` (default ``evaluate --agents
heuristic,heuristic,heuristic --games 6 --option num_deals=1 --no-progress``) in a subprocess
that imports this checkout, with ``NUMBA_CACHE_DIR`` on a new empty folder: the first run
compiles every kernel it needs (cold; ``--cold N`` such runs, each on a new folder), the
``--runs`` after it load them from that folder (warm). With ``--against TREE`` (a checkout of
another version: ``git worktree add ../v030 v0.3.0``) the same command runs from TREE too,
alternately with this checkout's runs, so both see the same load; its cold runs use a new
folder as well (0.3.0 compiles nothing).

Prints the wall seconds of each run, the medians, and the differences the issue's goals
name: a warm run at most 1 s slower than the reference, a cold run at most 30 s more.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
DEFAULT = ["evaluate", "--agents", "heuristic,heuristic,heuristic", "--games", "6", "--option", "num_deals=1",
           "--no-progress"]


def timed_run(tree: Path, args: list[str], cache: str) -> float:
    """Wall seconds of ``python -m sergeant_major_env ARGS`` importing ``tree``, caching in ``cache``."""
    env = {**os.environ, "PYTHONPATH": str(tree), "NUMBA_CACHE_DIR": cache}
    start = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "sergeant_major_env", *args], cwd=tree, env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - start
    if run.returncode != 0:
        last = (run.stderr.strip().splitlines() or ["no message"])[-1]
        sys.exit(f"first_run: the command failed (status {run.returncode}) in {tree}: {last}")
    return seconds


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", type=Path, metavar="TREE",
                        help="a checkout of another version, timed alternately (default: none)")
    parser.add_argument("--cold", type=int, default=1, metavar="N",
                        help="cold runs, each on an empty cache folder (default: 1)")
    parser.add_argument("--runs", type=int, default=3, metavar="N", help="warm runs after the cold ones (default: 3)")
    parser.add_argument("command", nargs="*",
                        help=f"the subcommand and its arguments, after -- (default: {' '.join(DEFAULT)})")
    options = parser.parse_args(argv)
    if options.cold < 1 or options.runs < 1:
        parser.error("--cold and --runs must be 1 or more")
    if options.against is not None and not (options.against / "sergeant_major_env" / "__main__.py").is_file():
        parser.error(f"--against: {options.against} is not a checkout of sergeant-major-env")
    args = options.command or DEFAULT
    trees = {"this checkout": HERE} | ({"reference": options.against.resolve()} if options.against else {})
    print(f"python -m sergeant_major_env {' '.join(args)}", flush=True)
    cold: dict[str, list[float]] = {name: [] for name in trees}
    warm: dict[str, list[float]] = {name: [] for name in trees}
    with tempfile.TemporaryDirectory(prefix="first-run-") as folder:
        caches = {name: os.path.join(folder, f"{k}-0") for k, name in enumerate(trees)}
        for attempt in range(options.cold):
            for k, (name, tree) in enumerate(trees.items()):
                caches[name] = os.path.join(folder, f"{k}-{attempt}")
                cold[name].append(timed_run(tree, args, caches[name]))
                print(f"  cold  {name:14} {cold[name][-1]:7.2f} s", flush=True)
        for _ in range(options.runs):
            for name, tree in trees.items():
                warm[name].append(timed_run(tree, args, caches[name]))
                print(f"  warm  {name:14} {warm[name][-1]:7.2f} s", flush=True)
    medians = {name: (statistics.median(cold[name]), statistics.median(warm[name])) for name in trees}
    for name, (c, w) in medians.items():
        print(f"{name:14}: cold {c:.2f} s, warm {w:.2f} s (medians of {options.cold} and {options.runs})")
    if options.against:
        (c, w), (rc, rw) = medians["this checkout"], medians["reference"]
        print(f"warm: {w - rw:+.2f} s against the reference (goal: at most +1 s); "
              f"cold: {c - rw:+.2f} s against the reference's warm run (goal: at most +30 s)")
    try:
        print(f"load average: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    except OSError:
        pass


if __name__ == "__main__":
    main()
