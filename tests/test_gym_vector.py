"""The native Gymnasium VectorEnv (sergeant_major_env.gym_vector): the vector entry point of
SergeantMajor-v0, the sync mode's games for the same seeds, autoreset, masks, bad input."""

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import sergeant_major_env  # noqa: F401  (registers the id)
from sergeant_major_env.agents import make_agent
from sergeant_major_env import engine
from sergeant_major_env.gym_vector import SergeantMajorVectorEnv
from sergeant_major_env.rules import Rules

ENV_ID = "SergeantMajor-v0"


def make(mode: str, num_envs: int = 4, autoreset: str = "NextStep", **options):
    if mode == "vector_entry_point":
        return gymnasium.make_vec(ENV_ID, num_envs=num_envs, vectorization_mode=mode, autoreset_mode=autoreset,
                                  **options)
    return gymnasium.make_vec(ENV_ID, num_envs=num_envs, vectorization_mode=mode,
                              vector_kwargs={"autoreset_mode": AutoresetMode(autoreset)}, **options)


def play(envs, steps: int, seed: int = 11, illegal_share: float = 0.0) -> list[tuple]:
    """(observations, rewards, terminations, infos) of a reset and ``steps`` steps, the learner
    drawing uniformly among the legal actions from a fixed generator (among all 58 actions
    with probability ``illegal_share``)."""
    obs, infos = envs.reset(seed=seed)
    rng = np.random.default_rng(0)
    out = [(obs.copy(), None, None, infos)]
    for _ in range(steps):
        actions = np.array([rng.choice(58) if rng.random() < illegal_share else rng.choice(np.flatnonzero(mask))
                            for mask in infos["action_mask"]])
        obs, rewards, terminations, truncations, infos = envs.step(actions)
        assert not truncations.any()
        out.append((obs.copy(), rewards.copy(), terminations.copy(), infos))
    return out


def assert_same_infos(a: dict, b: dict, where) -> None:
    assert set(a) == set(b), (where, set(a) ^ set(b))
    for key in a:
        if key == "final_obs":
            assert [x is None for x in a[key]] == [x is None for x in b[key]], where
            for x, y in zip(a[key], b[key]):
                if x is not None:
                    np.testing.assert_array_equal(x, y)
        elif isinstance(a[key], dict):
            assert_same_infos(a[key], b[key], (where, key))
        else:
            np.testing.assert_array_equal(a[key], b[key], err_msg=f"{where} {key}")


def test_make_vec_uses_the_vector_entry_point_by_default():
    envs = gymnasium.make_vec(ENV_ID, num_envs=3, num_deals=1)
    assert isinstance(envs.unwrapped, SergeantMajorVectorEnv)
    assert envs.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    assert envs.single_action_space == gymnasium.spaces.Discrete(58)
    assert envs.action_space == gymnasium.spaces.MultiDiscrete([58] * 3)
    obs, infos = envs.reset(seed=0)
    assert obs.shape == (3, envs.single_observation_space.shape[0]) and obs.dtype == np.float32
    assert obs in envs.observation_space
    assert infos["action_mask"].shape == (3, 58) and infos["_action_mask"].all()
    same = gymnasium.make_vec(ENV_ID, num_envs=3, autoreset_mode="SameStep", num_deals=1)
    assert same.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP


@pytest.mark.parametrize("autoreset", ["NextStep", "SameStep"])
def test_the_same_seeds_give_the_sync_modes_games(autoreset):
    """Slot i plays env i's games of the sync mode, episode after episode (seats drawn, seeds
    drawn at each autoreset): observations, rewards, terminations and infos all equal."""
    options = dict(num_deals=1, learner_seat=None, opponents=make_agent("heuristic"))
    sync = play(make("sync", autoreset=autoreset, **options), 260)
    native = play(make("vector_entry_point", autoreset=autoreset, **options), 260)
    assert sum(int(t.sum()) for _, _, t, _ in sync[1:]) >= 40  # several episodes per slot
    for k, (a, b) in enumerate(zip(sync, native)):
        np.testing.assert_array_equal(a[0], b[0], err_msg=f"observations of step {k}")
        if k:
            np.testing.assert_array_equal(a[1], b[1], err_msg=f"rewards of step {k}")
            np.testing.assert_array_equal(a[2], b[2], err_msg=f"terminations of step {k}")
        assert_same_infos(a[3], b[3], k)


def test_illegal_actions_terminate_as_in_the_sync_mode():
    """illegal_action="terminate" (the single-seat default): the slot's game ends with
    illegal_reward, its infos say so, the next game follows, all as in the sync mode."""
    options = dict(num_deals=1, learner_seat=None, opponents=make_agent("greedy"), illegal_action="terminate",
                   illegal_reward=-5.0)
    sync = play(make("sync", **options), 120, illegal_share=0.05)
    native = play(make("vector_entry_point", **options), 120, illegal_share=0.05)
    ended_by_illegal = sum(int((t & i["illegal_action"]).sum()) for _, _, t, i in sync[1:])
    assert ended_by_illegal >= 5 and -5.0 in np.concatenate([r for _, r, _, _ in sync[1:]])
    for k, (a, b) in enumerate(zip(sync, native)):
        np.testing.assert_array_equal(a[0], b[0], err_msg=f"observations of step {k}")
        if k:
            np.testing.assert_array_equal(a[1], b[1], err_msg=f"rewards of step {k}")
            np.testing.assert_array_equal(a[2], b[2], err_msg=f"terminations of step {k}")
        assert_same_infos(a[3], b[3], k)


