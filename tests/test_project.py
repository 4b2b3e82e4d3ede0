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
    assert commands[1].endswith("python -m pytest -q")


def test_ci_runs_the_readme_test_command_verbatim():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert readme_commands()[1] in ci.splitlines()


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
def test_every_script_has_help(command):
    result = subprocess.run([sys.executable, *command, "--help"], cwd=ROOT, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert "usage" in result.stdout.lower()
