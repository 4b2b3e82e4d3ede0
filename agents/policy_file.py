"""Code-free policy files: the tensors in `policy.safetensors`, what they are in `policy.json`.

An SB3 `model.zip` stores some of its fields as cloudpickle, and unpickling can run any
code the file's author chose. The files written here cannot carry code:

* `NAME.safetensors` (the safetensors format: a JSON header of names, dtypes and shapes,
  then raw numbers) holds the policy's parameters under MaskablePPO's own names
  (`mlp_extractor.policy_net.0.weight`, ..., `action_net.*`, the value network
  `mlp_extractor.value_net.*` and `value_net.*`);
* `NAME.json` beside it says what they are: `FORMAT` and `FORMAT_VERSION`, the
  observation layout they were trained on (`sergeant_major_env.observation.VERSION` and its
  size), the number of actions, the network's shape and activation, and whatever the writer
  adds (train.py: the rule options, the command line, timesteps, seed, package versions).

`load_policy` rebuilds the network in plain torch from the JSON and fills it from the
safetensors file: nothing is unpickled, no SB3 is needed. `most_likely_legal` is the
action MaskablePPO's `predict(obs, action_masks=mask, deterministic=True)` returns, computed
the same way, so a loaded policy plays exactly as the model it was saved from.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from sergeant_major_env import files
from sergeant_major_env.cards import NUM_ACTIONS
from sergeant_major_env.limits import check_fits, shorten
from sergeant_major_env.observation import OBSERVATION_SIZE
from sergeant_major_env.observation import VERSION as OBSERVATION_VERSION

FORMAT = "sergeant-major-env policy"
FORMAT_VERSION = 1
TENSORS_FILE = "policy.safetensors"
"""The policy file of a run folder (train.py writes RUN/policy.safetensors and RUN/policy.json)."""

ACTIVATIONS = {"tanh": nn.Tanh, "relu": nn.ReLU}
"""The activations a policy file may name, by the name it uses."""

MASKED_LOGIT = -1e8
"""The logit MaskablePPO gives illegal actions (sb3_contrib's MaskableCategorical)."""

MAX_METADATA_BYTES = 1_000_000
"""Largest policy.json read (train.py writes about 2 KB)."""

MAX_METADATA_DEPTH = 32
"""Deepest nesting of objects and lists in a policy.json (train.py's is 4 levels deep)."""

MAX_LAYERS = 32
"""Most hidden layers of each network (policy, value) a policy file may describe."""

MAX_LAYER_SIZE = 16_384
"""Largest hidden layer a policy file may describe."""

MAX_HEADER_BYTES = 1_000_000
"""Most bytes of a tensors file beyond its numbers (the safetensors header: names, shapes)."""

_OWN_KEYS = ("format", "format_version", "tensors", "observation", "actions", "network")


# ============================================================================ the network

class PolicyNetwork(nn.Module):
    """MaskablePPO's `MlpPolicy` for a flat observation, in plain torch, with the same
    parameter names: separate policy and value MLPs, then `action_net` (logits) and
    `value_net` (the state value)."""

    def __init__(self, observation_size: int, num_actions: int, policy_layers: list[int],
                 value_layers: list[int], activation: str) -> None:
        super().__init__()
        self.mlp_extractor = nn.Module()
        self.mlp_extractor.policy_net = _mlp(observation_size, policy_layers, ACTIVATIONS[activation])
        self.mlp_extractor.value_net = _mlp(observation_size, value_layers, ACTIVATIONS[activation])
        self.action_net = nn.Linear(policy_layers[-1] if policy_layers else observation_size, num_actions)
        self.value_net = nn.Linear(value_layers[-1] if value_layers else observation_size, 1)
        self.eval()
        self.requires_grad_(False)

    def action_logits(self, observations: torch.Tensor) -> torch.Tensor:
        return self.action_net(self.mlp_extractor.policy_net(observations))

    def values(self, observations: torch.Tensor) -> torch.Tensor:
        return self.value_net(self.mlp_extractor.value_net(observations))


def _mlp(width: int, layers: list[int], activation: type[nn.Module]) -> nn.Sequential:
    modules: list[nn.Module] = []
    for size in layers:  # Linear, activation, Linear, activation, ... as SB3's MlpExtractor
        modules += [nn.Linear(width, size), activation()]
        width = size
    return nn.Sequential(*modules)


def most_likely_legal(logits: torch.Tensor, legal_mask: np.ndarray) -> np.ndarray:
    """int64[B]: the most likely legal action of each row, exactly as MaskablePPO's
    deterministic `predict` picks it (`_predict_argmax`, its steps), but faster.

    Those steps (two normalizations, a softmax) are monotone in each logit, and floating-point
    rounding is monotone too, so they keep the order of any two legal logits: they can only
    make two nearly equal ones equal, and then the lower action wins. So where the best legal
    logit beats the runner-up by a clear margin (`CLEAR_MARGIN`, far above those steps'
    rounding), it is the answer; only the rows with a near tie (or no legal action, or a
    non-finite logit) go through predict's own steps."""
    mask = np.asarray(legal_mask, dtype=bool).reshape(logits.shape)
    scores = logits.detach().cpu().numpy()
    masked = np.where(mask, scores, -np.inf)
    rows = np.arange(masked.shape[0])
    best = masked.argmax(axis=1)
    top = masked[rows, best]
    masked[rows, best] = -np.inf
    runner_up = masked.max(axis=1, initial=-np.inf)
    finite = np.isfinite(scores).all(axis=1)
    scale = 1.0 + np.abs(np.where(finite[:, None], scores, 0.0)).max(axis=1, initial=0.0)
    with np.errstate(invalid="ignore"):  # inf - inf in the rows left to predict's steps
        clear = finite & np.isfinite(top) & (top - runner_up > CLEAR_MARGIN * scale)
    chosen = best.astype(np.int64)
    if not clear.all():
        unclear = np.flatnonzero(~clear)
        chosen[unclear] = _predict_argmax(logits[torch.as_tensor(unclear)], mask[unclear])
    return chosen


CLEAR_MARGIN = 1e-4
"""A legal logit ahead of every other by more than this (times 1 + the row's largest absolute
logit) stays ahead through predict's float32 steps, whose rounding errors are about 1e-7 of
the logits' size."""


def _predict_argmax(logits: torch.Tensor, legal_mask: np.ndarray) -> np.ndarray:
    """int64[B]: MaskablePPO's deterministic `predict`, step for step so that ties and rounding
    fall the same way: the logits are normalized (log-softmax over all actions), the illegal
    ones set to -1e8, normalized again, and the argmax of the resulting probabilities is taken."""
    categorical = torch.distributions.Categorical
    mask = torch.as_tensor(np.asarray(legal_mask, dtype=bool), device=logits.device).reshape(logits.shape)
    normalized = categorical(logits=logits, validate_args=False).logits
    masked = torch.where(mask, normalized, torch.tensor(MASKED_LOGIT, dtype=logits.dtype, device=logits.device))
    probs = categorical(logits=masked, validate_args=False).probs
    return probs.argmax(dim=1).cpu().numpy().astype(np.int64)


# ============================================================================ writing

def describe_sb3_policy(policy) -> dict[str, Any]:
    """The `network` entry of policy.json for an SB3 `MaskableActorCriticPolicy`; a
    ValueError if it is not a network `PolicyNetwork` can rebuild."""
    extractor = type(policy.features_extractor).__name__
    if extractor != "FlattenExtractor":
        raise ValueError(f"only MlpPolicy networks (FlattenExtractor) can be saved as a policy file, "
                         f"this one uses {extractor}")
    activation = next((name for name, cls in ACTIVATIONS.items() if policy.activation_fn is cls), None)
    if activation is None:
        raise ValueError(f"policy activation {policy.activation_fn.__name__} cannot be saved as a policy file "
                         f"(known: {', '.join(ACTIVATIONS)})")
    arch = policy.net_arch
    layers = {"pi": list(arch.get("pi", [])), "vf": list(arch.get("vf", []))} if isinstance(arch, dict) \
        else {"pi": list(arch), "vf": list(arch)}  # a list means separate networks of these sizes (SB3 >= 1.8)
    return {"kind": "MaskablePPO MlpPolicy", "net_arch": layers, "activation": activation}


def policy_tensors(policy) -> dict[str, torch.Tensor]:
    """The parameters `PolicyNetwork` needs, copied from an SB3 policy (contiguous,
    on the CPU, as safetensors requires)."""
    state = policy.state_dict()
    network = describe_sb3_policy(policy)["net_arch"]
    wanted = _expected_shapes(int(np.prod(policy.observation_space.shape)), int(policy.action_space.n),
                              network["pi"], network["vf"])
    missing = sorted(set(wanted) - set(state))
    if missing:
        raise ValueError(f"the policy has no parameter {missing[0]} (not a MaskablePPO MlpPolicy?)")
    return {name: state[name].detach().to("cpu").contiguous().clone() for name in wanted}


def save_policy(policy, path_or_folder: str | Path, metadata: dict[str, Any] | None = None) -> Path:
    """Write `policy` (an SB3 `MaskableActorCriticPolicy`) as `NAME.safetensors` plus
    `NAME.json`; `path_or_folder` is the `.safetensors` path or a folder (then
    FOLDER/policy.safetensors). `metadata` (JSON-able) is added to the JSON. Both files are
    written atomically, the tensors first. Returns the `.safetensors` path."""
    return _write_policy(path_or_folder, policy_tensors(policy), describe_sb3_policy(policy),
                         int(np.prod(policy.observation_space.shape)), int(policy.action_space.n), metadata)


def save_network(network: PolicyNetwork, path_or_folder: str | Path, description: dict[str, Any],
                 metadata: dict[str, Any] | None = None) -> Path:
    """Write a `PolicyNetwork` (a loaded policy, trained further in plain torch) as a
    policy file pair, like `save_policy`. `description`: its `network` entry (shape
    and activation), as the policy file it was loaded from has it."""
    tensors = {name: tensor.detach().to("cpu").contiguous().clone() for name, tensor in network.state_dict().items()}
    return _write_policy(path_or_folder, tensors, description, OBSERVATION_SIZE, NUM_ACTIONS, metadata)


def _write_policy(path_or_folder: str | Path, tensors: dict[str, torch.Tensor], network: dict[str, Any],
                  observation_size: int, actions: int, metadata: dict[str, Any] | None) -> Path:
    """Both files, atomically, the tensors first; returns the `.safetensors` path."""
    from safetensors.torch import save

    tensors_path = _tensors_path_for_writing(path_or_folder)
    clash = sorted(set(metadata or {}) & set(_OWN_KEYS))
    if clash:
        raise ValueError(f"policy metadata may not set {', '.join(clash)}: the policy file's writer sets those")
    description = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "tensors": tensors_path.name,
        "observation": {"version": OBSERVATION_VERSION, "size": observation_size},
        "actions": actions,
        "network": network,
        **(metadata or {}),
    }
    files.write_bytes(tensors_path, save(tensors, metadata={"format": FORMAT, "format_version": str(FORMAT_VERSION)}))
    files.write_json(tensors_path.with_suffix(".json"), description)
    return tensors_path


