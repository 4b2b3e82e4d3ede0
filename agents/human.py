"""A person at the terminal as an agent: :class:`HumanAgent`.

It has the batched interface of every agent (``act(observations, legal_mask, rng) ->
int64[B]``) and asks a person for each row, one game at a time: it shows the table, the
legal moves, and reads a move (``QH``, ``10h``, ``♥Q``, ``T♥``, ``NT``, ``min``, ``♠`` ...,
see :func:`sergeant_major_env.play.parse_move`) until a legal one is typed; a bad line gets
a message and a new prompt. ``quit`` raises :class:`sergeant_major_env.play.QuitGame`;
EOFError and KeyboardInterrupt from the input pass through to the caller.

On its own it shows what the observation holds, which is what its seat knows
(:func:`sergeant_major_env.render.observation_view`). A front end that knows the engine
state, like the terminal game (``sergeant-major play``), passes ``show`` (the seat's table,
:func:`sergeant_major_env.render.seat_view`) and ``explain`` (``engine.illegal_reason``: the
rule a refused move breaks).

It imports only library modules (``sergeant_major_env.play``, ``sergeant_major_env.render``),
which never import this package. Registered in the agent registry as ``"human"``.
"""

from __future__ import annotations

import sys
from typing import Callable, TextIO

import numpy as np

from sergeant_major_env.play import ask_move
from sergeant_major_env.render import legal_text, observation_view


class HumanAgent:
    """Asks a person for every decision (see the module docstring)."""

    name = "human"
    needs_observations = True

    def __init__(self, input_fn: Callable[[str], str] = input, output: TextIO | None = None,
                 show: Callable[[], str] | None = None, explain: Callable[[int], str] | None = None,
                 prompt: str = "your move> ") -> None:
        self.input_fn = input_fn
        self.output = output
        self.show = show
        self.explain = explain
        self.prompt = prompt

    def act(self, observations: np.ndarray, legal_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        legal_mask = np.asarray(legal_mask, dtype=bool)
        observations = np.asarray(observations)
        actions = np.zeros(legal_mask.shape[0], dtype=np.int64)
        out = self.output if self.output is not None else sys.stdout
        for row in range(legal_mask.shape[0]):  # a person decides one game at a time
            if not legal_mask[row].any():
                continue  # a finished game: nothing to decide
            show = self.show or (lambda: observation_view(observations[row]))
            print(show(), file=out)
            print(f"legal: {legal_text(legal_mask[row])}", file=out)
            actions[row] = ask_move(legal_mask[row], self.input_fn, out, self.prompt, explain=self.explain, show=show)
        return actions

    def __repr__(self) -> str:
        return "HumanAgent()"
