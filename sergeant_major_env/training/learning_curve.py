"""`sergeant-major train`'s learning curve: the learner's duplicate-deal tables against fixed
opponents at every evaluation, and the curve drawn from them.

`play_learner_tables` plays the learner at the tables "learner, X, X" (X: each of `--eval-opponents`,
random and heuristic by default) on the same deals each time
([`sergeant_major_env.evaluation.play_tables`][], duplicate: each deal at every seating), so
that two evaluations differ by the learner only; each table's `group_means` (the learner's
mean points in each duplicate group, in group order) pair two evaluations deal by deal
(`sergeant-major exploit`'s gain). `plot_curve` draws `eval_history.json`: mean
points per game with 95% bands.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import sergeant_major_env.agents as agents
from sergeant_major_env import files
from sergeant_major_env.evaluation import TablePlan, play_tables

def play_learner_tables(learner, games: int, seed: int, rules, tables) -> dict:
    """Duplicate-deal tables "learner, X, X" for each X of `tables` (agents.make_agent names:
    the run's `--eval-opponents`): the learner's points with 95% CIs."""
    out = {}
    for opponent in tables:
        table = [learner, agents.make_agent(opponent), agents.make_agent(opponent)]
        # In this process (workers=1): a training run's process holds threads (its progress
        # bar, the logger's writer) that forked workers would copy mid-stride.
        result = play_tables(table, TablePlan(games=games, seed=seed, rules=rules, progress=False, workers=1),
                             names=["ppo", opponent, opponent + "#2"])
        stats = result.agent("ppo")
        out[opponent] = {"mean_points": stats.mean_points, "ci95": stats.ci95, "win_rate": stats.win_rate,
                         "mean_place": stats.mean_place, "games": result.games,
                         "group_means": result.group_points("ppo").tolist(),
                         "table": result.to_dict()}
    return out


def ci_text(ci) -> str:
    """A 95% interval as `[-1.2, +3.4]` (`[n/a]` when there is none)."""
    return "[n/a]" if not ci else f"[{ci[0]:+.1f}, {ci[1]:+.1f}]"


def plot_curve(history: list[dict], path: Path, title: str, tables) -> None:
    """learning_curve.png: the mean points at each table of `tables` (opponent names) against
    timesteps, with 95% bands."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 4.2))
    colors = ("tab:blue", "tab:red", "tab:green", "tab:purple", "tab:orange", "tab:brown", "tab:pink", "tab:gray")
    for opponent, color in zip(tables, colors):
        rows = [h for h in history if opponent in h]
        if not rows:
            continue
        x = np.array([h["timesteps"] for h in rows])
        mean = np.array([h[opponent]["mean_points"] for h in rows])
        low = np.array([(h[opponent]["ci95"] or [m, m])[0] for h, m in zip(rows, mean)])
        high = np.array([(h[opponent]["ci95"] or [m, m])[1] for h, m in zip(rows, mean)])
        axes.plot(x, mean, "o-", color=color, label=f"vs {opponent}, {opponent}")
        axes.fill_between(x, low, high, color=color, alpha=0.2)
    axes.axhline(0, color="black", linewidth=0.8)
    axes.set_xlabel("timesteps (learner decisions)")
    axes.set_ylabel("learner's mean points per game (95% CI)")
    axes.set_title(title)
    if axes.get_legend_handles_labels()[0]:
        axes.legend()
    figure.tight_layout()
    with files.atomic_write(path, "wb") as file:
        figure.savefig(file, format="png", dpi=120)
    plt.close(figure)
