"""One game, one kernel call a decision: the fast path of the one-game views.

The PettingZoo AEC env, the OpenSpiel game, the single-seat env's table, ``play`` and the
web page step one game at a time. Through the batched API a decision there is five calls
(:func:`engine.legal_bits`, the mask, :func:`observation.observe`, the action, :func:`engine.step`),
each with numpy's and numba's fixed costs, which at one game are the whole cost. A
:class:`OneGame` keeps a batch-of-one :class:`~sergeant_major_env.engine.State` together with
its decision's legal actions, action mask and the acting seat's observation, and
:meth:`OneGame.step` does all of it in one compiled call: check the action against the legal
actions (as :func:`engine.step` does, the state unchanged on a refusal), apply it with the
engine's own rules kernel (:func:`engine._apply_k`), then compute the next decision's legal
actions, mask and observation (:func:`observation._observe_row`, the same code as
:func:`observation.observe`). Same games, same numbers as the batched API, bit for bit
(tests/test_one_game.py).

    >>> from sergeant_major_env import Rules, engine
    >>> from sergeant_major_env.one_game import OneGame
    >>> game = OneGame(engine.init([7], Rules(num_deals=1)))
    >>> int(game.mask.sum())        # the playmaker's six modes (R8)
    6
    >>> game.step(52)               # mode ♠
    >>> game.observation.shape
    (919,)

The arrays ``legal`` (uint64[1]), ``mask`` (int8[58]) and ``observation`` (float32[919], the
view of the seat to act, or of ``seat`` when one is fixed) are rewritten in place at every
step: copy them to keep them. After changing ``state`` by other means (``engine.set_cards``,
a reset) or the attributes ``seat`` and ``autoreset``, call :meth:`OneGame.refresh`.
"""

from __future__ import annotations

import numpy as np

from .cards import NUM_ACTIONS
from .engine import (MODES_USED, OVER, PHASE, TO_ACT, TRICK, HANDS, MODE_, IllegalActionError, State,
                     _apply_k, _illegal_message, _legal_game_k, _state_k)
from .jit import compile_ahead, kernel
from .observation import OBSERVATION_SIZE, _fields, _observe_row


# The arrays a OneGame keeps beside its state, as views of one uint8 buffer (one argument for
# the kernel to dispatch, not six): byte offsets of each.
_LEGAL, _PLANES, _KEYS, _ORDER, _OBSERVATION = 0, 8, 8 + 14 * 8, 8 + 66 * 8, 8 + 118 * 8
_MASK = _OBSERVATION + 4 * OBSERVATION_SIZE
_SCRATCH_BYTES = _MASK + NUM_ACTIONS


@kernel(ahead="one game", seconds=30, signature="int64, uint8[::1], uint8[::1], boolean, int64, int64")
def _one_step_k(action, buffer, scratch, autoreset, rules, view_seat) -> bool:
    """Game 0 of ``buffer``: with ``action`` >= 0, refuse it (False, nothing changed) unless
    the game is over or the legal actions in ``scratch`` hold it, else apply it; then the
    decision's legal actions and mask and, when the seat to act (or ``view_seat`` if >= 0) is a
    seat, its observation into ``scratch``. ``action`` -1 only refreshes."""
    legal = scratch[_LEGAL:_PLANES].view(np.uint64)
    planes = scratch[_PLANES:_KEYS].view(np.uint64).reshape((1, 14))  # the observation's card sets
    keys, order = scratch[_KEYS:_ORDER].view(np.uint64), scratch[_ORDER:_OBSERVATION].view(np.int64)  # dealing's
    observation = scratch[_OBSERVATION:_MASK].view(np.float32)
    mask = scratch[_MASK:]
    s = _state_k(buffer)
    if action >= 0 and s[PHASE][0] != OVER:
        if action >= 64 or not (legal[0] >> np.uint64(action)) & np.uint64(1):
            return False
        _apply_k(s, 0, action, autoreset, 1, rules, keys, order)
    bits = _legal_game_k(s[PHASE], s[TO_ACT], s[HANDS], s[MODES_USED], s[TRICK], s[MODE_], 0, rules)
    legal[0] = bits
    for a in range(mask.size):
        mask[a] = (bits >> np.uint64(a)) & np.uint64(1)
    seat = view_seat if view_seat >= 0 else s[TO_ACT][0]
    if seat >= 0:
        _observe_row(0, seat, _fields(buffer), observation, planes[:0], planes[0])
    return True


def compile_kernels() -> None:
    """Compiles what a one-game view needs (the start of a game and :func:`_one_step_k`) where
    the disk cache lacks it, on every core at once (:func:`jit.compile_ahead`; once per process,
    one line on stderr). A view calls it before ``engine.init`` makes its first game, which would
    otherwise compile the batched game's kernels."""
    compile_ahead("one game", "the one-game kernels")


class OneGame:
    """A batch-of-one engine state with its decision's legal actions, mask and observation,
    advanced by one compiled call a decision (module docstring).

    ``state``: a :class:`State` of one game (it is stepped in place). ``seat``: observe this
    seat at every decision instead of the seat to act (a seat's own table, as the single-seat
    env has). ``autoreset``: as :func:`engine.step`'s."""

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
        """Pickling and ``copy.deepcopy`` keep the state and the settings; the arrays (views of
        one scratch buffer) are made again from the state."""
        return {"state": self.state, "seat": self.seat, "autoreset": self.autoreset}

    def __setstate__(self, saved: dict) -> None:
        self.__init__(saved["state"], None if saved["seat"] < 0 else saved["seat"], saved["autoreset"])

    def refresh(self) -> None:
        """Recompute the legal actions, mask and observation from ``state`` (after changing it,
        or its ``rules``)."""
        self._arguments = (self.state.buffer, self._scratch, self.autoreset, self.state.rule_code, self.seat)
        _one_step_k(-1, *self._arguments)

    def step(self, action: int) -> None:
        """Apply ``action`` (an int) to the game, or raise :class:`engine.IllegalActionError`
        (one line, citing the rule) with the state unchanged; then the next decision's legal
        actions, mask and observation are in place. A finished game ignores its action."""
        if type(action) is not int:
            if not isinstance(action, (int, np.integer)) or isinstance(action, bool):
                raise ValueError(f"OneGame.step: action must be an int 0..{NUM_ACTIONS - 1}, got {action!r}")
            action = int(action)
        if not 0 <= action < NUM_ACTIONS:
            if self.state.phase[0] == OVER:
                return
            raise IllegalActionError(_illegal_message(self.state, 0, action, 1))
        if not _one_step_k(action, *self._arguments):
            raise IllegalActionError(_illegal_message(self.state, 0, action, 1))

    @property
    def to_act(self) -> int:
        """The seat to act, -1 once the game is over."""
        return int(self.state.to_act[0])


__all__ = ["OneGame"]
