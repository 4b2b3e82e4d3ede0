"""What one seat knows, as a flat float32 vector per game: its information state.

``observe(state, seat)`` returns ``float32[B, OBSERVATION_SIZE]`` for one seat per game.
Seats inside the vector are *relative* to the observer: index 0 is the observer, 1 the
player on its left (next to play after it), 2 the player on its right. Card planes are
52 wide in card-id order (R3). Numbers are divided by their segment's scale
(:data:`SCALES`). Everything here is what that seat legitimately knows, and the deal's
whole trick history is in it (which trick each card fell in, who led each trick), so the
vector is the seat's complete information state. Segments marked *derived* add nothing
new: they are computed from the others, to help small networks.

=====================  ====  =====  ============================================================
segment                size  scale  meaning
=====================  ====  =====  ============================================================
``hand``                 52      1  own cards; during its own mode choice the playmaker sees only
                                    its first six cards (R9)
``played``              156      1  cards each relative seat has played in this deal
``trick``               156      1  the current trick, by position (first card = the leader's)
``talon``                52      1  the talon, once turned face up (section 5, step 4)
``discards``             52      1  own discards (the playmaker only)
``exchange_given``       52      1  cards this seat handed over in this deal's exchanges
``exchange_received``    52      1  cards this seat received in them
``winning_card``         52      1  *derived*: the card winning the current trick so far (R16)
``winners_in_hand``      52      1  *derived*: own cards that would beat every card on the table
                                    (none while the table is empty)
``highest_left``         52      1  *derived*: per suit, the highest card not yet played in this
                                    deal's tricks (nor among own discards)
``decision``              5      1  one-hot decision kind of the seat to act: mode, exchange give,
                                    exchange return, discard, play
``to_act``                3      1  relative seat to act (all zero once the game is over)
``mode``                  6      1  one-hot mode: S C H D NT MIN (zero before the choice)
``roles``                 9      1  per relative seat, one-hot role: dealer, playmaker, third
``targets``               3      8  per relative seat, tricks to make (R23, R24)
``tricks_won``            3     16  per relative seat
``trick_leader``          3      1  relative seat leading the current trick
``exchange_due``          6     13  cards due per (giver, receiver) pair of relative seats
``exchange_done``         6     13  cards handed so far per pair (R22: public counts)
``prev_points``           3     13  per relative seat, points of the previous deal
``scores``                3     50  per relative seat
``deal``                  1     18  index of the current deal
``modes_available``      18      1  per relative seat, the modes it may still choose (R8)
``card_trick``           52     16  per card, 1 + the index of the trick of this deal it was played
                                    in (0 if not played): with ``played`` (who) and
                                    ``trick_leaders`` (who led) it gives every trick in order
``trick_leaders``        48      1  per trick 0..15 of this deal, one-hot relative seat of its
                                    leader (the current trick included; zero for tricks not begun)
``voids``                12      1  per relative seat and suit S C H D: the seat has shown in this
                                    deal's tricks that it holds no card of the suit (R13: it did
                                    not follow the led suit; R14: nor trumped, in a trump deal)
``winning_seat``          3      1  *derived*: relative seat winning the current trick so far
``tricks_needed``         3     16  *derived*: per relative seat, target minus tricks won (R23,
                                    R24; negative once past the target)
``unseen_per_suit``       4     13  *derived*: per suit, cards this seat has not seen (not in its
                                    hand, not played, not the shown talon, not its own discards
                                    or exchange cards)
=====================  ====  =====  ============================================================

R22: the cards a pair exchanges are never in the third seat's observation; only the
counts are. While a pair exchanges, the decision kind shows whether the receiver is
choosing its return (so a trump was given, R21); the third seat never decides until the
pair is done, so no decision of it can use that.

``SEGMENTS`` maps each name to its slice, ``SCALES`` each name to its divisor, and
:func:`decode` turns one observation back into natural units (card ids, seats, counts,
the voids and the list of tricks). ``VERSION`` numbers this layout: it changes whenever a
segment is added, removed, resized or rescaled, and every model file records the version
it was trained on, so a model never silently reads another layout. Pairs in
``exchange_*`` are ordered (0→1, 0→2, 1→0, 1→2, 2→0, 2→1) in relative seats.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .cards import SUIT_MASKS, bit
from .engine import DISCARD, MIN_TARGETS, MINIMUM, MODE, PLAYMAKER, STRENGTH, TARGETS, State, targets, trick_winner_position

VERSION = 2
"""The observation layout's version (see the module docstring)."""

