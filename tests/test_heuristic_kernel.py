"""The compiled heuristic decides exactly as the numpy heuristic of 0.3.0.

``tests/reference_heuristic_030.py`` is the agent of 0.3.0 (numpy over the batch), frozen;
``agents.heuristic`` computes its card decisions (free returns, discards, play) in compiled
kernels (``agents.heuristic_kernels``). Both are asked for the same positions, from the
float observation (``act``), from the card-set form (``act_on_card_sets``, the way pimc's
rollouts ask) and from the engine state itself (``act_from_state``, the way
``policies.decide`` asks: the vec env's opponents, the tournaments), in batches of 1, 7 and 300 (the serial and
the parallel kernels), and must choose the same action everywhere. The positions are every
decision of whole games under several rule options (RULES.md section 9), played by the
reference mixed with random moves (the odd positions), a trump handed over in every other
game (the free return of R21).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import reference_heuristic_030 as reference
from sergeant_major_env import Rules, engine
from sergeant_major_env.agents import HeuristicAgent
from sergeant_major_env.agents import heuristic_kernels
from sergeant_major_env.agents.view import View as HeuristicView
from sergeant_major_env.cards import NUM_ACTIONS, TRUMPS, bits_to_bool, random_member
from sergeant_major_env.observation import observe, observe_card_sets

RULE_SETS = {
    "default": Rules(num_deals=4),
    "no-exchanges": Rules(num_deals=4, exchanges=False),
    "must-overtake": Rules(num_deals=4, must_overtake=True),
    "must-overtrump": Rules(num_deals=4, must_overtrump=True),
    "dealer-builds-talon": Rules(num_deals=4, dealer_builds_talon=True, must_overtake=True, must_overtrump=True),
}
GAMES = 24
RANDOM_SHARES = (0.0, 0.1, 0.5, 1.0)
"""Per game slot (in turn), the chance that a move is random instead of the reference's."""
SIZES = (1, 7, 300)
"""Batch sizes, in turn: one game, a few (the serial kernels), many (the parallel kernels, from
PARALLEL_ROWS games on, which the fixture below lowers to 256 for this module)."""


@pytest.fixture(autouse=True)
def parallel_from_256_games(monkeypatch):
    """Batches of 300 games run the parallel kernels (the agent's own threshold is higher)."""
    monkeypatch.setattr(heuristic_kernels, "PARALLEL_ROWS", 256)
    monkeypatch.setattr(heuristic_kernels, "PARALLEL_SAFE", True)  # the parallel kernels too (no fork here)


