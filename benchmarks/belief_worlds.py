"""How far pimc's drawn worlds follow its belief model, at each ``belief_power``.

    python benchmarks/belief_worlds.py                          # the shipped model, 12 games of 3 deals
    python benchmarks/belief_worlds.py --belief runs/belief-pimc --powers 0,0.35,1

Plays ``--games`` heuristic games (seeds ``--seed`` on, ``--num-deals`` deals each). At every
third engine step, at each game whose seat to act has a real choice, it reads where every
unseen card really is (the seat knows it may be in more than one place: the left hand, the
right hand, the pile) and compares the ways of placing it: the belief model's probabilities,
and at each power (power 0: uniform worlds) the marginals of ``--worlds`` worlds drawn by
``sample_worlds`` both ways: by keys biased by the model's log-odds (``belief_exact=false``)
and exactly, each world in proportion to the product of the model's probabilities
(``exact=True``, pimc's default). For each it prints the mean probability given to the true
place and the Brier score (lower is better; the worlds' marginals carry the sampling noise of
``--worlds`` draws, about 0.01 at 48). The exact draw at power 1 carries what the model knows
(its Brier score the model's); the keys' draw never does. The search (docs/results.md) plays
best on exact worlds at power 0.5, and on the keys' at 0.25-0.35.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's package

from sergeant_major_env import engine  # noqa: E402
from sergeant_major_env.arguments import SEED  # noqa: E402
from sergeant_major_env.agents import make_agent  # noqa: E402
from sergeant_major_env.agents.pimc import choices  # noqa: E402
from sergeant_major_env.cards import NUM_ACTIONS, bits_to_bool, count  # noqa: E402
from sergeant_major_env.policies import decide  # noqa: E402
from sergeant_major_env.rules import Rules  # noqa: E402
from sergeant_major_env.seeding import check_seed_span  # noqa: E402
from sergeant_major_env.training.belief import positions  # noqa: E402
from sergeant_major_env.worlds import sample_worlds  # noqa: E402


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--belief", default="learned", metavar="MODEL",
                        help="pimc's belief option: learned or a belief file or folder (default learned)")
    parser.add_argument("--games", type=int, default=12, metavar="N", help="heuristic games played (default 12)")
    parser.add_argument("--num-deals", type=int, default=3, metavar="D", help="deals a game, 1 to 18 (default 3)")
    parser.add_argument("--worlds", type=int, default=48, metavar="W",
                        help="worlds drawn at each position and power (default 48)")
    parser.add_argument("--seed", type=SEED, default=7_000_000, metavar="S",
                        help="game g plays seed S+g (default 7000000, apart from the belief's and evaluations' deals)")
    parser.add_argument("--powers", default="0,0.25,0.5,0.75,1", metavar="P,P,...",
                        help="belief powers, numbers >= 0 separated by commas (default 0,0.25,0.5,0.75,1)")
    args = parser.parse_args(argv)
    for name in ("games", "worlds"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1, got {getattr(args, name)}")
    try:
        powers = [float(p) for p in args.powers.split(",")]
    except ValueError:
        parser.error(f"--powers must be numbers >= 0 separated by commas, got {args.powers[:60]!r}")
    if not all(np.isfinite(p) and p >= 0 for p in powers):
        parser.error(f"--powers must be numbers >= 0 separated by commas, got {args.powers[:60]!r}")
    try:
        check_seed_span(args.seed, args.games)
        rules = Rules(num_deals=args.num_deals)
        engine.check_batch_fits(args.games * args.worlds, f"--games {args.games} x --worlds {args.worlds}: the worlds")
        searcher = make_agent(f"pimc:belief={args.belief}")
    except ValueError as error:
        parser.error(str(error))

    state = engine.init(engine.game_seeds(args.seed, args.games), rules)
    heuristic = make_agent("heuristic")
    rng = np.random.default_rng(1)
    draws = [(power, exact) for power in powers for exact in (False, True)]
    sums = {name: np.zeros(3) for name in ["model", *draws]}  # true place's probability, Brier, cards
    step = 0
    while (live := np.flatnonzero(state.phase != engine.OVER)).size:
        legal = engine.legal_bits(state, live)
        real = count(choices(state, live, legal)) > 1
        step += 1
        if real.any() and step % 3 == 0:
            games = live[real]
            known = positions(state, games)
            truth, allowed = known["truth"].astype(np.int64), known["allowed"]
            scored = (allowed.sum(-1) > 1) & (truth >= 0)
            onehot = np.eye(3)[np.maximum(truth, 0)]

            def add(name, marginals):
                sums[name] += [(marginals * onehot).sum(-1)[scored].sum(),
                               ((marginals - onehot) ** 2).sum(-1)[scored].sum(), scored.sum()]

            log_probs = searcher.belief_log_probs(state, games)
            model = np.where(allowed, np.exp(log_probs), 0.0)
            add("model", model / np.maximum(model.sum(-1, keepdims=True), 1e-30))
            for power, exact in draws:
                worlds = sample_worlds(state, games, args.worlds, rng, log_probs, power, exact)
                placed = positions(worlds, np.arange(worlds.batch_size))["truth"].reshape(games.size, args.worlds, 52)
                add((power, exact), np.stack([(placed == b).mean(axis=1) for b in range(3)], axis=-1))
        actions = np.zeros(state.batch_size, dtype=np.int64)
        actions[live] = decide(heuristic, state, live, bits_to_bool(legal, NUM_ACTIONS), rng)
        engine.step(state, actions)
    print(f"{int(sums['model'][2]):,} unseen cards that could be in more than one place")
    print("placed by                          true place's probability   Brier score")
    for name, (p, brier, n) in sums.items():
        label = "the belief model" if name == "model" else f"worlds, {'exact' if name[1] else 'keys'}, power {name[0]:g}"
        print(f"{label:<35}{p / n:>24.4f}{brier / n:>14.4f}")


if __name__ == "__main__":
    main()
