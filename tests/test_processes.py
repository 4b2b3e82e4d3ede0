"""Tournaments in worker processes: sergeant_major_env.processes and play_tables(workers=).

Splitting a tournament over processes must not change a single number: every game is played
as in one process (the chunks keep their random generators; the games of deterministic
agents are shared out by whole duplicate groups). A job's error is raised once, a dead worker
is an error and not a hang, Ctrl-C stops every worker, and the progress counts every deal.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from concurrent.futures.process import BrokenProcessPool

import numpy as np
import pytest

from sergeant_major_env.agents import make_agent
from sergeant_major_env import Rules
from sergeant_major_env.evaluation import ChunkJob, TablePlan, play_tables, split_job
from sergeant_major_env.policies import is_deterministic
from sergeant_major_env.processes import available_cpus, can_fork, run_jobs

pytestmark = pytest.mark.skipif(not can_fork(), reason="worker processes need the fork start method")


def _table(agents: str, workers: int, **kwargs) -> tuple[dict, list]:
    plan = TablePlan(progress=False, record=True, workers=workers, **kwargs)
    result = play_tables(agents, plan, make_agent=make_agent)
    return result.to_dict(), result.records


@pytest.mark.parametrize("agents, kwargs", [
    ("heuristic,greedy,heuristic", {"games": 42, "rules": Rules(num_deals=2)}),  # shared out by groups
    ("heuristic,greedy,random,learned", {"games": 12, "rules": Rules(num_deals=1)}),  # a round robin
    ("random,greedy,random", {"games": 30, "rules": Rules(num_deals=2), "batch_size": 12}),  # chunks apart
    ("heuristic,greedy,greedy", {"games": 7, "seatings": "fixed", "rules": Rules(num_deals=2)}),
])
def test_any_number_of_workers_gives_the_same_results_and_records(agents, kwargs):
    expected = _table(agents, 1, **kwargs)
    for workers in (2, 3):
        assert _table(agents, workers, **kwargs) == expected


def test_pimc_searches_the_same_in_worker_processes():
    agents = "pimc:worlds=2:seed=5,heuristic,greedy"
    expected = _table(agents, 1, games=12, rules=Rules(num_deals=1))
    assert _table(agents, 2, games=12, rules=Rules(num_deals=1)) == expected


def test_search_plays_the_same_games_in_any_batch_and_worker_processes():
    """``search`` adds the learned policy's log-probabilities (torch, over the batch of games it
    searches) to the actions' values, where equal values are common: the same games and records
    with one worker, two, and batches of three games."""
    agents = "search,heuristic,greedy"
    expected = _table(agents, 1, games=12, rules=Rules(num_deals=1))
    assert _table(agents, 2, games=12, rules=Rules(num_deals=1)) == expected
    assert _table(agents, 1, games=12, rules=Rules(num_deals=1), batch_size=3) == expected


def test_agents_say_whether_their_games_may_be_played_apart():
    for name in ("heuristic", "greedy", "learned", "pimc", "pimc:rollout=learned", "pimc:rollout=greedy"):
        assert is_deterministic(make_agent(name)), name
    for name in ("random", "pimc:rollout=random", "pimc:others=random", "pimc:epsilon=0.1"):
        assert not is_deterministic(make_agent(name)), name
    sampling = make_agent("learned")
    sampling.sample = True
    assert not is_deterministic(sampling)


def test_split_job_keeps_whole_groups_in_order():
    job = ChunkJob(index=3, seeds=np.arange(60, dtype=np.uint64), seat_players=np.arange(180).reshape(60, 3),
                   rules=Rules(), rng_seed=9, seat_names=[[str(g)] * 3 for g in range(60)])
    for parts in (1, 2, 3, 4, 10, 11, 100):
        pieces = split_job(job, parts, 6)
        assert 1 <= len(pieces) <= min(parts, 10)
        assert all(p.seeds.size % 6 == 0 and p.index == 3 and p.rng_seed == 9 for p in pieces)
        np.testing.assert_array_equal(np.concatenate([p.seeds for p in pieces]), job.seeds)
        np.testing.assert_array_equal(np.concatenate([p.seat_players for p in pieces]), job.seat_players)
        assert [name for p in pieces for name in p.seat_names] == job.seat_names
        sizes = [p.seeds.size for p in pieces]
        assert max(sizes) - min(sizes) <= 6  # as equal as whole groups allow


def _square(job, on_deals):
    on_deals(job)
    return job * job


def test_run_jobs_returns_outcomes_in_job_order_and_counts_every_deal():
    progress = []
    assert run_jobs(_square, list(range(12)), 3, progress.append) == [j * j for j in range(12)]
    assert sum(progress) == sum(range(12))


def _threads_of_worker(job, on_deals):
    from sergeant_major_env import threads

    return threads.threads()


@pytest.mark.skipif(not can_fork(), reason="workers are forked on Linux only")
def test_workers_share_the_cores_for_the_kernels_threads():
    """Each worker's kernels (threads.spread: the engine's big batches, one decision's rollouts) use
    its share of the cores, so the workers together use each core once."""
    from sergeant_major_env import threads

    workers, own = 2, threads.threads()
    assert set(run_jobs(_threads_of_worker, list(range(4)), workers)) == {max(1, min(available_cpus() // workers,
                                                                                  own))}
    assert threads.threads() == own  # this process keeps its own


def _fails_on_five(job, on_deals):
    if job == 5:
        raise ValueError("R13: seat 1 must follow suit S")
    return job


def test_a_failing_job_raises_its_error_once():
    with pytest.raises(ValueError, match="R13: seat 1 must follow suit S"):
        run_jobs(_fails_on_five, list(range(8)), 2)
    assert multiprocessing.active_children() == []


def _dies_on_two(job, on_deals):
    if job == 2:
        os._exit(7)  # as a worker killed for memory would
    return job


def test_a_dead_worker_is_an_error_not_a_hang():
    start = time.monotonic()
    with pytest.raises(BrokenProcessPool):
        run_jobs(_dies_on_two, list(range(4)), 2)
    assert time.monotonic() - start < 60
    assert multiprocessing.active_children() == []


def _slow(job, on_deals):
    on_deals(1)
    time.sleep(30)
    return job


def test_ctrl_c_stops_every_worker():
    """Ctrl-C reaches this process while it waits (here: raised by the progress callback,
    which runs in this process); the workers, still sleeping, are stopped at once."""
    def interrupt(deals):
        raise KeyboardInterrupt

    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run_jobs(_slow, list(range(4)), 2, interrupt)
    assert time.monotonic() - start < 20
    assert multiprocessing.active_children() == []


def test_one_worker_or_one_job_plays_in_this_process():
    pid = os.getpid()
    assert run_jobs(lambda job, on_deals: os.getpid(), [0, 1], 1) == [pid, pid]
    assert run_jobs(lambda job, on_deals: os.getpid(), [0], 4) == [pid]
    assert available_cpus() >= 1


@pytest.mark.parametrize("workers", [0, -1, 1.5, True, "2"])
def test_play_tables_refuses_bad_workers(workers):
    with pytest.raises(ValueError, match="workers must be a positive integer"):
        play_tables("random,random,random", TablePlan(games=6, workers=workers, progress=False))


@pytest.mark.skipif(not can_fork(), reason="workers are forked on Linux only")
def test_a_stop_signal_between_the_fork_and_the_workers_start_ends_the_worker():
    """A worker is forked inside `interrupts.deferred`: a SIGTERM that reaches it before its
    start (`reset_in_worker`) is remembered by the parent's handler. It was then forgotten, and
    the worker waited for jobs forever while the parent's shutdown waited for it (a hang of
    test_a_failing_job_raises_its_error_once seen once in a full run); now it ends the worker."""
    import signal

    from sergeant_major_env import interrupts

    child = os.fork()
    if child == 0:  # the worker
        interrupts._pending = signal.SIGTERM
        try:
            interrupts.reset_in_worker()
        finally:
            os._exit(0)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 128 + signal.SIGTERM
