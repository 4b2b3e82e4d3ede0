"""sergeant-major-env: a batched engine and RL environments for the card game 3-5-8."""

from .rules import Rules

__version__ = "0.1.0"
__all__ = ["Rules", "__version__"]
