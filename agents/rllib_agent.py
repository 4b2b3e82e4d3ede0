"""`rllib-unsafe-pickle:PATH`: a policy trained with RLlib's PPO (`examples/rllib_selfplay.py`) as a batched agent.

Loading an RLlib checkpoint UNPICKLES its `class_and_ctor_args.pkl` (and RLlib's state
files), which can run any code stored there: the agent's name says so, and the short name
`rllib:PATH` refuses with one line (agents/__init__.py). Load only checkpoints you trust.

`PATH` is either a checkpoint folder written by `Algorithm.save_to_path` (as
`examples/rllib_selfplay.py` does at the end of training), whose learner module
`shared` is taken, or one RLModule folder inside it
(`PATH/learner_group/learner/rl_module/seat_0` for a `--policy per-seat` run). The agent
plays deterministically: the most likely legal action under the action mask, so `rng` is
not used. It runs on the CPU, one forward pass per batch.

This module also holds the two RLModule classes the training script uses, because a
checkpoint names its module class by import path and both the Ray workers and
`evaluate.py` must import it from a place that does not move:

* `MaskedPPOTorchRLModule`: RLlib's default PPO network on the `observation` part
  of the env's `Dict(observation, action_mask)` observation; illegal actions get a logit
  of `FLOAT_MIN` in every forward pass (sampling, inference and the PPO loss), so they are
  never chosen and never learned about.
* `FixedAgentRLModule`: any agent of [`agents`][] (`heuristic`, `greedy`, ...)
  as a non-trainable RLlib module, for fixed opponents in training.

Needs the optional `rllib` dependencies: `pip install "sergeant-major-env[rllib]"`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

try:
    import torch
    from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.rl_module import RLModule
    from ray.rllib.utils.torch_utils import FLOAT_MIN
except ImportError as _error:  # the optional extra is missing: say how to get it
    raise ImportError(f"the rllib-unsafe-pickle:PATH agent needs Ray RLlib and torch: pip install \"sergeant-major-env[rllib]\" "
                      f"({_error})") from _error

from sergeant_major_env.cards import NUM_ACTIONS
from sergeant_major_env.observation import OBSERVATION_SIZE

from .base import act_where_legal

OBSERVATION_KEY = "observation"  # the keys of the PettingZoo env's observation dict
MASK_KEY = "action_mask"
SHARED_MODULE = "shared"  # the learner's module id when the three seats share one policy
MODULES_FOLDER = Path("learner_group", "learner", "rl_module")  # inside an Algorithm checkpoint
CLASS_FILE = "class_and_ctor_args.pkl"  # in every RLlib checkpoint folder (component)


# ============================================================================ RLModules

def _split_observation(batch: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """(action mask, a shallow copy of `batch` whose OBS is the bare observation).

    The batch is copied, not changed: RLlib passes the same batch to `compute_values` and
    then to `_forward_train`, and each needs the dict observation."""
    observation = batch[Columns.OBS]
    if not isinstance(observation, dict) or MASK_KEY not in observation:
        raise ValueError(f"MaskedPPOTorchRLModule needs the dict observation {{{OBSERVATION_KEY!r}, {MASK_KEY!r}}} "
                         f"of the PettingZoo env, got {type(observation).__name__}")
    inner = dict(batch)
    inner[Columns.OBS] = observation[OBSERVATION_KEY]
    return observation[MASK_KEY], inner


def _mask_logits(outputs: dict[str, Any], mask) -> dict[str, Any]:
    logits = outputs[Columns.ACTION_DIST_INPUTS]
    # FLOAT_MIN (not -inf) keeps the softmax finite for rows with no legal action (game over).
    outputs[Columns.ACTION_DIST_INPUTS] = torch.where(mask.bool(), logits, torch.full_like(logits, FLOAT_MIN))
    return outputs


class MaskedPPOTorchRLModule(DefaultPPOTorchRLModule):
    """RLlib's default PPO actor-critic that reads `observation` and honours `action_mask`."""

    def __init__(self, *args, observation_space=None, **kwargs) -> None:
        # The networks are built for the bare observation; the dict space (with the mask) is
        # put back after setup so that RLlib's connectors still see the env's space.
        self._dict_space = observation_space
        super().__init__(*args, observation_space=observation_space[OBSERVATION_KEY], **kwargs)

    def setup(self) -> None:
        super().setup()
        self.observation_space = self._dict_space

    def _forward(self, batch, **kwargs):
        mask, inner = _split_observation(batch)
        return _mask_logits(super()._forward(inner, **kwargs), mask)

    def _forward_train(self, batch, **kwargs):
        mask, inner = _split_observation(batch)
        return _mask_logits(super()._forward_train(inner, **kwargs), mask)

    def compute_values(self, batch, embeddings=None):
        if embeddings is None:
            _, batch = _split_observation(batch)
        return super().compute_values(batch, embeddings)


class FixedAgentRLModule(RLModule):
    """A project agent (`model_config={"agent": "heuristic", "seed": 0}`) as a fixed RLlib policy.

    It decides with the agent's batched `act` on the env runner's batch (numpy on the CPU)
    and has no weights; keep it out of `policies_to_train`."""

    def setup(self) -> None:
        from . import make_agent  # imported here: the env runners build this module

        self.agent = make_agent(self.model_config["agent"])
        self.rng = np.random.default_rng(self.model_config.get("seed"))

    def _forward(self, batch, **kwargs):
        observation = batch[Columns.OBS]
        obs = np.asarray(observation[OBSERVATION_KEY], dtype=np.float32)
        mask = np.asarray(observation[MASK_KEY]).astype(bool)
        return {Columns.ACTIONS: np.asarray(self.agent.act(obs, mask, self.rng), dtype=np.int64)}

    def _forward_train(self, batch, **kwargs):
        raise NotImplementedError(f"the fixed agent {self.model_config['agent']!r} is not trainable: "
                                  f"keep it out of policies_to_train")

    def get_state(self, *args, **kwargs) -> dict:
        return {}

    def set_state(self, state) -> None:
        pass


