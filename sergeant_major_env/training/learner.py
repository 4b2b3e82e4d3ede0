"""train.py's learner: a new sb3-contrib MaskablePPO from the options, or the resumed run's checkpoint.

Needs the train extra at import (SB3); train.py imports it after checking that it is there.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from sb3_contrib import MaskablePPO
from stable_baselines3.common.utils import set_random_seed
from stable_baselines3.common.vec_env import VecEnvWrapper

from sergeant_major_env.observation import VERSION as OBSERVATION_VERSION

from sergeant_major_env.agents.policy_file import ACTIVATIONS

from . import run_folder


class ScaleReward(VecEnvWrapper):
    """Rewards times `scale` (the episode infos, in points, are left as they are)."""

    def __init__(self, venv, scale: float) -> None:
        super().__init__(venv)
        self.scale = scale

    def reset(self):
        return self.venv.reset()

    def step_wait(self):
        obs, rewards, dones, infos = self.venv.step_wait()
        return obs, rewards * np.float32(self.scale), dones, infos


def sb3_seed(seed: int) -> int:
    return seed % 2**32  # numpy's global generator (SB3's set_random_seed) takes at most 2**32 - 1


def init_network(config):
    """The policy network `--init` names (`load_policy`:
    code-free, checked), or None for `none`; a one-line ValueError when it cannot be loaded or
    its networks are not the run's (--net-arch, --activation)."""
    if config.init == "none":
        return None
    from sergeant_major_env.agents.learned import policy_source
    from sergeant_major_env.agents.policy_file import load_policy

    name = config.init.removeprefix("ppo:")
    network, metadata = load_policy(policy_source(name))
    layers, activation = metadata["network"]["net_arch"], metadata["network"]["activation"]
    policy, value, run = list(layers["pi"]), list(layers["vf"]), list(config.net_arch)
    if policy != value:
        raise ValueError(f"{config.init} has policy layers {policy} and value layers {value}; a run's two networks "
                         f"have the same sizes (--net-arch)")
    if policy != run or activation != config.activation:
        sizes = ",".join(map(str, policy))
        raise ValueError(f"{config.init} has {sizes} {activation} networks, the run {','.join(map(str, run))} "
                         f"{config.activation}: give --net-arch {sizes} --activation {activation}")
    return network


def new_model(config, venv, init=None) -> MaskablePPO:
    """A MaskablePPO with the run's `TrainConfig` (separate policy and value MLPs),
    its weights those of `init` (`init_network`) when given."""
    model = _new_model(config, venv)
    if init is not None:
        state = {name: tensor.detach().clone() for name, tensor in init.state_dict().items()}
        missing, unexpected = model.policy.load_state_dict(state, strict=False)
        left = [name for name in missing if not name.startswith(("features_extractor", "pi_features_extractor",
                                                                  "vf_features_extractor"))]
        if left or unexpected:  # load_policy checked the shapes: the names are MlpPolicy's
            raise ValueError(f"--init {config.init}: its tensors do not fit the run's network (missing {left[:3]}, "
                             f"unexpected {list(unexpected)[:3]})")
    return model


def _new_model(config, venv) -> MaskablePPO:
    lr = config.learning_rate
    schedule = (lambda remaining: lr * remaining) if config.anneal_lr else lr
    return MaskablePPO(
        "MlpPolicy", venv, learning_rate=schedule, n_steps=config.n_steps, batch_size=config.batch_size,
        n_epochs=config.n_epochs, gamma=config.gamma, gae_lambda=config.gae_lambda, clip_range=config.clip_range,
        ent_coef=config.ent_coef, vf_coef=config.vf_coef, max_grad_norm=config.max_grad_norm,
        policy_kwargs=dict(net_arch=dict(pi=list(config.net_arch), vf=list(config.net_arch)),
                           activation_fn=ACTIVATIONS[config.activation]),
        seed=sb3_seed(config.seed),
        device=config.device, verbose=0)


class SpacesMismatch(ValueError):
    """A checkpoint for other observations or actions: an error, not a broken file to skip."""


def load_checkpoint(config, checkpoints, env, venv) -> tuple[MaskablePPO, Path]:
    """(model, path) of the newest good checkpoint of the resumed run (`checkpoints`, in order),
    loaded for this env with MaskablePPO.load: it unpickles the run's own file. Broken ones are
    skipped with one line each on stderr; a ValueError when none loads or one was made for other
    spaces. The env and the global generators are then seeded past the timesteps done."""
    expected = (tuple(venv.observation_space.shape), int(venv.action_space.n))

    def load(path: Path):
        shape, actions = run_folder.checkpoint_spaces(path)
        if (shape, actions) != expected:
            raise SpacesMismatch(
                f"checkpoint {path} was trained on observations of shape {shape} with {actions} actions; this run's "
                f"env gives shape {expected[0]} with {expected[1]} actions (observation version "
                f"{OBSERVATION_VERSION}, rule options {config.rules.to_dict()})")
        return MaskablePPO.load(path, env=venv, device=config.device)

    path, model = run_folder.load_first_good(list(checkpoints), load, log=lambda line: print(
        f"sergeant-major train: {line}", file=sys.stderr, flush=True), fatal=(SpacesMismatch,))
    done = model.num_timesteps
    set_random_seed(sb3_seed(config.seed + done))
    env.seed(config.seed + done)  # new deals: each slot's next seeds are beyond those already played
    return model, path
