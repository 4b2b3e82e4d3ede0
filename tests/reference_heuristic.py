"""Test fixture: the ``heuristic`` agent as it was before its speed-up, frozen (pre-optimisation reference).

A verbatim copy of ``agents/view.py`` and ``agents/heuristic.py`` at commit c14e1f3 (the view
first, then the agent; only the import of the view between them dropped). The optimised
``agents.heuristic`` must choose exactly the same actions as this code for the same
observations, masks and rng (tests/test_heuristic_speedup.py). Do not edit it to follow
changes of the agent: a change of the heuristic's play is a new version, and then this file
and the test are replaced together, on purpose.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np

from sergeant_major_env.cards import SUIT_MASKS, TRUMPS, above, bits_to_bool, highest
from sergeant_major_env.engine import trick_winner_position
from sergeant_major_env.observation import SCALES, SEGMENTS

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


def _segment_ints(obs: np.ndarray, name: str) -> np.ndarray:
    """A scaled segment back in natural units (observation.SCALES)."""
    return np.rint(obs[:, SEGMENTS[name]] * SCALES[name]).astype(np.int16)


def _one_hot_index(block: np.ndarray) -> np.ndarray:
    """Index of the set entry of each one-hot row, -1 for an all-zero row."""
    return np.where(block.any(axis=1), block.argmax(axis=1), -1).astype(np.int8)


class View:
    """What one seat knows in each of B games (see the module docstring)."""

    def __init__(self, obs: np.ndarray) -> None:
        obs = np.asarray(obs, dtype=np.float32)
        n = obs.shape[0]
        self.n = n
        packed = np.zeros((n, 11, 8), dtype=np.uint8)
        packed[:, :, :7] = np.packbits(obs[:, :_CARD_WIDTH].reshape(n, 11, 52) > 0.5, axis=2, bitorder="little")
        planes = packed.view("<u8")[:, :, 0].astype(np.uint64)
        self.hand = planes[:, 0]
        self.played = planes[:, 1:4]          # by relative seat
        self.trick_sets = planes[:, 4:7]      # by position
        self.trick = highest(self.trick_sets).astype(np.int64)  # card ids by position, -1 empty
        self.talon = planes[:, 7]
        self.discards = planes[:, 8]
        self.given = planes[:, 9]
        self.received = planes[:, 10]
        self.decision = _one_hot_index(obs[:, SEGMENTS["decision"]] > 0.5)
        self.mode = _one_hot_index(obs[:, SEGMENTS["mode"]] > 0.5).astype(np.int64)
        self.role = _one_hot_index((obs[:, SEGMENTS["roles"]] > 0.5).reshape(n * 3, 3)).reshape(n, 3)  # role of each rel seat
        self.targets = _segment_ints(obs, "targets")
        self.tricks_won = _segment_ints(obs, "tricks_won")
        self.leader = _one_hot_index(obs[:, SEGMENTS["trick_leader"]] > 0.5)  # rel seat, -1 before play
        self.exchange_done = _segment_ints(obs, "exchange_done")  # pairs 0>1 0>2 1>0 1>2 2>0 2>1
        self.prev_points = _segment_ints(obs, "prev_points")
        self.scores = _segment_ints(obs, "scores")
        self.deal = _segment_ints(obs, "deal")[:, 0]
        self.modes_available = obs[:, SEGMENTS["modes_available"]][:, :6] > 0.5  # own modes
        self.trumps = TRUMPS[np.where(self.mode >= 0, self.mode, 6)]  # trump set, 0 if none
        self.position = (self.trick >= 0).sum(axis=1)  # my position in the current trick
        played_all = np.bitwise_or.reduce(self.played, axis=1)
        trick_all = np.bitwise_or.reduce(self.trick_sets, axis=1)
        self.gone = played_all | trick_all | self.discards
        """Cards out of play or on the table (and my own discards)."""
        self.unseen = ALL_CARDS & ~self.hand & ~self.gone
        """Cards that other seats may still hold (or the playmaker discarded)."""

    def rows(self, index: np.ndarray) -> "View":
        """A view of some games only (same attributes, fewer rows)."""
        sub = object.__new__(View)
        for key, value in self.__dict__.items():
            sub.__dict__[key] = value[index] if isinstance(value, np.ndarray) else value
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
    best = np.take_along_axis(trick, position[:, None], axis=1)[:, 0]
    played = trick[:, 0] >= 0
    return np.where(played, best, -1), np.where(played, position, -1)


# ----------------------------------------------------------------------------- the agent (agents/heuristic.py)

_RANK = CARD_RANK.astype(np.float64)
_SUIT = CARD_SUIT
_PLAYMAKER_ROLE = 1

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
    for s in range(4):
        feats[:, s] = np.stack([
            np.ones(n), length[:, s], ace[:, s], king[:, s], queen[:, s], jack[:, s], length[:, s] >= 3,
            total_aces - ace[:, s], total_kings - king[:, s], voids - (length[:, s] == 0),
            singletons - (length[:, s] == 1), gain], axis=1)
    feats[:, NT, :8] = np.stack([
        np.ones(n), total_aces, total_kings, queen.sum(axis=1), jack.sum(axis=1), length.max(axis=1),
        h[:, :, :5].sum(axis=(1, 2)), (ace + king > 0).sum(axis=1)], axis=1)
    feats[:, MIN, :10] = np.stack([
        np.ones(n), h[:, :, :3].sum(axis=(1, 2)), h[:, :, 3:6].sum(axis=(1, 2)), h[:, :, 6:9].sum(axis=(1, 2)),
        jack.sum(axis=1), queen.sum(axis=1), total_kings, total_aces, voids, length.max(axis=1)], axis=1)
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

    def act(self, observations: np.ndarray, legal_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        legal_mask = np.asarray(legal_mask, dtype=bool)
        v = View(observations)
        actions = np.zeros(v.n, dtype=np.int64)
        legal = legal_sets(legal_mask)
        handlers = ((MODE_DECISION, self._mode), (GIVE_DECISION, self._give), (RETURN_DECISION, self._return),
                    (DISCARD_DECISION, self._discard), (PLAY_DECISION, self._play))
        for decision, handler in handlers:
            rows = np.flatnonzero(v.decision == decision)
            if rows.size:
                sub = v if rows.size == v.n else v.rows(rows)
                actions[rows] = handler(sub, legal[rows], legal_mask[rows], rng)
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

    # ------------------------------------------------------------------ card model

    @staticmethod
    def _model(v: View) -> dict:
        """Shared card-reading quantities (see the module docstring)."""
        n = v.n
        hand = card_bools(v.hand)
        trumps = card_bools(v.trumps)
        unseen = v.unseen
        unseen_b = card_bools(unseen)
        n_unseen = np.maximum(np.bitwise_count(unseen).astype(np.float64), 1.0)
        # Cards still held by the left and right opponents. (Before the talon is revealed 4
        # unseen cards lie in it; later the playmaker's 4 discards are unseen to the others.)
        held = 16.0 - np.bitwise_count(v.played[:, 1:]).astype(np.float64)
        # Known places: the talon (face up) went to the playmaker, who rarely throws it back;
        # the cards this seat handed over in an exchange are with its partner.
        known = np.zeros((n, 2, 52))
        talon = card_bools(v.talon & unseen)
        partner_done = v.exchange_done[:, [0, 1]] + v.exchange_done[:, [2, 4]]  # with left, right
        given = card_bools(v.given & unseen)
        for f in range(2):
            known[:, f] += 0.9 * talon * (v.role[:, f + 1] == _PLAYMAKER_ROLE)[:, None]
            only = (partner_done[:, f] > 0) & (partner_done[:, 1 - f] == 0)
            known[:, f] = np.where(only[:, None] & given, 1.0, known[:, f])
        placed = known.sum(axis=1)  # [n, 52] probability mass already placed
        other = unseen_b & (placed == 0)
        free = np.maximum(n_unseen - placed.sum(axis=1), 1.0)
        q = np.clip((held - known.sum(axis=2)) / free[:, None], 0.0, 1.0)  # [n, 2] per other card
        prob = np.where(other[:, None, :], q[:, :, None], known)  # [n, 2, 52] P(card with left / right)
        log_miss = np.where(unseen_b[:, None, :], np.log(np.clip(1.0 - prob, 1e-6, 1.0)), 0.0)
        suits = log_miss.reshape(n, 2, 4, 13)
        upto = np.cumsum(suits, axis=3)
        total = upto[:, :, :, -1:]
        no_higher = np.exp(total - upto).reshape(n, 2, 52)            # no unseen card above c with f
        no_lower = np.exp(upto - suits).reshape(n, 2, 52)             # none below
        void = np.exp(total[:, :, :, 0])                              # [n, 2, 4] f holds none of the suit
        trump_suit = np.where((v.mode >= 0) & (v.mode < 4), v.mode, 0)
        has_trump = np.where((v.mode >= 0)[:, None] & (v.mode < 4)[:, None],
                             1.0 - void[np.arange(n), :, trump_suit], 0.0)  # [n, 2]
        k_above = counts_above(unseen).astype(np.float64)
        k_below = counts_below(unseen).astype(np.float64)
        out_suit = suit_counts(unseen).astype(np.float64)            # [n, 4]
        my_len = suit_counts(v.hand).astype(np.float64)
        trump_out = np.bitwise_count(unseen & v.trumps).astype(np.float64)
        return dict(hand=hand, trumps=trumps, q=q, k_above=k_above, k_below=k_below, out_suit=out_suit,
                    my_len=my_len, trump_out=trump_out, card_len=my_len[:, _SUIT], card_out=out_suit[:, _SUIT],
                    no_higher=no_higher, no_lower=no_lower, void=void, has_trump=has_trump)

    @staticmethod
    def _not_beat(m: dict, f: int, led_trump: np.ndarray, ruffing: np.ndarray, minimum: np.ndarray) -> np.ndarray:
        """float[n, 52]: P(opponent f (0 left, 1 right) does not beat each card), given how it is played."""
        nh = m["no_higher"][:, f]          # no higher card of the suit
        nl = m["no_lower"][:, f]           # no lower card of the suit
        has_trump = m["has_trump"][:, f][:, None]
        plain = nh * (1.0 - nl * has_trump)                     # a side card: higher card, or void and ruff
        trump_led = nh                                          # a trump in a trump trick
        return np.where(minimum[:, None], 1.0 - nl * (1.0 - nh),  # MIN: beats only when forced over
                        np.where(m["trumps"], np.where(led_trump[:, None], trump_led, ruffing), plain))

    def _future_value(self, v: View, m: dict) -> np.ndarray:
        """float[n, 52]: how likely each card is to take a trick later (trumps and NT)."""
        k, length = m["k_above"], m["card_len"]
        P = self.params
        honour = np.where(k == 0, 1.0, np.where((k == 1) & (length >= 2), P["fv_k1"],
                                                  np.where((k == 2) & (length >= 3), P["fv_k2"], 0.0)))
        # Ruff risk of a side card: an opponent void in its suit holding a trump.
        safe = np.ones_like(honour)
        for f in range(2):
            void = m["void"][:, f][:, _SUIT]
            safe = safe * (1.0 - void * m["has_trump"][:, f][:, None])
        side = honour * safe
        trump = P["fv_trump"] + (1.0 - P["fv_trump"]) * honour
        return np.where(m["trumps"], trump, side)

    def _danger(self, m: dict) -> np.ndarray:
        """float[n, 52] (MIN): how likely each card is to be left the highest in a trick later."""
        share = (m["k_below"] + 0.5) / (m["k_above"] + m["k_below"] + 1.0)
        # If led now, the card wins unless an opponent must go over it (no lower card, a higher one).
        lead_win = np.ones_like(share)
        for f in range(2):
            lead_win *= 1.0 - m["no_lower"][:, f] * (1.0 - m["no_higher"][:, f])
        w = self.params["danger_lead"]
        return (1.0 - w) * share + w * lead_win

    # ------------------------------------------------------------------ exchanges and discards

    def _give(self, v: View, legal: np.ndarray, mask: np.ndarray, rng) -> np.ndarray:
        m = self._model(v)
        hand = m["hand"]
        p = self.params["give_p"]  # P(a given unseen card is with the receiver): 16 of the 36 unseen
        n = v.n
        mine = hand.reshape(n, 4, 13)
        unseen = card_bools(v.unseen).reshape(n, 4, 13)
        received = card_bools(v.received).reshape(n, 4, 13)
        given = card_bools(v.given).reshape(n, 4, 13)
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
        score = np.where(m["trumps"], -10.0 - _RANK[None, :], score)
        return pick(score, card_bools(legal))

    def _return(self, v: View, legal: np.ndarray, mask: np.ndarray, rng) -> np.ndarray:
        m = self._model(v)
        keep = self._future_value(v, m) + 2.0 * m["trumps"] + 0.01 * m["card_len"] + _RANK[None, :] / 1000.0
        return pick(-keep, card_bools(legal))

    def _discard(self, v: View, legal: np.ndarray, mask: np.ndarray, rng) -> np.ndarray:
        m = self._model(v)
        minimum = v.mode == MIN
        nt = v.mode == NT
        fv = self._future_value(v, m)
        length_bonus = np.where(nt[:, None], self.params["nt_length_discard"] * np.maximum(m["card_len"] - 3, 0), 0.0)
        keep = fv + 2.0 * m["trumps"] + length_bonus + _RANK[None, :] / 1000.0
        danger = self._danger(m) + self.params["min_short"] * (m["card_len"] <= 2) + _RANK[None, :] / 1000.0
        score = np.where(minimum[:, None], danger, -keep)
        return pick(score, card_bools(legal))

    # ------------------------------------------------------------------ play

    def _play(self, v: View, legal: np.ndarray, mask: np.ndarray, rng) -> np.ndarray:
        m = self._model(v)
        allowed = card_bools(legal)
        minimum = v.mode == MIN
        best, _ = trick_best(v.trick, v.mode)
        leading = best < 0
        best_c = np.maximum(best, 0)
        led_suit = np.where(leading, -1, v.trick[:, 0] // 13)
        trump_suit = np.where(v.mode < 4, v.mode, -2)
        trump_trick = leading | (led_suit == trump_suit)
        best_trump = (best_c // 13 == trump_suit) & ~leading
        # Cards that beat the best card so far (every card when leading).
        higher = (_SUIT[None, :] == (best_c // 13)[:, None]) & (_RANK[None, :] > (best_c % 13)[:, None])
        beats = leading[:, None] | higher | (m["trumps"] & ~best_trump[:, None])
        remaining = 2 - v.position  # players still to play after me
        p_win = beats.astype(np.float64)
        for f in range(2):
            # A trump ruffing a side suit is beaten by an over-ruff: void in the led suit, higher trump.
            void_led = m["void"][np.arange(v.n), f, np.maximum(led_suit, 0)]
            ruffing = 1.0 - void_led[:, None] * (1.0 - m["no_higher"][:, f])
            nb = self._not_beat(m, f, trump_trick, ruffing, minimum)
            p_win = p_win * np.where((remaining > f)[:, None], nb, 1.0)

        tie = -_RANK[None, :] / 100.0
        fv = self._future_value(v, m)
        trump_mode = (v.mode < 4)[:, None]
        nt = (v.mode == NT)[:, None]
        # Following (trumps, NT): the chance to win now minus the future value spent (unable to
        # win: the card with the least future value; in NT keep long suits).
        P = self.params
        losing = p_win <= 0
        second = (v.position == 1)[:, None] & beats & ~minimum[:, None]
        lam = np.where(nt, P["lam_nt"], P["lam"])
        follow = (p_win - lam * fv + tie - P["second_risk"] * second * (1.0 - p_win)
                  + losing * P["nt_length_follow"] * m["card_len"] * nt)
        # Leading: draw trumps, cash likely winners; otherwise (holding trumps) lead low from a
        # short side suit, and not from a suit with an honour that needs its guard.
        my_trumps = (m["hand"] & m["trumps"]).sum(axis=1)
        master_trump_draw = m["trumps"] & (m["k_above"] == 0) & (m["trump_out"] > 0)[:, None]
        long_in_trumps = m["trumps"] & ((m["trump_out"] > 0) & (my_trumps > m["trump_out"]))[:, None]
        guarded_honour = m["hand"] & (fv > 0.2) & (fv < 0.9) & ~m["trumps"]
        suit_has_honour = guarded_honour.reshape(v.n, 4, 13).any(axis=2)[:, _SUIT]
        short_bonus = (my_trumps > 0)[:, None] & ~m["trumps"]
        short_bonus = short_bonus * P["short_lead"] * (4 - np.minimum(m["card_len"], 4))
        weak = p_win < 0.5
        lead = (P["lead_win"] * p_win + P["draw_master"] * master_trump_draw + P["draw_long"] * long_in_trumps * weak
                + short_bonus * trump_mode
                - P["guard_lead"] * suit_has_honour * weak + tie)
        plain = np.where(leading[:, None], lead, follow)
        # MIN: avoid the trick, shed danger.
        mini = -p_win + P["mu"] * self._danger(m) + _RANK[None, :] / 1000.0
        score = np.where(minimum[:, None], mini, plain)
        return pick(score, allowed)
