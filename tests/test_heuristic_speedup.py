"""The optimised ``heuristic`` decides exactly as before its speed-up.

``tests/reference_heuristic.py`` is the agent (and its view of the observation) frozen
before the optimisation. Both are asked for the same observations, masks and rng at tens of
thousands of real positions of every phase (mode choice R9, exchange give and return
R17-R22, the playmaker's discards of section 5, play R12-R16), reached by the reference's
self-play mixed with random moves (the odd positions) under several rule options
(RULES.md section 9), in batches of every size the agent meets (the vec env's opponent
rounds: 1 to hundreds of games, every mix of decision kinds), and must choose the same
action everywhere.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import reference_heuristic
from sergeant_major_env.agents import HeuristicAgent
from sergeant_major_env import Rules, engine
from sergeant_major_env.cards import NUM_ACTIONS, TRUMPS, bits_to_bool, random_member
from sergeant_major_env.observation import observe

RULE_SETS = {
    "default": Rules(num_deals=5),
    "no-exchanges": Rules(num_deals=5, exchanges=False),
    "must-overtake": Rules(num_deals=4, must_overtake=True),
    "must-overtrump": Rules(num_deals=4, must_overtrump=True),
    "dealer-builds-talon": Rules(num_deals=4, dealer_builds_talon=True, must_overtake=True, must_overtrump=True),
}
GAMES = 30
RANDOM_SHARES = (0.0, 0.1, 0.5, 1.0)
"""Per game slot (in turn), the chance that a move is random instead of the reference's."""


@functools.lru_cache(maxsize=None)
def _positions(rules_name: str) -> tuple[np.ndarray, np.ndarray]:
    """(observations, masks) of every decision of GAMES whole games under the rules, in playing order."""
    rules = RULE_SETS[rules_name]
    reference = reference_heuristic.HeuristicAgent()
    rng = np.random.default_rng(sorted(RULE_SETS).index(rules_name))
    state = engine.init(engine.game_seeds(1000, GAMES), rules)
    random_share = np.resize(RANDOM_SHARES, GAMES)
    observations, masks = [], []
    while (live := np.flatnonzero(state.phase != engine.OVER)).size:
        part = state.take(live)
        legal = engine.legal_bits(part)
        mask = bits_to_bool(legal, NUM_ACTIONS)
        obs = observe(part, part.to_act)
        observations.append(obs), masks.append(mask)
        actions = np.where(rng.random(live.size) < random_share[live], random_member(legal, rng),
                           reference.act(obs, mask, rng))
        # In every other game a giver hands over a trump when it can: the receiver's free return (R21).
        trumps = legal & TRUMPS[part.mode]
        give_trump = (part.phase == engine.GIVE) & (trumps != 0) & (live % 2 == 1)
        actions = np.where(give_trump, random_member(trumps, rng), actions)
        engine.step(part, actions, legal=legal)
        state.put(live, part)
    return np.concatenate(observations), np.concatenate(masks)


def _all_positions() -> tuple[np.ndarray, np.ndarray]:
    parts = [_positions(name) for name in RULE_SETS]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def _assert_same_actions(obs: np.ndarray, mask: np.ndarray, sizes, seed: int, **agent_options) -> None:
    """Both agents decide for the positions in batches of the given sizes (in turn), shuffled."""
    new, old = HeuristicAgent(**agent_options), reference_heuristic.HeuristicAgent(**agent_options)
    order = np.random.default_rng(seed).permutation(len(obs))
    start, k = 0, 0
    while start < len(order):
        rows = order[start:start + sizes[k % len(sizes)]]
        start, k = start + rows.size, k + 1
        got = new.act(obs[rows], mask[rows], np.random.default_rng(k))
        want = old.act(obs[rows], mask[rows], np.random.default_rng(k))
        assert got.dtype == want.dtype == np.int64 and got.shape == want.shape
        differ = np.flatnonzero(got != want)
        assert differ.size == 0, (f"{differ.size} of {rows.size} actions differ from the reference, e.g. position "
                                  f"{rows[differ[0]]}: {got[differ[0]]} instead of {want[differ[0]]}")


def test_positions_cover_every_decision_kind():
    """The test positions hold many of each kind of decision (the comparisons below mean something)."""
    obs, _ = _all_positions()
    kinds = np.bincount(reference_heuristic.View(obs).decision, minlength=5)
    assert len(obs) > 20000
    assert (kinds >= [300, 300, 200, 800, 15000]).all(), kinds


@pytest.mark.parametrize("rules_name", sorted(RULE_SETS))
def test_heuristic_matches_reference_in_large_batches(rules_name):
    obs, mask = _positions(rules_name)
    _assert_same_actions(obs, mask, sizes=(512, 300, 64), seed=1)


def test_heuristic_matches_reference_in_small_batches():
    """The vec env's late opponent rounds are a few games each: batches of 1 to 50 positions."""
    obs, mask = _all_positions()
    pick = np.random.default_rng(2).choice(len(obs), 6000, replace=False)
    _assert_same_actions(obs[pick], mask[pick], sizes=(1, 2, 3, 5, 8, 13, 1, 21, 34, 50, 1, 4), seed=3)


def test_heuristic_matches_reference_on_batches_of_one_kind():
    """Batches holding a single kind of decision (a path that skips the absent kinds)."""
    obs, mask = _all_positions()
    decision = reference_heuristic.View(obs).decision
    for kind in range(5):
        rows = np.flatnonzero(decision == kind)
        _assert_same_actions(obs[rows], mask[rows], sizes=(1, 7, 256), seed=10 + kind)


def test_heuristic_matches_reference_with_other_parameters():
    """Tuned weights and mode coefficients (benchmarks/fit_modes.py) are used as before."""
    obs, mask = _all_positions()
    pick = np.random.default_rng(4).choice(len(obs), 8000, replace=False)
    params = {name: value * 1.3 for name, value in reference_heuristic.DEFAULT_PARAMS.items()}
    coefs = reference_heuristic.MODE_COEFS * np.linspace(0.7, 1.2, reference_heuristic.MODE_COEFS.size).reshape(
        reference_heuristic.MODE_COEFS.shape)
    _assert_same_actions(obs[pick], mask[pick], sizes=(256, 9), seed=5, params=params, mode_coefs=coefs)


def test_heuristic_matches_reference_exploring_modes():
    """benchmarks/fit_modes.py's random mode choices draw from the rng exactly as before."""
    obs, mask = _all_positions()
    pick = np.random.default_rng(6).choice(len(obs), 4000, replace=False)
    new, old = HeuristicAgent(), reference_heuristic.HeuristicAgent()
    new.explore_modes = old.explore_modes = True
    for rows in np.array_split(pick, 40):
        got = new.act(obs[rows], mask[rows], np.random.default_rng(int(rows[0])))
        want = old.act(obs[rows], mask[rows], np.random.default_rng(int(rows[0])))
        np.testing.assert_array_equal(got, want)


def test_heuristic_matches_reference_when_masks_do_not_match():
    """Observations paired with another position's mask, finished games (no legal action) and
    empty observations: the safety net (ensure_legal) answers as before."""
    obs, mask = _all_positions()
    rng = np.random.default_rng(7)
    pick = rng.choice(len(obs), 3000, replace=False)
    other = rng.permutation(pick)
    odd_mask = mask[other].copy()
    odd_mask[::17] = False                       # finished games
    odd_obs = obs[pick].copy()
    odd_obs[5::23] = 0.0                         # observations with nothing in them
    _assert_same_actions(odd_obs, odd_mask, sizes=(1, 64, 300), seed=8)
