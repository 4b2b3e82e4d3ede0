"""Speed of the agents' batched ``act``: decisions per second at a given batch size.

    python benchmarks/agents_speed.py --batch 1024 random greedy heuristic

The batch is a snapshot of B games of a self-played table (heuristic, greedy, random in
turn) taken at several moments, so it mixes every kind of decision as real play does;
each agent decides for the whole batch repeatedly for ``--seconds``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents import make_agent  # noqa: E402
from sergeant_major_env import Rules, engine  # noqa: E402
from sergeant_major_env.cards import random_member  # noqa: E402
from sergeant_major_env.observation import observe  # noqa: E402


def snapshot(batch: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of ``batch`` games at varied points of play."""
    rng = np.random.default_rng(seed)
    state = engine.init(engine.game_seeds(seed, batch), Rules())
    # Spread the games over the whole game: each plays a different number of random steps.
    stop = rng.integers(0, 900, batch)
    for step in range(900):
        legal = engine.legal_bits(state)
        actions = random_member(legal, rng)
        live = step < stop
        if not live.any():
            break
        sub = np.flatnonzero(live)
        part = state.take(sub)
        engine.step(part, actions[sub])
        state.put(sub, part)
    mask = engine.legal_action_mask(state)
    return observe(state, np.maximum(state.to_act, 0)), mask


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("agents", nargs="*", default=["random", "greedy", "heuristic"])
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args()
    obs, mask = snapshot(args.batch)
    rng = np.random.default_rng(0)
    for name in args.agents:
        agent = make_agent(name)
        agent.act(obs, mask, rng)  # warm-up (caches)
        calls, start = 0, time.perf_counter()
        while (elapsed := time.perf_counter() - start) < args.seconds:
            agent.act(obs, mask, rng)
            calls += 1
        print(f"{name:>12}: {calls * args.batch / elapsed:12,.0f} decisions/s  "
              f"({1000 * elapsed / calls:.2f} ms per act() at batch {args.batch})")


if __name__ == "__main__":
    main()
