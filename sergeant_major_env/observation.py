"""What one seat knows, as a flat float32 vector per game: its information state.

`observe(state, seat)` returns `float32[B, OBSERVATION_SIZE]` for one seat per game.
Seats inside the vector are *relative* to the observer: index 0 is the observer, 1 the
player on its left (next to play after it), 2 the player on its right. Card planes are
52 wide in card-id order (R3). Numbers are divided by their segment's scale
(`SCALES`). Everything here is what that seat legitimately knows, and the deal's
whole trick history is in it (which trick each card fell in, who led each trick), so the
vector is the seat's complete information state. Segments marked *derived* add nothing
new: they are computed from the others, to help small networks.

| segment | size | scale | meaning |
|---|---|---|---|
| `hand` | 52 | 1 | own cards; during its own mode choice the playmaker sees only its first six cards (R9) |
| `played` | 156 | 1 | cards each relative seat has played in this deal |
| `trick` | 156 | 1 | the current trick, by position (first card = the leader's) |
| `talon` | 52 | 1 | the talon, once turned face up (section 5, step 4) |
| `discards` | 52 | 1 | own discards (the playmaker only) |
| `exchange_given` | 52 | 1 | cards this seat handed over in this deal's exchanges |
| `exchange_received` | 52 | 1 | cards this seat received in them |
| `winning_card` | 52 | 1 | *derived*: the card winning the current trick so far (R16) |
| `winners_in_hand` | 52 | 1 | *derived*: own cards that would beat every card on the table (none while the table is empty) |
| `highest_left` | 52 | 1 | *derived*: per suit, the highest card not yet played in this deal's tricks (nor among own discards) |
| `decision` | 5 | 1 | one-hot decision kind of the seat to act: mode, exchange give, exchange return, discard, play |
| `to_act` | 3 | 1 | relative seat to act (all zero once the game is over) |
| `mode` | 6 | 1 | one-hot mode: S C H D NT MIN (zero before the choice) |
| `roles` | 9 | 1 | per relative seat, one-hot role: dealer, playmaker, third |
| `targets` | 3 | 8 | per relative seat, tricks to make (R23, R24) |
| `tricks_won` | 3 | 16 | per relative seat |
| `trick_leader` | 3 | 1 | relative seat leading the current trick |
| `exchange_due` | 6 | 13 | cards due per (giver, receiver) pair of relative seats |
| `exchange_done` | 6 | 13 | cards handed so far per pair (R22: public counts) |
| `prev_points` | 3 | 13 | per relative seat, points of the previous deal |
| `scores` | 3 | 50 | per relative seat |
| `deal` | 1 | 18 | index of the current deal |
| `modes_available` | 18 | 1 | per relative seat, the modes it may still choose (R8) |
| `card_trick` | 52 | 16 | per card, 1 + the index of the trick of this deal it was played in (0 if not played): with `played` (who) and `trick_leaders` (who led) it gives every trick in order |
| `trick_leaders` | 48 | 1 | per trick 0..15 of this deal, one-hot relative seat of its leader (the current trick included; zero for tricks not begun) |
| `voids` | 12 | 1 | per relative seat and suit S C H D: the seat has shown in this deal's tricks that it holds no card of the suit (R13: it did not follow the led suit; R14: nor trumped, in a trump deal) |
| `winning_seat` | 3 | 1 | *derived*: relative seat winning the current trick so far |
| `tricks_needed` | 3 | 16 | *derived*: per relative seat, target minus tricks won (R23, R24; negative once past the target) |
| `unseen_per_suit` | 4 | 13 | *derived*: per suit, cards this seat has not seen (not in its hand, not played, not the shown talon, not its own discards or exchange cards) |

R22: the cards a pair exchanges are never in the third seat's observation; only the
counts are. While a pair exchanges, the decision kind shows whether the receiver is
choosing its return (so a trump was given, R21); the third seat never decides until the
pair is done, so no decision of it can use that.

[`observe_card_sets`][] gives the same observation with its 14 card planes as uint64
card sets (the form the heuristic reads; no float planes written and decoded again).
`SEGMENTS` maps each name to its slice, `SCALES` each name to its divisor, and
[`decode`][] turns one observation back into natural units (card ids, seats, counts,
the voids and the list of tricks). `VERSION` numbers this layout: it changes whenever a
segment is added, removed, resized or rescaled, and every model file records the version
it was trained on, so a model never silently reads another layout. Pairs in
`exchange_*` are ordered (0→1, 0→2, 1→0, 1→2, 2→0, 2→1) in relative seats.

Both functions are compiled kernels (`sergeant_major_env.jit`): one routine writes each
game's row straight from the state, one game after another; from 256 games the games are
spread over every core where numba has its tbb threading layer (`pip install tbb`; numba's
other layer, GNU OpenMP, is unsafe in the forked worker processes, so without tbb the games
of a batch from 1,024 on are observed in chunks on `threads.spread`'s threads). A single game
costs a few microseconds, a game of a big batch about 0.1 us. The machine code is cached on
disk: only the first call on a machine (or after an upgrade) compiles, for some seconds;
later processes load it. `observe(state, seat, out=array)` writes into a caller's float32
array instead of a new one (an env that observes every step allocates nothing): for big
batches the fast way, since a new array of 4,096 games is 15 MB of fresh memory, which the
system hands out zeroed page by page, and that costs more than writing the vectors.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from .cards import SUIT_MASKS, count_cards_k, highest_card_k
from .engine import (CARD_TRICK, DEAL, DEALER, DISCARD, DISCARDS, EXCHANGE_DONE, EXCHANGE_DUE, FIRST_SIX, GIVEN, HANDS,
                     LEADER, MIN_TARGETS, MINIMUM, MODE, MODE_, MODES_USED, PHASE, PLAYED, PLAYMAKER, PREV_POINTS,
                     RECEIVED, SCORES, SHOWN_OUT, TALON, TARGETS, TO_ACT, TRICK, TRICK_LEADERS, TRICKS_WON, State,
                     state_arrays_k, trick_winner_k)
from .jit import BUFFER, GAMES, INT, INTS, REAL32_ROWS, SET_ROWS, kernel, prange
from .threads import PARALLEL_CHUNK, PARALLEL_SAFE, over_games
from .limits import shorten

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

CARD_SETS_WIDTH = 52 * 14
"""The observation entries that [`observe_card_sets`][] returns as card sets (the 14 planes)."""
_PLANE_SEGMENTS = ("hand", "played", "trick", "talon", "discards", "exchange_given", "exchange_received",
                   "winning_card", "winners_in_hand", "highest_left")
assert [SEGMENTS[name].start for name in _PLANE_SEGMENTS] == [52 * p for p in (0, 1, 4, 7, 8, 9, 10, 11, 12, 13)]
assert SEGMENTS["decision"].start == CARD_SETS_WIDTH
_REST_WIDTH = OBSERVATION_SIZE - CARD_SETS_WIDTH

# The kernels' view of the layout, taken from SEGMENTS and SCALES (numba reads module-level
# ints and float32s as constants): where each segment after the card planes starts, counted
# from the first of them (``decision``), and the float32 factor of each scaled segment.
(_DECISION, _TO_ACT, _MODE, _ROLES, _TARGETS, _TRICKS_WON, _TRICK_LEADER, _EXCHANGE_DUE, _EXCHANGE_DONE, _PREV_POINTS,
 _SCORES, _DEAL, _MODES_AVAILABLE, _CARD_TRICK, _TRICK_LEADERS, _VOIDS, _WINNING_SEAT, _TRICKS_NEEDED,
 _UNSEEN_PER_SUIT) = (SEGMENTS[name].start - CARD_SETS_WIDTH for name in (
    "decision", "to_act", "mode", "roles", "targets", "tricks_won", "trick_leader", "exchange_due", "exchange_done",
    "prev_points", "scores", "deal", "modes_available", "card_trick", "trick_leaders", "voids", "winning_seat",
    "tricks_needed", "unseen_per_suit"))
(_BY_TARGETS, _BY_TRICKS_WON, _BY_EXCHANGE, _BY_PREV_POINTS, _BY_SCORES, _BY_DEAL, _BY_CARD_TRICK, _BY_TRICKS_NEEDED,
 _BY_UNSEEN) = (np.float32(1 / SCALES[name]) for name in (
    "targets", "tricks_won", "exchange_due", "prev_points", "scores", "deal", "card_trick", "tricks_needed",
    "unseen_per_suit"))
assert SCALES["exchange_due"] == SCALES["exchange_done"]
PAIR_GIVERS, PAIR_RECEIVERS = np.array(((0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1))).T.copy()
"""The exchange pairs (giver, receiver) in relative seats, in the order of the `exchange_*`
segments (the module docstring): pair p hands from `PAIR_GIVERS[p]` to `PAIR_RECEIVERS[p]`."""
_ONE, _NONE = np.uint64(1), np.uint64(0)
_BITS = np.array([1 << card for card in range(52)], dtype=np.uint64)  # the one-card sets
_PARALLEL_FROM = 256
"""Batches of this many games or more are observed on every core: by the parallel kernel where
numba's threading layer is tbb (`_PARALLEL_SAFE`), else in chunks on threads (`_run`)."""


