"""What one seat knows, as a flat float32 vector per game.

``observe(state, seat)`` returns ``float32[B, OBSERVATION_SIZE]`` for one seat per game.
Seats inside the vector are *relative* to the observer: index 0 is the observer, 1 the
player on its left (next to play after it), 2 the player on its right. Card planes are
52 wide in card-id order (R3). Everything here is what that seat legitimately knows:

=====================  ====  ===================================================================
segment                size  meaning
=====================  ====  ===================================================================
``hand``                 52  own cards; during its own mode choice the playmaker sees only its
                             first six cards (R9)
``played``              156  cards each relative seat has played in this deal
``trick``               156  the current trick, by position (first card = the leader's)
``talon``                52  the talon, once turned face up (section 5, step 4)
``discards``             52  own discards (the playmaker only)
``exchange_given``       52  cards this seat handed over in this deal's exchanges
``exchange_received``    52  cards this seat received in them
``decision``              5  one-hot decision kind of the seat to act: mode, exchange give,
                             exchange return, discard, play
``to_act``                3  relative seat to act (all zero once the game is over)
``mode``                  6  one-hot mode: S C H D NT MIN (zero before the choice)
``roles``                 9  per relative seat, one-hot role: dealer, playmaker, third
``targets``               3  per relative seat, tricks to make (R23, R24) / 8
``tricks_won``            3  per relative seat / 16
``trick_leader``          3  relative seat leading the current trick
``exchange_due``          6  cards due per (giver, receiver) pair of relative seats / 13
``exchange_done``         6  cards handed so far per pair / 13 (R22: public counts)
``prev_points``           3  per relative seat, points of the previous deal / 13
``scores``                3  per relative seat / 50
``deal``                  1  index of the current deal / 18
``modes_available``      18  per relative seat, the modes it may still choose (R8)
=====================  ====  ===================================================================

R22: the cards a pair exchanges are never in the third seat's observation; only the
counts are. While a pair exchanges, the decision kind shows whether the receiver is
choosing its return (so a trump was given, R21); the third seat never decides until the
pair is done, so no decision of it can use that.

``SEGMENTS`` maps each name to its slice. ``VERSION`` numbers this layout: it changes
whenever a segment is added, removed, resized or rescaled, and every model file records
the version it was trained on, so a model never silently reads another layout. Pairs in ``exchange_*`` are ordered
(0→1, 0→2, 1→0, 1→2, 2→0, 2→1) in relative seats.
"""

from __future__ import annotations

import numpy as np

from .cards import bit
from .engine import DISCARD, MIN_TARGETS, MINIMUM, MODE, PLAYMAKER, TARGETS, State

VERSION = 1
"""The observation layout's version (see the module docstring)."""

_LAYOUT = (
    ("hand", 52), ("played", 156), ("trick", 156), ("talon", 52), ("discards", 52),
    ("exchange_given", 52), ("exchange_received", 52),
    ("decision", 5), ("to_act", 3), ("mode", 6), ("roles", 9), ("targets", 3), ("tricks_won", 3),
    ("trick_leader", 3), ("exchange_due", 6), ("exchange_done", 6), ("prev_points", 3),
    ("scores", 3), ("deal", 1), ("modes_available", 18),
)
SEGMENTS: dict[str, slice] = {}
_offset = 0
for _name, _size in _LAYOUT:
    SEGMENTS[_name] = slice(_offset, _offset + _size)
    _offset += _size
OBSERVATION_SIZE = _offset
_CARD_WIDTH = SEGMENTS["decision"].start  # the 11 card planes come first
_PAIRS = ((0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1))

# The observation is computed in two gathers so that its cost barely depends on the
# batch size: first every game's features in *absolute* seats (card sets in `planes`,
# numbers in `features`), then one fancy index per array picks and orders them for the
# observer (relative seats, and what it may not see replaced by an empty column).


def _relative(seat: int, k: int) -> int:
    return (seat + k) % 3


