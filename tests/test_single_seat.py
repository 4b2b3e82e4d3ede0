"""The single-seat Gymnasium environment (sergeant_major_env.single_seat) against the engine."""

from __future__ import annotations

import warnings

import gymnasium
import numpy as np
import pytest

from conftest import needs
import sergeant_major_env
from sergeant_major_env import RandomPolicy, Rules, SergeantMajorEnv, engine
from sergeant_major_env.cards import NUM_ACTIONS
from sergeant_major_env.engine import IllegalActionError
from sergeant_major_env.observation import OBSERVATION_SIZE, observe
from sergeant_major_env.options import ILLEGAL_REWARD
from sergeant_major_env.policies import Policy


class LowestLegal:
    """A deterministic batched policy: the lowest legal action id."""

    name = "lowest"

    def act(self, observations, legal_mask, rng):
        assert observations.shape == (legal_mask.shape[0], OBSERVATION_SIZE)
        return legal_mask.argmax(axis=1).astype(np.int64)


def random_legal(mask: np.ndarray, rng: np.random.Generator) -> int:
    return int(rng.choice(np.flatnonzero(mask)))


def play_episode(env, rng, seed=None, **reset_kwargs):
    """Random legal learner actions to the end; returns (rewards, last info, steps)."""
    obs, info = env.reset(seed=seed, **reset_kwargs)
    rewards = []
    while True:
        obs, reward, terminated, truncated, info = env.step(random_legal(env.action_masks(), rng))
        assert not truncated
        rewards.append(reward)
        if terminated:
            return rewards, info, obs


# ----------------------------------------------------------------------------- compliance

def test_gymnasium_check_env_passes_with_the_default_construction():
    """Generic checkers step unmasked action_space.sample() actions: the default
    illegal_action="terminate" ends the game with the penalty instead of raising."""
    from gymnasium.utils.env_checker import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(SergeantMajorEnv())
        check_env(gymnasium.make("SergeantMajor-v0"))
        check_env(SergeantMajorEnv(num_deals=2, learner_seat=None, illegal_action="replace",
                                   render_mode="ansi"))


def test_sb3_check_env_passes_with_the_default_construction():
    check_env = needs("stable_baselines3.common.env_checker").check_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(SergeantMajorEnv())
        check_env(SergeantMajorEnv(num_deals=1, illegal_action="replace"))


def test_registered_and_spaces():
    env = gymnasium.make("SergeantMajor-v0", num_deals=2, learner_seat=1)
    assert sergeant_major_env.ENV_ID == "SergeantMajor-v0"
    assert env.observation_space.shape == (OBSERVATION_SIZE,)
    assert env.observation_space.dtype == np.float32
    assert env.action_space == gymnasium.spaces.Discrete(NUM_ACTIONS)
    obs, info = env.reset(seed=5)
    assert obs.dtype == np.float32 and env.observation_space.contains(obs)
    assert set(info) >= {"action_mask", "decision", "deal", "role"}
    assert env.unwrapped.rules == Rules(num_deals=2)
    np.testing.assert_array_equal(env.unwrapped.action_masks(), info["action_mask"])
    assert isinstance(RandomPolicy(), Policy)


# ----------------------------------------------------------------------------- the same game

