"""Ship a trained policy as the package's ``learned`` agent, with its measured strength.

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

import argparse
import hashlib
import json
import math
import re
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import sergeant_major_env.agents as agents
from sergeant_major_env.agents.learned import (
    FORMAT, FORMAT_VERSION, LEARNED_FOLDER, METADATA_FILE, POLICY_METADATA_FILE, TENSORS_FILE, file_sha256,
    read_learned_metadata)
from sergeant_major_env import files, interrupts
from sergeant_major_env.evaluation import TablePlan, check_tournament_seed, play_tables, rules_for_table
from sergeant_major_env.seeding import SEED_RULE, seed_argument
from sergeant_major_env.statistics import format_ci

DEFAULT_OPPONENTS = "random,greedy,heuristic,pimc"
DEFAULT_SEED = 1_000_000
"""sergeant-major train's default --eval-seed: deals its own evaluations also use."""
LEARNED = "learned"


def parse_args(argv=None) -> tuple[argparse.Namespace, argparse.ArgumentParser]:
    parser = argparse.ArgumentParser(
        prog="sergeant-major ship", description=__doc__.split("\n\n")[0],
        epilog="\n\n".join(__doc__.split("\n\n")[1:]), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", nargs="?", metavar="RUN_FOLDER",
                        help="the run folder of sergeant-major train (or its policy.safetensors / policy.json) to ship")
    parser.add_argument("--games", type=int, default=600, metavar="N",
                        help="games against each opponent but pimc, rounded up to a multiple of 6 (default 600)")
    parser.add_argument("--pimc-games", type=int, default=120, metavar="N",
                        help="games against pimc (any pimc:... spec), which is slow (default 120)")
    parser.add_argument("--opponents", default=DEFAULT_OPPONENTS, metavar="X,Y,...",
                        help=f"agent names; each plays two seats of a table against learned (default "
                             f"{DEFAULT_OPPONENTS})")
    parser.add_argument("--seed", type=seed_argument, default=DEFAULT_SEED, metavar="S",
                        help=f"group j of each table plays seed S+j, as in sergeant-major evaluate; {SEED_RULE} "
                             f"(default {DEFAULT_SEED})")
    parser.add_argument("--into", type=Path, default=None, metavar="FOLDER",
                        help="where to ship (default, in a checkout of the repository only: the folder of its "
                             "`learned` agent); for --show, the folder to read (default: the `learned` agent's)")
    parser.add_argument("--overwrite", action="store_true", help="replace a policy already shipped there")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar while the games are played")
    parser.add_argument("--show", action="store_true",
                        help="print the strength table of the policy shipped in --into and exit")
    return parser.parse_args(argv), parser


# ============================================================================ checks before any game

def checkout_destination(folder: Path = LEARNED_FOLDER) -> Path | None:
    """``folder`` (the `learned` agent's) when the package runs from a checkout of the repository
    (a pyproject.toml above the package), where shipping replaces the package's own agent; None
    for an installed package, whose files pip owns (site-packages: --into is needed)."""
    return folder if any((parent / "pyproject.toml").is_file() for parent in folder.parents[1:3]) else None


def opponent_tables(args: argparse.Namespace) -> list[tuple[str, int]]:
    """(opponent name, games) of each table, checked: known agents, positive counts, seeds in range."""
    names = [name.strip() for name in args.opponents.split(",") if name.strip()]
    if not names or len(set(names)) != len(names):
        raise ValueError(f"--opponents needs distinct agent names separated by commas, got {args.opponents!r}")
    if LEARNED in names:
        raise ValueError("--opponents: learned is the policy being shipped; name the agents it plays against")
    if args.games < 1 or args.pimc_games < 1:
        raise ValueError(f"--games and --pimc-games must be at least 1, got {args.games} and {args.pimc_games}")
    tables = [(name, args.pimc_games if name.partition(":")[0] == "pimc" else args.games) for name in names]
    for name, games in tables:
        agents.make_agent(name)  # an unknown name is a one-line ValueError listing the known ones
        check_tournament_seed(args.seed, math.ceil(games / 6))
    return tables


