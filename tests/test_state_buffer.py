"""engine.State keeps its arrays as views of one buffer (what the kernels are handed).

Every way of making or changing a state must keep that true, or a kernel would step a
buffer the fields no longer show: built from arrays, ``take``/``copy``/``put``, a field
assigned, ``copy.deepcopy`` and pickling.
"""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from sergeant_major_env import Rules, engine
from sergeant_major_env.cards import random_member


def assert_packed(state: engine.State) -> None:
    assert state.buffer.size == state.batch_size * engine.PACKED_BYTES
    for name, value in state.arrays().items():
        assert np.shares_memory(value, state.buffer) or not state.batch_size, name
        assert value.flags.c_contiguous and value.shape[0] == state.batch_size, name


def played(seed: int, batch: int, steps: int) -> engine.State:
    state = engine.init(engine.game_seeds(seed, batch), Rules(num_deals=2))
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        legal = engine.legal_bits(state)
        engine.step(state, np.maximum(random_member(legal, rng), 0), legal=legal)
    return state


def test_fields_are_views_of_one_buffer_and_padding_free():
    state = played(1, 5, 30)
    assert_packed(state)
    assert engine.PACKED_BYTES == engine.BYTES_PER_GAME  # regions by item size: nothing padded
    assert state.nbytes_per_game() == engine.BYTES_PER_GAME


@pytest.mark.parametrize("games", [[3, 0], np.array([True, False, True, False, True]), slice(1, 4), []])
def test_take_copy_put_keep_the_buffer(games):
    state = played(2, 5, 40)
    part = state.take(games)
    assert_packed(part)
    index = np.arange(5)[games]
    for name, value in part.arrays().items():
        np.testing.assert_array_equal(value, getattr(state, name)[index], err_msg=name)
    whole = state.copy()
    assert_packed(whole)
    assert whole.buffer.tobytes() == state.buffer.tobytes() and not np.shares_memory(whole.buffer, state.buffer)
    other = played(3, 5, 40)
    other.put(index, part)
    assert_packed(other)
    for name, value in other.arrays().items():
        np.testing.assert_array_equal(value[index], getattr(state, name)[index], err_msg=name)


def test_a_taken_state_makes_each_view_at_its_first_use():
    """take and copy hand over a buffer; a field's view is made when it is first read, and
    is then the same array (writes through it land in the buffer); anything else is an
    AttributeError, as for any object."""
    state = played(6, 5, 20)
    part = state.take([4, 1])
    assert set(vars(part)) == {"rules", "buffer", "rule_code"} and part.batch_size == 2
    hands = part.hands
    assert part.hands is hands and np.shares_memory(hands, part.buffer)
    before = state.hands[4, 0]
    hands[0, 0] = before ^ np.uint64(1)
    assert part.hands[0, 0] == before ^ np.uint64(1) and state.hands[4, 0] == before  # a copy of its own
    np.testing.assert_array_equal(part.scores, state.scores[[4, 1]])
    with pytest.raises(AttributeError, match="'State' object has no attribute 'hand'"):
        part.hand  # noqa: B018
    assert not hasattr(part, "buffers")


@pytest.mark.parametrize("games", [np.array([-1, 4, 4, 0], dtype=np.int8), np.array([2, -5], dtype=np.int32),
                                   np.array([1, 3], dtype=np.uint16), np.array([4, 1], dtype=np.uint64)])
def test_take_is_numpys_take_for_every_index_numpy_takes(games):
    """State.take: numpy's rows for negative, repeated and unsigned indices of any width, in a
    state of its own."""
    state = played(4, 5, 25)
    part = state.take(games)
    assert_packed(part)
    for name, value in part.arrays().items():
        np.testing.assert_array_equal(value, getattr(state, name).take(games, axis=0), err_msg=name)


@pytest.mark.parametrize("games", [[5], [-6], np.array([0, 2**63 + 1], dtype=np.uint64), [0.5], [[0, 1]]])
def test_take_refuses_what_numpys_take_refuses(games):
    """An index out of range, too large for int64, not an integer or not 1-D: numpy's own error,
    the state unchanged."""
    state = played(5, 5, 10)
    before = state.buffer.tobytes()
    with pytest.raises((IndexError, TypeError, ValueError)):
        state.take(games)
    assert state.buffer.tobytes() == before


def test_assigning_a_field_writes_into_the_buffer():
    state = played(4, 3, 10)
    state.scores = np.array([[1, 2, 3]] * 3, dtype=np.int16)
    state.talon = 0  # broadcasts, as `state.talon[...] = 0` would
    assert_packed(state)
    assert (state.scores == [1, 2, 3]).all() and (state.talon == 0).all()
    with pytest.raises(ValueError):
        state.hands = np.zeros((2, 3), dtype=np.uint64)  # a wrong shape is refused, not rebound
    assert_packed(state)


def test_rules_can_be_replaced_and_the_kernels_follow():
    state = engine.init([5], Rules(num_deals=1))
    state.rules = Rules(num_deals=1, must_overtake=True)
    assert state.rule_code == engine._rule_code(state.rules)


def test_a_state_built_from_arrays_is_packed_and_a_copy():
    state = played(5, 4, 20)
    built = engine.State(rules=state.rules, **state.arrays())
    assert_packed(built)
    assert built.buffer.tobytes() == state.buffer.tobytes() and not np.shares_memory(built.buffer, state.buffer)


@pytest.mark.parametrize("clone", [copy.deepcopy, lambda s: pickle.loads(pickle.dumps(s))])
def test_deepcopy_pickle_and_copy_give_a_packed_state_that_steps_alike(clone):
    state = played(6, 4, 25)
    twin = clone(state)
    assert_packed(twin)
    assert twin.buffer.tobytes() == state.buffer.tobytes()
    legal = engine.legal_bits(state)
    actions = np.maximum(random_member(legal, np.random.default_rng(0)), 0)
    engine.step(state, actions)
    engine.step(twin, actions)
    assert twin.buffer.tobytes() == state.buffer.tobytes()


def test_a_shallow_copy_shares_the_buffer():
    """``copy.copy``, as for any container of arrays, shares them: here, the one buffer."""
    state = played(7, 2, 5)
    twin = copy.copy(state)
    assert_packed(twin)
    assert twin.buffer is state.buffer
