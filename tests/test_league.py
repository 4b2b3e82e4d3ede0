"""train.py's league (training/league.py): learner snapshots saved as policy files and played
through agents.PPOAgent, the latest --league-size kept, reloaded on --resume; the opponent
pool's weights and the weak-to-strong curriculum."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import needs

needs("sb3_contrib")
needs("safetensors")

from sb3_contrib import MaskablePPO  # noqa: E402

from sergeant_major_env.agents import PPOAgent  # noqa: E402
from sergeant_major_env import Rules, SergeantMajorVecEnv  # noqa: E402
from sergeant_major_env.training.league import League, pool_weights  # noqa: E402

RULES = Rules(num_deals=1)


@pytest.fixture(scope="module")
def model():
    return MaskablePPO("MlpPolicy", SergeantMajorVecEnv(4, seed=0, rules=RULES), n_steps=8, batch_size=8, seed=0,
                       device="cpu", policy_kwargs={"net_arch": dict(pi=[32], vf=[16])})


@pytest.fixture(scope="module")
def positions():
    """(observations, masks) of the seats to act in 64 games, a few steps in (mode choices and discards)."""
    env = SergeantMajorVecEnv(64, seed=1, rules=RULES)
    obs = env.reset()
    rng = np.random.default_rng(0)
    for _ in range(3):
        masks = env.action_masks()
        obs, *_ = env.step(np.where(masks, rng.random(masks.shape), -1).argmax(axis=1))
    return obs, env.action_masks()


def test_snapshots_are_policy_files_played_as_snapshot_actions_says(model, positions, tmp_path):
    """A snapshot is the policy file it saved, played by PPOAgent: sampling from the masked policy
    with the env's generator (--snapshot-actions sample), or as MaskablePPO.predict (argmax)."""
    obs, masks = positions
    for sample in (True, False):
        league = League(tmp_path / str(sample), size=3, sample=sample, rules=RULES)
        (tmp_path / str(sample)).mkdir()
        league.add(model.policy, 100)
        snapshot = league.snapshots[0]
        assert snapshot.agent.name == "self@100" and snapshot.agent.rules == RULES
        own = PPOAgent(snapshot.path, sample=sample)
        np.testing.assert_array_equal(snapshot.agent.act(obs, masks, np.random.default_rng(3)),
                                      own.act(obs, masks, np.random.default_rng(3)))
        assert snapshot.agent.sample is sample
    predicted, _ = model.predict(obs, action_masks=masks, deterministic=True)
    np.testing.assert_array_equal(snapshot.agent.act(obs, masks, None), predicted)  # the argmax one


def test_the_league_keeps_its_latest_snapshots_in_the_pool_and_on_disk(model, tmp_path):
    league = League(tmp_path, size=2, sample=True, rules=RULES)
    for t in (100, 200, 300):
        league.add(model.policy, t)
    assert league.names == ["self@200", "self@300"]
    assert sorted(p.name for p in (tmp_path / "league").iterdir()) == [
        "self_000000000200.json", "self_000000000200.safetensors",
        "self_000000000300.json", "self_000000000300.safetensors"]
    fixed = {"random": object()}
    policies, weights = league.pool({"random": 1.0, "self": 3.0}, fixed)
    assert policies == [fixed["random"], *(s.agent for s in league.snapshots)] and weights == [1.0, 1.5, 1.5]


def test_a_resumed_league_takes_the_snapshots_up_to_the_checkpoint_into_the_new_folder(model, tmp_path):
    earlier = League(tmp_path / "earlier", size=3, sample=True, rules=RULES)
    (tmp_path / "earlier").mkdir()
    for t in (100, 200, 300):
        earlier.add(model.policy, t)
    resumed = League(tmp_path / "resumed", size=2, sample=True, rules=RULES)
    (tmp_path / "resumed").mkdir()
    resumed.load(tmp_path / "earlier", done=250)  # the checkpoint was taken at 250 timesteps
    assert resumed.names == ["self@100", "self@200"]
    assert sorted(p.name for p in (tmp_path / "resumed" / "league").glob("*.safetensors")) == [
        "self_000000000100.safetensors", "self_000000000200.safetensors"]
    assert all(s.path.parent == tmp_path / "resumed" / "league" for s in resumed.snapshots)


def test_curriculum_moves_from_the_weak_members_to_the_opponents_weights():
    pool = {"random": 1.0, "greedy": 1.0, "heuristic": 2.0, "self": 2.0}
    start = pool_weights(pool, 0.0, True, 0.5)
    assert start == {"random": 1.0, "greedy": 1.0, "heuristic": 0.0, "self": 0.0}
    assert pool_weights(pool, 0.25, True, 0.5)["heuristic"] == 1.0  # half way to the end of the curriculum
    assert pool_weights(pool, 0.7, True, 0.5) == pool
    assert pool_weights(pool, 0.0, False, 0.5) == pool  # --no-curriculum
    strong = {"heuristic": 1.0}  # nothing weak in the pool: constant weights
    assert pool_weights(strong, 0.0, True, 0.5) == strong
