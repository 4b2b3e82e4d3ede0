"""Time per decision of the ``pimc`` search bot in real games against the heuristic.

    python benchmarks/pimc_speed.py                       # 3 games of 18 deals, one at a time
    python benchmarks/pimc_speed.py --games 12 --together  # 12 games advancing together
    python benchmarks/pimc_speed.py --agent pimc:worlds=8:rollout=greedy --num-deals 6

Plays ``--games`` games (pimc in seat g % 3 of game g, heuristic in the other two seats,
seeds ``--seed + g``) and times every call of pimc, printing the mean time per pimc decision
(every decision, the forced ones included, as a game needs them) and per searched decision
(more than one legal choice, after merging equivalent cards), and the mean by decision kind.
By default the games are played one at a time (the latency a single table sees);
``--together`` plays them as one batch (as evaluate.py does, which amortises numpy's fixed
costs over the games). The issue's target: at most 50 ms per decision on average.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents import make_agent  # noqa: E402
from sergeant_major_env import Rules, engine  # noqa: E402
from agents.pimc import distinct_cards  # noqa: E402
from sergeant_major_env.cards import cards_to_bits, count  # noqa: E402
from sergeant_major_env.evaluation import play_games  # noqa: E402
from sergeant_major_env.seeding import check_seed, seed_argument  # noqa: E402


class Timed:
    """Wraps a search agent, timing each call by decision kind."""

    def __init__(self, agent) -> None:
        self.agent, self.name = agent, agent.name
        self.seconds = collections.Counter()
        self.decisions = collections.Counter()
        self.searched = 0

    def act(self, observations, legal_mask, rng):  # never called: the agent searches the state
        raise TypeError("pimc decides through act_on_state")

    def act_on_state(self, state, games, rng):
        kinds = state.phase[games]
        start = time.perf_counter()
        actions = self.agent.act_on_state(state, games, rng)
        elapsed = time.perf_counter() - start
        for kind in np.unique(kinds).tolist():  # a batch's time is shared out by decisions
            share = np.count_nonzero(kinds == kind)
            self.seconds[engine.DECISIONS[kind]] += elapsed * share / games.size
            self.decisions[engine.DECISIONS[kind]] += share
        played = np.bitwise_or.reduce(state.played[games], axis=1) & ~cards_to_bits(state.trick[games])
        choices = distinct_cards(engine.legal_bits(state, games), played)
        self.searched += int(np.count_nonzero(count(choices) > 1))
        return actions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agent", default="pimc", metavar="SPEC",
                        help="the search agent, an agents.make_agent name (default: pimc, its default settings)")
    parser.add_argument("--games", type=int, default=3, metavar="N", help="games played (default 3)")
    parser.add_argument("--num-deals", type=int, default=18, metavar="D",
                        help="deals per game, 1 to 18 (default 18, the full game)")
    parser.add_argument("--seed", type=seed_argument, default=0, metavar="S",
                        help="game g plays seed S+g; also seeds the agents' randomness (default 0)")
    parser.add_argument("--together", action="store_true",
                        help="play the games as one batch (default: off, one game at a time)")
    args = parser.parse_args()
    if args.games < 1:
        parser.error(f"--games must be at least 1, got {args.games}")
    try:
        last = args.seed + args.games - 1
        check_seed(last, "the last game's seed (--seed + --games - 1)")
        rules = Rules(num_deals=args.num_deals)
        timed = Timed(make_agent(args.agent))
    except ValueError as error:
        parser.error(str(error))
    heuristic = make_agent("heuristic")
    seeds = np.arange(args.seed, args.seed + args.games)
    seat_players = np.array([np.roll([0, 1, 2], g % 3) for g in range(args.games)])  # pimc = player 0
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    if args.together:
        play_games([timed, heuristic, heuristic], seeds, seat_players, rules, rng)
    else:
        for g in range(args.games):
            play_games([timed, heuristic, heuristic], seeds[g:g + 1], seat_players[g:g + 1], rules, rng)
    wall = time.perf_counter() - start
    total_seconds, total = sum(timed.seconds.values()), sum(timed.decisions.values())
    mode = "together (one batch)" if args.together else "one game at a time"
    print(f"{args.agent}: {args.games} games of {args.num_deals} deals, {mode}, {wall:.0f} s wall")
    print(f"  {1000 * total_seconds / total:.1f} ms per decision on average ({total} decisions, "
          f"{timed.searched} of them searched: {1000 * total_seconds / max(timed.searched, 1):.1f} ms each)")
    for kind in engine.DECISIONS[:5]:
        if timed.decisions[kind]:
            print(f"  {kind:<16} {timed.decisions[kind]:>6} decisions  "
                  f"{1000 * timed.seconds[kind] / timed.decisions[kind]:8.1f} ms each")


if __name__ == "__main__":
    main()
