"""Speed of 3-5-8 through OpenSpiel: random play via pyspiel against the PettingZoo AEC env,
and the time per decision of search agents.

    python benchmarks/openspiel_speed.py
    python benchmarks/openspiel_speed.py --seconds 3 --repeats 3 --option num_deals=1
    python benchmarks/openspiel_speed.py --agents pimc,ismcts,ismcts:simulations=30 --positions 40

Random play (one core, one game at a time, measured in one run): each decision gets the
legal actions, the deciding player's observation tensor and a uniformly random legal
action, then

* ``pyspiel``: ``state.legal_actions()``, ``state.observation_tensor(player)``,
  ``state.apply_action`` on ``python_sergeant_major``; the deal's 52 chance nodes (and the
  lot) are applied too, drawn from ``chance_outcomes()`` (their time counts, they are not
  counted as decisions);
* ``aec``: ``sergeant_major_env.env()`` through ``agent_iter`` / ``last()`` / ``step``, as
  benchmarks/aec.py does.

Prints decisions/s, the median of --repeats runs of --seconds each, and the ratio.

With ``--agents``: milliseconds per decision of each agent, on the same --positions
positions with more than one legal action, taken from games of the heuristic playing all
seats (--option rules, default one deal); every agent decides each position once
(``act_on_state`` for search agents, a batch of one).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from sergeant_major_env import Rules, engine, env
from sergeant_major_env.cards import NUM_ACTIONS, bits_to_bool
from sergeant_major_env.policies import decide
from sergeant_major_env.rules import add_rule_options
from sergeant_major_env.seeding import seed_argument

sys.path.insert(0, str(Path(__file__).resolve().parent))
from aec import run_aec  # noqa: E402  (the AEC side measured exactly as benchmarks/aec.py measures it)


def run_pyspiel(game, seconds: float, seed: int) -> float:
    """Decisions/s of random play through pyspiel (chance nodes applied, not counted)."""
    rng = random.Random(seed)
    state = game.new_initial_state()
    decisions = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        if state.is_terminal():
            state = game.new_initial_state()
        elif state.is_chance_node():
            state.apply_action(rng.choice(state.chance_outcomes())[0])  # uniform outcomes (R4, R10)
        else:
            state.observation_tensor(state.current_player())
            state.apply_action(rng.choice(state.legal_actions()))
            decisions += 1
    return decisions / (time.perf_counter() - start)


def positions(rules: Rules, count: int, seed: int) -> list[engine.State]:
    """``count`` decisions with more than one legal action from heuristic games (copies)."""
    from sergeant_major_env.agents import make_agent

    heuristic, rng = make_agent("heuristic"), np.random.default_rng(seed)
    found, game_seed = [], seed
    while len(found) < count:
        state = engine.init([game_seed], rules)
        game_seed += 1
        while state.phase[0] != engine.OVER and len(found) < count:
            legal = engine.legal_bits(state)
            if int(legal[0]).bit_count() > 1 and rng.random() < 0.25:
                found.append(state.copy())
            mask = bits_to_bool(legal, NUM_ACTIONS)
            engine.step(state, decide(heuristic, state, np.zeros(1, np.intp), mask, rng), legal=legal)
    return found


def ms_per_decision(spec: str, states: list[engine.State], seed: int) -> float:
    """Mean milliseconds of one decision of agent ``spec`` over ``states``."""
    from sergeant_major_env.agents import make_agent

    agent, rng = make_agent(spec), np.random.default_rng(seed)
    start = time.perf_counter()
    for state in states:
        decide(agent, state, np.zeros(1, np.intp), engine.legal_action_mask(state), rng)
    return 1000 * (time.perf_counter() - start) / len(states)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=2.0, metavar="S", help="length of one timed run (default 2)")
    parser.add_argument("--repeats", type=int, default=3, metavar="N",
                        help="timed runs per variant; the median is reported (default 3)")
    parser.add_argument("--seed", type=seed_argument, default=0, metavar="S", help="seed (default 0)")
    add_rule_options(parser, default_help="the rule book's; with --agents num_deals=1")
    parser.add_argument("--agents", default="", metavar="A,B",
                        help="time these agents' decisions instead of random play (comma-separated specs) (default: none: random play)")
    parser.add_argument("--positions", type=int, default=40, metavar="N",
                        help="positions each agent decides, with --agents (default 40)")
    args = parser.parse_args()
    if args.seconds <= 0 or args.repeats < 1 or args.positions < 1:
        parser.error("--seconds, --repeats and --positions must be positive")
    try:
        rules = Rules.from_strings(args.option if args.option or not args.agents else ["num_deals=1"])
    except ValueError as error:
        parser.error(str(error))

    if args.agents:
        states = positions(rules, args.positions, args.seed)
        print(f"{args.positions} positions, rules {rules.to_dict()}")
        for spec in filter(None, (s.strip() for s in args.agents.split(","))):
            print(f"{spec:<40} {ms_per_decision(spec, states, args.seed):8.1f} ms/decision")
        return

    import pyspiel

    import sergeant_major_env.openspiel  # noqa: F401  (registers python_sergeant_major)

    game = pyspiel.load_game("python_sergeant_major", rules.to_dict())
    variants = {"pyspiel": lambda s, seed: run_pyspiel(game, s, seed),
                "aec": lambda s, seed: run_aec(env(**rules.to_dict()), s, seed)}
    results = {}
    for name, run in variants.items():
        run(min(0.3, args.seconds), args.seed)  # warm-up
        results[name] = statistics.median(run(args.seconds, args.seed + 1 + i) for i in range(args.repeats))
    print(f"random play, rules {rules.to_dict()}, median of {args.repeats} x {args.seconds:g} s")
    for name, value in results.items():
        print(f"{name:<8} {value:10,.0f} decisions/s")
    print(f"pyspiel / aec = {results['pyspiel'] / results['aec']:.2f}")


if __name__ == "__main__":
    main()
