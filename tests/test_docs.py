"""The docs site is true as written and builds.

* every ```python block of docs/*.md and docs/envs/*.md runs on a fresh interpreter, in its own
  subprocess and a temporary folder (a block preceded by ``<!-- skip-test: reason -->`` is
  skipped with that reason; one that needs an extra that is not installed, by its imports or
  by what its run could not import, is skipped naming the extra: conftest's ``EXTRA_OF``);
* ``mkdocs build --strict`` passes (skipped where the ``docs`` extra is not installed);
* the tables the pages hold are the code's: the observation table covers every index once, in
  the order of ``observation.SEGMENTS``, and the env options' defaults are the constructors'.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib.util
import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import example_param, missing_extra, missing_extra_of_code, needs
from sergeant_major_env import aec, doc_tables, options as env_options, versions
from sergeant_major_env.cards import MODE_ACTION_OFFSET, NUM_ACTIONS
from sergeant_major_env.observation import DERIVED, OBSERVATION_SIZE, SCALES, SEGMENTS, observation_bounds
from sergeant_major_env.rules import Rules
from sergeant_major_env.single_seat import SergeantMajorEnv

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted([*DOCS.glob("*.md"), *DOCS.glob("envs/*.md")])
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
_SKIP = re.compile(r"<!--\s*skip-test:\s*(.+?)\s*-->\s*$")
# System programs a block may need: skipped where they are missing.
_PROGRAMS = {"/usr/bin/chromium": "/usr/bin/chromium"}


def python_blocks() -> list[tuple[str, int, str, str | None]]:
    """(page, line, code, skip reason) of every ```python block of the docs pages."""
    blocks = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in _BLOCK.finditer(text):
            before = text[:match.start()].rstrip("\n").rsplit("\n", 1)[-1]
            skip = _SKIP.search(before)
            blocks.append((str(page.relative_to(ROOT)), text.count("\n", 0, match.start()) + 1, match.group(1),
                           skip.group(1) if skip else None))
    return blocks


BLOCKS = python_blocks()


def test_the_docs_have_python_examples_on_the_main_pages():
    pages = {page for page, *_ in BLOCKS}
    assert len(BLOCKS) >= 15
    for page in ("docs/index.md", "docs/agents.md", "docs/envs/aec.md", "docs/envs/gymnasium.md",
                 "docs/envs/vector.md", "docs/evaluation.md", "docs/records.md"):
        assert page in pages


@pytest.mark.parametrize("page,line,code,skip", [example_param(*block, code=block[2], id=f"{block[0]}:{block[1]}")
                                                 for block in BLOCKS])
def test_docs_python_block_runs_as_written(page, line, code, skip, tmp_path):
    if skip:
        pytest.skip(skip)
    if missing := missing_extra_of_code(code):
        pytest.skip(missing)
    for marker, program in _PROGRAMS.items():
        if marker in code and not os.path.exists(program):
            pytest.skip(f"{program} is not installed (apt-get install chromium)")
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True,
                            text=True, timeout=300)
    if result.returncode and (missing := missing_extra_of_code(code, result.stderr)):
        pytest.skip(missing)
    assert result.returncode == 0, f"{page} line {line} failed:\n{result.stderr[-3000:]}"


def test_a_block_that_needs_a_missing_extra_skips_naming_the_extra(monkeypatch):
    """Issue 50: after README's first install (the train and test extras) the OpenSpiel pages'
    blocks failed on "No module named 'pyspiel'"; the extra is read from the block's imports (or
    from what its run could not import) and named in the skip line."""
    import conftest

    monkeypatch.setattr(conftest, "_installed", lambda module: module.split(".")[0] not in {"pyspiel", "open_spiel"})
    openspiel = "needs the openspiel extra (pip install -e '.[openspiel]')"
    assert missing_extra_of_code("import numpy as np\nimport pyspiel\n") == openspiel
    assert missing_extra_of_code("from open_spiel.python.algorithms import mcts\n") == openspiel
    assert missing_extra_of_code("from sergeant_major_env import env\n") is None
    stderr = "ValueError: cannot make the ismcts agent: ... (No module named 'pyspiel')"
    assert missing_extra_of_code("make_agent('ismcts')", stderr) == openspiel
    assert missing_extra_of_code("x", "ModuleNotFoundError: No module named 'torch.nope'") is None  # torch is here


def test_every_extra_a_test_names_is_one_of_pyprojects():
    import tomllib

    import conftest

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert set(conftest.EXTRA_OF.values()) <= set(project["optional-dependencies"])


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site built once with ``mkdocs build --strict`` (its folder); the build must pass."""
    if missing := missing_extra(("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers")):
        pytest.skip(missing)
    folder = tmp_path_factory.mktemp("docs") / "site"
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(folder)],
                            cwd=ROOT, capture_output=True, text=True, timeout=600,
                            env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert result.returncode == 0, result.stderr[-4000:]
    return folder


@pytest.mark.slow
def test_mkdocs_build_strict_passes(site):
    page = (site / "envs" / "aec" / "index.html").read_text(encoding="utf-8")
    assert "generated:" not in page and "winners_in_hand" in page  # the markers were replaced


# The docstrings are Markdown, rendered as written on the API page: nothing of reST may show as
# text there, nor a cross-reference left unresolved.
_RAW_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|data|mod|attr|exc|obj|const):(?:`|<code>)")
_TABLE_RULE_LINE = re.compile(r"^[ \t]*={2,}(?:[ \t]+={2,})+[ \t]*$", re.M)


