"""Distilling the search into the policy: labels from a search bot, and a policy fitted to them.

**Labels** (`make_labels`, `sergeant-major distill labels`). Games are played by the
`player` (by default `learned`: the positions the policy itself meets) in all three seats,
game g of the run from the engine seed `seed + g`, with a chance `epsilon` of a random legal
move instead (more varied positions). At every decision with a real choice (two or more
distinct legal actions: cards equivalent by R16 count once, as in the search), the `teacher`
(a `pimc` spec) gives its value of each legal action for the seat to act
([`decision_values`][sergeant_major_env.agents.pimc.PIMCAgent.decision_values]: the mean points of the deal
over worlds sampled from what that seat knows, plus the value of the modes kept for later
deals at a mode choice). Equivalent cards get their representative's value. One label:

| array | dtype, shape | meaning |
|---|---|---|
| observation | float32 [N, D] | the seat's observation ([`observation.observe`][]) |
| legal | bool [N, 58] | its legal actions (RULES.md section 10) |
| values | float32 [N, 58] | the teacher's value of each legal action (NaN elsewhere) |
| action | int16 [N] | the teacher's choice (its highest value) |
| value | float32 [N] | the position's value: the teacher's value of its choice |
| game | int32 [N] | the game's index in the run (its seed is `seed + game`) |
| seat | int8 [N] | the seat to act |

The labels are written in shards of `shard_games` games (`shard_00000.npz`, ...: plain
numpy arrays, read with `np.load(allow_pickle=False)`, never code), each written whole to a
temporary name and renamed, beside `labels.json` (the options they were made with). A
shard's games and labels depend on the options and the shard's index alone: the teacher's
worlds are drawn from the seat's knowledge and its own seed (pimc's "Randomness"), the player
is deterministic or draws from a generator seeded by the run's seed and the shard. So the
shards are the same whichever worker process made them (`workers`), or Ray task (`ray`:
each task builds its own teacher and player from the plan's names and sends its shard's
arrays back, written by the process that asked), and a run stopped by Ctrl-C or a crash
resumes with the shards still missing: the same command again. Asking for
more `games` later adds shards to the same labels.

**Fit** (`fit_policy`, `sergeant-major distill fit`). The policy network of a policy
file (by default the shipped `learned`) is fitted to the labels: cross-entropy of its
masked action distribution to the softmax of the teacher's values over the legal actions at
`temperature` points (or to the teacher's choice alone, `temperature` 0), and its value
head to the position's value (weight `value_weight`), with Adam over `epochs` passes. A
tenth of the games (by game index) is held out to report the agreement with the teacher's
choice (the policy's most likely action is one of the teacher's best value). The result is a policy file (`policy.safetensors` + `policy.json`, code-free, with
the observation version and how it was made), played as `ppo:OUT`.

**Reading labels** (`load_labels`, the one reader of `fit` and `curve`) checks
everything before any work, each problem a one-line ValueError naming the file (and the array
and row): the manifests (bounded reads: `files.read_json`) and the shards each folder
holds against its manifest (`check_manifest_shards`), folders that would give the
same labels twice (`read_plans`), each shard's zip and `.npy` headers before anything
is allocated (`shard_rows`), the memory of them all (`limits.check_fits`), then each
label (`check_shard`). A resumed labels run removes only the temporary files of its own
shards and manifest (`files.leftover_temporaries`).
"""

from __future__ import annotations

import dataclasses
import io
import math
import os
import re
import shlex
import time
import zipfile
import zlib
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from sergeant_major_env import engine, files, limits
from sergeant_major_env.agents import make_agent
from sergeant_major_env.agents.pimc import PIMCAgent, choices
from sergeant_major_env.cards import NUM_ACTIONS, NUM_CARDS, bits_to_bool, count, random_member
from sergeant_major_env import arguments
from sergeant_major_env.arguments import REAL, WHOLE, opt
from sergeant_major_env.observation import OBSERVATION_SIZE, observe
from sergeant_major_env.observation import VERSION as OBSERVATION_VERSION
from sergeant_major_env.policies import decide
from sergeant_major_env.processes import run_jobs
from sergeant_major_env.rules import Rules
from sergeant_major_env.seeding import check_seed_span

FORMAT = "sergeant-major-env labels"
FORMAT_VERSION = 1
MANIFEST = "labels.json"
ARRAYS = {"observation": np.float32, "legal": np.bool_, "values": np.float32, "action": np.int16,
          "value": np.float32, "game": np.int32, "seat": np.int8}
"""The arrays of a shard and their dtypes (the module docstring's table)."""

LABELS_PER_DEAL = 40
"""About how many labels one game's deal gives (measured: 40 with the heuristic as player); the
progress bar's estimate of the total."""
MAX_GAMES = 10_000_000
"""The most games one labels folder may ask for (about 400 million labels: far past a day's work here)."""
MAX_SHARDS = 100_000
"""The most shards one labels folder may hold: their names are shard_00000.npz .. shard_99999.npz."""
MANIFEST_BYTES, MANIFEST_DEPTH = 64 * 1024, 8
"""The largest `labels.json` read (one is about 500 bytes) and its deepest nesting (it has 3)."""
MAX_HEADER_BYTES = 10_000
"""The largest `.npy` header of a shard's array read (numpy writes about 128 bytes)."""


# ============================================================================ the plan

