"""Determinism: a game is a function of its seed (R4 "drawn by lot (seeded)") and of the
actions taken, whatever the batch it is played in; automatic reset continues slot i of a
batch started at seed S with the games S + i + B, S + i + 2B, ..."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import assert_states_equal, random_actions, rules_strategy, seed_strategy
from sergeant_major_env import Rules, engine
from sergeant_major_env.engine import MODE, OVER

SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck), database=None)
SHORT_RULES = rules_strategy.map(lambda r: Rules(**{**r.to_dict(), "num_deals": 1 + r.num_deals % 4}))
# Fields that describe the slot rather than the game (automatic reset keeps them) or the
# last step only.
STEP_FIELDS = ("last_returned", "last_trick", "last_trick_leader", "last_trick_winner",
               "deal_ended", "deal_points", "game_ended", "final_scores")


def _trajectory(seeds, rules, action_seed, autoreset=False, steps=None):
    """All states (copies) and actions of random play from ``init(seeds)``."""
    state = engine.init(seeds, rules)
    rng = np.random.default_rng(action_seed)
    states, actions = [state.copy()], []
    while (state.phase != OVER).any() if steps is None else len(actions) < steps:
        action = random_actions(state, rng)
        engine.step(state, action, autoreset=autoreset)
        actions.append(action)
        states.append(state.copy())
    return states, actions


@SETTINGS
@given(seed=seed_strategy, batch=st.integers(1, 12), rules=SHORT_RULES, action_seed=st.integers(0, 2**32))
def test_the_same_seed_gives_identical_games(seed, batch, rules, action_seed):
    """Two runs from the same seeds and the same action choices match at every step, in every
    array of the state, and choose the same actions."""
    first, actions_1 = _trajectory(engine.game_seeds(seed, batch), rules, action_seed)
    second, actions_2 = _trajectory(engine.game_seeds(seed, batch), rules, action_seed)
    assert len(first) == len(second)
    np.testing.assert_array_equal(np.array(actions_1), np.array(actions_2))
    for a, b in zip(first, second):
        assert_states_equal(a, b)


@SETTINGS
@given(seed=seed_strategy, batch=st.integers(2, 12), rules=SHORT_RULES, action_seed=st.integers(0, 2**32))
def test_batch_size_does_not_change_a_game(seed, batch, rules, action_seed):
    """Game i of a batch from seed S equals ``engine.init([S + i])`` played alone with the
    same actions, at every step and in every array."""
    states, actions = _trajectory(engine.game_seeds(seed, batch), rules, action_seed)
    for i in {0, batch - 1, int(np.random.default_rng(action_seed).integers(batch))}:
        alone = engine.init([seed + i], rules)
        assert_states_equal(alone, states[0], games_b=[i])
        for k, action in enumerate(actions):
            if int(states[k].phase[i]) == OVER:
                break
            engine.step(alone, action[[i]])
            assert_states_equal(alone, states[k + 1], games_b=[i])
        assert int(alone.phase[0]) == OVER


def test_batch_of_one_and_batch_of_many_from_the_same_seed_agree():
    """init(game_seeds(S, B)) holds the games S, S+1, ... exactly as each init([S + i])."""
    batch = engine.init(engine.game_seeds(1000, 20), Rules(dealer_builds_talon=True))
    np.testing.assert_array_equal(batch.seed, np.arange(1000, 1020))
    for i in range(20):
        assert_states_equal(engine.init([1000 + i], Rules(dealer_builds_talon=True)), batch, games_b=[i])


def test_different_seeds_give_different_deals():
    state = engine.init(np.arange(200))
    flat = state.dealt.reshape(200, -1)
    assert len({row.tobytes() for row in flat}) == 200


def test_the_cards_depend_on_the_seed_and_deal_only_not_on_the_play():
    """The engine's counter-based dealing: deal k of a game has the same cards whatever was
    played before (so duplicate tables can replay deals), and the first dealer is the same."""
    rules = Rules(num_deals=4)
    dealt = []
    for action_seed in (1, 2):
        states, _ = _trajectory([77], rules, action_seed)
        dealt.append([(s.dealer[0], s.dealt[0].tobytes(), s.talon_cards[0].tobytes())
                      for s in states if s.phase[0] == MODE and s.mode[0] == -1])
        dealt[-1] = list(dict.fromkeys(dealt[-1]))
    assert len(dealt[0]) == 4 and dealt[0] == dealt[1]


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(seed=seed_strategy, batch=st.integers(2, 6), action_seed=st.integers(0, 2**32))
def test_autoreset_continues_with_seed_plus_batch_size(seed, batch, action_seed):
    """With autoreset, a game that ends is replaced at once by the slot's next game, seed +
    batch size: it equals init([seed + i + B]) (and later + 2B), played with the same
    actions; game_ended and final_scores report the game that ended, episode counts them."""
    rules = Rules(num_deals=2)
    steps = 300  # a two-deal game takes 106 steps plus its exchanges: two games or more per slot
    states, actions = _trajectory(engine.game_seeds(seed, batch), rules, action_seed, autoreset=True, steps=steps)
    for i in range(batch):
        current = engine.init([seed + i], rules)
        episode = 0
        for k, action in enumerate(actions):
            before = states[k]
            engine.step(current, action[[i]])
            after = states[k + 1]
            if current.game_ended[0]:
                assert bool(after.game_ended[i])
                np.testing.assert_array_equal(after.final_scores[i], current.final_scores[0])
                np.testing.assert_array_equal(after.deal_points[i], current.deal_points[0])
                episode += 1
                assert int(after.episode[i]) == episode
                assert int(after.seed[i]) == seed + i + episode * batch
                current = engine.init([seed + i + episode * batch], rules)
                assert_states_equal(current, after, ignore=("episode",) + STEP_FIELDS, games_b=[i])
                assert int(after.phase[i]) == MODE
            else:
                assert not after.game_ended[i]
                # last_trick / last_trick_leader describe a completed trick only when
                # last_trick_winner >= 0, final_scores a game only when game_ended: the slot
                # keeps them from its previous game.
                assert_states_equal(current, after, ignore=("episode", "last_trick", "last_trick_leader", "final_scores"),
                                    games_b=[i])
                if after.last_trick_winner[i] >= 0:
                    np.testing.assert_array_equal(current.last_trick[0], after.last_trick[i])
                assert int(after.episode[i]) == episode and int(before.seed[i]) == int(after.seed[i])
        assert episode >= 2
