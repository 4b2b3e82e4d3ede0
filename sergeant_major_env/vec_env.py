"""A Stable-Baselines3 ``VecEnv`` of ``num_envs`` games, all in ONE batched engine state.

``SergeantMajorVecEnv(num_envs, seed=0, opponents=None, reward="points", **rule_options)``
holds one :class:`~sergeant_major_env.engine.State` of ``num_envs`` games. In each game
(a *slot*) one seat is the learner, the one SB3 acts for; the two others are played by
opponent policies (:mod:`sergeant_major_env.policies`), batched: whenever games wait on
an opponent, that opponent's policy is called ONCE for all of them (the same policy
object for both opponents: one call for both seats), the engine steps those games, and
this repeats until every game waits on its learner. There is no Python loop over games.

Learner seats rotate so that every seat and role is learned: game number ``e`` (0, 1, ...)
of slot ``i`` has the learner at seat ``(i + e) % 3`` (``learner_seat=k`` fixes it).

Spaces, rewards, options: as :class:`~sergeant_major_env.single_seat.SergeantMajorEnv`
(``Box(float32, (OBSERVATION_SIZE,))`` = ``observe(state, learner seat)``,
``Discrete(58)``; ``reward="points"`` (each deal's points, at the step in which the deal
ended, opponents' turns included: an episode's rewards sum to the final score),
``"score"`` or ``"rank"``; rule options as keyword arguments or ``rules=``).

Version: the environment version of ``SergeantMajor-v0`` and ``sergeant_major_v0``
(:mod:`sergeant_major_env.versions`): the same games, observations, actions and rewards.

Per step (``step_async`` + ``step_wait``): the learner actions of all games are applied in
one ``engine.step``; then the opponents play. ``step_wait`` returns ``obs float32[N, D]``,
``rewards float32[N]``, ``dones bool[N]``, ``infos`` (a dict per game). A game that ends
(on the learner's or on an opponent's card) has ``done`` True, ``infos[i]`` holds
``terminal_observation`` (the learner's view of the finished game), ``episode``
(``{"r": return, "l": learner decisions, "t": seconds since the env was made}``, as SB3's
``Monitor``), ``final_scores`` and ``TimeLimit.truncated`` (False); the slot has already
started its next game, whose first observation is ``obs[i]``.

Actions: ``step_async(actions)`` takes exactly ``N`` integer action ids, an array (or
sequence) of shape ``(N,)``, and copies it, so changing the array before ``step_wait``
does not change the step; any other shape or dtype, or an id outside 0..57, is a one-line
``ValueError`` at ``step_async`` (nothing is stepped).

Action masks: ``action_masks()`` -> ``bool[N, 58]``; sb3-contrib's ``MaskablePPO`` gets them
through ``env_method("action_masks")`` (a list of per-game masks), which is supported.
An illegal learner action raises :class:`~sergeant_major_env.engine.IllegalActionError`
naming the game and its legal actions, with the state unchanged (``illegal_action=
"replace"`` substitutes a random legal action instead). Raising stays the default here,
unlike the single-seat and AEC envs (whose default ``"terminate"`` ends the game with a
penalty so that generic checkers pass): this env is the training path, where
``MaskablePPO`` never picks a masked action, so an illegal action is a bug of the caller
that should stop the run; no generic checker steps a VecEnv (see
:mod:`sergeant_major_env.options`).

Each opponent round steps only the games waiting on an opponent (``engine.step(...,
games=waiting)``), so late rounds with few games left cost little. Finished games are
restarted here rather than by
``engine.step(autoreset=True)`` (same seeds, same new game), so that the finished game's
``terminal_observation`` can still be observed.

Opponent pool (for training against a mix, e.g. a curriculum or a self-play league):
``set_opponent_pool(policies, weights=None, pairs="same")`` replaces the fixed opponents.
Each slot draws its opponents from the pool (probabilities proportional to ``weights``)
whenever one of its games starts: with ``pairs="same"`` one member plays both opponent
seats, with ``pairs="independent"`` the left and right seats are drawn separately. A game
keeps its opponents until it ends, so a call while games are in progress (new weights, new
members) takes effect slot by slot, at each slot's next game; ``reset()`` redraws every
slot. An opponent round then calls each member ONCE, on all the waiting games in which it
holds the seat to act (no Python loop over games). ``opponent_ids`` (``int64[N, 2]``: the
member index of the left and right opponent of each slot's current game, into
``opponent_members``) shows the assignment; ``set_opponent_pool(None)`` returns to the
fixed ``opponents``. Every finished game's info also holds ``opponents``: the names of its
(left, right) opponents, so training can log its returns per opponent.

Seeding (``S`` follows the one seed rule of :mod:`sergeant_major_env.seeding`, an integer
0 to 2**63 - 1, checked before anything changes): slot ``i`` plays the engine games of seeds
``S + i``, ``S + i + N``,
``S + i + 2N``, ... (``N = num_envs``; the engine's autoreset convention), so every game is
reproduced by its seed alone given the same actions (the opponents' too: with
deterministic opponents, game i alone in the engine is the same game). ``S`` is ``seed``
at the first ``reset()``, or the value given to ``seed(S)`` before a ``reset()``. The opponents draw
from one generator for the whole batch, ``np.random.default_rng([S, 1])``; the pool draws
(which member plays which game) from another, ``np.random.default_rng([S, 2])``. A ``reset()``
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
from .engine import IllegalActionError
from .limits import check_fits, shorten
from .observation import observe
from .policies import check_policy, decide, policy_name
from .rules import Rules
from .seeding import check_seed
from .single_seat import observation_space, opponent_pair

POOL_PAIRS = ("same", "independent")

# The opponents' loop cannot take more rounds than the longest run of opponent decisions
# (a deal's mode choice, exchanges, discards and plays): this only guards against a bug.
_MAX_OPPONENT_ROUNDS = 10_000

BYTES_PER_ENV = 10_000
"""Memory one environment of the vec env holds at its peak (its engine game, observation,
buffers and info dict: 9.5 KB measured with tracemalloc over reset and steps of 20,000 envs);
``num_envs`` is checked against what this machine has available before anything is made."""


class SergeantMajorVecEnv(VecEnv):
    """``num_envs`` games of one learner against opponent policies (see the module docstring)."""

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
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"{where}: num_envs must be a positive integer, got {shorten(num_envs)}")
        check_fits(f"{where}: {int(num_envs):,} environments", int(num_envs) * BYTES_PER_ENV, "give fewer num_envs")
        seed = check_seed(seed, f"{where}: seed")
        self.rules = env_options.make_rules(rules, rule_options, where)
        self.reward_kind = env_options.check_reward(reward, where)
        self.illegal_action = env_options.check_illegal_action(illegal_action, env_options.VEC_ILLEGAL_ACTIONS, where)
        self.fixed_learner_seat = env_options.check_learner_seat(learner_seat, where)
        self.opponents = opponent_pair(opponents, where)
        self.render_mode = None
        super().__init__(int(num_envs), observation_space(self.rules.num_deals), spaces.Discrete(NUM_ACTIONS))
        n = self.num_envs
        self._base_seed = seed
        self._seed_pending: int | None = seed
        self.state: engine.State | None = None
        self.learner_seat = np.zeros(n, dtype=np.int8)
        self.opponent_rng = np.random.default_rng([self._base_seed, 1])
        # Opponent pool (set_opponent_pool): members, the drawable ones and their weights,
        # and each slot's (left, right) member ids; None = the fixed self.opponents.
        self.opponent_members: list[object] = []
        self.opponent_ids = np.zeros((n, 2), dtype=np.int64)
        self._pool: np.ndarray | None = None  # member ids that can be drawn
        self._pool_p = np.zeros(0)
        self._pool_pairs = "same"
        self.pool_rng = np.random.default_rng([self._base_seed, 2])
        self._legal = np.zeros(n, dtype=np.uint64)  # the learners' legal actions now (bits)
        self._slots = np.arange(n)
        self._pending = np.zeros(n, dtype=np.float64)  # rewards earned outside a learner step
        self._returns = np.zeros(n, dtype=np.float64)
        self._lengths = np.zeros(n, dtype=np.int64)
        self._actions: np.ndarray | None = None
        self._t_start = time.time()
        # Per-step buffers, filled by the helpers below.
        self._rewards = np.zeros(n, dtype=np.float64)
        self._dones = np.zeros(n, dtype=bool)
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
        self.state = engine.init(seeds, self.rules)
        self.state.episode[:] = episodes
        self._set_learner_seats(self._slots)
        self._draw_opponents(self._slots)
        self._pending[:] = 0
        self._returns[:] = 0
        self._lengths[:] = 0
        self._begin_step()
        self._play_opponents()
        self._pending += self._rewards
        self.reset_infos = [{"learner_seat": int(s)} for s in self.learner_seat]
        self._seeds = [None] * n
        return observe(self.state, self.learner_seat)

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
        if self.illegal_action == "replace":
            actions, _ = env_options.replace_illegal(actions, self._legal, self.opponent_rng)
        try:
            engine.step(self.state, actions, legal=self._legal)  # every game waits on its learner
        except IllegalActionError as error:
            raise IllegalActionError(f"learner action: {error}") from None
        self._begin_step()
        self._rewards += self._pending
        self._pending[:] = 0
        self._lengths += 1
        self._after_engine_step(self.state, self._slots, self._slots, self.learner_seat)
        self._play_opponents()
        rewards = self._rewards.astype(np.float32)
        self._returns += self._rewards
        self._returns[self._dones] = 0  # the finished games' returns went into their infos
        observations = observe(self.state, self.learner_seat)
        return observations, rewards, self._dones.copy(), self._infos

    def action_masks(self) -> np.ndarray:
        """bool[num_envs, 58]: each learner's legal actions now (for MaskablePPO)."""
        if self.state is None:
            raise RuntimeError("call reset() first")
        return bits_to_bool(self._legal, NUM_ACTIONS).copy()

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Use seed ``S`` from the next ``reset()``: slot i then plays S + i, S + i + N, ..."""
        if seed is None:
            seed = int(np.random.randint(0, np.iinfo(np.uint32).max, dtype=np.uint32))
        self._seed_pending = self._base_seed = check_seed(seed, f"{type(self).__name__}.seed: seed")
        return [self._base_seed + i for i in range(self.num_envs)]

    def close(self) -> None:
        pass

    def set_opponent_pool(self, policies: Sequence[object] | None, weights: Sequence[float] | None = None,
                          pairs: str = "same") -> None:
        """Draw each game's opponents from ``policies`` (see the module docstring).

        ``weights``: one non-negative number per policy (default: equal), not all zero; a
        member of weight 0 is not drawn. The same object given twice is one member (weights
        added). ``pairs``: ``"same"`` (one member plays both opponent seats of a game) or
        ``"independent"``. Games in progress keep their opponents; each slot draws at the
        start of its next game (``reset()`` redraws all). ``None`` returns to the fixed
        ``opponents`` of the constructor."""
        where = f"{type(self).__name__}.set_opponent_pool"
        if policies is None:
            self._pool = None
            self.opponent_members = []
            return
        policies = list(policies)
        if not policies:
            raise ValueError(f"{where}: the pool needs at least one policy")
        for k, policy in enumerate(policies):
            check_policy(policy, f"{where}: policies[{k}]")
        if weights is None:
            weights = [1.0] * len(policies)
        weights = np.asarray(weights, dtype=np.float64).reshape(-1)
        if weights.size != len(policies) or not np.isfinite(weights).all() or (weights < 0).any() \
                or weights.sum() <= 0:
            raise ValueError(f"{where}: weights must be {len(policies)} finite non-negative numbers, "
                             f"not all zero, got {weights.tolist()}")
        self._pool_pairs = env_options.check_choice("pairs", pairs, POOL_PAIRS, where)
        # Members: the new pool (one entry per distinct object), then the members still
        # playing games in progress (kept until those games end).
        members: list[object] = []
        pool_weights: list[float] = []
        for policy, weight in zip(policies, weights.tolist()):
            k = next((j for j, m in enumerate(members) if m is policy), None)
            if k is None:
                members.append(policy)
                pool_weights.append(weight)
            else:
                pool_weights[k] += weight
        pool_size = len(members)
        old = self.opponent_members if self._pool is not None else list(_distinct(self.opponents))
        old_ids = self.opponent_ids if self._pool is not None else self._fixed_ids()
        if self.state is not None:  # remap the games in progress to the new member list
            remap = np.zeros(max(len(old), 1), dtype=np.int64)
            for j, policy in enumerate(old):
                k = next((i for i, m in enumerate(members) if m is policy), None)
                if k is None and (old_ids == j).any():
                    members.append(policy)
                    k = len(members) - 1
                remap[j] = -1 if k is None else k
            self.opponent_ids = remap[old_ids]
        self.opponent_members = members
        self._pool = np.arange(pool_size)
        self._pool_p = np.asarray(pool_weights) / np.sum(pool_weights)

    def opponent_names(self, slots: Any = None) -> list[tuple[str, str]]:
        """The names of the (left, right) opponents of each slot's current game (all slots,
        or those of ``slots``)."""
        members = self.opponent_members if self._pool is not None else list(_distinct(self.opponents))
        ids = self.opponent_ids if self._pool is not None else self._fixed_ids()
        names = [policy_name(m) for m in members]
        return [(names[a], names[b]) for a, b in ids[self._indices(slots)].tolist()]

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
        """A copy of ``actions`` as ``int64[N]``, or a ValueError naming what was wrong.

        Exactly shape ``(N,)``: a ``(N, 1)`` or ``(1, N)`` array is refused rather than
        reshaped, since guessing which axis holds the games can step the wrong games."""
        n = self.num_envs
        where = f"{type(self).__name__}.step_async"
        array = np.array(actions, copy=True)  # later changes to the caller's array do not leak in
        if array.shape != (n,) or array.dtype.kind not in "iu":
            raise ValueError(f"{where}: actions must be {n} integer action ids, shape ({n},), "
                             f"got {array.dtype} array of shape {array.shape}")
        ids = array.astype(np.int64, copy=False)
        if np.count_nonzero(ids.view(np.uint64) >= NUM_ACTIONS):  # one test: negative ids wrap to huge ones
            game = int(np.flatnonzero((array < 0) | (array >= NUM_ACTIONS))[0])
            raise ValueError(f"{where}: action ids are 0..{NUM_ACTIONS - 1} (RULES.md section 10), "
                             f"got {array[game]} for game {game}")
        return ids

    def _indices(self, indices: Any) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, (int, np.integer)):
            return [int(indices)]
        return [int(i) for i in indices]

    def _set_learner_seats(self, slots: np.ndarray) -> None:
        if self.fixed_learner_seat is not None:
            self.learner_seat[slots] = self.fixed_learner_seat
        else:
            self.learner_seat[slots] = (slots + self.state.episode[slots].astype(np.int64)) % 3

    def _fixed_ids(self) -> np.ndarray:
        """The member ids of the fixed opponents (no pool): 0 for both, or 0 left and 1 right."""
        left, right = self.opponents
        ids = np.zeros((self.num_envs, 2), dtype=np.int64)
        if left is not right:
            ids[:, 1] = 1
        return ids

    def _draw_opponents(self, slots: np.ndarray) -> None:
        """The pool's draw of opponents for the games starting in ``slots``."""
        if self._pool is None or slots.size == 0:
            return
        columns = 1 if self._pool_pairs == "same" else 2
        drawn = self.pool_rng.choice(self._pool, size=(slots.size, columns), p=self._pool_p)
        self.opponent_ids[slots] = drawn  # broadcasts one column to both seats

    def _begin_step(self) -> None:
        self._rewards = np.zeros(self.num_envs, dtype=np.float64)
        self._dones = np.zeros(self.num_envs, dtype=bool)
        self._infos = [{} for _ in range(self.num_envs)]

    # In the helpers below ``slots[j]`` is the slot of game j of ``state`` and ``seats[j]``
    # its learner seat.

    def _after_engine_step(self, state: engine.State, games: np.ndarray, slots: np.ndarray,
                           seats: np.ndarray) -> None:
        """Rewards and game ends from the events of the engine.step that moved ``games``."""
        if not np.count_nonzero(state.deal_ended[games]):
            return  # most rounds: every reward kind pays, and every game ends, only as a deal ends
        rows, rewards = env_options.event_rewards(self.reward_kind, state, games)
        if rows.size:
            paid = games[rows]
            self._credit(slots[paid], rewards[np.arange(rows.size), seats[paid]])
        ended = games[state.game_ended[games]]
        if ended.size:
            self._finish_games(state, ended, slots, seats)

    def _credit(self, slots: np.ndarray, rewards: np.ndarray) -> None:
        # A reward earned in a slot's new game during the step that ended its old game
        # belongs to the new episode: it is paid at the next step.
        new_game = self._dones[slots]
        self._rewards[slots[~new_game]] += rewards[~new_game]
        self._pending[slots[new_game]] += rewards[new_game]

    def _finish_games(self, state: engine.State, ended: np.ndarray, slots: np.ndarray,
                      seats: np.ndarray) -> None:
        """Episode ends (their rewards are already credited): infos, and each slot's next game
        (seed + N, next seat)."""
        ended_slots = slots[ended]
        ended_seats = seats[ended]
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
        self._dones[ended_slots] = True
        self._lengths[ended_slots] = 0
        fresh = engine.init(state.seed[ended] + np.uint64(self.num_envs), self.rules)  # engine autoreset rule
        fresh.episode[:] = state.episode[ended] + np.uint32(1)
        state.put(ended, fresh)
        self._set_learner_seats(ended_slots)
        self._draw_opponents(ended_slots)
        seats[ended] = self.learner_seat[ended_slots]

    def _play_opponents(self) -> None:
        """Opponent decisions, batched, until every game waits on its learner; then the
        learners' legal actions are in ``self._legal``."""
        state, slots = self.state, self._slots
        seats = self.learner_seat  # updated in place as games end and seats rotate
        for _ in range(_MAX_OPPONENT_ROUNDS):
            waiting = np.flatnonzero(state.to_act != seats)
            if waiting.size == 0:
                self._legal = engine.legal_bits(state)
                return
            self._opponent_round(state, waiting, slots, seats)
        raise RuntimeError("the opponents did not hand the turn back to the learners (engine bug?)")

    def _opponent_round(self, state: engine.State, waiting: np.ndarray, slots: np.ndarray,
                        seats: np.ndarray) -> None:
        """One decision in each game of ``waiting`` (all waiting on an opponent)."""
        left, right = self.opponents
        legal = engine.legal_bits(state, waiting)
        if self._pool is None and left is right:  # one policy holds every waiting seat: one call as is
            actions = self._opponent_actions(state, left, waiting, legal)
        else:
            actions = np.zeros(waiting.size, dtype=np.int64)
            if self._pool is not None:  # one call per member, on the games where it holds the turn
                is_right = ((state.to_act[waiting] - seats[waiting]) % 3 == 2).astype(np.int64)
                member = self.opponent_ids[slots[waiting], is_right]
                groups = [(self.opponent_members[k], np.flatnonzero(member == k))
                          for k in np.unique(member).tolist()]
            else:
                is_left = (state.to_act[waiting] - seats[waiting]) % 3 == 1
                groups = [(left, np.flatnonzero(is_left)), (right, np.flatnonzero(~is_left))]
            for policy, rows in groups:
                if rows.size:
                    actions[rows] = self._opponent_actions(state, policy, waiting[rows], legal[rows])
        try:
            engine.step(state, actions, legal=legal, games=waiting)  # only these games move
        except IllegalActionError as error:
            raise ValueError(f"an opponent policy chose an illegal action: {error}") from None
        self._after_engine_step(state, waiting, slots, seats)

    def _opponent_actions(self, state: engine.State, policy: object, games: np.ndarray,
                          legal: np.ndarray) -> np.ndarray:
        return decide(policy, state, games, bits_to_bool(legal, NUM_ACTIONS), self.opponent_rng)


def _distinct(pair: tuple[object, object]) -> tuple[object, ...]:
    """The fixed opponents as members: one if both seats hold the same object."""
    return pair[:1] if pair[0] is pair[1] else pair
