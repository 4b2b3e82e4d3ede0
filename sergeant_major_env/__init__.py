"""sergeant-major-env: a batched engine and RL environments for the card game 3-5-8."""

# First, before numpy and the rest: when this process is the sergeant-major command, a stop
# signal while the package loads is the command's one line, not a traceback (interrupts.py).
from . import interrupts as _interrupts

_interrupts.guard_command_start()

from .rules import Rules  # noqa: E402

__version__ = "0.4.0"
__all__ = ["Rules", "__version__", "env", "raw_env", "sergeant_major_v0"]

# Environments (part of the "environments" issue). The SB3 vector env needs the optional
# stable-baselines3 dependency, so it is imported on first use.
from .policies import Policy, RandomPolicy  # noqa: E402
from .single_seat import ENV_ID, SergeantMajorEnv  # noqa: E402  (registers "SergeantMajor-v0")

__all__ += ["Policy", "RandomPolicy", "SergeantMajorEnv", "ENV_ID", "SergeantMajorVectorEnv", "SergeantMajorVecEnv"]

# Loaded on first use: the PettingZoo AEC env (imports PettingZoo), the Gymnasium vector env
# and the SB3 vector env (needs the optional stable-baselines3). One module __getattr__ serves them all: name -> module.
# ``env`` and ``raw_env`` are the current version's, ``sergeant_major_v0`` (the versioned name,
# PettingZoo's way: ``from sergeant_major_env import sergeant_major_v0``); see ``versions``.
_LAZY = {"env": ".sergeant_major_v0", "raw_env": ".sergeant_major_v0", "SergeantMajorVecEnv": ".vec_env",
         "SergeantMajorVectorEnv": ".gym_vector"}
_SUBMODULES = ("sergeant_major_v0",)


def __getattr__(name: str):
    import importlib

    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
