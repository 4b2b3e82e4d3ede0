"""The docs site's tables, built from the code so that they cannot drift from it.

The docs pages hold markers such as `<!-- generated: observation-table -->`; the mkdocs
hook `docs/hooks.py` replaces each with [`render`][] of its name. Every table is built
here from the module that defines its content:

| marker | built from |
|---|---|
| `observation-table` | `observation.SEGMENTS`, `observation.SCALES`, [`observation.observation_bounds`][], the meanings in the [`observation`][] docstring |
| `action-table` | [`cards`][] (card ids, mode actions) |
| `rule-options` | [`Rules`][] (fields, defaults, docstrings) |
| `env-options ENV` | [`options`][] (allowed values, defaults) |
| `spec ENV` | the env's spaces, agents and render modes |
| `version-history` | [`sergeant_major_env.versions.HISTORY`][] |
| `version-rule` | [`sergeant_major_env.versions.VERSION_RULE`][] |

`ENV` is `aec`, `gymnasium`, `vector` (the SB3 vec env) or `gym_vector` (the
Gymnasium `VectorEnv`, on the Gymnasium page). The tests (`tests/test_docs.py`) check
the tables against the code (every observation index exactly once, the env options'
defaults against the constructors). Nothing here imports PettingZoo, SB3 or torch.

The docstrings are Markdown, as the API page renders them; a table takes a docstring's text
as it is.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import re
from typing import Callable

from . import options as env_options, versions
from .cards import MODE_ACTION_OFFSET, MODE_NAMES, NUM_ACTIONS, NUM_CARDS, RANKS, SUIT_SYMBOLS, SUITS, card_name
from .observation import DERIVED, OBSERVATION_SIZE, SCALES, SEGMENTS, VERSION, observation_bounds
from .rules import Rules

ENVS = ("aec", "gymnasium", "vector", "gym_vector")
"""The environments the docs describe (`docs/envs/{aec,gymnasium,vector}.md`; `gym_vector`,
Gymnasium's vector API, on the Gymnasium page)."""


# ----------------------------------------------------------------------------- markdown

def markdown_table(header: tuple[str, ...], rows: list[tuple]) -> str:
    """A Markdown table (`|` in cells escaped)."""
    def cell(value: object) -> str:
        return str(value).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(value) for value in row) + " |" for row in rows]
    return "\n".join(lines)


def _number(value: float) -> str:
    """A bound as text: `1`, `-0.5`, `4.68`."""
    return f"{value:.4g}"


# ----------------------------------------------------------------------------- observation

@dataclasses.dataclass(frozen=True)
class SegmentRow:
    """One segment of the observation: its index range, scale, range and meaning."""

    first: int
    """Index of its first entry."""
    last: int
    """Index of its last entry (inclusive)."""
    name: str
    size: int
    scale: int
    """The natural value is divided by it."""
    low: float
    """The smallest value an entry takes in the observation (18-deal games)."""
    high: float
    """The largest value."""
    derived: bool
    """Computed from the other segments ([`observation.DERIVED`][])."""
    meaning: str
    """From the observation module's docstring (Markdown)."""


def segment_meanings() -> dict[str, str]:
    """`{segment: meaning}` from the table of the [`observation`][sergeant_major_env.observation]
    docstring (a Markdown table: segment, size, scale, meaning)."""
    from . import observation

    rows = re.findall(r"^\| `(\w+)` \|[^|]*\|[^|]*\| (.*?) \|$", observation.__doc__ or "", re.M)
    if not rows:
        raise ValueError("the observation docstring has no segment table (segment, size, scale, meaning)")
    return dict(rows)


def segment_rows(num_deals: int = 18) -> list[SegmentRow]:
    """One row per segment of `observation.SEGMENTS`, in index order."""
    meanings = segment_meanings()
    low, high = observation_bounds(num_deals)
    rows = []
    for name, where in SEGMENTS.items():
        if name not in meanings:
            raise ValueError(f"observation segment {name!r} has no meaning in the observation docstring's table")
        rows.append(SegmentRow(where.start, where.stop - 1, name, where.stop - where.start, SCALES[name],
                               float(low[where].min()), float(high[where].max()), name in DERIVED,
                               meanings[name].removeprefix("*derived*: ")))
    return rows


