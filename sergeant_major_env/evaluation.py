"""Tournaments between agents: duplicate deals, batched play (on this machine's cores or on Ray).

```python
from sergeant_major_env.agents import make_agent
from sergeant_major_env.evaluation import TablePlan, play_tables
result = play_tables("heuristic,greedy,random", TablePlan(games=1200, seed=0), make_agent=make_agent)
print(result.format_text())
result.to_json("eval.json")
```

[`play_tables`][] is the one entry point (`evaluate.py` is its command line; training
calls it for periodic evaluation). Who plays is its arguments (the agents, their display
names, the resolver of their names); how they play is one [`TablePlan`][] (the games,
seeds, seatings, rules, records, batches, workers or Ray), checked when it is made. Agents are objects with the batched interface of
[`sergeant_major_env.policies`][] (`act(observations, legal_mask, rng) -> int64[B]`) or
names, which the caller's resolver `make_agent` turns into agents
(`sergeant_major_env.agents.make_agent` for the project's agents). This core module never
imports [`sergeant_major_env.agents`][]: the commands that know it (evaluate, train) pass its
resolver in.

It reads in three steps: [`plan_tournament`][] checks the agents and makes the schedule
(a [`Tournament`][]: the plan, the agents and every game), [`run_tournament`][] plays its chunks (here, in worker processes or
on Ray) and [`summarize_tournament`][] turns the scores into the result.

**Duplicate deals** (`seatings="duplicate"`, the default). Games come in *groups* of six:
group j uses the engine's per-game seed `seed + j` for all six permutations of the three
agents over seats 0-2. The engine's cards depend only on a game's seed and the deal's index
([`engine`][]), so all six games of a group are dealt exactly the same
cards, deal by deal, as long as the same deal is being played; what differs is who holds
them. This cancels most of the luck of the cards in comparisons. `games` is rounded up to
a multiple of six. `seatings="fixed"` plays the agents in the order given, game i with seed
`seed + i` (each game is then its own group).

**More than three agents**: every 3-agent combination plays a table of `games` games (a
round robin); all tables use the same seeds, so they see the same deals too. Per-agent
aggregates pool an agent's games over its tables.

**Batching**: all games of all tables advance together in one engine state (up to
`batch_size` games at a time). At each decision, for each agent, the games whose acting
seat it holds are gathered and the agent's `act` is called once on that subset; there is
no Python loop over games. Observations are computed only when an acting agent needs them
(`needs_observations`, [`policies`][]).

**Workers**: the games are played in one forked process per CPU by default
(`workers`, `processes`): the chunks of `batch_size` games
apart, and, when every agent is `deterministic`, the games shared out by whole duplicate
groups. Each game is played exactly as in one process, so `workers` never changes a
number; `ray=True` plays the chunks as Ray tasks instead, on a cluster if need be.

**Statistics** are [`statistics`][] (confidence intervals over the
duplicate groups, head-to-head margins, ratings); [`play_tables`][] returns its
[`EvaluationResult`][], which converts to JSON
(`to_dict`), CSV and a text table; with
`record` it also holds every game's record (RULES.md section 11, `players` = the agents'
names by seat). This module imports the statistics, never the other way round: the
[`Schedule`][] it makes is defined there.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from typing import Any, Callable, Sequence

import numpy as np

from . import engine
from .cards import NUM_ACTIONS, bits_to_bool
from .files import check_writable
from .limits import check_fits
from .policies import decide, is_deterministic, policy_name, sees_hidden_cards
from .processes import available_cpus, run_jobs
from .progress import progress_bar
from .rules import Rules
from .seeding import check_seed, check_seed_span
from .statistics import EvaluationResult, Schedule, summarize

SEATINGS = ("duplicate", "fixed")
PERMUTATIONS = tuple(itertools.permutations(range(3)))  # the six seatings of a duplicate group


# ============================================================================ agents

AgentMaker = Callable[[str], Any]
"""A resolver of agent names: `make_agent(name) -> agent`, such as `agents.make_agent`."""


def agent_specs(agents: str | Sequence[Any]) -> list[Any]:
    """The agents of a tournament as a list: a comma-separated string is split into names."""
    if isinstance(agents, str):
        return [a.strip() for a in agents.split(",") if a.strip()]
    return list(agents)


def resolve_agents(agents: str | Sequence[Any], make_agent: AgentMaker | None = None) -> tuple[list[Any], list[str]]:
    """Agent objects and distinct display names from names and/or objects.

    `agents` is a comma-separated string or a sequence of names and agent objects. Names
    are turned into agents by `make_agent` (the caller's registry, e.g. `agents.make_agent`):
    this library does not know the project's agents (it never imports
    `sergeant_major_env.agents`), so a name without `make_agent` is a ValueError. A name that occurs again
    gets a suffix (`random`, `random#2`) so that every player of the tournament is told
    apart. Raises ValueError for an unknown name or an agent that cannot be made.
    """
    objects, names = [], []
    for item in agent_specs(agents):
        if isinstance(item, str):
            obj, name = make_named_agent(item, make_agent), item
        else:
            obj, name = item, policy_name(item)
        if not callable(getattr(obj, "act", None)):
            raise ValueError(f"agent {name!r} has no batched act(observations, legal_mask, rng) method")
        objects.append(obj)
        names.append(name)
    seen: dict[str, int] = {}
    labels = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        labels.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return objects, labels


def copy_pairs(agents: Sequence[Any], names: Sequence[str]) -> list[tuple[str, str]]:
    """The pairs of `names` whose agents are two copies of one agent: the same name given twice
    (`X` and `X#2`) or the same object. Two objects of one name are not counted: they may
    differ (two policies, both called `ppo`)."""
    return [(names[i], names[j]) for i, j in itertools.combinations(range(len(agents)), 2)
            if agents[i] is agents[j] or (isinstance(agents[i], str) and agents[i] == agents[j])]


def make_named_agent(name: str, make_agent: AgentMaker | None = None) -> Any:
    """`make_agent(name)`, with every failure as a one-line ValueError that names the agent."""
    if make_agent is None:
        raise ValueError(f"agent {name!r} is a name, and names need a resolver: pass make_agent "
                         f"(e.g. agents.make_agent) or pass agent objects")
    try:
        return make_agent(name)
    except ValueError:
        raise  # the registry's own message names the agent and the known ones
    except Exception as error:  # noqa: BLE001 - bad paths, broken checkpoints: one clear message
        message = str(error.args[0]) if isinstance(error, KeyError) and error.args else str(error)
        raise ValueError(f"cannot make agent {name!r}: {type(error).__name__}: {message}") from None


def trained_rules(agent: Any) -> Rules | None:
    """The rule options `agent` was trained under (its `rules` attribute, as the `ppo:` agent
    of a run has, from the model's metadata), or None when it does not say."""
    rules = getattr(agent, "rules", None)
    if isinstance(rules, dict):
        rules = Rules.from_dict(rules)
    return rules if isinstance(rules, Rules) else None


def rule_differences(a: Rules, b: Rules) -> list[str]:
    """The names of the rule options on which `a` and `b` differ, in section 9 order."""
    return [name for name in Rules.names() if getattr(a, name) != getattr(b, name)]


def format_options(rules: Rules, names: Sequence[str], defaults: Sequence[str] = ()) -> str:
    """`num_deals=3, exchanges=false`: the options `names` of `rules` as NAME=VALUE, the ones
    in `defaults` marked `(default)`."""
    def text(value: Any) -> str:
        return str(value).lower() if isinstance(value, bool) else str(value)

    return ", ".join(f"{name}={text(getattr(rules, name))}{' (default)' if name in defaults else ''}"
                     for name in names)


def rules_for_table(players: Sequence[Any], labels: Sequence[str], asked: Rules | None = None,
                    asked_names: Sequence[str] = (), asked_by: str = "--option") -> tuple[Rules, list[str]]:
    """The rules a table plays under, and notes for the user, from what its agents were trained
    under ([`trained_rules`][]) and the options asked for (`asked`, or None when none were).

    * Options asked for win; each agent trained under other options gets a note naming both
      (`note: ppo:runs/quick was trained with num_deals=3; playing num_deals=18 as --option
      asks`). `asked_names`: the options actually named (the others are defaults).
    * Nothing asked: the agents' own options, when they agree (a note says so if they are not
      the defaults); agents that disagree are a one-line ValueError naming two of them.
      Agents that do not say what they were trained under play any rules.
    """
    trained = [(label, rules) for label, rules in zip(labels, map(trained_rules, players)) if rules is not None]
    if asked is not None:
        notes = []
        for label, rules in trained:
            differ = rule_differences(rules, asked)
            if differ:
                unnamed = [name for name in differ if name not in asked_names]
                notes.append(f"note: {label} was trained with {format_options(rules, differ)}; playing "
                             f"{format_options(asked, differ, unnamed)} as {asked_by} asks")
        return asked, notes
    if not trained:
        return Rules(), []
    first_label, first = trained[0]
    for label, rules in trained[1:]:
        differ = rule_differences(first, rules)
        if differ:
            raise ValueError(f"{first_label} was trained with {format_options(first, differ)} and {label} with "
                             f"{format_options(rules, differ)}: choose the table's rule options with {asked_by} "
                             f"(e.g. {asked_by} {format_options(first, differ).replace(', ', ' ')})")
    differ = rule_differences(first, Rules())
    notes = [f"note: playing {format_options(first, differ)}, the rule options {first_label} was trained with"] \
        if differ else []
    return first, notes


# ============================================================================ schedule

def _positive(value: Any) -> bool:
    """`value` is a positive integer (not a bool)."""
    return not isinstance(value, bool) and isinstance(value, (int, np.integer)) and value >= 1


def check_games(games: Any) -> None:
    """A one-line ValueError unless `games` (per table) is a positive integer."""
    if not _positive(games):
        raise ValueError(f"games must be a positive integer, got {games!r}")


def check_seatings(seatings: Any) -> None:
    """A one-line ValueError unless `seatings` is one of `SEATINGS`."""
    if seatings not in SEATINGS:
        raise ValueError(f"seatings must be one of {', '.join(map(repr, SEATINGS))}, got {seatings!r}")


def group_count(games: int, seatings: str = "duplicate") -> int:
    """The groups of `games` games per table: six games each with duplicate seatings, one with fixed."""
    return -(-int(games) // 6) if seatings == "duplicate" else int(games)


def make_schedule(num_players: int, games: int, seed: int, seatings: str = "duplicate") -> Schedule:
    """The games of every 3-player table (round robin over `num_players`), see the module docstring."""
    check_seatings(seatings)
    if num_players < 3:
        raise ValueError(f"a table needs three agents, got {num_players} (name an agent twice to seat it twice)")
    check_games(games)
    groups = group_count(games, seatings)
    check_tournament_fits(num_players, games, seatings)
    check_tournament_seed(seed, groups, seatings)
    tables = list(itertools.combinations(range(num_players), 3))
    if seatings == "duplicate":
        group = np.repeat(np.arange(groups), 6)
        order = np.array(PERMUTATIONS * groups)  # [games, 3]: player position in the table per seat
    else:
        group = np.arange(groups)
        order = np.tile(np.arange(3), (groups, 1))
    seat_players = np.array(tables)[:, order]  # [T, games, 3]: the player in each seat
    per_table = group.size
    return Schedule(
        seeds=np.tile(engine.game_seeds(seed, groups)[group], len(tables)),
        seat_players=seat_players.reshape(-1, 3).astype(np.int64),
        table=np.repeat(np.arange(len(tables)), per_table),
        group=np.tile(group, len(tables)),
        tables=tables,
    )


BYTES_PER_GAME = 1_000
"""Memory a tournament holds for each game until its statistics are done (its schedule, scores
and the statistics' arrays: 807 bytes at the peak, measured with tracemalloc for 60,000 games
of one table)."""

BYTES_PER_RECORD = 250_000
"""Memory a recorded game holds (its record as Python objects, 118 KB measured, in the worker
and again once sent back)."""


def check_tournament_fits(num_players: int, games: int, seatings: str = "duplicate", record: bool = False,
                          batch_size: int = 0, workers: int = 1) -> None:
    """A one-line ValueError, before anything is allocated, when a tournament of `games` per
    table for `num_players` agents would not fit in this machine's available memory
    (`limits`): every game's schedule and statistics
    ([`BYTES_PER_GAME`][]), with `record` every game's record ([`BYTES_PER_RECORD`][]),
    and `workers` engine batches of `batch_size` games (`engine.BATCH_BYTES_PER_GAME`)."""
    tables = math.comb(int(num_players), 3)
    per_table = (6 if seatings == "duplicate" else 1) * group_count(games, seatings)
    total = tables * per_table
    needed = total * (BYTES_PER_GAME + (BYTES_PER_RECORD if record else 0)) \
        + max(1, int(workers)) * min(int(batch_size), total) * engine.BATCH_BYTES_PER_GAME
    what = f"a tournament of {total:,} games" + (f" ({tables:,} tables of {per_table:,})" if tables > 1 else "") \
        + (" with their records" if record else "")
    check_fits(what, needed, "give fewer games" + (" or record none" if record else ""))


def check_tournament_seed(seed: Any, groups: int, seatings: str = "duplicate") -> int:
    """`seed` by the one seed rule (`seeding`), and so is the seed of the
    last group, `seed + groups - 1`: a one-line ValueError names the largest seed that fits."""
    unit, rule = ("duplicate groups", "group j plays seed + j") if seatings == "duplicate" else \
        ("games", "game i plays seed + i")
    return check_seed_span(seed, groups, unit, rule)


# ============================================================================ play

def play_games(players: Sequence[Any], seeds: np.ndarray, seat_players: np.ndarray, rules: Rules,
               rng: np.random.Generator, recorder_names: list[list[str]] | None = None,
               on_deals=None) -> tuple[np.ndarray, list[dict] | None]:
    """Play the games (seed, players by seat) together in one engine state until all are over.

    Returns (final scores int16[G, 3], records in game order or None). `recorder_names`
    (the players' names by seat, per game) switches recording on. `on_deals(n)` is called
    with the number of deals that just ended, for a progress bar.
    """
    state = engine.init(seeds, rules)
    batch = state.batch_size
    rows = np.arange(batch)
    seat_players = np.asarray(seat_players, dtype=np.int64)
    # Column 3 answers to_act = -1 (game over): no player acts.
    actor_table = np.concatenate([seat_players, np.full((batch, 1), -1, dtype=np.int64)], axis=1)
    recorder = finished = None
    if recorder_names is not None:
        from .records import Recorder, fit_player_names

        recorder = Recorder(state, ["?"] * 3)
        finished = [None] * batch
    actions = np.zeros(batch, dtype=np.int64)
    while True:
        legal = engine.legal_bits(state)
        to_act = state.to_act.astype(np.intp)
        actor = actor_table[rows, to_act]  # -1 indexes column 3: finished games
        present = np.bincount(actor + 1, minlength=len(players) + 1)[1:]
        if not present.any():
            break
        mask = bits_to_bool(legal, NUM_ACTIONS)
        actions[:] = 0
        for k in np.flatnonzero(present).tolist():
            games = rows if present[k] == batch else np.flatnonzero(actor == k)
            actions[games] = decide(players[k], state, games, mask[games], rng)
        if recorder is None:
            engine.step(state, actions, legal=legal)
        else:
            before = len(recorder.finished)
            recorder.step(actions)
            ended = np.flatnonzero(state.game_ended)
            # Recorder appends the games that ended in a step in ascending slot order.
            if len(recorder.finished) - before != ended.size:
                raise RuntimeError("records.Recorder did not finish one record per ended game")
            for g, record in zip(ended.tolist(), recorder.finished[before:]):
                record["players"] = fit_player_names(recorder_names[g])
                finished[g] = record
        if on_deals is not None:
            ended_deals = int(np.count_nonzero(state.deal_ended))
            if ended_deals:
                on_deals(ended_deals)
    return state.final_scores.copy(), finished


@dataclasses.dataclass(frozen=True)
class TablePlan:
    """How a tournament is played: every option of [`play_tables`][] but who plays (the agents,
    their names and their resolver). Checked when made: a bad field is a one-line ValueError
    (a `rules` of the wrong type a TypeError), and `rules` given as a dict (or None) is kept as
    its [`Rules`][]. Frozen, so one plan can be played against several tables:

    ```python
    plan = TablePlan(games=1200, seed=0, rules={"num_deals": 1}, progress=False)
    result = play_tables("heuristic,greedy,random", plan, make_agent=make_agent)
    ```
    """

    games: int = 120
    """games per table (rounded up to a multiple of 6 with duplicate seatings)"""
    seed: int = 0
    """group j plays engine seed `seed + j` (game i `seed + i` with fixed seatings), so
    `seed + groups - 1` must stay within the seed rule (`seeding`)"""
    rules: Rules | dict | None = None
    """the rule options: a [`Rules`][], or a dict of rule options (None: the defaults); kept as a Rules"""
    seatings: str = "duplicate"
    """`duplicate` (groups of six games, all seatings of one deal) or `fixed` (the agents in the order given)"""
    record: bool | str = False
    """True keeps every game's record in `result.records`; a path also writes them as JSON Lines
    (checked writable when the plan is made, written atomically)"""
    progress: bool = True
    """a tqdm bar of the deals played on stderr, when it is a terminal"""
    batch_size: int = 12_000
    """most games stepped together: the games are played in chunks of that many (whole duplicate
    groups), chunk c with its own random generator for the agents, seeded by `(rng_seed, c)`
    (plain `rng_seed` for chunk 0, so a tournament of one chunk is unchanged)"""
    rng_seed: int | None = None
    """seeds the agents' random generators (None: `seed`). Results depend on `seed`,
    `rng_seed` and `batch_size` only; with deterministic agents on `seed` alone"""
    workers: int | None = None
    """processes to play in on this machine (`processes`; None: one per
    CPU this process may use; 1: this process only). Never changes a number. Not used with `ray`"""
    ray: bool = False
    """play the chunks as Ray tasks (see [`play_tables`][])"""
    ray_address: str | None = None
    """the Ray cluster to start on when this process has no Ray session (None: a local one)"""

    def __post_init__(self) -> None:
        rules = Rules.from_dict(self.rules) if isinstance(self.rules, dict) or self.rules is None else self.rules
        if not isinstance(rules, Rules):
            raise TypeError(f"rules must be a Rules or a dict of rule options, got {self.rules!r}")
        object.__setattr__(self, "rules", rules)
        check_seatings(self.seatings)
        check_games(self.games)
        if not _positive(self.batch_size):
            raise ValueError(f"batch_size must be a positive integer, got {self.batch_size!r}")
        if self.workers is not None and not _positive(self.workers):
            raise ValueError(f"workers must be a positive integer or None (one per CPU), got {self.workers!r}")
        if self.rng_seed is not None:
            object.__setattr__(self, "rng_seed", check_seed(self.rng_seed, "rng_seed"))
        object.__setattr__(self, "seed", check_tournament_seed(self.seed, group_count(self.games, self.seatings),
                                                               self.seatings))
        object.__setattr__(self, "games", int(self.games))
        object.__setattr__(self, "batch_size", int(self.batch_size))
        if isinstance(self.record, str):
            check_writable(self.record, "record file")

    @property
    def agent_seed(self) -> int:
        """The seed of the agents' generators: `rng_seed`, else `seed`."""
        return self.seed if self.rng_seed is None else self.rng_seed


def play_tables(agents: str | Sequence[Any], plan: TablePlan | None = None, *, names: Sequence[str] | None = None,
                make_agent: AgentMaker | None = None) -> EvaluationResult:
    """Play a tournament and return its statistics (see the module docstring):

    ```python
    result = play_tables("heuristic,greedy,random", TablePlan(games=1200, seed=0), make_agent=make_agent)
    ```

    `agents`: agent objects and/or names (a list or a comma-separated string), at least
    three; with more, every 3-agent table plays `plan.games` games. Names need `make_agent`,
    the resolver that turns a name into an agent (`agents.make_agent` of this project, or
    any function of one name): this library does not import the project's agents itself.
    `plan`: how the games are played ([`TablePlan`][], its fields documented there;
    None: the defaults, 120 games from seed 0). `names`: display names of the agents, in
    order (default: their names, a repeated one suffixed `#2`, `#3`...).

    `plan.ray` plays the chunks as Ray tasks, in parallel, on the Ray session of this
    process or, if there is none, on a Ray it starts (`ray.init(address=plan.ray_address)`: a
    local one by default) and stops at the end. Each task builds its agents from the names
    given with `make_agent` (which must therefore be picklable, as a module-level function
    such as `agents.make_agent` is; objects given instead are shipped pickled) and plays its
    chunk exactly as the local run does, so the result is the same, number for number. Needs
    `pip install ray` (or the `rllib` extra); every node must have this project installed.

    `plan.workers`: processes to play in on this machine (`processes`,
    forked on Linux, so the agents need not be picklable; elsewhere this process alone).
    The chunks are played apart, and when every agent is `deterministic`
    ([`policies`][]: all of this project's but `random`, a sampling
    `ppo` and a `pimc` with random rollouts) the games are also shared out in equal parts
    of whole duplicate groups, one per worker. Either way each game is played as in one
    process, so the results are the same for any `workers`. Not used with `ray`, whose
    tasks are the workers.

    Every argument is checked before any game is played; a bad one is a one-line ValueError.
    """
    tournament = plan_tournament(agents, plan, names=names, make_agent=make_agent)
    outcomes = run_tournament(tournament)
    return summarize_tournament(tournament, outcomes)


@dataclasses.dataclass(frozen=True)
class Tournament:
    """A checked tournament before its first game ([`plan_tournament`][]): who plays, every game
    of the schedule, and where the games are played. [`run_tournament`][] plays it and
    [`summarize_tournament`][] turns the outcomes into the result."""

    plan: TablePlan
    """how the games are played"""
    specs: tuple[Any, ...]
    """the agents as given: names travel to Ray tasks as names"""
    players: tuple[Any, ...]
    """the agent objects, in order"""
    names: tuple[str, ...]
    """their distinct display names"""
    schedule: Schedule
    """every game: its seed and the player in each seat"""
    workers: int
    """processes on this machine (the plan's, one per CPU for None; 1 with Ray, whose tasks are the workers)"""
    make_agent: AgentMaker | None
    """the resolver of agent names (for the Ray tasks)"""

    @property
    def games(self) -> int:
        """Games of all tables together."""
        return int(self.schedule.seeds.size)


def plan_tournament(agents: str | Sequence[Any], plan: TablePlan | None = None, *,
                    names: Sequence[str] | None = None, make_agent: AgentMaker | None = None) -> Tournament:
    """Check the agents of [`play_tables`][] (a one-line ValueError for a bad one; `plan` was
    checked when made), make the schedule, then build the agents: the tournament, before any
    game is played."""
    plan = TablePlan() if plan is None else plan
    if not isinstance(plan, TablePlan):
        raise TypeError(f"plan must be a TablePlan, got {plan!r}")
    specs = agent_specs(agents)
    # The schedule checks the counts (and what the plan did) before any agent is built
    # (a ppo: or rllib: agent loads a model).
    schedule = make_schedule(len(specs), plan.games, plan.seed, plan.seatings)
    players, labels = resolve_agents(specs, make_agent)
    if names is None:
        names = labels
    elif len(names) != len(players) or len(set(names)) != len(names):
        raise ValueError(f"names must be {len(players)} distinct names, got {list(names)!r}")
    workers = 1 if plan.ray else (available_cpus() if plan.workers is None else int(plan.workers))
    return Tournament(plan=plan, specs=tuple(specs), players=tuple(players), names=tuple(names), schedule=schedule,
                      workers=workers, make_agent=make_agent)


def run_tournament(tournament: Tournament) -> list[tuple[np.ndarray, list[dict] | None]]:
    """Play every game of `tournament`: its chunks ([`chunk_jobs`][]) in this process, in worker
    processes or as Ray tasks; the outcomes (scores, records or None) in chunk order. With
    `plan.progress`, a tqdm bar of the deals played, on stderr when it is a terminal."""
    jobs, plan = chunk_jobs(tournament), tournament.plan
    games = tournament.games
    bar = progress_bar(games * plan.rules.num_deals, "deal", f"{games} games", plan.progress, leave=False)
    try:
        if plan.ray:
            # Names travel as names (with their resolver), so that each task builds its own agents.
            return play_chunks_on_ray(list(tournament.specs), jobs, plan.ray_address, bar, tournament.make_agent)
        return run_jobs(lambda job, on_deals: play_chunk(tournament.players, job, on_deals), jobs, tournament.workers,
                        bar.update if bar is not None else None)
    finally:
        if bar is not None:
            bar.close()


def chunk_jobs(tournament: Tournament) -> list[ChunkJob]:
    """The units of work of `tournament`: chunks of at most `batch_size` consecutive games (whole
    duplicate groups), each with its own random generator; with several workers and only
    deterministic agents, each chunk is split further, by whole groups, to share the games out.
    Games are independent (a game's cards depend on its seed only), so the chunks can be played
    one after the other or in parallel with the same result."""
    plan, schedule, total = tournament.plan, tournament.schedule, tournament.games
    seat_names = [[tournament.names[p] for p in row] for row in schedule.seat_players.tolist()] \
        if plan.record else None
    step = max(6, plan.batch_size - plan.batch_size % 6)
    chunks = [slice(start, min(start + step, total)) for start in range(0, total, step)]
    jobs = [ChunkJob(index=c, seeds=schedule.seeds[part], seat_players=schedule.seat_players[part],
                     rules=plan.rules, rng_seed=plan.agent_seed, seat_names=seat_names[part] if plan.record else None)
            for c, part in enumerate(chunks)]
    if tournament.workers > 1 and all(map(is_deterministic, tournament.players)):
        # No agent draws from the chunk's generator: a chunk's games may be split (by groups).
        group_size, parts = (6 if plan.seatings == "duplicate" else 1), -(-tournament.workers // len(jobs))
        jobs = [part for job in jobs for part in split_job(job, parts, group_size)]
    return jobs


def summarize_tournament(tournament: Tournament,
                         outcomes: list[tuple[np.ndarray, list[dict] | None]]) -> EvaluationResult:
    """The result of `tournament` from its chunks' outcomes ([`summarize`][]),
    with every game's record when `plan.record` asks (and written to its path, if one)."""
    plan = tournament.plan
    scores = np.concatenate([chunk_scores for chunk_scores, _ in outcomes]).astype(np.int16)
    records = [r for _, chunk_records in outcomes for r in chunk_records] if plan.record else None
    if isinstance(plan.record, str) and records is not None:
        from .records import write_jsonl

        write_jsonl(records, plan.record)
    result = summarize(list(tournament.names), tournament.schedule, scores, rules=plan.rules, seed=plan.seed,
                       seatings=plan.seatings)
    result.records = records
    result.copies = copy_pairs(tournament.specs, tournament.names)
    result.deterministic = [name for name, player in zip(tournament.names, tournament.players)
                            if is_deterministic(player)]
    result.cheats = [name for name, player in zip(tournament.names, tournament.players) if sees_hidden_cards(player)]
    return result


@dataclasses.dataclass
class ChunkJob:
    """Consecutive games of a tournament, played together: the unit of work and of randomness."""

    index: int                # chunk c of the tournament
    seeds: np.ndarray         # the games' engine seeds
    seat_players: np.ndarray  # int64[G, 3]: index into the agent list, per seat
    rules: Rules
    rng_seed: int             # the tournament's; the chunk's generator is chunk_rng(rng_seed, index)
    seat_names: list[list[str]] | None  # the players' names by seat, to record the games (else None)


def split_job(job: ChunkJob, parts: int, group_size: int) -> list[ChunkJob]:
    """`job` in at most `parts` jobs of consecutive whole groups of `group_size` games, as
    equal as can be; each keeps the chunk's index (its random generator), so this is only for
    deterministic agents, whose games do not draw from it."""
    groups = job.seeds.size // group_size
    bounds = [group_size * (groups * k // parts) for k in range(parts + 1)]
    bounds[-1] = job.seeds.size
    return [dataclasses.replace(job, seeds=job.seeds[a:b], seat_players=job.seat_players[a:b],
                                seat_names=job.seat_names[a:b] if job.seat_names is not None else None)
            for a, b in zip(bounds, bounds[1:]) if b > a]


def chunk_rng(rng_seed: int, index: int) -> np.random.Generator:
    """The agents' random generator for chunk `index`: one stream per chunk, so that chunks can be
    played in any order or in parallel with the same result (chunk 0 keeps the plain seed)."""
    return np.random.default_rng(rng_seed if index == 0 else [rng_seed, index])


def play_chunk(players: Sequence[Any], job: ChunkJob, on_deals=None) -> tuple[np.ndarray, list[dict] | None]:
    """(final scores, records or None) of one chunk's games, with the chunk's own generator."""
    return play_games(players, job.seeds, job.seat_players, job.rules, chunk_rng(job.rng_seed, job.index),
                      job.seat_names, on_deals)


def _play_chunk_task(shared: tuple[list[Any], AgentMaker | None],
                     job: ChunkJob) -> tuple[np.ndarray, list[dict] | None]:
    """A Ray task: build the agents (`shared`: their names and the resolver of names) and play one chunk."""
    specs, make_agent = shared
    players, _ = resolve_agents(specs, make_agent)
    return play_chunk(players, job)


def play_chunks_on_ray(specs: list[Any], jobs: list[ChunkJob], address: str | None = None,
                       bar=None, make_agent: AgentMaker | None = None) -> list[tuple[np.ndarray, list[dict] | None]]:
    """Play every chunk as a Ray task (`run_on_ray`); the
    outcomes in chunk order (see [`play_tables`][])."""
    from .ray_jobs import run_on_ray

    def played(job: ChunkJob, outcome: tuple[np.ndarray, list[dict] | None]) -> tuple[np.ndarray, list[dict] | None]:
        if bar is not None:
            bar.update(job.seeds.size * job.rules.num_deals)
        return outcome

    return run_on_ray(_play_chunk_task, (specs, make_agent), jobs, address, played,
                      needed_by="TablePlan(ray=True) (evaluate.py --ray)")
