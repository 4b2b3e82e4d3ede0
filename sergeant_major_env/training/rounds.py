"""Rounds of search then distil (expert iteration): `sergeant-major distill rounds`.

Round k starts from the policy of round k-1 (round `from_round`, 0 by default: `--init`, the
shipped `learned` by default) and runs three stages, each kept on disk as it finishes. A run
that continues a kept round (`--init learned-r2 --from-round 2`) numbers its rounds on from
it (round 3, 4, ...), so its label games follow that round's and never replay its deals:

1. **labels**: the policy plays `games` games in all three seats and the search with that
   policy inside (`teacher`, by default `pimc:rollout={policy}`) values every legal action
   at each decision with a real choice (`distill.make_labels`, in shards on every core).
   Round k plays the deals `seed + (k-1) * games` on: no two rounds label the same deal, and
   the default seed is far from every evaluation's;
2. **fit**: the policy of round k-1 fitted to round k's labels (`distill.fit_policy`, the
   options of `distill fit`): round k's policy, a code-free policy file in `OUT/round-k`;
3. **tables**: round k's policy measured on fresh duplicate deals (`table_seed`): head to
   head against round k-1's policy (`X,previous,heuristic`) and against two `pimc`
   (`X,pimc,pimc`), each with its 95% interval and the evaluate command that repeats it.

`OUT/rounds.json` records the plan and, per round, each finished stage's command and result:
the same command continues a stopped run at the stage it stopped in (a labels stage at its
next shard; labels that `distill labels` made with the same options in `OUT/round-K/labels`
are taken as they are); a folder of other options is refused in one line. `OUT/rounds.png` plots the
rounds.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
import time
from pathlib import Path
from typing import Any, Callable

from sergeant_major_env import files
from sergeant_major_env.rules import Rules

from . import distill

ROUNDS_FILE = "rounds.json"
ROUNDS_PLOT = "rounds.png"
ROUNDS_BYTES, ROUNDS_DEPTH = 16 * 2**20, 10
"""The largest `rounds.json` read (a round takes about 3 KB) and its deepest nesting."""
POLICY_MARK = "{policy}"
"""Where the teacher's spec names the round's starting policy."""
STAGES = ("labels", "fit", "tables")


@dataclasses.dataclass(frozen=True)
class RoundsPlan:
    """What `distill rounds` does (the module docstring); `rounds.json` keeps it."""

    rounds: int = 2
    """Rounds of labels, fit and tables (this run makes rounds from_round+1 .. from_round+rounds)."""
    from_round: int = 0
    """The round `init` is (0: a policy from outside the rounds; 2 for `learned-r2`, whose labels
    played the seeds of rounds 1 and 2): the first round made here is from_round+1."""
    games: int = 1400
    """Label games a round (about 750 labels a game of 18 deals)."""
    init: str = "learned"
    """The policy of round 0: learned or learned-ppo (shipped), a run folder or a policy file."""
    teacher: str = f"pimc:rollout={POLICY_MARK}"
    """The search that labels, a pimc spec; `{policy}` stands for the round's starting policy."""
    shard_games: int = 20
    """Label games per shard (the unit of resuming)."""
    seed: int = distill.LabelPlan.seed
    """Round k's label games play the engine seeds `seed + (k-1) * games` on."""
    table_games: int = 600
    """Games per measuring table."""
    table_seed: int = distill.CURVE_SEED
    """The measuring tables' deals (as evaluate's --seed; not the labels')."""
    rules: Rules = Rules()
    fit: distill.FitOptions = distill.FitOptions()

    def check(self, out: Path) -> "RoundsPlan":
        """This plan, or a one-line ValueError (before any work)."""
        if not isinstance(self.rounds, int) or not 1 <= self.rounds <= 100:
            raise ValueError(f"rounds must be an integer in 1..100, got {self.rounds!r}")
        if not isinstance(self.from_round, int) or not 0 <= self.from_round <= 1000:
            raise ValueError(f"--from-round must be an integer in 0..1000 (the round --init is), "
                             f"got {self.from_round!r}")
        if POLICY_MARK not in self.teacher:
            raise ValueError(f"the teacher must name the round's policy as {POLICY_MARK} (e.g. "
                             f"pimc:rollout={POLICY_MARK}), got {self.teacher!r}")
        for name, value in (("--out", str(out)), ("--init", self.init)):
            if any(mark in value for mark in (",", ":")):
                raise ValueError(f"{name} may not hold ',' or ':' (its policies are named ppo:PATH in agent "
                                 f"specs), got {value!r}")
        self._check_init_apart(out)
        if not isinstance(self.table_games, int) or not 6 <= self.table_games <= 1_000_000:
            raise ValueError(f"table games must be an integer in 6..1000000, got {self.table_games!r}")
        self.fit.check()
        for k in self.numbers():
            self.label_plan(out, k).check()  # every round's seeds in range
        return self

    def numbers(self) -> range:
        """The rounds this plan makes: from_round+1 .. from_round+rounds."""
        return range(self.from_round + 1, self.from_round + self.rounds + 1)

    def _check_init_apart(self, out: Path) -> None:
        """A one-line ValueError when --init is --out or inside it: the run writes its round
        folders there (round k's policy into OUT/round-K), so the policy round 1 starts from
        could be replaced while the rounds record it as their start."""
        from sergeant_major_env.agents.learned import SHIPPED_POLICIES

        if self.init in SHIPPED_POLICIES:
            return
        init, target = Path(self.init).resolve(), out.resolve()
        if init == target or target in init.parents:
            raise ValueError(f"--init {self.init} is {'--out' if init == target else 'inside --out'} {out}, whose "
                             f"round folders this run writes; give a policy outside it")

    def policy(self, out: Path, k: int) -> str:
        """The agent spec of round k's policy (round from_round: `init`, a shipped name or `ppo:PATH`)."""
        from sergeant_major_env.agents.learned import SHIPPED_POLICIES

        if k == self.from_round:
            return self.init if self.init in SHIPPED_POLICIES else f"ppo:{self.init}"
        return f"ppo:{round_folder(out, k)}"

    def label_plan(self, out: Path, k: int) -> distill.LabelPlan:
        player = self.policy(out, k - 1)
        return distill.LabelPlan(teacher=self.teacher.replace(POLICY_MARK, player), player=player, games=self.games,
                                 shard_games=self.shard_games, seed=self.seed + (k - 1) * self.games,
                                 rules=self.rules)

    def tables(self, out: Path, k: int) -> dict[str, tuple[str, str]]:
        """{name: the other two seats}: the tables that measure round k's policy."""
        return {"head_to_head": (self.policy(out, k - 1), "heuristic"), "vs_pimc": ("pimc", "pimc")}

    def fit_command(self, out: Path, k: int) -> str:
        """The `distill fit` command that makes round k's policy from its labels."""
        words = ["sergeant-major", "distill", "fit", "--labels", str(labels_folder(out, k)), "--init",
                 _source(self, out, k - 1), "--out", str(round_folder(out, k))]
        for field in dataclasses.fields(distill.FitOptions):
            value = getattr(self.fit, field.name)
            if value != getattr(distill.FitOptions(), field.name):
                words += ["--" + field.name.replace("_", "-"), str(value)]
        return shlex.join(words)

    def to_dict(self) -> dict[str, Any]:
        fields = {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}
        return {**fields, "rules": self.rules.to_dict(), "fit": dataclasses.asdict(self.fit)}


