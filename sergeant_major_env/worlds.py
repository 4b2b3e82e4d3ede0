"""Hidden-card sampling: complete game states ("worlds") consistent with what one seat knows.

``sample_worlds(state, games, worlds, rng)`` returns, for each listed game, ``worlds``
copies of it in which everything the seat to act cannot see is redrawn at random, and
everything it can see is kept. It is the determinization step of search bots (PIMC), in
the manner of OpenSpiel's ``resample_from_infostate``: the worlds are plain engine states,
so the one engine plays them out.

What the seat to act knows, and so every world keeps (RULES.md):

* its own hand; during its own mode choice only its first six cards (R9);
* the cards played in this deal, trick by trick, and so the cards each seat has shown it
  does not hold: a seat that did not follow suit is void in it (R13), one that neither
  followed nor trumped holds no trump (R14), and with the R15 options, one that did not
  beat the table could not (``State.shown_out``, :func:`engine.ruled_out`);
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
weights, then the cards themselves uniformly (see :func:`_assign`).

Worlds get fresh random seeds (the real seed would reveal the next deals) and keep, of the
other seats' exchanges, only what the seat to act took part in (``last_returned``, the card
of the last return, is -1 unless it was in its pair); ``dealt`` is -1 (unknown).
"""

from __future__ import annotations

import numpy as np

from .cards import bit, bits_to_bool, bool_to_bits, count
from .engine import DISCARD, MODE, PLAY, PLAYMAKER, State, check_batch_fits
from .limits import check_count, shorten

_ALL = np.uint64((1 << 52) - 1)
_ZERO = np.uint64(0)
_LOG_FACTORIAL = np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, 64)))])
A_BIN, B_BIN, PILE = 0, 1, 2  # the left (seat + 1) and right (seat + 2) hands, and the pile


