"""The trained policy shipped with the package: ``learned`` by name, its metadata, shipping one.

The policy lives in agents/learned/ (policy.safetensors + policy.json, the code-free format,
and learned.json, its metadata), is loaded by ``agents.make_agent("learned")``, by
``evaluate.py --agents learned,...`` and by ``play.py --opponents learned,...``, ships in every
install (package data), and is put there by ``sergeant-major ship RUN_FOLDER``.
"""

from __future__ import annotations

import fnmatch
import importlib.util
import io
import itertools
import json
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

from conftest import needs

needs("torch")
needs("safetensors")

import sergeant_major_env.agents as agents  # noqa: E402
from sergeant_major_env.agents.learned import (  # noqa: E402
    LEARNED_FOLDER, METADATA_FILE, POLICY_METADATA_FILE, TENSORS_FILE, file_sha256, load_learned,
    read_learned_metadata)
from sergeant_major_env import Rules, engine  # noqa: E402
from sergeant_major_env.engine import DISCARD, GIVE, MODE, OVER, PLAY, RETURN  # noqa: E402
from sergeant_major_env.observation import OBSERVATION_SIZE, VERSION, observe  # noqa: E402
from sergeant_major_env.training import ship  # noqa: E402
from sergeant_major_env.cli import ship as ship_command  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SHIPPED_FILES = (TENSORS_FILE, POLICY_METADATA_FILE, METADATA_FILE)
PHASE_NAMES = {MODE: "mode", GIVE: "exchange give", RETURN: "return", DISCARD: "discard", PLAY: "play"}


def load_script(name: str):
    """A subcommand's module (``sergeant_major_env.cli.evaluate``, ``.play``)."""
    return importlib.import_module(f"sergeant_major_env.cli.{name}")


@pytest.fixture(scope="module")
def learned():
    return agents.make_agent("learned")


# ============================================================================ loading by name

def test_learned_is_registered_with_a_help_line():
    assert "learned" in agents.known_agents()
    assert "shipped" in agents.agent_help()["learned"]


def test_learned_metadata_names_its_observation_rules_training_and_strength(learned):
    metadata = learned.metadata
    assert learned.name == "learned"
    assert metadata["observation"] == {"version": VERSION, "size": OBSERVATION_SIZE}
    assert Rules.from_dict(metadata["rules"]) == learned.rules
    assert metadata["training"]["command"].startswith("sergeant-major distill fit")
    assert metadata["files"] == {name: file_sha256(LEARNED_FOLDER / name) for name in (TENSORS_FILE,
                                                                                      POLICY_METADATA_FILE)}
    opponents = metadata["strength"]["opponents"]
    assert {"random", "greedy", "heuristic"} <= set(opponents)
    for opponent, entry in opponents.items():
        low, high = entry["ci95"]
        assert low <= entry["mean_points"] <= high and entry["games"] >= 6 and entry["games"] % 6 == 0
        assert entry["command"] == (f"sergeant-major evaluate --agents learned,{opponent},{opponent} "
                                    f"--games {entry['games']} --seed {entry['seed']}")
    assert learned.policy_metadata["observation"]["version"] == VERSION


def test_learned_plays_legal_moves_in_every_phase_of_real_games(learned):
    """Whole 18-deal games with exchanges (R17-R22), learned in one seat, random in the others
    (random gives trumps, so learned must choose returns, R21); every action learned picks is
    in the legal mask, in each of the five decision phases."""
    games = 12
    state = engine.init(np.arange(games) + 70_000, Rules())
    learned_seat = np.arange(games) % 3
    rng = np.random.default_rng(0)
    decisions = {name: 0 for name in PHASE_NAMES.values()}
    while not (state.phase == OVER).all():
        mask = engine.legal_action_mask(state)
        actions = np.where(mask, rng.random(mask.shape), -1.0).argmax(axis=1)
        mine = np.flatnonzero((state.to_act == learned_seat) & mask.any(axis=1))
        if mine.size:
            chosen = learned.act(observe(state, np.maximum(state.to_act, 0))[mine], mask[mine], rng)
            assert mask[mine, chosen].all(), f"illegal actions {chosen[~mask[mine, chosen]]}"
            actions[mine] = chosen
            for phase in state.phase[mine]:
                decisions[PHASE_NAMES[int(phase)]] += 1
        engine.step(state, actions)
    assert all(decisions.values()), f"a phase was never played by learned: {decisions}"


