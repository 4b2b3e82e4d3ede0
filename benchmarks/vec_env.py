"""Learner decisions per second of the SB3 vector env against random opponents.

Measures ``SergeantMajorVecEnv`` (one batched engine state, opponents batched) at several
batch sizes, and the same single-learner game through SB3's ``DummyVecEnv`` over the
single-seat Gymnasium env (one engine state per game, a Python loop over games). In both,
the learner picks a uniformly random legal action from the action masks every step (the
time for that is included), the opponents are ``RandomPolicy`` (``--opponents heuristic``:
the ``heuristic`` agent, train.py's default opponents). Each figure is the median of
``--repeats`` runs of ``--seconds`` each.

    python benchmarks/vec_env.py                      # N = 1, 64, 1024 and DummyVecEnv(8)
    python benchmarks/vec_env.py --seconds 1 --repeats 3 --json results.json
    python benchmarks/vec_env.py --breakdown          # where the time goes at the largest N
    python benchmarks/vec_env.py --opponents heuristic --sizes 512 --dummy-envs 8

The largest N is also measured on one core (``threads.one_core``: no threads), run for run in
turn with the figure on every core, and the ratio printed: what the threads of big batches
(``sergeant_major_env.threads.spread``) bring.

Target (issue "environments"): at N = 1024 at least 200,000 learner decisions/s and at
least 20x the DummyVecEnv figure.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import statistics
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from sergeant_major_env import RandomPolicy, Rules, threads  # noqa: E402
from sergeant_major_env.arguments import SECONDS, SEED  # noqa: E402
from sergeant_major_env.files import check_writable, write_json  # noqa: E402
from sergeant_major_env.limits import check_fits  # noqa: E402
from sergeant_major_env.seeding import check_seed  # noqa: E402
from sergeant_major_env.single_seat import SergeantMajorEnv  # noqa: E402
from sergeant_major_env.vec_env import BYTES_PER_ENV  # noqa: E402

TARGET_RATE, TARGET_RATIO = 200_000, 20.0


class ObservingRandomPolicy(RandomPolicy):
    """Random, but asks for observations: measures the cost of computing them for opponents."""

    name = "random (observing)"
    needs_observations = True


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


def vec_env_stepper(num_envs: int, seed: int, rules: dict, opponent) -> callable:
    from sergeant_major_env.vec_env import SergeantMajorVecEnv

    env = SergeantMajorVecEnv(num_envs, seed=seed, opponents=opponent, **rules)
    env.reset()
    rng, learner = np.random.default_rng(seed), RandomPolicy()

    def step() -> None:
        env.step(learner.act(None, env.action_masks(), rng))

    return step


def dummy_vec_env_stepper(num_envs: int, seed: int, rules: dict, opponent) -> callable:
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.vec_env import DummyVecEnv

    env = DummyVecEnv([lambda: SergeantMajorEnv(opponents=opponent, learner_seat=None, **rules)
                       for _ in range(num_envs)])
    env.seed(seed)
    env.reset()
    rng, learner = np.random.default_rng(seed), RandomPolicy()

    def step() -> None:
        env.step(learner.act(None, get_action_masks(env), rng))

    return step


def run_case(name: str, make, num_envs: int, args, rules: dict, opponent) -> dict:
    rates = []
    for repeat in range(args.repeats):
        step = make(num_envs, args.seed + repeat, rules, opponent)
        rates.append(measure(step, num_envs, args.seconds))
    result = {"case": name, "num_envs": num_envs, "median": statistics.median(rates), "runs": rates}
    print(f"{name:<28} N={num_envs:<6} {result['median']:>12,.0f} learner decisions/s   "
          f"(runs: {', '.join(f'{r:,.0f}' for r in rates)})", flush=True)
    return result


def run_cores_case(make, num_envs: int, args, rules: dict, opponent) -> dict:
    """The vec env on every core (threads.spread's threads for big batches) and on one core
    (``threads.one_core``), run after run in turn so that both see the same machine."""
    rates, one_core_rates = [], []
    for repeat in range(args.repeats):
        rates.append(measure(make(num_envs, args.seed + repeat, rules, opponent), num_envs, args.seconds))
        with threads.one_core():
            one_core_rates.append(measure(make(num_envs, args.seed + repeat, rules, opponent), num_envs,
                                          args.seconds))
    result = {"case": "SergeantMajorVecEnv", "num_envs": num_envs, "median": statistics.median(rates), "runs": rates,
              "one_core_median": statistics.median(one_core_rates), "one_core_runs": one_core_rates}
    for label, key in (("SergeantMajorVecEnv", "median"), ("  the same on one core", "one_core_median")):
        runs = result["runs" if key == "median" else "one_core_runs"]
        print(f"{label:<28} N={num_envs:<6} {result[key]:>12,.0f} learner decisions/s   "
              f"(runs: {', '.join(f'{r:,.0f}' for r in runs)})", flush=True)
    print(f"  every core ({threads.threads()} threads) / one core: {result['median'] / result['one_core_median']:.2f}x",
          flush=True)
    return result


def breakdown(num_envs: int, args, rules: dict, opponent) -> dict:
    """Share of the VecEnv step time in the engine, observations, legal masks, policies."""
    import sergeant_major_env.learner_games as learner_games
    import sergeant_major_env.vec_env as vec_env

    totals: dict[str, float] = collections.defaultdict(float)
    calls: collections.Counter = collections.Counter()
    originals = []

    def wrap(owner, attribute: str, key: str) -> None:
        function = getattr(owner, attribute)
        originals.append((owner, attribute, function))

        def timed(*a, **k):
            start = time.perf_counter()
            try:
                return function(*a, **k)
            finally:
                totals[key] += time.perf_counter() - start
                calls[key] += 1

        setattr(owner, attribute, timed)

    step = vec_env_stepper(num_envs, args.seed, rules, opponent)
    wrap(vec_env.engine, "step", "engine.step")
    wrap(vec_env.engine, "legal_bits", "engine.legal_bits")
    wrap(learner_games, "observe", "observation.observe")
    wrap(vec_env, "observe", "observation.observe")
    wrap(RandomPolicy, "act", "RandomPolicy.act")
    wrap(learner_games, "decide", "policies.decide (opponents)")
    try:
        steps, start = 0, time.perf_counter()
        while time.perf_counter() - start < args.seconds:
            step()
            steps += 1
        elapsed = time.perf_counter() - start
    finally:
        for owner, attribute, function in reversed(originals):
            setattr(owner, attribute, function)
    per_step = elapsed / steps * 1e6
    print(f"\nwhere the time goes, N={num_envs}: {per_step:,.0f} us per VecEnv step "
          f"({steps * num_envs / elapsed:,.0f} learner decisions/s with timers on)")
    out = {"num_envs": num_envs, "us_per_step": per_step, "parts": {}}
    for key, total in sorted(totals.items(), key=lambda kv: -kv[1]):
        share = total / elapsed
        print(f"  {key:<32} {total / steps * 1e6:>8,.0f} us/step  {share:6.1%}  {calls[key] / steps:5.1f} calls/step")
        out["parts"][key] = {"us_per_step": total / steps * 1e6, "share": share, "calls_per_step": calls[key] / steps}
    rest = 1 - sum(p["share"] for p in out["parts"].values())
    print(f"  {'vec_env bookkeeping (the rest)':<32} {rest * per_step:>8,.0f} us/step  {rest:6.1%}")
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="Target: N=1024 >= 200,000 learner decisions/s and >= 20x DummyVecEnv.")
    parser.add_argument("--seconds", type=SECONDS, default=2.0, metavar="S",
                        help="length of each timed run, 0.01 to 3600 (default 2)")
    parser.add_argument("--repeats", type=int, default=5, metavar="N",
                        help="runs per case; the median is reported (default 5)")
    parser.add_argument("--sizes", default="1,64,1024", metavar="N,N,...",
                        help="VecEnv batch sizes, comma separated (default 1,64,1024)")
    parser.add_argument("--dummy-envs", type=int, default=8, metavar="N",
                        help="games in the DummyVecEnv baseline (default 8)")
    parser.add_argument("--num-deals", type=int, default=18, metavar="D",
                        help="deals per game, 1 to 18 (default 18, the full game)")
    parser.add_argument("--seed", type=SEED, default=0, metavar="S",
                        help="seed of the games and the random actions (default 0)")
    parser.add_argument("--opponents", choices=("random", "heuristic"), default="random",
                        help="the opponents' agent (default random)")
    parser.add_argument("--observing-opponents", action="store_true",
                        help="opponents ask for observations (RandomPolicy skips them): measures that cost too "
                             "(default: off)")
    parser.add_argument("--breakdown", action="store_true",
                        help="also time the parts of a step at the largest N (default: off)")
    parser.add_argument("--json", nargs="?", const="-", metavar="PATH",
                        help="write the results as JSON to PATH, or to stdout without PATH (default: no JSON)")
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.repeats < 1 or args.dummy_envs < 1:
        parser.error(f"--seconds must be positive, --repeats and --dummy-envs at least 1, got --seconds "
                     f"{args.seconds:g} --repeats {args.repeats} --dummy-envs {args.dummy_envs}")
    try:
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        parser.error(f"--sizes must be integers separated by commas, got {args.sizes!r}")
    if args.observing_opponents and args.opponents != "random":
        parser.error("--observing-opponents makes random opponents ask for observations: it needs --opponents random")
    if not sizes or min(sizes) < 1:
        parser.error(f"--sizes must be positive integers separated by commas, got {args.sizes!r}")
    try:
        Rules(num_deals=args.num_deals)
        last = args.seed + args.repeats + max(sizes + [args.dummy_envs])  # run r: games seed + r, ... + N - 1
        check_seed(last, "the largest first seed of a run (--seed + --repeats + the largest N)")
        check_fits(f"--sizes {max(sizes)}: {max(sizes):,} environments", max(sizes) * BYTES_PER_ENV,
                   "give smaller --sizes")
        if args.json not in (None, "-"):
            check_writable(args.json, "--json file")
    except ValueError as error:
        parser.error(str(error))
    rules = {"num_deals": args.num_deals}
    if args.opponents == "heuristic":
        from sergeant_major_env.agents import make_agent

        opponent = make_agent("heuristic")
    else:
        opponent = ObservingRandomPolicy() if args.observing_opponents else RandomPolicy()
    warnings.simplefilter("ignore")

    print(f"python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}, "
          f"{os.cpu_count()} CPUs; rules {rules}; opponents: {opponent.name}; "
          f"{args.repeats} x {args.seconds:g} s per case\n", flush=True)
    results = [run_cores_case(vec_env_stepper, n, args, rules, opponent) if n == max(sizes)
               else run_case("SergeantMajorVecEnv", vec_env_stepper, n, args, rules, opponent) for n in sizes]
    dummy = run_case("DummyVecEnv(single-seat env)", dummy_vec_env_stepper, args.dummy_envs, args, rules, opponent)
    largest = max(results, key=lambda r: r["num_envs"])
    ratio = largest["median"] / dummy["median"]
    print(f"\nN={largest['num_envs']} VecEnv / DummyVecEnv({args.dummy_envs}): {ratio:.1f}x")
    summary = {
        "largest_num_envs": largest["num_envs"],
        "rate": largest["median"],
        "ratio_vs_dummy": ratio,
        "target_rate": TARGET_RATE,
        "target_ratio": TARGET_RATIO,
        "rate_met": largest["median"] >= TARGET_RATE,
        "ratio_met": ratio >= TARGET_RATIO,
    }
    if args.opponents == "random":
        print(f"target >= {TARGET_RATE:,} decisions/s: {'met' if summary['rate_met'] else 'NOT met'}; "
              f"target >= {TARGET_RATIO:g}x DummyVecEnv: {'met' if summary['ratio_met'] else 'NOT met'}")
    else:
        print("(the targets are for random opponents)")
    report = {"python": platform.python_version(), "numpy": np.__version__, "cpus": os.cpu_count(),
              "rules": rules, "opponents": opponent.name, "seconds": args.seconds, "repeats": args.repeats,
              "vec_env": results, "dummy_vec_env": dummy, "summary": summary}
    if args.breakdown:
        report["breakdown"] = breakdown(largest["num_envs"], args, rules, opponent)
    if args.json == "-":
        print(json.dumps(report, indent=2))
    elif args.json:
        write_json(args.json, report)
        print(f"results written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
