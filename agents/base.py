"""The agent registry and the AEC adapter.

Every agent is a *batched policy* ([`sergeant_major_env.policies.Policy`][]): an object
with a `name` and `act(observations: float32[B, D], legal_mask: bool[B, 58], rng) ->
int64[B]` that returns a legal action for every row that has one, and decides only from
the observation (never from the engine state). Search agents (`pimc`) are the exception:
they decide through `act_on_state(state, games, rng)`, reading only what the seat to act
knows (public fields and [`sergeant_major_env.worlds.sample_worlds`][]). The one agent that
reads more is `pimc:cheat`, for measurement only: it searches the true deal, says so
(`cheats = True`: [`sergeant_major_env.policies.sees_hidden_cards`][]), and is refused
at a table with a person ([`sergeant_major_env.policies.refuse_cheats`][]).

Agents are made by name:

```python
agent = make_agent("heuristic")           # "random", "greedy", "heuristic"
agent = make_agent("ppo:runs/best")       # a train.py run folder (its code-free policy file)
```

`NAME:ARGUMENT` passes `ARGUMENT` (everything after the first colon) to the factory of
`NAME`. Other modules add agents with [`register_agent`][] (this package registers its
own in `agents/__init__.py`; search bots can register themselves the same way):

```python
register_agent("bot", lambda: MyBot())                          # no argument
register_agent("mcts", Mcts, options={"rollouts": 64, "c": 2.0})  # mcts:rollouts=128:c=4
register_agent("net", lambda path: Net(path), takes_argument=True)  # net:PATH
```

Options (`NAME=VALUE`, colons between them) are parsed by one parser,
`agent_options`, for every agent that has them (pimc, ismcts and any registered with
`options`): a repeated, unknown or mistyped option is the same one-line ValueError. An
option whose default is a bool is a flag: its name alone turns it on (`pimc:cheat`), and
`NAME=true` / `NAME=false` are accepted too. A spec worth a line of its own in
`sergeant-major agents` (`pimc:cheat`) is registered as a variant of its agent
(`register_agent(..., variants={"pimc:cheat": "help"})`).

[`AECSeat`][] lets any agent play one seat of the PettingZoo AEC env (a batch of one).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping

import numpy as np

from sergeant_major_env.limits import shorten
from sergeant_major_env.policies import Policy, searches_state


@dataclasses.dataclass(frozen=True)
class _Entry:
    factory: Callable[..., Any]
    takes_argument: bool
    help: str
    options: Mapping[str, Any] | None = None  # the options and their defaults (agent_options)
    policy_options: tuple[str, ...] = ()      # options whose values name agents (may hold colons)
    variants: Mapping[str, str] | None = None  # specs listed on lines of their own: {spec: help}


_REGISTRY: dict[str, _Entry] = {}


def register_agent(name: str, factory: Callable[..., Any], *, takes_argument: bool = False,
                   options: Mapping[str, Any] | None = None, policy_options: tuple[str, ...] = (),
                   help: str = "", variants: Mapping[str, str] | None = None, overwrite: bool = False) -> None:
    """Make `make_agent(name)` call `factory`.

    With `options` (`{NAME: default}`) the spec `name:NAME=VALUE:...` is parsed by
    `agent_options` (each option once, converted to its default's type) and the factory
    is called with every option as a keyword argument; `policy_options` name the options
    whose values are agent names (`rollout=ppo:RUN` keeps its colon). With
    `takes_argument=True` the factory is called with the text after the colon, or `None`
    when the spec has none (the factory decides whether that is allowed, raising
    `ValueError` if not): for a path (`ppo:RUN`). Otherwise the factory is called without
    arguments and a spec `name:ANYTHING` is refused. Registering a taken name raises
    `ValueError` unless `overwrite=True`.
    """
    if not isinstance(name, str) or not name or ":" in name or name != name.strip():
        raise ValueError(f"agent name must be a non-empty string without ':' or surrounding spaces, got {name!r}")
    if not callable(factory):
        raise TypeError(f"the factory of agent {name!r} must be callable, got {factory!r}")
    if name in _REGISTRY and not overwrite:
        raise ValueError(f"agent {name!r} is already registered (pass overwrite=True to replace it)")
    if options is not None and takes_argument:
        raise ValueError(f"agent {name!r}: give options or takes_argument=True, not both")
    variants = dict(variants or {})
    if any(spec.partition(":")[0] != name or ":" not in spec for spec in variants):
        raise ValueError(f"agent {name!r}: variants must be specs {name}:ARGUMENT, got {sorted(variants)}")
    _REGISTRY[name] = _Entry(factory, bool(takes_argument), help, None if options is None else dict(options),
                             tuple(policy_options), variants)


def unregister_agent(name: str) -> None:
    """Remove a registered agent (for tests and plug-ins); unknown names are ignored."""
    _REGISTRY.pop(name, None)


def known_agents() -> list[str]:
    """The registered names, sorted; those taking an argument are shown as `name:ARG`."""
    return sorted(f"{name}:ARG" if entry.takes_argument or entry.options is not None else name
                  for name, entry in _REGISTRY.items())


def agent_help() -> Mapping[str, str]:
    """`{name: one-line help}` of the registered agents, each followed by its variants
    (`pimc:cheat`)."""
    lines: dict[str, str] = {}
    for name, entry in sorted(_REGISTRY.items()):
        lines[name] = entry.help
        lines.update(sorted((entry.variants or {}).items()))
    return lines


def make_agent(spec: str) -> Policy:
    """The agent named by `spec` (`"greedy"`, `"ppo:path/to/model.zip"`, ...).

    Unknown names raise `ValueError` listing the known ones.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"agent spec must be a non-empty string, got {spec!r}; known agents: "
                         f"{', '.join(known_agents())}")
    name, sep, argument = spec.strip().partition(":")
    entry = _REGISTRY.get(name)
    if entry is None:
        raise ValueError(f"unknown agent {name!r}; {_names_like(name)}known agents: {', '.join(known_agents())}")
    if entry.options is not None:
        return entry.factory(**agent_options(name, argument, entry.options, entry.policy_options))
    if entry.takes_argument:
        return entry.factory(argument if sep else None)
    if sep:
        raise ValueError(f"{name}: bad option {shorten(argument)}; {name} takes no options (got {spec!r})")
    return entry.factory()


