"""The project's promises to a newcomer: the README's commands, CI, --help everywhere."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


def readme_commands() -> list[str]:
    """The commands of the README's first code block (the install-and-run lines)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```bash\n(.*?)```", text, re.S)
    assert block, "README.md must start with a bash code block of commands"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_readme_starts_with_two_commands_install_and_run_then_install_and_test():
    commands = readme_commands()
    assert len(commands) == 2
    for command in commands:
        assert command.startswith("pip install torch==2.13.0 && pip install -e "), command
    assert commands[1].endswith("python -m pytest -q -n 2")


def test_ci_runs_the_readme_test_command_verbatim():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert readme_commands()[1] in ci.splitlines()


def test_ci_runs_the_readme_test_command_inside_a_fresh_venv():
    """Issue 27: CI ran the test command outside a venv, so a test that fails inside one (as most
    users run it) never failed in CI. Now it makes a venv, activates it, then runs the command."""
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    before = "\n".join(lines[:lines.index(readme_commands()[1])])
    made = re.search(r"^python3? -m venv \"\$(\w+)\"$", before, re.M)
    assert made, "CI must create a fresh venv before the test command"
    assert re.search(rf'^\. "\${made.group(1)}/bin/activate"$', before, re.M), "CI must activate that venv"


def test_rule_book_copy_matches_the_shared_rule_book():
    shared = ROOT.parent / "shared" / "RULES.md"
    if not shared.exists():
        pytest.skip("no shared/ beside this checkout")
    assert (ROOT / "docs" / "RULES.md").read_text(encoding="utf-8") == shared.read_text(encoding="utf-8")


SCRIPTS = sorted(
    [str(p.relative_to(ROOT)) for folder in ("benchmarks", "examples") for p in (ROOT / folder).glob("*.py")]
    + [name for name in ("evaluate.py", "train.py", "play.py") if (ROOT / name).exists()]
)
MODULES = ["sergeant_major_env"]


@pytest.mark.parametrize("command", [[script] for script in SCRIPTS] + [["-m", module] for module in MODULES],
                         ids=lambda c: " ".join(c))
@pytest.mark.slow
def test_every_script_has_help(command):
    result = subprocess.run([sys.executable, *command, "--help"], cwd=ROOT, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert "usage" in result.stdout.lower()


REPOSITORY_FILE = re.compile(r"\b[\w-]+\.(py|md)\b|\b(docs|examples|benchmarks|agents|training)/")
"""A file or folder of the repository (train.py, RULES.md, docs/web.md, examples/, agents/learned/),
which a user who installed the wheel does not have."""
HELP_COMMANDS = ([[name] for name in ("train", "evaluate", "play", "records", "distill", "exploit", "ship", "agents")]
                 + [["records", name] for name in ("simulate", "check", "html")]
                 + [["distill", name] for name in ("labels", "fit", "curve", "belief", "rounds")])


def _printed(argv: list[str], capsys) -> str:
    from sergeant_major_env import cli

    with pytest.raises(SystemExit) as exit_:
        cli.main(argv)
    assert exit_.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("argv", HELP_COMMANDS, ids=" ".join)
def test_no_help_sends_a_user_to_a_file_of_the_repository(argv, capsys):
    """Issue 27: help cited train.py, evaluate.py, RULES.md section 9, docs/web.md, examples/...
    A wheel user has none of them: help names the command or the docs site's page instead."""
    shown = _printed([*argv, "--help"], capsys)
    assert shown.startswith("usage: sergeant-major " + " ".join(argv))
    assert not [line for line in shown.splitlines() if REPOSITORY_FILE.search(line)]


def test_the_help_commands_are_every_command_and_subcommand():
    import argparse

    from sergeant_major_env.cli import COMMANDS, distill, records

    expected = [[name] for name in COMMANDS]
    for name, parser in (("records", records._parser()), ("distill", distill._parser())):
        choices = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
        expected += [[name, sub] for sub in choices]
    assert sorted(HELP_COMMANDS) == sorted(expected)


REST_MARKUP = re.compile(r":(mod|func|class|meth|attr|data|exc|obj|ref|doc|term):`|``")
"""reStructuredText in help (a role, or a literal in double backticks), which a terminal shows raw."""


@pytest.mark.parametrize("argv", [[]] + HELP_COMMANDS, ids=lambda argv: " ".join(argv) or "sergeant-major")
def test_help_is_plain_text_with_no_repository_path(argv, capsys):
    """Issue 50: distill's and ship's --help showed their module docstrings' reStructuredText
    (double backticks, module roles) and exploit's named a file of the docs folder, which a
    wheel user does not have. Every help (the parsers built in this process) is plain text
    and names a docs page by its title."""
    from sergeant_major_env import cli

    shown = _printed([*argv, "--help"], capsys) if argv else (cli.main([]), capsys.readouterr().out)[1]
    assert not REST_MARKUP.search(shown), REST_MARKUP.search(shown).group()
    assert "docs/" not in shown and ".md" not in shown


def test_the_command_list_says_play_runs_in_the_browser_too(capsys):
    from sergeant_major_env import cli

    assert cli.main(["--help"]) == 0
    play = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("  play "))
    assert "--web" in play and "browser" in play


def test_the_agent_list_sends_a_user_to_no_file_of_the_repository(capsys):
    from sergeant_major_env import cli

    assert cli.main(["agents"]) == 0
    shown = capsys.readouterr().out
    assert "ppo" in shown and not [line for line in shown.splitlines() if REPOSITORY_FILE.search(line)]


