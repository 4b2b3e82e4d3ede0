"""The batched core of the vector environments: N games, one learner seat in each, the
opponents decided for the whole batch.

[`LearnerGames`][] is the machinery that the SB3 `VecEnv`
([`SergeantMajorVecEnv`][sergeant_major_env.vec_env.SergeantMajorVecEnv]) and the Gymnasium `VectorEnv`
([`SergeantMajorVectorEnv`][sergeant_major_env.gym_vector.SergeantMajorVectorEnv]) share; each adds its own
library's API, its seeding of new games and its infos. It holds one engine
[`State`][sergeant_major_env.engine.State] of `num_envs` games (a *slot* each) and:

* steps the learners' actions of all games (or of a subset) in one `engine.step`;
* plays the opponents, batched, until every game waits on its learner: whenever games wait
  on an opponent, that opponent's policy is called ONCE for all of them (one call per pool
  member with an opponent pool), and only the waiting games are stepped
  (`engine.step(..., games=waiting)`), so late rounds with few games left cost little;
* pays the rewards of each deal or game end ([`event_rewards`][sergeant_major_env.options.event_rewards])
  to the learner's seat, opponents' turns included; a reward earned in a slot's new game
  during the step that ended its old game belongs to the new episode and is paid at the
  slot's next learner step (`_pending`);
* restarts a slot as soon as its game ends (on the learner's or on an opponent's card), so
  that the opponents of the new game play up to the learner's first turn in the same rounds.
  The subclass says how: `_record_finished` keeps what it reports about the finished
  games (their terminal observations are taken before the restart) and
  `_next_games` gives the new games and learner seats.

Opponent pool: `set_opponent_pool` (documented in [`vec_env`][]).
There is no Python loop over games anywhere in a step except over the games that just ended.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from . import engine, options as env_options
from .cards import NUM_ACTIONS, bits_to_bool
from .engine import IllegalActionError
from .limits import check_fits, shorten
from .observation import observe
from .policies import check_policy, decide, policy_name
from .single_seat import opponent_pair

POOL_PAIRS = ("same", "independent")

# The opponents' loop cannot take more rounds than the longest run of opponent decisions
# (a deal's mode choice, exchanges, discards and plays): this only guards against a bug.
_MAX_OPPONENT_ROUNDS = 10_000

BYTES_PER_ENV = 10_000
"""Memory one environment of a vector env holds at its peak (its engine game, observation,
buffers and info dict: 9.5 KB measured with tracemalloc over reset and steps of 20,000 envs);
`num_envs` is checked against what this machine has available before anything is made."""


class LearnerGames:
    """The shared core (see the module docstring); a mixin: the subclass sets `num_envs`
    and calls `_init_learner_games` in its constructor."""

    num_envs: int

    def _init_learner_games(self, opponents: Any, reward_kind: str, seed: int, where: str) -> None:
        n = self.num_envs
        self.reward_kind = reward_kind
        self.opponents = opponent_pair(opponents, where)
        self.state: engine.State | None = None
        self.learner_seat = np.zeros(n, dtype=np.int8)
        self.opponent_rng = np.random.default_rng([seed, 1])
        # Opponent pool (set_opponent_pool): members, the drawable ones and their weights,
        # and each slot's (left, right) member ids; None = the fixed self.opponents.
        self.opponent_members: list[object] = []
        self.opponent_ids = np.zeros((n, 2), dtype=np.int64)
        self._pool: np.ndarray | None = None  # member ids that can be drawn
        self._pool_p = np.zeros(0)
        self._pool_pairs = "same"
        self.pool_rng = np.random.default_rng([seed, 2])
        self._legal = np.zeros(n, dtype=np.uint64)  # the learners' legal actions now (bits)
        self._slots = np.arange(n)
        self._pending = np.zeros(n, dtype=np.float64)  # rewards earned outside a learner step
        self._returns = np.zeros(n, dtype=np.float64)
        self._lengths = np.zeros(n, dtype=np.int64)
        # Per-step buffers, filled by the helpers below.
        self._rewards = np.zeros(n, dtype=np.float64)
        self._dones = np.zeros(n, dtype=bool)

    # ------------------------------------------------------------------ hooks
    def _begin_step(self) -> None:
        """Fresh per-step buffers (the subclass adds its infos)."""
        self._rewards = np.zeros(self.num_envs, dtype=np.float64)
        self._dones = np.zeros(self.num_envs, dtype=bool)

    def _record_finished(self, state: engine.State, ended: np.ndarray, ended_slots: np.ndarray,
                         ended_seats: np.ndarray) -> None:
        """Keep what the env reports about the games `ended` of `state` (finished, not yet
        restarted; their rewards are already credited)."""
        raise NotImplementedError

    def _next_games(self, state: engine.State, ended: np.ndarray, ended_slots: np.ndarray) -> engine.State:
        """The new games of the slots `ended_slots` (`ended`: their rows of `state`);
        sets `self.learner_seat` of those slots."""
        raise NotImplementedError

    # ------------------------------------------------------------------ the core
    def _start_games(self, state: engine.State) -> None:
        """Play the new games of `state` (its seats set) up to every learner's first turn."""
        self.state = state
        self._draw_opponents(self._slots)
        self._pending[:] = 0
        self._returns[:] = 0
        self._lengths[:] = 0
        self._begin_step()
        self._play_opponents()
        self._pending += self._rewards

    def _learner_step(self, actions: np.ndarray, rng: np.random.Generator, replace: bool,
                      games: np.ndarray | None = None) -> None:
        """Apply the learners' `actions` (of `games`, default all), then play the opponents.
        `replace`: illegal actions become random legal ones from `rng`."""
        legal = self._legal if games is None else self._legal[games]
        if replace:
            actions, _ = env_options.replace_illegal(actions, legal, rng)
        try:
            engine.step(self.state, actions, legal=legal, games=games)  # these games wait on their learner
        except IllegalActionError as error:
            raise IllegalActionError(f"learner action: {error}") from None
        stepped = self._slots if games is None else games
        self._begin_step()
        self._rewards[stepped] += self._pending[stepped]
        self._pending[stepped] = 0
        self._lengths[stepped] += 1
        self._after_engine_step(self.state, stepped, self._slots, self.learner_seat)
        self._play_opponents()
        self._returns += self._rewards
        self._returns[self._dones] = 0  # the finished games' returns went into their reports

    def set_opponent_pool(self, policies: Sequence[object] | None, weights: Sequence[float] | None = None,
                          pairs: str = "same") -> None:
        """Draw each game's opponents from `policies` (see [`vec_env`][]).

        `weights`: one non-negative number per policy (default: equal), not all zero; a
        member of weight 0 is not drawn. The same object given twice is one member (weights
        added). `pairs`: `"same"` (one member plays both opponent seats of a game) or
        `"independent"`. Games in progress keep their opponents; each slot draws at the
        start of its next game (`reset()` redraws all). `None` returns to the fixed
        `opponents` of the constructor."""
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
        or those of `slots`)."""
        members = self.opponent_members if self._pool is not None else list(_distinct(self.opponents))
        ids = self.opponent_ids if self._pool is not None else self._fixed_ids()
        names = [policy_name(m) for m in members]
        return [(names[a], names[b]) for a, b in ids[self._indices(slots)].tolist()]

    def _indices(self, indices: Any) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, (int, np.integer)):
            return [int(indices)]
        return [int(i) for i in indices]

    def _fixed_ids(self) -> np.ndarray:
        """The member ids of the fixed opponents (no pool): 0 for both, or 0 left and 1 right."""
        left, right = self.opponents
        ids = np.zeros((self.num_envs, 2), dtype=np.int64)
        if left is not right:
            ids[:, 1] = 1
        return ids

    def _draw_opponents(self, slots: np.ndarray) -> None:
        """The pool's draw of opponents for the games starting in `slots`."""
        if self._pool is None or slots.size == 0:
            return
        columns = 1 if self._pool_pairs == "same" else 2
        drawn = self.pool_rng.choice(self._pool, size=(slots.size, columns), p=self._pool_p)
        self.opponent_ids[slots] = drawn  # broadcasts one column to both seats

    # In the helpers below ``slots[j]`` is the slot of game j of ``state`` and ``seats[j]``
    # its learner seat.

    def _after_engine_step(self, state: engine.State, games: np.ndarray, slots: np.ndarray,
                           seats: np.ndarray) -> None:
        """Rewards and game ends from the events of the engine.step that moved `games`."""
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
        """Episode ends (their rewards are already credited): the env's record of them, and
        each slot's next game."""
        ended_slots = slots[ended]
        self._record_finished(state, ended, ended_slots, seats[ended])
        self._dones[ended_slots] = True
        self._lengths[ended_slots] = 0
        state.put(ended, self._next_games(state, ended, ended_slots))
        self._draw_opponents(ended_slots)
        seats[ended] = self.learner_seat[ended_slots]

    def _play_opponents(self) -> None:
        """Opponent decisions, batched, until every game waits on its learner; then the
        learners' legal actions are in `self._legal`."""
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
        """One decision in each game of `waiting` (all waiting on an opponent)."""
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

    def _observe(self) -> np.ndarray:
        """float32[N, D]: every learner's observation now."""
        return observe(self.state, self.learner_seat)


def _distinct(pair: tuple[object, object]) -> tuple[object, ...]:
    """The fixed opponents as members: one if both seats hold the same object."""
    return pair[:1] if pair[0] is pair[1] else pair

def check_num_envs(num_envs: Any, where: str) -> int:
    """`num_envs` as an int: a positive integer that this machine can hold (one line if not)."""
    if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
        raise ValueError(f"{where}: num_envs must be a positive integer, got {shorten(num_envs)}")
    check_fits(f"{where}: {int(num_envs):,} environments", int(num_envs) * BYTES_PER_ENV, "give fewer num_envs")
    return int(num_envs)


def checked_actions(actions: Any, n: int, where: str) -> np.ndarray:
    """A copy of `actions` as `int64[n]`, or a one-line ValueError naming what was wrong.

    Exactly shape `(n,)`: a `(n, 1)` or `(1, n)` array is refused rather than
    reshaped, since guessing which axis holds the games can step the wrong games."""
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
