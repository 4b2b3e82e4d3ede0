"""The compiled engine plays the same games as 0.3.0's numpy engine, bit for bit.

tests/reference_engine.py is 0.3.0's engine, frozen. Random and agent games are stepped
through both side by side, under several rule option sets, at batch sizes 1, 7 and 300
(300 runs the ``parallel=True`` kernels), with automatic resets and with ``games=`` subsets;
every array of the state, and the legal actions, must be equal after every step. Then every
kernel is called through the public API with every dtype that API accepts.
"""

from __future__ import annotations

import numpy as np
import pytest

import reference_engine as reference
from sergeant_major_env import Rules, engine
from sergeant_major_env.cards import NUM_ACTIONS, bits_to_bool, random_member
from sergeant_major_env.policies import decide

RULE_SETS = [
    Rules(num_deals=3),
    Rules(num_deals=2, must_overtake=True),
    Rules(num_deals=2, must_overtrump=True),
    Rules(num_deals=2, must_overtake=True, must_overtrump=True, dealer_builds_talon=True),
    Rules(num_deals=4, exchanges=False, dealer_builds_talon=True),
    Rules(num_deals=1),
]


def assert_same(state: engine.State, ref, where: str) -> None:
    for name, value in state.arrays().items():
        expected = getattr(ref, name)
        assert value.dtype == expected.dtype and value.shape == expected.shape, f"{where}: {name}"
        np.testing.assert_array_equal(value, expected, err_msg=f"{where}: {name}")


def play_side_by_side(rules: Rules, batch: int, steps: int, seed: int, autoreset: bool, subsets: bool) -> int:
    """Steps both engines with the same random legal actions; returns how many games ended."""
    rng = np.random.default_rng(seed)
    state = engine.init(engine.game_seeds(seed, batch), rules)
    ref = reference.init(reference.game_seeds(seed, batch), rules)
    assert_same(state, ref, "init")
    ended = 0
    for k in range(steps):
        games = None
        if subsets and k % 2:
            games = np.flatnonzero(rng.random(batch) < 0.5)
            if k % 4 == 1:
                games = rng.permutation(games)  # any order
        legal = engine.legal_bits(state, games)
        np.testing.assert_array_equal(legal, reference.legal_bits(ref, games), err_msg=f"legal, step {k}")
        actions = np.maximum(random_member(legal, rng), 0)
        pass_legal = k % 3 == 0
        engine.step(state, actions, autoreset=autoreset, games=games, legal=legal if pass_legal else None)
        reference.step(ref, actions, autoreset=autoreset, games=games, legal=legal if pass_legal else None)
        assert_same(state, ref, f"{rules}, batch {batch}, step {k}")
        ended += int(state.game_ended.sum())
        if not autoreset and (state.phase == engine.OVER).all():
            break
    return ended


@pytest.mark.parametrize("rules", RULE_SETS, ids=lambda r: ",".join(f"{k}={v}" for k, v in r.to_dict().items()
                                                                    if v != Rules().to_dict()[k]))
@pytest.mark.parametrize("batch", [1, 7, 300])
def test_random_games_match_the_reference(rules, batch):
    steps = {1: 700, 7: 400, 300: 140}[batch]
    ended = play_side_by_side(rules, batch, steps, seed=batch * 1000 + rules.num_deals, autoreset=True,
                              subsets=batch > 1)
    if batch > 1:
        assert ended > 0 or rules.num_deals > 2  # games ended and were reset in the run


def test_whole_games_without_autoreset_match():
    """Games played to the end (and a finished game's ignored actions) under the rule book's rules."""
    play_side_by_side(Rules(num_deals=18), 5, 5000, seed=42, autoreset=False, subsets=False)