def observation_table(num_deals: int = 18) -> str:
    """The observation by index range (Markdown)."""
    rows = [(f"{r.first}" if r.first == r.last else f"{r.first}-{r.last}", f"`{r.name}`", r.scale,
             f"{_number(r.low)} .. {_number(r.high)}", ("*derived*: " if r.derived else "") + r.meaning)
            for r in segment_rows(num_deals)]
    note = (f"\n\n{OBSERVATION_SIZE} float32 entries, layout version {VERSION} (`observation.VERSION`). "
            "*Derived* segments are computed from the others, to help small networks. "
            f"*Values* are those of an 18-deal game (`scores` spans ±13 × `num_deals` / 50). Seats "
            "are relative to the observer: 0 the observer, 1 its left (next to play after it), 2 its right; "
            "blocks of several seats list them in that order, card planes are 52 wide in card-id order.")
    return markdown_table(("indices", "segment", "scale", "values", "meaning"), rows) + note


# ----------------------------------------------------------------------------- actions

def action_rows() -> list[tuple[str, str, str]]:
    """`(ids, action, meaning)`: a row per suit of cards, then one per mode."""
    rows = []
    for suit, letter in enumerate(SUITS):
        first, last = 13 * suit, 13 * suit + 12
        rows.append((f"{first}-{last}", f"{card_name(first)} .. {card_name(last)}",
                     f"a card of {SUIT_SYMBOLS[suit]} ({letter}), ranks {' '.join(RANKS)}: play it, discard it, "
                     "give it in an exchange, or return it after a trump was given"))
    for k, mode in enumerate(MODE_NAMES):
        kind = (f"trumps {SUIT_SYMBOLS[k]} (R7)" if k < len(SUITS) else
                {"NT": "no-trump (R7)", "MIN": "minimum: take as few tricks as possible (R7, R24)"}[mode])
        rows.append((str(MODE_ACTION_OFFSET + k), f"mode {mode}", f"choose {kind}; each playmaker once per game (R8)"))
    assert MODE_ACTION_OFFSET + len(MODE_NAMES) == NUM_ACTIONS and 13 * len(SUITS) == NUM_CARDS
    return rows


def action_table() -> str:
    return markdown_table(("action ids", "action", "meaning"), action_rows()) + (
        f"\n\n`Discrete({NUM_ACTIONS})` (RULES.md section 10): card id = suit × 13 + rank (R3), so `2S` = 0, "
        "`AS` = 12, `2C` = 13, `AD` = 51. Forced returns (R21) are made by the engine and never asked; every "
        "other decision is asked, even with one legal action.")


# ----------------------------------------------------------------------------- rule options

def rule_option_rows() -> list[tuple[str, object, str]]:
    """`(name, default, meaning)` of each [`Rules`][] field, its meaning the field's docstring."""
    tree = ast.parse(inspect.getsource(Rules))
    body = tree.body[0].body
    docs = {}
    for node, after in zip(body, body[1:]):
        if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant) and isinstance(after.value.value, str)):
            docs[node.target.id] = after.value.value
    return [(field.name, field.default, docs.get(field.name, ""))
            for field in dataclasses.fields(Rules)]


def rule_options_table() -> str:
    def text(value: object) -> str:
        return f"`{str(value).lower()}`" if isinstance(value, bool) else f"`{value}`"

    rows = [(f"`{name}`", text(default), meaning) for name, default, meaning in rule_option_rows()]
    return markdown_table(("rule option", "default", "meaning"), rows) + (
        "\n\nRULES.md section 9. Keyword arguments of every environment (`num_deals=3`), "
        "`Rules(...)` in Python, `--option NAME=VALUE` on the command line.")


# ----------------------------------------------------------------------------- env options

def _choices(values: tuple[str, ...]) -> str:
    return ", ".join(f"`{value!r}`" for value in values)