@dataclasses.dataclass(frozen=True)
class LabelPlan:
    """What a labels folder holds: every option that changes a label (`labels.json`)."""

    teacher: str = "pimc:rollout=learned"
    """The search bot that values the actions: a `pimc` spec (pimc:worlds=32:rollout=learned)."""
    player: str = "learned"
    """The agent that plays the games in all three seats: whose positions are labelled."""
    epsilon: float = 0.0
    """Chance of a uniformly random legal move instead of the player's, at each decision."""
    games: int = 600
    """Games to play and label (game g from engine seed `seed + g`)."""
    shard_games: int = 20
    """Games per shard: the unit of work of a worker process and of resuming."""
    seed: int = 2_000_000_000
    """The first game's engine seed; also seeds the player's randomness and epsilon's. Far from
    the seeds evaluations play (evaluate's 0, train's and ship's 1,000,000): a policy fitted to
    labels of some deals must be measured on other deals, or it is measured on what it learnt by heart."""
    rules: Rules = Rules()
    """The rule options of the games (RULES.md section 9)."""

    def check(self) -> "LabelPlan":
        """This plan (its numbers as Python's int and float), or a one-line ValueError naming the
        option that is out of range."""
        if not limits.is_integer(self.games) or not 1 <= self.games <= MAX_GAMES:
            raise ValueError(f"games must be an integer in 1..{MAX_GAMES:,}, got {limits.shorten(self.games)}")
        if not limits.is_integer(self.shard_games) or not 1 <= self.shard_games <= 10_000:
            raise ValueError(f"shard games must be an integer in 1..10000, got {limits.shorten(self.shard_games)}")
        if self.shards > MAX_SHARDS:
            raise ValueError(f"{self.games:,} games in shards of {self.shard_games:,} make {self.shards:,} shards; a labels "
                             f"folder holds at most {MAX_SHARDS:,}: give at least "
                             f"{math.ceil(self.games / MAX_SHARDS):,} shard games")
        for name in ("teacher", "player"):
            if not isinstance(getattr(self, name), str):
                raise ValueError(f"{name} must be an agent name, got {limits.shorten(getattr(self, name))}")
        if not (limits.is_number(self.epsilon) and 0.0 <= self.epsilon <= 1.0):  # an int too (JSON's 1), no bool
            raise ValueError(f"epsilon must be a number in [0, 1], got {self.epsilon!r}")
        check_seed_span(self.seed, self.games)
        plain = dict(games=int(self.games), shard_games=int(self.shard_games), seed=int(self.seed),
                     epsilon=float(self.epsilon))  # numpy's numbers and JSON's 1 as Python's int and float
        same = all(type(getattr(self, name)) is type(value) for name, value in plain.items())
        return self if same else dataclasses.replace(self, **plain)

    @property
    def shards(self) -> int:
        """How many shards the plan's games make."""
        return math.ceil(self.games / self.shard_games)

    def to_dict(self) -> dict[str, Any]:
        return {"teacher": self.teacher, "player": self.player, "epsilon": self.epsilon, "games": self.games,
                "shard_games": self.shard_games, "seed": self.seed, "rules": self.rules.to_dict()}

    def command(self, folder: str | Path) -> str:
        """The `sergeant-major distill labels` command that makes (or continues) these labels in `folder`."""
        words = ["sergeant-major", "distill", "labels", "--out", str(folder), "--games", str(self.games),
                 "--seed", str(self.seed)]
        defaults = LabelPlan()
        for name in ("teacher", "player", "epsilon", "shard_games"):
            if getattr(self, name) != getattr(defaults, name):
                words += ["--" + name.replace("_", "-"), str(getattr(self, name))]
        return shlex.join(words + rule_words(self.rules))

    def same_labels_as(self, other: "LabelPlan") -> bool:
        """Whether the shards both would write are the same (`games` may differ: more shards)."""
        return dataclasses.replace(self, games=other.games) == other


def rule_words(rules: Rules) -> list[str]:
    """`--option NAME=VALUE ...` for the rule options that differ from the rule book's (none: [])."""
    changed = [f"{name}={str(value).lower() if isinstance(value, bool) else value}"
               for name, value in rules.to_dict().items() if value != getattr(Rules(), name)]
    return ["--option", *changed] if changed else []


def shard_path(folder: Path, shard: int) -> Path:
    return folder / f"shard_{shard:05d}.npz"


SHARD_NAMES = r"shard_\d{5}\.npz"
"""The names of the shards (`shard_path`), as a regular expression."""


def shard_files(folder: Path) -> dict[int, Path]:
    """{shard: path} of the shards `folder` holds (a link too, even to nothing), by index:
    what is there, listed once, however many shards its plan has."""
    found = {}
    with os.scandir(folder) as entries:
        for entry in entries:
            if re.fullmatch(SHARD_NAMES, entry.name):
                found[int(entry.name[6:11])] = Path(entry.path)
    return dict(sorted(found.items()))


def build_agents(plan: LabelPlan) -> tuple[PIMCAgent, object]:
    """(teacher, player) of the plan; a one-line ValueError for a teacher that is not a search
    bot or a player that needs a person."""
    teacher = make_agent(plan.teacher)
    if not isinstance(teacher, PIMCAgent):
        raise ValueError(f"the teacher must be a pimc search bot (pimc, pimc:rollout=learned, ...), got "
                         f"{plan.teacher!r}")
    if plan.player.partition(":")[0] == "human":
        raise ValueError("the player cannot be human: the labels' games are played without a person")
    return teacher, make_agent(plan.player)


# ============================================================================ one shard

def shard_labels(plan: LabelPlan, shard: int, teacher: PIMCAgent, player: object,
                 on_labels: Callable[[int], None] = lambda count: None) -> dict[str, np.ndarray]:
    """The labels of shard `shard` (games `shard * shard_games` on), as the module docstring's
    arrays; `on_labels(n)` is told each time n more labels are made."""
    first = shard * plan.shard_games
    games = min(plan.shard_games, plan.games - first)
    state = engine.init(engine.game_seeds(plan.seed + first, games), plan.rules)
    rng = np.random.default_rng([plan.seed, shard])  # the player's and epsilon's: this shard's own
    parts: list[dict[str, np.ndarray]] = []
    while (live := np.flatnonzero(state.phase != engine.OVER)).size:
        legal = engine.legal_bits(state, live)
        real = choices(state, live, legal)
        asked = count(real) > 1
        if asked.any():
            part = _label(state, live[asked], legal[asked], real[asked], teacher)
            part["game"] += first
            parts.append(part)
            on_labels(int(asked.sum()))
        actions = np.zeros(state.batch_size, dtype=np.int64)
        actions[live] = _moves(plan, player, state, live, legal, rng)
        engine.step(state, actions)
    if not parts:
        return {name: np.zeros((0,) + _width(name), dtype) for name, dtype in ARRAYS.items()}
    return {name: np.concatenate([part[name] for part in parts]).astype(dtype) for name, dtype in ARRAYS.items()}


def _width(name: str) -> tuple[int, ...]:
    return {"observation": (OBSERVATION_SIZE,), "legal": (NUM_ACTIONS,), "values": (NUM_ACTIONS,)}.get(name, ())


def _label(state: engine.State, games: np.ndarray, legal: np.ndarray, real: np.ndarray,
           teacher: PIMCAgent) -> dict[str, np.ndarray]:
    """The labels of `games` (each with a real choice): the teacher's values of all legal actions."""
    searched = teacher.decision_values(state, games, real, teacher.streams(state, games))
    legal_mask = bits_to_bool(legal, NUM_ACTIONS)
    values = equivalent_card_values(searched, legal_mask)
    action = searched.argmax(axis=1)
    return {"observation": observe(state.take(games), state.to_act[games]), "legal": legal_mask,
            "values": np.where(legal_mask, values, np.nan), "action": action,
            "value": searched[np.arange(games.size), action], "game": games.astype(np.int32),
            "seat": state.to_act[games]}


