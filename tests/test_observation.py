"""What a seat knows: ``observation.observe(state, seat)``.

Positive checks rebuild the whole vector from the state by the module docstring's table
(:func:`expected_observation`), over many random situations. Information checks change
what a seat cannot know (renaming hidden cards consistently in every field of the state,
:func:`conftest.relabel_cards`, or replaying other choices of other players) and require
the seat's observation to stay the same, with a control that the change was real.
"""

from __future__ import annotations

import hashlib
import itertools
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from conftest import (
    ALL_CARDS,
    MIN,
    MIN_TARGETS,
    TRUMP_TARGETS,
    act,
    every_kth_state,
    new_deal,
    random_actions,
    random_play,
    reference_trick_winner,
    relabel_cards,
    rules_strategy,
    seed_strategy,
    to_bits,
)
from sergeant_major_env import Rules, engine, observation
from sergeant_major_env.cards import card_list
from sergeant_major_env.engine import DISCARD, GIVE, MODE, OVER, PLAY, RETURN
from sergeant_major_env.observation import OBSERVATION_SIZE, SEGMENTS, observe

SETTINGS = settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck), database=None)
SHORT_RULES = rules_strategy.map(lambda r: Rules(**{**r.to_dict(), "num_deals": 1 + r.num_deals % 3}))
DECISION_INDEX = {MODE: 0, GIVE: 1, RETURN: 2, DISCARD: 3, PLAY: 4}  # docstring order
PAIRS = [(0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1)]  # relative (giver, receiver)


def expected_observation(state: engine.State, g: int, seat: int) -> np.ndarray:
    """The observation of ``seat`` in game ``g`` built from the module docstring's table."""
    v = np.zeros(OBSERVATION_SIZE, dtype=np.float32)
    rel = [(seat + k) % 3 for k in range(3)]  # relative seat k -> absolute seat
    dealer = int(state.dealer[g])
    playmaker = (dealer + 1) % 3
    phase = int(state.phase[g])
    mode = int(state.mode[g])

    def put(name, offset, ids):
        for c in ids:
            v[SEGMENTS[name].start + offset + int(c)] = 1

    if phase == MODE and seat == playmaker:
        put("hand", 0, state.dealt[g, seat, :6])  # R9
    else:
        put("hand", 0, card_list(state.hands[g, seat]))
    for k, s in enumerate(rel):
        put("played", 52 * k, card_list(state.played[g, s]))
    for k in range(3):
        if state.trick[g, k] >= 0:
            put("trick", 52 * k, [state.trick[g, k]])
    if phase in (DISCARD, PLAY, OVER):
        put("talon", 0, state.talon_cards[g])
    if seat == playmaker:
        put("discards", 0, card_list(state.discards[g]))
    put("exchange_given", 0, card_list(state.given[g, seat]))
    put("exchange_received", 0, card_list(state.received[g, seat]))
    if phase != OVER:
        v[SEGMENTS["decision"].start + DECISION_INDEX[phase]] = 1
        v[SEGMENTS["to_act"].start + (int(state.to_act[g]) - seat) % 3] = 1
    if mode >= 0:
        v[SEGMENTS["mode"].start + mode] = 1
    for k, s in enumerate(rel):
        role = (s - dealer) % 3
        v[SEGMENTS["roles"].start + 3 * k + role] = 1
        v[SEGMENTS["targets"].start + k] = (MIN_TARGETS if mode == MIN else TRUMP_TARGETS)[role] / 8
        v[SEGMENTS["tricks_won"].start + k] = int(state.tricks_won[g, s]) / 16
        v[SEGMENTS["prev_points"].start + k] = int(state.prev_points[g, s]) / 13
        v[SEGMENTS["scores"].start + k] = int(state.scores[g, s]) / 50
        for m in range(6):
            v[SEGMENTS["modes_available"].start + 6 * k + m] = not (int(state.modes_used[g, s]) >> m) & 1
    if state.leader[g] >= 0:
        v[SEGMENTS["trick_leader"].start + (int(state.leader[g]) - seat) % 3] = 1
    for i, (x, y) in enumerate(PAIRS):
        giver, receiver = rel[x], rel[y]
        due = sum(int(n) for a, b, n in zip(state.exchange_giver[g], state.exchange_receiver[g], state.exchange_count[g])
                  if a == giver and b == receiver)
        v[SEGMENTS["exchange_due"].start + i] = due / 13
        v[SEGMENTS["exchange_done"].start + i] = int(state.exchange_done[g, giver, receiver]) / 13
    v[SEGMENTS["deal"].start] = int(state.deal[g]) / 18
    _expected_history_and_derived(state, g, seat, v)
    return v


