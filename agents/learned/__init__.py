"""`learned`: the trained policy shipped inside the package, loaded by name with no path.

This folder holds three files, all plain data (nothing in them can run code):

* `policy.safetensors` + `policy.json`: a policy file of train.py, the code-free format of
  `sergeant_major_env.agents.policy_file` (`ppo:agents/learned` loads the same policy);
* `learned.json`: what the policy is (`METADATA_FILE`, written by `sergeant-major ship
  RUN_FOLDER`): the run it came from and its training command, the observation version and
  rule options it was trained under, the SHA-256 of the two policy files (so a policy swapped
  without its metadata is refused), and its measured strength: for each opponent X, the mean
  points per game of `learned` at the table `learned,X,X` on duplicate deals, with the 95%
  interval, the games, the seed and the evaluate command that gives those numbers.

`learned` always means the newest policy: each round of search-then-distil (`distill rounds`)
that is shipped replaces it. It is the top rung of the **ladder**: the rounds kept for good,
each under a name that never changes, `learned-rN` for round N (`LADDER_ROUNDS`, the one list
of them; each is registered as an agent, with `search-rN`, the strongest search with it
inside), each in its own folder `ladder/rN/` with the same three files (`learned.json` saying
its agent name and round; digests checked as for `learned`). A yardstick: a figure measured
against `learned-r2` means the same next year. Keeping the newest `learned` as a rung before
the next round replaces it: `keep_rung(N)` (a copy of its three files, `learned.json` renamed),
then N in `LADDER_ROUNDS` and the new files in pyproject.toml's package data (a pattern that
already covers `ladder/*/`).

`learned-ppo` is the policy PPO trained (the shipped `learned` up to version 0.2.0), kept in
`PPO_FOLDER` (`ppo/`, the same three files): the distillation started from it (version 0.3.0's
`learned` was fitted to labels of the search with it inside; the `learned` shipped since is
two rounds of `distill rounds` on from that one), and head-to-head tables measure against it.

`make_agent("learned")` returns a [`sergeant_major_env.agents.ppo.PPOAgent`][] named `learned`
whose `.metadata` is `learned.json` (`.policy_metadata` is policy.json) and `.rules` the rule
options it was trained under; `make_agent("learned-r2")` likewise from `ladder/r2/`. They need
the optional `train` dependencies (torch, safetensors), as every `ppo:` policy does.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from sergeant_major_env import files

LEARNED_FOLDER = Path(__file__).resolve().parent
"""Where the shipped policy lives (inside the installed package)."""
PPO_FOLDER = LEARNED_FOLDER / "ppo"
"""Where `learned-ppo` lives: the policy PPO trained, where the shipped one's distillation started."""
LADDER_FOLDER = LEARNED_FOLDER / "ladder"
"""Where the ladder's rungs live: `ladder/rN/` for round N."""
LADDER_ROUNDS = (2,)
"""The ladder: the rounds of `distill rounds` kept for good, each as the agent `learned-rN`
(`rung_name`) from `ladder/rN/` (`rung_folder`). Round 2 is the `learned` shipped on
2026-12-06 (the policy `learned` names until a newer round is shipped)."""


def rung_name(round_number: int) -> str:
    """The agent name of the ladder's round `round_number`: `learned-rN`."""
    return f"learned-r{round_number}"


def rung_folder(round_number: int) -> Path:
    """The folder of the ladder's round `round_number`: `ladder/rN/`."""
    return LADDER_FOLDER / f"r{round_number}"


LADDER = {rung_name(number): rung_folder(number) for number in LADDER_ROUNDS}
"""The ladder's agent names and folders, in round order."""
SHIPPED_POLICIES = {"learned": LEARNED_FOLDER, "learned-ppo": PPO_FOLDER, **LADDER}
"""The shipped policies' agent names and folders (every name `--init` and `policy_source` take)."""


def policy_source(name: str | Path) -> Path:
    """The policy file or run folder `name` names: a shipped policy's folder for its agent name
    (`learned`, `learned-ppo`, `learned-r2`), else the path itself."""
    return SHIPPED_POLICIES.get(str(name), Path(name))

TENSORS_FILE = "policy.safetensors"
POLICY_METADATA_FILE = "policy.json"
METADATA_FILE = "learned.json"
FORMAT = "sergeant-major-env shipped policy"
FORMAT_VERSION = 1
SHIP_COMMAND = "sergeant-major ship RUN_FOLDER"
MAX_METADATA_BYTES = 1_000_000
"""Largest learned.json read (the shipped one is about 4 KB)."""
MAX_METADATA_DEPTH = 32
"""Deepest nesting of objects and lists in learned.json (the shipped one: 5 levels)."""


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes, as hex."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def read_learned_metadata(folder: str | Path = LEARNED_FOLDER, agent: str = "learned") -> dict[str, Any]:
    """The checked `learned.json` of `folder`; a one-line ValueError when a file is missing,
    the JSON is not the shipped-policy format, or a policy file is not the one it describes."""
    folder = Path(folder)
    for name in (TENSORS_FILE, POLICY_METADATA_FILE, METADATA_FILE):
        if not (folder / name).is_file():
            raise ValueError(f"agent {agent!r}: the shipped policy is missing ({folder / name} not found); "
                             f"this install or checkout has no trained policy: ship one with {SHIP_COMMAND}")
    path = folder / METADATA_FILE
    metadata = files.read_json(path, MAX_METADATA_BYTES, MAX_METADATA_DEPTH, f"agent {agent!r}: metadata")
    if not isinstance(metadata, dict) or metadata.get("format") != FORMAT \
            or metadata.get("format_version") != FORMAT_VERSION:
        raise ValueError(f"agent {agent!r}: {path} is not a shipped policy's metadata (expected \"format\": "
                         f"{FORMAT!r}, \"format_version\": {FORMAT_VERSION})")
    digests = metadata.get("files")
    _check_digests(folder, digests if isinstance(digests, dict) else {}, agent)
    return metadata