def equivalent_card_values(values: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """`values` (float[G, 58], -inf where not searched) with each legal card that was not
    searched given the value of the searched card below it in its suit: by R16 it is equivalent
    to that card (`distinct_cards`: a skipped card is
    joined to its representative through legal or played cards only)."""
    values = values.copy()
    cards = values[:, :NUM_CARDS].reshape(-1, 4, 13)  # a view: suit x rank, rank 0 the two
    wanted = legal[:, :NUM_CARDS].reshape(-1, 4, 13) & ~np.isfinite(cards)
    carried = np.full(cards.shape[:2], -np.inf)
    for rank in range(13):
        searched = np.isfinite(cards[:, :, rank])
        carried = np.where(searched, cards[:, :, rank], carried)
        cards[:, :, rank] = np.where(wanted[:, :, rank], carried, cards[:, :, rank])
    return values


def _moves(plan: LabelPlan, player: object, state: engine.State, live: np.ndarray, legal: np.ndarray,
           rng: np.random.Generator) -> np.ndarray:
    """The moves played: the player's, each replaced by a random legal one with chance epsilon."""
    moves = decide(player, state, live, bits_to_bool(legal, NUM_ACTIONS), rng)
    if plan.epsilon > 0:
        explore = rng.random(live.size) < plan.epsilon
        moves = np.where(explore, random_member(legal, rng), moves)
    return moves


def write_shard(path: Path, labels: dict[str, np.ndarray]) -> None:
    """One shard, whole or not at all (a temporary file renamed)."""
    buffer = io.BytesIO()
    np.savez(buffer, **labels)
    files.write_bytes(path, buffer.getvalue())


READ_ERRORS = (OSError, ValueError, EOFError, KeyError, NotImplementedError, RuntimeError, zipfile.BadZipFile,
               zlib.error)
"""What reading a damaged `.npz` raises (a truncated or corrupt zip, a bad `.npy` header, a
member missing, compressed by an unknown method or encrypted): each one line naming the shard."""


def shard_rows(path: Path) -> int:
    """The labels of the shard at `path`, read from its arrays' headers alone (nothing is
    allocated): a one-line ValueError naming the file and the array unless it is a whole zip
    holding each array of `ARRAYS` with its dtype and width, the same rows in each, and
    exactly the bytes its header says (a header claiming 10^12 rows is refused here, not
    allocated)."""
    name = files.short_path(path)
    if path.is_symlink() and not path.exists():
        raise ValueError(f"labels shard {name} is a link to nothing; remove it, or make the labels again")
    if not path.is_file():
        raise ValueError(f"labels shard {name} is not a regular file")
    rows = {}
    try:
        with zipfile.ZipFile(path) as archive:
            for array, dtype in ARRAYS.items():
                info = archive.getinfo(f"{array}.npy")
                with archive.open(info) as member:
                    shape, data_bytes = _array_header(member, array, np.dtype(dtype))
                    if info.file_size != member.tell() + data_bytes:
                        raise ValueError(f"array {array!r} holds {info.file_size - member.tell():,} bytes of data, "
                                         f"its header says {shape} ({data_bytes:,} bytes)")
                rows[array] = shape[0]
    except READ_ERRORS as error:
        raise ValueError(f"labels shard {name} is not a whole labels shard: {_reason(error)}") from None
    if len(set(rows.values())) != 1:
        raise ValueError(f"labels shard {name}: its arrays have different rows "
                         f"({', '.join(f'{array} {count:,}' for array, count in rows.items())}); each has one per label")
    if rows["action"] == 0:
        raise ValueError(f"labels shard {name} holds no labels (0 rows); a shard holds its games' labels")
    return rows["action"]


def _array_header(member, array: str, dtype: np.dtype) -> tuple[tuple[int, ...], int]:
    """(shape, bytes of data) of the `.npy` file being read from `member`, checked against
    the array's dtype and width (a ValueError naming the array otherwise)."""
    version = np.lib.format.read_magic(member)
    readers = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}
    if version not in readers:
        raise ValueError(f"array {array!r} is in .npy format version {version}; numpy writes 1.0 or 2.0")
    shape, _, found = readers[version](member, max_header_size=MAX_HEADER_BYTES)
    if found != dtype:
        raise ValueError(f"array {array!r} has dtype {found}; a label's {array} is {dtype}")
    if len(shape) != 1 + len(_width(array)) or shape[1:] != _width(array):
        expected = ", ".join(["N", *map(str, _width(array))])
        raise ValueError(f"array {array!r} has shape {shape}; a shard's {array} has shape ({expected}"
                         f"{',' if len(_width(array)) == 0 else ''}) (observation version {OBSERVATION_VERSION})")
    return shape, math.prod(shape) * dtype.itemsize


def _reason(error: BaseException) -> str:
    """An exception as one short line of a message."""
    text = str(error.args[0]) if isinstance(error, KeyError) and error.args else str(error)  # no repr's quotes
    return limits.cut_middle(" ".join(text.split()) or type(error).__name__, 160)


def read_shard(path: Path, first_game: int = 0, games: int | None = None) -> dict[str, np.ndarray]:
    """A shard's arrays, checked before anything is allocated (`shard_rows`) and after
    (`check_shard`); nothing is unpickled (`allow_pickle=False`), so no code is run.
    `first_game`, `games`: the game indices the shard's labels may have."""
    rows = shard_rows(path)
    try:
        with zipfile.ZipFile(path) as archive:
            labels = {}
            for array in ARRAYS:
                with archive.open(f"{array}.npy") as member:
                    labels[array] = np.lib.format.read_array(member, allow_pickle=False,
                                                             max_header_size=MAX_HEADER_BYTES)
    except READ_ERRORS as error:
        raise ValueError(f"labels shard {files.short_path(path)} is not a whole labels shard: "
                         f"{_reason(error)}") from None
    if any(array.shape[0] != rows for array in labels.values()):  # changed since its headers were read
        raise ValueError(f"labels shard {files.short_path(path)} changed while it was read")
    check_shard(path, labels, first_game, games)
    return labels