# (name, size, scale, natural low, natural high): the one place of the layout and its scales.
_LAYOUT = (
    ("hand", 52, 1, 0, 1), ("played", 156, 1, 0, 1), ("trick", 156, 1, 0, 1), ("talon", 52, 1, 0, 1),
    ("discards", 52, 1, 0, 1), ("exchange_given", 52, 1, 0, 1), ("exchange_received", 52, 1, 0, 1),
    ("winning_card", 52, 1, 0, 1), ("winners_in_hand", 52, 1, 0, 1), ("highest_left", 52, 1, 0, 1),
    ("decision", 5, 1, 0, 1), ("to_act", 3, 1, 0, 1), ("mode", 6, 1, 0, 1), ("roles", 9, 1, 0, 1),
    ("targets", 3, 8, 0, 8), ("tricks_won", 3, 16, 0, 16), ("trick_leader", 3, 1, 0, 1),
    ("exchange_due", 6, 13, 0, 13), ("exchange_done", 6, 13, 0, 13), ("prev_points", 3, 13, -13, 13),
    ("scores", 3, 50, None, None), ("deal", 1, 18, 0, 18), ("modes_available", 18, 1, 0, 1),
    ("card_trick", 52, 16, 0, 16), ("trick_leaders", 48, 1, 0, 1), ("voids", 12, 1, 0, 1),
    ("winning_seat", 3, 1, 0, 1), ("tricks_needed", 3, 16, -13, 8), ("unseen_per_suit", 4, 13, 0, 13),
)
SEGMENTS: dict[str, slice] = {}
SCALES: dict[str, int] = {}
_offset = 0
for _name, _size, _scale, _, _ in _LAYOUT:
    SEGMENTS[_name] = slice(_offset, _offset + _size)
    SCALES[_name] = _scale
    _offset += _size
OBSERVATION_SIZE = _offset
DERIVED = ("winning_card", "winners_in_hand", "highest_left", "winning_seat", "tricks_needed", "unseen_per_suit")
"""The segments computed from the others (see the module docstring)."""

_NUM_PLANES = 14  # the card planes come first: hand ... highest_left
_CARD_WIDTH = 52 * _NUM_PLANES
assert SEGMENTS["decision"].start == _CARD_WIDTH
_FEATURES_END = SEGMENTS["modes_available"].stop  # decision ... modes_available: gathered by seat
_PAIRS = ((0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1))

