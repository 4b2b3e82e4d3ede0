"""Time per decision of the ``pimc`` search bot in real games against the heuristic.

    python benchmarks/pimc_speed.py                       # 3 games of 18 deals, one at a time
    python benchmarks/pimc_speed.py --games 12 --together  # 12 games advancing together
    python benchmarks/pimc_speed.py --agent pimc:worlds=8:rollout=greedy --num-deals 6
    python benchmarks/pimc_speed.py --table --games 24 --against ../pimc_before  # old vs new

Plays ``--games`` games (pimc in seat g % 3 of game g, heuristic in the other two seats,
seeds ``--seed + g``) and times every call of pimc, printing the mean time per pimc decision
(every decision, the forced ones included, as a game needs them) and per searched decision
(more than one legal choice, after merging equivalent cards), and the mean by decision kind.
By default the games are played one at a time (the latency a single table sees);
``--together`` plays them as one batch (as evaluate.py does, which amortises numpy's fixed
costs over the games). ``--table`` plays evaluate.py's table instead: ``SPEC,heuristic,heuristic``
on duplicate deals (six seatings a seed, all games together), as ``sergeant-major evaluate --agents
SPEC,heuristic,heuristic --games N --seed S`` does, and also prints pimc's result.

``--against TREE`` times the same run with the code of another checkout too (a git worktree
of an earlier commit: ``git worktree add ../pimc_before COMMIT``), in a subprocess that
imports from TREE, alternately with this checkout's, ``--repeat`` times each, and prints
the ratio of the median wall times: on a shared machine the two then see the same load.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

# The checkout whose code is timed: this script's, or the --against tree in the subprocess.
CODE_ROOT = os.environ.get("PIMC_SPEED_CODE_ROOT") or str(Path(__file__).resolve().parents[1])
sys.path.insert(0, CODE_ROOT)

from sergeant_major_env.arguments import SEED  # noqa: E402
from sergeant_major_env.agents import make_agent  # noqa: E402
from sergeant_major_env import Rules, engine  # noqa: E402
from sergeant_major_env.agents.pimc import distinct_cards  # noqa: E402
from sergeant_major_env.cards import cards_to_bits, count  # noqa: E402
from sergeant_major_env.evaluation import play_games, play_tables  # noqa: E402

try:  # TablePlan since issue 31; --against may run this script with an older tree's code
    from sergeant_major_env.evaluation import TablePlan  # noqa: E402
except ImportError:
    TablePlan = None
from sergeant_major_env.policies import searches_state  # noqa: E402
from sergeant_major_env.seeding import check_seed  # noqa: E402


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
    parser.add_argument("--seed", type=SEED, default=0, metavar="S",
                        help="game g plays seed S+g; also seeds the agents' randomness (default 0)")
    parser.add_argument("--together", action="store_true",
                        help="play the games as one batch (default: off, one game at a time)")
    parser.add_argument("--table", action="store_true",
                        help="play evaluate.py's table SPEC,heuristic,heuristic on duplicate deals, all games "
                             "together, --games rounded up to a multiple of 6 (default: off)")
    parser.add_argument("--against", metavar="TREE", default=None,
                        help="also time the code of checkout TREE, alternately with this one (default: none)")
    parser.add_argument("--repeat", type=int, default=2, metavar="K",
                        help="runs of each checkout with --against (default 2)")
    parser.add_argument("--json-line", action="store_true", help=argparse.SUPPRESS)  # the --against subprocess
    args = parser.parse_args()
    if args.games < 1:
        parser.error(f"--games must be at least 1, got {args.games}")
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1, got {args.repeat}")
    if args.against is not None and not (Path(args.against) / "agents" / "pimc.py").is_file():
        parser.error(f"--against {args.against!r} is not a checkout of this project (no agents/pimc.py there)")
    try:
        last = args.seed + args.games - 1
        check_seed(last, "the last game's seed (--seed + --games - 1)")
        rules = Rules(num_deals=args.num_deals)
        engine.check_batch_fits(6 * args.games, f"--games {args.games}: a table")
        agent = make_agent(args.agent)
    except ValueError as error:
        parser.error(str(error))
    if not searches_state(agent):
        parser.error(f"--agent {args.agent[:60]!r} does not search the engine state (as pimc does); this benchmark "
                     f"times search agents: time other agents with benchmarks/agents_speed.py")
    timed = Timed(agent)
    if args.against is not None:
        compare(args)
        return
    run = play_table(args, timed, rules) if args.table else play_alone_or_together(args, timed, rules)
    if args.json_line:
        print(json.dumps(run))
        return
    print(run["title"])
    for line in run["lines"]:
        print(line)


def play_alone_or_together(args, timed: Timed, rules: Rules) -> dict:
    """pimc in seat g % 3 of game g against two heuristics, one game at a time or all together."""
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
    mode = "together (one batch)" if args.together else "one game at a time"
    return {"wall": wall, "title": f"{args.agent}: {args.games} games of {args.num_deals} deals, {mode}, "
                                   f"{wall:.0f} s wall", "lines": decision_lines(timed)}


def play_table(args, timed: Timed, rules: Rules) -> dict:
    """evaluate.py's table SPEC,heuristic,heuristic (duplicate seatings, one batch)."""
    start = time.perf_counter()
    players = [timed, make_agent("heuristic"), make_agent("heuristic")]
    names = [args.agent, "heuristic", "heuristic#2"]
    if TablePlan is None:  # an older tree: play_tables' keywords
        result = play_tables(players, games=args.games, seed=args.seed, rules=rules, progress=False, names=names)
    else:
        result = play_tables(players, TablePlan(games=args.games, seed=args.seed, rules=rules, progress=False),
                             names=names)
    wall = time.perf_counter() - start
    pimc = result.agent(args.agent)
    ci = "" if pimc.ci95 is None else f" [{pimc.ci95[0]:+.2f}, {pimc.ci95[1]:+.2f}]"
    return {"wall": wall, "mean_points": pimc.mean_points,
            "title": f"{args.agent},heuristic,heuristic: {result.games} games of {args.num_deals} deals "
                     f"(duplicate seatings, seed {args.seed}), {wall:.0f} s wall; {args.agent} "
                     f"{pimc.mean_points:+.2f}{ci} points per game", "lines": decision_lines(timed)}


