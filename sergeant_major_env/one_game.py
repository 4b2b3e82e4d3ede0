"""One game, one kernel call a decision: the fast path of the one-game views.

The PettingZoo AEC env, the OpenSpiel game, the single-seat env's table, `play` and the
web page step one game at a time. Through the batched API a decision there is five calls
([`engine.legal_bits`][], the mask, [`observation.observe`][], the action, [`engine.step`][]),
each with numpy's and numba's fixed costs, which at one game are the whole cost. A
[`OneGame`][] keeps a batch-of-one [`State`][] together with
its decision's legal actions, action mask and the acting seat's observation, and
[`OneGame.step`][] does all of it in one compiled call: check the action against the legal
actions (as [`engine.step`][] does, the state unchanged on a refusal), apply it with the
engine's own rules kernel (`engine._apply_k`), then compute the next decision's legal
actions, mask and observation (`observation._observe_row`, the same code as
[`observation.observe`][]). Same games, same numbers as the batched API, bit for bit
(tests/test_one_game.py).

```pycon
>>> from sergeant_major_env import Rules, engine
>>> from sergeant_major_env.one_game import DEAL_ENDED, OneGame
>>> game = OneGame(engine.init([7], Rules(num_deals=1)))
>>> int(game.mask.sum())        # the playmaker's six modes (R8)
6
>>> status = game.step(52)      # mode ♠
>>> game.observation.shape
(919,)
>>> (status & 3) - 1, status >> 2 & 7, bool(status & DEAL_ENDED)  # seat 0 discards (R17, section 5)
(0, 3, False)

```

The arrays `legal` (uint64[1]), `mask` (int8[58]) and `observation` (float32[919], the
view of the seat to act, or of `seat` when one is fixed) are rewritten in place at every
step: copy them to keep them. After changing `state` by other means (`engine.set_cards`,
a reset) or the attributes `seat` and `autoreset`, call [`OneGame.refresh`][].
"""

from __future__ import annotations

import numpy as np

from .cards import NUM_ACTIONS
from .engine import DEAL_ENDED as _DEAL_ENDED_FIELD
from .engine import (MODES_USED, OVER, PHASE, TO_ACT, TRICK, HANDS, MODE_, IllegalActionError, State,
                     _apply_k, _illegal_message, _legal_game_k, _state_k)
from .jit import buffer_view, compile_ahead, kernel
from .observation import OBSERVATION_SIZE, _fields, _observe_row


# The arrays a OneGame keeps beside its state, as views of one uint8 buffer (one argument for
# the kernel to dispatch, not eight): byte offsets of each. The settings (autoreset, the rule
# code, the fixed seat or -1) travel in it too: numba's dispatch costs about 50 ns an argument.
_SETTINGS, _LEGAL, _PLANES, _KEYS, _ORDER = 0, 3 * 8, 4 * 8, 18 * 8, 70 * 8
_OBSERVATION = 122 * 8
_MASK = _OBSERVATION + 4 * OBSERVATION_SIZE
_SCRATCH_BYTES = _MASK + NUM_ACTIONS

REFUSED = -1
"""`_one_step_k`'s status for a refused action. Any other status says what follows the
step: `status & 3` is the seat to act + 1 (0 once the game is over), `status >> 2 & 7` the
phase (`engine.DECISIONS`' index, `engine.OVER`), `status & DEAL_ENDED` whether this step
ended a deal (`state.deal_ended`): what a view reads after every step, without three numpy
reads of the state."""
DEAL_ENDED = 32
"""The bit set in a status (the statuses: [`REFUSED`][]) when the step ended a deal."""


@kernel(ahead="one game", seconds=30, signature="int64, uint8[::1], uint8[::1]")
def _one_step_k(action, buffer, scratch) -> int:
    """Game 0 of `buffer`: with `action` >= 0, refuse it ([`REFUSED`][], nothing changed)
    unless the game is over or the legal actions in `scratch` hold it, else apply it; then the
    decision's legal actions and mask and, when the seat to act (or the fixed seat, if >= 0) is
    a seat, its observation into `scratch`; returns the status ([`REFUSED`][]). `action`
    -1 only refreshes."""
    settings = buffer_view(scratch, _SETTINGS, np.int64, 3)  # autoreset, rules, the fixed seat or -1
    legal = buffer_view(scratch, _LEGAL, np.uint64, 1)
    planes = buffer_view(scratch, _PLANES, np.uint64, (1, 14))  # the observation's card sets
    keys, order = buffer_view(scratch, _KEYS, np.uint64, 52), buffer_view(scratch, _ORDER, np.int64, 52)  # dealing's
    observation = buffer_view(scratch, _OBSERVATION, np.float32, OBSERVATION_SIZE)
    mask = buffer_view(scratch, _MASK, np.uint8, NUM_ACTIONS)
    s = _state_k(buffer)
    if action >= 0 and s[PHASE][0] != OVER:
        if action >= 64 or not (legal[0] >> np.uint64(action)) & np.uint64(1):
            return REFUSED
        _apply_k(s, 0, action, settings[0] != 0, 1, settings[1], keys, order)
    bits = _legal_game_k(s[PHASE], s[TO_ACT], s[HANDS], s[MODES_USED], s[TRICK], s[MODE_], 0, settings[1])
    legal[0] = bits
    for a in range(mask.size):
        mask[a] = (bits >> np.uint64(a)) & np.uint64(1)
    to_act = np.int64(s[TO_ACT][0])
    seat = settings[2] if settings[2] >= 0 else to_act
    if seat >= 0:
        _observe_row(0, seat, _fields(buffer), observation, planes[:0], planes[0])
    return (to_act + 1) | np.int64(s[PHASE][0]) << 2 | (DEAL_ENDED if s[_DEAL_ENDED_FIELD][0] else 0)


