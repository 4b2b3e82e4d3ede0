"""Hidden-card sampling: complete game states ("worlds") consistent with what one seat knows.

`sample_worlds(state, games, worlds, rng)` returns, for each listed game, `worlds`
copies of it in which everything the seat to act cannot see is redrawn at random, and
everything it can see is kept. It is the determinization step of search bots (PIMC), in
the manner of OpenSpiel's `resample_from_infostate`: the worlds are plain engine states,
so the one engine plays them out.

What the seat to act knows, and so every world keeps (RULES.md):

* its own hand; during its own mode choice only its first six cards (R9);
* the cards played in this deal, trick by trick, and so the cards each seat has shown it
  does not hold: a seat that did not follow suit is void in it (R13), one that neither
  followed nor trumped holds no trump (R14), and with the R15 options, one that did not
  beat the table could not (`State.shown_out`, [`engine.ruled_out`][]);
* the talon once turned face up (section 5): its cards not yet played are in the
  playmaker's hand or among its discards;
* its own discards as playmaker; otherwise only that four unknown cards are out;
* the cards it gave and received in exchanges (R21, R22): a card it handed to a seat is
  still in that seat's hand (or, for the playmaker, hand or discards once the talon is
  taken), unless that seat later exchanged with the third seat, out of its sight;
* every public number: hand sizes, tricks won, scores, modes used, exchange counts.

Not used (so worlds may be slightly more varied than the seat's exact knowledge): what a
forced return (R21) says about the receiver's other cards of that suit, and any inference
from how the others chose to play.

Sampling is exactly uniform over the assignments of the unseen cards that respect all of
the above. The unseen cards go to at most three places: the two other hands and one pile
(the talon before it is shown, the playmaker's discards after, or during the playmaker's
own mode choice its ten unseen cards plus the talon). Each card may go to some of them;
the number of assignments is a sum over how many cards of each kind go to the pile of
products of binomial coefficients, so the sampler draws those counts with their exact
weights, then the cards themselves uniformly (see `_assign_k`). Given a belief model's
probability of each unseen card's place, `exact=True` draws each consistent assignment
with a probability proportional to the product of the probabilities of its placements (a
table over the cards and the hands' counts, then one draw a card: `_product_splits_k`).

Worlds get fresh random seeds (the real seed would reveal the next deals) and keep, of the
other seats' exchanges, only what the seat to act took part in (`last_returned`, the card
of the last return, is -1 unless it was in its pair); `dealt` is -1 (unknown).
"""

from __future__ import annotations

import numpy as np

from .cards import ALL_CARDS, count, count_cards_k
from .engine import (DEALT, DISCARD, DISCARDS, FIRST_SIX, GIVEN, HANDS, LAST_RETURNED, MODE, PLAYMAKER, RECEIVED, SEED,
                     TALON, TALON_CARDS, State, check_batch_fits, insertion_argsort_k, state_arrays_k)
from .jit import BUFFER, FLAGS, INT, INT_ROWS, INTS, REAL_CUBE, REAL_ROWS, REALS, SEEDS, SET_ROWS, SETS, kernel
from .limits import check_count, shorten

_ZERO, _ONE = np.uint64(0), np.uint64(1)
_LOG_FACTORIAL = np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, 64)))])
A_BIN, B_BIN, PILE = 0, 1, 2  # the left (seat + 1) and right (seat + 2) hands, and the pile


