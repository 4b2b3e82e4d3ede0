"""sergeant_major_env.jit: the cold-cache line (printed while compiling, only when the disk
cache lacks the machine code) and the kernels' settings."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest


def test_one_line_while_compiling_and_silence_once_cached(tmp_path):
    module = tmp_path / "tiny_kernels.py"
    module.write_text(textwrap.dedent("""
        import numpy as np
        from sergeant_major_env.jit import announce_compiling, kernel

        @kernel(counted=False)
        def _add(a, b):
            for i in range(a.size):
                a[i] += b

        @kernel
        def add(a, b):
            _add(a, b)

        announce_compiling((add,), "the tiny kernels")
        a = np.zeros(3)
        add(a, 2.0)
        print(a.sum())
    """))
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": os.pathsep.join(
        [str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    runs = [subprocess.run([sys.executable, str(module)], capture_output=True, text=True, env=env, cwd=tmp_path)
            for _ in range(2)]
    assert [run.returncode for run in runs] == [0, 0], runs[0].stderr[-2000:]
    assert runs[0].stdout.strip() == runs[1].stdout.strip() == "6.0"
    line, = runs[0].stderr.strip().splitlines()  # cold: one line, naming the cache folder
    assert line.startswith(f"compiling the tiny kernels (once; cached in {tmp_path / 'cache'}")
    assert runs[1].stderr == ""  # warm: silent


def test_a_warm_run_playing_a_game_prints_nothing():
    """Once a program's kernels are cached, its next run says nothing about compiling (the line
    names only kernels that every game compiles, so it is never printed for ones a program
    did not use)."""
    code = textwrap.dedent("""
        import numpy as np
        from sergeant_major_env import engine, observation
        from sergeant_major_env.one_game import OneGame
        state = engine.init(engine.game_seeds(0, 3))
        engine.step(state, np.argmax(engine.legal_action_mask(state), axis=1))
        observation.observe(state, 0)
        game = OneGame(engine.init([1]))
        game.step(52)
        print("played")
    """)
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
            for _ in range(2)]
    assert [run.stdout.strip() for run in runs] == ["played", "played"], runs[0].stderr[-2000:]
    assert runs[1].stderr == ""


@pytest.mark.slow  # over 2.5 s warm: the full suite runs it, `-m "not slow"` leaves it out
def test_a_change_to_any_kernel_module_makes_every_cached_kernel_stale(tmp_path):
    """numba judges a cached kernel by its own file, but a kernel holds the helpers it calls
    from other modules (the rollout kernel: the engine's rules, the observation, the network).
    Each kernel's cache is stamped with the digest of every kernel module's source: with
    another digest (a module edited) the same kernel compiles again instead of loading stale
    machine code."""
    from sergeant_major_env import jit

    assert {"engine.py", "observation.py", "agents/network_kernels.py", "agents/pimc_kernels.py",
            "agents/heuristic_kernels.py", "jit.py"} <= set(jit.kernel_source_files())
    assert "evaluation.py" not in jit.kernel_source_files()  # no kernels: editing it keeps the cache
    module = tmp_path / "stamped_kernels.py"
    module.write_text(textwrap.dedent("""
        import os
        import numpy as np
        from sergeant_major_env import jit

        jit._digest = os.environ["TEST_DIGEST"]  # as if the kernel modules' sources were these

        @jit.kernel
        def double(a):
            return 2 * a

        jit.announce_compiling((double,), "the stamped kernel")
        print(double(np.ones(2)).sum(), double._cache._cache_file._source_stamp[1])
    """))
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": os.pathsep.join(
        [str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    runs = [subprocess.run([sys.executable, str(module)], capture_output=True, text=True, cwd=tmp_path,
                           env={**env, "TEST_DIGEST": digest}) for digest in ("one", "one", "two", "two")]
    assert [run.stdout.split() for run in runs] == [["4.0", "one"], ["4.0", "one"], ["4.0", "two"], ["4.0", "two"]], \
        runs[0].stderr[-2000:]
    compiled = [run.stderr.startswith("compiling the stamped kernel") for run in runs]
    assert compiled == [True, False, True, False]


GROUPED = '''
from sergeant_major_env.jit import kernel

@kernel(ahead="tiny", seconds=2, signature="float64[::1], float64")
def add(a, b):
    for i in range(a.size):
        a[i] += b

@kernel(ahead="tiny", seconds=1, signature="float64[::1], float64")
def scale(a, b):
    for i in range(a.size):
        a[i] *= b
'''

RUN_GROUPED = '''
import sys
import numpy as np
import grouped_kernels as g
from sergeant_major_env import jit
if sys.argv[1] == "no-helpers":
    sys.executable = "/no/such/python"  # a helper cannot start: this process compiles alone
jit.compile_ahead("tiny", "the tiny group")
a = np.ones(3)
g.add(a, 2.0)
if sys.argv[1] == "both":
    g.scale(a, 2.0)
args = jit._AHEAD_KERNELS[("grouped_kernels", "scale")][1]
print(a.sum(), jit._cold_signature(g.scale, args), len(g.scale.overloads),
      sum(g.add.stats.cache_misses.values()) + sum(g.scale.stats.cache_misses.values()))
'''


def _grouped(tmp_path, **variables):
    (tmp_path / "grouped_kernels.py").write_text(GROUPED)
    (tmp_path / "run_grouped.py").write_text(RUN_GROUPED)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": os.pathsep.join(
        [str(tmp_path), os.environ.get("PYTHONPATH", "")]), **variables}
    return lambda *argv: subprocess.Popen([sys.executable, str(tmp_path / "run_grouped.py"), *argv], env=env,
                                          cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_compile_ahead_compiles_a_cold_group_on_every_core_and_later_runs_load_it(tmp_path):
    """A cold group compiles at once, the work shared between this process and a helper
    process per other core (by each kernel's seconds: ``add`` here, ``scale`` in the helper);
    both land in the disk cache although the program called only ``add``; the next run loads
    both without compiling and prints nothing."""
    from sergeant_major_env import jit, threads

    start = _grouped(tmp_path)
    out, err = start("add").communicate(timeout=600)
    total, scale_cold, scale_here, compiled = out.split()
    assert (total, scale_cold) == ("9.0", "False"), err[-2000:]  # scale compiled ahead, into the cache
    line, = err.strip().splitlines()
    cores = min(threads.threads(), 2)
    assert line.startswith(f"compiling the tiny group{f' on {cores} cores' if cores > 1 else ''} "
                           f"(once; cached in {tmp_path / 'cache'}")
    if cores > 1 and jit._can_start_helpers():
        assert scale_here == "0"  # the helper compiled it: this process only loads it when called
    out, err = start("both").communicate(timeout=600)
    assert out.split() == ["18.0", "False", "1", "0"] and err == ""  # warm: loaded, nothing compiled


@pytest.mark.parametrize("threads", ["1", ""])
@pytest.mark.slow  # over 2.5 s warm: the full suite runs it, `-m "not slow"` leaves it out
def test_compile_ahead_without_helpers_and_in_processes_started_together(tmp_path, threads):
    """Where no helper can start, the process compiles the whole group itself; two cold
    processes at once (evaluate's workers; with ``SERGEANT_MAJOR_THREADS=1`` each without
    helpers) share the kernels through their lock files and both give the right results,
    each kernel compiled once between them."""
    start = _grouped(tmp_path, SERGEANT_MAJOR_THREADS=threads)
    out, err = start("no-helpers").communicate(timeout=600)
    assert out.split() == ["9.0", "False", "1", "2"], err[-2000:]  # both compiled here
    (tmp_path / "grouped_kernels.py").write_text(GROUPED + "\n# edited: every cached kernel is stale\n")
    runs = [start("both"), start("both")]
    results = [run.communicate(timeout=600) for run in runs]
    assert [out.split()[:3] for out, _ in results] == [["18.0", "False", "1"]] * 2, results
    if threads == "1":  # no helpers: what the two processes compiled adds up to the two kernels
        assert sum(int(out.split()[3]) for out, _ in results) == 2, results


RUN_IN_WORKERS = '''
import numpy as np
import grouped_kernels as g
from sergeant_major_env import jit
from sergeant_major_env.processes import run_jobs

def play(job, on_deals):
    jit.compile_ahead("tiny", "the tiny group")
    a = np.ones(3)
    g.add(a, 2.0)
    g.scale(a, 2.0)
    return float(a.sum())

jit._seconds = 100.0  # as if this process had compiled before: its workers inherit the count
print(run_jobs(play, [0, 1], workers=2), 0 < jit.compile_seconds() - 100 < 60)
'''


def test_workers_compiling_a_cold_group_print_one_line_for_all_and_count_their_time(tmp_path):
    """Issue 50: evaluate's two worker processes each printed "compiling the game's kernels"
    (and neither said on how many cores). Forked by run_jobs, the workers share the group's
    kernels out and the first of them says so once, on the cores they use together; the
    parent's compile_seconds counts their time (evaluate reports it apart from the play)."""
    from sergeant_major_env.processes import can_fork

    if not can_fork():
        pytest.skip("worker processes need the fork start method")
    (tmp_path / "grouped_kernels.py").write_text(GROUPED)
    (tmp_path / "run_in_workers.py").write_text(RUN_IN_WORKERS)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "SERGEANT_MAJOR_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, str(tmp_path / "run_in_workers.py")], capture_output=True, text=True,
                         env=env, cwd=tmp_path, timeout=600)
    assert run.stdout.split() == ["[18.0,", "18.0]", "True"], run.stderr[-2000:]
    line, = run.stderr.strip().splitlines()
    assert line.startswith(f"compiling the tiny group on 2 cores (once; cached in {tmp_path / 'cache'}")


@pytest.mark.slow  # over 2.5 s warm: the full suite runs it, `-m "not slow"` leaves it out
def test_each_kernel_compiled_ahead_is_called_with_its_declared_signature():
    """The signatures of ``@kernel(ahead=..., signature=...)`` are the types the programs call
    the kernels with (a wrong one would only cost a second compile, at the first call): a
    game with the heuristic and pimc, the AEC env, and big batches on threads, with compiling
    ahead off so that only the calls compile or load."""
    code = textwrap.dedent("""
        import numpy as np
        from sergeant_major_env import jit
        jit.AHEAD = False
        from sergeant_major_env import threads
        threads._cores = lambda: 2  # the threaded kernels run on any machine
        from sergeant_major_env import Rules, engine, observation, sergeant_major_v0
        from sergeant_major_env.agents import make_agent
        from sergeant_major_env.cli import main

        try:
            main(["evaluate", "--agents", "heuristic,pimc:worlds=2,random", "--games", "6", "--option",
                  "num_deals=1", "--workers", "1", "--no-progress"])
        except SystemExit:
            pass
        try:  # the belief's exact draw of the worlds
            main(["evaluate", "--agents", "pimc:worlds=2:belief=learned:belief_exact=true,heuristic,random", "--games",
                  "3", "--option", "num_deals=1", "--workers", "1", "--no-progress"])
        except SystemExit:
            pass
        try:  # a second deal: the exchanges' gives (R19)
            main(["evaluate", "--agents", "heuristic,heuristic,random", "--games", "6", "--option", "num_deals=2",
                  "--workers", "1", "--no-progress"])
        except SystemExit:
            pass
        env = sergeant_major_v0.env()
        env.reset(seed=0)
        for agent in env.agent_iter(40):
            obs, _, done, cut, _ = env.last()
            env.step(None if done or cut else int(np.flatnonzero(obs["action_mask"])[-1]))
        state = engine.init(engine.game_seeds(0, 32768), Rules(num_deals=1))  # step and legal on threads
        for _ in range(12):
            engine.step(state, np.argmax(engine.legal_action_mask(state), axis=1))
        heuristic = make_agent("heuristic")
        heuristic.act(observation.observe(state, state.to_act), engine.legal_action_mask(state),
                      np.random.default_rng(0))
        missing = []
        for (module, name), (dispatcher, arguments, _) in sorted(jit._AHEAD_KERNELS.items()):
            if arguments not in dispatcher.signatures:
                missing.append(f"{module}.{name}: declared {arguments}, called with {dispatcher.signatures}")
        print("\\n".join(missing) or "all declared", len(jit._AHEAD_KERNELS))
    """)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=1200)
    assert run.returncode == 0, run.stderr[-3000:]
    last = run.stdout.strip().splitlines()[-1]
    assert last.startswith("all declared"), run.stdout[-3000:]
    assert int(last.split()[-1]) >= 20  # the groups' kernels were all imported and checked


