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

from conftest import default_stop_signals, needs, tiny_maskable_ppo

needs("sb3_contrib")

from sergeant_major_env import SergeantMajorVecEnv, engine  # noqa: E402
from sergeant_major_env.observation import OBSERVATION_SIZE  # noqa: E402
from sergeant_major_env.policies import RandomPolicy  # noqa: E402

from sergeant_major_env.agents import make_agent  # noqa: E402
from sergeant_major_env.agents.torch_setup import MKL_CBWR  # noqa: E402
from sergeant_major_env.training import run_folder  # noqa: E402
from sergeant_major_env.training.train_config import parse_pool  # noqa: E402

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
    assert code == 2 and "only sergeant-major train run folders" in line and (tmp_path / "notes.txt").exists()


def test_default_run_names_never_collide(tmp_path, monkeypatch):
    monkeypatch.setattr(run_folder, "default_folder_stem", lambda now=None: "20260101-000000")  # same second
    first = run_folder.create_run_folder(None, tmp_path)
    second = run_folder.create_run_folder(None, tmp_path)
    assert first != second and first.is_dir() and second.is_dir()
    assert [first.name, second.name] == ["20260101-000000", "20260101-000000-2"]


@pytest.mark.slow  # over 2.5 s warm: the full suite runs it, `-m "not slow"` leaves it out
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


@pytest.mark.parametrize("preset", [None, "COMPATIBLE"])
def test_the_command_sets_torchs_environment_before_torch_loads(preset):
    """MKL's products may take another path by memory alignment (runs of the same seed then
    end with other weights), and OpenMP's threads spin while they wait (4 times the CPU on a
    busy machine): the `sergeant-major` command sets `MKL_CBWR` and `OMP_WAIT_POLICY` before
    a subcommand imports torch, and leaves a value the user set."""
    env = {k: v for k, v in os.environ.items() if k not in ("MKL_CBWR", "OMP_WAIT_POLICY")}
    if preset:
        env["MKL_CBWR"] = env["OMP_WAIT_POLICY"] = preset
    code = ("import os, sys; from sergeant_major_env.cli import main; import sergeant_major_env.agents.torch_setup as t; "
            "t.torch_environment = (lambda f: lambda: (f(), print(os.environ['MKL_CBWR'], os.environ['OMP_WAIT_POLICY'], "
            "'torch' in sys.modules)))(t.torch_environment); main(['agents'])")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[0] == (f"{preset} {preset} False" if preset else f"{MKL_CBWR} PASSIVE False")


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
    (["--name", "x" * 300], "--name"), (["--name", "two\nlines"], "--name"), (["--name", "a b"], "--name"),
    (["--opponents", "human=1"], "human"), (["--opponents", "heuristic,human"], "human"),
    (["--imitate", "human"], "human"), (["--net-arch", "65536,65536"], "--net-arch"),
    (["--eval-opponents", "human"], "--eval-opponents"), (["--eval-opponents", "self"], "--eval-opponents"),
    (["--eval-opponents", "random,random"], "--eval-opponents"), (["--eval-opponents", "random,"], "--eval-opponents"),
    (["--eval-opponents", "nobody"], "--eval-opponents"), (["--init", "{bad}/missing"], "--init"),
    (["--init", "learned", "--net-arch", "64,64"], "--net-arch 128,128"),
    (["--init", "learned", "--activation", "tanh"], "--activation relu"),
]


@pytest.mark.parametrize("argv, names", BAD_OPTIONS,
                         ids=[" ".join(a)[:60].replace("\n", "\\n") for a, _ in BAD_OPTIONS])
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


@pytest.mark.slow  # over 2.5 s warm: the full suite runs it, `-m "not slow"` leaves it out
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
    assert refused.returncode == 1 and 'pip install "sergeant-major-env[train]"' in refused.stderr
    assert 'pip install -e ".[train]"' in refused.stderr  # in a checkout
    assert len(refused.stderr.strip().splitlines()) == 1 and not any(tmp_path.iterdir())


# ----------------------------------------------------------------------------- --resume of a crafted run.json

def _set(key, value):
    return lambda record: record["options"].__setitem__(key, value)


