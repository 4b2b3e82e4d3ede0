"""Code-free policy files (agents/policy_file.py) and the ``ppo:PATH`` agent that reads them.

A policy saved as policy.safetensors + policy.json must play exactly as the SB3 model it was
saved from (MaskablePPO.load(zip).predict(..., deterministic=True)), load without
unpickling anything, and refuse, in one line, a model made for another observation layout.
"""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest

from conftest import needs

needs("sb3_contrib")
needs("safetensors")

import torch  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402

from sergeant_major_env.agents import PPOAgent, make_agent  # noqa: E402
from sergeant_major_env.agents.policy_file import TENSORS_FILE, _predict_argmax, load_policy, most_likely_legal, save_policy  # noqa: E402
from sergeant_major_env import Rules, SergeantMajorVecEnv, engine  # noqa: E402
from sergeant_major_env.engine import OVER  # noqa: E402
from sergeant_major_env.observation import OBSERVATION_SIZE, VERSION, observe  # noqa: E402


def _model(seed: int = 0) -> MaskablePPO:
    """An untrained MaskablePPO on the real env (its logits are nearly equal: the hardest
    case for reproducing predict's choice), with weights spread a little on top."""
    model = MaskablePPO("MlpPolicy", SergeantMajorVecEnv(4, seed=0, num_deals=1), n_steps=8, batch_size=8,
                        seed=seed, device="cpu", policy_kwargs={"net_arch": dict(pi=[64, 32], vf=[48])})
    return model


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """(run-like folder with model.zip and policy files, the model reloaded from its zip)."""
    folder = tmp_path_factory.mktemp("policy")
    model = _model()
    model.save(folder / "model.zip")
    save_policy(model.policy, folder, {"rules": Rules(num_deals=2).to_dict(), "note": "test"})
    return folder, MaskablePPO.load(folder / "model.zip", device="cpu")


def _positions(games: int = 256, seed: int = 7) -> list[tuple[np.ndarray, np.ndarray]]:
    """(observations, masks) of the seats to act at every step of real games played by
    random legal moves: mode choices, exchanges, discards and plays (several thousand rows)."""
    rng = np.random.default_rng(seed)
    state = engine.init(engine.game_seeds(seed, games), Rules(num_deals=2))
    batches = []
    while (state.phase != OVER).any():
        mask = engine.legal_action_mask(state)
        playing = mask.any(axis=1)
        obs = observe(state, np.maximum(state.to_act, 0))
        batches.append((obs[playing], mask[playing]))
        choice = np.where(mask, rng.random(mask.shape), -1).argmax(axis=1)
        engine.step(state, choice)
    return batches


def test_policy_file_plays_exactly_as_maskable_ppo_predict(saved):
    folder, zipped = saved
    agent = make_agent(f"ppo:{folder}")
    rng = np.random.default_rng(0)
    rows = 0
    for obs, mask in _positions():
        expected, _ = zipped.predict(obs, action_masks=mask, deterministic=True)
        np.testing.assert_array_equal(agent.act(obs, mask, rng), expected)
        rows += len(obs)
    assert rows > 3000 and agent.fallbacks == 0


def test_most_likely_legal_is_predicts_choice_also_at_near_ties():
    """The fast argmax (a clear winner taken directly) equals predict's own steps everywhere:
    random logits of every size, exact and near ties (a few float32 steps apart, where
    predict's rounding may tie them and take the lower action), huge and non-finite logits,
    rows with one or no legal action."""
    rng = np.random.default_rng(3)
    rows = 20_000
    logits = rng.normal(0.0, rng.choice([0.01, 1.0, 30.0, 1e4], size=(rows, 1)), size=(rows, 58)).astype(np.float32)
    mask = rng.random((rows, 58)) < rng.choice([0.05, 0.3, 1.0], size=(rows, 1))
    # Near ties: copy each row's best legal logit onto another legal action, nudged by 0..3 ulps.
    tied = rng.random(rows) < 0.5
    for r in np.flatnonzero(tied & (mask.sum(axis=1) >= 2)):
        legal = np.flatnonzero(mask[r])
        best = legal[logits[r, legal].argmax()]
        other = rng.choice(legal[legal != best])
        logits[r, other] = logits[r, best]
        for _ in range(int(rng.integers(0, 4))):
            logits[r, other] = np.nextafter(logits[r, other], np.float32(rng.choice([-np.inf, np.inf])))
    logits[:50, 0] = np.inf
    logits[50:100, 1] = np.nan
    mask[100:120] = False
    one = np.zeros(58, dtype=bool)
    one[rng.integers(58)] = True
    mask[120:200] = one
    tensor = torch.as_tensor(logits)
    expected = _predict_argmax(tensor, mask)
    np.testing.assert_array_equal(most_likely_legal(tensor, mask), expected)
    assert np.count_nonzero(tied) > 5000  # the near ties were exercised


