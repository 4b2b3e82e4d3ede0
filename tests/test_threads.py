"""Big batches on every core with Python threads (sergeant_major_env.threads.spread): the same
games, observations and heuristic actions, bit for bit, as one core; the all-or-nothing of
engine.step; forked workers after the parent used its threads.

The thresholds are lowered and the cores set to 3 here (uneven chunks, and threads even on a
one-core runner), so that small batches go through the threaded path."""

from __future__ import annotations

import multiprocessing

import numpy as np
import pytest

from sergeant_major_env.agents import heuristic_kernels
from sergeant_major_env.agents.heuristic import HeuristicAgent
from sergeant_major_env import engine, observation
from sergeant_major_env import threads as thread_pool
from sergeant_major_env.cards import NUM_ACTIONS, bits_to_bool, random_member
from sergeant_major_env.engine import IllegalActionError
from sergeant_major_env.observation import observe, observe_card_sets
from sergeant_major_env.rules import Rules

GAMES = 2500


@pytest.fixture
def threads(monkeypatch):
    """Every batch of 2 games or more on 3 threads (whatever this machine has); yields a list
    that counts the calls of thread_pool.spread, to show the threaded path ran."""
    calls = []
    spread = thread_pool.spread
    for module in (thread_pool, engine):  # the threads, even where tbb would take over
        monkeypatch.setattr(module, "PARALLEL_SAFE", False)
    monkeypatch.setattr(thread_pool, "_cores", lambda: 3)
    for module, name in ((engine, "_STEP_THREADS_FROM"), (engine, "_LEGAL_THREADS_FROM"),
                         (observation, "_THREADS_FROM"), (heuristic_kernels, "THREADS_ROWS")):
        monkeypatch.setattr(module, name, 2)
    monkeypatch.setattr(heuristic_kernels, "_parallel", lambda rows: False)

    def counted(run, games):
        calls.append(games)
        return spread(run, games)

    monkeypatch.setattr(thread_pool, "spread", counted)  # over_games spreads every job: the engine's too
    previous = thread_pool.set_threads(None)
    yield calls
    thread_pool.set_threads(previous)


def _one_core(function, *arguments, **options):
    """``function`` with every batch on one core (the serial kernels)."""
    previous = thread_pool.set_threads(1)
    try:
        return function(*arguments, **options)
    finally:
        thread_pool.set_threads(previous)


def _same_state(a: engine.State, b: engine.State) -> bool:
    return a.buffer.tobytes() == b.buffer.tobytes()


def test_chunks_cover_the_batch_in_order():
    assert thread_pool.chunks(10, 3) == [(0, 3), (3, 6), (6, 10)]
    assert thread_pool.chunks(2, 3) == [(0, 1), (1, 2)]
    assert thread_pool.chunks(0, 3) == [(0, 0)]


@pytest.mark.parametrize("rules", [Rules(num_deals=2), Rules(num_deals=1, must_overtake=True, must_overtrump=True,
                                                                 dealer_builds_talon=True)], ids=["default", "options"])
