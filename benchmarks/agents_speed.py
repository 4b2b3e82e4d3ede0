"""Speed of the agents' batched ``act``: decisions per second at a given batch size.

    python benchmarks/agents_speed.py --batch 1024 random greedy heuristic
    python benchmarks/agents_speed.py --batch 64 --one-at-a-time pimc    # one decision at a time

The batch is a snapshot of B games of a self-played table (heuristic, greedy, random in
turn) taken at several moments, so it mixes every kind of decision as real play does;
each agent decides for the whole batch repeatedly for ``--seconds``. Search agents (pimc)
decide from the state, for the games still in play.
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
from sergeant_major_env.policies import searches_state  # noqa: E402
from sergeant_major_env.seeding import seed_argument  # noqa: E402




def snapshot(batch: int, seed: int = 0) -> tuple[engine.State, np.ndarray, np.ndarray]:
    """The state, observations and masks of ``batch`` games at varied points of play."""
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
    return state, observe(state, np.maximum(state.to_act, 0)), mask


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("agents", nargs="*", default=["random", "greedy", "heuristic"], metavar="AGENT",
                        help="agents to time, agents.make_agent names (default: random greedy heuristic)")
    parser.add_argument("--batch", type=int, default=1024, metavar="B",
                        help="games in the snapshot each call decides for (default 1024)")
    parser.add_argument("--seconds", type=float, default=2.0, metavar="S",
                        help="how long each agent is timed (default 2)")
    parser.add_argument("--seed", type=seed_argument, default=0, metavar="S",
                        help="seed of the snapshot's games and of the agents' randomness (default 0)")
    parser.add_argument("--one-at-a-time", action="store_true",
                        help="search agents: decide for each game of the batch alone, the latency of one "
                             "decision (default: off, the whole batch at once)")
    args = parser.parse_args()
    if args.batch < 1 or args.seconds <= 0:
        parser.error(f"--batch must be at least 1 and --seconds positive, got --batch {args.batch} "
                     f"--seconds {args.seconds:g}")
    try:  # every agent is made before the (slow) snapshot: a bad name is a usage error
        agents = {name: make_agent(name) for name in args.agents}
    except ValueError as error:
        parser.error(str(error))
    state, obs, mask = snapshot(args.batch, args.seed)
    live = np.flatnonzero(state.phase != engine.OVER)
    rng = np.random.default_rng(args.seed)
    for name, agent in agents.items():
        if searches_state(agent) and args.one_at_a_time:  # each game in play alone, in turn
            def decide():
                for game in live:
                    agent.act_on_state(state, game[None], rng)
            decisions = live.size
        elif searches_state(agent):  # search bots decide from the state, for the games in play
            decide, decisions = (lambda: agent.act_on_state(state, live, rng)), live.size
        else:
            decide, decisions = (lambda: agent.act(obs, mask, rng)), args.batch
        decide()  # warm-up (caches)
        calls, start = 0, time.perf_counter()
        while (elapsed := time.perf_counter() - start) < args.seconds:
            decide()
            calls += 1
        print(f"{name:>12}: {calls * decisions / elapsed:12,.1f} decisions/s  "
              f"({1000 * elapsed / calls:.2f} ms per call for {decisions} decisions, "
              f"{1000 * elapsed / calls / decisions:.3f} ms per decision)")

if __name__ == "__main__":
    main()
