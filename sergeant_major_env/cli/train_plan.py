"""`sergeant-major train`'s command line read into a `Plan`: a checked `TrainConfig`,
with `--resume`'s run read back through the same checks, and the output folder planned.

The parser is built from `TrainConfig` (one place for every option's flag,
type, default, allowed values and help). `parse` reads a command line into a
`Plan`; every problem is one line on stderr and exit status 2 (`OneLineParser`),
found before anything is created:

* a value out of its range, named with what is allowed (`--help` shows it too);
* with `--resume RUN` the run's own options come back from `RUN/run.json` (read with a
  bounded size and nesting), checked exactly as the command line's are; an option given
  again with another value is an error naming both (only `RESUME_MAY_CHANGE` may change);
* an output folder that cannot be used.

No torch here (`check_device` imports it when called), so `--help` and usage errors work
without the train extra.
"""

from __future__ import annotations

import argparse
import dataclasses
import shlex
import sys
from pathlib import Path
from typing import Any

from sergeant_major_env.observation import OBSERVATION_SIZE
from sergeant_major_env.observation import VERSION as OBSERVATION_VERSION

from sergeant_major_env.rules import Rules

from sergeant_major_env.training import run_folder
from sergeant_major_env.training.train_config import LayerSizes, TrainConfig, flag_of, rule_text, run_option_names

from .. import arguments
from ..arguments import OneLineParser

RESUME_MAY_CHANGE = {"total_timesteps", "eval_every", "eval_games", "final_eval_games", "checkpoint_every"}
"""The run's options a resumed run may change; any other one given again must equal the run's."""
OPTIONS_BEFORE_THEY_EXISTED = {"activation": "tanh", "update_threads": 1}
"""What a run recorded before an option existed had instead: a run.json without the option
resumes with this value (its checkpoint holds SB3's tanh networks; its updates ran on one
thread), not today's default."""


@dataclasses.dataclass(frozen=True)
class Plan:
    """A checked command line: the run's `TrainConfig` and where it runs.

    `resume_run`: the resumed run's folder (None for a new run), `resume_checkpoints` its
    checkpoints to try in order, `resume_note` a line to print (a run without run.json),
    `earlier_commands` the command lines its run.json lists; `out_folder` where this
    command writes (None: a new runs/<timestamp>), `in_place`: into the resumed run's own
    folder."""

    config: TrainConfig
    command: str
    resume_run: Path | None = None
    resume_checkpoints: tuple[Path, ...] = ()
    resume_note: str | None = None
    earlier_commands: tuple[str, ...] = ()
    out_folder: Path | None = None
    in_place: bool = False


# ============================================================================ the parser

def build_parser(prog: str, description: str, epilog: str) -> OneLineParser:
    """The parser of every `TrainConfig` option (no
    defaults in its namespace: only what the command line gives)."""
    return arguments.build_parser(prog, TrainConfig, description, epilog)


# ============================================================================ parsing

def parse(parser: argparse.ArgumentParser, argv: list[str] | None = None) -> Plan:
    """The `Plan` of `argv` (default `sys.argv[1:]`), read with `parser`
    (`build_parser`); a problem is `parser.error` (one line, exit status 2)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    given = vars(parser.parse_args(argv))
    command = shlex.join([*parser.prog.split(), *argv])
    try:
        if given.get("resume"):
            plan = resumed_plan(given, command)
        elif given.get("init", "none") != "none" and "imitate" not in given:
            plan = Plan(TrainConfig(**given, imitate="none"), command)  # the policy is the warm start
        else:
            plan = Plan(TrainConfig(**given), command)
        return plan_output_folder(plan)
    except ValueError as error:
        parser.error(str(error))


def resumed_plan(given: dict[str, Any], command: str) -> Plan:
    """--resume: the run's options (run.json, checked as the command line's), the command
    line's only where they may change or are not part of the run."""
    run, candidates = run_folder.resume_candidates(Path(given["resume"]))
    where = f"--resume {given['resume']}: {run / run_folder.RUN_FILE}"
    try:
        record = run_folder.read_run_record(run)
    except ValueError as error:
        raise ValueError(f"--resume {given['resume']}: {error}") from None
    if record is None:
        record = legacy_run_record(run)
        where = f"--resume {given['resume']}: {run / 'summary.json'}"
    if record is None:
        return Plan(TrainConfig(**given), command, run, tuple(candidates),
                    f"{run} has no run.json: resuming with the command line's options")
    check_observation(record, where)
    saved = TrainConfig.from_stored(record["options"], record["rules"], where, before=OPTIONS_BEFORE_THEY_EXISTED)
    changes = merge_given(saved, given)
    return Plan(saved.replace(**changes), command, run, tuple(candidates),
                earlier_commands=tuple(record.get("commands", ())))