def _expected_history_and_derived(state: engine.State, g: int, seat: int, v: np.ndarray) -> None:
    """The trick-history and derived segments of :func:`expected_observation`, from RULES.md."""
    rel = {(seat + k) % 3: k for k in range(3)}  # absolute seat -> relative seat
    phase, mode = int(state.phase[g]), int(state.mode[g])
    dealer = int(state.dealer[g])
    tricks = [(int(state.trick_leaders[g, t]), [int(c) for c in state.past_tricks[g, t]])
              for t in range(16) if state.past_tricks[g, t, 0] >= 0]
    if phase == PLAY:  # the trick being played, possibly still empty
        tricks.append((int(state.leader[g]), [int(c) for c in state.trick[g]]))
    voids = set()
    for t, (leader, cards_) in enumerate(tricks):
        v[SEGMENTS["trick_leaders"].start + 3 * t + rel[leader]] = 1
        for position, c in enumerate(cards_):
            if c < 0:
                continue
            v[SEGMENTS["card_trick"].start + c] = (t + 1) / 16
            led = cards_[0] // 13
            player = (leader + position) % 3
            if position and c // 13 != led:  # R13: did not follow the led suit
                voids.add((player, led))
                if mode < 4 and c // 13 != mode:  # R14: nor trumped
                    voids.add((player, mode))
    for player, suit in voids:
        v[SEGMENTS["voids"].start + 4 * rel[player] + suit] = 1
    table = [int(c) for c in state.trick[g] if c >= 0]
    hand = np.flatnonzero(v[SEGMENTS["hand"]])
    if table:
        position = int(reference_trick_winner([table], [mode])[0])
        v[SEGMENTS["winning_card"].start + table[position]] = 1
        v[SEGMENTS["winning_seat"].start + rel[(int(state.leader[g]) + position) % 3]] = 1
        for c in hand:  # R16: would this card, played now, win the trick so far?
            if reference_trick_winner([table + [int(c)]], [mode])[0] == len(table):
                v[SEGMENTS["winners_in_hand"].start + c] = 1
    gone = int(np.bitwise_or.reduce(state.played[g]))
    if seat == (dealer + 1) % 3:
        gone |= int(state.discards[g])
    for suit in range(4):
        left = [c for c in range(13 * suit, 13 * suit + 13) if not gone >> c & 1]
        if left:
            v[SEGMENTS["highest_left"].start + max(left)] = 1
    for k in range(3):
        role = (int((seat + k) % 3) - dealer) % 3
        target = (MIN_TARGETS if mode == MIN else TRUMP_TARGETS)[role]
        v[SEGMENTS["tricks_needed"].start + k] = (target - int(state.tricks_won[g, (seat + k) % 3])) / 16
    unseen = ALL_CARDS & ~visible_cards(state, g, seat)
    for suit in range(4):
        v[SEGMENTS["unseen_per_suit"].start + suit] = sum(unseen >> c & 1 for c in range(13 * suit, 13 * suit + 13)) / 13


