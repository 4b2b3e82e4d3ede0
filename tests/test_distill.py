"""Distilling the search into the policy (sergeant_major_env.training.distill, `sergeant-major
distill`): labels that depend on nothing but their options, shards never half written, resumed
runs equal to whole ones, labels made from what the deciding seat knows, and the fit."""

from __future__ import annotations

import dataclasses
import errno
import importlib.metadata
import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from conftest import needs

needs("torch")

from sergeant_major_env import engine  # noqa: E402
from sergeant_major_env.agents import make_agent  # noqa: E402
from sergeant_major_env.agents.pimc import choices  # noqa: E402
from sergeant_major_env.cards import count  # noqa: E402
from sergeant_major_env.rules import Rules  # noqa: E402
from sergeant_major_env.training import distill  # noqa: E402
from sergeant_major_env.worlds import sample_worlds  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FAST_TEACHER = "pimc:worlds=2:rollout=greedy:others=greedy"
TINY = distill.LabelPlan(teacher=FAST_TEACHER, player="heuristic", games=4, shard_games=2, seed=7,
                         rules=Rules(num_deals=1))


def shards(folder: Path) -> dict[str, dict[str, np.ndarray]]:
    return {path.name: distill.read_shard(path) for path in sorted(folder.glob("shard_*.npz"))}


def assert_same_labels(a: Path, b: Path) -> None:
    left, right = shards(a), shards(b)
    assert list(left) == list(right) and left
    for name in left:
        for array in distill.ARRAYS:
            np.testing.assert_array_equal(left[name][array], right[name][array], err_msg=f"{name}: {array}")


