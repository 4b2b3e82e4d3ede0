"""README.md is true as written: every ```python block runs on a fresh interpreter, and every
link into a docs page's section names a heading of that page.

Each block runs in its own subprocess (so blocks cannot lean on each other's imports or
state), in a temporary folder (so files it writes land there), with a time limit.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

from conftest import example_param, missing_extra_of_code

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def python_blocks() -> list[tuple[int, str]]:
    """(line number, code) of every ```python block of README.md."""
    text = README.read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start()) + 1, m.group(1)) for m in _BLOCK.finditer(text)]


def test_readme_has_python_examples():
    assert len(python_blocks()) >= 4


@pytest.mark.parametrize("line,code", [example_param(n, code, code=code, id=f"README.md:{n}")
                                       for n, code in python_blocks()])
def test_readme_python_block_runs_as_written(line, code, tmp_path):
    if missing := missing_extra_of_code(code):
        pytest.skip(missing)
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True,
                            text=True, timeout=300)
    if result.returncode and (missing := missing_extra_of_code(code, result.stderr)):
        pytest.skip(missing)
    assert result.returncode == 0, f"README.md line {line} failed:\n{result.stderr[-3000:]}"


_LINK_TO_SECTION = re.compile(r"\]\((docs/[^)#\s]+\.md)#([^)\s]+)\)")


def heading_ids(page: Path) -> set[str]:
    """The ids mkdocs gives the headings of ``page`` (Python-Markdown's toc slugify; fenced code left out)."""
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.S | re.M)
    ids = set()
    for heading in re.findall(r"^#{1,6} (.+?)#*$", text, re.M):
        plain = unicodedata.normalize("NFKD", heading.strip()).encode("ascii", "ignore").decode()
        ids.add(re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", plain).strip().lower()))
    return ids


def test_every_link_into_a_docs_section_names_a_heading_of_that_page():
    """Issue 53: README linked results.md's sections by names that the page no longer has."""
    links = _LINK_TO_SECTION.findall(README.read_text(encoding="utf-8"))
    assert links
    broken = [f"{page}#{anchor}" for page, anchor in links if anchor not in heading_ids(ROOT / page)]
    assert broken == [], broken


def test_heading_ids_are_mkdocs_slugs(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Speed and results\n## README's quick run\n### The shipped agent: `learned`\n"
                    "```bash\n# not a heading\n```\n#### A belief model: `pimc:belief=learned` (issue 29)\n",
                    encoding="utf-8")
    assert heading_ids(page) == {"speed-and-results", "readmes-quick-run", "the-shipped-agent-learned",
                                 "a-belief-model-pimcbelieflearned-issue-29"}