# The observation is computed in two gathers so that its cost barely depends on the
# batch size: first every game's features in *absolute* seats (card sets in `planes`,
# numbers in `features`), then one fancy index per array picks and orders them for the
# observer (relative seats, and what it may not see replaced by an empty column). The
# derived card planes and the unseen counts are then computed from the observer's planes.


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
assert _FEATURE_COLUMNS.shape[1] == _FEATURES_END - _CARD_WIDTH


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
_SUITS = SUIT_MASKS[:4]
_RELATIVE_SEATS_INT8 = np.array([[_relative(seat, k) for k in range(3)] for seat in range(3)], dtype=np.int8)
_TRUMPS = [set(range(13 * mode, 13 * mode + 13)) if mode < 4 else set() for mode in range(6)]
_BEATS = np.array([[0] * 53] + [  # [mode + 1, card + 1]: the cards that beat `card` on the table (R16)
    [0] + [sum(1 << c for c in range(52) if (c // 13 == best // 13 and c > best)
               or (c in _TRUMPS[mode] and best not in _TRUMPS[mode])) for best in range(52)]
    for mode in range(6)], dtype=np.uint64)
_SUIT_SHIFTS = np.array([0, 13, 26, 39], dtype=np.uint64)
_TOP_CARD = np.array([0] + [1 << (v.bit_length() - 1) for v in range(1, 1 << 13)], dtype=np.uint64)
"""_TOP_CARD[13 cards of a suit as bits]: the highest of them, as a bit."""
# The numbers after the card planes are gathered as int16 and scaled on the way into the
# float32 observation, by these factors.
_NUMBER_SCALES = np.concatenate([np.full(sl.stop - sl.start, 1 / SCALES[name], dtype=np.float32)
                                 for name, sl in SEGMENTS.items() if sl.start >= _CARD_WIDTH])


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
    """int16[B, _NUM_FEATURES]: the numbers of the observation, in absolute seats, unscaled."""
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


def _derived_planes(state: State, planes: np.ndarray, best: np.ndarray) -> None:
    """Fill the derived planes winning_card, winners_in_hand and highest_left (``planes[:, 11:]``)
    from the observer's planes and the card winning the trick so far (``best``, -1 if none)."""
    planes[:, 11] = bit(best)
    planes[:, 12] = planes[:, 0] & _BEATS[state.mode + 1, best + 1]
    remaining = ~(planes[:, 3] | planes[:, 2] | planes[:, 1] | planes[:, 8])  # not played, not own discards
    suits = (remaining[:, None] >> _SUIT_SHIFTS) & np.uint64(0x1FFF)
    planes[:, 13] = np.bitwise_or.reduce(_TOP_CARD[suits] << _SUIT_SHIFTS, axis=1)


def _history(state: State, seat: np.ndarray, best_position: np.ndarray, planes: np.ndarray, out: np.ndarray) -> None:
    """The trick history (card_trick, trick_leaders, voids) and the derived numbers (winning_seat,
    tricks_needed, unseen_per_suit) of the observer ``seat``, unscaled, into ``out`` (int16[B, 122]);
    ``out[:, :69]`` already holds the observer's numbers decision ... modes_available."""
    n = state.batch_size
    np.add(state.card_trick, 1, out=out[:, _CARD_TRICK])
    relative = _RELATIVE_SEATS_INT8[seat]  # [B, 3]: the absolute seat of each relative seat
    leaders = out[:, _TRICK_LEADERS].reshape(n, 16, 3)
    for k in range(3):  # one compare per relative seat: long inner loops, no [B, 16, 3] broadcast
        np.equal(state.trick_leaders, relative[:, k:k + 1], out=leaders[:, :, k])
    winner = np.where(state.trick[:, 0] >= 0, (state.leader + best_position) % 3, -1)
    np.equal(winner[:, None], relative, out=out[:, _WINNING_SEAT])
    shown = state.shown_out[np.arange(n)[:, None], relative]
    for suit in range(4):  # R13, R14: a void is a whole suit ruled out
        np.equal(shown & _SUITS[suit], _SUITS[suit], out=out[:, _VOIDS][:, suit::4])
    np.subtract(out[:, _TARGETS], out[:, _TRICKS_WON], out=out[:, _TRICKS_NEEDED])  # R23, R24
    unseen = ~np.bitwise_or.reduce(planes[:, :11], axis=1)  # not in anything this seat has seen
    out[:, _UNSEEN] = np.bitwise_count(unseen[:, None] & _SUITS)


def _number_slice(name: str) -> slice:
    """Where segment ``name`` lies among the numbers after the card planes."""
    return slice(SEGMENTS[name].start - _CARD_WIDTH, SEGMENTS[name].stop - _CARD_WIDTH)


_CARD_TRICK, _TRICK_LEADERS, _VOIDS, _WINNING_SEAT, _TRICKS_NEEDED, _UNSEEN, _TARGETS, _TRICKS_WON = map(
    _number_slice, ("card_trick", "trick_leaders", "voids", "winning_seat", "tricks_needed", "unseen_per_suit",
                    "targets", "tricks_won"))


def _select(table: np.ndarray, column_sets: np.ndarray, choice: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``out[i] = table[i, column_sets[choice[i]]]`` for every row i. Small batches: one fancy index
    (fewest numpy calls); big ones: one contiguous column take per set (much faster there)."""
    n = table.shape[0]
    if n < 64:
        out[...] = table[np.arange(n)[:, None], column_sets[choice]]
        return out
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
    if n == 1:
        return _observe_one(state, int(seat[0]))
    return _observe_batch(state, seat)


def _observe_batch(state: State, seat: np.ndarray) -> np.ndarray:
    """:func:`observe` with array operations over the batch (the cost barely grows with B)."""
    n = state.batch_size
    is_playmaker = _IS_PLAYMAKER[seat, state.dealer]
    obs = np.empty((n, OBSERVATION_SIZE), dtype=np.float32)
    planes = np.empty((n, _NUM_PLANES), dtype=np.uint64)
    _select(_planes(state), _PLANE_COLUMNS.reshape(6, 11), 2 * seat + is_playmaker, planes[:, :11])
    best_position = trick_winner_position(state.trick, state.mode)  # R16, 0 for an empty table
    best = np.where(state.trick[:, 0] >= 0, state.trick[np.arange(n), best_position], -1)
    _derived_planes(state, planes, best)
    bits = np.unpackbits(planes.astype("<u8").view(np.uint8).reshape(n, _NUM_PLANES, 8)[:, :, :7], axis=2,
                         bitorder="little")
    np.copyto(obs[:, :_CARD_WIDTH].reshape(n, _NUM_PLANES, 52), bits[:, :, :52], casting="unsafe")
    numbers = np.empty((n, OBSERVATION_SIZE - _CARD_WIDTH), dtype=np.int16)
    _select(_features(state), _FEATURE_COLUMNS, seat, numbers[:, :_FEATURES_END - _CARD_WIDTH])
    _history(state, seat, best_position, planes, numbers)
    np.multiply(numbers, _NUMBER_SCALES, out=obs[:, _CARD_WIDTH:])
    return obs


def _observe_one(state: State, seat: int) -> np.ndarray:
    """:func:`observe` of a batch of one game (the AEC and single-seat envs observe one game at
    a time): the same vector as :func:`_observe_batch`, from the same tables, with the sets and
    numbers in Python ints. For one game numpy's fixed cost per call dominates, and this path
    makes about a dozen numpy calls where the batch path makes about ninety.
    tests/test_observation.py checks that both give the same vector, bit for bit."""
    phase, dealer, mode, to_act, leader = (int(x) for x in (state.phase[0], state.dealer[0], state.mode[0],
                                                            state.to_act[0], state.leader[0]))
    hands, played, given, received = (x[0].tolist() for x in (state.hands, state.played, state.given, state.received))
    trick = state.trick[0].tolist()
    relative = _RELATIVE_LISTS[seat]
    playmaker = (dealer + PLAYMAKER) % 3
    hand = int(state.first_six[0]) if phase == MODE and seat == playmaker else hands[seat]  # R9
    discards = int(state.discards[0]) if seat == playmaker else 0
    planes = [hand, *(played[s] for s in relative), *(1 << c if c >= 0 else 0 for c in trick),
              int(state.talon[0]) if phase >= DISCARD else 0, discards, given[seat], received[seat]]
    best = winner = -1
    if trick[0] >= 0:  # R16: the highest strength on the table wins
        strength = _STRENGTH_LISTS[mode][trick[0] // 13]
        position = max((k for k in range(3) if trick[k] >= 0), key=lambda k: strength[trick[k]])
        best, winner = trick[position], (leader + position) % 3
    gone = played[0] | played[1] | played[2] | discards  # played, or among own discards
    highest_left = 0
    for shift in (0, 13, 26, 39):
        highest_left |= _TOP_CARD_LIST[(~gone >> shift) & 0x1FFF] << shift
    seen = 0
    for plane in planes:
        seen |= plane
    planes += [1 << best if best >= 0 else 0, hand & _BEATS_LISTS[mode + 1][best + 1], highest_left]

    role = [(s - dealer) % 3 for s in relative]
    targets = (MIN_TARGETS if mode == MINIMUM else TARGETS).tolist()
    tricks_won, prev_points, scores = (x[0].tolist() for x in (state.tricks_won, state.prev_points, state.scores))
    due, done = state.exchange_due[0].tolist(), state.exchange_done[0].tolist()
    modes_used = state.modes_used[0].tolist()
    shown = state.shown_out[0].tolist()
    pairs = _PAIR_LISTS[seat]
    numbers = (
        _ONE_HOT_5[phase] + _ONE_HOT_3[(to_act - seat) % 3 if to_act >= 0 else 3] + _ONE_HOT_6[mode]
        + _ONE_HOT_3[role[0]] + _ONE_HOT_3[role[1]] + _ONE_HOT_3[role[2]]
        + [targets[r] for r in role]
        + [tricks_won[s] for s in relative]
        + _ONE_HOT_3[(leader - seat) % 3 if leader >= 0 else 3]
        + [due[g][r] for g, r in pairs] + [done[g][r] for g, r in pairs]
        + [prev_points[s] for s in relative] + [scores[s] for s in relative] + [int(state.deal[0])]
        + _FREE_MODE_LISTS[modes_used[relative[0]]] + _FREE_MODE_LISTS[modes_used[relative[1]]]
        + _FREE_MODE_LISTS[modes_used[relative[2]]]
    )
    tail = (
        [int(shown[s] & suit == suit) for s in relative for suit in _SUIT_LIST]  # voids: R13, R14
        + [int(winner == s) for s in relative]
        + [targets[role[k]] - tricks_won[relative[k]] for k in range(3)]  # tricks_needed: R23, R24
        + [(suit & ~seen).bit_count() for suit in _SUIT_LIST]  # unseen_per_suit
    )
    obs = np.empty((1, OBSERVATION_SIZE), dtype=np.float32)
    row = obs[0]
    bits = np.unpackbits(np.array(planes, dtype="<u8").view(np.uint8).reshape(_NUM_PLANES, 8)[:, :7], axis=1,
                         bitorder="little")
    row[:_CARD_WIDTH].reshape(_NUM_PLANES, 52)[...] = bits[:, :52]
    np.multiply(np.array(numbers, dtype=np.float32), _NUMBER_SCALES[:_HEAD], out=row[_CARD_WIDTH:_FEATURES_END])
    np.multiply(state.card_trick[0] + np.int8(1), _CARD_TRICK_SCALE, out=row[SEGMENTS["card_trick"]])
    row[SEGMENTS["trick_leaders"]].reshape(16, 3)[...] = state.trick_leaders[0][:, None] == _RELATIVE_SEATS_INT8[seat]
    np.multiply(np.array(tail, dtype=np.float32), _NUMBER_SCALES[_VOIDS.start:], out=row[SEGMENTS["voids"].start:])
    return obs


# The tables above as Python lists, for _observe_one.
_RELATIVE_LISTS = _RELATIVE_SEATS_INT8.tolist()
_TOP_CARD_LIST = _TOP_CARD.tolist()
_BEATS_LISTS = _BEATS.tolist()
_SUIT_LIST = _SUITS.tolist()
_ONE_HOT_3, _ONE_HOT_5 = ([_one_hot(k, n) for k in range(n + 1)] for n in (3, 5))  # [n]: all zero
_ONE_HOT_6 = [_one_hot(k, 6) for k in range(6)] + [[0] * 6]  # [-1]: all zero
_CARD_TRICK_SCALE = np.float32(1 / SCALES["card_trick"])
_STRENGTH_LISTS = STRENGTH.tolist()
_FREE_MODE_LISTS = _FREE_MODE_ROWS.tolist()
_PAIR_LISTS = [[(_relative(seat, g), _relative(seat, r)) for g, r in _PAIRS] for seat in range(3)]  # absolute pairs
_HEAD = _FEATURES_END - _CARD_WIDTH  # decision ... modes_available


def observation_bounds(num_deals: int = 18) -> tuple[np.ndarray, np.ndarray]:
    """float32 (low, high) of every entry, for observation spaces: each segment's natural range
    divided by its scale, computed in float32 as :func:`observe` scales them. ``scores`` span
    +-13 points a deal over ``num_deals`` deals (R23, R24)."""
    low = np.zeros(OBSERVATION_SIZE, dtype=np.float32)
    high = np.ones(OBSERVATION_SIZE, dtype=np.float32)
    for name, _, scale, natural_low, natural_high in _LAYOUT:
        if name == "scores":
            natural_low, natural_high = -13 * num_deals, 13 * num_deals
        low[SEGMENTS[name]] = np.float32(natural_low) * np.float32(1 / scale)
        high[SEGMENTS[name]] = np.float32(natural_high) * np.float32(1 / scale)
    return low, high


# ----------------------------------------------------------------------------- decoding

def _cards(row: np.ndarray) -> list[int]:
    return [int(c) for c in np.flatnonzero(row > 0.5)]


def _index(row: np.ndarray) -> int:
    """The set entry of a one-hot block, -1 if none."""
    return int(row.argmax()) if (row > 0.5).any() else -1


def decode(observation: np.ndarray) -> dict[str, Any]:
    """One observation row in natural units: every segment by name, plus ``"tricks"``.

    Card planes become sorted card-id lists (``played``, ``exchange_*``: one list per relative
    seat or the plane's cards; ``trick``: the card of each position, -1 empty; ``winning_card``:
    an id or -1); one-hot blocks become indices (-1 for none; ``roles``: the role of each relative
    seat); scaled numbers become ints; ``modes_available`` is ``bool[3, 6]``, ``voids``
    ``bool[3, 4]`` (relative seat x suit S C H D), ``card_trick`` ``int[52]`` (the trick index of
    each card, -1 if not played) and ``trick_leaders`` ``int[16]`` (relative seat, -1).
    ``"tricks"`` lists this deal's tricks so far, oldest first, the unfinished one last if it has
    cards, each ``(leader relative seat, [card ids in playing order])``."""
    obs = np.asarray(observation, dtype=np.float32).reshape(-1)
    if obs.shape != (OBSERVATION_SIZE,):
        raise ValueError(f"decode takes one observation of {OBSERVATION_SIZE} floats (version {VERSION}), "
                         f"got shape {np.shape(observation)}")
    seg = {name: obs[sl] for name, sl in SEGMENTS.items()}

    def ints(name: str) -> list[int]:
        return [int(v) for v in np.rint(seg[name] * SCALES[name])]

    out: dict[str, Any] = {}
    for name in ("hand", "talon", "discards", "exchange_given", "exchange_received", "winners_in_hand",
                 "highest_left"):
        out[name] = _cards(seg[name])
    out["played"] = [_cards(seg["played"][52 * k: 52 * k + 52]) for k in range(3)]
    out["trick"] = [_index(seg["trick"][52 * k: 52 * k + 52]) for k in range(3)]
    out["winning_card"] = _index(seg["winning_card"])
    for name in ("decision", "to_act", "mode", "trick_leader", "winning_seat"):
        out[name] = _index(seg[name])
    out["roles"] = [_index(seg["roles"][3 * k: 3 * k + 3]) for k in range(3)]
    for name in ("targets", "tricks_won", "exchange_due", "exchange_done", "prev_points", "scores",
                 "tricks_needed", "unseen_per_suit"):
        out[name] = ints(name)
    out["deal"] = ints("deal")[0]
    out["modes_available"] = (seg["modes_available"] > 0.5).reshape(3, 6)
    out["card_trick"] = np.array(ints("card_trick")) - 1
    out["trick_leaders"] = np.array([_index(seg["trick_leaders"][3 * t: 3 * t + 3]) for t in range(16)])
    out["voids"] = (seg["voids"] > 0.5).reshape(3, 4)
    player = {c: k for k in range(3) for c in out["played"][k]}
    tricks = []
    for t, leader in enumerate(out["trick_leaders"].tolist()):
        cards = [c for c in np.flatnonzero(out["card_trick"] == t).tolist()]
        if leader < 0 or not cards:
            continue
        cards.sort(key=lambda c: (player[c] - leader) % 3)  # playing order: the leader first
        tricks.append((leader, cards))
    out["tricks"] = tricks
    return out