def _page_text(html: str) -> str:
    """What a reader sees of a page: its HTML without scripts, styles and tags, entities decoded."""
    import html as html_module

    html = re.sub(r"<(script|style)\b.*?</\1>", "", html, flags=re.S)
    return html_module.unescape(re.sub(r"<[^>]+>", "", html))


def test_the_api_reference_shows_no_rest_markup(site):
    html = (site / "api" / "index.html").read_text(encoding="utf-8")
    text = _page_text(html)
    assert not _RAW_ROLE.findall(html), sorted(set(_RAW_ROLE.findall(html)))
    assert not _TABLE_RULE_LINE.findall(text), _TABLE_RULE_LINE.findall(text)[:3]
    assert "``" not in text
    assert "autoref" not in text  # every cross-reference was resolved to a link or code, none shown as text
    assert not re.search(r"\]\[[\w.]*\]", text), re.findall(r".{40}\]\[[\w.]*\]", text)[:3]
    assert html.count("<table") >= 6  # the docstrings' tables (engine phases, observation segments, ...)


def test_the_api_reference_links_a_known_cross_reference(site):
    html = (site / "api" / "index.html").read_text(encoding="utf-8")
    # engine's docstring: ":func:`step` validates all actions first"
    assert re.search(r'<a class="autorefs autorefs-internal"[^>]*href="#sergeant_major_env\.engine\.step">'
                     r"<code>step</code></a> validates", html)
    # a name in backticks without brackets (one_game's docstring names a kernel) is plain code, not a broken link
    assert "(<code>engine.apply_action_k</code>)" in html


def test_code_in_tables_never_breaks_mid_word(site):
    page = (site / "envs" / "aec" / "index.html").read_text(encoding="utf-8")
    assert 'href="../../stylesheets/extra.css"' in page and "<code>exchange_given</code>" in page
    css = re.sub(r"\s+", " ", (site / "stylesheets" / "extra.css").read_text(encoding="utf-8"))
    rule = re.search(r"\.md-typeset table code \{([^}]*)\}", css)
    assert rule and "word-break: keep-all" in rule.group(1) and "overflow-wrap: normal" in rule.group(1)
    assert re.search(r"\.md-typeset table td:not\(:last-child\) code \{ white-space: nowrap; \}", css)


# ----------------------------------------------------------------------------- Markdown docstrings

_REST_MARKUP = re.compile(
    r":(?:py:)?(?:func|class|meth|mod|data|attr|exc|obj|const|ref):`"  # a role
    r"|(?<!`)``(?!`)"  # a double-backtick literal (a code fence's three are Markdown)
    r"|^[ \t]*={2,}(?:[ \t]+={2,})+[ \t]*$"  # a simple table's rule
    r"|\S::[ \t]*$",  # a literal block's marker
    re.M)


def package_docstrings() -> list[tuple[str, int, str]]:
    """(file, line, text) of every docstring of the package (module, class, function and attribute
    docstrings: every string statement) in sergeant_major_env/ and agents/, each file once."""
    found = []
    files = {path.resolve() for base in ("sergeant_major_env", "agents") for path in (ROOT / base).rglob("*.py")}
    for path in sorted(files):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                found.append((str(path.relative_to(ROOT)), node.lineno, node.value.value))
    return found