# Per environment: (name, default, allowed, meaning). Defaults and allowed values come from
# sergeant_major_env.options, which the constructors use; tests/test_docs.py compares the
# defaults with the constructors' own.
def env_option_rows(env: str) -> list[tuple[str, str, str, str]]:
    """`(option, default, allowed, meaning)` of one environment's own options."""
    if env not in ENVS:
        raise ValueError(f"env must be one of {', '.join(ENVS)}, got {env!r}")
    illegal = {"aec": env_options.AEC_ILLEGAL_ACTIONS, "gymnasium": env_options.SINGLE_SEAT_ILLEGAL_ACTIONS,
               "vector": env_options.VEC_ILLEGAL_ACTIONS, "gym_vector": env_options.GYM_VECTOR_ILLEGAL_ACTIONS}[env]
    rows = []
    if env in ("vector", "gym_vector"):
        rows.append(("num_envs", "(required)", "an integer >= 1", "games in the one batched engine state"))
    if env == "vector":
        rows.append(("seed", "`0`", "an integer 0 .. 2**63 - 1", "slot i plays the games of seeds S + i, S + i + N, ..."))
    if env != "aec":
        rows += [("learner_seat", "`None`" if env == "vector" else "`0`", "`0`, `1`, `2` or `None`",
                  "the learner's seat; `None`: rotating, game e of slot i at seat (i + e) % 3" if env == "vector"
                  else "the learner's seat; `None`: drawn at each reset"),
                 ("opponents", "`None`", "`None`, one policy, or a pair (left, right)",
                  "batched policies (`act(observations, legal_mask, rng)`); `None`: uniformly random")]
    rows.append(("reward", f"`{env_options.DEFAULT_REWARD!r}`", _choices(env_options.REWARDS),
                 "each deal's points when the deal ends; the final score once; +1 / 0 / -1 by final place (R6)"))
    rows.append(("illegal_action", f"`{illegal[0]!r}`", _choices(illegal),
                 "what an action id 0..57 that the rules refuse does (see below)"))
    if "terminate" in illegal:
        rows.append(("illegal_reward", f"`{env_options.ILLEGAL_REWARD}`", "a finite number",
                     "the offender's reward when `illegal_action='terminate'` ends the game"))
    if env == "gym_vector":
        rows.append(("autoreset_mode", f"`{env_options.AUTORESET_MODES[0]!r}`", _choices(env_options.AUTORESET_MODES)
                     + " or Gymnasium's `AutoresetMode.NEXT_STEP`, `.SAME_STEP`", "Gymnasium's autoreset (see below)"))
    rows.append(("rules", "`None`", "a `Rules` or a mapping of rule options",
                 "the rule options in one object; or give them as keywords (above), not both"))
    if env == "aec":
        rows += [("render_mode", "`None`", "`None`, `'ansi'`, `'human'`", "text of the table, returned or printed"),
                 ("render_seat", "`None`", "`None`, `0`, `1`, `2`",
                  "whose view is drawn; `None`: the seat to act's (the referee's view)")]
    elif env == "gymnasium":
        rows.append(("render_mode", "`None`", "`None`, `'ansi'`", "the table as the learner sees it"))
    elif env == "gym_vector":
        rows.append(("render_mode", "`None`", "`None`, `'ansi'`",
                     "each game's table as its learner sees it, a tuple of N texts"))
    return rows


def env_options_table(env: str) -> str:
    rows = [(f"`{name}`", default, allowed, meaning) for name, default, allowed, meaning in env_option_rows(env)]
    return markdown_table(("option", "default", "allowed", "meaning"), rows) + (
        "\n\nOne constructor shape for every environment, each option defined once in "
        "`sergeant_major_env/options.py`; an unknown option or a bad value is one `ValueError` line "
        "naming what is allowed.")


# ----------------------------------------------------------------------------- spec tables

