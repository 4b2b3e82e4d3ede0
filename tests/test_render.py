"""The one table renderer (sergeant_major_env/render.py): a view shows only what its seat knows.

The main test takes many random positions of real games in every phase (mode choice,
exchange gives and returns, discards, play, game over), and for each seat swaps the cards
that seat cannot know (the other hands, the talon before it is turned face up, the other
pair's exchanged cards, the playmaker's discards) among themselves: the seat's view must not
change. What a seat knows is written here from RULES.md, independently of render.py.
"""

from __future__ import annotations

import dataclasses
import io
import re

import numpy as np
import pytest

from sergeant_major_env import Rules, SergeantMajorEnv, engine, env, raw_env, records, render
from sergeant_major_env.aec import AGENTS
from sergeant_major_env.cards import RANKS, bits_to_bool, cards_to_bits, parse_card
from sergeant_major_env.engine import DISCARD, GIVE, MODE, OVER, PLAY, RETURN
from sergeant_major_env.observation import observe

NAMES = ("seat 0 (a)", "seat 1 (b)", "seat 2 (c)")

# Every field of engine.State, by how it holds cards (the swap below must reach every card).
CARD_ID_FIELDS = ("dealt", "talon_cards", "exchange_trump", "last_returned", "trick", "past_tricks", "last_trick")
CARD_SET_FIELDS = ("hands", "first_six", "talon", "given", "received", "discards", "played")
NO_CARD_FIELDS = ("seed", "episode", "first_dealer", "deal", "dealer", "phase", "to_act", "mode", "modes_used",
                  "exchange_giver", "exchange_receiver", "exchange_due", "exchange_pair", "exchange_done",
                  "leader", "trick_leaders", "card_trick", "shown_out", "tricks_won", "prev_points", "scores", "last_trick_leader",
                  "last_trick_winner", "deal_ended", "deal_points", "game_ended", "final_scores")


def known_cards(state: engine.State, seat: int) -> int:
    """The cards ``seat`` knows the place of (game 0), from RULES.md: its own hand (R9: only its
    first six while it chooses the mode), every card played (section 6), the talon once turned
    face up (section 5, step 4), its own discards (section 5, step 5), the cards it gave and
    received in this deal's exchanges (R22)."""
    phase, playmaker = int(state.phase[0]), (int(state.dealer[0]) + engine.PLAYMAKER) % 3
    own = state.first_six[0] if phase == MODE and seat == playmaker else state.hands[0, seat]
    known = int(own) | int(np.bitwise_or.reduce(state.played[0])) | int(cards_to_bits(state.trick[0]))
    known |= int(state.given[0, seat]) | int(state.received[0, seat])
    if phase >= DISCARD:
        known |= int(state.talon[0])
    if seat == playmaker:
        known |= int(state.discards[0])
    return known


def swap_unknown_cards(state: engine.State, seat: int, rng: np.random.Generator) -> engine.State:
    """A copy of ``state`` (one game) in which the cards ``seat`` does not know are permuted
    among themselves, wherever they are: another position ``seat`` cannot tell apart."""
    unknown = np.flatnonzero(~bits_to_bool(np.uint64(known_cards(state, seat))))
    permutation = np.arange(52)
    permutation[unknown] = rng.permutation(unknown)
    swapped = state.copy()
    for name in CARD_ID_FIELDS:
        ids = getattr(swapped, name)
        ids[...] = np.where(ids >= 0, permutation[np.maximum(ids, 0)], ids)
    for name in CARD_SET_FIELDS:
        sets = getattr(swapped, name)
        mask = bits_to_bool(sets)
        moved = np.zeros_like(mask)
        moved[..., permutation] = mask
        sets[...] = np.bitwise_or.reduce(np.where(moved, np.uint64(1) << np.arange(52, dtype=np.uint64),
                                                  np.uint64(0)), axis=-1)
    return swapped


def random_positions(seeds=range(30), num_deals=4, keep=0.06, **options):
    """Single-game states from random games (exchanges happen from deal 2 on), every phase."""
    rng = np.random.default_rng(0)
    state = engine.init(list(seeds), Rules(num_deals=num_deals, **options))
    positions = []
    while True:
        for game in np.flatnonzero(rng.random(state.batch_size) < keep):
            positions.append(state.take([game]))
        if (state.phase == OVER).all():
            return positions + [state.take([0])]
        engine.step(state, records.random_actions(state, rng))


@pytest.fixture(scope="module")
def positions():
    return random_positions()


def test_every_state_field_is_classified_for_the_card_swap():
    fields = set(engine.init([0]).arrays())
    assert fields == set(CARD_ID_FIELDS) | set(CARD_SET_FIELDS) | set(NO_CARD_FIELDS)