def test_buffer_view_is_the_views_numpy_makes_sharing_the_buffer():
    """jit.buffer_view (engine.state_arrays_k's views of a state's one buffer) gives the array of
    ``buffer[start:].view(dtype).reshape(shape)``: same numbers, shape and strides, and writes
    through it land in the buffer."""
    import numba
    import numpy as np

    from sergeant_major_env import Rules, engine
    from sergeant_major_env.jit import buffer_view

    @numba.njit
    def views(buffer, start):
        flat = buffer_view(buffer, start, np.uint64, 3)
        table = buffer_view(buffer, start, np.int16, (2, np.int64(3)))
        cube = buffer_view(buffer, start + 8, np.int8, (2, 2, 2))
        cube[1, 1, 1] = -7
        return flat.copy(), table.copy(), table.strides, cube.strides

    buffer = np.arange(64, dtype=np.uint8)
    flat, table, table_strides, cube_strides = views(buffer, 16)
    assert flat.tolist() == buffer[16:40].view(np.uint64).tolist()
    assert table.tolist() == buffer[16:28].view(np.int16).reshape(2, 3).tolist()
    assert (table_strides, cube_strides) == ((6, 2), (4, 2, 1))
    assert buffer[8 + 16 + 7].view(np.int8) == -7

    # The engine's kernels read a state's fields through it: the state's own numpy views.
    @numba.njit
    def fields(buffer):
        s = engine.state_arrays_k(buffer)
        return s[engine.HANDS].copy(), s[engine.CARD_TRICK].copy(), s[engine.SCORES].copy(), s[engine.SEED].copy()

    state = engine.init([3, 4, 5], Rules(num_deals=2))
    hands, card_trick, scores, seeds = fields(state.buffer)
    assert (hands == state.hands).all() and (card_trick == state.card_trick).all()
    assert (scores == state.scores).all() and (seeds == state.seed).all()


def test_kernel_signatures_are_composed_from_jits_named_types():
    """The argument types of the kernels compiled ahead are named once, in jit (`BUFFER`,
    `GAMES`, `SETS`, `tuple_of`, ...): a kernel module composes its signatures from those
    names and spells no numba type (`"uint64[::1]"`) of its own."""
    import re

    from sergeant_major_env import jit

    package = os.path.dirname(os.path.abspath(jit.__file__))
    spelled = set()
    for name in jit.kernel_source_files():
        with open(os.path.join(package, name), encoding="utf-8") as source:
            if name != "jit.py" and re.search(r'"[^"\n]*\w\[(:, )*::1\]', source.read()):
                spelled.add(name)
    assert spelled == set()
    assert jit.tuple_of(jit.REALS, jit.INT) == "Tuple((float64[::1], int64,))"
