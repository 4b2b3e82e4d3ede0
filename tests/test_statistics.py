"""The ratings of sergeant_major_env.statistics on synthetic results: the Bradley-Terry fit,
its bootstrap intervals, and the pairwise results they are fitted to."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sergeant_major_env import statistics
from sergeant_major_env.evaluation import make_schedule
from sergeant_major_env.statistics import (
    PRIOR_GAMES, RATING_SCALE, bradley_terry, fit_ratings, pairwise_ahead, summarize, unrated_gaps)


def simulated_ahead(log_strengths, groups: int, games_per_pair: int, seed: int) -> np.ndarray:
    """``ahead[j, a, b]`` drawn from the Bradley-Terry model itself: each pair plays
    ``games_per_pair`` games a group, a finishing above b with probability s_a / (s_a + s_b)."""
    rng = np.random.default_rng(seed)
    players = len(log_strengths)
    ahead = np.zeros((groups, players, players))
    for a in range(players):
        for b in range(a + 1, players):
            p_above = 1 / (1 + math.exp(log_strengths[b] - log_strengths[a]))
            won = rng.binomial(games_per_pair, p_above, size=groups)
            ahead[:, a, b], ahead[:, b, a] = won, games_per_pair - won
    return ahead


def ratings_by_name(board):
    return {r.name: r for r in board}


# ============================================================================ the fit

def test_bradley_terry_recovers_known_strengths():
    truth = np.array([-1.0, 0.0, 0.5, 2.0])
    ahead = simulated_ahead(truth, groups=2000, games_per_pair=6, seed=0)
    fitted = bradley_terry(ahead.sum(axis=0))
    np.testing.assert_allclose(fitted, truth - truth.mean(), atol=0.05)
    assert fitted.mean() == pytest.approx(0.0, abs=1e-12)  # the anchor: mean 0


def test_known_strengths_lie_inside_the_bootstrap_intervals_in_elo_points():
    truth = np.array([0.0, 0.7, 1.4])
    ahead = simulated_ahead(truth, groups=300, games_per_pair=6, seed=1)
    board = ratings_by_name(fit_ratings(["a", "b", "c"], ahead, seed=0))
    for name, strength in zip("abc", truth - truth.mean()):
        low, high = board[name].ci95
        assert low < RATING_SCALE * strength < high, (name, board[name])


def test_a_lopsided_table_settles_at_the_maximum_likelihood():
    """heuristic,random,random over 1,200 games: the heuristic above both copies in all but a
    handful (MM iterations did not settle there in 10,000 steps). The fit solves the likelihood
    equations: each agent's results equal its expected results, virtual drawn games included."""
    ahead = np.array([[0, 2390, 2394], [10, 0, 1210], [6, 1190, 0]], dtype=float)
    for table in (ahead, np.zeros((3, 3))):
        fitted = bradley_terry(table)
        with_prior = table + (PRIOR_GAMES / 2) * (1 - np.eye(3))
        met = with_prior + with_prior.T
        p = 1 / (1 + np.exp(fitted[None, :] - fitted[:, None]))
        np.testing.assert_allclose((met * p).sum(axis=1), with_prior.sum(axis=1), rtol=1e-9, atol=1e-9)
    # and batched: every bootstrap replicate at once gives each one's own fit
    batch = np.stack([ahead, ahead.T, ahead * 2])
    np.testing.assert_allclose(bradley_terry(batch), [bradley_terry(a) for a in batch], atol=1e-9)


def test_a_symmetric_input_gives_equal_ratings():
    """Every pair split evenly, and a rock-paper-scissors cycle (a over b over c over a, 2:1 each):
    no agent stands above another."""
    even = np.array([[0, 3, 5], [3, 0, 1], [5, 1, 0]], dtype=float)
    cycle = np.array([[0, 2, 1], [1, 0, 2], [2, 1, 0]], dtype=float)
    for ahead in (even, cycle):
        np.testing.assert_allclose(bradley_terry(ahead), 0.0, atol=1e-9)
        board = fit_ratings(["a", "b", "c"], np.stack([ahead, ahead.T]), seed=0)
        assert [r.rating for r in board] == pytest.approx([0, 0, 0], abs=1e-6)


def test_an_agent_that_always_finished_ahead_gets_a_finite_rating():
    ahead = np.zeros((5, 3, 3))
    ahead[:, 0, 1] = ahead[:, 0, 2] = 6  # agent 0 above both in every game
    ahead[:, 1, 2] = ahead[:, 2, 1] = 3
    board = fit_ratings(["top", "x", "y"], ahead, seed=0)
    assert board[0].name == "top" and math.isfinite(board[0].rating) and board[0].rating > 300
    # more games without a single loss: the gap widens (it rests on the prior, not on the data)
    more = fit_ratings(["top", "x", "y"], np.concatenate([ahead] * 10), seed=0)
    assert more[0].rating > board[0].rating
    assert unrated_gaps(["top", "x", "y"], ahead) == [
        f"note: x never finished above top: that gap rests on the prior ({PRIOR_GAMES:g} drawn game a pair)",
        f"note: y never finished above top: that gap rests on the prior ({PRIOR_GAMES:g} drawn game a pair)"]


