"""The heuristic's card decisions (free returns, discards, play) as compiled kernels.

`agents.heuristic` describes the decision rules; this module computes them for each game
of a batch in a compiled loop (`sergeant_major_env.jit`), reading the card sets of the
view directly, with no [B, 52] tables. The actions are those of the numpy agent of 0.3.0
bit for bit (`tests/reference_heuristic_030.py`, `tests/test_heuristic_kernel.py`):

* every float is worked out with the same operations in the same order as the numpy code
  did (sums of the known masses by numpy's pairwise summation, the per-suit sums rank by
  rank), and the best legal card is the first of the highest score, as `argmax` picks;
* `log` and `exp` stay numpy's: numpy's own vectorised `exp` / `log` (AVX-512)
  and the C library's, which the kernels would call, differ in the last bit on a few inputs
  in a thousand, enough to flip a tie. So a decision is three kernels with numpy between
  them: the chance that each opponent holds an unknown card (`_miss_all`), then
  `np.log`; the sums of the logs by suit (`_sums_all`), then `np.exp`; the scores
  and the choice (`_choose_all`).

Each kernel loops over the games, serially for small batches and over the cores for big
ones: with numba's `prange` (from `PARALLEL_ROWS` games on, where the start of numba's
threads pays; only with tbb, `sergeant_major_env.threads.PARALLEL_SAFE`), else in chunks on
`threads.spread`'s Python threads (from `THREADS_ROWS` games on). The games are independent:
the actions are the same on any number of threads.
The kernels receive checked arrays of fixed dtypes (`card_actions` converts them).
"""

from __future__ import annotations

import types
from typing import NamedTuple

import numpy as np

from sergeant_major_env.cards import ALL_CARDS, TRUMPS, count_cards_k
from sergeant_major_env.engine import (DEALER, EXCHANGE_DONE, GIVE, MODE_, PHASE, PLAY, TO_ACT, state_arrays_k,
                                       trick_winner_k)
from sergeant_major_env.observation import PAIR_GIVERS, PAIR_RECEIVERS, seat_view_k
from sergeant_major_env.jit import (BUFFER, FLAG_ROWS, GAMES, INT, INT16_ROWS, INT8_ROWS, INT_ROWS, INTS, REAL,
                                    REAL_CUBE, REAL_ROWS, REALS, SET_ROWS, SETS, contiguous, kernel, prange)
from sergeant_major_env.threads import PARALLEL_CHUNK, PARALLEL_SAFE, over_games

PARALLEL_ROWS = 8192
"""From this many games on, the kernels spread the games over the cores (pimc's batches of
tens of thousands of rollouts). Below it they run serially: on a shared two-core machine the
parallel kernels were slower at every batch under about 60,000 games (4,096: 30 ms against
5 ms; 60,000: even), each of the three kernels paying the threads' start and wait."""

THREADS_ROWS = 1024
"""Without tbb, from this many games on the kernels run in chunks on `threads.spread`'s threads
(one per core; a chunk's hand-off costs about 0.1 ms, so small batches stay on one core)."""

PARAM_ORDER = ("lam", "lam_nt", "mu", "nt_length_discard", "nt_length_follow", "draw_master", "draw_long",
               "short_lead", "guard_lead", "lead_win", "second_risk", "danger_lead", "min_short", "fv_trump",
               "fv_k1", "fv_k2")
"""The heuristic's weights (`heuristic.DEFAULT_PARAMS`) the card kernels read, in the order
of their float64 vector (`give_p` is the give's, an argument of `give_actions`)."""
(_LAM, _LAM_NT, _MU, _NT_LENGTH_DISCARD, _NT_LENGTH_FOLLOW, _DRAW_MASTER, _DRAW_LONG, _SHORT_LEAD, _GUARD_LEAD,
 _LEAD_WIN, _SECOND_RISK, _DANGER_LEAD, _MIN_SHORT, _FV_TRUMP, _FV_K1, _FV_K2) = range(len(PARAM_ORDER))

_RETURN, _DISCARD, _PLAY = 2, 3, 4  # view.RETURN_DECISION, DISCARD_DECISION, PLAY_DECISION
_NT, _MIN = 4, 5
_PLAYMAKER_ROLE = 1

_RANK = (np.arange(52) % 13).astype(np.float64)
TIE = -_RANK / 100.0              # play: the lower of equal scores
RANK_TIE = _RANK / 1000.0         # discards, returns, MIN play: the higher of equal scores
KNOWN_MASS = np.array([0.0, 0.9, 1.0])
"""P(a placed card is with the opponent): not placed, the face-up talon (with the playmaker,
who seldom throws it back), a card this seat handed over (with its partner)."""
LOG_MISS_KNOWN = np.log(np.clip(1.0 - KNOWN_MASS, 1e-6, 1.0))
"""log P(the opponent does not hold a placed card), by numpy's log (an argument of the kernels)."""


# ----------------------------------------------------------------------------- card sets

@kernel(inline=True)
def _has(x, card):
    """Whether card `card` is in the uint64 set `x`."""
    return ((x >> np.uint64(card)) & np.uint64(1)) != np.uint64(0)


@kernel(inline=True)
def _suit_set(suit):
    """The 13 cards of `suit` (0..3)."""
    return np.uint64(0x1FFF) << np.uint64(13 * suit)


