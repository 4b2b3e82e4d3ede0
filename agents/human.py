"""A person at the terminal as an agent: [`HumanAgent`][].

It has the batched interface of every agent (`act(observations, legal_mask, rng) ->
int64[B]`) and asks a person for each row, one game at a time: it shows the table, the
legal moves, and reads a move (`QH`, `10h`, `♥Q`, `T♥`, `NT`, `min`, `♠` ...,
see `sergeant_major_env.terminal_game.parse_move`) until a legal one is typed; a bad line gets
a message and a new prompt. `quit` raises `sergeant_major_env.terminal_game.QuitGame`;
EOFError and KeyboardInterrupt from the input pass through to the caller.

On its own it shows what the observation holds, which is what its seat knows
(`sergeant_major_env.render.observation_view`). A front end that knows the engine
state, like the terminal game (`sergeant-major play`), passes `show` (the seat's table,
`sergeant_major_env.render.seat_view`) and `explain` (`engine.illegal_reason`: the
rule a refused move breaks).

It imports only library modules (`sergeant_major_env.terminal_game`, `sergeant_major_env.render`),
which never import this package. Registered in the agent registry as `"human"`.

A person can sit only at a table shown at a terminal: `sergeant-major play` and
`sergeant-major evaluate --agents human,...` (`check_terminal`, before any game).
Everywhere else (a search's rollouts, training opponents, a benchmark) the name is refused
with one line (`refuse_human`) rather than ending in EOFError from `input()`.

A person is promised a fair table: an agent that sees the hidden cards (`pimc:cheat`,
[`sergeant_major_env.policies.sees_hidden_cards`][]) is refused at it with one line
([`sergeant_major_env.policies.refuse_cheats`][]: `sergeant-major play`, `play --web`,
`evaluate --agents human,...`).
"""

from __future__ import annotations

import sys
from typing import Callable, TextIO

import numpy as np

from sergeant_major_env.terminal_game import ask_move
from sergeant_major_env.render import legal_text, observation_view


NAME = "human"

TERMINAL_RULE = ("human needs a terminal at the table: only `sergeant-major play` and "
                 "`sergeant-major evaluate --agents human,...` seat a person")
"""The one sentence every refusal of the human agent ends with."""


def is_human(spec: object) -> bool:
    """Whether `spec` is the human agent: its name (`human`, `human:...`) or a [`HumanAgent`][]."""
    if isinstance(spec, str):
        return spec.partition(":")[0].strip() == NAME
    return isinstance(spec, HumanAgent)


def check_terminal(names: list[str], flag: str = "--agents", stdin: TextIO | None = None) -> None:
    """ValueError (one line) when one of `names` is the human agent and standard input is
    not a terminal: the person would never be asked, and `input()` would end in EOFError."""
    stdin = sys.stdin if stdin is None else stdin
    if any(map(is_human, names)) and not (stdin is not None and stdin.isatty()):
        raise ValueError(f"{flag} human: standard input is not a terminal; {TERMINAL_RULE}")


def refuse_human(spec: object, where: str, reason: str = "no person is asked there") -> None:
    """ValueError (one line) when `spec` names the human agent where no person is asked:
    `where` says where (`pimc: rollout=human`), `reason` why."""
    if is_human(spec):
        raise ValueError(f"{where}: {reason}; {TERMINAL_RULE}")


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
