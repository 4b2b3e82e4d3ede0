"""``sergeant-major agents``: the agent names that ``evaluate``, ``play`` and ``train`` take."""

from __future__ import annotations

import argparse
from typing import Sequence

from ..agents import agent_help


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="sergeant-major agents",
        description="List the registered agent names (sergeant_major_env.agents.make_agent) with one line each. "
                    "Names that take an argument are written NAME:ARGUMENT (ppo:RUN_FOLDER, pimc:worlds=32).")
    parser.parse_args(argv)
    entries = agent_help()
    width = max(map(len, entries))
    for name, text in entries.items():
        print(f"{name:<{width}}  {text}")
    return 0
