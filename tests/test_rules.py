"""One or more tests per rule of RULES.md (R1-R25), per rule option (section 9), per worked
example of section 8, and for the engine's errors. Each test is named after what it pins.

Situations are built with real steps where possible: :func:`conftest.new_deal` installs
chosen cards with ``engine.set_cards``, then the mode is chosen, the talon discarded and the
cards played through ``engine.step``. Unless said otherwise the dealer is seat 0, so the
playmaker is seat 1 and the third seat 2 (R5), and a trick led by the playmaker is played
in the order 1, 2, 0 (R12).
"""

from __future__ import annotations

import numpy as np
import pytest

from conftest import (
    MIN,
    NT,
    PLAYMAKER_ROLE,
    act,
    action_of,
    assert_states_equal,
    cards,
    discard_talon,
    finish_deal_with_tricks,
    held,
    legal,
    names,
    new_deal,
    play_to,
    popcount,
    random_actions,
    reference_exchanges,
    reference_points,
    reference_trick_winner,
    seat_of,
    to_bits,
)
from sergeant_major_env import Rules, engine
from sergeant_major_env.cards import MODE_NAMES, action_name, card_name, parse_card
from sergeant_major_env.engine import DISCARD, GIVE, MODE, OVER, PLAY, RETURN

DEALER, PLAYMAKER, THIRD = 0, 1, 2  # seats when the dealer is seat 0


def play_whole_game(seed: int = 0, rules: Rules | None = None, action_seed: int = 0):
    """One random game: returns the final state and, per deal, its dealer, mode, points and
    the scores after it."""
    state = engine.init([seed], rules)
    rng = np.random.default_rng(action_seed)
    deals = []
    while int(state.phase[0]) != OVER:
        before = state.copy()
        engine.step(state, random_actions(state, rng))
        if state.deal_ended[0]:
            deals.append(dict(dealer=int(before.dealer[0]), mode=int(before.mode[0]),
                              points=state.deal_points[0].tolist(), scores=state.scores[0].tolist()))
    return state, deals


# ============================================================================ 1. table, cards, seats

def test_R1_left_of_a_seat_is_the_next_seat_and_play_goes_clockwise():
    """R1: seats 0, 1, 2 clockwise; left of seat i is (i + 1) % 3. R5 puts the playmaker left
    of the dealer and R12 makes each next card come from the left of the previous player."""
    for dealer in range(3):
        state = new_deal([None, None, None], dealer=dealer)
        assert engine.roles(state)[0].tolist() == [(seat - dealer) % 3 for seat in range(3)]
        assert int(state.to_act[0]) == (dealer + 1) % 3  # the playmaker, left of the dealer
    state = engine.init([3])
    rng = np.random.default_rng(3)
    checked = 0
    while int(state.phase[0]) != OVER and checked < 200:
        before = state.copy()
        engine.step(state, random_actions(state, rng))
        if int(before.phase[0]) == PLAY and int((before.trick[0] >= 0).sum()) < 2:
            assert int(state.to_act[0]) == (int(before.to_act[0]) + 1) % 3
            checked += 1
    assert checked == 200


def test_R2_one_52_card_deck_with_ranks_2_lowest_to_A_highest():
    """R2: one deck of 52 cards, four suits, ranks 2 (lowest) ... A (highest)."""
    state = engine.init(np.arange(50))
    for g in range(50):
        every = np.concatenate([state.dealt[g].ravel(), state.talon_cards[g]])
        assert sorted(every.tolist()) == list(range(52))
    # Rank order: in a trick of one suit (no trump), the higher rank always wins (R16).
    ranks = np.array([(a, b, c) for a in range(13) for b in range(13) for c in range(13)
                      if len({a, b, c}) == 3])
    for suit in range(4):
        for mode in (NT, MIN, suit):
            positions = engine.trick_winner_position(suit * 13 + ranks, np.full(len(ranks), mode))
            np.testing.assert_array_equal(positions, ranks.argmax(axis=1))