_THREADS_FROM = 1024
"""Without tbb, batches of this many games or more are observed in chunks on `threads.spread`'s
threads. Measured on 2 cores, quiet: a game takes about 90 ns on one core, 80 on two at 1,024
games, 66 at 4,096; from 8,192 the rows outgrow the cache and two cores halve the time."""

_PARALLEL_SAFE = PARALLEL_SAFE
"""Big batches use the parallel kernel only with tbb; otherwise every batch is observed serially."""


@kernel(inline=True)
def seat_view_k(g, seat, s):
    """What `seat` sees of the cards of game `g` (`s`: the state's arrays,
    `engine.state_arrays_k`), the one place of it that the observation and the heuristic read:
    `(hand, played, trick, talon, discards, given, received)`, card sets but for `trick`.
    `hand`: its cards, during its own mode choice the playmaker's first six only (R9);
    `played`: the cards each relative seat (0 itself, 1 left, 2 right) has played in this deal;
    `trick`: the current trick's card ids by position (the leader's first; -1 empty); `talon`:
    once turned face up (section 5, step 4), else empty; `discards`: its own, the playmaker's
    alone; `given`, `received`: its own exchange cards, never another pair's (R22)."""
    phase, dealer = np.int64(s[PHASE][g]), np.int64(s[DEALER][g])
    is_playmaker = seat == (dealer + PLAYMAKER) % 3
    hand = s[FIRST_SIX][g] if phase == MODE and is_playmaker else s[HANDS][g, seat]
    played, trick = s[PLAYED], s[TRICK]
    return (hand,
            (played[g, seat], played[g, (seat + 1) % 3], played[g, (seat + 2) % 3]),
            (np.int64(trick[g, 0]), np.int64(trick[g, 1]), np.int64(trick[g, 2])),
            s[TALON][g] if phase >= DISCARD else _NONE,
            s[DISCARDS][g] if is_playmaker else _NONE,
            s[GIVEN][g, seat], s[RECEIVED][g, seat])


