"""The human agent only where a person sits at a terminal (agents/human.py).

A person is asked at the table of ``sergeant-major play`` and of ``sergeant-major evaluate
--agents human,...`` (refused up front when standard input is not a terminal). Everywhere
else (a search's rollouts, a benchmark) the name is refused with one line; before, each of
these ended in EOFError from ``input()`` (issue 20, item 6).
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sergeant_major_env.agents import HumanAgent, make_agent
from sergeant_major_env.agents.human import TERMINAL_RULE, check_terminal, is_human

ROOT = Path(__file__).resolve().parents[1]


class _Stdin(io.StringIO):
    def __init__(self, terminal: bool) -> None:
        super().__init__()
        self.terminal = terminal

    def isatty(self) -> bool:
        return self.terminal


@pytest.mark.parametrize("spec, human", [("human", True), (" human ", True), ("human:x", True), ("humane", False),
                                         ("heuristic", False), ("pimc:rollout=human", False), (HumanAgent(), True),
                                         (None, False)])
def test_is_human(spec, human):
    assert is_human(spec) is human


def test_check_terminal_refuses_human_without_a_terminal_only():
    with pytest.raises(ValueError) as caught:
        check_terminal(["human", "random", "random"], stdin=_Stdin(terminal=False))
    assert str(caught.value) == f"--agents human: standard input is not a terminal; {TERMINAL_RULE}"
    check_terminal(["human", "random", "random"], stdin=_Stdin(terminal=True))
    check_terminal(["heuristic", "random", "random"], stdin=_Stdin(terminal=False))


@pytest.mark.parametrize("spec, option", [("pimc:rollout=human", "rollout"), ("pimc:others=human", "others"),
                                          ("pimc:worlds=2:rollout=greedy:others=human", "others")])
def test_pimc_refuses_human_rollouts_in_one_line(spec, option):
    with pytest.raises(ValueError) as caught:
        make_agent(spec)
    assert str(caught.value) == (f"pimc: {option}=human: a search's rollouts cannot ask a person; {TERMINAL_RULE}")


def test_pimc_refuses_a_human_agent_object_too():
    from sergeant_major_env.agents import PIMCAgent

    with pytest.raises(ValueError, match="pimc: rollout=human: a search's rollouts cannot ask a person"):
        PIMCAgent(rollout=HumanAgent())


def _one_error_line(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "EOFError" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1, done.stderr
    return errors[0]


def test_evaluate_with_a_pimc_using_human_rollouts_is_one_line():
    done = subprocess.run([sys.executable, "-m", "sergeant_major_env", "evaluate", "--agents",
                           "pimc:rollout=human,random,random", "--games", "6", "--no-progress"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert _one_error_line(done).endswith(f"pimc: rollout=human: a search's rollouts cannot ask a person; "
                                          f"{TERMINAL_RULE}")


@pytest.mark.parametrize("script, argv", [("agents_speed.py", ["human"]),
                                          ("agents_strength.py", ["human", "random", "random"])])
def test_benchmarks_refuse_human_in_one_line(script, argv):
    done = subprocess.run([sys.executable, f"benchmarks/{script}", *argv], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)
    assert _one_error_line(done).endswith(f"{script} human: a benchmark has no person at its table; {TERMINAL_RULE}")


# ============================================================================ pimc:cheat (issue 29)

CHEAT_LINE = ("pimc:cheat sees every hidden card (for measuring the value of perfect inference only): it cannot "
              "sit at a table with a person")


@pytest.mark.parametrize("web", [False, True])
def test_play_refuses_pimc_cheat_as_an_opponent_in_one_line(web, capsys):
    """A person at ``play`` (and ``play --web``) is promised bots that play from what their seats
    know: the agent that sees the hidden cards is refused before any game or server."""
    from sergeant_major_env.cli import play as cli

    asked = []
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--opponents", "heuristic,pimc:cheat", "--seed", "1", *(["--web", "--no-browser"] if web else [])],
                 input_fn=asked.append, output=io.StringIO())
    assert exit_info.value.code == 2 and asked == []
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == f"sergeant-major play: error: {CHEAT_LINE}"


def test_the_game_and_the_web_game_refuse_a_cheating_agent_object():
    """The libraries behind ``play`` and ``play --web`` refuse it too (an agent object, not a name)."""
    from sergeant_major_env import Rules, terminal_game
    from sergeant_major_env.web import WebGame

    cheat, fair = make_agent("pimc:cheat"), make_agent("heuristic")
    with pytest.raises(ValueError, match=f"^{re.escape(CHEAT_LINE)}$"):
        terminal_game.play_game([None, fair, cheat], 0, 1, Rules(), input_fn=lambda prompt: "quit", output=io.StringIO())
    with pytest.raises(ValueError, match=f"^{re.escape(CHEAT_LINE.replace('pimc:cheat', 'bot'))}$"):
        WebGame("g", [cheat, None, fair], ["bot", "you", "heuristic"], 1, 1, Rules())


def test_evaluate_refuses_pimc_cheat_at_a_table_with_a_person(monkeypatch, capsys):
    """``evaluate --agents human,...`` seats a person: no cheat at that table (the terminal there)."""
    from sergeant_major_env.cli import evaluate

    monkeypatch.setattr(sys, "stdin", _Stdin(terminal=True))
    with pytest.raises(SystemExit) as exit_info:
        evaluate.main(["--agents", "human,pimc:cheat,random", "--games", "6", "--no-progress"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == f"sergeant-major evaluate: error: {CHEAT_LINE}"