def test_R3_card_ids_and_notation():
    """R3: rank char then suit char, ranks 23456789TJQKA, suits S C H D;
    id = suit_index * 13 + rank_index: 2S = 0, AS = 12, 2C = 13, ..., AD = 51."""
    assert parse_card("2S") == 0 and parse_card("AS") == 12 and parse_card("2C") == 13
    assert parse_card("AD") == 51 and parse_card("QH") == 2 * 13 + 10 and parse_card("TC") == 13 + 8
    for card in range(52):
        name = card_name(card)
        assert name == "23456789TJQKA"[card % 13] + "SCHD"[card // 13]
        assert parse_card(name) == card
    assert card_name(0) == "2S" and card_name(12) == "AS" and card_name(13) == "2C" and card_name(51) == "AD"
    for bad in ("", "1S", "AX", "ASS", "10H", "S2", None):
        with pytest.raises(ValueError):
            parse_card(bad)
    for bad in (-1, 52):
        with pytest.raises(ValueError):
            card_name(bad)


def test_section10_action_ids_cards_then_modes():
    """Section 10: actions 0..51 are cards (R3), 52..57 choose S, C, H, D, NT, MIN."""
    assert [action_name(a) for a in range(52, 58)] == ["mode " + m for m in ("S", "C", "H", "D", "NT", "MIN")]
    assert action_name(36) == "QH"
    for mode in range(6):
        state = engine.init([11])
        engine.step(state, np.array([52 + mode]))
        assert int(state.mode[0]) == mode
    with pytest.raises(ValueError):
        action_name(58)


# ============================================================================ 2. the game

def test_R4_first_dealer_is_drawn_by_seeded_lot():
    """R4: the first dealer is drawn by lot (seeded): a function of the seed, each seat equally likely."""
    seeds = np.arange(3000)
    first = engine.init(seeds).first_dealer
    np.testing.assert_array_equal(first, engine.init(seeds).first_dealer)
    for seed in (0, 17, 2999):
        assert int(engine.init([seed]).first_dealer[0]) == int(first[seed])
    counts = np.bincount(first, minlength=3)
    assert counts.min() > 850, counts  # 1000 expected each; 850 is > 5 sigma away
    state = engine.init(seeds[:30])
    np.testing.assert_array_equal(state.dealer, state.first_dealer)  # the first deal's dealer


def test_R4_the_deal_passes_to_the_left_for_18_deals():
    """R4: a game is 18 deals; dealer of deal k+1 = left of dealer of deal k."""
    state, deals = play_whole_game(seed=5)
    first = int(engine.init([5]).first_dealer[0])
    assert len(deals) == 18
    assert [d["dealer"] for d in deals] == [(first + k) % 3 for k in range(18)]
    assert Rules().num_deals == 18


def test_R5_roles_playmaker_left_of_dealer_third_right_and_six_times_playmaker():
    """R5: dealer; playmaker left of the dealer; third left of the playmaker (right of the
    dealer). The playmaker chooses the mode, takes the talon, discards and leads the first
    trick. Each player is playmaker 6 times (18 deals)."""
    for dealer in range(3):
        state = new_deal([None, None, None], dealer=dealer, rules=Rules(exchanges=False))
        playmaker, third = (dealer + 1) % 3, (dealer + 2) % 3
        assert (third + 1) % 3 == dealer  # the third is right of the dealer
        assert engine.roles(state)[0, [dealer, playmaker, third]].tolist() == [0, 1, 2]
        assert int(state.phase[0]) == MODE and int(state.to_act[0]) == playmaker
        talon = to_bits(state.talon_cards[0])
        act(state, "H")
        assert int(state.phase[0]) == DISCARD and int(state.to_act[0]) == playmaker
        assert int(state.hands[0, playmaker]) & talon == talon and popcount(state.hands[0, playmaker]) == 20
        discard_talon(state)
        assert int(state.phase[0]) == PLAY and int(state.to_act[0]) == playmaker
        assert int(state.leader[0]) == playmaker
    _, deals = play_whole_game(seed=8)
    playmakers = [(d["dealer"] + 1) % 3 for d in deals]
    assert sorted(np.bincount(playmakers, minlength=3).tolist()) == [6, 6, 6]


def test_R6_final_scores_are_the_totals_of_deal_points():
    """R6: the winner is the player with the highest total after 18 deals; equal totals share
    the win. The engine exposes the totals (``scores`` / ``final_scores``), not a winner: this
    pins that the totals the winner is read from are the sums of the deal points (R25) and
    are kept once the game is over. (No engine function decides winners or ties.)"""
    for seed in range(4):
        state, deals = play_whole_game(seed=seed, action_seed=seed)
        totals = np.sum([d["points"] for d in deals], axis=0)
        assert len(deals) == 18
        np.testing.assert_array_equal(state.final_scores[0], totals)
        np.testing.assert_array_equal(state.scores[0], totals)
        assert bool(state.game_ended[0]) and int(state.phase[0]) == OVER
        engine.step(state, np.array([0]))  # a finished game ignores actions
        np.testing.assert_array_equal(state.scores[0], totals)


# ============================================================================ 3. modes

def test_R7_six_modes_four_trumps_no_trump_and_minimum():
    """R7: trumps S, C, H, D, NT and MIN; NT and MIN have no trumps."""
    assert MODE_NAMES == ("S", "C", "H", "D", "NT", "MIN")
    assert engine.trump_suit(np.arange(6)).tolist() == [0, 1, 2, 3, 4, 4]
    # The ace of the led suit loses to the two of trumps in every trump mode, wins in NT and MIN.
    for mode in range(6):
        for trump in range(4):
            led = (trump + 1) % 4
            trick = np.array([[led * 13 + 12, trump * 13, led * 13 + 3]])
            winner = engine.trick_winner_position(trick, np.array([mode]))[0]
            assert winner == (1 if mode == trump else 0)


def test_R8_a_playmaker_cannot_choose_a_mode_it_has_chosen_before():
    """R8: as playmaker, each player chooses each of the six modes exactly once."""
    state = engine.init([21], Rules(num_deals=4))
    playmaker = seat_of(state, PLAYMAKER_ROLE)
    assert legal(state) == {"mode " + m for m in MODE_NAMES}
    act(state, "H")
    rng = np.random.default_rng(1)
    play_to(state, rng, lambda s: int(s.deal[0]) == 3)
    assert seat_of(state, PLAYMAKER_ROLE) == playmaker and int(state.phase[0]) == MODE
    assert legal(state) == {"mode " + m for m in MODE_NAMES if m != "H"}
    with pytest.raises(engine.IllegalActionError, match="R8"):
        act(state, "H")


def test_R8_each_player_chooses_each_mode_exactly_once_in_18_deals():
    """R8: over 18 deals every player, as playmaker, has chosen all six modes once."""
    for seed in range(3):
        state = engine.init([seed])
        rng = np.random.default_rng(seed)
        chosen = {0: [], 1: [], 2: []}
        while int(state.phase[0]) != OVER:
            if int(state.phase[0]) == MODE:
                assert int(state.to_act[0]) == seat_of(state, PLAYMAKER_ROLE)
            action = random_actions(state, rng)
            if int(state.phase[0]) == MODE:
                chosen[int(state.to_act[0])].append(int(action[0]) - 52)
            engine.step(state, action)
        assert all(sorted(modes) == list(range(6)) for modes in chosen.values()), chosen
        assert state.modes_used[0].tolist() == [0x3F] * 3


# R9 (the first six cards) is pinned in test_observation.py: test_R9_*.


# ============================================================================ 4. dealing

def test_R10_sixteen_cards_each_and_a_talon_of_four_all_distinct():
    """R10: each player 16 cards, 4 cards form the talon; the hands are what was dealt."""
    state = engine.init(np.arange(200))
    for g in range(200):
        assert sorted(np.concatenate([state.dealt[g].ravel(), state.talon_cards[g]]).tolist()) == list(range(52))
        for seat in range(3):
            assert len(set(state.dealt[g, seat].tolist())) == 16
            assert int(state.hands[g, seat]) == to_bits(state.dealt[g, seat])
        assert int(state.talon[g]) == to_bits(state.talon_cards[g])


def test_R10_dealing_order_first_six_are_a_uniform_part_of_the_hand():
    """R10: "first six" are the first six of the player's 16 in dealing order, a uniformly
    shuffled deck dealt in a fixed pattern. The dealing order (``dealt``) must not be a sorted
    or otherwise biased view of the hand: the first six hold 1.5 cards of each suit on average
    and every card is equally likely at each position."""
    state = engine.init(np.arange(6000))
    first_six = state.dealt[:, :, :6].reshape(-1, 6)
    suit_means = np.stack([(first_six // 13 == s).sum(axis=1).mean() for s in range(4)])
    assert np.all(np.abs(suit_means - 1.5) < 0.05), suit_means
    assert abs((first_six % 13).mean() - 6.0) < 0.1
    sorted_rows = (np.diff(state.dealt, axis=2) > 0).all(axis=2)
    assert sorted_rows.mean() < 0.01  # a dealt hand is not listed in id order
    position_counts = np.stack([np.bincount(state.dealt[:, 0, k], minlength=52) for k in (0, 5, 15)])
    assert position_counts.min() > 55 and position_counts.max() < 175  # 6000 / 52 = 115 expected


def _talon_frequencies(rules: Rules, n: int = 5200) -> np.ndarray:
    state = engine.init(np.arange(n), rules)
    return np.bincount(state.talon_cards.ravel(), minlength=52)


def test_option_dealer_builds_talon_R11_deals_52_distinct_cards_and_a_talon_of_four():
    """R11 (option dealer_builds_talon): still 16 + 16 + 16 + 4 distinct cards. The talon
    positions (never first, last or adjacent) are not part of the state; what can be checked
    is that the deal is complete, reproducible and different from the plain deal."""
    rules = Rules(dealer_builds_talon=True)
    state = engine.init(np.arange(500), rules)
    again = engine.init(np.arange(500), rules)
    plain = engine.init(np.arange(500))
    for g in range(500):
        assert sorted(np.concatenate([state.dealt[g].ravel(), state.talon_cards[g]]).tolist()) == list(range(52))
        assert popcount(state.talon[g]) == 4 and all(popcount(h) == 16 for h in state.hands[g])
    np.testing.assert_array_equal(state.dealt, again.dealt)
    np.testing.assert_array_equal(state.talon_cards, again.talon_cards)
    differ = (np.sort(state.talon_cards, axis=1) != np.sort(plain.talon_cards, axis=1)).any(axis=1)
    assert differ.mean() > 0.9  # the option changes which cards make the talon


def test_option_dealer_builds_talon_R11_talon_is_uniform_over_the_cards():
    """R11: every card is equally likely to be in the talon (4/52), as without the option,
    and every seat gets 16 of 52 of each card.

    Ambiguity noted: R11 says the dealer *chooses* the talon positions, but section 10 has no
    action for that choice, so the engine draws them at random (uniform over the allowed
    position sets); whether a strategic dealer choice was meant is not settled by RULES.md."""
    for rules in (Rules(dealer_builds_talon=True), Rules()):
        frequency = _talon_frequencies(rules)  # 400 expected per card, sd ~19
        assert frequency.min() > 300 and frequency.max() < 500, frequency
    state = engine.init(np.arange(3000), Rules(dealer_builds_talon=True))
    per_seat = np.stack([np.bincount(state.dealt[:, s].ravel(), minlength=52) for s in range(3)])
    assert per_seat.min() > 780 and per_seat.max() < 1070  # 3000 * 16 / 52 = 923


# ============================================================================ 6. play of a trick

def _spades_led_deal(mode: str, rules: Rules | None = None) -> engine.State:
    """The section 8 example deal: the third (seat 2) has no spade and holds hearts incl. 3H;
    the dealer (seat 0) has no spade and no heart. Talon discarded, playmaker to lead."""
    state = new_deal(
        ["C:98765432 D:98765432",            # seat 0, dealer: no S, no H
         "S:AKQJT9876 H:AKQJT98",            # seat 1, playmaker
         "H:765432 C:AKQJT D:AKQJT"],        # seat 2, third: no S, hearts with 3H
        "S:5432", rules=rules)
    act(state, mode)
    return discard_talon(state)


def test_example_hearts_trumps_spade_led_must_trump_else_any_card_and_NT_cannot_win():
    """Section 8 example: hearts trumps, spades led; a player with no spade and with 3H must
    play a heart; with no spade and no heart, any card. In NT, a player with no spade plays
    any card and cannot win the trick."""
    state = _spades_led_deal("H")
    act(state, "6S")
    assert legal(state) == names(cards("H:765432"))  # hearts only, 3H among them
    act(state, "3H")
    assert legal(state) == held(state, DEALER) and len(legal(state)) == 16
    act(state, "9D")
    assert int(state.last_trick_winner[0]) == THIRD  # the 3 of trumps takes the trick (R16)

    state = _spades_led_deal("NT")
    act(state, "6S")
    assert legal(state) == held(state, THIRD) and len(legal(state)) == 16
    act(state, "AD")
    assert legal(state) == held(state, DEALER)
    act(state, "9C")
    assert int(state.last_trick_winner[0]) == PLAYMAKER  # 6S wins: no trump in NT


def test_R12_one_card_each_clockwise_from_the_leader_and_the_winner_leads_next():
    """R12: each player plays one card in clockwise order from the leader; section 5 step 6:
    the playmaker leads the first trick, the winner of a trick leads the next."""
    state = _spades_led_deal("NT")
    assert int(state.to_act[0]) == PLAYMAKER and int(state.leader[0]) == PLAYMAKER
    act(state, "6S")
    assert int(state.to_act[0]) == THIRD and state.trick[0].tolist() == [parse_card("6S"), -1, -1]
    act(state, "AD")
    assert int(state.to_act[0]) == DEALER and state.trick[0].tolist() == cards("6S AD") + [-1]
    act(state, "2C")
    assert state.last_trick[0].tolist() == cards("6S AD 2C") and int(state.last_trick_leader[0]) == PLAYMAKER
    assert state.trick[0].tolist() == [-1, -1, -1]
    assert int(state.to_act[0]) == int(state.leader[0]) == PLAYMAKER == int(state.last_trick_winner[0])
    assert state.tricks_won[0].tolist() == [0, 1, 0]
    # Hearts trumps: the third wins with a trump and leads the next trick.
    state = _spades_led_deal("H")
    act(state, "6S", "2H", "2C")
    assert int(state.to_act[0]) == int(state.leader[0]) == THIRD
    act(state, "AC")
    assert int(state.to_act[0]) == DEALER


def _follow_deal(mode: str, rules: Rules | None = None) -> engine.State:
    """Seat 1 (playmaker) holds 9S 5S; the third holds AS KS TS 8S 3S; the dealer QS JS 7S 6S 4S."""
    state = new_deal(
        [None,                                      # seat 0, dealer: S:QJ764 H:543 C:6543 D:6543
         "S:95 H:AKQJT C:AKQJ D:AKQJT",             # seat 1, playmaker
         "S:AKT83 H:9876 C:T987 D:987"],            # seat 2, third
        "S:2 H:2 C:2 D:2", rules=rules)
    assert held(state, DEALER) == names(cards("S:QJ764 H:543 C:6543 D:6543"))
    act(state, mode)
    return discard_talon(state)


@pytest.mark.parametrize("mode", ["S", "H", "NT", "MIN"])
def test_R13_must_follow_suit(mode):
    """R13: a player must follow the led suit if it can (any mode, trumps led or not)."""
    state = _follow_deal(mode)
    act(state, "9S")
    assert legal(state) == names(cards("S:AKT83"))
    with pytest.raises(engine.IllegalActionError, match="R13"):
        act(state, "9H")
    act(state, "3S")
    assert legal(state) == names(cards("S:QJ764"))
    act(state, "4S")
    assert int(state.last_trick_winner[0]) == PLAYMAKER


def _ruff_deal(mode: str = "H", rules: Rules | None = None,
               dealer: str = "H:AQJT976543 D:765432", third: str = "H:K82 C:765432 D:AKQJT98") -> engine.State:
    """Playmaker (seat 1) holds ten spades; the third (seat 2) and the dealer (seat 0) have none.
    By default the third's hearts are KH 8H 2H, the dealer's AH QH JH TH 9H 7H 6H 5H 4H 3H."""
    state = new_deal([dealer, "S:AKQJT98765 C:AKQJT9", third], "S:432 C:8", rules=rules)
    act(state, mode)
    return discard_talon(state)


def test_R14_cannot_follow_must_trump_even_lower_than_the_trump_on_the_table():
    """R14: a player that cannot follow suit must play a trump if it holds one, even a trump
    lower than one already in the trick."""
    state = _ruff_deal("H")
    act(state, "AS")
    assert legal(state) == names(cards("H:K82"))
    with pytest.raises(engine.IllegalActionError, match="R14"):
        act(state, "AD")
    act(state, "KH")
    assert legal(state) == names(cards("H:AQJT976543"))  # lower trumps included, no diamond
    act(state, "3H")
    assert int(state.last_trick_winner[0]) == THIRD


def test_R14_without_trumps_any_card_may_be_played():
    """R14: holding no trump (or in a mode without trumps) a player that cannot follow may
    play any card."""
    for mode in ("NT", "MIN"):
        state = _ruff_deal(mode)
        act(state, "AS")
        assert legal(state) == held(state, THIRD) and len(legal(state)) == 16
        act(state, "2C")
        assert legal(state) == held(state, DEALER)
    state = _ruff_deal("C")  # clubs trumps: the dealer holds no club
    act(state, "AS", "2C")
    assert legal(state) == held(state, DEALER)


def test_R15_heading_is_not_compulsory_by_default():
    """R15: a player following suit may play a low card even when it could beat the table;
    (default options) a player trumping may play any trump."""
    assert not Rules().must_overtake and not Rules().must_overtrump
    state = _follow_deal("NT")
    act(state, "9S")
    assert {"8S", "3S"} <= legal(state)  # lower than 9S, although AS KS TS could beat it
    act(state, "AS")
    state = _ruff_deal("H")
    act(state, "AS", "8H")
    assert {"7H", "3H"} <= legal(state)  # a lower trump than 8H is allowed


def test_R16_highest_trump_else_highest_card_of_the_led_suit_wins():
    """R16: the trick is won by the highest trump in it, or, if it holds none, by the highest
    card of the led suit (off-suit cards never win)."""
    rng = np.random.default_rng(16)
    tricks = np.stack([rng.choice(52, size=3, replace=False) for _ in range(20000)])
    modes = rng.integers(0, 6, size=20000)
    np.testing.assert_array_equal(engine.trick_winner_position(tricks, modes),
                                  reference_trick_winner(tricks, modes))
    state = _ruff_deal("H")
    act(state, "AS", "2H", "AH")  # two trumps: the higher one (the dealer's) wins
    assert int(state.last_trick_winner[0]) == DEALER and state.tricks_won[0].tolist() == [1, 0, 0]


# ---------------------------------------------------------------------------- R15 options

def test_option_must_overtake_following_suit_must_beat_the_best_card_of_the_led_suit():
    """R15 option must_overtake: a player following suit must beat the best card of the led
    suit on the table when it can; if it cannot, any card of the suit."""
    state = _follow_deal("NT", Rules(must_overtake=True))
    act(state, "9S")
    assert legal(state) == names(cards("S:AKT"))
    with pytest.raises(engine.IllegalActionError, match="R15"):
        act(state, "8S")
    act(state, "TS")
    assert legal(state) == names(cards("S:QJ"))  # must beat TS, the best card on the table
    state = _follow_deal("NT", Rules(must_overtake=True))
    act(state, "9S", "AS")
    assert legal(state) == names(cards("S:QJ764"))  # cannot beat AS: any spade


@pytest.mark.parametrize("mode", ["MIN", "S"])
def test_option_must_overtake_applies_in_MIN_and_when_trumps_are_led(mode):
    """Section 9: must_overtake applies in every mode, MIN included, and when trumps are led."""
    state = _follow_deal(mode, Rules(must_overtake=True))
    act(state, "9S")
    assert legal(state) == names(cards("S:AKT"))
    act(state, "KS")
    assert legal(state) == names(cards("S:QJ764"))


def _trumped_trick_deal(mode: str, rules: Rules) -> engine.State:
    """Playmaker (seat 1) holds 9S..4S; the third (seat 2) has no spade but hearts; the dealer
    (seat 0) holds AS KS TS 3S 2S."""
    state = new_deal(
        [None,                                      # seat 0, dealer: S:AKT32 H:65432 C:432 D:432
         "S:987654 C:AKQJ D:AKQJ H:AK",             # seat 1, playmaker
         "H:QJT987 C:98765 D:98765"],               # seat 2, third: no spade
        "S:QJ C:T D:T", rules=rules)
    assert held(state, DEALER) == names(cards("S:AKT32 H:65432 C:432 D:432"))
    act(state, mode)
    return discard_talon(state)


def test_option_must_overtake_not_when_the_trick_is_already_trumped():
    """R15 option must_overtake: "... unless the trick is already trumped"."""
    state = _trumped_trick_deal("H", Rules(must_overtake=True))
    act(state, "9S", "7H")
    assert legal(state) == names(cards("S:AKT32"))  # 3S and 2S allowed: the trick is trumped
    state = _trumped_trick_deal("NT", Rules(must_overtake=True))
    act(state, "9S", "5C")
    assert legal(state) == names(cards("S:AKT"))  # no trump in the trick: must beat 9S
    state = _trumped_trick_deal("H", Rules(must_overtake=True, must_overtrump=True))
    act(state, "9S", "7H")
    assert legal(state) == names(cards("S:AKT32"))


def test_option_must_overtrump_beats_trump_on_table():
    """R15 option must_overtrump: a player trumping must beat a trump already on the table
    when it can; else it still plays a trump (R14); the first trump is free."""
    rules = Rules(must_overtrump=True)
    state = _ruff_deal("H", rules)
    act(state, "AS")
    assert legal(state) == names(cards("H:K82"))  # no trump on the table yet
    act(state, "8H")
    assert legal(state) == names(cards("H:AQJT9"))
    with pytest.raises(engine.IllegalActionError, match="R15"):
        act(state, "7H")
    state = _ruff_deal("H", rules)
    act(state, "AS", "KH")
    assert legal(state) == {"AH"}
    act(state, "AH")
    assert int(state.last_trick_winner[0]) == DEALER


def test_option_must_overtrump_does_not_apply_when_following_suit_or_cannot_beat():
    """R15 option must_overtrump concerns a player that trumps; one following suit is free
    (without must_overtake), and one that cannot beat the trump plays any trump (R14)."""
    rules = Rules(must_overtrump=True)
    state = _trumped_trick_deal("H", rules)
    act(state, "9S", "QH")
    assert legal(state) == names(cards("S:AKT32"))  # the dealer follows suit: any spade
    state = _ruff_deal("H", rules, dealer="H:765432 D:JT98765432", third="H:AKQJT98 C:765432 D:AKQ")
    act(state, "AS", "8H")
    assert legal(state) == names(cards("H:765432"))  # cannot beat 8H: any trump, still a trump


# ============================================================================ 7. exchanges

def _exchange_deal(prev_points, mode="S", hands=(None, None, None), talon=None, dealer=0, deal=1, rules=None):
    state = new_deal(list(hands), talon, dealer=dealer, deal=deal, prev_points=prev_points, rules=rules)
    act(state, mode)
    return state


def _pairs(state) -> list[tuple[int, int, int]]:
    return [(int(g), int(r), int(n)) for g, r, n in
            zip(state.exchange_giver[0], state.exchange_receiver[0], state.exchange_count[0]) if g >= 0]


def test_R17_no_exchange_in_the_first_deal():
    """R17: there are no exchanges in the first deal (even with points set by hand)."""
    state = _exchange_deal((2, -2, 0), deal=0)
    assert int(state.phase[0]) == DISCARD and _pairs(state) == []
    state = engine.init([4])
    act(state, "S")
    assert int(state.phase[0]) == DISCARD


@pytest.mark.parametrize("mode", ["NT", "MIN"])
def test_R17_no_exchange_in_NT_and_MIN_deals(mode):
    """R17: no exchanges in NT and MIN deals, whatever the previous points."""
    state = _exchange_deal((3, -1, -2), mode=mode)
    assert int(state.phase[0]) == DISCARD and int(state.to_act[0]) == PLAYMAKER and _pairs(state) == []
    assert int(state.given[0].sum()) == 0


@pytest.mark.parametrize("mode", ["S", "C", "H", "D"])
def test_R17_exchanges_in_trump_deals_depend_on_the_previous_deal_only(mode):
    """R17: in a trump deal after the first, the exchange depends only on the points of the
    immediately preceding deal (not on the scores)."""
    state = new_deal([None] * 3, deal=5, prev_points=(2, 0, -2), scores=(-20, 7, 13))
    act(state, mode)
    assert int(state.phase[0]) == GIVE and _pairs(state) == [(0, 2, 2)]


def test_R17_the_previous_deal_of_a_real_game_drives_the_exchange():
    """R17, R18: play deal 1 for real, then the next trump deal's exchange follows its points."""
    rng = np.random.default_rng(7)
    for seed in range(12):
        state = engine.init([seed], Rules(num_deals=2))
        play_to(state, rng, lambda s: int(s.deal[0]) == 1)
        np.testing.assert_array_equal(state.prev_points[0], state.deal_points[0])
        act(state, "D")
        expected = reference_exchanges(state.prev_points[0], int(state.dealer[0]))
        assert _pairs(state) == expected
        assert int(state.phase[0]) == (GIVE if expected else DISCARD)


def test_R18_nobody_scored_no_exchange():
    """R18: if nobody scored (all points 0) there is no exchange."""
    state = _exchange_deal((0, 0, 0), mode="H")
    assert int(state.phase[0]) == DISCARD and _pairs(state) == []


def test_R18_givers_scored_positive_receivers_negative_zero_takes_no_part():
    """R18: positive points give, negative points receive, exactly 0 takes no part."""
    for dealer in range(3):
        for points in [(0, 2, -2), (2, 0, -2), (-2, 2, 0), (3, -3, 0)]:
            state = _exchange_deal(points, dealer=dealer)
            pairs = _pairs(state)
            assert {g for g, _, _ in pairs} == {s for s in range(3) if points[s] > 0}
            assert {r for _, r, _ in pairs} == {s for s in range(3) if points[s] < 0}
            zero = points.index(0)
            assert all(zero not in (g, r) for g, r, _ in pairs)


def test_R19_one_giver_one_receiver_exchange_the_givers_points():
    """R19: one giver, one receiver (the other scored 0): the giver's points."""
    assert _pairs(_exchange_deal((0, 4, -4))) == [(1, 2, 4)]
    assert _pairs(_exchange_deal((-5, 0, 5))) == [(2, 0, 5)]


def test_R19_one_giver_two_receivers_each_receivers_negative_points():
    """R19: one giver, two receivers: with each receiver, that receiver's negative points."""
    state = _exchange_deal((5, -1, -4))
    assert sorted(_pairs(state)) == [(0, 1, 1), (0, 2, 4)]  # 1 + 4 = the giver's 5 points


def test_R19_two_givers_one_receiver_each_giver_its_own_points():
    """R19: two givers, one receiver: each giver, its own points."""
    state = _exchange_deal((1, 3, -4))
    assert sorted(_pairs(state)) == [(0, 2, 1), (1, 2, 3)]


@pytest.mark.parametrize("dealer", [0, 1, 2])
def test_R19_R20_all_point_patterns_match_the_rule_book(dealer):
    """R19, R20 over every zero-sum point pattern with |points| <= 13."""
    for a in range(-13, 14):
        for b in range(-13, 14):
            c = -a - b
            if abs(c) > 13:
                continue
            state = _exchange_deal((a, b, c), dealer=dealer)
            assert _pairs(state) == reference_exchanges((a, b, c), dealer), (a, b, c)


def _give_and_track(state, card: str):
    """Give one card (a non-trump: the return is forced) and report (giver, receiver, returned):
    the receiver is the seat whose public exchange count with the giver went up (R22), and
    the hands must show the card going there and the return coming back."""
    giver = int(state.to_act[0])
    before = state.copy()
    act(state, card)
    returned = int(state.last_returned[0])
    counted = state.exchange_done[0, giver] - before.exchange_done[0, giver]
    assert sorted(counted.tolist()) == [0, 0, 1]
    receiver = int(np.argmax(counted))
    other = 3 - giver - receiver
    expected = [int(h) for h in before.hands[0]]
    expected[giver] = expected[giver] & ~(1 << parse_card(card)) | 1 << returned
    expected[receiver] = (expected[receiver] | 1 << parse_card(card)) & ~(1 << returned)
    if int(state.phase[0]) == DISCARD:  # the last exchange: the playmaker takes the talon
        expected[seat_of(state, PLAYMAKER_ROLE)] |= int(state.talon[0])
    assert [int(h) for h in state.hands[0]] == expected
    assert int(before.hands[0, other]) in (int(state.hands[0, other]), int(state.hands[0, other]) & ~int(state.talon[0]))
    return giver, receiver, card_name(returned)


def test_R20_giver_with_larger_target_first_and_pairs_complete_in_turn():
    """R20: the giver with the larger current target goes first; each pair completes all its
    cards before the next pair starts. (Dealer 0: targets playmaker 8, third 5, dealer 3.)"""
    # Two givers: the dealer (+2, target 3) and the playmaker (+1, target 8), receiver the third.
    state = _exchange_deal((2, 1, -3), mode="S",
                           hands=("H:AKQJT98765432 D:AKQ", "C:AKQJT98765432 D:JT9", None))
    assert _pairs(state) == [(1, 2, 1), (0, 2, 2)]
    sequence = [_give_and_track(state, "2C")]
    sequence += [_give_and_track(state, "2H"), _give_and_track(state, "3H")]
    assert [(g, r) for g, r, _ in sequence] == [(1, 2), (0, 2), (0, 2)]
    assert int(state.phase[0]) == DISCARD


def _r21_example() -> engine.State:
    """The R21 example: the receiver (third, seat 2) holds hearts 4, 9, K; the giver (the
    playmaker, seat 1, +2 in the previous deal) holds QH and AH. Spades are trumps."""
    return _exchange_deal(
        (0, 2, -2), mode="S",
        hands=(None,
               "S:AKQJT98765432 H:QA 2H",              # seat 1, giver
               "H:49K C:AKQJT9876 D:AKQJ"))            # seat 2, receiver: hearts 4, 9, K only


def test_example_R21_receiver_with_hearts_4_9_K_returns_KH_for_QH_AH_for_AH_any_for_a_trump():
    """Section 8 example: receiver holds 4H 9H KH; receives QH: returns KH. Receives AH:
    returns AH (same card back). Receives a trump: returns any card it chooses."""
    state = _r21_example()
    assert int(state.phase[0]) == GIVE and int(state.to_act[0]) == PLAYMAKER
    act(state, "QH")
    assert card_name(int(state.last_returned[0])) == "KH"
    assert {"QH", "4H", "9H"} <= held(state, THIRD) and "KH" not in held(state, THIRD)
    assert "KH" in held(state, PLAYMAKER) and "QH" not in held(state, PLAYMAKER)

    state = _r21_example()
    hands = state.hands.copy()
    act(state, "AH")
    assert card_name(int(state.last_returned[0])) == "AH"
    np.testing.assert_array_equal(state.hands, hands)

    state = _r21_example()
    third = held(state, THIRD)
    act(state, "5S")  # a trump
    assert int(state.phase[0]) == RETURN and int(state.to_act[0]) == THIRD
    assert legal(state) == third | {"5S"}  # any card, the trump just received included
    act(state, "6C")
    assert "6C" in held(state, PLAYMAKER) and "5S" in held(state, THIRD)


def test_R21_free_return_after_a_trump_may_be_the_trump_itself():
    """R21 [resolved]: "any card" includes the trump just received."""
    state = _r21_example()
    act(state, "AS")
    assert "AS" in legal(state)
    act(state, "AS")
    assert "AS" in held(state, PLAYMAKER) and int(state.last_returned[0]) == parse_card("AS")
    assert int(state.phase[0]) == GIVE and int(state.to_act[0]) == PLAYMAKER
    assert int(state.exchange_done[0, PLAYMAKER, THIRD]) == 1


def test_R22_hands_stay_16_and_a_received_card_may_be_given_on():
    """R22: hands stay at 16 cards; a card received may be given on later in the same
    exchange phase."""
    # One giver (the dealer, seat 0, +3), receivers the playmaker (-1) and the third (-2).
    state = _exchange_deal((3, -1, -2), mode="D",
                           hands=("C:2345 S:23456789TJQK", "H:AKQ S:A C:6789TJQKA D:AKQ", None))
    assert _pairs(state) == [(0, 1, 1), (0, 2, 2)]
    act(state, "2C")  # the playmaker returns its highest club, AC
    assert card_name(int(state.last_returned[0])) == "AC"
    assert all(popcount(h) == 16 for h in state.hands[0])
    assert "AC" in legal(state) and int(state.to_act[0]) == DEALER
    act(state, "AC")  # given on to the third, which has no club and returns it (R21)
    assert int(state.given[0, DEALER]) >> parse_card("AC") & 1 and int(state.received[0, THIRD]) >> parse_card("AC") & 1
    assert card_name(int(state.last_returned[0])) == "AC"
    assert all(popcount(h) == 16 for h in state.hands[0])
    act(state, "3C")
    assert int(state.phase[0]) == DISCARD
    assert [popcount(h) for h in state.hands[0]] == [16, 20, 16]


def test_R22_exchanges_are_compulsory_exactly_the_R19_number_of_cards():
    """Section 10: exchanges are compulsory, exactly the number of cards R19 gives; the giver
    is asked for each card, and the talon comes only after the last."""
    state = _exchange_deal((0, 5, -5), mode="S", hands=(None, "S:AKQJT98765432 C:AKQ", None))
    for k in range(5):
        assert int(state.phase[0]) == GIVE and int(state.to_act[0]) == PLAYMAKER
        assert int(state.exchange_done[0, PLAYMAKER, THIRD]) == k
        act(state, ["AC", "KC", "QC", "2S", "3S"][k])
        if k >= 3:  # trumps: the receiver chooses its return
            assert int(state.phase[0]) == RETURN
            engine.step(state, np.array([min(np.flatnonzero(engine.legal_action_mask(state)[0]))]))
    assert int(state.exchange_done[0, PLAYMAKER, THIRD]) == 5
    assert int(state.phase[0]) == DISCARD and int(state.to_act[0]) == PLAYMAKER


@pytest.mark.parametrize("mode", ["S", "H"])
def test_option_exchanges_off_no_exchange(mode):
    """Section 9 option exchanges=off: section 7 is off (no exchange after any points)."""
    state = _exchange_deal((3, -1, -2), mode=mode, rules=Rules(exchanges=False))
    assert int(state.phase[0]) == DISCARD and _pairs(state) == []
    assert Rules().exchanges is True
    state = _exchange_deal((3, -1, -2), mode=mode)
    assert int(state.phase[0]) == GIVE


# ---------------------------------------------------------------------------- section 8 exchange examples

def test_example_after_plus2_0_minus2_the_plus2_seat_gives_2_cards_to_the_minus2_seat():
    """Section 8 example: after points dealer' +2, third' 0, playmaker' -2 (roles of the
    previous deal), in the next trump deal the +2 seat gives 2 cards to the -2 seat, one at a
    time. Played for real: deal 1, then deal 2 in spades."""
    state = engine.init([31], Rules(num_deals=2))
    dealer = int(state.dealer[0])
    playmaker, third = (dealer + 1) % 3, (dealer + 2) % 3
    act(state, "C")
    tricks = [0, 0, 0]
    tricks[dealer], tricks[third], tricks[playmaker] = 5, 5, 6  # +2, 0, -2
    finish_deal_with_tricks(state, tricks)
    assert state.deal_points[0, [dealer, third, playmaker]].tolist() == [2, 0, -2]
    assert int(state.deal[0]) == 1 and int(state.dealer[0]) == playmaker
    act(state, "S")
    assert _pairs(state) == [(dealer, playmaker, 2)]
    for k in range(2):
        assert int(state.phase[0]) == GIVE and int(state.to_act[0]) == dealer
        card = next(c for c in engine_hand(state, dealer) if c // 13 != 0)  # a non-trump
        assert _give_and_track(state, card_name(card))[:2] == (dealer, playmaker)  # one at a time
        assert int(state.exchange_done[0, dealer, playmaker]) == k + 1
    assert int(state.phase[0]) == DISCARD


def engine_hand(state, seat):
    return [c for c in range(52) if int(state.hands[0, seat]) >> c & 1]


def test_example_after_plus3_minus1_minus2_giver_serves_the_larger_target_first():
    """Section 8 example: after +3 / -1 / -2, the +3 seat exchanges 1 card with the -1 seat
    and 2 with the -2 seat, the receiver with the larger current target first. Here the +3
    seat is the dealer, the -1 seat the playmaker (target 8), the -2 seat the third (5)."""
    state = _exchange_deal((3, -1, -2), mode="S",
                           hands=("H:AKQJT98765432 D:AKQ", None, None))
    assert _pairs(state) == [(DEALER, PLAYMAKER, 1), (DEALER, THIRD, 2)]
    sequence = [_give_and_track(state, card) for card in ("2H", "3H", "4H")]
    assert [(g, r) for g, r, _ in sequence] == [(DEALER, PLAYMAKER), (DEALER, THIRD), (DEALER, THIRD)]
    assert int(state.phase[0]) == DISCARD
    # Roles swapped: -1 seat is the third (5), -2 seat the playmaker (8): the -2 seat first.
    state = _exchange_deal((3, -2, -1), mode="S", hands=("H:AKQJT98765432 D:AKQ", None, None))
    assert _pairs(state) == [(DEALER, PLAYMAKER, 2), (DEALER, THIRD, 1)]


def test_example_after_plus1_plus2_minus3_giver_with_larger_target_first():
    """Section 8 example: after +1 / +2 / -3 both givers exchange with the -3 seat, the giver
    with the larger current target first, 1 and 2 cards. Here +1 is the playmaker (target 8),
    +2 the dealer (3), -3 the third."""
    state = _exchange_deal((2, 1, -3), mode="S",
                           hands=("H:AKQJT98765432 D:AKQ", "C:AKQJT98765432 D:JT9", None))
    assert _pairs(state) == [(PLAYMAKER, THIRD, 1), (DEALER, THIRD, 2)]
    sequence = [_give_and_track(state, card) for card in ("5C", "2H", "3H")]
    assert [(g, r) for g, r, _ in sequence] == [(PLAYMAKER, THIRD), (DEALER, THIRD), (DEALER, THIRD)]
    assert int(state.exchange_done[0, PLAYMAKER, THIRD]) == 1 and int(state.exchange_done[0, DEALER, THIRD]) == 2


# ============================================================================ 8. scoring

def test_R23_trump_and_NT_targets_dealer_3_third_5_playmaker_8_points_W_minus_Z():
    """R23: targets dealer 3, third 5, playmaker 8; P = W - Z."""
    rng = np.random.default_rng(23)
    for mode in (0, 1, 2, 3, NT):
        for dealer in range(3):
            for _ in range(30):
                won = rng.multinomial(16, [1 / 3] * 3)
                points = engine.deal_points(won[None], np.array([dealer]), np.array([mode]))[0]
                roles = [(s - dealer) % 3 for s in range(3)]
                assert points.tolist() == [won[s] - {0: 3, 1: 8, 2: 5}[roles[s]] for s in range(3)]


def test_R24_MIN_targets_reversed_playmaker_3_third_5_dealer_8_points_Z_minus_W():
    """R24: in MIN deals, targets playmaker 3, third 5, dealer 8, and P = Z - W."""
    rng = np.random.default_rng(24)
    for dealer in range(3):
        for _ in range(30):
            won = rng.multinomial(16, [1 / 3] * 3)
            points = engine.deal_points(won[None], np.array([dealer]), np.array([MIN]))[0]
            roles = [(s - dealer) % 3 for s in range(3)]
            assert points.tolist() == [{0: 8, 1: 3, 2: 5}[roles[s]] - won[s] for s in range(3)]


def test_R25_points_sum_to_zero_and_totals_are_sums_of_points():
    """R25: the points of a deal always sum to 0; a player's total is the sum of its points."""
    every = np.array([(a, b, 16 - a - b) for a in range(17) for b in range(17 - a)])
    for mode in range(6):
        for dealer in range(3):
            points = engine.deal_points(every, np.full(len(every), dealer), np.full(len(every), mode))
            assert (points.astype(int).sum(axis=1) == 0).all()
    state, deals = play_whole_game(seed=25, rules=Rules(num_deals=9))
    running = np.zeros(3, dtype=int)
    for d in deals:
        assert sum(d["points"]) == 0
        running += d["points"]
        assert d["scores"] == running.tolist()
    np.testing.assert_array_equal(state.final_scores[0], running)


def test_R23_R24_real_deals_score_with_the_rule_book_formula():
    """R23, R24 on real deals: the points of every deal of random games follow the formula."""
    for seed in range(3):
        state = engine.init([seed])
        rng = np.random.default_rng(seed)
        while int(state.phase[0]) != OVER:
            before = state.copy()
            engine.step(state, random_actions(state, rng))
            if state.deal_ended[0]:
                won = before.tricks_won[0].copy()
                won[int(state.last_trick_winner[0])] += 1
                assert state.deal_points[0].tolist() == reference_points(won, int(before.dealer[0]), int(before.mode[0]))


def test_example_trump_deal_tricks_dealer_5_third_4_playmaker_7():
    """Section 8 example: trump deal, tricks dealer 5, third 4, playmaker 7: points dealer +2,
    third -1, playmaker -1. (engine.deal_points and a real deal.)"""
    won = np.array([[5, 7, 4]])  # dealer 0, playmaker 1, third 2
    assert engine.deal_points(won, np.array([0]), np.array([2])).tolist() == [[2, -1, -1]]
    state = new_deal([None] * 3, dealer=1, rules=Rules(num_deals=1))  # dealer 1, playmaker 2, third 0
    act(state, "H")
    finish_deal_with_tricks(state, [4, 5, 7])
    assert state.deal_points[0].tolist() == [-1, 2, -1]
    assert state.final_scores[0].tolist() == [-1, 2, -1] and int(state.phase[0]) == OVER


def test_example_MIN_deal_tricks_playmaker_5_third_5_dealer_6():
    """Section 8 example: MIN deal, tricks playmaker 5, third 5, dealer 6: points playmaker -2,
    third 0, dealer +2."""
    won = np.array([[6, 5, 5]])
    assert engine.deal_points(won, np.array([0]), np.array([MIN])).tolist() == [[2, -2, 0]]
    state = new_deal([None] * 3, dealer=2, rules=Rules(num_deals=1))  # dealer 2, playmaker 0, third 1
    act(state, "MIN")
    finish_deal_with_tricks(state, [5, 5, 6])
    assert state.deal_points[0].tolist() == [-2, 0, 2]
    assert state.scores[0].tolist() == [-2, 0, 2]


# ============================================================================ 9. options

def test_option_num_deals_game_has_that_many_deals():
    """Section 9 num_deals (1 to 18): deals per game; R8 still holds per player."""
    for n in (1, 2, 7):
        state, deals = play_whole_game(seed=n, rules=Rules(num_deals=n))
        assert len(deals) == n and int(state.deal[0]) == n and int(state.phase[0]) == OVER
        assert all(bin(int(m)).count("1") == sum((d["dealer"] + 1) % 3 == s for d in deals)
                   for s, m in enumerate(state.modes_used[0]))
    for bad in (0, 19, -1, 2.0, True, "3"):
        with pytest.raises(ValueError, match="num_deals"):
            Rules(num_deals=bad)


def test_option_defaults_are_the_rule_books():
    """Section 9 defaults: 18 deals, exchanges on, the three other options off."""
    assert Rules().to_dict() == {"num_deals": 18, "exchanges": True, "must_overtake": False,
                                 "must_overtrump": False, "dealer_builds_talon": False}
    assert Rules.from_dict({}) == Rules() and Rules.from_dict(None) == Rules()
    assert Rules.from_strings(["num_deals=3", "exchanges=false"]) == Rules(num_deals=3, exchanges=False)


# ============================================================================ section 10: decisions

def test_section10_single_legal_decisions_are_still_asked_and_discards_are_four_decisions():
    """Section 10: every decision is asked even when only one action is legal (a playmaker's
    last mode, the last card of a deal); the four discards are four single-card decisions."""
    state = engine.init([40])
    rng = np.random.default_rng(40)
    last_modes = last_cards = 0
    discards_in_deal = 0
    while int(state.phase[0]) != OVER:
        mask = engine.legal_action_mask(state)[0]
        phase = int(state.phase[0])
        if phase == MODE and mask.sum() == 1:
            last_modes += 1
        if phase == PLAY and popcount(state.hands[0, state.to_act[0]]) == 1:
            assert mask.sum() == 1
            last_cards += 1
        if phase == DISCARD:
            discards_in_deal += 1
            assert popcount(state.hands[0, state.to_act[0]]) == 20 - (discards_in_deal - 1)
        engine.step(state, random_actions(state, rng))
        if state.deal_ended[0]:
            assert discards_in_deal == 4
            discards_in_deal = 0
    assert last_modes == 3  # each playmaker's sixth mode
    assert last_cards == 18 * 3


# ============================================================================ errors

def _snapshot(state):
    return state.copy()


@pytest.mark.parametrize("situation", ["mode", "give", "return", "discard", "play"])
def test_illegal_action_raises_naming_action_decision_and_legal_actions_state_unchanged(situation):
    """An illegal action raises engine.IllegalActionError (a ValueError) naming the action,
    the decision and the legal actions; the state is left unchanged."""
    if situation == "mode":
        state = new_deal([None] * 3, modes_used=(0, 0b000100, 0))  # seat 1 chose H before
        bad, decision = action_of("H"), "mode"
    elif situation in ("give", "return"):
        state = _r21_example()
        bad, decision = parse_card("4H"), "exchange_give"  # the receiver's card
        if situation == "return":
            act(state, "AS")
            bad, decision = action_of("MIN"), "exchange_return"
    elif situation == "discard":
        state = new_deal([None] * 3)
        act(state, "S")
        bad, decision = int(state.dealt[0, THIRD, 0]), "discard"
    else:
        state = _follow_deal("NT")
        act(state, "9S")
        bad, decision = parse_card("9H"), "play"  # the third must follow spades
    before = _snapshot(state)
    expected_legal = legal(state)
    with pytest.raises(engine.IllegalActionError) as info:
        engine.step(state, np.array([bad]))
    assert isinstance(info.value, ValueError)
    message = str(info.value)
    assert str(bad) in message and action_name(bad) in message
    assert f"'{decision}'" in message
    listed = message.split("legal actions:")[1]
    for name in expected_legal:
        assert name in listed
    assert_states_equal(state, before)


def test_illegal_action_in_one_game_of_a_batch_changes_no_game():
    """step validates every action first: one illegal action leaves the whole batch unchanged."""
    state = engine.init(np.arange(6))
    rng = np.random.default_rng(0)
    for _ in range(30):
        engine.step(state, random_actions(state, rng))
    before = state.copy()
    actions = random_actions(state, rng)
    mask = engine.legal_action_mask(state)
    actions[4] = int(np.flatnonzero(~mask[4])[0])
    with pytest.raises(engine.IllegalActionError, match="game 4"):
        engine.step(state, actions)
    assert_states_equal(state, before)
    for bad in (-1, 58):
        actions[4] = bad
        with pytest.raises(engine.IllegalActionError, match="out of range"):
            engine.step(state, actions)
        assert_states_equal(state, before)


def test_out_of_range_action_ids_are_illegal_even_when_they_alias_a_legal_card():
    """Section 10: action ids are 0..57; -1, 58 and ids that are 0 modulo 64 (which would
    alias 2S, legal here, in a 64-bit mask) are refused, state unchanged."""
    state = new_deal([None, "S:23456789TJQKA C:234", None])  # the playmaker holds 2S
    act(state, "NT")
    assert "2S" in legal(state)
    before = state.copy()
    for bad in (-1, 58, 63, 64, 128, -64, 2**40):
        with pytest.raises(engine.IllegalActionError, match="out of range"):
            engine.step(state, np.array([bad], dtype=np.int64))
        assert_states_equal(state, before)


def test_step_rejects_actions_of_the_wrong_shape_or_type():
    state = engine.init([0, 1])
    before = state.copy()
    for bad in (np.array([52]), np.array([52, 52, 52]), np.array([52.0, 52.0])):
        with pytest.raises(ValueError, match="actions"):
            engine.step(state, bad)
    assert_states_equal(state, before)


def test_bad_rule_options_raise_value_error_naming_the_problem():
    """Section 9: options are validated; errors name the option."""
    with pytest.raises(ValueError, match="num_deals"):
        Rules(num_deals=0)
    with pytest.raises(ValueError, match="nope"):
        Rules.from_dict({"nope": 1})
    with pytest.raises(ValueError, match="known options"):
        Rules.from_dict({"nope": 1})
    for name in ("exchanges", "must_overtake", "must_overtrump", "dealer_builds_talon"):
        for bad in (1, 0, "true", None):
            with pytest.raises(ValueError, match=name):
                Rules(**{name: bad})
    with pytest.raises(ValueError, match="must_overtake"):
        Rules.from_strings(["must_overtake=maybe"])
    with pytest.raises(ValueError, match="NAME=VALUE"):
        Rules.from_strings(["exchanges"])


def test_bad_seeds_raise_value_error():
    for bad in ([], [-1], [[1, 2]], [1.5]):
        with pytest.raises(ValueError, match="seeds"):
            engine.init(bad)
    with pytest.raises(ValueError, match="seed"):
        engine.game_seeds(-3, 4)