def round_folder(out: Path, k: int) -> Path:
    return out / f"round-{k}"


def labels_folder(out: Path, k: int) -> Path:
    return round_folder(out, k) / "labels"


def _source(plan: RoundsPlan, out: Path, k: int) -> str:
    """Round k's policy as `distill fit --init` takes it."""
    return plan.init if k == plan.from_round else str(round_folder(out, k))


def read_rounds(out: Path, plan: RoundsPlan) -> list[dict[str, Any]]:
    """The rounds recorded in `out` (none for a new or empty folder); a one-line ValueError for
    a folder of other options or one that holds other files."""
    path = out / ROUNDS_FILE
    if not path.exists() and not path.is_symlink():
        others = [entry.name for entry in out.iterdir() if not (entry.is_dir() and re.fullmatch(r"round-\d+", entry.name))] \
            if out.is_dir() else []
        if others:  # round-K folders alone are allowed: labels made by distill labels are continued
            raise ValueError(f"{out} holds no {ROUNDS_FILE} but other files ({', '.join(sorted(others)[:3])}): "
                             f"choose a new or empty --out")
        return []
    data = files.read_json(path, ROUNDS_BYTES, ROUNDS_DEPTH, what="rounds file")
    try:
        earlier, rounds = data["plan"], data["rounds"]
        if not isinstance(earlier, dict) or not all(isinstance(row["round"], int) for row in rounds):
            raise ValueError("its plan or rounds are not those of distill rounds")
    except (ValueError, KeyError, TypeError) as error:
        raise ValueError(f"{files.short_path(path)} is not a rounds file this package can continue: "
                         f"{error}") from None
    now, default = plan.to_dict(), RoundsPlan().to_dict()
    differ = sorted(key for key, value in now.items()  # a key a file before it was added holds its default
                    if key != "rounds" and earlier.get(key, default[key]) != value)
    if differ:
        raise ValueError(f"{out} holds rounds run with other options ({', '.join(differ)}); use the same options "
                         f"to continue them (--rounds may grow), or another --out")
    return rounds