@pytest.mark.parametrize("spec", ["heuristic", "greedy", "random"])
def test_agent_games_match_the_reference(spec):
    """Every built-in agent that decides from observations chooses the same actions on both engines."""
    from sergeant_major_env.agents import make_agent

    agent, rules, batch = make_agent(spec), Rules(num_deals=3), 6
    state = engine.init(engine.game_seeds(7, batch), rules)
    ref = reference.init(reference.game_seeds(7, batch), rules)
    rng, ref_rng = np.random.default_rng(1), np.random.default_rng(1)
    while (state.phase != engine.OVER).any():
        live = np.flatnonzero(state.phase != engine.OVER)
        mask = bits_to_bool(engine.legal_bits(state, live), NUM_ACTIONS)
        actions = decide(agent, state, live, mask, rng)
        # The agents see the reference's arrays through today's State (its packed buffer).
        ref_view = engine.State(rules=ref.rules, **ref.arrays())
        ref_actions = decide(agent, ref_view, live, bits_to_bool(reference.legal_bits(ref, live), NUM_ACTIONS),
                             ref_rng)
        np.testing.assert_array_equal(actions, ref_actions)
        engine.step(state, actions, games=live)
        reference.step(ref, actions, games=live)
        assert_same(state, ref, spec)


def test_set_cards_matches_the_reference():
    """The record replayer's entry point installs the same deal."""
    rng = np.random.default_rng(3)
    state, ref = engine.init(engine.game_seeds(0, 4)), reference.init(reference.game_seeds(0, 4))
    deck = np.stack([rng.permutation(52) for _ in range(2)]).astype(np.int8)
    games = np.array([3, 1])
    engine.set_cards(state, games, deck[:, :48].reshape(2, 3, 16), deck[:, 48:])
    reference.set_cards(ref, games, deck[:, :48].reshape(2, 3, 16), deck[:, 48:])
    assert_same(state, ref, "set_cards")


INTEGER_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


@pytest.mark.parametrize("dtype", INTEGER_DTYPES + [int])
def test_every_kernel_takes_every_accepted_dtype(dtype):
    """Seeds, actions, games and legal sets of every integer dtype (and Python ints) reach the
    kernels as the dtypes they were compiled for: results, or the API's one-line errors, never
    a numba error."""
    as_type = (lambda values: [int(v) for v in values]) if dtype is int else (lambda v: np.asarray(v, dtype=dtype))
    for batch in (1, 3, 300):
        seeds = as_type(range(5, 5 + batch)) if batch < 120 or dtype not in (np.int8, np.uint8) else range(5, 5 + batch)
        state = engine.init(seeds, Rules(num_deals=1, must_overtake=batch == 3))
        ref = reference.init(np.arange(5, 5 + batch), Rules(num_deals=1, must_overtake=batch == 3))
        for k in range(70):
            games = as_type([0]) if k % 2 else None
            legal = engine.legal_bits(state, games)
            actions = as_type(np.maximum(random_member(legal, np.random.default_rng(k)), 0))
            engine.step(state, actions, games=games, legal=legal if k % 3 == 0 else None)
            reference.step(ref, np.asarray(actions), games=None if games is None else np.asarray(games))
        assert_same(state, ref, str(dtype))
        engine.legal_action_mask(state)
        engine.play_classes(state.rules, state.trick, state.mode)
        engine.ruled_out(state.rules, state.trick, state.mode, as_type(np.zeros(batch, dtype=np.int8)))
        engine.set_cards(state, as_type([0]), np.arange(48).reshape(1, 3, 16).astype(dtype if dtype is not int
                                                                                     else np.int64),
                         np.arange(48, 52)[None])
        with pytest.raises(engine.IllegalActionError):  # a card id where a mode is due in game 0
            engine.step(state, as_type([60] * batch) if dtype is not int else [60] * batch)


@pytest.mark.parametrize("bad", [2**70, -1, 58, 255])
def test_out_of_range_actions_keep_their_one_line_errors(bad):
    state = engine.init([0])
    before = {k: v.copy() for k, v in state.arrays().items()}
    with pytest.raises((ValueError, engine.IllegalActionError)) as error:
        engine.step(state, [bad])
    assert "\n" not in str(error.value) and "Traceback" not in str(error.value)
    for name, value in state.arrays().items():
        np.testing.assert_array_equal(value, before[name])