@kernel(inline=True)
def observe_game_k(g, seat, s, planes, rest):
    """The view of `seat` in game `g` of the state's arrays `s` (`engine.state_arrays_k`):
    its 14 card planes as card sets into `planes` (uint64[14]) and its entries from
    `decision` on into `rest` (float32[_REST_WIDTH])."""
    (phase, mode, to_act, leader, dealer, deal, shown_out, trick_leaders, card_trick, modes_used, exchange_due,
     exchange_done, tricks_won, prev_points, scores) = (
        s[PHASE], s[MODE_], s[TO_ACT], s[LEADER], s[DEALER], s[DEAL], s[SHOWN_OUT], s[TRICK_LEADERS], s[CARD_TRICK],
        s[MODES_USED], s[EXCHANGE_DUE], s[EXCHANGE_DONE], s[TRICKS_WON], s[PREV_POINTS], s[SCORES])
    ph, md, dl = np.int64(phase[g]), np.int64(mode[g]), np.int64(dealer[g])
    hand, played, trick, talon, own_discards, given, received = seat_view_k(g, seat, s)
    planes[0] = hand
    for k in range(3):
        planes[1 + k] = played[k]
        planes[4 + k] = _ONE << np.uint64(trick[k]) if trick[k] >= 0 else _NONE
    planes[7] = talon
    planes[8] = own_discards
    planes[9] = given
    planes[10] = received
    seen = _NONE  # everything this seat has seen: the planes so far
    for p in range(11):
        seen |= planes[p]
    # Derived: the card winning the trick so far and the own cards that would beat it (R16),
    # per suit the highest card not played nor among own discards.
    first = trick[0]
    position, best, beats = 0, -1, _NONE
    if first >= 0:
        position = trick_winner_k(trick[0], trick[1], trick[2], md)
        best = trick[position]
        if md >= 0:
            suit = best // 13
            beats = SUIT_MASKS[suit] & ~((_ONE << np.uint64(best + 1)) - _ONE)  # its suit, higher
            if md < 4 and suit != md:
                beats |= SUIT_MASKS[md]  # any trump beats a card that is no trump
    planes[11] = _ONE << np.uint64(best) if best >= 0 else _NONE
    planes[12] = hand & beats
    remaining = ~(planes[1] | planes[2] | planes[3] | own_discards)
    highest_left = _NONE
    for suit in range(4):
        top = highest_card_k(remaining & SUIT_MASKS[suit])
        if top >= 0:
            highest_left |= _ONE << np.uint64(top)
    planes[13] = highest_left

    rest[:] = 0
    if ph < 5:
        rest[_DECISION + ph] = 1  # none once the game is over
    if to_act[g] >= 0:
        rest[_TO_ACT + (to_act[g] - seat + 3) % 3] = 1
    if md >= 0:
        rest[_MODE + md] = 1
    for k in range(3):
        other = (seat + k) % 3
        role = (other - dl + 3) % 3
        rest[_ROLES + 3 * k + role] = 1
        target = np.int64(MIN_TARGETS[role] if md == MINIMUM else TARGETS[role])  # R23, R24
        won = np.int64(tricks_won[g, other])
        rest[_TARGETS + k] = np.float32(target) * _BY_TARGETS
        rest[_TRICKS_WON + k] = np.float32(won) * _BY_TRICKS_WON
        rest[_TRICKS_NEEDED + k] = np.float32(target - won) * _BY_TRICKS_NEEDED
        rest[_PREV_POINTS + k] = np.float32(prev_points[g, other]) * _BY_PREV_POINTS
        rest[_SCORES + k] = np.float32(scores[g, other]) * _BY_SCORES
        free = 63 ^ np.int64(modes_used[g, other])  # R8: the modes not used yet
        for m in range(6):
            if (free >> m) & 1:
                rest[_MODES_AVAILABLE + 6 * k + m] = 1
        shown = shown_out[g, other]  # R13, R14: a void is a whole suit ruled out
        for suit in range(4):
            if shown & SUIT_MASKS[suit] == SUIT_MASKS[suit]:
                rest[_VOIDS + 4 * k + suit] = 1
    if leader[g] >= 0:
        rest[_TRICK_LEADER + (leader[g] - seat + 3) % 3] = 1
    for p in range(6):  # R22: the counts of every pair, public
        giver, receiver = (seat + PAIR_GIVERS[p]) % 3, (seat + PAIR_RECEIVERS[p]) % 3
        rest[_EXCHANGE_DUE + p] = np.float32(exchange_due[g, giver, receiver]) * _BY_EXCHANGE
        rest[_EXCHANGE_DONE + p] = np.float32(exchange_done[g, giver, receiver]) * _BY_EXCHANGE
    rest[_DEAL] = np.float32(deal[g]) * _BY_DEAL
    for card in range(52):
        rest[_CARD_TRICK + card] = np.float32(card_trick[g, card] + 1) * _BY_CARD_TRICK
    for t in range(16):
        if trick_leaders[g, t] >= 0:
            rest[_TRICK_LEADERS + 3 * t + (trick_leaders[g, t] - seat + 3) % 3] = 1
    if first >= 0:
        rest[_WINNING_SEAT + (leader[g] + position - seat + 3) % 3] = 1
    for suit in range(4):
        rest[_UNSEEN_PER_SUIT + suit] = np.float32(count_cards_k(SUIT_MASKS[suit] & ~seen)) * _BY_UNSEEN