def spec_rows(env: str) -> list[tuple[str, str]]:
    """PettingZoo's spec table of one environment: `(key, value)` rows."""
    from .engine import DECISIONS

    if env not in ENVS:
        raise ValueError(f"env must be one of {', '.join(ENVS)}, got {env!r}")
    low, high = observation_bounds(18)
    values = f"float32 in [{_number(low.min())}, {_number(high.max())}] (18 deals; per segment below)"
    actions = f"`Discrete({NUM_ACTIONS})`: 0..51 cards, 52..57 modes"
    decisions = ", ".join(DECISIONS[:-1])
    common = [("Actions", actions), ("Decisions", decisions), ("Observation values", values)]
    if env == "aec":
        return [("Import", f"`from sergeant_major_env import {versions.AEC_NAME}`"),
                ("Make", f"`{versions.AEC_NAME}.env()` (wrapped), `{versions.AEC_NAME}.raw_env()`"),
                ("Agents", "`possible_agents = ['player_0', 'player_1', 'player_2']` (seats 0, 1, 2)"),
                ("Parallel API", "no (turn-based: one seat decides at a time)"),
                ("Manual control", "yes: `sergeant-major play`"), *common,
                ("Observation shape", f"`Dict(observation=Box({OBSERVATION_SIZE},), action_mask=Box(58,) int8)`"),
                ("Action mask", "yes: `observation['action_mask']`, all zero for agents not to act"),
                ("Reward range", "-13 .. +13 points a deal (`points`); see Rewards"),
                ("Render modes", "`'human'`, `'ansi'`"),
                ("Name", f"`metadata['name'] == '{versions.AEC_NAME}'`")]
    if env == "gymnasium":
        return [("Import", "`import sergeant_major_env` (registers the id)"),
                ("Make", f"`gymnasium.make('{versions.GYMNASIUM_ID}')`, `SergeantMajorEnv()`"),
                ("Agents", "one learner seat; two opponent policies play inside `step`"),
                ("Parallel API", "no; `gymnasium.make_vec` and the vector env batch many games"),
                ("Manual control", "no (`sergeant-major play` plays the AEC env)"), *common,
                ("Observation shape", f"`Box({OBSERVATION_SIZE},)` float32"),
                ("Action mask", "yes: `action_masks()` and `info['action_mask']` (bool[58])"),
                ("Reward range", "-13 .. +13 points a deal (`points`); see Rewards"),
                ("Render modes", "`'ansi'`")]
    if env == "gym_vector":
        return [("Import", "`import sergeant_major_env` (registers the id and its vector entry point)"),
                ("Make", f"`gymnasium.make_vec('{versions.GYMNASIUM_ID}', num_envs=64)`, "
                         "`SergeantMajorVectorEnv(num_envs=64)`"),
                ("Agents", "one learner seat per game; opponents batched over all games"),
                ("Parallel API", "a Gymnasium `VectorEnv` of N games in one engine state"),
                ("Manual control", "no"), *common,
                ("Observation shape", f"`float32[N, {OBSERVATION_SIZE}]`"),
                ("Action mask", "yes: `infos['action_mask']` and `action_masks()`, bool[N, 58], never an empty row"),
                ("Autoreset", "`metadata['autoreset_mode']`: `NEXT_STEP` (default) or `SAME_STEP`"),
                ("Render modes", "none")]
    return [("Import", "`from sergeant_major_env import SergeantMajorVecEnv` (needs stable-baselines3)"),
            ("Make", "`SergeantMajorVecEnv(num_envs=64, seed=0)`"),
            ("Agents", "one learner seat per game (rotating); opponents batched over all games"),
            ("Parallel API", "a Stable-Baselines3 `VecEnv` of N games in one engine state"),
            ("Manual control", "no"), *common,
            ("Observation shape", f"`float32[N, {OBSERVATION_SIZE}]`"),
            ("Action mask", "yes: `action_masks()`, bool[N, 58]"),
            ("Reward range", "-13 .. +13 points a deal (`points`); see Rewards"),
            ("Render modes", "none")]


def spec_table(env: str) -> str:
    return markdown_table(("property", "value"), spec_rows(env))


# ----------------------------------------------------------------------------- versions

def version_history_table() -> str:
    rows = [(f"`sergeant_major_v{v.version}` / `SergeantMajor-v{v.version}`", v.package, v.observation_version,
             v.observation_size, v.num_actions, v.changes) for v in reversed(versions.HISTORY)]
    return markdown_table(("version", "package", "observation version", "floats", "actions", "changes"), rows)


# ----------------------------------------------------------------------------- markers

GENERATED: dict[str, Callable[..., str]] = {
    "observation-table": observation_table,
    "action-table": action_table,
    "rule-options": rule_options_table,
    "env-options": env_options_table,
    "spec": spec_table,
    "version-history": version_history_table,
    "version-rule": lambda: versions.VERSION_RULE,
}
"""Marker name -> the function that builds its Markdown (arguments follow the name)."""

MARKER = re.compile(r"<!--\s*generated:\s*([a-z-]+)((?:\s+[a-z0-9_]+)*)\s*-->")
"""`<!-- generated: NAME [ARG ...] -->`."""


def render(name: str, *args: str) -> str:
    """The Markdown of marker `name` with its arguments; an unknown one is a ValueError."""
    if name not in GENERATED:
        raise ValueError(f"unknown generated table {name!r}; known: {', '.join(GENERATED)}")
    return GENERATED[name](*args)


def replace_markers(markdown: str) -> str:
    """`markdown` with every marker replaced by its table."""
    return MARKER.sub(lambda m: render(m.group(1), *m.group(2).split()), markdown)
