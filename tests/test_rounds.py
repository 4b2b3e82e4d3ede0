"""``sergeant-major distill rounds`` (issue 29, item 3): rounds of search then distil, each
stage kept as it finishes, continued by the same command, other options refused."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import needs

from sergeant_major_env.rules import Rules
from sergeant_major_env.training import distill, rounds

needs("torch")

ROOT = Path(__file__).resolve().parents[1]
TINY = rounds.RoundsPlan(rounds=1, games=4, teacher="pimc:worlds=2:rollout={policy}", shard_games=2, seed=5,
                         table_games=6, rules=Rules(num_deals=1), fit=distill.FitOptions(epochs=1))


def test_rounds_chain_policies_on_fresh_deals_and_continue_where_they_stopped(tmp_path):
    out = tmp_path / "rounds"
    stages = []
    rounds.run_rounds(TINY.check(out), out, workers=1, on_stage=lambda k, stage, result: stages.append((k, stage)))
    assert stages == [(1, "labels"), (1, "fit"), (1, "tables")]
    # Round 2 starts from round 1's policy: it plays the games, the search rolls out with it,
    # on the next deals (no deal labelled twice); the same command with --rounds 2 runs it alone.
    two = TINY.__class__(**{**TINY.__dict__, "rounds": 2})
    stages.clear()
    records = rounds.run_rounds(two.check(out), out, workers=1,
                                on_stage=lambda k, stage, result: stages.append((k, stage)))
    assert stages == [(2, "labels"), (2, "fit"), (2, "tables")]
    first, second = (distill.read_manifest(rounds.labels_folder(out, k)) for k in (1, 2))
    assert (first.player, first.teacher, first.seed) == ("learned", "pimc:worlds=2:rollout=learned", 5)
    assert (second.player, second.teacher, second.seed) == (f"ppo:{out}/round-1",
                                                            f"pimc:worlds=2:rollout=ppo:{out}/round-1", 5 + 4)
    saved = json.loads((out / rounds.ROUNDS_FILE).read_text())
    assert saved["rounds"] == records and [row["round"] for row in records] == [1, 2]
    head = records[1]["tables"]["head_to_head"]
    assert head["command"] == (f"sergeant-major evaluate --agents ppo:{out}/round-2,ppo:{out}/round-1,heuristic "
                               f"--games 6 --seed 100000 --option num_deals=1")
    assert records[1]["fit"]["command"].startswith(f"sergeant-major distill fit --labels {out}/round-2/labels "
                                                   f"--init {out}/round-1 --out {out}/round-2")
    metadata = json.loads((out / "round-2" / "policy.json").read_text())
    assert metadata["training"]["distilled"]["from"] == str(out / "round-1")
    stages.clear()
    rounds.run_rounds(two, out, workers=1, on_stage=lambda k, stage, result: stages.append((k, stage)))
    assert stages == []  # all done: nothing runs again
    with pytest.raises(ValueError, match="other options \\(games\\)"):
        rounds.read_rounds(out, TINY.__class__(**{**TINY.__dict__, "games": 6}))


@pytest.mark.slow  # over 2.5 s warm: the full suite runs it, `-m "not slow"` leaves it out
def test_a_folder_of_other_files_and_bad_plans_are_refused_in_one_line(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="holds no rounds.json but other files \\(notes.txt\\)"):
        rounds.read_rounds(tmp_path, TINY)
    with pytest.raises(ValueError, match="must name the round's policy as \\{policy\\}"):
        TINY.__class__(**{**TINY.__dict__, "teacher": "pimc:rollout=learned"}).check(tmp_path / "x")
    with pytest.raises(ValueError, match="--out may not hold ',' or ':'"):
        TINY.check(tmp_path / "a,b")
    # Issue 50: an --init inside --out is a round folder the run writes (round 1's fit replaces it).
    for init in (tmp_path / "x", tmp_path / "x" / "round-1"):
        with pytest.raises(ValueError, match=f"^--init {init} is (--out|inside --out) {tmp_path / 'x'}, whose round "
                                             f"folders this run writes; give a policy outside it$"):
            TINY.__class__(**{**TINY.__dict__, "init": str(init)}).check(tmp_path / "x")
    TINY.__class__(**{**TINY.__dict__, "init": str(tmp_path / "run")}).check(tmp_path / "x")
    assert TINY.__class__(init=str(tmp_path / "run")).policy(tmp_path, 0) == f"ppo:{tmp_path / 'run'}"
    assert TINY.policy(tmp_path, 0) == "learned" and TINY.policy(tmp_path, 3) == f"ppo:{tmp_path / 'round-3'}"
    refused = subprocess.run([sys.executable, "-m", "sergeant_major_env", "distill", "rounds", "--out",
                              str(tmp_path / "new"), "--teacher", "heuristic:{policy}"], cwd=ROOT,
                             capture_output=True, text=True)
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1
    assert "heuristic takes no options" in refused.stderr
    assert not (tmp_path / "new").exists()


def test_a_run_from_a_kept_round_numbers_its_rounds_on_and_labels_the_next_deals(tmp_path):
    """--from-round 2 --init learned-r2 (issue 51, item 2): round 3 starts from the ladder's
    round 2, its labels play the seeds after round 2's (seed + 2 * games on), its head-to-head
    table is against learned-r2; a rounds file of before the option continues as from round 0."""
    out = tmp_path / "rounds"
    plan = TINY.__class__(**{**TINY.__dict__, "from_round": 2, "init": "learned-r2"}).check(out)
    assert list(plan.numbers()) == [3]
    assert plan.label_plan(out, 3).seed == 5 + 2 * 4 and plan.label_plan(out, 3).player == "learned-r2"
    assert plan.tables(out, 3)["head_to_head"] == ("learned-r2", "heuristic")
    assert plan.policy(out, 3) == f"ppo:{out}/round-3"
    assert plan.fit_command(out, 3).startswith(f"sergeant-major distill fit --labels {out}/round-3/labels "
                                               f"--init learned-r2 --out {out}/round-3")
    out.mkdir()
    old = {key: value for key, value in TINY.to_dict().items() if key != "from_round"}
    (out / rounds.ROUNDS_FILE).write_text(json.dumps({"plan": old, "rounds": []}))
    assert rounds.read_rounds(out, TINY) == []
    with pytest.raises(ValueError, match="other options \\(from_round, init\\)"):
        rounds.read_rounds(out, plan)
    with pytest.raises(ValueError, match="--from-round must be an integer in 0..1000"):
        TINY.__class__(**{**TINY.__dict__, "from_round": -1}).check(out)