def test_the_rest_markup_pattern_finds_roles_literals_tables_and_literal_blocks():
    for rest in (":func:`step`", "a :class:`~engine.State`", "``x``", "====  ====\na     b", "Usage::\n"):
        assert _REST_MARKUP.search(rest), rest
    for markdown in ("[`step`][]", "`x`", "```python\nx = 1\n```", "| a | b |\n|---|---|", "Usage:\n", "a::b"):
        assert not _REST_MARKUP.search(markdown), markdown


def test_no_package_docstring_holds_rest_markup():
    """Issue 53: the docstrings are written in the Markdown that mkdocstrings renders (no build-time
    converter), so `help()` and the API page show the same text."""
    docstrings = package_docstrings()
    assert len(docstrings) > 1000
    found = [f"{path}:{line}: {match.group(0)!r}" for path, line, text in docstrings
             if (match := _REST_MARKUP.search(text))]
    assert found == [], "\n".join(found[:20])


def test_the_observation_docstrings_table_gives_every_segment_its_meaning():
    meanings = doc_tables.segment_meanings()
    assert list(meanings) == list(SEGMENTS)
    assert all(meanings.values()) and meanings["hand"].startswith("own cards")


# ----------------------------------------------------------------------------- the results page

RESULTS_MAX_LINES = 400
_DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")


def _tables_with_their_paragraph(text: str) -> list[tuple[str, str]]:
    """(the paragraph before it, its header row) of every Markdown table of ``text``."""
    lines, found = text.split("\n"), []
    for i, line in enumerate(lines):
        if line.startswith("|") and (i == 0 or not lines[i - 1].startswith("|")):
            before = i - 1
            while before >= 0 and not lines[before].strip():
                before -= 1
            start = before
            while start > 0 and lines[start - 1].strip():
                start -= 1
            found.append(("\n".join(lines[start:before + 1]), line))
    return found


def test_the_results_page_holds_current_figures_each_with_its_machine_and_date():
    """Issue 53: results.md is a page of current figures (a user finds how fast, how strong, how
    exploitable in a minute), the history is in the archive; every table says where and when."""
    text = (DOCS / "results.md").read_text(encoding="utf-8")
    assert text.count("\n") <= RESULTS_MAX_LINES
    headings = re.findall(r"^#+ (.*)$", text, re.M)
    for heading in headings:
        assert not re.search(r"\bissue\b|\(\d|" + _DATE.pattern, heading, re.I), heading
    for wanted in ("How strong the agents are", "How exploitable each bot is", "Training runs", "How fast",
                   "The test suite"):
        assert wanted in headings
    assert "](results-archive.md" in text
    assert "tried and left out" not in text.lower() and "load average" not in text.lower()
    tables = _tables_with_their_paragraph(text)
    assert len(tables) >= 10
    for paragraph, header in tables:
        assert "2-core" in paragraph and (_DATE.search(paragraph) or "| date |" in header), (paragraph, header)


def test_the_results_archive_is_the_lab_notebook_linking_to_the_current_page():
    text = (DOCS / "results-archive.md").read_text(encoding="utf-8")
    assert text.startswith("# Results archive") and "](results.md)" in text.split("\n\n", 3)[1]


# ----------------------------------------------------------------------------- the pages' files

def _nav_files(nav) -> list[str]:
    files = []
    for item in nav:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        files += _nav_files(value) if isinstance(value, list) else [value]
    return files


def test_every_page_of_the_nav_exists_and_every_page_is_in_the_nav():
    yaml = needs("yaml")
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    nav = _nav_files(config["nav"])
    for name in nav:
        assert (DOCS / name).is_file(), name
    assert sorted(str(p.relative_to(DOCS)) for p in PAGES) == sorted(nav)