def _names_like(name: str) -> str:
    """`the learned agents: learned, learned-ppo, learned-r2; ` for an unknown `learned-r9`: the
    known names of its first word, when it has a dash and some do; else empty."""
    stem = name.partition("-")[0]
    like = [known for known in known_agents() if known.partition(":")[0].partition("-")[0] == stem]
    return f"the {stem} agents: {', '.join(like)}; " if like and stem != name else ""


def agent_options(agent: str, text: str, defaults: Mapping[str, Any], policy_options: tuple[str, ...] = ()) -> dict:
    """The options of an agent spec after its name (`worlds=32:rollout=greedy`, colons between
    them: `evaluate.py --agents` separates agents by commas) over `defaults`, each converted
    to its default's type; the one parser of every agent with options. Each option may be named
    once; an unknown one, a piece without `=` (but a flag: an option whose default is a bool,
    named alone for `true`), a repeat or a value of the wrong type is a one-line ValueError
    naming `agent`. A piece that does not start a known option continues
    the value of one of `policy_options` (`rollout=ppo:runs/x` names the policy `ppo:runs/x`)."""
    options = dict(defaults)
    for key, value in option_items(agent, text, defaults, policy_options):
        kind = type(defaults[key])
        if kind is bool:
            options[key] = _flag(agent, key, value)
            continue
        try:
            options[key] = kind(value.strip())
        except ValueError:
            what = {int: "an integer", float: "a number"}.get(kind, "text")
            raise ValueError(f"{agent}: {key} must be {what}, got {shorten(value)}") from None
    return options


def _flag(agent: str, key: str, value: str) -> bool:
    """A flag option's value: `true` or `false` (any case), else a one-line ValueError."""
    text = value.strip().lower()
    if text not in ("true", "false"):
        raise ValueError(f"{agent}: {key} must be true or false (or {key} alone for true), got {shorten(value)}")
    return text == "true"


