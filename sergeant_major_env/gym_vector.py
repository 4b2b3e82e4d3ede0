"""A native Gymnasium `VectorEnv` of `num_envs` games, all in ONE batched engine state.

`gymnasium.make_vec("SergeantMajor-v0", num_envs=N)` makes it (the id's
`vector_entry_point`; `vectorization_mode="sync"` still gives N single-seat envs):

```python
SergeantMajorVectorEnv(num_envs, learner_seat=0, opponents=None, reward="points",
                       illegal_action="terminate", illegal_reward=-1.0,
                       autoreset_mode="NextStep", render_mode=None, rules=None, **rule_options)
```

Each game (a *slot*) is the single-seat env's game ([`single_seat`][]):
one learner seat against two opponent policies, with the same options, spaces, rewards and
infos. The batched stepping (opponents called once for all the games waiting on them, until
every game waits on its learner; rewards; restarts) is
[`LearnerGames`][], shared with the SB3 vec env.

Spaces: `single_observation_space` and `single_action_space` are the single-seat env's
(`Box(float32, (OBSERVATION_SIZE,))`, `Discrete(58)`); `observation_space` and
`action_space` their batches (`float32[N, D]`, `MultiDiscrete([58] * N)`).

Step: `step(actions)` takes exactly N integer action ids, shape `(N,)` (another shape,
dtype or an id outside 0..57 is one `ValueError` line, nothing stepped), and returns
`(observations, rewards, terminations, truncations, infos)`; `truncations` are always
False. `infos` follow Gymnasium's convention, a dict of arrays each with its `_key`
mask: `action_mask` (`bool[N, 58]`), `decision`, `deal`, `role`,
`learner_seat`, `scores` (`int64[N, 3]`) and `illegal_action` for every slot (the
single-seat env's keys), `final_scores` for the slots whose game ended.
`action_masks()` returns `infos["action_mask"]` of the last step or reset.

Autoreset (`metadata["autoreset_mode"]`; `autoreset_mode=` an `AutoresetMode` or
its value):

* `NEXT_STEP` (default, Gymnasium's): the step that ends a slot's game returns its
  terminal observation (the learner's view of the finished game) with `terminated` True,
  the terminal infos and a mask marking action 0 alone
  ([`sergeant_major_env.options.action_mask`][]: never an empty row); the next step
  ignores that slot's action and returns the first observation of its next game, reward 0;
* `SAME_STEP`: the step that ends a game returns the next game's first observation and
  infos; `infos["final_obs"]` (an object array) and `infos["final_info"]` (a dict of
  arrays, with masks) hold the finished game's.

A game restarts internally as soon as it ends (its opponents play up to the learner's first
turn in the same batched rounds), in both modes.

Seeding, and the sync mode: `reset(seed=S)` seeds slot i as `vectorization_mode="sync"`
seeds env i: with `S + i` (a list of N seeds gives one per slot). Each slot keeps its own
generator, seeded from its seed as the single-seat env's `np_random`, and draws from it,
as the single-seat env does, the seed of each next game (and the learner seat when
`learner_seat=None`), so slot i plays the games env i of the sync mode plays: the same
deals and seats, episode after episode. With deterministic opponents (`heuristic`,
`greedy`) and the same learner actions the games are identical, observations, rewards and
infos; random opponents draw from one generator for the whole batch
(`np.random.default_rng([S, 1])`), so theirs differ from the sync mode's per-env ones.

Illegal actions: the single-seat env's option, values and default (one id, one default:
the `"sync"` and `"async"` modes of the id behave the same). `illegal_action="terminate"`
(default) ends that slot's game with `illegal_reward`, as the single-seat env does;
`"raise"` (the training path, where a masked policy never picks one and an illegal action
is a bug) raises [`IllegalActionError`][sergeant_major_env.engine.IllegalActionError] naming the game and
its legal actions, nothing stepped; `"replace"` plays a random legal action instead.
`"terminate"` and `"replace"` set `infos["illegal_action"]`.

Render: `render_mode="ansi"` (the single-seat env's one mode; also `None`, the default):
`render()` returns a tuple of N texts, slot i's table as its learner sees it
(`single_seat.learner_view`), as the sync mode's `render()` returns each env's; under
`NEXT_STEP` a slot whose game ended at the last step shows that finished game until the
next step, as the sync mode's env does. `None` without a render mode.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from . import engine, options as env_options
from .cards import NUM_ACTIONS
from .engine import OVER
from .learner_games import LearnerGames, check_num_envs, checked_actions
from .observation import observe
from .rules import Rules
from .seeding import MAX_SEED, check_seed
from .single_seat import SergeantMajorEnv, learner_view, observation_space

AUTORESET_MODES = tuple(AutoresetMode(value) for value in env_options.AUTORESET_MODES)
"""The autoreset modes this env offers (the first is the default): NEXT_STEP, SAME_STEP."""
INFO_KEYS = ("action_mask", "decision", "deal", "role", "learner_seat", "scores", "illegal_action")
"""The infos of every slot at every step (the single-seat env's keys)."""


class SergeantMajorVectorEnv(LearnerGames, VectorEnv):
    """`num_envs` single-seat games in one engine state (see the module docstring)."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": SergeantMajorEnv.metadata["render_modes"],
                "render_fps": SergeantMajorEnv.metadata["render_fps"]}

    def __init__(
        self,
        num_envs: int,
        learner_seat: int | None = 0,
        opponents: Any = None,
        reward: str = env_options.DEFAULT_REWARD,
        illegal_action: str = env_options.GYM_VECTOR_ILLEGAL_ACTIONS[0],
        illegal_reward: float = env_options.ILLEGAL_REWARD,
        autoreset_mode: AutoresetMode | str = env_options.AUTORESET_MODES[0],
        render_mode: str | None = None,
        rules: Rules | Mapping[str, Any] | None = None,
        **rule_options: Any,
    ) -> None:
        where = type(self).__name__
        self.num_envs = check_num_envs(num_envs, where)
        self.rules = env_options.make_rules(rules, rule_options, where)
        reward_kind = env_options.check_reward(reward, where)
        self.illegal_action = env_options.check_illegal_action(
            illegal_action, env_options.GYM_VECTOR_ILLEGAL_ACTIONS, where)
        self.illegal_reward = env_options.check_illegal_reward(illegal_reward, where)
        self.learner_seat_option = env_options.check_learner_seat(learner_seat, where)
        self.autoreset_mode = check_autoreset_mode(autoreset_mode, where)
        if render_mode is not None:
            env_options.check_choice("render_mode", render_mode, self.metadata["render_modes"], where)
        self._init_learner_games(opponents, reward_kind, 0, where)
        self.metadata = {**type(self).metadata, "autoreset_mode": self.autoreset_mode}
        self.render_mode = render_mode
        self.single_observation_space = observation_space(self.rules.num_deals)
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._slot_rngs: list[np.random.Generator | None] = [None] * self.num_envs
        self._autoreset = np.zeros(self.num_envs, dtype=bool)  # NEXT_STEP: slots to reset at this step
        self._masks = np.zeros((self.num_envs, NUM_ACTIONS), dtype=bool)
        self._final: dict[str, np.ndarray] = {}
        self._ending_illegal = False  # _record_finished: the games end by an illegal action
        self._final_texts: dict[int, str] = {}  # render_mode="ansi": the finished games' tables, by slot

    # ------------------------------------------------------------------ Gymnasium API
    def reset(self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None):
        where = f"{type(self).__name__}.reset"
        seeds = self._checked_seeds(seed, where)
        options = env_options.check_reset_options(options, ("learner_seat",), where)
        seat_option = env_options.check_learner_seat(options.get("learner_seat", self.learner_seat_option), where)
        if isinstance(seed, (int, np.integer)):  # every argument is good: now things change
            super().reset(seed=int(seed))
        for i, slot_seed in enumerate(seeds):
            if slot_seed is not None or self._slot_rngs[i] is None:
                self._slot_rngs[i] = seeding.np_random(slot_seed)[0]
        slots = np.arange(self.num_envs)
        game_seeds, seats = self._draw_games(slots, seat_option, seeds)
        first = int(seed) if isinstance(seed, (int, np.integer)) else int(game_seeds[0])
        self.opponent_rng = np.random.default_rng([first, 1])
        self.pool_rng = np.random.default_rng([first, 2])
        self.learner_seat[:] = seats
        self._autoreset[:] = False
        self._start_games(engine.init(game_seeds, self.rules))
        infos = self._infos(np.zeros(self.num_envs, dtype=bool))
        return self._observe(), infos

    def step(self, actions):
        if self.state is None:
            raise RuntimeError(f"{type(self).__name__}.step: no games yet: call reset() first")
        actions = checked_actions(actions, self.num_envs, f"{type(self).__name__}.step")
        replace = self.illegal_action == "replace"
        stepped = np.flatnonzero(~self._autoreset)  # NEXT_STEP: the others' next games are already waiting
        illegal = np.zeros(self.num_envs, dtype=bool)
        illegal[stepped] = ((self._legal[stepped] >> actions[stepped].astype(np.uint64)) & np.uint64(1)) == 0
        self._final = {}
        self._final_texts = {}
        ending = np.flatnonzero(illegal) if self.illegal_action == "terminate" else stepped[:0]
        games = np.setdiff1d(stepped, ending, assume_unique=True)
        if games.size:
            self._learner_step(actions[games], self.opponent_rng, replace,
                               None if games.size == self.num_envs else games)
        else:
            self._begin_step()
        if ending.size:
            self._end_by_illegal_actions(ending)
        terminated = self._dones.copy()
        observations = self._observe()
        infos = self._infos(illegal)
        if self.autoreset_mode == AutoresetMode.NEXT_STEP:
            self._autoreset = terminated
            if terminated.any():
                observations[terminated] = self._final["observation"][terminated]
                for key in INFO_KEYS:
                    if key in self._final:
                        infos[key][terminated] = self._final[key][terminated]
                self._masks = infos["action_mask"]
                infos["final_scores"] = self._final["final_scores"]
                infos["_final_scores"] = terminated
        elif terminated.any():  # SAME_STEP
            final_obs = np.full(self.num_envs, None, dtype=object)
            for i in np.flatnonzero(terminated).tolist():
                final_obs[i] = self._final["observation"][i]
            final_info = {key: self._final[key] for key in (*INFO_KEYS, "final_scores") if key in self._final}
            final_info["illegal_action"] = illegal
            for key in list(final_info):  # Gymnasium's convention: zeros where the mask is False
                final_info[key] = np.where(terminated.reshape(-1, *[1] * (final_info[key].ndim - 1)),
                                           final_info[key], 0).astype(final_info[key].dtype)
                final_info[f"_{key}"] = terminated
            infos.update(final_obs=final_obs, _final_obs=terminated, final_info=final_info, _final_info=terminated)
            infos["illegal_action"] = illegal & ~terminated  # the next game's infos, as a reset's
        rewards = self._rewards.astype(np.float32)
        return observations, rewards, terminated, np.zeros(self.num_envs, dtype=bool), infos

    def _end_by_illegal_actions(self, slots: np.ndarray) -> None:
        """`illegal_action="terminate"`: the games of `slots` end now (their learners'
        actions illegal, not played), with `illegal_reward`; the slots start their next games."""
        self._pending[slots] = 0
        self._rewards[slots] = self.illegal_reward
        self._returns[slots] = 0
        self._ending_illegal = True
        try:
            self._finish_games(self.state, slots, self._slots, self.learner_seat)
        finally:
            self._ending_illegal = False
        self._play_opponents()  # their next games, up to the learners' first turns

    def render(self) -> tuple[str, ...] | None:
        """`render_mode="ansi"`: each slot's table as its learner sees it (module docstring,
        "Render"); `None` without a render mode."""
        if self.render_mode != "ansi":
            return None
        if self.state is None:
            raise RuntimeError(f"{type(self).__name__}.render: no games yet: call reset() first")
        names = self.opponent_names()
        return tuple(self._final_texts[slot] if self._autoreset[slot] and slot in self._final_texts
                     else learner_view(self.state, int(self.learner_seat[slot]), names[slot], slot)
                     for slot in range(self.num_envs))

    def action_masks(self) -> np.ndarray:
        """`bool[N, 58]`: the masks of the observations last returned (`infos["action_mask"]`)."""
        if self.state is None:
            raise RuntimeError(f"{type(self).__name__}.action_masks: no games yet: call reset() first")
        return self._masks.copy()

    def close_extras(self, **kwargs: Any) -> None:
        pass

    # ------------------------------------------------------------------ internals
    def _checked_seeds(self, seed: Any, where: str) -> list[int | None]:
        """One seed (or None) per slot, as the sync mode gives its envs: `S + i` from one
        seed `S`; a list of N seeds or Nones; None for all."""
        n = self.num_envs
        if seed is None:
            return [None] * n
        if isinstance(seed, (list, tuple)):
            if len(seed) != n:
                raise ValueError(f"{where}: seed must be one seed, None or a list of {n} seeds (one per game), "
                                 f"got a list of {len(seed)}")
            return [None if s is None else check_seed(s, f"{where}: seed[{i}]") for i, s in enumerate(seed)]
        seed = check_seed(seed, f"{where}: seed")
        if seed + n - 1 > MAX_SEED:
            raise ValueError(f"{where}: seed must be at most 2**63 - {n} so that game {n - 1} plays seed + {n - 1}, "
                             f"got {seed}")
        return [seed + i for i in range(n)]

    def _draw_games(self, slots: np.ndarray, seat_option: int | None,
                    seeds: list[int | None] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The game seeds and learner seats of the next games of `slots`, drawn as the
        single-seat env's `reset` draws them (a given seed, else one from the slot's
        generator; then the seat, unless fixed)."""
        game_seeds = np.zeros(slots.size, dtype=np.uint64)
        seats = np.zeros(slots.size, dtype=np.int8)
        for k, slot in enumerate(slots.tolist()):
            rng = self._slot_rngs[slot]
            given = None if seeds is None else seeds[slot]
            game_seeds[k] = given if given is not None else int(rng.integers(0, 2**63 - 1))
            seats[k] = seat_option if seat_option is not None else int(rng.integers(3))
        return game_seeds, seats

    def _next_games(self, state: engine.State, ended: np.ndarray, ended_slots: np.ndarray) -> engine.State:
        game_seeds, seats = self._draw_games(ended_slots, self.learner_seat_option)
        fresh = engine.init(game_seeds, self.rules)
        fresh.episode[:] = state.episode[ended] + np.uint32(1)
        self.learner_seat[ended_slots] = seats
        return fresh

    def _record_finished(self, state: engine.State, ended: np.ndarray, ended_slots: np.ndarray,
                         ended_seats: np.ndarray) -> None:
        """The finished games' observations and infos, by slot, in `self._final`."""
        n = self.num_envs
        if not self._final:
            self._final = {"observation": np.zeros((n, *self.single_observation_space.shape), dtype=np.float32),
                           "action_mask": env_options.action_mask(np.zeros(n, dtype=np.uint64)),
                           "decision": np.full(n, OVER, dtype=np.int64),
                           "deal": np.zeros(n, dtype=np.int64), "role": np.zeros(n, dtype=np.int64),
                           "learner_seat": np.zeros(n, dtype=np.int64),
                           "scores": np.zeros((n, 3), dtype=np.int64),
                           "final_scores": np.zeros((n, 3), dtype=np.int64)}
        final = self._final
        final["observation"][ended_slots] = observe(state.take(ended), ended_seats)
        final["deal"][ended_slots] = state.deal[ended]
        final["role"][ended_slots] = (ended_seats.astype(np.int64) - state.dealer[ended]) % 3
        final["learner_seat"][ended_slots] = ended_seats
        final["scores"][ended_slots] = state.scores[ended]
        # An illegal action ends a game in progress: its totals so far, as the single-seat env.
        final["final_scores"][ended_slots] = (state.scores if self._ending_illegal else state.final_scores)[ended]
        if self.render_mode == "ansi":  # the finished tables, for render() until the next step (NEXT_STEP)
            names = self.opponent_names(ended_slots)
            for k, (row, slot) in enumerate(zip(ended.tolist(), ended_slots.tolist())):
                self._final_texts[slot] = learner_view(state, int(ended_seats[k]), names[k], row)

    def _infos(self, illegal: np.ndarray) -> dict[str, np.ndarray]:
        """Every slot's infos now (its current game), with Gymnasium's `_key` masks."""
        state, seats = self.state, self.learner_seat.astype(np.int64)
        self._masks = env_options.action_mask(self._legal)
        infos = {"action_mask": self._masks.copy(), "decision": state.phase.astype(np.int64),
                 "deal": state.deal.astype(np.int64), "role": (seats - state.dealer) % 3,
                 "learner_seat": seats, "scores": state.scores.astype(np.int64), "illegal_action": illegal}
        everyone = np.ones(self.num_envs, dtype=bool)
        for key in INFO_KEYS:
            infos[f"_{key}"] = everyone.copy()
        return infos


def check_autoreset_mode(value: Any, where: str) -> AutoresetMode:
    """An `AutoresetMode` this env offers, from the enum or its value (one line if not)."""
    try:
        mode = value if isinstance(value, AutoresetMode) else AutoresetMode(value)
    except ValueError:
        mode = None
    if mode not in AUTORESET_MODES:
        allowed = ", ".join(f"AutoresetMode.{m.name} ({m.value!r})" for m in AUTORESET_MODES)
        raise ValueError(f"{where}: autoreset_mode must be {allowed}, got {value!r}")
    return mode