def run_rounds(plan: RoundsPlan, out: Path, workers: int | None = None, progress: bool = False,
               on_stage: Callable[[int, str, dict[str, Any]], None] = lambda k, stage, result: None,
               on_labels: Callable[[int], None] = lambda count: None) -> list[dict[str, Any]]:
    """Run the stages of `plan` not yet recorded in `out` (the module docstring), writing
    `rounds.json` after each; `on_stage(k, stage, result)` is told of each finished stage.
    Returns every round's record."""
    from sergeant_major_env.agents.learned import policy_source
    from sergeant_major_env.agents.policy_file import load_policy, save_network
    from sergeant_major_env.processes import available_cpus

    rounds = read_rounds(out, plan)
    out.mkdir(parents=True, exist_ok=True)
    workers = available_cpus() if workers is None else workers

    def record(k: int, stage: str, result: dict[str, Any]) -> None:
        row = next((row for row in rounds if row["round"] == k), None)
        if row is None:
            row = {"round": k}
            rounds.append(row)
        row[stage] = result
        rounds.sort(key=lambda row: row["round"])
        files.write_json(out / ROUNDS_FILE, {"plan": plan.to_dict(), "rounds": rounds})
        on_stage(k, stage, result)

    for k in plan.numbers():
        done = next((row for row in rounds if row["round"] == k), {})
        if "labels" not in done:
            label_plan = plan.label_plan(out, k)
            made = distill.make_labels(labels_folder(out, k), label_plan, workers, on_labels=on_labels)
            count = sum(distill.shard_rows(distill.shard_path(labels_folder(out, k), shard))
                        for shard in range(label_plan.shards))
            record(k, "labels", {"command": label_plan.command(labels_folder(out, k)), "labels": count,
                                 "teacher": label_plan.teacher, "player": label_plan.player,
                                 "seconds_this_run": made["seconds"]})
        if "fit" not in done:
            start = time.perf_counter()
            source = _source(plan, out, k - 1)
            network, metadata = load_policy(policy_source(source))
            labels = distill.load_labels([labels_folder(out, k)])
            distill.check_held_out(labels, plan.fit)
            history = distill.fit_policy(network, labels, plan.fit)
            label_plan = plan.label_plan(out, k)
            made = {"from": source, "labels": [str(labels_folder(out, k))], "label_count": int(labels["action"].size),
                    "label_commands": [label_plan.command(labels_folder(out, k))], "teachers": [label_plan.teacher],
                    "players": [label_plan.player], "options": dataclasses.asdict(plan.fit), "history": history}
            command = plan.fit_command(out, k)
            save_network(network, round_folder(out, k), metadata["network"],
                         distill.fitted_metadata(metadata, plan.rules, command, made))
            record(k, "fit", {"command": command, "label_count": made["label_count"],
                              "holdout_agreement": history[-1]["holdout_agreement"] if history else None,
                              "seconds": time.perf_counter() - start})
        if "tables" not in done:
            tables = distill.measure_tables(round_folder(out, k), plan.tables(out, k), plan.table_games,
                                            plan.table_seed, plan.rules, workers, progress)
            record(k, "tables", tables)
    return rounds


def plot_rounds(rounds: list[dict[str, Any]], plan: RoundsPlan, path: Path) -> None:
    """rounds.png: per round, the margin over the previous round's policy and the mean points
    against two `pimc`, with 95% intervals."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    measured = [row for row in rounds if "tables" in row and row["round"] in plan.numbers()]
    figure, axes = plt.subplots(figsize=(7, 4.2))
    for key, mean_key, ci_key, color, label in (
            ("head_to_head", "margin", "margin_ci95", "tab:blue", "head to head: margin over the previous round"),
            ("vs_pimc", "mean_points", "ci95", "tab:red", "mean points at X,pimc,pimc")):
        x = [row["round"] for row in measured]
        mean = [row["tables"][key][mean_key] for row in measured]
        low = [(row["tables"][key][ci_key] or [m, m])[0] for row, m in zip(measured, mean)]
        high = [(row["tables"][key][ci_key] or [m, m])[1] for row, m in zip(measured, mean)]
        axes.errorbar(x, mean, yerr=[[m - lo for m, lo in zip(mean, low)], [hi - m for m, hi in zip(mean, high)]],
                      fmt="o-", color=color, capsize=4, label=label)
    axes.axhline(0, color="black", linewidth=0.8)
    axes.set_xlabel("round")
    axes.set_xticks([row["round"] for row in measured])
    axes.set_ylabel("points per game of round k's policy (95% CI)")
    axes.set_title(f"Search then distil from {plan.init}: {plan.games} label games a round, "
                   f"{plan.table_games} games a table")
    axes.legend()
    figure.tight_layout()
    with files.atomic_write(path, "wb") as file:
        figure.savefig(file, format="png", dpi=120)
    plt.close(figure)