def check_destination(folder: Path, overwrite: bool) -> list[Path]:
    """The three files to write in ``folder``; a ValueError if it is not a writable folder or it
    already holds a policy and ``overwrite`` is not set."""
    if not folder.is_dir():
        raise ValueError(f"--into {str(folder)!r} is not a folder")
    targets = [folder / name for name in (TENSORS_FILE, POLICY_METADATA_FILE, METADATA_FILE)]
    present = [path.name for path in targets if path.exists()]
    if present and not overwrite:
        raise ValueError(f"{folder} already holds a shipped policy ({', '.join(present)}); pass --overwrite "
                         f"to replace it")
    for path in targets:
        files.check_writable(path, "shipped policy file")
    return targets


def load_run_policy(run: str):
    """(agent, policy.safetensors path, policy.json path) of the run; a one-line ValueError if it
    has no policy file this package can load."""
    from sergeant_major_env.agents.policy_file import policy_file_paths

    agent = agents.make_agent(f"ppo:{run}")  # checks the observation layout and the tensors
    tensors, metadata = policy_file_paths(run)
    return agent, tensors, metadata


# ============================================================================ measuring

def measure_strength(policy, tables: list[tuple[str, int]], seed: int, rules, progress: bool) -> dict[str, Any]:
    """{opponent: the learned seat's statistics at the table learned,X,X}, printing as it goes."""
    strength = {}
    for number, (opponent, games) in enumerate(tables, 1):
        print(f"[{number}/{len(tables)}] learned vs {opponent},{opponent}: {games} games from seed {seed} ...",
              flush=True)
        start = time.perf_counter()
        table = [policy, agents.make_agent(opponent), agents.make_agent(opponent)]
        result = play_tables(table, TablePlan(games=games, seed=seed, rules=rules, progress=progress),
                             names=[LEARNED, opponent, f"{opponent}#2"])
        seconds = time.perf_counter() - start
        stats = result.agent(LEARNED)
        shown = next(entry for entry in result.to_dict()["agents"] if entry["name"] == LEARNED)  # as evaluate's JSON
        strength[opponent] = {
            "mean_points": shown["mean_points"], "ci95": shown["ci95"], "win_rate": shown["win_rate"],
            "mean_place": shown["mean_place"], "games": result.games, "groups": stats.groups, "seed": seed,
            "seconds": round(seconds, 1),
            "command": f"sergeant-major evaluate --agents {LEARNED},{opponent},{opponent} --games {result.games} "
                       f"--seed {seed}",
        }
        print(f"    {stats.mean_points:+.2f} {format_ci(stats.ci95)} points per game, win rate "
              f"{stats.win_rate:.1%}, {result.games} games in {seconds:.1f} s", flush=True)
    return strength


# ============================================================================ writing

def shipped_metadata(run: str, policy_metadata: dict[str, Any], rules, strength: dict[str, Any],
                     digests: dict[str, str], command: str) -> dict[str, Any]:
    """The content of learned.json (see agents/learned/__init__.py)."""
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "agent": LEARNED,
        "source": run,
        "shipped_by": command,
        "files": digests,
        "training": policy_metadata.get("training"),
        "observation": policy_metadata["observation"],
        "network": policy_metadata.get("network"),
        "rules": rules.to_dict(),
        "packages": policy_metadata.get("packages"),
        "strength": {
            "measured": "mean points per game of learned at the table learned,X,X (two copies of the opponent X), "
                        "duplicate deals, 95% Student-t interval over the duplicate groups "
                        "(sergeant_major_env.evaluation.play_tables, as sergeant-major evaluate)",
            "opponents": strength,
        },
    }


MACHINE_PATH = re.compile(r"(?<![\w.~-])/[^\s'\",=:;]+")
"""An absolute (POSIX) path inside a command line: ``/home/me/runs/x`` in ``--out /home/me/runs/x``."""


def portable(text: str) -> str:
    """``text`` with each absolute path written as shipped files keep it: relative to the
    current folder when inside it, else its last part. No machine's folders travel in the package."""
    return MACHINE_PATH.sub(lambda match: _portable_path(match.group(0)), text)


def _portable_path(path: str) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return Path(path).name or path