CRAFTED_RUNS = [  # (id, how run.json is changed, what the one line must name, what it must say is allowed)
    ("deep nesting", "[" * 100_000 + "]" * 100_000, "nested", "at most 32"),
    ("over 1 MB", " " * 1_000_001 + "{}", "larger than", "1,000,000 bytes"),
    ("not JSON", "{not json", "not valid JSON", "JSON"),
    ("options a list", lambda r: r.__setitem__("options", [1, 2]), "'options'", "JSON object"),
    ("num_envs 0", _set("num_envs", 0), "num_envs", "an integer from 1 to 1000000"),
    ("num_envs text", _set("num_envs", "abc"), "num_envs", "an integer from 1 to 1000000"),
    ("num_envs 10**12", _set("num_envs", 10**12), "num_envs", "an integer from 1 to 1000000"),
    ("num_envs as text", _set("num_envs", "8"), "num_envs", "an integer"),
    ("seed -1", _set("seed", -1), "seed", "an integer from 0 to 2**63 - 1"),
    ("seed text", _set("seed", "x"), "seed", "an integer from 0 to 2**63 - 1"),
    ("opponents a number", _set("opponents", 5), "opponents", "NAME=WEIGHT"),
    ("opponents human", _set("opponents", "human=1"), "opponents", "agent names"),
    ("opponents no weight", _set("opponents", "random=0"), "opponents", "positive weight"),
    ("imitate human", _set("imitate", "human"), "imitate", "not human"),
    ("rules a list", lambda r: r.__setitem__("rules", [1]), "'rules'", "num_deals"),
    ("rules num_deals 40", lambda r: r["rules"].__setitem__("num_deals", 40), "num_deals", "from 1 to 18"),
    ("rules unknown", lambda r: r["rules"].__setitem__("jokers", True), "jokers", "known options"),
    ("net_arch too wide", _set("net_arch", [10**6, 10**6]), "net_arch", "1 to 65536 units"),
    ("net_arch too many weights", _set("net_arch", [65536, 65536]), "net_arch", "at most 50,000,000"),
    ("net_arch text", _set("net_arch", "128,128"), "net_arch", "hidden layer sizes"),
    ("learning_rate NaN", _set("learning_rate", float("nan")), "learning_rate", "a number above 0 and at most 1"),
    ("gamma 5", _set("gamma", 5), "gamma", "a number from 0 to 1"),
    ("batch_size 0", _set("batch_size", 0), "batch_size", "an integer, 2 or more"),
    ("n_steps -1", _set("n_steps", -1), "n_steps", "an integer, 1 or more"),
    ("anneal_lr a number", _set("anneal_lr", 1), "anneal_lr", "true or false"),
    ("activation unknown", _set("activation", "gelu"), "activation", "one of relu, tanh"),
    ("option unknown", _set("bogus", 1), "bogus", "a run's options are"),
    ("imitation too big", lambda r: r["options"].update(imitate_round=10**9, imitate_steps=10**9), "imitate_round",
     "GiB"),
    ("observation version", lambda r: r["observation"].__setitem__("version", 1), "observation", "this package's"),
    ("format version", lambda r: r.__setitem__("format_version", 99), "format version", "version 1"),
    ("commands", lambda r: r.__setitem__("commands", "rm -rf"), "commands", "list of command lines"),
]


@pytest.mark.parametrize("change, names, allowed", [c[1:] for c in CRAFTED_RUNS], ids=[c[0] for c in CRAFTED_RUNS])
def test_resume_checks_a_crafted_run_json_as_the_command_line_before_writing(run_dir, tmp_path, monkeypatch, capsys,
                                                                            change, names, allowed):
    """A resumed run's options pass the command line's checks (issue 20 item 2): one line naming the
    option and what is allowed, exit status 2, run.json byte-identical, nothing new anywhere."""
    run = tmp_path / "crafted"
    (run / "checkpoints").mkdir(parents=True)
    shutil.copy(run_dir[0] / "checkpoints" / "model_000000000512.zip", run / "checkpoints")
    if isinstance(change, str):
        text = change
    else:
        record = json.loads((run_dir[0] / "run.json").read_text())
        change(record)
        text = json.dumps(record)
    (run / "run.json").write_text(text)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    monkeypatch.chdir(tmp_path)
    code, line = _fails(["--resume", str(run), "--total-timesteps", "768", "--no-progress"], capsys)
    assert code == 2 and line.startswith("sergeant-major train: error: --resume "), line
    assert names in line and allowed in line, line
    assert len(line) < 600
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


