"""The batched agent interface every environment of this package drives.

A *policy* decides for a whole batch of games at once:

```python
actions = policy.act(observations, legal_mask, rng)
```

| argument | type | meaning |
|---|---|---|
| `observations` | `float32[B, D]` | `observe(state, seat)` of the deciding seat of each game (`D = OBSERVATION_SIZE`) |
| `legal_mask` | `bool[B, 58]` | `engine.legal_action_mask` of those games |
| `rng` | `np.random.Generator` | the caller's generator: a policy that draws its randomness only from it is reproducible |
| returns | `int64[B]` | one legal action id per game (RULES.md section 10) |

Optional attributes, read with `getattr` and a default:

* `name` (`str`, default: the class name): shown in records and benchmarks;
* `needs_observations` (`bool`, default `True`): a policy that decides from the
  legal mask alone (such as [`RandomPolicy`][]) sets it to `False`; the environments
  then skip computing observations for it and pass a read-only array of zeros of the
  same shape instead.

* `deterministic` (`bool`, default `False`): each game's action depends only on that
  game (the observation, or what a search policy reads of the state), never on `rng` nor
  on the other games of the call. [`play_tables`][sergeant_major_env.evaluation.play_tables] may
  then split a batch of games over worker processes with the same results.

* `act_on_state(state, games, rng) -> int64[len(games)]`: a *search* policy (such as
  the `pimc` agent) that plays out sampled deals needs the engine state itself. Callers
  that hold the state ([`play_games`][sergeant_major_env.evaluation.play_games], the vec env and
  single-seat env opponents) call this method instead of `act` when a policy has it,
  for the games `games` of `state`. Such a policy promises to use only what the seat
  to act knows: the public fields and [`sample_worlds`][sergeant_major_env.worlds.sample_worlds].

* `cheats` (`bool`, default `False`): the policy reads what its seat cannot know (the
  other hands: `pimc:cheat`, a measurement of what perfect inference is worth), breaking
  the promise above. [`sees_hidden_cards`][] reads it: a table with a person refuses
  such a policy ([`refuse_cheats`][]) and `evaluate`
  prints a note under its report.

* `act_from_state(state, games, legal_mask, rng) -> int64[len(games)]`: the same
  decisions as `act`, for the seats to act in the games `games` of the engine `state`
  (`legal_mask` their rows), read by the policy's own compiled code from the state
  instead of from observations: what each seat to act knows, no more (the heuristic, whose
  card decisions read their inputs in place). [`decide`][] prefers it to the two forms
  below.

* `act_on_card_sets(card_sets, rest, legal_mask, rng) -> int64[B]`: the same decisions
  as `act`, from the observation in the form
  [`observe_card_sets`][] gives it (the card planes as
  uint64 card sets, the other entries as floats). A policy that reads the planes as sets
  (the heuristic) offers it to skip writing and decoding the float planes; [`decide`][]
  (so every caller that holds the state) then uses it instead of `act` for two games or
  more.

The environments ([`single_seat`][], [`vec_env`][],
the PettingZoo env) call opponents through this interface, batched: one call for all the
games waiting on that opponent. The agents of the project (the top-level `agents`
package) implement it; this package never imports them.
"""

from __future__ import annotations

from typing import Any, Protocol, Sequence, runtime_checkable

import numpy as np

from .observation import OBSERVATION_SIZE, acting_card_sets, observe, observe_card_sets


