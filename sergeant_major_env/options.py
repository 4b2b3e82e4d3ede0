"""The environments' own options and their rewards, defined once for every view.

One constructor shape: the PettingZoo AEC env ([`aec`][]), the
single-seat Gymnasium env ([`single_seat`][]), the Gymnasium vector
env ([`gym_vector`][]) and the SB3 vector env
([`vec_env`][]) take the same keywords, described here once (the docs
pages' option tables are generated from this module, [`doc_tables`][]):

| keyword | values | default |
|---|---|---|
| rule options | `num_deals=`, `exchanges=`, ... (RULES.md section 9, [`Rules`][sergeant_major_env.rules.Rules]), as keywords | the rule book's |
| `rules` | a `Rules` or a mapping of rule options, instead of the keywords (both: a ValueError, [`make_rules`][]) | `None` |
| `reward` | [`REWARDS`][]: `"points"`, `"score"`, `"rank"` (see [`event_rewards`][]) | `"points"` |
| `illegal_action` | what an illegal action does (see below) | `"terminate"`; the SB3 vector env: `"raise"` |
| `illegal_reward` | a finite number: the offender's reward with `illegal_action="terminate"` | [`ILLEGAL_REWARD`][] (-1.0) |
| `opponents` | `None` (uniformly random), one policy, or a pair (left, right); not the AEC env, whose three seats are all agents | `None` |
| `learner_seat` | 0, 1, 2 or `None` (not the AEC env) | per env |
| `num_envs` | games in one batched engine state (vector envs only) | (required) |
| `autoreset_mode` | [`AUTORESET_MODES`][] (Gymnasium vector env only) | `"NextStep"` |

`illegal_action` (an action inside the action space that the rules refuse at this
decision; an action outside `Discrete(58)` or not an integer is always a `ValueError`):

* `"terminate"`: PettingZoo's classic convention: the game ends at once, the offender
  gets `illegal_reward` (-1 by default, as PettingZoo's `TerminateIllegalWrapper`),
  the other seats 0 for that step, and the infos say so (`illegal_action` True for the
  offender). Generic checkers (Gymnasium's and SB3's `check_env`), which step unmasked
  `action_space.sample()` actions, pass with it. With `reward="points"` or
  `"score"` a losing game can cost far more than 1 point, so an agent that ignores the
  action mask may learn to end games on purpose: mask the actions (`MaskablePPO`) or
  give a larger penalty;
* `"raise"`: [`IllegalActionError`][sergeant_major_env.engine.IllegalActionError] (a `ValueError`
  naming the action, the decision and the legal actions), the game unchanged;
* `"replace"` (single-seat and vector envs): a uniformly random legal action is played
  instead ([`replace_illegal`][]) and the info says so.

Action masks: every env gives the learner's mask with each observation it asks a policy to
act on, and none is ever all False: a finished game's marks action 0 alone
([`action_mask`][]), so masking logits with `-inf` is safe. (The AEC env follows
PettingZoo: the mask of an agent that is not to act, or of a finished game, is all zero, and
such an agent is never asked for an action: it steps with `None`.)

Rewards of the three kinds come from the events of the last `engine.step` through
[`event_rewards`][], and [`rank_rewards`][] ranks final scores (R6), for every view.
Every check raises a one-line `ValueError` that names the option, what is allowed and
what was given.
"""

from __future__ import annotations

import math
import operator
from typing import Any, Mapping, Sequence

import numpy as np

from . import engine
from .cards import NUM_ACTIONS, bits_to_bool
from .limits import is_integer, is_number, shorten
from .policies import RandomPolicy
from .rules import Rules

REWARDS = ("points", "score", "rank")
"""The reward kinds: each deal's points (R23, R24) when the deal ends, the final score once
when the game ends, or +1 / 0 / -1 by final place (R6) when the game ends."""
DEFAULT_REWARD = "points"

AEC_ILLEGAL_ACTIONS = ("terminate", "raise")
"""`illegal_action` values of the AEC env; the first is the default."""
SINGLE_SEAT_ILLEGAL_ACTIONS = ("terminate", "raise", "replace")
"""`illegal_action` values of the single-seat env; the first is the default."""
VEC_ILLEGAL_ACTIONS = ("raise", "replace")
"""`illegal_action` values of the SB3 vector env; the first is the default. It is the training
path (`MaskablePPO` never picks a masked action), where an illegal action is a bug of
the caller, so it raises by default; no generic checker steps a VecEnv."""

