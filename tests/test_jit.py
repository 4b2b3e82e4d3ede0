"""sergeant_major_env.jit: the cold-cache line (printed while compiling, only when the disk
cache lacks the machine code) and the kernels' settings."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap


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
