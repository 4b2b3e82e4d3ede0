"""Ship a trained policy as the package's `learned` agent, with its measured strength: the
library of `sergeant-major ship` (its command line: `sergeant_major_env.cli.ship`, whose
docstring tells the whole story).

The run's policy is loaded and checked (`load_run_policy`), the destination checked
(`check_destination`, `checkout_destination`), the strength measured at the
tables "learned,X,X" (`measure_strength`), and the files written with learned.json last
(`write_shipped`); `strength_table` prints a shipped policy's strength.
"""
from __future__ import annotations

import json
import math
import re
import time
from pathlib import Path
from typing import Any

import sergeant_major_env.agents as agents
from sergeant_major_env.agents.learned import (
    FORMAT, FORMAT_VERSION, LEARNED_FOLDER, METADATA_FILE, POLICY_METADATA_FILE, TENSORS_FILE, file_sha256)
from sergeant_major_env import files
from sergeant_major_env.evaluation import TablePlan, check_tournament_seed, play_tables
from sergeant_major_env.statistics import format_ci

DEFAULT_OPPONENTS = "random,greedy,heuristic,pimc"
DEFAULT_SEED = 1_000_000
"""sergeant-major train's default --eval-seed: deals its own evaluations also use."""
LEARNED = "learned"


# ============================================================================ checks before any game

def checkout_destination(folder: Path = LEARNED_FOLDER) -> Path | None:
    """`folder` (the `learned` agent's) when the package runs from a checkout of the repository
    (a pyproject.toml above the package), where shipping replaces the package's own agent; None
    for an installed package, whose files pip owns (site-packages: --into is needed)."""
    return folder if any((parent / "pyproject.toml").is_file() for parent in folder.parents[1:3]) else None


def opponent_tables(args: Any) -> list[tuple[str, int]]:
    """(opponent name, games) of each table, checked: known agents, seeds in range (the counts, 1 or more, by the options)
    (`args`: `sergeant-major ship`'s options, `sergeant_major_env.cli.ship.ShipOptions`)."""
    names = [name.strip() for name in args.opponents.split(",") if name.strip()]
    if not names or len(set(names)) != len(names):
        raise ValueError(f"--opponents needs distinct agent names separated by commas, got {args.opponents!r}")
    if LEARNED in names:
        raise ValueError("--opponents: learned is the policy being shipped; name the agents it plays against")
    # An unknown name is a one-line ValueError listing the known ones; pimc under any name
    # (pimc:..., search) plays --pimc-games.
    tables = [(name, args.pimc_games if isinstance(agents.make_agent(name), agents.PIMCAgent) else args.games)
              for name in names]
    for name, games in tables:
        check_tournament_seed(args.seed, math.ceil(games / 6))
    return tables


def check_destination(folder: Path, overwrite: bool) -> list[Path]:
    """The three files to write in `folder`; a ValueError if it is not a writable folder or it
    already holds a policy and `overwrite` is not set."""
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
"""An absolute (POSIX) path inside a command line: `/home/me/runs/x` in `--out /home/me/runs/x`."""


def portable(text: str) -> str:
    """`text` with each absolute path written as shipped files keep it: relative to the
    current folder when inside it, else its last part. No machine's folders travel in the package."""
    return MACHINE_PATH.sub(lambda match: _portable_path(match.group(0)), text)


def _portable_path(path: str) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return Path(path).name or path


def portable_policy_json(path: Path) -> bytes:
    """policy.json as shipped: its own bytes, or, when its training record names a machine's
    path (`--out /home/me/runs/x` in its command, a labels folder of a distilled policy), the
    same JSON with every string of that record made `portable`."""
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