def compile_kernels() -> None:
    """Compiles what a one-game view needs (the start of a game and `_one_step_k`) where
    the disk cache lacks it, on every core at once (`jit.compile_ahead`; once per process,
    one line on stderr). A view calls it before `engine.init` makes its first game, which would
    otherwise compile the batched game's kernels."""
    compile_ahead("one game", "the one-game kernels")


class OneGame:
    """A batch-of-one engine state with its decision's legal actions, mask and observation,
    advanced by one compiled call a decision (module docstring).

    `state`: a [`State`][] of one game (it is stepped in place). `seat`: observe this
    seat at every decision instead of the seat to act (a seat's own table, as the single-seat
    env has). `autoreset`: as [`engine.step`][]'s."""

    def __init__(self, state: State, seat: int | None = None, autoreset: bool = False) -> None:
        if not isinstance(state, State) or state.batch_size != 1:
            raise ValueError(f"OneGame needs an engine State of one game, got "
                             f"{type(state).__name__}{'' if not isinstance(state, State) else f' of {state.batch_size} games'}")
        if seat is not None and (type(seat) is not int or not 0 <= seat <= 2):
            raise ValueError(f"OneGame: seat must be 0, 1, 2 or None, got {seat!r}")
        self.state = state
        self.seat = -1 if seat is None else seat
        self.autoreset = bool(autoreset)
        self._scratch = np.zeros(_SCRATCH_BYTES, dtype=np.uint8)
        self.legal = self._scratch[_LEGAL:_PLANES].view(np.uint64)
        self.observation = self._scratch[_OBSERVATION:_MASK].view(np.float32)
        self.mask = self._scratch[_MASK:].view(np.int8)
        compile_kernels()
        self.refresh()

    def __getstate__(self) -> dict:
        """Pickling and `copy.deepcopy` keep the state and the settings; the arrays (views of
        one scratch buffer) are made again from the state."""
        return {"state": self.state, "seat": self.seat, "autoreset": self.autoreset}

    def __setstate__(self, saved: dict) -> None:
        self.__init__(saved["state"], None if saved["seat"] < 0 else saved["seat"], saved["autoreset"])

    def refresh(self) -> None:
        """Recompute the legal actions, mask and observation from `state` (after changing it,
        or its `rules`)."""
        self._scratch[_SETTINGS:_LEGAL].view(np.int64)[:] = (self.autoreset, self.state.rule_code, self.seat)
        self._arguments = (self.state.buffer, self._scratch)
        _one_step_k(-1, *self._arguments)

    def step(self, action: int) -> int:
        """Apply `action` (an int) to the game, or raise [`engine.IllegalActionError`][]
        (one line, citing the rule) with the state unchanged; then the next decision's legal
        actions, mask and observation are in place, and the status returned says who acts
        next, in which phase, and whether the step ended a deal ([`REFUSED`][]). A finished
        game ignores its action."""
        if type(action) is not int:
            if not isinstance(action, (int, np.integer)) or isinstance(action, bool):
                raise ValueError(f"OneGame.step: action must be an int 0..{NUM_ACTIONS - 1}, got {action!r}")
            action = int(action)
        if not 0 <= action < NUM_ACTIONS:
            if self.state.phase[0] == OVER:
                return _one_step_k(-1, *self._arguments)
            raise IllegalActionError(_illegal_message(self.state, 0, action, 1))
        status = _one_step_k(action, *self._arguments)
        if status == REFUSED:
            raise IllegalActionError(_illegal_message(self.state, 0, action, 1))
        return status

    @property
    def to_act(self) -> int:
        """The seat to act, -1 once the game is over."""
        return int(self.state.to_act[0])


__all__ = ["DEAL_ENDED", "OneGame", "REFUSED"]
