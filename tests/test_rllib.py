"""RLlib training (examples/rllib_selfplay.py), the rllib-unsafe-pickle:PATH agent and Ray-distributed evaluation.

Needs the optional extra (pip install -e ".[rllib]"); skipped without Ray. Everything runs on
one local Ray of 2 CPUs, started once for the module.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import needs

ray = needs("ray")
needs("ray.rllib")

from sergeant_major_env.agents import make_agent  # noqa: E402
from sergeant_major_env import Rules, engine  # noqa: E402
from sergeant_major_env.evaluation import TablePlan, play_tables  # noqa: E402
from sergeant_major_env.observation import observe  # noqa: E402

pytestmark = pytest.mark.slow  # pytest -m "not slow" leaves this file out (issue 31)

ROOT = Path(__file__).resolve().parents[1]
TINY_TRAINING = ["--option", "num_deals=1", "--train-batch-size", "256", "--minibatch-size", "128",
                 "--num-epochs", "1", "--num-env-runners", "1", "--num-envs-per-env-runner", "4", "--hidden", "32,32"]


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()


@pytest.fixture(scope="module")
def selfplay():
    """examples/rllib_selfplay.py as a module (it is a script, not part of a package)."""
    spec = importlib.util.spec_from_file_location("rllib_selfplay", ROOT / "examples" / "rllib_selfplay.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


@pytest.fixture(scope="module")
def shared_checkpoint(local_ray, selfplay, tmp_path_factory):
    """Two self-play iterations of the shared policy; (checkpoint folder, progress)."""
    folder = tmp_path_factory.mktemp("rllib") / "checkpoint"
    args = selfplay.parse_args(["--iterations", "2", "--checkpoint-dir", str(folder), *TINY_TRAINING])
    return selfplay.train(args, log=lambda line: None)


# ============================================================================ training

def test_training_iterations_finish_and_write_a_checkpoint(shared_checkpoint):
    checkpoint, history = shared_checkpoint
    assert [p.iteration for p in history] == [1, 2]
    assert all(p.env_steps >= 256 and p.learner_steps > 0 and p.env_steps_per_s > 0 for p in history)
    assert (checkpoint / "learner_group" / "learner" / "rl_module" / "shared").is_dir()


def test_checkpoint_loads_as_an_agent_and_plays(shared_checkpoint):
    checkpoint, _ = shared_checkpoint
    agent = make_agent(f"rllib-unsafe-pickle:{checkpoint}")
    plan = TablePlan(games=12, seed=3, rules=Rules(num_deals=2), progress=False)
    result = play_tables([agent, "heuristic", "greedy"], plan, make_agent=make_agent)
    assert result.games == 12 and result.scores.sum() == 0  # every deal's points sum to zero (R25)
    # The same module from its own folder, by name as evaluate.py gives it.
    module_folder = checkpoint / "learner_group" / "learner" / "rl_module" / "shared"
    again = play_tables([f"rllib-unsafe-pickle:{module_folder}", "heuristic", "greedy"], plan, make_agent=make_agent)
    np.testing.assert_array_equal(again.scores, result.scores)


def test_agent_acts_greedily_within_the_mask(shared_checkpoint):
    agent = make_agent(f"rllib-unsafe-pickle:{shared_checkpoint[0]}")
    state = engine.init(engine.game_seeds(seed=5, batch_size=64), Rules(num_deals=1))
    rng = np.random.default_rng(0)
    for _ in range(40):  # mode choices, exchanges, discards and plays
        mask = engine.legal_action_mask(state)
        actions = agent.act(observe(state, state.to_act), mask, rng)
        playing = mask.any(axis=1)
        assert mask[playing, actions[playing]].all()
        engine.step(state, actions)


def test_fixed_opponents_and_a_module_per_seat(local_ray, selfplay, tmp_path):
    args = selfplay.parse_args(["--iterations", "1", "--checkpoint-dir", str(tmp_path / "checkpoint"),
                                "--policy", "per-seat", "--opponents", "heuristic,self", *TINY_TRAINING])
    checkpoint, history = selfplay.train(args, log=lambda line: None)
    modules = checkpoint / "learner_group" / "learner" / "rl_module"
    assert {"seat_0", "seat_1", "seat_2", "fixed_heuristic"} <= {p.name for p in modules.iterdir()}
    assert history[0].learner_steps < history[0].env_steps  # the heuristic played some of the decisions
    agent = make_agent(f"rllib-unsafe-pickle:{modules / 'seat_1'}")
    assert play_tables([agent, "greedy", "random"], TablePlan(games=6, rules=Rules(num_deals=1), progress=False),
                       make_agent=make_agent).games == 6
    with pytest.raises(ValueError, match="no 'shared' module.*seat_0"):
        make_agent(f"rllib-unsafe-pickle:{checkpoint}")
    with pytest.raises(ValueError, match="FixedAgentRLModule"):
        make_agent(f"rllib-unsafe-pickle:{modules / 'fixed_heuristic'}")


def test_loading_errors_name_the_path(tmp_path):
    with pytest.raises(ValueError, match="nosuchfolder.*not found"):
        make_agent(f"rllib-unsafe-pickle:{tmp_path / 'nosuchfolder'}")
    with pytest.raises(ValueError, match="is not an RLlib checkpoint"):
        make_agent(f"rllib-unsafe-pickle:{tmp_path}")
    with pytest.raises(ValueError, match="rllib-unsafe-pickle:PATH"):
        make_agent("rllib-unsafe-pickle")


def test_script_refuses_bad_arguments_before_starting_ray():
    done = subprocess.run([sys.executable, "examples/rllib_selfplay.py", "--opponents", "nosuchagent"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "nosuchagent" in done.stderr and "Traceback" not in done.stderr


# ============================================================================ evaluation on Ray

def test_play_tables_on_ray_equals_the_local_run(local_ray):
    # "random" draws from the agents' generator: the chunks (12 games each) must get the same
    # streams on Ray as locally for the numbers to agree.
    # The resolver travels to every Ray task (agents.make_agent pickles by reference).
    plan = TablePlan(games=36, seed=7, rules=Rules(num_deals=2), batch_size=12, record=True, progress=False)
    local = play_tables("heuristic,greedy,random", plan, make_agent=make_agent)
    on_ray = play_tables("heuristic,greedy,random", dataclasses.replace(plan, ray=True), make_agent=make_agent)
    np.testing.assert_array_equal(on_ray.scores, local.scores)
    assert on_ray.to_dict() == local.to_dict()
    assert on_ray.records == local.records


def test_evaluate_py_with_ray_prints_and_writes_the_local_numbers(local_ray, tmp_path):
    common = ["--agents", "greedy,random,random", "--games", "24", "--batch-size", "6", "--seed", "2",
              "--options", "num_deals=1", "--no-progress"]
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    for name, extra in (("local", []), ("ray", ["--ray", "--address", local_ray])):
        done = subprocess.run([sys.executable, "evaluate.py", *common, "--json", str(tmp_path / f"{name}.json"),
                               *extra], cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)
        assert done.returncode == 0, done.stderr
    local, on_ray = (json.loads((tmp_path / f"{name}.json").read_text()) for name in ("local", "ray"))
    assert on_ray == local
