"""``ppo:PATH``: a trained sb3-contrib ``MaskablePPO`` policy as a batched agent.

``PATH`` is a model saved with ``model.save(...)`` (a ``.zip``; the suffix may be left
out, as ``MaskablePPO.load`` allows). The model must take the observation of
:mod:`sergeant_major_env.observation` (``Box(float32, (OBSERVATION_SIZE,))``) and act in
``Discrete(58)``. It plays deterministically (the most likely legal action under the
action mask), so ``rng`` is not used. Needs the optional ``train`` dependencies
(``pip install -e ".[train]"``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sergeant_major_env.cards import NUM_ACTIONS
from sergeant_major_env.observation import OBSERVATION_SIZE

from .base import act_where_legal


def _resolve(path: str | Path) -> Path:
    text = str(path)
    candidates = [Path(text)] + ([] if text.endswith(".zip") else [Path(text + ".zip")])
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise ValueError(f"PPO model file not found: {text!r} (expected a MaskablePPO .zip saved with model.save)")


class PPOAgent:
    """A ``MaskablePPO`` model loaded on the CPU, acting on whole batches with ``predict``."""

    needs_observations = True

    def __init__(self, path: str | Path, model=None) -> None:
        self.path = str(path)
        self.name = f"ppo:{self.path}"
        if model is None:
            model = self._load(_resolve(path))
        self._check_spaces(model)
        self.model = model
        self.fallbacks = 0  # actions the model chose outside the mask (replaced; should stay 0)

    @staticmethod
    def _load(path: Path):
        try:
            from sb3_contrib import MaskablePPO
        except ImportError as error:  # optional dependency
            raise ValueError(f"cannot load PPO model {str(path)!r}: sb3-contrib is not installed "
                             f"(pip install -e \".[train]\"): {error}") from None
        try:
            return MaskablePPO.load(path, device="cpu")
        except Exception as error:  # a corrupt or foreign file: say which one
            raise ValueError(f"cannot load a MaskablePPO model from {str(path)!r}: "
                             f"{type(error).__name__}: {error}") from None

    def _check_spaces(self, model) -> None:
        obs_shape = tuple(getattr(model.observation_space, "shape", None) or ())
        n_actions = getattr(model.action_space, "n", None)
        if obs_shape != (OBSERVATION_SIZE,) or n_actions != NUM_ACTIONS:
            raise ValueError(
                f"PPO model {self.path!r} has observation shape {obs_shape} and {n_actions} actions; "
                f"expected ({OBSERVATION_SIZE},) and {NUM_ACTIONS} (this package's observation and action space)")

    def act(self, observations: np.ndarray, legal_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        legal_mask = np.asarray(legal_mask, dtype=bool)
        return act_where_legal(legal_mask, lambda rows: self._predict(observations, legal_mask, rows))

    def _predict(self, observations: np.ndarray, legal_mask: np.ndarray, rows: np.ndarray) -> np.ndarray:
        obs = np.asarray(observations, dtype=np.float32)[rows]
        chosen, _ = self.model.predict(obs, action_masks=legal_mask[rows], deterministic=True)
        chosen = np.asarray(chosen, dtype=np.int64).reshape(-1)
        ok = (chosen >= 0) & (chosen < NUM_ACTIONS)
        ok[ok] = legal_mask[rows[ok], chosen[ok]]
        if not ok.all():  # never expected with a mask; keep the legality contract regardless
            self.fallbacks += int((~ok).sum())
            chosen[~ok] = legal_mask[rows[~ok]].argmax(axis=1)
        return chosen

    def __repr__(self) -> str:
        return f"PPOAgent({self.path!r})"


def make_ppo_agent(argument: str | None) -> PPOAgent:
    """The ``make_agent`` factory of ``ppo:PATH``."""
    if not argument:
        raise ValueError("agent 'ppo' needs the path of a MaskablePPO model: 'ppo:PATH' (e.g. ppo:runs/model.zip)")
    return PPOAgent(argument)