def merge_given(saved: TrainConfig, given: dict[str, Any]) -> dict[str, Any]:
    """The command line's options a resumed run takes: those not part of the run and those of
    `RESUME_MAY_CHANGE`; another one must equal the run's (else one line naming both)."""
    run_options = set(run_option_names())
    changes = {}
    for name, value in given.items():
        if name == "option":
            check_rules_agree(value, saved.rules)
        elif name not in run_options or name in RESUME_MAY_CHANGE:
            changes[name] = value
        elif value != getattr(saved, name):
            raise ValueError(f"{flag_of(name)} {_show(value)} conflicts with the resumed run's "
                             f"{_show(getattr(saved, name))}: leave it out to continue the run as it was, or start "
                             f"a new run")
    return changes


def _show(value: Any) -> str:
    return ",".join(str(v) for v in value) if isinstance(value, (list, tuple)) else str(value)


def check_rules_agree(given: list[str], run_rules: Rules) -> None:
    """A given --option with another value than the resumed run's is an error naming both."""
    wanted = Rules.from_strings(list(given))
    for name in (item.partition("=")[0].strip() for item in given):
        if getattr(wanted, name) != getattr(run_rules, name):
            raise ValueError(f"--option {name}={rule_text(getattr(wanted, name))} conflicts with the resumed run's "
                             f"{name}={rule_text(getattr(run_rules, name))}: leave it out to continue the run as "
                             f"it was, or start a new run")


def check_observation(record: dict, where: str) -> None:
    """The run's observations are this package's (its layout version and size)."""
    expected = {"version": OBSERVATION_VERSION, "size": OBSERVATION_SIZE}
    if "observation" in record and record["observation"] != expected:
        shown = repr(record["observation"])
        raise ValueError(f"{where}: the run was trained on observations {shown[:80]}; this package's are {expected} "
                         f"(start a new run)")


def legacy_run_record(run: Path) -> dict | None:
    """The options of a run from before run.json, from its summary.json, if it has one."""
    summary = run_folder.read_json_or_none(run / "summary.json")
    config = summary.get("config") if isinstance(summary, dict) else None
    if not isinstance(config, dict) or not isinstance(config.get("rules"), dict):
        return None
    options = {k: v for k, v in config.items() if k in run_option_names()}
    if isinstance(options.get("net_arch"), str):
        try:
            options["net_arch"] = LayerSizes().parse(options["net_arch"])
        except ValueError:
            pass  # refused by the checks, naming the option
    return {"options": options, "rules": config["rules"]}


def plan_output_folder(plan: Plan) -> Plan:
    """Decide (and check) where the run writes; the folder is created only after every check."""
    config, run = plan.config, plan.resume_run
    if config.resume and run is not None:
        target = Path(config.out) if config.out else Path("runs", config.name) if config.name else run
        if target.resolve() == run.resolve():
            if config.overwrite:
                raise ValueError(f"--overwrite would delete the run being resumed ({run}); give a new "
                                 f"--out to continue it elsewhere")
            run_folder.check_can_create(target)
            return dataclasses.replace(plan, out_folder=target, in_place=True)
    elif config.out is None and config.name is None:
        run_folder.check_can_create(Path("runs"))
        return plan
    else:
        target = Path(config.out) if config.out else Path("runs", config.name)
    run_folder.check_new_run_folder(target, config.overwrite)
    return dataclasses.replace(plan, out_folder=target)


def check_device(text: str) -> None:
    """A one-line ValueError unless torch can use device `text` here (`auto` always can)."""
    import torch

    if text == "auto":
        return
    try:
        device = torch.device(text)
    except (RuntimeError, ValueError):
        raise ValueError(f"argument --device: must be cpu, cuda, cuda:N, mps or auto, got {text!r}") from None
    if device.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0:
            raise ValueError(f"argument --device: {text!r}, but torch sees no CUDA GPU on this machine; use --device cpu")
        if device.index is not None and device.index >= count:
            raise ValueError(f"argument --device: {text!r}, but torch sees {count} CUDA GPU(s) (cuda:0 to "
                             f"cuda:{count - 1})")
    elif device.type == "mps" and not torch.backends.mps.is_available():
        raise ValueError(f"argument --device: {text!r}, but MPS is not available on this machine; use --device cpu")
    elif device.type not in ("cpu", "cuda", "mps"):
        raise ValueError(f"argument --device: must be cpu, cuda, cuda:N, mps or auto, got {text!r}")