def test_the_hook_replaces_every_marker_of_the_pages():
    spec = importlib.util.spec_from_file_location("docs_hooks", DOCS / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    seen = set()
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        seen |= {m.group(1) for m in doc_tables.MARKER.finditer(text)}
        out = hooks.on_page_markdown(text, page=None, config=None, files=None)
        assert "generated:" not in out, page
    assert seen == set(doc_tables.GENERATED)  # every table is used


def test_an_unknown_marker_is_an_error_naming_the_known_ones():
    with pytest.raises(ValueError, match="unknown generated table 'nope'; known: observation-table"):
        doc_tables.replace_markers("<!-- generated: nope -->")
    with pytest.raises(ValueError, match="env must be one of aec, gymnasium, vector"):
        doc_tables.replace_markers("<!-- generated: spec parallel -->")


# ----------------------------------------------------------------------------- the tables

def test_the_observation_table_covers_every_index_once_in_segment_order():
    rows = doc_tables.segment_rows()
    covered = np.zeros(OBSERVATION_SIZE, dtype=int)
    for row in rows:
        covered[row.first:row.last + 1] += 1
    assert (covered == 1).all()
    assert [r.name for r in rows] == list(SEGMENTS)
    for row in rows:
        where = SEGMENTS[row.name]
        assert (row.first, row.last + 1, row.size) == (where.start, where.stop, where.stop - where.start)
        assert row.scale == SCALES[row.name] and row.derived == (row.name in DERIVED)
        assert row.meaning and "``" not in row.meaning


def test_the_observation_table_values_are_the_observation_spaces_bounds():
    low, high = observation_bounds(18)
    for row in doc_tables.segment_rows():
        assert row.low == low[row.first:row.last + 1].min() and row.high == high[row.first:row.last + 1].max()
    table = doc_tables.observation_table()
    lines = [line for line in table.splitlines() if line.startswith("| ") and "`" in line]
    assert len(lines) == len(SEGMENTS)
    assert lines[0].startswith("| 0-51 | `hand` | 1 | 0 .. 1 | own cards")
    assert f"| {OBSERVATION_SIZE - 4}-{OBSERVATION_SIZE - 1} | `unseen_per_suit` |" in table


def test_the_action_table_covers_every_action_id_once():
    ids = []
    for first_last, _, _ in doc_tables.action_rows():
        first, _, last = first_last.partition("-")
        ids += list(range(int(first), int(last or first) + 1))
    assert ids == list(range(NUM_ACTIONS))
    assert doc_tables.action_rows()[4][:2] == (str(MODE_ACTION_OFFSET), "mode S")


def test_the_rule_options_table_is_the_rules_fields_with_their_defaults_and_docstrings():
    rows = doc_tables.rule_option_rows()
    assert [(name, default) for name, default, _ in rows] == [(f.name, f.default) for f in dataclasses.fields(Rules)]
    assert all(meaning for _, _, meaning in rows)
    assert "R4" in rows[0][2]


def _defaults(function) -> dict[str, str]:
    return {name: f"`{p.default!r}`" for name, p in inspect.signature(function).parameters.items()
            if p.default is not inspect.Parameter.empty}


def test_the_env_options_tables_give_the_constructors_defaults():
    aec_rows = {name: default for name, default, _, _ in doc_tables.env_option_rows("aec")}
    assert {name: aec_rows[name] for name in aec.ENV_OPTIONS} == {n: f"`{v!r}`" for n, v in aec.ENV_OPTIONS.items()}
    aec_defaults = _defaults(aec.raw_env.__init__)
    assert aec_rows == {name: aec_defaults[name] for name in aec_rows}
    gym_rows = {name: default for name, default, _, _ in doc_tables.env_option_rows("gymnasium")}
    gym_defaults = _defaults(SergeantMajorEnv.__init__)
    assert gym_rows == {name: gym_defaults[name] for name in gym_rows}
    from sergeant_major_env.gym_vector import SergeantMajorVectorEnv

    gym_vector_rows = {name: default for name, default, _, _ in doc_tables.env_option_rows("gym_vector")}
    gym_vector_defaults = _defaults(SergeantMajorVectorEnv.__init__)
    assert gym_vector_rows.pop("num_envs") == "(required)"
    assert gym_vector_rows == {name: gym_vector_defaults[name] for name in gym_vector_rows}
    # One constructor shape: the keywords every env takes.
    for defaults in (aec_defaults, gym_defaults, gym_vector_defaults):
        assert {"rules", "reward", "illegal_action"} <= set(defaults)
    needs("stable_baselines3")
    from sergeant_major_env.vec_env import SergeantMajorVecEnv

    vec_rows = {name: default for name, default, _, _ in doc_tables.env_option_rows("vector")}
    vec_defaults = _defaults(SergeantMajorVecEnv.__init__)
    assert vec_rows.pop("num_envs") == "(required)"
    assert vec_rows == {name: vec_defaults[name] for name in vec_rows}
    assert env_options.VEC_ILLEGAL_ACTIONS[0] == "raise"


def test_the_version_history_table_lists_every_version_newest_first():
    table = doc_tables.version_history_table()
    names = re.findall(r"`sergeant_major_v(\d+)`", table)
    assert names == [str(v.version) for v in reversed(versions.HISTORY)]
    assert versions.GYMNASIUM_ID in table
