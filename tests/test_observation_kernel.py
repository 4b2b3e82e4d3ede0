"""The compiled observation gives 0.3.0's vectors, every float32 bit, and takes what it took.

``tests/reference_observation.py`` is 0.3.0's numpy observation, frozen. Thousands of random
games under several rule options (RULES.md section 9) are observed at every step by every
seat (0, 1, 2 and a random seat per game), in batches of 1, 5 and 300 games (the serial
kernel and the parallel one), with :func:`observe` (also into a preallocated ``out``) and
:func:`observe_card_sets`, and must give the reference's arrays byte for byte. Then every
kind of ``seat`` the public functions accept (Python ints, numpy ints of each width, per-game
arrays of each width) loads the kernels without a compile or typing error, and bad seats
and bad ``out`` arrays get one-line errors (the seats the same ones as before).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import reference_observation
from sergeant_major_env import Rules, engine, observation
from sergeant_major_env.cards import random_member
from sergeant_major_env.observation import OBSERVATION_SIZE, observe, observe_card_sets

RULE_SETS = (
    Rules(num_deals=2),
    Rules(num_deals=2, must_overtake=True),
    Rules(num_deals=2, must_overtrump=True),
    Rules(num_deals=2, exchanges=False),
    Rules(num_deals=2, dealer_builds_talon=True),
    Rules(num_deals=3, must_overtake=True, must_overtrump=True, dealer_builds_talon=True),
)
INT_DTYPES = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal dtypes, shapes and raw bytes (every float32 bit: -0.0 and NaN too)."""
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def assert_same_as_reference(state: engine.State, seat) -> None:
    expected = reference_observation.observe(state, seat)
    assert same_bits(observe(state, seat), expected)
    out = np.full((state.batch_size, OBSERVATION_SIZE), np.nan, dtype=np.float32)  # every entry must be written
    assert observe(state, seat, out=out) is out and same_bits(out, expected)
    card_sets, rest = observe_card_sets(state, seat)
    expected_sets, expected_rest = reference_observation.observe_card_sets(state, seat)
    assert same_bits(card_sets, expected_sets) and same_bits(rest, expected_rest)


def play_and_compare(batch: int, rules: Rules, seed: int, single_games: bool = False) -> int:
    """Random legal games of ``batch`` games to the end, compared with the reference at every
    step for one seat of every game (0, 1, 2 in turn) and a random seat per game (each game
    alone too if ``single_games``). Returns the number of steps."""
    rng = np.random.default_rng(seed)
    state = engine.init(engine.game_seeds(seed, batch), rules)
    steps = 0
    while True:  # each seat for every game, and a seat per game, in turn
        for seat in (steps % 3, rng.integers(0, 3, size=batch)):
            assert_same_as_reference(state, seat)
        if single_games:
            for g in range(batch):
                assert_same_as_reference(state.take([g]), int(rng.integers(0, 3)))
        if (state.phase == engine.OVER).all():
            return steps
        legal = engine.legal_bits(state)
        engine.step(state, np.maximum(random_member(legal, rng), 0), legal=legal)
        steps += 1


@pytest.mark.parametrize("rules", RULE_SETS, ids=lambda r: ",".join(f"{k}={v}" for k, v in r.to_dict().items()
                                                                   if v != getattr(Rules(), k)))
def test_kernels_give_the_reference_vectors_bit_for_bit(rules):
    """300 games (the parallel kernel where it runs), 5 games and each of those alone, every
    step, every seat: the same bytes as 0.3.0's numpy observation."""
    assert observation._PARALLEL_FROM <= 300
    assert play_and_compare(300, rules, seed=7) > 100
    assert play_and_compare(5, rules, seed=8, single_games=True) > 100


def test_a_game_reads_the_same_alone_and_in_any_batch():
    """The view of a game does not depend on the batch around it (nor the kernel chosen)."""
    rng = np.random.default_rng(3)
    state = engine.init(engine.game_seeds(3, 300), Rules(num_deals=1))
    for _ in range(30):
        legal = engine.legal_bits(state)
        engine.step(state, np.maximum(random_member(legal, rng), 0), legal=legal)
    seats = rng.integers(0, 3, size=300)
    whole = observe(state, seats)
    for games in (np.arange(1), np.arange(5), np.arange(255), np.arange(256), rng.permutation(300)[:40]):
        assert same_bits(observe(state.take(games), seats[games]), whole[games])


SEAT_KINDS = ([0, 1, 2, True]
              + [dtype(seat) for dtype in INT_DTYPES for seat in (0, 2)]
              + [np.array(1, dtype=dtype) for dtype in INT_DTYPES])


@pytest.mark.parametrize("batch", (1, 5, 300))
def test_every_kind_of_seat_loads_the_kernels(batch):
    """Python ints, numpy ints of every width, 0-d arrays and per-game arrays of every width
    (and lists) give the reference's vectors; each kernel is compiled for one signature only
    (the seats reach it as intp), so no seat type compiles anything at a user's call."""
    state = engine.init(engine.game_seeds(11, batch), Rules())
    rng = np.random.default_rng(batch)
    per_game = rng.integers(0, 3, size=batch)
    kinds = SEAT_KINDS + [per_game.astype(dtype) for dtype in INT_DTYPES] + [per_game.tolist()]
    for step in range(3):
        for seat in kinds:
            assert_same_as_reference(state, seat)
        legal = engine.legal_bits(state)
        engine.step(state, np.maximum(random_member(legal, rng), 0), legal=legal)
    for run in (observation.observe_range_k, observation._observe_parallel):
        assert len(run.signatures) <= 1, run.signatures