def check_shard(path: Path, labels: dict[str, np.ndarray], first_game: int = 0, games: int | None = None) -> None:
    """A one-line ValueError naming the shard, the array and the first row that a label cannot
    have: a number that is not finite, no legal action, a value at an illegal action (they are
    NaN) or none at a legal one, an action that is not one of the row's legal actions, a game
    outside the shard's (`first_game` .. `first_game + games - 1`) or a seat outside 0..2."""
    legal, values, action = labels["legal"], labels["values"], labels["action"]
    in_range = (action >= 0) & (action < NUM_ACTIONS)
    last_game = np.iinfo(np.int32).max if games is None else first_game + games - 1
    checks = (
        ("observation", lambda: ~np.isfinite(labels["observation"]).all(axis=1), "holds NaN or infinity",
         "observations are finite"),
        ("legal", lambda: ~legal.any(axis=1), "has no legal action", "a label has at least one"),
        ("values", lambda: (legal & ~np.isfinite(values)).any(axis=1), "is not finite at a legal action",
         "each legal action's value is a finite number"),
        ("values", lambda: (~legal & ~np.isnan(values)).any(axis=1), "has a number at an illegal action",
         "values are NaN there"),
        ("action", lambda: ~in_range | ~legal[np.arange(action.size), np.where(in_range, action, 0)],
         "is {value}", f"a label's action is one of its legal actions (0..{NUM_ACTIONS - 1})"),
        ("value", lambda: ~np.isfinite(labels["value"]), "is {value}", "a position's value is a finite number"),
        ("game", lambda: (labels["game"] < first_game) | (labels["game"] > last_game), "is {value}",
         f"this shard's games are {first_game}..{last_game}"),
        ("seat", lambda: (labels["seat"] < 0) | (labels["seat"] > 2), "is {value}", "seats are 0..2"),
    )
    for array, bad_rows, problem, allowed in checks:
        bad = np.flatnonzero(bad_rows())
        if bad.size:
            row = int(bad[0])
            said = problem.format(value=labels[array][row].item() if labels[array].ndim == 1 else None)
            raise ValueError(f"labels shard {files.short_path(path)}: row {row} of {array} {said} "
                             f"({bad.size:,} such row{'s' if bad.size > 1 else ''}); {allowed}")


# ============================================================================ a labels folder

def read_manifest(folder: Path) -> LabelPlan | None:
    """The plan of an existing labels folder (None if it has none yet), checked against the
    shards the folder holds (`check_manifest_shards`)."""
    path = folder / MANIFEST
    if not path.exists() and not path.is_symlink():
        return None
    data = files.read_json(path, MANIFEST_BYTES, MANIFEST_DEPTH, what="labels manifest")
    try:
        if data.get("format") != FORMAT or data.get("format_version") != FORMAT_VERSION:
            raise ValueError(f"format {data.get('format')!r} version {data.get('format_version')!r}")
        if data.get("observation_version") != OBSERVATION_VERSION:
            raise ValueError(f"observation version {data.get('observation_version')!r}, this package's is "
                             f"{OBSERVATION_VERSION}")
        plan = data["plan"]
        plan = LabelPlan(**{**plan, "rules": Rules.from_dict(plan["rules"])}).check()
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise ValueError(f"{files.short_path(path)} is not a labels manifest this package can continue: "
                         f"{_reason(error)}") from None
    check_manifest_shards(folder, plan)
    return plan


def check_manifest_shards(folder: Path, plan: LabelPlan) -> None:
    """A one-line ValueError when `folder` holds a shard that its manifest's `plan` does not
    have (an index past its games: the manifest is not the one the shards were made with). A
    shard of the plan that is missing is not one (labels still being made); each shard's rows,
    games and arrays are checked when it is read (`shard_rows`, `check_shard`)."""
    beyond = [path for shard, path in shard_files(folder).items() if shard >= plan.shards]
    if beyond:
        raise ValueError(f"{files.short_path(folder / MANIFEST)} plans {plan.shards:,} shard"
                         f"{'s' if plan.shards > 1 else ''} ({plan.games:,} games, {plan.shard_games:,} a shard) but "
                         f"the folder holds {beyond[0].name}{f' and {len(beyond) - 1:,} more' if len(beyond) > 1 else ''}"
                         f": the manifest does not match its shards; make the labels again in a new folder")


def open_labels(folder: Path, plan: LabelPlan) -> list[int]:
    """Prepare `folder` for `plan` and return the shards still to make. A folder made with
    other options is refused (one line); the same options (`games` may grow) resume it."""
    earlier = read_manifest(folder) if folder.is_dir() else None
    if earlier is not None and not earlier.same_labels_as(plan):
        differ = [key for key, value in plan.to_dict().items() if key != "games" and earlier.to_dict()[key] != value]
        raise ValueError(f"{folder} holds labels made with other options ({', '.join(differ)}: "
                         f"{', '.join(repr(earlier.to_dict()[key]) for key in differ)}); use the same options to "
                         f"continue it, or another --out")
    if earlier is None and folder.is_dir() and any(folder.iterdir()):
        raise ValueError(f"{folder} is not empty and holds no {MANIFEST}: choose a new or empty --out")
    folder.mkdir(parents=True, exist_ok=True)
    if earlier is None or plan.games > earlier.games:
        files.write_json(folder / MANIFEST, {"format": FORMAT, "format_version": FORMAT_VERSION,
                                             "observation_version": OBSERVATION_VERSION, "plan": plan.to_dict()})
    for stale in files.leftover_temporaries(folder, f"{SHARD_NAMES}|{re.escape(MANIFEST)}"):
        stale.unlink()  # a shard or manifest half written by a run that was killed; nothing else
    return [shard for shard in range(plan.shards) if not shard_path(folder, shard).exists()]


def make_labels(folder: str | Path, plan: LabelPlan, workers: int = 1,
                on_labels: Callable[[int], None] = lambda count: None, ray: bool = False,
                ray_address: str | None = None) -> dict[str, Any]:
    """Make the missing shards of `folder` (see the module docstring) in `workers` processes,
    or with `ray` as Ray tasks (`run_on_ray`: on this
    process's Ray session, or on one started at `ray_address`, None for a local one; `workers`
    is not used): each task builds the teacher and player from the plan's names and returns its
    shard's arrays, which this process writes as they arrive, so the labels are the same as
    here and an interrupted run keeps every shard written. `on_labels(n)`: n more labels made
    (with Ray, a shard's at once). Returns {"shards": made now, "labels": made now, "seconds": wall time}."""
    folder = Path(folder)
    plan.check()
    if ray:
        from sergeant_major_env.ray_jobs import import_ray

        import_ray("make_labels(ray=True) (distill labels --ray)")  # before the folder is touched
    teacher, player = build_agents(plan)
    missing = open_labels(folder, plan)
    start = time.perf_counter()
    if ray:
        made = _shards_on_ray(folder, plan, missing, ray_address, on_labels)
    else:
        def one_shard(shard: int, report: Callable[[int], None]) -> int:
            labels = shard_labels(plan, shard, teacher, player, report)
            write_shard(shard_path(folder, shard), labels)
            return int(labels["action"].size)

        try:
            made = run_jobs(one_shard, missing, workers, on_deals=on_labels)
        except BaseException:  # a stop signal or an error: the workers are stopped and joined by now
            for stale in files.leftover_temporaries(folder, SHARD_NAMES):
                stale.unlink(missing_ok=True)  # a shard a stopped worker was writing; it is made again later
            raise
    return {"shards": len(missing), "labels": int(sum(made)), "seconds": time.perf_counter() - start}


