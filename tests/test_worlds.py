"""The hidden-card sampler (sergeant_major_env.worlds) and the voids it reads (State.shown_out).

Worlds must never contradict what the seat to act knows (RULES.md R9, R13-R15, R21, R22,
section 5), must not depend on anything it does not know, and must be uniform among the
consistent deals (checked against exact enumeration on small positions).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import rules_strategy, seed_strategy
from sergeant_major_env import Rules, engine
from sergeant_major_env.cards import SUIT_MASKS, bit, card_list, count, random_member
from sergeant_major_env.engine import DISCARD, MODE, OVER, PLAY
from sergeant_major_env.worlds import knowledge, sample_worlds

ALL = np.uint64((1 << 52) - 1)
FAST = settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck), database=None)
PUBLIC_FIELDS = ("deal", "dealer", "phase", "to_act", "mode", "modes_used", "trick", "past_tricks",
                 "trick_leaders", "card_trick", "leader", "tricks_won", "played", "shown_out", "prev_points", "scores",
                 "exchange_giver", "exchange_receiver", "exchange_due", "exchange_pair", "exchange_done")


def _states_along_games(seed: int, batch: int, rules: Rules, every: int = 7):
    """(state, live games) at every ``every``-th step of random games, ending at game over."""
    state = engine.init(engine.game_seeds(seed, batch), rules)
    rng = np.random.default_rng(seed)
    for step in range(100_000):
        live = np.flatnonzero(state.phase != OVER)
        if live.size == 0:
            return
        if step % every == 0:
            yield state, live
        engine.step(state, random_member(engine.legal_bits(state), rng))


@FAST
@given(seed=seed_strategy, rules=rules_strategy)
def test_worlds_keep_everything_the_seat_to_act_knows(seed, rules):
    """Worlds conserve the 52 cards, keep the seat's own hand (its first six during its mode
    choice, R9), every public field, the hand sizes, the shown talon and its own discards,
    the cards it handed over (R21), and never give a seat a card it showed it lacks (R13-R15)."""
    rng = np.random.default_rng(seed)
    worlds = 3
    for state, live in _states_along_games(seed, 12, rules):
        w = sample_worlds(state, live, worlds, rng)
        assert_worlds_keep_what_the_seat_knows(state, live, w, worlds)


def assert_worlds_keep_what_the_seat_knows(state, live: np.ndarray, w, worlds: int) -> None:
    """``w`` (``worlds`` worlds per game of ``live``, row ``i * worlds + k``) keeps everything the
    seat to act knows in ``state``: the 52 cards, its own hand (its first six during its mode
    choice, R9), every public field, the hand sizes, the shown talon and its own discards, the
    cards it handed over (R21), no card a seat showed it lacks (R13-R15), the same choice."""
    game = np.repeat(live, worlds)
    rows = np.arange(game.size)
    seat = state.to_act[game]
    for name in PUBLIC_FIELDS:
        np.testing.assert_array_equal(getattr(w, name), getattr(state, name)[game], err_msg=name)
    talon_hidden = w.phase < DISCARD
    every_card = (np.bitwise_or.reduce(w.hands, axis=1) | np.bitwise_or.reduce(w.played, axis=1)
                  | w.discards | np.where(talon_hidden, w.talon, 0))
    total = count(w.hands).sum(1) + count(w.played).sum(1) + count(w.discards) + 4 * talon_hidden
    assert (every_card == ALL).all() and (total == 52).all()
    np.testing.assert_array_equal(count(w.hands), count(state.hands[game]))
    choosing = state.phase[game] == MODE
    own = np.where(choosing, state.first_six[game], state.hands[game, seat])
    assert ((w.hands[rows, seat] & own) == own).all()
    np.testing.assert_array_equal(w.hands[rows, seat][~choosing], own[~choosing])
    shown = ~talon_hidden
    np.testing.assert_array_equal(w.talon[shown], state.talon[game][shown])
    playmaker = (state.dealer[game] + 1) % 3
    own_discards = shown & (seat == playmaker)
    np.testing.assert_array_equal(w.discards[own_discards], state.discards[game][own_discards])
    assert (w.hands & w.shown_out == 0).all()
    known = knowledge(state, live)
    fixed = known["fixed"][np.repeat(np.arange(live.size), worlds)]
    assert ((w.hands & fixed) == fixed).all()
    # The seat to act faces the same choice in every world.
    same = ~choosing
    np.testing.assert_array_equal(engine.legal_bits(w)[same], engine.legal_bits(state)[game][same])


@FAST
@given(seed=seed_strategy, rules=rules_strategy)
def test_the_real_deal_is_always_one_of_the_possible_worlds(seed, rules):
    """The knowledge is never wrong: the real hands respect every constraint the sampler uses."""
    for state, live in _states_along_games(seed, 12, rules, every=3):
        known = knowledge(state, live)
        seat, left, right = known["seat"], known["left"], known["right"]
        rows = np.arange(live.size)
        hands = state.hands[live]
        for bin_, other in ((0, left), (1, right)):
            rest = hands[rows, other] & ~known["fixed"][rows, other]
            assert (rest & ~known["allowed"][:, bin_] == 0).all()
            assert (count(rest) == known["capacity"][:, bin_]).all()
        assert (count(known["unseen"]) == known["capacity"].sum(axis=1)).all()
        assert (state.shown_out & state.hands == 0).all()


@FAST
@given(seed=seed_strategy, rules=rules_strategy)
def test_worlds_do_not_depend_on_cards_the_seat_cannot_see(seed, rules):
    """A state that differs from the real one only in what the seat to act cannot see (one of
    its own worlds) gives exactly the same worlds for the same random numbers."""
    rng = np.random.default_rng(seed)
    for state, live in _states_along_games(seed, 8, rules, every=11):
        twin = sample_worlds(state, live, 1, rng)  # one alternative per game, seeds redrawn too
        draw = int(rng.integers(2**32))
        a = sample_worlds(state, live, 4, np.random.default_rng(draw))
        b = sample_worlds(twin, np.arange(live.size), 4, np.random.default_rng(draw))
        for name, value in a.arrays().items():
            np.testing.assert_array_equal(value, getattr(b, name), err_msg=name)


@FAST
@given(seed=seed_strategy, rules=rules_strategy)
def test_shown_out_marks_voids_when_a_seat_does_not_follow_suit(seed, rules):
    """R13, R14: a seat that plays off the led suit is void in it; one that also does not trump
    (trump modes) holds no trump. And no card a seat holds is ever marked (also with R15)."""
    state = engine.init(engine.game_seeds(seed, 16), rules)
    rng = np.random.default_rng(seed)
    while (state.phase != OVER).any():
        before = state.copy()
        actions = random_member(engine.legal_bits(state), rng)
        engine.step(state, actions)
        playing = (before.phase == PLAY) & (before.trick[:, 0] >= 0)
        for g in np.flatnonzero(playing):
            # The shown set of a seat, after the trick completes or not, still holds.
            seat, card, led = int(before.to_act[g]), int(actions[g]), int(before.trick[g, 0])
            if state.deal[g] != before.deal[g]:
                continue  # the deal ended: shown_out starts afresh
            shown = int(state.shown_out[g, seat])
            if card // 13 != led // 13:
                assert shown & int(SUIT_MASKS[led // 13]) == int(SUIT_MASKS[led // 13])
                mode = int(before.mode[g])
                if mode < 4 and card // 13 != mode:
                    assert shown & int(SUIT_MASKS[mode]) == int(SUIT_MASKS[mode])
        assert (state.shown_out & state.hands == 0).all()


def _shown_out_from_history(state: engine.State) -> np.ndarray:
    """The reference: walk every trick of the deal (completed ones and the current one) and, for
    each card played after the lead, rule out what RULES.md says its player lacked then: a card
    off the led suit rules out the led suit (R13);
    in a trump deal a card off the led suit and off trumps rules out trumps too (R14); with
    must_overtake a card of the led suit below the best one rules out the led-suit cards above
    that best one (R15), and with must_overtrump a trump below a trump on the table (trumps not
    led) rules out the trumps above it."""
    shown = np.zeros((state.batch_size, 3), dtype=np.uint64)
    rules = state.rules
    for g in range(state.batch_size):
        tricks = [(int(state.trick_leaders[g, t]), [int(c) for c in state.past_tricks[g, t]])
                  for t in range(16) if state.past_tricks[g, t, 0] >= 0]
        if state.leader[g] >= 0:
            tricks.append((int(state.leader[g]), [int(c) for c in state.trick[g]]))
        mode = int(state.mode[g])
        trump = mode if mode < 4 else -1
        for leader, cards in tricks:
            led = cards[0] // 13
            for position in (1, 2):
                card = cards[position]
                if card < 0:
                    break
                seat, table = (leader + position) % 3, cards[:position]
                out = 0
                if card // 13 != led:
                    out |= int(SUIT_MASKS[led])
                    if trump >= 0 and card // 13 != trump and led != trump:
                        out |= int(SUIT_MASKS[trump])
                trumped = trump >= 0 and led != trump and any(c // 13 == trump for c in table)
                best_led = max(c for c in table if c // 13 == led)
                if rules.must_overtake and not trumped and not (card // 13 == led and card > best_led):
                    out |= int(SUIT_MASKS[led]) & ~((2 << best_led) - 1)
                table_trumps = [c for c in table if c // 13 == trump]
                if rules.must_overtrump and trump >= 0 and led != trump and table_trumps \
                        and not (card // 13 == trump and card > max(table_trumps)) and card // 13 != led:
                    out |= int(SUIT_MASKS[trump]) & ~((2 << max(table_trumps)) - 1)
                shown[g, seat] |= np.uint64(out)
    return shown


@FAST
@given(seed=seed_strategy, rules=rules_strategy)
def test_shown_out_kept_by_the_engine_equals_a_walk_over_the_deals_tricks(seed, rules):
    """R13-R15: State.shown_out, updated card by card in step, is exactly what the deal's
    trick history shows (recomputed here from the tricks, independently of play_classes)."""
    for state, live in _states_along_games(seed, 8, rules, every=5):
        np.testing.assert_array_equal(state.shown_out, _shown_out_from_history(state))


def _late_position(seed: int, tricks_done: int, seat_is_playmaker: bool, rules: Rules):
    """A game in play with ``tricks_done`` tricks done where some seat has shown a void."""
    for s in range(seed, seed + 2000):
        state = engine.init([s], rules)
        rng = np.random.default_rng(s)
        while state.phase[0] != OVER and not (state.phase[0] == PLAY and state.tricks_won[0].sum() == tricks_done
                                              and state.trick[0, 0] < 0):
            engine.step(state, random_member(engine.legal_bits(state), rng))
        if state.phase[0] != PLAY:
            continue
        playmaker = (int(state.dealer[0]) + 1) % 3
        if (int(state.to_act[0]) == playmaker) == seat_is_playmaker and state.shown_out[0].any():
            return state
    raise AssertionError("no such position found")


def _exact_distribution(state: engine.State) -> dict[tuple[int, int, int], float]:
    """Every consistent split of the unseen cards (left hand, right hand, pile), equally likely."""
    known = knowledge(state, np.array([0]))
    unseen = card_list(int(known["unseen"][0]))
    cap = known["capacity"][0]
    allowed = [set(card_list(int(known["allowed"][0, b]))) for b in range(3)]
    outcomes = []
    for left in itertools.combinations(unseen, int(cap[0])):
        rest = [c for c in unseen if c not in left]
        for right in itertools.combinations(rest, int(cap[1])):
            pile = [c for c in rest if c not in right]
            if set(left) <= allowed[0] and set(right) <= allowed[1] and set(pile) <= allowed[2]:
                outcomes.append((sum(1 << c for c in left), sum(1 << c for c in right), sum(1 << c for c in pile)))
    return {o: 1 / len(outcomes) for o in outcomes}


@pytest.mark.parametrize("seat_is_playmaker, tricks_done", [(True, 12), (False, 13)])
def test_world_frequencies_match_exact_enumeration(seat_is_playmaker, tricks_done):
    """On small positions with voids, the worlds' frequencies match the uniform distribution
    over all consistent deals (enumerated), by a chi-square test: the sampler is exact."""
    state = _late_position(1, tricks_done, seat_is_playmaker, Rules())
    exact = _exact_distribution(state)
    n = 30 * len(exact) + 3000
    w = sample_worlds(state, [0], n, np.random.default_rng(7))
    seat = int(state.to_act[0])
    left, right = (seat + 1) % 3, (seat + 2) % 3
    fixed = knowledge(state, np.array([0]))["fixed"][0]
    pile = np.zeros(n, dtype=np.uint64) if seat_is_playmaker else w.discards
    observed = zip((w.hands[:, left] & ~fixed[left]).tolist(), (w.hands[:, right] & ~fixed[right]).tolist(),
                   pile.tolist())
    counts = {o: 0 for o in exact}
    for o in observed:
        assert o in counts, "a world outside the consistent deals"
        counts[o] += 1
    expected = n / len(exact)
    chi2 = sum((c - expected) ** 2 / expected for c in counts.values())
    dof = len(exact) - 1
    assert len(exact) > 5
    assert chi2 < dof + 5 * np.sqrt(2 * dof), (chi2, dof)


@FAST
@given(seed=seed_strategy, rules=rules_strategy)
def test_worlds_drawn_by_a_belief_keep_everything_the_seat_to_act_knows(seed, rules):
    """A belief drawing the cards (``log_probs``: here random ones, strong) changes which
    consistent worlds come, never their consistency."""
    rng, beliefs = np.random.default_rng(seed), np.random.default_rng(seed + 1)
    for state, live in _states_along_games(seed, 12, rules):
        log_probs = np.log(beliefs.dirichlet([0.3, 0.3, 0.3], size=(live.size, 52)))
        w = sample_worlds(state, live, 3, rng, log_probs=log_probs, power=2.0)
        assert_worlds_keep_what_the_seat_knows(state, live, w, 3)


def test_a_belief_at_power_zero_draws_the_uniform_worlds_and_otherwise_moves_the_cards():
    """``power`` 0 is the uniform sampler bit for bit; a belief that puts a card in the left
    hand puts it there more often than the uniform worlds, and one that puts it on the right
    less often, the worlds still consistent (exact enumeration's outcomes only)."""
    state = _late_position(1, 12, False, Rules())
    exact = _exact_distribution(state)
    known = knowledge(state, np.array([0]))
    free = int(known["allowed"][0, 0] & known["allowed"][0, 1] & known["unseen"][0])
    card = card_list(free)[0]  # a card either hand may hold
    left_bias = np.full((1, 52, 3), np.log(1 / 3))
    left_bias[0, card] = np.log([0.9, 0.05, 0.05])
    right_bias = np.full((1, 52, 3), np.log(1 / 3))
    right_bias[0, card] = np.log([0.05, 0.9, 0.05])
    n = 3000
    uniform = sample_worlds(state, [0], n, np.random.default_rng(3))
    zero = sample_worlds(state, [0], n, np.random.default_rng(3), log_probs=left_bias, power=0.0)
    assert zero.buffer.tobytes() == uniform.buffer.tobytes()
    seat = int(state.to_act[0])
    left, right = (seat + 1) % 3, (seat + 2) % 3
    fixed = known["fixed"][0]

    def in_left(w) -> float:
        for o in zip((w.hands[:, left] & ~fixed[left]).tolist(), (w.hands[:, right] & ~fixed[right]).tolist(),
                     w.discards.tolist()):
            assert o in exact, "a world outside the consistent deals"
        return float(((w.hands[:, left] >> np.uint64(card)) & np.uint64(1)).mean())

    share = in_left(uniform)
    assert in_left(sample_worlds(state, [0], n, np.random.default_rng(4), log_probs=left_bias)) > share + 0.1
    assert in_left(sample_worlds(state, [0], n, np.random.default_rng(4), log_probs=right_bias)) < share - 0.1


@FAST
@given(seed=seed_strategy, rules=rules_strategy)
def test_worlds_drawn_exactly_by_a_belief_keep_everything_the_seat_to_act_knows(seed, rules):
    """The exact draw (``exact=True``: each world by the product of a belief's probabilities)
    keeps every world consistent at every decision kind, with strong random beliefs."""
    rng, beliefs = np.random.default_rng(seed), np.random.default_rng(seed + 1)
    for state, live in _states_along_games(seed, 12, rules):
        log_probs = np.log(beliefs.dirichlet([0.3, 0.3, 0.3], size=(live.size, 52)))
        w = sample_worlds(state, live, 3, rng, log_probs=log_probs, power=2.0, exact=True)
        assert_worlds_keep_what_the_seat_knows(state, live, w, 3)


def _observed_splits(state: engine.State, w: engine.State, seat_is_playmaker: bool) -> list[tuple[int, int, int]]:
    """Each world's unseen cards as (left hand, right hand, pile), as :func:`_exact_distribution` lists them."""
    seat = int(state.to_act[0])
    left, right = (seat + 1) % 3, (seat + 2) % 3
    fixed = knowledge(state, np.array([0]))["fixed"][0]
    pile = np.zeros(w.batch_size, dtype=np.uint64) if seat_is_playmaker else w.discards
    return list(zip((w.hands[:, left] & ~fixed[left]).tolist(), (w.hands[:, right] & ~fixed[right]).tolist(),
                    pile.tolist()))


def _product_distribution(exact: dict, log_probs: np.ndarray, power: float) -> dict[tuple[int, int, int], float]:
    """The consistent splits weighted by the product over their cards of p(bin) ** power, normalised."""
    weights = {}
    for split in exact:
        weights[split] = np.exp(power * sum(log_probs[card, b] for b in range(3) for card in card_list(split[b])))
    total = sum(weights.values())
    return {split: weight / total for split, weight in weights.items()}


@pytest.mark.parametrize("seat_is_playmaker, tricks_done, power", [(True, 12, 1.0), (False, 13, 1.0), (False, 13, 0.5),
                                                                   (True, 12, 0.0)])
def test_exact_belief_worlds_come_in_proportion_to_the_product_of_the_beliefs(seat_is_playmaker, tricks_done, power):
    """``exact=True`` draws each consistent split of the unseen cards with a probability
    proportional to the product of the belief's probabilities of its placements (to
    ``power``; 0: uniform): the worlds' frequencies against the enumerated splits so weighted,
    by a chi-square test, with a strong random belief."""
    state = _late_position(1, tricks_done, seat_is_playmaker, Rules())
    log_probs = np.log(np.random.default_rng(tricks_done).dirichlet([2.0, 2.0, 2.0], size=52))
    expected = _product_distribution(_exact_distribution(state), log_probs, power)
    n = 30 * len(expected) + 3000
    w = sample_worlds(state, [0], n, np.random.default_rng(8), log_probs=log_probs[None], power=power, exact=True)
    counts = {split: 0 for split in expected}
    for split in _observed_splits(state, w, seat_is_playmaker):
        assert split in counts, "a world outside the consistent deals"
        counts[split] += 1
    likely = [split for split, q in expected.items() if q * n >= 5]  # the chi-square's cells; the rare ones pooled
    rare = n * (1 - sum(expected[split] for split in likely))
    chi2 = sum((counts[split] - n * expected[split]) ** 2 / (n * expected[split]) for split in likely)
    if rare >= 5:
        chi2 += (n - sum(counts[split] for split in likely) - rare) ** 2 / rare
    dof = len(likely) - (rare < 5)
    assert len(likely) > 5
    assert chi2 < dof + 5 * np.sqrt(2 * dof), (chi2, dof)


def test_exact_belief_worlds_are_deterministic_and_need_a_belief():
    """The same generator gives the same exact worlds; the draw needs its belief (``exact``
    without ``log_probs`` is the uniform sampler, bit for bit)."""
    state = _late_position(1, 12, False, Rules())
    log_probs = np.log(np.random.default_rng(0).dirichlet([1, 1, 1], size=(1, 52)))
    first = sample_worlds(state, [0, 0], 50, np.random.default_rng(5), log_probs=np.repeat(log_probs, 2, 0), exact=True)
    again = sample_worlds(state, [0, 0], 50, np.random.default_rng(5), log_probs=np.repeat(log_probs, 2, 0), exact=True)
    assert first.buffer.tobytes() == again.buffer.tobytes()
    uniform = sample_worlds(state, [0], 50, np.random.default_rng(5))
    assert sample_worlds(state, [0], 50, np.random.default_rng(5), exact=True).buffer.tobytes() == \
        uniform.buffer.tobytes()


def test_exact_belief_worlds_survive_a_belief_sure_against_the_facts():
    """A belief that puts every card in the left hand with certainty (log-probability -1e9
    elsewhere, as an extreme file could) still draws consistent worlds: each card's weights are
    floored, so no consistent world is left at 0."""
    state = _late_position(1, 5, False, Rules())
    sure = np.tile(np.array([0.0, -1e9, -1e9]), (1, 52, 1))
    for power in (0.5, 1.0, 4.0):
        w = sample_worlds(state, [0], 4, np.random.default_rng(0), log_probs=sure, power=power, exact=True)
        assert_worlds_keep_what_the_seat_knows(state, np.array([0]), w, 4)


def test_worlds_play_out_in_the_engine():
    """Worlds are ordinary engine states: random play takes them to the end of the game."""
    rng = np.random.default_rng(0)
    state = engine.init(engine.game_seeds(3, 6))
    for _ in range(40):
        engine.step(state, random_member(engine.legal_bits(state), rng))
    w = sample_worlds(state, np.arange(6), 5, rng)
    while (w.phase != OVER).any():
        engine.step(w, random_member(engine.legal_bits(w), rng))
    assert (w.final_scores.sum(axis=1) == 0).all()


def test_bad_arguments_are_refused():
    state = engine.init([0])
    with pytest.raises(ValueError, match="worlds must be an integer >= 1, got 0"):
        sample_worlds(state, [0], 0, np.random.default_rng(0))
    state.phase[0], state.to_act[0] = OVER, -1
    with pytest.raises(ValueError, match="seat to act"):
        sample_worlds(state, [0], 2, np.random.default_rng(0))


@pytest.mark.parametrize("games, worlds, rng, message", [
    ([1], 2, "rng", r"games must be game numbers 0..0, got 1$"),
    ([-1], 2, "rng", r"games must be game numbers 0..0, got -1$"),
    ([0.5], 2, "rng", r"games must be game numbers 0..0, got \[0.5\]$"),
    ([0], 2, None, r"rng must be a numpy Generator \(np.random.default_rng\(seed\)\), got None$"),
    ([0], 2.0, "rng", r"worlds must be an integer >= 1, got 2.0$"),
    ([0], 10**12, "rng", r"would need about [\d,.]+ GiB of memory; this machine has [\d,.]+ [GM]iB available"),
])
def test_bad_games_rng_and_sizes_are_one_line_before_anything_is_drawn(games, worlds, rng, message):
    """Not numpy's wrap-around of -1 or an IndexError, an AttributeError on None, or an
    allocation of a trillion worlds (issue 20, items 7 and 9)."""
    state = engine.init([0])
    before = state.copy()
    generator = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"^sample_worlds: .*" + message):
        sample_worlds(state, games, worlds, generator if rng == "rng" else rng)
    assert generator.random() == np.random.default_rng(0).random()  # nothing drawn
    for name, value in before.arrays().items():
        np.testing.assert_array_equal(value, getattr(state, name), err_msg=name)


