"""Strength of agents: duplicate tables of three agents through the batched engine.

    python benchmarks/agents_strength.py heuristic greedy greedy --groups 200
    python benchmarks/agents_strength.py greedy random random --groups 200 --option num_deals=6

Each duplicate *group* is one game seed played under every distinct seating of the three
agents (6 seatings, or 3 when two agents are the same), so every agent plays the same
cards from every seat. Reported per distinct agent: mean final points per game (an agent
listed twice counts the mean of its two seats) with a 95% confidence interval over the
groups, and the speed of the whole run. All games are batched: for each decision the
games whose acting seat belongs to agent X are gathered and X decides for all of them
in one ``act`` call.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sergeant_major_env.agents import make_agent  # noqa: E402
from sergeant_major_env.agents.human import refuse_human  # noqa: E402
from sergeant_major_env import Rules, engine  # noqa: E402
from sergeant_major_env.cards import bits_to_bool  # noqa: E402
from sergeant_major_env.limits import check_fits  # noqa: E402
from sergeant_major_env.observation import OBSERVATION_SIZE, observe  # noqa: E402
from sergeant_major_env.arguments import SEED, add_rule_options  # noqa: E402
from sergeant_major_env.seeding import MAX_SEED  # noqa: E402


SEED_STRIDE = 1_000_003  # group g of --seed S plays game seed S * SEED_STRIDE + g


def play_table(agents: list, seeds: np.ndarray, seatings: np.ndarray, rules: Rules, rng: np.random.Generator,
               timings: dict | None = None) -> np.ndarray:
    """Final scores ``int[B, 3]`` by seat; game i seats agent ``seatings[i, s]`` at seat s."""
    state = engine.init(seeds, rules)
    rows = np.arange(seeds.size)
    needs_obs = [getattr(a, "needs_observations", True) for a in agents]
    while True:
        active = np.flatnonzero(state.phase != engine.OVER)
        if active.size == 0:
            break
        legal = engine.legal_bits(state)
        mask = bits_to_bool(legal, 58)
        who = seatings[rows, np.maximum(state.to_act, 0)]
        actions = np.zeros(seeds.size, dtype=np.int64)
        obs = observe(state, np.maximum(state.to_act, 0)) if any(needs_obs) else None
        for k, agent in enumerate(agents):
            games = active[who[active] == k]
            if games.size == 0:
                continue
            o = obs[games] if needs_obs[k] else np.zeros((games.size, OBSERVATION_SIZE), np.float32)
            start = time.perf_counter()
            actions[games] = agent.act(o, mask[games], rng)
            if timings is not None:
                t = timings.setdefault(k, [0.0, 0])
                t[0] += time.perf_counter() - start
                t[1] += games.size
        engine.step(state, actions, legal=legal)
    return state.final_scores.astype(np.int64)


def duplicate_match(names: list[str], groups: int, seed: int, rules: Rules, batch_groups: int = 200,
                    agents: list | None = None):
    """The table ``names`` (agents made by make_agent unless ``agents`` are given, one per name):
    group g plays game seed ``seed * SEED_STRIDE + g`` under every distinct seating."""
    agents = [make_agent(n) for n in names] if agents is None else agents
    seatings = sorted(set(itertools.permutations(range(3))))
    # Agents listed twice (same name) are the same player: index by distinct name.
    distinct = list(dict.fromkeys(names))
    slot_of = [distinct.index(n) for n in names]
    perms = sorted(set(tuple(slot_of[i] for i in p) for p in seatings))
    per_group = np.zeros((groups, len(distinct)))
    rng = np.random.default_rng(seed)
    timings: dict = {}
    unique_agents = [agents[names.index(n)] for n in distinct]
    start = time.perf_counter()
    for g0 in range(0, groups, batch_groups):
        g = np.arange(g0, min(groups, g0 + batch_groups))
        seeds = np.repeat(np.uint64(seed * SEED_STRIDE) + g.astype(np.uint64), len(perms))
        seat_table = np.tile(np.array(perms), (g.size, 1))
        scores = play_table(unique_agents, seeds, seat_table, rules, rng, timings)
        for k in range(len(distinct)):
            pts = np.where(seat_table == k, scores, 0).sum(axis=1) / (seat_table == k).sum(axis=1)
            per_group[g, k] = pts.reshape(g.size, len(perms)).mean(axis=1)
    elapsed = time.perf_counter() - start
    result = {"agents": names, "groups": groups, "games": groups * len(perms), "seconds": round(elapsed, 1),
              "rules": rules.to_dict(), "results": {}}
    for k, name in enumerate(distinct):
        mean = per_group[:, k].mean()
        half = 1.96 * per_group[:, k].std(ddof=1) / np.sqrt(groups) if groups > 1 else float("nan")
        t = timings.get(k, [0.0, 1])
        result["results"][name] = {"mean_points": round(float(mean), 3), "ci95": round(float(half), 3),
                                   "decisions_per_s": round(t[1] / max(t[0], 1e-9))}
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("agents", nargs=3, metavar="AGENT", help="three agent specs (agents.make_agent names)")
    parser.add_argument("--groups", type=int, default=200, metavar="N",
                        help="duplicate groups, one game seed each (default 200)")
    parser.add_argument("--seed", type=SEED, default=0, metavar="S",
                        help=f"group j plays game seed S*{SEED_STRIDE}+j; also seeds the agents' randomness (default 0)")
    parser.add_argument("--batch-groups", type=int, default=200, metavar="N",
                        help="groups played in one batch (default 200)")
    add_rule_options(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text (default: off)")
    args = parser.parse_args()
    if args.groups < 1 or args.batch_groups < 1:
        parser.error(f"--groups and --batch-groups must be at least 1, got --groups {args.groups} "
                     f"--batch-groups {args.batch_groups}")
    if args.seed * SEED_STRIDE + args.groups - 1 > MAX_SEED:
        parser.error(f"--seed {args.seed} is too large: group j plays game seed S*{SEED_STRIDE}+j, which must stay "
                     f"at most 2**63 - 1; give a seed of at most {(MAX_SEED - args.groups + 1) // SEED_STRIDE}")
    try:
        rules = Rules.from_strings(args.option)
        for name in args.agents:  # input() would end in EOFError
            refuse_human(name, f"agents_strength.py {name}", "a benchmark has no person at its table")
        engine.check_batch_fits(6 * min(args.groups, args.batch_groups), f"--batch-groups {args.batch_groups}: a batch")
        check_fits(f"--groups {args.groups}", args.groups * 8 * len(set(args.agents)), "give fewer --groups")
        agents = [make_agent(name) for name in args.agents]  # a bad name is a usage error before any game
    except ValueError as error:
        parser.error(str(error))
    result = duplicate_match(args.agents, args.groups, args.seed, rules, args.batch_groups, agents)
    if args.json:
        print(json.dumps(result))
        return
    print(f"{' vs '.join(args.agents)}: {result['games']} games ({result['groups']} duplicate groups), "
          f"{result['seconds']} s, rules {rules.to_dict()}")
    for name, r in result["results"].items():
        print(f"  {name:>12}: {r['mean_points']:+.2f} ± {r['ci95']:.2f} points per game   "
              f"({r['decisions_per_s']:,} decisions/s in act)")


if __name__ == "__main__":
    main()
