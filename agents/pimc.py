"""``pimc``: determinized Monte Carlo search (perfect-information Monte Carlo) on the engine.

At each decision with more than one legal action, for the seat to act:

1. sample ``worlds`` complete deals consistent with what the seat knows
   (:func:`sergeant_major_env.worlds.sample_worlds`: uniform among them);
2. in every world, try every legal action, then play the rest of the deal (or ``horizon``
   more decisions) with a fast ``rollout`` policy for all three seats, ``rollouts`` times;
   all worlds, actions and rollouts of all the games deciding advance together, as one
   batch, through the engine;
3. choose the action with the best mean outcome for the seat: its points of the deal
   (R23, R24). Mode choices add the value of the modes kept for later deals (the
   heuristic's plan over the open modes, R8), since a mode used now is gone for good.

It covers every decision: mode choice (worlds redraw the ten cards the playmaker has not
seen, R9), exchange gives and free returns (R21), discards and play. Only the seat's
knowledge enters the worlds, never the real hidden cards, so the agent may be handed the
live engine state (``act_on_state``).

Parameters (``pimc:worlds=32:rollout=greedy``, options separated by colons since
``evaluate.py --agents`` separates agents by commas):

==========  =========  ==============================================================
name        default    meaning
==========  =========  ==============================================================
worlds      16         deals sampled per decision
rollouts    1          rollouts per world and action (more help only a random rollout
                       policy, or ``epsilon`` > 0: the others are deterministic)
rollout     heuristic  the rollout policy (an agent name without options: heuristic, greedy, random)
horizon     0          decisions rolled out after the action; 0 = to the end of the deal.
                       A cut-off deal is scored as if the remaining tricks fell in
                       proportion to the targets
epsilon     0.0        chance of a random legal move at each rollout decision
max_rows    60000      most rollout games advanced together (memory bound)
==========  =========  ==============================================================
"""

from __future__ import annotations

import numpy as np

from sergeant_major_env import engine
from sergeant_major_env.cards import MODE_ACTION_OFFSET, NUM_ACTIONS, bits_to_bool, cards_to_bits, count, lowest
from sergeant_major_env.observation import observe
from sergeant_major_env.policies import needs_observations, zeros_observations
from sergeant_major_env.worlds import sample_worlds

from .heuristic import plan_values

DEFAULTS = {"worlds": 16, "rollouts": 1, "rollout": "heuristic", "horizon": 0, "epsilon": 0.0, "max_rows": 60_000}


