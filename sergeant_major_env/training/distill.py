"""Distilling the search into the policy: labels from a search bot, and a policy fitted to them.

**Labels** (:func:`make_labels`, ``sergeant-major distill labels``). Games are played by the
``player`` (by default ``learned``: the positions the policy itself meets) in all three seats,
game g of the run from the engine seed ``seed + g``, with a chance ``epsilon`` of a random legal
move instead (more varied positions). At every decision with a real choice (two or more
distinct legal actions: cards equivalent by R16 count once, as in the search), the ``teacher``
(a ``pimc`` spec) gives its value of each legal action for the seat to act
(:meth:`~sergeant_major_env.agents.pimc.PIMCAgent.decision_values`: the mean points of the deal
over worlds sampled from what that seat knows, plus the value of the modes kept for later
deals at a mode choice). Equivalent cards get their representative's value. One label:

==============  ===============  ===========================================================
array           dtype, shape     meaning
==============  ===============  ===========================================================
observation     float32 [N, D]   the seat's observation (:func:`observation.observe`)
legal           bool [N, 58]     its legal actions (RULES.md section 10)
values          float32 [N, 58]  the teacher's value of each legal action (NaN elsewhere)
action          int16 [N]        the teacher's choice (its highest value)
value           float32 [N]      the position's value: the teacher's value of its choice
game            int32 [N]        the game's index in the run (its seed is ``seed + game``)
seat            int8 [N]         the seat to act
==============  ===============  ===========================================================

The labels are written in shards of ``shard_games`` games (``shard_00000.npz``, ...: plain
numpy arrays, read with ``np.load(allow_pickle=False)``, never code), each written whole to a
temporary name and renamed, beside ``labels.json`` (the options they were made with). A
shard's games and labels depend on the options and the shard's index alone: the teacher's
worlds are drawn from the seat's knowledge and its own seed (pimc's "Randomness"), the player
is deterministic or draws from a generator seeded by the run's seed and the shard. So the
shards are the same whichever worker process made them (``workers``), and a run stopped by
Ctrl-C or a crash resumes with the shards still missing: the same command again. Asking for
more ``games`` later adds shards to the same labels.

**Fit** (:func:`fit_policy`, ``sergeant-major distill fit``). The policy network of a policy
file (by default the shipped ``learned``) is fitted to the labels: cross-entropy of its
masked action distribution to the softmax of the teacher's values over the legal actions at
``temperature`` points (or to the teacher's choice alone, ``temperature`` 0), and its value
head to the position's value (weight ``value_weight``), with Adam over ``epochs`` passes. A
tenth of the games (by game index) is held out to report the agreement with the teacher's
choice (the policy's most likely action is one of the teacher's best value). The result is a policy file (``policy.safetensors`` + ``policy.json``, code-free, with
the observation version and how it was made), played as ``ppo:OUT``.
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
import shlex
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from sergeant_major_env import engine, files
from sergeant_major_env.agents import make_agent
from sergeant_major_env.agents.pimc import PIMCAgent, choices
from sergeant_major_env.cards import NUM_ACTIONS, NUM_CARDS, bits_to_bool, count, random_member
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


# ============================================================================ the plan

@dataclasses.dataclass(frozen=True)
class LabelPlan:
    """What a labels folder holds: every option that changes a label (``labels.json``)."""

    teacher: str = "pimc:rollout=learned"
    """The search bot that values the actions: a ``pimc`` spec (pimc:worlds=32:rollout=learned)."""
    player: str = "learned"
    """The agent that plays the games in all three seats: whose positions are labelled."""
    epsilon: float = 0.0
    """Chance of a uniformly random legal move instead of the player's, at each decision."""
    games: int = 600
    """Games to play and label (game g from engine seed ``seed + g``)."""
    shard_games: int = 20
    """Games per shard: the unit of work of a worker process and of resuming."""
    seed: int = 2_000_000_000
    """The first game's engine seed; also seeds the player's randomness and epsilon's. Far from
    the seeds evaluations play (evaluate's 0, train's and ship's 1,000,000): a policy fitted to
    labels of some deals must be measured on other deals, or it is measured on what it learnt by heart."""
    rules: Rules = Rules()
    """The rule options of the games (RULES.md section 9)."""

    def check(self) -> "LabelPlan":
        """This plan, or a one-line ValueError naming the option that is out of range."""
        if not isinstance(self.games, int) or not 1 <= self.games <= MAX_GAMES:
            raise ValueError(f"games must be an integer in 1..{MAX_GAMES:,}, got {self.games!r}")
        if not isinstance(self.shard_games, int) or not 1 <= self.shard_games <= 10_000:
            raise ValueError(f"shard games must be an integer in 1..10000, got {self.shard_games!r}")
        if not (isinstance(self.epsilon, float) and 0.0 <= self.epsilon <= 1.0):
            raise ValueError(f"epsilon must be a number in [0, 1], got {self.epsilon!r}")
        check_seed_span(self.seed, self.games)
        return self

    @property
    def shards(self) -> int:
        return math.ceil(self.games / self.shard_games)

    def to_dict(self) -> dict[str, Any]:
        return {"teacher": self.teacher, "player": self.player, "epsilon": self.epsilon, "games": self.games,
                "shard_games": self.shard_games, "seed": self.seed, "rules": self.rules.to_dict()}

    def command(self, folder: str | Path) -> str:
        """The ``sergeant-major distill labels`` command that makes (or continues) these labels in ``folder``."""
        words = ["sergeant-major", "distill", "labels", "--out", str(folder), "--games", str(self.games),
                 "--seed", str(self.seed)]
        defaults = LabelPlan()
        for name in ("teacher", "player", "epsilon", "shard_games"):
            if getattr(self, name) != getattr(defaults, name):
                words += ["--" + name.replace("_", "-"), str(getattr(self, name))]
        changed = [f"{name}={str(value).lower() if isinstance(value, bool) else value}"
                   for name, value in self.rules.to_dict().items() if value != getattr(Rules(), name)]
        return shlex.join(words + (["--option", *changed] if changed else []))

    def same_labels_as(self, other: "LabelPlan") -> bool:
        """Whether the shards both would write are the same (``games`` may differ: more shards)."""
        return dataclasses.replace(self, games=other.games) == other


