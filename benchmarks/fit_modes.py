"""Fit the heuristic agent's mode values (``agents.heuristic.MODE_COEFS``) on self-play.

    python benchmarks/fit_modes.py --games 6000

Three heuristic players play full games, but each playmaker chooses its mode at random
among those still open (so every mode is seen with every kind of hand). For each mode
choice the features of the six cards seen (``agents.heuristic._mode_features``) and the
playmaker's points in that deal are kept; a least-squares fit per mode class (the four
trump suits share one, suit-relative) gives the expected points of each mode. Prints the
coefficient array to paste into ``agents/heuristic.py`` with the fit's R^2 and sample sizes.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sergeant_major_env.arguments import SEED  # noqa: E402
from sergeant_major_env.agents.heuristic import NUM_MODE_FEATURES, HeuristicAgent, _mode_features, exchange_gain  # noqa: E402
from sergeant_major_env.agents.view import View, card_bools  # noqa: E402
from sergeant_major_env import Rules, engine  # noqa: E402
from sergeant_major_env.cards import bits_to_bool  # noqa: E402
from sergeant_major_env.files import atomic_write, check_writable  # noqa: E402
from sergeant_major_env.limits import check_fits  # noqa: E402
from sergeant_major_env.observation import observe  # noqa: E402
from sergeant_major_env.seeding import check_seed  # noqa: E402


BYTES_PER_GAME = 6_000
"""Memory the mode choices of one game hold until the fit (18 deals, a feature row each)."""


def collect(games: int, seed: int, batch: int, params: dict | None = None):
    agent = HeuristicAgent(params)
    explorer = HeuristicAgent(params)
    explorer.explore_modes = True
    rng = np.random.default_rng(seed)
    feats, modes, points = [], [], []
    for start in range(0, games, batch):
        n = min(batch, games - start)
        state = engine.init(engine.game_seeds(seed * 10_000_000 + start, n), Rules())
        pending = {}
        while (state.phase != engine.OVER).any():
            legal = engine.legal_bits(state)
            mask = bits_to_bool(legal, 58)
            obs = observe(state, np.maximum(state.to_act, 0))
            actions = agent.act(obs, mask, rng)
            choosing = np.flatnonzero(state.phase == engine.MODE)
            if choosing.size:
                actions[choosing] = explorer.act(obs[choosing], mask[choosing], rng)
                v = View(obs[choosing])
                f = _mode_features(card_bools(v.hand), exchange_gain(v.prev_points))
                for i, g in enumerate(choosing):
                    pending[int(g)] = (f[i, actions[g] - 52], int(actions[g] - 52), int(state.to_act[g]))
            engine.step(state, actions, legal=legal)
            for g in np.flatnonzero(state.deal_ended):
                f, mode, seat = pending.pop(int(g))
                feats.append(f)
                modes.append(mode)
                points.append(int(state.deal_points[g, seat]))
    return np.array(feats), np.array(modes), np.array(points, dtype=np.float64)


def fit(feats: np.ndarray, modes: np.ndarray, points: np.ndarray, ridge: float = 1.0):
    coefs = np.zeros((3, NUM_MODE_FEATURES))
    report = []
    for row, selected in enumerate((modes < 4, modes == 4, modes == 5)):
        x, y = feats[selected], points[selected]
        used = np.flatnonzero(np.abs(x).sum(axis=0) > 0)
        xu = x[:, used]
        a = xu.T @ xu + ridge * np.eye(used.size)
        a[0, 0] -= ridge  # no shrinkage of the bias
        beta = np.linalg.solve(a, xu.T @ y)
        coefs[row, used] = beta
        resid = y - xu @ beta
        report.append((int(selected.sum()), float(1 - resid.var() / y.var()), float(y.mean())))
    return coefs, report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=6000, metavar="N", help="self-play games (default 6000)")
    parser.add_argument("--seed", type=SEED, default=1, metavar="S",
                        help="game i plays seed S*10000000+i; also seeds the random mode choices (default 1)")
    parser.add_argument("--batch", type=int, default=1500, metavar="B", help="games played together (default 1500)")
    parser.add_argument("--out", metavar="FILE.npz",
                        help="save the samples (numpy .npz) here (default: not saved)")
    args = parser.parse_args()
    if args.games < 1 or args.batch < 1:
        parser.error(f"--games and --batch must be at least 1, got --games {args.games} --batch {args.batch}")
    try:
        last = args.seed * 10_000_000 + args.games - 1
        check_seed(last, "the last game's seed (--seed * 10000000 + --games - 1)")
        engine.check_batch_fits(min(args.batch, args.games), f"--batch {args.batch}: a batch")
        check_fits(f"--games {args.games}: the mode choices of {args.games:,} games", args.games * BYTES_PER_GAME,
                   "give fewer --games")
        if args.out:
            check_writable(args.out, "--out file")
    except ValueError as error:
        parser.error(str(error))
    start = time.perf_counter()
    feats, modes, points = collect(args.games, args.seed, args.batch)
    if args.out:
        with atomic_write(args.out, "wb") as file:  # a file object: numpy adds no .npz suffix
            np.savez_compressed(file, feats=feats, modes=modes, points=points)
    coefs, report = fit(feats, modes, points)
    print(f"{len(points)} mode choices from {args.games} games in {time.perf_counter() - start:.0f} s")
    for name, (n, r2, mean) in zip(("trumps", "NT", "MIN"), report):
        print(f"  {name:>6}: {n} samples, mean points {mean:+.3f}, R^2 {r2:.3f}")
    np.set_printoptions(precision=3, suppress=True, linewidth=140)
    print("MODE_COEFS = np.array([")
    for row in coefs:
        print("    [" + ", ".join(f"{c:.3f}" for c in row) + "],")
    print("])")


if __name__ == "__main__":
    main()
