"""Property tests over thousands of random games: each hypothesis example is a batch of
16-40 games with random rule options and seeds, played to the end with uniformly random
legal actions, and checked at every step against rules written from RULES.md
(``conftest.reference_*``)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import (
    ALL_CARDS,
    ExchangeTracker,
    bool_cards,
    random_play,
    reference_legal_mask,
    reference_points,
    reference_trick_winner,
    rules_strategy,
    seed_strategy,
)
from sergeant_major_env import Rules, engine
from sergeant_major_env.cards import MODE_ACTION_OFFSET
from sergeant_major_env.engine import DISCARD, GIVE, MODE, OVER, PLAY, RETURN
from sergeant_major_env.observation import OBSERVATION_SIZE, SEGMENTS, observe

BATCH = st.integers(16, 40)
FAST = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), database=None)
popcount = np.bitwise_count


def _start(seed, batch, rules):
    return engine.init(engine.game_seeds(seed, batch), rules), np.random.default_rng(seed)


@FAST
@given(seed=seed_strategy, batch=BATCH, rules=rules_strategy)
def test_52_cards_are_conserved_at_every_step(seed, batch, rules):
    """R2, R10, section 5: at every step the 52 cards are exactly partitioned into the three
    hands, the talon (until it is turned up and taken), the discards and the played cards
    (the current trick is part of the played cards, each card in its player's set). Hand
    sizes follow the phase: 16 each (R10, R22), 15/17 while a card given awaits its return,
    the playmaker's 20 less its discards, then 16 less the cards played."""
    state, rng = _start(seed, batch, rules)
    rows = np.arange(batch)
    for _, _, s in random_play(state, rng):
        talon_hidden = np.isin(s.phase, (MODE, GIVE, RETURN))
        parts = np.stack([s.hands[:, 0], s.hands[:, 1], s.hands[:, 2],
                          np.where(talon_hidden, s.talon, np.uint64(0)), s.discards,
                          s.played[:, 0], s.played[:, 1], s.played[:, 2]], axis=1)
        assert (popcount(parts).sum(axis=1) == 52).all()
        assert (np.bitwise_or.reduce(parts, axis=1) == np.uint64(ALL_CARDS)).all()
        playmaker = (s.dealer + 1) % 3
        shown = ~talon_hidden
        taken = s.hands[rows, playmaker] | s.discards | s.played[rows, playmaker]
        assert ((s.talon & ~taken)[shown] == 0).all(), "the talon went to the playmaker"
        sizes = popcount(s.hands).astype(int)
        expected = np.full((batch, 3), 16)
        returning = s.phase == RETURN
        pair = np.minimum(s.exchange_pair, 1)
        giver, receiver = s.exchange_giver[rows, pair], s.exchange_receiver[rows, pair]
        expected[rows[returning], giver[returning]] = 15
        expected[rows[returning], receiver[returning]] = 17
        discarding = s.phase == DISCARD
        expected[rows[discarding], playmaker[discarding]] = 20 - popcount(s.discards[discarding])
        playing = s.phase == PLAY
        expected[playing] = 16 - popcount(s.played[playing])
        expected[s.phase == OVER] = 0
        np.testing.assert_array_equal(sizes, expected)
        assert (popcount(s.discards)[np.isin(s.phase, (PLAY, OVER))] == 4).all()
        # The current trick: card k was played by seat (leader + k) % 3.
        for k in range(3):
            on = s.trick[:, k] >= 0
            by = (s.leader[on] + k) % 3
            bits = np.uint64(1) << s.trick[on, k].astype(np.uint64)
            assert ((s.played[rows[on], by] & bits) != 0).all()
        # Completed tricks: the tricks won are the cards played outside the current trick / 3.
        in_trick = (s.trick >= 0).sum(axis=1)
        completed = (popcount(s.played).sum(axis=1) - in_trick) // 3
        running = s.phase != OVER
        np.testing.assert_array_equal(s.tricks_won.sum(axis=1)[running], completed[running])


@FAST
@given(seed=seed_strategy, batch=BATCH, rules=rules_strategy)
def test_every_mask_is_the_rule_books_and_never_empty_while_a_game_runs(seed, batch, rules):
    """R8, R13-R15, R21, section 10: the legal action mask equals the one computed from the
    rule book (follow suit from the hands, trump, the must_overtake / must_overtrump options,
    any held card for gives, free returns and discards, an unused mode); it is never empty
    while a game runs and all false once it is over; every action taken was legal."""
    state, rng = _start(seed, batch, rules)
    plays = 0
    for before, actions, s in random_play(state, rng):
        mask = engine.legal_action_mask(before)
        np.testing.assert_array_equal(mask, reference_legal_mask(before))
        running = before.phase != OVER
        assert mask[running].any(axis=1).all()
        assert not mask[~running].any()
        assert mask[np.flatnonzero(running), actions[running]].all()
        plays += int((before.phase == PLAY).sum())
    assert not engine.legal_action_mask(state).any()
    assert plays == batch * 48 * rules.num_deals


@FAST
@given(seed=seed_strategy, batch=BATCH, rules=rules_strategy)
def test_followed_suit_independently_of_the_mask(seed, batch, rules):
    """R13, R14 checked from the hands alone at each card played: a card off the led suit
    means the player held none of it; a non-trump off the led suit in a trump mode means
    it held no trump either."""
    state, rng = _start(seed, batch, rules)
    checked = 0
    for before, actions, _ in random_play(state, rng):
        playing = np.flatnonzero((before.phase == PLAY) & (before.trick[:, 0] >= 0))
        if playing.size == 0:
            continue
        hand = bool_cards(before.hands[playing, before.to_act[playing]])
        card = actions[playing]
        assert hand[np.arange(playing.size), card].all(), "a card not held was played"
        led_suit = before.trick[playing, 0] // 13
        suits = np.arange(52) // 13
        held_led = (hand & (suits == led_suit[:, None])).any(axis=1)
        mode = before.mode[playing]
        held_trump = (hand & (suits == mode[:, None]) & (mode[:, None] < 4)).any(axis=1)
        off_suit = card // 13 != led_suit
        assert not (off_suit & held_led).any(), "R13: did not follow suit"
        not_trump = (card // 13 != mode) | (mode >= 4)
        assert not (off_suit & not_trump & held_trump).any(), "R14: did not trump"
        checked += playing.size
    assert checked == batch * 32 * rules.num_deals  # the 2nd and 3rd card of each of 16 tricks


@pytest.mark.slow
@FAST
@given(seed=seed_strategy, batch=BATCH, rules=rules_strategy)
def test_16_tricks_per_deal_winners_points_and_scores(seed, batch, rules):
    """R16: each completed trick goes to the rule book's winner, who leads next; every deal
    has 16 tricks (48 cards played); R23-R25: the deal's points follow the formula and sum to
    0, the scores are the running sums and sum to 0, and the game ends after num_deals deals
    with final_scores = scores (R6)."""
    state, rng = _start(seed, batch, rules)
    rows = np.arange(batch)
    tricks_in_deal = np.zeros(batch, dtype=int)
    points_sum = np.zeros((batch, 3), dtype=int)
    deals = np.zeros(batch, dtype=int)
    for before, actions, s in random_play(state, rng):
        done = np.flatnonzero((before.phase == PLAY) & ((before.trick >= 0).sum(axis=1) == 2))
        if done.size:
            trick = before.trick[done].copy()
            trick[:, 2] = actions[done]
            winner = (before.leader[done] + reference_trick_winner(trick, before.mode[done])) % 3
            np.testing.assert_array_equal(s.last_trick[done], trick)
            np.testing.assert_array_equal(s.last_trick_winner[done], winner)
            tricks_in_deal[done] += 1
        not_done = np.setdiff1d(rows, done)
        assert (s.last_trick_winner[not_done] == -1).all()
        ended = np.flatnonzero(s.deal_ended)
        np.testing.assert_array_equal(np.sort(ended), np.sort(done[tricks_in_deal[done] == 16]))
        for g in ended:
            won = before.tricks_won[g].astype(int)
            won[s.last_trick_winner[g]] += 1
            assert won.sum() == 16
            assert s.deal_points[g].tolist() == reference_points(won, int(before.dealer[g]), int(before.mode[g]))
        if ended.size:
            assert (s.deal_points[ended].astype(int).sum(axis=1) == 0).all()  # R25
            points_sum[ended] += s.deal_points[ended]
            deals[ended] += 1
            tricks_in_deal[ended] = 0
            continuing = ended[s.phase[ended] != OVER]
            # After a deal: the winner's lead is over, the next deal starts left of the dealer (R4).
            np.testing.assert_array_equal(s.dealer[continuing], (before.dealer[continuing] + 1) % 3)
            assert (s.phase[continuing] == MODE).all() and (s.tricks_won[continuing] == 0).all()
        completed_not_ended = np.setdiff1d(done, ended)
        np.testing.assert_array_equal(s.leader[completed_not_ended], s.last_trick_winner[completed_not_ended])
        np.testing.assert_array_equal(s.to_act[completed_not_ended], s.last_trick_winner[completed_not_ended])
        np.testing.assert_array_equal(s.scores, points_sum)
        assert (s.scores.astype(int).sum(axis=1) == 0).all()
    assert (deals == rules.num_deals).all()
    np.testing.assert_array_equal(state.final_scores, points_sum)
    assert (state.phase == OVER).all() and (state.to_act == -1).all()


@FAST
@given(seed=seed_strategy, batch=BATCH, rules=rules_strategy)
def test_exchanges_follow_R17_to_R22_and_hands_stay_16(seed, batch, rules):
    """R17-R22 step by step (conftest.ExchangeTracker): exchanges only in trump deals after
    the first, planned from the previous deal's points; the right giver acts in R20 order;
    non-trumps are returned forcibly with the highest card of the suit; after a trump the
    receiver chooses; hands are 16 after each card; the talon comes after the last card."""
    state, rng = _start(seed, batch, rules)
    tracker = ExchangeTracker()
    for before, actions, s in random_play(state, rng):
        tracker.check(before, actions, s)
    if not rules.exchanges or rules.num_deals == 1:
        assert tracker.deals_with_exchanges == 0


def test_exchange_properties_were_exercised():
    """The random games of the exchange property do exercise exchanges, trump gives included."""
    state, rng = _start(123, 48, Rules(num_deals=6))
    tracker = ExchangeTracker()
    for before, actions, s in random_play(state, rng):
        tracker.check(before, actions, s)
    assert tracker.deals_with_exchanges > 50 and tracker.cards_exchanged > 200 and tracker.trump_gives > 20


@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(seed=seed_strategy, batch=BATCH, rules=rules_strategy.map(lambda r: Rules(**{**r.to_dict(), "num_deals": 18})))
def test_R8_each_mode_once_per_playmaker(seed, batch, rules):
    """R8, R5: over 18 deals each seat is playmaker 6 times and chooses each mode exactly once;
    no mode is ever offered twice; the playmaker (left of the dealer) is the one asked."""
    state, rng = _start(seed, batch, rules)
    chosen = np.zeros((batch, 3, 6), dtype=int)
    for before, actions, _ in random_play(state, rng):
        choosing = np.flatnonzero(before.phase == MODE)
        seat = before.to_act[choosing]
        np.testing.assert_array_equal(seat, (before.dealer[choosing] + 1) % 3)
        np.add.at(chosen, (choosing, seat, actions[choosing] - MODE_ACTION_OFFSET), 1)
    assert (chosen == 1).all()
    assert (state.modes_used == 0x3F).all()


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(seed=seed_strategy, batch=st.integers(8, 24), rules=rules_strategy.map(lambda r: Rules(**{**r.to_dict(), "num_deals": min(r.num_deals, 4)})))
def test_observation_shape_dtype_and_values(seed, batch, rules):
    """observe(state, seat): float32[B, OBSERVATION_SIZE], finite, card planes 0/1, for every
    seat at every step (seat given as an int or per game)."""
    state, rng = _start(seed, batch, rules)
    card_planes = slice(0, SEGMENTS["exchange_received"].stop)
    for _, _, s in random_play(state, rng):
        for seat in (0, 1, 2, rng.integers(0, 3, size=batch)):
            obs = observe(s, seat)
            assert obs.shape == (batch, OBSERVATION_SIZE) and obs.dtype == np.float32
            assert np.isfinite(obs).all()
            assert np.isin(obs[:, card_planes], (0.0, 1.0)).all()
            assert (np.abs(obs) <= 20).all()