def knowledge(state: State, games: np.ndarray) -> dict[str, np.ndarray]:
    """What the seat to act in each of `games` knows about where the unseen cards are.

    Returns uint64 arrays (one row per game; bins are the left hand, the right hand, the pile):

    * `fixed`    [G, 3]: cards known to be in each seat's hand (by absolute seat);
    * `unseen`   [G]:    the cards whose place the seat does not know;
    * `allowed`  [G, 3]: for each bin, the unseen cards that may be there;
    * `capacity` [G, 3] (int): how many unseen cards each bin holds.
    """
    games = np.asarray(games, dtype=np.intp)
    n = games.size
    rows = np.arange(n)
    seat = state.to_act[games].astype(np.intp)
    if np.any(seat < 0):
        raise ValueError("sample_worlds needs games with a seat to act (not over)")
    phase = state.phase[games]
    playmaker = (state.dealer[games].astype(np.intp) + PLAYMAKER) % 3
    left, right = (seat + 1) % 3, (seat + 2) % 3
    hands, given = state.hands[games], state.given[games]
    played = np.bitwise_or.reduce(state.played[games], axis=1)
    choosing = phase == MODE  # only the playmaker decides then, seeing its first six cards (R9)
    own = np.where(choosing, state.first_six[games], hands[rows, seat])
    talon_shown = phase >= DISCARD
    own_discards = np.where(talon_shown & (seat == playmaker), state.discards[games], _ZERO)

    # Exchanges (R21, R22): what the seat handed to each other seat and is still there. A
    # second pair without this seat mixes its partner's hand with the third seat's, unseen.
    pair_seats = np.stack([state.exchange_giver[games], state.exchange_receiver[games]], axis=2)  # [G, 2, 2]
    in_pair = (pair_seats == seat[:, None, None]).any(axis=2)  # [G, 2]
    second_pair_started = (state.exchange_giver[games, 1] >= 0) & (state.exchange_pair[games] >= 1)
    blurred = in_pair[:, 0] & ~in_pair[:, 1] & second_pair_started
    # The seat saw every later move of a card it handed over (unless blurred): it is with the
    # seat it went to, or among the discards if that seat is the playmaker.
    handed_out = np.where(blurred, _ZERO, given[rows, seat] & ~(hands[rows, seat] | played))
    holders = hands.copy()
    holders[rows, playmaker] |= state.discards[games]
    handed = handed_out[:, None] & holders
    handed[rows, seat] = 0
    # Once the talon is taken, a card with the playmaker may also be among its discards.
    with_playmaker = np.where(talon_shown, handed[rows, playmaker], _ZERO)
    fixed = handed.copy()
    fixed[rows, playmaker] &= ~with_playmaker
    fixed[rows, seat] = own

    public_talon = np.where(talon_shown & (seat != playmaker), state.talon[games] & ~played, _ZERO)
    playmaker_only = with_playmaker | public_talon  # in the playmaker's hand or discards
    fixed_anywhere = np.bitwise_or.reduce(fixed, axis=1)
    unseen = ALL_CARDS & ~(played | own_discards | fixed_anywhere)

    shown = state.shown_out[games]
    allowed = np.empty((n, 3), dtype=np.uint64)
    capacity = np.empty((n, 3), dtype=np.int64)
    for b, other in ((A_BIN, left), (B_BIN, right)):
        not_playmaker_only = np.where(other == playmaker, ALL_CARDS, ~playmaker_only)
        allowed[:, b] = unseen & ~shown[rows, other] & not_playmaker_only
        capacity[:, b] = count(hands[rows, other]) - count(fixed[rows, other])
    allowed[:, PILE] = unseen
    # The pile: the talon before it is shown (plus, while choosing, the playmaker's ten
    # unseen cards), the playmaker's discards after, seen by the playmaker itself.
    pile = np.where(talon_shown, np.where(seat == playmaker, 0, count(state.discards[games])), 4)
    capacity[:, PILE] = pile + np.where(choosing, 10, 0)
    return {"fixed": fixed, "unseen": unseen, "allowed": allowed, "capacity": capacity,
            "seat": seat, "left": left, "right": right, "playmaker": playmaker, "choosing": choosing,
            "talon_shown": talon_shown}