@kernel(inline=True)
def _seats_ok(seats) -> bool:
    """Every observer 0, 1 or 2 (checked before any output is written)."""
    for s in seats:
        if s < 0 or s > 2:
            return False
    return True


@kernel(inline=True)
def _seat(seats, g):
    """The observer of game `g`: one seat for every game, or one per game."""
    return seats[0] if seats.shape[0] == 1 else seats[g]


@kernel(inline=True)
def _spread(planes, row):
    """The 14 card sets as 52 floats each (1.0: the card is in the set) into `row`. Each card
    is a test against its constant bit, which numba vectorizes (shifting the set by the card's
    id it did not: 7x slower)."""
    for p in range(14):
        cards = planes[p]
        for card in range(52):
            row[52 * p + card] = np.float32(1) if cards & _BITS[card] else np.float32(0)


@kernel(inline=True)
def observe_row_k(g, seat, s, row, card_sets, planes):
    """Game `g` of the state's arrays `s` (`engine.state_arrays_k`) seen by `seat` into
    `row`: the whole vector when `row` has OBSERVATION_SIZE entries, else its entries from
    `decision` on and the card sets into `card_sets[g]`; `planes` is room for the card sets
    when there is no `card_sets`."""
    if card_sets.shape[0]:
        planes = card_sets[g]
    observe_game_k(g, seat, s, planes, row[row.shape[0] - _REST_WIDTH:])
    if row.shape[0] == OBSERVATION_SIZE:
        _spread(planes, row)