@pytest.mark.parametrize("seat", [0, 1, 2])
def test_same_game_as_engine_with_random_opponents(seat):
    """reset(seed=s): engine game s, opponents drawing from default_rng([s, 1]) (documented)."""
    seed, rules = 1234 + seat, Rules(num_deals=2)
    env = SergeantMajorEnv(learner_seat=seat, rules=rules)
    obs, info = env.reset(seed=seed)
    state = engine.init([seed], rules)
    opponent_rng = np.random.default_rng([seed, 1])
    learner_rng = np.random.default_rng(seat)
    policy = RandomPolicy()

    def opponents() -> float:
        reward = 0.0
        while state.phase[0] != engine.OVER and state.to_act[0] != seat:
            mask = engine.legal_action_mask(state)
            engine.step(state, policy.act(None, mask, opponent_rng))
            reward += state.deal_points[0, seat] if state.deal_ended[0] else 0
        return reward

    opponents()
    total = 0.0
    while True:
        np.testing.assert_array_equal(obs, observe(state, seat)[0])
        mask = engine.legal_action_mask(state)[0]
        np.testing.assert_array_equal(env.action_masks(), mask)
        np.testing.assert_array_equal(info["action_mask"], mask)
        assert int(state.to_act[0]) == seat
        assert info["decision"] == int(state.phase[0]) and engine.DECISIONS[info["decision"]] != "game_over"
        assert info["deal"] == int(state.deal[0])
        assert info["role"] == (seat - int(state.dealer[0])) % 3
        action = random_legal(mask, learner_rng)
        obs, reward, terminated, _, info = env.step(action)
        engine.step(state, np.array([action]))
        expected = state.deal_points[0, seat] if state.deal_ended[0] else 0
        expected += opponents()
        assert reward == expected
        total += reward
        assert terminated == (state.phase[0] == engine.OVER)
        if terminated:
            np.testing.assert_array_equal(obs, observe(state, seat)[0])
            assert np.flatnonzero(info["action_mask"]).tolist() == [0] and info["decision"] == engine.OVER
            assert total == state.scores[0, seat] == info["final_scores"][seat]
            return


def test_same_seed_and_actions_same_game():
    def run(env):
        rng = np.random.default_rng(7)
        out = [env.reset(seed=99)[0]]
        while True:
            obs, reward, terminated, _, _ = env.step(random_legal(env.action_masks(), rng))
            out += [obs, reward]
            if terminated:
                return out

    a = run(SergeantMajorEnv(num_deals=2, learner_seat=None))
    b = run(SergeantMajorEnv(num_deals=2, learner_seat=None))
    assert len(a) == len(b)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def test_deterministic_opponents_see_their_own_view():
    seen = []

    class Spy(LowestLegal):
        def act(self, observations, legal_mask, rng):
            seen.append((observations.copy(), legal_mask.copy()))
            return super().act(observations, legal_mask, rng)

    env = SergeantMajorEnv(learner_seat=2, opponents=Spy(), num_deals=1)
    env.reset(seed=3)
    state = env.state.copy()
    assert seen, "the playmaker or an earlier player is an opponent in this deal"
    # Replaying the start with the engine: each opponent saw observe(state, its seat).
    replay = engine.init([3], Rules(num_deals=1))
    for obs, mask in seen:
        seat = int(replay.to_act[0])
        assert seat != 2
        np.testing.assert_array_equal(obs[0], observe(replay, seat)[0])
        np.testing.assert_array_equal(mask[0], engine.legal_action_mask(replay)[0])
        engine.step(replay, mask.argmax(axis=1))
    for name, value in state.arrays().items():
        np.testing.assert_array_equal(value, getattr(replay, name), err_msg=name)


# ----------------------------------------------------------------------------- rewards

@pytest.mark.parametrize("seat", [0, 1, 2, None])
def test_points_rewards_sum_to_final_score(seat):
    env = SergeantMajorEnv(learner_seat=seat, num_deals=3)
    rng = np.random.default_rng(0)
    for seed in range(3):
        rewards, info, _ = play_episode(env, rng, seed=seed)
        assert sum(rewards) == info["final_scores"][env.learner_seat]
        assert info["deal"] == 3


def test_score_and_rank_rewards():
    rng = np.random.default_rng(1)
    for seed in range(4):
        env = SergeantMajorEnv(num_deals=2, reward="score", learner_seat=None)
        rewards, info, _ = play_episode(env, rng, seed=seed)
        assert all(r == 0 for r in rewards[:-1]) and rewards[-1] == info["final_scores"][env.learner_seat]
        env = SergeantMajorEnv(num_deals=2, reward="rank", learner_seat=None)
        rewards, info, _ = play_episode(env, rng, seed=seed)
        scores, own = info["final_scores"], info["final_scores"][env.learner_seat]
        above = sum(s > own for s in scores)
        below = sum(s < own for s in scores)
        assert all(r == 0 for r in rewards[:-1])
        assert rewards[-1] == (below - above) / 2