@pytest.mark.parametrize("name", ["ppo", "ppo:NO_SUCH_RUN", "rllib-unsafe-pickle:NO_SUCH_CHECKPOINT"])
def test_agent_errors_name_the_command_not_a_file_of_the_repository(name):
    from sergeant_major_env.agents import make_agent

    with pytest.raises(ValueError) as error:
        make_agent(name)
    assert not REPOSITORY_FILE.search(str(error.value)), error.value


# ============================================================================ the front door: README, docs, project files

README_MAX_LINES = 250
"""Peers' READMEs are 87 (Gymnasium) to 318 (EnvPool) lines; the detail lives in the docs site (issue 19)."""


def readme_text() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


def test_readme_has_at_most_250_lines():
    lines = readme_text().count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines; at most {README_MAX_LINES} (detail goes in docs/)"


_HEX_WORD = re.compile(r"(?<![\w/.#-])([0-9a-f]{7,40})(?![\w/.-])")


def commit_like_words(text: str) -> list[str]:
    """Words of 7-40 lower-case hex digits with a letter and a digit: what a commit hash looks like."""
    return [w for w in _HEX_WORD.findall(text) if re.search(r"[a-f]", w) and re.search(r"[0-9]", w)]


def test_commit_like_words_are_recognised():
    assert commit_like_words("the code of 1a4c07d, and (df6b39b) too") == ["1a4c07d", "df6b39b"]
    assert commit_like_words("1200000 games, seed 1000000, sha256, a 919-float row, deadbeef") == []


def test_readme_holds_no_commit_hashes_load_averages_worktrees_or_run_histories():
    text = readme_text()
    assert commit_like_words(text) == [], "commit hashes belong in docs/results.md, dated"
    for phrase in ("load average", "worktree"):
        assert phrase not in text.lower(), f"README.md mentions {phrase!r}: measurement notes belong in docs/results.md"
    assert not re.search(r"runs/(D|bare2?)\b", text), "the runs of earlier sessions belong in docs/results.md"


def tracked_top_level() -> set[str]:
    """The repository's top-level names that git tracks (a fixed list where git is not at hand)."""
    try:
        listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    except OSError:
        listed = None
    if listed is not None and listed.returncode == 0 and listed.stdout.strip():
        return {line.split("/", 1)[0] for line in listed.stdout.splitlines()}
    return {"README.md", "docs", "agents", "sergeant_major_env", "tests", "benchmarks", "examples",
            "train.py", "evaluate.py", "play.py", "pyproject.toml", "LICENSE", "CHANGELOG.md", "CITATION.cff"}


_OUTPUT_OPTION = re.compile(r"--(?:plot|out|record|json|csv|checkpoint-dir|screenshot)[= ]+[\"']?([^\s\"'`|)]+)")


def output_paths(text: str) -> list[str]:
    """The paths that commands in a page write to (the value of --out, --plot, --record, ...)."""
    return _OUTPUT_OPTION.findall(text)


def test_output_paths_are_found_in_commands():
    text = "python evaluate.py --plot docs/round_robin.png\n`records html g.jsonl --out=game.html` --screenshot=docs/x.png"
    assert output_paths(text) == ["docs/round_robin.png", "game.html", "docs/x.png"]


def pages() -> list[pathlib.Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def test_no_command_in_readme_or_docs_writes_into_a_tracked_file_or_folder():
    tracked = tracked_top_level()
    wrong = [f"{page.relative_to(ROOT)}: {path}" for page in pages()
             for path in output_paths(page.read_text(encoding="utf-8"))
             if pathlib.PurePosixPath(path.lstrip("./")).parts[:1] and
             pathlib.PurePosixPath(path.lstrip("./")).parts[0] in tracked]
    assert wrong == [], "commands that would overwrite tracked files (write to runs/ or the current folder):\n" + \
        "\n".join(wrong)


def pyproject_version() -> str:
    match = re.search(r'^version\s*=\s*"([^"]+)"', (ROOT / "pyproject.toml").read_text(encoding="utf-8"), re.M)
    assert match, "pyproject.toml has no version line"
    return match.group(1)


def test_package_version_is_pyprojects():
    import sergeant_major_env

    assert sergeant_major_env.__version__ == pyproject_version()


def test_license_changelog_and_citation_exist():
    for name in ("LICENSE", "CHANGELOG.md", "CITATION.cff"):
        assert (ROOT / name).is_file(), f"{name} is missing"
    assert "MIT License" in (ROOT / "LICENSE").read_text(encoding="utf-8")


def citation_fields() -> dict[str, str]:
    """CITATION.cff's top-level scalar fields (plain `key: value` lines; CFF is YAML)."""
    text = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    return {m.group(1): m.group(2).strip().strip("\"'") for m in re.finditer(r"^([\w-]+):[ \t]*(\S.*)?$", text, re.M)
            if m.group(2)}


def test_citation_is_cff_1_2_with_the_package_version_and_license():
    fields = citation_fields()
    assert fields["cff-version"] == "1.2.0"
    for key in ("message", "title", "date-released"):
        assert fields.get(key), f"CITATION.cff needs {key}"
    assert re.search(r"^authors:\s*\n\s+- (name|family-names):", (ROOT / "CITATION.cff").read_text(encoding="utf-8"), re.M)
    assert fields["version"] == pyproject_version()
    assert fields["license"] == "MIT"


def test_changelog_has_an_entry_for_the_package_version():
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(rf"^## \[{re.escape(pyproject_version())}\]", changelog, re.M), (
        f"CHANGELOG.md has no '## [{pyproject_version()}]' entry")
