"""agents/inference.py: the deal's plays replayed from its first lead, world weights from a policy."""

from __future__ import annotations

import numpy as np

from sergeant_major_env.agents import make_agent
from sergeant_major_env.agents.inference import play_history, play_log_likelihoods, policy_log_probs, resample, rewind_to_first_lead
from sergeant_major_env import Rules, engine
from sergeant_major_env.cards import bits_to_bool, random_member
from sergeant_major_env.policies import decide
from sergeant_major_env.worlds import sample_worlds


def _play_positions(seed: int, batch: int = 24):
    """States of heuristic games (three deals) at every step where some game is in the play phase."""
    heuristic = make_agent("heuristic")
    state = engine.init(engine.game_seeds(seed, batch), Rules(num_deals=3))
    rng = np.random.default_rng(seed)
    while (state.phase != engine.OVER).any():
        playing = np.flatnonzero(state.phase == engine.PLAY)
        if playing.size:
            yield state.take(playing)
        live = np.flatnonzero(state.phase != engine.OVER)
        actions = np.zeros(state.batch_size, dtype=np.int64)
        legal = engine.legal_bits(state)
        mask = bits_to_bool(legal[live], 58)
        actions[live] = decide(heuristic, state, live, mask, rng) if rng.random() < 0.7 else \
            random_member(legal[live], rng)
        engine.step(state, actions, legal=legal)


# The fields a step sets for that step only, and the dealt hands (R10, not replayed).
_NOT_REPLAYED = {"last_returned", "last_trick", "last_trick_leader", "last_trick_winner", "deal_ended",
                 "deal_points", "game_ended"}


def test_replaying_the_deals_plays_from_the_first_lead_gives_the_state_back():
    """R12-R16: the rewound deal, stepped through the engine with its plays in order,
    reaches the very state it was rewound from (hands, tricks, voids, trick history, turn)."""
    checked = 0
    for k, state in enumerate(_play_positions(21)):
        if k % 5:
            continue
        cards, plays = play_history(state)
        replay = rewind_to_first_lead(state)
        assert (replay.played == 0).all() and (count_cards(replay.hands) == 16).all()
        for step in range(int(plays.max())):
            live = np.flatnonzero(plays > step)
            engine.step(replay, cards[live, step].astype(np.int64), games=live)
        for name, value in state.arrays().items():
            if name not in _NOT_REPLAYED:
                np.testing.assert_array_equal(getattr(replay, name), value, err_msg=name)
        checked += state.batch_size
    assert checked > 200


def count_cards(hands: np.ndarray) -> np.ndarray:
    return np.bitwise_count(hands)


def test_play_history_lists_the_plays_in_order():
    """The completed tricks by position (leader first), then the current trick's cards."""
    state = next(s for s in _play_positions(22) if (s.past_tricks[:, 1, 0] >= 0).any() and (s.trick[:, 0] >= 0).any())
    cards, plays = play_history(state)
    g = int(np.flatnonzero((state.past_tricks[:, 1, 0] >= 0) & (state.trick[:, 0] >= 0))[0])
    done = int((state.past_tricks[g, :, 0] >= 0).sum())
    on_table = [c for c in state.trick[g].tolist() if c >= 0]
    assert cards[g, :3 * done].tolist() == state.past_tricks[g, :done].reshape(-1).tolist()
    assert cards[g, 3 * done:3 * done + len(on_table)].tolist() == on_table
    assert plays[g] == 3 * done + len(on_table) and (cards[g, plays[g]:] == -1).all()


def test_the_real_deal_is_likelier_than_random_worlds_under_a_model_of_the_players():
    """Heuristic games judged by a model of heuristic play (the learned policy imitates it):
    the real hidden cards explain the others' plays better than most sampled worlds do."""
    log_probs = policy_log_probs(make_agent("learned"))
    rng = np.random.default_rng(0)
    better = total = 0
    for k, state in enumerate(_play_positions(23, batch=12)):
        late = np.flatnonzero(state.past_tricks[:, 5, 0] >= 0)
        if k % 7 or late.size == 0:
            continue
        state = state.take(late)
        observer = state.to_act.astype(np.intp)
        real = play_log_likelihoods(log_probs, state, observer)
        worlds = sample_worlds(state, np.arange(state.batch_size), 8, rng)
        sampled = play_log_likelihoods(log_probs, worlds, np.repeat(observer, 8)).reshape(-1, 8)
        better += int((real[:, None] > sampled).sum())
        total += sampled.size
    assert total > 100 and better / total > 0.6


def test_policies_without_probabilities_give_no_model():
    assert policy_log_probs(make_agent("heuristic")) is None


def test_resampling_follows_the_weights():
    rng = np.random.default_rng(1)
    picks = np.concatenate([resample(np.log([1.0, 3.0, 0.0 + 1e-300]), 40, rng) for _ in range(50)])
    assert set(picks.tolist()) <= {0, 1}
    assert abs((picks == 1).mean() - 0.75) < 0.03