@functools.lru_cache(maxsize=None)
def _positions(rules_name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(observations, card sets, rest, masks) of every decision of GAMES whole games under the rules."""
    return _played(rules_name)[0]


@functools.lru_cache(maxsize=None)
def _played(rules_name: str) -> tuple[tuple[np.ndarray, ...], list]:
    """:func:`_positions`, and the engine states of those decisions: a copy of the live games
    before each move (their rows of the positions in order, one state after another)."""
    rules = RULE_SETS[rules_name]
    player = reference.HeuristicAgent()
    rng = np.random.default_rng(100 + sorted(RULE_SETS).index(rules_name))
    state = engine.init(engine.game_seeds(2000, GAMES), rules)
    random_share = np.resize(RANDOM_SHARES, GAMES)
    observations, card_sets, rests, masks, states = [], [], [], [], []
    while (live := np.flatnonzero(state.phase != engine.OVER)).size:
        part = state.take(live)
        states.append(part.copy())
        legal = engine.legal_bits(part)
        mask = bits_to_bool(legal, NUM_ACTIONS)
        obs = observe(part, part.to_act)
        sets, rest = observe_card_sets(part, part.to_act)
        observations.append(obs), card_sets.append(sets), rests.append(rest), masks.append(mask)
        actions = np.where(rng.random(live.size) < random_share[live], random_member(legal, rng),
                           player.act(obs, mask, rng))
        trumps = legal & TRUMPS[part.mode]
        give_trump = (part.phase == engine.GIVE) & (trumps != 0) & (live % 2 == 1)
        actions = np.where(give_trump, random_member(trumps, rng), actions)
        engine.step(part, actions, legal=legal)
        state.put(live, part)
    return tuple(np.concatenate(parts) for parts in (observations, card_sets, rests, masks)), states


def _all_positions() -> tuple[np.ndarray, ...]:
    parts = [_positions(name) for name in RULE_SETS]
    return tuple(np.concatenate([p[k] for p in parts]) for k in range(4))


def _assert_same_actions(positions, sizes, seed: int, card_sets: bool = False, **agent_options) -> None:
    """Both agents decide for the positions in batches of the given sizes (in turn), shuffled."""
    obs, sets, rest, mask = positions
    new, old = HeuristicAgent(**agent_options), reference.HeuristicAgent(**agent_options)
    order = np.random.default_rng(seed).permutation(len(obs))
    start, k = 0, 0
    while start < len(order):
        rows = order[start:start + sizes[k % len(sizes)]]
        start, k = start + rows.size, k + 1
        if card_sets:
            got = new.act_on_card_sets(sets[rows], rest[rows], mask[rows], np.random.default_rng(k))
            want = old.act_on_card_sets(sets[rows], rest[rows], mask[rows], np.random.default_rng(k))
        else:
            got = new.act(obs[rows], mask[rows], np.random.default_rng(k))
            want = old.act(obs[rows], mask[rows], np.random.default_rng(k))
        assert got.dtype == want.dtype == np.int64 and got.shape == want.shape
        differ = np.flatnonzero(got != want)
        assert differ.size == 0, (f"{differ.size} of {rows.size} actions differ from 0.3.0's, e.g. position "
                                  f"{rows[differ[0]]}: {got[differ[0]]} instead of {want[differ[0]]}")


def test_positions_cover_every_card_decision():
    """Thousands of positions, many of each kind of card decision (the comparisons mean something),
    and batches large enough for the parallel kernels."""
    obs = _all_positions()[0]
    kinds = np.bincount(reference.View(obs).decision, minlength=5)
    assert len(obs) > 15000 and max(SIZES) >= heuristic_kernels.PARALLEL_ROWS > max(SIZES[:-1])
    assert (kinds >= [200, 200, 150, 600, 12000]).all(), kinds


@pytest.mark.parametrize("rules_name", sorted(RULE_SETS))
@pytest.mark.parametrize("card_sets", [False, True], ids=["observations", "card-sets"])
def test_heuristic_matches_030(rules_name, card_sets):
    _assert_same_actions(_positions(rules_name), SIZES, seed=1, card_sets=card_sets)


def test_heuristic_matches_030_one_game_at_a_time():
    """Batches of one (the terminal game, a vec env's last opponent rounds): a sample of every rule set."""
    positions = _all_positions()
    pick = np.random.default_rng(2).choice(len(positions[0]), 1500, replace=False)
    _assert_same_actions(tuple(p[pick] for p in positions), (1,), seed=3, card_sets=True)


def test_heuristic_matches_030_with_other_parameters():
    """Each weight goes to its own place in the kernels' parameter vector: every one scaled differently."""
    positions = _all_positions()
    pick = np.random.default_rng(4).choice(len(positions[0]), 6000, replace=False)
    names = sorted(reference.DEFAULT_PARAMS)
    scale = np.linspace(0.5, 1.6, len(names))
    params = {name: reference.DEFAULT_PARAMS[name] * s for name, s in zip(names, scale)}
    _assert_same_actions(tuple(p[pick] for p in positions), (300, 7), seed=5, params=params)


def test_heuristic_matches_030_when_masks_do_not_match():
    """Observations paired with another position's mask, finished games (no legal action) and
    empty observations: the kernels answer as 0.3.0 (then ensure_legal's safety net)."""
    obs, sets, rest, mask = _all_positions()
    rng = np.random.default_rng(7)
    pick = rng.choice(len(obs), 3000, replace=False)
    odd_mask = mask[rng.permutation(pick)].copy()
    odd_mask[::17] = False
    odd_obs, odd_sets, odd_rest = obs[pick].copy(), sets[pick].copy(), rest[pick].copy()
    odd_obs[5::23], odd_sets[5::23], odd_rest[5::23] = 0.0, 0, 0.0
    for card_sets in (False, True):
        _assert_same_actions((odd_obs, odd_sets, odd_rest, odd_mask), SIZES, seed=8, card_sets=card_sets)


@pytest.mark.parametrize("rules_name", sorted(RULE_SETS))
def test_heuristic_from_the_state_matches_030(rules_name):
    """``act_from_state`` (the inputs of the card decisions and gives read in place from the
    engine state, ``heuristic_kernels.gather_decisions``) chooses 0.3.0's actions from the
    observations: every game of each position's state at once (mode choices, gives and card
    decisions mixed), and in turn the odd games only, one game, or all in reverse order with
    masks shuffled between the games (the kernels read a game's legal cards from
    its row of the mask, as ``act`` does)."""
    (obs, _, _, mask), states = _played(rules_name)
    new, old = HeuristicAgent(), reference.HeuristicAgent()
    first = 0
    for k, state in enumerate(states):
        rows = np.arange(first, first + state.batch_size)
        first = rows[-1] + 1
        games = np.arange(state.batch_size)
        subsets = [games, (games[1::2], games[k % games.size:][:1], games[::-1])[k % 3]]  # the others in turn
        for j, subset in enumerate(subsets):
            subset_mask = mask[rows[subset]]
            if j == 1 and k % 3 == 2:
                subset_mask = subset_mask[np.random.default_rng(k).permutation(subset.size)]
            want = old.act(obs[rows[subset]], subset_mask, np.random.default_rng(k))
            got = new.act_from_state(state, subset, subset_mask, np.random.default_rng(k))
            assert got.dtype == np.int64 and got.shape == want.shape
            differ = np.flatnonzero(got != want)
            assert differ.size == 0, (f"state {k}, games {subset.tolist()}: game {subset[differ[0]]} chose "
                                      f"{got[differ[0]]}, 0.3.0 {want[differ[0]]} (phase "
                                      f"{state.phase[subset[differ[0]]]})")
    assert first == len(obs)


def test_heuristic_from_the_state_in_big_batches():
    """Hundreds of games in one ``act_from_state`` call (the parallel kernels at this module's
    threshold), every rule set: 600 games played on by the heuristic mixed with random moves,
    every game at once and a shuffled half in turn every other move, against 0.3.0 on
    observations."""
    new, old = HeuristicAgent(), reference.HeuristicAgent()
    for seed, rules_name in enumerate(sorted(RULE_SETS)):
        rng = np.random.default_rng(50 + seed)
        state = engine.init(engine.game_seeds(3000 + 1000 * seed, 600), RULE_SETS[rules_name])
        for move in range(120):
            legal = engine.legal_bits(state)
            mask = bits_to_bool(legal, NUM_ACTIONS)
            everyone = np.arange(state.batch_size)
            if move % 2 == 0:
                games = everyone if move % 4 else rng.permutation(state.batch_size)[:300]
                want = old.act(observe(state, state.to_act)[games], mask[games], np.random.default_rng(move))
                got = new.act_from_state(state, games, mask[games], np.random.default_rng(move))
                np.testing.assert_array_equal(got, want, err_msg=f"{rules_name}, move {move}")
            actions = new.act_from_state(state, everyone, mask, rng)
            actions = np.where(rng.random(state.batch_size) < 0.2, random_member(legal, rng), actions)
            engine.step(state, actions, legal=legal, autoreset=True)


@pytest.mark.parametrize("games, mask_shape, message", [
    ([0, 24], (2, NUM_ACTIONS), "games must be game numbers 0..23"),
    ([[0, 1]], (2, NUM_ACTIONS), "games must be game numbers 0..23"),
    ([0, 1], (2, 52), "legal_mask must have shape (2, 58)"),
    ([0, 1], (3, NUM_ACTIONS), "legal_mask must have shape (2, 58)"),
])
def test_heuristic_from_the_state_refuses_bad_games_and_masks(games, mask_shape, message):
    """The kernel never sees a game number out of range or a mask of another shape: one line."""
    state = engine.init(engine.game_seeds(9, 24), Rules(num_deals=1))
    with pytest.raises(ValueError, match="^HeuristicAgent.act_from_state: ") as caught:
        HeuristicAgent().act_from_state(state, np.array(games), np.ones(mask_shape, bool), np.random.default_rng(0))
    assert message in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize("obs_dtype", [np.float32, np.float64, np.float16, np.int64, bool])
@pytest.mark.parametrize("mask_dtype", [bool, np.int8, np.int64, np.float32])
@pytest.mark.parametrize("size", [1, 300])
def test_kernels_take_every_dtype_the_api_accepts(obs_dtype, mask_dtype, size):
    """``act`` and ``act_on_card_sets`` accept any numeric observation, mask and card-set array
    (strided ones too): the kernels receive them converted, so no compile or typing error reaches
    the caller, and the actions are 0.3.0's."""
    obs, sets, rest, mask = _all_positions()
    rows = np.random.default_rng(size).choice(len(obs), 2 * size, replace=False)[::2]  # strided copies below
    o, m = obs[rows].astype(obs_dtype), mask[rows].astype(mask_dtype)
    want = reference.HeuristicAgent().act(o, m, np.random.default_rng(0))
    np.testing.assert_array_equal(HeuristicAgent().act(o, m, np.random.default_rng(0)), want)
    wide_sets = np.repeat(sets[rows].astype(np.int64), 2, axis=1)[:, ::2]  # not contiguous, another dtype
    got = HeuristicAgent().act_on_card_sets(wide_sets, rest[rows].astype(np.float64), m, np.random.default_rng(0))
    np.testing.assert_array_equal(got, reference.HeuristicAgent().act_on_card_sets(
        sets[rows], rest[rows], m, np.random.default_rng(0)))


def test_card_model_is_030s_bit_for_bit():
    """The kernels' card model (P(void), P(no higher / no lower card) per opponent) is 0.3.0's to
    the last bit, not only its choices: the known masses summed as numpy sums them (pairwise),
    the logs summed rank by rank, numpy's log and exp."""
    obs, _, _, mask = _all_positions()
    view = reference.View(obs)
    rows = np.flatnonzero(view.decision >= reference.RETURN_DECISION)
    for part in np.array_split(rows, [5, 12, 400]):  # serial and parallel kernels
        old_view = view.rows(part)
        legal = reference.legal_sets(mask[part])
        cards = reference._Cards(old_view, legal)
        old = reference._Reading(old_view, cards)
        new_view = HeuristicView(obs[part])
        void, higher, lower, start = heuristic_kernels.card_reading(new_view, legal)
        np.testing.assert_array_equal(void, old.void)
        np.testing.assert_array_equal(higher, old.no_higher)
        np.testing.assert_array_equal(lower, old.no_lower)
        np.testing.assert_array_equal(start, np.searchsorted(cards.row, np.arange(len(part))))


def test_the_sparse_sums_are_the_sums_over_every_card():
    """``suit_log_sums_k`` adds only the cards whose log is not +0.0 (the unseen ones): its sums are,
    to the last bit, the sums over all 13 ranks of each suit in order (as numpy's cumsum added
    them), worked out here card by card in Python floats."""
    obs, _, _, mask = _all_positions()
    view = HeuristicView(obs)
    rows = np.flatnonzero(view.decision >= reference.RETURN_DECISION)[::5]
    part, legal = view.rows(rows), reference.legal_sets(mask[rows])
    sets = heuristic_kernels._card_sets(part, legal)
    exchange_done, role = part.exchange_done.astype(np.int16), part.role.astype(np.int8)
    n = rows.size
    miss, entries = np.empty((n, 2)), np.empty(n, dtype=np.int64)
    heuristic_kernels.miss_range_k(0, n, sets["legal"], sets["unseen"], sets["played"], sets["talon"],
                                   sets["given"], exchange_done, role, heuristic_kernels.KNOWN_MASS, miss, entries)
    log_miss, start = np.log(miss), np.cumsum(entries) - entries
    void, higher, lower = np.empty((n, 2, 4)), np.empty((entries.sum(), 2)), np.empty((entries.sum(), 2))
    log_known = heuristic_kernels.LOG_MISS_KNOWN
    heuristic_kernels.suit_sums_range_k(0, n, sets["legal"], sets["unseen"], sets["talon"], sets["given"],
                                        exchange_done, role, log_miss, log_known, start, void, higher, lower)
    assert log_known[0] == 0.0 and not np.signbit(log_known[0])  # the premise of skipping those cards

    def bits(x: float) -> int:
        return int(np.float64(x).view(np.uint64))

    checked = 0
    for i in range(n):
        placed = [heuristic_kernels._placed(sets["unseen"][i], sets["talon"][i], sets["given"][i], exchange_done[i],
                                            role[i], f) for f in range(2)]
        other = int(sets["unseen"][i]) & ~(int(placed[0][0]) | int(placed[0][1]) | int(placed[1][0]) | int(placed[1][1]))
        scored, e = int(sets["legal"][i]), int(start[i])
        for suit in range(4):
            for f in range(2):
                t, g = int(placed[f][0]), int(placed[f][1])
                logs = [(1.0 if other >> c & 1 else 0.0) * log_miss[i, f]
                        + log_known[2 if g >> c & 1 else 1 if t >> c & 1 else 0] for c in range(13 * suit, 13 * suit + 13)]
                total = logs[0]
                for value in logs[1:]:
                    total = total + value
                assert bits(void[i, f, suit]) == bits(total), (i, f, suit)
                upto, k = 0.0, e
                for r, value in enumerate(logs):
                    upto = value if r == 0 else upto + value
                    if scored >> (13 * suit + r) & 1:
                        assert bits(higher[k, f]) == bits(total - upto) and bits(lower[k, f]) == bits(upto - value)
                        k, checked = k + 1, checked + 1
            e += bin((scored >> (13 * suit)) & 0x1FFF).count("1")
    assert checked > 2000
