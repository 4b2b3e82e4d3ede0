"""The statistics of a tournament: confidence intervals, head-to-head margins, ratings, the result.

[`summarize`][] turns the final scores of played games (and the [`Schedule`][] that
says who sat where, at which table, in which duplicate group) into an [`EvaluationResult`][];
[`play_tables`][sergeant_major_env.evaluation.play_tables] calls it after the games. The playing
itself (making the schedule, batched play, Ray chunks) is [`evaluation`][],
which imports this module (never the other way round).

The unit of independence is the **group** (the six games of a seed with duplicate deals; one
game with `"fixed"` seatings; with a round robin, group j spans every table, since all
tables play seed + j). For an agent, each group gives the average of its points over its
games in that group (over its tables, too, with a round robin); the mean of those group
averages is `mean_points` and `ci95` is the Student-t interval
`mean +- t(0.975, n-1) * sd / sqrt(n)` over the n group averages. The t quantiles come from
a small table (`T_TABLE`, interpolated in 1/df, no scipy needed); for n >= 120 they are
within 0.02 of the normal 1.96. With a single group there is no interval (`null`).

* `win_rate`: R6, equal totals share the win: each of k tied leaders gets 1/k of a win.
* `mean_place`: 1 = first; tied players share (average) their places: two tied first are
  1.5 each, three tied are 2 each. The text table's `place` column ([`PLACE_LEGEND`][]).
* `head_to_head`: for each pair (a, b) of agents that met, the per-group average of
  `points(a) - points(b)` over the games in which both played, its mean (`margin`) and
  t-interval, and `a_ahead` (the share of those games where a finished above b; ties 1/2).
  Two copies of one agent (`X` and `X#2`: [`EvaluationResult.copies`][]) get a note
  under the table; when every agent at their tables is deterministic and the seatings are
  duplicate, each group plays the same games with the two swapped, so their margin is 0 and
  `a_ahead` 50% by construction, and the note says so ([`EvaluationResult.copies_notes`][]).

**Ratings** ([`fit_ratings`][]): one ranking of all the agents, across all the tables of a
round robin. Each game gives three pairwise results (a finished above b: 1, below: 0, level:
1/2 each); a Bradley-Terry model, P(a above b) = s_a / (s_a + s_b), is fitted to all of them
by maximum likelihood. The rating is the log-strength in Elo points,
`RATING_SCALE * log(s_a)`, anchored at **mean 0 over the agents of the tournament**: a
rating says how far an agent stands above or below the field's average, and a gap of D
points between two agents means odds of 10**(D/400) to 1 that the higher finishes above the
lower (200 points: 76%, 400 points: 91%). Ratings of different tournaments share a scale but
not an anchor (the mean moves with the field). `ci95` is a 95% percentile bootstrap: the
duplicate groups (group j spanning every table) are drawn with replacement
[`BOOTSTRAP_SAMPLES`][] times and refitted, by a generator seeded with the tournament's
seed, so the same seed gives the same intervals. With three agents (one table) the ratings
are the three head-to-head `a_ahead` shares made consistent on one scale (two free numbers
for three pairs); with more, each agent's rating pools its games at every table it sat at.

Why this fit: Bradley-Terry is the order-free, maximum-likelihood form of Elo (an Elo run
over the same games would depend on their order and on its K factor). It ranks by who
finishes above whom, not by points, so one very large win does not outweigh many small
losses; the head-to-head margins above give the sizes in points. It is fitted here in numpy
(Newton's method, [`bradley_terry`][], with [`PRIOR_GAMES`][] virtual drawn games a
pair so that an agent that always finished ahead still gets a finite rating): choix, the
library for such fits, is not installed with this project, and twenty lines of numpy fit
every bootstrap replicate at once. The intervals come from the bootstrap rather than the
likelihood because the pairwise results are not independent: three come from each game, and
the six games of a duplicate group share their cards; the group is the independent unit,
as for the t-intervals.

The result converts to JSON (`EvaluationResult.to_dict`; the leaderboard as
`"ratings": [{"name", "rating", "ci95": [lo, hi]}]`, highest first), CSV and a text table.
"""

from __future__ import annotations

import csv
import dataclasses
import itertools
import math
from typing import Any, Iterable, Sequence

import numpy as np