@kernel(inline=True)
def _below_set(card):
    """The cards of `card`'s suit lower than it."""
    return _suit_set(card // 13) & ((np.uint64(1) << np.uint64(card)) - np.uint64(1))


@kernel(inline=True)
def _above_set(card):
    """The cards of `card`'s suit higher than it."""
    return _suit_set(card // 13) & ~((np.uint64(2) << np.uint64(card)) - np.uint64(1))


# ----------------------------------------------------------------------------- card reading

@kernel(inline=True)
def _placed(unseen, talon, given, exchange_done, role, f):
    """(talon, given): the unseen cards known to be with opponent `f` (0 left, 1 right): the
    talon's, when `f` is the playmaker, and the ones this seat handed over, when it exchanged
    with `f` only (`exchange_done`: pairs 0>1 0>2 1>0 1>2 2>0 2>1)."""
    with_left = np.int64(exchange_done[0]) + np.int64(exchange_done[2])
    with_right = np.int64(exchange_done[1]) + np.int64(exchange_done[4])
    mine, other = (with_left, with_right) if f == 0 else (with_right, with_left)
    handed = given & unseen if mine > 0 and other == 0 else np.uint64(0)
    talon_f = talon & unseen if role[f + 1] == _PLAYMAKER_ROLE else np.uint64(0)
    return talon_f & ~handed, handed


@kernel(inline=True)
def _mass(talon, given, card, known_mass):
    """P(`card` is with the opponent whose placed cards are `talon` and `given`)."""
    if _has(given, card):
        return known_mass[2]
    if _has(talon, card):
        return known_mass[1]
    return known_mass[0]


@kernel(inline=True)
def _mass_of(card, ta, ga, tb, gb, both, known_mass):
    """P(`card` is with opponent a, `_mass`), plus P(it is with opponent b) if `both`."""
    mass = _mass(ta, ga, card, known_mass)
    return mass + _mass(tb, gb, card, known_mass) if both else mass


@kernel(inline=True)
def _pairwise_mass(ta, ga, tb, gb, both, known_mass):
    """The sum of `_mass_of` over the 52 cards as numpy's `sum` adds an array of them (its
    pairwise summation: eight running sums over the first 48, joined in pairs, then the last four
    one by one), without the array: no allocation a decision."""
    r0, r1 = _mass_of(0, ta, ga, tb, gb, both, known_mass), _mass_of(1, ta, ga, tb, gb, both, known_mass)
    r2, r3 = _mass_of(2, ta, ga, tb, gb, both, known_mass), _mass_of(3, ta, ga, tb, gb, both, known_mass)
    r4, r5 = _mass_of(4, ta, ga, tb, gb, both, known_mass), _mass_of(5, ta, ga, tb, gb, both, known_mass)
    r6, r7 = _mass_of(6, ta, ga, tb, gb, both, known_mass), _mass_of(7, ta, ga, tb, gb, both, known_mass)
    for i in range(8, 48, 8):
        r0 += _mass_of(i, ta, ga, tb, gb, both, known_mass)
        r1 += _mass_of(i + 1, ta, ga, tb, gb, both, known_mass)
        r2 += _mass_of(i + 2, ta, ga, tb, gb, both, known_mass)
        r3 += _mass_of(i + 3, ta, ga, tb, gb, both, known_mass)
        r4 += _mass_of(i + 4, ta, ga, tb, gb, both, known_mass)
        r5 += _mass_of(i + 5, ta, ga, tb, gb, both, known_mass)
        r6 += _mass_of(i + 6, ta, ga, tb, gb, both, known_mass)
        r7 += _mass_of(i + 7, ta, ga, tb, gb, both, known_mass)
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    for i in range(48, 52):
        total += _mass_of(i, ta, ga, tb, gb, both, known_mass)
    return total


@kernel(inline=True)
def miss_chances_k(i, scored, unseen, played, talon, given, exchange_done, role, known_mass, miss, entries):
    """Game `i`: `miss[i, f]` = P(opponent f does not hold a given unseen card of unknown
    place), clipped as the logs need it; `entries[i]`: the number of cards in `scored[i]`, those
    whose chances `suit_log_sums_k` works out (a decision needs them at its legal cards)."""
    n_unseen = max(np.float64(count_cards_k(unseen[i])), 1.0)
    t0, g0 = _placed(unseen[i], talon[i], given[i], exchange_done[i], role[i], 0)
    t1, g1 = _placed(unseen[i], talon[i], given[i], exchange_done[i], role[i], 1)
    placed = t0 | g0 | t1 | g1
    if placed == np.uint64(0):  # the numbers of the numpy code with no mass placed (x - 0.0 is x)
        for f in range(2):
            q = min(max((16.0 - np.float64(count_cards_k(played[i, f + 1]))) / n_unseen, 0.0), 1.0)
            miss[i, f] = min(max(1.0 - q, 1e-6), 1.0)
    else:
        free = max(n_unseen - _pairwise_mass(t0, g0, t1, g1, True, known_mass), 1.0)
        for f in range(2):
            t, g = (t0, g0) if f == 0 else (t1, g1)
            held = 16.0 - np.float64(count_cards_k(played[i, f + 1]))
            q = min(max((held - _pairwise_mass(t, g, t, g, False, known_mass)) / free, 0.0), 1.0)
            miss[i, f] = min(max(1.0 - q, 1e-6), 1.0)
    entries[i] = count_cards_k(scored[i])


@kernel(ahead=("game", "threads"), seconds=2.5, signature=(
        INT, INT, SETS, SETS, SET_ROWS, SETS, SETS, INT16_ROWS, INT8_ROWS, REALS, REAL_ROWS, INTS))
def miss_range_k(start, stop, scored, unseen, played, talon, given, exchange_done, role, known_mass, miss, entries):
    """[`miss_chances_k`][] of the games start..stop-1 (`threads.over_games` spreads it)."""
    for i in range(start, stop):
        miss_chances_k(i, scored, unseen, played, talon, given, exchange_done, role, known_mass, miss, entries)


@kernel(parallel=True)
def _miss_parallel(scored, unseen, played, talon, given, exchange_done, role, known_mass, miss, entries):
    """`miss_range_k` over numba's threads (tbb), a chunk of games at a time."""
    n = scored.shape[0]
    for c in prange((n + PARALLEL_CHUNK - 1) // PARALLEL_CHUNK):
        miss_range_k(c * PARALLEL_CHUNK, min(n, (c + 1) * PARALLEL_CHUNK), scored, unseen, played, talon, given,
                     exchange_done, role, known_mass, miss, entries)


def _parallel(rows: int) -> bool:
    """Whether `rows` rows go to the parallel kernels: from `PARALLEL_ROWS` on, where numba's
    threads are safe in forked workers too (`sergeant_major_env.threads.PARALLEL_SAFE`)."""
    return PARALLEL_SAFE and rows >= PARALLEL_ROWS


def _run(range_kernel, parallel_kernel, rows: int, *arguments) -> None:
    """A job's range kernel over `rows` games (`threads.over_games`): its parallel wrapper from
    `PARALLEL_ROWS` games on (tbb), else chunks on `threads.spread`'s threads from `THREADS_ROWS`
    games on, else one call."""
    over_games(range_kernel, rows, *arguments, threads_from=THREADS_ROWS,
               parallel=parallel_kernel if _parallel(rows) else None)


@kernel(inline=True)
def _lowest_card(x):
    """The lowest card of the non-empty uint64 set `x`."""
    return count_cards_k((x & (~x + np.uint64(1))) - np.uint64(1))


@kernel(inline=True)
def suit_log_sums_k(i, scored, unseen, talon, given, exchange_done, role, log_miss, log_known, start,
              void_arg, higher_arg, lower_arg):
    """Game `i`: the arguments of the `exp` that give P(opponent f holds none of a suit)
    (`void_arg[i, f, suit]`) and, for each entry e (a card of `scored[i]`, numbered from
    `start[i]` in card order), P(f holds no unseen card above / below it in its suit)
    (`higher_arg[e, f]`, `lower_arg[e, f]`): sums of the logs up the ranks of the suit, in
    rank order as np.cumsum adds them.

    The log of a card is `log_q` (`log_miss[i, f]`) for an unseen card of unknown place, or
    `0 * log_q + log_known[k]` (k: 2 handed over by this seat, 1 the talon's, 0 any other
    card). `log_known[0]` is 0.0 (log 1: no mass placed; `LOG_MISS_KNOWN`), so a card
    neither unseen nor placed has the log +0.0 and changes no sum: the sums run over the suit's
    unseen and scored cards only (`_sparse_sums`), the numbers of numpy's sums over all
    13 to the last bit (tests/test_heuristic_kernel.py) in about half the time."""
    t0, g0 = _placed(unseen[i], talon[i], given[i], exchange_done[i], role[i], 0)
    t1, g1 = _placed(unseen[i], talon[i], given[i], exchange_done[i], role[i], 1)
    other = unseen[i] & ~(t0 | g0 | t1 | g1)
    cards = scored[i]
    for f in range(2):
        t, g = (t0, g0) if f == 0 else (t1, g1)
        log_q = log_miss[i, f]
        _sparse_sums(i, f, other | t | g, t, g, cards, log_q + log_known[0], 0.0 * log_q + log_known[1],
                     0.0 * log_q + log_known[2], start, void_arg, higher_arg, lower_arg)


@kernel(inline=True)
def _sparse_sums(i, f, live, t, g, cards, log_other, log_talon, log_given, start, void_arg, higher_arg, lower_arg):
    """`suit_log_sums_k`'s sums for opponent `f` over the cards of `live` (the unseen ones:
    the logs `log_given` in `g`, `log_talon` in `t`, `log_other` else) and the
    scored `cards`, rank by rank; every other card's log is +0.0 and is skipped."""
    one, ranks = np.uint64(1), np.uint64(0x1FFF)
    for suit in range(4):
        first = np.uint64(13 * suit)
        left = (live >> first) & ranks
        total = 0.0
        while left:
            card = first + np.uint64(_lowest_card(left))
            total = total + (log_given if (g >> card) & one else (log_talon if (t >> card) & one else log_other))
            left &= left - one
        void_arg[i, f, suit] = total
        if not (cards >> first) & ranks:
            continue
        left = ((live | cards) >> first) & ranks
        upto = 0.0
        while left:
            card = first + np.uint64(_lowest_card(left))
            value = 0.0
            if (live >> card) & one:
                value = log_given if (g >> card) & one else (log_talon if (t >> card) & one else log_other)
                upto = upto + value
            if (cards >> card) & one:
                e = start[i] + count_cards_k(cards & ((one << card) - one))
                higher_arg[e, f] = total - upto
                lower_arg[e, f] = upto - value
            left &= left - one


@kernel(ahead=("game", "threads"), seconds=1.5, signature=(
        INT, INT, SETS, SETS, SETS, SETS, INT16_ROWS, INT8_ROWS, REAL_ROWS, REALS, INTS, REAL_CUBE, REAL_ROWS,
        REAL_ROWS))
def suit_sums_range_k(start_row, stop_row, scored, unseen, talon, given, exchange_done, role, log_miss, log_known,
                      start, void_arg, higher_arg, lower_arg):
    """[`suit_log_sums_k`][] of the games start_row..stop_row-1 (`threads.over_games` spreads it)."""
    for i in range(start_row, stop_row):
        suit_log_sums_k(i, scored, unseen, talon, given, exchange_done, role, log_miss, log_known, start,
                        void_arg, higher_arg, lower_arg)


@kernel(parallel=True)
def _sums_parallel(scored, unseen, talon, given, exchange_done, role, log_miss, log_known, start,
                   void_arg, higher_arg, lower_arg):
    """`suit_sums_range_k` over numba's threads (tbb), a chunk of games at a time."""
    n = scored.shape[0]
    for c in prange((n + PARALLEL_CHUNK - 1) // PARALLEL_CHUNK):
        suit_sums_range_k(c * PARALLEL_CHUNK, min(n, (c + 1) * PARALLEL_CHUNK), scored, unseen, talon, given,
                          exchange_done, role, log_miss, log_known, start, void_arg, higher_arg, lower_arg)


# ----------------------------------------------------------------------------- scores

@kernel(inline=True)
def _future_value(k_above, length, is_trump, no_ruff, p):
    """How likely a card is to take a trick later (trumps and NT), as heuristic._future_value."""
    if k_above == 0:
        honour = 1.0
    elif k_above == 1 and length >= 2:
        honour = p[_FV_K1]
    elif k_above == 2 and length >= 3:
        honour = p[_FV_K2]
    else:
        honour = 0.0
    if is_trump:
        return p[_FV_TRUMP] + (1.0 - p[_FV_TRUMP]) * honour
    return honour * no_ruff


@kernel(inline=True)
def _danger(k_above, k_below, higher0, higher1, lower0, lower1, p):
    """MIN: how likely a card is to be left the highest in a trick later, as heuristic._danger."""
    share = (k_below + 0.5) / (k_above + k_below + 1.0)
    lead_win = (1.0 - lower0 * (1.0 - higher0)) * (1.0 - lower1 * (1.0 - higher1))
    w = p[_DANGER_LEAD]
    return (1.0 - w) * share + w * lead_win


@kernel(inline=True)
def _not_beaten(f, remaining, minimum, is_trump, trump_trick, higher, lower, has_trump, void_led):
    """P(opponent f does not beat the card), 1 when it plays before me (heuristic._not_beat)."""
    if remaining <= f:
        return 1.0
    if minimum:
        return 1.0 - lower * (1.0 - higher)
    if is_trump:
        if trump_trick:
            return higher
        return 1.0 - void_led * (1.0 - higher)
    return higher * (1.0 - lower * has_trump)


class _Hand(NamedTuple):
    """What the scores of one decision read of the seat's hand and the mode, the same for every
    card (`_hand_reading`)."""

    mode: int
    trump_mode: bool
    """a suit is trumps (R8)"""
    minimum: bool
    nt: bool
    has_trump0: float
    """P(the left opponent holds a trump), 0 without trumps"""
    has_trump1: float
    """P(the right opponent holds a trump)"""
    trump_out: float
    """the trumps still unseen"""
    my_trumps: int
    honour_suits: int
    """play: the suits (bits) holding an honour that needs its guard"""


class _Table(NamedTuple):
    """The trick so far, as the play scores read it (`_trick_so_far`)."""

    leading: bool
    best_suit: int
    """the suit of the card winning the trick so far (R16)"""
    best_rank: int
    best_trump: bool
    """the winning card is a trump"""
    led_suit: int
    trump_trick: bool
    """the trick is led in trumps, or this seat leads it"""
    remaining: int
    """the seats that play after this one"""


class _Card(NamedTuple):
    """What the scores read of one legal card (`choose_card_k`)."""

    card: int
    entry: int
    """the card's row of `higher` and `lower` (`suit_log_sums_k`)"""
    suit: int
    is_trump: bool
    k_above: float
    """the unseen cards of its suit above it"""
    length: float
    """the cards of its suit in the hand"""
    fv: float
    """its future value (`_future_value`)"""
    danger: float
    """MIN: `_danger` (0 otherwise)"""


@kernel(inline=True)
def _no_ruff(i, suit, void, has_trump0, has_trump1):
    """P(neither opponent trumps a card of `suit`: not void in it, or holding no trump)."""
    return (1.0 - void[i, 0, suit] * has_trump0) * (1.0 - void[i, 1, suit] * has_trump1)


@kernel(inline=True)
def _honour_suits(i, hand, unseen, mode, void, has_trump0, has_trump1, p):
    """The suits (bits) of game `i`'s hand holding a card of future value between 0.2 and 0.9,
    trumps aside: an honour that needs its guard (heuristic._play's lead)."""
    honour_suits = 0
    for card in range(52):
        if not _has(hand[i], card):
            continue
        suit = card // 13
        is_trump = suit == mode
        if is_trump:
            continue
        no_ruff = _no_ruff(i, suit, void, has_trump0, has_trump1)
        fv = _future_value(np.float64(count_cards_k(unseen[i] & _above_set(card))),
                           np.float64(count_cards_k(hand[i] & _suit_set(suit))), is_trump, no_ruff, p)
        if 0.2 < fv < 0.9:
            honour_suits |= 1 << suit
    return honour_suits


@kernel(inline=True)
def _hand_reading(i, hand, unseen, mode, decision, void, p):
    """The `_Hand` of game `i`'s decision."""
    trump_mode = 0 <= mode < 4
    trumps = _suit_set(mode) if trump_mode else np.uint64(0)
    has_trump0 = 1.0 - void[i, 0, mode] if trump_mode else 0.0
    has_trump1 = 1.0 - void[i, 1, mode] if trump_mode else 0.0
    honour_suits = _honour_suits(i, hand, unseen, mode, void, has_trump0, has_trump1, p) if decision == _PLAY else 0
    return _Hand(mode, trump_mode, mode == _MIN, mode == _NT, has_trump0, has_trump1,
                 np.float64(count_cards_k(unseen[i] & trumps)), count_cards_k(hand[i] & trumps), honour_suits)


@kernel(inline=True)
def _trick_so_far(i, decision, trick, mode, position_of):
    """The `_Table` of game `i` (play; a lead's defaults for the other decisions): the best card
    on the table by R16 (`engine.trick_winner_k`), the led suit, who is still to play."""
    leading, best_suit, best_rank, best_trump, led_suit, trump_trick, remaining = True, 0, 0, False, -1, True, 0
    if decision == _PLAY:
        led_suit = trick[i, 0] // 13
        position = trick_winner_k(trick[i, 0], trick[i, 1], trick[i, 2], mode)  # R16
        leading = trick[i, 0] < 0
        best = 0 if leading else max(trick[i, position], 0)
        best_suit, best_rank = best // 13, best % 13
        trump_suit = mode if mode < 4 else -2
        trump_trick = leading or led_suit == trump_suit
        best_trump = best_suit == trump_suit and not leading
        remaining = 2 - position_of[i]
    return _Table(leading, best_suit, best_rank, best_trump, led_suit, trump_trick, remaining)


@kernel(inline=True)
def _return_score(c, rank_tie):
    """A free return (heuristic._return): the card of least value given back."""
    trump = 1.0 if c.is_trump else 0.0
    return -(c.fv + 2.0 * trump + 0.01 * c.length + rank_tie[c.card])


@kernel(inline=True)
def _discard_score(c, h, p, rank_tie):
    """A discard (heuristic._discard): MIN, the most dangerous card (short suits first);
    otherwise the card of least value, long suits kept in NT."""
    if h.minimum:
        return c.danger + p[_MIN_SHORT] * (1.0 if c.length <= 2 else 0.0) + rank_tie[c.card]
    trump = 1.0 if c.is_trump else 0.0
    bonus = p[_NT_LENGTH_DISCARD] * max(c.length - 3.0, 0.0) if h.nt else 0.0
    return -(c.fv + 2.0 * trump + bonus + rank_tie[c.card])


@kernel(inline=True)
def _win_chance(i, c, h, t, void, higher, lower):
    """(beats, win): whether the card beats the table (R16) and the chance that it takes the
    trick, neither opponent still to play beating it (`_not_beaten`)."""
    beats = t.leading or (c.suit == t.best_suit and c.card % 13 > t.best_rank) or (c.is_trump and not t.best_trump)
    void_led = (void[i, 0, max(t.led_suit, 0)], void[i, 1, max(t.led_suit, 0)])
    has_trump = (h.has_trump0, h.has_trump1)
    win = 1.0 if beats else 0.0
    for f in range(2):
        win = win * _not_beaten(f, t.remaining, h.minimum, c.is_trump, t.trump_trick, higher[c.entry, f],
                                lower[c.entry, f], has_trump[f], void_led[f])
    return beats, win


@kernel(inline=True)
def _lead_score(c, h, win, p, tie):
    """Leading (heuristic._play): a likely winner, drawing trumps with a master or the longer
    trumps, a short side suit with trumps in hand; an unguarded honour's suit avoided."""
    weak = 1.0 if win < 0.5 else 0.0
    master_draw = 1.0 if c.is_trump and c.k_above == 0 and h.trump_out > 0 else 0.0
    long_trumps = 1.0 if c.is_trump and h.trump_out > 0 and h.my_trumps > h.trump_out else 0.0
    short = (1.0 if h.my_trumps > 0 and not c.is_trump else 0.0) * p[_SHORT_LEAD] * (4.0 - min(c.length, 4.0))
    guarded = 1.0 if h.honour_suits & (1 << c.suit) else 0.0
    return (p[_LEAD_WIN] * win + p[_DRAW_MASTER] * master_draw + p[_DRAW_LONG] * long_trumps * weak
            + short * (1.0 if h.trump_mode else 0.0)
            - p[_GUARD_LEAD] * guarded * weak + tie[c.card])


@kernel(inline=True)
def _follow_score(c, h, t, beats, win, p, tie):
    """Following (heuristic._play): the chance to win less the future value spent, a risky
    second-hand win and, in NT, the length of a losing card's suit weighed."""
    lam = p[_LAM_NT] if h.nt else p[_LAM]
    second = 1.0 if t.remaining == 1 and beats else 0.0
    losing = 1.0 if win <= 0 else 0.0
    return (win - lam * c.fv + tie[c.card] - p[_SECOND_RISK] * second * (1.0 - win)
            + losing * p[_NT_LENGTH_FOLLOW] * c.length * (1.0 if h.nt else 0.0))


@kernel(inline=True)
def _play_score(i, c, h, t, void, higher, lower, p, tie, rank_tie):
    """A card to play (heuristic._play): MIN, the least chance to win and the least danger;
    otherwise `_lead_score` or `_follow_score`."""
    beats, win = _win_chance(i, c, h, t, void, higher, lower)
    if h.minimum:
        return -win + p[_MU] * c.danger + rank_tie[c.card]
    if t.leading:
        return _lead_score(c, h, win, p, tie)
    return _follow_score(c, h, t, beats, win, p, tie)


@kernel(inline=True)
def _card_reading(i, card, h, decision, hand, unseen, legal, void, higher, lower, start, p):
    """The `_Card` of a legal card of game `i`."""
    entry = start[i] + count_cards_k(legal[i] & ((np.uint64(1) << np.uint64(card)) - np.uint64(1)))
    suit = card // 13
    is_trump = suit == h.mode
    k_above = np.float64(count_cards_k(unseen[i] & _above_set(card)))
    length = np.float64(count_cards_k(hand[i] & _suit_set(suit)))
    fv = _future_value(k_above, length, is_trump, _no_ruff(i, suit, void, h.has_trump0, h.has_trump1), p)
    danger = 0.0
    if h.minimum and decision != _RETURN:
        k_below = np.float64(count_cards_k(unseen[i] & _below_set(card)))
        danger = _danger(k_above, k_below, higher[entry, 0], higher[entry, 1], lower[entry, 0], lower[entry, 1], p)
    return _Card(card, entry, suit, is_trump, k_above, length, fv, danger)


@kernel(inline=True)
def choose_card_k(i, hand, unseen, legal, trick, mode_of, decision_of, position_of, void, higher, lower, start,
                p, tie, rank_tie, actions):
    """Game `i`: the legal card of highest score for its decision (first on ties, -inf for the
    other cards, as `argmax`), the scores of heuristic._return, _discard and _play; `higher`
    and `lower` at the legal cards (entries from `start[i]`, `suit_log_sums_k`)."""
    decision = decision_of[i]
    h = _hand_reading(i, hand, unseen, mode_of[i], decision, void, p)
    t = _trick_so_far(i, decision, trick, mode_of[i], position_of)
    chosen, best_score = 0, -np.inf
    for card in range(52):
        if not _has(legal[i], card):
            continue
        c = _card_reading(i, card, h, decision, hand, unseen, legal, void, higher, lower, start, p)
        if decision == _RETURN:
            score = _return_score(c, rank_tie)
        elif decision == _DISCARD:
            score = _discard_score(c, h, p, rank_tie)
        else:  # play
            score = _play_score(i, c, h, t, void, higher, lower, p, tie, rank_tie)
        if np.isnan(score):  # argmax: the first NaN is the maximum
            chosen = card
            break
        if score > best_score:
            chosen, best_score = card, score
    actions[i] = chosen


@kernel(ahead=("game", "threads"), seconds=6.5, signature=(
        INT, INT, SETS, SETS, SETS, INT_ROWS, INTS, INTS, INTS, REAL_CUBE, REAL_ROWS, REAL_ROWS, INTS, REALS,
        REALS, REALS, INTS))
def choose_range_k(start_row, stop_row, hand, unseen, legal, trick, mode, decision, position, void, higher, lower,
                   start, p, tie, rank_tie, actions):
    """[`choose_card_k`][] of the games start_row..stop_row-1 (`threads.over_games` spreads it)."""
    for i in range(start_row, stop_row):
        choose_card_k(i, hand, unseen, legal, trick, mode, decision, position, void, higher, lower, start, p, tie,
                      rank_tie, actions)


@kernel(parallel=True)
def _choose_parallel(hand, unseen, legal, trick, mode, decision, position, void, higher, lower, start, p, tie,
                     rank_tie, actions):
    """`choose_range_k` over numba's threads (tbb), a chunk of games at a time."""
    n = hand.shape[0]
    for c in prange((n + PARALLEL_CHUNK - 1) // PARALLEL_CHUNK):
        choose_range_k(c * PARALLEL_CHUNK, min(n, (c + 1) * PARALLEL_CHUNK), hand, unseen, legal, trick, mode,
                       decision, position, void, higher, lower, start, p, tie, rank_tie, actions)


# ----------------------------------------------------------------------------- exchange gives

@kernel(ahead="game", seconds=1, signature=(SETS, SETS, SETS, SETS, SETS, SETS, REAL, INTS))
def give_actions(hand, unseen, received, given, trumps, legal, p, actions):
    """The exchange give of each game (`heuristic.HeuristicAgent._give` documents the rule),
    into `actions`: the legal card of the highest score, the lowest on ties (card 0 when no
    legal card scores; the agent's `ensure_legal` then takes the first legal action). A held
    side suit scores at its lowest card: what the receiver's forced return of its highest card
    of the suit is worth (each unseen card above that one and below the highest card it
    returned in this suit before is with the receiver with probability `p`, and worth a trick
    if no unseen card is above it, 0.4 if one is, 0.1 for a ten or higher), less a hundredth a
    rank; a trump scores -10 less its rank. The numbers of 0.3.0's numpy, operation by
    operation (summed and multiplied from the top rank down)."""
    for i in range(hand.size):
        best, choice = -np.inf, 0
        for suit in range(4):
            base = 13 * suit
            lowest = 0  # the lowest held rank (0 when none is held: the suit then scores nothing)
            while lowest < 12 and not (hand[i] >> np.uint64(base + lowest)) & np.uint64(1):
                lowest += 1
            held = (hand[i] >> np.uint64(base)) & np.uint64(0x1FFF) != 0
            cap = 13  # the receiver holds nothing above the highest card it returned in this suit
            came_back = (received[i] >> np.uint64(base)) & np.uint64(0x1FFF)
            if (given[i] >> np.uint64(base)) & np.uint64(0x1FFF) and came_back:
                cap = 12
                while not (came_back >> np.uint64(cap)) & np.uint64(1):
                    cap -= 1
            gain, none_above, unseen_above = 0.0, 1.0, 0
            for rank in range(12, -1, -1):
                is_unseen = (unseen[i] >> np.uint64(base + rank)) & np.uint64(1) != 0
                if is_unseen and lowest < rank < cap:
                    if unseen_above == 0:
                        worth = 1.0
                    elif unseen_above == 1:
                        worth = 0.4
                    else:
                        worth = 0.1 if rank >= 9 else 0.0
                    gain += none_above * p * worth
                    none_above *= 1 - p
                unseen_above += is_unseen
            for rank in range(13):
                card = base + rank
                bit = np.uint64(1) << np.uint64(card)
                if (trumps[i] & bit) != 0:
                    score = -10.0 - rank
                elif held and rank == lowest:
                    score = gain - 0.01 * lowest
                else:
                    continue
                if (legal[i] & bit) != 0 and score > best:
                    best, choice = score, card
        actions[i] = choice


# ----------------------------------------------------------------------------- read from the engine state

_ONE, _NONE = np.uint64(1), np.uint64(0)


@kernel(inline=True)
def gather_seat_k(k, g, bits, s, q_hand, q_unseen, q_played, q_talon, q_given, q_legal, q_exchange_done, q_role,
                  q_trick, q_mode, q_decision, q_position):
    """Row `k` of the heuristic's inputs: game `g` of the state's arrays `s`
    (`engine.state_arrays_k`) seen by its seat to act, through `observation.seat_view_k`
    (what the seat sees, as its observation has it): the fields of `view.View` of
    `observe_card_sets` (hand, unseen cards, played by relative seat, the talon once shown,
    own exchange cards, the pairs' exchange counts, relative roles, the trick, mode, decision,
    position in the trick); `bits`: its legal actions. Returns the cards the seat received in
    this deal's exchanges."""
    seat, dl, ph = np.int64(s[TO_ACT][g]), np.int64(s[DEALER][g]), np.int64(s[PHASE][g])
    hand, played, trick, talon, own_discards, given, received = seat_view_k(g, seat, s)
    gone = own_discards  # the playmaker's own discards (section 5)
    for r in range(3):
        q_played[k, r] = played[r]
        gone |= played[r]
    position = 0
    for r in range(3):
        q_trick[k, r] = trick[r]
        if trick[r] >= 0:
            gone |= _ONE << np.uint64(trick[r])
            position += 1
    q_hand[k] = hand
    q_unseen[k] = ALL_CARDS & ~hand & ~gone
    q_talon[k] = talon
    q_given[k] = given
    q_legal[k] = bits
    exchange_done = s[EXCHANGE_DONE]
    for p in range(6):
        q_exchange_done[k, p] = exchange_done[g, (seat + PAIR_GIVERS[p]) % 3, (seat + PAIR_RECEIVERS[p]) % 3]
    for r in range(3):
        q_role[k, r] = ((seat + r) % 3 - dl + 3) % 3
    q_mode[k] = s[MODE_][g]
    q_decision[k] = ph
    q_position[k] = position
    return received


@kernel(ahead="game", seconds=1.8, signature=(
        BUFFER, GAMES, FLAG_ROWS, SETS, SETS, SET_ROWS, SETS, SETS, SETS, SETS, SETS, INT16_ROWS, INT8_ROWS,
        INT_ROWS, INTS, INTS, INTS, INTS))
def gather_decisions(buffer, games, legal_mask, hand, unseen, played, talon, given, received, trumps, scored,
                     exchange_done, role, trick, mode, decision, position, rows):
    """The heuristic's inputs (`view.View`'s fields) of the games `games` of an engine state
    (its `buffer`), read in place: those whose seat to act decides a free return, a discard
    or a play (what `card_actions` reads) in rows 0, 1, ... of the outputs, those that
    decide an exchange give (what `give_actions` reads) in the last rows, n-1, n-2, ...;
    `rows[k]`: the position in `games` of row k's game, `scored`: its legal cards (the
    card columns of its row of `legal_mask`). Returns the numbers of each; the other games
    (a mode choice, a finished game) are left to the caller."""
    s = state_arrays_k(buffer)
    phase, to_act, mode_of = s[PHASE], s[TO_ACT], s[MODE_]
    n = games.size
    cards_found = gives_found = 0
    for j in range(n):
        g = games[j]
        ph = phase[g]
        if to_act[g] < 0 or ph < GIVE or ph > PLAY:
            continue
        k = n - 1 - gives_found if ph == GIVE else cards_found
        cards = _NONE
        for card in range(52):
            if legal_mask[j, card]:
                cards |= _ONE << np.uint64(card)
        received[k] = gather_seat_k(k, g, cards, s, hand, unseen, played, talon, given, scored, exchange_done, role,
                                    trick, mode, decision, position)
        trumps[k] = TRUMPS[mode_of[g] if mode_of[g] >= 0 else 6]
        rows[k] = j
        if ph == GIVE:
            gives_found += 1
        else:
            cards_found += 1
    return cards_found, gives_found


# ----------------------------------------------------------------------------- the decision

def card_actions(v, legal: np.ndarray, params: np.ndarray) -> np.ndarray:
    """int64[B]: the heuristic's card for each game of the view `v` (a `view.View` whose
    games all decide a free return, a discard or a play), `legal` its legal cards (uint64[B]),
    `params` the weights in `PARAM_ORDER` (float64)."""
    sets = _card_sets(v, legal)
    void, higher, lower, start = card_reading(v, legal, sets, scored=sets["legal"])
    actions = np.empty(v.n, dtype=np.int64)
    _run(choose_range_k, _choose_parallel, v.n,
         sets["hand"], sets["unseen"], sets["legal"], contiguous(v.trick, np.int64), contiguous(v.mode, np.int64),
         contiguous(v.decision, np.int64), contiguous(v.position, np.int64), void, higher, lower, start,
         contiguous(params, np.float64), TIE, RANK_TIE, actions)
    return actions


def state_actions(state, games: np.ndarray, legal_mask: np.ndarray, params: np.ndarray,
                  give_p: float) -> tuple[np.ndarray, np.ndarray]:
    """The heuristic's free returns, discards, plays and exchange gives for the games `games`
    (int64) of the engine `state` whose seat to act has one of those decisions: `(rows,
    actions)`, `actions[k]` for `games[rows[k]]`. `legal_mask`: bool[len(games), 58],
    C-contiguous, their legal actions; `params`: the card weights, `give_p`: the give's.
    The same actions as `card_actions` and `give_actions` of those games'
    observations (`heuristic.HeuristicAgent`): the view's fields read in place by
    `gather_decisions`, what the seat to act knows, instead of written into an
    observation and decoded."""
    n = games.size
    inputs = types.SimpleNamespace(
        hand=np.empty(n, np.uint64), unseen=np.empty(n, np.uint64), played=np.empty((n, 3), np.uint64),
        talon=np.empty(n, np.uint64), given=np.empty(n, np.uint64), received=np.empty(n, np.uint64),
        trumps=np.empty(n, np.uint64), legal=np.empty(n, np.uint64), exchange_done=np.empty((n, 6), np.int16),
        role=np.empty((n, 3), np.int8), trick=np.empty((n, 3), np.int64), mode=np.empty(n, np.int64),
        decision=np.empty(n, np.int64), position=np.empty(n, np.int64))
    rows = np.empty(n, np.int64)
    n_cards, n_gives = gather_decisions(state.buffer, games, legal_mask, *vars(inputs).values(), rows)
    actions = np.empty(n, np.int64)
    if n_cards:
        cards = types.SimpleNamespace(n=n_cards, **{name: array[:n_cards] for name, array in vars(inputs).items()})
        actions[:n_cards] = card_actions(cards, cards.legal, params)
    if n_gives:
        first = n - n_gives
        give_actions(inputs.hand[first:], inputs.unseen[first:], inputs.received[first:], inputs.given[first:],
                     inputs.trumps[first:], inputs.legal[first:], give_p, actions[first:])
    found = np.r_[0:n_cards, n - n_gives:n]
    return rows[found], actions[found]


def card_reading(v, legal: np.ndarray, sets: dict | None = None, scored: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
    """The card model of the view `v` (`legal`: uint64[B]): `void` (float64[B, 2, 4], P(each
    opponent holds none of a suit)), and at each entry (a card of `scored`, by default the hand
    and the legal cards, game by game, in card order, the entries of game i from `start[i]`)
    `higher` and `lower` (float64[E, 2], P(each opponent holds no unseen card above / below it
    in its suit)), and `start`. A decision needs them at its legal cards only (`scored=legal`:
    each entry's numbers are the same whichever other cards are scored)."""
    sets = _card_sets(v, legal) if sets is None else sets
    n = v.n
    unseen, talon, given = sets["unseen"], sets["talon"], sets["given"]
    scored = sets["hand"] | sets["legal"] if scored is None else contiguous(scored, np.uint64)
    exchange_done, role = contiguous(v.exchange_done, np.int16), contiguous(v.role, np.int8)
    miss, entries = np.empty((n, 2)), np.empty(n, dtype=np.int64)
    _run(miss_range_k, _miss_parallel, n, scored, unseen, sets["played"], talon, given,
         exchange_done, role, KNOWN_MASS, miss, entries)
    log_miss = np.log(miss)
    start = np.cumsum(entries) - entries
    total = int(start[-1] + entries[-1]) if n else 0
    # The three kinds of exp arguments in one buffer: one np.exp (the same numbers element by element).
    arguments = np.empty(8 * n + 4 * total)
    void_arg = arguments[:8 * n].reshape(n, 2, 4)
    higher_arg = arguments[8 * n:8 * n + 2 * total].reshape(total, 2)
    lower_arg = arguments[8 * n + 2 * total:].reshape(total, 2)
    _run(suit_sums_range_k, _sums_parallel, n, scored, unseen, talon, given, exchange_done, role,
         log_miss, LOG_MISS_KNOWN, start, void_arg, higher_arg, lower_arg)
    np.exp(arguments, out=arguments)
    return void_arg, higher_arg, lower_arg, start


def _card_sets(v, legal: np.ndarray) -> dict:
    """The view's card sets the kernels read, as C-contiguous uint64 arrays."""
    sets = {name: contiguous(getattr(v, name), np.uint64) for name in ("hand", "unseen", "talon", "given", "played")}
    sets["legal"] = contiguous(legal, np.uint64)
    return sets
