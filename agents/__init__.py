"""Baseline agents of 3-5-8, all batched policies ([`sergeant_major_env.policies.Policy`][]).

| name | agent |
|---|---|
| `random` | [`RandomAgent`][]: a uniformly random legal action |
| `greedy` | [`GreedyAgent`][]: simple, fast rules (win cheaply, duck in MIN) |
| `heuristic` | [`HeuristicAgent`][]: the strongest rule-based player (card reading, planned mode choice, exchanges, discards) |
| `ppo:PATH` | [`PPOAgent`][]: a policy trained by train.py: a run folder or its policy.safetensors (code-free: never unpickles) |
| `learned` | the newest trained policy shipped with the package (`sergeant_major_env.agents.learned`): a [`PPOAgent`][] whose `.metadata` gives its training and measured strength; the top rung of the ladder |
| `learned-r2` | the ladder (`LADDER_ROUNDS` in `sergeant_major_env.agents.learned`): round 2 of `distill rounds`, kept fixed under a name that never changes (one `learned-rN` per kept round) |
| `learned-ppo` | the policy PPO trained, where `learned`'s distillation started (the shipped `learned` up to version 0.2.0) |
| `pimc` | [`PIMCAgent`][]: determinized Monte Carlo search on sampled deals (`pimc:worlds=32:rollout=greedy`; needs the engine state) |
| `search` | the strongest search configuration measured, by one name: [`SEARCH`][], built on the newest `learned` (docs/results.md, "Search: `pimc` and `search`") |
| `search-r2` | the same search with `learned-r2` inside (one `search-rN` per rung of the ladder: `SEARCHES`) |
| `pimc:cheat` | pimc on the true deal: it SEES EVERY HIDDEN CARD, for measuring the value of perfect inference only (refused at a table with a person) |
| `ismcts` | OpenSpiel's IS-MCTS bot (agents/ismcts.py; the `openspiel` extra), on worlds from the package's sampler (`ismcts:simulations=100:exploration=4`; needs the engine state) |
| `human` | [`HumanAgent`][]: a person at the terminal |

Two agents load files that are unpickled, which can run any code stored in them; their
names say so, and the short names refuse those files with a line saying why:

* `ppo-unsafe-pickle:PATH`: an SB3 `MaskablePPO` zip (`model.zip`, a checkpoint)
  (`ppo:PATH.zip` refuses it and names the run folder to use instead);
* `rllib-unsafe-pickle:PATH` (`agents.rllib_agent.RLlibAgent`, a policy trained with
  RLlib's PPO; its checkpoints hold `class_and_ctor_args.pkl`), imported on first use since
  it needs the optional ray (`rllib:PATH` refuses).

`make_agent(name)` builds one; `register_agent(name, factory)` adds more;
[`AECSeat`][] plays any agent in one seat of the PettingZoo env.
"""

import functools
import warnings

from .base import (
    AECSeat,
    aec_action,
    agent_help,
    known_agents,
    make_agent,
    register_agent,
    unregister_agent,
)
from .greedy import GreedyAgent
from .heuristic import HeuristicAgent
from .human import HumanAgent
from .learned import LADDER_ROUNDS, load_learned, load_learned_ppo, load_rung, newest_rung, rung_help, rung_name
from .pimc import DEFAULTS as PIMC_OPTIONS
from .pimc import POLICY_OPTIONS as PIMC_POLICY_OPTIONS
from .pimc import PIMCAgent, PIMCSettings, make_pimc_agent
from .ppo import PPOAgent, make_ppo_agent, make_unsafe_ppo_agent
from .random_agent import RandomAgent

register_agent("random", RandomAgent, help="a uniformly random legal action")
register_agent("greedy", GreedyAgent, help="simple rules: win cheaply, lead high, duck in MIN")
register_agent("heuristic", HeuristicAgent, help="the strongest rule-based player")
register_agent("ppo", make_ppo_agent, takes_argument=True,
               help="a policy trained by sergeant-major train: ppo:RUN_FOLDER or ppo:PATH/policy.safetensors "
                    "(never unpickles)")
_NEWEST = newest_rung()
register_agent("learned", load_learned,
               help="the newest trained policy shipped with the package, the top rung of the ladder ("
                    + (f"today the same policy as {_NEWEST}" if _NEWEST else "newer than every kept rung")
                    + "; its strength: sergeant-major ship --show)")
for _round in LADDER_ROUNDS:
    register_agent(rung_name(_round), functools.partial(load_rung, _round), help=rung_help(_round))
register_agent("learned-ppo", load_learned_ppo,
               help="the policy PPO trained, where learned's distillation started (shipped beside it)")
register_agent("ppo-unsafe-pickle", make_unsafe_ppo_agent, takes_argument=True,
               help="an SB3 MaskablePPO zip: ppo-unsafe-pickle:PATH.zip (UNPICKLES the file: only files you trust)")
register_agent("pimc", PIMCAgent, options=PIMC_OPTIONS, policy_options=PIMC_POLICY_OPTIONS,
               help="determinized Monte Carlo search: pimc or pimc:worlds=32:rollout=greedy",
               variants={"pimc:cheat": "NOT A FAIR PLAYER: pimc on the true deal, it sees every hidden card; for "
                                       "measuring the value of perfect inference only (refused against a person)"})

def search_with(policy: str) -> str:
    """The strongest search measured with the shipped policy `policy` inside (`SEARCH` with
    `learned`): its rollouts of the seat's own moves and its prior; the worlds drawn by the
    shipped belief model (`belief=learned` names the model of agents/belief/, not the policy)."""
    return f"pimc:rollout={policy}:belief=learned:prior={policy}:prior_weight=0.2"