@pytest.mark.slow
def test_threaded_games_match_one_core(threads, rules):
    """Thousands of random games, stepped whole and in subsets: every array of the state, the
    legal actions, the observations and the card sets the same as on one core, at every step."""
    rng = np.random.default_rng(7)
    threaded = engine.init(engine.game_seeds(50, GAMES), rules)
    serial = threaded.copy()
    for turn in range(160):
        legal = engine.legal_bits(threaded)
        assert np.array_equal(legal, _one_core(engine.legal_bits, serial))
        seats = rng.integers(0, 3, GAMES)
        assert np.array_equal(observe(threaded, seats), _one_core(observe, serial, seats))
        for a, b in zip(observe_card_sets(threaded, 1), _one_core(observe_card_sets, serial, 1)):
            assert np.array_equal(a, b)
        actions = random_member(legal, rng)
        if turn % 3 == 2:  # a subset, in increasing order (the vec env's opponent rounds) or not
            games = rng.permutation(GAMES)[:GAMES // 2]
            engine.step(threaded, actions[games], autoreset=True, games=games,
                        legal=engine.legal_bits(threaded, games))
            _one_core(engine.step, serial, actions[games], autoreset=True, games=games)
        else:
            engine.step(threaded, actions, autoreset=True, legal=legal)
            _one_core(engine.step, serial, actions, autoreset=True)
        assert _same_state(threaded, serial), f"turn {turn}"
    assert threaded.game_ended.any() or threaded.episode.max() > 0  # games finished and restarted
    assert len(threads) > 4 * 160


def test_illegal_action_in_the_last_chunk_changes_no_game(threads):
    """An illegal action of the last game: the same one-line error as on one core, no game changed."""
    rng = np.random.default_rng(3)
    state = engine.init(engine.game_seeds(1, 900))
    for _ in range(20):
        engine.step(state, random_member(engine.legal_bits(state), rng), autoreset=True)
    actions = random_member(engine.legal_bits(state), rng)
    actions[-1] = int(np.flatnonzero(~bits_to_bool(engine.legal_bits(state)[-1:], NUM_ACTIONS)[0])[0])
    before = state.copy()
    with pytest.raises(IllegalActionError) as threaded_error:
        engine.step(state, actions)
    assert threads and _same_state(state, before)
    with pytest.raises(IllegalActionError) as serial_error:
        _one_core(engine.step, state, actions)
    assert str(threaded_error.value) == str(serial_error.value) and "\n" not in str(serial_error.value)
    assert _same_state(state, before)


def test_bad_seat_in_the_last_chunk_writes_nothing(threads):
    state = engine.init(engine.game_seeds(1, 600))
    out = np.full((600, observation.OBSERVATION_SIZE), 7.0, dtype=np.float32)
    seats = np.zeros(600, dtype=np.int64)
    seats[-1] = 3
    with pytest.raises(ValueError, match="seat must be 0, 1 or 2") as error:
        observe(state, seats, out=out)
    assert (out == 7.0).all() and threads and "\n" not in str(error.value)


def test_heuristic_threaded_matches_one_core(threads):
    """The heuristic's card kernels in chunks on threads: the same actions as on one core."""
    rng = np.random.default_rng(5)
    state = engine.init(engine.game_seeds(9, 1500), Rules(num_deals=2))
    agent = HeuristicAgent()
    compared = 0
    for _ in range(40):
        legal = engine.legal_bits(state)
        obs, mask = observe(state, state.to_act), bits_to_bool(legal, NUM_ACTIONS)
        before = len(threads)
        got = agent.act(obs, mask, np.random.default_rng(1))
        want = _one_core(agent.act, obs, mask, np.random.default_rng(1))
        assert np.array_equal(got, want)
        compared += len(threads) > before
        engine.step(state, np.where(rng.random(1500) < 0.3, random_member(legal, rng), got), autoreset=True)
    assert compared > 20  # card decisions went through the threads


def _child_steps(seed: int, queue) -> None:
    """In a forked child: big batches on the threads (a pool of its own), their final state."""
    rng = np.random.default_rng(seed)
    state = engine.init(engine.game_seeds(seed, 3000), Rules(num_deals=2))
    for _ in range(60):
        engine.step(state, random_member(engine.legal_bits(state), rng), autoreset=True)
        observe(state, 0)
    queue.put((thread_pool._pool is not None, [state.buffer.tobytes()]))


def test_forked_child_after_the_parent_used_its_threads(threads):
    """evaluate's workers are forked: a child of a parent whose pool ran makes its own pool,
    steps big batches right and does not hang."""
    _child_steps(11, queue := _ListQueue())  # the parent's pool runs
    assert thread_pool._pool is not None and threads
    context = multiprocessing.get_context("fork")
    child_queue = context.Queue()
    child = context.Process(target=_child_steps, args=(11, child_queue))
    child.start()
    used_threads, arrays = child_queue.get(timeout=120)
    child.join(timeout=60)
    assert child.exitcode == 0, "the forked child hung or died"
    assert used_threads and arrays == queue.items[0][1]


class _ListQueue:
    def __init__(self):
        self.items = []

    def put(self, item):
        self.items.append(item)


def test_threads_setting():
    previous = thread_pool.set_threads(1)
    try:
        assert thread_pool.threads() == 1 and not thread_pool.use_threads(10 ** 6, 1)
        with pytest.raises(ValueError, match="threads must be a whole number"):
            thread_pool.set_threads(0)
    finally:
        thread_pool.set_threads(previous)


@pytest.mark.parametrize("value, threads, message", [("1", 1, ""), ("abc", None, "must be a whole number"),
                                                     ("0", None, "must be a whole number")])
def test_threads_variable(value, threads, message):
    """SERGEANT_MAJOR_THREADS caps the threads; a bad value is one line on stderr, then ignored."""
    import os
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-c", "from sergeant_major_env import threads; "
                           "print(threads.threads(), threads._cores())"], capture_output=True, text=True, timeout=120,
                          env={**os.environ, thread_pool.THREADS_VARIABLE: value})
    assert done.returncode == 0, done.stderr
    got, cores = map(int, done.stdout.split())
    assert got == (cores if threads is None else threads)
    assert (message in done.stderr and len(done.stderr.strip().splitlines()) == 1) if message else not done.stderr
