"""`sergeant-major agents`: the agent names that `evaluate`, `play` and `train` take."""

from __future__ import annotations

import dataclasses
from typing import Sequence

from ..agents import agent_help
from ..arguments import Notes, build_parser, parse_config


@dataclasses.dataclass(frozen=True)
class AgentsOptions:
    """`sergeant-major agents` has no options (`--help` only)."""


def _parser():
    return build_parser(
        "sergeant-major agents", AgentsOptions, formatter_class=Notes,
        description="List the registered agent names (sergeant_major_env.agents.make_agent) with one line each. "
                    "Names that take an argument are written NAME:ARGUMENT (ppo:RUN_FOLDER, pimc:worlds=32).")


def main(argv: Sequence[str] | None = None) -> int:
    parse_config(_parser(), AgentsOptions, argv)
    entries = agent_help()
    width = max(map(len, entries))
    for name, text in entries.items():
        print(f"{name:<{width}}  {text}")
    return 0