@kernel(counted=False)
def _observe_rows(seats, out, card_sets, s, planes, start, stop):
    """The games start..stop-1 seen by their seats into `out`'s rows (the arguments of
    `observe_range_k`; `planes`: room for one game's card sets). Compiled without reference
    counting: the arrays of `s` and the row's views cost two atomic operations each a
    game, four fifths of the time (4,096 games took 2.4 ms, now 0.4 ms)."""
    for g in range(start, stop):
        observe_row_k(g, _seat(seats, g), s, out[g], card_sets, planes)


@kernel(ahead=("game", "threads"), seconds=10,
        signature=(INT, INT, INTS, REAL32_ROWS, SET_ROWS, BUFFER))
def observe_range_k(start, stop, seats, out, card_sets, buffer) -> bool:
    """The observations of the games start..stop-1 into `out` (float32[B, OBSERVATION_SIZE];
    or float32[B, OBSERVATION_SIZE - CARD_SETS_WIDTH] and the card sets into `card_sets`,
    uint64[B, 14], else uint64[0, 14]); False, with nothing written, if a seat is not 0, 1 or
    2 (each chunk of `threads.over_games` checks every seat first, so a bad one writes nothing
    anywhere). `seats`: intp[1] (one seat for every game) or intp[B]; `buffer`: the state's."""
    if not _seats_ok(seats):
        return False
    _observe_rows(seats, out, card_sets, state_arrays_k(buffer), np.empty(14, dtype=np.uint64), start, stop)
    return True