def visible_cards(state: engine.State, g: int, seat: int) -> int:
    """The cards ``seat`` has seen in game ``g`` (as a bit set): its hand and what it was
    dealt (only the first six for the playmaker choosing its mode, R9), its exchanges,
    every played card, the talon once turned up, and its own discards."""
    phase = int(state.phase[g])
    playmaker = (int(state.dealer[g]) + 1) % 3
    if phase == MODE and seat == playmaker:
        seen = to_bits(state.dealt[g, seat, :6])
    else:
        seen = int(state.hands[g, seat]) | to_bits(state.dealt[g, seat])
    seen |= int(state.given[g, seat]) | int(state.received[g, seat])
    seen |= int(np.bitwise_or.reduce(state.played[g]))
    if phase in (DISCARD, PLAY, OVER):
        seen |= int(state.talon[g])
    if seat == playmaker:
        seen |= int(state.discards[g])
    return seen


def _swap(rng, a: list[int], b: list[int]) -> dict[int, int]:
    """A permutation exchanging k random cards of ``a`` with k random cards of ``b``."""
    k = int(rng.integers(1, min(len(a), len(b)) + 1))
    xs, ys = rng.choice(a, k, replace=False), rng.choice(b, k, replace=False)
    mapping = {int(x): int(y) for x, y in zip(xs, ys)}
    mapping.update({int(y): int(x) for x, y in zip(xs, ys)})
    return mapping


def _check_invisible(seed, rules, choose_cards, batch: int = 8, every: int = 3):
    """Play random games; at random steps, for each game and seat that ``choose_cards``
    returns two card lists for (hidden from the seat), swap some of them everywhere in the
    state and require the seat's observation to be unchanged. Returns how many situations
    were checked and in how many the change showed in another seat's observation."""
    state = engine.init(engine.game_seeds(seed, batch), rules)
    rng = np.random.default_rng(seed)
    checked = noticed = 0
    initial = [(None, None, state.copy())]
    for step, (_, _, s) in enumerate(itertools.chain(initial, random_play(state, rng))):
        if step % every:
            continue
        for g in np.flatnonzero(s.phase != OVER):
            seat = int(rng.integers(3))
            hidden = ALL_CARDS & ~visible_cards(s, g, seat)
            chosen = choose_cards(s, g, seat, hidden)
            if chosen is None or not chosen[0] or not chosen[1]:
                continue
            mapping = _swap(rng, *chosen)
            changed = s.take([g])
            relabel_cards(changed, 0, mapping)
            assert any((value != getattr(s, name)[[g]]).any() for name, value in changed.arrays().items()), "no change"
            original = observe(s.take([g]), seat)
            np.testing.assert_array_equal(observe(changed, seat), original,
                                          err_msg=f"seat {seat} saw hidden cards {sorted(mapping)} move (phase {s.phase[g]})")
            noticed += any((observe(changed, other) != observe(s.take([g]), other)).any() for other in range(3) if other != seat)
            checked += 1
    return checked, noticed


def _ids(bits: int) -> list[int]:
    return card_list(bits)


# ============================================================================ positive checks

@SETTINGS
@given(seed=seed_strategy, rules=SHORT_RULES)
def test_every_segment_holds_what_the_docstring_says(seed, rules):
    """Each segment of SEGMENTS holds the docstring's content: own hand (first six for the
    playmaker choosing, R9), played cards and the trick by relative seat / position, the
    talon once turned up, own discards (playmaker), own exchanged cards, the decision, seat
    to act, mode, roles, targets (R23, R24), tricks, trick leader, exchange counts (R22),
    previous points, scores, deal index and the modes still available (R8)."""
    state = engine.init(engine.game_seeds(seed, 8), rules)
    rng = np.random.default_rng(seed)
    checked = 0
    for step, (_, _, s) in enumerate(random_play(state, rng)):
        if step % 2:
            continue
        for seat in range(3):
            obs = observe(s, seat)
            for g in range(s.batch_size):
                expected = expected_observation(s, g, seat)
                # Scaled numbers may differ in the last bit (x * (1/13) vs x / 13 in float32).
                if not np.allclose(obs[g], expected, rtol=1e-6, atol=0):
                    wrong = [name for name, sl in SEGMENTS.items() if not np.allclose(obs[g, sl], expected[sl], rtol=1e-6, atol=0)]
                    raise AssertionError(f"segments {wrong} differ for seat {seat} in phase {s.phase[g]}")
                checked += 1
    assert checked > 0


