"""The one-game fast path (sergeant_major_env.one_game) plays the batched engine's games.

Random games under several rule option sets (RULES.md section 9) are stepped through a
:class:`OneGame` and through the batched API side by side: after every step the state's
buffer, the legal actions, the mask and the observation (of the seat to act, or of a fixed
seat) must be equal byte for byte. Illegal actions are refused with the engine's one-line
messages (R8, R12, R13 ...) and leave everything unchanged.
"""

from __future__ import annotations

import numpy as np
import pytest

from sergeant_major_env import Rules, engine
from sergeant_major_env.cards import NUM_ACTIONS, bits_to_bool, random_member
from sergeant_major_env.observation import observe
from sergeant_major_env.one_game import DEAL_ENDED, OneGame

RULE_SETS = [Rules(num_deals=2), Rules(num_deals=2, must_overtake=True, must_overtrump=True),
             Rules(num_deals=3, exchanges=False, dealer_builds_talon=True)]


def assert_views_equal(game: OneGame, state: engine.State, seat: int | None) -> None:
    legal = engine.legal_bits(state)
    assert game.legal.tobytes() == legal.tobytes()
    assert (game.mask == bits_to_bool(legal, NUM_ACTIONS)[0]).all() and game.mask.dtype == np.int8
    view = int(state.to_act[0]) if seat is None else seat
    if view >= 0:
        assert game.observation.tobytes() == observe(state, view)[0].tobytes()


@pytest.mark.parametrize("rules", RULE_SETS, ids=repr)
@pytest.mark.parametrize("seat", [None, 1])
def test_one_game_plays_the_batched_engines_games(rules, seat):
    rng = np.random.default_rng(3)
    for seed in range(12):
        state, mine = engine.init([seed], rules), engine.init([seed], rules)
        game = OneGame(mine, seat=seat)
        while state.phase[0] != engine.OVER:
            assert_views_equal(game, state, seat)
            legal = engine.legal_bits(state)
            action = int(random_member(legal, rng)[0])
            engine.step(state, np.array([action]), legal=legal)
            status = game.step(action)
            assert mine.buffer.tobytes() == state.buffer.tobytes()
            assert ((status & 3) - 1, status >> 2 & 7, bool(status & DEAL_ENDED)) == (
                state.to_act[0], state.phase[0], state.deal_ended[0])
        assert_views_equal(game, state, seat)
        game.step(0)  # a finished game ignores its actions, as engine.step does
        assert mine.buffer.tobytes() == state.buffer.tobytes()


def test_autoreset_starts_the_slots_next_game():
    rules = Rules(num_deals=1)
    state, mine = engine.init([5], rules), engine.init([5], rules)
    game, rng, ended = OneGame(mine, autoreset=True), np.random.default_rng(0), 0
    while ended < 2:
        legal = engine.legal_bits(state)
        action = int(random_member(legal, rng)[0])
        engine.step(state, np.array([action]), autoreset=True, legal=legal)
        game.step(action)
        ended += int(state.game_ended[0])
        assert mine.buffer.tobytes() == state.buffer.tobytes()
        assert_views_equal(game, state, None)


@pytest.mark.parametrize("action", [58, 63, 64, -1, 2**70, 51])
def test_an_illegal_action_is_one_line_and_changes_nothing(action):
    """R8: the first decision is a mode; a card, an id out of range or a huge int is refused."""
    game = OneGame(engine.init([9], Rules(num_deals=2)))
    before = (game.state.buffer.copy(), game.legal.copy(), game.mask.copy(), game.observation.copy())
    with pytest.raises(engine.IllegalActionError) as refused:
        game.step(action)
    assert "\n" not in str(refused.value) and "The state is unchanged" in str(refused.value)
    after = (game.state.buffer, game.legal, game.mask, game.observation)
    assert all(a.tobytes() == b.tobytes() for a, b in zip(before, after))


def test_a_card_that_does_not_follow_suit_names_r13():
    rng = np.random.default_rng(1)
    for seed in range(40):
        game = OneGame(engine.init([seed], Rules(num_deals=1)))
        while game.state.phase[0] != engine.PLAY or game.state.trick[0, 0] < 0:
            game.step(int(random_member(game.legal, rng)[0]))
        seat = game.to_act
        hand = int(game.state.hands[0, seat])
        illegal = [c for c in range(52) if hand >> c & 1 and not int(game.legal[0]) >> c & 1]
        if illegal:
            before = game.state.buffer.copy()
            with pytest.raises(engine.IllegalActionError, match=r"R1[345]"):
                game.step(illegal[0])
            assert game.state.buffer.tobytes() == before.tobytes()
            return
    pytest.fail("no position with a held card that may not be played in 40 games")


@pytest.mark.parametrize("bad", [1.5, "3", None, True, [1]])
def test_a_non_integer_action_is_one_line(bad):
    game = OneGame(engine.init([2]))
    with pytest.raises(ValueError, match="action must be an int 0..57"):
        game.step(bad)


def test_numpy_integers_are_accepted():
    a, b = OneGame(engine.init([4])), OneGame(engine.init([4]))
    a.step(np.uint8(53))
    b.step(53)
    assert a.state.buffer.tobytes() == b.state.buffer.tobytes()


@pytest.mark.parametrize("state, seat", [(None, None), ("batch", None), ("one", 3), ("one", -1), ("one", 1.0)])
def test_bad_construction_is_one_line(state, seat):
    built = {None: None, "batch": engine.init([1, 2]), "one": engine.init([1])}[state]
    with pytest.raises(ValueError) as refused:
        OneGame(built, seat=seat)
    assert "\n" not in str(refused.value)


def test_refresh_after_set_cards_shows_the_new_deal():
    """The record replayer's entry point changes the cards; refresh() recomputes the views."""
    state, other = engine.init([1]), engine.init([2])
    game = OneGame(state)
    engine.set_cards(state, [0], other.dealt, other.talon_cards)
    game.refresh()
    assert_views_equal(game, state, None)


def test_the_module_docstring_example_runs():
    import doctest

    from sergeant_major_env import one_game

    result = doctest.testmod(one_game)
    assert result.attempted >= 4 and result.failed == 0


@pytest.mark.parametrize("clone", [lambda g: __import__("copy").deepcopy(g),
                                   lambda g: __import__("pickle").loads(__import__("pickle").dumps(g))])
def test_a_copied_game_steps_alike_and_shares_nothing(clone):
    rng = np.random.default_rng(2)
    game = OneGame(engine.init([3], Rules(num_deals=1)), seat=2)
    for _ in range(10):
        game.step(int(random_member(game.legal, rng)[0]))
    twin = clone(game)
    assert twin.seat == 2 and not np.shares_memory(twin.state.buffer, game.state.buffer)
    for _ in range(30):
        action = int(random_member(game.legal, rng)[0])
        game.step(action)
        twin.step(action)
        assert twin.state.buffer.tobytes() == game.state.buffer.tobytes()
        assert (twin.observation == game.observation).all() and (twin.mask == game.mask).all()
        assert twin.legal.tobytes() == game.legal.tobytes()
