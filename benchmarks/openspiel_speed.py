"""Speed of 3-5-8 through OpenSpiel: random play via pyspiel against OpenSpiel's C++ skat and
the PettingZoo AEC env, and the time per decision of search agents.

    python benchmarks/openspiel_speed.py
    python benchmarks/openspiel_speed.py --seconds 3 --repeats 3 --option num_deals=1
    python benchmarks/openspiel_speed.py --agents pimc,ismcts,ismcts:simulations=30 --positions 40

Random play (one core, one game at a time, whole games of the rules given, by default the
rule book's 18 deals, measured in one run). Through pyspiel, the same loop on
``python_sergeant_major`` and on OpenSpiel's C++ ``skat``: ``is_terminal()``,
``is_chance_node()``, a chance node's outcome drawn uniformly from ``chance_outcomes()``
(its time counts, it is not counted as a decision), and at each decision
``legal_actions()`` and ``apply_action`` of a uniformly random legal action, asking at
each decision

* ``play``: nothing more;
* ``observation``: ``observation_tensor(player)`` of the player to act;
* ``information``: ``information_state_tensor(player)`` of the player to act (skat has no
  information-state tensor: sergeant major's alone);

and ``aec``: ``sergeant_major_env.env()`` through ``agent_iter`` / ``last()`` / ``step``,
as benchmarks/aec.py does (each decision has the observation), beside pyspiel's
``observation``. Prints decisions/s, the median of --repeats runs of --seconds each (the
variants alternate run by run), the ratios to skat and to the AEC env, and the load
average before and after (the machine may be shared: compare ratios of one run).

With ``--agents``: milliseconds per decision of each agent, on the same --positions
positions with more than one legal action, taken from games of the heuristic playing all
seats (--option rules, default one deal); every agent decides each position once
(``act_on_state`` for search agents, a batch of one).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's package
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the other benchmarks' helpers

from sergeant_major_env import Rules, engine, env  # noqa: E402
from sergeant_major_env.cards import NUM_ACTIONS, bits_to_bool  # noqa: E402
from sergeant_major_env.policies import decide  # noqa: E402
from sergeant_major_env.arguments import SECONDS, SEED, add_rule_options  # noqa: E402
from aec import run_aec  # noqa: E402  (the AEC side measured exactly as benchmarks/aec.py measures it)

ASKED = {"play": None, "observation": "observation_tensor", "information": "information_state_tensor"}
"""What each random-play variant asks at every decision (module docstring)."""


def run_pyspiel(game, seconds: float, seed: int, ask: str | None = "observation_tensor") -> float:
    """Decisions/s of random play through pyspiel (chance nodes applied, not counted), asking
    the state's method ``ask`` (of the player to act) at every decision, if not None."""
    rng = random.Random(seed)
    choice = rng.choice
    state = game.new_initial_state()
    decisions = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        if state.is_terminal():
            state = game.new_initial_state()
        elif state.is_chance_node():
            state.apply_action(choice(state.chance_outcomes())[0])  # uniform outcomes (R4, R10)
        else:
            if ask is not None:
                getattr(state, ask)(state.current_player())
            state.apply_action(choice(state.legal_actions()))
            decisions += 1
    return decisions / (time.perf_counter() - start)


def load_average() -> str:
    """The 1, 5 and 15 minute load averages (the machine may be shared)."""
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


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
    parser.add_argument("--seconds", type=SECONDS, default=2.0, metavar="S",
                        help="length of one timed run (default 2)")
    parser.add_argument("--repeats", type=int, default=3, metavar="N",
                        help="timed runs per variant; the median is reported (default 3)")
    parser.add_argument("--seed", type=SEED, default=0, metavar="S", help="seed (default 0)")
    add_rule_options(parser, default_help="the rule book's; with --agents num_deals=1")
    parser.add_argument("--agents", default="", metavar="A,B",
                        help="time these agents' decisions instead of random play (comma-separated specs) (default: none: random play)")
    parser.add_argument("--positions", type=int, default=40, metavar="N",
                        help="positions each agent decides, with --agents (default 40)")
    args = parser.parse_args()
    if args.repeats < 1 or args.positions < 1:
        parser.error("--repeats and --positions must be positive")
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
    random_play(rules, args)


def random_play(rules: Rules, args: argparse.Namespace) -> None:
    """The random-play table of the module docstring, measured in one run."""
    import pyspiel

    import sergeant_major_env.openspiel  # noqa: F401  (registers python_sergeant_major)

    games = {"sergeant major": pyspiel.load_game("python_sergeant_major", rules.to_dict()),
             "skat": pyspiel.load_game("skat")}
    runs = {}
    for asked, method in ASKED.items():
        for name, game in games.items():
            if method != "information_state_tensor" or game.get_type().provides_information_state_tensor:
                runs[asked, name] = lambda s, seed, game=game, method=method: run_pyspiel(game, s, seed, method)
    runs["observation", "aec"] = lambda s, seed: run_aec(env(**rules.to_dict()), s, seed)
    print(f"random play through pyspiel, one game at a time, rules {rules.to_dict()}; median of {args.repeats} "
          f"x {args.seconds:g} s; {os.cpu_count()} CPUs, load average {load_average()}")
    for run in runs.values():
        run(min(0.3, args.seconds), args.seed)  # warm-up (and compiling, on a cold cache)
    times: dict = {key: [] for key in runs}
    for i in range(args.repeats):  # the variants alternate run by run
        for key, run in runs.items():
            times[key].append(run(args.seconds, args.seed + 1 + i))
    results = {key: statistics.median(values) for key, values in times.items()}
    print(f"{'asked at each decision':<24} {'sergeant major':>16} {'skat':>12} {'aec':>12}   ratios")
    for asked in ASKED:
        ours, skat, aec = (results.get((asked, name)) for name in ("sergeant major", "skat", "aec"))
        ratios = [f"/ {name} = {ours / other:.2f}" for name, other in (("skat", skat), ("aec", aec)) if other]
        print(f"{asked:<24} {ours:>16,.0f} {_cell(skat):>12} {_cell(aec):>12}   {'; '.join(ratios)}")
    print("decisions/s (chance nodes applied, not counted); load average after: " + load_average())


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


if __name__ == "__main__":
    main()