def test_segments_cover_the_vector_in_the_docstrings_order_and_sizes():
    """The module docstring's table is the layout: same names, order, sizes and scales."""
    rows = re.findall(r"^\| `(\w+)` \| (\d+) \| (\d+) \|", observation.__doc__, re.M)
    assert [name for name, _, _ in rows] == list(SEGMENTS)
    offset = 0
    for name, size, scale in rows:
        assert SEGMENTS[name] == slice(offset, offset + int(size)), name
        assert observation.SCALES[name] == int(scale), name
        offset += int(size)
    assert OBSERVATION_SIZE == offset == 919
    for name in observation.DERIVED:
        assert re.search(rf"^\| `{name}` \|.*\*derived\*", observation.__doc__, re.M), name


def test_observe_accepts_a_seat_per_game_and_rejects_bad_seats():
    state = engine.init(np.arange(5))
    seats = np.array([0, 1, 2, 1, 0])
    per_game = observe(state, seats)
    for g, seat in enumerate(seats):
        np.testing.assert_array_equal(per_game[g], observe(state, int(seat))[g])
    for bad in (3, -1):
        try:
            observe(state, bad)
        except ValueError:
            continue
        raise AssertionError(f"seat {bad} accepted")


def test_R9_playmaker_chooses_the_mode_seeing_only_its_first_six_cards():
    """R9: the playmaker chooses the mode having seen only the first six cards dealt to it
    (state.dealt[g, seat, :6]); only after choosing does it see the rest of its hand. The
    other players see their whole hands."""
    state = engine.init(np.arange(40), Rules(num_deals=3))
    rng = np.random.default_rng(9)
    hand = SEGMENTS["hand"]
    seen_choices = 0
    for before, _, s in random_play(state, rng):
        choosing = np.flatnonzero(before.phase == MODE)
        for g in choosing:
            playmaker = (int(before.dealer[g]) + 1) % 3
            obs = observe(before.take([g]), playmaker)[0]
            assert set(np.flatnonzero(obs[hand])) == set(before.dealt[g, playmaker, :6].tolist())
            for other in (playmaker + 1) % 3, (playmaker + 2) % 3:
                assert set(np.flatnonzero(observe(before.take([g]), other)[0, hand])) == set(card_list(before.hands[g, other]))
            after = observe(s.take([g]), playmaker)[0]
            if s.phase[g] in (GIVE, RETURN, DISCARD):
                whole = set(card_list(s.hands[g, playmaker]))
                assert set(np.flatnonzero(after[hand])) == whole and len(whole) in (16, 17, 20)
            seen_choices += 1
    assert seen_choices == 40 * 3


def test_section5_talon_is_shown_to_all_once_turned_up_never_before():
    """Section 5 steps 2-4: the talon stays face down during the mode choice and the
    exchanges, then is turned face up for all players."""
    state = new_deal([None, None, None], deal=1, prev_points=(2, 0, -2))
    talon = set(state.talon_cards[0].tolist())
    rng = np.random.default_rng(0)
    steps = 0
    while int(state.phase[0]) != DISCARD:
        assert int(state.phase[0]) in (MODE, GIVE, RETURN)
        for seat in range(3):
            assert not observe(state, seat)[0, SEGMENTS["talon"]].any()
        engine.step(state, np.array([52]) if steps == 0 else random_actions(state, rng))  # spades
        steps += 1
    assert steps >= 3  # the mode and two exchanged cards
    for seat in range(3):
        assert set(np.flatnonzero(observe(state, seat)[0, SEGMENTS["talon"]])) == talon