def _shard_task(plan: LabelPlan, shard: int) -> dict[str, np.ndarray]:
    """A Ray task: the labels of one shard, with the teacher and player built here from the plan."""
    teacher, player = build_agents(plan)
    return shard_labels(plan, shard, teacher, player)


def _shards_on_ray(folder: Path, plan: LabelPlan, missing: list[int], address: str | None,
                   on_labels: Callable[[int], None]) -> list[int]:
    """Make the `missing` shards as Ray tasks, each written here as it arrives; their label counts."""
    from sergeant_major_env.ray_jobs import run_on_ray

    def arrived(shard: int, labels: dict[str, np.ndarray]) -> int:
        write_shard(shard_path(folder, shard), labels)
        on_labels(int(labels["action"].size))
        return int(labels["action"].size)

    return run_on_ray(_shard_task, plan, missing, address, arrived,
                      needed_by="make_labels(ray=True) (distill labels --ray)")


def games_made(folder: Path, plan: LabelPlan) -> int:
    """The games of the shards of `folder` made so far without a gap from the first (the
    `--games` that would give exactly these labels)."""
    shards = 0
    while shards < plan.shards and shard_path(folder, shards).exists():
        shards += 1
    return min(plan.games, shards * plan.shard_games)


def read_plans(folders: Sequence[str | Path]) -> list[LabelPlan]:
    """The plans of labels folders that can be fitted together; a one-line ValueError for a
    folder that is not a labels folder, folders made under different rule options, or a folder
    given twice or two holding the same labels (the same options and seed: the fit would see
    every label of the smaller twice)."""
    plans = [read_manifest(Path(folder)) for folder in folders]
    if None in plans:
        raise ValueError(f"{folders[plans.index(None)]} holds no {MANIFEST}: not a labels folder")
    if len({plan.rules for plan in plans}) > 1:
        raise ValueError("the --labels folders were made under different rule options: fit to one rule set")
    for second, plan in enumerate(plans):
        first = next(index for index, earlier in enumerate(plans) if earlier.same_labels_as(plan))
        if first != second:
            raise ValueError(f"--labels {folders[first]} and {folders[second]} hold the same labels (the same "
                             f"options and seed): give each labels folder once")
    return plans


LABEL_BYTES = OBSERVATION_SIZE * 4 + NUM_ACTIONS * (1 + 4 + 4) + 2 + 4 + 4 + 1
"""Bytes of one label's arrays (and its target distribution); twice this is the measured peak of
a fit, about 8 KB a label (docs/training.md), what `load_labels` asks the memory for."""


def load_labels(folders: Sequence[str | Path], limit: int | None = None) -> dict[str, np.ndarray]:
    """The labels of every shard of `folders` in order (at most `limit` labels), as one set of
    arrays: the one reader of labels for `fit` and `curve`. Everything is checked before
    the labels are used, each problem one ValueError line naming the file (and the array and
    row): the manifests (`read_plans`), every shard's headers before anything is allocated
    and the memory all of them need (`shard_rows`, `limits.check_fits`), then every
    label (`check_shard`). A shard not made yet is skipped (a folder whose labels are
    still being made can be fitted to)."""
    plans = read_plans(folders)
    shards: list[tuple[Path, int, int]] = []  # (path, first game, games)
    total = 0
    for folder, plan in zip(map(Path, folders), plans):
        for shard, path in shard_files(folder).items():  # those made: a plan may have many more
            if limit is not None and total >= limit:
                break
            total += shard_rows(path)
            first = shard * plan.shard_games
            shards.append((path, first, min(plan.shard_games, plan.games - first)))
    if not shards:
        raise ValueError(f"no labels in {', '.join(map(str, folders))}: make them with sergeant-major distill labels")
    limits.check_fits(f"{total:,} labels", 2 * total * LABEL_BYTES, "give a --limit, or fewer --labels folders")
    parts = [read_shard(path, first, games) for path, first, games in shards]
    labels = {name: np.concatenate([part[name] for part in parts]) for name in ARRAYS}
    return {name: array[:limit] for name, array in labels.items()} if limit is not None else labels


# ============================================================================ the fit

@dataclasses.dataclass(frozen=True)
class FitOptions:
    """How a policy is fitted to labels (`sergeant-major distill fit`): each field an option of
    its command line (`sergeant_major_env.arguments`), its docstring the option's help;
    `check` checks the ranges."""

    epochs: int = opt(10, WHOLE)
    """Passes over the labels."""
    batch_size: int = opt(256, WHOLE)
    """Labels per gradient step."""
    learning_rate: float = opt(3e-4, REAL)
    """Adam's learning rate (annealed linearly to zero over the fit)."""
    temperature: float = opt(0.0, REAL)
    """Points per unit of logit of the target distribution (softmax of the teacher's values over
    the legal actions); 0: the teacher's choice alone (one-hot)."""
    margin: float = opt(0.5, REAL)
    """Points by which the teacher's best value must beat that of the starting policy's own
    choice for the label to teach the teacher's choice; below it the target is the policy's own
    choice (keep what the policy does unless the search is clearly better). 0: always the teacher's
    (measured worse: the teacher's choice among near-equal actions is mostly its sampling noise)."""
    value_weight: float = opt(0.0, REAL)
    """Weight of the value head's squared error to the position's value (0: the value head is left
    as it is; nothing that plays the policy reads it, only a PPO fine-tune would)."""
    holdout: float = opt(0.1, REAL)
    """Fraction of the games (by game index) held out to measure the agreement with the teacher."""
    seed: int = arguments.seed(0)
    """Seeds the order of the labels."""

    def check(self) -> "FitOptions":
        for name, low in (("epochs", 1), ("batch_size", 1)):
            value = getattr(self, name)
            if not isinstance(value, int) or not low <= value <= 1_000_000:
                raise ValueError(f"{name} must be an integer in {low}..1000000, got {value!r}")
        for name, low, high in (("learning_rate", 0.0, 1.0), ("temperature", 0.0, 1000.0), ("margin", 0.0, 1000.0),
                                ("value_weight", 0.0, 1000.0), ("holdout", 0.0, 0.9)):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and low <= value <= high):
                raise ValueError(f"{name} must be a finite number in [{low}, {high}], got {value!r}")
        if self.learning_rate <= 0:
            raise ValueError(f"learning_rate must be above 0, got {self.learning_rate!r}")
        return self