def test_value_network_is_saved_too(saved):
    folder, zipped = saved
    network, _ = load_policy(folder / TENSORS_FILE)
    obs = torch.as_tensor(_positions(games=16)[0][0])
    with torch.no_grad():
        np.testing.assert_array_equal(network.values(obs).numpy(), zipped.policy.predict_values(obs).numpy())


def test_ppo_accepts_the_folder_the_safetensors_or_the_json(saved):
    folder, _ = saved
    obs, mask = _positions(games=32)[3]
    actions = [make_agent(f"ppo:{path}").act(obs, mask, None)
               for path in (folder, folder / "policy.safetensors", folder / "policy.json")]
    np.testing.assert_array_equal(actions[0], actions[1])
    np.testing.assert_array_equal(actions[0], actions[2])


def test_agent_exposes_rules_and_metadata(saved):
    folder, _ = saved
    agent = PPOAgent(folder)
    assert agent.rules == Rules(num_deals=2)
    assert agent.metadata["note"] == "test" and agent.metadata["observation"] == {"version": VERSION,
                                                                                    "size": OBSERVATION_SIZE}
    assert agent.metadata["network"]["net_arch"] == {"pi": [64, 32], "vf": [48]}


def test_loading_a_policy_never_unpickles(saved, monkeypatch):
    folder, _ = saved

    def refuse(*args, **kwargs):
        raise AssertionError("a policy file was unpickled")

    for name in ("load", "loads", "Unpickler"):
        monkeypatch.setattr(pickle, name, refuse)
    monkeypatch.setattr(torch, "load", refuse)
    network, metadata = load_policy(folder)
    assert metadata["format_version"] == 1 and network.action_net.out_features == 58


def test_a_sampling_agent_plays_gumbel_max_of_the_masked_logits_with_the_callers_generator(saved):
    """``PPOAgent(path, sample=True)`` (train.py's league snapshots): the argmax of the logits
    plus Gumbel noise drawn from the caller's generator, over the legal actions: a sample of
    the masked softmax, the same for the same generator state."""
    folder, zipped = saved
    agent = PPOAgent(folder, sample=True)
    obs, mask = _positions(games=64)[2]
    with torch.no_grad():
        logits = zipped.policy.action_net(zipped.policy.mlp_extractor.forward_actor(torch.as_tensor(obs))).numpy()
    noisy = logits.astype(np.float64) + np.random.default_rng(5).gumbel(size=logits.shape)
    np.testing.assert_array_equal(agent.act(obs, mask, np.random.default_rng(5)),
                                  np.where(mask, noisy, -np.inf).argmax(axis=1))
    assert not np.array_equal(agent.act(obs, mask, np.random.default_rng(5)),
                              agent.act(obs, mask, np.random.default_rng(6)))  # it does sample


def test_saving_and_loading_a_policy_draw_nothing_from_torchs_generator(saved, tmp_path):
    """train.py saves and loads league snapshots in the middle of training: the run's random
    numbers (PPO's action samples) must not depend on whether a snapshot was taken."""
    folder, zipped = saved
    before = torch.get_rng_state()
    save_policy(zipped.policy, tmp_path / "snapshot.safetensors")
    load_policy(tmp_path / "snapshot.safetensors")
    PPOAgent(folder, name="self@0", sample=True)
    assert torch.equal(torch.get_rng_state(), before)


def _copy(folder, tmp_path):
    for name in ("policy.safetensors", "policy.json"):
        (tmp_path / name).write_bytes((folder / name).read_bytes())
    return tmp_path


def _edit_metadata(folder, change):
    path = folder / "policy.json"
    metadata = json.loads(path.read_text())
    change(metadata)
    path.write_text(json.dumps(metadata))


def _one_line_error(spec: str) -> str:
    with pytest.raises(ValueError) as error:
        make_agent(spec)
    message = str(error.value)
    assert "\n" not in message
    return message


def test_another_observation_version_is_one_line_naming_both(saved, tmp_path):
    copy = _copy(saved[0], tmp_path)
    _edit_metadata(copy, lambda m: m.update(observation={"version": VERSION + 1, "size": 900}))
    message = _one_line_error(f"ppo:{copy}")
    assert f"observation version {VERSION + 1} (900 floats)" in message
    assert f"this package observes version {VERSION} ({OBSERVATION_SIZE} floats)" in message


@pytest.mark.parametrize("damage, expected", [
    (lambda f: (f / "policy.json").unlink(), "policy.json' not found"),
    (lambda f: (f / "policy.json").write_text("{not json"), "not valid JSON"),
    (lambda f: _edit_metadata(f, lambda m: m.update(format="something else")), "not a policy file's metadata"),
    (lambda f: _edit_metadata(f, lambda m: m.update(format_version=99)), "format version 99"),
    (lambda f: _edit_metadata(f, lambda m: m["network"].update(net_arch={"pi": [64], "vf": [48]})),
     "does not match its policy.json network"),
    (lambda f: _edit_metadata(f, lambda m: m["network"].update(activation="gelu")), "activation 'gelu'"),
    (lambda f: (f / "policy.safetensors").write_bytes((f / "policy.safetensors").read_bytes()[:100]),
     "not a readable safetensors file"),
    (lambda f: _edit_metadata(f, lambda m: m.update(rules={"num_deals": 40})), "rule options are not valid"),
])
def test_broken_policy_files_are_one_line_errors(saved, tmp_path, damage, expected):
    copy = _copy(saved[0], tmp_path)
    damage(copy)
    assert expected in _one_line_error(f"ppo:{copy}")