@pytest.mark.parametrize("log_probs, power, message", [
    (np.zeros((2, 52, 3)), 1.0, r"log_probs must be 1 x 52 x 3 finite log-probabilities .*, got "),
    (np.full((1, 52, 3), np.nan), 1.0, r"log_probs must be 1 x 52 x 3 finite"),
    (np.full((1, 52, 3), -np.inf), 1.0, r"log_probs must be 1 x 52 x 3 finite"),
    ("abc", 1.0, r"log_probs must be 1 x 52 x 3 finite log-probabilities .*, got 'abc'$"),
    (np.zeros((1, 52, 3)), float("inf"), r"power must be a finite number >= 0, got inf$"),
    (np.zeros((1, 52, 3)), -1, r"power must be a finite number >= 0, got -1$"),
    (np.zeros((1, 52, 3)), "1", r"power must be a finite number >= 0, got '1'$"),
])
def test_a_bad_belief_for_the_worlds_is_one_line_before_anything_is_drawn(log_probs, power, message):
    state = engine.init([0])
    generator = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"^sample_worlds: " + message):
        sample_worlds(state, [0], 2, generator, log_probs=log_probs, power=power)
    assert generator.random() == np.random.default_rng(0).random()  # nothing drawn


@pytest.mark.parametrize("exact", ["yes", 1, None, np.array([True])])
def test_a_bad_exact_is_one_line_before_anything_is_drawn(exact):
    state = engine.init([0])
    generator = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"^sample_worlds: exact must be True or False, got "):
        sample_worlds(state, [0], 2, generator, log_probs=np.zeros((1, 52, 3)), exact=exact)
    assert generator.random() == np.random.default_rng(0).random()  # nothing drawn


