"""Test fixture: 0.3.0's numpy observation, frozen (the reference of the compiled kernels).

A verbatim copy of ``sergeant_major_env/observation.py`` at commit ff9955b (only its two
package-relative imports made absolute, so that it reads the *current* engine's State).
``sergeant_major_env.observation``'s kernels must give exactly this code's vectors, every
float32 bit, for the same states and seats (tests/test_observation_kernel.py). Do not edit it
to follow changes of the observation: a change of a value is a new layout VERSION, and then
this file and the test are replaced together, on purpose.

The module's own docstring follows (as documentation of the layout it computes).

What one seat knows, as a flat float32 vector per game: its information state.

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

:func:`observe_card_sets` gives the same observation with its 14 card planes as uint64
card sets (the form the heuristic reads; no float planes written and decoded again).
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

from sergeant_major_env.cards import SUIT_MASKS, bit
from sergeant_major_env.engine import DISCARD, MIN_TARGETS, MINIMUM, MODE, PLAYMAKER, STRENGTH, TARGETS, State, targets, trick_winner_position

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
_CARD_BYTES = _CARD_WIDTH // 8  # the planes end on a byte boundary (728 bits)
_NUMBER_WORDS = 3  # uint64 words holding one bit per entry after the planes (191 of 192 bits)
_PACKED_BYTES = _CARD_BYTES + 8 * _NUMBER_WORDS
assert _CARD_WIDTH % 8 == 0 and OBSERVATION_SIZE <= 8 * _PACKED_BYTES < OBSERVATION_SIZE + 8
_PAIRS = ((0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1))

# The batch path. Nearly every entry of the vector is 0 or 1: the 14 card planes, the
# one-hot blocks, the voids, the trick leaders. So the path packs those bits of each game
# into 115 bytes (the card planes, 52 bits each, in 91 bytes; then one bit per entry after
# them, in three uint64 words), turns them into float32 with one unpack and one contiguous
# cast, and then writes the scaled numbers (targets, counts, points, card_trick ...) over
# their columns, whose bits were left 0. Seat-relative values are read with one flat `take`
# per field (index 3 * game + absolute seat), so the cost barely grows with the batch size.


def _relative(seat: int, k: int) -> int:
    return (seat + k) % 3


def _one_hot(value: int, n: int) -> list[int]:
    return [int(value == k) for k in range(n)]


def _number_slice(name: str) -> slice:
    """Where segment ``name`` lies among the entries after the card planes."""
    return slice(SEGMENTS[name].start - _CARD_WIDTH, SEGMENTS[name].stop - _CARD_WIDTH)


_RELATIVE_SEATS = np.array([[_relative(seat, k) for k in range(3)] for seat in range(3)])  # [seat, k]: absolute seat
_PAIR_COLUMNS = np.array([[3 * _relative(seat, g) + _relative(seat, r) for g, r in _PAIRS] for seat in range(3)])
_PLAYMAKER_SEAT = np.array([(dealer + PLAYMAKER) % 3 for dealer in range(3)])
_SUITS = SUIT_MASKS[:4]
_TRUMPS = [set(range(13 * mode, 13 * mode + 13)) if mode < 4 else set() for mode in range(6)]
_BEATS = np.array([[0] * 53] + [  # [mode + 1, card + 1]: the cards that beat `card` on the table (R16)
    [0] + [sum(1 << c for c in range(52) if (c // 13 == best // 13 and c > best)
               or (c in _TRUMPS[mode] and best not in _TRUMPS[mode])) for best in range(52)]
    for mode in range(6)], dtype=np.uint64)
_SUIT_BITS = np.uint64(0x1FFF)  # the 13 cards of a suit shifted down to bits 0..12
_TOP_CARD = np.array([0] + [1 << (v.bit_length() - 1) for v in range(1, 1 << 13)], dtype=np.uint64)
"""_TOP_CARD[13 cards of a suit as bits]: the highest of them, as a bit."""


def _scale(name: str) -> np.float32:
    return np.float32(1 / SCALES[name])


# The situation of a game as one index: phase, mode, seat to act, trick leader, dealer and
# observer. It decides decision ... roles, trick_leader (bits) and the targets.
_SITUATIONS = [(phase, mode, to_act, leader, dealer, seat) for phase in range(6) for mode in range(-1, 6)
               for to_act in range(-1, 3) for leader in range(-1, 3) for dealer in range(3) for seat in range(3)]


def _situation_index(state: State, seat: np.ndarray) -> np.ndarray:
    """intp[B]: each game's index into _SITUATIONS (the order of its loops above)."""
    index = state.phase.astype(np.intp) * 7 + state.mode + 1
    index = (index * 4 + state.to_act + 1) * 4 + state.leader + 1
    return (index * 3 + state.dealer) * 3 + seat