def test_section5_discards_are_known_only_to_the_playmaker():
    """Section 5 step 5: the playmaker discards 4 cards face down (only it knows them)."""
    state = new_deal([None, None, None], dealer=2)  # playmaker seat 0
    act(state, "NT")
    discarded = [int(c) for c in state.dealt[0, 0, [1, 5, 9, 13]]]
    for card in discarded:
        engine.step(state, np.array([card]))
    assert int(state.phase[0]) == PLAY
    assert set(np.flatnonzero(observe(state, 0)[0, SEGMENTS["discards"]])) == set(discarded)
    for seat in (1, 2):
        assert not observe(state, seat)[0, SEGMENTS["discards"]].any()


# ============================================================================ information

@SETTINGS
@given(seed=seed_strategy, rules=SHORT_RULES)
def test_hidden_other_hands_swapping_cards_between_them_keeps_the_observation(seed, rules):
    """A seat does not know how the cards it has not seen are split between the other two
    hands: swapping such cards between them (counts kept) leaves its observation unchanged."""
    def choose(s, g, seat, hidden):
        a, b = (seat + 1) % 3, (seat + 2) % 3
        return _ids(int(s.hands[g, a]) & hidden), _ids(int(s.hands[g, b]) & hidden)
    checked, noticed = _check_invisible(seed, rules, choose, every=4)
    assert checked > 0 and noticed > 0  # the owners of the hands do see the swap


@SETTINGS
@given(seed=seed_strategy, rules=SHORT_RULES)
def test_hidden_talon_before_it_is_turned_up(seed, rules):
    """Section 5: until it is turned up (mode choice, exchanges) nobody sees the talon:
    exchanging talon cards with cards a seat has not seen (other hands, or the playmaker's
    last ten during its mode choice) leaves that seat's observation unchanged."""
    def choose(s, g, seat, hidden):
        if s.phase[g] not in (MODE, GIVE, RETURN):
            return None
        talon = int(s.talon[g])
        assert talon & hidden == talon
        return _ids(talon), _ids(hidden & ~talon)
    checked, noticed = _check_invisible(seed, rules, choose, every=1)
    assert checked > 0 and noticed > 0


@SETTINGS
@given(seed=seed_strategy, rules=SHORT_RULES)
def test_hidden_playmakers_discards_for_the_other_seats(seed, rules):
    """Section 5 step 5: only the playmaker knows its discards; the other seats' observations
    do not change when discarded cards (not seen in the talon) trade places with unseen cards."""
    def choose(s, g, seat, hidden):
        if s.phase[g] not in (DISCARD, PLAY) or seat == (int(s.dealer[g]) + 1) % 3:
            return None
        discards = int(s.discards[g]) & hidden
        return _ids(discards), _ids(hidden & ~discards)
    checked, noticed = _check_invisible(seed, rules, choose)
    assert checked > 0 and noticed > 0


def _other_pairs_exchanged_cards(s, g, seat, hidden):
    """The cards the two other seats exchanged (unseen by ``seat``) and the other unseen cards."""
    a, b = (seat + 1) % 3, (seat + 2) % 3
    if int(s.exchange_done[g, a, b]) + int(s.exchange_done[g, b, a]) == 0:
        return None
    exchanged = (int(s.given[g, a]) | int(s.received[g, a]) | int(s.given[g, b]) | int(s.received[g, b])) & hidden
    return _ids(exchanged), _ids(hidden & ~exchanged)


@SETTINGS
@given(seed=seed_strategy, rules=SHORT_RULES.map(lambda r: Rules(**{**r.to_dict(), "exchanges": True, "num_deals": 3})))
def test_hidden_exchanged_cards_of_the_other_pair(seed, rules):
    """R22: exchanged cards are seen only by the two players involved: renaming the cards the
    other two seats exchanged (with other unseen cards) leaves the third's observation alone."""
    _check_invisible(seed, rules, _other_pairs_exchanged_cards, every=1)  # asserts in every situation met