# ============================================================================ a checkout without the files

def test_missing_shipped_policy_is_a_one_line_error_naming_the_ship_command(tmp_path):
    with pytest.raises(ValueError, match=r"policy\.safetensors not found.*sergeant-major ship") as error:
        load_learned(tmp_path)
    assert "\n" not in str(error.value)


def test_policy_file_not_described_by_its_metadata_is_refused(tmp_path):
    for name in SHIPPED_FILES:
        shutil.copy(LEARNED_FOLDER / name, tmp_path / name)
    (tmp_path / POLICY_METADATA_FILE).write_text((LEARNED_FOLDER / POLICY_METADATA_FILE).read_text() + " ")
    with pytest.raises(ValueError, match=r"policy\.json is not the file learned\.json describes"):
        load_learned(tmp_path)


# ============================================================================ the command lines

def test_evaluate_and_play_accept_learned_by_name(tmp_path):
    evaluate = load_script("evaluate")
    out = tmp_path / "eval.json"
    assert evaluate.main(["--agents", "learned,greedy,greedy", "--games", "6", "--no-progress",
                          "--json", str(out)]) == 0
    assert json.loads(out.read_text())["agents"][0]["name"] == "learned"
    play = load_script("play")
    output = io.StringIO()
    assert play.main(["--opponents", "learned,heuristic", "--seat", "2", "--seed", "1"],
                     input_fn=lambda prompt: "quit", output=output) == 0
    assert "seat 0 (learned)" in output.getvalue()


def test_ship_writes_policy_and_strength_that_evaluate_reproduces(tmp_path):
    """Shipping the shipped policy again (a folder of policy files is a run for ship): the files
    are copied byte for byte, and the recorded evaluate.py command gives the recorded numbers."""
    assert ship_command.main([str(LEARNED_FOLDER), "--into", str(tmp_path), "--games", "6", "--opponents", "random",
                      "--no-progress"]) == 0
    for name in (TENSORS_FILE, POLICY_METADATA_FILE):
        assert (tmp_path / name).read_bytes() == (LEARNED_FOLDER / name).read_bytes()
    metadata = read_learned_metadata(tmp_path)
    assert metadata["source"] == ship.portable(str(LEARNED_FOLDER)) and not Path(metadata["source"]).is_absolute()
    assert metadata["shipped_by"].startswith("sergeant-major ship") and str(tmp_path) not in metadata["shipped_by"]
    entry = metadata["strength"]["opponents"]["random"]
    assert (entry["games"], entry["seed"]) == (6, ship.DEFAULT_SEED)
    evaluated = tmp_path / "eval.json"
    command = shlex.split(entry["command"])
    assert command[:2] == ["sergeant-major", "evaluate"]
    assert load_script("evaluate").main(command[2:] + ["--no-progress", "--json", str(evaluated)]) == 0
    stats = json.loads(evaluated.read_text())["agents"][0]
    assert (stats["name"], stats["mean_points"], stats["ci95"]) == ("learned", entry["mean_points"], entry["ci95"])


def test_ship_refuses_to_overwrite_a_shipped_policy_without_overwrite(tmp_path, capsys):
    for name in SHIPPED_FILES:
        (tmp_path / name).write_text("old")
    with pytest.raises(SystemExit) as exit_:
        ship_command.main([str(LEARNED_FOLDER), "--into", str(tmp_path), "--games", "6", "--opponents", "random"])
    assert exit_.value.code == 2
    message = capsys.readouterr().err.strip().splitlines()[-1]
    assert "already holds a shipped policy" in message and "--overwrite" in message
    assert all((tmp_path / name).read_text() == "old" for name in SHIPPED_FILES)