# ----------------------------------------------------------------------------- errors

def test_illegal_action_raises_and_leaves_state_unchanged():
    env = SergeantMajorEnv(num_deals=1, illegal_action="raise")
    env.reset(seed=0)
    before = env.state.copy()
    mask = env.action_masks()
    illegal = int(np.flatnonzero(~mask)[0])
    with pytest.raises(ValueError, match="legal actions") as caught:
        env.step(illegal)
    assert isinstance(caught.value, IllegalActionError)
    assert str(np.flatnonzero(mask).tolist()) in str(caught.value)  # the legal ids are named
    for name, value in before.arrays().items():
        np.testing.assert_array_equal(value, getattr(env.state, name), err_msg=name)
    with pytest.raises(ValueError):
        env.step(NUM_ACTIONS)
    with pytest.raises(ValueError):
        env.step(1.5)
    env.step(int(np.flatnonzero(mask)[0]))  # still usable


def test_illegal_action_terminates_by_default_with_the_documented_penalty():
    env = SergeantMajorEnv(num_deals=2)
    obs, _ = env.reset(seed=0)
    before = env.state.copy()
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    obs_after, reward, terminated, truncated, info = env.step(illegal)
    assert (reward, terminated, truncated) == (ILLEGAL_REWARD, True, False) and ILLEGAL_REWARD == -1.0
    assert info["illegal_action"] is True and info["decision"] == engine.OVER
    # Nothing is legal any more: the finished game's mask marks action 0 alone (never empty).
    assert np.flatnonzero(info["action_mask"]).tolist() == [0] == np.flatnonzero(env.action_masks()).tolist()
    np.testing.assert_array_equal(info["final_scores"], env.state.scores[0])
    np.testing.assert_array_equal(obs_after, obs)  # the position where the action was tried
    for name, value in before.arrays().items():
        np.testing.assert_array_equal(value, getattr(env.state, name), err_msg=name)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(int(np.flatnonzero(before_mask := engine.legal_action_mask(before)[0])[0]))
    assert before_mask.any()
    env.reset(seed=1)  # a new episode is normal again
    *_, info = env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert info["illegal_action"] is False


def test_illegal_reward_option_sets_the_penalty():
    env = SergeantMajorEnv(num_deals=1, illegal_reward=-20)
    env.reset(seed=0)
    _, reward, terminated, _, _ = env.step(int(np.flatnonzero(~env.action_masks())[0]))
    assert reward == -20.0 and terminated


@pytest.mark.parametrize("illegal_action", ["terminate", "raise", "replace"])
@pytest.mark.parametrize("action", [True, False, np.True_, 2**70, -1, NUM_ACTIONS, 1.0, "3", None, [3]])
def test_an_action_outside_the_space_is_one_value_error_line_whatever_illegal_action_says(illegal_action, action):
    """A bool is not an action id (step(True) was played as 1); 2**70 was an OverflowError."""
    env = SergeantMajorEnv(num_deals=1, illegal_action=illegal_action)
    env.reset(seed=0)
    before = env.state.copy()
    with pytest.raises(ValueError, match=r"^SergeantMajorEnv.step: an action is an integer id 0..57 "
                                         r"\(RULES.md section 10\), got .*$") as caught:
        env.step(action)
    assert "\n" not in str(caught.value)
    for name, value in before.arrays().items():
        np.testing.assert_array_equal(value, getattr(env.state, name), err_msg=name)
    env.step(int(np.flatnonzero(env.action_masks())[0]))  # still usable


def test_numpy_integer_actions_are_accepted():
    env = SergeantMajorEnv(num_deals=1, illegal_action="raise")
    env.reset(seed=0)
    env.step(np.int64(np.flatnonzero(env.action_masks())[0]))
    env.step(np.array(np.flatnonzero(env.action_masks())[0]))  # a 0-d array, as a policy may give