def sample_worlds(state: State, games, worlds: int, rng: np.random.Generator, log_probs: np.ndarray | None = None,
                  power: float = 1.0, exact: bool = False) -> State:
    """`worlds` worlds for each of `games` (row `i * worlds + w` is world w of `games[i]`),
    consistent with what the seat to act knows and uniform among such (module docstring).

    `state` an engine [`State`][], `games` game numbers 0..B-1 of it (a game may be
    listed twice), `worlds` a positive integer, `rng` a numpy `Generator`
    (`np.random.default_rng(seed)`); the worlds must fit this machine's memory. Anything
    else is one ValueError line, before anything is drawn.

    The random numbers are drawn here, with numpy, all before the worlds are made: a Gumbel
    noise per row and choice of pile counts, three rows of 52 uniform keys, a seed per world
    (in that order); the kernel `_worlds_k` then builds every world from them.

    `log_probs` (float64[len(games), 52, 3], a belief model's log-probability of each card
    being in the left hand, the right hand or the pile, for each game) draws the cards
    themselves by it instead of uniformly: each card's keys get the Gumbel of its uniform draw
    plus `power` times its log-odds (pile against the hands; the left hand against the right),
    so the cards the model puts on the pile or in the left hand are picked first, without
    repeats (Gumbel top-k); the counts of each kind keep their exact uniform weights. The worlds
    stay consistent with what the seat knows; `power` 0 gives the uniform worlds, bit for bit.

    `exact=True` (True or False; with `log_probs`) draws each world instead with a probability proportional
    to the product, over the unseen cards, of the model's probability of the place the world
    puts it, raised to `power`, among the worlds consistent with what the seat knows (a
    conditional draw: `_product_splits_k`). It draws a uniform key per card and world
    where the key draw draws its Gumbel noise and keys, so its worlds are other worlds."""
    games = _checked_games(state, games)
    worlds = check_count(worlds, "sample_worlds: worlds")
    if not all(callable(getattr(rng, draw, None)) for draw in ("random", "gumbel", "integers")):
        raise ValueError(f"sample_worlds: rng must be a numpy Generator (np.random.default_rng(seed)), got "
                         f"{shorten(rng)}")
    check_batch_fits(games.size * worlds, f"sample_worlds: {games.size:,} games x {worlds:,} worlds, a batch")
    if not isinstance(exact, (bool, np.bool_)):
        raise ValueError(f"sample_worlds: exact must be True or False, got {shorten(exact)}")
    if log_probs is not None:
        log_probs = _checked_log_probs(log_probs, games.size, power)
    known = knowledge(state, games)
    unseen, allowed = known["unseen"], np.ascontiguousarray(known["allowed"])
    capacity = np.ascontiguousarray(known["capacity"], dtype=np.int64)
    log_w = np.empty((games.size, _CHOICES))
    problem = _log_weights_k(unseen, allowed, capacity, _LOG_FACTORIAL, log_w)
    if problem:
        raise ValueError(_PROBLEMS[problem])
    r = games.size * worlds
    splits = np.empty((r, 3), dtype=np.uint64)
    if exact and log_probs is not None:
        card_keys, own_keys = rng.random((r, 52)), rng.random((r, 52))
        seeds = rng.integers(0, 2**63, size=r, dtype=np.int64).astype(np.uint64)
        scaled = power * log_probs
        # Each card's largest weight 1, none below exp(-700): a weight never underflows to 0.
        weights = np.exp(np.maximum(scaled - scaled.max(axis=2, keepdims=True), -700.0))
        problem = _product_splits_k(worlds, unseen, allowed, capacity, weights, card_keys, splits)
        if problem:
            raise ValueError(_PROBLEMS[problem] if problem != 2 else _TOO_SURE)
    else:
        gumbel = rng.gumbel(size=(r, _CHOICES))  # Gumbel-max: each choice of pile counts by its exact weight
        pile_keys, hand_keys, own_keys = rng.random((r, 52)), rng.random((r, 52)), rng.random((r, 52))
        seeds = rng.integers(0, 2**63, size=r, dtype=np.int64).astype(np.uint64)
        if log_probs is not None and power:
            log_p = np.repeat(log_probs, worlds, axis=0)
            with np.errstate(divide="ignore"):  # a key of 0.0 is a Gumbel of -inf: picked last
                pile_keys = -(power * (log_p[..., 2] - np.logaddexp(log_p[..., 0], log_p[..., 1]))
                              - np.log(-np.log(pile_keys)))
                hand_keys = -(power * (log_p[..., 0] - log_p[..., 1]) - np.log(-np.log(hand_keys)))
        _key_splits_k(worlds, unseen, allowed, capacity, log_w, gumbel, pile_keys, hand_keys, splits)
    out = state.take(np.repeat(games, worlds))
    _worlds_k(out.buffer, worlds, np.ascontiguousarray(known["fixed"]), known["seat"].astype(np.int64),
              known["playmaker"].astype(np.int64), known["choosing"], known["talon_shown"], splits, own_keys, seeds)
    return out