# Fields a world redraws or blanks because the seat to act may not know them; every other
# field of the engine state is public and copied as it is (PUBLIC_FIELDS and the step events).
HIDDEN_FIELDS = ("seed", "hands", "dealt", "first_six", "talon_cards", "talon", "discards", "given",
                 "received", "last_returned")
PUBLIC_EVENTS = ("episode", "first_dealer", "exchange_trump", "last_trick", "last_trick_leader",
                 "last_trick_winner", "deal_ended", "deal_points", "game_ended", "final_scores")


def test_every_state_field_is_either_public_or_resampled_by_worlds():
    """A new State field must be classified here: copied into worlds as public, or hidden and
    resampled/blanked by sample_worlds. Catches a field that would leak into search worlds."""
    fields = set(engine.State.__dataclass_fields__) - {"rules"}
    classified = set(PUBLIC_FIELDS) | set(HIDDEN_FIELDS) | set(PUBLIC_EVENTS)
    assert fields == classified, f"unclassified: {sorted(fields - classified)}, stale: {sorted(classified - fields)}"


def test_worlds_hide_a_forced_return_the_seat_to_act_took_no_part_in():
    """R21, R22: the card a receiver was forced to return is seen only by the pair. A seat
    outside that pair must not find it in its worlds' ``last_returned`` (seed 0 has such a
    return in its third deal: the exchange of another pair is followed by this seat's turn)."""
    state = engine.init(engine.game_seeds(0, 64), Rules())
    rng = np.random.default_rng(0)
    checked = 0
    while (state.phase != OVER).any() and checked < 200:
        returned = state.last_returned
        pair_seats = bit(returned)[:, None] & (state.given | state.received)
        knows = (pair_seats[np.arange(64), np.maximum(state.to_act, 0)] != 0)
        outsiders = np.flatnonzero((returned >= 0) & ~knows & (state.phase != OVER))
        if outsiders.size:
            worlds = sample_worlds(state, outsiders, 4, rng)
            assert (worlds.last_returned == -1).all()
            checked += outsiders.size
        insiders = np.flatnonzero((returned >= 0) & knows & (state.phase != OVER))
        if insiders.size:  # the pair itself keeps knowing what was returned
            worlds = sample_worlds(state, insiders, 2, rng)
            np.testing.assert_array_equal(worlds.last_returned, np.repeat(returned[insiders], 2))
        engine.step(state, random_member(engine.legal_bits(state), rng))
    assert checked > 0, "no forced return seen by an outsider: the test found no case to check"


