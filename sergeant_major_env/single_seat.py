"""A Gymnasium environment: one learner seat of 3-5-8 against two opponent policies.

``SergeantMajorEnv`` (registered as ``"SergeantMajor-v0"``: ``gymnasium.make(
"SergeantMajor-v0", num_deals=3)`` works after ``import sergeant_major_env``) plays one
game of the batched engine (:mod:`sergeant_major_env.engine`, a batch of one). The learner
decides at its own turns; the opponents' turns in between are played inside ``reset`` and
``step`` by opponent policies (:mod:`sergeant_major_env.policies`, the batched
``act(observations, legal_mask, rng)`` interface; default: :class:`RandomPolicy` for both),
each on ``observe(state, its seat)`` and ``engine.legal_action_mask``.

Spaces
    observation: ``Box(float32, (OBSERVATION_SIZE,))``, ``observe(state, learner_seat)``
    (see :mod:`sergeant_major_env.observation`; seats in it are relative to the learner).
    action: ``Discrete(58)``: 0..51 a card, 52..57 a mode (RULES.md section 10).
    Only some actions are legal at each decision: ``action_masks()`` (for sb3-contrib's
    ``MaskablePPO``) and ``info["action_mask"]`` give them as ``bool[58]``.

Rewards (``reward=``)
    ``"points"`` (default): the learner's points of each deal (R23, R24), given at the
    step in which the deal ended (the deal may end on an opponent's card played during
    that step). The rewards of an episode sum to the learner's final score.
    ``"score"``: the learner's final score, once, at the end of the game.
    ``"rank"``: +1 / 0 / -1 for first / second / third place at the end of the game;
    players with equal scores share their places and the average reward (R6): two
    winners get +0.5 each, three equal scores 0.

Episodes
    One game (``num_deals`` deals). ``terminated`` is True at the step that ends the game
    (the observation is then the learner's view of the finished game and no action is
    legal); ``truncated`` is always False.

Info
    ``action_mask`` (``bool[58]``), ``decision`` (the learner's decision: ``"mode"``,
    ``"exchange_give"``, ``"exchange_return"``, ``"discard"``, ``"play"``, or
    ``"game_over"``), ``deal`` (0-based index of the current deal; ``num_deals`` once the
    game is over), ``role`` (the learner's role in that deal: ``"dealer"``, ``"playmaker"``,
    ``"third"``), ``learner_seat`` and ``scores`` (every seat's total, by absolute seat).

Options
    ``learner_seat``: 0, 1, 2 (fixed) or ``None``: drawn at each reset from the env's
    ``np_random`` (``reset(options={"learner_seat": k})`` overrides it for one episode).
    ``opponents``: ``None`` (two random players), one policy for both opponents, or two
    policies: the seat on the learner's left (it plays after the learner) and on its right.
    ``reward``: see above. ``illegal_action``: ``"raise"`` (default): an illegal learner
    action raises :class:`~sergeant_major_env.engine.IllegalActionError` (a ``ValueError``)
    naming the legal actions, the state unchanged; ``"replace"``: it is replaced by a
    uniformly random legal action (drawn from ``np_random``) and ``info["illegal_action"]``
    is True. Generic environment checkers step unmasked ``action_space.sample()`` actions,
    most of them illegal: they pass with ``"replace"``.
    Rule options (RULES.md section 9) as keyword arguments: ``num_deals``, ``exchanges``,
    ``must_overtake``, ``must_overtrump``, ``dealer_builds_talon`` (or ``rules=Rules(...)``),
    validated by :meth:`Rules.from_dict`: an unknown name or a bad value is a ``ValueError``.

Seeding
    ``reset(seed=s)`` plays the engine game of seed ``s`` (``engine.init([s])``) and seeds
    the opponents' generator from ``s`` too (``np.random.default_rng([s, 1])``), so the same
    seed, learner seat and learner actions give the same game. ``reset()`` without a seed
    draws the game's seed from the env's ``np_random``.
"""

from __future__ import annotations

import operator
from typing import Any, Mapping, Sequence

import gymnasium
import numpy as np
from gymnasium import spaces

from . import engine
from .cards import NUM_ACTIONS, action_name, bits_to_bool, card_list
from .engine import DECISIONS, OVER, ROLE_NAMES, IllegalActionError
from .observation import observation_bounds, observe
from .policies import RandomPolicy, check_policy, decide, policy_name
from .render import seat_labels, seat_view
from .rules import Rules

_FIRST_GAME = np.zeros(1, dtype=np.intp)

ENV_ID = "SergeantMajor-v0"
REWARDS = ("points", "score", "rank")
ILLEGAL_ACTIONS = ("raise", "replace")


