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
from sergeant_major_env.one_game import OneGame, StepResult

RULE_SETS = [Rules(num_deals=2), Rules(num_deals=2, must_overtake=True, must_overtrump=True),
             Rules(num_deals=3, exchanges=False, dealer_builds_talon=True)]


def assert_result_says(result: StepResult, state: engine.State, autoreset: bool = False) -> None:
    """A step's typed result is what the batched engine's state says after the same step."""
    assert type(result) is StepResult
    assert result.to_act == state.to_act[0] and result.phase == state.phase[0]
    assert result.legal_count == int(engine.legal_bits(state)[0]).bit_count()
    assert result.deal_ended is bool(state.deal_ended[0])
    # once over, the game stays over; with autoreset a step that ends a game starts the next one
    assert result.game_over is (result.phase == engine.OVER) is bool(state.game_ended[0] and not autoreset)
    assert (result.to_act == -1) is result.game_over
    assert result.points == (tuple(state.deal_points[0].tolist()) if result.deal_ended else None)


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
            result = game.step(action)
            assert mine.buffer.tobytes() == state.buffer.tobytes()
            assert_result_says(result, state)
        assert_views_equal(game, state, seat)
        assert game.step(0) == result  # a finished game ignores its actions, as engine.step does
        assert mine.buffer.tobytes() == state.buffer.tobytes()


def test_autoreset_starts_the_slots_next_game():
    rules = Rules(num_deals=1)
    state, mine = engine.init([5], rules), engine.init([5], rules)
    game, rng, ended = OneGame(mine, autoreset=True), np.random.default_rng(0), 0
    while ended < 2:
        legal = engine.legal_bits(state)
        action = int(random_member(legal, rng)[0])
        engine.step(state, np.array([action]), autoreset=True, legal=legal)
        assert_result_says(game.step(action), state, autoreset=True)
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


# ============================================================================ every view steps through OneGame

def _aec_game() -> None:
    from sergeant_major_env import env

    game, rng = env(num_deals=1), np.random.default_rng(0)
    game.reset(seed=1)
    for agent in game.agent_iter():
        observation, _, termination, truncation, _ = game.last()
        game.step(None if termination or truncation else int(rng.choice(np.flatnonzero(observation["action_mask"]))))


def _single_seat_game() -> None:
    from sergeant_major_env.single_seat import SergeantMajorEnv

    game, rng, done = SergeantMajorEnv(num_deals=1, illegal_action="replace"), np.random.default_rng(0), False
    game.reset(seed=1)
    while not done:
        _, _, done, _, _ = game.step(int(rng.integers(NUM_ACTIONS)))  # illegal ones replaced


def _openspiel_game() -> None:
    from conftest import needs

    pyspiel = needs("pyspiel")
    import sergeant_major_env.openspiel  # noqa: F401  (registers the game)

    state, rng = pyspiel.load_game("python_sergeant_major(num_deals=1)").new_initial_state(), np.random.default_rng(0)
    while not state.is_terminal():
        state.apply_action(int(rng.choice([a for a, _ in state.chance_outcomes()] if state.is_chance_node()
                                          else state.legal_actions())))


def _terminal_game() -> None:
    import io

    from sergeant_major_env.terminal_game import play_game
    from sergeant_major_env.policies import RandomPolicy
    from sergeant_major_env.render import move_text

    rng = np.random.default_rng(0)
    play_game([RandomPolicy()] * 3, 0, 1, Rules(num_deals=1), lambda prompt: move_text(int(rng.integers(NUM_ACTIONS))),
              io.StringIO())


def _web_game() -> None:
    from sergeant_major_env.policies import RandomPolicy
    from sergeant_major_env.web import Refused, WebGame

    game, rng = WebGame("g", [RandomPolicy()] * 3, ["a", "b", "c"], 1, 1, Rules(num_deals=1)), np.random.default_rng(0)
    game.start_bots()
    while True:
        with game.changed:
            game.changed.wait_for(lambda: not game.thinking, timeout=30)
            if game.finished:
                assert game.error is None
                return
        try:
            game.move(game.moves, int(rng.integers(NUM_ACTIONS)))
        except Refused:
            pass  # an illegal move: refused, the person tries again


@pytest.mark.parametrize("view, module", [
    (_aec_game, "sergeant_major_env.aec"), (_single_seat_game, "sergeant_major_env.single_seat"),
    (_openspiel_game, "sergeant_major_env.openspiel"), (_terminal_game, "sergeant_major_env.terminal_game"),
    (_web_game, "sergeant_major_env.web.game")], ids=["aec", "single_seat", "openspiel", "play", "web"])
def test_every_view_of_one_game_steps_it_through_one_game(monkeypatch, view, module):
    """Issue 53 item 3: one way to step one game. Each view's decisions go through
    `OneGame.step` (its typed `StepResult`), none through the batched `engine.step` (the record
    replayer, `records.Recorder`, alone still steps a batch)."""
    import sys

    callers = {"engine.step": set(), "OneGame.step": set()}

    def spy(name, real):
        def called(*args, **kwargs):
            callers[name].add(sys._getframe(1).f_globals["__name__"])
            return real(*args, **kwargs)
        return called

    monkeypatch.setattr(engine, "step", spy("engine.step", engine.step))
    monkeypatch.setattr(OneGame, "step", spy("OneGame.step", OneGame.step))
    view()
    assert callers["OneGame.step"] == {module}
    assert callers["engine.step"] <= {"sergeant_major_env.records"}