def test_worlds_are_frozen_draw_for_draw():
    """The compiled sampler (worlds._worlds_k) makes the very worlds the numpy code before it
    made, from the same draws: a digest of 2,692 worlds at every decision kind, with rule
    options, frozen from 12b74e5 (pimc's decisions, tests/test_pimc.py, rest on it)."""
    import hashlib

    digest, worlds, kinds = hashlib.sha256(), 0, set()
    for seed, rules in ((5, Rules(num_deals=3)), (6, Rules(num_deals=2, must_overtake=True, dealer_builds_talon=True))):
        for state, live in _states_along_games(seed, 12, rules, every=5):
            w = sample_worlds(state, live, 4, np.random.default_rng([seed, worlds]))
            digest.update(w.buffer.tobytes())
            worlds += w.batch_size
            kinds.update(state.phase[live].tolist())
    assert kinds == {MODE, engine.GIVE, engine.RETURN, DISCARD, PLAY}
    assert (worlds, digest.hexdigest()[:16]) == (2692, "ecb28e927a875cf0")


def test_knowledge_no_world_fits_is_one_line_before_anything_is_drawn():
    """A state no deal fits (a hand whose seat showed it holds none of the unseen cards) is one
    ValueError line, raised before the generator draws anything."""
    state, live = next((s, live) for s, live in _states_along_games(3, 6, Rules(), every=3)
                       if (s.phase[live] == PLAY).any() and (s.trick[live, 0] >= 0).any())
    game = next(g for g in live if state.phase[g] == PLAY)
    broken = state.take(np.array([game]))
    seat = int(broken.to_act[0])
    broken.shown_out[0, (seat + 1) % 3] = ALL  # the left hand may hold no unseen card
    rng = np.random.default_rng(0)
    before = rng.bit_generator.state
    with pytest.raises(ValueError, match="^inconsistent knowledge: no assignment fits the hand sizes$"):
        sample_worlds(broken, np.array([0]), 2, rng)
    assert rng.bit_generator.state == before