def _situation_bits(phase: int, mode: int, to_act: int, leader: int, dealer: int, seat: int) -> int:
    """The set entries of decision ... roles and trick_leader as bits (bit i: entry i after
    the card planes): the decision kind (none once over), the relative seat to act (none at
    -1), the mode, the role of each relative seat, the relative trick leader."""
    def rel(s: int) -> int:
        return (s - seat) % 3 if s >= 0 else 3  # 3: none

    entries = _one_hot(phase, 5) + _one_hot(rel(to_act), 3) + _one_hot(mode, 6)
    for k in range(3):
        entries += _one_hot((_relative(seat, k) - dealer) % 3, 3)
    assert len(entries) == _number_slice("roles").stop
    bits = sum(1 << i for i, e in enumerate(entries) if e)
    return bits | sum(1 << (_number_slice("trick_leader").start + k) for k in range(3) if rel(leader) == k)


_SITUATION_BITS = np.array([_situation_bits(*s) for s in _SITUATIONS], dtype=np.uint64)
_SITUATION_TARGETS = np.array([  # the tricks each relative seat must make (R23, R24)
    (MIN_TARGETS if mode == MINIMUM else TARGETS)[[(_relative(seat, k) - dealer) % 3 for k in range(3)]]
    for _, mode, _, _, dealer, seat in _SITUATIONS], dtype=np.int8)
_SEAT_BIT = np.array([1, 2, 4, 0], dtype=np.uint64)  # [relative seat]: its one-hot bit; [3]: none
_SPREAD3 = np.array([sum(1 << 3 * i for i in range(8) if byte >> i & 1) for byte in range(256)], dtype=np.uint64)
"""_SPREAD3[byte]: bit i of the byte moved to bit 3 i (one trick per 3 entries of trick_leaders)."""


def _put_bits(words: np.ndarray, value: np.ndarray, position: int, width: int) -> None:
    """OR the ``width``-bit numbers ``value`` (uint64[B]) into the bit rows ``words``
    (uint64[B, _NUMBER_WORDS]) at bit ``position``, across a word boundary if need be."""
    word, shift = divmod(position, 64)
    words[:, word] |= value << np.uint64(shift)
    if shift + width > 64:
        words[:, word + 1] |= value >> np.uint64(64 - shift)