BAD_SEATS = (3, -1, 255, np.int8(-1), np.uint8(3), np.int64(-3), np.uint64(2**64 - 1), [0], [0, 1, 2, 0, 1, 2],
             np.array([0, 1, 3, 0, 1]), np.array([-1, 0, 0, 0, 0], dtype=np.int8),
             np.array([0, 0, 0, 0, 255], dtype=np.uint8), np.zeros((5, 1), dtype=np.int64))


@pytest.mark.parametrize("seat", BAD_SEATS, ids=repr)
def test_bad_seats_get_the_same_one_line_errors_as_before(seat):
    """A seat that is not 0, 1 or 2, or not one per game, is refused with the reference's
    error (type and message; on one line where 0.3.0 used several), by both functions,
    before anything is written."""
    state = engine.init(engine.game_seeds(0, 5), Rules())
    with pytest.raises(Exception) as expected:
        reference_observation.observe(state, seat)
    out = np.full((5, OBSERVATION_SIZE), 7, dtype=np.float32)
    for call in (lambda: observe(state, seat), lambda: observe(state, seat, out=out),
                 lambda: observe_card_sets(state, seat)):
        with pytest.raises(type(expected.value)) as error:
            call()
        message = str(error.value)
        assert "\n" not in message and message.startswith("seat must be 0, 1 or 2, one per game (5), got ")
        if "\n" not in str(expected.value):  # 0.3.0 wrote a 2-d array's repr on several lines
            assert message == str(expected.value)
    assert (out == 7).all(), "a refused call wrote into out"


def test_bad_out_arrays_get_one_line_errors():
    state = engine.init(engine.game_seeds(0, 2), Rules())
    right = np.empty((2, OBSERVATION_SIZE), dtype=np.float32)
    for bad in (np.empty((2, OBSERVATION_SIZE), dtype=np.float64), np.empty((3, OBSERVATION_SIZE), dtype=np.float32),
                np.empty((2, OBSERVATION_SIZE + 1), dtype=np.float32)[:, 1:], right.tolist(),
                np.broadcast_to(np.float32(0), (2, OBSERVATION_SIZE))):
        with pytest.raises(ValueError, match=r"^out must be a writeable C-contiguous float32 array of shape \(2, 919\)"
                                             r"[^\n]*$"):
            observe(state, 0, out=bad)


def run_python(code: str) -> subprocess.CompletedProcess:
    """``code`` in a fresh Python (this checkout's package): a process of its own for what may
    start numba's threads, which this test process then forks no worker after."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [os.getcwd(), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env,
                          timeout=600)


def test_the_parallel_kernel_gives_the_serial_kernels_bytes():
    """The parallel kernel (used from 256 games where numba has tbb) writes the same bytes as
    the serial one, for observe and the card sets, at every step of 300 games."""
    done = run_python("""
        import numpy as np
        from sergeant_major_env import Rules, engine, observation as ob
        from sergeant_major_env.cards import random_member
        rng = np.random.default_rng(5)
        state = engine.init(engine.game_seeds(5, 300), Rules(num_deals=2, must_overtake=True))
        steps = 0
        while (state.phase != engine.OVER).any():
            seats = rng.integers(0, 3, size=300)
            for out, sets in (((300, ob.OBSERVATION_SIZE), (0, 14)), ((300, ob._REST_WIDTH), (300, 14))):
                a, b = np.full(out, np.nan, np.float32), np.full(out, np.nan, np.float32)
                sa, sb = np.zeros(sets, np.uint64), np.ones(sets, np.uint64)
                assert (ob.observe_range_k(0, 300, seats, a, sa, state.buffer)
                        and ob._observe_parallel(seats, b, sb, state.buffer))
                assert a.tobytes() == b.tobytes() and sa.tobytes() == sb.tobytes()
            legal = engine.legal_bits(state)
            engine.step(state, np.maximum(random_member(legal, rng), 0), legal=legal)
            steps += 1
        print(steps)
        """)
    assert done.returncode == 0 and int(done.stdout) > 100, done.stderr[-2000:]


def test_a_worker_forked_after_a_big_batch_observes():
    """evaluate, distill and the tournaments fork workers: a process forked after observing a
    big batch must observe big batches too (numba's GNU OpenMP layer would kill it)."""
    done = run_python("""
        import os
        import numpy as np
        from sergeant_major_env import Rules, engine
        from sergeant_major_env.observation import observe
        state = engine.init(engine.game_seeds(1, 300), Rules())
        first = observe(state, 1)
        pid = os.fork()
        if pid == 0:
            os._exit(0 if observe(state, 1).tobytes() == first.tobytes() else 1)
        print(os.waitpid(pid, 0)[1])
        """)
    assert done.returncode == 0 and done.stdout.strip() == "0", (done.stdout, done.stderr[-2000:])
