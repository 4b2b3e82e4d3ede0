"""The rule-based agents' decoded observation (agents/view.py), from either form of it.

``View(observe(state, seat))`` decodes the float vector; ``View.from_card_sets`` takes
``observe_card_sets`` (the card planes already as sets), which policies.decide hands the
heuristic. Both must give the same view, attribute by attribute, and the heuristic the
same actions, in every phase (mode R9, exchanges R17-R22, discards, play R12-R16).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from conftest import every_kth_state, rules_strategy, seed_strategy
from sergeant_major_env.agents import HeuristicAgent
from sergeant_major_env.agents.view import View, ensure_legal
from sergeant_major_env import Rules, engine
from sergeant_major_env.observation import observe, observe_card_sets
from sergeant_major_env.policies import decide

SETTINGS = settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck), database=None)
SHORT_RULES = rules_strategy.map(lambda r: Rules(**{**r.to_dict(), "num_deals": 1 + r.num_deals % 3}))
LAZY = ("role", "leader", "modes_available", "targets", "tricks_won", "exchange_done", "prev_points", "scores", "deal")
"""The View attributes decoded on first use."""


def _same_view(a: View, b: View) -> None:
    assert a.n == b.n
    for name in ("hand", "played", "trick_sets", "trick", "talon", "discards", "given", "received", "decision",
                 "mode", "trumps", "position", "gone", "unseen", *LAZY):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


@SETTINGS
@given(seed=seed_strategy, rules=SHORT_RULES)
def test_view_from_card_sets_is_the_view_of_the_float_observation(seed, rules):
    state = engine.init(engine.game_seeds(seed, 6), rules)
    rng = np.random.default_rng(seed)
    for _, s in every_kth_state(state, rng, 2):
        seats = rng.integers(0, 3, size=s.batch_size)
        floats, sets = View(observe(s, seats)), View.from_card_sets(*observe_card_sets(s, seats))
        _same_view(floats, sets)
        rows = np.flatnonzero(rng.random(s.batch_size) < 0.5)
        _same_view(floats.rows(rows), sets.rows(rows))  # sub-views read the right rows


@SETTINGS
@given(seed=seed_strategy, rules=SHORT_RULES)
def test_heuristic_acts_the_same_on_card_sets_and_on_the_float_observation(seed, rules):
    """decide() hands the heuristic observe_card_sets: the same actions as act() on observe(),
    for the whole batch and for subsets of it (the path of pimc's rollouts and the envs)."""
    agent = HeuristicAgent()
    state = engine.init(engine.game_seeds(seed, 8), rules)
    rng = np.random.default_rng(seed)
    decisions = 0
    for _, s in every_kth_state(state, rng, 2):
        live = np.flatnonzero(s.phase != engine.OVER)
        if live.size == 0:
            continue
        mask = engine.legal_action_mask(s)
        for games in (live, live[rng.random(live.size) < 0.5]):
            if games.size == 0:
                continue
            part = s.take(games)
            expected = agent.act(observe(part, part.to_act), mask[games], None)
            card_sets, rest = observe_card_sets(part, part.to_act)
            np.testing.assert_array_equal(agent.act_on_card_sets(card_sets, rest, mask[games], None), expected)
            np.testing.assert_array_equal(decide(agent, s, games, mask[games], None), expected)
            decisions += games.size
    assert decisions > 100


def test_ensure_legal_replaces_illegal_and_out_of_range_actions_only():
    """The agents' safety net (a kernel): a legal action stays, an illegal or out-of-range one
    becomes the row's first legal action, 0 where none is legal; the caller's array is kept."""
    mask = np.zeros((5, 58), dtype=bool)
    mask[0, [3, 9]] = mask[1, [3, 9]] = mask[2, 52] = mask[3, [4, 57]] = True  # row 4: nothing legal
    actions = np.array([9, 5, -1, 58, 7])
    np.testing.assert_array_equal(ensure_legal(actions, mask), [9, 3, 52, 4, 0])
    np.testing.assert_array_equal(actions, [9, 5, -1, 58, 7])
    with pytest.raises(ValueError, match="^ensure_legal: 5 actions need a legal mask with one row each"):
        ensure_legal(actions, mask[:4])
