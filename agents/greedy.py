"""`greedy`: a simple, fast rule-based player (the baseline the heuristic must beat).

Decision rules, every one vectorised over the batch:

* **Mode** (from the six cards seen): a trump suit is rated by its length plus half a point
  per honour (A K Q) in it, NT by aces and kings, MIN by low cards (2..7) less high cards;
  each rating has a threshold subtracted so that the ratings compare, and the best mode
  still available is chosen.
* **Discard**: the lowest card, trumps last (in MIN: the highest card).
* **Exchange give** and **free return**: the lowest card, trumps last.
* **Play** (trumps, NT): leading, the highest card; following, the cheapest card that beats
  the best card on the table if there is one (a ruff included), otherwise the lowest card.
* **Play** (MIN, the mirror image): leading, the lowest card; following, the highest card
  that stays under the best card on the table (a duck); if every legal card would win, the
  highest card when last to play (the trick is lost anyway) and the lowest otherwise.
"""

from __future__ import annotations

import numpy as np

from .view import (
    ABOVE,
    CARD_RANK,
    CARD_SUIT,
    DISCARD_DECISION,
    GIVE_DECISION,
    MIN,
    MODE_DECISION,
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
# Ties between equal ranks go to the lower suit id: a small suit term in every score.
_SUIT_TIE = CARD_SUIT * 1e-3


def _mode_scores(v: View) -> np.ndarray:
    """float[B, 6]: rating of each mode for the six cards seen, higher is better."""
    hand = card_bools(v.hand)
    per_suit = suit_counts(v.hand).astype(np.float64)
    honours = np.stack([(hand[:, 13 * s + 10:13 * s + 13]).sum(axis=1) for s in range(4)], axis=1)
    aces = hand[:, CARD_RANK == 12].sum(axis=1)
    kings = hand[:, CARD_RANK == 11].sum(axis=1)
    lows = hand[:, CARD_RANK <= 5].sum(axis=1)
    highs = hand[:, CARD_RANK >= 10].sum(axis=1)
    scores = np.empty((v.n, 6))
    scores[:, :4] = per_suit + 0.5 * honours - 3.0
    scores[:, 4] = aces + 0.5 * kings - 2.0
    scores[:, 5] = lows - highs - 2.5
    return scores


class GreedyAgent:
    """Simple rules (see the module docstring); deterministic, ignores `rng`."""

    name = "greedy"
    deterministic = True  # sergeant_major_env.policies: each game's action from its observation alone

    def act(self, observations: np.ndarray, legal_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        legal_mask = np.asarray(legal_mask, dtype=bool)
        v = View(observations)
        actions = np.zeros(v.n, dtype=np.int64)
        legal = legal_sets(legal_mask)
        allowed = card_bools(legal)

        rows = np.flatnonzero(v.decision == MODE_DECISION)
        if rows.size:
            scores = _mode_scores(v.rows(rows))
            actions[rows] = 52 + np.where(legal_mask[rows, 52:], scores, -np.inf).argmax(axis=1)

        # Lowest card, trumps last; MIN discards the highest card.
        low_score = -(_RANK + _SUIT_TIE)[None, :] - 100.0 * card_bools(v.trumps)
        rows = np.flatnonzero(np.isin(v.decision, (GIVE_DECISION, RETURN_DECISION, DISCARD_DECISION)))
        if rows.size:
            score = low_score[rows]
            shed_high = (v.decision[rows] == DISCARD_DECISION) & (v.mode[rows] == MIN)
            score = np.where(shed_high[:, None], (_RANK - _SUIT_TIE)[None, :], score)
            actions[rows] = pick(score, allowed[rows])

        rows = np.flatnonzero(v.decision == PLAY_DECISION)
        if rows.size:
            actions[rows] = self._play(v.rows(rows), legal[rows], allowed[rows], low_score[rows])

        return ensure_legal(actions, legal_mask)

    @staticmethod
    def _play(v: View, legal: np.ndarray, allowed: np.ndarray, low_score: np.ndarray) -> np.ndarray:
        best, _ = trick_best(v.trick, v.mode)
        leading = best < 0
        best_bit = np.where(leading, 0, np.uint64(1) << np.maximum(best, 0).astype(np.uint64))
        best_is_trump = (best_bit & v.trumps) != 0
        beat = ABOVE[np.maximum(best, 0)]
        # Cards that beat the best card so far: higher of its suit, or any trump over a non-trump.
        winners = legal & np.where(leading, 0, beat | np.where(best_is_trump, 0, v.trumps))
        losers = legal & ~winners
        rank = _RANK[None, :] + 0.0 * low_score
        minimum = v.mode == MIN
        last = v.position == 2
        # Trumps and NT: lead high; else cheapest winner; else lowest card.
        cheapest_winner = np.where(card_bools(winners), -rank, -np.inf)
        plain = np.where(leading[:, None], rank, np.where((winners != 0)[:, None], cheapest_winner, low_score))
        # MIN: lead low; duck as high as possible; forced to win: highest if last, else lowest.
        duck = np.where(card_bools(losers), rank, -np.inf)
        forced = np.where(last[:, None], rank, -rank)
        mini = np.where(leading[:, None], -rank, np.where((losers != 0)[:, None], duck, forced))
        score = np.where(minimum[:, None], mini, plain) - (CARD_SUIT * 1e-3)[None, :]
        return pick(score, allowed)

    def __repr__(self) -> str:
        return "GreedyAgent()"
