"""Every subcommand's options, declared one way: a typed, frozen dataclass whose fields are made
by `opt` (CleanRL's `Args`, shared by every command).

A field declares one option: its type (the annotation), its default, the values it allows (a
`Check`), its flag, its group of `--help` and how the command line gives it; the
attribute docstring under the field is its line of `--help`. `build_parser` builds the
command line's parser from the dataclass, `parse_config` reads a command line into it:

```text
@dataclasses.dataclass(frozen=True)
class Options:
    games: int = games(120)
    \"\"\"games per table\"\"\"
    seed: int = seed()
    \"\"\"group j plays engine seed S+j\"\"\"

options = parse_config(build_parser("sergeant-major x", Options), Options, argv)
```

Every problem is one line on stderr and exit status 2 (`OneLineParser`): a value a
check refuses names the option and what is allowed. The options many commands share
(`--games`, `--seed`, `--workers`, `--no-progress`, `--overwrite`, `--option`) are
made by one field factory each (`games`, `seed`, `workers`,
`no_progress`, `overwrite`, `rule_options`), so their flag, check and help are
the same in every command.

No torch, no agents here: `--help` and usage errors work without the train extra.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
from typing import Any, Callable, Sequence

from .limits import is_integer, is_number
from .processes import available_cpus
from .rules import Rules
from .seeding import MAX_SEED, SEED_RULE

MAX_TEXT = 1000
"""Characters of a text option (an agent list, a path), at most."""


# ============================================================================ checks

class Check:
    """The values an option allows: `check` takes a value of the option's type (from the
    parser or from run.json) and returns it normalised, or raises a one-line ValueError;
    `parse` reads the command line's text first. As an argparse `type=` (`__call__`)
    the error becomes a usage error."""

    allowed = "a value"
    """What is allowed, in words."""
    shown = True
    """Whether `--help` shows `allowed` after the option's help."""

    convert: Callable[[str], Any] | None = None
    """How `parse` reads a number from the command line's text (`int`, `float`);
    None: the text is the value."""

    def check(self, value: Any) -> Any:
        return value

    def parse(self, text: str) -> Any:
        if self.convert is None:
            return self.check(text)
        try:
            return self.check(self.convert(text))
        except ValueError:  # not a number, or out of range: the refusal shows the text given
            raise self.refuse(text) from None

    def refuse(self, value: Any) -> ValueError:
        shown = repr(value)
        return ValueError(f"must be {self.allowed}, got {shown if len(shown) <= 80 else shown[:77] + '...'}")

    def __call__(self, text: str) -> Any:
        try:
            return self.parse(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None


class Integer(Check):
    """An integer from `low` (to `high`)."""

    convert = int

    def __init__(self, low: int, high: int | None = None) -> None:
        self.low, self.high = low, high
        self.allowed = f"an integer, {low} or more" if high is None else f"an integer from {low} to {high}"

    def check(self, value: Any) -> int:
        if not is_integer(value) or value < self.low or (self.high is not None and value > self.high):
            raise self.refuse(value)
        return int(value)


class Number(Check):
    """A finite number in [low, high] (`low_open`: above low); `what` names it in the refusal
    (`"a number of seconds"`)."""

    convert = float

    def __init__(self, low: float, high: float = math.inf, low_open: bool = False, what: str = "a number") -> None:
        self.low, self.high, self.low_open = low, high, low_open
        if high == math.inf:
            self.allowed = f"{what} above {low:g}" if low_open else f"{what}, {low:g} or more"
        else:
            self.allowed = (f"{what} above {low:g} and at most {high:g}" if low_open
                            else f"{what} from {low:g} to {high:g}")

    def check(self, value: Any) -> float:
        if not is_number(value) or not math.isfinite(value) \
                or value < self.low or (self.low_open and value == self.low) or value > self.high:
            raise self.refuse(value)
        return float(value)


class Seed(Check):
    """A seed by the one seed rule (`sergeant_major_env.seeding`)."""

    allowed = SEED_RULE

    def check(self, value: Any) -> int:
        if not is_integer(value) or not 0 <= value <= MAX_SEED:
            raise self.refuse(value)
        return int(value)

    def parse(self, text: str) -> int:
        try:
            return self.check(int(text))
        except ValueError:
            raise self.refuse(text) from None


class Choice(Check):
    """One of `choices`, all texts or all integers (argparse shows them as its own `choices`)."""

    def __init__(self, *choices: Any) -> None:
        self.choices = choices
        self.allowed = "one of " + ", ".join(map(str, choices))

    def check(self, value: Any) -> Any:
        if value not in self.choices or type(value) is not type(self.choices[0]):
            raise self.refuse(value)
        return value


class Flag(Check):
    """true or false (a flag on the command line)."""

    allowed = "true or false"

    def check(self, value: Any) -> bool:
        if not isinstance(value, bool):
            raise self.refuse(value)
        return value


class Text(Check):
    """One line of text, 1 to `MAX_TEXT` characters (`optional`: or none)."""

    shown = False  # "one line of text" says nothing a reader needs

    def __init__(self, optional: bool = False) -> None:
        self.optional = optional
        self.allowed = f"one line of text of at most {MAX_TEXT} characters" + (" (or none)" if optional else "")

    def check(self, value: Any) -> str | None:
        if value is None and self.optional:
            return None
        if not isinstance(value, str) or not value or len(value) > MAX_TEXT or "\n" in value or "\r" in value \
                or "\0" in value:
            raise self.refuse(value)
        return value




class RuleOptions(Check):
    """`--option NAME=VALUE ...`: rule options of RULES.md section 9, as text (`Rules.from_strings`
    reads and checks them, where the command says how a bad one is reported)."""

    allowed = f"NAME=VALUE rule options (Rule book, section 9: {', '.join(Rules.names())})"
    shown = False  # the option's help says it

    def check(self, value: Any) -> tuple[str, ...]:
        if not isinstance(value, (list, tuple)) or not all(isinstance(item, str) for item in value) \
                or len(value) > 100:
            raise self.refuse(value)
        return tuple(value)  # Rules.from_strings reads them, in the command (its messages name the rule)

    def parse(self, text: str) -> str:  # one item of the list (argparse extends it)
        return Text().check(text)



class Plain(Check):
    """Any `convert` value (`int` or `float`), read as argparse's `type=int` / `type=float`
    reads it: the command checks its range, with a message naming what it allows."""

    shown = False

    def __init__(self, convert: type) -> None:
        self.convert_to = convert
        self.allowed = "an integer" if convert is int else "a number"

    def check(self, value: Any) -> Any:
        if not (is_integer if self.convert_to is int else is_number)(value):
            raise self.refuse(value)
        if self.convert_to is int:
            return int(value)
        return value if isinstance(value, (int, float)) else float(value)  # numpy's as Python's

    def parse(self, text: str) -> Any:
        try:
            return self.convert_to(text)
        except ValueError:
            raise ValueError(f"invalid {self.convert_to.__name__} value: {text!r}") from None


class Texts(Check):
    """One or more lines of text (`--labels A B`), each as `Text` allows."""

    allowed = f"lines of text of at most {MAX_TEXT} characters each"
    shown = False

    def check(self, value: Any) -> tuple[str, ...] | None:
        if value is None:
            return None
        if not isinstance(value, (list, tuple)) or len(value) > 10_000:
            raise self.refuse(value)
        return tuple(Text().check(item) for item in value)

    def parse(self, text: str) -> str:  # one item of the list
        return Text().check(text)


class Parsed(Check):
    """The text parsed by `function` (a ValueError or argparse.ArgumentTypeError refuses it
    with the function's message); a value already parsed is kept."""

    shown = False

    def __init__(self, function: Callable[[str], Any], allowed: str) -> None:
        self.function, self.allowed = function, allowed

    def parse(self, text: str) -> Any:
        try:
            return self.function(text)
        except argparse.ArgumentTypeError as error:
            raise ValueError(str(error)) from None


# ============================================================================ the fields

def opt(default: Any, check: Check, group: str | None = None, *, flag: str | None = None,
        metavar: str | None = None, kind: str = "value", run: bool = True, required: bool = False,
        help: str | None = None) -> Any:
    """An option's dataclass field: `default`, its `check`, its `group` of `--help` (None:
    the parser's own options), its `flag` (default `--the-name`; several spellings separated by
    spaces), how the command line gives it (`kind`: "value", "flag" (present: true), "no-flag"
    (present: false), "on-off" (`--x`/`--no-x`), "list" (values that extend one another),
    "values" (`nargs="+"`, the last flag's), "positional"), `required` (the command line must
    give it; a positional that is not required may be left out), `help` (the line of `--help`
    of a field without a docstring: the shared options') and `run` (train only: part of
    what the run is, kept in run.json)."""
    return dataclasses.field(default=default, metadata={
        "check": check, "group": group, "flag": flag, "metavar": metavar, "kind": kind, "run": run,
        "required": required, "help": help})


SEED = Seed()
"""The check of every `--seed`: the one seed rule."""
GAMES = Integer(1)
"""The check of every `--games`: 1 or more (the one refusal, `must be an integer, 1 or more`)."""
WORKERS = Integer(1)
"""The check of every `--workers` without a cap of its own (`workers`'s `most`)."""
WHOLE = Plain(int)
"""The check of the integer options whose range the command checks."""
REAL = Plain(float)
"""The check of the number options whose range the command (or its library) checks."""
RULE_OPTIONS = RuleOptions()
"""The check of every `--option`."""
FLAG = Flag()
COUNT = Integer(1)
"""The check of a benchmark's counts (games, rounds, resamples): 1 or more, refused as `--games` is."""
SECONDS = Number(0.01, 3600.0, what="a number of seconds")
"""The check of a benchmark's `--seconds` (one timed run): from 0.01 to 3600 (NaN, infinity and
1e-9 are usage errors)."""
WORKERS_HELP = "processes on this machine (the results are the same for any W; 1: this process only)"
NO_PROGRESS_HELP = "no progress bar"


def games(default: int | None, group: str | None = None, **more: Any) -> Any:
    """`--games N`, 1 or more (`GAMES`; its docstring says what a game counts for).
    `more`: `opt`'s other arguments (`required`, `run`)."""
    return opt(default, GAMES, group, metavar="N", **more)


def seed(default: int | None = 0, group: str | None = None, **more: Any) -> Any:
    """`--seed S`: the one seed rule (`SEED`); the docstring says what it seeds."""
    return opt(default, SEED, group, metavar="S", **more)


def workers(group: str | None = None, most: int | None = None, **more: Any) -> Any:
    """`--workers W`: processes on this machine, one per CPU by default; 1 or more
    (`WORKERS`), at most `most` where a command has a cap (the same refusal's shape)."""
    check = WORKERS if most is None else Integer(1, most)
    return opt(None, check, group, metavar="W", help=f"{WORKERS_HELP} (default: one per CPU, here {available_cpus()})",
               **more)


def no_progress(group: str | None = None, **more: Any) -> Any:
    """`--no-progress`: no progress bar."""
    return opt(False, FLAG, group, kind="flag", help=NO_PROGRESS_HELP, **more)


def overwrite(group: str | None = None, **more: Any) -> Any:
    """`--overwrite`: replace output files that exist (its docstring names them; default: refuse them)."""
    return opt(False, FLAG, group, kind="flag", **more)


RULE_OPTIONS_FLAGS = ("--option", "--options")
"""The command-line spellings of the rule options, in every command ([`rule_options`][])."""


def rule_options_help(default_help: str = "the rule book's") -> str:
    """`--option`'s line of help, in every command; `default_help`: what is played without it."""
    return f"rule options (Rule book, section 9): {', '.join(Rules.names())}; each at most once (default: {default_help})"


def rule_options(default: Sequence[str] | None = (), group: str | None = None,
                 default_help: str = "the rule book's", **more: Any) -> Any:
    """`--option NAME=VALUE ...` (also `--options`): the rule options of RULES.md section 9,
    each at most once; `default_help` says what is played without it (`default` None tells
    "not asked" from "asked for nothing"). The one declaration of the rule options on a
    command line: a command's dataclass field, or on a plain parser [`add_rule_options`][]."""
    return opt(None if default is None else tuple(default), RULE_OPTIONS, group, flag=" ".join(RULE_OPTIONS_FLAGS),
               metavar="NAME=VALUE", kind="list", help=rule_options_help(default_help), **more)


def add_rule_options(parser: Any, dest: str = "option", default: Sequence[str] | None = (),
                     default_help: str = "the rule book's") -> argparse.Action:
    """[`rule_options`][]'s `--option NAME=VALUE ...` on a plain `argparse` parser or argument
    group (the benchmarks', the examples'): the values, checked as in every command and
    unparsed, collected in `args.<dest>` (repeats and several values after one flag extend the
    list), `default` as a new list when the flag is not given (`None` tells "not asked" from
    "asked for nothing"); [`Rules.from_strings`][sergeant_major_env.rules.Rules.from_strings]
    turns them into `Rules`."""
    field = rule_options(default, default_help=default_help)
    action = add_field(parser, dest, field, field.metadata["help"])
    action.default = None if default is None else list(default)
    return action


# ============================================================================ the parser

class OneLineParser(argparse.ArgumentParser):
    """Usage errors in one line (`sergeant-major train: error: ...`, exit status 2), without the
    long usage: the line ends with the message itself, in every command."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message}\n")


class Notes(argparse.HelpFormatter):
    """`--help`: each option's line of help (its field's docstring), then its default and the
    values its check allows."""

    def _get_help_string(self, action: argparse.Action) -> str:
        notes = []
        shown = getattr(action, "shown_default", None)
        if isinstance(action, argparse.BooleanOptionalAction):
            notes.append(f"default {'on' if shown else 'off'}")
        elif action.nargs != 0 and shown not in (None, (), []):
            notes.append(f"default {','.join(map(str, shown)) if isinstance(shown, tuple) else shown}")
        allowed = getattr(action.type, "allowed", None)
        if allowed and getattr(action.type, "shown", False) and not action.choices:
            notes.append(allowed)
        return (action.help or "") + (f" ({'; '.join(notes)})" if notes else "")


class HelpFormatter(Notes, argparse.RawDescriptionHelpFormatter):
    """`Notes`, with the description and epilog as written (a command's module docstring)."""


def build_parser(prog: str, config: type, description: str | None = None, epilog: str | None = None,
                 formatter_class: type = HelpFormatter) -> argparse.ArgumentParser:
    """A `OneLineParser` of `config`'s options, its help `HelpFormatter`'s
    (`formatter_class` `Notes`: the description wrapped to the terminal)."""
    parser = OneLineParser(prog=prog, description=description, epilog=epilog, formatter_class=formatter_class)
    add_arguments(parser, config)
    return parser


def subcommand(commands: Any, name: str, config: type, **kwargs: Any) -> argparse.ArgumentParser:
    """The parser of subcommand `name` (`commands`: `add_subparsers()`'s), with `config`'s
    options (its description wrapped to the terminal); `parse_config` makes a `config` of
    what it parses."""
    parser = commands.add_parser(name, formatter_class=Notes, **kwargs)
    add_arguments(parser, config)
    parser.set_defaults(config_class=config, config_parser=parser)
    return parser


def add_arguments(parser: argparse.ArgumentParser, config: type, renamed: dict[str, str] | None = None) -> None:
    """Every option of dataclass `config` as an argument of `parser`, in groups, WITHOUT
    defaults (`argparse.SUPPRESS`): the parsed namespace holds only what the command line
    gives, and the dataclass supplies the rest. `--help` still shows each default.
    `renamed`: {field: flag name} where the parser has that field's flag already."""
    helps = field_help(config)
    groups: dict[str | None, Any] = {None: parser}
    for field in dataclasses.fields(config):
        group_name = field.metadata["group"]
        group = groups.get(group_name) or groups.setdefault(group_name, parser.add_argument_group(group_name))
        name = (renamed or {}).get(field.name, field.name)
        add_field(group, name, field, helps.get(field.name) or field.name.replace("_", " "))


def add_field(container: Any, name: str, field: dataclasses.Field, text: str) -> argparse.Action:
    """One option field (`opt`'s) as an argument of `container` (a parser or an argument group),
    stored in `args.<name>`, WITHOUT a default (`argparse.SUPPRESS`; `--help` shows the
    field's), its line of help `text`."""
    meta = field.metadata
    flags = (meta["flag"] or "--" + name.replace("_", "-")).split()
    kwargs: dict[str, Any] = {"dest": name, "default": argparse.SUPPRESS, "help": text.replace("%", "%%")}
    kind, check = meta["kind"], meta["check"]
    if meta["required"] and kind != "positional":
        kwargs["required"] = True
    if kind == "flag":
        kwargs["action"] = "store_true"
    elif kind == "no-flag":
        kwargs["action"] = "store_false"
    elif kind == "on-off":
        kwargs["action"] = argparse.BooleanOptionalAction
    elif kind in ("list", "values"):
        kwargs.update(nargs="+", type=check, metavar=meta["metavar"], **({"action": "extend"} if kind == "list" else {}))
    elif kind == "positional":
        del kwargs["dest"]
        flags = [name]
        kwargs.update(type=check, metavar=meta["metavar"], **({} if meta["required"] else {"nargs": "?"}))
    elif isinstance(check, Choice):
        kwargs.update(choices=check.choices, **({} if isinstance(check.choices[0], str) else
                                                {"type": type(check.choices[0])}))
    else:
        kwargs.update(type=check, metavar=meta["metavar"])
    action = container.add_argument(*flags, **kwargs)
    action.shown_default = None if meta["required"] else field.default
    return action


def parse_config(parser: argparse.ArgumentParser, config: type | None = None, argv: Sequence[str] | None = None,
                 renamed: dict[str, str] | None = None) -> Any:
    """The `config` (a dataclass of `opt` fields) of command line `argv` (default
    `sys.argv[1:]`), read with `parser`; a value the dataclass refuses is a usage error of
    the parser that declared it (one line, exit status 2). Without `config`: the subcommand's
    (`subcommand`)."""
    given, command_config, command_parser = parse_command(parser, argv)
    return make_config(command_parser, config or command_config, given, renamed)


def parse_command(parser: argparse.ArgumentParser, argv: Sequence[str] | None = None
                  ) -> tuple[dict[str, Any], type | None, argparse.ArgumentParser]:
    """What `argv` gives ({dest: value}, only what it gives), the config class of its subcommand
    (`subcommand`; None without subcommands) and the parser that reports its usage errors."""
    given = vars(parser.parse_args(argv))
    return given, given.pop("config_class", None), given.pop("config_parser", parser)


def make_config(parser: argparse.ArgumentParser, config: type, given: dict[str, Any],
                renamed: dict[str, str] | None = None) -> Any:
    """A `config` of the options in `given` that are its fields (`renamed`: {field: dest}),
    its defaults for the rest; a refused value is `parser.error` (one line, exit status 2)."""
    values = {}
    for field in dataclasses.fields(config):
        dest = (renamed or {}).get(field.name, field.name)
        if dest in given:
            values[field.name] = given[dest]
    try:
        return config(**values)
    except ValueError as error:
        parser.error(str(error))


def check_fields(config: Any) -> None:
    """Every field of `config` by its check, normalised (lists become tuples): a
    `ConfigError` names the option. Call it from a dataclass's `__post_init__`."""
    for field in dataclasses.fields(config):
        if field.default is None and getattr(config, field.name) is None:
            continue  # an option's None default: not given
        try:
            object.__setattr__(config, field.name, field.metadata["check"].check(getattr(config, field.name)))
        except ValueError as error:
            raise ConfigError(field.name, str(error), flag_of(type(config), field.name)) from None


class ConfigError(ValueError):
    """A refused option: `field` (the option's name) and `message` (what it allows, what it got)."""

    def __init__(self, field: str, message: str, flag: str | None = None) -> None:
        super().__init__(f"argument {flag or '--' + field.replace('_', '-')}: {message}")
        self.field, self.message = field, message


def flag_of(config: type, name: str) -> str:
    """The command line's flag of option `name` of `config` (its first spelling)."""
    field = next((f for f in dataclasses.fields(config) if f.name == name), None)
    if field is None or field.metadata.get("flag") is None:
        return "--" + name.replace("_", "-")
    return field.metadata["flag"].split()[0]


def field_help(config: type) -> dict[str, str]:
    """{option: its line of help}: a shared option's (`opt`'s `help`), else its attribute
    docstring, read from `config`'s source (the one place of each line)."""
    import ast
    import inspect

    helps = {field.name: field.metadata["help"] for field in dataclasses.fields(config) if field.metadata.get("help")}
    for cls in config.__mro__:  # a subclass's docstring first
        if not dataclasses.is_dataclass(cls) or cls is object:
            continue
        body = ast.parse(inspect.getsource(cls)).body[0].body
        for node, following in zip(body, body[1:]):
            if isinstance(node, ast.AnnAssign) and isinstance(following, ast.Expr) and \
                    isinstance(following.value, ast.Constant) and isinstance(following.value.value, str):
                helps.setdefault(node.target.id, following.value.value.strip())
    return helps