@pytest.mark.parametrize("autoreset", ["NextStep", "SameStep"])
def test_by_default_illegal_actions_and_ansi_render_are_the_sync_modes(autoreset):
    """Issue 50: the native vector env raised on an illegal action where the sync mode of the
    same id ended the game with a penalty, and refused render_mode="ansi". Its defaults are now
    the single-seat env's, and render() returns one text per game, the sync mode's tuple."""
    import inspect

    from sergeant_major_env import SergeantMajorEnv

    assert inspect.signature(SergeantMajorVectorEnv).parameters["illegal_action"].default == \
        inspect.signature(SergeantMajorEnv).parameters["illegal_action"].default == "terminate"
    options = dict(num_deals=1, learner_seat=None, opponents=make_agent("greedy"), render_mode="ansi")
    sync, native = (make(mode, num_envs=3, autoreset=autoreset, **options) for mode in ("sync", "vector_entry_point"))
    assert native.render_mode == sync.render_mode == "ansi"
    _, infos = sync.reset(seed=4)
    native.reset(seed=4)
    rng, ended_by_illegal = np.random.default_rng(2), 0
    for k in range(80):
        texts = native.render()
        assert isinstance(texts, tuple) and len(texts) == 3 and texts == sync.render(), k
        actions = np.array([rng.choice(58) if rng.random() < 0.1 else rng.choice(np.flatnonzero(mask))
                            for mask in infos["action_mask"]])
        _, rewards, terminated, _, infos = sync.step(actions)
        _, native_rewards, native_terminated, _, native_infos = native.step(actions)
        np.testing.assert_array_equal(rewards, native_rewards)
        np.testing.assert_array_equal(terminated, native_terminated)
        assert_same_infos(infos, native_infos, k)
        said = infos["final_info"]["illegal_action"] if "final_info" in infos else infos["illegal_action"]
        ended_by_illegal += int((terminated & said).sum())
    assert ended_by_illegal >= 3
    assert "you" in texts[0] and SergeantMajorVectorEnv(2, num_deals=1).render() is None


def test_next_step_autoreset_returns_the_terminal_step_then_the_next_game_ignoring_the_action():
    envs = SergeantMajorVectorEnv(3, num_deals=1, opponents=make_agent("greedy"))
    obs, infos = envs.reset(seed=5)
    rng = np.random.default_rng(1)
    total = np.zeros(3)
    while True:
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in infos["action_mask"]])
        obs, rewards, terminated, _, infos = envs.step(actions)
        total += rewards
        if terminated.any():
            break
    done = np.flatnonzero(terminated)
    # The terminal step: the finished game's view, its final scores, a mask of action 0 alone.
    assert (infos["decision"][done] == engine.OVER).all() and infos["_final_scores"].tolist() == terminated.tolist()
    np.testing.assert_array_equal(total[done], infos["final_scores"][done, 0])  # points sum to the score (seat 0)
    assert infos["action_mask"][done].sum(axis=1).tolist() == [1] * done.size and infos["action_mask"][done, 0].all()
    # The next step ignores those slots' actions (an illegal id raises nowhere) and starts their next game.
    actions = np.array([rng.choice(np.flatnonzero(m)) for m in infos["action_mask"]])
    actions[done] = 57 if not infos["action_mask"][done[0], 57] else 56
    obs, rewards, terminated, _, infos = envs.step(actions)
    assert not terminated[done].any() and (rewards[done] == 0).all()
    assert (infos["deal"][done] == 0).all() and (infos["scores"][done] == 0).all()
    assert infos["action_mask"][done].any(axis=1).all()
    np.testing.assert_array_equal(envs.action_masks(), infos["action_mask"])


def test_same_step_autoreset_reports_the_finished_game_in_final_obs_and_final_info():
    envs = SergeantMajorVectorEnv(2, num_deals=1, autoreset_mode=AutoresetMode.SAME_STEP)
    obs, infos = envs.reset(seed=3)
    rng = np.random.default_rng(2)
    for _ in range(400):
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in infos["action_mask"]])
        obs, rewards, terminated, _, infos = envs.step(actions)
        if terminated.any():
            break
    done = np.flatnonzero(terminated)
    assert infos["_final_obs"].tolist() == terminated.tolist()
    assert (infos["final_info"]["decision"][done] == engine.OVER).all()
    assert (infos["deal"][done] == 0).all() and infos["action_mask"][done].any(axis=1).all()  # the next game's
    assert infos["final_obs"][done[0]].shape == obs[0].shape