# ----------------------------------------------------------------------------- shared helpers
# (also used by sergeant_major_env.vec_env)

def make_rules(rules: Rules | Mapping[str, Any] | None, options: Mapping[str, Any], where: str) -> Rules:
    """Rules from ``rules=`` and/or rule options given as keyword arguments."""
    if rules is not None and options:
        raise ValueError(f"{where}: pass rule options either as rules=... or as keyword arguments, not both")
    if isinstance(rules, Rules):
        return rules
    try:
        return Rules.from_dict(rules if rules is not None else options)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{where}: {error}") from None


def check_choice(name: str, value: Any, choices: Sequence[str], where: str) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{where}: {name} must be one of {', '.join(map(repr, choices))}, got {value!r}")
    return value


def check_seat(value: Any, where: str, allow_none: bool = True) -> int | None:
    if value is None and allow_none:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or not 0 <= value <= 2:
        raise ValueError(f"{where}: learner_seat must be 0, 1, 2{' or None' if allow_none else ''}, got {value!r}")
    return int(value)


def opponent_pair(opponents: Any, where: str) -> tuple[object, object]:
    """``(left, right)``: the policies of the seats left and right of the learner."""
    if opponents is None:
        policy = RandomPolicy()
        return policy, policy
    if callable(getattr(opponents, "act", None)):
        return opponents, opponents
    if isinstance(opponents, (list, tuple)) and len(opponents) == 2:
        return (check_policy(opponents[0], f"{where}: opponents[0]"),
                check_policy(opponents[1], f"{where}: opponents[1]"))
    raise TypeError(f"{where}: opponents must be None, one policy or a pair of policies (left, right), got {opponents!r}")


def observation_space(num_deals: int = 18) -> spaces.Box:
    """The observation Box: card planes and one-hots in [0, 1], signed features wider."""
    low, high = observation_bounds(num_deals)
    return spaces.Box(low=low, high=high, dtype=np.float32)


def rank_rewards(scores: np.ndarray, seats: np.ndarray) -> np.ndarray:
    """float32[k]: +1 / 0 / -1 by final place, equal scores sharing the average (R6)."""
    return (2 - engine.places(scores))[np.arange(len(seats)), seats].astype(np.float32)


