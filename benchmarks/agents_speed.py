"""Speed of the agents' batched ``act``: decisions per second at a given batch size.

    python benchmarks/agents_speed.py --batch 1024 random greedy heuristic
    python benchmarks/agents_speed.py heuristic --batch 1 8 64 512      # one line per batch size
    python benchmarks/agents_speed.py --batch 64 --one-at-a-time pimc    # one decision at a time
    python benchmarks/agents_speed.py heuristic --reference --card-sets --batch 1 4096   # against 0.3.0

The batch is a snapshot of B games of random play, each stopped after a different number of
moves, so it mixes every kind of decision and every stage of a game;
each agent decides for the whole batch repeatedly for ``--seconds``. With several batch
sizes the snapshot has as many games as the largest, and a smaller batch takes its games
in turn, b at a time (so that small batches see many positions, as the vec env's opponent
rounds do: their fixed cost per call is what a small batch measures). Search agents (pimc)
decide from the state, for the games still in play.

``--card-sets`` asks the agents that take it (the heuristic) through ``act_on_card_sets``
with the snapshot's ``observe_card_sets``, as ``policies.decide`` (environments, pimc's
rollouts) does; ``--reference`` times the heuristic of 0.3.0 in the same run (numpy over the
batch, frozen in ``tests/reference_heuristic_030.py``), as ``heuristic-0.3.0``.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sergeant_major_env.agents import make_agent  # noqa: E402
from sergeant_major_env.agents.human import refuse_human  # noqa: E402
from sergeant_major_env import Rules, engine  # noqa: E402
from sergeant_major_env.cards import random_member  # noqa: E402
from sergeant_major_env.arguments import SECONDS, SEED  # noqa: E402
from sergeant_major_env.observation import observe, observe_card_sets  # noqa: E402
from sergeant_major_env.policies import searches_state  # noqa: E402


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
    parser.add_argument("--batch", type=int, nargs="+", default=[1024], metavar="B",
                        help="games each call decides for; several sizes give one line each (default 1024)")
    parser.add_argument("--seconds", type=SECONDS, default=2.0, metavar="S",
                        help="how long each agent is timed, 0.01 to 3600 (default 2)")
    parser.add_argument("--seed", type=SEED, default=0, metavar="S",
                        help="seed of the snapshot's games and of the agents' randomness (default 0)")
    parser.add_argument("--one-at-a-time", action="store_true",
                        help="search agents: decide for each game of the batch alone, the latency of one "
                             "decision (default: off, the whole batch at once)")
    parser.add_argument("--card-sets", action="store_true",
                        help="ask agents with act_on_card_sets (the heuristic) in that form, as environments "
                             "and pimc's rollouts do (default: act on the float observations)")
    parser.add_argument("--reference", action="store_true",
                        help="also time the heuristic of 0.3.0 (tests/reference_heuristic_030.py) in the same run "
                             "(default: off)")
    args = parser.parse_args()
    if min(args.batch) < 1 or args.seconds <= 0:
        parser.error(f"--batch must be at least 1 and --seconds positive, got --batch "
                     f"{' '.join(map(str, args.batch))} --seconds {args.seconds:g}")
    try:  # every agent is made before the (slow) snapshot: a bad name is a usage error
        for name in args.agents:  # input() would end in EOFError
            refuse_human(name, f"agents_speed.py {name}", "a benchmark has no person at its table")
        engine.check_batch_fits(max(args.batch), "--batch: a batch")
        agents = {name: make_agent(name) for name in args.agents}
        if args.reference:
            agents["heuristic-0.3.0"] = _reference_heuristic()
    except ValueError as error:
        parser.error(str(error))
    state, obs, mask = snapshot(max(args.batch), args.seed)
    card_sets = observe_card_sets(state, np.maximum(state.to_act, 0)) if args.card_sets else None
    in_play = np.flatnonzero(state.phase != engine.OVER)
    rng = np.random.default_rng(args.seed)
    for name, agent in agents.items():
        for batch in args.batch:
            decide, decisions = _decider(agent, state, obs, mask, in_play, batch, args.one_at_a_time, rng,
                                         card_sets)
            decide()  # warm-up (caches)
            calls, start = 0, time.perf_counter()
            while (elapsed := time.perf_counter() - start) < args.seconds:
                decide()
                calls += 1
            print(f"{name:>12} B={batch:<5}: {calls * decisions / elapsed:12,.1f} decisions/s  "
                  f"({1000 * elapsed / calls:.2f} ms per call for {decisions} decisions, "
                  f"{1000 * elapsed / calls / decisions:.3f} ms per decision)")


def _reference_heuristic():
    """The heuristic of 0.3.0, frozen in the tests (tests/reference_heuristic_030.py)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    import reference_heuristic_030
    return reference_heuristic_030.HeuristicAgent()


def _decider(agent, state: engine.State, obs: np.ndarray, mask: np.ndarray, in_play: np.ndarray, batch: int,
             one_at_a_time: bool, rng: np.random.Generator, card_sets: tuple | None = None):
    """(a call that makes ``agent`` decide for ``batch`` games of the snapshot, the decisions it makes)."""
    if searches_state(agent):  # search bots decide from the state, for games in play
        live = in_play[:batch]
        if one_at_a_time:  # each game alone, in turn
            def decide():
                for game in live:
                    agent.act_on_state(state, game[None], rng)
            return decide, live.size
        return (lambda: agent.act_on_state(state, live, rng)), live.size
    # The snapshot's games b at a time, in turn (the whole snapshot when b is its size).
    starts = itertools.cycle(range(0, obs.shape[0] - batch + 1, batch))

    if card_sets is not None and callable(getattr(agent, "act_on_card_sets", None)):
        sets, rest = card_sets

        def decide():
            start = next(starts)
            agent.act_on_card_sets(sets[start:start + batch], rest[start:start + batch], mask[start:start + batch], rng)
        return decide, batch

    def decide():
        start = next(starts)
        agent.act(obs[start:start + batch], mask[start:start + batch], rng)
    return decide, batch


if __name__ == "__main__":
    main()
