"""Test fixture: the ``heuristic`` agent of version 0.3.0 (numpy, vectorised over the batch), frozen.

A verbatim copy of ``agents/view.py`` and ``agents/heuristic.py`` at commit 1945762 (release
0.3.0's code: the view first, then the agent; only the module docstrings and the agent's
import of the view dropped). The compiled agent (``agents.heuristic``, its card decisions as
kernels) must choose exactly the same actions as this code for the same observations, masks
and rng (tests/test_heuristic_kernel.py), and ``benchmarks/agents_speed.py --reference``
times it beside the compiled agent. Do not edit it to follow changes of the agent: a change
of the heuristic's play is a new version, and then this file and the test are replaced
together, on purpose.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np

from sergeant_major_env.cards import SUIT_MASKS, TRUMPS, above, bits_to_bool, highest
from sergeant_major_env.engine import trick_winner_position
from sergeant_major_env.observation import CARD_SETS_WIDTH, SCALES, SEGMENTS

MODE_DECISION, GIVE_DECISION, RETURN_DECISION, DISCARD_DECISION, PLAY_DECISION = range(5)
NT, MIN = 4, 5
ALL_CARDS = np.uint64((1 << 52) - 1)
SUITS4 = SUIT_MASKS[:4]
CARD_RANK = np.arange(52) % 13
CARD_SUIT = np.arange(52) // 13
ABOVE = above(np.arange(52))
"""ABOVE[c]: the cards of c's suit higher than c."""
BELOW = np.array([SUIT_MASKS[c // 13] & ~ABOVE[c] & ~np.uint64(1 << c) for c in range(52)], dtype=np.uint64)
"""BELOW[c]: the cards of c's suit lower than c."""

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


def _one_hot_index(block: np.ndarray) -> np.ndarray:
    """Index of the set entry of each one-hot row, -1 for an all-zero row."""
    return np.where(block.any(axis=1), block.argmax(axis=1), -1).astype(np.int8)


class View:
    """What one seat knows in each of B games (see the module docstring).

    ``View(observations)`` decodes float observations; :meth:`from_card_sets` takes the same
    observation as :func:`~sergeant_major_env.observation.observe_card_sets` gives it (the
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
        """The view of ``observe_card_sets``'s ``(card_sets, rest)``: the same as ``View`` of the
        float observation they stand for (tests/test_view.py)."""
        view = cls.__new__(cls)
        view._setup(np.asarray(card_sets, dtype=np.uint64), np.asarray(rest, dtype=np.float32), CARD_SETS_WIDTH)
        return view

    def _setup(self, planes: np.ndarray, numbers: np.ndarray, first_column: int) -> None:
        """The view from the card planes as sets (uint64[B, >= 11]) and observation entries
        ``numbers`` (float32[B, ...], whose column 0 is the observation's ``first_column``)."""
        self.n = planes.shape[0]
        # The observation's entries after the planes, and this view's rows of them (None: all).
        self._numbers, self._first_column, self._index = numbers, first_column, None
        self.hand = planes[:, 0]
        self.played = planes[:, 1:4]          # by relative seat
        self.trick_sets = planes[:, 4:7]      # by position
        self.trick = highest(self.trick_sets).astype(np.int64)  # card ids by position, -1 empty
        self.talon = planes[:, 7]
        self.discards = planes[:, 8]
        self.given = planes[:, 9]
        self.received = planes[:, 10]
        self.decision = _one_hot_index(self._segment("decision") > 0.5)
        self.mode = _one_hot_index(self._segment("mode") > 0.5).astype(np.int64)
        self.trumps = TRUMPS[np.where(self.mode >= 0, self.mode, 6)]  # trump set, 0 if none
        self.position = (self.trick >= 0).sum(axis=1)  # my position in the current trick
        played_all = np.bitwise_or.reduce(self.played, axis=1)
        trick_all = np.bitwise_or.reduce(self.trick_sets, axis=1)
        self.gone = played_all | trick_all | self.discards
        """Cards out of play or on the table (and my own discards)."""
        self.unseen = ALL_CARDS & ~self.hand & ~self.gone
        """Cards that other seats may still hold (or the playmaker discarded)."""

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
    """``actions`` with any illegal choice replaced by the first legal action (0 where none is legal).

    A safety net: with a consistent observation and mask the rules above never need it, but an
    agent must answer legally even for a row whose observation does not match its mask."""
    rows = np.arange(actions.shape[0])
    bad = ~legal_mask[rows, np.clip(actions, 0, legal_mask.shape[1] - 1)]
    if bad.any():
        actions = np.where(bad, legal_mask.argmax(axis=1), actions)
    return actions


def card_bools(sets: np.ndarray) -> np.ndarray:
    """bool[B, 52] from uint64[B] card sets."""
    return bits_to_bool(sets, 52)


def counts_above(sets: np.ndarray) -> np.ndarray:
    """int[B, 52]: for each card c, how many cards of ``sets`` in c's suit beat c."""
    return np.bitwise_count(sets[:, None] & ABOVE[None, :]).astype(np.int16)


def counts_below(sets: np.ndarray) -> np.ndarray:
    """int[B, 52]: for each card c, how many cards of ``sets`` in c's suit are lower than c."""
    return np.bitwise_count(sets[:, None] & BELOW[None, :]).astype(np.int16)


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


# ----------------------------------------------------------------------------- the agent (agents/heuristic.py)



_RANK = CARD_RANK.astype(np.float64)
_SUIT = CARD_SUIT

DEFAULT_PARAMS = {
    "lam": 0.8,             # trumps: weight of a card's future value when following
    "lam_nt": 1.1,          # NT: the same
    "mu": 0.35,             # MIN: weight of the danger shed by a card
    "nt_length_discard": 0.05,  # NT discards: keep cards of long suits, per card over three
    "nt_length_follow": 0.02,   # NT, unable to win or follow: keep long suits
    "draw_master": 3.0,     # lead: master trumps while opponents hold trumps
    "draw_long": 1.5,       # lead: a trump when holding more trumps than the opponents together
    "short_lead": 0.6,      # trumps, lead: low from a short side suit, per card under four
    "guard_lead": 0.6,      # lead: not away from an honour that needs guarding
    "lead_win": 1.0,        # lead: weight of the chance to win the trick
    "second_risk": 0.2,     # second hand: penalty per unit of the chance that a winning attempt fails
    "danger_lead": 0.7,     # MIN danger: weight of the chance the card wins if led (vs its rank share)
    "min_short": 0.8,       # MIN discards: first from short suits
    "give_p": 0.45,         # exchanges: P(an unseen card is with the receiver)
    "fv_trump": 0.35,       # future value of any trump (it can ruff)
    "fv_k1": 0.5,           # future value of a guarded second-best card (a king under the ace)
    "fv_k2": 0.25,          # future value of a twice-guarded third-best card
}


# ----------------------------------------------------------------------------- mode values

NUM_MODE_FEATURES = 12


def _mode_features(hand: np.ndarray, gain: np.ndarray | None = None) -> np.ndarray:
    """float[B, 6, F]: features of the six seen cards (bool[B, 52]) for each mode.

    Trump suit s: bias, trump length, trump A, K, Q, J, three or more trumps, side aces,
    side kings, voids, singletons, exchange gain (cards due to the seat in its favour: its
    points of the last deal, R19). NT: bias, aces, kings, queens, jacks, longest suit, low
    cards (2..6), suits with an ace or king. MIN: bias, cards 2..4, 5..7, 8..T, J, Q, K, A,
    voids, longest suit.
    """
    n = hand.shape[0]
    h = hand.reshape(n, 4, 13).astype(np.float64)
    length = h.sum(axis=2)                              # [n, 4]
    ace, king, queen, jack = h[:, :, 12], h[:, :, 11], h[:, :, 10], h[:, :, 9]
    feats = np.zeros((n, 6, NUM_MODE_FEATURES))
    total_aces, total_kings = ace.sum(axis=1), king.sum(axis=1)
    voids = (length == 0).sum(axis=1)
    singletons = (length == 1).sum(axis=1)
    gain = np.zeros(n) if gain is None else gain
    # np.array of a list of equal-shaped arrays (one C call) stacks them on a new first axis.
    feats[:, :4] = np.array([  # the four trump suits at once
        np.ones((n, 4)), length, ace, king, queen, jack, length >= 3,
        total_aces[:, None] - ace, total_kings[:, None] - king, voids[:, None] - (length == 0),
        singletons[:, None] - (length == 1), np.broadcast_to(gain[:, None], (n, 4))], dtype=np.float64).transpose(1, 2, 0)
    feats[:, NT, :8] = np.array([
        np.ones(n), total_aces, total_kings, queen.sum(axis=1), jack.sum(axis=1), length.max(axis=1),
        h[:, :, :5].sum(axis=(1, 2)), (ace + king > 0).sum(axis=1)], dtype=np.float64).T
    feats[:, MIN, :10] = np.array([
        np.ones(n), h[:, :, :3].sum(axis=(1, 2)), h[:, :, 3:6].sum(axis=(1, 2)), h[:, :, 6:9].sum(axis=(1, 2)),
        jack.sum(axis=1), queen.sum(axis=1), total_kings, total_aces, voids, length.max(axis=1)], dtype=np.float64).T
    return feats


# Expected points of the playmaker for each mode: coefficients of the features of
# _mode_features (rows: trump suit (the four suits share it), NT, MIN), fitted by
# benchmarks/fit_modes.py on self-play of this agent with random mode choices.
MODE_COEFS = np.array([
    [-3.045, 0.622, 0.652, 0.564, 0.558, 0.376, 0.095, 0.480, 0.449, 0.029, -0.007, 0.514],
    [-2.603, 0.736, 0.814, 0.529, 0.326, 0.095, -0.087, -0.093, 0.000, 0.000, 0.000, 0.000],
    [-0.892, 0.565, 0.273, -0.029, -0.188, -0.203, -0.207, -0.211, 0.090, 0.024, 0.000, 0.000],
])


def mode_values(hand: np.ndarray, coefs: np.ndarray = MODE_COEFS, gain: np.ndarray | None = None) -> np.ndarray:
    """float[B, 6]: estimated playmaker points of each mode for the six cards ``hand`` (bool[B, 52])."""
    feats = _mode_features(hand, gain)
    rows = np.array([0, 0, 0, 0, 1, 2])
    return np.einsum("bmf,mf->bm", feats, coefs[rows])


def exchange_gain(prev_points: np.ndarray) -> np.ndarray:
    """float[B]: cards the seat (relative seat 0) exchanges in a trump deal (R18, R19), positive as
    a giver (each one a gain), negative as a receiver: in every case of R19 its own points of the
    last deal."""
    return prev_points[:, 0].astype(np.float64)


@functools.lru_cache(maxsize=4)
def _plan_values(coefs_key: bytes, samples: int = 20000, seed: int = 12345) -> np.ndarray:
    """float[64]: V(S), the expected points of the remaining turns holding mode set S (bit m = mode m
    open), each turn choosing optimally on a fresh random six-card hand: V(S) = E[max_m v_m + V(S - m)]."""
    coefs = np.frombuffer(coefs_key).reshape(MODE_COEFS.shape)
    rng = np.random.default_rng(seed)
    keys = rng.random((samples, 52))
    six = np.zeros((samples, 52), dtype=bool)
    np.put_along_axis(six, np.argsort(keys, axis=1)[:, :6], True, axis=1)
    values = mode_values(six, coefs)
    plan = np.zeros(64)
    for size in range(1, 7):
        for subset in itertools.combinations(range(6), size):
            s = sum(1 << m for m in subset)
            options = np.stack([values[:, m] + plan[s & ~(1 << m)] for m in subset], axis=1)
            plan[s] = options.max(axis=1).mean()
    return plan


def plan_values(coefs: np.ndarray = MODE_COEFS) -> np.ndarray:
    return _plan_values(np.ascontiguousarray(coefs, dtype=np.float64).tobytes())


# ----------------------------------------------------------------------------- the cards scored

_GIVE_TRUMP = -10.0 - _RANK       # exchanges: a trump is given only when nothing else is held, the lowest first
_OPPONENTS = np.arange(2)        # left, right
_OPPONENT_CELLS = 52 * _OPPONENTS  # the two opponents' rows of a [n, 2, 52] table
_TIE = -_RANK / 100.0            # play: the lower of equal scores
_RANK_TIE = _RANK / 1000.0       # discards, returns, MIN play: the higher of equal scores


class _Cards:
    """The cards a decision scores, one entry per (game, card): each game's hand and legal cards,
    in game order, then card order.

    Only the legal cards' scores are read (``best_legal``), and the hand's cards feed the
    per-suit features (an honour that needs its guard); the other cards of the 52 are left
    out, so every score below is worked out on about a sixth of the cells of a [B, 52] table,
    with the same operations per cell as on the full table (the same numbers, bit for bit)."""

    def __init__(self, v: View, legal: np.ndarray) -> None:
        self.n = v.n
        hand, legal = _bits64(v.hand), _bits64(legal)
        cell = np.flatnonzero(hand | legal)  # 64 * game + card
        self.row, self.card = cell >> 6, cell & 63
        self.in_hand, self.legal = hand[cell], legal[cell]
        self._legal_cells = cell[self.legal]
        self.suit = _SUIT[self.card]
        self.rank = _RANK[self.card]
        self.mode = v.mode[self.row]
        self.decision = v.decision[self.row]
        self.is_trump = self.suit == self.mode  # modes 4, 5 and -1 have no trump suit
        self.minimum = self.mode == MIN
        self.any_min = bool((v.mode == MIN).any())

    def per_suit(self, table: np.ndarray) -> np.ndarray:
        """``table[game, suit]`` ([B, 4, ...]) at each entry."""
        return table[self.row, self.suit]

    def best_legal(self, score: np.ndarray) -> np.ndarray:
        """int64[B]: each game's legal card of highest score (first on ties), as ``pick`` on the
        [B, 52] table whose other cells are -inf."""
        table = np.full(self.n * 64, -np.inf)
        table[self._legal_cells] = score[self.legal]
        return table.reshape(self.n, 64).argmax(axis=1)


def _bits64(sets: np.ndarray) -> np.ndarray:
    """bool[B * 64]: the cards of uint64 sets ``[B]``, card c of game g at 64 * g + c (one unpacking;
    flatnonzero then finds the cards faster than nonzero on a [B, 52] table)."""
    return np.unpackbits(np.ascontiguousarray(sets, dtype="<u8").view(np.uint8), bitorder="little").view(bool)


# ----------------------------------------------------------------------------- card reading

_KNOWN_MASS = np.array([0.0, 0.9, 1.0])
"""Probability that a placed card is with an opponent: 0, 0.9 (the face-up talon, with the
playmaker, who seldom throws it back), 1 (a card this seat handed over, with its partner)."""
_LOG_MISS_KNOWN = np.log(np.clip(1.0 - _KNOWN_MASS, 1e-6, 1.0))
_PLAYMAKER_ROLE = 1


class _Reading:
    """The card-reading quantities of the module docstring for the games of ``v``: per game
    (``void``, ``has_trump``, ``trump_out``) and at the entries of ``cards`` (``k_above``,
    ``k_below``, ``card_len``, ``no_higher``, ``no_lower``)."""

    def __init__(self, v: View, cards: _Cards) -> None:
        n = v.n
        unseen = v.unseen
        n_unseen = np.maximum(np.bitwise_count(unseen).astype(np.float64), 1.0)
        # Cards still held by the left and right opponents. (Before the talon is revealed 4
        # unseen cards lie in it; later the playmaker's 4 discards are unseen to the others.)
        held = 16.0 - np.bitwise_count(v.played[:, 1:]).astype(np.float64)
        talon, given = self._placed(v, unseen)
        placed = np.bitwise_or.reduce(talon | given, axis=1)
        some_placed = bool(placed.any())
        other = card_bools(unseen & ~placed)  # [n, 52] the unseen cards of unknown place
        if some_placed:
            known = (card_bools(given).view(np.uint8) << 1) | card_bools(talon).view(np.uint8)  # into _KNOWN_MASS
            mass = _KNOWN_MASS.take(known)  # [n, 2, 52] P(card with left / right) where known
            free = np.maximum(n_unseen - mass.sum(axis=1).sum(axis=1), 1.0)
            q = np.clip((held - mass.sum(axis=2)) / free[:, None], 0.0, 1.0)  # [n, 2] per other card
        else:  # no mass placed (the same numbers: x - 0.0 is x)
            q = np.clip(held / n_unseen[:, None], 0.0, 1.0)
        # log P(opponent f does not hold the card): from q for the other unseen cards, from the
        # known mass for the placed ones, 0 for the cards that are not unseen. (A product with a
        # False may leave -0.0 for 0.0: only exp reads these sums, and exp(-0.0) is exp(0.0).)
        log_miss = other[:, None, :] * np.log(np.clip(1.0 - q, 1e-6, 1.0))[:, :, None]
        if some_placed:
            log_miss += _LOG_MISS_KNOWN.take(known)
        row, card = cards.row, cards.card
        at_card = (104 * row + card)[:, None] + _OPPONENT_CELLS  # where each entry's card is in [n, 2, 52]
        miss_at = log_miss.reshape(-1).take(at_card)  # [entries, 2], before the sums
        upto = _cumsum_by_rank(log_miss.reshape(n, 2, 4, 13))  # (in place for many games)
        total = upto[:, :, :, -1]                                       # [n, 2, 4]
        self.void = np.exp(total)                                       # f holds none of the suit
        trump_mode = (v.mode >= 0) & (v.mode < 4)
        trump_suit = np.where(trump_mode, v.mode, 0)
        self.has_trump = np.where(trump_mode[:, None], 1.0 - self.void[np.arange(n), :, trump_suit], 0.0)  # [n, 2]
        self.trump_out = np.bitwise_count(unseen & v.trumps).astype(np.float64)
        unseen_at = unseen[row]
        self.k_above = np.bitwise_count(unseen_at & ABOVE[card]).astype(np.float64)
        self.k_below = np.bitwise_count(unseen_at & BELOW[card]).astype(np.float64)
        self.card_len = cards.per_suit(suit_counts(v.hand).astype(np.float64))
        # [entries, 2]: f holds no unseen card above (below) the card in its suit
        upto = upto.reshape(-1)
        upto_at = upto.take(at_card)
        self.no_higher = np.exp(upto.take(at_card + (12 - card % 13)[:, None]) - upto_at)  # total - upto
        self.no_lower = np.exp(upto_at - miss_at)

    @staticmethod
    def _placed(v: View, unseen: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """uint64[n, 2] twice: the unseen cards known to be with the left (0) / right (1) opponent,
        the talon's (it went to the playmaker, mass 0.9) and the ones this seat handed over in an
        exchange (with its partner when it exchanged with one opponent only, mass 1)."""
        partner_done = v.exchange_done[:, [0, 1]] + v.exchange_done[:, [2, 4]]  # with left, right
        only = (partner_done > 0) & (partner_done[:, ::-1] == 0)
        given = np.where(only, (v.given & unseen)[:, None], np.uint64(0))
        talon = np.where(v.role[:, 1:] == _PLAYMAKER_ROLE, (v.talon & unseen)[:, None], np.uint64(0))
        return talon & ~given, given


_MANY_GAMES = 100
"""From this many games on, _cumsum_by_rank adds rank by rank (measured: about even with
np.cumsum at 100 games, 1.7x faster at 256, 2.4x at 512)."""


def _cumsum_by_rank(x: np.ndarray) -> np.ndarray:
    """``np.cumsum(x, axis=-1)`` for x float[..., 13], the same additions in the same order. For many
    games twelve in-place adds over all suits at once beat cumsum's one short loop per suit."""
    if x.shape[0] < _MANY_GAMES:
        return np.cumsum(x, axis=-1)
    for rank in range(1, 13):
        x[..., rank] += x[..., rank - 1]
    return x


# ----------------------------------------------------------------------------- the agent

class HeuristicAgent:
    """The rule-based player of the module docstring; deterministic (``rng`` is unused)."""

    name = "heuristic"

    def __init__(self, params: dict | None = None, mode_coefs: np.ndarray | None = None) -> None:
        self.params = {**DEFAULT_PARAMS, **(params or {})}
        unknown = set(self.params) - set(DEFAULT_PARAMS)
        if unknown:
            raise ValueError(f"unknown heuristic parameter(s) {sorted(unknown)}; known: {sorted(DEFAULT_PARAMS)}")
        self.mode_coefs = MODE_COEFS if mode_coefs is None else np.asarray(mode_coefs, dtype=np.float64)
        self.explore_modes = False  # fitting aid: choose modes at random (benchmarks/fit_modes.py)

    def __repr__(self) -> str:
        return "HeuristicAgent()"

    @property
    def deterministic(self) -> bool:
        """Each game's action from its observation alone (sergeant_major_env.policies), unless
        the modes are drawn at random (``explore_modes``)."""
        return not self.explore_modes

    def act(self, observations: np.ndarray, legal_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return self._act(View(observations), legal_mask, rng)

    def act_on_card_sets(self, card_sets: np.ndarray, rest: np.ndarray, legal_mask: np.ndarray,
                         rng: np.random.Generator) -> np.ndarray:
        """``act`` on the observation as ``observe_card_sets`` gives it: the same actions,
        without the float card planes (sergeant_major_env.policies)."""
        return self._act(View.from_card_sets(card_sets, rest), legal_mask, rng)

    def _act(self, v: View, legal_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        legal_mask = np.asarray(legal_mask, dtype=bool)
        actions = np.zeros(v.n, dtype=np.int64)
        legal = legal_sets(legal_mask)
        # Returns, discards and play read the cards the same way: one pass over their games.
        group = np.minimum(v.decision, RETURN_DECISION)  # -1 (no decision), mode, give, the card decisions
        counts = np.bincount(group + 1, minlength=4).tolist()
        for g, handler in enumerate((self._mode, self._give, self._card_decisions)):
            if counts[g + 1] == v.n and v.n:  # the whole batch
                actions[:] = handler(v, legal, legal_mask, rng)
            elif counts[g + 1]:
                rows = np.flatnonzero(group == g)
                actions[rows] = handler(v.rows(rows), legal[rows], legal_mask[rows], rng)
        return ensure_legal(actions, legal_mask)

    # ------------------------------------------------------------------ mode

    def _mode(self, v: View, legal: np.ndarray, mask: np.ndarray, rng) -> np.ndarray:
        free = mask[:, 52:]
        if self.explore_modes:
            noise = rng.random(free.shape)
            return 52 + np.where(free, noise, -1.0).argmax(axis=1)
        values = mode_values(card_bools(v.hand), self.mode_coefs, exchange_gain(v.prev_points))
        plan = plan_values(self.mode_coefs)
        open_set = (free * (1 << np.arange(6))).sum(axis=1)
        later = plan[open_set[:, None] & ~(1 << np.arange(6))[None, :]]
        return 52 + np.where(free, values + later, -np.inf).argmax(axis=1)

    # ------------------------------------------------------------------ returns, discards and play

    def _card_decisions(self, v: View, legal: np.ndarray, mask: np.ndarray, rng) -> np.ndarray:
        """Free returns, discards and play (see the module docstring) in one pass: the same card
        reading, future values and dangers, then each game's scores by its kind of decision."""
        cards = _Cards(v, legal)
        r = _Reading(v, cards)
        fv = self._future_value(cards, r)
        danger = self._danger(r) if cards.any_min else None
        counts = np.bincount(v.decision - RETURN_DECISION, minlength=3).tolist()
        score = None
        for decision, scores in ((PLAY_DECISION, self._play), (DISCARD_DECISION, self._discard),
                                 (RETURN_DECISION, self._return)):
            if counts[decision - RETURN_DECISION]:
                kind_score = scores(v, cards, r, fv, danger)
                score = kind_score if score is None else np.where(cards.decision == decision, kind_score, score)
        return cards.best_legal(score)

    # ------------------------------------------------------------------ card values

    def _future_value(self, cards: _Cards, r: _Reading) -> np.ndarray:
        """float[entries]: how likely each card is to take a trick later (trumps and NT)."""
        k, length = r.k_above, r.card_len
        P = self.params
        honour = np.where(k == 0, 1.0, np.where((k == 1) & (length >= 2), P["fv_k1"],
                                                  np.where((k == 2) & (length >= 3), P["fv_k2"], 0.0)))
        # Ruff risk of a side card: an opponent void in its suit holding a trump.
        no_ruff = 1.0 - r.void * r.has_trump[:, :, None]  # [n, 2, 4] per opponent and suit
        side = honour * cards.per_suit(no_ruff[:, 0] * no_ruff[:, 1])
        trump = P["fv_trump"] + (1.0 - P["fv_trump"]) * honour
        return np.where(cards.is_trump, trump, side)

    def _danger(self, r: _Reading) -> np.ndarray:
        """float[entries] (MIN): how likely each card is to be left the highest in a trick later."""
        share = (r.k_below + 0.5) / (r.k_above + r.k_below + 1.0)
        # If led now, the card wins unless an opponent must go over it (no lower card, a higher one).
        not_forced_over = 1.0 - r.no_lower * (1.0 - r.no_higher)  # [entries, 2]
        lead_win = not_forced_over[:, 0] * not_forced_over[:, 1]
        w = self.params["danger_lead"]
        return (1.0 - w) * share + w * lead_win

    # ------------------------------------------------------------------ exchanges and discards

    def _give(self, v: View, legal: np.ndarray, mask: np.ndarray, rng) -> np.ndarray:
        p = self.params["give_p"]  # P(a given unseen card is with the receiver): 16 of the 36 unseen
        n = v.n
        # One unpacking for the six card sets read here: [n, 6, 4, 13].
        sets = card_bools(np.array([v.hand, v.unseen, v.received, v.given, v.trumps, legal]).T).reshape(n, 6, 4, 13)
        mine, unseen, received, given = sets[:, 0], sets[:, 1], sets[:, 2], sets[:, 3]
        ranks = np.arange(13)
        # A suit given in already: the receiver's top card came back, it holds nothing higher
        # than the highest card received in that suit (this exchange phase).
        cap = np.where(given.any(axis=2) & received.any(axis=2), 12 - np.argmax(received[:, :, ::-1], axis=2), 13)
        # Expected value of the returned card: the receiver's highest unseen card of the suit,
        # worth a trick if nothing unseen is above it, less otherwise.
        lowest_mine = np.argmax(mine, axis=2)  # [n, 4]
        is_out = unseen & (ranks > lowest_mine[:, :, None]) & (ranks < cap[:, :, None])
        top_down = unseen[:, :, ::-1].cumsum(axis=2)[:, :, ::-1]
        above_r_unseen = top_down - unseen  # unseen cards of the suit above each rank
        worth = np.where(above_r_unseen == 0, 1.0, np.where(above_r_unseen == 1, 0.4, 0.1 * (ranks >= 9)))
        # P(no unseen card above rank r is with the receiver), multiplied from the top down.
        miss = np.where(is_out, 1 - p, 1.0)[:, :, ::-1]
        none_above = np.concatenate([np.ones((n, 4, 1)), miss.cumprod(axis=2)[:, :, :-1]], axis=2)[:, :, ::-1]
        terms = np.where(is_out, none_above * p * worth, 0.0)
        gain = terms[:, :, ::-1].cumsum(axis=2)[:, :, -1]  # summed from the top down
        score = np.full((n, 52), -np.inf)
        rows, suits = np.nonzero(mine.any(axis=2))
        score[rows, 13 * suits + lowest_mine[rows, suits]] = gain[rows, suits] - 0.01 * lowest_mine[rows, suits]
        # Trumps are given only when nothing else is held (the receiver would return its worst card).
        score = np.where(sets[:, 4].reshape(n, 52), _GIVE_TRUMP, score)
        return pick(score, sets[:, 5].reshape(n, 52))

    def _return(self, v: View, cards: _Cards, r: _Reading, fv: np.ndarray, danger: np.ndarray | None) -> np.ndarray:
        keep = fv + 2.0 * cards.is_trump + 0.01 * r.card_len + _RANK_TIE[cards.card]
        return -keep

    def _discard(self, v: View, cards: _Cards, r: _Reading, fv: np.ndarray, danger: np.ndarray | None) -> np.ndarray:
        nt = cards.mode == NT
        length_bonus = np.where(nt, self.params["nt_length_discard"] * np.maximum(r.card_len - 3, 0), 0.0)
        keep = fv + 2.0 * cards.is_trump + length_bonus + _RANK_TIE[cards.card]
        if not cards.any_min:
            return -keep
        shed = danger + self.params["min_short"] * (r.card_len <= 2) + _RANK_TIE[cards.card]
        return np.where(cards.minimum, shed, -keep)

    # ------------------------------------------------------------------ play

    @staticmethod
    def _not_beat(cards: _Cards, r: _Reading, trump_trick: np.ndarray, ruffing: np.ndarray) -> np.ndarray:
        """float[entries, 2]: P(each opponent (0 left, 1 right) does not beat each card), given how it
        is played (``trump_trick``: per entry; ``ruffing``: [entries, 2])."""
        nh = r.no_higher                   # no higher card of the suit
        nl = r.no_lower                    # no lower card of the suit
        has_trump = r.has_trump[cards.row]
        plain = nh * (1.0 - nl * has_trump)                     # a side card: higher card, or void and ruff
        trump_led = nh                                          # a trump in a trump trick
        return np.where(cards.minimum[:, None], 1.0 - nl * (1.0 - nh),  # MIN: beats only when forced over
                        np.where(cards.is_trump[:, None], np.where(trump_trick[:, None], trump_led, ruffing), plain))

    def _play(self, v: View, cards: _Cards, r: _Reading, fv: np.ndarray, danger: np.ndarray | None) -> np.ndarray:
        row = cards.row
        best, _ = trick_best(v.trick, v.mode)
        leading = best < 0
        best_c = np.maximum(best, 0)
        led_suit = v.trick[:, 0] // 13  # -1 when leading
        trump_suit = np.where(v.mode < 4, v.mode, -2)
        trump_trick = (leading | (led_suit == trump_suit))[row]
        best_trump = (best_c // 13 == trump_suit) & ~leading
        # Cards that beat the best card so far (every card when leading).
        higher = (cards.suit == (best_c // 13)[row]) & (cards.rank > (best_c % 13)[row])
        beats = leading[row] | higher | (cards.is_trump & ~best_trump[row])
        remaining = (2 - v.position)[row]  # players still to play after me
        # A trump ruffing a side suit is beaten by an over-ruff: void in the led suit, higher trump.
        void_led = r.void[np.arange(v.n), :, np.maximum(led_suit, 0)][row]  # [entries, 2]
        ruffing = 1.0 - void_led * (1.0 - r.no_higher)
        not_beaten = np.where(remaining[:, None] > _OPPONENTS, self._not_beat(cards, r, trump_trick, ruffing), 1.0)
        p_win = beats.astype(np.float64) * not_beaten[:, 0] * not_beaten[:, 1]

        tie = _TIE[cards.card]
        trump_mode = cards.mode < 4
        nt = cards.mode == NT
        # Following (trumps, NT): the chance to win now minus the future value spent (unable to
        # win: the card with the least future value; in NT keep long suits).
        P = self.params
        losing = p_win <= 0
        second = (remaining == 1) & beats & ~cards.minimum
        lam = np.where(nt, P["lam_nt"], P["lam"])
        follow = (p_win - lam * fv + tie - P["second_risk"] * second * (1.0 - p_win)
                  + losing * P["nt_length_follow"] * r.card_len * nt)
        # Leading: draw trumps, cash likely winners; otherwise (holding trumps) lead low from a
        # short side suit, and not from a suit with an honour that needs its guard.
        my_trumps = np.bitwise_count(v.hand & v.trumps)
        trump_out = r.trump_out
        master_trump_draw = cards.is_trump & (r.k_above == 0) & (trump_out > 0)[row]
        long_in_trumps = cards.is_trump & ((trump_out > 0) & (my_trumps > trump_out))[row]
        guarded_honour = cards.in_hand & (fv > 0.2) & (fv < 0.9) & ~cards.is_trump
        honour_suits = np.zeros((v.n, 4), dtype=bool)
        honour_suits[row[guarded_honour], cards.suit[guarded_honour]] = True
        suit_has_honour = cards.per_suit(honour_suits)
        short_bonus = (my_trumps > 0)[row] & ~cards.is_trump
        short_bonus = short_bonus * P["short_lead"] * (4 - np.minimum(r.card_len, 4))
        weak = p_win < 0.5
        lead = (P["lead_win"] * p_win + P["draw_master"] * master_trump_draw + P["draw_long"] * long_in_trumps * weak
                + short_bonus * trump_mode
                - P["guard_lead"] * suit_has_honour * weak + tie)
        plain = np.where(leading[row], lead, follow)
        if not cards.any_min:
            return plain
        # MIN: avoid the trick, shed danger.
        mini = -p_win + P["mu"] * danger + _RANK_TIE[cards.card]
        return np.where(cards.minimum, mini, plain)
