"""Speed of the batched engine: random legal games, observation and mask at every decision.

    python benchmarks/engine.py --batch 4096 --seconds 3
    python benchmarks/engine.py --batch 1 --seconds 3 --json

Each decision of every game computes the acting seat's legal-action mask ([B, 58] bool)
and observation ([B, D] float32, a new array each decision), draws a uniformly random legal
action and steps the engine (finished games restart at once). Prints decisions/s (the median
of --repeats runs), full games/s (18 deals unless --option num_deals=N; decisions/s over the
mean decisions of a random game), the state's bytes per game and the load average before
and after. The bulk way is timed in the same run: the observations into one array reused
every decision (`observe(state, seat, out=buffer)`, the same float32 vectors). At 4,096
games a new array a decision is 15 MB of fresh memory, which the system hands out page by
page, zeroed: most of what an observation costs.

``--compare`` measures in the same run, the same way, 0.3.0's numpy engine and observation
(frozen in tests/reference_engine.py and tests/reference_observation.py) and OpenSpiel's C++ ``skat`` driven
from Python one game at a time (legal actions, observation tensor, a random action; as
benchmarks/openspiel_speed.py measures pyspiel), and prints the ratios of each of ours to
them:

    python benchmarks/engine.py --batch 4096 --seconds 3 --repeats 3 --compare

`--engine-only` leaves out the mask and observation of this package's side (the rules alone).

Every run is followed by one on a single core (``sergeant_major_env.threads.one_core``: no
threads for big batches), and both figures are printed with their ratio: what the cores bring
(the threads start from a few thousand games, see ``sergeant_major_env.threads``).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's package
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the other benchmarks' helpers

from sergeant_major_env import Rules, engine, threads  # noqa: E402
from sergeant_major_env.cards import bits_to_bool, random_member  # noqa: E402
from sergeant_major_env.observation import OBSERVATION_SIZE, observe  # noqa: E402
from sergeant_major_env.one_game import OneGame  # noqa: E402
from sergeant_major_env.arguments import SECONDS, SEED, add_rule_options  # noqa: E402
from sergeant_major_env.seeding import check_seed  # noqa: E402
from gym_vector import load_average  # noqa: E402


BULK = "batched API, reused out="
"""The bulk way's name: the observations into one array reused every decision."""


def run_once(batch: int, seconds: float, rules: Rules, seed: int, engine=engine, views: bool = True,
             observe=observe, bulk: bool = False) -> float:
    """One timed run: decisions per second (``engine``, ``observe``: this package's, or the frozen
    references; `views`: with the mask and observation; `bulk`: the observations into one
    array reused every decision, this package's `observe(..., out=)`)."""
    rng = np.random.default_rng(seed)
    state = engine.init(engine.game_seeds(seed, batch), rules)
    options = {"out": np.empty((batch, OBSERVATION_SIZE), np.float32)} if bulk else {}
    decisions = 0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        legal = engine.legal_bits(state)
        mask = bits_to_bool(legal, 58) if views else None
        obs = observe(state, state.to_act, **options) if views else None
        actions = random_member(legal, rng)
        engine.step(state, actions, autoreset=True, legal=legal)
        decisions += batch
    del mask, obs
    return decisions / elapsed


def random_legal(legal: int, rng: random.Random) -> int:
    """A uniformly random member of the action set ``legal`` (an int of bits): the k-th set bit
    for a uniform k. Python's ``random``, as the OpenSpiel loop draws (``rng.choice(legal_actions())``):
    at one game numpy's draw (``cards.random_member``, 2.6 us) would cost more than a third of a
    decision (0.7 us this way)."""
    for _ in range(rng.randrange(legal.bit_count())):
        legal &= legal - 1
    return (legal & -legal).bit_length() - 1


def run_one_game(seconds: float, rules: Rules, seed: int) -> float:
    """One timed run of the one-game path (:class:`~sergeant_major_env.one_game.OneGame`, what
    the AEC and OpenSpiel views drive): the same work a decision (mask, observation of the seat
    to act, a uniformly random legal action, the step), one kernel call for all but the draw."""
    rng = random.Random(seed)
    game, games, decisions = OneGame(engine.init([seed], rules)), 0, 0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        game.step(random_legal(int(game.legal[0]), rng))
        decisions += 1
        if game.state.phase[0] == engine.OVER:
            games += 1
            game = OneGame(engine.init([seed + games], rules))
    return decisions / elapsed