def portable_policy_json(path: Path) -> bytes:
    """policy.json as shipped: its own bytes, or, when its training record names a machine's
    path (``--out /home/me/runs/x`` in its command, a labels folder of a distilled policy), the
    same JSON with every string of that record made :func:`portable`."""
    raw = path.read_bytes()
    metadata = json.loads(raw)
    training = metadata.get("training")
    shipped = _portable_strings(training)
    if shipped == training:
        return raw
    metadata["training"] = shipped
    return (json.dumps(metadata, indent=2) + "\n").encode("utf-8")


def _portable_strings(value: Any) -> Any:
    if isinstance(value, str):
        return portable(value)
    if isinstance(value, dict):
        return {key: _portable_strings(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_portable_strings(item) for item in value]
    return value


def write_shipped(folder: Path, tensors: Path, policy_json: bytes, metadata: dict[str, Any]) -> None:
    """The two policy files, then learned.json with their digests (the last file written)."""
    copies = {TENSORS_FILE: tensors.read_bytes(), POLICY_METADATA_FILE: policy_json}
    for name, data in copies.items():
        files.write_bytes(folder / name, data)
    if metadata["files"] != {name: file_sha256(folder / name) for name in copies}:
        raise OSError(f"the policy files in {folder} changed while they were shipped")
    files.write_json(folder / METADATA_FILE, metadata)


def strength_table(metadata: dict[str, Any]) -> str:
    """The measured strength of a shipped policy as a Markdown table (the README's)."""
    lines = ["| opponents | mean points per game of `learned` (95% CI) | win rate | games | command |",
             "|---|---|---|---|---|"]
    for opponent, entry in metadata["strength"]["opponents"].items():
        lines.append(f"| `{opponent}` x2 | **{entry['mean_points']:+.2f}** {format_ci(entry['ci95'])} | "
                     f"{entry['win_rate']:.1%} | {entry['games']} | `{entry['command']}` |")
    return "\n".join(lines)


# ============================================================================ main

def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args, parser = parse_args(argv)
    if args.show:
        try:
            print(strength_table(read_learned_metadata(args.into or LEARNED_FOLDER)))
        except ValueError as error:
            parser.error(str(error))
        return 0
    if args.run is None:
        parser.error("give the RUN_FOLDER to ship (or --show for the shipped policy's strength)")
    args.into = args.into or checkout_destination()
    if args.into is None:
        parser.error(f"--into FOLDER is needed: this package is installed, not a checkout of the repository, and "
                     f"its own folder ({LEARNED_FOLDER}) is pip's; ship into a folder of yours and play it as "
                     f"ppo:FOLDER")

    # Arguments: every problem is reported before any game is played (exit status 2).
    try:
        tables = opponent_tables(args)
        check_destination(args.into, args.overwrite)
        policy, tensors, policy_json = load_run_policy(args.run)
        rules, notes = rules_for_table([policy], [LEARNED])
    except ValueError as error:
        parser.error(str(error))
    for note in notes:
        print(note)
    print(f"shipping {args.run} ({tensors.name}: {tensors.stat().st_size / 1e6:.2f} MB) into {args.into}", flush=True)

    try:
        strength = measure_strength(policy, tables, args.seed, rules, progress=not args.no_progress)
    except KeyboardInterrupt as error:
        interrupts.say(f"sergeant-major ship: {interrupts.describe(error)}; nothing shipped")
        return interrupts.exit_status(error)
    except ValueError as error:  # an opponent that cannot play these games
        print(f"sergeant-major ship: error: {error}", file=sys.stderr)
        return 1

    shipped_json = portable_policy_json(policy_json)
    digests = {TENSORS_FILE: file_sha256(tensors), POLICY_METADATA_FILE: hashlib.sha256(shipped_json).hexdigest()}
    command = portable(shlex.join(["sergeant-major", "ship", *argv]))
    metadata = shipped_metadata(portable(args.run), json.loads(shipped_json), rules, strength, digests, command)
    try:
        write_shipped(args.into, tensors, shipped_json, metadata)
    except OSError as error:
        print(f"sergeant-major ship: error: cannot write {args.into}: {error.strerror or error}", file=sys.stderr)
        return 1
    print(f"wrote {', '.join(str(args.into / name) for name in (TENSORS_FILE, POLICY_METADATA_FILE, METADATA_FILE))}")
    print(f"strength (as sergeant-major ship --show --into {args.into} prints it):\n{strength_table(metadata)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
