"""Play 3-5-8 against agents, at the terminal or in your browser (--web).

    sergeant-major play --opponents heuristic,heuristic --seat 0 --seed 1
    sergeant-major play --opponents pimc,pimc                     # the search bot, the strongest here
    sergeant-major play --opponents learned,learned               # the trained policy shipped with the package
    sergeant-major play --opponents greedy,random --seat 2 --seed 7 --option num_deals=3 --record game.jsonl
    sergeant-major play --web --opponents learned,pimc            # in your browser (docs: Play in a browser)

You hold one seat (--seat, default 0); the opponents are agents made by agents.make_agent
(random, greedy, heuristic, learned, pimc, search, ppo:PATH, ...; not pimc:cheat, which sees
your cards). At each of your decisions the table is
shown as your seat sees it (deal, mode and trumps, each seat's role, target, tricks and
score, the talon once face up, the trick on the table, your hand by suit; during your mode
choice only your first six cards, R9) with your legal moves. Type a card as rank and suit in
either order and any case: QH, qh, 10h, T♥, ♥Q; a mode as S / spades / ♠ / trumps ♠ ... NT
(no-trump) or MIN (minimum); "trumps" alone is ambiguous and asked again. ? prints help,
table the table again, quit (or Ctrl-D, Ctrl-C) leaves. An illegal move is refused with the
rule it breaks and you are asked again. After each deal its points are shown, and the final
scores at the end.

With --web the game is played in your browser instead: a local server (sergeant_major_env.web)
on --host (default 127.0.0.1) and --port (default: a free one) prints its address and opens
the page (unless --no-browser); the bots' moves are shown --pace seconds apart; "play again"
starts a new game with new cards; --record then holds every game finished. Ctrl-C stops it
(exit status 130; `kill` 143, a closed terminal 129).

Exit status: 0 played or left, 2 bad arguments (checked before the game: agent names, rule
options, the seed, a --record file that cannot be written or exists without --overwrite),
1 the record could not be written after all, 130 Ctrl-C, 143 SIGTERM (kill), 129 SIGHUP
(the terminal closed). The game itself is sergeant_major_env.terminal_game.play_game.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import secrets
import sys
from typing import Any, Callable, Sequence, TextIO

from sergeant_major_env import interrupts
from sergeant_major_env.agents import make_agent
from sergeant_major_env.agents.human import is_human
from sergeant_major_env.policies import refuse_cheats
from sergeant_major_env.evaluation import make_named_agent
from sergeant_major_env.files import check_new_file
from sergeant_major_env.terminal_game import QuitGame, play_game
from sergeant_major_env.records import fit_player_names, write_jsonl
from sergeant_major_env.render import YOU
from sergeant_major_env.rules import Rules

from .. import arguments
from ..arguments import FLAG, REAL, WHOLE, Choice, Text, build_parser, check_fields, opt, parse_config


WEB = "in a browser (docs: Play in a browser)"


@dataclasses.dataclass(frozen=True)
class PlayOptions:
    """Every option of `sergeant-major play` (and `play --web`); the attribute docstrings are
    their lines of `--help`. `--web`'s server takes its own settings from them
    (`sergeant_major_env.web.WebOptions`)."""

    opponents: str = opt("heuristic,heuristic", Text(), metavar="A,B")
    """agent names for the other two seats, in seat order"""
    seat: int = opt(0, Choice(0, 1, 2))
    """your seat"""
    seed: int | None = arguments.seed(None)
    """the game's seed (default: a random one, printed so you can replay the deals)"""
    option: tuple[str, ...] = arguments.rule_options(())
    record: str | None = opt(None, Text(optional=True), metavar="FILE")
    """write the game's record (Rule book, section 11) as JSON Lines (default: none)"""
    overwrite: bool = arguments.overwrite()
    """replace the --record file if it exists"""
    web: bool = opt(False, FLAG, WEB, kind="flag")
    """play in your browser: a local server on --host/--port; the page opens by itself"""
    port: int | None = opt(None, WHOLE, WEB, metavar="N")
    """with --web: the port (default: a free one)"""
    host: str | None = opt(None, Text(optional=True), WEB)
    """with --web: the address to listen on (default 127.0.0.1)"""
    no_browser: bool = opt(False, FLAG, WEB, kind="flag")
    """with --web: only print the address"""
    pace: float | None = opt(None, REAL, WEB, metavar="SECONDS")
    """with --web: seconds between the bots' moves on the page, 0..10 (default 0.8)"""

    def __post_init__(self) -> None:
        check_fields(self)


def _parser() -> argparse.ArgumentParser:
    return build_parser("sergeant-major play", PlayOptions, description=__doc__.split("\n\n")[0],
                        epilog="\n\n".join(__doc__.split("\n\n")[1:]))


