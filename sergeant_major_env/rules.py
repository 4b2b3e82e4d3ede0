"""The rule options of RULES.md section 9, validated once, shared by every view."""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from .limits import is_integer


@dataclasses.dataclass(frozen=True)
class Rules:
    """Rule options (RULES.md section 9). Defaults are the rule book's."""

    num_deals: int = 18
    """Deals per game, 1..18 (R4). R8 holds per player: a mode at most once."""
    exchanges: bool = True
    """Section 7 (R17-R22) on or off."""
    must_overtake: bool = False
    """R15 option: following suit, beat the best card of the led suit when possible."""
    must_overtrump: bool = False
    """R15 option: trumping, beat a trump already in the trick when possible."""
    dealer_builds_talon: bool = False
    """R11 option: the talon is placed among the dealt cards, never first, last or adjacent."""

    def __new__(cls, *args: Any, **options: Any) -> "Rules":
        # The dataclass __init__ would answer an unknown or doubled option with a bare
        # TypeError; check the names first so that every way in gives one clear line.
        names = cls.names()
        if len(args) > len(names):
            raise ValueError(f"Rules takes at most {len(names)} rule options ({', '.join(names)}), "
                             f"got {len(args)} positional values")
        unknown = sorted(set(options) - set(names))
        if unknown:
            raise ValueError(f"unknown rule option(s) {', '.join(unknown)}; known options: {', '.join(names)}")
        doubled = sorted(set(names[: len(args)]) & set(options))
        if doubled:
            raise ValueError(f"rule option(s) {', '.join(doubled)} given twice (by position and by name)")
        return super().__new__(cls)

    def __post_init__(self) -> None:
        if not is_integer(self.num_deals) or not 1 <= self.num_deals <= 18:
            raise ValueError(f"rule option num_deals must be an integer from 1 to 18, got {self.num_deals!r}")
        object.__setattr__(self, "num_deals", int(self.num_deals))  # numpy's integers kept as Python's
        for field in ("exchanges", "must_overtake", "must_overtrump", "dealer_builds_talon"):
            value = getattr(self, field)
            if not isinstance(value, bool):
                raise ValueError(f"rule option {field} must be true or false, got {value!r}")

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def from_dict(cls, options: Mapping[str, Any] | None) -> "Rules":
        """Build from a mapping, rejecting unknown names with the list of known ones."""
        options = dict(options or {})
        unknown = sorted(str(name) for name in options if name not in cls.names())
        if unknown:
            raise ValueError(f"unknown rule option(s) {', '.join(unknown)}; known options: {', '.join(cls.names())}")
        return cls(**options)

    @classmethod
    def from_strings(cls, assignments: list[str]) -> "Rules":
        """Parse command-line `NAME=VALUE` pairs (`exchanges=false`, `num_deals=3`).

        Each option may be named once: `num_deals=1 num_deals=2` is a ValueError naming it
        (rather than the last one silently winning)."""
        options: dict[str, Any] = {}
        given: dict[str, str] = {}
        for item in assignments:
            name, sep, text = item.partition("=")
            if not sep:
                raise ValueError(f"rule option {item!r} is not NAME=VALUE; known options: {', '.join(cls.names())}")
            name = name.strip()
            if name in given:
                raise ValueError(f"rule option {name} given twice ({given[name]} and {item.strip()}); "
                                 f"give each option once")
            given[name] = item.strip()
            text = text.strip().lower()
            if name == "num_deals":
                try:
                    options[name] = int(text)
                except ValueError:
                    raise ValueError(f"rule option num_deals must be an integer from 1 to 18, got {text!r}") from None
            elif text in ("true", "1", "yes", "on"):
                options[name] = True
            elif text in ("false", "0", "no", "off"):
                options[name] = False
            else:
                options[name] = text  # rejected by validation with a clear message
        return cls.from_dict(options)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


# The command line's rule options, once here, are now in `sergeant_major_env.arguments`, beside
# the field every command declares them with (`arguments.rule_options`).
_MOVED_TO_ARGUMENTS = ("RULE_OPTIONS_FLAGS", "add_rule_options", "rule_options_help")


def __getattr__(name: str) -> Any:
    """A name of `_MOVED_TO_ARGUMENTS`: `sergeant_major_env.arguments`'s, with a `DeprecationWarning`."""
    if name in _MOVED_TO_ARGUMENTS:
        import warnings

        from . import arguments

        warnings.warn(f"sergeant_major_env.rules.{name} is deprecated: it is sergeant_major_env.arguments.{name}",
                      DeprecationWarning, stacklevel=2)
        return getattr(arguments, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
