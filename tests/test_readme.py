"""README.md is true as written: every ```python block runs on a fresh interpreter.

Each block runs in its own subprocess (so blocks cannot lean on each other's imports or
state), in a temporary folder (so files it writes land there), with a time limit.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import missing_extra_of_code

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def python_blocks() -> list[tuple[int, str]]:
    """(line number, code) of every ```python block of README.md."""
    text = README.read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start()) + 1, m.group(1)) for m in _BLOCK.finditer(text)]


def test_readme_has_python_examples():
    assert len(python_blocks()) >= 4


@pytest.mark.parametrize("line,code", python_blocks(), ids=[f"README.md:{n}" for n, _ in python_blocks()])
def test_readme_python_block_runs_as_written(line, code, tmp_path):
    if missing := missing_extra_of_code(code):
        pytest.skip(missing)
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True,
                            text=True, timeout=300)
    if result.returncode and (missing := missing_extra_of_code(code, result.stderr)):
        pytest.skip(missing)
    assert result.returncode == 0, f"README.md line {line} failed:\n{result.stderr[-3000:]}"
