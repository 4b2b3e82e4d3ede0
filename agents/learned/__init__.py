"""`learned`: the trained policy shipped inside the package, loaded by name with no path.

This folder holds three files, all plain data (nothing in them can run code):

* `policy.safetensors` + `policy.json`: a policy file of train.py, the code-free format
  of `sergeant_major_env.agents.policy_file` (`ppo:agents/learned` loads the same policy);
* `learned.json`: what the policy is (`METADATA_FILE`, written by
  `sergeant-major ship RUN_FOLDER`): the run it came from and its training command,
  the observation version and rule options it was trained under, the SHA-256 of the two
  policy files (so a policy swapped without its metadata is refused), and its measured
  strength: for each opponent X, the mean points per game of `learned` at the table
  `learned,X,X` on duplicate deals, with the 95% interval, the games, the seed and the
  evaluate.py command that gives those numbers.

`learned-ppo` is the policy PPO trained (the shipped `learned` up to version 0.2.0), kept in
`PPO_FOLDER` (`ppo/`, the same three files): the distillation started from it (version
0.3.0's `learned` was fitted to labels of the search with it inside; the `learned` shipped
since is two rounds of `distill rounds` on from that one), and head-to-head tables measure
against it.

`make_agent("learned")` returns an [`sergeant_major_env.agents.ppo.PPOAgent`][] named `learned` whose
`.metadata` is `learned.json` (`.policy_metadata` is policy.json) and `.rules` the
rule options it was trained under. It needs the optional `train` dependencies (torch,
safetensors), as every `ppo:` policy does.
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
SHIPPED_POLICIES = {"learned": LEARNED_FOLDER, "learned-ppo": PPO_FOLDER}
"""The shipped policies' agent names and folders."""


def policy_source(name: str | Path) -> Path:
    """The policy file or run folder `name` names: a shipped policy's folder for its agent name
    (`learned`, `learned-ppo`), else the path itself."""
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