def _card_planes(state: State, seat: np.ndarray, own: np.ndarray, relative: np.ndarray,
                 best_position: np.ndarray) -> np.ndarray:
    """uint64[B, 14]: the observer's card planes hand ... highest_left (the docstring's order).
    ``own`` and ``relative`` index the observer and its relative seats in [B, 3] fields."""
    n = state.batch_size
    planes = np.empty((n, _NUM_PLANES), dtype=np.uint64)
    is_playmaker = seat == _PLAYMAKER_SEAT[state.dealer]
    hand = state.hands.take(own)
    choosing = state.phase == MODE
    if np.count_nonzero(choosing):  # R9: the playmaker sees its first six cards only
        hand = np.where(choosing & is_playmaker, state.first_six, hand)
    planes[:, 0] = hand
    planes[:, 1:4] = state.played.take(relative)
    planes[:, 4:7] = bit(state.trick)
    planes[:, 7] = np.where(state.phase >= DISCARD, state.talon, np.uint64(0))  # shown once taken
    planes[:, 8] = np.where(is_playmaker, state.discards, np.uint64(0))
    planes[:, 9] = state.given.take(own)
    planes[:, 10] = state.received.take(own)
    # Derived: the card winning the trick so far, the own cards that would beat it (R16),
    # and per suit the highest card not played nor among own discards.
    best = state.trick.take(3 * np.arange(n) + best_position)  # -1 on an empty table (position 0)
    planes[:, 11] = bit(best)
    planes[:, 12] = hand & _BEATS.take((state.mode.astype(np.intp) + 1) * 53 + best + 1)
    remaining = ~(planes[:, 1] | planes[:, 2] | planes[:, 3] | planes[:, 8])
    highest_left = planes[:, 13]
    highest_left[...] = _TOP_CARD.take(remaining & _SUIT_BITS)
    for suit in range(1, 4):
        shift = np.uint64(13 * suit)
        highest_left |= _TOP_CARD.take((remaining >> shift) & _SUIT_BITS) << shift
    return planes


