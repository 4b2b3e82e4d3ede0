"""`ppo:PATH`: a policy trained by train.py (sb3-contrib `MaskablePPO`) as a batched agent.

`PATH` is a run folder of train.py (which means `RUN/policy.safetensors`), a
`.safetensors` policy file or its `.json` (`sergeant_major_env.agents.policy_file`). Loading it runs no
code from the file: the network is rebuilt in plain torch from the JSON and filled from the
safetensors file. The policy must take the observation of [`sergeant_major_env.observation`][]
(the same layout version and size) and act in `Discrete(58)`.

`ppo-unsafe-pickle:PATH` loads an SB3 `.zip` (`model.zip`, a checkpoint) with
`MaskablePPO.load`, which unpickles fields stored in the file: a crafted zip runs any code
its author chose. Use it only for files you trust; `ppo:PATH` refuses a zip and says so.

Either way the agent plays deterministically, the most likely legal action under the
action mask, exactly as `MaskablePPO.predict(obs, action_masks=mask, deterministic=True)`,
so `rng` is not used; with `sample=True` it samples from the masked policy with the
caller's `rng` instead (train.py's league snapshots). It runs on the CPU with the
project's torch threads (`sergeant_major_env.agents.torch_setup`). Needs the optional `train`
dependencies (`pip install -e ".[train]"`).

`.metadata` is the policy's metadata (policy.json; for a zip, the run.json of its run
folder if there is one, else `{}`) and `.rules` the rule options it was trained under (a
[`sergeant_major_env.Rules`][sergeant_major_env.rules.Rules], or `None` when unknown).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import numpy as np

from sergeant_major_env import files, limits
from sergeant_major_env.cards import NUM_ACTIONS
from sergeant_major_env.observation import OBSERVATION_SIZE
from sergeant_major_env.rules import Rules

from .base import act_where_legal

UNSAFE_NAME = "ppo-unsafe-pickle"
"""The agent name that loads SB3 zips, which unpickles: the name says the risk."""

TRAIN_EXTRA = 'pip install -e ".[train]"'


def _require_train_extra(what: str) -> None:
    try:
        import safetensors  # noqa: F401
        import torch  # noqa: F401
    except ImportError as error:  # optional dependencies
        raise ValueError(f"cannot load {what}: {error.name} is not installed ({TRAIN_EXTRA})") from None


class PPOAgent:
    """A trained policy acting on whole batches: the most likely legal action of each row, or
    with `sample=True` a sample of the masked policy (softmax of the legal actions' logits,
    drawn by Gumbel-max with the caller's numpy `rng`, so a seeded env stays reproducible).

    `PPOAgent(path)` loads a policy file or run folder (never unpickles);
    [`from_sb3`][] wraps an SB3 `MaskablePPO` model already in memory (train.py's live
    learner, or a zip loaded by `load_unsafe_pickle`). `name` defaults to `ppo:PATH`."""

    needs_observations = True

    def __init__(self, path: str | Path, name: str | None = None, sample: bool = False) -> None:
        text = str(path)
        refuse_pickled_model(text)
        _require_train_extra(f"policy {text!r}")
        from .policy_file import load_policy
        from .torch_setup import use_torch_threads

        use_torch_threads()
        network, metadata = load_policy(text)
        self._setup(name or f"ppo:{text}", text, network.action_logits, metadata, sample)
        self._network = network

    @classmethod
    def from_sb3(cls, model, name: str = "ppo", metadata: dict[str, Any] | None = None,
                 sample: bool = False) -> "PPOAgent":
        """An agent on an SB3 `MaskablePPO` model (its policy network, as it is now)."""
        _check_sb3_spaces(model, name)
        policy = model.policy

        def logits(observations):
            features = policy.extract_features(observations.to(policy.device), policy.pi_features_extractor)
            return policy.action_net(policy.mlp_extractor.forward_actor(features))

        agent = cls.__new__(cls)
        agent._setup(name, name, logits, dict(metadata or {}), sample)
        return agent

    def _setup(self, name: str, path: str, logits: Callable, metadata: dict[str, Any], sample: bool) -> None:
        self.name, self.path, self.sample = name, path, sample
        self._logits = logits
        self.metadata = metadata
        self.rules = _rules_of(metadata, name)
        self.fallbacks = 0  # actions chosen outside the mask (replaced; stays 0 with most_likely_legal)
        self._network, self._weights = None, None

    def compiled_network(self):
        """The network as `agents.network_kernels.NetworkWeights` for compiled loops (the
        search's rollouts), or None: only for a policy loaded from a file (its weights never
        change) that plays its most likely action. Made once."""
        if self.sample or self._network is None:
            return None
        if self._weights is None:
            from .network_kernels import network_weights

            self._weights = network_weights(self._network)
        return self._weights

    @property
    def deterministic(self) -> bool:
        """The most likely action depends on each game's observation alone (sergeant_major_env.
        policies); a sampled one on the caller's `rng`."""
        return not self.sample

    def act(self, observations: np.ndarray, legal_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        legal_mask = np.asarray(legal_mask, dtype=bool)
        if self.sample:
            return act_where_legal(legal_mask, lambda rows: self._sampled(observations, legal_mask, rows, rng))
        return act_where_legal(legal_mask, lambda rows: self._most_likely(observations, legal_mask, rows))

    def _logits_of(self, observations: np.ndarray, rows: np.ndarray):
        import torch

        obs = torch.as_tensor(np.asarray(observations, dtype=np.float32)[rows])
        with torch.no_grad():
            return self._logits(obs)

    def _sampled(self, observations: np.ndarray, legal_mask: np.ndarray, rows: np.ndarray,
                 rng: np.random.Generator) -> np.ndarray:
        logits = self._logits_of(observations, rows).cpu().numpy().astype(np.float64)
        logits += rng.gumbel(size=logits.shape)  # argmax of logits + Gumbel noise: a softmax sample
        logits[~legal_mask[rows]] = -np.inf
        return logits.argmax(axis=1).astype(np.int64)

    def _most_likely(self, observations: np.ndarray, legal_mask: np.ndarray, rows: np.ndarray) -> np.ndarray:
        from .policy_file import most_likely_legal

        chosen = most_likely_legal(self._logits_of(observations, rows), legal_mask[rows])
        ok = legal_mask[rows, chosen]
        if not ok.all():  # never expected with a mask; keep the legality contract regardless
            self.fallbacks += int((~ok).sum())
            chosen[~ok] = legal_mask[rows[~ok]].argmax(axis=1)
        return chosen

    def __repr__(self) -> str:
        return f"PPOAgent({self.name!r})"


def _rules_of(metadata: dict[str, Any], name: str) -> Rules | None:
    if not metadata.get("rules"):
        return None
    try:
        return Rules.from_dict(metadata["rules"])
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name}: its metadata's rule options are not valid: {error}") from None


