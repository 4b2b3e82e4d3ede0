"""The AEC env in MARL libraries nobody here wrote, unchanged: TorchRL's PettingZooWrapper
and Tianshou's PettingZooEnv (both need tensor-friendly infos: numbers only, the same keys
at every step). Optional: the ``interop`` extra installs them; skipped without it."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from conftest import needs

from sergeant_major_env import engine, env
from sergeant_major_env.aec import AGENTS


def test_torchrl_pettingzoo_wrapper_with_masks_plays_a_game():
    torch = needs("torch")
    torchrl_envs = needs("torchrl.envs")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TorchRL warns that it was tested with another PettingZoo
        wrapped = torchrl_envs.PettingZooWrapper(env(num_deals=1), use_mask=True, categorical_actions=True)
    assert sorted(wrapped.group_map) == list(AGENTS)  # AEC: one group per agent
    game = wrapped._env.unwrapped
    torch.manual_seed(0)
    td = wrapped.reset()
    steps = 0
    while True:
        acting = game.agent_selection
        td = wrapped.rand_action(td)  # a random action among those the mask allows
        action = int(td[acting, "action"].reshape(-1)[0])
        assert game.observe(acting)["action_mask"][action] == 1
        td = wrapped.step(td)["next"]
        steps += 1
        for agent in AGENTS:  # the infos came through as numbers
            assert not td[agent, "info", "illegal_action"].any()  # the masked actions were all legal
        if td["done"].all():
            break
        assert steps < 200
    assert game.engine_state.phase[0] == engine.OVER and len(game._actions) == steps
    for agent in AGENTS:
        assert int(td[agent, "info", "decision"].reshape(-1)[0]) == engine.OVER


def test_tianshou_pettingzoo_env_plays_a_game_and_pays_the_final_scores():
    needs("tianshou")
    from tianshou.env import PettingZooEnv

    game = PettingZooEnv(env(num_deals=2))
    observation, info = game.reset(seed=3)
    rng = np.random.default_rng(3)
    totals = np.zeros(3)
    assert set(info) == {"decision", "deal", "role", "illegal_action"}
    for steps in range(1, 500):
        assert observation["agent_id"] in AGENTS
        action = int(rng.choice(np.flatnonzero(observation["mask"])))
        observation, rewards, terminated, truncated, info = game.step(action)
        totals += rewards
        if terminated or truncated:
            break
    state = game.env.unwrapped.engine_state
    assert terminated and not truncated and state.phase[0] == engine.OVER
    np.testing.assert_array_equal(totals, state.final_scores[0])  # "points": the deals' points sum to the score
