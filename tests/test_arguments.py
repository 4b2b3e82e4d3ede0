"""Every command declares its options one way (``sergeant_major_env.arguments``): a typed,
frozen dataclass, a docstring per field, the parser built from it; the options many commands
share are made by one field factory each, so their flag, check and help are the same everywhere."""

from __future__ import annotations

import argparse
import dataclasses
import re
from pathlib import Path

import pytest

from sergeant_major_env import arguments
from sergeant_major_env.cli import COMMANDS
from sergeant_major_env.arguments import (
    FLAG, Choice, Integer, Text, build_parser, check_fields, opt, parse_config)

ROOT = Path(__file__).resolve().parents[1]


@dataclasses.dataclass(frozen=True)
class Example:
    """A command's options, as every command declares them."""

    games: int = arguments.games(120)
    """games per table"""
    seed: int = arguments.seed(0)
    """group j plays engine seed S+j"""
    size: int = opt(3, Integer(1, 9), metavar="K")
    """how big, 1 to 9"""
    colour: str = opt("red", Choice("red", "blue"))
    """the colour of 95% of it"""
    name: str | None = opt(None, Text(optional=True), metavar="NAME")
    """a name (default: none)"""
    loud: bool = opt(False, FLAG, kind="flag")
    """say more"""
    option: tuple[str, ...] = arguments.rule_options(())
    workers: int | None = arguments.workers()
    no_progress: bool = arguments.no_progress()

    def __post_init__(self) -> None:
        check_fields(self)


def test_a_dataclass_becomes_a_parser_and_a_command_line_a_checked_config():
    parser = build_parser("example", Example)
    assert parse_config(parser, Example, []) == Example()
    config = parse_config(parser, Example, ["--games", "6", "--seed", "7", "--size", "9", "--colour", "blue",
                                            "--name", "x", "--loud", "--option", "num_deals=1", "--options",
                                            "exchanges=false", "--workers", "2", "--no-progress"])
    assert config == Example(games=6, seed=7, size=9, colour="blue", name="x", loud=True,
                             option=("num_deals=1", "exchanges=false"), workers=2, no_progress=True)
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.games = 1


def test_the_help_is_each_fields_docstring_with_its_default_and_what_it_allows(capsys):
    with pytest.raises(SystemExit) as exit_:
        parse_config(build_parser("example", Example), Example, ["--help"])
    assert exit_.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "--size K how big, 1 to 9 (default 3; an integer from 1 to 9)" in text
    assert "--colour {red,blue} the colour of 95% of it (default red)" in text  # a % in a docstring is a %
    assert "--seed S group j plays engine seed S+j (default 0; an integer from 0 to 2**63 - 1" in text
    assert "--name NAME a name (default: none)" in text and "--loud say more" in text