def _web(parser: argparse.ArgumentParser, args: PlayOptions, rules: Rules) -> int:
    """`--web`: serve the game to a browser (sergeant_major_env.web) until Ctrl-C."""
    from sergeant_major_env.web import WebOptions, serve

    names, _ = _opponents(parser, args.opponents)  # checked once here; each game makes its own agents
    port = 0 if args.port is None else args.port
    if not 0 <= port <= 65535:
        parser.error(f"--port must be 0..65535 (0: a free port), got {port}")
    try:
        options = WebOptions(seat=args.seat, seed=args.seed, rules=rules, record=args.record,
                             pace=0.8 if args.pace is None else args.pace)
    except ValueError as error:
        parser.error(str(error))
    host = args.host or "127.0.0.1"
    if not _loopback(host):
        print(f"note: --host {host} lets other machines reach this game server (it has no login); "
              f"the default, 127.0.0.1, serves this machine only", file=sys.stderr)
    return serve(lambda: [make_named_agent(name, make_agent) for name in names], names, options,
                 host=host, port=port, open_browser=not args.no_browser)


def _loopback(host: str) -> bool:
    """Whether `host` names this machine only (127.0.0.0/8, ::1, localhost)."""
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _opponents(parser: argparse.ArgumentParser, text: str) -> tuple[list[str], list[Any]]:
    """The two opponents' names and agents, or a usage error naming the problem."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    if len(names) != 2:
        parser.error(f"--opponents needs two agent names separated by a comma, got {text!r}")
    if any(map(is_human, names)):
        parser.error("--opponents: you are the human player; name two agents for the other seats "
                     "(random, greedy, heuristic, learned, pimc, ppo:PATH, ...)")
    try:
        agents = [make_named_agent(name, make_agent) for name in names]
        refuse_cheats(agents, names)  # you are promised bots that play from what their seats know
        return names, agents
    except ValueError as error:
        parser.error(str(error))


def _unrecorded(path: str | None) -> str:
    """What a game left before its end says about `--record`: a record holds a whole game."""
    if not path:
        return ""
    return (f" Nothing was written to {path}: a game record holds a finished game (Rule book, section 11); "
            f"the same --seed deals the same cards again.")


def main(argv: Sequence[str] | None = None, input_fn: Callable[[str], str] = input,
         output: TextIO | None = None) -> int:
    """The command line; returns the exit status (see the module docstring). `input_fn`
    (called with the prompt, returns a line) and `output` (a text stream) are for tests."""
    output = output if output is not None else sys.stdout
    parser = _parser()
    args = parse_config(parser, PlayOptions, argv)
    try:
        rules = Rules.from_strings(args.option)
        if args.record:
            check_new_file(args.record, args.overwrite, "--record file")  # before the game, not after it
    except ValueError as error:
        parser.error(str(error))
    if args.web:
        return _web(parser, args, rules)
    web_only = [flag for flag, used in (("--port", args.port is not None), ("--host", args.host is not None),
                                        ("--no-browser", args.no_browser), ("--pace", args.pace is not None)) if used]
    if web_only:
        parser.error(f"{', '.join(web_only)}: only with --web")
    opponent_names, opponents = _opponents(parser, args.opponents)
    seed = args.seed if args.seed is not None else secrets.randbelow(2**31)
    agents: list[Any] = [None] * 3
    names = [YOU] * 3
    for seat, agent, name in zip([s for s in range(3) if s != args.seat], opponents, opponent_names):
        agents[seat], names[seat] = agent, name
    try:
        result = play_game(agents, args.seat, seed, rules, input_fn, output, names=names, record=bool(args.record))
    except (EOFError, QuitGame):
        print(f"\nGame left unfinished (seed {seed}).{_unrecorded(args.record)}", file=output)
        return 0
    except KeyboardInterrupt as error:
        with contextlib.suppress(OSError, ValueError):  # SIGHUP: the terminal may be gone
            stopped_by = interrupts.signal_name(interrupts.signal_of(error))
            print(f"\nInterrupted by {stopped_by} (seed {seed}).{_unrecorded(args.record)}", file=output, flush=True)
        return interrupts.exit_status(error)
    if args.record:
        record = result["record"]
        record["players"] = fit_player_names(["human" if s == args.seat else names[s] for s in range(3)])
        try:
            write_jsonl([record], args.record)  # a temporary file renamed: never half written
        except OSError as error:
            print(f"sergeant-major play: error: cannot write {args.record}: {error.strerror or error}", file=sys.stderr)
            return 1
        print(f"wrote the game record to {args.record}", file=output)
    return 0


if __name__ == "__main__":
    from sergeant_major_env.cli import guarded

    sys.exit(guarded("play", main))
