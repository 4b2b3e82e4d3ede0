"""Learner decisions per second of Gymnasium's vector API: the native vector env against the sync mode.

Measures ``gymnasium.make_vec("SergeantMajor-v0", num_envs=N)`` through its vector entry
point (:class:`~sergeant_major_env.gym_vector.SergeantMajorVectorEnv`: one batched engine
state, opponents batched) and through ``vectorization_mode="sync"`` (N single-seat envs,
one engine state per game, a Python loop over games), in the same run, at the same N. In
both the learner picks a uniformly random legal action from ``infos["action_mask"]`` every
step (the time for that is included) and the opponents are ``RandomPolicy``. Each figure is
the median of ``--repeats`` runs of ``--seconds`` each; the load average is printed, since
a busy machine slows both sides (the ratio is the figure to read).

    python benchmarks/gym_vector.py                         # N = 256, 2 x 1 s per case
    python benchmarks/gym_vector.py --sizes 64,256 --seconds 2 --repeats 5 --json results.json

Target (issue 30, item 2): at N = 256 the native vector env at least 10x the sync mode.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from sergeant_major_env import RandomPolicy, Rules  # noqa: E402
from sergeant_major_env.arguments import SECONDS, SEED  # noqa: E402
from sergeant_major_env.files import check_writable, write_json  # noqa: E402
from sergeant_major_env.learner_games import BYTES_PER_ENV  # noqa: E402
from sergeant_major_env.limits import check_fits  # noqa: E402
from sergeant_major_env.seeding import check_seed  # noqa: E402

TARGET_RATIO = 10.0
MODES = ("vector_entry_point", "sync")


def measure(step, num_envs: int, seconds: float) -> float:
    """Learner decisions per second of ``step()`` (one decision per game per call)."""
    for _ in range(3):
        step()
    steps, start = 0, time.perf_counter()
    while True:
        step()
        steps += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return steps * num_envs / elapsed


def stepper(mode: str, num_envs: int, seed: int, rules: dict) -> callable:
    """One step of ``make_vec`` in ``mode``, the learner random among the legal actions."""
    import gymnasium

    import sergeant_major_env  # noqa: F401  (registers the id)

    envs = gymnasium.make_vec("SergeantMajor-v0", num_envs=num_envs, vectorization_mode=mode,
                              learner_seat=None, opponents=RandomPolicy(), **rules)
    _, infos = envs.reset(seed=seed)
    rng, learner = np.random.default_rng(seed), RandomPolicy()
    current = {"infos": infos}

    def step() -> None:
        current["infos"] = envs.step(learner.act(None, current["infos"]["action_mask"], rng))[4]

    return step


def run_case(mode: str, num_envs: int, args, rules: dict) -> dict:
    rates = [measure(stepper(mode, num_envs, args.seed + repeat, rules), num_envs, args.seconds)
             for repeat in range(args.repeats)]
    result = {"mode": mode, "num_envs": num_envs, "median": statistics.median(rates), "runs": rates}
    print(f"make_vec {mode:<20} N={num_envs:<6} {result['median']:>12,.0f} learner decisions/s   "
          f"(runs: {', '.join(f'{r:,.0f}' for r in rates)})", flush=True)
    return result


def load_average() -> str:
    try:
        return ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except (AttributeError, OSError):  # not on this platform
        return "unknown"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=f"Target: at N=256 the vector entry point >= {TARGET_RATIO:g}x the sync mode.")
    parser.add_argument("--seconds", type=SECONDS, default=1.0, metavar="S",
                        help="length of each timed run, 0.01 to 3600 (default 1)")
    parser.add_argument("--repeats", type=int, default=2, metavar="N",
                        help="runs per case; the median is reported (default 2)")
    parser.add_argument("--sizes", default="256", metavar="N,N,...",
                        help="num_envs values, comma separated; each is measured in both modes (default 256)")
    parser.add_argument("--num-deals", type=int, default=18, metavar="D",
                        help="deals per game, 1 to 18 (default 18, the full game)")
    parser.add_argument("--seed", type=SEED, default=0, metavar="S",
                        help="seed of the games and the random actions (default 0)")
    parser.add_argument("--json", nargs="?", const="-", metavar="PATH",
                        help="write the results as JSON to PATH, or to stdout without PATH (default: no JSON)")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats must be at least 1, got {args.repeats}")
    try:
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        parser.error(f"--sizes must be integers separated by commas, got {args.sizes!r}")
    if not sizes or min(sizes) < 1:
        parser.error(f"--sizes must be positive integers separated by commas, got {args.sizes!r}")
    try:
        Rules(num_deals=args.num_deals)
        check_seed(args.seed + args.repeats + max(sizes), "the largest first seed of a run (--seed + --repeats + the largest N)")
        check_fits(f"--sizes {max(sizes)}: {max(sizes):,} environments", 2 * max(sizes) * BYTES_PER_ENV,
                   "give smaller --sizes")
        if args.json not in (None, "-"):
            check_writable(args.json, "--json file")
    except ValueError as error:
        parser.error(str(error))
    rules = {"num_deals": args.num_deals}
    warnings.simplefilter("ignore")

    print(f"python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}, "
          f"{os.cpu_count()} CPUs, load average {load_average()}; rules {rules}; opponents: random; "
          f"{args.repeats} x {args.seconds:g} s per case\n", flush=True)
    results, ratios = [], {}
    for n in sizes:
        native, sync = (run_case(mode, n, args, rules) for mode in MODES)
        results += [native, sync]
        ratios[n] = native["median"] / sync["median"]
        print(f"N={n}: vector entry point / sync = {ratios[n]:.1f}x\n", flush=True)
    print(f"load average after: {load_average()}")
    largest = max(sizes)
    summary = {"largest_num_envs": largest, "ratio_vs_sync": ratios[largest], "target_ratio": TARGET_RATIO,
               "ratio_met": ratios[largest] >= TARGET_RATIO}
    print(f"target >= {TARGET_RATIO:g}x the sync mode at N={largest}: {'met' if summary['ratio_met'] else 'NOT met'}")
    report = {"python": platform.python_version(), "numpy": np.__version__, "cpus": os.cpu_count(),
              "load_average": load_average(), "rules": rules, "opponents": "random", "seconds": args.seconds,
              "repeats": args.repeats, "results": results, "ratios": {str(n): r for n, r in ratios.items()},
              "summary": summary}
    if args.json == "-":
        print(json.dumps(report, indent=2))
    elif args.json:
        write_json(args.json, report)
        print(f"results written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
