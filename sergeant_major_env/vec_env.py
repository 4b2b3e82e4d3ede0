"""A Stable-Baselines3 `VecEnv` of `num_envs` games, all in ONE batched engine state.

`SergeantMajorVecEnv(num_envs, seed=0, opponents=None, reward="points", **rule_options)`
holds one [`State`][sergeant_major_env.engine.State] of `num_envs` games. In each game
(a *slot*) one seat is the learner, the one SB3 acts for; the two others are played by
opponent policies ([`sergeant_major_env.policies`][]), batched: whenever games wait on
an opponent, that opponent's policy is called ONCE for all of them (the same policy
object for both opponents: one call for both seats), the engine steps those games, and
this repeats until every game waits on its learner. There is no Python loop over games.
That machinery is [`LearnerGames`][], shared with the
Gymnasium `VectorEnv` ([`gym_vector`][]); this module adds SB3's API.

Learner seats rotate so that every seat and role is learned: game number `e` (0, 1, ...)
of slot `i` has the learner at seat `(i + e) % 3` (`learner_seat=k` fixes it).

Spaces, rewards, options: as [`SergeantMajorEnv`][]
(`Box(float32, (OBSERVATION_SIZE,))` = `observe(state, learner seat)`,
`Discrete(58)`; `reward="points"` (each deal's points, at the step in which the deal
ended, opponents' turns included: an episode's rewards sum to the final score),
`"score"` or `"rank"`; rule options as keyword arguments or `rules=`).

Version: the environment version of `SergeantMajor-v0` and `sergeant_major_v0`
([`sergeant_major_env.versions`][]): the same games, observations, actions and rewards.

Per step (`step_async` + `step_wait`): the learner actions of all games are applied in
one `engine.step`; then the opponents play. `step_wait` returns `obs float32[N, D]`,
`rewards float32[N]`, `dones bool[N]`, `infos` (a dict per game). A game that ends
(on the learner's or on an opponent's card) has `done` True, `infos[i]` holds
`terminal_observation` (the learner's view of the finished game), `episode`
(`{"r": return, "l": learner decisions, "t": seconds since the env was made}`, as SB3's
`Monitor`), `final_scores` and `TimeLimit.truncated` (False); the slot has already
started its next game, whose first observation is `obs[i]`.

Actions: `step_async(actions)` takes exactly `N` integer action ids, an array (or
sequence) of shape `(N,)`, and copies it, so changing the array before `step_wait`
does not change the step; any other shape or dtype, or an id outside 0..57, is a one-line
`ValueError` at `step_async` (nothing is stepped).

Action masks: `action_masks()` -> `bool[N, 58]`; sb3-contrib's `MaskablePPO` gets them
through `env_method("action_masks")` (a list of per-game masks), which is supported.
An illegal learner action raises [`IllegalActionError`][sergeant_major_env.engine.IllegalActionError]
naming the game and its legal actions, with the state unchanged (`illegal_action=
"replace"` substitutes a random legal action instead); why raising is the default here is
said, with every other keyword, once in [`sergeant_major_env.options`][].

Each opponent round steps only the games waiting on an opponent (`engine.step(...,
games=waiting)`), so late rounds with few games left cost little. Finished games are
restarted here rather than by
`engine.step(autoreset=True)` (same seeds, same new game), so that the finished game's
`terminal_observation` can still be observed.

Opponent pool (for training against a mix, e.g. a curriculum or a self-play league):
`set_opponent_pool(policies, weights=None, pairs="same")` replaces the fixed opponents.
Each slot draws its opponents from the pool (probabilities proportional to `weights`)
whenever one of its games starts: with `pairs="same"` one member plays both opponent
seats, with `pairs="independent"` the left and right seats are drawn separately. A game
keeps its opponents until it ends, so a call while games are in progress (new weights, new
members) takes effect slot by slot, at each slot's next game; `reset()` redraws every
slot. An opponent round then calls each member ONCE, on all the waiting games in which it
holds the seat to act (no Python loop over games). `opponent_ids` (`int64[N, 2]`: the
member index of the left and right opponent of each slot's current game, into
`opponent_members`) shows the assignment; `set_opponent_pool(None)` returns to the
fixed `opponents`. Every finished game's info also holds `opponents`: the names of its
(left, right) opponents, so training can log its returns per opponent.

Seeding (`S` follows the one seed rule of `sergeant_major_env.seeding`, an integer
0 to 2**63 - 1, checked before anything changes): slot `i` plays the engine games of seeds
`S + i`, `S + i + N`,
`S + i + 2N`, ... (`N = num_envs`; the engine's autoreset convention), so every game is
reproduced by its seed alone given the same actions (the opponents' too: with
deterministic opponents, game i alone in the engine is the same game). `S` is `seed`
at the first `reset()`, or the value given to `seed(S)` before a `reset()`. The opponents draw
from one generator for the whole batch, `np.random.default_rng([S, 1])`; the pool draws
(which member plays which game) from another, `np.random.default_rng([S, 2])`. A `reset()`
without a new seed abandons the games in progress and lets each slot continue with its
next seed.
"""