def _checked_log_probs(log_probs, games: int, power) -> np.ndarray:
    """`log_probs` as float64[games, 52, 3] of finite numbers, and `power` a finite number >= 0,
    or one ValueError line naming what is wrong (sample_worlds)."""
    try:
        array = np.asarray(log_probs, dtype=np.float64)
    except (TypeError, ValueError):
        array = None
    if array is None or array.shape != (games, 52, 3) or not np.isfinite(array).all():
        raise ValueError(f"sample_worlds: log_probs must be {games} x 52 x 3 finite log-probabilities (a game's "
                         f"cards in the left hand, the right hand, the pile), got {shorten(log_probs)}")
    if isinstance(power, bool) or not isinstance(power, (int, float, np.integer, np.floating)) \
            or not np.isfinite(power) or power < 0:
        raise ValueError(f"sample_worlds: power must be a finite number >= 0, got {shorten(power)}")
    return array


# ----------------------------------------------------------------------------- kernels
#
# The split of the unseen cards (_assign_k) and the worlds made from it (_worlds_k), compiled:
# the same numbers, bit for bit, as the numpy code they replaced (tests/test_pimc.py's digests
# of pimc's decisions), from the same random draws, made in numpy by sample_worlds.

_SIDE = 15  # a kind of cards put on the pile: 0..14 of them (at most 14 unseen cards go to the pile)
_CHOICES = _SIDE * _SIDE  # the choices (d_ap, d_bp), row-major: d_ap = choice // 15, d_bp = choice % 15
_PROBLEMS = {1: "inconsistent knowledge: an unseen card may go nowhere",
             2: "inconsistent knowledge: no assignment fits the hand sizes"}
_TOO_SURE = ("sample_worlds: the belief's probabilities, to this power, leave no consistent world a weight above 0 "
             "(give a smaller power)")
_NEG_INF = -np.inf


@kernel(inline=True)
def _log_binomial_k(n, k, log_factorial):
    """log C(n, k), -inf where k < 0 or k > n."""
    if k < 0 or k > n or n < 0:
        return _NEG_INF
    return log_factorial[n] - log_factorial[k] - log_factorial[n - k]


@kernel(inline=True)
def _kinds_k(unseen, allowed_a, allowed_b, allowed_p):
    """The unseen cards by the bins they may go to: (a, b, ab, p, ap, bp, abp) (`_assign_k`)."""
    a, b, p = allowed_a & unseen, allowed_b & unseen, allowed_p & unseen
    return a & ~b & ~p, b & ~a & ~p, a & b & ~p, p & ~a & ~b, a & p & ~b, b & p & ~a, a & b & p


@kernel(ahead="search", seconds=0.5, signature=(SETS, SET_ROWS, INT_ROWS, REALS, REAL_ROWS))
def _log_weights_k(unseen, allowed, capacity, log_factorial, log_w):
    """Fills `log_w[G, 225]`: for each game the log of the number of assignments of its unseen
    cards that put `d_ap` cards of kind ap and `d_bp` of kind bp on the pile (`d_abp`
    follows from the pile's size), as a product of binomials (`_assign_k`). Returns 0, or
    1 when an unseen card may go nowhere, 2 when no assignment fits the hand sizes (_PROBLEMS)."""
    for g in range(unseen.size):
        if unseen[g] & ~(allowed[g, 0] | allowed[g, 1] | allowed[g, 2]):
            return 1
    for g in range(unseen.size):
        u = unseen[g]
        kinds = _kinds_k(u, allowed[g, 0], allowed[g, 1], allowed[g, 2])
        n_a, n_ab, n_p, n_ap, n_bp, n_abp = (count_cards_k(kinds[0]), count_cards_k(kinds[2]), count_cards_k(kinds[3]),
                                             count_cards_k(kinds[4]), count_cards_k(kinds[5]), count_cards_k(kinds[6]))
        cap_a, cap_p = capacity[g, 0], capacity[g, 2]  # the right hand takes the rest
        fits = False
        for d_ap in range(_SIDE):
            for d_bp in range(_SIDE):
                d_abp = cap_p - n_p - d_ap - d_bp
                free = n_ab + n_abp - d_abp  # cards either hand may take
                to_a = cap_a - n_a - n_ap + d_ap  # of the free cards, a's share
                w = (_log_binomial_k(n_ap, d_ap, log_factorial) + _log_binomial_k(n_bp, d_bp, log_factorial)
                     + _log_binomial_k(n_abp, d_abp, log_factorial) + _log_binomial_k(free, to_a, log_factorial))
                log_w[g, d_ap * _SIDE + d_bp] = w
                fits = fits or w != _NEG_INF
        if not fits:
            return 2
    return 0


