"""The OpenSpiel game on the one-game path (issue 52, item 1) against the states it had before
(tests/reference_openspiel_infostate.py, the judge): the same games, observation tensors and
strings, information-state strings and tensors, bit for bit, at every step of random games
under every rule option, of a resampled state and of a state made from an engine state, with
the information state first asked at the start, mid-game, and in clones."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import needs

pyspiel = needs("pyspiel")

from sergeant_major_env import engine  # noqa: E402
from sergeant_major_env import openspiel as smo  # noqa: E402  (registers the game)
from sergeant_major_env.rules import Rules  # noqa: E402

import reference_openspiel_infostate as reference  # noqa: E402  (registers python_sergeant_major_reference)

OPTIONS = ["num_deals=3", "num_deals=2,exchanges=False", "num_deals=2,must_overtake=True",
           "num_deals=2,must_overtrump=True", "num_deals=2,dealer_builds_talon=True"]


def games(options: str):
    return (pyspiel.load_game(f"{smo.SHORT_NAME}({options})"),
            pyspiel.load_game(f"{reference.SHORT_NAME}({options})"))


def assert_same_views(new, old, players=range(3), information=True):
    """Every view of every seat the same, bit for bit (and the same game: player, actions, text)."""
    assert new.current_player() == old.current_player() and new.is_terminal() == old.is_terminal()
    assert new.history() == old.history() and str(new) == str(old)
    assert new.rewards() == old.rewards() and new.returns() == old.returns()
    if new.is_chance_node():
        assert new.chance_outcomes() == old.chance_outcomes()
    elif not new.is_terminal():
        assert new.legal_actions() == old.legal_actions()
    for player in players:
        tensor = new.observation_tensor(player)
        assert isinstance(tensor, list) and tensor == old.observation_tensor(player)
        assert np.array_equal(np.asarray(tensor, np.float32).view(np.uint32),
                              np.asarray(old.observation_tensor(player), np.float32).view(np.uint32))
        assert new.observation_string(player) == old.observation_string(player)
        if information:
            tensor = new.information_state_tensor(player)
            assert isinstance(tensor, list) and tensor == old.information_state_tensor(player)
            assert new.information_state_string(player) == old.information_state_string(player)


def play_both(new, old, rng, steps, check=lambda step: True, information=True):
    """`steps` random steps (or to the end) of both states, the views compared where `check`."""
    for step in range(steps):
        if new.is_terminal():
            break
        if new.is_chance_node():
            action = int(rng.choice([a for a, _ in new.chance_outcomes()]))
        else:
            action = int(rng.choice(new.legal_actions()))
        new.apply_action(action)
        old.apply_action(action)
        if check(step):
            assert_same_views(new, old, information=information)


@pytest.mark.parametrize("options", OPTIONS)
def test_every_view_at_every_step_is_the_references(options):
    new_game, old_game = games(options)
    new, old = new_game.new_initial_state(), old_game.new_initial_state()
    assert_same_views(new, old)
    play_both(new, old, np.random.default_rng(len(options)), 10_000)
    assert new.is_terminal()


@pytest.mark.parametrize("seed", [1, 2])
def test_first_asked_mid_game_and_in_clones_the_views_are_the_references(seed):
    """The record is replayed from the history when first asked, a clone's from where it was
    made (a clone asked at once, one asked after some actions, a clone of a clone)."""
    new_game, old_game = games("num_deals=2")
    new, old = new_game.new_initial_state(), old_game.new_initial_state()
    rng = np.random.default_rng(seed)
    play_both(new, old, rng, 140, check=lambda step: False)
    assert_same_views(new, old)  # the first ask: the history replayed
    clones = [(new.clone(), old.clone())]
    play_both(new, old, rng, 30, check=lambda step: step % 7 == 0)
    clones.append((new.clone(), old.clone()))
    clones.append((clones[-1][0].clone(), clones[-1][1].clone()))
    play_both(*clones[1], rng, 25, check=lambda step: False)  # a clone acting before it is asked
    for clone_new, clone_old in clones:
        assert_same_views(clone_new, clone_old)
        play_both(clone_new, clone_old, rng, 40, check=lambda step: step % 5 == 0)
    play_both(new, old, rng, 10_000, check=lambda step: step % 11 == 0)


def sampler(draw):
    return lambda: draw


@pytest.mark.parametrize("seed", [3, 4])
def test_a_resampled_state_and_its_play_are_the_references(seed):
    new_game, old_game = games("num_deals=2")
    new, old = new_game.new_initial_state(), old_game.new_initial_state()
    rng = np.random.default_rng(seed)
    play_both(new, old, rng, 200, check=lambda step: step % 13 == 0)
    while new.is_chance_node():
        play_both(new, old, rng, 1, check=lambda step: False)
    player = new.current_player()
    world_new = new.resample_from_infostate(player, sampler(0.37))
    world_old = old.resample_from_infostate(player, sampler(0.37))
    assert world_new.history() == [] and world_new.information_state_string(player) == new.information_state_string(player)
    assert_same_views(world_new, world_old)
    play_both(world_new, world_old, rng, 10_000)
    assert world_new.is_terminal()


@pytest.mark.parametrize("last_deal", [None, 0])
def test_a_state_from_an_engine_state_and_its_play_are_the_references(last_deal):
    new_game, old_game = games("num_deals=2")
    state = engine.init(engine.game_seeds(5, 1), Rules(num_deals=2))
    rng = np.random.default_rng(6)
    for _ in range(20):
        engine.step(state, rng.choice(np.flatnonzero(engine.legal_action_mask(state)[0]))[None])
    new, old = new_game.state_from_engine(state, last_deal), old_game.state_from_engine(state, last_deal)
    assert_same_views(new, old)
    play_both(new, old, rng, 10_000)
    assert new.is_terminal()
    fresh_new, fresh_old = new_game.state_from_engine(state, last_deal), old_game.state_from_engine(state, last_deal)
    play_both(fresh_new, fresh_old, np.random.default_rng(6), 60, check=lambda step: False)
    assert_same_views(fresh_new, fresh_old)  # first asked after some play: replayed from its start