SEARCH = search_with("learned")
"""The spec of `search`: the strongest search measured (docs/results.md, "Search: pimc"): the
shipped belief model draws pimc's 16 worlds (exactly, each in proportion to the product of its
probabilities to the power 0.5: pimc's defaults), the `learned` policy rolls out the seat's own
moves, and its log-probabilities, 0.2 points a unit, are added to the actions' values (a prior).
+27.19 [+22.85, +31.54] points a game over `pimc` head to head (120 games, seed 0; with the
worlds drawn by keys, the draw before: +23.25 on the same games) and +26.59 [+24.54, +28.63]
over 600 games of seed 100000 (by keys: +22.79); 2026-12-07. Benchmarks name `search` to mean
"the best search" without its options; when a stronger configuration is measured, this line
changes."""


def make_search_agent():
    """`search`: the agent [`SEARCH`][] names (the same agent as `make_agent(SEARCH)`)."""
    return make_agent(SEARCH)


register_agent("search", make_search_agent,
               help=f"the strongest search measured, {SEARCH}: pimc's 16 deals a decision drawn by the belief "
                    f"model, the learned policy rolling out the seat's own moves and weighing the actions "
                    f"(a prior), the heuristic the others' (+27 points a game over pimc head to head: the "
                    f"docs' Results page, Search)")

SEARCHES = {"search": SEARCH, **{f"search-r{n}": search_with(rung_name(n)) for n in LADDER_ROUNDS}}
"""The searches by name and their pimc specs: `search` (the newest `learned` inside) and, for each
rung `learned-rN` of the ladder, `search-rN` (the same options with `learned-rN` inside: fixed)."""


def search_spec(name: str) -> str:
    """The pimc spec a search name stands for (`SEARCHES`); any other spec as it is."""
    return SEARCHES.get(name.strip(), name)


for _round in LADDER_ROUNDS:
    register_agent(f"search-r{_round}", functools.partial(make_agent, SEARCHES[f"search-r{_round}"]),
                   help=f"the search with the ladder's {rung_name(_round)} inside, fixed: "
                        f"{SEARCHES[f'search-r{_round}']} (search's options)")


RLLIB_UNSAFE_NAME = "rllib-unsafe-pickle"


def make_rllib_agent(argument):
    """`rllib-unsafe-pickle:PATH` (agents/rllib_agent.py), imported on first use: it needs the
    optional ray. Loading an RLlib checkpoint unpickles its class_and_ctor_args.pkl."""
    try:
        from .rllib_agent import make_rllib_agent as make
    except ImportError as error:  # its message says: pip install "sergeant-major-env[rllib]"
        raise ValueError(f"cannot load RLlib checkpoint {argument!r}: {error}") from None
    return make(argument)


def refuse_rllib_checkpoint(argument):
    """`rllib:PATH`: refused with one line, before Ray is imported or any file is read."""
    path = argument or "PATH"
    raise ValueError(f"rllib:{path}: loading an RLlib checkpoint unpickles its class_and_ctor_args.pkl, which "
                     f"can run any code; use {RLLIB_UNSAFE_NAME}:{path} only if you trust the checkpoint")


register_agent("rllib", refuse_rllib_checkpoint, takes_argument=True,
               help=f"refused (RLlib checkpoints unpickle): use {RLLIB_UNSAFE_NAME}:PATH for a checkpoint you trust")
register_agent(RLLIB_UNSAFE_NAME, make_rllib_agent, takes_argument=True,
               help="a policy trained with RLlib's PPO (docs: Beyond one machine): rllib-unsafe-pickle:PATH "
                    "(UNPICKLES the checkpoint: only checkpoints you trust)")
def make_ismcts_agent(argument):
    """`ismcts` or `ismcts:simulations=200:exploration=4` (agents/ismcts.py), imported on first
    use: it needs the optional OpenSpiel (the openspiel extra)."""
    try:
        from .ismcts import make_ismcts_agent as make
    except ImportError as error:  # its message says: pip install "sergeant-major-env[openspiel]"
        raise ValueError(f"cannot make the ismcts agent: {error}") from None
    return make(argument)


register_agent("ismcts", make_ismcts_agent, takes_argument=True,
               help="OpenSpiel's IS-MCTS bot on sampled worlds: ismcts or ismcts:simulations=100:exploration=4 "
                    "(needs the openspiel extra)")
register_agent("human", HumanAgent, help="a person at the terminal (sergeant-major play)")

__all__ = [
    "AECSeat", "Agent", "GreedyAgent", "HeuristicAgent", "HumanAgent", "PIMCAgent", "PIMCSettings", "PPOAgent",
    "RandomAgent", "SEARCH", "SEARCHES", "aec_action", "agent_help", "known_agents", "make_agent", "register_agent",
    "search_spec", "search_with", "unregister_agent",
]


def __getattr__(name: str):
    """`Agent`, the protocol's old second name: [`sergeant_major_env.policies.Policy`][], with a
    `DeprecationWarning` (one name for one thing)."""
    if name == "Agent":
        warnings.warn("sergeant_major_env.agents.Agent is deprecated: it is sergeant_major_env.policies.Policy "
                      "(also sergeant_major_env.Policy)", DeprecationWarning, stacklevel=2)
        from sergeant_major_env.policies import Policy

        return Policy
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