@runtime_checkable
class Policy(Protocol):
    """Anything with a batched `act` (see the module docstring)."""

    def act(self, observations: np.ndarray, legal_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """`int64[B]`: one legal action per row of `legal_mask`."""
        ...


class RandomPolicy:
    """A uniformly random legal action in every game (the default opponent).

    Rows without any legal action (finished games) get action 0, which the engine ignores.
    """

    name = "random"
    needs_observations = False

    def act(self, observations: np.ndarray, legal_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        legal_mask = np.asarray(legal_mask, dtype=bool)
        # The argmax of uniform 64-bit noise over the legal columns is uniform over them
        # (ties have probability 2**-63). Raw bits are the cheapest noise numpy draws.
        noise = rng.bit_generator.random_raw(legal_mask.size).reshape(legal_mask.shape)
        noise |= np.uint64(1)  # nonzero for every legal action after the mask below
        np.multiply(noise, legal_mask, out=noise)
        return noise.argmax(axis=1).astype(np.int64)

    def __repr__(self) -> str:
        return "RandomPolicy()"


_ZEROS = np.zeros(OBSERVATION_SIZE, dtype=np.float32)
_ZEROS.flags.writeable = False


def zeros_observations(rows: int) -> np.ndarray:
    """A read-only float32[rows, OBSERVATION_SIZE] of zeros, for policies that ignore them."""
    return np.broadcast_to(_ZEROS, (rows, OBSERVATION_SIZE))


def policy_name(policy: object) -> str:
    """The `name` of a policy, or its class name."""
    name = getattr(policy, "name", None)
    return name if isinstance(name, str) and name else type(policy).__name__


def decide(policy: object, state, games: np.ndarray, legal_mask: np.ndarray,
           rng: np.random.Generator) -> np.ndarray:
    """`int64[len(games)]`: `policy`'s actions for the seats to act in `games` (indices into
    the engine `state`; `legal_mask` holds their rows). Search policies get the state,
    those with `act_from_state` too, those with `act_on_card_sets` the observations in
    that form, the others the float observations (zeros for a policy that skips them); every
    environment, the tournaments and the terminal game ask their policies through here."""
    if searches_state(policy):
        actions = policy.act_on_state(state, games, rng)
    elif callable(getattr(policy, "act_from_state", None)):
        actions = policy.act_from_state(state, games, legal_mask, rng)
    elif not needs_observations(policy):
        actions = policy.act(zeros_observations(games.size), legal_mask, rng)
    elif games.size > 1 and callable(getattr(policy, "act_on_card_sets", None)):
        # (One game takes the float path: observe has a faster path for a batch of one.)
        whole = games.size == state.batch_size  # all the games, in order (else a subset, read in place)
        sets = observe_card_sets(state, state.to_act) if whole else acting_card_sets(state, games)
        actions = policy.act_on_card_sets(*sets, legal_mask, rng)
    else:
        # All the games: observe in place; else a copy of the subset, cheaper to observe than
        # slicing a full observation.
        view = state if games.size == state.batch_size else state.take(games)
        actions = policy.act(observe(view, view.to_act), legal_mask, rng)
    return checked_actions(policy, actions, games.size)


def searches_state(policy: object) -> bool:
    """Whether `policy` decides from the engine state (`act_on_state`), not observations."""
    return callable(getattr(policy, "act_on_state", None))


def is_deterministic(policy: object) -> bool:
    """Whether `policy` says its actions depend on each game alone (`deterministic`)."""
    return getattr(policy, "deterministic", False) is True


def sees_hidden_cards(policy: object) -> bool:
    """Whether `policy` says it reads cards its seat cannot see (`cheats`: `pimc:cheat`)."""
    return getattr(policy, "cheats", False) is True


def refuse_cheats(agents: Sequence[Any], names: Sequence[str] | None = None) -> None:
    """ValueError (one line) when one of `agents` sees cards its seat cannot
    ([`sees_hidden_cards`][]): at a table with a person every
    bot must play from what its seat knows. `names`: how the agents were named (for the message)."""
    names = list(names) if names is not None else [policy_name(agent) for agent in agents]
    cheaters = [name for name, agent in zip(names, agents) if agent is not None and sees_hidden_cards(agent)]
    if cheaters:
        raise ValueError(f"{', '.join(cheaters)} sees every hidden card (for measuring the value of perfect "
                         f"inference only): it cannot sit at a table with a person")


def needs_observations(policy: object) -> bool:
    return bool(getattr(policy, "needs_observations", True))


def check_policy(policy: object, what: str = "policy") -> object:
    """`policy` itself, after checking that it has a callable `act`."""
    if not callable(getattr(policy, "act", None)):
        raise TypeError(
            f"{what} must have a batched act(observations, legal_mask, rng) method "
            f"(see sergeant_major_env.policies.Policy), got {policy!r}"
        )
    return policy


def checked_actions(policy: object, actions, rows: int) -> np.ndarray:
    """The actions a policy returned, as `int64[rows]`, or a clear error naming the policy.

    Only the type and shape are checked here; the engine checks legality (and raises
    [`IllegalActionError`][sergeant_major_env.engine.IllegalActionError] naming the legal actions)."""
    out = np.asarray(actions)
    if out.shape != (rows,) or out.dtype.kind not in "iu":
        raise ValueError(
            f"policy {policy_name(policy)!r} returned actions of dtype {out.dtype} and shape {out.shape}; "
            f"expected integers of shape ({rows},)"
        )
    return out.astype(np.int64, copy=False)