def test_hidden_exchanged_cards_of_the_other_pair_are_exercised():
    """The previous test does meet exchanges between the other two seats."""
    checked, noticed = _check_invisible(5, Rules(num_deals=3), _other_pairs_exchanged_cards, batch=16, every=1)
    assert checked > 30 and noticed > 0


def test_R22_third_sees_only_how_many_cards_changed_hands_between_whom():
    """R22: replaying the same exchange with other cards given and returned, the player that
    takes no part sees the same observation when the talon is turned up: only the counts
    (exchange_due / exchange_done) are public.

    Note (RULES.md R22 vs section 10): while a card is in transit the decision kind is public
    (exchange_return appears only after a trump was given, since forced returns are not asked),
    so the third can tell trump gives from others at that moment; the rule book does not
    settle whether the pending decision is public, so only the state after the exchange is
    compared here."""
    compared = 0
    for seed in range(60):
        state = engine.init([seed], Rules(num_deals=4))
        rng = np.random.default_rng(seed)
        while int(state.phase[0]) != OVER:
            if int(state.phase[0]) == GIVE and int(state.exchange_done[0].sum()) == 0 and int(state.exchange_giver[0, 1]) < 0:
                giver, receiver = int(state.exchange_giver[0, 0]), int(state.exchange_receiver[0, 0])
                third = 3 - giver - receiver
                runs = []
                for k in range(2):
                    copy = state.copy()
                    local = np.random.default_rng(1000 * seed + k)
                    while int(copy.phase[0]) != DISCARD:
                        engine.step(copy, random_actions(copy, local))
                    runs.append(copy)
                if runs[0].hands[0, giver] != runs[1].hands[0, giver]:
                    np.testing.assert_array_equal(observe(runs[0], third), observe(runs[1], third))
                    assert (observe(runs[0], giver) != observe(runs[1], giver)).any()
                    compared += 1
            engine.step(state, random_actions(state, rng))
    assert compared > 20


@SETTINGS
@given(seed=seed_strategy, rules=SHORT_RULES)
def test_hidden_playmakers_last_ten_cards_during_its_mode_choice(seed, rules):
    """R9: during its mode choice the playmaker has seen only its first six cards: renaming
    its last ten with other unseen cards changes no observation, its own included."""
    def choose(s, g, seat, hidden):
        if s.phase[g] != MODE:
            return None
        playmaker = (int(s.dealer[g]) + 1) % 3
        last_ten = to_bits(s.dealt[g, playmaker, 6:])
        if seat == playmaker:
            assert last_ten & hidden == last_ten
        return _ids(last_ten & hidden), _ids(hidden & ~last_ten)
    checked, noticed = _check_invisible(seed, rules, choose, batch=16, every=1)
    assert checked > 0 and noticed > 0


# ============================================================================ decode, trick history

