"""`sergeant-major records`: simulate games into records, check records by replay, draw one as a page.

The records themselves (recording, JSON Lines, replay) are `sergeant_major_env.records`;
the page is `sergeant_major_env.replay_page`. This module is only their command line.

A record that does not replay costs one line naming its first problem, never a traceback;
an existing --out file is refused unless --overwrite (`sergeant_major_env.files.check_new_file`);
Ctrl-C, SIGTERM and SIGHUP leave no temporary file and exit 130, 143 and 129
(`sergeant_major_env.interrupts`).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from .. import interrupts
from ..files import check_new_file, write_text
from ..progress import progress_bar
from ..records import (CHECK_BATCH, RecordError, decode_line, record_lines, parse_lines, check_game_seeds, check_record,
                       check_records, simulate, write_jsonl)
from ..replay_page import page_data, page_html
from ..rules import Rules
from .. import arguments
from ..arguments import WHOLE, Integer, OneLineParser, Text, check_fields, make_config, opt, parse_command, subcommand

@dataclasses.dataclass(frozen=True)
class SimulateOptions:
    """`records simulate`'s options; the attribute docstrings are their lines of `--help`."""

    games: int | None = arguments.games(None, required=True)
    """number of games, at least 1"""
    seed: int = arguments.seed(0)
    """seed of game 0 (game i plays S+i) and of the random decisions"""
    out: str | None = opt(None, Text(optional=True), metavar="FILE", required=True)
    """JSON Lines file to write (checked before the first game, written whole or not at all)"""
    overwrite: bool = arguments.overwrite()
    """replace FILE if it exists"""
    option: tuple[str, ...] = arguments.rule_options(())
    batch_size: int = opt(1024, Integer(1), metavar="B")
    """games stepped together"""

    def __post_init__(self) -> None:
        check_fields(self)


@dataclasses.dataclass(frozen=True)
class CheckOptions:
    """`records check`'s options."""

    file: str | None = opt(None, Text(optional=True), kind="positional", metavar="FILE", required=True)
    """JSON Lines file of game records"""

    def __post_init__(self) -> None:
        check_fields(self)


@dataclasses.dataclass(frozen=True)
class HtmlOptions:
    """`records html`'s options."""

    file: str | None = opt(None, Text(optional=True), kind="positional", metavar="FILE", required=True)
    """JSON Lines file of game records"""
    game: int = opt(1, WHOLE, metavar="N")
    """the record to show, counting records (non-blank lines) from 1"""
    out: str | None = opt(None, Text(optional=True), metavar="PAGE.html", required=True)
    """HTML file to write (checked before the replay, written whole or not at all)"""
    overwrite: bool = arguments.overwrite()
    """replace PAGE.html if it exists"""

    def __post_init__(self) -> None:
        check_fields(self)


def _parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="sergeant-major records",
        description="Simulate 3-5-8 games into game records (Rule book, section 11) and check records by replay.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    subcommand(commands, "simulate", SimulateOptions, help="play random games and write their records as JSON Lines",
               description="Play N games with uniformly random legal decisions (game i uses per-game seed S+i), "
                           "batched, and write their records as JSON Lines.")
    subcommand(commands, "check", CheckOptions, help="replay every record of a JSON Lines file",
               description="Replay every record; exit 0 only if all replay exactly, else print one line per bad "
                           "record naming its first problem.")
    subcommand(commands, "html", HtmlOptions, help="write one record as an HTML page that steps through the game",
               description="Replay record N of a JSON Lines file through the engine and write one self-contained "
                           "HTML file (CSS, script and the game's data inline; no network, no server) that steps "
                           "through the game deal by deal and trick by trick, with arrow keys and buttons.")
    return parser


