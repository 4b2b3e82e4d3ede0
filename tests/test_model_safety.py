"""No model file runs code when it is loaded, unless the agent's name says it unpickles.

An SB3 zip stores fields as cloudpickle; an RLlib checkpoint holds class_and_ctor_args.pkl.
Both run code on loading. ``ppo:PATH`` and ``rllib:PATH`` refuse them with one line that
says why and what to use; ``ppo-unsafe-pickle:PATH`` and ``rllib-unsafe-pickle:PATH`` load
them (the tests show that a crafted zip does run its code there). The torch agents also
use the project's torch threads (agents/torch_setup.py).
"""

from __future__ import annotations

import base64
import json
import sys
import zipfile

import pytest

from conftest import needs

import sergeant_major_env.agents as agents
from sergeant_major_env.agents import make_agent

MARKER = "pickle-ran-code.txt"


class _CreatesAFile:
    """Unpickling this calls open(path, "w"): a harmless stand-in for any code."""

    def __init__(self, path) -> None:
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def _crafted_zip(tmp_path):
    """A real MaskablePPO zip with one more cloudpickled field in its "data"."""
    contrib = needs("sb3_contrib")
    cloudpickle = needs("cloudpickle")
    from sergeant_major_env import SergeantMajorVecEnv

    model = contrib.MaskablePPO("MlpPolicy", SergeantMajorVecEnv(2, num_deals=1), n_steps=8, batch_size=8,
                                device="cpu", policy_kwargs={"net_arch": [8]})
    honest = tmp_path / "honest.zip"
    model.save(honest)
    crafted = tmp_path / "crafted.zip"
    with zipfile.ZipFile(honest) as source, zipfile.ZipFile(crafted, "w") as target:
        for item in source.infolist():
            content = source.read(item)
            if item.filename == "data":
                data = json.loads(content)
                data["extra_field"] = {":type:": "<class 'object'>", ":serialized:": base64.b64encode(
                    cloudpickle.dumps(_CreatesAFile(tmp_path / MARKER))).decode()}
                content = json.dumps(data).encode()
            target.writestr(item, content)
    return crafted


def test_ppo_refuses_an_sb3_zip_and_runs_none_of_its_code(tmp_path):
    crafted = _crafted_zip(tmp_path)
    for spec in (f"ppo:{crafted}", f"ppo:{tmp_path / 'crafted'}"):  # with or without the suffix
        with pytest.raises(ValueError) as error:
            make_agent(spec)
        message = str(error.value)
        assert "\n" not in message and "unpickles" in message and "ppo-unsafe-pickle:" in message
        assert not (tmp_path / MARKER).exists()


def test_refusal_names_the_run_folder_when_there_is_one(tmp_path):
    crafted = _crafted_zip(tmp_path)
    (tmp_path / "policy.safetensors").write_bytes(b"")  # the run's code-free policy, beside its model.zip
    with pytest.raises(ValueError, match=f"use ppo:{tmp_path} \\(its policy.safetensors\\)"):
        make_agent(f"ppo:{crafted}")


def test_the_unsafe_opt_in_does_unpickle_the_file(tmp_path):
    """This is the documented risk of ppo-unsafe-pickle: a crafted zip runs its code."""
    crafted = _crafted_zip(tmp_path)
    agent = make_agent(f"ppo-unsafe-pickle:{crafted}")
    assert (tmp_path / MARKER).exists()
    assert agent.name == f"ppo-unsafe-pickle:{crafted}" and agent.rules is None and agent.metadata == {}


def test_unsafe_zip_agent_reads_its_run_json_for_rules(tmp_path):
    from sergeant_major_env import Rules

    crafted = _crafted_zip(tmp_path)
    (tmp_path / "run.json").write_text(json.dumps({"rules": {"num_deals": 3}}))
    assert make_agent(f"ppo-unsafe-pickle:{crafted}").rules == Rules(num_deals=3)


def test_unsafe_zip_agent_does_not_read_a_run_json_beyond_the_bound(tmp_path):
    """Issue 50: the run.json beside a zip was read whole, however large."""
    from sergeant_major_env import limits

    crafted = _crafted_zip(tmp_path)
    padding = " " * limits.RUN_RECORD_BYTES
    (tmp_path / "run.json").write_text(json.dumps({"rules": {"num_deals": 3}, "padding": padding}))
    agent = make_agent(f"ppo-unsafe-pickle:{crafted}")
    assert agent.rules is None and agent.metadata == {}


def test_the_opt_in_names_say_the_risk():
    help_text = agents.agent_help()
    assert "UNPICKLES" in help_text["ppo-unsafe-pickle"] and "UNPICKLES" in help_text["rllib-unsafe-pickle"]
    assert "never unpickles" in help_text["ppo"]


def test_rllib_short_name_refuses_before_reading_anything(tmp_path):
    had_ray = "ray" in sys.modules
    with pytest.raises(ValueError) as error:
        make_agent(f"rllib:{tmp_path / 'checkpoint'}")
    message = str(error.value)
    assert "\n" not in message and "class_and_ctor_args.pkl" in message
    assert f"rllib-unsafe-pickle:{tmp_path / 'checkpoint'}" in message
    assert had_ray or "ray" not in sys.modules  # refused without importing Ray


def test_torch_agents_use_one_thread(tmp_path, monkeypatch):
    torch = needs("torch")
    contrib = needs("sb3_contrib")
    from sergeant_major_env.agents.policy_file import save_policy
    from sergeant_major_env import SergeantMajorVecEnv

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    model = contrib.MaskablePPO("MlpPolicy", SergeantMajorVecEnv(2, num_deals=1), n_steps=8, batch_size=8,
                                device="cpu", policy_kwargs={"net_arch": [8]})
    save_policy(model.policy, tmp_path)
    model.save(tmp_path / "model.zip")
    threads = torch.get_num_threads()
    try:
        for spec in (f"ppo:{tmp_path}", f"ppo-unsafe-pickle:{tmp_path / 'model.zip'}"):
            torch.set_num_threads(2)
            make_agent(spec)
            assert torch.get_num_threads() == 1, spec
    finally:
        torch.set_num_threads(threads)