@SETTINGS
@given(seed=seed_strategy, rules=SHORT_RULES)
def test_decode_gives_voids_and_tricks_in_relative_seats(seed, rules):
    """decode(obs)["tricks"] is this deal's tricks, oldest first, the unfinished one last if it has
    cards, as (leader relative seat, cards in playing order); "voids" is bool[3, 4] (R13, R14);
    the numbers come back in natural units."""
    state = engine.init(engine.game_seeds(seed, 6), rules)
    rng = np.random.default_rng(seed)
    for step, (_, _, s) in enumerate(random_play(state, rng)):
        if step % 3:
            continue
        for g in range(s.batch_size):
            seat = int(rng.integers(3))
            decoded = observation.decode(observe(s.take([g]), seat)[0])
            assert set(SEGMENTS) | {"tricks"} == set(decoded)
            expected = []
            for t in range(16):
                if s.past_tricks[g, t, 0] >= 0:
                    leader = int(s.trick_leaders[g, t])
                    expected.append(((leader - seat) % 3, [int(c) for c in s.past_tricks[g, t]]))
            if s.phase[g] == PLAY and s.trick[g, 0] >= 0:
                expected.append(((int(s.leader[g]) - seat) % 3, [int(c) for c in s.trick[g] if c >= 0]))
            assert decoded["tricks"] == expected
            reference = np.zeros(OBSERVATION_SIZE, np.float32)
            _expected_history_and_derived(s, g, seat, reference)
            np.testing.assert_array_equal(decoded["voids"], reference[SEGMENTS["voids"]].reshape(3, 4) > 0)
            assert decoded["voids"].shape == (3, 4) and decoded["voids"].dtype == bool
            assert decoded["tricks_won"] == [int(s.tricks_won[g, (seat + k) % 3]) for k in range(3)]
            assert decoded["scores"] == [int(s.scores[g, (seat + k) % 3]) for k in range(3)]
            assert decoded["deal"] == int(s.deal[g])


def test_decode_refuses_a_row_of_another_size():
    with pytest.raises(ValueError, match=f"{OBSERVATION_SIZE} floats"):
        observation.decode(np.zeros(641, np.float32))


def _two_leads_in_either_order(rules: Rules):
    """Two real positions of the same deal, after the same two tricks played in the other order:
    one seat led and won both, so the same cards lie in the same hands either way."""
    for seed in range(500):
        start = engine.init([seed], rules)
        rng = np.random.default_rng(seed)
        while start.phase[0] != PLAY:
            engine.step(start, random_actions(start, rng))
        first = start.copy()
        plays = []
        for _ in range(6):
            action = random_actions(first, rng)
            plays.append(int(action[0]))
            engine.step(first, action)
        leaders = first.trick_leaders[0, :3]
        if not (leaders[0] == leaders[1] == leaders[2]):
            continue  # the seat that led trick 1 must lead (win) both
        second = start.copy()
        try:
            for action in plays[3:] + plays[:3]:
                engine.step(second, np.array([action]))
        except engine.IllegalActionError:
            continue
        if second.leader[0] == first.leader[0] and (second.tricks_won == first.tricks_won).all():
            return first, second
    raise AssertionError("no such pair of positions found")


def test_trick_order_alone_tells_two_positions_apart():
    """The same cards played by the same seats, in the same tricks, but in another order: the old
    (version 1) information cannot tell them apart, the trick history can."""
    first, second = _two_leads_in_either_order(Rules())
    history = ("card_trick",)
    for seat in range(3):
        a, b = observe(first, seat)[0], observe(second, seat)[0]
        same_elsewhere = [name for name, sl in SEGMENTS.items() if name not in history and (a[sl] != b[sl]).any()]
        assert same_elsewhere == [], f"only the trick history should differ, not {same_elsewhere}"
        assert (a[SEGMENTS["card_trick"]] != b[SEGMENTS["card_trick"]]).any()
        assert observation.decode(a)["tricks"] != observation.decode(b)["tricks"]


# sha256 of the float32 vectors of _version_2_observations, computed with the code that
# introduced version 2 (commit 70218ec). Trained models read these exact values, so any change
# of a value, however small, must come with a new VERSION (and a new digest).
VERSION_2_DIGEST = "d8596957aa44ab9d014183f33f8aa62c55712d978429b2d625a0bedcd259da27"