def test_ship_has_help_and_shows_the_shipped_table():
    result = subprocess.run([sys.executable, "-m", "sergeant_major_env", "ship", "--help"], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and "usage: sergeant-major ship" in result.stdout
    result = subprocess.run([sys.executable, "-m", "sergeant_major_env", "ship", "--show"], cwd=ROOT, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0 and result.stdout.strip() == ship.strength_table(read_learned_metadata())


def test_ship_into_defaults_to_the_learned_agent_only_in_a_checkout(tmp_path):
    """Issue 27: for a wheel user --into defaulted to the installed package's folder (inside
    site-packages). A checkout (a pyproject.toml above the package) keeps that default."""
    assert ship.checkout_destination() == LEARNED_FOLDER  # these tests run from a checkout
    installed = tmp_path / "site-packages" / "sergeant_major_env" / "agents" / "learned"
    installed.mkdir(parents=True)
    assert ship.checkout_destination(installed) is None
    (tmp_path / "pyproject.toml").write_text("")  # a checkout laid out as the repository is
    checkout = tmp_path / "agents" / "learned"
    checkout.mkdir(parents=True)
    assert ship.checkout_destination(checkout) == checkout


def test_ship_without_into_from_an_installed_package_is_one_line_and_ships_nothing(monkeypatch, capsys):
    monkeypatch.setattr(ship, "checkout_destination", lambda: None)
    before = {path.name: path.read_bytes() for path in LEARNED_FOLDER.glob("*.*")}
    with pytest.raises(SystemExit) as exit_:
        ship_command.main([str(LEARNED_FOLDER), "--games", "6", "--opponents", "random"])
    assert exit_.value.code == 2
    message = capsys.readouterr().err.strip().splitlines()[-1]
    assert "--into FOLDER is needed" in message and "ppo:FOLDER" in message
    assert {path.name: path.read_bytes() for path in LEARNED_FOLDER.glob("*.*")} == before


@pytest.mark.parametrize("arguments, message", [
    (["NO_SUCH_RUN"], "PPO policy not found: 'NO_SUCH_RUN'"),
    ([str(LEARNED_FOLDER), "--opponents", "nobody"], "unknown agent 'nobody'"),
    ([str(LEARNED_FOLDER), "--opponents", "random,learned"], "learned is the policy being shipped"),
    ([str(LEARNED_FOLDER), "--games", "0"], "argument --games: must be an integer, 1 or more, got '0'"),
    ([str(LEARNED_FOLDER), "--pimc-games", "0"], "argument --pimc-games: must be an integer, 1 or more, got '0'"),
])
def test_ship_bad_arguments_are_one_line_usage_errors_before_any_game(arguments, message, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        ship_command.main(arguments + ["--into", str(tmp_path)])
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err.strip().splitlines()[-1]
    assert not list(tmp_path.iterdir())


def test_ship_plays_pimc_games_against_pimc_under_any_name():
    """``search`` is pimc (``agents.SEARCH``): as slow, so it plays --pimc-games like pimc:...."""
    import types

    args = types.SimpleNamespace(opponents="search,pimc:worlds=4,heuristic", games=600, pimc_games=120, seed=0)
    assert ship.opponent_tables(args) == [("search", 120), ("pimc:worlds=4", 120), ("heuristic", 600)]


def test_learned_records_its_teacher_labels_and_the_commands_that_make_it_again(learned):
    """The shipped policy is distilled from the search (issue 21), since issue 29 in rounds of
    ``distill rounds`` from version 0.3.0's ``learned`` (round 2 now): its metadata names the
    policy it started from (round 1's), the teacher (the search with that policy inside), the
    label count and the commands that make the labels and the fit."""
    distilled = learned.metadata["training"]["distilled"]
    previous = "runs/rounds/round-1"
    assert distilled["from"] == previous and distilled["teachers"] == [f"pimc:rollout=ppo:{previous}"]
    assert distilled["players"] == [f"ppo:{previous}"] and distilled["label_count"] >= 1_000_000
    [labels] = distilled["label_commands"]
    assert labels.startswith("sergeant-major distill labels --out runs/rounds/round-2/labels ")
    assert f"--init {distilled['from']}" in learned.metadata["training"]["command"]
    assert learned.policy_metadata["training"] == learned.metadata["training"]
    # The policies it started from, back to the one distilled from learned-ppo (0.3.0's learned):
    # round 1's fit from that one, then that one's own fit.
    first, second = distilled["lineage"]
    assert first["command"] == f"sergeant-major distill fit --labels {previous}/labels --init learned --out {previous}"
    assert second["distilled"]["from"] == "learned-ppo" and second["command"].startswith("sergeant-major distill fit ")
    assert learned.metadata["packages"]["sergeant-major-env"] != "0.1.0"  # the fit's, not the first policy's


def test_learned_says_beside_its_command_how_to_make_the_labels_it_names(learned):
    """Issue 27: its training command names a labels folder no user has; beside it,
    labels_made_by gives, for each --labels folder, the command that makes it."""
    training = learned.metadata["training"]
    words = shlex.split(training["command"])
    start = words.index("--labels") + 1
    folders = list(itertools.takewhile(lambda word: not word.startswith("--"), words[start:]))
    made = {shlex.split(command)[shlex.split(command).index("--out") + 1]: command
            for command in training["labels_made_by"]}
    assert folders == ["runs/rounds/round-2/labels"] and set(made) == set(folders)
    assert all(command.startswith("sergeant-major distill labels ") for command in made.values())
    assert list(training)[:2] == ["command", "labels_made_by"]  # side by side


def test_learned_ppo_is_the_policy_learned_was_distilled_from():
    """learned-ppo, the policy PPO trained, ships beside learned with its own checked metadata."""
    from sergeant_major_env.agents.learned import PPO_FOLDER, read_learned_metadata

    ppo = agents.make_agent("learned-ppo")
    assert ppo.name == "learned-ppo" and "distill" in agents.agent_help()["learned-ppo"]
    metadata = read_learned_metadata(PPO_FOLDER, "learned-ppo")
    assert metadata["training"]["command"].startswith("sergeant-major train")
    assert metadata["files"] == {name: file_sha256(PPO_FOLDER / name) for name in (TENSORS_FILE, POLICY_METADATA_FILE)}
    assert (PPO_FOLDER / TENSORS_FILE).read_bytes() != (LEARNED_FOLDER / TENSORS_FILE).read_bytes()
    assert metadata["agent"] == "learned-ppo"
    for opponent, entry in metadata["strength"]["opponents"].items():  # commands that measure this policy
        assert entry["command"].startswith(f"sergeant-major evaluate --agents learned-ppo,{opponent},{opponent} ")


def test_a_swapped_learned_ppo_file_is_refused_in_one_line_naming_it(tmp_path):
    from sergeant_major_env.agents.learned import PPO_FOLDER, load_learned

    folder = tmp_path / "ppo"
    shutil.copytree(PPO_FOLDER, folder)
    (folder / TENSORS_FILE).write_bytes((LEARNED_FOLDER / TENSORS_FILE).read_bytes())
    with pytest.raises(ValueError, match=r"^agent 'learned-ppo': .*policy.safetensors is not the file learned.json "
                                         r"describes"):
        load_learned(folder, "learned-ppo")


# ============================================================================ the ladder (issue 51 item 1)

def test_learned_r2_is_todays_learned_byte_for_byte_and_plays_its_moves(learned):
    """The ladder keeps round 2 under a name that never changes: today `learned` is that policy,
    so the two files are the same bytes and the two agents choose the same actions."""
    from sergeant_major_env.agents.learned import LADDER, newest_rung, rung_folder

    rung = agents.make_agent("learned-r2")
    assert rung.name == "learned-r2" and LADDER["learned-r2"] == rung_folder(2)
    for name in (TENSORS_FILE, POLICY_METADATA_FILE):
        assert file_sha256(rung_folder(2) / name) == file_sha256(LEARNED_FOLDER / name)
    assert rung.metadata["files"] == learned.metadata["files"] and newest_rung() == "learned-r2"
    state = engine.init(np.arange(24) + 5_000, Rules())
    rng = np.random.default_rng(0)
    compared = 0
    for _ in range(40):
        mask = engine.legal_action_mask(state)
        observations = observe(state, np.maximum(state.to_act, 0))
        live = np.flatnonzero(mask.any(axis=1))
        mine = rung.act(observations[live], mask[live], np.random.default_rng(1))
        np.testing.assert_array_equal(mine, learned.act(observations[live], mask[live], np.random.default_rng(2)))
        compared += live.size
        engine.step(state, np.where(mask, rng.random(mask.shape), -1.0).argmax(axis=1))
    assert compared > 500


def test_learned_r2_records_its_round_and_learneds_training_and_strength(learned):
    """ladder/r2/learned.json: agent learned-r2, round 2, and learned's training record and strength
    table, its commands naming learned-r2 (the same figures: the same policy); keep_rung makes it."""
    from sergeant_major_env.agents.learned import read_learned_metadata, rung_folder, rung_metadata

    metadata = read_learned_metadata(rung_folder(2), "learned-r2")
    assert metadata["agent"] == "learned-r2" and metadata["round"] == 2
    assert metadata["training"] == learned.metadata["training"]
    assert metadata == rung_metadata(learned.metadata, 2)
    for opponent, entry in metadata["strength"]["opponents"].items():
        shipped = learned.metadata["strength"]["opponents"][opponent]
        assert {**entry, "command": shipped["command"]} == shipped
        assert entry["command"] == shipped["command"].replace("--agents learned,", "--agents learned-r2,")


def test_keep_rung_copies_learned_and_never_replaces_a_rung(tmp_path):
    from sergeant_major_env.agents.learned import keep_rung, load_learned

    folder = keep_rung(3, tmp_path / "r3")
    for name in (TENSORS_FILE, POLICY_METADATA_FILE):
        assert (folder / name).read_bytes() == (LEARNED_FOLDER / name).read_bytes()
    agent = load_learned(folder, "learned-r3")
    assert agent.metadata["agent"] == "learned-r3" and agent.metadata["round"] == 3
    before = (folder / METADATA_FILE).read_bytes()
    with pytest.raises(ValueError, match=r"already holds .*a rung of the ladder is never replaced$"):
        keep_rung(3, folder)
    assert (folder / METADATA_FILE).read_bytes() == before


def test_a_swapped_rung_file_is_refused_in_one_line(tmp_path, monkeypatch):
    """The registered learned-r2 checks its digests as learned does: its folder with
    learned-ppo's weights in place of its own is refused, naming the agent and the file."""
    import sergeant_major_env.agents.learned as learned_module

    shutil.copytree(learned_module.LADDER_FOLDER, tmp_path / "ladder")
    (tmp_path / "ladder" / "r2" / TENSORS_FILE).write_bytes((learned_module.PPO_FOLDER / TENSORS_FILE).read_bytes())
    monkeypatch.setattr(learned_module, "LADDER_FOLDER", tmp_path / "ladder")
    with pytest.raises(ValueError, match=r"^agent 'learned-r2': .*policy.safetensors is not the file learned.json "
                                         r"describes") as error:
        agents.make_agent("learned-r2")
    assert "\n" not in str(error.value)


def test_a_ladder_name_that_does_not_exist_is_one_line_naming_those_that_do():
    with pytest.raises(ValueError) as error:
        agents.make_agent("learned-r9")
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith("unknown agent 'learned-r9'; the learned agents: learned, learned-ppo, learned-r2;")


def test_the_ladder_is_listed_with_its_round_and_strength(capsys):
    """Each rung and its search are registered from LADDER_ROUNDS alone; `sergeant-major agents`
    lists them, learned saying it is the top rung (today round 2)."""
    from sergeant_major_env.agents.learned import LADDER_ROUNDS, SHIPPED_POLICIES, rung_name
    from sergeant_major_env.cli import agents as agents_command

    assert LADDER_ROUNDS == (2,) and SHIPPED_POLICIES["learned-r2"].name == "r2"
    assert agents_command.main([]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    heuristic = read_learned_metadata()["strength"]["opponents"]["heuristic"]["mean_points"]
    for number in LADDER_ROUNDS:
        assert f"round {number} of distill rounds" in lines[rung_name(number)]
        assert f"{heuristic:+.2f} against heuristic x2" in lines[rung_name(number)]
        assert rung_name(number) in lines[f"search-r{number}"]
    assert "top rung of the ladder" in lines["learned"] and "learned-r2" in lines["learned"]


def test_search_r2_is_search_with_learned_r2_inside_by_one_name():
    """search-r2: search's options (the shipped belief model, the prior's weight) with learned-r2
    rolling out the seat's own moves and as the prior; the same agent as its spec, deciding alike."""
    from sergeant_major_env.agents import SEARCH, SEARCHES, search_spec

    spec = "pimc:rollout=learned-r2:belief=learned:prior=learned-r2:prior_weight=0.2"
    assert SEARCHES["search-r2"] == spec == SEARCH.replace("=learned:belief", "=learned-r2:belief").replace(
        "prior=learned:", "prior=learned-r2:")
    assert search_spec("search-r2") == spec and search_spec("pimc:worlds=4") == "pimc:worlds=4"
    search, spelled = agents.make_agent("search-r2"), agents.make_agent(spec)
    assert search.settings == spelled.settings and repr(search) == repr(spelled)
    assert search.rollout_policy.name == "learned-r2" and search.settings.belief == "learned"
    assert search.settings.prior == "learned-r2" and search._prior is not None
    state = engine.init(np.arange(6) + 900, Rules(num_deals=1))
    rng = np.random.default_rng(3)
    for _ in range(20):  # into the play
        mask = engine.legal_action_mask(state)
        engine.step(state, np.where(mask, rng.random(mask.shape), -1.0).argmax(axis=1))
    live = np.flatnonzero(engine.legal_action_mask(state).any(axis=1))
    np.testing.assert_array_equal(search.act_on_state(state, live, np.random.default_rng(1)),
                                  spelled.act_on_state(state, live, np.random.default_rng(2)))
    with pytest.raises(ValueError, match=r"^search-r2: bad option 'worlds=4'; search-r2 takes no options"):
        agents.make_agent("search-r2:worlds=4")


def test_pimc_takes_every_shipped_policy_by_name_for_its_policy_options():
    from sergeant_major_env.agents.learned import SHIPPED_POLICIES

    for name in SHIPPED_POLICIES:
        search = agents.make_agent(f"pimc:rollout={name}:others={name}:prior={name}:infer={name}")
        assert search.rollout_policy.name == name and search.others_policy is search.rollout_policy
        assert search._prior is not None and search._log_probs is not None


# ============================================================================ install and README

def test_package_data_ships_every_file_of_the_learned_folder():
    """A non-editable install (pip install ., a wheel) holds the policy: pyproject.toml's package
    data names each data file of agents/learned/."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = project["tool"]["setuptools"]["package-data"]["sergeant_major_env.agents.learned"]
    data = [path.relative_to(LEARNED_FOLDER).as_posix() for path in LEARNED_FOLDER.rglob("*")
            if path.is_file() and path.suffix not in (".py", ".pyc")]
    assert set(SHIPPED_FILES) <= set(data) and {f"ppo/{name}" for name in SHIPPED_FILES} <= set(data)
    assert {f"ladder/r2/{name}" for name in SHIPPED_FILES} <= set(data)
    assert [name for name in data if not any(fnmatch.fnmatch(name, pattern) for pattern in patterns)] == []


def test_readme_shows_the_shipped_policys_strength_table():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert ship.strength_table(read_learned_metadata()) in readme


# ============================================================================ no machine's paths

def test_no_shipped_file_holds_a_machine_path():
    """The package's shipped files say where things came from without this machine's folders."""
    for path in LEARNED_FOLDER.rglob("*"):
        if path.suffix in (".json", ".md", ".txt"):
            text = path.read_text(encoding="utf-8")
            assert not ship.MACHINE_PATH.search(text), (path.name, ship.MACHINE_PATH.search(text).group(0))


def test_ship_writes_commands_and_sources_without_machine_paths(tmp_path, monkeypatch):
    """A run trained with an absolute --out ships with portable paths: relative to the current
    folder when inside it, else the folder's name; the policy's numbers stay byte for byte."""
    run = tmp_path / "somewhere" / "recipe"
    run.mkdir(parents=True)
    (run / TENSORS_FILE).write_bytes((LEARNED_FOLDER / TENSORS_FILE).read_bytes())
    policy = json.loads((LEARNED_FOLDER / POLICY_METADATA_FILE).read_text())
    policy["training"]["command"] = f"sergeant-major train --out {run} --total-timesteps 512"
    policy["training"]["distilled"] = {"labels": [str(tmp_path / "labels" / "r1")], "label_count": 10}  # a distilled one's
    (run / POLICY_METADATA_FILE).write_text(json.dumps(policy, indent=2))
    into = tmp_path / "shipped"
    into.mkdir()
    monkeypatch.chdir(tmp_path)
    assert ship_command.main([str(run), "--into", str(into), "--games", "6", "--opponents", "random", "--no-progress"]) == 0
    for path in into.iterdir():
        if path.suffix == ".json":
            assert str(tmp_path) not in path.read_text(), path.name
    shipped = read_learned_metadata(into)
    assert shipped["source"] == "somewhere/recipe"
    assert shipped["training"]["command"] == "sergeant-major train --out somewhere/recipe --total-timesteps 512"
    assert shipped["training"]["distilled"] == {"labels": ["labels/r1"], "label_count": 10}
    assert json.loads((into / POLICY_METADATA_FILE).read_text())["training"] == shipped["training"]
    assert (into / TENSORS_FILE).read_bytes() == (LEARNED_FOLDER / TENSORS_FILE).read_bytes()
    assert ship.portable("ppo:/elsewhere/runs/x --out=/elsewhere/y") == "ppo:x --out=y"