from __future__ import annotations

import time
from typing import Any, Mapping, Sequence

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv

from . import engine, options as env_options
from .cards import NUM_ACTIONS, bits_to_bool
from .learner_games import BYTES_PER_ENV, POOL_PAIRS, LearnerGames, check_num_envs, checked_actions  # noqa: F401
from .observation import observe
from .rules import Rules
from .seeding import check_seed
from .single_seat import observation_space

class SergeantMajorVecEnv(LearnerGames, VecEnv):
    """`num_envs` games of one learner against opponent policies (see the module docstring;
    the batched stepping is [`LearnerGames`][])."""

    def __init__(
        self,
        num_envs: int,
        seed: int = 0,
        opponents: Any = None,
        reward: str = env_options.DEFAULT_REWARD,
        learner_seat: int | None = None,
        illegal_action: str = env_options.VEC_ILLEGAL_ACTIONS[0],
        rules: Rules | Mapping[str, Any] | None = None,
        **rule_options: Any,
    ) -> None:
        where = type(self).__name__
        check_num_envs(num_envs, where)
        seed = check_seed(seed, f"{where}: seed")
        self.rules = env_options.make_rules(rules, rule_options, where)
        reward_kind = env_options.check_reward(reward, where)
        self.illegal_action = env_options.check_illegal_action(illegal_action, env_options.VEC_ILLEGAL_ACTIONS, where)
        self.fixed_learner_seat = env_options.check_learner_seat(learner_seat, where)
        self.render_mode = None
        VecEnv.__init__(self, int(num_envs), observation_space(self.rules.num_deals), spaces.Discrete(NUM_ACTIONS))
        self._init_learner_games(opponents, reward_kind, seed, where)
        self._base_seed = seed
        self._seed_pending: int | None = seed
        self._actions: np.ndarray | None = None
        self._t_start = time.time()
        self._infos: list[dict[str, Any]] = []

    # ------------------------------------------------------------------ VecEnv API
    def reset(self):
        n = self.num_envs
        if self._seed_pending is not None:
            seeds = engine.game_seeds(self._seed_pending, n)
            self.opponent_rng = np.random.default_rng([self._seed_pending, 1])
            self.pool_rng = np.random.default_rng([self._seed_pending, 2])
            episodes = np.zeros(n, dtype=np.uint32)
            self._seed_pending = None
        else:  # continue each slot with its next seed
            seeds = self.state.seed + np.uint64(n)
            episodes = self.state.episode + np.uint32(1)
        state = engine.init(seeds, self.rules)
        state.episode[:] = episodes
        self.state = state
        self._set_learner_seats(self._slots)
        self._start_games(state)
        self.reset_infos = [{"learner_seat": int(s)} for s in self.learner_seat]
        self._seeds = [None] * n
        return self._observe()

    def step_async(self, actions: np.ndarray) -> None:
        """Take the learners' actions (checked and copied: see "Actions" in the module docstring)."""
        if self.state is None:
            raise RuntimeError(f"{type(self).__name__}.step_async: no games yet: call reset() first")
        self._actions = self._checked_actions(actions)

    def step_wait(self):
        if self.state is None:
            raise RuntimeError("call reset() before step()")
        if self._actions is None:
            raise RuntimeError("step_wait() without step_async()")
        actions, self._actions = self._actions, None
        self._learner_step(actions, self.opponent_rng, self.illegal_action == "replace")
        return self._observe(), self._rewards.astype(np.float32), self._dones.copy(), self._infos

    def action_masks(self) -> np.ndarray:
        """bool[num_envs, 58]: each learner's legal actions now (for MaskablePPO)."""
        if self.state is None:
            raise RuntimeError("call reset() first")
        return bits_to_bool(self._legal, NUM_ACTIONS).copy()

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Use seed `S` from the next `reset()`: slot i then plays S + i, S + i + N, ..."""
        if seed is None:
            seed = int(np.random.randint(0, np.iinfo(np.uint32).max, dtype=np.uint32))
        self._seed_pending = self._base_seed = check_seed(seed, f"{type(self).__name__}.seed: seed")
        return [self._base_seed + i for i in range(self.num_envs)]

    def close(self) -> None:
        pass

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        indices = self._indices(indices)
        if attr_name == "learner_seat":
            return [int(self.learner_seat[i]) for i in indices]
        value = getattr(self, attr_name)
        return [value for _ in indices]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        if len(self._indices(indices)) != self.num_envs:
            raise ValueError("the games share one engine: attributes can only be set for all of them")
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices: Any = None, **method_kwargs) -> list[Any]:
        indices = self._indices(indices)
        if method_name == "action_masks":
            masks = self.action_masks()
            return [masks[i] for i in indices]
        if method_name in ("render", "close", "seed"):
            return [None for _ in indices]
        raise AttributeError(f"{type(self).__name__} has no per-game method {method_name!r} (supported: action_masks)")

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False for _ in self._indices(indices)]

    def get_images(self) -> Sequence[np.ndarray | None]:
        return [None for _ in range(self.num_envs)]

    # ------------------------------------------------------------------ internals
    def _checked_actions(self, actions: Any) -> np.ndarray:
        """A copy of `actions` as `int64[N]`, or a ValueError naming what was wrong."""
        return checked_actions(actions, self.num_envs, f"{type(self).__name__}.step_async")

    def _set_learner_seats(self, slots: np.ndarray) -> None:
        self.learner_seat[slots] = self._next_seats(slots, self.state.episode[slots])

    def _begin_step(self) -> None:
        super()._begin_step()
        self._infos = [{} for _ in range(self.num_envs)]

    def _record_finished(self, state: engine.State, ended: np.ndarray, ended_slots: np.ndarray,
                         ended_seats: np.ndarray) -> None:
        """The finished games' infos (SB3's conventions: terminal_observation, episode)."""
        final = state.final_scores[ended]
        terminal = observe(state.take(ended), ended_seats)
        now = round(time.time() - self._t_start, 6)
        names = self.opponent_names(ended_slots)
        for k, slot in enumerate(ended_slots.tolist()):
            self._infos[slot] = {
                "terminal_observation": terminal[k],
                "episode": {"r": float(self._returns[slot] + self._rewards[slot]),
                            "l": int(self._lengths[slot]), "t": now},
                "final_scores": final[k].astype(np.int64).tolist(),
                "learner_seat": int(ended_seats[k]),
                "opponents": names[k],
                "TimeLimit.truncated": False,
            }

    def _next_games(self, state: engine.State, ended: np.ndarray, ended_slots: np.ndarray) -> engine.State:
        """Seed + N (the engine's autoreset rule), the next learner seat."""
        fresh = engine.init(state.seed[ended] + np.uint64(self.num_envs), self.rules)
        fresh.episode[:] = state.episode[ended] + np.uint32(1)
        self.learner_seat[ended_slots] = self._next_seats(ended_slots, fresh.episode)
        return fresh

    def _next_seats(self, slots: np.ndarray, episodes: np.ndarray) -> np.ndarray:
        if self.fixed_learner_seat is not None:
            return np.full(slots.size, self.fixed_learner_seat, dtype=np.int8)
        return ((slots + episodes.astype(np.int64)) % 3).astype(np.int8)
