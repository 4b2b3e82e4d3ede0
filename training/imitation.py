"""Teacher labels for behaviour cloning: every seat of a teacher's own games, from the raw engine.

The teacher (any batched policy, e.g. ``agents.make_agent("heuristic")``) plays all three
seats of ``num_games`` games held in one engine state. Every engine step is one decision in
every game, and every decision is a label: the deciding seat's observation, its legal mask,
the teacher's action and the seat's return. An env that records the learner's seat only
labels a third of that, and spends the rest of its time in opponent rounds.

A seat's return follows the reward of train.py's vec env: each deal's points (R23, R24),
credited to the seat's last decision before the deal ended, discounted by ``gamma`` per
decision of that seat, and bootstrapped at the end of each chunk with ``value(observations)``
of each seat's view (the value network). A finished game cuts the returns: the slot's next
game (the engine's automatic reset, seed + B) starts from zero.

Nothing here imports torch: ``value`` is any function from ``float32[B, D]`` to ``float[B]``.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Iterator

import numpy as np

from sergeant_major_env import engine
from sergeant_major_env.cards import NUM_ACTIONS, bits_to_bool
from sergeant_major_env.observation import observe
from sergeant_major_env.policies import decide
from sergeant_major_env.rules import Rules


@dataclasses.dataclass
class Labels:
    """``steps * num_games`` labels, in step order (row ``k * num_games + g``: step k of game slot g)."""

    observations: np.ndarray  # float32[N, D]  the deciding seat's observation
    masks: np.ndarray         # bool[N, 58]     its legal actions
    actions: np.ndarray       # int64[N]        the teacher's choice
    returns: np.ndarray       # float32[N]      the deciding seat's discounted return from here


def teacher_labels(teacher: object, num_games: int, steps: int, seed: int, rules: Rules, gamma: float,
                   value: Callable[[np.ndarray], np.ndarray], rng: np.random.Generator,
                   reward_scale: float = 1.0) -> Iterator[Labels]:
    """Endless chunks of ``steps`` engine steps of ``num_games`` teacher self-play games (slot g
    plays seeds ``seed + g``, ``seed + g + num_games``, ...), as :class:`Labels`."""
    state = engine.init(engine.game_seeds(seed, num_games), rules)
    games = np.arange(num_games)
    while True:
        observations, masks, actions, seats, points, ended = [], [], [], [], [], []
        for _ in range(steps):
            seat = state.to_act.copy()  # never -1: finished games restart at once (autoreset)
            legal = engine.legal_bits(state)
            mask = bits_to_bool(legal, NUM_ACTIONS)
            action = decide(teacher, state, games, mask, rng)
            observations.append(observe(state, seat)), masks.append(mask), actions.append(action), seats.append(seat)
            engine.step(state, action, autoreset=True, legal=legal)
            points.append(state.deal_points * np.float32(reward_scale))  # zero where no deal ended
            ended.append(state.game_ended.copy())
        bootstrap = np.stack([value(observe(state, np.full(num_games, s))) for s in range(3)], axis=1)
        returns = seat_returns(np.stack(seats), np.stack(points), np.stack(ended), bootstrap, gamma)
        yield Labels(np.concatenate(observations), np.concatenate(masks), np.concatenate(actions),
                     returns.reshape(-1))


def seat_returns(seats: np.ndarray, points: np.ndarray, ended: np.ndarray, bootstrap: np.ndarray,
                 gamma: float) -> np.ndarray:
    """float32[T, B]: the return of the decision of step k in game slot b, for its seat.

    ``seats`` int[T, B] the deciding seat of each step; ``points`` float[T, B, 3] the deal points
    each seat got from the step (zero if no deal ended); ``ended`` bool[T, B] the step ended the
    game; ``bootstrap`` float[T=end, B, 3] each seat's value after the last step. Walking back, a
    seat's rewards gather until its decision takes them, plus ``gamma`` times its next return."""
    steps, num_games = seats.shape
    rows = np.arange(num_games)
    future = np.asarray(bootstrap, dtype=np.float64).copy()  # each seat's return at its next decision
    gathered = np.zeros((num_games, 3))                       # its rewards since then
    returns = np.empty((steps, num_games), dtype=np.float32)
    for k in reversed(range(steps)):
        future[ended[k]] = 0.0  # what follows a finished game is the next game's
        gathered[ended[k]] = 0.0
        gathered += points[k]
        seat = seats[k]
        returns[k] = gathered[rows, seat] + gamma * future[rows, seat]
        future[rows, seat] = returns[k]
        gathered[rows, seat] = 0.0
    return returns
