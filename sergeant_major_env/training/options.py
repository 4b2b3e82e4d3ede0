"""train.py's options, checked: the argparse types, --resume's restored options, the output folder.

train.py declares every option in one block (its ``build_parser``); :func:`parse` reads a
command line with it. Every problem is one line on stderr and exit status 2
(:class:`OneLineParser`), found before anything is created:

* a value out of its range: the types :func:`integer`, :func:`number`, :func:`layer_sizes`,
  :func:`run_name` name what is allowed (``--help`` shows it too, see :class:`HelpFormatter`);
* with ``--resume RUN`` the run's own options come back from ``RUN/run.json``; an option given
  again with another value is an error naming both (only :data:`RESUME_MAY_CHANGE` may change);
* seeds the run derives from ``--seed`` beyond the one seed rule, an output folder that
  cannot be used.

No torch here (``check_device`` imports it when called), so ``--help`` and usage errors work
without the train extra.
"""

from __future__ import annotations

import argparse
import math
import os
import shlex
import sys
from pathlib import Path
from typing import Callable

import numpy as np

from sergeant_major_env import Rules
from sergeant_major_env.seeding import MAX_SEED

from . import run_folder
from .imitation import IMITATION_SEED

NOT_RUN_OPTIONS = ("option", "resume", "overwrite", "out", "name", "device", "no_progress")
"""Where and how this command runs, not what the run is: not restored by --resume (the rule
options, --option, are kept apart in run.json's "rules")."""
RESUME_MAY_CHANGE = {"total_timesteps", "eval_every", "eval_games", "final_eval_games", "checkpoint_every"}
"""The run's options a resumed run may change; any other one given again must equal the run's."""
OPTIONS_BEFORE_THEY_EXISTED = {"activation": "tanh"}
"""What a run recorded before an option existed had instead: a run.json without the option
resumes with this value (its checkpoint holds SB3's tanh networks), not today's default."""


# ============================================================================ the parser

class OneLineParser(argparse.ArgumentParser):
    """Usage errors in one line (``train.py: error: ...``, exit status 2), without the long usage."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (python {self.prog} --help lists every option)\n")


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """``--help``: each option's line of help, then its default and the values its type allows
    (so that neither is written twice: the option block is the one place of both)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        notes = []
        if action.nargs != 0 and action.default not in (None, [], argparse.SUPPRESS):
            notes.append(f"default {action.default}")
        if getattr(action.type, "allowed", None):
            notes.append(action.type.allowed)
        return action.help + (f" ({'; '.join(notes)})" if notes else "")


def integer(low: int, high: int | None = None):
    """An argparse ``type=``: an integer from ``low`` (to ``high``), named in the error."""
    allowed = f"an integer, {low} or more" if high is None else f"an integer from {low} to {high}"

    def convert(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"must be {allowed}, got {text!r}")
        return value

    convert.allowed = allowed
    return convert