def option_items(agent: str, text: str, defaults: Mapping[str, Any],
                 policy_options: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """The `(NAME, VALUE)` pieces of `agent_options`, in order, not converted."""
    items: list[list[str]] = []
    for piece in filter(None, text.split(":")):
        key, sep, value = piece.partition("=")
        if not sep and isinstance(defaults.get(key.strip()), bool):  # a flag named alone: on
            sep, value = "=", "true"
        if sep and key.strip() in defaults:
            earlier = next((item for item in items if item[0] == key.strip()), None)
            if earlier is not None:
                raise ValueError(f"{agent}: option {key.strip()} given twice ({earlier[0]}={earlier[1]} and "
                                 f"{piece.strip()}); give each option once")
            items.append([key.strip(), value])
        elif items and items[-1][0] in policy_options:
            items[-1][1] += ":" + piece
        else:
            raise ValueError(f"{agent}: bad option {shorten(piece)}; expected NAME=VALUE with NAME one of "
                             f"{', '.join(defaults)}{_flags_note(defaults)}")
    return [(key, value) for key, value in items]


def _flags_note(defaults: Mapping[str, Any]) -> str:
    """` (or a flag alone: FLAG)` naming the flag options of `defaults`, if any."""
    flags = [key for key, value in defaults.items() if isinstance(value, bool)]
    return f" (or a flag alone: {', '.join(flags)})" if flags else ""


class AECSeat:
    """One seat of the PettingZoo AEC env played by a batched agent.

    `AECSeat(agent, rng)(observation)` takes the `observation` of `env.last()` (the
    dict `{"observation", "action_mask"}`) and returns the agent's action as an `int`:

    ```python
    seats = {name: AECSeat(make_agent("heuristic"), np.random.default_rng(i))
             for i, name in enumerate(game.possible_agents)}
    for name in game.agent_iter():
        observation, reward, termination, truncation, info = game.last()
        game.step(None if termination or truncation else seats[name](observation))
    ```

    A search agent (`pimc`) decides from the game state: `AECSeat(agent, rng, env=game)`.
    """

    def __init__(self, agent: Policy, rng: np.random.Generator | int | None = None, env: Any = None) -> None:
        if isinstance(agent, str):
            agent = make_agent(agent)
        if not callable(getattr(agent, "act", None)):
            raise TypeError(f"AECSeat needs an agent with a batched act(), got {agent!r}")
        if searches_state(agent) and env is None:
            raise TypeError(f"{agent!r} searches the game state: pass the env, AECSeat(agent, rng, env=game)")
        self.agent, self.env = agent, env
        self.rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)

    @property
    def name(self) -> str:
        return getattr(self.agent, "name", type(self.agent).__name__)

    def __call__(self, observation: Mapping[str, np.ndarray], info: Any = None) -> int:
        if self.env is not None and searches_state(self.agent):  # reads only what the seat knows
            return int(self.agent.act_on_state(self.env.unwrapped.engine_state, np.zeros(1, np.intp), self.rng)[0])
        return aec_action(self.agent, observation, self.rng)

    act = __call__

    def __repr__(self) -> str:
        return f"AECSeat({self.agent!r})"


def aec_action(agent: Policy, observation: Mapping[str, np.ndarray], rng: np.random.Generator) -> int:
    """The action of `agent` for one AEC observation dict (a batch of one)."""
    try:
        obs = np.asarray(observation["observation"], dtype=np.float32).reshape(1, -1)
        mask = np.asarray(observation["action_mask"]).astype(bool).reshape(1, -1)
    except (KeyError, TypeError, IndexError):
        raise ValueError("expected the AEC observation dict {'observation': ..., 'action_mask': ...}") from None
    if not mask.any():
        raise ValueError("no legal action in this observation: the seat is not the one to act")
    action = int(np.asarray(agent.act(obs, mask, rng)).reshape(-1)[0])
    if not (0 <= action < mask.shape[1] and mask[0, action]):
        raise ValueError(f"agent {getattr(agent, 'name', agent)!r} chose illegal action {action}")
    return action


def act_where_legal(legal_mask: np.ndarray, choose: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """int64[B]: `choose(rows)` (one action per row of `rows`) for the rows of `legal_mask`
    with a legal action; 0 for the others (finished games, whose actions the engine ignores)."""
    legal_mask = np.asarray(legal_mask, dtype=bool)
    actions = np.zeros(legal_mask.shape[0], dtype=np.int64)
    rows = np.flatnonzero(legal_mask.any(axis=1))
    if rows.size:
        actions[rows] = choose(rows)
    return actions
