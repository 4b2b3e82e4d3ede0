"""train.py (MaskablePPO over SergeantMajorVecEnv), its run folders, and the VecEnv's opponent pool.

The script runs in-process with tiny budgets (one-deal games, a few hundred timesteps);
the interrupt tests run it as a real subprocess and send it a real signal.
"""

from __future__ import annotations

import glob
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from conftest import tiny_maskable_ppo  # noqa: E402
from sergeant_major_env import SergeantMajorVecEnv, engine  # noqa: E402
from sergeant_major_env.observation import OBSERVATION_SIZE  # noqa: E402
from sergeant_major_env.policies import RandomPolicy  # noqa: E402

from sergeant_major_env.agents import make_agent  # noqa: E402
from sergeant_major_env.training import run_folder  # noqa: E402
from sergeant_major_env.training.config import parse_pool  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


train = importlib.import_module("sergeant_major_env.cli.train")  # sergeant-major train, python train.py

TINY = ["--num-envs", "8", "--option", "num_deals=1", "--eval-games", "12", "--final-eval-games", "12",
        "--eval-every", "256", "--snapshot-every", "1", "--n-steps", "32", "--batch-size", "128",
        "--opponents", "random=1,greedy=1,heuristic=2,self=2", "--imitate-steps", "256", "--no-progress"]
"""Small runs: every pool kind (the league too) and a short imitation, whatever the defaults are."""


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("train") / "run"
    summary = train.train(["--total-timesteps", "512", "--out", str(out), "--imitate", "greedy",
                          "--imitate-steps", "256", *TINY])
    return out, summary


# ----------------------------------------------------------------------------- the script