def _tensors_path_for_writing(path_or_folder: str | Path) -> Path:
    path = Path(path_or_folder)
    if path.is_dir():
        return path / TENSORS_FILE
    if path.suffix != ".safetensors":
        raise ValueError(f"policy file {str(path)!r} must end in .safetensors (or be a folder)")
    return path


# ============================================================================ reading

def policy_file_paths(path: str | Path) -> tuple[Path, Path]:
    """(`.safetensors`, `.json`) of `path`: either file of the pair, or a folder (a run
    folder: FOLDER/policy.safetensors). A one-line ValueError when they are not there."""
    path = Path(path)
    if path.is_dir():
        tensors = path / TENSORS_FILE
        if not tensors.is_file():
            raise ValueError(f"folder {str(path)!r} has no {TENSORS_FILE} (a sergeant-major train run folder has one; "
                             f"runs from before policy files only have model.zip, which unpickles: "
                             f"ppo-unsafe-pickle:{path / 'model.zip'} loads it if you trust it)")
    elif path.suffix in (".safetensors", ".json"):
        tensors = path.with_suffix(".safetensors")
    else:
        raise ValueError(f"{str(path)!r} is not a policy file: give a .safetensors file, its .json or a run folder")
    metadata = tensors.with_suffix(".json")
    for needed in (tensors, metadata):
        if not needed.is_file():
            raise ValueError(f"policy file {str(needed)!r} not found (a policy is NAME.safetensors with NAME.json "
                             f"beside it)")
    return tensors, metadata