@kernel(inline=True)
def _sort_scratch_k():
    """The scratch of `_lowest_by_key_k`: a set's cards (int64[52]), their keys (float64[52])
    and their order by key (int64[52])."""
    return np.empty(52, dtype=np.int64), np.empty(52, dtype=np.float64), np.empty(52, dtype=np.int64)


@kernel(inline=True)
def _lowest_by_key_k(cards, k, keys, scratch):
    """The `k` cards of the set `cards` with the smallest `keys` (a uniform k-subset; equal
    keys, which a draw of doubles almost never gives, by card: the engine's sort is stable).
    `scratch`: `_sort_scratch_k`'s arrays."""
    if k <= 0:
        return _ZERO
    members, member_keys, order = scratch
    m = 0
    for card in range(52):
        if (cards >> np.uint64(card)) & _ONE:
            members[m], member_keys[m] = card, keys[card]
            m += 1
    insertion_argsort_k(member_keys, order, m)
    chosen = _ZERO
    for j in range(min(k, m)):
        chosen |= _ONE << np.uint64(members[order[j]])
    return chosen


@kernel(inline=True)
def _assign_k(i, g, unseen, allowed, capacity, log_w, gumbel, pile_keys, hand_keys, scratch):
    """(hand_a, hand_b, pile): a uniformly random split of game `g`'s unseen cards into the three
    bins (the left hand, the right hand, the pile), each bin getting `capacity` cards, all of
    them `allowed` there; `i`: the world's row of the draws.

    Cards fall into kinds by the set of bins they may go to. The pile is filled first: all
    cards that may only go there, then `d` of each kind that may go there or elsewhere;
    the two hands then take the cards only they may hold, and split the cards both may hold.
    The number of assignments for a choice of the `d` is a product of binomials
    (`log_w`), which weights that choice (Gumbel-max: the highest `log_w` + Gumbel noise);
    the cards themselves are picked by random keys (uniform subsets)."""
    u = unseen[g]
    k_a, k_b, k_ab, k_p, k_ap, k_bp, k_abp = _kinds_k(u, allowed[g, 0], allowed[g, 1], allowed[g, 2])
    choice, best = 0, log_w[g, 0] + gumbel[i, 0]
    for c in range(1, _CHOICES):  # the first of the highest, as numpy's argmax
        v = log_w[g, c] + gumbel[i, c]
        if v > best:
            choice, best = c, v
    d_ap, d_bp = choice // _SIDE, choice % _SIDE
    d_abp = capacity[g, 2] - count_cards_k(k_p) - d_ap - d_bp
    keys = pile_keys[i]
    on_pile = (k_p | _lowest_by_key_k(k_ap, d_ap, keys, scratch) | _lowest_by_key_k(k_bp, d_bp, keys, scratch)
               | _lowest_by_key_k(k_abp, d_abp, keys, scratch))
    free_cards = (k_ab | k_abp) & ~on_pile
    to_a = capacity[g, 0] - count_cards_k(k_a) - count_cards_k(k_ap) + d_ap
    # Fresh keys: the free cards of kind abp are those whose first keys were high.
    hand_a = k_a | (k_ap & ~on_pile) | _lowest_by_key_k(free_cards, to_a, hand_keys[i], scratch)
    return hand_a, u & ~on_pile & ~hand_a, on_pile