def number(low: float, high: float = math.inf, low_open: bool = False):
    """An argparse ``type=``: a finite number in [low, high] (``low_open``: above low)."""
    if high == math.inf:
        allowed = f"a number above {low:g}" if low_open else f"a number, {low:g} or more"
    else:
        allowed = f"a number above {low:g} and at most {high:g}" if low_open else f"a number from {low:g} to {high:g}"

    def convert(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value < low or (low_open and value == low) or value > high:
            raise argparse.ArgumentTypeError(f"must be {allowed}, got {text!r}")
        return value

    convert.allowed = allowed
    return convert


def layer_sizes(text: str) -> list[int]:
    """``--net-arch``: comma-separated hidden layer sizes, each from 1 to 65536."""
    try:
        sizes = [int(x) for x in text.split(",")]
    except ValueError:
        sizes = []
    if not sizes or not all(1 <= size <= 65536 for size in sizes):
        raise argparse.ArgumentTypeError(f"must be hidden layer sizes separated by commas, each an integer from 1 "
                                         f"to 65536 (e.g. 128,128), got {text!r}")
    return sizes


layer_sizes.allowed = "sizes separated by commas, each 1 to 65536"


def run_name(text: str) -> str:
    """``--name``: a folder name (it makes runs/NAME)."""
    if not text or text in (".", "..") or "/" in text or os.sep in text:
        raise argparse.ArgumentTypeError(f"must be a folder name (no '/'; it makes runs/NAME), got {text!r}; "
                                         f"--out DIR takes a path")
    return text


# ============================================================================ parsing

def parse(build_parser: Callable[[], argparse.ArgumentParser], argv: list[str] | None = None) -> argparse.Namespace:
    """The checked options of ``argv`` (default ``sys.argv[1:]``), read with ``build_parser()``.

    Besides the parser's options: ``command`` (the command line), ``given`` (the options it
    gives), ``rules``, ``pool`` ({name: weight}), ``resume_run``, ``resume_checkpoints``,
    ``resume_note``, ``out_folder``, ``in_place`` (see :func:`plan_output_folder`) and
    ``run_options`` ({dest: value} of the options run.json keeps: all but :data:`NOT_RUN_OPTIONS`;
    the rule options are ``rules``)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    args.command = shlex.join([*parser.prog.split(), *argv])
    args.given = given_options(build_parser(), argv)
    names = run_option_names(build_parser())
    try:
        args.rules = Rules.from_strings(args.option)
        args.resume_run = args.resume_checkpoints = args.resume_note = None
        if args.resume:  # the run's own options (and rule options) replace the defaults
            restore_run_options(args, names)
        args.pool = parse_pool(args.opponents)
        check_derived_seeds(args)
        plan_output_folder(args)
    except ValueError as error:
        parser.error(str(error))
    args.run_options = {dest: getattr(args, dest) for dest in names}
    return args


def given_options(parser: argparse.ArgumentParser, argv: list[str]) -> dict:
    """{dest: value} of the options the command line gives (not the defaults)."""
    for action in parser._actions:  # no defaults: only what argv sets appears
        action.default = argparse.SUPPRESS
    return vars(parser.parse_args(argv))


def run_option_names(parser: argparse.ArgumentParser) -> list[str]:
    """The parser's destinations that describe the run (all but :data:`NOT_RUN_OPTIONS`), in order."""
    return [dest for dest in vars(parser.parse_args([])) if dest not in NOT_RUN_OPTIONS]


def flag_of(dest: str) -> str:
    return "--" + dest.replace("_", "-") if dest != "curriculum" else "--no-curriculum"


def restore_run_options(args: argparse.Namespace, names: list[str]) -> None:
    """--resume: the run's options (run.json), the command line's only where they may change."""
    run, candidates = run_folder.resume_candidates(Path(args.resume))
    args.resume_run, args.resume_checkpoints = run, candidates
    record = run_folder.read_run_record(run) or legacy_run_record(run, names)
    if record is None:
        args.resume_note = f"{run} has no run.json: resuming with the command line's options"
        return
    given = {dest: value for dest, value in args.given.items() if dest != "option"}
    saved = {**OPTIONS_BEFORE_THEY_EXISTED, **record["options"]}
    for dest, value in run_folder.merge_resumed_options(given, saved, RESUME_MAY_CHANGE, flag_of).items():
        if dest in vars(args) and dest != "given":
            setattr(args, dest, value)
    args.rules = restore_rules(args.given.get("option", []), record["rules"])


def restore_rules(given: list[str], saved: dict) -> Rules:
    """The resumed run's rule options; a given --option with another value is an error."""
    run_rules = Rules.from_dict(saved)
    wanted = Rules.from_strings(given)
    for name in (item.partition("=")[0].strip() for item in given):
        if getattr(wanted, name) != getattr(run_rules, name):
            raise ValueError(f"--option {name}={_option_text(getattr(wanted, name))} conflicts with the resumed run's "
                             f"{name}={_option_text(getattr(run_rules, name))}: leave it out to continue the run as "
                             f"it was, or start a new run")
    return run_rules


def _option_text(value) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def legacy_run_record(run: Path, names: list[str]) -> dict | None:
    """The options of a run from before run.json, from its summary.json, if it has one."""
    summary = run_folder.read_json_or_none(run / "summary.json")
    config = summary.get("config") if isinstance(summary, dict) else None
    if not isinstance(config, dict) or not isinstance(config.get("rules"), dict):
        return None
    options = {k: v for k, v in config.items() if k in names}
    if isinstance(options.get("net_arch"), str):
        options["net_arch"] = layer_sizes(options["net_arch"])
    return {"options": options, "rules": config["rules"]}


def check_derived_seeds(args: argparse.Namespace) -> None:
    """The seeds the run derives from --seed and --eval-seed stay within the one seed rule."""
    largest = args.seed + IMITATION_SEED + args.imitate_steps + args.total_timesteps + args.num_envs
    if largest > MAX_SEED:
        raise ValueError(f"--seed {args.seed} is too large: the run's games use seeds up to --seed + "
                         f"{largest - args.seed} ({largest}), above the largest seed {MAX_SEED}")
    if args.eval_seed + max(args.eval_games, args.final_eval_games) > MAX_SEED:
        raise ValueError(f"--eval-seed {args.eval_seed} is too large: the evaluation deals use seeds up to --eval-seed "
                         f"+ {max(args.eval_games, args.final_eval_games)}, above the largest seed {MAX_SEED}")


def plan_output_folder(args: argparse.Namespace) -> None:
    """Decide (and check) where the run writes; the folder is created only after every check.

    args.out_folder: the folder (None: a new runs/<timestamp>); args.in_place: resuming
    into the resumed run's own folder."""
    args.in_place = False
    if args.resume and args.resume_run is not None:
        target = Path(args.out) if args.out else Path("runs", args.name) if args.name else args.resume_run
        if target.resolve() == args.resume_run.resolve():
            if args.overwrite:
                raise ValueError(f"--overwrite would delete the run being resumed ({args.resume_run}); give a new "
                                 f"--out to continue it elsewhere")
            run_folder.check_can_create(target)
            args.out_folder, args.in_place = target, True
            return
    elif args.out is None and args.name is None:
        args.out_folder = None
        run_folder.check_can_create(Path("runs"))
        return
    else:
        target = Path(args.out) if args.out else Path("runs", args.name)
    run_folder.check_new_run_folder(target, args.overwrite)
    args.out_folder = target


def parse_pool(text: str) -> dict[str, float]:
    """'random=1,heuristic=2,self=2' -> {name: weight}; a name alone has weight 1."""
    pool: dict[str, float] = {}
    for item in (x.strip() for x in text.split(",")):
        if not item:
            continue
        name, sep, weight = item.rpartition("=") if "=" in item else (item, "", "1")
        try:
            w = float(weight)
        except ValueError:
            raise ValueError(f"--opponents: bad weight in {item!r} (weights are numbers >= 0)") from None
        if w < 0 or not np.isfinite(w):
            raise ValueError(f"--opponents: weights must be >= 0, got {item!r}")
        pool[name.strip()] = pool.get(name.strip(), 0.0) + w
    if not pool or sum(pool.values()) <= 0:
        raise ValueError(f"--opponents needs at least one opponent with a positive weight, got {text!r}")
    return pool


def check_device(text: str) -> None:
    """A one-line ValueError unless torch can use device ``text`` here (``auto`` always can)."""
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