def read_metadata(path: str | Path) -> dict[str, Any]:
    """The checked policy.json of `path` (see `policy_file_paths`): read with bounds
    (`MAX_METADATA_BYTES`, `MAX_METADATA_DEPTH`), its format, observation layout,
    actions and network described as this package reads them, each problem one line."""
    _, metadata_path = policy_file_paths(path)
    metadata, where = read_described(metadata_path, "policy", "a policy file's", FORMAT, FORMAT_VERSION)
    _check_observation(metadata, where)
    network_layers(metadata, where)
    return metadata


def read_described(metadata_path: Path, kind: str, owner: str, format_name: str, version: int,
                   max_bytes: int = MAX_METADATA_BYTES, max_depth: int = MAX_METADATA_DEPTH) -> tuple[dict, str]:
    """(metadata, its path as messages show it) of the JSON beside a code-free network file: read
    with bounds, its `format` and `format_version` this package's; a one-line ValueError
    naming `kind` (`policy`, `belief`) and `owner` (`a policy file's`)."""
    where = shown_path(metadata_path)
    metadata = files.read_json(metadata_path, max_bytes, max_depth, f"{kind} metadata")
    if not isinstance(metadata, dict) or metadata.get("format") != format_name:
        raise ValueError(f"{where!r} is not {owner} metadata (no \"format\": {format_name!r})")
    if metadata.get("format_version") != version:
        raise ValueError(f"{kind} {where} has format version {shorten(metadata.get('format_version'))}; "
                         f"this package reads version {version}")
    return metadata, where