def _check_digests(folder: Path, digests: dict[str, Any], agent: str) -> None:
    for name in (TENSORS_FILE, POLICY_METADATA_FILE):
        if digests.get(name) != file_sha256(folder / name):
            raise ValueError(f"agent {agent!r}: {folder / name} is not the file {METADATA_FILE} describes (its "
                             f"SHA-256 differs); ship the policy again with {SHIP_COMMAND}")


def load_learned(folder: str | Path = LEARNED_FOLDER, name: str = "learned"):
    """The shipped policy of `folder` as an agent named `name` (see the module docstring)."""
    from ..ppo import PPOAgent

    metadata = read_learned_metadata(folder, name)
    agent = PPOAgent(Path(folder))
    agent.name = name
    agent.policy_metadata, agent.metadata = agent.metadata, metadata
    return agent


def load_learned_ppo():
    """`learned-ppo`: the policy PPO trained, the starting point of the shipped one (`PPO_FOLDER`)."""
    return load_learned(PPO_FOLDER, "learned-ppo")


# ============================================================================ the ladder

def load_rung(round_number: int):
    """`learned-rN`: the ladder's round `round_number` (`rung_folder`), its digests checked."""
    return load_learned(rung_folder(round_number), rung_name(round_number))


def rung_help(round_number: int) -> str:
    """The line `sergeant-major agents` shows for `learned-rN`: its round and its strength
    against the heuristic and pimc, read from its learned.json (not checked here: loading it is)."""
    name, folder = rung_name(round_number), rung_folder(round_number)
    text = f"round {round_number} of distill rounds, kept fixed as a yardstick (learned is the newest round)"
    try:
        opponents = files.read_json(folder / METADATA_FILE, MAX_METADATA_BYTES, MAX_METADATA_DEPTH,
                                    f"agent {name!r}: metadata")["strength"]["opponents"]
        strength = [f"{opponents[x]['mean_points']:+.2f} against {x} x2" for x in ("heuristic", "pimc")
                    if x in opponents]
    except (ValueError, KeyError, TypeError):
        return f"{text}; its files are missing or unreadable ({folder})"
    return f"{text}; points a game: {', '.join(strength)}" if strength else text


def newest_rung() -> str | None:
    """The rung `learned` is today (the one whose learned.json records the same policy files), or
    None when `learned` is newer than every rung (or a file is unreadable)."""
    try:
        newest = files.read_json(LEARNED_FOLDER / METADATA_FILE, MAX_METADATA_BYTES, MAX_METADATA_DEPTH)["files"]
        for name, folder in LADDER.items():
            if files.read_json(folder / METADATA_FILE, MAX_METADATA_BYTES, MAX_METADATA_DEPTH)["files"] == newest:
                return name
    except (ValueError, KeyError, TypeError):
        return None
    return None


def keep_rung(round_number: int, into: str | Path | None = None) -> Path:
    """Keep today's `learned` as the ladder's round `round_number`: its two policy files copied
    byte for byte into `into` (default `rung_folder(round_number)`), and its learned.json with
    `agent` `learned-rN`, the round, and its strength commands naming `learned-rN` (the same
    figures: the same policy); the training record as it is. A one-line ValueError if `learned`'s
    files do not match its digests or `into` already holds a policy (a rung never changes)."""
    name = rung_name(round_number)
    folder = Path(into) if into is not None else rung_folder(round_number)
    metadata = read_learned_metadata()
    present = [path.name for path in (folder / n for n in (TENSORS_FILE, POLICY_METADATA_FILE, METADATA_FILE))
               if path.exists()]
    if present:
        raise ValueError(f"{folder} already holds {', '.join(present)}: a rung of the ladder is never replaced")
    folder.mkdir(parents=True, exist_ok=True)
    for file_name in (TENSORS_FILE, POLICY_METADATA_FILE):
        files.write_bytes(folder / file_name, (LEARNED_FOLDER / file_name).read_bytes())
    _check_digests(folder, metadata["files"], name)
    files.write_json(folder / METADATA_FILE, rung_metadata(metadata, round_number))
    return folder


def rung_metadata(metadata: dict[str, Any], round_number: int) -> dict[str, Any]:
    """`learned`'s learned.json as the rung `learned-rN` keeps it (`keep_rung`)."""
    name = rung_name(round_number)
    kept = {"format": metadata["format"], "format_version": metadata["format_version"], "agent": name,
            "round": round_number,
            "kept": f"the learned shipped from {metadata.get('source')}, kept as round {round_number} of the ladder "
                    f"(agents/learned/__init__.py): the same policy files, its strength commands naming {name}"}
    kept.update((key, value) for key, value in metadata.items() if key not in kept)
    strength = kept.get("strength")
    if isinstance(strength, dict):
        opponents = {x: {**entry, "command": entry["command"].replace("--agents learned,", f"--agents {name},", 1)}
                     for x, entry in strength.get("opponents", {}).items()}
        measured = str(strength.get("measured", "")).replace("of learned at the table learned,",
                                                             f"of {name} at the table {name},")
        kept["strength"] = {**strength, "measured": measured, "opponents": opponents}
    return kept