def replace_illegal(actions: np.ndarray, legal: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Illegal actions replaced by random legal ones (games with a legal action only)."""
    in_range = (actions >= 0) & (actions < NUM_ACTIONS)
    chosen = (legal >> np.where(in_range, actions, 0).astype(np.uint64)) & np.uint64(1)
    bad = (chosen == 0) & (legal != 0)
    if bad.any():
        actions = actions.copy()
        actions[bad] = RandomPolicy().act(None, bits_to_bool(legal[bad], NUM_ACTIONS), rng)
    return actions, bad


# ----------------------------------------------------------------------------- the env

class SergeantMajorEnv(gymnasium.Env):
    """One learner seat against two opponent policies (see the module docstring)."""

    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(
        self,
        learner_seat: int | None = 0,
        opponents: Any = None,
        reward: str = "points",
        illegal_action: str = "raise",
        render_mode: str | None = None,
        rules: Rules | Mapping[str, Any] | None = None,
        **rule_options: Any,
    ) -> None:
        where = type(self).__name__
        self.rules = make_rules(rules, rule_options, where)
        self.reward_kind = check_choice("reward", reward, REWARDS, where)
        self.illegal_action = check_choice("illegal_action", illegal_action, ILLEGAL_ACTIONS, where)
        self.learner_seat_option = check_seat(learner_seat, where)
        self.opponents = opponent_pair(opponents, where)
        if render_mode is not None:
            check_choice("render_mode", render_mode, self.metadata["render_modes"], where)
        self.render_mode = render_mode
        self.observation_space = observation_space(self.rules.num_deals)
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self.state: engine.State | None = None
        self.learner_seat: int = self.learner_seat_option if self.learner_seat_option is not None else 0
        self.game_seed: int | None = None
        self.opponent_rng = np.random.default_rng(0)
        self._legal = np.zeros(1, dtype=np.uint64)
        self._pending = 0.0  # rewards earned outside a learner step, paid at the next one

    # ------------------------------------------------------------------ Gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
            raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
        super().reset(seed=None if seed is None else int(seed))
        options = dict(options or {})
        seat_option = options.pop("learner_seat", self.learner_seat_option)
        if options:
            raise ValueError(f"unknown reset option(s) {', '.join(sorted(options))}; known: learner_seat")
        seat_option = check_seat(seat_option, "reset")
        if seed is None:
            seed = int(self.np_random.integers(0, 2**63 - 1))
        self.game_seed = int(seed)
        self.learner_seat = seat_option if seat_option is not None else int(self.np_random.integers(3))
        self.state = engine.init([self.game_seed], self.rules)
        self.opponent_rng = np.random.default_rng([self.game_seed, 1])
        self._pending = 0.0
        self._pending += self._play_opponents()
        return self._observation(), self._info()

    def step(self, action):
        state = self._require_state()
        if int(state.phase[0]) == OVER:
            raise RuntimeError("the game is over (terminated=True was returned): call reset()")
        try:
            action = operator.index(action)
        except TypeError:
            raise ValueError(f"an action is an integer id 0..{NUM_ACTIONS - 1}, got {action!r}") from None
        actions = np.array([action], dtype=np.int64)
        replaced = False
        if self.illegal_action == "replace":
            actions, bad = replace_illegal(actions, self._legal, self.np_random)
            replaced = bool(bad[0])
        try:
            engine.step(state, actions, legal=self._legal)
        except IllegalActionError as error:
            legal_ids = card_list(int(self._legal[0]))
            raise IllegalActionError(f"{error} Legal action ids: {legal_ids}.") from None
        reward = self._pending + self._collect()
        self._pending = 0.0
        reward += self._play_opponents()  # also refreshes the legal actions
        terminated = bool(state.phase[0] == OVER)
        info = self._info()
        if replaced:
            info["illegal_action"] = True
        if terminated:
            info["final_scores"] = state.scores[0].astype(np.int64).tolist()
        return self._observation(), float(reward), terminated, False, info

    def action_masks(self) -> np.ndarray:
        """bool[58]: the learner's legal actions now (for sb3-contrib's MaskablePPO)."""
        self._require_state()
        return bits_to_bool(self._legal, NUM_ACTIONS)[0].copy()

    def render(self) -> str | None:
        """``render_mode="ansi"``: the table as the learner's seat sees it, the learner called
        "you" (its own hand, during its own mode choice only its first six cards, R9; never
        another hand), drawn by :mod:`sergeant_major_env.render`. ``None`` without a render mode."""
        if self.render_mode != "ansi":
            return None
        return self._text()

    # ------------------------------------------------------------------ internals
    def _require_state(self) -> engine.State:
        if self.state is None:
            raise RuntimeError("call reset() before step()")
        return self.state

    def _collect(self) -> float:
        """The learner's reward from the events of the last engine.step."""
        state, seat = self.state, self.learner_seat
        reward = 0.0
        if self.reward_kind == "points" and state.deal_ended[0]:
            reward += float(state.deal_points[0, seat])
        if state.game_ended[0]:
            if self.reward_kind == "score":
                reward += float(state.final_scores[0, seat])
            elif self.reward_kind == "rank":
                reward += float(rank_rewards(state.final_scores[:1], np.array([seat]))[0])
        return reward

    def _play_opponents(self) -> float:
        """Play the opponents' decisions until the learner's turn or the end of the game."""
        state, reward = self.state, 0.0
        while True:
            self._legal = engine.legal_bits(state)
            seat = int(state.to_act[0])
            if seat == self.learner_seat or seat < 0:
                return reward
            policy = self.opponents[(seat - self.learner_seat) % 3 - 1]
            actions = decide(policy, state, _FIRST_GAME, bits_to_bool(self._legal, NUM_ACTIONS), self.opponent_rng)
            engine.step(state, actions, legal=self._legal)
            reward += self._collect()

    def _observation(self) -> np.ndarray:
        return observe(self.state, self.learner_seat)[0]

    def _info(self) -> dict[str, Any]:
        state = self.state
        dealer = int(state.dealer[0])
        return {
            "action_mask": bits_to_bool(self._legal, NUM_ACTIONS)[0].copy(),
            "decision": DECISIONS[int(state.phase[0])],
            "deal": int(state.deal[0]),
            "role": ROLE_NAMES[(self.learner_seat - dealer) % 3],
            "learner_seat": self.learner_seat,
            "scores": state.scores[0].astype(np.int64).tolist(),
        }

    def _text(self) -> str:
        state = self._require_state()
        seat = self.learner_seat
        names = ["learner"] * 3
        for offset, policy in zip((1, 2), self.opponents):  # left, then right of the learner
            names[(seat + offset) % 3] = policy_name(policy)
        return seat_view(state, seat, seat_labels(names, you=seat))  # the learner reads "you"


def register() -> None:
    """Register ``SergeantMajor-v0`` with Gymnasium (done on ``import sergeant_major_env``)."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point="sergeant_major_env.single_seat:SergeantMajorEnv")


register()