def _check_observation(metadata: dict[str, Any], where: str) -> None:
    observation = metadata.get("observation")
    if not isinstance(observation, dict):
        raise ValueError(f"policy {where}: \"observation\" must be an object with the observation's \"version\" "
                         f"and \"size\", got {shorten(observation)}")
    version, size = observation.get("version"), observation.get("size")
    if (version, size) != (OBSERVATION_VERSION, OBSERVATION_SIZE):
        raise ValueError(f"model {where} was trained on observation version {shorten(version)} ({shorten(size)} "
                         f"floats); this package observes version {OBSERVATION_VERSION} ({OBSERVATION_SIZE} floats)")
    if metadata.get("actions") != NUM_ACTIONS:
        raise ValueError(f"model {where} has {shorten(metadata.get('actions'))} actions; this package has {NUM_ACTIONS}")


def network_layers(metadata: dict[str, Any], where: str) -> tuple[list[int], list[int], str]:
    """(policy layers, value layers, activation) of policy.json's `network`, checked: an object
    whose `net_arch` gives `pi` and `vf` lists of at most `MAX_LAYERS` layer sizes
    from 1 to `MAX_LAYER_SIZE`, and an `activation` this package knows; a one-line
    ValueError saying what is wrong otherwise."""
    network = metadata.get("network")
    if not isinstance(network, dict):
        raise ValueError(f"policy {where}: \"network\" must be an object (net_arch, activation), got {shorten(network)}")
    layers = network.get("net_arch")
    sizes = [layers.get("pi"), layers.get("vf")] if isinstance(layers, dict) else [None, None]
    if not all(isinstance(s, list) and len(s) <= MAX_LAYERS
               and all(type(n) is int and 1 <= n <= MAX_LAYER_SIZE for n in s) for s in sizes):
        raise ValueError(f"policy {where}: network net_arch must give 'pi' and 'vf' lists of at most {MAX_LAYERS} "
                         f"layer sizes from 1 to {MAX_LAYER_SIZE}, got {shorten(layers)}")
    activation = network.get("activation")
    if not isinstance(activation, str) or activation not in ACTIVATIONS:
        raise ValueError(f"policy {where}: activation {shorten(activation)} is not one of {', '.join(ACTIVATIONS)}")
    return sizes[0], sizes[1], activation


def parameter_count(policy_layers: list[int], value_layers: list[int]) -> int:
    """Numbers in a `PolicyNetwork` of these layers (weights and biases), computed from
    the sizes alone."""
    def mlp(layers: list[int], out: int) -> int:
        widths = [OBSERVATION_SIZE, *layers]
        return sum((a + 1) * b for a, b in zip(widths, widths[1:])) + (widths[-1] + 1) * out
    return mlp(policy_layers, NUM_ACTIONS) + mlp(value_layers, 1)


def shown_path(path: Path) -> str:
    """A file's path as messages show it (unquoted): whole up to 80 characters, else `...` and its end."""
    text = str(path)
    return text if len(text) <= 80 else "..." + text[-77:]