def decision_lines(timed: Timed) -> list[str]:
    total_seconds, total = sum(timed.seconds.values()), sum(timed.decisions.values())
    lines = [f"  {1000 * total_seconds / max(total, 1):.1f} ms per decision on average ({total} decisions, "
             f"{timed.searched} of them searched: {1000 * total_seconds / max(timed.searched, 1):.1f} ms each)"]
    for kind in engine.DECISIONS[:5]:
        if timed.decisions[kind]:
            lines.append(f"  {kind:<16} {timed.decisions[kind]:>6} decisions  "
                         f"{1000 * timed.seconds[kind] / timed.decisions[kind]:8.1f} ms each")
    return lines


def compare(args) -> None:
    """This checkout and --against TREE, run alternately in subprocesses (same arguments)."""
    argv = strip_options(sys.argv[1:], ("--against", "--repeat"))
    trees = {"this checkout": CODE_ROOT, "--against": str(Path(args.against).resolve())}
    walls: dict[str, list[float]] = {name: [] for name in trees}
    for k in range(args.repeat):
        for name, tree in trees.items():
            done = subprocess.run([sys.executable, str(Path(__file__).resolve()), *argv, "--json-line"],
                                  env={**os.environ, "PIMC_SPEED_CODE_ROOT": tree}, capture_output=True, text=True)
            if done.returncode != 0:
                sys.exit(f"pimc_speed.py: the run with {tree} failed: {done.stderr.strip().splitlines()[-1]}")
            run = json.loads(done.stdout.strip().splitlines()[-1])
            walls[name].append(run["wall"])
            print(f"run {k + 1}, {name} ({tree}): {run['title']}")
    new, old = (float(np.median(walls[name])) for name in trees)
    print(f"median wall: this checkout {new:.1f} s, --against {old:.1f} s: {old / new:.2f}x faster")


def strip_options(argv: list[str], names: tuple[str, ...]) -> list[str]:
    """``argv`` without the given options and their values (``--name V`` or ``--name=V``)."""
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg in names:
            skip = True
        elif not arg.startswith(tuple(f"{name}=" for name in names)):
            out.append(arg)
    return out


if __name__ == "__main__":
    main()