def test_ratings_are_elo_points_around_a_mean_of_zero():
    """A gap of 400 points is 10:1 odds of finishing above: a over b 10 games to 1, b over c 10 to 1
    (and a over c 100 to 1) is, with the prior switched off, a ladder 400 points a step."""
    ahead = np.array([[0, 1000, 10000], [100, 0, 1000], [100, 100, 0]], dtype=float)
    ladder = RATING_SCALE * bradley_terry(ahead, prior_games=0.0)
    np.testing.assert_allclose(ladder, [400, 0, -400], atol=1e-6)


# ============================================================================ the bootstrap

def test_the_bootstrap_interval_contains_the_point_estimate():
    truth = np.array([0.0, 0.3, 0.9, 1.0, 2.0])
    for seed in range(5):
        ahead = simulated_ahead(truth, groups=12, games_per_pair=6, seed=seed)
        for r in fit_ratings(list("abcde"), ahead, seed=seed):
            assert r.ci95[0] <= r.rating <= r.ci95[1], r


def test_the_bootstrap_is_deterministic_for_a_given_seed():
    ahead = simulated_ahead([0.0, 0.5, 1.0], groups=20, games_per_pair=6, seed=3)
    first, again = fit_ratings(list("abc"), ahead, seed=11), fit_ratings(list("abc"), ahead, seed=11)
    assert first == again
    other = fit_ratings(list("abc"), ahead, seed=12)
    assert [r.rating for r in other] == [r.rating for r in first]  # the fit itself uses no randomness
    assert [r.ci95 for r in other] != [r.ci95 for r in first]


def test_the_bootstrap_resamples_whole_groups_in_blocks_the_same_way(monkeypatch):
    """Replicates are drawn in blocks to bound memory; the intervals are those of the samples drawn."""
    ahead = simulated_ahead([0.0, 0.5, 1.0], groups=40, games_per_pair=6, seed=4)
    monkeypatch.setattr(statistics, "_BOOTSTRAP_CELLS", 40 * 7)  # blocks of 7 replicates
    blocked = statistics.bootstrap_ratings(ahead, np.random.default_rng(0), samples=30)
    assert blocked.shape == (30, 3)
    np.testing.assert_allclose(blocked.mean(axis=1), 0.0, atol=1e-6)  # every replicate anchored at mean 0


def test_one_group_gives_no_interval():
    ahead = simulated_ahead([0.0, 1.0, 2.0], groups=1, games_per_pair=6, seed=0)
    assert all(r.ci95 is None for r in fit_ratings(list("abc"), ahead, seed=0))


def test_fit_ratings_refuses_results_of_the_wrong_shape():
    with pytest.raises(ValueError, match=r"ahead must be float\[groups, 3, 3\] for 3 agents, got shape \(2, 4, 4\)"):
        fit_ratings(list("abc"), np.zeros((2, 4, 4)))


# ============================================================================ pairwise results

def test_pairwise_ahead_counts_each_pair_of_a_game_ties_half():
    # two games of group 5, one of group 9; players by seat
    seat_players = np.array([[0, 1, 2], [2, 0, 1], [1, 2, 0]])
    scores = np.array([[4, 4, -8], [6, -3, -3], [0, 0, 0]])
    group = np.array([5, 5, 9])
    ahead = pairwise_ahead(scores, seat_players, group, num_players=3)
    assert ahead.shape == (2, 3, 3)
    # group 5: game 1 a=b above c; game 2 c above a=b
    np.testing.assert_allclose(ahead[0], [[0, 0.5 + 0.5, 1 + 0], [0.5 + 0.5, 0, 1 + 0], [0 + 1, 0 + 1, 0]])
    np.testing.assert_allclose(ahead[1], 0.5 * (1 - np.eye(3)))  # three level: half each way
    # every game gives each ordered pair of its players one result in all
    np.testing.assert_allclose(ahead + ahead.transpose(0, 2, 1), [2 * (1 - np.eye(3)), 1 - np.eye(3)])


def test_summarize_rates_the_round_robin_across_its_tables():
    """Four agents; agent 3 finishes above everyone at all its tables, agent 0 below everyone: the
    leaderboard reads 3, then 1 and 2 level, then 0, from one fit over all four tables."""
    schedule = make_schedule(4, games=12, seed=0)
    strength = np.array([0, 1, 1, 2])
    points = strength[schedule.seat_players] * 3
    scores = points - points.sum(axis=1, keepdims=True) // 3
    result = summarize(["w", "x", "y", "z"], schedule, scores, seed=0)
    assert [r.name for r in result.ratings][0] == "z" and result.ratings[-1].name == "w"
    board = ratings_by_name(result.ratings)
    assert board["x"].rating == pytest.approx(board["y"].rating, abs=1e-6)
    assert sum(r.rating for r in result.ratings) == pytest.approx(0.0, abs=1e-6)
    assert result.to_dict()["ratings"] == [r.to_dict() for r in result.ratings]
