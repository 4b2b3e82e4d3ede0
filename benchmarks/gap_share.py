"""The share of a gap that an agent closes, with a bootstrap interval, from one table's game records.

    sergeant-major evaluate --agents search,BASE,BASE:cheat --games 600 --seed 100000 --record games.jsonl
    python benchmarks/gap_share.py games.jsonl --agent search --base BASE --bound BASE:cheat
    python benchmarks/gap_share.py set1.jsonl set2.jsonl --agent search --base BASE --bound BASE:cheat  # pooled

Issue 29 asks how much of the gap between a search and the same search that sees every card
(``:cheat``, perfect inference) the belief model closes. At one table of the three, the agent's
margin over the base divided by the bound's margin over the base is that share; both margins
come from the same games, so their noise is shared and the interval of the ratio is narrower
than the two margins' intervals suggest. The interval is a 95% percentile bootstrap over the
duplicate groups (the games of one seed; ``--samples`` resamples, drawn by ``--seed``), as
evaluate's ratings' intervals are.

Reads the JSON Lines that ``evaluate --record`` writes (Rule book, section 11: each game's
``seed``, ``players`` and ``scores``); nothing in the file is run. Several files are pooled: the
games of one seed make one group, whichever file holds them. Prints the groups, both margins
(points a game, the mean over groups of each group's average, as evaluate's head to head) and
the share with its interval.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE))

from sergeant_major_env.arguments import COUNT, SEED  # noqa: E402

MAX_SAMPLES = 1_000_000
"""The most bootstrap resamples (drawn a few thousand at a time; their shares are kept)."""


def group_margins(paths: list[Path], agent: str, base: str, bound: str) -> np.ndarray:
    """float[groups, 2]: each duplicate group's average of the agent's and the bound's points
    minus the base's, over the group's games (the games in which all three sat), from one file
    of records or several. A one-line ValueError naming the file and line for anything that is
    not such a record."""
    sums: dict[int, list[float]] = {}
    for path in paths:
        _add_records(path, agent, base, bound, sums)
    if not sums:
        names = ", ".join(str(path) for path in paths)
        raise ValueError(f"{names}: no game with {agent}, {base} and {bound} at one table")
    return np.array([[a / n, b / n] for a, b, n in sums.values()])


def _add_records(path: Path, agent: str, base: str, bound: str, sums: dict[int, list[float]]) -> None:
    """Adds the records of ``path`` to ``sums`` (seed: [agent's, bound's margin summed, games])."""
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                game = json.loads(line)
                players, scores, seed = game["players"], game["scores"], game["seed"]
                if not (isinstance(players, list) and isinstance(scores, list) and len(players) == len(scores) == 3
                        and all(isinstance(p, str) for p in players)
                        and all(isinstance(s, int) and not isinstance(s, bool) for s in scores)
                        and isinstance(seed, int) and not isinstance(seed, bool)):
                    raise ValueError
            except (ValueError, TypeError, KeyError):
                raise ValueError(f"{path} line {number}: not a game record with seed, three players and three "
                                 f"integer scores (evaluate --record writes them)") from None
            points = dict(zip(players, scores))
            if not {agent, base, bound} <= points.keys():
                continue
            entry = sums.setdefault(seed, [0.0, 0.0, 0])
            entry[0] += points[agent] - points[base]
            entry[1] += points[bound] - points[base]
            entry[2] += 1


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("records", type=Path, nargs="+",
                        help="the game records (JSON Lines) of evaluate --record; several are pooled")
    parser.add_argument("--agent", required=True, help="the agent whose share is measured (default: none, required)")
    parser.add_argument("--base", required=True, help="the agent the gap starts from (default: none, required)")
    parser.add_argument("--bound", required=True,
                        help="the agent the gap ends at, e.g. BASE:cheat (default: none, required)")
    parser.add_argument("--samples", type=COUNT, default=10_000,
                        help=f"bootstrap resamples, at most {MAX_SAMPLES:,} (default: 10000)")
    parser.add_argument("--seed", type=SEED, default=0, help="the bootstrap's seed (default: 0)")
    options = parser.parse_args(argv)
    if options.samples > MAX_SAMPLES:
        parser.error(f"--samples: at most {MAX_SAMPLES:,}, got {options.samples:,}")
    if len({options.agent, options.base, options.bound}) < 3:
        parser.error("--agent, --base and --bound must be three different agents")
    for path in options.records:
        if not path.is_file():
            parser.error(f"records: {path} is not a file")
    try:
        margins = group_margins(options.records, options.agent, options.base, options.bound)
    except (ValueError, OSError, UnicodeDecodeError) as error:
        parser.error(str(error))
    agent_margin, bound_margin = margins.mean(axis=0)
    if bound_margin <= 0:
        parser.error(f"{options.bound} is not ahead of {options.base} ({bound_margin:+.2f}): there is no gap to close")
    rng = np.random.default_rng(options.seed)
    shares = np.empty(options.samples)
    step = max(1, 2_000_000 // len(margins))  # resamples drawn at a time: a few tens of MB at most
    for start in range(0, options.samples, step):
        count = min(step, options.samples - start)
        draws = margins[rng.integers(0, len(margins), (count, len(margins)))].mean(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            shares[start:start + count] = draws[:, 0] / draws[:, 1]
    low, high = np.percentile(shares[np.isfinite(shares)], [2.5, 97.5])
    print(f"{len(margins)} groups: {options.agent} over {options.base} {agent_margin:+.2f}, {options.bound} over "
          f"{options.base} {bound_margin:+.2f} points a game")
    print(f"{options.agent} closes {agent_margin / bound_margin:.1%} of the gap "
          f"[95% bootstrap over the groups, {options.samples} resamples: {low:.1%}, {high:.1%}]")


if __name__ == "__main__":
    main()