@pytest.mark.parametrize("seed", [2**63, 2**70, -1, True, 1.5, "0"])
def test_reset_refuses_a_seed_out_of_the_seed_rule_and_changes_nothing(seed):
    env = SergeantMajorEnv(num_deals=1, learner_seat=None)
    env.reset(seed=5)
    before, generator = env.state.copy(), env.np_random.bit_generator.state
    with pytest.raises(ValueError, match=r"SergeantMajorEnv.reset: seed must be an integer from 0 to 2\*\*63 - 1"):
        env.reset(seed=seed)
    assert env.np_random.bit_generator.state == generator and env.game_seed == 5
    for name, value in before.arrays().items():
        np.testing.assert_array_equal(value, getattr(env.state, name), err_msg=name)
    env.reset(seed=2**63 - 1)  # the largest seed is allowed


def test_replace_illegal_action():
    env = SergeantMajorEnv(num_deals=1, illegal_action="replace")
    env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    *_, info = env.step(illegal)
    assert info["illegal_action"] is True


def test_step_before_reset_and_after_end():
    env = SergeantMajorEnv(num_deals=1)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    play_episode(env, np.random.default_rng(0), seed=0)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


@pytest.mark.parametrize("kwargs, match", [
    ({"num_deal": 3}, "unknown rule option.*num_deal.*known options: num_deals"),
    ({"num_deals": 0}, "num_deals must be an integer from 1 to 18"),
    ({"num_deals": 19}, "num_deals must be an integer from 1 to 18"),
    ({"exchanges": "yes"}, "exchanges must be true or false"),
    ({"reward": "win"}, "reward must be one of 'points', 'score', 'rank'"),
    ({"learner_seat": 3}, "learner_seat must be 0, 1, 2"),
    ({"illegal_action": "ignore"}, "illegal_action must be one of 'terminate', 'raise', 'replace'"),
    ({"illegal_reward": float("nan")}, "illegal_reward must be a finite number"),
    ({"illegal_reward": True}, "illegal_reward must be a finite number"),
    ({"illegal_reward": "-1"}, "illegal_reward must be a finite number"),
    ({"rules": Rules(), "num_deals": 2}, "either"),
])
def test_bad_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        SergeantMajorEnv(**kwargs)
    with pytest.raises(ValueError, match=match):
        gymnasium.make("SergeantMajor-v0", **kwargs)


def test_bad_opponents_and_reset_options():
    with pytest.raises(TypeError, match="act"):
        SergeantMajorEnv(opponents=[RandomPolicy(), object()])
    with pytest.raises(TypeError, match="opponents"):
        SergeantMajorEnv(opponents=[RandomPolicy()] * 3)
    env = SergeantMajorEnv(num_deals=1)
    with pytest.raises(ValueError, match="unknown reset option"):
        env.reset(options={"seat": 1})
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=-1)


# ----------------------------------------------------------------------------- infos

def test_infos_are_numbers_and_arrays_only():
    """Tensor-friendly: every info value converts to an array of numbers (no strings, no None)."""
    env = SergeantMajorEnv(num_deals=1, learner_seat=None)
    rng = np.random.default_rng(4)
    _, info = env.reset(seed=4)
    infos = [info]
    while True:
        *_, terminated, _, info = env.step(random_legal(env.action_masks(), rng))
        infos.append(info)
        if terminated:
            break
    for info in infos:
        for key, value in info.items():
            assert np.asarray(value).dtype.kind in "biuf", (key, value)
        assert engine.DECISIONS[info["decision"]] and engine.ROLE_NAMES[info["role"]]
        assert info["scores"].dtype == np.int64 and info["scores"].shape == (3,)
    assert infos[-1]["decision"] == engine.OVER and infos[-1]["deal"] == 1


