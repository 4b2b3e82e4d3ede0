"""engine.step(games=...): only distinct game numbers of the batch, refused in one line
with the state unchanged (a repeated game would be stepped twice on one validation, and
numpy would wrap -1 to the last game)."""

from __future__ import annotations

import numpy as np
import pytest

from sergeant_major_env import Rules, engine

BATCH = 6


def fresh_state():
    return engine.init(engine.game_seeds(11, BATCH), Rules(num_deals=1))


def first_legal(state, games):
    return engine.legal_action_mask(state)[games].argmax(axis=1).astype(np.int64)


@pytest.mark.parametrize("games, match", [
    ([1, 1], "games must be distinct, got game 1 more than once"),
    ([3, 0, 3], "games must be distinct, got game 3 more than once"),
    ([-1], r"games must be game numbers 0..5, got -1"),
    ([0, BATCH], r"games must be game numbers 0..5, got 6"),
    ([0.5], r"games must be a 1-D array of game numbers 0..5, got float64 \(1,\)"),
    ([True, False], r"games must be a 1-D array of game numbers 0..5, got bool \(2,\)"),
    ([[0, 1]], r"games must be a 1-D array of game numbers 0..5, got int64 \(1, 2\)"),
])
def test_step_refuses_bad_game_indices_in_one_line_and_changes_nothing(games, match):
    state = fresh_state()
    before = state.copy()
    size = np.asarray(games).reshape(-1).size
    with pytest.raises(ValueError, match=f"^{match}$"):
        engine.step(state, np.zeros(size, dtype=np.int64) + 52, games=np.asarray(games))
    for name, value in before.arrays().items():
        np.testing.assert_array_equal(value, getattr(state, name), err_msg=name)


@pytest.mark.parametrize("games", [[0, 2, 5], [5, 0, 2], [4], []], ids=["increasing", "unordered", "one", "none"])
def test_step_of_distinct_games_in_any_order_moves_exactly_those_games(games):
    state, reference = fresh_state(), fresh_state()
    games = np.asarray(games, dtype=np.int64)
    actions = first_legal(state, games)
    engine.step(state, actions, games=games)
    for game in range(BATCH):  # each listed game is the same as stepped alone, the others untouched
        alone = reference.take(np.array([game]))
        if game in games:
            engine.step(alone, actions[games == game])
        for name, value in alone.arrays().items():
            np.testing.assert_array_equal(value[0], getattr(state, name)[game], err_msg=f"{name} game {game}")