def test_positions_cover_every_phase(positions):
    assert {int(p.phase[0]) for p in positions} == {MODE, GIVE, RETURN, DISCARD, PLAY, OVER}


def test_R9_R22_a_seat_view_is_unchanged_by_cards_the_seat_cannot_know(positions):
    """For every seat: swapping the other hands, the face-down talon, the other pair's exchanged
    cards and another seat's discards leaves the seat's view (text and TableView) unchanged."""
    rng = np.random.default_rng(1)
    for state in positions:
        for seat in range(3):
            swapped = swap_unknown_cards(state, seat, rng)
            assert render.seat_table(swapped, seat, NAMES) == render.seat_table(state, seat, NAMES)
            assert render.seat_view(swapped, seat, NAMES) == render.seat_view(state, seat, NAMES)


def test_the_card_swap_does_change_what_others_hold(positions):
    """The swap is not a no-op: another seat's hand differs in most positions."""
    rng = np.random.default_rng(2)
    changed = sum(int(swap_unknown_cards(s, 0, rng).hands[0, 1]) != int(s.hands[0, 1]) for s in positions)
    assert changed > 0.8 * len(positions)


def test_a_seat_view_shows_the_seats_own_cards(positions):
    """What the seat knows is shown: its hand (R9: its first six while it chooses), its own
    discards and exchange cards."""
    for state in positions:
        if state.phase[0] == OVER:
            continue
        for seat in range(3):
            text = render.seat_view(state, seat, NAMES)
            own, first_six_only = render.own_cards(state, seat)
            assert f": {render.hand_text(own)}" in text
            assert ("first six cards of" in text) == first_six_only
            for cards in (state.given[0, seat], state.received[0, seat]):
                assert not cards or render.hand_text(int(cards)) in text
            playmaker = (int(state.dealer[0]) + 1) % 3
            if seat == playmaker and state.discards[0]:
                assert render.hand_text(int(state.discards[0])) in text


def first_mode_choice(seat: int) -> int:
    """A seed whose first deal has ``seat`` as the playmaker."""
    return next(s for s in range(100) if (int(engine.init([s]).dealer[0]) + 1) % 3 == seat)


def hand_line(text: str, label: str) -> str:
    return next(line for line in text.splitlines() if label in line).split(": ", 1)[1]


def test_R9_single_seat_render_during_the_learners_mode_choice_shows_six_cards():
    """The bug of issue 11: SergeantMajorEnv(render_mode="ansi").render() printed all 16 cards."""
    game = SergeantMajorEnv(render_mode="ansi", num_deals=1)
    game.reset(seed=first_mode_choice(0))
    assert game.state.phase[0] == MODE and game.state.to_act[0] == 0
    shown = hand_line(game.render(), "first six cards")
    assert shown == render.hand_text(int(game.state.first_six[0]))
    assert sum(shown.count(rank) for rank in "23456789TJQKA") == 6


def test_R9_referee_view_during_the_mode_choice_shows_only_the_first_six_cards():
    game = raw_env(render_mode="ansi")
    game.reset(seed=11)
    state = game.engine_state
    text = game.render()
    assert hand_line(text, "first six cards of") == render.hand_text(int(state.first_six[0]))
    assert render.hand_text(int(state.hands[0, state.to_act[0]])) not in text


def test_every_view_draws_with_the_one_renderer():
    game = raw_env(render_mode="ansi", num_deals=1)
    game.reset(seed=3)
    assert game.render() == render.referee_view(game.engine_state, AGENTS)
    single = SergeantMajorEnv(render_mode="ansi", num_deals=1, learner_seat=2)
    single.reset(seed=3)
    assert single.render() == render.seat_view(single.state, 2, render.seat_labels(["random", "random", "learner"], you=2))