def knowledge(state: State, games: np.ndarray) -> dict[str, np.ndarray]:
    """What the seat to act in each of ``games`` knows about where the unseen cards are.

    Returns uint64 arrays (one row per game; bins are the left hand, the right hand, the pile):

    * ``fixed``    [G, 3]: cards known to be in each seat's hand (by absolute seat);
    * ``unseen``   [G]:    the cards whose place the seat does not know;
    * ``allowed``  [G, 3]: for each bin, the unseen cards that may be there;
    * ``capacity`` [G, 3] (int): how many unseen cards each bin holds.
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
    unseen = _ALL & ~(played | own_discards | fixed_anywhere)

    shown = state.shown_out[games]
    allowed = np.empty((n, 3), dtype=np.uint64)
    capacity = np.empty((n, 3), dtype=np.int64)
    for b, other in ((A_BIN, left), (B_BIN, right)):
        not_playmaker_only = np.where(other == playmaker, _ALL, ~playmaker_only)
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


def _log_binomial(n: np.ndarray, k: np.ndarray) -> np.ndarray:
    """log C(n, k), -inf where k < 0 or k > n."""
    ok = (k >= 0) & (k <= n) & (n >= 0)
    n, k = np.where(ok, n, 0), np.where(ok, k, 0)
    return np.where(ok, _LOG_FACTORIAL[n] - _LOG_FACTORIAL[k] - _LOG_FACTORIAL[n - k], -np.inf)


def _assign(unseen: np.ndarray, allowed: np.ndarray, capacity: np.ndarray,
            rng: np.random.Generator) -> np.ndarray:
    """uint64[R, 3]: a uniformly random split of each row's unseen cards into the three bins,
    each bin getting ``capacity`` cards, all of them ``allowed`` there.

    Cards fall into kinds by the set of bins they may go to. The pile is filled first: all
    cards that may only go there, then ``d`` of each kind that may go there or elsewhere;
    the two hands then take the cards only they may hold, and split the cards both may hold.
    The number of assignments for a choice of the ``d`` is a product of binomials, which
    weights that choice; the cards themselves are picked by random keys (uniform subsets).
    """
    r = unseen.shape[0]
    a, b, p = (allowed[:, k] & unseen for k in range(3))
    kinds = {  # name: (cards, may go to a, b, pile)
        "a": a & ~b & ~p, "b": b & ~a & ~p, "ab": a & b & ~p,
        "p": p & ~a & ~b, "ap": a & p & ~b, "bp": b & p & ~a, "abp": a & b & p,
    }
    if np.any(unseen & ~(a | b | p)):
        raise ValueError("inconsistent knowledge: an unseen card may go nowhere")
    n = {k: count(v).astype(np.int64) for k, v in kinds.items()}
    cap_a, cap_p = capacity[:, 0], capacity[:, 2]  # the right hand takes the rest
    # Choices (d_ap, d_bp): cards of kinds ap and bp put on the pile; d_abp follows.
    grid = np.arange(15)
    d_ap, d_bp = (x.reshape(1, -1) for x in np.meshgrid(grid, grid, indexing="ij"))
    d_abp = (cap_p - n["p"])[:, None] - d_ap - d_bp
    free = (n["ab"] + n["abp"])[:, None] - d_abp  # cards either hand may take
    to_a = (cap_a - n["a"] - n["ap"])[:, None] + d_ap  # of the free cards, a's share
    log_w = (_log_binomial(n["ap"][:, None], d_ap) + _log_binomial(n["bp"][:, None], d_bp)
             + _log_binomial(n["abp"][:, None], d_abp) + _log_binomial(free, to_a))
    if np.any(np.isneginf(log_w).all(axis=1)):
        raise ValueError("inconsistent knowledge: no assignment fits the hand sizes")
    choice = (log_w + rng.gumbel(size=log_w.shape)).argmax(axis=1)  # Gumbel-max: exact weights
    rows = np.arange(r)
    take = {"ap": d_ap[0, choice], "bp": d_bp[0, choice], "abp": d_abp[rows, choice]}
    keys = rng.random((r, 52))
    on_pile = kinds["p"] | _lowest_by_key(kinds["ap"], take["ap"], keys) \
        | _lowest_by_key(kinds["bp"], take["bp"], keys) | _lowest_by_key(kinds["abp"], take["abp"], keys)
    free_cards = (kinds["ab"] | kinds["abp"]) & ~on_pile
    to_a = to_a[rows, choice]
    # Fresh keys: the free cards of kind abp are those whose first keys were high.
    hand_a = kinds["a"] | (kinds["ap"] & ~on_pile) | _lowest_by_key(free_cards, to_a, rng.random((r, 52)))
    hand_b = unseen & ~on_pile & ~hand_a
    return np.stack([hand_a, hand_b, on_pile], axis=1)


def _lowest_by_key(cards: np.ndarray, k: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """uint64[R]: the ``k`` cards of each set with the smallest keys (a uniform k-subset)."""
    member = bits_to_bool(cards, 52)
    ranked = np.where(member, keys, 2.0).argsort(axis=1).argsort(axis=1)  # rank of each card by key
    return bool_to_bits(member & (ranked < np.asarray(k)[:, None]))


def sample_worlds(state: State, games, worlds: int, rng: np.random.Generator) -> State:
    """``worlds`` worlds for each of ``games`` (row ``i * worlds + w`` is world w of ``games[i]``),
    consistent with what the seat to act knows and uniform among such (module docstring).

    ``state`` an engine :class:`State`, ``games`` game numbers 0..B-1 of it (a game may be
    listed twice), ``worlds`` a positive integer, ``rng`` a numpy ``Generator``
    (``np.random.default_rng(seed)``); the worlds must fit this machine's memory. Anything
    else is one ValueError line, before anything is drawn."""
    games = _checked_games(state, games)
    worlds = check_count(worlds, "sample_worlds: worlds")
    if not all(callable(getattr(rng, draw, None)) for draw in ("random", "gumbel", "integers")):
        raise ValueError(f"sample_worlds: rng must be a numpy Generator (np.random.default_rng(seed)), got "
                         f"{shorten(rng)}")
    check_batch_fits(games.size * worlds, f"sample_worlds: {games.size:,} games x {worlds:,} worlds, a batch")
    known = knowledge(state, games)
    repeat = np.repeat(np.arange(games.size), worlds)
    out = state.take(games[repeat])
    r = repeat.size
    rows = np.arange(r)
    split = _assign(known["unseen"][repeat], known["allowed"][repeat], known["capacity"][repeat], rng)
    seat, left, right = known["seat"][repeat], known["left"][repeat], known["right"][repeat]
    playmaker, choosing = known["playmaker"][repeat], known["choosing"][repeat]
    fixed = known["fixed"][repeat]
    pile = split[:, PILE]
    # While the playmaker chooses its mode, ten pile cards are its own unseen ones.
    own_unseen = np.where(choosing, _lowest_by_key(pile, np.full(r, 10), rng.random((r, 52))), _ZERO)
    pile &= ~own_unseen
    out.hands[rows, seat] = fixed[rows, seat] | own_unseen
    out.hands[rows, left] = fixed[rows, left] | split[:, A_BIN]
    out.hands[rows, right] = fixed[rows, right] | split[:, B_BIN]
    talon_shown = known["talon_shown"][repeat]
    hidden_discards = talon_shown & (seat != playmaker)
    out.discards[hidden_discards] = pile[hidden_discards]
    talon = np.where(talon_shown, out.talon, pile)
    out.talon = talon
    out.talon_cards = np.where(talon_shown[:, None], out.talon_cards, _card_ids(talon, 4))
    out.dealt[:] = -1
    out.first_six = np.where(seat == playmaker, out.first_six, _ZERO)
    # Of the exchanges, keep what the seat to act handed and received.
    own_given, own_received = out.given[rows, seat], out.received[rows, seat]
    out.given &= own_received[:, None]
    out.received &= own_given[:, None]
    out.given[rows, seat], out.received[rows, seat] = own_given, own_received
    # The card of the last return is known only to the pair that exchanged it (R22).
    took_part = (bit(out.last_returned) & (own_given | own_received)) != 0
    out.last_returned = np.where(took_part, out.last_returned, -1).astype(np.int8)
    out.seed = rng.integers(0, 2**63, size=r, dtype=np.int64).astype(np.uint64)
    return out


def _checked_games(state: State, games) -> np.ndarray:
    """``games`` as ``intp[k]``: integers 0..B-1 of ``state`` (a one-line ValueError otherwise)."""
    if not isinstance(state, State):
        raise ValueError(f"sample_worlds: state must be an engine State, got {shorten(state)}")
    index = np.asarray(games).reshape(-1)
    if index.dtype.kind not in "iu":
        raise ValueError(f"sample_worlds: games must be game numbers 0..{state.batch_size - 1}, got {shorten(games)}")
    bad = index[(index < 0) | (index >= state.batch_size)]
    if bad.size:
        raise ValueError(f"sample_worlds: games must be game numbers 0..{state.batch_size - 1}, got {bad[0]}")
    return index.astype(np.intp)


def _card_ids(sets: np.ndarray, k: int) -> np.ndarray:
    """int8[R, k]: the card ids of sets of k cards, ascending."""
    member = bits_to_bool(sets, 52)
    return np.sort(np.where(member, np.arange(52), 127), axis=1)[:, :k].astype(np.int8)
