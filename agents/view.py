"""The observation decoded for rule-based agents: card sets as uint64 bitmasks, numbers as ints.

Everything here comes from the observation (`sergeant_major_env.observation`, seats
relative to the observer: 0 self, 1 left, 2 right): the float vector, or the same
observation with its card planes as sets (`observe_card_sets`), so an agent built on it
never sees more than its seat knows. All arrays have the batch as leading axis.
"""

from __future__ import annotations

import functools

import numpy as np

from sergeant_major_env.cards import SUIT_MASKS, TRUMPS, above, bits_to_bool, highest_card_k
from sergeant_major_env.engine import trick_winner_position
from sergeant_major_env.jit import FLAG_ROWS, INT, INTS, REAL32_ROWS, SET_ROWS, contiguous, kernel
from sergeant_major_env.observation import CARD_SETS_WIDTH, SCALES, SEGMENTS

MODE_DECISION, GIVE_DECISION, RETURN_DECISION, DISCARD_DECISION, PLAY_DECISION = range(5)
NT, MIN = 4, 5
ALL_CARDS = np.uint64((1 << 52) - 1)
SUITS4 = SUIT_MASKS[:4]
CARD_RANK = np.arange(52) % 13
CARD_SUIT = np.arange(52) // 13
ABOVE = above(np.arange(52))
"""ABOVE[c]: the cards of c's suit higher than c."""

_DECISIONS = SEGMENTS["decision"].stop - SEGMENTS["decision"].start
_MODES = SEGMENTS["mode"].stop - SEGMENTS["mode"].start

# The 11 card planes come first, 52 wide each, in this order.
_PLANES = ("hand", "played0", "played1", "played2", "trick0", "trick1", "trick2", "talon", "discards",
           "given", "received")
_CARD_WIDTH = SEGMENTS["exchange_received"].stop
assert _CARD_WIDTH == 11 * 52


def _scaled_segment(name: str, column: int | None = None) -> functools.cached_property:
    """A View attribute decoded on first use: a scaled segment back in natural units
    (observation.SCALES), int16[B, width] (or one column of it)."""
    def decode(self: "View") -> np.ndarray:
        ints = np.rint(self._segment(name) * SCALES[name]).astype(np.int16)
        return ints if column is None else ints[:, column]
    decode.__doc__ = f"int16: the observation's {name!r} in natural units."
    return functools.cached_property(decode)


@kernel(ahead="game", seconds=0.5, signature=(SET_ROWS, REAL32_ROWS, INT, INT))
def _decoded_k(planes, numbers, decision_column, mode_column):
    """(trick, decision, mode, trumps, position, gone, unseen) of `View._setup`, each game
    in one pass: `planes` the card sets (uint64[B, >= 11]), `numbers` the entries after
    them, whose columns `decision_column` and `mode_column` start those one-hot segments."""
    n = planes.shape[0]
    trick = np.full((n, 3), -1, dtype=np.int64)
    decision = np.full(n, -1, dtype=np.int8)
    mode = np.full(n, -1, dtype=np.int64)
    trumps = np.zeros(n, dtype=np.uint64)
    position = np.zeros(n, dtype=np.int64)
    gone = np.zeros(n, dtype=np.uint64)
    unseen = np.zeros(n, dtype=np.uint64)
    for g in range(n):
        for k in range(_DECISIONS):
            if numbers[g, decision_column + k] > 0.5:
                decision[g] = k
                break
        for k in range(_MODES):
            if numbers[g, mode_column + k] > 0.5:
                mode[g] = k
                break
        trumps[g] = TRUMPS[mode[g] if mode[g] >= 0 else 6]
        out = planes[g, 1] | planes[g, 2] | planes[g, 3] | planes[g, 8]
        for p in range(3):
            out |= planes[g, 4 + p]
            trick[g, p] = highest_card_k(planes[g, 4 + p])
            position[g] += trick[g, p] >= 0
        gone[g] = out
        unseen[g] = ALL_CARDS & ~planes[g, 0] & ~out
    return trick, decision, mode, trumps, position, gone, unseen