def test_no_observation_ever_comes_with_an_empty_mask_so_minus_inf_masking_is_safe():
    """The CleanRL loop of the issue: logits masked with -inf on every returned observation
    (the terminal ones included, under NEXT_STEP) must never give NaN probabilities. It
    crashed on the sync mode, whose terminal rows were all False."""
    for mode in ("sync", "vector_entry_point"):
        envs = make(mode, num_envs=4, num_deals=1)
        obs, infos = envs.reset(seed=0)
        rng = np.random.default_rng(0)
        ends = 0
        for _ in range(150):
            masks = infos["action_mask"]
            logits = np.where(masks, rng.normal(size=masks.shape), -np.inf)
            probabilities = np.exp(logits - logits.max(axis=1, keepdims=True))
            probabilities /= probabilities.sum(axis=1, keepdims=True)
            assert np.isfinite(probabilities).all(), mode
            actions = np.array([rng.choice(58, p=p) for p in probabilities])
            obs, _, terminated, _, infos = envs.step(actions)
            ends += int(terminated.sum())
        assert ends > 0


def test_replace_plays_a_legal_action_and_says_so():
    envs = SergeantMajorVectorEnv(2, num_deals=1, illegal_action="replace")
    _, infos = envs.reset(seed=0)
    illegal = np.array([np.flatnonzero(~m)[0] for m in infos["action_mask"]])
    _, _, _, _, infos = envs.step(illegal)
    assert infos["illegal_action"].all()
    raising = SergeantMajorVectorEnv(2, num_deals=1, illegal_action="raise")
    _, infos = raising.reset(seed=0)
    with pytest.raises(engine.IllegalActionError, match="learner action"):
        raising.step(np.array([np.flatnonzero(~m)[0] for m in infos["action_mask"]]))


def test_rules_are_given_as_options_or_rules_not_both():
    envs = gymnasium.make_vec(ENV_ID, num_envs=2, rules=Rules(num_deals=2))
    assert envs.unwrapped.rules.num_deals == 2
    with pytest.raises(ValueError, match="not both"):
        SergeantMajorVectorEnv(2, rules=Rules(num_deals=2), num_deals=3)


@pytest.mark.parametrize("make_bad, message", [
    (lambda: SergeantMajorVectorEnv(0), "num_envs must be a positive integer"),
    (lambda: SergeantMajorVectorEnv(2, autoreset_mode="Disabled"), "autoreset_mode must be"),
    (lambda: SergeantMajorVectorEnv(2, autoreset_mode=3), "autoreset_mode must be"),
    (lambda: SergeantMajorVectorEnv(2, learner_seat=3), "learner_seat must be"),
    (lambda: SergeantMajorVectorEnv(2, illegal_action="ignore"), "illegal_action must be"),
    (lambda: SergeantMajorVectorEnv(2, illegal_reward=float("nan")), "illegal_reward must be"),
    (lambda: SergeantMajorVectorEnv(2, reward="money"), "reward must be"),
    (lambda: SergeantMajorVectorEnv(2, opponents=3), "opponents must be"),
    (lambda: SergeantMajorVectorEnv(2, num_deal=3), "num_deal"),
    (lambda: SergeantMajorVectorEnv(2).reset(seed=-1), "seed must be"),
    (lambda: SergeantMajorVectorEnv(2).reset(seed=[1]), "a list of 2 seeds"),
    (lambda: SergeantMajorVectorEnv(2).reset(seed=2**63 - 1), "at most"),
    (lambda: SergeantMajorVectorEnv(2).reset(options={"num_deals": 2}), "unknown reset option"),
    (lambda: SergeantMajorVectorEnv(2).step(np.zeros(2, dtype=np.int64)), "call reset"),
    (lambda: SergeantMajorVectorEnv(2, render_mode="human"), "render_mode must be one of 'ansi', got 'human'"),
    (lambda: SergeantMajorVectorEnv(2, render_mode="ansi").render(), "render: no games yet: call reset"),
])
def test_bad_input_is_one_line(make_bad, message):
    with pytest.raises((ValueError, TypeError, RuntimeError), match=message) as error:
        make_bad()
    assert "\n" not in str(error.value)


def test_bad_actions_are_one_line_and_step_nothing():
    envs = SergeantMajorVectorEnv(2, num_deals=1)
    obs, infos = envs.reset(seed=0)
    before = envs.state.take(np.arange(2))
    for actions in (np.zeros((2, 1), dtype=np.int64), np.zeros(2), np.array([0, 58]), [0]):
        with pytest.raises(ValueError, match="action") as error:
            envs.step(actions)
        assert "\n" not in str(error.value)
    for name, value in before.arrays().items():
        np.testing.assert_array_equal(getattr(envs.state, name), value)


def test_masks_reach_through_the_wrappers_of_gymnasium_make():
    env = gymnasium.make(ENV_ID, num_deals=1)
    _, info = env.reset(seed=0)
    np.testing.assert_array_equal(env.unwrapped.action_masks(), info["action_mask"])
    np.testing.assert_array_equal(env.get_wrapper_attr("action_masks")(), info["action_mask"])
