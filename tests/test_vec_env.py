"""The SB3 vector env over one batched engine state (sergeant_major_env.vec_env)."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

from conftest import needs

needs("stable_baselines3")

from stable_baselines3.common.vec_env import VecEnv  # noqa: E402

from sergeant_major_env import RandomPolicy, Rules, SergeantMajorVecEnv, engine  # noqa: E402
from sergeant_major_env.cards import NUM_ACTIONS  # noqa: E402
from sergeant_major_env.engine import IllegalActionError  # noqa: E402
from sergeant_major_env.observation import OBSERVATION_SIZE, SEGMENTS, observe  # noqa: E402


class LowestLegal:
    """A deterministic batched policy: the lowest legal action id."""

    name = "lowest"

    def act(self, observations, legal_mask, rng):
        return legal_mask.argmax(axis=1).astype(np.int64)


class HighestLegal:
    """A deterministic batched policy: the highest legal action id."""

    def act(self, observations, legal_mask, rng):
        return (legal_mask.shape[1] - 1 - legal_mask[:, ::-1].argmax(axis=1)).astype(np.int64)


class Counting:
    """Wraps a policy and records every batch it is asked to decide."""

    def __init__(self, inner, env_ref=None):
        self.inner, self.env_ref, self.batches = inner, env_ref, []
        self.needs_observations = True

    def act(self, observations, legal_mask, rng):
        assert observations.shape == (legal_mask.shape[0], OBSERVATION_SIZE)
        assert legal_mask.shape == (observations.shape[0], NUM_ACTIONS) and legal_mask.dtype == bool
        assert legal_mask.any(axis=1).all()
        # Each row is the view of the seat to act: its own seat is relative seat 0 ...
        np.testing.assert_array_equal(observations[:, SEGMENTS["to_act"]][:, 0], 1)
        self.batches.append(legal_mask.shape[0])
        return self.inner.act(observations, legal_mask, rng)


def random_actions(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return RandomPolicy().act(None, masks, rng)


def run(env: SergeantMajorVecEnv, steps: int, rng_seed: int = 0):
    """Random legal learner actions; returns the per-step records."""
    rng = np.random.default_rng(rng_seed)
    records = {"obs": [env.reset()], "masks": [], "actions": [], "rewards": [], "dones": [], "infos": []}
    for _ in range(steps):
        masks = env.action_masks()
        actions = random_actions(masks, rng)
        obs, rewards, dones, infos = env.step(actions)
        for key, value in zip(("masks", "actions", "obs", "rewards", "dones", "infos"),
                              (masks, actions, obs, rewards, dones, infos)):
            records[key].append(value)
    return records


# ----------------------------------------------------------------------------- API

def test_vecenv_api():
    env = SergeantMajorVecEnv(5, seed=3, num_deals=1)
    assert isinstance(env, VecEnv) and env.num_envs == 5
    assert env.observation_space.shape == (OBSERVATION_SIZE,) and env.action_space.n == NUM_ACTIONS
    obs = env.reset()
    assert obs.shape == (5, OBSERVATION_SIZE) and obs.dtype == np.float32
    np.testing.assert_array_equal(env.state.seed, 3 + np.arange(5))
    masks = env.action_masks()
    assert masks.shape == (5, NUM_ACTIONS) and masks.dtype == bool
    assert env.has_attr("action_masks")
    np.testing.assert_array_equal(np.stack(env.env_method("action_masks")), masks)
    np.testing.assert_array_equal(np.stack(env.env_method("action_masks", indices=[1, 3])), masks[[1, 3]])
    assert env.get_attr("learner_seat") == [0, 1, 2, 0, 1]
    assert env.get_attr("render_mode", indices=[0]) == [None]
    assert env.env_is_wrapped(object) == [False] * 5
    with pytest.raises(AttributeError):
        env.env_method("no_such_method")
    obs, rewards, dones, infos = env.step(random_actions(masks, np.random.default_rng(0)))
    assert obs.shape == (5, OBSERVATION_SIZE) and rewards.shape == (5,) and rewards.dtype == np.float32
    assert dones.shape == (5,) and dones.dtype == bool and len(infos) == 5
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported

    assert is_masking_supported(env)
    np.testing.assert_array_equal(get_action_masks(env), env.action_masks())
    env.close()


def test_maskable_ppo_smoke():
    from sb3_contrib import MaskablePPO

    env = SergeantMajorVecEnv(8, seed=0, num_deals=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=64, n_epochs=1, seed=0, device="cpu",
                            policy_kwargs={"net_arch": [32]})
        model.learn(total_timesteps=256)
    assert model.num_timesteps >= 256
    assert len(model.ep_info_buffer) > 0  # our "episode" infos reached SB3's logger


# ----------------------------------------------------------------------------- the same game

@pytest.mark.parametrize("reward, rules, n, sides", [
    ("points", Rules(num_deals=2), 4, "same"),  # deal 2 has exchanges: long opponent runs
    ("points", Rules(num_deals=2), 9, "two"),  # the left opponent lowest, the right highest
    ("points", Rules(num_deals=1), 6, "two"),
    ("score", Rules(num_deals=1, must_overtake=True, dealer_builds_talon=True), 4, "same"),
    ("rank", Rules(num_deals=2, must_overtrump=True, exchanges=False), 5, "two"),
])
def test_each_game_is_the_engine_game_of_its_seed(reward, rules, n, sides):
    """Slot i plays seeds S+i, S+i+N, ... with learner seat (i + episode) % 3; replayed alone
    with the same actions, each game gives the same observations, masks and rewards."""
    seed = 11
    policies = (LowestLegal(), LowestLegal()) if sides == "same" else (LowestLegal(), HighestLegal())
    env = SergeantMajorVecEnv(n, seed=seed, opponents=policies[0] if sides == "same" else policies,
                              reward=reward, rules=rules)

    def opponents(state, seat, count_points=False) -> float:
        """The same opponents, one game alone, until the learner's turn or the game's end."""
        reward = 0.0
        while state.phase[0] != engine.OVER and state.to_act[0] != seat:
            side = (int(state.to_act[0]) - seat) % 3
            mask = engine.legal_action_mask(state)
            engine.step(state, policies[side - 1].act(None, mask, None))
            if count_points:
                reward += points(state, seat)
        return reward

    assert env.rules == rules
    rec = run(env, 100)
    steps = len(rec["actions"])
    episodes_checked = 0
    for slot in range(n):
        t, game = 0, 0
        while True:  # one game of this slot per iteration
            seat = (slot + game) % 3
            state = engine.init([seed + slot + game * n], rules)
            opponents(state, seat)
            total = 0.0
            while True:
                # rec["obs"][t] is the view before action t (the new game's after a done).
                np.testing.assert_array_equal(rec["obs"][t][slot], observe(state, seat)[0])
                if t == steps:
                    break
                np.testing.assert_array_equal(rec["masks"][t][slot], engine.legal_action_mask(state)[0])
                engine.step(state, rec["actions"][t][slot : slot + 1])
                got = points(state, seat) if reward == "points" else 0.0
                got += opponents(state, seat, count_points=reward == "points")
                ended = bool(state.phase[0] == engine.OVER)
                scores = state.scores[0]
                if ended and reward == "score":
                    got += scores[seat]
                if ended and reward == "rank":
                    got += ((scores < scores[seat]).sum() - (scores > scores[seat]).sum()) / 2
                assert rec["rewards"][t][slot] == got
                assert bool(rec["dones"][t][slot]) == ended
                total += got
                t += 1
                if ended:
                    info = rec["infos"][t - 1][slot]
                    np.testing.assert_array_equal(info["terminal_observation"], observe(state, seat)[0])
                    assert info["episode"]["r"] == pytest.approx(total)
                    assert info["final_scores"] == scores.tolist() and info["learner_seat"] == seat
                    episodes_checked += 1
                    break
            if t == steps:
                break
            game += 1
    assert episodes_checked >= n


def points(state, seat) -> float:
    return float(state.deal_points[0, seat]) if state.deal_ended[0] else 0.0


def test_same_seed_and_actions_same_run():
    a = run(SergeantMajorVecEnv(6, seed=5, num_deals=1), 40, rng_seed=1)
    b = run(SergeantMajorVecEnv(6, seed=5, num_deals=1), 40, rng_seed=1)
    for key in ("obs", "rewards", "dones"):
        for x, y in zip(a[key], b[key]):
            np.testing.assert_array_equal(x, y)


def test_seed_and_reset():
    env = SergeantMajorVecEnv(3, seed=0, num_deals=1)
    first = env.reset()
    assert env.seed(100) == [100, 101, 102]
    env.reset()
    np.testing.assert_array_equal(env.state.seed, [100, 101, 102])
    env.reset()  # without a new seed: each slot continues with its next game
    np.testing.assert_array_equal(env.state.seed, [103, 104, 105])
    np.testing.assert_array_equal(env.learner_seat, [1, 2, 0])
    env.seed(0)
    np.testing.assert_array_equal(env.reset(), first)


# ----------------------------------------------------------------------------- rewards, infos

@pytest.mark.parametrize("reward", ["points", "score"])
def test_episode_rewards_sum_to_final_score(reward):
    n = 16
    env = SergeantMajorVecEnv(n, seed=1, num_deals=2, reward=reward)
    rec = run(env, 120)
    totals, lengths, finished = np.zeros(n), np.zeros(n, dtype=int), 0
    for rewards, dones, infos in zip(rec["rewards"], rec["dones"], rec["infos"]):
        totals += rewards
        lengths += 1
        for i in np.flatnonzero(dones):
            info = infos[i]
            assert set(info["episode"]) == {"r", "l", "t"}
            assert info["episode"]["r"] == totals[i] == info["final_scores"][info["learner_seat"]]
            assert info["episode"]["l"] == lengths[i]
            assert info["terminal_observation"].shape == (OBSERVATION_SIZE,)
            assert info["TimeLimit.truncated"] is False
            totals[i], lengths[i] = 0, 0
            finished += 1
        for i in np.flatnonzero(~dones):
            assert "episode" not in infos[i] and "terminal_observation" not in infos[i]
    assert finished >= n


def test_rank_rewards():
    env = SergeantMajorVecEnv(8, seed=2, num_deals=1, reward="rank")
    rec = run(env, 50)
    seen = 0
    for rewards, dones, infos in zip(rec["rewards"], rec["dones"], rec["infos"]):
        assert (rewards[~dones] == 0).all()
        for i in np.flatnonzero(dones):
            scores = np.array(infos[i]["final_scores"])
            own = scores[infos[i]["learner_seat"]]
            assert rewards[i] == ((scores < own).sum() - (scores > own).sum()) / 2
            seen += 1
    assert seen >= 8


def test_seats_rotate_and_masks_match_engine():
    n = 6
    env = SergeantMajorVecEnv(n, seed=0, num_deals=1)
    env.reset()
    rng = np.random.default_rng(0)
    episodes = np.zeros(n, dtype=int)
    for _ in range(80):
        masks = env.action_masks()
        np.testing.assert_array_equal(masks, engine.legal_action_mask(env.state))
        np.testing.assert_array_equal(env.state.to_act, env.learner_seat)  # every game waits on its learner
        np.testing.assert_array_equal(env.learner_seat, (np.arange(n) + episodes) % 3)
        _, _, dones, _ = env.step(random_actions(masks, rng))
        episodes += dones
    assert episodes.min() >= 1
    fixed = SergeantMajorVecEnv(n, seed=0, num_deals=1, learner_seat=2)
    fixed.reset()
    assert (fixed.learner_seat == 2).all() and (fixed.state.to_act == 2).all()


# ----------------------------------------------------------------------------- opponents

def test_opponents_are_called_batched():
    n = 32
    policy = Counting(RandomPolicy())
    env = SergeantMajorVecEnv(n, seed=0, num_deals=1, opponents=policy)
    run(env, 30)
    assert max(policy.batches) > 1
    # One call per round for both opponents: far fewer calls than opponent decisions.
    assert len(policy.batches) < sum(policy.batches) / 4


def test_two_opponents_are_called_for_their_own_seats():
    left, right = Counting(LowestLegal()), Counting(HighestLegal())
    env = SergeantMajorVecEnv(32, seed=0, num_deals=2, opponents=[left, right])
    run(env, 30)
    assert max(left.batches) > 1 and max(right.batches) > 1
    # Which seat each one plays is checked against the engine in
    # test_each_game_is_the_engine_game_of_its_seed (sides="two").


# ----------------------------------------------------------------------------- errors

def test_illegal_learner_action():
    env = SergeantMajorVecEnv(4, seed=0, num_deals=1)
    env.reset()
    before = env.state.copy()
    masks = env.action_masks()
    actions = masks.argmax(axis=1)
    actions[2] = np.flatnonzero(~masks[2])[0]
    with pytest.raises(IllegalActionError, match="game 2.*legal actions"):
        env.step(actions)
    for name, value in before.arrays().items():
        np.testing.assert_array_equal(value, getattr(env.state, name), err_msg=name)
    env.step(masks.argmax(axis=1))  # still usable
    replacing = SergeantMajorVecEnv(4, seed=0, num_deals=1, illegal_action="replace")
    replacing.reset()
    replacing.step(np.zeros(4, dtype=np.int64))


def test_bad_policy_output():
    class Bad:
        def act(self, observations, legal_mask, rng):
            return np.zeros(legal_mask.shape[0] + 1, dtype=np.int64)

    class Illegal:
        needs_observations = False

        def act(self, observations, legal_mask, rng):
            return (~legal_mask).argmax(axis=1)

    with pytest.raises(ValueError, match="shape"):
        SergeantMajorVecEnv(3, num_deals=1, opponents=Bad()).reset()
    with pytest.raises(ValueError, match="opponent policy chose an illegal action"):
        SergeantMajorVecEnv(3, num_deals=1, opponents=Illegal()).reset()


@pytest.mark.parametrize("kwargs, match", [
    ({"num_envs": 0}, "num_envs must be a positive integer"),
    ({"num_envs": 2, "seed": -1}, r"seed must be an integer from 0 to 2\*\*63 - 1"),
    ({"num_envs": 2, "seed": 2**63}, r"seed must be an integer from 0 to 2\*\*63 - 1"),
    ({"num_envs": 2, "seed": True}, r"seed must be an integer from 0 to 2\*\*63 - 1"),
    ({"num_envs": 2, "reward": "wins"}, "reward must be one of"),
    ({"num_envs": 2, "num_deals": 20}, "num_deals must be an integer from 1 to 18"),
    ({"num_envs": 2, "must_overtake": 1}, "must_overtake must be true or false"),
    ({"num_envs": 2, "talon": True}, "unknown rule option.*talon.*known options"),
    ({"num_envs": 2, "learner_seat": -1}, "learner_seat"),
])
def test_bad_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        SergeantMajorVecEnv(**kwargs)


def test_seed_out_of_range_is_one_line_and_keeps_the_seed_in_use():
    env = SergeantMajorVecEnv(3, seed=7, num_deals=1)
    for bad in (2**63, 2**70, -1, 1.5, "1"):
        with pytest.raises(ValueError, match=r"SergeantMajorVecEnv.seed: seed must be an integer from 0 to 2\*\*63 - 1"):
            env.seed(bad)
    env.reset()
    np.testing.assert_array_equal(env.state.seed, [7, 8, 9])  # the refused seeds changed nothing
    assert env.seed(2**63 - 1) == [2**63 - 1 + i for i in range(3)]  # the largest seed is fine


def state_arrays(env):
    return {name: value.copy() for name, value in env.state.arrays().items()}


@pytest.mark.parametrize("shape", [(4, 1), (1, 4), (2, 2), (3,), (5,), ()])
def test_step_async_accepts_exactly_shape_n_and_refuses_other_shapes(shape):
    env = SergeantMajorVecEnv(4, seed=0, num_deals=1)
    env.reset()
    before = state_arrays(env)
    actions = np.zeros(shape, dtype=np.int64)
    with pytest.raises(ValueError, match=rf"actions must be 4 integer action ids, shape \(4,\), got int64 array of shape "
                                         rf"{re.escape(str(shape))}"):
        env.step(actions)
    for name, value in before.items():
        np.testing.assert_array_equal(value, getattr(env.state, name), err_msg=name)
    env.step(env.action_masks().argmax(axis=1))  # a (4,) array still steps
    env.step(env.action_masks().argmax(axis=1).tolist())  # and so does a list of 4 ints


@pytest.mark.parametrize("actions, match", [
    (np.zeros(4, dtype=bool), "got bool array"),
    (np.zeros(4, dtype=np.float32), "got float32 array"),
    (np.array([0, 0, 58, 0]), r"action ids are 0..57 \(RULES.md section 10\), got 58 for game 2"),
    (np.array([0, -1, 0, 0]), "got -1 for game 1"),
])
def test_step_async_refuses_non_integer_and_out_of_space_actions(actions, match):
    env = SergeantMajorVecEnv(4, seed=0, num_deals=1, illegal_action="replace")
    env.reset()
    before = state_arrays(env)
    with pytest.raises(ValueError, match=match):
        env.step(actions)
    for name, value in before.items():
        np.testing.assert_array_equal(value, getattr(env.state, name), err_msg=name)


def test_step_async_copies_the_actions():
    """Changing the caller's array between step_async and step_wait does not change the step."""
    a, b = SergeantMajorVecEnv(4, seed=3, num_deals=1), SergeantMajorVecEnv(4, seed=3, num_deals=1)
    a.reset(), b.reset()
    actions = a.action_masks().argmax(axis=1)
    a.step_async(actions)
    expected = actions.copy()
    actions[:] = -5  # would be out of the action space if it were read at step_wait
    obs_a, rewards_a, _, _ = a.step_wait()
    obs_b, rewards_b, _, _ = b.step(expected)
    np.testing.assert_array_equal(obs_a, obs_b)
    np.testing.assert_array_equal(rewards_a, rewards_b)
    for name, value in state_arrays(b).items():
        np.testing.assert_array_equal(value, getattr(a.state, name), err_msg=name)


def test_step_async_before_reset_says_to_reset():
    with pytest.raises(RuntimeError, match=r"call reset\(\) first"):
        SergeantMajorVecEnv(2, num_deals=1).step_async(np.zeros(2, dtype=np.int64))