def test_missing_policies_name_the_path(tmp_path):
    assert "nothing-here" in _one_line_error(f"ppo:{tmp_path / 'nothing-here'}")
    assert "has no policy.safetensors" in _one_line_error(f"ppo:{tmp_path}")
    assert "ppo:PATH" in _one_line_error("ppo")


# ---------------------------------------------------------------- hostile policy files (issue 20, items 7 and 9)

@pytest.mark.parametrize("change, expected", [
    (lambda m: m.update(observation=[1, 2]), '"observation" must be an object'),
    (lambda m: m.update(network=[1, 2]), '"network" must be an object'),
    (lambda m: m["network"].update(net_arch=[64, 32]), "net_arch must give 'pi' and 'vf' lists"),
    (lambda m: m["network"].update(net_arch={"pi": "64", "vf": [48]}), "net_arch must give 'pi' and 'vf' lists"),
    (lambda m: m["network"].update(net_arch={"pi": [64, 32.0], "vf": [48]}), "net_arch must give"),
    (lambda m: m["network"].update(activation=["tanh"]), "activation ['tanh'] is not one of tanh, relu"),
])
def test_policy_json_pieces_of_the_wrong_type_say_what_is_wrong(saved, tmp_path, change, expected):
    """Not "AttributeError: 'list' object has no attribute 'get'": the schema's own words."""
    copy = _copy(saved[0], tmp_path)
    _edit_metadata(copy, change)
    message = _one_line_error(f"ppo:{copy}")
    assert expected in message and "Error" not in message, message


def test_a_policy_json_with_100000_layers_is_refused_at_once_in_a_short_line(saved, tmp_path):
    import time

    copy = _copy(saved[0], tmp_path)
    _edit_metadata(copy, lambda m: m["network"].update(net_arch={"pi": [64] * 100_000, "vf": [48]}))
    start = time.perf_counter()
    message = _one_line_error(f"ppo:{copy}")
    assert time.perf_counter() - start < 5
    assert "at most 32 layer sizes from 1 to 16384" in message and len(message) < 400, message


@pytest.mark.parametrize("layers", [[10**9], [16_384] * 32])
def test_a_huge_layer_is_refused_before_torch_allocates_it(saved, tmp_path, layers):
    """A layer beyond MAX_LAYER_SIZE by the schema; a network within it but far bigger than the
    tensors file by the tensors' shapes, on torch's meta device: no torch allocation message."""
    copy = _copy(saved[0], tmp_path)
    _edit_metadata(copy, lambda m: m["network"].update(net_arch={"pi": layers, "vf": [48]}))
    message = _one_line_error(f"ppo:{copy}")
    assert ("layer sizes from 1 to 16384" in message or "does not match its policy.json network" in message) \
        and "DefaultCPUAllocator" not in message and len(message) < 600, message


def test_a_tensors_file_far_bigger_than_its_network_is_refused_before_it_is_read(saved, tmp_path):
    copy = _copy(saved[0], tmp_path)
    with open(copy / "policy.safetensors", "ab") as file:
        file.write(b"\0" * 2_000_000)
    assert "they do not belong together" in _one_line_error(f"ppo:{copy}")


def test_a_deeply_nested_policy_json_is_one_line_not_a_recursion_error(saved, tmp_path):
    copy = _copy(saved[0], tmp_path)
    metadata = json.loads((copy / "policy.json").read_text())
    text = json.dumps(metadata)[:-1] + ', "deep": ' + "[" * 100_000 + "]" * 100_000 + "}"
    (copy / "policy.json").write_text(text)
    assert "is nested 100001 levels deep; such a file has at most 32" in _one_line_error(f"ppo:{copy}")


def test_a_huge_policy_json_is_refused_by_its_size(saved, tmp_path):
    copy = _copy(saved[0], tmp_path)
    _edit_metadata(copy, lambda m: m.update(note="x" * 2_000_000))
    assert "is larger than 1,000,000 bytes" in _one_line_error(f"ppo:{copy}")


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
def test_weights_that_are_not_finite_are_refused_at_load(saved, tmp_path, value):
    from safetensors.torch import load_file, save_file

    copy = _copy(saved[0], tmp_path)
    tensors = load_file(str(copy / "policy.safetensors"))
    tensors["action_net.weight"][3, 5] = value
    save_file(tensors, str(copy / "policy.safetensors"))
    message = _one_line_error(f"ppo:{copy}")
    assert "tensor action_net.weight holds 1 values that are NaN or infinite" in message, message
