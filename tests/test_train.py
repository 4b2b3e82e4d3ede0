"""train.py (MaskablePPO over SergeantMajorVecEnv) and the VecEnv's opponent pool.

The script runs in-process with tiny budgets (one-deal games, a few hundred timesteps), so
the whole module takes a few seconds.
"""

from __future__ import annotations

import glob
import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from sergeant_major_env import SergeantMajorVecEnv, engine  # noqa: E402
from sergeant_major_env.policies import RandomPolicy  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import train  # noqa: E402
from agents import make_agent  # noqa: E402

TINY = ["--num-envs", "8", "--option", "num_deals=1", "--eval-games", "12", "--final-eval-games", "12",
        "--eval-every", "256", "--snapshot-every", "1", "--n-steps", "32", "--batch-size", "128",
        "--no-progress"]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("train") / "run"
    summary = train.main(["--total-timesteps", "512", "--out", str(out), "--imitate", "greedy",
                          "--imitate-steps", "256", *TINY])
    return out, summary


# ----------------------------------------------------------------------------- the script

def test_smoke_run_writes_its_outputs(run_dir):
    out, summary = run_dir
    assert (out / "model.zip").stat().st_size > 0
    assert (out / "learning_curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert glob.glob(str(out / "tb" / "**" / "events.out.tfevents.*"), recursive=True)
    assert (out / "checkpoints" / "model_000000000512.zip").exists()
    assert glob.glob(str(out / "league" / "self_*.pt"))  # a self-play snapshot was taken
    on_disk = json.loads((out / "summary.json").read_text())
    for key in ("config", "timesteps", "wall_time_s", "train_time_s", "env_steps_per_s", "final_evaluation",
                "eval_history", "machine"):
        assert key in on_disk, key
    assert on_disk["timesteps"] == 512 and on_disk["env_steps_per_s"] > 0
    assert on_disk["config"]["rules"]["num_deals"] == 1 and on_disk["config"]["total_timesteps"] == 512
    for opponent in ("random", "heuristic"):
        final = on_disk["final_evaluation"][f"vs_{opponent}"]
        low, high = final["ci95"]
        assert low <= final["mean_points"] <= high and final["games"] == 12
    # Evaluations at the start and every 256 timesteps, then the final one.
    steps = [row["timesteps"] for row in on_disk["eval_history"]]
    assert steps == [0, 256, 512] and on_disk["eval_history"][-1]["final"]
    assert on_disk["imitation"]["teacher"] == "greedy" and on_disk["imitation"]["steps"] == 256
    assert summary["timesteps"] == 512


def test_tensorboard_has_eval_curves(run_dir):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    out, _ = run_dir
    tags = set()
    for path in glob.glob(str(out / "tb" / "**" / "events.out.tfevents.*"), recursive=True):
        acc = EventAccumulator(path)
        acc.Reload()
        tags |= set(acc.Tags()["scalars"])
    assert {"eval/vs_random_mean_points", "eval/vs_heuristic_mean_points", "curriculum/weight_random",
            "imitation/accuracy", "train/approx_kl"} <= tags
    assert any(tag.startswith("rollout/ep_rew_vs_") for tag in tags)


def test_saved_model_plays_as_an_agent(run_dir):
    out, _ = run_dir
    agent = make_agent(f"ppo:{out / 'model.zip'}")
    env = SergeantMajorVecEnv(16, seed=3, num_deals=1)
    obs = env.reset()
    rng = np.random.default_rng(0)
    for _ in range(40):  # every decision kind of a deal: mode, exchanges, discards, plays
        masks = env.action_masks()
        actions = agent.act(obs, masks, rng)
        assert masks[np.arange(16), actions].all()
        obs, *_ = env.step(actions)


def test_resume_continues_from_the_checkpoint(run_dir, tmp_path):
    out, _ = run_dir
    resumed = tmp_path / "resumed"
    summary = train.main(["--resume", str(out), "--out", str(resumed), "--total-timesteps", "768", *TINY])
    assert summary["resumed_from"].endswith("model_000000000512.zip")
    assert summary["timesteps"] == 768 and summary["timesteps_this_run"] == 256  # continued, not restarted
    assert (resumed / "checkpoints" / "model_000000000768.zip").exists()
    assert summary["league"] and summary["imitation"] is None  # league reloaded; no second imitation
    steps = [row["timesteps"] for row in summary["eval_history"]]
    assert steps[:3] == [0, 256, 512] and steps[-1] == 768  # the history continues too
    from sb3_contrib import MaskablePPO

    assert MaskablePPO.load(resumed / "model.zip").num_timesteps == 768


def test_same_seed_same_run(tmp_path):
    args = ["--total-timesteps", "256", "--eval-every", "0", *TINY]
    first = train.main([*args, "--out", str(tmp_path / "a")])
    second = train.main([*args, "--out", str(tmp_path / "b")])
    from sb3_contrib import MaskablePPO

    a, b = (MaskablePPO.load(tmp_path / name / "model.zip").policy.state_dict() for name in "ab")
    for key in a:
        assert np.array_equal(a[key].numpy(), b[key].numpy()), key
    assert first["final_evaluation"]["vs_random"]["mean_points"] == \
        second["final_evaluation"]["vs_random"]["mean_points"]


def test_every_option_is_documented(capsys):
    with pytest.raises(SystemExit):
        train.parse_args(["--help"])
    text = capsys.readouterr().out
    parser_options = ["--total-timesteps", "--num-envs", "--seed", "--opponents", "--no-curriculum",
                      "--net-arch", "--learning-rate", "--n-steps", "--batch-size", "--n-epochs", "--gamma",
                      "--gae-lambda", "--clip-range", "--ent-coef", "--eval-every", "--eval-games", "--out",
                      "--resume", "--option", "--device", "--snapshot-every", "--league-size"]
    for option in parser_options:
        assert option in text, option


@pytest.mark.parametrize("argv", [
    ["--option", "num_deals=40"], ["--opponents", "random=-1"], ["--opponents", "random=x"],
    ["--net-arch", "a,b"], ["--num-envs", "0"],
])
def test_bad_arguments_exit_with_status_2(argv):
    with pytest.raises(SystemExit) as error:
        train.parse_args(argv)
    assert error.value.code == 2


def test_pool_parsing_and_curriculum():
    pool = train.parse_pool("random=1,greedy=1,heuristic=2,self=2,ppo:runs/x/model.zip=3")
    assert pool == {"random": 1, "greedy": 1, "heuristic": 2, "self": 2, "ppo:runs/x/model.zip": 3}
    start = train.pool_weights(pool, 0.0, True, 0.5)
    assert start["heuristic"] == start["self"] == 0 and start["random"] == 1
    assert train.pool_weights(pool, 0.25, True, 0.5)["heuristic"] == 1
    assert train.pool_weights(pool, 0.7, True, 0.5) == pool
    assert train.pool_weights(pool, 0.0, False, 0.5) == pool
    strong = {"heuristic": 1.0}  # nothing weak in the pool: constant weights
    assert train.pool_weights(strong, 0.0, True, 0.5) == strong


def test_snapshot_policy_plays_legal_batched_moves(run_dir):
    from sb3_contrib import MaskablePPO

    out, _ = run_dir
    model = MaskablePPO.load(out / "model.zip")
    env = SergeantMajorVecEnv(32, seed=1, num_deals=1)
    obs = env.reset()
    masks = env.action_masks()
    for sample in (False, True):
        snapshot = train.TorchPolicy(model.policy, "self@0", sample=sample)
        a = snapshot.act(obs, masks, np.random.default_rng(0))
        assert a.shape == (32,) and masks[np.arange(32), a].all()
        assert np.array_equal(a, snapshot.act(obs, masks, np.random.default_rng(0)))
    greedy = train.TorchPolicy(model.policy, "x").act(obs, masks, None)
    predicted, _ = model.predict(obs, action_masks=masks, deterministic=True)
    assert np.array_equal(greedy, predicted)


# ----------------------------------------------------------------------------- the opponent pool

class Member:
    """A pool member that checks, at every call, that it got exactly the waiting games of the
    slots assigned to it (its seat to act), all of them at once: one call per member per round."""

    def __init__(self, env: SergeantMajorVecEnv, name: str, pick=RandomPolicy()) -> None:
        self.env, self.name, self.pick = env, name, pick
        self.calls, self.games = 0, 0

    def act(self, observations, legal_mask, rng):
        env = self.env
        state = env.state
        waiting = np.flatnonzero(state.to_act != env.learner_seat)
        is_right = ((state.to_act[waiting] - env.learner_seat[waiting]) % 3 == 2).astype(int)
        member = env.opponent_ids[waiting, is_right]
        mine = waiting[member == env.opponent_members.index(self)]
        np.testing.assert_array_equal(legal_mask, engine.legal_action_mask(state)[mine])
        self.calls += 1
        self.games += len(mine)
        return self.pick.act(observations, legal_mask, rng)


def play(env, steps: int, seed: int = 0) -> list[dict]:
    rng = np.random.default_rng(seed)
    infos = []
    env.reset()
    for _ in range(steps):
        _, _, dones, step_infos = env.step(RandomPolicy().act(None, env.action_masks(), rng))
        infos += [info for info, done in zip(step_infos, dones) if done]
    return infos


def test_pool_assignment_is_per_slot_and_batched():
    env = SergeantMajorVecEnv(48, seed=0, num_deals=1)
    a, b, c = Member(env, "a"), Member(env, "b"), Member(env, "c")
    env.set_opponent_pool([a, b, c], [1, 2, 0])
    infos = play(env, 60)
    assert a.calls and b.calls and not c.calls  # weight 0: never drawn
    assert a.games > a.calls and b.games > b.calls  # batches of several games
    assert (env.opponent_ids[:, 0] == env.opponent_ids[:, 1]).all()  # pairs="same"
    assert len(set(env.opponent_ids[:, 0].tolist())) == 2  # slots hold different members
    assert infos and all(info["opponents"][0] == info["opponents"][1] in ("a", "b") for info in infos)


def test_pool_draw_follows_the_weights_and_the_seed():
    env = SergeantMajorVecEnv(3000, seed=5, num_deals=1)
    policies = [RandomPolicy(), RandomPolicy()]
    env.set_opponent_pool(policies, [1, 3])
    env.reset()
    share = (env.opponent_ids[:, 0] == 1).mean()
    assert abs(share - 0.75) < 0.04
    again = SergeantMajorVecEnv(3000, seed=5, num_deals=1)
    again.set_opponent_pool(policies, [1, 3])
    again.reset()
    np.testing.assert_array_equal(env.opponent_ids, again.opponent_ids)


def test_independent_pairs():
    env = SergeantMajorVecEnv(64, seed=0, num_deals=1)
    left, right = Member(env, "l"), Member(env, "r")
    env.set_opponent_pool([left, right], pairs="independent")
    play(env, 40)
    assert (env.opponent_ids[:, 0] != env.opponent_ids[:, 1]).any()
    assert left.calls and right.calls


def test_new_pool_applies_at_each_slots_next_game():
    env = SergeantMajorVecEnv(16, seed=0, num_deals=1)
    old, new = Member(env, "old"), Member(env, "new")
    env.set_opponent_pool([old])
    rng = np.random.default_rng(0)
    env.reset()
    for _ in range(5):
        env.step(RandomPolicy().act(None, env.action_masks(), rng))
    env.set_opponent_pool([new])  # games in progress keep "old"
    assert env.opponent_names() == [("old", "old")] * 16
    finished = np.zeros(16, dtype=bool)
    while not finished.all():
        _, _, dones, infos = env.step(RandomPolicy().act(None, env.action_masks(), rng))
        for i in np.flatnonzero(dones & ~finished):
            assert infos[i]["opponents"] == ("old", "old")
        finished |= dones
    assert env.opponent_names() == [("new", "new")] * 16 and new.calls
    calls = old.calls
    for _ in range(5):
        env.step(RandomPolicy().act(None, env.action_masks(), rng))
    assert old.calls == calls
    env.set_opponent_pool([new])
    assert env.opponent_members == [new]  # members no game uses are dropped
    env.set_opponent_pool(None)  # back to the fixed opponents (random)
    env.reset()
    assert env.opponent_names() == [("random", "random")] * 16


@pytest.mark.parametrize("policies, weights, match", [
    ([], None, "at least one"),
    ([RandomPolicy()], [-1], "non-negative"),
    ([RandomPolicy()], [0], "not all zero"),
    ([RandomPolicy(), RandomPolicy()], [1], "weights must be 2"),
    ([object()], None, "batched act"),
])
def test_bad_pools(policies, weights, match):
    env = SergeantMajorVecEnv(2, num_deals=1)
    with pytest.raises((ValueError, TypeError), match=match):
        env.set_opponent_pool(policies, weights)