@pytest.mark.parametrize("argv, message", [
    (["--size", "10"], "argument --size: must be an integer from 1 to 9, got '10'"),
    (["--seed", "-1"], "argument --seed: must be an integer from 0 to 2**63 - 1"),
    (["--games", "x"], "argument --games: must be an integer, 1 or more, got 'x'"),
    (["--games", "0"], "argument --games: must be an integer, 1 or more, got '0'"),
    (["--workers", "0"], "argument --workers: must be an integer, 1 or more, got '0'"),
    (["--colour", "green"], "argument --colour: invalid choice: 'green'"),
    (["--name", "a\nb"], "argument --name: must be one line of text"),
    (["--bogus"], "unrecognized arguments: --bogus"),
])
def test_a_bad_value_is_one_line_and_exit_status_2(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        parse_config(build_parser("example", Example), Example, argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("example: error: ") and message in err, err


def test_a_value_the_dataclass_refuses_is_a_usage_error_of_the_parser(capsys):
    """A value made outside the parser (a stored run's) goes through the same checks."""
    with pytest.raises(arguments.ConfigError, match=r"^argument --size: must be an integer from 1 to 9, got 0$"):
        Example(size=0)
    with pytest.raises(arguments.ConfigError, match="argument --option"):
        Example(option="num_deals=1")  # not a list


# ============================================================================ every command

def command_parsers() -> dict[str, argparse.ArgumentParser]:
    """Every subcommand's parser (a subcommand's subcommands each on their own), by its prog."""
    from sergeant_major_env.cli import agents, distill, evaluate, exploit, play, records, ship, train

    roots = [train.build_parser(), evaluate.parse_args([])[1], play._parser(), records._parser(), distill._parser(),
             ship.parse_args([])[1], agents._parser(), exploit.build()]
    parsers = {}
    for root in roots:
        subparsers = [action for action in root._actions if isinstance(action, argparse._SubParsersAction)]
        for parser in (subparsers[0].choices.values() if subparsers else [root]):
            parsers[parser.prog] = parser
    return parsers


def options_of(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {flag: action for action in parser._actions for flag in action.option_strings}


def test_every_subcommand_has_a_parser_here():
    progs = set(command_parsers())
    assert {prog.split()[1] for prog in progs} == set(COMMANDS)
    assert len(progs) == len(COMMANDS) - 2 + 3 + 5  # records has three subcommands, distill five


@pytest.mark.parametrize("flag, check, kind", [
    ("--seed", arguments.SEED, "value"), ("--games", arguments.GAMES, "value"), ("--workers", arguments.WORKERS, "value"),
    ("--no-progress", FLAG, "flag"), ("--overwrite", FLAG, "flag"), ("--option", arguments.RULE_OPTIONS, "list"),
])
def test_a_shared_option_has_the_same_flag_check_and_help_in_every_command(flag, check, kind):
    """--seed, --games, --workers, --no-progress, --overwrite and --option are each made by one
    field factory: the same check object (so the same values allowed, the same refusal), the same
    metavar, and for --workers, --no-progress and --option the same help."""
    found = {prog: options_of(parser)[flag] for prog, parser in command_parsers().items() if flag in options_of(parser)}
    assert len(found) >= 2, found
    for prog, action in found.items():
        if kind == "flag":
            assert action.nargs == 0 and action.const is True, prog
        elif flag == "--workers" and prog.startswith("sergeant-major distill"):  # a cap of its own, 256
            assert isinstance(action.type, Integer) and (action.type.low, action.type.high) == (1, 256), prog
        else:
            assert action.type is check, prog
    assert len({action.metavar for action in found.values()}) == 1
    assert len({tuple(action.option_strings) for action in found.values()}) == 1
    if flag in ("--workers", "--no-progress"):
        assert len({action.help for action in found.values()}) == 1, {p: a.help for p, a in found.items()}
    if flag == "--option":
        shared = re.sub(r"\(default: .*\)$", "", arguments.rule_options().metadata["help"])
        assert {re.sub(r"\(default: .*\)$", "", action.help) for action in found.values()} == {shared}


@pytest.mark.parametrize("flag", ["--games", "--workers"])
def test_every_command_refuses_a_shared_count_in_one_wording(flag, capsys):
    """Issue 31: evaluate said "--workers must be at least 1", distill "--workers must be in 1..256",
    ship "--games and --pimc-games must be at least 1": each command checked the range itself. The
    shared field's check refuses 0 now, in one sentence shape (distill keeps its cap of 256)."""
    found = {prog: parser for prog, parser in command_parsers().items() if flag in options_of(parser)}
    assert len(found) >= 2, found
    for prog, parser in found.items():
        with pytest.raises(SystemExit) as exit_:
            parser.parse_args([flag, "0"])
        line = capsys.readouterr().err
        assert exit_.value.code == 2 and line.count("\n") == 1, (prog, line)
        assert re.fullmatch(rf"{re.escape(prog)}: error: argument {flag}: must be an integer"
                            rf"(, 1 or more| from 1 to 256), got '0'\n", line), line


def test_no_command_declares_an_option_outside_the_one_mechanism():
    """No ``add_argument`` in the commands (cli/) or the pipelines (training/): the mechanism
    (``sergeant_major_env/arguments.py``) makes them, each option a dataclass field; every
    subcommand's code is under cli/."""
    spelled = [str(path.relative_to(ROOT)) for folder in ("sergeant_major_env/cli", "sergeant_major_env/training")
               for path in sorted((ROOT / folder).glob("*.py"))
               if re.search(r"\badd_argument\(", path.read_text())]
    assert spelled == []
    assert all(module.startswith("sergeant_major_env.cli.") for module, _ in COMMANDS.values())


def test_help_and_usage_errors_need_no_torch():
    """``sergeant-major X --help`` works without the train extra: parsing imports no torch."""
    import subprocess
    import sys

    code = ("import sys\nfrom sergeant_major_env.cli import main\n"
            "for name in ('evaluate', 'play', 'records', 'distill', 'ship', 'agents'):\n"
            "    try:\n        main([name, '--help'])\n    except SystemExit:\n        pass\n"
            "print('torch' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip().splitlines()[-1] == "False", done.stderr[-2000:]


@pytest.mark.parametrize("text", ["nan", "inf", "-inf", "1e-9", "0", "-1", "3600.5", "x", ""])
def test_seconds_refuses_what_no_timed_run_can_be(text):
    with pytest.raises(argparse.ArgumentTypeError, match="must be a number of seconds from 0.01 to 3600"):
        arguments.SECONDS(text)


def test_seconds_takes_the_range():
    assert [arguments.SECONDS(t) for t in ("0.01", "2", "3600")] == [0.01, 2.0, 3600.0]


def test_benchmark_counts_and_seeds_are_refused_as_the_commands_refuse_them():
    """A benchmark's `--games`/`--seed` (plain argparse) take the commands' checks, `COUNT` and `SEED`."""
    with pytest.raises(argparse.ArgumentTypeError, match=r"must be an integer, 1 or more, got '0'"):
        arguments.COUNT("0")
    with pytest.raises(argparse.ArgumentTypeError, match=r"must be an integer from 0 to 2\*\*63 - 1 .*, got '-1'"):
        arguments.SEED("-1")
    assert arguments.COUNT("3") == 3 and arguments.SEED("7") == 7
