"""Speed of the PettingZoo AEC environment: random masked games through the full AEC API.

    python benchmarks/aec.py
    python benchmarks/aec.py --seconds 3 --repeats 5 --json

One core, one game at a time. Each decision is ``agent_iter`` / ``last()`` (observation and
action mask) / ``step`` with a uniformly random legal action (``random.choice`` over the
mask, as ``pettingzoo.test.performance_benchmark`` does); finished games are stepped out
(``step(None)`` per agent, not counted) and reset. Prints decisions/s, the median of
--repeats runs of --seconds each (the variants alternate run by run), for:

* ``env``: ``sergeant_major_env.env()``, wrappers included (the number that counts);
* ``do-nothing``: PettingZoo's own ceiling, an AEC env with the same agents, spaces and
  wrappers whose steps do no game (:class:`DoNothingEnv`); the goal is ``env`` >= 80% of it;
* ``raw_env``: the same without PettingZoo's wrappers;
* ``engine``: the engine alone doing the same work per decision (the one-game kernel:
  mask, observation of the seat to act, the step; the same random choice), i.e. the
  adapter's floor;

and, when one can be imported, a PettingZoo classic card game through the same loop
(``leduc_holdem_v4``, ``texas_holdem_v4`` need rlcard; ``hanabi_v5`` needs open_spiel)
with the ratio env / classic. The target is 15,000 decisions/s for ``env``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's package

from pettingzoo import AECEnv  # noqa: E402
from pettingzoo.utils import wrappers  # noqa: E402

from sergeant_major_env import Rules, engine, env, raw_env  # noqa: E402
from sergeant_major_env.aec import CheckedActionsWrapper  # noqa: E402
from sergeant_major_env.cards import NUM_ACTIONS  # noqa: E402
from sergeant_major_env.observation import OBSERVATION_SIZE  # noqa: E402
from sergeant_major_env.one_game import OneGame  # noqa: E402
from sergeant_major_env.arguments import SECONDS, SEED, add_rule_options  # noqa: E402
from sergeant_major_env.seeding import check_seed  # noqa: E402

TARGET = 15_000
CLASSIC_CARD_GAMES = ("leduc_holdem_v4", "texas_holdem_v4", "hanabi_v5")


def run_aec(game, seconds: float, seed: int) -> float:
    """Decisions/s of random masked play through the AEC API of ``game`` (any AEC env)."""
    choose = random.Random(seed).choice
    game.reset(seed=seed)
    decisions = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in game.agent_iter():
            observation, _, termination, truncation, _ = game.last()
            if termination or truncation:
                game.step(None)
                continue
            game.step(choose(np.flatnonzero(observation["action_mask"]).tolist()))
            decisions += 1
        game.reset()
    return decisions / (time.perf_counter() - start)


def run_engine(rules: Rules, seconds: float, seed: int) -> float:
    """Decisions/s of the engine alone doing the adapter's work for each decision: the one-game
    kernel (mask and observation of the seat to act, the step) and the same random choice."""
    choose = random.Random(seed).choice
    seeds = np.random.default_rng(seed)
    game = OneGame(engine.init([seed], rules))
    decisions = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        game.observation.copy()  # what last() hands out
        game.step(choose(np.flatnonzero(game.mask.copy()).tolist()))
        decisions += 1
        if game.state.game_ended[0]:
            game = OneGame(engine.init([int(seeds.integers(2**63))], rules))
    return decisions / (time.perf_counter() - start)


class DoNothingEnv(AECEnv):
    """PettingZoo's own ceiling: a 3-player AEC env with this game's agents, spaces and wrappers
    whose step does no game at all (a fixed observation and an all-ones mask, copied as
    ``raw_env`` copies its own; the turn passes left; the game ends after ``length`` decisions)."""

    metadata = {"name": "do_nothing_v0", "render_modes": [], "is_parallelizable": False}

    def __init__(self, length: int = 1000) -> None:
        super().__init__()
        template = raw_env()
        self.possible_agents = list(template.possible_agents)
        self.observation_spaces, self.action_spaces = template.observation_spaces, template.action_spaces
        self._observation = np.zeros(OBSERVATION_SIZE, dtype=np.float32)
        self._mask = np.ones(NUM_ACTIONS, dtype=np.int8)
        self._length, self._left = length, length

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def reset(self, seed=None, options=None) -> None:
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {agent: {} for agent in self.agents}
        self.agent_selection, self._left = self.agents[0], self._length

    def observe(self, agent):
        return {"observation": self._observation.copy(), "action_mask": self._mask.copy()}

    def step(self, action) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        self._left -= 1
        if not self._left:
            self.terminations = dict.fromkeys(self.agents, True)
        self.agent_selection = self.agents[(self.agents.index(agent) + 1) % 3]
        self._accumulate_rewards()


def do_nothing_env() -> AECEnv:
    """:class:`DoNothingEnv` in the wrappers :func:`sergeant_major_env.env` puts around raw_env."""
    return wrappers.OrderEnforcingWrapper(CheckedActionsWrapper(DoNothingEnv()))


def classic_card_game() -> tuple[str, object | None, str]:
    """(name, a constructor, note) of the first importable PettingZoo classic card game."""
    notes = []
    for name in CLASSIC_CARD_GAMES:
        try:
            module = importlib.import_module(f"pettingzoo.classic.{name}")
            module.env().reset(seed=0)  # some fail only when built (missing optional packages)
            return name, module.env, ""
        except Exception as error:  # noqa: BLE001 - any missing optional dependency means "skip"
            notes.append(f"{name}: {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}")
    return "", None, "no PettingZoo classic card game could be built (" + "; ".join(notes) + ")"


def median_runs(variants: dict, repeats: int, seconds: float, seed: int) -> dict:
    """Each variant's median decisions/s and runs; the variants alternate run by run, so that
    all see the same load."""
    for run in variants.values():
        run(min(0.3, seconds), seed)  # warm-up
    runs = {name: [] for name in variants}
    for i in range(repeats):
        for name, run in variants.items():
            runs[name].append(run(seconds, seed + 1 + i))
    return {name: {"decisions_per_s": round(statistics.median(values)), "runs": [round(r) for r in values]}
            for name, values in runs.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=SECONDS, default=2.0, metavar="S",
                        help="length of one timed run, 0.01 to 3600 (default 2)")
    parser.add_argument("--repeats", type=int, default=5, metavar="N",
                        help="timed runs per variant; the median is reported (default 5)")
    parser.add_argument("--seed", type=SEED, default=0, metavar="S",
                        help="seed of the games and the random actions (default 0)")
    add_rule_options(parser)
    parser.add_argument("--only-env", action="store_true",
                        help="time only env(), skipping raw_env, engine and classic (default: off, time all)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text (default: off)")
    args = parser.parse_args()
    if args.seconds <= 0 or args.repeats < 1:
        parser.error(f"--seconds and --repeats must be positive, got --seconds {args.seconds:g} "
                     f"--repeats {args.repeats}")
    try:
        rules = Rules.from_strings(args.option)
        last = args.seed + args.repeats  # run i resets with seed + 1 + i
        check_seed(last, "the last run's seed (--seed + --repeats)")
    except ValueError as error:
        parser.error(str(error))
    options = rules.to_dict()

    variants = {"env": lambda s, seed: run_aec(env(**options), s, seed),
                "do-nothing": lambda s, seed: run_aec(do_nothing_env(), s, seed)}
    if not args.only_env:
        variants["raw_env"] = lambda s, seed: run_aec(raw_env(**options), s, seed)
        variants["engine"] = lambda s, seed: run_engine(rules, s, seed)
    results = median_runs(variants, args.repeats, args.seconds, args.seed)

    classic = {"skipped": "--only-env"} if args.only_env else {}
    if not args.only_env:
        name, make, note = classic_card_game()
        if make is None:
            classic = {"skipped": note}
        else:
            classic = median_runs({name: lambda s, seed: run_aec(make(), s, seed)}, args.repeats, args.seconds,
                                  args.seed)[name]
            classic.update(name=name, ratio_env_to_classic=round(results["env"]["decisions_per_s"]
                                                                 / classic["decisions_per_s"], 3))

    if args.json:
        print(json.dumps({"rules": options, "seconds": args.seconds, "repeats": args.repeats, "target": TARGET,
                          **results, "classic": classic}))
        return
    print(f"random masked games, median of {args.repeats} runs of {args.seconds:g} s, rules {options}")
    for name, result in results.items():
        print(f"  {name:8s} {result['decisions_per_s']:>8,} decisions/s   runs {result['runs']}")
    env_rate = results["env"]["decisions_per_s"]
    print(f"  env is {env_rate / results['do-nothing']['decisions_per_s']:.0%} of the do-nothing env "
          f"(the goal: 80%), {env_rate / TARGET:.0%} of the {TARGET:,} decisions/s target")
    if "engine" in results:
        per_decision = {name: 1e6 / r["decisions_per_s"] for name, r in results.items()}
        print(f"  per decision: engine {per_decision['engine']:.1f} us, adapter +"
              f"{per_decision['raw_env'] - per_decision['engine']:.1f} us, wrappers +"
              f"{per_decision['env'] - per_decision['raw_env']:.1f} us")
    if "name" in classic:
        print(f"  classic {classic['name']}: {classic['decisions_per_s']:,} decisions/s; "
              f"env / classic = {classic['ratio_env_to_classic']:.2f}")
    else:
        print(f"  classic card game skipped: {classic['skipped']}")


if __name__ == "__main__":
    main()