def test_the_learner_runs_on_update_threads_its_evaluations_on_one(tmp_path, monkeypatch):
    """The learner (the rollouts' forward passes and PPO's updates) gets --update-threads torch
    threads (2 by default), each evaluation and the end of training the one of use_torch_threads;
    torch's distributions skip their checks during the run only; a run that did not record the
    option (made before it existed) resumes with 1; OMP_NUM_THREADS leaves torch alone."""
    import torch
    from torch.distributions import Distribution

    from sergeant_major_env.agents import torch_setup
    from sergeant_major_env.cli.train_plan import OPTIONS_BEFORE_THEY_EXISTED
    from sergeant_major_env.training import callbacks
    from sergeant_major_env.training.train_config import TrainConfig

    assert TrainConfig().update_threads == 2
    assert TrainConfig.from_stored({}, {}, "run.json", before=OPTIONS_BEFORE_THEY_EXISTED).update_threads == 1
    seen = []
    checks = Distribution._validate_args
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    for hook in ("_on_rollout_start", "_on_rollout_end", "_on_training_end"):
        original = getattr(callbacks.TrainingCallback, hook)
        monkeypatch.setattr(callbacks.TrainingCallback, hook,
                            lambda self, original=original, hook=hook: (
                                original(self), seen.append((hook, torch.get_num_threads(), Distribution._validate_args))))
    play_tables = callbacks.play_learner_tables
    monkeypatch.setattr(callbacks, "play_learner_tables", lambda *args: (
        seen.append(("evaluate", torch.get_num_threads(), Distribution._validate_args)), play_tables(*args))[1])
    train.train([*TINY, "--total-timesteps", "256", "--update-threads", "3", "--out", str(tmp_path / "run")])
    assert ("_on_rollout_start", 3, False) in seen and ("_on_rollout_end", 3, False) in seen
    evaluations = [threads for hook, threads, _ in seen if hook == "evaluate"]
    assert len(evaluations) >= 2 and set(evaluations) == {1}, seen
    assert ("_on_training_end", 1, False) in seen and seen[-1][0] == "evaluate"  # the final one
    assert torch.get_num_threads() == 1
    assert Distribution._validate_args == checks  # torch's default again
    assert json.loads((tmp_path / "run" / "run.json").read_text())["options"]["update_threads"] == 3

    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    threads = torch_setup.UpdateThreads(4)
    threads.learning()
    assert torch.get_num_threads() == 1 and not threads.active


def test_a_run_json_option_given_again_with_its_own_value_is_accepted():
    """The command line and run.json give the same typed values (a list in JSON is the tuple the parser makes)."""
    from sergeant_major_env.training.train_config import TrainConfig

    stored = TrainConfig.from_stored({"net_arch": [64, 64], "gamma": 1, "activation": "tanh"}, {"num_deals": 2},
                                     "run.json")
    parsed = train.build_parser().parse_args(["--net-arch", "64,64", "--gamma", "1"])
    assert stored.net_arch == parsed.net_arch == (64, 64) and stored.gamma == parsed.gamma == 1.0
    assert stored.rules.num_deals == 2 and stored.option == ("num_deals=2", "exchanges=true", "must_overtake=false",
                                                             "must_overtrump=false", "dealer_builds_talon=false")


# ----------------------------------------------------------------------------- the config