def test_aec_render_seat_shows_that_seat_whoever_is_to_act():
    game = env(render_mode="ansi", render_seat=1, num_deals=1)
    game.reset(seed=5)
    rng = np.random.default_rng(0)
    acting = set()
    for agent in game.agent_iter():
        observation, _, termination, truncation, _ = game.last()
        state = game.unwrapped.engine_state
        assert game.render() == render.seat_view(state, 1, AGENTS)
        if state.phase[0] != OVER:
            acting.add(int(state.to_act[0]))
            hand = game.render().splitlines()[-1]  # "hand of player_1: ..." or its first six (R9)
            assert "of player_1" in hand and hand.endswith(": " + render.hand_text(render.own_cards(state, 1)[0]))
        game.step(None if termination or truncation else int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    assert acting == {0, 1, 2}


@pytest.mark.parametrize("seat", [3, -1, True, 1.0, "player_1"])
def test_aec_render_seat_refuses_anything_but_a_seat(seat):
    with pytest.raises(ValueError, match="render_seat must be None .* or a seat 0, 1 or 2") as error:
        raw_env(render_mode="ansi", render_seat=seat)
    assert "\n" not in str(error.value)


def test_observation_view_shows_what_the_seat_view_shows(positions):
    """A view decoded from an observation (the human agent without a state) holds the same
    cards and public facts as the seat's view of the state, in seats relative to it."""
    for state in positions[::3]:
        for seat in range(3):
            table = render.seat_table(state, seat, NAMES)
            decoded = render.observation_table(observe(state, seat)[0])
            relative = [(seat + k) % 3 for k in range(3)]

            def rel(s):
                return relative.index(s)

            assert (decoded.phase, decoded.mode, decoded.deal) == (table.phase, table.mode, table.deal)
            assert decoded.to_act == (rel(table.to_act) if table.to_act >= 0 else -1)
            for field in ("roles", "tricks_won", "scores", "modes_left"):
                assert getattr(decoded, field) == tuple(getattr(table, field)[s] for s in relative), field
            assert (decoded.hand, decoded.first_six_only) == (table.hand, table.first_six_only)
            assert sorted(decoded.talon) == sorted(table.talon)
            assert decoded.trick == tuple((rel(s), c) for s, c in table.trick)
            assert (decoded.discards, decoded.given, decoded.received) == (table.discards, table.given, table.received)
            assert sorted(decoded.exchanges) == sorted((rel(g), rel(r), n, d) for g, r, n, d in table.exchanges)


def test_R22_the_narrator_never_names_the_cards_of_a_pair_to_the_third_seat():
    """The terminal game's commentary of an exchange step: the third seat reads that a card
    changed hands, never which (nor which came back)."""
    rng = np.random.default_rng(3)
    state = engine.init(list(range(20)), Rules(num_deals=4))
    checked = 0
    while not (state.phase == OVER).all():
        exchanging = np.flatnonzero((state.phase == GIVE) | (state.phase == RETURN))
        before = {int(g): state.take([g]) for g in exchanging}
        actions = records.random_actions(state, rng)
        engine.step(state, actions)
        for game, old in before.items():
            pair = int(old.exchange_pair[0])
            third = 3 - int(old.exchange_giver[0, pair]) - int(old.exchange_receiver[0, pair])
            after = state.take([game])
            out = io.StringIO()
            render.Narrator(third, NAMES, out).step(render.before_step(old), int(actions[game]), after)
            told = out.getvalue()
            assert told == "" or "exchanged a card (R22: you do not see which)" in told
            talon = set(int(c) for c in after.talon_cards[0]) if after.phase[0] == DISCARD else set()
            for card in {int(actions[game]), int(after.last_returned[0])} - {-1} - talon:
                assert render.card_text(card) not in told
            checked += 1
    assert checked > 50


def test_people_read_a_ten_as_10_and_programs_keep_R3s_letters(positions):
    """Issue 50, item 6: every view for people (the terminal, the pages, render()) writes a ten
    `10` (`10♥`, `♥ Q 10 9`); a view that keeps RULES.md's R3 letters (OpenSpiel's strings)
    passes `ranks=RANKS` and reads `T` as before."""
    ten, hearts = parse_card("TH"), sum(1 << parse_card(c) for c in ("QH", "TH", "9H"))
    assert render.RANK_TEXT[8] == "10" and render.card_text(ten) == "10\u2665" == render.move_text(ten)
    assert render.move_words(ten) == "10\u2665" and render.hand_text(hearts) == "\u2665 Q 10 9"
    assert render.card_text(ten, RANKS) == "T\u2665" and render.hand_text(hearts, RANKS) == "\u2665 Q T 9"
    letter_t = re.compile(r"(?<![A-Za-z])T(?![A-Za-z])")  # T as a rank (NT, MIN and words do not match)
    tens_seen = 0
    for state in positions:
        for seat in range(3):
            text, letters = render.seat_view(state, seat, NAMES), render.seat_view(state, seat, NAMES, ranks=RANKS)
            assert not letter_t.search(text), text
            tens = sum(1 for c in range(8, 52, 13) if int(render.own_cards(state, seat)[0]) >> c & 1)
            assert len(letter_t.findall(letters)) >= tens  # the tens held, in R3's letters
            tens_seen += tens
    assert tens_seen > 0


def test_table_view_is_frozen():
    view = render.seat_table(engine.init([0]), 0, NAMES)
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.hand = 0