def test_make_vec_loop_of_the_readme_passes_any_action_after_a_done():
    """gymnasium.make_vec (sync, NEXT_STEP autoreset): the terminal step's action_mask row
    marks action 0 alone and the next step resets that env, ignoring its action. The README's loop."""
    envs = gymnasium.make_vec("SergeantMajor-v0", num_envs=4, vectorization_mode="sync", num_deals=1)
    rng = np.random.default_rng(0)
    observations, infos = envs.reset(seed=0)
    done = np.zeros(envs.num_envs, dtype=bool)
    episodes, illegal = 0, 0
    for _ in range(300):
        # After a done, the next step is the reset step: its action is ignored, any will do.
        actions = np.array([0 if d else rng.choice(np.flatnonzero(mask))
                            for d, mask in zip(done, infos["action_mask"])])
        observations, rewards, terminated, truncated, infos = envs.step(actions)
        done = terminated | truncated
        episodes += int(done.sum())
        illegal += int(np.sum(infos["illegal_action"] & infos.get("_illegal_action", True)))
        if done.any():
            # The terminal step's masks mark action 0 alone: never an empty row.
            assert (infos["action_mask"][done].sum(axis=1) == 1).all() and infos["action_mask"][done, 0].all()
    envs.close()
    assert episodes >= 4 and illegal == 0  # every live env got a legal action


# ----------------------------------------------------------------------------- seats, render

def test_learner_seat_drawn_per_episode():
    env = SergeantMajorEnv(learner_seat=None, num_deals=1)
    seats = set()
    for seed in range(12):
        env.reset(seed=seed)
        seats.add(env.learner_seat)
        first = env.learner_seat
        env.reset(seed=seed)
        assert env.learner_seat == first  # drawn from np_random: reproducible
    assert seats == {0, 1, 2}
    env.reset(seed=0, options={"learner_seat": 2})
    assert env.learner_seat == 2
    assert int(env.state.to_act[0]) == 2


def test_two_different_opponents():
    calls = {"left": [], "right": []}

    class Tagged(LowestLegal):
        def __init__(self, tag, env_ref):
            self.tag, self.env_ref = tag, env_ref

        def act(self, observations, legal_mask, rng):
            env = self.env_ref[0]
            calls[self.tag].append((int(env.state.to_act[0]) - env.learner_seat) % 3)
            return super().act(observations, legal_mask, rng)

    ref = []
    env = SergeantMajorEnv(learner_seat=1, opponents=[Tagged("left", ref), Tagged("right", ref)], num_deals=1)
    ref.append(env)
    play_episode(env, np.random.default_rng(0), seed=4)
    assert set(calls["left"]) == {1} and set(calls["right"]) == {2}


def test_render_ansi():
    env = SergeantMajorEnv(num_deals=1, render_mode="ansi")
    with pytest.raises(RuntimeError, match=r"^call reset\(\) before render\(\)$"):  # issue 50: said step()
        env.render()
    with pytest.raises(RuntimeError, match=r"^call reset\(\) before action_masks\(\)$"):
        env.action_masks()
    env.reset(seed=0)
    text = env.render()
    assert "deal 1/1" in text and "hand:" in text


@pytest.mark.slow
def test_environments_do_not_import_agents():
    """The environments drive policies through the Policy protocol only (agents/ is separate)."""
    import subprocess
    import sys

    code = ("import sys, sergeant_major_env, sergeant_major_env.policies, sergeant_major_env.single_seat, "
            "sergeant_major_env.vec_env; sergeant_major_env.SergeantMajorEnv(num_deals=1).reset(seed=0); "
            "print(sorted(m for m in sys.modules if m == 'agents' or m.startswith('agents.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_observations_stay_in_the_space():
    env = SergeantMajorEnv(num_deals=4, learner_seat=None)
    rng = np.random.default_rng(3)
    obs, _ = env.reset(seed=8)
    while True:
        assert env.observation_space.contains(obs)
        obs, _, terminated, _, _ = env.step(random_legal(env.action_masks(), rng))
        if terminated:
            assert env.observation_space.contains(obs)
            break
