"""The environments' versioned names and their history: one place for both.

The PettingZoo AEC env is `sergeant_major_v0` (`from sergeant_major_env import
sergeant_major_v0; env = sergeant_major_v0.env()`, `metadata["name"]`), the Gymnasium
single-seat env `SergeantMajor-v0` (`gymnasium.make("SergeantMajor-v0")`) and the SB3
vector env [`SergeantMajorVecEnv`][sergeant_major_env.vec_env.SergeantMajorVecEnv] follows the same
version. **The rule** ([`VERSION_RULE`][]): the version number goes up, for all three
views at once, whenever the behaviour of a seeded game changes for an agent: the rules
(what is legal, how a trick or a deal is scored, the deal's cards for a seed), the
observation layout ([`sergeant_major_env.observation.VERSION`][], which every model file
records), the action ids (RULES.md section 10) or the rewards. New options with defaults
that keep the old behaviour, speed-ups that give the same games bit for bit, new infos and
renderer changes keep the version.

[`HISTORY`][] lists every version, newest last; `tests/test_versions.py` checks that
the newest one matches the code (its observation version and size, its action count), so
a change of the observation layout cannot ship without a new environment version.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class EnvVersion:
    """One version of the environments: what an agent trained on it can rely on."""

    version: int
    """The number in the names (`sergeant_major_v{version}`, `SergeantMajor-v{version}`)."""
    package: str
    """The first package release that has it."""
    observation_version: int
    """[`sergeant_major_env.observation.VERSION`][] of its observations."""
    observation_size: int
    """Floats per observation."""
    num_actions: int
    """Size of the action space (RULES.md section 10)."""
    changes: str
    """What changed from the version before (Markdown)."""


HISTORY: tuple[EnvVersion, ...] = (
    EnvVersion(
        version=0, package="0.1.0", observation_version=2, observation_size=919, num_actions=58,
        changes="First release: the rules of RULES.md (R1-R25, the options of section 9); observation "
                "layout version 2 (919 floats: the information state with the deal's trick history, "
                "the voids and the derived segments); actions 0..57 of RULES.md section 10; rewards "
                "`points` (default), `score`, `rank`; an illegal action ends the game with "
                "`illegal_reward` (AEC and single-seat) or raises (vector env)."),
)
"""Every environment version, oldest first."""

CURRENT = HISTORY[-1]
"""The version this package's environments are."""
ENV_VERSION = CURRENT.version
AEC_NAME = f"sergeant_major_v{ENV_VERSION}"
"""The PettingZoo env's name: its module (`sergeant_major_env.sergeant_major_v0`) and
`metadata["name"]`."""
GYMNASIUM_ID = f"SergeantMajor-v{ENV_VERSION}"
"""The Gymnasium id of the single-seat env."""

VERSION_RULE = (
    "The version number goes up, for the three environments together, whenever a seeded game "
    "changes for an agent: the rules' behaviour (what is legal, the scoring, the cards a seed deals), "
    "the observation layout (`observation.VERSION`, which every model file records), the action ids "
    "or the rewards. Options whose defaults keep the old behaviour, speed-ups that give the same games "
    "bit for bit, new infos and renderer changes keep the version."
)
"""The one rule for when the version changes (Markdown)."""