# Absolute card-set columns: hands 0-2, played 3-5, trick 6-8 (by position), talon 9,
# discards 10, given 11-13, received 14-16, empty 17.
_EMPTY_PLANE = 17
_PLANE_COLUMNS = np.array([
    [[seat, *(3 + _relative(seat, k) for k in range(3)), 6, 7, 8, 9,
      10 if is_playmaker else _EMPTY_PLANE, 11 + seat, 14 + seat] for is_playmaker in (False, True)]
    for seat in range(3)
])  # [observer seat, observer is playmaker] -> 11 columns

# Absolute feature columns (see _features) and, for each observer, the order to take them in.
_DECISION, _TO_ACT, _MODE, _ROLES, _TARGETS, _TRICKS, _LEADER = 0, 5, 8, 14, 23, 26, 29
_DUE, _DONE, _PREV, _SCORES, _DEAL, _MODES = 32, 41, 50, 53, 56, 57
_NUM_FEATURES = 75


def _feature_columns(seat: int) -> list[int]:
    rel = [_relative(seat, k) for k in range(3)]
    pairs = [3 * rel[g] + rel[r] for g, r in _PAIRS]
    return (
        list(range(_DECISION, _DECISION + 5)) + [_TO_ACT + s for s in rel] + list(range(_MODE, _MODE + 6))
        + [_ROLES + 3 * s + role for s in rel for role in range(3)] + [_TARGETS + s for s in rel]
        + [_TRICKS + s for s in rel] + [_LEADER + s for s in rel] + [_DUE + p for p in pairs]
        + [_DONE + p for p in pairs] + [_PREV + s for s in rel] + [_SCORES + s for s in rel]
        + [_DEAL] + [_MODES + 6 * s + m for s in rel for m in range(6)]
    )


_FEATURE_COLUMNS = np.array([_feature_columns(seat) for seat in range(3)])
assert _FEATURE_COLUMNS.shape[1] == OBSERVATION_SIZE - _CARD_WIDTH


def _one_hot(value: int, n: int) -> list[int]:
    return [int(value == k) for k in range(n)]


# Lookup tables for the one-hot features, so that each group costs one gather.
# [phase * 4 + to_act + 1] -> decision (none once over), then the seat to act (none if -1)
_TURN_ROWS = np.array([_one_hot(phase, 5) + _one_hot(to_act, 3) for phase in range(6) for to_act in range(-1, 3)],
                      dtype=np.int16)
# [(mode + 1) * 3 + dealer] -> mode, the role of each absolute seat, its target (R23, R24)
_MODE_ROWS = np.array([
    _one_hot(mode, 6) + [int(role == (s - dealer) % 3) for s in range(3) for role in range(3)]
    + [int((MIN_TARGETS if mode == MINIMUM else TARGETS)[(s - dealer) % 3]) for s in range(3)]
    for mode in range(-1, 6) for dealer in range(3)
], dtype=np.int16)
_SEAT_ROWS = np.array([_one_hot(seat, 3) for seat in (0, 1, 2, -1)], dtype=np.int16)  # index -1: none
_FREE_MODE_ROWS = np.array([[1 - (used >> m & 1) for m in range(6)] for used in range(64)], dtype=np.int16)
_NO_CARDS = np.zeros((1 << 16, 1), dtype=np.uint64)  # the empty column, for batches up to 65536
_IS_PLAYMAKER = np.array([[int(seat == (dealer + PLAYMAKER) % 3) for dealer in range(3)] for seat in range(3)])
# Features are gathered as int16 and scaled on the way into the float32 observation.
_SCALES = np.ones(_NUM_FEATURES, dtype=np.float32)
_SCALES[_TARGETS:_TARGETS + 3] = 1 / 8
_SCALES[_TRICKS:_TRICKS + 3] = 1 / 16
_SCALES[_DUE:_DONE + 9] = 1 / 13
_SCALES[_PREV:_PREV + 3] = 1 / 13
_SCALES[_SCORES:_SCORES + 3] = 1 / 50
_SCALES[_DEAL] = 1 / 18
_RELATIVE_SCALES = _SCALES[_FEATURE_COLUMNS[0]]  # the same for every observer