@pytest.fixture(scope="module")
def tiny_labels(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("labels") / "tiny"
    distill.make_labels(folder, TINY, workers=1)
    return folder


def test_a_shard_holds_a_label_for_each_decision_with_a_real_choice(tiny_labels):
    labels = distill.load_labels([tiny_labels])
    n = labels["action"].size
    assert n > 0 and labels["observation"].shape == (n, distill.OBSERVATION_SIZE)
    rows = np.arange(n)
    assert labels["legal"][rows, labels["action"]].all()  # the teacher's choice is legal
    assert np.isnan(labels["values"][~labels["legal"]]).all() and np.isfinite(labels["values"][labels["legal"]]).all()
    assert (labels["legal"].sum(axis=1) >= 2).all()
    np.testing.assert_array_equal(labels["value"], labels["values"][rows, labels["action"]])
    assert set(np.unique(labels["game"])) == set(range(TINY.games)) and set(np.unique(labels["seat"])) <= {0, 1, 2}


def test_labels_do_not_depend_on_the_number_of_workers(tiny_labels, tmp_path):
    distill.make_labels(tmp_path / "two", TINY, workers=2)
    assert_same_labels(tiny_labels, tmp_path / "two")


def test_a_resumed_run_gives_the_labels_of_an_uninterrupted_one(tiny_labels, tmp_path, monkeypatch):
    """Ctrl-C after the first shard keeps it; the same command makes the rest, the same labels.
    A temporary file a killed run left is removed; a user's file that looks like one is kept."""
    folder = tmp_path / "resumed"
    make_one = distill.shard_labels

    def interrupted(plan, shard, *args, **kwargs):
        if shard == 1:
            raise KeyboardInterrupt
        return make_one(plan, shard, *args, **kwargs)

    monkeypatch.setattr(distill, "shard_labels", interrupted)
    with pytest.raises(KeyboardInterrupt):
        distill.make_labels(folder, TINY, workers=1)
    assert [path.name for path in sorted(folder.iterdir())] == ["labels.json", "shard_00000.npz"]
    (folder / ".shard_00001.npz.x1y2_3z4.tmp").write_bytes(b"half a shard")  # as files.atomic_write names it
    (folder / ".labels.json.abcdefgh.tmp").write_bytes(b"half a manifest")
    users = ["notes.tmp.txt", "a.tmp", ".shard_00001.npz.mine.tmp", ".plot.png.abcdefgh.tmp"]
    for name in users:
        (folder / name).write_text("the user's")
    monkeypatch.setattr(distill, "shard_labels", make_one)
    assert distill.make_labels(folder, TINY, workers=1)["shards"] == 1
    assert_same_labels(tiny_labels, folder)
    assert sorted(path.name for path in folder.iterdir() if not path.name.startswith(("shard_", "labels."))) == \
        sorted(users) and all((folder / name).read_text() == "the user's" for name in users)


def test_a_manifest_may_give_an_integer_where_a_number_is_allowed(tmp_path):
    """Issue 50: a labels manifest with "epsilon": 1 was refused; JSON's integers are numbers
    (read as floats), its true is not."""
    def write(epsilon):
        data = {"format": distill.FORMAT, "format_version": distill.FORMAT_VERSION,
                "observation_version": distill.OBSERVATION_VERSION, "plan": {**TINY.to_dict(), "epsilon": epsilon}}
        (tmp_path / distill.MANIFEST).write_text(json.dumps(data))

    write(1)
    plan = distill.read_manifest(tmp_path)
    assert plan == dataclasses.replace(TINY, epsilon=1.0) and type(plan.epsilon) is float
    assert distill.LabelPlan(epsilon=0, games=np.int64(4)).check().to_dict()["games"] == 4
    write(True)
    with pytest.raises(ValueError, match="epsilon must be a number in .0, 1., got True$"):
        distill.read_manifest(tmp_path)


def test_more_games_add_shards_to_the_same_labels(tiny_labels, tmp_path):
    folder = tmp_path / "grown"
    distill.make_labels(folder, TINY.__class__(**{**TINY.__dict__, "games": 2}), workers=1)
    assert distill.make_labels(folder, TINY, workers=1)["shards"] == 1
    assert_same_labels(tiny_labels, folder)
    assert distill.read_manifest(folder) == TINY


def test_no_shard_is_ever_half_written(tmp_path, monkeypatch):
    """A full disk while a shard is written: no shard file, no temporary file."""
    real_replace = os.replace

    def full_disk(source, target, *args, **kwargs):
        if str(target).endswith(".npz"):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_replace(source, target, *args, **kwargs)

    monkeypatch.setattr(os, "replace", full_disk)
    folder = tmp_path / "full"
    with pytest.raises(OSError):
        distill.make_labels(folder, TINY, workers=1)
    assert [path.name for path in folder.iterdir()] == ["labels.json"]


def test_a_folder_of_other_options_is_refused_and_left_as_it_was(tiny_labels):
    before = {path.name: path.read_bytes() for path in tiny_labels.iterdir()}
    other = TINY.__class__(**{**TINY.__dict__, "teacher": "pimc:worlds=3:rollout=greedy:others=greedy"})
    with pytest.raises(ValueError, match=r"other options \(teacher: 'pimc:worlds=2"):
        distill.open_labels(tiny_labels, other)
    assert {path.name: path.read_bytes() for path in tiny_labels.iterdir()} == before


def test_labels_come_from_what_the_deciding_seat_knows():
    """Two deals the seat cannot tell apart (the other hands and the talon redrawn consistently
    with its knowledge, as the search's own worlds are): the same labels, bit for bit."""
    teacher = make_agent(FAST_TEACHER)
    state = engine.init(engine.game_seeds(3, 6), Rules(num_deals=1))
    rng = np.random.default_rng(0)
    checked = hidden_differs = 0
    while (live := np.flatnonzero(state.phase != engine.OVER)).size:
        real = choices(state, live, engine.legal_bits(state, live))
        asked = live[count(real) > 1]
        if asked.size:
            other = sample_worlds(state, asked, 1, rng)
            hidden_differs += int((other.hands != state.hands[asked]).any(axis=1).sum())
            mine = distill._label(state, asked, engine.legal_bits(state, asked), choices(state, asked), teacher)
            same = np.arange(asked.size)
            theirs = distill._label(other, same, engine.legal_bits(other, same), choices(other, same), teacher)
            for name in ("observation", "legal", "values", "action", "value", "seat"):
                np.testing.assert_array_equal(mine[name], theirs[name], err_msg=name)
            checked += asked.size
        engine.step(state, _random_legal(state, rng))
    assert checked > 100 and hidden_differs > checked // 2


def _random_legal(state: engine.State, rng: np.random.Generator) -> np.ndarray:
    from sergeant_major_env.cards import random_member

    return random_member(engine.legal_bits(state), rng)


def test_an_equivalent_card_gets_its_representatives_value():
    """R16: with 7S played, the legal 6S and 8S are equivalent; only 6S is searched."""
    values = np.full((1, 58), -np.inf)
    legal = np.zeros((1, 58), dtype=bool)
    six, seven, eight, queen = 4, 5, 6, 10  # spades: 2S is card 0
    legal[0, [six, eight, queen]] = True
    values[0, six], values[0, queen] = -1.5, 2.0
    filled = distill.equivalent_card_values(values, legal)
    assert filled[0, eight] == -1.5 and filled[0, queen] == 2.0 and filled[0, six] == -1.5
    assert np.isneginf(filled[0, seven])  # not legal: left alone


def test_the_fit_moves_the_policy_towards_the_teacher(tiny_labels):
    from sergeant_major_env.agents.learned import LEARNED_FOLDER
    from sergeant_major_env.agents.policy_file import load_policy

    network, _ = load_policy(LEARNED_FOLDER)
    labels = distill.load_labels([tiny_labels])
    options = distill.FitOptions(epochs=30, batch_size=32, learning_rate=1e-3, temperature=0.0, margin=0.0,
                                 holdout=0.5)
    history = distill.fit_policy(network, labels, options)
    assert [row["epoch"] for row in history] == list(range(31))
    assert history[-1]["train_loss"] < history[1]["train_loss"]
    assert 0.0 <= history[-1]["holdout_agreement"] <= 1.0


def test_target_distribution_is_a_softmax_of_the_values_over_the_legal_actions():
    values = np.array([[np.nan, 1.0, 3.0, np.nan]])
    legal = np.array([[False, True, True, False]])
    target = distill.target_distribution(values, legal, np.array([2]), temperature=2.0)
    np.testing.assert_allclose(target, [[0, 1 / (1 + np.e), np.e / (1 + np.e), 0]], rtol=1e-6)
    np.testing.assert_array_equal(distill.target_distribution(values, legal, np.array([2]), 0.0), [[0, 0, 1, 0]])


@pytest.mark.slow
def test_fit_command_writes_a_policy_that_plays_and_a_record_of_the_fit(tiny_labels, tmp_path):
    out = tmp_path / "distilled"
    done = subprocess.run([sys.executable, "-m", "sergeant_major_env", "distill", "fit", "--labels", str(tiny_labels),
                           "--out", str(out), "--epochs", "2"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"evaluate it: sergeant-major evaluate --agents ppo:{out},pimc,pimc" in done.stdout
    fit = json.loads((out / "fit.json").read_text())
    assert fit["label_count"] == distill.load_labels([tiny_labels])["action"].size
    assert fit["teachers"] == [FAST_TEACHER] and len(fit["history"]) == 3
    agent = make_agent(f"ppo:{out}")
    assert agent.rules == Rules(num_deals=1)
    refused = subprocess.run([sys.executable, "-m", "sergeant_major_env", "distill", "fit", "--labels",
                              str(tiny_labels), "--out", str(out)], cwd=ROOT, capture_output=True, text=True,
                             timeout=300)
    assert refused.returncode == 2 and "--overwrite" in refused.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize("arguments, message", [
    (["--games", "0"], "argument --games: must be an integer, 1 or more, got '0'"),
    (["--teacher", "heuristic"], "the teacher must be a pimc search bot"),
    (["--player", "human"], "the player cannot be human"),
    (["--epsilon", "2"], "epsilon must be a number in [0, 1]"),
    (["--workers", "0"], "argument --workers: must be an integer from 1 to 256, got '0'"),
    (["--option", "num_deals=99"], "num_deals"),
])
@pytest.mark.slow
def test_labels_command_refuses_bad_options_in_one_line_before_any_folder(tmp_path, arguments, message):
    out = tmp_path / "labels"
    done = subprocess.run([sys.executable, "-m", "sergeant_major_env", "distill", "labels", "--out", str(out),
                           *arguments], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert message in done.stderr.strip().splitlines()[-1]
    assert not out.exists()


def test_a_margin_keeps_the_policys_own_choice_unless_the_teacher_is_clearly_better(tiny_labels):
    """--margin m: the target is the teacher's choice only where its value beats the value of the
    policy's own choice by more than m points; elsewhere the policy's own choice."""
    import torch

    from sergeant_major_env.agents.learned import LEARNED_FOLDER
    from sergeant_major_env.agents.policy_file import load_policy

    network, _ = load_policy(LEARNED_FOLDER)
    labels = distill.load_labels([tiny_labels])
    with torch.no_grad():
        logits = network.action_logits(torch.from_numpy(labels["observation"]))
        own = logits.masked_fill(~torch.from_numpy(labels["legal"]), -1e8).argmax(dim=1).numpy()
    rows = np.arange(own.size)
    gap = np.nanmax(labels["values"], axis=1) - labels["values"][rows, own]
    for margin in (0.5, 2.0):
        chosen = distill.kept_or_corrected(network, labels, margin)
        np.testing.assert_array_equal(chosen[gap > margin], labels["action"][gap > margin])
        np.testing.assert_array_equal(chosen[gap <= margin], own[gap <= margin])
    assert (gap > 0.5).any() and (gap <= 0.5).any()


def labels_stopped_by_sigterm(out: Path, *extra: str) -> tuple[int, str]:
    """(exit status, stderr) of a 400-shard `distill labels` into ``out`` (with ``extra`` flags)
    sent SIGTERM once its first shard is written."""
    import signal
    import time

    process = subprocess.Popen([sys.executable, "-m", "sergeant_major_env", "distill", "labels", "--out", str(out),
                                "--teacher", FAST_TEACHER, "--player", "heuristic", "--games", "400",
                                "--shard-games", "1", "--option", "num_deals=1", "--no-progress", *extra],
                               cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not list(out.glob("shard_*.npz")) and time.monotonic() < deadline:
        time.sleep(0.2)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=120)
    return process.returncode, stderr


@pytest.mark.slow  # over 2.5 s warm: the full suite runs it, `-m "not slow"` leaves it out
def test_sigterm_keeps_the_finished_shards_and_leaves_no_temporary_file(tmp_path):
    """A closed terminal or `kill` stops the labels like Ctrl-C: one line, 143, shards kept."""
    out = tmp_path / "labels"
    status, stderr = labels_stopped_by_sigterm(out, "--workers", "2")
    assert status == 143, stderr
    assert stderr.strip().splitlines()[-1].startswith("sergeant-major distill: interrupted (SIGTERM)")
    assert "Traceback" not in stderr and not list(out.glob("*.tmp"))
    for path in out.glob("shard_*.npz"):
        distill.read_shard(path)  # every shard left is whole


@pytest.mark.slow
def test_a_fit_records_the_labels_command_that_makes_its_labels_again(tiny_labels, tmp_path):
    out = tmp_path / "fitted"
    done = subprocess.run([sys.executable, "-m", "sergeant_major_env", "distill", "fit", "--labels", str(tiny_labels),
                           "--out", str(out), "--epochs", "1"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    fit = json.loads((out / "fit.json").read_text())
    assert fit["label_commands"] == [TINY.command(tiny_labels)]
    assert TINY.command("x") == ("sergeant-major distill labels --out x --games 4 --seed 7 --teacher "
                                 f"{FAST_TEACHER} --player heuristic --shard-games 2 --option num_deals=1")
    metadata = json.loads((out / "policy.json").read_text())
    training = metadata["training"]
    assert training["distilled"]["label_commands"] == fit["label_commands"]
    assert training["labels_made_by"] == fit["label_commands"]  # beside the command that names the folders
    # The packages of this fit, not of the policy it started from; that policy's own record beside.
    assert metadata["packages"]["sergeant-major-env"] == importlib.metadata.version("sergeant-major-env")
    assert metadata["packages"]["numpy"] == importlib.metadata.version("numpy")
    from sergeant_major_env.agents.learned import load_learned
    start = load_learned().policy_metadata["training"]  # --init learned: its record, then its own start's
    assert training["distilled"]["lineage"][0] == {**start, "distilled": {
        key: value for key, value in start["distilled"].items() if key != "lineage"}}
    assert training["distilled"]["lineage"][1:] == start["distilled"].get("lineage", [])


@pytest.mark.slow
def test_the_curve_measures_each_label_count_once_and_continues_where_it_stopped(tiny_labels, tmp_path):
    total = distill.load_labels([tiny_labels])["action"].size
    out = tmp_path / "curve"
    command = [sys.executable, "-m", "sergeant_major_env", "distill", "curve", "--labels", str(tiny_labels),
               "--out", str(out), "--games", "6", "--against", "greedy", "--workers", "1", "--epochs", "1",
               "--no-progress"]
    first = subprocess.run(command + ["--counts", f"0,{total // 2}"], cwd=ROOT, capture_output=True, text=True,
                           timeout=600)
    assert first.returncode == 0, first.stderr[-2000:]
    curve = json.loads((out / distill.CURVE_FILE).read_text())
    assert [point["labels"] for point in curve["points"]] == [0, total // 2]
    for point in curve["points"]:
        assert set(point) >= {"head_to_head", "vs_heuristic"} and point["head_to_head"]["games"] == 6
        assert set(point["head_to_head"]) >= {"margin", "margin_ci95", "ahead"}
        assert point["head_to_head"]["command"].startswith(f"sergeant-major evaluate --agents ppo:{out}/labels_")
        make_agent(f"ppo:{distill.point_folder(out, point['labels'])}")  # each fit is a policy that plays
    assert curve["points"][0]["holdout_agreement"] is None and curve["points"][1]["holdout_agreement"] >= 0
    # Asking for one more count measures only that one; the others are read back unchanged.
    more = subprocess.run(command + ["--counts", f"0,{total // 2},{total}"], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert more.returncode == 0, more.stderr[-2000:]
    assert "1 of 3 points to measure" in more.stderr
    again = json.loads((out / distill.CURVE_FILE).read_text())["points"]
    assert again[:2] == curve["points"] and again[2]["labels"] == total
    if (out / distill.CURVE_PLOT).exists():  # the plot needs matplotlib (the train extra)
        assert (out / distill.CURVE_PLOT).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # Other options on the same folder: refused in one line, the curve left as it was.
    other = subprocess.run(command[:-1] + ["--margin", "0", "--counts", "0"], cwd=ROOT, capture_output=True,
                           text=True, timeout=300)
    assert other.returncode == 2 and "other options (fit)" in other.stderr.strip().splitlines()[-1]
    assert json.loads((out / distill.CURVE_FILE).read_text())["points"] == again
    # More labels than there are: refused before any fit.
    too_many = subprocess.run(command + ["--counts", f"{total + 1}"], cwd=ROOT, capture_output=True, text=True,
                              timeout=300)
    assert too_many.returncode == 2 and "fewer than the" in too_many.stderr.strip().splitlines()[-1]


# ============================================================================ outputs never replaced unasked

def refused(argv: list[str], capsys) -> str:
    """The one error line of a ``sergeant-major distill`` command refused as a usage error
    (exit 2, no traceback, one ``error:`` line, after argparse's usage)."""
    from sergeant_major_env.cli.distill import main

    with pytest.raises(SystemExit) as stopped:
        main(argv)
    stderr = capsys.readouterr().err
    assert stopped.value.code == 2, stderr
    assert "Traceback" not in stderr and sum("error:" in line for line in stderr.splitlines()) == 1, stderr
    return stderr.strip().splitlines()[-1]


def fit_argv(labels, out, *more) -> list[str]:
    return ["fit", "--labels", *map(str, labels if isinstance(labels, list) else [labels]), "--out", str(out),
            "--epochs", "1", *more]


@pytest.mark.parametrize("name", ["policy.json", "fit.json", "policy.safetensors"])
def test_fit_never_replaces_an_output_file_without_overwrite(tiny_labels, tmp_path, capsys, name):
    out = tmp_path / "out"
    out.mkdir()
    (out / name).write_text("the user's")
    line = refused(fit_argv(tiny_labels, out), capsys)
    assert f"--out file '{out / name}' exists; add --overwrite to replace it" in line
    assert [path.name for path in out.iterdir()] == [name] and (out / name).read_text() == "the user's"


@pytest.mark.parametrize("where, message", [
    ("a-file", "is a file; give a folder"),
    ("missing/out", "folder '{tmp}/missing' does not exist"),
    ("/proc/distilled", "cannot be written"),
    ("out", "--out file '{tmp}/out/fit.json' is a folder"),
], ids=["file", "no-parent", "unwritable", "output-a-folder"])
def test_fit_refuses_an_unusable_out_before_reading_labels(tmp_path, capsys, where, message):
    (tmp_path / "a-file").write_text("x")
    (tmp_path / "out" / "fit.json").mkdir(parents=True)
    out = Path(where) if where.startswith("/") else tmp_path / where
    bad_labels = tmp_path / "not-labels"  # read only after --out is checked
    assert message.format(tmp=tmp_path) in refused(fit_argv(bad_labels, out), capsys)


def test_a_small_fit_prints_finite_losses_from_epoch_0(tiny_labels, tmp_path, capsys):
    from sergeant_major_env.cli.distill import main

    assert main(fit_argv(tiny_labels, tmp_path / "out")) == 0
    epochs = [line for line in capsys.readouterr().err.splitlines() if line.startswith("epoch ")]
    assert [line.split(":")[0] for line in epochs] == ["epoch 0", "epoch 1"]
    assert all("nan" not in line for line in epochs), epochs
    history = json.loads((tmp_path / "out" / "fit.json").read_text())["history"]
    assert all(np.isfinite(row["train_loss"]) for row in history)


def test_the_curve_never_replaces_a_file_it_did_not_write(tiny_labels, tmp_path, capsys):
    out = tmp_path / "curve"
    curve = ["curve", "--labels", str(tiny_labels), "--out", str(out), "--counts", "0,5", "--games", "6",
             "--epochs", "1", "--no-progress"]
    out.mkdir()
    (out / "curve.png").write_text("the user's")
    assert "'curve.png' exists; add --overwrite" in refused(curve, capsys).replace(str(out) + "/", "")
    (out / "curve.png").unlink()
    (out / "labels_5").mkdir()
    (out / "labels_5" / "policy.json").write_text("the user's")
    assert "labels_5/policy.json' exists; add --overwrite" in refused(curve, capsys)
    assert (out / "labels_5" / "policy.json").read_text() == "the user's" and not (out / "curve.json").exists()


def test_the_curve_replaces_its_own_point_that_was_stopped_before_it_was_measured(tiny_labels, tmp_path):
    """A point fitted and written, then Ctrl-C while it was measured: the same command continues."""
    plan = distill.CurvePlan(labels=(str(tiny_labels),), counts=(5,), games=6, fit=distill.FitOptions(epochs=1))
    out = tmp_path / "curve"
    folder = distill.point_folder(out, 5)
    folder.mkdir(parents=True)
    (folder / "policy.json").write_text(json.dumps({"training": {"command": plan.fit_command(folder, 5)}}))
    distill.check_curve_out(out, plan, [], overwrite=False)
    (folder / "policy.json").write_text(json.dumps({"training": {"command": "another"}}))
    with pytest.raises(ValueError, match="exists; add --overwrite"):
        distill.check_curve_out(out, plan, [], overwrite=False)


# ============================================================================ crafted labels folders

def crafted(tiny_labels: Path, tmp_path: Path, shard: int = 0, **arrays) -> Path:
    """A copy of the tiny labels whose shard ``shard`` has ``arrays`` changed (a callable: of the old array)."""
    import shutil

    folder = tmp_path / "crafted"
    shutil.copytree(tiny_labels, folder)
    path = distill.shard_path(folder, shard)
    labels = distill.read_shard(path)
    for name, change in arrays.items():
        labels[name] = change(labels[name].copy())
    np.savez(path, **labels)
    return folder


def at(row: int, column: int | None, value):
    """A change setting one entry (``column`` None: the row's) to ``value``."""
    def change(array):
        array[row if column is None else (row, column)] = value
        return array
    return change


def npy(array: np.ndarray, shape: tuple[int, ...] | None = None) -> bytes:
    """An .npy file of ``array``, its header claiming ``shape`` (default: its own)."""
    buffer = io.BytesIO()
    header = np.lib.format.header_data_from_array_1_0(array)
    np.lib.format.write_array_header_1_0(buffer, {**header, "shape": shape or array.shape})
    buffer.write(array.tobytes())
    return buffer.getvalue()


def huge_header(tiny_labels: Path, tmp_path: Path) -> Path:
    folder = crafted(tiny_labels, tmp_path)
    path = distill.shard_path(folder, 0)
    labels = distill.read_shard(path)
    with zipfile.ZipFile(path, "w") as archive:
        for name, array in labels.items():
            archive.writestr(f"{name}.npy", npy(array, (10**12,) + array.shape[1:] if name == "observation" else None))
    return folder


def broken_zip(tiny_labels: Path, tmp_path: Path, keep: float) -> Path:
    folder = crafted(tiny_labels, tmp_path)
    path = distill.shard_path(folder, 0)
    data = bytearray(path.read_bytes())
    if keep < 1:
        data = data[:int(len(data) * keep)]
    else:
        data[len(data) // 2:len(data) // 2 + 64] = bytes(64)  # damaged in the middle: a bad CRC
    path.write_bytes(bytes(data))
    return folder


def manifest(tiny_labels: Path, tmp_path: Path, write) -> Path:
    folder = crafted(tiny_labels, tmp_path)
    (folder / distill.MANIFEST).unlink()
    write(folder / distill.MANIFEST)
    return folder


def games_true(path: Path) -> None:
    data = {"format": distill.FORMAT, "format_version": distill.FORMAT_VERSION,
            "observation_version": distill.OBSERVATION_VERSION, "plan": {**TINY.to_dict(), "games": True}}
    path.write_text(json.dumps(data))


def planned(**changes):
    """A manifest writer: TINY's plan with ``changes`` (the tiny labels' two shards stay)."""
    def write(path: Path) -> None:
        data = {"format": distill.FORMAT, "format_version": distill.FORMAT_VERSION,
                "observation_version": distill.OBSERVATION_VERSION, "plan": {**TINY.to_dict(), **changes}}
        path.write_text(json.dumps(data))
    return write


def dangling(tiny_labels: Path, tmp_path: Path) -> Path:
    folder = crafted(tiny_labels, tmp_path)
    distill.shard_path(folder, 1).unlink()
    distill.shard_path(folder, 1).symlink_to(tmp_path / "gone.npz")
    return folder


SHARD = "shard_00000.npz'"
CRAFTED = {
    "truncated": (lambda t, p: broken_zip(t, p, 0.5), f"{SHARD} is not a whole labels shard: File is not a zip file"),
    "corrupt": (lambda t, p: broken_zip(t, p, 1.0), f"{SHARD} is not a whole labels shard: Bad CRC-32"),
    "0-d": (lambda t, p: crafted(t, p, action=lambda a: np.int16(3)), "array 'action' has shape (); a shard's "
                                                                       "action has shape (N,)"),
    "action-999": (lambda t, p: crafted(t, p, action=at(3, None, 999)),
                   f"{SHARD}: row 3 of action is 999 (1 such row); a label's action is one of its legal actions"),
    "action--1": (lambda t, p: crafted(t, p, action=at(0, None, -1)), ": row 0 of action is -1"),
    "illegal-action": (lambda t, p: crafted(t, p, action=lambda a: np.where(np.arange(a.size) == 2, 57, a)
                                            .astype(np.int16)), ": row 2 of action is 57"),
    "10^12-rows": (huge_header, "array 'observation' holds"),
    "other-dtype": (lambda t, p: crafted(t, p, seat=lambda a: a.astype(np.float64)),
                    "array 'seat' has dtype float64; a label's seat is int8"),
    "nan-value": (lambda t, p: crafted(t, p, values=lambda v: np.where(np.isfinite(v), np.nan, v).astype(np.float32)),
                  ": row 0 of values is not finite at a legal action"),
    "inf-observation": (lambda t, p: crafted(t, p, observation=at(4, 0, np.inf)), ": row 4 of observation holds NaN"),
    "nan-value-of-position": (lambda t, p: crafted(t, p, value=at(1, None, np.nan)), ": row 1 of value is nan"),
    "no-legal-action": (lambda t, p: crafted(t, p, legal=at(5, None, False)), ": row 5 of legal has no legal action"),
    "zero-rows": (lambda t, p: crafted(t, p, **{name: (lambda a: a[:0]) for name in distill.ARRAYS}),
                  f"{SHARD} holds no labels (0 rows)"),
    "rows-differ": (lambda t, p: crafted(t, p, seat=lambda a: a[:-1]), "its arrays have different rows"),
    "game-of-another-shard": (lambda t, p: crafted(t, p, game=at(0, None, 3)), ": row 0 of game is 3 "),
    "dangling-link": (dangling, "shard_00001.npz' is a link to nothing"),
    "manifest-deep": (lambda t, p: manifest(t, p, lambda m: m.write_text("[" * 100_000 + "]" * 100_000)),
                      "labels.json' is larger than 65,536 bytes"),
    "manifest-nested": (lambda t, p: manifest(t, p, lambda m: m.write_text("[" * 30_000 + "]" * 30_000)),
                        "is nested 30000 levels deep; such a file has at most 8"),
    "manifest-folder": (lambda t, p: manifest(t, p, lambda m: m.mkdir()), "labels.json' is not a regular file"),
    "manifest-dev-zero": (lambda t, p: manifest(t, p, lambda m: m.symlink_to("/dev/zero")),
                          "labels.json' is not a regular file"),
    "games-true": (lambda t, p: manifest(t, p, games_true), "games must be an integer in 1..10,000,000, got True"),
    # Issue 50: a plan of ten million one-game shards had the fit look for each (2 minutes, silent).
    "10^7-shards": (lambda t, p: manifest(t, p, planned(games=10_000_000, shard_games=1)),
                    "10,000,000 games in shards of 1 make 10,000,000 shards; a labels folder holds at most 100,000: "
                    "give at least 100 shard games"),
    "shard-beyond-the-plan": (lambda t, p: manifest(t, p, planned(games=2)),
                              "labels.json' plans 1 shard (2 games, 2 a shard) but the folder holds shard_00001.npz: "
                              "the manifest does not match its shards; make the labels again in a new folder"),
}


@pytest.mark.parametrize("case", list(CRAFTED))
def test_fit_refuses_a_crafted_labels_folder_in_one_line_before_any_work(tiny_labels, tmp_path, capsys, case):
    make, message = CRAFTED[case]
    folder = make(tiny_labels, tmp_path)
    out = tmp_path / "out"
    line = refused(fit_argv(folder, out), capsys)
    assert message in line and line.startswith("sergeant-major distill fit: error: "), line
    assert not out.exists()


@pytest.mark.parametrize("case", ["10^7-shards", "shard-beyond-the-plan"])
def test_labels_refuse_to_continue_a_manifest_that_does_not_match_its_shards(tiny_labels, tmp_path, capsys, case):
    """Issue 50: resuming labels whose manifest claims ten million one-game shards said "0 of 2
    shards to make" and exited 0; a manifest that does not match its shards is one line, and
    the folder is left as it was."""
    make, message = CRAFTED[case]
    folder = make(tiny_labels, tmp_path)
    before = {path.name: path.read_bytes() for path in folder.iterdir()}
    line = refused(["labels", "--out", str(folder), "--games", "2", "--shard-games", "1", "--teacher", FAST_TEACHER,
                    "--player", "heuristic", "--seed", "7", "--option", "num_deals=1", "--no-progress"], capsys)
    assert message in line and line.startswith("sergeant-major distill labels: error: "), line
    assert {path.name: path.read_bytes() for path in folder.iterdir()} == before


def test_fit_reads_the_shards_a_folder_holds_not_each_one_its_plan_could_have(tiny_labels, tmp_path, monkeypatch):
    """A plan of 100,000 shards of which two are made: the fit lists the folder once."""
    folder = manifest(tiny_labels, tmp_path, planned(games=200_000))
    looked = []
    monkeypatch.setattr(distill, "shard_path", lambda *args: looked.append(args))
    assert distill.load_labels([folder])["action"].size == distill.load_labels([tiny_labels])["action"].size
    assert looked == []


@pytest.mark.parametrize("where", ["labels", "labels/fitted"], ids=["the-labels-folder", "inside-it"])
def test_fit_and_curve_refuse_an_out_folder_that_is_or_is_inside_the_labels_folder(tiny_labels, tmp_path, capsys,
                                                                                   where):
    """Issue 50: `distill fit --labels L --out L` wrote the policy among the labels."""
    import shutil

    labels = tmp_path / "labels"
    shutil.copytree(tiny_labels, labels)
    out = tmp_path / where
    inside = "is" if where == "labels" else "is inside"
    line = refused(fit_argv(labels, out), capsys)
    assert line.endswith(f"--out {out} {inside} the --labels folder {labels}, which holds its labels alone; give an "
                         f"--out folder outside it"), line
    line = refused(["curve", "--labels", str(labels), "--out", str(out), "--counts", "0,5"], capsys)
    assert f"--out {out} {inside} the --labels folder {labels}" in line
    assert sorted(path.name for path in labels.iterdir()) == sorted(path.name for path in tiny_labels.iterdir())
    distill.check_out_apart(tmp_path, [labels])  # a folder holding the labels: nothing is written into them


@pytest.mark.parametrize("labels", [["L", "L"], ["L", "./L"], ["L", "copy"]])
def test_fit_refuses_the_same_labels_twice(tiny_labels, tmp_path, capsys, labels, monkeypatch):
    import shutil

    monkeypatch.chdir(tmp_path)
    shutil.copytree(tiny_labels, "L")
    shutil.copytree(tiny_labels, "copy")
    assert f"--labels L and {labels[1]} hold the same labels" in refused(fit_argv(labels, "out"), capsys)


def test_fit_refuses_labels_that_are_all_held_out(tiny_labels, tmp_path, capsys):
    """Game 0's labels alone are all of a held-out game: one line, not a traceback."""
    assert "are of held-out games" in refused(fit_argv(tiny_labels, tmp_path / "out", "--limit", "1"), capsys)


def test_the_curve_checks_its_labels_as_the_fit_does(tiny_labels, tmp_path, capsys):
    folder = crafted(tiny_labels, tmp_path, action=at(3, None, 999))
    line = refused(["curve", "--labels", str(folder), "--out", str(tmp_path / "curve"), "--counts", "0,5"], capsys)
    assert "row 3 of action is 999" in line and not (tmp_path / "curve").exists()


def test_labels_that_would_not_fit_in_memory_are_refused_before_they_are_read(tiny_labels, monkeypatch):
    """The headers' rows and the bytes a label takes are checked against the memory available
    (limits.check_fits) before any array is read: a zip whose directory agrees with a huge header."""
    read = []
    monkeypatch.setattr(distill, "LABEL_BYTES", 10**12)
    monkeypatch.setattr(distill, "read_shard", lambda *args: read.append(args))
    with pytest.raises(ValueError, match=r"^[\d,]+ labels would need about [\d,.]+ GiB of memory; this machine has "
                                         r".* available; give a --limit, or fewer --labels folders$"):
        distill.load_labels([tiny_labels])
    assert read == []


# ============================================================================ labels on Ray

RANDOM_TINY = distill.LabelPlan(teacher=FAST_TEACHER, player="random", epsilon=0.25, games=6, shard_games=2, seed=11,
                                rules=Rules(num_deals=1))
"""A plan whose games draw from the shards' generators (a random player, epsilon's random moves)."""


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray of 2 CPUs for the module (as tests/test_rllib.py's); its address."""
    ray = needs("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()


def assert_same_folder(a: Path, b: Path) -> None:
    """The same files, every array of every shard equal, and labels.json byte for byte (a
    shard's bytes hold the time its zip members were written: numpy's savez)."""
    assert sorted(path.name for path in a.iterdir()) == sorted(path.name for path in b.iterdir())
    assert_same_labels(a, b)
    assert (a / distill.MANIFEST).read_bytes() == (b / distill.MANIFEST).read_bytes()


@pytest.mark.slow
@pytest.mark.parametrize("plan", [TINY, RANDOM_TINY], ids=["heuristic", "random-epsilon"])
def test_labels_made_on_ray_equal_the_local_run(local_ray, tmp_path, plan):
    """Each shard a Ray task that builds its own agents from the plan's names: every array of
    every shard and labels.json are the local run's, bit for bit."""
    distill.make_labels(tmp_path / "local", plan, workers=1)
    made = distill.make_labels(tmp_path / "ray", plan, ray=True)
    assert made["shards"] == plan.shards and made["labels"] == sum(
        shard["action"].size for shard in shards(tmp_path / "local").values())
    assert_same_folder(tmp_path / "ray", tmp_path / "local")


@pytest.mark.slow
def test_a_stopped_ray_run_keeps_its_shards_and_the_same_call_makes_only_the_missing_ones(local_ray, tmp_path,
                                                                                           monkeypatch):
    """Ctrl-C while the shards arrive: the shards written are kept, no temporary file stays; resumed on Ray, only the missing shards are made (the
    kept files are not touched) and the labels are the local run's."""
    distill.make_labels(tmp_path / "local", RANDOM_TINY, workers=1)
    folder = tmp_path / "ray"
    write_one = distill.write_shard
    written = []

    def stopped_after_one(path, labels):
        if written:
            raise KeyboardInterrupt
        write_one(path, labels)
        written.append(path.name)

    monkeypatch.setattr(distill, "write_shard", stopped_after_one)
    with pytest.raises(KeyboardInterrupt):
        distill.make_labels(folder, RANDOM_TINY, ray=True)
    assert sorted(path.name for path in folder.iterdir()) == sorted(["labels.json", *written])
    kept = {name: (folder / name).stat().st_mtime_ns for name in written}
    monkeypatch.setattr(distill, "write_shard", write_one)
    made = distill.make_labels(folder, RANDOM_TINY, ray=True)
    assert made["shards"] == RANDOM_TINY.shards - 1
    assert {name: (folder / name).stat().st_mtime_ns for name in written} == kept
    assert_same_folder(folder, tmp_path / "local")


@pytest.mark.slow
def test_the_labels_command_with_ray_resumes_a_local_run_on_a_ray_cluster(local_ray, tmp_path):
    """``distill labels --ray --address``: a folder begun without Ray is finished on the cluster
    (only its missing shards), giving the labels of one local run."""
    distill.make_labels(tmp_path / "local", TINY, workers=1)
    folder = tmp_path / "labels"
    distill.make_labels(folder, dataclasses.replace(TINY, games=TINY.shard_games), workers=1)  # the first shard
    done = subprocess.run([sys.executable, "-m", "sergeant_major_env", "distill", "labels", "--out", str(folder),
                           "--teacher", TINY.teacher, "--player", TINY.player, "--games", str(TINY.games),
                           "--shard-games", str(TINY.shard_games), "--seed", str(TINY.seed), "--option", "num_deals=1",
                           "--no-progress", "--ray", "--address", local_ray], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "1 of 2 shards to make" in done.stderr and f"on the Ray cluster at {local_ray}" in done.stderr
    assert "in 1 shards" in done.stdout and "per worker" not in done.stdout
    assert_same_folder(folder, tmp_path / "local")


@pytest.mark.slow
def test_sigterm_stops_a_ray_run_as_ctrl_c_does(tmp_path):
    """ray.init replaces the process's SIGTERM handler (a C++ stack dump and status 1) and Ray's
    wait raises a signal's exception again as a plain Ctrl-C: still one line naming SIGTERM,
    143, the finished shards kept whole and no temporary file."""
    needs("ray")
    out = tmp_path / "labels"
    status, stderr = labels_stopped_by_sigterm(out, "--ray")
    assert status == 143, stderr
    assert stderr.strip().splitlines()[-1] == ("sergeant-major distill: interrupted (SIGTERM); the finished shards "
                                               "are kept: run the same command to continue"), stderr
    assert "Traceback" not in stderr and "SIGTERM received" not in stderr, stderr
    assert not list(out.glob("*.tmp")) and 0 < len(list(out.glob("shard_*.npz"))) < 400
    for path in out.glob("shard_*.npz"):
        distill.read_shard(path)  # every shard left is whole


@pytest.mark.parametrize("arguments, message", [
    (["--address", "auto"], "--address needs --ray (it names the Ray cluster that makes the labels)"),
    (["--ray", "--workers", "2"], "--workers counts processes of this machine; with --ray the Ray tasks make the "
                                  "shards: give one or the other"),
])
def test_the_labels_command_refuses_ray_options_that_do_not_go_together(tmp_path, capsys, arguments, message):
    out = tmp_path / "labels"
    assert refused(["labels", "--out", str(out), *arguments], capsys).endswith(message)
    assert not out.exists()


def test_the_labels_command_names_the_extra_when_ray_is_missing(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray fails, as where it is not installed
    out = tmp_path / "labels"
    assert refused(["labels", "--out", str(out), "--ray"], capsys).endswith(
        '--ray needs Ray: pip install "sergeant-major-env[rllib]"')
    assert not out.exists()
    with pytest.raises(ImportError, match=r'^make_labels\(ray=True\) \(distill labels --ray\) needs Ray: pip install '
                                          r'"sergeant-major-env\[rllib\]"'):
        distill.make_labels(out, TINY, ray=True)
    assert not out.exists()