def _one_hot_index(block: np.ndarray) -> np.ndarray:
    """Index of the set entry of each one-hot row, -1 for an all-zero row."""
    return np.where(block.any(axis=1), block.argmax(axis=1), -1).astype(np.int8)


class View:
    """What one seat knows in each of B games (see the module docstring).

    `View(observations)` decodes float observations; `from_card_sets` takes the same
    observation as [`observe_card_sets`][sergeant_major_env.observation.observe_card_sets] gives it (the
    card planes already as sets), which skips building and decoding the float planes.
    The card sets, the decision and the mode are decoded at once; the other numbers on first
    use (an agent reads few of them, and each costs numpy calls on every batch)."""

    def __init__(self, obs: np.ndarray) -> None:
        obs = np.asarray(obs, dtype=np.float32)
        n = obs.shape[0]
        # Each card plane padded to 64 bits, so that one flat packbits gives the uint64 sets.
        bits = np.zeros((n, 11, 64), dtype=bool)
        np.greater(obs[:, :_CARD_WIDTH].reshape(n, 11, 52), 0.5, out=bits[:, :, :52])
        planes = np.packbits(bits.reshape(-1), bitorder="little").view("<u8").reshape(n, 11).astype(np.uint64)
        self._setup(planes, obs, 0)

    @classmethod
    def from_card_sets(cls, card_sets: np.ndarray, rest: np.ndarray) -> "View":
        """The view of `observe_card_sets`'s `(card_sets, rest)`: the same as `View` of the
        float observation they stand for (tests/test_view.py)."""
        view = cls.__new__(cls)
        view._setup(np.asarray(card_sets, dtype=np.uint64), np.asarray(rest, dtype=np.float32), CARD_SETS_WIDTH)
        return view

    def _setup(self, planes: np.ndarray, numbers: np.ndarray, first_column: int) -> None:
        """The view from the card planes as sets (uint64[B, >= 11]) and observation entries
        `numbers` (float32[B, ...], whose column 0 is the observation's `first_column`)."""
        self.n = planes.shape[0]
        # The observation's entries after the planes, and this view's rows of them (None: all).
        self._numbers, self._first_column, self._index = numbers, first_column, None
        self.hand = planes[:, 0]
        self.played = planes[:, 1:4]          # by relative seat
        self.trick_sets = planes[:, 4:7]      # by position
        self.talon = planes[:, 7]
        self.discards = planes[:, 8]
        self.given = planes[:, 9]
        self.received = planes[:, 10]
        decision, mode = SEGMENTS["decision"].start - first_column, SEGMENTS["mode"].start - first_column
        # One compiled pass for the numbers every decision reads (_decoded_k: numpy's numbers).
        self.trick, self.decision, self.mode, self.trumps, self.position, self.gone, self.unseen = _decoded_k(
            contiguous(planes, np.uint64), contiguous(numbers, np.float32), decision, mode)
        # trick: card ids by position, -1 empty; decision, mode: -1 when none; trumps: the trump
        # set, 0 if none; position: mine in the current trick; gone: cards out of play or on the
        # table (and my own discards); unseen: cards that other seats may still hold (or the
        # playmaker discarded).

    def _segment(self, name: str) -> np.ndarray:
        """This view's rows of one observation segment (one after the card planes)."""
        where = SEGMENTS[name]
        segment = self._numbers[:, where.start - self._first_column:where.stop - self._first_column]
        return segment if self._index is None else segment[self._index]

    @functools.cached_property
    def role(self) -> np.ndarray:
        """int8[B, 3]: the role of each relative seat (R5: 0 dealer, 1 playmaker, 2 third)."""
        return _one_hot_index((self._segment("roles") > 0.5).reshape(self.n * 3, 3)).reshape(self.n, 3)

    @functools.cached_property
    def leader(self) -> np.ndarray:
        """int8[B]: the relative seat that led the current trick, -1 before play."""
        return _one_hot_index(self._segment("trick_leader") > 0.5)

    @functools.cached_property
    def modes_available(self) -> np.ndarray:
        """bool[B, 6]: the modes this seat has still to choose as playmaker (R8)."""
        return self._segment("modes_available")[:, :6] > 0.5

    targets = _scaled_segment("targets")
    tricks_won = _scaled_segment("tricks_won")
    exchange_done = _scaled_segment("exchange_done")  # pairs 0>1 0>2 1>0 1>2 2>0 2>1
    prev_points = _scaled_segment("prev_points")
    scores = _scaled_segment("scores")
    deal = _scaled_segment("deal", column=0)

    def rows(self, index: np.ndarray) -> "View":
        """A view of some games only (same attributes, fewer rows)."""
        sub = object.__new__(View)
        for key, value in self.__dict__.items():
            if key not in ("_numbers", "_index"):
                sub.__dict__[key] = value[index] if isinstance(value, np.ndarray) else value
        sub._numbers = self._numbers
        sub._index = index if self._index is None else self._index[index]
        sub.n = len(index)
        return sub


