"""`heuristic`: the strongest rule-based player of the project, batched.

The card decisions (free returns, discards, play: what a game and pimc's rollouts ask most)
are compiled loops over the games (`agents/heuristic_kernels.py`), the same actions as the
numpy agent of 0.3.0 bit for bit (`tests/test_heuristic_kernel.py`); the mode choice and
the exchange give, a few a deal, are numpy over the batch.

It sees only its observation. Card reading is a simple probability model: every card the
seat has not seen (not in its hand, not played, not on the table, not its own discard) is
with the left or the right opponent in proportion to the cards they still hold (the
non-playmakers also allow for the playmaker's four unknown discards), each card
independently; except the cards whose place is known: the face-up talon went to the
playmaker (who seldom throws it back), and cards handed over in an exchange are with the
partner. From it, for each card:

* `k_above` / `k_below`: unseen cards of its suit above / below it; a card with none
  above is a *master* (the top card left in its suit);
* for each opponent, the chance that it holds no higher (no lower) card of the suit, is
  void in a suit, holds a trump;
* `P(win)`: the chance that the card takes the current trick, when the players still to
  play try to beat it (trumps and NT) or to stay under it (MIN);
* its *future value* (trumps and NT): how likely it is to take a trick later: a master 1
  (a side master less its risk of being ruffed), a guarded second-best card 1/2, a
  twice-guarded third-best 1/4, and every trump something, since it can ruff;
* its *danger* (MIN): how likely it is to end up the highest card of a trick.

Decision rules, as a club player would put them (weights in `DEFAULT_PARAMS`, tuned on
duplicate matches against `greedy` and earlier versions of this player):

* **Mode** (six cards seen, R9): each mode's expected points for the playmaker are
  estimated from the six cards by a linear model fitted on self-play
  (`benchmarks/fit_modes.py`): trump length and top trumps, side aces and kings; NT:
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

from sergeant_major_env import engine
from sergeant_major_env.cards import NUM_ACTIONS
from sergeant_major_env.jit import contiguous
from sergeant_major_env.observation import acting_card_sets

from .heuristic_kernels import PARAM_ORDER, card_actions, give_actions, state_actions
from .view import (
    GIVE_DECISION,
    MIN,
    MODE_DECISION,
    NT,
    RETURN_DECISION,
    View,
    card_bools,
    ensure_legal,
    legal_sets,
)

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
    """float[B, 6]: estimated playmaker points of each mode for the six cards `hand` (bool[B, 52])."""
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



# ----------------------------------------------------------------------------- the agent

class HeuristicAgent:
    """The rule-based player of the module docstring; deterministic (`rng` is unused)."""

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
        the modes are drawn at random (`explore_modes`)."""
        return not self.explore_modes

    def act(self, observations: np.ndarray, legal_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return self._act(View(observations), legal_mask, rng)

    def act_on_card_sets(self, card_sets: np.ndarray, rest: np.ndarray, legal_mask: np.ndarray,
                         rng: np.random.Generator) -> np.ndarray:
        """`act` on the observation as `observe_card_sets` gives it: the same actions,
        without the float card planes (sergeant_major_env.policies)."""
        return self._act(View.from_card_sets(card_sets, rest), legal_mask, rng)

    def _card_weights(self) -> np.ndarray:
        """The weights the card kernels read (`heuristic_kernels.PARAM_ORDER`), from `params`."""
        return np.array([self.params[name] for name in PARAM_ORDER], dtype=np.float64)

    def act_from_state(self, state, games: np.ndarray, legal_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """`act` for the seats to act in `games` of the engine `state` (`legal_mask`: their
        rows; `sergeant_major_env.policies`): the same actions. The inputs of the card
        decisions and the gives are read in place, what the seat to act knows
        (`heuristic_kernels.state_actions`); the mode choices go through `act`'s path."""
        games = contiguous(engine.game_numbers(games, state.batch_size, "HeuristicAgent.act_from_state"), np.int64)
        legal_mask = contiguous(legal_mask, np.bool_)
        if legal_mask.shape != (games.size, NUM_ACTIONS):
            raise ValueError(f"HeuristicAgent.act_from_state: legal_mask must have shape ({games.size}, {NUM_ACTIONS}), "
                             f"one row per game, got {legal_mask.shape}")
        actions = np.zeros(games.size, dtype=np.int64)
        rows, chosen = state_actions(state, games, legal_mask, self._card_weights(), float(self.params["give_p"]))
        actions[rows] = chosen
        if rows.size < games.size:
            others = np.ones(games.size, dtype=bool)
            others[rows] = False
            others &= state.to_act[games] >= 0  # a finished game: action 0, as act gives it
            others = np.flatnonzero(others)
            if others.size:
                view = View.from_card_sets(*acting_card_sets(state, games[others]))
                actions[others] = self._act(view, legal_mask[others], rng)
        return ensure_legal(actions, legal_mask)

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
        """Free returns, discards and play (see the module docstring): compiled, one loop over the
        games (agents.heuristic_kernels)."""
        return card_actions(v, legal, self._card_weights())

    # ------------------------------------------------------------------ exchange gives

    def _give(self, v: View, legal: np.ndarray, mask: np.ndarray, rng) -> np.ndarray:
        """The exchange give (see the module docstring): compiled (agents.heuristic_kernels).
        `give_p`: P(a given unseen card is with the receiver), 16 of the 36 unseen."""
        actions = np.empty(v.n, dtype=np.int64)
        give_actions(*(contiguous(sets, np.uint64) for sets in (v.hand, v.unseen, v.received, v.given, v.trumps, legal)),
                     float(self.params["give_p"]), actions)
        return actions