def shard_path(folder: Path, shard: int) -> Path:
    return folder / f"shard_{shard:05d}.npz"


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
    """The labels of shard ``shard`` (games ``shard * shard_games`` on), as the module docstring's
    arrays; ``on_labels(n)`` is told each time n more labels are made."""
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
    """The labels of ``games`` (each with a real choice): the teacher's values of all legal actions."""
    searched = teacher.decision_values(state, games, real, teacher.streams(state, games))
    legal_mask = bits_to_bool(legal, NUM_ACTIONS)
    values = equivalent_card_values(searched, legal_mask)
    action = searched.argmax(axis=1)
    return {"observation": observe(state.take(games), state.to_act[games]), "legal": legal_mask,
            "values": np.where(legal_mask, values, np.nan), "action": action,
            "value": searched[np.arange(games.size), action], "game": games.astype(np.int32),
            "seat": state.to_act[games]}


def equivalent_card_values(values: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """``values`` (float[G, 58], -inf where not searched) with each legal card that was not
    searched given the value of the searched card below it in its suit: by R16 it is equivalent
    to that card (:func:`~sergeant_major_env.agents.pimc.distinct_cards`: a skipped card is
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


def read_shard(path: Path) -> dict[str, np.ndarray]:
    """A shard's arrays (nothing unpickled); a one-line ValueError for a file that is not one."""
    try:
        with np.load(path, allow_pickle=False) as data:
            labels = {name: data[name] for name in ARRAYS}
    except (OSError, ValueError, KeyError, EOFError) as error:
        raise ValueError(f"{path} is not a labels shard ({error})") from None
    rows = {array.shape[0] for array in labels.values()}
    if len(rows) != 1 or labels["observation"].shape[1:] != (OBSERVATION_SIZE,) or any(
            labels[name].dtype != dtype for name, dtype in ARRAYS.items()):
        raise ValueError(f"{path} is not a labels shard of this observation layout (version {OBSERVATION_VERSION})")
    return labels


# ============================================================================ a labels folder

def read_manifest(folder: Path) -> LabelPlan | None:
    """The plan of an existing labels folder (None if it has none yet)."""
    path = folder / MANIFEST
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != FORMAT or data.get("format_version") != FORMAT_VERSION:
            raise ValueError(f"format {data.get('format')!r} version {data.get('format_version')!r}")
        if data.get("observation_version") != OBSERVATION_VERSION:
            raise ValueError(f"observation version {data.get('observation_version')!r}, this package's is "
                             f"{OBSERVATION_VERSION}")
        plan = data["plan"]
        return LabelPlan(**{**plan, "rules": Rules.from_dict(plan["rules"])}).check()
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise ValueError(f"{path} is not a labels manifest this package can continue: {error}") from None


def open_labels(folder: Path, plan: LabelPlan) -> list[int]:
    """Prepare ``folder`` for ``plan`` and return the shards still to make. A folder made with
    other options is refused (one line); the same options (``games`` may grow) resume it."""
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
    for stale in folder.glob("*.tmp*"):  # a temporary file of a run that was killed
        stale.unlink()
    return [shard for shard in range(plan.shards) if not shard_path(folder, shard).exists()]


def make_labels(folder: str | Path, plan: LabelPlan, workers: int = 1,
                on_labels: Callable[[int], None] = lambda count: None) -> dict[str, Any]:
    """Make the missing shards of ``folder`` (see the module docstring) in ``workers`` processes.
    Returns {"shards": made now, "labels": made now, "seconds": wall time}."""
    folder = Path(folder)
    plan.check()
    teacher, player = build_agents(plan)
    missing = open_labels(folder, plan)
    start = time.perf_counter()

    def one_shard(shard: int, report: Callable[[int], None]) -> int:
        labels = shard_labels(plan, shard, teacher, player, report)
        write_shard(shard_path(folder, shard), labels)
        return int(labels["action"].size)

    made = run_jobs(one_shard, missing, workers, on_deals=on_labels)
    return {"shards": len(missing), "labels": int(sum(made)), "seconds": time.perf_counter() - start}


def games_made(folder: Path, plan: LabelPlan) -> int:
    """The games of the shards of ``folder`` made so far without a gap from the first (the
    ``--games`` that would give exactly these labels)."""
    shards = 0
    while shards < plan.shards and shard_path(folder, shards).exists():
        shards += 1
    return min(plan.games, shards * plan.shard_games)


def read_plans(folders: Sequence[str | Path]) -> list[LabelPlan]:
    """The plans of labels folders that can be fitted together; a one-line ValueError for a
    folder that is not a labels folder or folders made under different rule options."""
    plans = [read_manifest(Path(folder)) for folder in folders]
    if None in plans:
        raise ValueError(f"{folders[plans.index(None)]} holds no {MANIFEST}: not a labels folder")
    if len({plan.rules for plan in plans}) > 1:
        raise ValueError("the --labels folders were made under different rule options: fit to one rule set")
    return plans


def load_labels(folders: Sequence[str | Path], limit: int | None = None) -> dict[str, np.ndarray]:
    """The labels of every shard of ``folders`` in order (at most ``limit`` labels), as one set of arrays."""
    parts: list[dict[str, np.ndarray]] = []
    total = 0
    for folder in map(Path, folders):
        plan = read_manifest(folder)
        if plan is None:
            raise ValueError(f"{folder} holds no {MANIFEST}: not a labels folder")
        for shard in range(plan.shards):
            path = shard_path(folder, shard)
            if not path.exists():
                continue
            part = read_shard(path)
            parts.append(part)
            total += part["action"].size
            if limit is not None and total >= limit:
                break
        if limit is not None and total >= limit:
            break
    if not parts:
        raise ValueError(f"no labels in {', '.join(map(str, folders))}: make them with sergeant-major distill labels")
    labels = {name: np.concatenate([part[name] for part in parts]) for name in ARRAYS}
    return {name: array[:limit] for name, array in labels.items()} if limit is not None else labels


# ============================================================================ the fit

@dataclasses.dataclass(frozen=True)
class FitOptions:
    """How a policy is fitted to labels (``sergeant-major distill fit``)."""

    epochs: int = 10
    """Passes over the labels."""
    batch_size: int = 256
    """Labels per gradient step."""
    learning_rate: float = 3e-4
    """Adam's learning rate (annealed linearly to zero over the fit)."""
    temperature: float = 0.0
    """Points per unit of logit of the target distribution (softmax of the teacher's values over
    the legal actions); 0: the teacher's choice alone (one-hot)."""
    margin: float = 0.5
    """Points by which the teacher's best value must beat that of the starting policy's own
    choice for the label to teach the teacher's choice; below it the target is the policy's own
    choice (keep what the policy does unless the search is clearly better). 0: always the teacher's
    (measured worse: the teacher's choice among near-equal actions is mostly its sampling noise)."""
    value_weight: float = 0.0
    """Weight of the value head's squared error to the position's value (0: the value head is left
    as it is; nothing that plays the policy reads it, only a PPO fine-tune would)."""
    holdout: float = 0.1
    """Fraction of the games (by game index) held out to measure the agreement with the teacher."""
    seed: int = 0
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
    legal actions at ``temperature`` points per logit, or the teacher's choice (``temperature`` 0)."""
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
    most likely action by more than ``margin`` points, else the policy's own action."""
    import torch

    with torch.no_grad():
        logits = network.action_logits(torch.from_numpy(labels["observation"]))
        own = logits.masked_fill(~torch.from_numpy(labels["legal"]), -1e8).argmax(dim=1).numpy()
    rows = np.arange(own.size)
    values = np.nan_to_num(labels["values"], nan=-np.inf)
    clearly_better = values.max(axis=1) - values[rows, own] > margin
    return np.where(clearly_better, labels["action"].astype(np.int64), own)


def held_out(games: np.ndarray, fraction: float) -> np.ndarray:
    """bool[N]: the labels of the held-out games: ``fraction`` of the games, by a fixed hash of
    the game's index (Knuth's multiplicative one), so every labels folder holds out the same games."""
    return (games.astype(np.uint64) * np.uint64(2654435761)) % np.uint64(1000) < round(fraction * 1000)


def fit_policy(network, labels: dict[str, np.ndarray], options: FitOptions,
               on_epoch: Callable[[dict[str, float]], None] = lambda row: None) -> list[dict[str, float]]:
    """Fit ``network`` (a :class:`~sergeant_major_env.agents.policy_file.PolicyNetwork`) to the
    labels in place; returns one row per epoch: training loss, held-out cross-entropy and
    agreement with the teacher's choice (before the first epoch too, as epoch 0)."""
    import torch

    options.check()
    test = held_out(labels["game"], options.holdout)
    train = np.flatnonzero(~test)
    if train.size == 0:
        raise ValueError("every label is held out: make labels of more games, or lower --holdout")
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
    history = [_measure(network, observations, legal, target, best, np.flatnonzero(test), 0, float("nan"))]
    on_epoch(history[-1])
    for epoch in range(1, options.epochs + 1):
        network.train()
        losses = []
        for batch in np.array_split(generator.permutation(train), math.ceil(train.size / options.batch_size)):
            rows = torch.from_numpy(batch)
            logits = network.action_logits(observations[rows]).masked_fill(~legal[rows], -1e8)
            loss = -(target[rows] * torch.log_softmax(logits, dim=1)).sum(dim=1).mean()
            if options.value_weight > 0:
                loss = loss + options.value_weight * ((network.values(observations[rows]).squeeze(1) - value[rows]) ** 2).mean()
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
    the policy's most likely action is one of the teacher's best value (``best``)."""
    import torch

    if rows.size == 0:
        return {"epoch": epoch, "train_loss": train_loss, "holdout_cross_entropy": float("nan"),
                "holdout_agreement": float("nan")}
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
"""The deals a curve is measured on (evaluate's ``--seed``): neither the labels' default seed nor
evaluate's, train's or ship's."""


@dataclasses.dataclass(frozen=True)
class CurvePlan:
    """A curve of a fitted policy's strength against the number of labels it was fitted to
    (``sergeant-major distill curve``): at each count, the first ``count`` labels of ``labels``
    fit ``init`` with ``fit``, then the result plays two duplicate tables on the deals of ``seed``:
    head to head ``X,against,heuristic`` and ``X,heuristic,heuristic``."""

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
        """The ``sergeant-major distill fit`` command that makes the point's fit of ``size`` labels in ``folder``."""
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
    """The points already measured in ``out`` (none for a new folder); a one-line ValueError when
    they were measured with other options than ``plan`` (other labels, init, tables or fit)."""
    path = out / CURVE_FILE
    if not path.exists():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        earlier, points = data["plan"], data["points"]
    except (ValueError, KeyError, TypeError) as error:
        raise ValueError(f"{path} is not a curve this package can continue: {error}") from None
    if earlier != plan.to_dict():
        differ = sorted(key for key, value in plan.to_dict().items() if earlier.get(key) != value)
        raise ValueError(f"{out} holds a curve measured with other options ({', '.join(differ)}); use the same "
                         f"options to continue it, or another --out")
    return points


def measure_policy(folder: Path, plan: CurvePlan, rules: Rules, workers: int | None, progress: bool) -> dict[str, Any]:
    """The fitted policy in ``folder`` at each of the plan's tables: its mean points per game and
    95% interval, and the evaluate command that gives the same numbers."""
    from sergeant_major_env.evaluation import play_tables

    measured = {}
    for name, (left, right) in plan.tables().items():
        table = [make_agent(f"ppo:{folder}"), make_agent(left), make_agent(right)]
        table_names = ["fitted", f"{left} (seat 2)", f"{right} (seat 3)"]
        result = play_tables(table, games=plan.games, seed=plan.seed, rules=rules, progress=progress,
                             names=table_names, workers=workers)
        stats = result.agent("fitted")
        measured[name] = {"mean_points": stats.mean_points, "ci95": stats.ci95, "games": result.games,
                          "command": f"sergeant-major evaluate --agents ppo:{folder},{left},{right} "
                                     f"--games {result.games} --seed {plan.seed}"}
        if name == "head_to_head":  # the margin over the seat 2 agent: points(fitted) - points(it), per game
            pair = next(entry for entry in result.head_to_head if {entry.a, entry.b} == {"fitted", table_names[1]})
            sign = 1 if pair.a == "fitted" else -1
            measured[name].update(margin=sign * pair.margin, margin_ci95=None if pair.ci95 is None else sorted(
                sign * bound for bound in pair.ci95), ahead=pair.a_ahead if sign > 0 else 1 - pair.a_ahead)
    return measured


def label_curve(plan: CurvePlan, out: Path, rules: Rules, workers: int | None = None, progress: bool = False,
                on_point: Callable[[dict[str, Any]], None] = lambda point: None) -> list[dict[str, Any]]:
    """Measure the points of ``plan`` still missing in ``out`` (see :class:`CurvePlan`), each
    fitted policy kept in ``out/labels_COUNT``, and ``curve.json`` rewritten after every point
    (so a stopped curve continues where it stopped). Returns all the points, by label count."""
    from sergeant_major_env.agents.learned import policy_source
    from sergeant_major_env.agents.policy_file import load_policy, save_network

    points = read_curve(out, plan)
    missing = [count for count in sorted(set(plan.counts)) if count not in {point["labels"] for point in points}]
    if not missing:
        return points
    labels = load_labels(plan.labels, max(missing) or 1)
    if max(missing) > labels["action"].size:
        raise ValueError(f"{', '.join(plan.labels)} hold {labels['action'].size:,} labels, fewer than the "
                         f"{max(missing):,} asked for: make more labels, or ask for fewer")
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
