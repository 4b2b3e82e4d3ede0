"""The `sergeant-major` command: one entry point with a subcommand per job.

    sergeant-major train --name quick --total-timesteps 200000 --imitate-steps 100000 --option num_deals=3
    sergeant-major evaluate --agents learned,heuristic,heuristic --games 120
    sergeant-major play --opponents learned,pimc
    sergeant-major records simulate --games 10 --out games.jsonl
    sergeant-major distill labels --out labels/r1 --games 2000
    sergeant-major exploit --agent heuristic --quick         # how far a trained best response beats it
    sergeant-major ship runs/recipe
    sergeant-major agents                                   # the agent names evaluate and play take

`python -m sergeant_major_env ...` is the same command, and the repository's `train.py`,
`evaluate.py` and `play.py` are the same as `sergeant-major train`, `evaluate` and
`play`. Each subcommand is a module of this package with a `main(argv) -> int`; a
subcommand's module is imported only when it runs, so `--help` is quick and the optional
extras are needed only by the subcommands that use them. Each declares its options one way
(`sergeant_major_env.arguments`): a frozen dataclass, a docstring per field, the parser
built from it, the options the commands share made by one factory each.

Every subcommand runs under `sergeant_major_env.interrupts.handled`, installed before
its module is imported: Ctrl-C (SIGINT), `kill` (SIGTERM) and a closed terminal (SIGHUP)
stop it the same way: its workers stopped, its temporary files removed, one line on stderr,
exit status 130, 143 or 129. A subcommand that catches the interruption itself says what it
kept (`records simulate`: the --out file was not written); otherwise the line is
`sergeant-major COMMAND: interrupted (SIGNAL)`.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Callable, Sequence

from .. import interrupts

PROG = "sergeant-major"

COMMANDS = {
    "train": ("sergeant_major_env.cli.train", "train an agent with MaskablePPO (needs the train extra)"),
    "evaluate": ("sergeant_major_env.cli.evaluate", "play agents against each other on duplicate deals: points, intervals, ratings"),
    "play": ("sergeant_major_env.cli.play", "play a game against agents, at the terminal or in your browser (--web)"),
    "records": ("sergeant_major_env.cli.records", "simulate game records, check them by replay, draw one as an HTML page"),
    "distill": ("sergeant_major_env.cli.distill", "distil the search into the policy: label positions, fit to them, curve"),
    "exploit": ("sergeant_major_env.cli.exploit", "train a best response to an agent and measure how far it beats it (needs the train extra)"),
    "ship": ("sergeant_major_env.cli.ship", "ship a trained run as the package's `learned` agent (needs the train extra)"),
    "agents": ("sergeant_major_env.cli.agents", "list the agent names that evaluate, play and train take"),
}
"""subcommand -> (its module, one line of help)."""


def usage() -> str:
    width = max(map(len, COMMANDS))
    lines = [f"usage: {PROG} COMMAND [ARGS ...]   ({PROG} COMMAND --help for a command's options)", "",
             "3-5-8 (Sergeant Major): train, evaluate and play agents, and work with game records.", "",
             "commands:"]
    lines += [f"  {name:<{width}}  {text}" for name, (_, text) in COMMANDS.items()]
    lines += ["", "`python -m sergeant_major_env` is the same command."]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(usage())
        return 0
    if argv[0] in ("-V", "--version"):
        from .. import __version__

        print(f"{PROG} {__version__}")
        return 0
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"{PROG}: error: unknown command {name!r}; commands: {', '.join(COMMANDS)} "
              f"({PROG} --help)", file=sys.stderr)
        return 2
    return guarded(name, lambda: _command(name, rest))


def _command(name: str, argv: list[str]) -> int:
    """Subcommand `name`'s module imported and run (under `guarded`, imports included)."""
    from ..agents.torch_setup import torch_environment

    torch_environment()  # before a subcommand imports torch: the same weights run after run, no spinning threads
    return importlib.import_module(COMMANDS[name][0]).main(argv)


def guarded(name: str, command: Callable[[], int]) -> int:
    """`command()`'s status, run under `interrupts.handled`: a stop signal that it does
    not catch itself is one line (`sergeant-major NAME: interrupted (SIGTERM)`) and 128 + the
    signal's number, after the cleanup that the unwinding does."""
    with interrupts.handled():
        try:
            status = command()
            if status == 0:  # finished as if no signal came: one whose exception was lost (interrupts.check)
                interrupts.check()
            return status
        except KeyboardInterrupt as error:
            interrupts.say(f"{PROG} {name}: {interrupts.describe(error)}")
            return interrupts.exit_status(error)


def run(argv: Sequence[str] | None = None) -> None:
    """The console script: `main`'s status as the process's exit status. After a stop signal
    (status 128 + its number, the command's one line said and its cleanup done) the process
    ends at once, its output flushed (`os._exit`): a signal that came while numba compiled
    (a first run) leaves half-made LLVM objects whose finalizers would print tracebacks as the
    interpreter shuts down."""
    status = main(argv)
    if status >= 128:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    sys.exit(status)
