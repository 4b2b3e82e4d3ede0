"""Baseline agents of 3-5-8, all batched policies (:class:`sergeant_major_env.policies.Policy`).

============  ==============================================================================
name          agent
============  ==============================================================================
``random``    :class:`RandomAgent`: a uniformly random legal action
``greedy``    :class:`GreedyAgent`: simple, fast rules (win cheaply, duck in MIN)
``heuristic`` :class:`HeuristicAgent`: the strongest rule-based player (card reading, planned
              mode choice, exchanges, discards)
``ppo:PATH``  :class:`PPOAgent`: a trained sb3-contrib ``MaskablePPO`` model
``pimc``      :class:`PIMCAgent`: determinized Monte Carlo search on sampled deals
              (``pimc:worlds=32:rollout=greedy``; needs the engine state)
``human``     :class:`HumanAgent`: a person at the terminal
============  ==============================================================================

``rllib:PATH`` (``agents.rllib_agent.RLlibAgent``, a policy trained with RLlib's PPO) is
loaded on first use, since it needs the optional ray.

``make_agent(name)`` builds one; ``register_agent(name, factory)`` adds more;
:class:`AECSeat` plays any agent in one seat of the PettingZoo env.
"""

from .base import (
    AECSeat,
    Agent,
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
from .pimc import PIMCAgent, make_pimc_agent
from .ppo import PPOAgent, make_ppo_agent
from .random_agent import RandomAgent

register_agent("random", RandomAgent, help="a uniformly random legal action")
register_agent("greedy", GreedyAgent, help="simple rules: win cheaply, lead high, duck in MIN")
register_agent("heuristic", HeuristicAgent, help="the strongest rule-based player")
register_agent("ppo", make_ppo_agent, takes_argument=True, help="a trained MaskablePPO model: ppo:PATH")
register_agent("pimc", make_pimc_agent, takes_argument=True,
               help="determinized Monte Carlo search: pimc or pimc:worlds=32:rollout=greedy")


def make_rllib_agent(argument):
    """``rllib:PATH`` (agents/rllib_agent.py), imported on first use: it needs the optional ray."""
    try:
        from .rllib_agent import make_rllib_agent as make
    except ImportError as error:  # its message says: pip install "sergeant-major-env[rllib]"
        raise ValueError(f"cannot load RLlib checkpoint {argument!r}: {error}") from None
    return make(argument)


register_agent("rllib", make_rllib_agent, takes_argument=True,
               help="a policy trained with RLlib's PPO (examples/rllib_selfplay.py): rllib:PATH")
register_agent("human", HumanAgent, help="a person at the terminal (python -m sergeant_major_env.play)")

__all__ = [
    "AECSeat", "Agent", "GreedyAgent", "HeuristicAgent", "HumanAgent", "PIMCAgent", "PPOAgent", "RandomAgent", "aec_action", "agent_help",
    "known_agents", "make_agent", "register_agent", "unregister_agent",
]