def _version_2_observations() -> str:
    """sha256 over fixed games (no numpy random stream: actions are picked by index) of every
    step's observations: each game's seat to act and a given seat, batch path and one-game path."""
    digest = hashlib.sha256()
    for rules in (Rules(num_deals=3),
                  Rules(num_deals=2, must_overtake=True, must_overtrump=True, dealer_builds_talon=True)):
        state = engine.init(engine.game_seeds(2024, 13), rules)
        step = 0
        while (state.phase != OVER).any():
            for seats in (np.where(state.to_act >= 0, state.to_act, step % 3), np.full(13, step % 3)):
                digest.update(observe(state, seats).astype("<f4").tobytes())
            digest.update(observe(state.take([step % 13]), step % 3).astype("<f4").tobytes())
            legal = [card_list(bits) for bits in engine.legal_bits(state).tolist()]
            engine.step(state, np.array([a[(7 * step + 3 * g) % len(a)] if a else 0 for g, a in enumerate(legal)]))
            step += 1
    return digest.hexdigest()


def test_version_2_observations_are_bit_for_bit_what_models_were_trained_on():
    """Speed work on observe() must not move a single bit of the layout version 2 vectors."""
    assert observation.VERSION == 2
    assert _version_2_observations() == VERSION_2_DIGEST


@SETTINGS
@given(seed=seed_strategy, rules=rules_strategy)
def test_observe_card_sets_is_observe_with_the_card_planes_as_sets(seed, rules):
    """observe_card_sets (the heuristic's form of the observation, policies.decide) holds
    exactly observe's vector: its 14 card sets, expanded to 52 floats each, are the vector's
    card planes and its rest is the vector from ``decision`` on, bit for bit, for every
    seat in every phase, in batches of every size (one game included)."""
    state = engine.init(engine.game_seeds(seed, 5), rules)
    rng = np.random.default_rng(seed)
    checked = 0
    for step, s in every_kth_state(state, rng, 3):
        for games in (np.arange(s.batch_size), np.array([step % s.batch_size])):
            part = s.take(games)
            seats = rng.integers(0, 3, size=games.size)
            card_sets, rest = observation.observe_card_sets(part, seats)
            assert card_sets.dtype == np.uint64 and card_sets.shape == (games.size, 14)
            width = OBSERVATION_SIZE - observation.CARD_SETS_WIDTH
            assert rest.dtype == np.float32 and rest.shape == (games.size, width)
            planes = ((card_sets[:, :, None] >> np.arange(52, dtype=np.uint64)) & np.uint64(1)).astype(np.float32)
            rebuilt = np.concatenate([planes.reshape(games.size, -1), rest], axis=1)
            np.testing.assert_array_equal(rebuilt, observe(part, seats))
            checked += 1
    assert checked > 0


def test_observe_card_sets_rejects_bad_seats_as_observe_does():
    state = engine.init(engine.game_seeds(0, 2), Rules())
    for bad in (3, -1, [0], [0, 1, 2]):
        with pytest.raises(ValueError, match="seat must be 0, 1 or 2"):
            observation.observe_card_sets(state, bad)


def test_acting_card_sets_are_the_taken_games_observed():
    """acting_card_sets (a vector env's opponents, decide) reads a subset of games in place: the
    card sets and entries of observe_card_sets on the subset taken out, for the seat to act,
    in every phase of 2-deal games; an index out of range or a finished game is one line."""
    from sergeant_major_env.cards import random_member

    state = engine.init(engine.game_seeds(11, 64), Rules(num_deals=2))
    rng = np.random.default_rng(11)
    for step in range(400):
        if step % 7 == 0:
            games = rng.choice(64, size=int(rng.integers(2, 40)))  # repeats too
            part = state.take(games)
            if (part.to_act >= 0).all():
                expected = observation.observe_card_sets(part, part.to_act)
                for got, want in zip(observation.acting_card_sets(state, games), expected):
                    np.testing.assert_array_equal(got, want)
        legal = engine.legal_bits(state)
        if not legal.any():
            break
        engine.step(state, np.maximum(random_member(legal, rng), 0), legal=legal)
    over = np.flatnonzero(state.to_act < 0)
    for games in ([0, 64], [-1], over[:1]):
        if len(games):
            with pytest.raises(ValueError, match="has no seat to act") as error:
                observation.acting_card_sets(state, np.asarray(games))
            assert "\n" not in str(error.value)