# ============================================================================ the agent

def _module_folders(folder: Path) -> list[Path]:
    """The RLModule folders directly inside `folder` (each holds its class and constructor args)."""
    return sorted(p for p in folder.iterdir() if (p / CLASS_FILE).is_file())


def find_module_folder(path: str | Path) -> Path:
    """The RLModule folder of `path` (see the module docstring); a ValueError names the problem."""
    path = Path(path)
    if not path.is_dir():
        problem = "is a file, not a folder" if path.exists() else "not found"
        raise ValueError(f"RLlib checkpoint {str(path)!r} {problem} (expected a checkpoint folder written by "
                         f"RLlib's Algorithm.save_to_path, or an RLModule folder inside it)")
    if (path / MODULES_FOLDER).is_dir():  # an Algorithm checkpoint
        modules_root = path / MODULES_FOLDER
    elif (path / CLASS_FILE).is_file():
        if not _module_folders(path):  # one module's folder
            return path
        modules_root = path  # the folder of a MultiRLModule (.../rl_module)
    else:
        raise ValueError(f"{str(path)!r} is not an RLlib checkpoint: it has neither {str(MODULES_FOLDER)!r} "
                         f"(an Algorithm checkpoint) nor {CLASS_FILE} (an RLModule checkpoint)")
    if (modules_root / SHARED_MODULE / CLASS_FILE).is_file():
        return modules_root / SHARED_MODULE
    names = ", ".join(f"rllib-unsafe-pickle:{folder}" for folder in _module_folders(modules_root))
    raise ValueError(f"RLlib checkpoint {str(path)!r} has no {SHARED_MODULE!r} module; name one of its modules' "
                     f"folders instead: {names}")


class RLlibAgent:
    """A `MaskedPPOTorchRLModule` loaded on the CPU, acting greedily on whole batches."""

    needs_observations = True

    def __init__(self, path: str | Path, module=None) -> None:
        from .torch_setup import use_torch_threads

        use_torch_threads()
        self.path = str(path)
        self.name = f"rllib-unsafe-pickle:{self.path}"
        self.module = module if module is not None else self._load(find_module_folder(path))
        self._check_spaces()
        self.module.eval()

    def _load(self, folder: Path):
        try:
            return RLModule.from_checkpoint(str(folder.resolve()))
        except Exception as error:  # a foreign or broken folder: say which one
            raise ValueError(f"cannot load an RLlib RLModule from {str(folder)!r}: "
                             f"{type(error).__name__}: {error}") from None

    def _check_spaces(self) -> None:
        if not isinstance(self.module, MaskedPPOTorchRLModule):
            raise ValueError(f"RLlib module {self.path!r} is a {type(self.module).__name__}, not a trained "
                             f"MaskedPPOTorchRLModule (a fixed opponent's module or another checkpoint?)")
        space = getattr(self.module, "observation_space", None)
        try:
            obs_shape = tuple(space[OBSERVATION_KEY].shape)
        except (KeyError, TypeError):
            obs_shape = None
        n_actions = getattr(getattr(self.module, "action_space", None), "n", None)
        if obs_shape != (OBSERVATION_SIZE,) or n_actions != NUM_ACTIONS:
            raise ValueError(
                f"RLlib module {self.path!r} takes observation shape {obs_shape} and {n_actions} actions; expected a "
                f"dict observation with {OBSERVATION_KEY!r} of shape ({OBSERVATION_SIZE},) and {NUM_ACTIONS} actions "
                f"(this package's PettingZoo env, as the docs' Beyond one machine page trains it)")

    def act(self, observations: np.ndarray, legal_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        legal_mask = np.asarray(legal_mask, dtype=bool)
        return act_where_legal(legal_mask, lambda rows: self._most_likely(observations, legal_mask, rows))

    def _most_likely(self, observations: np.ndarray, legal_mask: np.ndarray, rows: np.ndarray) -> np.ndarray:
        batch = {Columns.OBS: {
            OBSERVATION_KEY: torch.from_numpy(np.ascontiguousarray(observations[rows], dtype=np.float32)),
            MASK_KEY: torch.from_numpy(legal_mask[rows]),
        }}
        with torch.no_grad():
            logits = self.module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
        # The module already masked the logits; the argmax is therefore a legal action.
        return logits.argmax(dim=-1).numpy()

    def __repr__(self) -> str:
        return f"RLlibAgent({self.path!r})"


def make_rllib_agent(argument: str | None) -> RLlibAgent:
    """The `make_agent` factory of `rllib-unsafe-pickle:PATH` (it unpickles the checkpoint)."""
    if not argument:
        raise ValueError("agent 'rllib-unsafe-pickle' needs the path of an RLlib checkpoint: "
                         "'rllib-unsafe-pickle:PATH' (e.g. rllib-unsafe-pickle:runs/rllib/checkpoint; it unpickles "
                         "the checkpoint: only checkpoints you trust)")
    return RLlibAgent(argument)