from .engine import places, win_credits  # R6
from .files import atomic_write, write_json
from .rules import Rules

# Two-sided 95% Student-t quantiles t(0.975, df); between entries the value is interpolated
# linearly in 1/df (exact to 3 decimals at the entries, within 0.003 in between).
T_TABLE = {
    1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
    10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110,
    18: 2.101, 19: 2.093, 20: 2.086, 21: 2.080, 22: 2.074, 23: 2.069, 24: 2.064, 25: 2.060,
    26: 2.056, 27: 2.052, 28: 2.048, 29: 2.045, 30: 2.042, 40: 2.021, 60: 2.000, 120: 1.980,
}
Z95 = 1.959964  # df = infinity
_T_DF = np.array(sorted(T_TABLE), dtype=float)
_T_VALUES = np.array([T_TABLE[int(d)] for d in _T_DF])


def t_quantile_95(df: int) -> float:
    """t(0.975, df), the factor of a two-sided 95% interval with `df` degrees of freedom."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be at least 1, got {df}")
    if df in T_TABLE:
        return T_TABLE[df]
    if df > 120:  # interpolate in 1/df between 120 and infinity (1/df = 0)
        return Z95 + (T_TABLE[120] - Z95) * 120 / df
    # np.interp needs increasing x: use 1/df descending -> reverse the arrays.
    return float(np.interp(1 / df, 1 / _T_DF[::-1], _T_VALUES[::-1]))


def mean_ci(values: Sequence[float] | np.ndarray) -> tuple[float, list[float] | None]:
    """(mean, [low, high]) of a 95% t-interval for the mean of independent `values`;
    the interval is `None` with fewer than two values."""
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return float("nan"), None
    mean = float(values.mean())
    if values.size < 2:
        return mean, None
    half = t_quantile_95(values.size - 1) * float(values.std(ddof=1)) / math.sqrt(values.size)
    return mean, [mean - half, mean + half]


# ============================================================================ ratings

RATING_SCALE = 400 / math.log(10)
"""Elo points per unit of log-strength: a lead of 400 points is 10 to 1 odds of finishing ahead."""
PRIOR_GAMES = 1.0
"""Virtual games per pair of agents, shared half and half (a drawn game): keeps an agent that
always finished ahead at a finite rating and pulls ratings a little towards each other."""
BOOTSTRAP_SAMPLES = 1000
"""Bootstrap replicates of the duplicate groups behind each rating's 95% interval."""
BOOTSTRAP_STREAM = 7
"""The spawn key of the bootstrap's generator: a stream of its own, apart from the agents' (chunk_rng)."""
_BOOTSTRAP_CELLS = 2_000_000  # replicates x groups resampled at once (memory: 16 bytes a cell)
PLACE_LEGEND = "place: the agent's mean finishing place, 1 = first to 3 = last (tied players share the average)"
"""The line under the text table's agents: what its `place` column (`mean_place`) is."""
RATINGS_METHOD = ("Bradley-Terry fit of who finished ahead of whom in each game (ties half), "
                  f"{PRIOR_GAMES:g} virtual drawn game per pair; Elo points (400 = 10:1 odds of finishing ahead), "
                  f"mean 0 over the agents; 95% percentile bootstrap over groups ({BOOTSTRAP_SAMPLES} replicates)")


@dataclasses.dataclass
class Rating:
    """One agent's place on the leaderboard: Elo-scaled Bradley-Terry rating, mean 0 over the agents."""

    name: str
    rating: float
    ci95: list[float] | None

    def to_dict(self) -> dict[str, Any]:
        return _clean(dataclasses.asdict(self))


def pairwise_ahead(scores: np.ndarray, seat_players: np.ndarray, group: np.ndarray,
                   num_players: int) -> np.ndarray:
    """`ahead[j, a, b]`: in how many of duplicate group j's games agent a finished above agent b
    (a tie counts half for each), over every table of the group. float[groups, P, P]; groups in
    ascending order of their number."""
    scores = np.asarray(scores)
    _, group_index = np.unique(group, return_inverse=True)
    ahead = np.zeros((group_index.max() + 1 if group_index.size else 0, num_players, num_players))
    for seat, other in itertools.permutations(range(3), 2):
        share = (scores[:, seat] > scores[:, other]) + 0.5 * (scores[:, seat] == scores[:, other])
        np.add.at(ahead, (group_index, seat_players[:, seat], seat_players[:, other]), share)
    return ahead