def read_tensors(path: str | Path) -> dict[str, torch.Tensor]:
    """The tensors of a `.safetensors` file (a one-line ValueError if it is not one)."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    try:
        return load_file(str(path), device="cpu")
    except (SafetensorError, OSError, ValueError) as error:
        raise ValueError(f"{str(path)!r} is not a readable safetensors file: {error}") from None


def load_policy(path: str | Path) -> tuple[PolicyNetwork, dict[str, Any]]:
    """(network, metadata) of a policy file or run folder; nothing is unpickled. One-line
    ValueErrors for a missing file, another format, another observation layout, a network
    larger than its tensors file (checked before anything is allocated), tensors that do not
    fit the network the JSON describes, or weights that are not finite (NaN, infinity)."""
    tensors_path, _ = policy_file_paths(path)
    metadata = read_metadata(path)
    where = shown_path(tensors_path)
    policy_layers, value_layers, activation = network_layers(metadata, where)
    _check_size(parameter_count(policy_layers, value_layers), tensors_path, where)
    shapes = _uninitialized(OBSERVATION_SIZE, NUM_ACTIONS, policy_layers, value_layers, activation)  # no memory yet
    tensors = read_tensors(tensors_path)
    _check_tensors(tensors, shapes, where)
    network = shapes.to_empty(device="cpu")
    network.load_state_dict(tensors, strict=True)
    return network, metadata


def _check_size(parameters: int, tensors_path: Path, where: str) -> None:
    """Before a byte of the tensors is read: the tensors file holds the network's parameters
    as float32 plus a header, so a file much bigger than the network its policy.json describes
    is refused, and the tensors must fit this machine's memory (twice: the file's tensors and
    the network's). A network described bigger than its file is refused by the tensors' shapes,
    also before torch allocates it."""
    needed, size = 4 * parameters, tensors_path.stat().st_size
    if size > needed + MAX_HEADER_BYTES:
        raise ValueError(f"policy {where}: its policy.json network has {parameters:,} parameters ({needed:,} bytes "
                         f"as float32), but the tensors file has {size:,} bytes: they do not belong together")
    check_fits(f"policy {where}", 2 * min(size, needed))


def _uninitialized(*network) -> PolicyNetwork:
    """A `PolicyNetwork` (`network`: its arguments) on torch's "meta" device: shapes
    only, nothing initialized. Every number of a loaded policy comes from its file, so neither
    loading nor saving a policy draws from torch's global generator: a league snapshot taken
    or loaded in the middle of training leaves the run's random numbers as they were."""
    with torch.device("meta"):
        return PolicyNetwork(*network)


def _expected_shapes(observation_size: int, num_actions: int, pi: list[int], vf: list[int]) -> dict[str, tuple]:
    return {name: tuple(p.shape) for name, p in
            _uninitialized(observation_size, num_actions, pi, vf, "tanh").state_dict().items()}


def _few(names: list[str], shown: int = 3) -> str:
    """`[a, b, c] and 97 more`: a list a message names without repeating all of it."""
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return f"{[shorten(name) for name in names[:shown]]}{more}"


def _check_tensors(tensors: dict[str, torch.Tensor], network: PolicyNetwork, where: str) -> None:
    check_tensors(tensors, {name: tuple(p.shape) for name, p in network.state_dict().items()}, f"policy {where}",
                  "its policy.json network", "a policy's weights")


def check_tensors(tensors: dict[str, torch.Tensor], expected: dict[str, tuple], what: str, described: str,
                  weights: str, needs: str = "needs") -> None:
    """The tensors of a code-free network file against the shapes its JSON describes: the same
    names, each of its shape, float32, finite; a one-line ValueError naming `what` (the file),
    `described` (what describes the shapes; `needs`: its verb) and `weights` (whose weights
    must be finite)."""
    found = {name: tuple(t.shape) for name, t in tensors.items()}
    if set(found) != set(expected):
        missing, extra = sorted(set(expected) - set(found)), sorted(set(found) - set(expected))
        raise ValueError(f"{what} does not match {described}: missing tensors {_few(missing)}, "
                         f"unexpected tensors {_few(extra)}")
    for name, shape in expected.items():
        if found[name] != shape:
            raise ValueError(f"{what}: tensor {name} has shape {found[name]}, {described} {needs} {shape}")
        if tensors[name].dtype != torch.float32:
            raise ValueError(f"{what}: tensor {name} is {tensors[name].dtype}, expected torch.float32")
        bad = int((~torch.isfinite(tensors[name])).sum())
        if bad:
            raise ValueError(f"{what}: tensor {name} holds {bad:,} values that are NaN or infinite; {weights} are "
                             f"finite numbers")