def _check_sb3_spaces(model, name: str) -> None:
    obs_shape = tuple(getattr(model.observation_space, "shape", None) or ())
    n_actions = getattr(model.action_space, "n", None)
    if obs_shape != (OBSERVATION_SIZE,) or n_actions != NUM_ACTIONS:
        raise ValueError(
            f"PPO model {name!r} has observation shape {obs_shape} and {n_actions} actions; "
            f"expected ({OBSERVATION_SIZE},) and {NUM_ACTIONS} (this package's observation and action space)")


# ============================================================================ SB3 zips: behind the opt-in

def _zip_path(text: str) -> Path | None:
    """The existing SB3 zip `text` names (`model.zip`, or `model` as MaskablePPO.load
    allows), or None."""
    for candidate in (Path(text), Path(text + ".zip")):
        if candidate.suffix == ".zip" and candidate.is_file():
            return candidate
    return None


def refuse_pickled_model(text: str) -> None:
    """A one-line ValueError when `ppo:text` names an SB3 zip: loading it would unpickle."""
    zip_path = _zip_path(text)
    if zip_path is None:
        return
    run = _run_folder_of(zip_path)
    instead = (f"ppo:{run} (its policy.safetensors)" if run is not None and (run / "policy.safetensors").is_file()
               else "a run folder or policy.safetensors written by sergeant-major train")
    raise ValueError(f"ppo:{text} is an SB3 zip: loading it unpickles data stored in the file, which can run any "
                     f"code; use {instead}, or {UNSAFE_NAME}:{text} only if you trust the file")