def _planes(state: State) -> np.ndarray:
    """uint64[B, 18]: the card sets of the absolute columns above."""
    talon = np.where(state.phase >= DISCARD, state.talon, np.uint64(0))  # shown once taken
    planes = np.concatenate([state.hands, state.played, bit(state.trick), talon[:, None], state.discards[:, None],
                             state.given, state.received, _NO_CARDS[: state.batch_size]], axis=1)
    choosing = state.phase == MODE
    if np.count_nonzero(choosing):  # R9: the playmaker sees its first six cards only
        choosing = np.flatnonzero(choosing)
        planes[choosing, (state.dealer[choosing] + PLAYMAKER) % 3] = state.first_six[choosing]
    return planes


def _features(state: State) -> np.ndarray:
    """int16[B, 75]: the numbers of the observation, in absolute seats, unscaled."""
    n = state.batch_size
    return np.concatenate([
        _TURN_ROWS[state.phase * 4 + state.to_act + 1],
        _MODE_ROWS[(state.mode + 1) * 3 + state.dealer],
        state.tricks_won,
        _SEAT_ROWS[state.leader],
        state.exchange_due.reshape(n, 9),
        state.exchange_done.reshape(n, 9),
        state.prev_points,
        state.scores,
        state.deal[:, None],
        _FREE_MODE_ROWS[state.modes_used].reshape(n, 18),
    ], axis=1, dtype=np.int16)


def _select(table: np.ndarray, column_sets: np.ndarray, choice: np.ndarray) -> np.ndarray:
    """``table[i, column_sets[choice[i]]]`` for every row i. Small batches: one fancy index
    (fewest numpy calls); big ones: one contiguous column take per set (much faster there)."""
    n = table.shape[0]
    if n < 64:
        return table[np.arange(n)[:, None], column_sets[choice]]
    out = np.empty((n, column_sets.shape[1]), dtype=table.dtype)
    for k, columns in enumerate(column_sets):
        rows = np.flatnonzero(choice == k)
        out[rows] = table[rows][:, columns]
    return out


def observe(state: State, seat) -> np.ndarray:
    """float32[B, OBSERVATION_SIZE]: the view of ``seat`` (an int or int[B]) in each game."""
    n = state.batch_size
    seat = np.asarray(seat, dtype=np.intp)
    if seat.ndim == 0:
        seat = np.full(n, seat)
    if seat.shape != (n,) or np.count_nonzero(seat.astype(np.uintp) > 2):
        raise ValueError(f"seat must be 0, 1 or 2, one per game ({n}), got {seat!r}")
    is_playmaker = _IS_PLAYMAKER[seat, state.dealer]
    obs = np.empty((n, OBSERVATION_SIZE), dtype=np.float32)
    planes = _select(_planes(state), _PLANE_COLUMNS.reshape(6, 11), 2 * seat + is_playmaker)
    bits = np.unpackbits(planes.astype("<u8").view(np.uint8).reshape(n, 11, 8), axis=2, bitorder="little")
    obs[:, :_CARD_WIDTH].reshape(n, 11, 52)[...] = bits[:, :, :52]
    features = _select(_features(state), _FEATURE_COLUMNS, seat)
    np.multiply(features, _RELATIVE_SCALES, out=obs[:, _CARD_WIDTH:])
    return obs


def observation_bounds(num_deals: int = 18) -> tuple[np.ndarray, np.ndarray]:
    """float32 (low, high) of every entry, for observation spaces: 0..1 except
    ``prev_points`` (-1..1: a deal's points are -13..13, R23, R24, scaled by 1/13) and
    ``scores`` (+-13 points a deal over ``num_deals`` deals, scaled by 1/50), computed in
    float32 as :func:`observe` scales them."""
    low = np.zeros(OBSERVATION_SIZE, dtype=np.float32)
    high = np.ones(OBSERVATION_SIZE, dtype=np.float32)
    one_deal = np.float32(13) * np.float32(1 / 13)
    low[SEGMENTS["prev_points"]], high[SEGMENTS["prev_points"]] = -one_deal, one_deal
    game = np.float32(13 * num_deals) * np.float32(1 / 50)
    low[SEGMENTS["scores"]], high[SEGMENTS["scores"]] = -game, game
    return low, high
