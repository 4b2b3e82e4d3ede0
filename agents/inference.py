"""Inference over the hidden cards from how the other seats played, with a policy as their model.

A sampled world (a complete deal consistent with what the seat knows,
[`sergeant_major_env.worlds.sample_worlds`][]) makes the other seats' plays of this deal
more or less likely: a seat that ducked a trick it could have won cheaply probably did not
hold the card to win it. Given a policy with action probabilities (a `ppo:` policy such
as `learned`: the masked softmax of its logits), the log-likelihood of a world is the sum,
over the other seats' plays in this deal's tricks that had a real choice, of
`log p(card played | that seat's observation then, in this world)`.

To get those observations each world is *rewound* to the first lead of the deal (every card
played goes back to its player's hand, the tricks are cleared) and the deal's plays are
replayed through the engine, in order. Only public plays are replayed; what the worlds
keep is exactly what the seat to act knows (the sampler's guarantee), so the weights read
nothing else either. Earlier phases (mode, exchanges, discards) are not used: the others'
exchange cards are hidden from the seat (R22).
"""

from __future__ import annotations

import numpy as np

from sergeant_major_env import engine
from sergeant_major_env.cards import count
from sergeant_major_env.observation import observe

PLAYS_PER_DEAL = 48


def play_history(state: engine.State) -> tuple[np.ndarray, np.ndarray]:
    """(cards int8[B, 48], plays int[B]): this deal's plays so far in playing order (the
    completed tricks, then the current one, each from its leader; -1 after the last)."""
    rows = np.arange(state.batch_size)
    tricks = state.past_tricks.copy()  # [B, 16, 3] by position; tricks not completed are -1
    done = np.count_nonzero(tricks[:, :, 0] >= 0, axis=1)
    going_on = done < 16
    tricks[rows[going_on], done[going_on]] = state.trick[going_on]
    cards = tricks.reshape(-1, PLAYS_PER_DEAL)
    return cards, np.count_nonzero(cards >= 0, axis=1)


def rewind_to_first_lead(state: engine.State) -> engine.State:
    """A copy of `state` (games in the play phase) as it was at the deal's first lead: the
    cards played back in their players' hands, no trick played, the first leader to act."""
    out = state.copy()
    out.hands |= out.played
    out.played[:] = 0
    out.shown_out[:] = 0  # only plays show voids (R13-R15)
    out.card_trick[:] = -1
    out.trick[:] = -1
    out.past_tricks[:] = -1
    out.tricks_won[:] = 0
    first = out.trick_leaders[:, 0].copy()
    out.trick_leaders[:] = -1
    out.trick_leaders[:, 0] = first
    out.leader[:] = first
    out.to_act[:] = first
    for name in ("last_trick", "last_trick_leader", "last_trick_winner", "last_returned"):
        getattr(out, name)[:] = -1
    return out


def play_log_likelihoods(log_probs, worlds: engine.State, observer: np.ndarray) -> np.ndarray:
    """float[R]: for each world (play phase), the log-likelihood under `log_probs` of the
    plays of the seats other than `observer` (int[R]) in this deal so far.

    `log_probs(observations, legal_mask)`: float[B, 58] log-probabilities of the legal
    actions (`policy_log_probs`)."""
    cards, plays = play_history(worlds)
    replay = rewind_to_first_lead(worlds)
    total = np.zeros(worlds.batch_size)
    for k in range(int(plays.max(initial=0))):
        live = np.flatnonzero(plays > k)
        legal = engine.legal_bits(replay, live)
        seat = replay.to_act[live]
        # Forced plays say nothing, nor do the observer's own.
        asked = np.flatnonzero((seat != observer[live]) & (count(legal) > 1))
        if asked.size:
            rows = live[asked]
            mask = engine.legal_action_mask(replay.take(rows))
            scores = log_probs(observe(replay.take(rows), replay.to_act[rows]), mask)
            total[rows] += scores[np.arange(rows.size), cards[rows, k]]
        engine.step(replay, cards[live, k].astype(np.int64), legal=legal, games=live)
    return total


def policy_log_probs(policy):
    """The masked log-softmax of `policy`'s action logits as a function (observations,
    legal_mask) -> float[B, 58] (-inf where illegal), or None if it has no probabilities.

    A `ppo:` policy (and `learned`) is read from its policy file with
    `sergeant_major_env.agents.policy_file.load_policy` (torch with the project's threads); a policy with
    an `action_log_probs(observations, legal_mask)` method is used as it is."""
    own = getattr(policy, "action_log_probs", None)
    if callable(own):
        return own
    path = getattr(policy, "path", None)
    if path is None or not hasattr(policy, "metadata"):
        return None
    try:
        from .policy_file import load_policy
        from .torch_setup import use_torch_threads
    except ImportError:  # no torch: no probabilities
        return None
    use_torch_threads()
    try:
        network, _ = load_policy(path)
    except (OSError, ValueError):  # not a code-free policy file (an SB3 zip behind the opt-in)
        return None

    def log_probs(observations: np.ndarray, legal_mask: np.ndarray) -> np.ndarray:
        import torch

        with torch.no_grad():
            logits = network.action_logits(torch.as_tensor(np.asarray(observations, dtype=np.float32)))
        logits = logits.numpy().astype(np.float64)
        logits[~np.asarray(legal_mask, dtype=bool)] = -np.inf
        top = logits.max(axis=1, keepdims=True)
        return logits - top - np.log(np.exp(logits - top).sum(axis=1, keepdims=True))

    return log_probs


def resample(log_weights: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """int[size]: indices drawn with probabilities proportional to `exp(log_weights)`
    (systematic resampling: one uniform draw, evenly spaced points on the cumulative weights)."""
    weights = np.exp(log_weights - log_weights.max())
    cumulative = np.cumsum(weights / weights.sum())
    points = (rng.random() + np.arange(size)) / size
    return np.minimum(np.searchsorted(cumulative, points, side="right"), log_weights.size - 1)