def target_distribution(values: np.ndarray, legal: np.ndarray, action: np.ndarray, temperature: float) -> np.ndarray:
    """float32[N, 58]: what the policy is fitted to: the softmax of the teacher's values over the
    legal actions at `temperature` points per logit, or the teacher's choice (`temperature` 0)."""
    if temperature == 0:
        target = np.zeros(values.shape, dtype=np.float32)
        target[np.arange(len(action)), action] = 1.0
        return target
    logits = np.where(legal, np.nan_to_num(values, nan=0.0, neginf=0.0) / temperature, -np.inf)
    logits -= logits.max(axis=1, keepdims=True)
    weights = np.exp(logits)
    return (weights / weights.sum(axis=1, keepdims=True)).astype(np.float32)


def kept_or_corrected(network, labels: dict[str, np.ndarray], margin: float) -> np.ndarray:
    """int64[N]: per label, the teacher's choice where its value beats that of the policy's own
    most likely action by more than `margin` points, else the policy's own action."""
    import torch

    with torch.no_grad():
        logits = network.action_logits(torch.from_numpy(labels["observation"]))
        own = logits.masked_fill(~torch.from_numpy(labels["legal"]), -1e8).argmax(dim=1).numpy()
    rows = np.arange(own.size)
    values = np.nan_to_num(labels["values"], nan=-np.inf)
    clearly_better = values.max(axis=1) - values[rows, own] > margin
    return np.where(clearly_better, labels["action"].astype(np.int64), own)


def held_out(games: np.ndarray, fraction: float) -> np.ndarray:
    """bool[N]: the labels of the held-out games: `fraction` of the games, by a fixed hash of
    the game's index (Knuth's multiplicative one), so every labels folder holds out the same games."""
    return (games.astype(np.uint64) * np.uint64(2654435761)) % np.uint64(1000) < round(fraction * 1000)


FIT_FILES = ("policy.safetensors", "policy.json", "fit.json")
"""What a fit writes in its folder (`fit`'s --out)."""


def check_out_folder(out: Path, names: Sequence[str], overwrite: bool, what: str = "--out") -> None:
    """An output folder, before any work: one to be made (in a folder that exists), or one where
    each of `names` is new or replaced only with `overwrite` (`files.check_new_file`, the
    one rule of every command for its outputs); a one-line ValueError otherwise. Other files in
    it are left alone."""
    if out.exists() and not out.is_dir():
        raise ValueError(f"{what} {files.short_path(out)} is a file; give a folder")
    if not out.is_dir():
        files.check_writable(out, f"{what} folder")
    for name in names if out.is_dir() else ():
        files.check_new_file(out / name, overwrite, f"{what} file")


def check_out_apart(out: Path, labels: Sequence[str | Path], what: str = "--out") -> None:
    """A one-line ValueError when the output folder `out` is one of the `labels` folders or
    inside one: its files would land among the labels, which a labels folder holds alone (its
    manifest and shards). An output folder holding a labels folder is allowed: nothing is
    written into the labels (`distill rounds` fits round k's policy into OUT/round-K beside
    its labels in OUT/round-K/labels)."""
    target = out.resolve()
    for folder in labels:
        source = Path(folder).resolve()
        if target == source or source in target.parents:
            where = "is" if target == source else "is inside"
            raise ValueError(f"{what} {out} {where} the --labels folder {folder}, which holds its labels alone; "
                             f"give an {what} folder outside it")


def check_held_out(labels: dict[str, np.ndarray], options: FitOptions) -> None:
    """A one-line ValueError when every label is of a held-out game (nothing to fit to): checked
    before any work (a few labels of game 0, which is held out, say)."""
    if held_out(labels["game"], options.holdout).all():
        raise ValueError(f"all {labels['game'].size:,} labels are of held-out games (--holdout {options.holdout}): "
                         f"make labels of more games, use more of them, or lower --holdout")


def fitted_metadata(init_metadata: dict, rules: Rules, command: str, made: dict) -> dict:
    """policy.json's metadata of a policy fitted to labels (`distill fit`, a round of `distill
    rounds`): the rules, the packages of this fit (not the starting policy's), and under
    `training` the fit's command, the commands that make its labels and `made` (what the fit
    read and did) with `lineage`: the training records of the policy it started from, of the one
    that one started from, and so on, newest first (a flat list however many rounds), so that
    the commands back to the first policy are all in the file."""
    from .export import package_versions

    start = dict(init_metadata.get("training") or {})
    lineage = []
    if start:
        earlier = dict(start.get("distilled") or {})
        lineage = [start, *earlier.pop("lineage", [])]
        if "distilled" in start:
            start["distilled"] = earlier
    return {"rules": rules.to_dict(), "packages": package_versions(),
            "training": {"command": command, "labels_made_by": made["label_commands"],
                         "distilled": {**made, "lineage": lineage}}}


def fit_policy(network, labels: dict[str, np.ndarray], options: FitOptions,
               on_epoch: Callable[[dict[str, float]], None] = lambda row: None) -> list[dict[str, float]]:
    """Fit `network` (a `PolicyNetwork`) to the
    labels in place; returns one row per epoch: training loss, held-out cross-entropy and
    agreement with the teacher's choice (before the first epoch too, as epoch 0: its training
    loss is the starting network's on the training labels). Without held-out labels (`holdout`
    0) the held-out numbers are None."""
    import torch

    options.check()
    check_held_out(labels, options)
    test = held_out(labels["game"], options.holdout)
    train = np.flatnonzero(~test)
    observations = torch.from_numpy(labels["observation"])
    legal = torch.from_numpy(labels["legal"])
    teacher = labels["action"].astype(np.int64)
    if options.margin > 0:
        teacher = kept_or_corrected(network, labels, options.margin)
    target = torch.from_numpy(target_distribution(labels["values"], labels["legal"], teacher, options.temperature))
    value = torch.from_numpy(labels["value"].astype(np.float32))
    network.requires_grad_(True)  # a loaded policy is frozen for playing (policy_file.PolicyNetwork)
    optimizer = torch.optim.Adam(network.parameters(), lr=options.learning_rate)
    steps = options.epochs * math.ceil(train.size / options.batch_size)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: max(0.0, 1.0 - step / steps))
    generator = np.random.default_rng(options.seed)
    best = _best_actions(labels["values"])
    batches = math.ceil(train.size / options.batch_size)

    def loss_of(batch: np.ndarray):
        rows = torch.from_numpy(batch)
        logits = network.action_logits(observations[rows]).masked_fill(~legal[rows], -1e8)
        loss = -(target[rows] * torch.log_softmax(logits, dim=1)).sum(dim=1).mean()
        if options.value_weight > 0:
            loss = loss + options.value_weight * ((network.values(observations[rows]).squeeze(1) - value[rows]) ** 2).mean()
        return loss

    with torch.no_grad():  # epoch 0: the starting network's loss, a mean over batches as the epochs' are
        start = float(np.mean([loss_of(batch).item() for batch in np.array_split(train, batches)]))
    history = [_measure(network, observations, legal, target, best, np.flatnonzero(test), 0, start)]
    on_epoch(history[-1])
    for epoch in range(1, options.epochs + 1):
        network.train()
        losses = []
        for batch in np.array_split(generator.permutation(train), batches):
            loss = loss_of(batch)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
            losses.append(loss.item())
        history.append(_measure(network, observations, legal, target, best, np.flatnonzero(test), epoch,
                                float(np.mean(losses))))
        on_epoch(history[-1])
    network.eval()
    network.requires_grad_(False)
    return history