def legal_sets(legal_mask: np.ndarray) -> np.ndarray:
    """uint64[B]: the legal cards of each row (the card columns of the mask)."""
    mask = np.asarray(legal_mask, dtype=bool)
    n = mask.shape[0]
    packed = np.zeros((n, 8), dtype=np.uint8)
    packed[:, :7] = np.packbits(mask[:, :52], axis=1, bitorder="little")
    return packed.view("<u8")[:, 0].astype(np.uint64)


def ensure_legal(actions: np.ndarray, legal_mask: np.ndarray) -> np.ndarray:
    """`actions` with any illegal choice replaced by the first legal action (0 where none is legal).

    A safety net: with a consistent observation and mask the rules above never need it, but an
    agent must answer legally even for a row whose observation does not match its mask."""
    actions = contiguous(actions, np.int64)
    mask = contiguous(legal_mask, np.bool_)
    if mask.ndim != 2 or mask.shape[0] != actions.shape[0] or mask.shape[1] == 0:
        raise ValueError(f"ensure_legal: {actions.shape[0]} actions need a legal mask with one row each "
                         f"and a column per action id, got shape {mask.shape}")
    out = actions.copy()
    _ensure_legal_k(out, mask)
    return out


@kernel(ahead="game", seconds=0.3, signature=(INTS, FLAG_ROWS))
def _ensure_legal_k(actions, mask):
    """`ensure_legal` in place: an action out of range or not legal becomes the row's first
    legal action (0 where none is)."""
    width = mask.shape[1]
    for i in range(actions.shape[0]):
        a = actions[i]
        if a < 0 or a >= width or not mask[i, a]:
            first = 0
            for j in range(width):
                if mask[i, j]:
                    first = j
                    break
            actions[i] = first


def card_bools(sets: np.ndarray) -> np.ndarray:
    """bool[B, 52] from uint64[B] card sets."""
    return bits_to_bool(sets, 52)


def suit_counts(sets: np.ndarray) -> np.ndarray:
    """int[B, 4]: cards per suit."""
    return np.bitwise_count(sets[:, None] & SUITS4[None, :]).astype(np.int16)


def pick(scores: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """int64[B]: the allowed card (bool[B, 52]) with the highest score (first on ties)."""
    return np.where(allowed, scores, -np.inf).argmax(axis=1).astype(np.int64)


def trick_best(trick: np.ndarray, mode: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(card winning the trick so far, its position), -1 for empty tricks (R16, by the engine)."""
    position = trick_winner_position(trick, mode)
    best = trick[np.arange(trick.shape[0]), position]
    played = trick[:, 0] >= 0
    return np.where(played, best, -1), np.where(played, position, -1)