def _run_folder_of(zip_path: Path) -> Path | None:
    """The train.py run folder holding `zip_path` (RUN/model.zip or RUN/checkpoints/X.zip), or None."""
    for folder in (zip_path.parent, zip_path.parent.parent):
        if (folder / "run.json").is_file() or (folder / "policy.safetensors").is_file():
            return folder
    return None


def load_unsafe_pickle(text: str) -> PPOAgent:
    """`ppo-unsafe-pickle:PATH`: `MaskablePPO.load` of an SB3 zip. THIS UNPICKLES THE FILE:
    a crafted zip runs its author's code here. Only for files you trust."""
    zip_path = _zip_path(text)
    if zip_path is None:
        raise ValueError(f"PPO model file not found: {text!r} ({UNSAFE_NAME}:PATH takes an SB3 .zip saved with "
                         f"model.save; for a run folder or policy.safetensors use ppo:PATH, which never unpickles)")
    try:
        from sb3_contrib import MaskablePPO
    except ImportError as error:  # optional dependency
        raise ValueError(f"cannot load PPO model {str(zip_path)!r}: {error.name} is not installed "
                         f"({TRAIN_EXTRA})") from None
    from .torch_setup import use_torch_threads

    use_torch_threads()
    try:
        model = MaskablePPO.load(zip_path, device="cpu")
    except Exception as error:  # a corrupt or foreign file: say which one
        raise ValueError(f"cannot load a MaskablePPO model from {str(zip_path)!r}: "
                         f"{type(error).__name__}: {error}".splitlines()[0]) from None
    return PPOAgent.from_sb3(model, f"{UNSAFE_NAME}:{text}", metadata=_run_metadata(zip_path))


def _run_metadata(zip_path: Path) -> dict[str, Any]:
    """The run.json of the zip's run folder (plain JSON: safe to read), or {}."""
    run = _run_folder_of(zip_path)
    if run is None or not (run / "run.json").is_file():
        return {}
    try:
        metadata = files.read_json(run / "run.json", limits.RUN_RECORD_BYTES, limits.RUN_RECORD_DEPTH, "run file")
    except ValueError:
        return {}
    return metadata if isinstance(metadata, dict) else {}


# ============================================================================ factories

def make_ppo_agent(argument: str | None) -> PPOAgent:
    """The `make_agent` factory of `ppo:PATH`."""
    if not argument:
        raise ValueError("agent 'ppo' needs a trained policy: 'ppo:PATH' with a sergeant-major train run folder, its "
                         "policy.safetensors or policy.json (e.g. ppo:runs/quick)")
    if not Path(argument).exists() and _zip_path(argument) is None:
        raise ValueError(f"PPO policy not found: {argument!r} (expected a sergeant-major train run folder, a "
                         f".safetensors policy file or its .json)")
    return PPOAgent(argument)


def make_unsafe_ppo_agent(argument: str | None) -> PPOAgent:
    """The `make_agent` factory of `ppo-unsafe-pickle:PATH`."""
    if not argument:
        raise ValueError(f"agent '{UNSAFE_NAME}' needs the path of an SB3 MaskablePPO zip: '{UNSAFE_NAME}:PATH' "
                         f"(it unpickles the file: only for files you trust)")
    return load_unsafe_pickle(argument)