def _pack_planes(planes: np.ndarray, out: np.ndarray) -> None:
    """The 14 planes of 52 bits as 91 bytes per game (bit 52 p + c: card c of plane p), into
    ``out`` (uint8[B, 91]): two planes make 104 bits, 13 bytes, written as two uint64."""
    n = planes.shape[0]
    pairs = np.empty((n, _NUM_PLANES // 2, 2), dtype="<u8")
    even, odd = planes[:, 0::2], planes[:, 1::2]
    np.left_shift(odd, np.uint64(52), out=pairs[:, :, 0])
    pairs[:, :, 0] |= even
    np.right_shift(odd, np.uint64(12), out=pairs[:, :, 1])
    out.reshape(n, _NUM_PLANES // 2, 13)[...] = pairs.view(np.uint8)[:, :, :13]


def _number_bits(state: State, seat: np.ndarray, situation: np.ndarray, relative: np.ndarray,
                 best_position: np.ndarray) -> np.ndarray:
    """uint64[B, 3]: the bits of the entries after the card planes (bit i: entry i) that are
    0 or 1: decision ... roles, trick_leader, modes_available, trick_leaders, voids and
    winning_seat (every other entry's bit is 0)."""
    n = state.batch_size
    words = np.zeros((n, _NUMBER_WORDS), dtype=np.uint64)
    words[:, 0] = _SITUATION_BITS.take(situation)
    free = state.modes_used.take(relative).astype(np.uint64) ^ np.uint64(63)  # R8: the modes not used yet
    _put_bits(words, free[:, 0] | free[:, 1] << np.uint64(6) | free[:, 2] << np.uint64(12),
              _number_slice("modes_available").start, 18)
    # trick_leaders: bit 3 t + k where relative seat k led trick t.
    led = np.empty((3, n, 16), dtype=bool)  # [absolute seat, game, trick]: the seat led the trick
    for s in range(3):
        np.equal(state.trick_leaders, s, out=led[s])
    spread = _SPREAD3.take(np.packbits(led.reshape(-1), bitorder="little")).reshape(3, n, 2)  # 8 tricks a byte
    patterns = (spread[:, :, 0] | spread[:, :, 1] << np.uint64(24)).T.take(relative)
    _put_bits(words, patterns[:, 0] | patterns[:, 1] << np.uint64(1) | patterns[:, 2] << np.uint64(2),
              _number_slice("trick_leaders").start, 48)
    # voids: bit 4 k + suit where relative seat k has shown it holds no card of the suit (R13, R14).
    shown = state.shown_out.take(relative)
    voids = np.zeros((n, 3), dtype=np.uint8)  # bit = suit
    for suit in range(4):
        voids |= np.equal(shown & _SUITS[suit], _SUITS[suit]).view(np.uint8) << np.uint8(suit)
    voids = voids.astype(np.uint64)
    _put_bits(words, voids[:, 0] | voids[:, 1] << np.uint64(4) | voids[:, 2] << np.uint64(8),
              _number_slice("voids").start, 12)
    winner = (state.leader + best_position - seat) % 3  # R16: the relative seat winning the trick so far
    winner = np.where(state.trick[:, 0] >= 0, winner, 3)
    _put_bits(words, _SEAT_BIT.take(winner), _number_slice("winning_seat").start, 3)
    return words


def _put_numbers(obs: np.ndarray, state: State, planes: np.ndarray, situation: np.ndarray, relative: np.ndarray,
                 seat: np.ndarray, first_column: int = 0) -> None:
    """Write the scaled numbers of the observer into ``obs`` (their columns hold 0), whose
    column 0 is the observation's entry ``first_column``."""
    n = state.batch_size

    def put(name: str, values: np.ndarray) -> None:
        segment = SEGMENTS[name]
        np.multiply(values, _scale(name), out=obs[:, segment.start - first_column:segment.stop - first_column])

    targets = _SITUATION_TARGETS.take(situation, axis=0)
    tricks_won = state.tricks_won.take(relative)
    put("targets", targets)
    put("tricks_won", tricks_won)
    pairs = 9 * np.arange(n)[:, None] + _PAIR_COLUMNS.take(seat, axis=0)
    put("exchange_due", state.exchange_due.take(pairs))
    put("exchange_done", state.exchange_done.take(pairs))
    put("prev_points", state.prev_points.take(relative))
    put("scores", state.scores.take(relative))
    np.multiply(state.deal, _scale("deal"), out=obs[:, SEGMENTS["deal"].start - first_column])
    put("card_trick", state.card_trick + np.int8(1))
    put("tricks_needed", targets - tricks_won)  # R23, R24
    seen = planes[:, 0] | planes[:, 1]  # everything this seat has seen: planes hand ... received
    for k in range(2, 11):
        seen |= planes[:, k]
    put("unseen_per_suit", np.bitwise_count(~seen[:, None] & _SUITS))


def observe(state: State, seat) -> np.ndarray:
    """float32[B, OBSERVATION_SIZE]: the view of ``seat`` (an int or int[B]) in each game."""
    seat = _seats(state, seat)
    if state.batch_size == 1:
        return _observe_one(state, int(seat[0]))
    return _observe_batch(state, seat)


CARD_SETS_WIDTH = _CARD_WIDTH
"""The observation entries that :func:`observe_card_sets` returns as card sets (the 14 planes)."""


def observe_card_sets(state: State, seat) -> tuple[np.ndarray, np.ndarray]:
    """The observation of :func:`observe` in another form, for agents that read its card
    planes as sets of cards: ``(card_sets, rest)``, where ``card_sets`` is uint64[B, 14], plane
    p of the layout (``hand``, ``played`` x 3, ``trick`` x 3, ... ``highest_left``) as a card
    set (bit c: card c), and ``rest`` is float32[B, OBSERVATION_SIZE - CARD_SETS_WIDTH], the
    vector's entries from ``decision`` on. The same numbers from the same code as
    :func:`observe` (tests/test_observation.py checks that they make its vector), without
    writing and reading back 728 floats a game."""
    seat = _seats(state, seat)
    n = state.batch_size
    own, relative, situation, best_position = _observer_indices(state, seat)
    planes = _card_planes(state, seat, own, relative, best_position)
    words = _number_bits(state, seat, situation, relative, best_position).astype("<u8", copy=False)
    bits = np.unpackbits(words.view(np.uint8).reshape(-1), bitorder="little").reshape(n, 64 * _NUMBER_WORDS)
    rest = bits[:, :OBSERVATION_SIZE - _CARD_WIDTH].astype(np.float32)
    _put_numbers(rest, state, planes, situation, relative, seat, first_column=_CARD_WIDTH)
    return planes, rest


def _seats(state: State, seat) -> np.ndarray:
    """``seat`` (an int or int[B]) as intp[B], checked: one observer 0, 1 or 2 per game."""
    n = state.batch_size
    seat = np.asarray(seat, dtype=np.intp)
    if seat.ndim == 0:
        seat = np.full(n, seat)
    if seat.shape != (n,) or np.count_nonzero(seat.astype(np.uintp) > 2):
        raise ValueError(f"seat must be 0, 1 or 2, one per game ({n}), got {seat!r}")
    return seat


def _observer_indices(state: State, seat: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(own, relative, situation, best_position): the observer in the flat [B * 3] view of a
    per-seat field, its relative seats 0, 1, 2 there, the game's situation index, and the
    position winning the current trick (R16, 0 for an empty table)."""
    own = 3 * np.arange(state.batch_size) + seat
    relative = (own - seat)[:, None] + _RELATIVE_SEATS.take(seat, axis=0)
    return own, relative, _situation_index(state, seat), trick_winner_position(state.trick, state.mode)


def _observe_batch(state: State, seat: np.ndarray) -> np.ndarray:
    """:func:`observe` with array operations over the batch (the cost barely grows with B)."""
    n = state.batch_size
    own, relative, situation, best_position = _observer_indices(state, seat)
    planes = _card_planes(state, seat, own, relative, best_position)
    packed = np.empty((n, _PACKED_BYTES), dtype=np.uint8)
    _pack_planes(planes, packed[:, :_CARD_BYTES])
    packed[:, _CARD_BYTES:] = _number_bits(state, seat, situation, relative, best_position).astype(
        "<u8", copy=False).view(np.uint8)
    bits = np.unpackbits(packed.reshape(-1), bitorder="little").reshape(n, 8 * _PACKED_BYTES)  # flat: faster
    obs = bits[:, :OBSERVATION_SIZE].astype(np.float32)
    _put_numbers(obs, state, planes, situation, relative, seat)
    return obs


def _observe_one(state: State, seat: int) -> np.ndarray:
    """:func:`observe` of a batch of one game (the AEC and single-seat envs observe one game at
    a time): the same vector as :func:`_observe_batch`, from the same tables and the same packed
    bits, with the sets and numbers in Python ints. For one game numpy's fixed cost per call
    dominates: besides reading the fields this path makes eight numpy calls, the batch path
    about 150.
    tests/test_observation.py checks that both give the same vector, bit for bit."""
    phase, mode, to_act, leader, dealer = (x.item(0) for x in (state.phase, state.mode, state.to_act, state.leader,
                                                               state.dealer))
    hands, played, given, received = (x[0].tolist() for x in (state.hands, state.played, state.given, state.received))
    trick = state.trick[0].tolist()
    relative = _RELATIVE_LISTS[seat]
    playmaker = (dealer + PLAYMAKER) % 3
    hand = state.first_six.item(0) if phase == MODE and seat == playmaker else hands[seat]  # R9
    discards = state.discards.item(0) if seat == playmaker else 0
    planes = [hand, *(played[s] for s in relative), *(1 << c if c >= 0 else 0 for c in trick),
              state.talon.item(0) if phase >= DISCARD else 0, discards, given[seat], received[seat]]
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
    packed = 0
    for p, plane in enumerate(planes):
        packed |= plane << 52 * p

    # The entries after the card planes that are 0 or 1, as bits (see _number_bits).
    situation = ((((phase * 7 + mode + 1) * 4 + to_act + 1) * 4 + leader + 1) * 3 + dealer) * 3 + seat
    bits = _SITUATION_BITS_LIST[situation]
    modes_used = state.modes_used[0].tolist()
    for k, s in enumerate(relative):  # R8: the modes not used yet
        bits |= (63 ^ modes_used[s]) << _MODES_AVAILABLE_BIT + 6 * k
    for t, s in enumerate(state.trick_leaders[0].tolist()):
        if s >= 0:
            bits |= 1 << _TRICK_LEADERS_BIT + 3 * t + (s - seat) % 3
    shown = state.shown_out[0].tolist()
    for k, s in enumerate(relative):  # R13, R14: a void is a whole suit ruled out
        if shown[s]:
            for suit, cards in enumerate(_SUIT_LIST):
                if shown[s] & cards == cards:
                    bits |= 1 << _VOIDS_BIT + 4 * k + suit
    if winner >= 0:
        bits |= 1 << _WINNING_SEAT_BIT + (winner - seat) % 3
    packed |= bits << _CARD_WIDTH
    obs = np.unpackbits(np.frombuffer(packed.to_bytes(_PACKED_BYTES, "little"), dtype=np.uint8),
                        count=OBSERVATION_SIZE, bitorder="little").astype(np.float32).reshape(1, OBSERVATION_SIZE)

    # The scaled numbers, in the order of _SCALED_COLUMNS.
    targets = _SITUATION_TARGETS_LIST[situation]  # R23, R24
    tricks_won, prev_points, scores = (x[0].tolist() for x in (state.tricks_won, state.prev_points, state.scores))
    tricks_won = [tricks_won[s] for s in relative]
    due, done = state.exchange_due[0].tolist(), state.exchange_done[0].tolist()
    pairs = _PAIR_LISTS[seat]
    numbers = (
        targets + tricks_won + [due[g][r] for g, r in pairs] + [done[g][r] for g, r in pairs]
        + [prev_points[s] for s in relative] + [scores[s] for s in relative] + [state.deal.item(0)]
        + state.card_trick[0].tolist()  # + 1 below (_SCALED_OFFSETS)
        + [target - won for target, won in zip(targets, tricks_won)]  # tricks_needed: R23, R24
        + [(cards & ~seen).bit_count() for cards in _SUIT_LIST]  # unseen_per_suit
    )
    obs[0, _SCALED_COLUMNS] = (np.array(numbers, dtype=np.float32) + _SCALED_OFFSETS) * _SCALED_FACTORS
    return obs


# The tables above as Python lists, for _observe_one.
_RELATIVE_LISTS = _RELATIVE_SEATS.tolist()
_TOP_CARD_LIST = _TOP_CARD.tolist()
_BEATS_LISTS = _BEATS.tolist()
_SUIT_LIST = _SUITS.tolist()
_STRENGTH_LISTS = STRENGTH.tolist()
_SITUATION_BITS_LIST = _SITUATION_BITS.tolist()
_SITUATION_TARGETS_LIST = _SITUATION_TARGETS.tolist()
_PAIR_LISTS = [[(_relative(seat, g), _relative(seat, r)) for g, r in _PAIRS] for seat in range(3)]  # absolute pairs
_MODES_AVAILABLE_BIT, _TRICK_LEADERS_BIT, _VOIDS_BIT, _WINNING_SEAT_BIT = (
    _number_slice(name).start for name in ("modes_available", "trick_leaders", "voids", "winning_seat"))
_SCALED = tuple(name for name in SEGMENTS if SCALES[name] != 1)  # every other segment holds 0s and 1s
_SCALED_COLUMNS = np.concatenate([np.arange(SEGMENTS[name].start, SEGMENTS[name].stop) for name in _SCALED])
_SCALED_FACTORS = np.concatenate([np.full(SEGMENTS[name].stop - SEGMENTS[name].start, _scale(name), dtype=np.float32)
                                 for name in _SCALED])
_SCALED_OFFSETS = np.concatenate([np.full(SEGMENTS[name].stop - SEGMENTS[name].start, name == "card_trick",
                                          dtype=np.float32) for name in _SCALED])  # card_trick: 1 + the trick index


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