def test_the_parser_is_built_from_the_config_every_option_with_its_default(tmp_path, monkeypatch, capsys):
    import dataclasses

    from sergeant_major_env.training import train_config

    monkeypatch.chdir(tmp_path)
    assert train.parse_args([]).config == train_config.TrainConfig()  # the parser's defaults are the config's
    with pytest.raises(SystemExit):
        train.parse_args(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    helps = train_config.field_help()
    for field in dataclasses.fields(train_config.TrainConfig):
        assert train_config.flag_of(field.name) in text and helps[field.name], field.name
        if field.metadata["kind"] in ("value", "list") and field.default not in (None, ()):
            shown = ",".join(map(str, field.default)) if isinstance(field.default, tuple) else str(field.default)
            assert f"default {shown}" in text, field.name
    assert len(dataclasses.fields(train_config.TrainConfig)) == 45
    with pytest.raises(dataclasses.FrozenInstanceError):
        train_config.TrainConfig().seed = 1


def test_a_run_beyond_this_machines_memory_is_refused_naming_the_option():
    from sergeant_major_env.training.train_config import ConfigError, TrainConfig, check_memory, memory_needed

    config = TrainConfig()
    check_memory(config, available=memory_needed(config))  # just fits
    with pytest.raises(ConfigError, match="--imitate-round: the run would hold about"):
        check_memory(config, available=memory_needed(config) - 1)


# ----------------------------------------------------------------------------- a full disk

def _disk_full_after(monkeypatch, good_saves: int) -> None:
    """Model saves after the first ``good_saves`` fail as torch's save does on a full disk (ENOSPC)."""
    import errno

    import torch

    calls = []
    real_save, real_model_save = torch.save, run_folder.save_sb3_model

    def save(*args, **kwargs):
        if len(calls) > good_saves:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_save(*args, **kwargs)

    def model_save(model, path):
        calls.append(path)
        return real_model_save(model, path)

    monkeypatch.setattr(torch, "save", save)
    monkeypatch.setattr(run_folder, "save_sb3_model", model_save)


def test_a_full_disk_before_the_first_checkpoint_is_one_line_and_leaves_nothing(tmp_path, monkeypatch, capsys):
    _disk_full_after(monkeypatch, good_saves=0)
    out = tmp_path / "run"
    code, line = _fails(["--out", str(out), "--total-timesteps", "256", "--eval-every", "0", "--checkpoint-every", "0",
                         *TINY, "--imitate", "none"], capsys)
    assert code == 1 and line == (f"sergeant-major train: error: cannot write {out}/checkpoints/"
                                  f"model_000000000256.zip: No space left on device; nothing of the run was kept"), line
    assert not any(tmp_path.iterdir())


def test_a_full_disk_after_a_checkpoint_keeps_the_run_resumable(tmp_path, monkeypatch, capsys):
    _disk_full_after(monkeypatch, good_saves=1)
    out = tmp_path / "run"
    code, line = _fails(["--out", str(out), "--total-timesteps", "512", "--eval-every", "0",
                         "--checkpoint-every", "256", *TINY, "--imitate", "none"], capsys)
    assert code == 1 and "No space left on device; the run is kept at its last checkpoint" in line, line
    assert line.endswith(f"sergeant-major train --resume {out}")
    assert [p.name for p in (out / "checkpoints").iterdir()] == ["model_000000000256.zip"]
    assert not list(out.rglob("*.tmp")) and not (out / "summary.json").exists()
    monkeypatch.undo()  # space again
    summary = train.train(["--resume", str(out), "--total-timesteps", "512", "--no-progress"])
    assert summary["status"] == "complete" and summary["timesteps"] == 512


# ----------------------------------------------------------------------------- what a run prints

def test_the_progress_bar_stops_at_its_total_and_the_last_line_says_how_to_evaluate(tmp_path, capsys):
    """300 timesteps in rollouts of 8 x 32 = 256 steps: PPO takes 512, the bar shows 300/300.
    Issue 50: to a file or a pipe (here pytest's capture) the progress was one long line of
    carriage returns whose status said "eval at 0" to the end; now it is short plain lines,
    their status the last evaluation and when the next comes."""
    from sergeant_major_env.progress import MAX_LINE

    out = tmp_path / "run"
    argv = [a for a in TINY if a != "--no-progress"]
    train.train(["--out", str(out), "--total-timesteps", "300", *argv, "--eval-every", "256", "--imitate", "none"])
    captured = capsys.readouterr()
    assert "300/300" in captured.err and "512/300" not in captured.err
    assert captured.out.splitlines()[-1] == (f"evaluate it: sergeant-major evaluate --agents ppo:{out},heuristic,"
                                             f"heuristic --games 12 --seed 1000000")
    lines = captured.err.splitlines()
    assert "\r" not in captured.err and max(map(len, lines)) <= MAX_LINE
    bar = [line for line in lines if line.startswith("train: ")]
    assert 2 <= len(bar) <= 11 and "; last eval at 0: vs random: " in bar[0] and bar[0].endswith("; next at 256")
    assert "; last eval at 256: vs random: " in bar[-1] and bar[-1].endswith("; next at the end")
    assert "eval at 256: vs random: " in captured.out


def test_progress_to_a_file_or_a_pipe_is_short_plain_lines():
    """Issue 50: where the stream is no terminal, a bar is none (evaluate, distill, records) or,
    with lines=True (train and its imitation), a line at each tenth of the work: no carriage
    return, no line longer than MAX_LINE however long its status."""
    import io

    from sergeant_major_env.progress import MAX_LINE, LineProgress, progress_bar

    stream = io.StringIO()
    assert progress_bar(1000, "deal", "games", file=stream) is None
    bar = progress_bar(200_000, "step", "train", lines=True, initial=512, unit_scale=True, file=stream)
    assert isinstance(bar, LineProgress)
    bar.set_postfix_str("last eval at 0: " + "vs heuristic: -2.3 [-4.2, -0.4] " * 20)
    while bar.n < bar.total:
        bar.update(min(512, bar.total - bar.n))
    bar.close()
    lines = stream.getvalue().splitlines()
    assert "\r" not in stream.getvalue() and len(lines) == 10 and max(map(len, lines)) <= MAX_LINE
    assert lines[0].startswith("train: 20,480/200,000 steps (10%) in ") and lines[-1].startswith(
        "train: 200,000/200,000 steps (100%)")


def test_pool_parsing_gives_each_name_its_weight():
    pool = parse_pool("random=1,greedy=1,heuristic=2,self=2,ppo:runs/x/model.zip=3")
    assert pool == {"random": 1, "greedy": 1, "heuristic": 2, "self": 2, "ppo:runs/x/model.zip": 3}
    assert parse_pool("heuristic, greedy") == {"heuristic": 1, "greedy": 1}  # a name alone has weight 1
    assert parse_pool("self=1") == parse_pool("self") == {"self": 1}  # pure self-play: the weight is its share


@pytest.mark.parametrize("text, problem", [
    ("heuristic=1,heuristic=2", "heuristic is given twice in 'heuristic=1,heuristic=2'"),
    ("self,random,self=3", "self is given twice"),
    ("random=0,heuristic=1", "'random=0' needs a finite, positive weight (at 0 it would never play)"),
    ("heuristic=inf", "'heuristic=inf' needs a finite, positive weight;"),
    ("heuristic,,random", "an opponent without a name in 'heuristic,,random'"),
    ("heuristic,", "an opponent without a name"),
    ("=2", "an opponent without a name"),
    ("pimc:rollout=learned", "an agent with options takes its weight after them: pimc:rollout=learned=1"),
])
def test_opponents_refuses_a_pool_whose_meaning_is_unclear_in_one_line(text, problem, tmp_path, monkeypatch, capsys):
    """Issue 50: a name given twice had its weights summed silently, a member at weight 0 (which
    never plays) and an empty member were accepted. Each is one line naming the problem and
    what --opponents takes (an agent with options: its weight after them); a lone opponent's
    weight is documented as its share (all games)."""
    from sergeant_major_env.training.train_config import POOL_FORM

    monkeypatch.chdir(tmp_path)
    code, line = _fails([*TINY, "--total-timesteps", "256", "--opponents", text], capsys)
    assert code == 2 and line.startswith("sergeant-major train: error: argument --opponents: ") and problem in line
    assert line.endswith("; give " + POOL_FORM) and not any(tmp_path.iterdir()), line
    shown = " ".join(train.build_parser().format_help().split())
    assert "one name alone plays every game (self alone: pure self-play" in shown


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

@pytest.mark.slow
@pytest.mark.parametrize("stop, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_saves_the_run_and_resume_continues_it(tmp_path, stop, status):
    """A real subprocess and a real signal: the run finishes its step, saves a checkpoint, the
    model files and a summary saying it was interrupted, says how to resume, and exits 128+N."""
    out = tmp_path / "run"
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "train.py"), "--out", str(out), "--total-timesteps", "10000000",
         "--checkpoint-every", "0", "--eval-every", "0", *TINY, "--opponents", "random", "--imitate", "none"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_stop_signals)
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
