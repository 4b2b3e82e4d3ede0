"""``heuristic``: the strongest rule-based player of the project, vectorised over the batch.

It sees only its observation. Card reading is a simple probability model: every card the
seat has not seen (not in its hand, not played, not on the table, not its own discard) is
with the left or the right opponent in proportion to the cards they still hold (the
non-playmakers also allow for the playmaker's four unknown discards), each card
independently; except the cards whose place is known: the face-up talon went to the
playmaker (who seldom throws it back), and cards handed over in an exchange are with the
partner. From it, for each card:

* ``k_above`` / ``k_below``: unseen cards of its suit above / below it; a card with none
  above is a *master* (the top card left in its suit);
* for each opponent, the chance that it holds no higher (no lower) card of the suit, is
  void in a suit, holds a trump;
* ``P(win)``: the chance that the card takes the current trick, when the players still to
  play try to beat it (trumps and NT) or to stay under it (MIN);
* its *future value* (trumps and NT): how likely it is to take a trick later: a master 1
  (a side master less its risk of being ruffed), a guarded second-best card 1/2, a
  twice-guarded third-best 1/4, and every trump something, since it can ruff;
* its *danger* (MIN): how likely it is to end up the highest card of a trick.

Decision rules, as a club player would put them (weights in ``DEFAULT_PARAMS``, tuned on
duplicate matches against ``greedy`` and earlier versions of this player):

* **Mode** (six cards seen, R9): each mode's expected points for the playmaker are
  estimated from the six cards by a linear model fitted on self-play
  (``benchmarks/fit_modes.py``): trump length and top trumps, side aces and kings; NT:
  aces, kings, queens; MIN: low cards and few high ones. Trump modes add the exchange
  they bring (R19): a giver of the last deal gains cards, a receiver loses them, so after
  a bad deal NT or MIN is preferred. The modes still open are planned over the
  playmaker's remaining turns: the choice maximises today's value plus the expected value
  of the modes kept for later (a dynamic programme over the 64 sets of open modes, on
  random hands), so MIN and NT are kept for hands that suit them; the last is forced.
* **Exchange give** (R21): never a trump (the receiver would return its worst card). Give
  the lowest card of the side suit whose return is worth most: the receiver must return
  its highest card of that suit, so the value is that of the unseen cards above one's own
  that it may hold (a top card that would be a master is worth a trick).
* **Free return** (after a trump was given): the least useful card: a low side card with
  no trick in it, from a short suit.
* **Discards** (playmaker): keep trumps, masters and guarded honours, throw the cards with
  the least future value, lowest first; in NT keep the length of long suits; in MIN throw
  the most dangerous cards, from short suits first (a void lets the other high cards go).
* **Play, trumps and NT** (points are W - Z: every trick counts, so a made target changes
  nothing): *leading*, draw the opponents' trumps with master trumps, and with small ones
  when holding more trumps than both opponents; cash likely winners; otherwise, holding
  trumps, lead low from a short side suit (to ruff it later), and not from a suit with an
  honour that needs its guard. *Following*, play the card that maximises the chance of
  winning the trick minus the future value it spends: last in hand the cheapest winner
  (the smallest ruff), second hand a card that wins with good odds, otherwise low. Unable
  to win, throw the card with the least future value (in NT keeping long suits).
* **Play, MIN** (every trick avoided is a point, over target or not): *leading*, the card
  least likely to hold the trick (a low one where opponents must go over it), shedding
  danger when it is safe; *following*, duck with the highest card that stays under the
  best card on the table; forced to win, win with the most dangerous card; void, throw
  the most dangerous card (high relative to the unseen cards of its suit, and likely to
  win if it had to be led).
"""

from __future__ import annotations

import functools
import itertools

import numpy as np

from .view import (
    ABOVE,
    BELOW,
    CARD_RANK,
    CARD_SUIT,
    DISCARD_DECISION,
    GIVE_DECISION,
    MIN,
    MODE_DECISION,
    NT,
    PLAY_DECISION,
    RETURN_DECISION,
    View,
    card_bools,
    ensure_legal,
    legal_sets,
    pick,
    suit_counts,
    trick_best,
)

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