@kernel(ahead="search", seconds=2, signature=(
        INT, SETS, SET_ROWS, INT_ROWS, REAL_ROWS, REAL_ROWS, REAL_ROWS, REAL_ROWS, SET_ROWS))
def _key_splits_k(worlds, unseen, allowed, capacity, log_w, gumbel, pile_keys, hand_keys, splits):
    """Fills `splits[r, 3]` (the left hand's, the right hand's and the pile's unseen cards of
    each world, row `i` a world of game `i // worlds`) by `_assign_k`."""
    scratch = _sort_scratch_k()
    for i in range(splits.shape[0]):
        hand_a, hand_b, pile = _assign_k(i, i // worlds, unseen, allowed, capacity, log_w, gumbel, pile_keys,
                                         hand_keys, scratch)
        splits[i, 0], splits[i, 1], splits[i, 2] = hand_a, hand_b, pile


@kernel(ahead="search", seconds=2, signature=(INT, SETS, SET_ROWS, INT_ROWS, REAL_CUBE, REAL_ROWS, SET_ROWS))
def _product_splits_k(worlds, unseen, allowed, capacity, weights, keys, splits):
    """Fills `splits[r, 3]` as `_key_splits_k` does, each world of game g drawn with a
    probability proportional to the product over g's unseen cards of `weights[g, card, bin]`
    for the bin it puts the card in, among the splits that put each card where it is allowed
    and give each bin its capacity. Returns 0, or 2 when no split fits (_PROBLEMS).

    Forward, over the unseen cards in ascending order, `table[k, a, b]` sums the products of
    the splits of the first k cards that put a of them in the left hand and b in the right (the
    rest on the pile), each layer scaled to a largest entry of 1 (the draws use ratios within a
    layer). Backward, from the full split, each card from the last to the first goes to a bin
    with a probability proportional to its weight there times the table's entry that bin leaves
    for the cards before it (`keys[i, card]` the uniform draw)."""
    cards = np.empty(52, dtype=np.int64)
    for g in range(unseen.size):
        n = 0
        for card in range(52):
            if (unseen[g] >> np.uint64(card)) & _ONE:
                cards[n] = card
                n += 1
        cap_a, cap_b, cap_p = capacity[g, 0], capacity[g, 1], capacity[g, 2]
        if cap_a < 0 or cap_b < 0 or cap_p < 0 or cap_a + cap_b + cap_p != n:
            return 2
        table = np.zeros((n + 1, cap_a + 1, cap_b + 1))
        table[0, 0, 0] = 1.0
        for k in range(n):
            w_a, w_b, w_p = _bin_weights_k(g, cards[k], allowed, weights)
            top = 0.0
            for a in range(min(k + 1, cap_a) + 1):
                for b in range(min(k + 1 - a, cap_b) + 1):
                    v = 0.0
                    if a >= 1:
                        v += table[k, a - 1, b] * w_a
                    if b >= 1:
                        v += table[k, a, b - 1] * w_b
                    if 1 <= k + 1 - a - b <= cap_p:
                        v += table[k, a, b] * w_p
                    table[k + 1, a, b] = v
                    top = max(top, v)
            if top == 0.0:
                return 2
            table[k + 1] /= top
        if table[n, cap_a, cap_b] == 0.0:
            return 2
        for i in range(g * worlds, (g + 1) * worlds):
            a, b = cap_a, cap_b
            hand_a, hand_b, pile = _ZERO, _ZERO, _ZERO
            for k in range(n, 0, -1):
                card = cards[k - 1]
                w_a, w_b, w_p = _bin_weights_k(g, card, allowed, weights)
                t_a = table[k - 1, a - 1, b] * w_a if a >= 1 else 0.0
                t_b = table[k - 1, a, b - 1] * w_b if b >= 1 else 0.0
                t_p = table[k - 1, a, b] * w_p if k - a - b >= 1 else 0.0
                x = keys[i, card] * (t_a + t_b + t_p)
                bit = _ONE << np.uint64(card)
                if t_p > 0.0 and (x >= t_a + t_b or t_a + t_b == 0.0):
                    pile |= bit
                elif t_b > 0.0 and (x >= t_a or t_a == 0.0):
                    hand_b |= bit
                    b -= 1
                else:
                    hand_a |= bit
                    a -= 1
            splits[i, 0], splits[i, 1], splits[i, 2] = hand_a, hand_b, pile
    return 0