def _bits_to_bool_030(bits, width=52):
    """0.3.0's cards.bits_to_bool (numpy's unpackbits), frozen."""
    bits = np.ascontiguousarray(bits, dtype="<u8")
    unpacked = np.unpackbits(bits.view(np.uint8).reshape(bits.shape + (8,)), axis=-1, bitorder="little")
    return unpacked[..., :width].view(bool)


def _random_member_030(sets, rng):
    """0.3.0's cards.random_member, frozen: the same draws must pick the same members."""
    sets = np.asarray(sets, dtype=np.uint64)
    if sets.size < 16:
        keys = rng.random(sets.shape + (64,)) * _bits_to_bool_030(sets, 64)
        return np.where(sets != 0, keys.argmax(axis=-1), -1)
    remaining = sets.copy()
    k = (rng.random(sets.shape) * np.bitwise_count(sets)).astype(np.uint8)
    position = np.zeros(sets.shape, dtype=np.int64)
    for width in (32, 16, 8, 4, 2, 1):
        low = remaining & np.uint64((1 << width) - 1)
        low_count = np.bitwise_count(low)
        upper = k >= low_count
        k -= np.where(upper, low_count, np.uint8(0))
        remaining = np.where(upper, remaining >> np.uint64(width), low)
        position += upper * width
    return np.where(sets != 0, position, -1)


@pytest.mark.parametrize("size", [0, 1, 3, 15, 16, 17, 300, 5000])
def test_card_set_kernels_match_030(size):
    """bits_to_bool and random_member (the random agent's and the benchmarks' draw) are kernels
    that give 0.3.0's arrays and members for the same sets and the same generator state."""
    from sergeant_major_env.cards import bits_to_bool, random_member

    rng = np.random.default_rng(size)
    for trial in range(20):
        sets = rng.integers(0, 2**63, size=size).astype(np.uint64) & rng.integers(0, 2**63, size=size).astype(np.uint64)
        sets[::3] = 0
        if size:
            sets[-1] = np.uint64(1) << np.uint64(63)
        for width in (52, 58, 64, 70):
            expected = _bits_to_bool_030(sets, width)
            got = bits_to_bool(sets, width)
            assert got.dtype == expected.dtype and got.shape == expected.shape and (got == expected).all()
        expected = _random_member_030(sets, np.random.default_rng(trial))
        got = random_member(sets, np.random.default_rng(trial))
        assert got.dtype == expected.dtype and (got == expected).all()
    grid = rng.integers(0, 2**52, size=(4, 5)).astype(np.uint64)
    assert (random_member(grid, np.random.default_rng(1)) == _random_member_030(grid, np.random.default_rng(1))).all()


def test_the_views_rule_helpers_are_the_kernels_rules():
    """trick_winner_position (R16), targets (R23, R24) and deal_points run the rules' kernels
    and give 0.3.0's numpy values for every trick, dealer, mode and trick count."""
    rng = np.random.default_rng(0)
    n = 5000
    trick = np.full((n, 3), -1, dtype=np.int8)
    for g in range(n):
        cards = rng.permutation(52)[: rng.integers(0, 4)]
        trick[g, : cards.size] = cards
    mode = rng.integers(-1, 6, size=n).astype(np.int8)
    dealer = rng.integers(0, 3, size=n).astype(np.int8)
    won = rng.integers(0, 17, size=(n, 3)).astype(np.int8)
    for ours, theirs in ((engine.trick_winner_position(trick, mode), reference.trick_winner_position(trick, mode)),
                         (engine.targets(dealer, mode), reference.targets(dealer, mode)),
                         (engine.deal_points(won, dealer, mode), reference.deal_points(won, dealer, mode))):
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
        np.testing.assert_array_equal(ours, theirs)
    with pytest.raises(ValueError, match="trick must be integers of shape"):
        engine.trick_winner_position(trick[:, :2], mode)