def _best_actions(values: np.ndarray) -> np.ndarray:
    """bool[N, 58]: the actions of the teacher's best value in each position (its choice and the
    cards equivalent to it, R16, which have the same value)."""
    finite = np.nan_to_num(values, nan=-np.inf)
    return finite >= finite.max(axis=1, keepdims=True)


def _measure(network, observations, legal, target, best: np.ndarray, rows: np.ndarray, epoch: int,
             train_loss: float) -> dict[str, float]:
    """The held-out cross-entropy to the targets, and the agreement with the teacher: how often
    the policy's most likely action is one of the teacher's best value (`best`)."""
    import torch

    if rows.size == 0:  # --holdout 0: nothing to measure (None: fit.json is JSON, which has no NaN)
        return {"epoch": epoch, "train_loss": train_loss, "holdout_cross_entropy": None, "holdout_agreement": None}
    with torch.no_grad():
        index = torch.from_numpy(rows)
        logits = network.action_logits(observations[index]).masked_fill(~legal[index], -1e8)
        cross_entropy = float(-(target[index] * torch.log_softmax(logits, dim=1)).sum(dim=1).mean())
        agreement = float(best[rows, logits.argmax(dim=1).numpy()].mean())
    return {"epoch": epoch, "train_loss": train_loss, "holdout_cross_entropy": cross_entropy,
            "holdout_agreement": agreement}


# ============================================================================ strength against label count

CURVE_FILE = "curve.json"
CURVE_PLOT = "curve.png"
CURVE_SEED = 100_000
"""The deals a curve is measured on (evaluate's `--seed`): neither the labels' default seed nor
evaluate's, train's or ship's."""
CURVE_BYTES, CURVE_DEPTH = 16 * 2**20, 8
"""The largest `curve.json` (or point's `policy.json`) read (a point takes about 1 KB) and
its deepest nesting (it has 5)."""


@dataclasses.dataclass(frozen=True)
class CurvePlan:
    """A curve of a fitted policy's strength against the number of labels it was fitted to
    (`sergeant-major distill curve`): at each count, the first `count` labels of `labels`
    fit `init` with `fit`, then the result plays two duplicate tables on the deals of `seed`:
    head to head `X,against,heuristic` and `X,heuristic,heuristic`."""

    labels: tuple[str, ...]
    counts: tuple[int, ...]
    init: str = "learned"
    against: str = "learned"
    games: int = 600
    seed: int = CURVE_SEED
    fit: FitOptions = FitOptions()

    def tables(self) -> dict[str, tuple[str, str]]:
        """{name: the two other seats}: the tables every point plays."""
        return {"head_to_head": (self.against, "heuristic"), "vs_heuristic": ("heuristic", "heuristic")}

    def fit_command(self, folder: Path, size: int) -> str:
        """The `sergeant-major distill fit` command that makes the point's fit of `size` labels in `folder`."""
        words = ["sergeant-major", "distill", "fit", "--labels", *self.labels, "--init", self.init, "--out",
                 str(folder), "--limit", str(size)]
        for field in dataclasses.fields(FitOptions):
            value = getattr(self.fit, field.name)
            if value != getattr(FitOptions(), field.name):
                words += ["--" + field.name.replace("_", "-"), str(value)]
        return shlex.join(words)

    def to_dict(self) -> dict[str, Any]:
        return {"labels": list(self.labels), "init": self.init, "against": self.against, "games": self.games,
                "seed": self.seed, "fit": dataclasses.asdict(self.fit)}


def point_folder(out: Path, count: int) -> Path:
    return out / f"labels_{count}"


def read_curve(out: Path, plan: CurvePlan) -> list[dict[str, Any]]:
    """The points already measured in `out` (none for a new folder); a one-line ValueError when
    they were measured with other options than `plan` (other labels, init, tables or fit)."""
    path = out / CURVE_FILE
    if not path.exists() and not path.is_symlink():
        return []
    data = files.read_json(path, CURVE_BYTES, CURVE_DEPTH, what="curve file")
    try:
        earlier, points = data["plan"], data["points"]
        if not isinstance(earlier, dict) or not all(isinstance(point["labels"], int) for point in points):
            raise ValueError("its plan or points are not those of a curve")
    except (ValueError, KeyError, TypeError) as error:
        raise ValueError(f"{files.short_path(path)} is not a curve this package can continue: "
                         f"{_reason(error)}") from None
    if earlier != plan.to_dict():
        differ = sorted(key for key, value in plan.to_dict().items() if earlier.get(key) != value)
        raise ValueError(f"{out} holds a curve measured with other options ({', '.join(differ)}); use the same "
                         f"options to continue it, or another --out")
    return points


def missing_counts(plan: CurvePlan, points: list[dict[str, Any]]) -> list[int]:
    """The label counts of `plan` not measured among `points`, smallest first."""
    return [count for count in sorted(set(plan.counts)) if count not in {point["labels"] for point in points}]


def curve_labels(plan: CurvePlan, missing: list[int]) -> dict[str, np.ndarray]:
    """The labels the `missing` points are fitted to (the first `max(missing)`), read and
    checked by `load_labels`; a one-line ValueError when there are fewer, or when a
    point's labels are all of held-out games. Checked before any fit."""
    labels = load_labels(plan.labels, max(missing) or 1)
    if max(missing) > labels["action"].size:
        raise ValueError(f"{', '.join(plan.labels)} hold {labels['action'].size:,} labels, fewer than the "
                         f"{max(missing):,} asked for: make more labels, or ask for fewer")
    for size in missing:
        if size > 0:
            check_held_out({"game": labels["game"][:size]}, plan.fit)
    return labels