def bradley_terry(ahead: np.ndarray, prior_games: float = PRIOR_GAMES, tolerance: float = 1e-9,
                  max_iterations: int = 200) -> np.ndarray:
    """Log-strengths (mean 0) of the Bradley-Terry model fitted to `ahead[..., a, b]` (a's
    results against b: 1 a game won, 1/2 a tie): float[..., P], for every leading index at once.

    The model: a finishes ahead of b with probability `s_a / (s_a + s_b)`, with `prior_games`
    virtual drawn games added to every pair first, which makes the maximum of the likelihood
    unique and finite. Fitted by Newton's method on the log-strengths (the log-likelihood is
    concave; each step solves the P x P curvature, made regular along the mean by a rank-one
    term, and is shortened to at most one unit where it would move further): a few tens of
    steps even for lopsided tables, where Hunter's MM iterations crawl (a heuristic winning
    all but a few of 1,200 games against random did not settle in 10,000 of them). Stops when
    no log-strength moves by more than `tolerance`.
    """
    ahead = np.asarray(ahead, dtype=float)
    players = ahead.shape[-1]
    ahead = ahead + (prior_games / 2) * (1 - np.eye(players))
    met = ahead + np.swapaxes(ahead, -1, -2)  # n_ab, virtual games included; zero on the diagonal
    results = ahead.sum(axis=-1)             # W_a
    log_strength = np.zeros(ahead.shape[:-1])
    along_mean = np.ones((players, players))
    for _ in range(max_iterations):
        p = 1 / (1 + np.exp(log_strength[..., None, :] - log_strength[..., :, None]))  # P(a ahead of b)
        gradient = results - (met * p).sum(axis=-1)
        weight = met * p * (1 - p)
        curvature = weight.sum(axis=-1)[..., :, None] * np.eye(players) - weight  # minus the Hessian
        step = np.linalg.solve(curvature + along_mean, gradient[..., None])[..., 0]
        moved = np.abs(step).max(axis=-1, keepdims=True)
        step = step / np.maximum(moved, 1.0)  # far from the optimum: no more than one unit a step
        log_strength = log_strength + step
        log_strength -= log_strength.mean(axis=-1, keepdims=True)  # strengths are relative: mean 0
        if moved.max(initial=0.0) < tolerance:
            return log_strength
    raise RuntimeError(f"the Bradley-Terry fit did not settle in {max_iterations} iterations")


def bootstrap_ratings(ahead: np.ndarray, rng: np.random.Generator,
                      samples: int = BOOTSTRAP_SAMPLES) -> np.ndarray:
    """Ratings of `samples` bootstrap replicates, float[samples, P]: each replicate draws as many
    duplicate groups as there are, with replacement, and fits their summed results."""
    groups = ahead.shape[0]
    uniform = np.full(groups, 1 / groups)
    block = max(1, _BOOTSTRAP_CELLS // groups)
    replicates = []
    for start in range(0, samples, block):
        counts = rng.multinomial(groups, uniform, size=min(block, samples - start))  # [block, groups]
        replicates.append(RATING_SCALE * bradley_terry(np.tensordot(counts, ahead, axes=1)))
    return np.concatenate(replicates)


def fit_ratings(names: Sequence[str], ahead: np.ndarray, seed: int = 0,
                samples: int = BOOTSTRAP_SAMPLES) -> list[Rating]:
    """The leaderboard: one [`Rating`][] per agent, highest first (ties in the order of `names`).

    `ahead[j, a, b]`: duplicate group j's results of a against b ([`pairwise_ahead`][]). The
    rating is `RATING_SCALE` times the Bradley-Terry log-strength of all groups together (mean 0
    over the agents); `ci95` is the 2.5 and 97.5 percentile of `samples` bootstrap replicates
    over the groups, drawn by a generator seeded with `seed` (same seed, same interval), or
    None with fewer than two groups.
    """
    ahead = np.asarray(ahead, dtype=float)
    if ahead.ndim != 3 or ahead.shape[1:] != (len(names), len(names)):
        raise ValueError(f"ahead must be float[groups, {len(names)}, {len(names)}] for {len(names)} agents, "
                         f"got shape {ahead.shape}")
    ratings = RATING_SCALE * bradley_terry(ahead.sum(axis=0))
    intervals: list[list[float] | None] = [None] * len(names)
    if ahead.shape[0] >= 2:
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(BOOTSTRAP_STREAM,)))
        low, high = np.percentile(bootstrap_ratings(ahead, rng, samples), [2.5, 97.5], axis=0)
        intervals = [[float(lo), float(hi)] for lo, hi in zip(low, high)]
    board = [Rating(name=name, rating=float(r), ci95=ci) for name, r, ci in zip(names, ratings, intervals)]
    return sorted(board, key=lambda rating: -rating.rating)