def test_smoke_run_writes_its_outputs(run_dir):
    out, summary = run_dir
    assert (out / "model.zip").stat().st_size > 0
    assert (out / "learning_curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert glob.glob(str(out / "tb" / "**" / "events.out.tfevents.*"), recursive=True)
    assert (out / "checkpoints" / "model_000000000512.zip").exists()
    assert glob.glob(str(out / "league" / "self_*.safetensors"))  # a self-play snapshot, as a policy file
    assert (out / "policy.safetensors").stat().st_size > 0 and (out / "policy.json").exists()
    on_disk = json.loads((out / "summary.json").read_text())
    for key in ("config", "timesteps", "wall_time_s", "train_time_s", "env_steps_per_s", "final_evaluation",
                "eval_history", "machine"):
        assert key in on_disk, key
    assert on_disk["status"] == "complete" and on_disk["final_evaluation"]["agent"] == f"ppo:{out}"
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


def test_run_folder_records_everything_needed_to_continue_and_play(run_dir):
    from sergeant_major_env.observation import OBSERVATION_SIZE, VERSION

    out, _ = run_dir
    record = json.loads((out / "run.json").read_text())
    assert record["rules"]["num_deals"] == 1
    assert record["observation"] == {"version": VERSION, "size": OBSERVATION_SIZE} and record["actions"] == 58
    assert record["network"]["net_arch"] == {"pi": [128, 128], "vf": [128, 128]}
    assert record["options"]["num_envs"] == 8 and record["options"]["n_steps"] == 32
    assert record["commands"][0].startswith("sergeant-major train --total-timesteps 512")
    policy = json.loads((out / "policy.json").read_text())
    assert policy["rules"] == record["rules"] and policy["training"]["timesteps"] == 512


def test_saved_model_plays_as_an_agent(run_dir):
    out, _ = run_dir
    agent = make_agent(f"ppo:{out}")  # the run folder: its policy.safetensors, nothing unpickled
    from sergeant_major_env import Rules

    assert agent.rules == Rules(num_deals=1) and agent.metadata["training"]["seed"] == 0
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
    summary = train.train(["--resume", str(out), "--out", str(resumed), "--total-timesteps", "768", *TINY])
    assert summary["resumed_from"].endswith("model_000000000512.zip")
    assert summary["timesteps"] == 768 and summary["timesteps_this_run"] == 256  # continued, not restarted
    assert (resumed / "checkpoints" / "model_000000000768.zip").exists()
    assert summary["league"] and summary["imitation"] is None  # league reloaded; no second imitation
    assert glob.glob(str(resumed / "league" / "self_*.safetensors"))  # the league went along
    steps = [row["timesteps"] for row in summary["eval_history"]]
    assert steps[:3] == [0, 256, 512] and steps[-1] == 768  # the history continues too
    from sb3_contrib import MaskablePPO

    assert MaskablePPO.load(resumed / "model.zip").num_timesteps == 768
    assert len(json.loads((resumed / "run.json").read_text())["commands"]) == 2


def test_resume_restores_rule_options(run_dir, tmp_path):
    """The README's `python train.py --resume runs/quick` after a run with --option num_deals=...:
    no option given again, the run's own ones (rule options, network, sizes) are used."""
    out, _ = run_dir
    summary = train.train(["--resume", str(out), "--out", str(tmp_path / "again"), "--total-timesteps", "768",
                          "--no-progress"])
    config = summary["config"]
    assert config["rules"]["num_deals"] == 1 and config["num_envs"] == 8 and config["eval_games"] == 12
    assert config["net_arch"] == [128, 128] and summary["timesteps"] == 768


@pytest.mark.parametrize("option, both_values", [
    (["--option", "num_deals=18"], ("num_deals=18", "num_deals=1")),
    (["--net-arch", "64,64"], ("64,64", "128,128")),
    (["--num-envs", "16"], ("16", "8")),
    (["--opponents", "heuristic"], ("heuristic", "random=1,greedy=1,heuristic=2,self=2")),
])
def test_resume_refuses_a_conflicting_option_naming_both_values(run_dir, tmp_path, capsys, option, both_values):
    out, _ = run_dir
    code, line = _fails(["--resume", str(out), "--out", str(tmp_path / "x"), "--total-timesteps", "768", *option],
                        capsys)
    assert code == 2 and all(value in line for value in both_values), line
    assert not (tmp_path / "x").exists()


def test_resume_with_other_observations_is_one_line_naming_both_shapes(tmp_path, capsys):
    """A checkpoint for another observation size (here: no run.json to restore from)."""
    run = tmp_path / "foreign"
    (run / "checkpoints").mkdir(parents=True)
    _foreign_model(obs_size=5, n_actions=3).save(run / "checkpoints" / "model_000000000100.zip")
    code, line = _fails(["--resume", str(run), "--total-timesteps", "768", *TINY], capsys)
    assert code == 1 and "(5,)" in line and f"({OBSERVATION_SIZE},)" in line, line
    assert sorted(p.name for p in run.iterdir()) == ["checkpoints"]


def _foreign_model(obs_size: int, n_actions: int):
    return tiny_maskable_ppo(obs_size, n_actions)


def _copy_run(run_dir, tmp_path) -> Path:
    copy = tmp_path / "copy"
    shutil.copytree(run_dir[0], copy)
    return copy


def test_broken_newest_checkpoint_falls_back_to_the_previous_one(run_dir, tmp_path, capsys):
    copy = _copy_run(run_dir, tmp_path)
    good = (copy / "checkpoints" / "model_000000000512.zip").read_bytes()
    (copy / "checkpoints" / "model_000000000600.zip").write_bytes(good[: len(good) // 2])  # truncated
    summary = train.train(["--resume", str(copy), "--total-timesteps", "768", "--no-progress"])
    err = capsys.readouterr().err
    assert "model_000000000600.zip is broken" in err and "falling back to model_000000000512.zip" in err
    assert summary["resumed_from"].endswith("model_000000000512.zip") and summary["timesteps"] == 768


def test_resume_without_a_good_checkpoint_is_one_line(run_dir, tmp_path, capsys):
    copy = _copy_run(run_dir, tmp_path)
    for path in (copy / "checkpoints").iterdir():
        path.write_bytes(path.read_bytes()[:300])
    code, line = _fails(["--resume", str(copy), "--total-timesteps", "1024"], capsys)
    assert code == 1 and "no checkpoint could be loaded" in line


# ----------------------------------------------------------------------------- run folders

def test_existing_run_folder_is_refused(run_dir, capsys):
    out, _ = run_dir
    before = sorted(p.name for p in out.rglob("*"))
    code, line = _fails(["--out", str(out), *TINY], capsys)
    assert code == 2 and str(out) in line and "--resume" in line and "--overwrite" in line
    assert sorted(p.name for p in out.rglob("*")) == before


def test_overwrite_empties_the_old_run_first(run_dir, tmp_path):
    copy = _copy_run(run_dir, tmp_path)
    train.train(["--out", str(copy), "--overwrite", "--total-timesteps", "256", "--eval-every", "0", *TINY])
    assert [p.name for p in (copy / "checkpoints").iterdir()] == ["model_000000000256.zip"]  # no old ones mixed in
    assert not (copy / "league").exists() and json.loads((copy / "summary.json").read_text())["timesteps"] == 256


def test_overwrite_refuses_a_folder_that_is_not_a_run(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("mine")
    code, line = _fails(["--out", str(tmp_path), "--overwrite", *TINY], capsys)
    assert code == 2 and "only train.py run folders" in line and (tmp_path / "notes.txt").exists()


def test_default_run_names_never_collide(tmp_path, monkeypatch):
    monkeypatch.setattr(run_folder, "default_folder_stem", lambda now=None: "20260101-000000")  # same second
    first = run_folder.create_run_folder(None, tmp_path)
    second = run_folder.create_run_folder(None, tmp_path)
    assert first != second and first.is_dir() and second.is_dir()
    assert [first.name, second.name] == ["20260101-000000", "20260101-000000-2"]


def test_same_seed_same_run(tmp_path):
    args = ["--total-timesteps", "256", "--eval-every", "0", *TINY]
    first = train.train([*args, "--out", str(tmp_path / "a")])
    second = train.train([*args, "--out", str(tmp_path / "b")])
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


def _fails(argv, capsys) -> tuple[int, str]:
    """(exit status, the one line on stderr) of a train.train(argv) that must fail."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as error:
        train.train(argv)
    err = capsys.readouterr().err
    code = error.value.code if isinstance(error.value.code, int) else 1
    if isinstance(error.value.code, str):  # sys.exit("train.py: error: ...") prints it at exit
        err += error.value.code + "\n"
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return code, lines[0]


@pytest.fixture(scope="module")
def bad_inputs(tmp_path_factory, run_dir):
    """Files for --resume that are not good checkpoints (kept apart from the working folder)."""
    folder = tmp_path_factory.mktemp("bad_inputs")
    (folder / "notes.txt").write_text("not a checkpoint")
    with zipfile.ZipFile(folder / "bad_data.zip", "w") as archive:
        archive.writestr("data", "{not json")
    good = (run_dir[0] / "checkpoints" / "model_000000000512.zip").read_bytes()
    (folder / "truncated.zip").write_bytes(good[: len(good) // 2])
    return folder


BAD_OPTIONS = [  # (arguments, the option the one line must name); {bad} is the bad_inputs folder
    (["--net-arch", "-5"], "--net-arch"), (["--net-arch", "0"], "--net-arch"), (["--net-arch", "64,0"], "--net-arch"),
    (["--net-arch", "a,b"], "--net-arch"), (["--learning-rate", "-1"], "--learning-rate"),
    (["--learning-rate", "nan"], "--learning-rate"), (["--reward-scale", "nan"], "--reward-scale"),
    (["--seed", str(2**70)], "--seed"), (["--seed", str(2**63 - 5)], "--seed"), (["--eval-seed", "-1"], "--eval-seed"),
    (["--device", "bogus"], "--device"), (["--out", "/proc/run"], "/proc/run"),
    (["--resume", "{bad}/notes.txt"], "--resume"), (["--resume", "{bad}/bad_data.zip"], "--resume"),
    (["--resume", "{bad}/truncated.zip"], "--resume"), (["--resume", "{bad}/missing"], "--resume"),
    (["--gamma", "5"], "--gamma"), (["--gae-lambda", "-0.1"], "--gae-lambda"), (["--clip-range", "-1"], "--clip-range"),
    (["--ent-coef", "-10"], "--ent-coef"), (["--vf-coef", "inf"], "--vf-coef"), (["--max-grad-norm", "0"], "--max-grad-norm"),
    (["--batch-size", "1"], "--batch-size"), (["--num-envs", "0"], "--num-envs"),
    (["--curriculum-end", "0"], "--curriculum-end"), (["--name", "../elsewhere"], "--name"),
    (["--option", "num_deals=40"], "num_deals"), (["--opponents", "random=-1"], "--opponents"),
    (["--opponents", "random=x"], "--opponents"), (["--opponents", "nobody"], "--opponents"),
    (["--opponents", "ppo:{bad}/bad_data.zip"], "ppo-unsafe-pickle"), (["--imitate", "nobody"], "--imitate"),
    (["--device", "cuda"], "--device"),
]


@pytest.mark.parametrize("argv, names", BAD_OPTIONS, ids=[" ".join(a) for a, _ in BAD_OPTIONS])
def test_bad_options_are_one_line_and_create_nothing(argv, names, bad_inputs, tmp_path, monkeypatch, capsys):
    import torch

    if argv == ["--device", "cuda"] and torch.cuda.is_available():
        pytest.skip("this machine has a CUDA GPU: --device cuda is fine here")
    monkeypatch.chdir(tmp_path)
    before = sorted(p.name for p in bad_inputs.iterdir())
    code, line = _fails([*TINY, "--total-timesteps", "256"] + [a.replace("{bad}", str(bad_inputs)) for a in argv],
                        capsys)
    assert code in (1, 2) and names in line, line
    assert line.startswith("sergeant-major train: error: ")
    assert not any(tmp_path.iterdir()), "a failed command left files behind"
    assert sorted(p.name for p in bad_inputs.iterdir()) == before


def test_help_and_usage_errors_work_without_the_train_extra(tmp_path):
    """As if torch and sb3-contrib were not installed: --help works, a run says which extra."""
    script = str(ROOT / "train.py")
    blocked = ("import runpy, sys; sys.modules.update(dict.fromkeys(['torch', 'sb3_contrib', 'stable_baselines3'])); "
               f"sys.argv[0] = {script!r}; sys.path.insert(0, {str(ROOT)!r}); "  # as `python train.py` has it
               f"runpy.run_path({script!r}, run_name='__main__')")

    def run(*argv):
        return subprocess.run([sys.executable, "-c", blocked, *argv], cwd=tmp_path, capture_output=True, text=True,
                              timeout=120)

    shown = run("--help")
    assert shown.returncode == 0 and "--total-timesteps" in shown.stdout and "--overwrite" in shown.stdout
    usage = run("--gamma", "5")
    assert usage.returncode == 2 and "--gamma" in usage.stderr
    refused = run("--total-timesteps", "256")
    assert refused.returncode == 1 and 'pip install -e ".[train]"' in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and not any(tmp_path.iterdir())


def test_pool_parsing_sums_the_weights_of_each_name():
    pool = parse_pool("random=1,greedy=1,heuristic=2,self=2,ppo:runs/x/model.zip=3,random=0.5")
    assert pool == {"random": 1.5, "greedy": 1, "heuristic": 2, "self": 2, "ppo:runs/x/model.zip": 3}
    assert parse_pool("heuristic, greedy") == {"heuristic": 1, "greedy": 1}  # a name alone has weight 1


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


# ----------------------------------------------------------------------------- interrupts

@pytest.mark.parametrize("stop, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_saves_the_run_and_resume_continues_it(tmp_path, stop, status):
    """A real subprocess and a real signal: the run finishes its step, saves a checkpoint, the
    model files and a summary saying it was interrupted, says how to resume, and exits 128+N."""
    out = tmp_path / "run"
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "train.py"), "--out", str(out), "--total-timesteps", "10000000",
         "--checkpoint-every", "0", "--eval-every", "0", *TINY, "--opponents", "random", "--imitate", "none"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline().startswith("training ")  # printed just before model.learn
        process.send_signal(stop)
        stdout, stderr = process.communicate(timeout=120)
    finally:
        process.kill()
    assert process.returncode == status, stderr
    assert "Traceback" not in stderr and f"sergeant-major train --resume {out}" in stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "interrupted" and summary["interrupted"]["signal"] == stop.name
    done = summary["timesteps"]
    assert (out / "checkpoints" / run_folder.checkpoint_name(done)).exists()
    assert (out / "model.zip").exists() and make_agent(f"ppo:{out}").metadata["training"]["timesteps"] == done
    resumed = train.train(["--resume", str(out), "--total-timesteps", str(done + 256), "--no-progress"])
    assert resumed["status"] == "complete" and resumed["timesteps"] == done + 256
    assert resumed["resumed_from"].endswith(run_folder.checkpoint_name(done))
