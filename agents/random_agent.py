"""`random`: a uniformly random legal action (the package's [`RandomPolicy`][])."""

from __future__ import annotations

from sergeant_major_env.policies import RandomPolicy


class RandomAgent(RandomPolicy):
    """Uniformly random legal actions, drawn from the caller's generator only.

    It decides from the legal mask alone (`needs_observations = False`: the environments
    may pass zeros instead of observations).
    """

    name = "random"

    def __repr__(self) -> str:
        return "RandomAgent()"