def unrated_gaps(names: Sequence[str], ahead: np.ndarray) -> list[str]:
    """Notes for the leaderboard: each agent that never finished above some agent it met (in no
    game, not even level). The data put no bound on such a gap (the likelihood grows without
    end as it widens); its size on the board comes from the prior and grows with more games."""
    totals = np.asarray(ahead, dtype=float).sum(axis=0)
    notes = []
    for loser, name in enumerate(names):
        above = [names[w] for w in range(len(names)) if w != loser and totals[w, loser] > 0 and totals[loser, w] == 0]
        if above:
            notes.append(f"note: {name} never finished above {', '.join(above)}: that gap rests on the prior "
                         f"({PRIOR_GAMES:g} drawn game a pair)")
    return notes


# ============================================================================ results

@dataclasses.dataclass
class Schedule:
    """Every game of a tournament: its seed, the players in seats 0-2, its table and group
    (made by [`make_schedule`][sergeant_major_env.evaluation.make_schedule])."""

    seeds: np.ndarray       # uint64[G]
    seat_players: np.ndarray  # int64[G, 3]  index into the player list
    table: np.ndarray       # int64[G]     index into ``tables``
    group: np.ndarray       # int64[G]     duplicate group (seed index); the unit of the statistics
    tables: list[tuple[int, ...]]


@dataclasses.dataclass
class AgentStats:
    name: str
    games: int
    mean_points: float
    ci95: list[float] | None
    win_rate: float
    win_rate_ci95: list[float] | None
    mean_place: float
    groups: int

    def to_dict(self) -> dict[str, Any]:
        return _clean(dataclasses.asdict(self))


@dataclasses.dataclass
class HeadToHead:
    a: str
    b: str
    games: int
    margin: float
    ci95: list[float] | None
    a_ahead: float
    groups: int

    def to_dict(self) -> dict[str, Any]:
        return _clean(dataclasses.asdict(self))


@dataclasses.dataclass
class TableResult:
    agents: list[str]
    games: int
    stats: list[AgentStats]
    head_to_head: list[HeadToHead]

    def to_dict(self) -> dict[str, Any]:
        return {"agents": [s.to_dict() for s in self.stats], "players": list(self.agents), "games": self.games,
                "head_to_head": [h.to_dict() for h in self.head_to_head]}