def decisions_per_game(rules: Rules, games: int = 256) -> float:
    """Mean decisions of a whole random game (a big batch finishes few games in a short run,
    so games/s is decisions/s divided by this)."""
    rng = np.random.default_rng(0)
    state = engine.init(engine.game_seeds(10_000, games), rules)
    decisions = 0
    while (running := state.phase != engine.OVER).any():
        legal = engine.legal_bits(state)
        engine.step(state, np.maximum(random_member(legal, rng), 0), legal=legal)
        decisions += int(running.sum())
    return decisions / games


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch", type=int, default=4096, metavar="B", help="games advanced together (default 4096)")
    parser.add_argument("--seconds", type=SECONDS, default=3.0, metavar="S",
                        help="length of one timed run, 0.01 to 3600 (default 3)")
    parser.add_argument("--repeats", type=int, default=5, metavar="N",
                        help="timed runs; the median is reported (default 5)")
    parser.add_argument("--seed", type=SEED, default=0, metavar="S",
                        help="seed of the games and the random actions (default 0)")
    add_rule_options(parser)
    parser.add_argument("--engine-only", action="store_true",
                        help="time legal_bits, the random choice and step alone, without mask and observation (default: off)")
    parser.add_argument("--compare", action="store_true",
                        help="also measure 0.3.0's engine and OpenSpiel's skat in the same run (default: off)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text (default: off)")
    args = parser.parse_args()
    if args.batch < 1 or args.seconds <= 0 or args.repeats < 1:
        parser.error(f"--batch, --seconds and --repeats must be positive, got --batch {args.batch} "
                     f"--seconds {args.seconds:g} --repeats {args.repeats}")
    try:
        rules = Rules.from_strings(args.option)
        last = args.seed + args.repeats + args.batch - 1  # run i plays seeds seed + 1 + i, ... + batch - 1
        check_seed(last, "the last game's seed (--seed + --repeats + --batch - 1)")
        engine.check_batch_fits(args.batch, "--batch: a batch")
    except ValueError as error:
        parser.error(str(error))

    views = not args.engine_only
    runs = {"batched API": lambda i, s=args.seconds: run_once(args.batch, s, rules, args.seed + 1 + i, views=views)}
    if views:
        runs[BULK] = lambda i, s=args.seconds: run_once(args.batch, s, rules, args.seed + 1 + i, bulk=True)
    if args.batch > 1 and threads.threads() >= 2:  # every core (big batches) against one, in the same run

        def one_core(i: int, seconds: float = args.seconds) -> float:
            with threads.one_core():
                return run_once(args.batch, seconds, rules, args.seed + 1 + i, views=views)

        runs["batched API, one core"] = one_core
    if args.batch == 1 and views:
        runs["one-game path"] = lambda i, s=args.seconds: run_one_game(s, rules, args.seed + 1 + i)
    for run in list(runs.values()):
        run(-1, min(0.5, args.seconds))  # warm-up (compiles or loads the kernels)
    if args.compare:
        runs.update(references(args, rules, views))
    load_before = load_average()
    # The runs alternate (ours, the references, ours ...), so that all see the same load.
    times = {name: [] for name in runs}
    for i in range(args.repeats):
        for name, run in runs.items():
            times[name].append(run(i))
    rates = {name: statistics.median(values) for name, values in times.items()}
    decisions = max(rates["batched API"], rates.get("one-game path", 0.0))
    games = decisions / decisions_per_game(rules)
    state_bytes = engine.init(engine.game_seeds(0, args.batch), rules).nbytes_per_game()
    ours = [name for name in ("batched API", "batched API, one core", BULK, "one-game path") if name in rates]
    load_after = load_average()
    if args.json:
        print(json.dumps({"batch": args.batch, "decisions_per_s": round(decisions), "games_per_s": round(games, 2),
                          "state_bytes_per_game": state_bytes, "threads": threads.threads(),
                          "load_average": {"before": load_before, "after": load_after},
                          **{f"{re.sub('[^a-z0-9]+', '_', name.lower()).strip('_')}_decisions_per_s": round(value)
                             for name, value in rates.items()}}))
        return
    print(f"batch {args.batch}: {decisions:,.0f} decisions/s, {games:,.1f} games/s, "
          f"{state_bytes:.0f} state bytes per game (median of {args.repeats} runs of {args.seconds:g} s; "
          f"load average {load_before} before, {load_after} after)")
    for name in ours:
        print(f"  {name}: {rates[name]:,.0f} decisions/s")
    for name, value in rates.items():
        if name not in ours:
            ratios = "; ".join(f"{mine} / {name} = {rates[mine] / value:.2f}" for mine in ours)
            print(f"  {name}: {value:,.0f} decisions/s; {ratios}")


def references(args, rules: Rules, views: bool) -> dict:
    """Timed runs of 0.3.0's engine (same batch) and of OpenSpiel's skat (one game at a time)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    import reference_engine
    import reference_observation

    runs = {"0.3.0": lambda i: run_once(args.batch, args.seconds, rules, args.seed + 1 + i, reference_engine, views,
                                        reference_observation.observe)}
    try:
        import pyspiel
    except ImportError:
        return runs
    from openspiel_speed import run_pyspiel

    skat = pyspiel.load_game("skat")
    runs["openspiel skat"] = lambda i: run_pyspiel(skat, args.seconds, args.seed + i + 1)
    return runs


if __name__ == "__main__":
    main()
