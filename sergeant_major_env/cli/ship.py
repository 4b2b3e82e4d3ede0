"""Ship a trained policy as the package's `learned` agent, with its measured strength.

    sergeant-major ship runs/recipe                         # all four opponents: slow (pimc)
    sergeant-major ship runs/recipe --games 60 --opponents random,greedy,heuristic --overwrite
    sergeant-major ship --show                              # the shipped policy's strength table

RUN_FOLDER is a run folder of sergeant-major train (or of sergeant-major distill fit), its
policy.safetensors or policy.json (the code-free policy file of agents.policy_file; an SB3
zip is refused). First the run's policy is loaded and checked (the observation version and
size of this package), then its strength is measured as sergeant-major evaluate measures it:
for each opponent X, --games games at the table "learned,X,X" on duplicate deals from --seed
(sergeant_major_env.evaluation.play_tables), under the rule options the policy was trained
with. Then the two policy files are copied into --into FOLDER and learned.json is written
beside them: the run and its training command, the observation version, the rule options,
the files' SHA-256 and, per opponent, the mean points per game of learned with its 95%
interval, win rate, games, seed and the sergeant-major evaluate command that gives the same
numbers once it is shipped. A shipped folder is an agent: ppo:FOLDER.

--into: in a checkout of the repository it defaults to the folder of the package's own
`learned` agent, which shipping replaces; an installed package (pip install, a wheel) needs
--into, since its folder belongs to pip (the next upgrade would undo it).

pimc searches at every decision: 60 games against two of it take about 25 minutes on a
2-core machine, so it plays --pimc-games games (default 120) and can be left out of
--opponents. A folder that already holds a policy is replaced only with --overwrite. Every
file is written to a temporary name and renamed; learned.json last.

Exit status: 0 shipped, 2 bad arguments (checked before any game: the run, the opponents,
the seed, the destination), 1 when the games or the writing fail afterwards, 130 Ctrl-C
(nothing written).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shlex
import sys
from pathlib import Path

from sergeant_major_env import interrupts
from sergeant_major_env.evaluation import rules_for_table
from sergeant_major_env.training import ship
from sergeant_major_env.training.ship import DEFAULT_OPPONENTS, DEFAULT_SEED

from .. import arguments
from ..arguments import FLAG, Integer, Parsed, Text, build_parser, check_fields, opt, parse_config

PROG = "sergeant-major ship"


@dataclasses.dataclass(frozen=True)
class ShipOptions:
    """Every option of `sergeant-major ship`; the attribute docstrings are their lines of `--help`."""

    run: str | None = opt(None, Text(optional=True), kind="positional", metavar="RUN_FOLDER")
    """the run folder of sergeant-major train (or its policy.safetensors / policy.json) to ship"""
    games: int = arguments.games(600)
    """games against each opponent but pimc, rounded up to a multiple of 6"""
    pimc_games: int = opt(120, Integer(1), metavar="N")
    """games against pimc (any pimc:... spec, and search), which is slow"""
    opponents: str = opt(DEFAULT_OPPONENTS, Text(), metavar="X,Y,...")
    """agent names; each plays two seats of a table against learned"""
    seed: int = arguments.seed(DEFAULT_SEED)
    """group j of each table plays seed S+j, as in sergeant-major evaluate"""
    into: Path | None = opt(None, Parsed(Path, "a folder"), metavar="FOLDER")
    """where to ship (default, in a checkout of the repository only: the folder of its `learned` agent); for
    --show, the folder to read (default: the `learned` agent's)"""
    overwrite: bool = arguments.overwrite()
    """replace a policy already shipped there"""
    no_progress: bool = arguments.no_progress()
    show: bool = opt(False, FLAG, kind="flag")
    """print the strength table of the policy shipped in --into and exit"""

    def __post_init__(self) -> None:
        check_fields(self)


def parse_args(argv=None) -> tuple[ShipOptions, object]:
    """The checked options and the parser (for the usage errors found after parsing)."""
    parser = build_parser(PROG, ShipOptions, description=__doc__.split("\n\n")[0],
                          epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    return parse_config(parser, ShipOptions, argv), parser


def main(argv=None) -> int:
    from sergeant_major_env.agents.learned import (
        LEARNED_FOLDER, METADATA_FILE, POLICY_METADATA_FILE, TENSORS_FILE, file_sha256, read_learned_metadata)

    argv = sys.argv[1:] if argv is None else list(argv)
    args, parser = parse_args(argv)
    if args.show:
        try:
            print(ship.strength_table(read_learned_metadata(args.into or LEARNED_FOLDER)))
        except ValueError as error:
            parser.error(str(error))
        return 0
    if args.run is None:
        parser.error("give the RUN_FOLDER to ship (or --show for the shipped policy's strength)")
    into = args.into or ship.checkout_destination()
    if into is None:
        parser.error(f"--into FOLDER is needed: this package is installed, not a checkout of the repository, and "
                     f"its own folder ({LEARNED_FOLDER}) is pip's; ship into a folder of yours and play it as "
                     f"ppo:FOLDER")

    # Arguments: every problem is reported before any game is played (exit status 2).
    try:
        tables = ship.opponent_tables(args)
        ship.check_destination(into, args.overwrite)
        policy, tensors, policy_json = ship.load_run_policy(args.run)
        rules, notes = rules_for_table([policy], [ship.LEARNED])
    except ValueError as error:
        parser.error(str(error))
    for note in notes:
        print(note)
    print(f"shipping {args.run} ({tensors.name}: {tensors.stat().st_size / 1e6:.2f} MB) into {into}", flush=True)

    try:
        strength = ship.measure_strength(policy, tables, args.seed, rules, progress=not args.no_progress)
    except KeyboardInterrupt as error:
        interrupts.say(f"{PROG}: {interrupts.describe(error)}; nothing shipped")
        return interrupts.exit_status(error)
    except ValueError as error:  # an opponent that cannot play these games
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 1

    shipped_json = ship.portable_policy_json(policy_json)
    digests = {TENSORS_FILE: file_sha256(tensors), POLICY_METADATA_FILE: hashlib.sha256(shipped_json).hexdigest()}
    command = ship.portable(shlex.join(["sergeant-major", "ship", *argv]))
    metadata = ship.shipped_metadata(ship.portable(args.run), json.loads(shipped_json), rules, strength, digests,
                                     command)
    try:
        ship.write_shipped(into, tensors, shipped_json, metadata)
    except OSError as error:
        print(f"{PROG}: error: cannot write {into}: {error.strerror or error}", file=sys.stderr)
        return 1
    print(f"wrote {', '.join(str(into / name) for name in (TENSORS_FILE, POLICY_METADATA_FILE, METADATA_FILE))}")
    print(f"strength (as sergeant-major ship --show --into {into} prints it):\n{ship.strength_table(metadata)}")
    return 0


if __name__ == "__main__":
    from sergeant_major_env.cli import guarded

    sys.exit(guarded("ship", main))