@kernel(parallel=True)
def _observe_parallel(seats, out, card_sets, buffer) -> bool:
    """`observe_range_k` of every game over numba's threads (tbb), `threads.PARALLEL_CHUNK` games
    at a time (the seats checked once)."""
    if not _seats_ok(seats):
        return False
    s = state_arrays_k(buffer)
    n = out.shape[0]
    for c in prange((n + PARALLEL_CHUNK - 1) // PARALLEL_CHUNK):
        _observe_rows(seats, out, card_sets, s, np.empty(14, dtype=np.uint64), c * PARALLEL_CHUNK,
                      min(n, (c + 1) * PARALLEL_CHUNK))
    return True


_NO_CARD_SETS = np.empty((0, 14), dtype=np.uint64)
_ONE_SEAT = tuple(np.full(1, seat, dtype=np.intp) for seat in range(3))  # a seat for every game, without a copy


def _run(state: State, seats: np.ndarray, out: np.ndarray, card_sets: np.ndarray) -> None:
    """`observe_range_k` over every game (`threads.over_games`): one call for small batches; for
    big ones every core: the parallel kernel (from _PARALLEL_FROM games, with tbb), else chunks
    on `threads.spread`'s threads (from _THREADS_FROM games)."""
    n = state.batch_size
    parallel = _observe_parallel if _PARALLEL_SAFE and n >= _PARALLEL_FROM else None
    if not all(over_games(observe_range_k, n, seats, out, card_sets, state.buffer, threads_from=_THREADS_FROM,
                          parallel=parallel)):
        raise _bad_seat(state, seats)


def _seats(state: State, seat) -> np.ndarray:
    """`seat` (an int or int[B]) as intp[1] (one seat for every game) or intp[B]; the kernels
    check the range (0, 1 or 2) and `_bad_seat` says what was wrong."""
    if isinstance(seat, (int, np.integer)) and 0 <= seat <= 2:
        return _ONE_SEAT[int(seat)]
    seats = np.asarray(seat, dtype=np.intp)
    if seats.ndim == 0:
        seats = np.full(state.batch_size, seats)
    if seats.shape != (state.batch_size,):
        raise _bad_seat(state, seats)
    return seats


def _one_line(text: str) -> str:
    return re.sub(r"\n\s*", " ", text)


def _bad_seat(state: State, seats: np.ndarray) -> ValueError:
    """The error for seats that are not 0, 1 or 2, one per game: one line, however many games."""
    return ValueError(f"seat must be 0, 1 or 2, one per game ({state.batch_size}), got {_one_line(shorten(seats))}")


def observe(state: State, seat, out: np.ndarray | None = None) -> np.ndarray:
    """float32[B, OBSERVATION_SIZE]: the view of `seat` (an int or int[B]) in each game.
    `out`, if given, is a C-contiguous float32[B, OBSERVATION_SIZE] array that receives the
    vectors (and is returned): no new array per call, the same vectors. Reuse one for big
    batches: a new array's fresh memory costs more than the vectors' writing (4,096 games a
    decision: `benchmarks/engine.py` times both ways)."""
    seats = _seats(state, seat)
    n = state.batch_size
    if out is None:
        out = np.empty((n, OBSERVATION_SIZE), dtype=np.float32)
    elif not (isinstance(out, np.ndarray) and out.dtype == np.float32 and out.shape == (n, OBSERVATION_SIZE)
              and out.flags.c_contiguous and out.flags.writeable):
        raise ValueError(f"out must be a writeable C-contiguous float32 array of shape ({n}, {OBSERVATION_SIZE}), "
                         f"got {type(out).__name__} {getattr(out, 'dtype', '')} {np.shape(out)}")
    _run(state, seats, out, _NO_CARD_SETS)
    return out


def observe_card_sets(state: State, seat) -> tuple[np.ndarray, np.ndarray]:
    """The observation of [`observe`][] in another form, for agents that read its card
    planes as sets of cards: `(card_sets, rest)`, where `card_sets` is uint64[B, 14], plane
    p of the layout (`hand`, `played` x 3, `trick` x 3, ... `highest_left`) as a card
    set (bit c: card c), and `rest` is float32[B, OBSERVATION_SIZE - CARD_SETS_WIDTH], the
    vector's entries from `decision` on. The same numbers from the same kernel as
    [`observe`][] (tests/test_observation.py checks that they make its vector), without
    writing and reading back 728 floats a game."""
    seats = _seats(state, seat)
    n = state.batch_size
    card_sets = np.empty((n, 14), dtype=np.uint64)
    rest = np.empty((n, _REST_WIDTH), dtype=np.float32)
    _run(state, seats, rest, card_sets)
    return card_sets, rest


def acting_card_sets(state: State, games: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """[`observe_card_sets`][] of the seat to act in each of the games `games` (int64
    indices into `state`), row i for game `games[i]`, read in place: what `observe_card_sets(
    state.take(games), ...)` gives, without copying the games out (a vector env's opponents
    decide in a subset of its games each round). A batch big enough for threads takes that
    copy and [`observe_card_sets`][]'s threads. ValueError (one line) for an index out of
    range or a game with no seat to act."""
    games = np.ascontiguousarray(games, dtype=np.int64)
    if games.size >= (_PARALLEL_FROM if _PARALLEL_SAFE else _THREADS_FROM):
        part = state.take(games)
        return observe_card_sets(part, part.to_act)
    card_sets = np.empty((games.size, 14), dtype=np.uint64)
    rest = np.empty((games.size, _REST_WIDTH), dtype=np.float32)
    bad = _acting_serial(games, rest, card_sets, state.buffer)
    if bad >= 0:
        raise ValueError(f"acting_card_sets: game {games[bad]} of {state.batch_size} has no seat to act "
                         f"(indices are 0..{state.batch_size - 1}, of games in progress)")
    return card_sets, rest


@kernel(ahead="game", seconds=8, signature=(GAMES, REAL32_ROWS, SET_ROWS, BUFFER))
def _acting_serial(games, rest, card_sets, buffer) -> int:
    """[`acting_card_sets`][]: row i the view of the seat to act in game `games[i]`; -1, or
    the position of the first game out of range or with no seat to act (nothing written)."""
    s = state_arrays_k(buffer)
    to_act = s[TO_ACT]
    for i in range(games.size):
        if games[i] < 0 or games[i] >= to_act.size or to_act[games[i]] < 0:
            return i
    _acting_rows(games, rest, card_sets, s)
    return -1


@kernel(counted=False)
def _acting_rows(games, rest, card_sets, s):
    """The rows of `_acting_serial` (checked games), without reference counting
    (`_observe_rows`)."""
    to_act = s[TO_ACT]
    for i in range(games.size):
        observe_game_k(games[i], to_act[games[i]], s, card_sets[i], rest[i])


def observation_bounds(num_deals: int = 18) -> tuple[np.ndarray, np.ndarray]:
    """float32 (low, high) of every entry, for observation spaces: each segment's natural range
    divided by its scale, computed in float32 as [`observe`][] scales them. `scores` span
    +-13 points a deal over `num_deals` deals (R23, R24)."""
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
    """One observation row in natural units: every segment by name, plus `"tricks"`.

    Card planes become sorted card-id lists (`played`, `exchange_*`: one list per relative
    seat or the plane's cards; `trick`: the card of each position, -1 empty; `winning_card`:
    an id or -1); one-hot blocks become indices (-1 for none; `roles`: the role of each relative
    seat); scaled numbers become ints; `modes_available` is `bool[3, 6]`, `voids`
    `bool[3, 4]` (relative seat x suit S C H D), `card_trick` `int[52]` (the trick index of
    each card, -1 if not played) and `trick_leaders` `int[16]` (relative seat, -1).
    `"tricks"` lists this deal's tricks so far, oldest first, the unfinished one last if it has
    cards, each `(leader relative seat, [card ids in playing order])`."""
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