class PIMCAgent:
    """The search bot of the module docstring. Needs the engine state: callers that hold one
    (``evaluate.py``, the vec env and single-seat env opponents) call :meth:`act_on_state`."""

    name = "pimc"

    def __init__(self, worlds: int = 16, rollouts: int = 1, rollout: str | object = "heuristic", horizon: int = 0,
                 epsilon: float = 0.0, max_rows: int = 60_000) -> None:
        for label, value, low in (("worlds", worlds, 1), ("rollouts", rollouts, 1), ("horizon", horizon, 0),
                                  ("max_rows", max_rows, 1)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
                raise ValueError(f"pimc: {label} must be an integer >= {low}, got {value!r}")
        if not 0.0 <= float(epsilon) <= 1.0:
            raise ValueError(f"pimc: epsilon must be in [0, 1], got {epsilon!r}")
        if isinstance(rollout, str):
            from .base import make_agent

            if rollout.partition(":")[0] == "pimc":
                raise ValueError("pimc: the rollout policy cannot itself be pimc")
            rollout = make_agent(rollout)
        self.worlds, self.rollouts, self.horizon = int(worlds), int(rollouts), int(horizon)
        self.epsilon, self.max_rows = float(epsilon), int(max_rows)
        self.rollout_policy = rollout
        self._plan = plan_values()

    def __repr__(self) -> str:
        rollout = getattr(self.rollout_policy, "name", type(self.rollout_policy).__name__)
        return (f"PIMCAgent(worlds={self.worlds}, rollouts={self.rollouts}, rollout={rollout!r}, "
                f"horizon={self.horizon}, epsilon={self.epsilon})")

    # ------------------------------------------------------------------ interface

    def act(self, observations: np.ndarray, legal_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        raise TypeError("pimc searches the engine state: it is played by callers that hold one "
                        "(evaluate.py, the vec env and single-seat env opponents) through act_on_state")

    def act_on_state(self, state: engine.State, games: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """int64[len(games)]: the chosen action of the seat to act in each of ``games``."""
        games = np.asarray(games, dtype=np.intp)
        legal = engine.legal_bits(state, games)
        on_table = cards_to_bits(state.trick[games])
        played = np.bitwise_or.reduce(state.played[games], axis=1) & ~on_table
        legal = distinct_cards(legal, played)
        actions = lowest(legal).astype(np.int64)  # the only action where there is one
        searched = np.flatnonzero(count(legal) > 1)
        per_game = self.worlds * self.rollouts * count(legal[searched]).astype(np.int64)
        start = 0
        while start < searched.size:  # chunks of at most max_rows rollout games
            stop = start + max(1, int(np.searchsorted(np.cumsum(per_game[start:]), self.max_rows, side="right")))
            chunk = searched[start:stop]
            values = self.action_values(state, games[chunk], legal[chunk], rng)
            actions[chunk] = values.argmax(axis=1)
            start = stop
        return actions

    # ------------------------------------------------------------------ search

    def action_values(self, state: engine.State, games: np.ndarray, legal: np.ndarray,
                      rng: np.random.Generator) -> np.ndarray:
        """float[G, 58]: each legal action's estimated value for the seat to act (-inf if illegal)."""
        n_worlds = self.worlds * self.rollouts
        worlds = sample_worlds(state, games, self.worlds, rng)
        game_of_pair, action_of_pair = np.nonzero(bits_to_bool(legal, NUM_ACTIONS))
        # One rollout game per (game, action, world, rollout), worlds repeated for each action.
        world_rows = (game_of_pair[:, None] * self.worlds + np.arange(self.worlds)).reshape(-1)
        world_rows = np.repeat(world_rows, self.rollouts)
        sims = worlds.take(world_rows)
        seat = np.repeat(state.to_act[games][game_of_pair], n_worlds).astype(np.intp)
        engine.step(sims, np.repeat(action_of_pair, n_worlds))
        points = self._roll_out(sims, seat, rng)
        values = np.full((games.size, NUM_ACTIONS), -np.inf)
        values[game_of_pair, action_of_pair] = points.reshape(-1, n_worlds).mean(axis=1)
        choosing = state.phase[games] == engine.MODE
        if choosing.any():  # R8: a mode chosen now cannot be chosen again by this playmaker
            open_modes = (legal[choosing] >> np.uint64(MODE_ACTION_OFFSET)).astype(np.int64)
            later = self._plan[open_modes[:, None] & ~(1 << np.arange(6))[None, :]]
            values[choosing, MODE_ACTION_OFFSET:] += later
        return values

    def _roll_out(self, sims: engine.State, seat: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """float[R]: the deal's points for ``seat`` in each rollout game, played to the deal's end."""
        points = np.zeros(sims.batch_size)
        origin = np.arange(sims.batch_size)  # row of each live rollout game in ``points``
        done = sims.deal_ended.copy()
        points[done] = sims.deal_points[done, seat[done]]
        decisions = 0
        while True:
            if done.any():  # drop finished games so the rest step as a dense batch
                keep = np.flatnonzero(~done)
                if keep.size == 0:
                    return points
                sims, origin, seat = sims.take(keep), origin[keep], seat[keep]
            if self.horizon and decisions >= self.horizon:
                points[origin] = _partial_points(sims, seat)
                return points
            legal = engine.legal_bits(sims)
            mask = bits_to_bool(legal, NUM_ACTIONS)
            policy = self.rollout_policy
            obs = observe(sims, sims.to_act) if needs_observations(policy) else zeros_observations(sims.batch_size)
            actions = np.asarray(policy.act(obs, mask, rng), dtype=np.int64)
            if self.epsilon:
                explore = rng.random(actions.size) < self.epsilon
                noise = np.where(mask, rng.random(mask.shape), -1.0).argmax(axis=1)
                actions = np.where(explore, noise, actions)
            engine.step(sims, actions, legal=legal)
            decisions += 1
            done = sims.deal_ended.copy()
            points[origin[done]] = sims.deal_points[done, seat[done]]


def distinct_cards(legal: np.ndarray, played: np.ndarray) -> np.ndarray:
    """``legal`` without the cards that are equivalent to a lower legal card of the same suit:
    when every card between them was played in earlier tricks, the two take and lose the
    same tricks (R16), so only the lowest of each such run needs searching (mode actions
    are kept). ``played``: the cards of completed tricks (the current trick's still count)."""
    out = legal.copy()
    cards = legal & np.uint64(_ALL_CARDS)
    # below: per suit, the card of the previous rank if it is legal, or played and under a
    # legal card of the run (a run of legal cards may skip played ones).
    below = np.zeros_like(cards)
    for rank in range(13):
        rank_bits = _RANK_BITS[rank]
        here = cards & rank_bits
        # A legal card whose next lower unplayed card is legal is redundant.
        out &= ~(here & (below << np.uint64(1)) & rank_bits)
        gone = played & rank_bits  # played cards keep the run going
        below = here | (gone & (below << np.uint64(1)))
    return out


_ALL_CARDS = (1 << 52) - 1
_RANK_BITS = np.array([sum(1 << (13 * s + r) for s in range(4)) for r in range(13)], dtype=np.uint64)


def _partial_points(state: engine.State, seat: np.ndarray) -> np.ndarray:
    """Points of an unfinished deal, the tricks still to play shared in proportion to the targets."""
    rows = np.arange(state.batch_size)
    minimum = state.mode == engine.MINIMUM
    target = engine.targets(state.dealer, state.mode)[rows, seat].astype(np.float64)
    played = state.tricks_won.sum(axis=1)
    won = state.tricks_won[rows, seat] + target * (16 - played) / 16
    return np.where(minimum, target - won, won - target)


def make_pimc_agent(argument: str | None) -> PIMCAgent:
    """``pimc`` or ``pimc:worlds=32:rollout=greedy:...`` (see the module docstring)."""
    options = dict(DEFAULTS)
    for item in filter(None, (argument or "").split(":")):
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or key not in DEFAULTS:
            raise ValueError(f"pimc: bad option {item!r}; expected NAME=VALUE with NAME one of {', '.join(DEFAULTS)}")
        try:
            options[key] = type(DEFAULTS[key])(value.strip())
        except ValueError:
            kind = {int: "an integer", float: "a number"}.get(type(DEFAULTS[key]), "text")
            raise ValueError(f"pimc: {key} must be {kind}, got {value!r}") from None
    return PIMCAgent(**options)