@kernel(inline=True)
def _bin_weights_k(g, card, allowed, weights):
    """(left, right, pile): `weights[g, card]`, 0 in a bin the card may not go to."""
    bit = _ONE << np.uint64(card)
    return (weights[g, card, 0] if allowed[g, 0] & bit else 0.0, weights[g, card, 1] if allowed[g, 1] & bit else 0.0,
            weights[g, card, 2] if allowed[g, 2] & bit else 0.0)


@kernel(ahead="search", seconds=7, signature=(
        BUFFER, INT, SET_ROWS, INTS, INTS, FLAGS, FLAGS, SET_ROWS, REAL_ROWS, SEEDS))
def _worlds_k(buffer, worlds, fixed, seat, playmaker, choosing, talon_shown, splits, own_keys, seeds):
    """Makes the worlds in `buffer` (`worlds` copies of each game, row `i` a copy of game
    `i // worlds`): their unseen cards placed as `splits[i]` says (the left hand's, the
    right hand's, the pile's), the rest of what the seat to act does not know cleared (module
    docstring)."""
    s = state_arrays_k(buffer)
    hands, dealt, first_six, talon_cards, talon = s[HANDS], s[DEALT], s[FIRST_SIX], s[TALON_CARDS], s[TALON]
    given, received, discards, last_returned, seed = s[GIVEN], s[RECEIVED], s[DISCARDS], s[LAST_RETURNED], s[SEED]
    scratch = _sort_scratch_k()
    for i in range(seeds.size):
        g = i // worlds
        me, pm = seat[g], playmaker[g]
        hand_a, hand_b, pile = splits[i, 0], splits[i, 1], splits[i, 2]
        # While the playmaker chooses its mode, ten pile cards are its own unseen ones.
        own_unseen = _lowest_by_key_k(pile, 10, own_keys[i], scratch) if choosing[g] else _ZERO
        pile &= ~own_unseen
        hands[i, me] = fixed[g, me] | own_unseen
        hands[i, (me + 1) % 3] = fixed[g, (me + 1) % 3] | hand_a
        hands[i, (me + 2) % 3] = fixed[g, (me + 2) % 3] | hand_b
        if talon_shown[g]:
            if me != pm:
                discards[i] = pile
        else:
            talon[i] = pile
            k = 0
            for card in range(52):
                if k < 4 and (pile >> np.uint64(card)) & _ONE:
                    talon_cards[i, k] = card
                    k += 1
            for j in range(k, 4):
                talon_cards[i, j] = 127
        dealt[i] = -1
        if me != pm:
            first_six[i] = _ZERO
        # Of the exchanges, keep what the seat to act handed and received.
        own_given, own_received = given[i, me], received[i, me]
        for other in range(3):
            given[i, other] &= own_received
            received[i, other] &= own_given
        given[i, me], received[i, me] = own_given, own_received
        # The card of the last return is known only to the pair that exchanged it (R22).
        card = last_returned[i]
        if card < 0 or not (_ONE << np.uint64(card)) & (own_given | own_received):
            last_returned[i] = -1
        seed[i] = seeds[i]


def _checked_games(state: State, games) -> np.ndarray:
    """`games` as `intp[k]`: integers 0..B-1 of `state` (a one-line ValueError otherwise)."""
    if not isinstance(state, State):
        raise ValueError(f"sample_worlds: state must be an engine State, got {shorten(state)}")
    index = np.asarray(games).reshape(-1)
    if index.dtype.kind not in "iu":
        raise ValueError(f"sample_worlds: games must be game numbers 0..{state.batch_size - 1}, got {shorten(games)}")
    bad = index[(index < 0) | (index >= state.batch_size)]
    if bad.size:
        raise ValueError(f"sample_worlds: games must be game numbers 0..{state.batch_size - 1}, got {bad[0]}")
    return index.astype(np.intp)