@dataclasses.dataclass
class EvaluationResult:
    """What `play_tables` found; `to_dict()` is its JSON form."""

    names: list[str]
    games: int
    seed: int
    seatings: str
    rules: Rules
    agents: list[AgentStats]
    tables: list[TableResult]
    head_to_head: list[HeadToHead]
    schedule: Schedule
    scores: np.ndarray  # int16[G, 3] final scores by seat, in schedule order
    records: list[dict] | None = None
    ratings: list[Rating] = dataclasses.field(default_factory=list)  # the leaderboard, highest first
    copies: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    """pairs of names that are two copies of one agent (one name given twice: `X`, `X#2`)"""
    deterministic: list[str] = dataclasses.field(default_factory=list)
    """the names of the agents that say they are deterministic
    ([`is_deterministic`][sergeant_major_env.policies.is_deterministic])"""
    cheats: list[str] = dataclasses.field(default_factory=list)
    """the names of the agents that see the hidden cards (`pimc:cheat`,
    [`sees_hidden_cards`][sergeant_major_env.policies.sees_hidden_cards]): [`cheats_notes`][] says so"""

    def agent(self, name: str) -> AgentStats:
        for stats in self.agents:
            if stats.name == name:
                return stats
        raise KeyError(name)

    def group_points(self, name: str) -> np.ndarray:
        """float[groups]: agent `name`'s mean points in each group it played, in group order
        (their mean is its `mean_points`): two results of the same seed and schedule pair
        up group by group, deal by deal."""
        games, seats = np.nonzero(self.schedule.seat_players == self.names.index(name))
        return _group_means(self.scores[games, seats].astype(float), self.schedule.group[games])

    def to_dict(self) -> dict[str, Any]:
        return {
            "games": self.games,
            "games_per_table": self.games // len(self.tables),
            "seed": self.seed,
            "seatings": self.seatings,
            "rules": self.rules.to_dict(),
            "agents": [s.to_dict() for s in self.agents],
            "tables": [t.to_dict() for t in self.tables],
            "head_to_head": [h.to_dict() for h in self.head_to_head],
            "statistics": ("per-group averages (group = the games of one seed: six seatings with "
                           "duplicate deals, one game with fixed seatings); mean and 95% Student-t "
                           "interval over groups; R6 ties share the win; tied places are averaged"),
            "ratings": [r.to_dict() for r in self.ratings],
            "ratings_method": RATINGS_METHOD,
        }

    def to_json(self, path: str) -> None:
        """Write `to_dict` as JSON, atomically (never half written)."""
        write_json(path, self.to_dict())

    def csv_rows(self) -> list[dict[str, Any]]:
        """One row per agent overall (`table` = `all`) and per agent of each table."""
        rows = []
        scopes = [("all", self.agents)] + [("|".join(t.agents), t.stats) for t in self.tables]
        if len(self.tables) == 1:
            scopes = scopes[:1]
        for scope, stats in scopes:
            for s in stats:
                low, high = s.ci95 if s.ci95 else (None, None)
                rows.append({"table": scope, "agent": s.name, "games": s.games,
                             "mean_points": _round(s.mean_points), "ci95_low": _round(low),
                             "ci95_high": _round(high), "win_rate": _round(s.win_rate),
                             "mean_place": _round(s.mean_place)})
        return rows

    def to_csv(self, path: str) -> None:
        """Write [`csv_rows`][] as CSV, atomically (never half written)."""
        rows = self.csv_rows()
        with atomic_write(path) as file:
            writer = csv.DictWriter(file, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)

    def format_text(self) -> str:
        """A plain-text table of the agents, the head-to-head margins and the ratings, each column
        as wide as its widest cell (`text_columns`)."""
        header = (f"{self.games} games ({self.seatings} seatings, seed {self.seed}, "
                  f"{self.rules.num_deals} deals a game)")
        lines = [header, ""]
        agents = text_columns(("agent", "games", "points/game", "95% CI", "win rate", "place"), [
            (s.name, str(s.games), f"{s.mean_points:+.2f}", format_ci(s.ci95), f"{s.win_rate:.1%}", f"{s.mean_place:.2f}")
            for s in sorted(self.agents, key=lambda s: -s.mean_points)])
        lines += [agents[0], "-" * len(agents[0]), *agents[1:], PLACE_LEGEND]
        lines += self.cheats_notes()
        if self.head_to_head:
            lines += ["", *text_columns(("head to head", "margin", "95% CI", "ahead"), [
                (f"{h.a} vs {h.b}", f"{h.margin:+.2f}", format_ci(h.ci95), f"{h.a_ahead:.1%}")
                for h in self.head_to_head])]
            lines += self.copies_notes()
        if self.ratings:
            lines += ["", self.ratings_title(), *text_columns(("rank", "agent", "rating", "95% CI"), [
                (str(rank), r.name, f"{r.rating:+.0f}", format_rating_ci(r.ci95))
                for rank, r in enumerate(self.ratings, 1)], left=2)]
            lines += self.rating_notes()
        return "\n".join(lines)

    def cheats_notes(self) -> list[str]:
        """One note line when an agent at the table sees the hidden cards ([`cheats`][])."""
        if not self.cheats:
            return []
        return [f"note: {', '.join(self.cheats)} {'sees' if len(self.cheats) == 1 else 'see'} every hidden card "
                f"(not a fair player: a measure of what perfect inference is worth)"]

    def copies_notes(self) -> list[str]:
        """A note for each head-to-head pair of two copies of one agent ([`copies`][]), saying
        when their margin is 0 by construction ([`same_games_swapped`][])."""
        return [f"note: {a} and {b} are two copies of one agent, all at their tables deterministic: in swapped seats "
                f"they play the same games, margin 0 by construction"
                if self.same_games_swapped(a, b) else f"note: {a} and {b} are two copies of one agent"
                for a, b in self.copies]

    def same_games_swapped(self, a: str, b: str) -> bool:
        """Whether copies `a` and `b` play the same games with their seats swapped: duplicate
        seatings (each group plays every seating of a deal) and only deterministic agents at the
        tables where they meet ([`deterministic`][])."""
        met = {name for table in self.tables if a in table.agents and b in table.agents for name in table.agents}
        return self.seatings == "duplicate" and bool(met) and met <= set(self.deterministic)

    def pairwise_ahead(self) -> np.ndarray:
        """float[groups, P, P]: each duplicate group's results of agent a against agent b ([`pairwise_ahead`][])."""
        return pairwise_ahead(self.scores, self.schedule.seat_players, self.schedule.group, len(self.names))

    def rating_notes(self) -> list[str]:
        """The leaderboard's caveats ([`unrated_gaps`][])."""
        return unrated_gaps(self.names, self.pairwise_ahead())

    def ratings_title(self) -> str:
        """The leaderboard's heading: what the ratings are and what their intervals rest on."""
        groups = int(np.unique(self.schedule.group).size)
        return (f"ratings (Bradley-Terry on finishing ahead, Elo points, mean 0; 95% bootstrap over "
                f"{groups} group{'s' if groups != 1 else ''})")


