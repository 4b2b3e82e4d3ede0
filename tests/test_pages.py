"""The pages' files (sergeant_major_env/pages/): package data found with importlib.resources,
shipped by pyproject.toml's package-data, each script valid JavaScript (``node --check`` where
Node is installed), and put together into pages with no placeholder left."""

from __future__ import annotations

import fnmatch
import re
import shutil
import subprocess
import tomllib
from importlib import resources
from pathlib import Path

import pytest

from sergeant_major_env import pages
from sergeant_major_env.replay_page import page_data, page_html
from sergeant_major_env.records import simulate

ROOT = Path(__file__).resolve().parents[1]


def test_every_page_file_is_package_data_found_through_importlib_resources():
    folder = resources.files("sergeant_major_env.pages")
    on_disk = sorted(entry.name for entry in folder.iterdir() if entry.name.endswith((".html", ".css", ".js")))
    assert on_disk == sorted(pages.FILES)
    for name in pages.FILES:
        assert folder.joinpath(name).is_file() and pages.read(name) == folder.joinpath(name).read_text("utf-8")
    shipped = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    patterns = shipped["sergeant_major_env.pages"]
    assert all(any(fnmatch.fnmatch(name, pattern) for pattern in patterns) for name in pages.FILES)


def test_an_unknown_page_file_is_refused_in_one_line():
    with pytest.raises(ValueError, match=r"^no page file 'x\.js': the files are table\.css, "):
        pages.read("x.js")


def _pages() -> dict[str, str]:
    return {"play": pages.play_page(0.5), "replay": page_html(page_data(next(iter(simulate(1, seed=1)))))}


def test_a_page_inlines_its_files_and_leaves_no_placeholder():
    for name, html in _pages().items():
        for part in ("table.css", f"{name}.css", "table.js", f"{name}.js"):
            assert pages.read(part) in html, part
        assert not re.search(r"__[A-Z]+__", html), name
    assert "const PACE = 0.5;" in pages.play_page(0.5)


def test_the_pages_write_a_ten_as_10_like_the_terminal():
    """Issue 50, item 6: the pages' card vocabulary is render's, for people (a ten is 10)."""
    first = pages.constants().splitlines()[1]
    assert first == 'const RANK_TEXT = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"];'
    assert "RANKS" not in pages.play_page(0.5) and "RANKS" not in pages.read("replay.js")


@pytest.mark.skipif(shutil.which("node") is None, reason="no Node.js to check the scripts with")
def test_each_script_and_each_page_s_whole_script_is_valid_javascript(tmp_path):
    scripts = {name: pages.read(name) for name in pages.FILES if name.endswith(".js")}
    for name, html in _pages().items():
        [inline] = re.findall(r"<script>(.*?)</script>", html, re.S)
        scripts[f"{name} page"] = inline
    for name, text in scripts.items():
        path = tmp_path / (name.replace(" ", "_") + ".js")
        path.write_text(text, encoding="utf-8")
        done = subprocess.run(["node", "--check", str(path)], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, f"{name}: {done.stderr[-1000:]}"