def check_curve_out(out: Path, plan: CurvePlan, points: list[dict[str, Any]], overwrite: bool) -> None:
    """The one rule for existing outputs, for a curve (before any work): the folder apart from the
    labels (`check_out_apart`), and each file the curve will
    write (curve.json, curve.png, each missing point's policy files) is new, or replaced only
    with `overwrite` (`files.check_new_file`), except the curve's own: curve.json and
    curve.png of this same curve (`points`: it continues), and a point's policy that this
    curve fitted but had not yet measured when it was stopped (its policy.json records this
    curve's fit command for it). A one-line ValueError otherwise."""
    check_out_apart(out, plan.labels)
    continued = (out / CURVE_FILE).exists()  # read_curve has checked it is this curve's
    check_out_folder(out, (CURVE_FILE, CURVE_PLOT), overwrite or continued)
    if out.is_dir():
        for size in missing_counts(plan, points):
            folder = point_folder(out, size)
            check_out_folder(folder, FIT_FILES[:2], overwrite or _own_point(folder, plan, size), "the point folder")


def _own_point(folder: Path, plan: CurvePlan, size: int) -> bool:
    """Whether `folder` holds the policy this curve fits for `size` labels (a point stopped
    before it was measured): its policy.json records the fit command of that point."""
    try:
        metadata = files.read_json(folder / "policy.json", CURVE_BYTES, CURVE_DEPTH, what="policy description")
        return metadata["training"]["command"] == plan.fit_command(folder, size)
    except (ValueError, KeyError, TypeError):
        return False


def measure_policy(folder: Path, plan: CurvePlan, rules: Rules, workers: int | None, progress: bool) -> dict[str, Any]:
    """The fitted policy in `folder` at each of the plan's tables (`measure_tables`)."""
    return measure_tables(folder, plan.tables(), plan.games, plan.seed, rules, workers, progress)


def measure_tables(folder: Path, tables: dict[str, tuple[str, str]], games: int, seed: int, rules: Rules,
                   workers: int | None, progress: bool) -> dict[str, Any]:
    """The policy in `folder` at each of `tables` ({name: the other two seats}; the one named
    `head_to_head` also gives the margin over its seat 2 agent) on the duplicate deals of
    `seed`: its mean points per game and 95% interval, and the evaluate command that gives
    the same numbers."""
    from sergeant_major_env.evaluation import TablePlan, play_tables

    measured = {}
    for name, (left, right) in tables.items():
        table = [make_agent(f"ppo:{folder}"), make_agent(left), make_agent(right)]
        table_names = ["fitted", f"{left} (seat 2)", f"{right} (seat 3)"]
        table_plan = TablePlan(games=games, seed=seed, rules=rules, progress=progress, workers=workers)
        result = play_tables(table, table_plan, names=table_names)
        stats = result.agent("fitted")
        measured[name] = {"mean_points": stats.mean_points, "ci95": stats.ci95, "games": result.games,
                          "command": shlex.join(["sergeant-major", "evaluate", "--agents", f"ppo:{folder},{left},{right}",
                                                 "--games", str(result.games), "--seed", str(seed),
                                                 *rule_words(rules)])}
        if name == "head_to_head":  # the margin over the seat 2 agent: points(fitted) - points(it), per game
            pair = next(entry for entry in result.head_to_head if {entry.a, entry.b} == {"fitted", table_names[1]})
            sign = 1 if pair.a == "fitted" else -1
            measured[name].update(margin=sign * pair.margin, margin_ci95=None if pair.ci95 is None else sorted(
                sign * bound for bound in pair.ci95), ahead=pair.a_ahead if sign > 0 else 1 - pair.a_ahead)
    return measured


def label_curve(plan: CurvePlan, out: Path, rules: Rules, workers: int | None = None, progress: bool = False,
                on_point: Callable[[dict[str, Any]], None] = lambda point: None,
                labels: dict[str, np.ndarray] | None = None) -> list[dict[str, Any]]:
    """Measure the points of `plan` still missing in `out` (see `CurvePlan`), each
    fitted policy kept in `out/labels_COUNT`, and `curve.json` rewritten after every point
    (so a stopped curve continues where it stopped). Returns all the points, by label count.
    `labels`: `curve_labels` of the missing points, when the caller has checked them
    already (`sergeant-major distill curve` does, with its outputs, before any work)."""
    from sergeant_major_env.agents.learned import policy_source
    from sergeant_major_env.agents.policy_file import load_policy, save_network

    points = read_curve(out, plan)
    missing = missing_counts(plan, points)
    if not missing:
        return points
    if labels is None:
        labels = curve_labels(plan, missing)
    init = policy_source(plan.init)
    for size in missing:
        network, metadata = load_policy(init)
        history = fit_policy(network, {name: array[:size] for name, array in labels.items()}, plan.fit) \
            if size > 0 else []
        folder = point_folder(out, size)
        folder.mkdir(parents=True, exist_ok=True)
        save_network(network, folder, metadata["network"], {"rules": rules.to_dict(), "training": {
            "command": plan.fit_command(folder, size), "distilled": {"from": plan.init, "label_count": size,
                                                                     "options": dataclasses.asdict(plan.fit)}}})
        point = {"labels": size, "holdout_agreement": history[-1]["holdout_agreement"] if history else None,
                 **measure_policy(folder, plan, rules, workers, progress)}
        points = sorted(points + [point], key=lambda row: row["labels"])
        files.write_json(out / CURVE_FILE, {"plan": plan.to_dict(), "points": points})
        on_point(point)
    return points


def plot_label_curve(points: list[dict[str, Any]], plan: CurvePlan, path: Path) -> None:
    """curve.png: each table's mean points of the fitted policy against the label count, with 95% bands."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 4.2))
    x = np.array([point["labels"] for point in points]) / 1000
    for (name, (left, right)), color in zip(plan.tables().items(), ("tab:blue", "tab:red")):
        mean_key, ci_key, label = ("margin", "margin_ci95", f"head to head: margin over {left} (X,{left},{right})") \
            if name == "head_to_head" else ("mean_points", "ci95", f"mean points at X,{left},{right}")
        mean = np.array([point[name][mean_key] for point in points])
        low = np.array([(point[name][ci_key] or [m, m])[0] for point, m in zip(points, mean)])
        high = np.array([(point[name][ci_key] or [m, m])[1] for point, m in zip(points, mean)])
        axes.plot(x, mean, "o-", color=color, label=label)
        axes.fill_between(x, low, high, color=color, alpha=0.2)
    axes.axhline(0, color="black", linewidth=0.8)
    axes.set_xlabel("labels fitted to (thousands)")
    axes.set_ylabel("points per game of the fitted policy X (95% CI)")
    axes.set_title(f"Distilled from {plan.init}: {plan.games} games per table, deals of seed {plan.seed}")
    axes.legend()
    figure.tight_layout()
    with files.atomic_write(path, "wb") as file:
        figure.savefig(file, format="png", dpi=120)
    plt.close(figure)
