"""OpenSpiel's own Python search bots against this package's heuristic, with intervals.

    python examples/openspiel_bots.py                        # mcts and ismcts, 60 one-deal games each
    python examples/openspiel_bots.py --bots mcts --games 120 --simulations 100

Each bot plays in evaluate's duplicate tournament (``evaluation.play_tables``) against two
``heuristic`` agents, through ``agents.ismcts.PyspielBotAgent``: for each decision it is
handed an OpenSpiel state of one world drawn for the seat to act (``worlds.sample_worlds``),
searching to the end of the deal:

* ``mcts``: ``open_spiel.python.algorithms.mcts.MCTSBot`` on the game with
  ``reward=score`` (it needs terminal rewards), random rollouts on the engine;
* ``ismcts``: ``open_spiel.python.algorithms.ismcts.ISMCTSBot`` as OpenSpiel ships it: tree
  nodes keyed by the game's information-state strings, each simulation from the game's own
  ``resample_from_infostate``; random rollouts on the engine.

Prints evaluate's table (points a game with 95% intervals over duplicate groups). Needs the
``openspiel`` extra.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

BOTS = ("mcts", "ismcts")


def make_bot_factory(kind: str, simulations: int):
    """``make_bot(game, rng)`` for ``PyspielBotAgent``."""
    from open_spiel.python.algorithms import ismcts, mcts

    from sergeant_major_env.agents.ismcts import EngineRolloutEvaluator

    def make_bot(game, rng):
        seed = np.random.RandomState(int(rng.integers(2**31)))
        evaluator = EngineRolloutEvaluator(None, rng)
        if kind == "mcts":
            return mcts.MCTSBot(game, uct_c=4.0, max_simulations=simulations, evaluator=evaluator, random_state=seed)
        return ismcts.ISMCTSBot(game, evaluator, 4.0, simulations, random_state=seed)

    return make_bot


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bots", default=",".join(BOTS), help=f"comma-separated, of {', '.join(BOTS)}")
    parser.add_argument("--games", type=int, default=60, help="games per bot (a multiple of 6; default 60)")
    parser.add_argument("--simulations", type=int, default=50, help="simulations a decision (default 50)")
    parser.add_argument("--seed", type=int, default=0, help="tournament seed (default 0)")
    args = parser.parse_args()
    bots = [name.strip() for name in args.bots.split(",") if name.strip()]
    if not bots or any(name not in BOTS for name in bots):
        parser.error(f"--bots: names among {', '.join(BOTS)}, got {args.bots!r}")
    if args.games < 12 or args.simulations < 1 or args.seed < 0:
        parser.error("--games must be at least 12 (two duplicate groups), --simulations positive, --seed >= 0")

    from sergeant_major_env.agents import make_agent
    from sergeant_major_env.agents.ismcts import PyspielBotAgent
    from sergeant_major_env.evaluation import TablePlan, play_tables

    for name in bots:
        agent = PyspielBotAgent(make_bot_factory(name, args.simulations), name=f"{name}:{args.simulations}",
                                reward="score" if name == "mcts" else "points")
        start = time.perf_counter()
        plan = TablePlan(games=args.games, seed=args.seed, rules={"num_deals": 1}, progress=False, workers=1)
        result = play_tables([agent, "heuristic", "heuristic"], plan, make_agent=make_agent)
        print(result.format_text())
        print(f"{args.games} games in {time.perf_counter() - start:.0f} s\n")


if __name__ == "__main__":
    main()