COLUMN_GAP = "  "
"""What separates two columns of a text table, whatever their widths."""


def text_columns(header: Sequence[str], rows: Sequence[Sequence[str]], left: int = 1) -> list[str]:
    """`header` and `rows` (cells as text) as lines of aligned columns, each column as wide as
    its widest cell and `COLUMN_GAP` from the next: the first `left` columns (names) flush left,
    the others (numbers) flush right, so every line is as long as the header's."""
    widths = [max(map(len, column)) for column in zip(header, *rows)]

    def line(cells: Sequence[str]) -> str:
        return COLUMN_GAP.join(cell.ljust(width) if k < left else cell.rjust(width)
                               for k, (cell, width) in enumerate(zip(cells, widths)))

    return [line(header), *map(line, rows)]


def format_ci(ci: list[float] | None) -> str:
    return "n/a" if ci is None else f"[{ci[0]:+.2f}, {ci[1]:+.2f}]"


def format_rating_ci(ci: list[float] | None) -> str:
    """A rating's interval in whole Elo points."""
    return "n/a" if ci is None else f"[{ci[0]:+.0f}, {ci[1]:+.0f}]"


def _round(x: float | None, digits: int = 4) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else round(float(x), digits)


def _clean(value: Any) -> Any:
    """JSON-safe: floats rounded, NaN to None."""
    if isinstance(value, float):
        return _round(value, 6)
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def _group_means(values: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Average of `values` per group, over the groups present (in group order)."""
    if values.size == 0:
        return values.astype(float)
    present, inverse = np.unique(groups, return_inverse=True)
    sums = np.bincount(inverse, weights=values, minlength=present.size)
    counts = np.bincount(inverse, minlength=present.size)
    return sums / counts


def _agent_stats(name: str, points: np.ndarray, wins: np.ndarray, place: np.ndarray,
                 groups: np.ndarray) -> AgentStats:
    mean, ci = mean_ci(_group_means(points, groups))
    win_rate, win_ci = mean_ci(_group_means(wins, groups))
    return AgentStats(name=name, games=int(points.size), mean_points=mean, ci95=ci, win_rate=win_rate,
                      win_rate_ci95=win_ci, mean_place=float(place.mean()) if place.size else float("nan"),
                      groups=int(np.unique(groups).size))


def summarize(names: Sequence[str], schedule: Schedule, scores: np.ndarray, rules: Rules | None = None,
              seed: int = 0, seatings: str = "duplicate") -> EvaluationResult:
    """The statistics of played games (see the module docstring): overall, per table, head to head."""
    scores = np.asarray(scores, dtype=np.int64)
    credits = win_credits(scores)
    place = places(scores)
    seat_players = schedule.seat_players
    num_games = scores.shape[0]
    # Long form: one row per (game, seat).
    player = seat_players.reshape(-1)
    game = np.repeat(np.arange(num_games), 3)
    points, wins, placed = scores.reshape(-1), credits.reshape(-1), place.reshape(-1)
    group, table = schedule.group[game], schedule.table[game]
    # points[g, player] for the head-to-head margins (NaN where the player is not seated).
    by_player = np.full((num_games, len(names)), np.nan)
    by_player[game, player] = points

    def stats_for(rows: np.ndarray, p: int) -> AgentStats:
        return _agent_stats(names[p], points[rows], wins[rows], placed[rows], group[rows])

    def pair_for(games: np.ndarray, a: int, b: int) -> HeadToHead:
        diff = by_player[games, a] - by_player[games, b]
        margin, ci = mean_ci(_group_means(diff, schedule.group[games]))
        ahead = float(np.mean((diff > 0) + 0.5 * (diff == 0))) if diff.size else float("nan")
        return HeadToHead(a=names[a], b=names[b], games=int(games.size), margin=margin, ci95=ci, a_ahead=ahead,
                          groups=int(np.unique(schedule.group[games]).size))

    overall = [stats_for(np.flatnonzero(player == p), p) for p in range(len(names))]
    tables = []
    for t, members in enumerate(schedule.tables):
        in_table = table == t
        games_t = np.flatnonzero(schedule.table == t)
        tables.append(TableResult(
            agents=[names[p] for p in members], games=int(games_t.size),
            stats=[stats_for(np.flatnonzero(in_table & (player == p)), p) for p in members],
            head_to_head=[pair_for(games_t, a, b) for a, b in itertools.combinations(members, 2)]))
    pairs = []
    for a, b in itertools.combinations(range(len(names)), 2):
        both = np.flatnonzero(~np.isnan(by_player[:, a]) & ~np.isnan(by_player[:, b]))
        pairs.append(pair_for(both, a, b))
    ahead = pairwise_ahead(scores, seat_players, schedule.group, len(names))
    return EvaluationResult(names=list(names), games=num_games, seed=seed, seatings=seatings,
                            rules=rules if rules is not None else Rules(), agents=overall, tables=tables,
                            head_to_head=pairs, schedule=schedule, scores=scores,
                            ratings=fit_ratings(names, ahead, seed))


def format_rich(result: EvaluationResult) -> Iterable[Any]:
    """rich renderables (tables) of a result; raises ImportError without rich."""
    from rich.table import Table

    title = (f"{result.games} games, {result.seatings} seatings, seed {result.seed}, "
             f"{result.rules.num_deals} deal{'s' if result.rules.num_deals > 1 else ''} a game")
    table = Table(title=title, caption=PLACE_LEGEND.replace("place:", "mean place:", 1))
    for column, justify in (("agent", "left"), ("games", "right"), ("points/game", "right"), ("95% CI", "right"),
                            ("win rate", "right"), ("mean place", "right")):
        table.add_column(column, justify=justify)
    for s in sorted(result.agents, key=lambda s: -s.mean_points):
        table.add_row(s.name, str(s.games), f"{s.mean_points:+.2f}", format_ci(s.ci95), f"{s.win_rate:.1%}",
                      f"{s.mean_place:.2f}")
    yield table
    yield from result.cheats_notes()
    if result.head_to_head:
        h2h = Table(title="head to head (points of a minus points of b, per game)")
        for column, justify in (("a", "left"), ("b", "left"), ("games", "right"), ("margin", "right"),
                                ("95% CI", "right"), ("a ahead", "right")):
            h2h.add_column(column, justify=justify)
        for h in result.head_to_head:
            h2h.add_row(h.a, h.b, str(h.games), f"{h.margin:+.2f}", format_ci(h.ci95), f"{h.a_ahead:.1%}")
        yield h2h
        yield from result.copies_notes()
    if result.ratings:
        board = Table(title=result.ratings_title())
        for column, justify in (("rank", "right"), ("agent", "left"), ("rating", "right"), ("95% CI", "right")):
            board.add_column(column, justify=justify)
        for rank, r in enumerate(result.ratings, 1):
            board.add_row(str(rank), r.name, f"{r.rating:+.0f}", format_rating_ci(r.ci95))
        yield board
        yield from result.rating_notes()
