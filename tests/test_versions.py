"""Versioned environment names (PettingZoo's ``_v0``, Gymnasium's ``-v0``) and the rule for them.

The version goes up when the rules' behaviour, the observation layout, the action ids or the
rewards change (sergeant_major_env.versions.VERSION_RULE); these tests pin the names and
make a change of the observation layout fail until a new version is recorded.
"""

from __future__ import annotations

import importlib

import gymnasium
import pytest

import sergeant_major_env
from sergeant_major_env import aec, observation, single_seat, versions
from sergeant_major_env.cards import NUM_ACTIONS


def test_the_versioned_pettingzoo_module_gives_env_and_raw_env_of_the_aec_module():
    from sergeant_major_env import sergeant_major_v0

    assert sergeant_major_v0.env is aec.env and sergeant_major_v0.raw_env is aec.raw_env
    assert sergeant_major_v0.VERSION == versions.ENV_VERSION
    assert sergeant_major_v0.__name__ == f"sergeant_major_env.{versions.AEC_NAME}"


def test_the_package_level_env_and_raw_env_are_aliases_of_the_current_version():
    current = importlib.import_module(f"sergeant_major_env.{versions.AEC_NAME}")
    assert sergeant_major_env.env is current.env
    assert sergeant_major_env.raw_env is current.raw_env
    assert getattr(sergeant_major_env, versions.AEC_NAME) is current  # attribute access imports it


def test_metadata_name_is_the_versioned_name():
    from sergeant_major_env import sergeant_major_v0

    game = sergeant_major_v0.env(num_deals=1)
    assert game.metadata["name"] == "sergeant_major_v0" == versions.AEC_NAME
    assert game.unwrapped.metadata["name"] == versions.AEC_NAME
    assert isinstance(game.unwrapped, sergeant_major_v0.raw_env)


def test_the_gymnasium_id_carries_the_same_version_and_is_registered_on_import():
    assert single_seat.ENV_ID == sergeant_major_env.ENV_ID == "SergeantMajor-v0" == versions.GYMNASIUM_ID
    spec = gymnasium.spec(versions.GYMNASIUM_ID)
    assert spec.entry_point == "sergeant_major_env.single_seat:SergeantMajorEnv"
    assert spec.version == versions.ENV_VERSION
    env = gymnasium.make(versions.GYMNASIUM_ID, num_deals=1)
    assert isinstance(env.unwrapped, single_seat.SergeantMajorEnv)
    env.close()


def test_the_newest_version_matches_the_observation_layout_and_action_space():
    """A change of observation.VERSION, its size or the actions needs a new environment version."""
    current = versions.HISTORY[-1]
    assert current is versions.CURRENT and current.version == versions.ENV_VERSION
    assert current.observation_version == observation.VERSION
    assert current.observation_size == observation.OBSERVATION_SIZE
    assert current.num_actions == NUM_ACTIONS
    game = aec.raw_env(num_deals=1)
    assert game.observation_space("player_0")["observation"].shape == (current.observation_size,)
    assert game.action_space("player_0").n == current.num_actions


def test_versions_are_numbered_from_zero_without_gaps_and_each_says_what_changed():
    assert [v.version for v in versions.HISTORY] == list(range(len(versions.HISTORY)))
    assert all(v.changes.strip() and v.package for v in versions.HISTORY)


@pytest.mark.parametrize("module", [aec, single_seat], ids=["aec", "single_seat"])
def test_the_env_docstrings_state_the_version_rule(module):
    doc = " ".join(module.__doc__.split())
    for words in ("observation.VERSION", "the action ids", "rewards", versions.AEC_NAME, versions.GYMNASIUM_ID):
        assert words in doc


def test_the_aec_docstring_is_a_pettingzoo_style_page():
    doc = aec.__doc__
    for line in ("Import", "Agents", "Parallel API", "Action space", "Observation space", "Action mask",
                 "Reward range", "Render modes", "Version history", versions.AEC_NAME,
                 str(observation.OBSERVATION_SIZE)):
        assert line in doc