def _simulate_command(args: SimulateOptions, parser: argparse.ArgumentParser) -> int:
    try:
        rules = Rules.from_strings(args.option)
    except ValueError as error:
        message = str(error)
        if "known options" not in message:
            message += f"; known options: {', '.join(Rules.names())}"
        parser.error(message)
    try:
        check_game_seeds(args.seed, args.games)
        check_new_file(args.out, args.overwrite)
    except ValueError as error:
        parser.error(str(error))
    bar = progress_bar(args.games, "game")
    try:
        count = write_jsonl(simulate(args.games, args.seed, rules, batch_size=args.batch_size,
                                     on_finished=bar.update if bar else None), args.out)
    except OSError as error:
        print(f"error: cannot write {args.out}: {error.strerror or error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as error:  # the temporary file is gone already (files.atomic_write)
        interrupts.say(f"sergeant-major records simulate: {interrupts.describe(error)}: {args.out} not written")
        return interrupts.exit_status(error)
    finally:
        if bar:
            bar.close()
    print(f"wrote {count} records to {args.out}", file=sys.stderr)
    return 0


def _check_command(args: CheckOptions, parser: argparse.ArgumentParser) -> int:
    total = bad = 0
    try:
        for chunk in _chunks(parse_lines(args.file), CHECK_BATCH):
            for line, problem in zip([line for line, _ in chunk], _check_safely([value for _, value in chunk])):
                total += 1
                if problem:
                    bad += 1
                    print(f"record {total} (line {line}): {problem}")
    except (OSError, UnicodeDecodeError) as error:
        print(f"error: cannot read {args.file}: {getattr(error, 'strerror', None) or error}", file=sys.stderr)
        return 2
    except ValueError as error:  # not a records file (records.record_lines): a device, an over-long line
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as error:
        interrupts.say(f"sergeant-major records check: {interrupts.describe(error)} after {total} records "
                       f"({bad} with problems) of {args.file}")
        return interrupts.exit_status(error)
    if total == 0:
        print(f"{args.file} holds no records")
        return 1
    if bad:
        print(f"{bad} of {total} records have problems")
        return 1
    print(f"{total} records OK")
    return 0


def _chunks(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    chunk: list[Any] = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _check_safely(values: list[Any]) -> list[str | None]:
    """The problem of each parsed line (a RecordError for a line that is not JSON), replayed as
    one batch; if the batch fails inside the engine, each record alone, so that only the record
    that trips it gets one line about it rather than a traceback."""
    records = [value for value in values if not isinstance(value, RecordError)]
    try:
        problems = iter(check_records(records))
    except Exception:  # noqa: BLE001 - a CLI prints one line per record, never a traceback
        problems = iter([_check_alone(record) for record in records])
    return [str(value) if isinstance(value, RecordError) else next(problems) for value in values]


def _check_alone(record: Any) -> str | None:
    try:
        return check_record(record)
    except Exception as error:  # noqa: BLE001 - a CLI prints one line per record, never a traceback
        return f"internal error while replaying ({type(error).__name__}: {error}); please report it"


def _html_command(args: HtmlOptions, parser: argparse.ArgumentParser) -> int:
    try:
        check_new_file(args.out, args.overwrite)
        found, total = _nth_line(args.file, args.game)
    except ValueError as error:
        parser.error(str(error))
    except (OSError, UnicodeDecodeError) as error:
        print(f"error: cannot read {args.file}: {getattr(error, 'strerror', None) or error}", file=sys.stderr)
        return 2
    if found is None:
        parser.error(f"--game {args.game}: {args.file} holds no records" if total == 0 else
                     f"--game {args.game}: {args.file} holds {total} record(s), so --game must be 1..{total}")
    line, text = found
    place = f"record {args.game} (line {line})"
    try:
        value = decode_line(line, text)
        if isinstance(value, RecordError):
            raise value
        data = _page_data(value, f"3-5-8 \u00b7 {Path(args.file).name} \u00b7 record {args.game}")
        write_text(args.out, page_html(data))
    except RecordError as error:
        print(f"error: {place}: {error}", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"error: cannot write {args.out}: {error.strerror or error}", file=sys.stderr)
        return 2
    print(f"wrote {args.out}: {place} of {args.file}, {len(data['frames'])} frames", file=sys.stderr)
    return 0


def _page_data(record: Any, title: str) -> dict[str, Any]:
    """`replay_page.page_data`; a failure inside the engine is a RecordError too (one
    line, as `records check` words it), never a traceback."""
    try:
        return page_data(record, title=title)
    except RecordError:
        raise
    except Exception as error:  # noqa: BLE001 - a CLI prints one line per record, never a traceback
        raise RecordError(f"internal error while replaying ({type(error).__name__}: {error}); "
                          f"please report it") from None


def _nth_line(path: str, n: int) -> tuple[tuple[int, str] | None, int]:
    """((line number, text) of record `n`, counting from 1, or None and how many records there are)."""
    total = 0
    for total, found in enumerate(record_lines(path), start=1):
        if total == n:
            return found, total
    return None, total


def main(argv: Sequence[str] | None = None) -> int:
    given, config, parser = parse_command(_parser(), argv)
    args = make_config(parser, config, given)
    run = {SimulateOptions: _simulate_command, CheckOptions: _check_command, HtmlOptions: _html_command}[config]
    return run(args, parser)


if __name__ == "__main__":
    from . import guarded

    sys.exit(guarded("records", main))