AUTORESET_MODES = ("NextStep", "SameStep")
"""`autoreset_mode` values of the Gymnasium vector env (the values of Gymnasium's
`AutoresetMode.NEXT_STEP` and `.SAME_STEP`); the first is the default, Gymnasium's."""

GYM_VECTOR_ILLEGAL_ACTIONS = SINGLE_SEAT_ILLEGAL_ACTIONS
"""`illegal_action` values of the Gymnasium vector env: the single-seat env's, with its
default (`"terminate"`): `gymnasium.make_vec("SergeantMajor-v0", ...)` is one id, whose
games behave alike in the `"vector_entry_point"`, `"sync"` and `"async"` modes."""

ILLEGAL_REWARD = -1.0
"""The default `illegal_reward`: the offender's reward when `illegal_action="terminate"`
ends the game (PettingZoo's `TerminateIllegalWrapper` uses -1 too)."""


# ----------------------------------------------------------------------------- checks

def check_choice(name: str, value: Any, allowed: Sequence[str], where: str) -> str:
    """`value` if it is one of `allowed`, else a ValueError naming them."""
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{where}: {name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")
    return value


def check_reward(value: Any, where: str) -> str:
    return check_choice("reward", value, REWARDS, where)


def check_illegal_action(value: Any, allowed: Sequence[str], where: str) -> str:
    return check_choice("illegal_action", value, allowed, where)


def check_illegal_reward(value: Any, where: str) -> float:
    """A finite real number (not a bool) as a float."""
    if not is_number(value) or not math.isfinite(value):
        raise ValueError(f"{where}: illegal_reward must be a finite number, got {value!r}")
    return float(value)


def check_learner_seat(value: Any, where: str, allow_none: bool = True) -> int | None:
    if value is None and allow_none:
        return None
    if not is_integer(value) or not 0 <= value <= 2:
        raise ValueError(f"{where}: learner_seat must be 0, 1, 2{' or None' if allow_none else ''}, got {value!r}")
    return int(value)


def make_rules(rules: Rules | Mapping[str, Any] | None, options: Mapping[str, Any], where: str) -> Rules:
    """Rules from `rules=` (a [`Rules`][] or a mapping) or from rule options given as
    keyword arguments, not both."""
    if rules is not None and options:
        raise ValueError(f"{where}: pass rule options either as rules=... or as keyword arguments, not both")
    if isinstance(rules, Rules):
        return rules
    if rules is not None and not isinstance(rules, Mapping):
        raise ValueError(f"{where}: rules must be a Rules or a mapping of rule options, got {rules!r}")
    try:
        return Rules.from_dict(rules if rules is not None else options)
    except ValueError as error:
        raise ValueError(f"{where}: {error}") from None


def split_options(options: Mapping[str, Any], env_defaults: Mapping[str, Any], where: str,
                  rules: Rules | Mapping[str, Any] | None = None) -> tuple[Rules, dict]:
    """`(rules, env options)` from one mapping of keyword options (the AEC env's way).

    `env_defaults` names the env's own options and their defaults; every other name must
    be a rule option (RULES.md section 9). `rules`: the rules as [`make_rules`][] takes
    them (a [`Rules`][] or a mapping), refused together with rule options. The env
    options' values are checked by the caller.
    """
    unknown = sorted(set(options) - set(Rules.names()) - set(env_defaults))
    if unknown:
        raise ValueError(f"{where}: unknown option(s) {', '.join(unknown)}; rule options (RULES.md section 9): "
                         f"{', '.join(Rules.names())} (or rules=Rules(...)); env options: {', '.join(env_defaults)}")
    chosen = {name: options.get(name, default) for name, default in env_defaults.items()}
    rule_options = {name: value for name, value in options.items() if name not in env_defaults}
    return make_rules(rules, rule_options, where), chosen


def check_reset_options(options: Any, known: Sequence[str], where: str,
                        only: Sequence[str] | None = None) -> dict[str, Any]:
    """`reset(options=...)` of an env as a dict of its `known` options. Anything else is one
    ValueError line, before the env changes: options that are not a dict, and unknown keys
    (rule options are given to the constructor: a game's rules and spaces are fixed when the
    env is made). `only`: refuse only these unknown keys and ignore the others (the AEC env,
    which PettingZoo's API test resets with `options={"options": 1}`)."""
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise ValueError(f"{where}: options must be a dict or None, got {type(options).__name__}")
    unknown = sorted(str(key) for key in options if key not in known and (only is None or key in only))
    if unknown:
        rules = [name for name in unknown if name in Rules.names()]
        hint = f"; rule options such as {rules[0]} are given to the constructor" if rules else ""
        raise ValueError(f"{where}: unknown reset option(s) {', '.join(name[:40] for name in unknown[:5])}; "
                         f"known: {', '.join(known) or 'none'}{hint}")
    return {key: value for key, value in options.items() if key in known}


def check_action(action: Any, where: str) -> int:
    """One action id as a Python int: an integer 0..57 (RULES.md section 10), not a bool.

    Anything else (a bool, a float, a string, `2**70`, an array of several values) is a
    ValueError: it is outside `Discrete(58)`, whatever `illegal_action` says."""
    if not isinstance(action, (bool, np.bool_)):
        try:
            index = operator.index(action)
        except TypeError:
            pass
        else:
            if 0 <= index < NUM_ACTIONS:
                return int(index)
    raise ValueError(f"{where}: an action is an integer id 0..{NUM_ACTIONS - 1} (RULES.md section 10), "
                     f"got {shorten(action)}")


# ----------------------------------------------------------------------------- rewards

def rank_rewards(scores) -> np.ndarray:
    """float64 like `scores` (`[3]` or `[k, 3]`): +1 / 0 / -1 for first / second /
    third place; seats with equal scores share their places' values (R6): two tied first
    get +0.5 each, three equal scores 0."""
    scores = np.asarray(scores)
    return (2 - engine.places(scores.reshape(-1, 3))).reshape(scores.shape).astype(np.float64)


def event_rewards(kind: str, state: engine.State, games: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`(rows, rewards)`: the rewards that the last `engine.step` of `games` paid.

    `rows` (int) are the positions in `games` of the games whose step paid a reward of
    this `kind` and `rewards` (`float64[len(rows), 3]`) the reward of each seat there:

    * `"points"`: the deal's points of each seat (R23, R24) in the games whose deal ended;
    * `"score"`: the final scores in the games that ended;
    * `"rank"`: [`rank_rewards`][] of the final scores in the games that ended.

    A step without such an event (most of them) costs one lookup and one `any()`: the vec
    env asks after every opponent round.
    """
    paid = (state.deal_ended if kind == "points" else state.game_ended)[games]
    if not np.count_nonzero(paid):  # count_nonzero: several times cheaper than any() on small arrays
        return _NO_ROWS, _NO_REWARDS
    rows = np.flatnonzero(paid)
    if kind == "points":
        return rows, state.deal_points[games[rows]].astype(np.float64)
    final = state.final_scores[games[rows]]
    return rows, (final.astype(np.float64) if kind == "score" else rank_rewards(final))


_NO_ROWS = np.zeros(0, dtype=np.intp)
_NO_REWARDS = np.zeros((0, 3), dtype=np.float64)
_NO_ROWS.flags.writeable = _NO_REWARDS.flags.writeable = False  # shared by every call


# ----------------------------------------------------------------------------- action masks

FINISHED_GAME_ACTION = 0
"""The one action id that the mask of a finished game marks (see [`action_mask`][])."""


def action_mask(legal: np.ndarray) -> np.ndarray:
    """`bool[B, 58]`: the learners' action masks from their legal action bits (`uint64[B]`).

    A finished game has no legal action; its row marks [`FINISHED_GAME_ACTION`][] (0) alone
    rather than nothing, so that no observation a policy is given has an all-False mask:
    masking logits with `-inf` then never gives a row without a finite logit (a NaN
    softmax), and the row's log-probability is 0 (no gradient) whatever the policy. The
    action is never applied: Gymnasium's vector envs ignore the action of the step after a
    terminal step (`NEXT_STEP` autoreset) and a single-seat env refuses `step` once the
    game is over (call `reset()`)."""
    legal = np.asarray(legal, dtype=np.uint64)
    return bits_to_bool(np.where(legal == 0, np.uint64(1 << FINISHED_GAME_ACTION), legal), NUM_ACTIONS)


# ----------------------------------------------------------------------------- illegal actions

def replace_illegal(actions: np.ndarray, legal: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """`illegal_action="replace"`: `(actions, replaced)` with each illegal action (in a
    game that has a legal one) replaced by a uniformly random legal action from `rng`."""
    in_range = (actions >= 0) & (actions < NUM_ACTIONS)
    chosen = (legal >> np.where(in_range, actions, 0).astype(np.uint64)) & np.uint64(1)
    bad = ((chosen == 0) | ~in_range) & (legal != 0)
    if bad.any():
        actions = actions.copy()
        actions[bad] = RandomPolicy().act(None, bits_to_bool(legal[bad], NUM_ACTIONS), rng)
    return actions, bad
