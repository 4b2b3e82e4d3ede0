"""A Gymnasium environment: one learner seat of 3-5-8 against two opponent policies.

`SergeantMajorEnv` (registered as `"SergeantMajor-v0"`: `gymnasium.make(
"SergeantMajor-v0", num_deals=3)` works after `import sergeant_major_env`) plays one
game of the engine ([`sergeant_major_env.engine`][], a batch of one), stepped through
[`one_game.OneGame`][sergeant_major_env.one_game.OneGame] as every view of one game. The learner
decides at its own turns; the opponents' turns in between are played inside `reset` and
`step` by opponent policies ([`sergeant_major_env.policies`][], the batched
`act(observations, legal_mask, rng)` interface; default: [`RandomPolicy`][] for both),
each on `observe(state, its seat)` and `engine.legal_action_mask`.

Spaces
:   observation: `Box(float32, (OBSERVATION_SIZE,))`, `observe(state, learner_seat)`
    (see [`sergeant_major_env.observation`][]; seats in it are relative to the learner).
    action: `Discrete(58)`: 0..51 a card, 52..57 a mode (RULES.md section 10).
    Only some actions are legal at each decision: `info["action_mask"]` and
    `action_masks()` (for sb3-contrib's `MaskablePPO`) give them as `bool[58]`. The
    wrappers of `gymnasium.make` do not forward `action_masks`: reach it as
    `env.unwrapped.action_masks()` or `env.get_wrapper_attr("action_masks")()` (SB3's
    vector envs do the latter), or read `info["action_mask"]`, which every wrapper passes on.
    A finished game's mask marks action 0 alone, never nothing
    ([`sergeant_major_env.options.action_mask`][]): masking logits with `-inf` is safe
    on every observation the env returns.

Rewards (`reward=`)
:   `"points"` (default): the learner's points of each deal (R23, R24), given at the
    step in which the deal ended (the deal may end on an opponent's card played during
    that step). The rewards of an episode sum to the learner's final score.
    `"score"`: the learner's final score, once, at the end of the game.
    `"rank"`: +1 / 0 / -1 for first / second / third place at the end of the game;
    players with equal scores share their places and the average reward (R6): two
    winners get +0.5 each, three equal scores 0.
    (All three from [`sergeant_major_env.options.event_rewards`][], as in every view.)

Episodes
:   One game (`num_deals` deals). `terminated` is True at the step that ends the game
    (the observation is then the learner's view of the finished game; its mask marks action
    0 alone, a placeholder that `step` refuses), or at an illegal action under
    `illegal_action="terminate"`; `truncated` is always False. `step` after that is a
    RuntimeError: call `reset()`.

Info (numbers and arrays only, one convention with the AEC env)
:   `action_mask` (`bool[58]`: the learner's legal actions; once terminated action 0 alone),
    `decision` (int: the engine phase id of the learner's decision, names in
    `engine.DECISIONS`: 0 mode, 1 exchange_give, 2 exchange_return, 3 discard, 4 play;
    `engine.OVER` (5) once terminated), `deal` (int: 0-based index of the current deal,
    `state.deal`; `num_deals` once the game is over), `role` (int: the learner's role
    in that deal, an index into `engine.ROLE_NAMES`: 0 dealer, 1 playmaker, 2 third),
    `learner_seat` (int), `scores` (`int64[3]`: every seat's total, by absolute seat),
    `illegal_action` (bool: the learner's action was illegal and was replaced, or ended the
    game); at the terminal step also `final_scores` (`int64[3]`, the engine's final
    scores; the totals so far if an illegal action ended the game).

Options
:   `learner_seat`: 0, 1, 2 (fixed) or `None`: drawn at each reset from the env's
    `np_random` (`reset(options={"learner_seat": k})` overrides it for one episode).
    `opponents`: `None` (two random players), one policy for both opponents, or two
    policies: the seat on the learner's left (it plays after the learner) and on its right.
    `reward`: see above. `illegal_action` (what an action id 0..57 that the rules refuse
    does): `"terminate"` (default, so that generic checkers pass), `"raise"` or
    `"replace"`, with `illegal_reward`; anything that is not an integer 0..57 is a
    `ValueError` and changes nothing.

    Rule options (RULES.md section 9) as keyword arguments (`num_deals=3`) or
    `rules=Rules(...)`, not both. Every keyword is described once, for all the envs, in
    [`sergeant_major_env.options`][].

Seeding
:   `reset(seed=s)` plays the engine game of seed `s` (`engine.init([s])`) and seeds
    the opponents' generator from `s` too (`np.random.default_rng([s, 1])`), so the same
    seed, learner seat and learner actions give the same game. `reset()` without a seed
    draws the game's seed from the env's `np_random`. `s` follows the one seed rule of
    `sergeant_major_env.seeding` (an integer 0 to 2**63 - 1), checked first.

Version
:   The `-v0` of the id is the environment version, shared with the PettingZoo env
    `sergeant_major_v0` ([`sergeant_major_env.versions`][]): it goes up when the rules'
    behaviour, the observation layout (`observation.VERSION`, which model files record),
    the action ids or the rewards change.

Vectorised
:   `gymnasium.make_vec("SergeantMajor-v0", num_envs=n)` makes the native vector env,
    [`SergeantMajorVectorEnv`][sergeant_major_env.gym_vector.SergeantMajorVectorEnv] (the vector entry point:
    n games in one batched engine state, the same options, the same games as
    `vectorization_mode="sync"` for the same seeds). In the `"sync"` and `"async"`
    modes, Gymnasium's default `NEXT_STEP` autoreset resets a finished env at the step
    AFTER its terminal step and ignores that step's action; the terminal step's
    `infos["action_mask"]` row marks action 0 alone, so a masked policy may act on it.
"""

from __future__ import annotations

from typing import Any, Mapping

import gymnasium
import numpy as np
from gymnasium import spaces

from . import engine, options as env_options
from .cards import NUM_ACTIONS, bits_to_bool, card_list
from .engine import OVER, IllegalActionError
from .observation import OBSERVATION_SIZE, observation_bounds
from .one_game import OneGame, StepResult, compile_kernels
from .policies import RandomPolicy, check_policy, decide, policy_name
from .render import seat_labels, seat_view
from .rules import Rules
from .seeding import check_seed
from .versions import GYMNASIUM_ID

_FIRST_GAME = np.zeros(1, dtype=np.intp)
_NOTHING_LEGAL = np.zeros(1, dtype=np.uint64)  # the legal actions once an illegal action ended the episode

ENV_ID = GYMNASIUM_ID
"""The Gymnasium id, `SergeantMajor-v0`: its number is the environment version
([`sergeant_major_env.versions`][], one rule for the three environments)."""


# ----------------------------------------------------------------------------- shared helpers
# (also used by sergeant_major_env.vec_env; the env options are in sergeant_major_env.options)

def opponent_pair(opponents: Any, where: str) -> tuple[object, object]:
    """`(left, right)`: the policies of the seats left and right of the learner."""
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


# ----------------------------------------------------------------------------- the env

class SergeantMajorEnv(gymnasium.Env):
    """One learner seat against two opponent policies (see the module docstring)."""

    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(
        self,
        learner_seat: int | None = 0,
        opponents: Any = None,
        reward: str = env_options.DEFAULT_REWARD,
        illegal_action: str = env_options.SINGLE_SEAT_ILLEGAL_ACTIONS[0],
        illegal_reward: float = env_options.ILLEGAL_REWARD,
        render_mode: str | None = None,
        rules: Rules | Mapping[str, Any] | None = None,
        **rule_options: Any,
    ) -> None:
        where = type(self).__name__
        self.rules = env_options.make_rules(rules, rule_options, where)
        self.reward_kind = env_options.check_reward(reward, where)
        self.illegal_action = env_options.check_illegal_action(
            illegal_action, env_options.SINGLE_SEAT_ILLEGAL_ACTIONS, where)
        self.illegal_reward = env_options.check_illegal_reward(illegal_reward, where)
        self.learner_seat_option = env_options.check_learner_seat(learner_seat, where)
        self.opponents = opponent_pair(opponents, where)
        if render_mode is not None:
            env_options.check_choice("render_mode", render_mode, self.metadata["render_modes"], where)
        self.render_mode = render_mode
        self.observation_space = observation_space(self.rules.num_deals)
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self.state: engine.State | None = None  # the game's engine state, `_game.state`
        self._game: OneGame | None = None
        self.learner_seat: int = self.learner_seat_option if self.learner_seat_option is not None else 0
        self.game_seed: int | None = None
        self.opponent_rng = np.random.default_rng(0)
        self._pending = 0.0  # rewards earned outside a learner step, paid at the next one
        self._ended_by_illegal_action = False  # illegal_action="terminate" ended the episode

    # ------------------------------------------------------------------ Gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        where = f"{type(self).__name__}.reset"
        if seed is not None:
            seed = check_seed(seed, f"{where}: seed")
        options = env_options.check_reset_options(options, ("learner_seat",), where)
        seat_option = options.pop("learner_seat", self.learner_seat_option)
        seat_option = env_options.check_learner_seat(seat_option, where)
        super().reset(seed=seed)  # only once every argument is known to be good
        self._ended_by_illegal_action = False
        if seed is None:
            seed = int(self.np_random.integers(0, 2**63 - 1))
        self.game_seed = int(seed)
        self.learner_seat = seat_option if seat_option is not None else int(self.np_random.integers(3))
        compile_kernels()  # a first run: the one-game kernels, not the batched game's (init's)
        self._game = OneGame(engine.init([self.game_seed], self.rules), observing=False)
        self.state = self._game.state
        self.opponent_rng = np.random.default_rng([self.game_seed, 1])
        self._pending, _ = self._play_opponents(self._game.refresh())
        return self._observation(), self._info()

    def step(self, action):
        state = self._require_state()
        if int(state.phase[0]) == OVER or self._ended_by_illegal_action:
            raise RuntimeError("the game is over (terminated=True was returned): call reset()")
        action = env_options.check_action(action, f"{type(self).__name__}.step")
        legal = self._legal
        illegal = not (legal.item(0) >> action) & 1
        if illegal and self.illegal_action == "terminate":
            return self._end_by_illegal_action()
        if illegal and self.illegal_action == "replace":
            replaced, _ = env_options.replace_illegal(np.array([action], dtype=np.int64), legal, self.np_random)
            action = int(replaced[0])
        try:
            result = self._game.step(action)
        except IllegalActionError as error:
            raise IllegalActionError(f"{error} Legal action ids: {card_list(legal.item(0))}.") from None
        reward = self._pending + self._reward(result)
        self._pending = 0.0
        earned, result = self._play_opponents(result)
        reward += earned
        terminated = result.game_over
        info = self._info(illegal_action=illegal)
        if terminated:
            info["final_scores"] = state.final_scores[0].astype(np.int64)
        return self._observation(), float(reward), terminated, False, info

    def action_masks(self) -> np.ndarray:
        """bool[58]: the learner's legal actions now (for sb3-contrib's MaskablePPO)."""
        self._require_state("action_masks()")
        return env_options.action_mask(self._legal)[0]

    def _end_by_illegal_action(self):
        """`illegal_action="terminate"`: the episode ends now with `illegal_reward`; the
        engine state stays where the action was tried."""
        self._ended_by_illegal_action = True  # nothing is legal any more (`_legal`)
        self._pending = 0.0
        info = self._info(illegal_action=True)
        info["final_scores"] = self.state.scores[0].astype(np.int64)
        return self._observation(), self.illegal_reward, True, False, info

    def render(self) -> str | None:
        """`render_mode="ansi"`: the table as the learner's seat sees it, the learner called
        "you" (its own hand, during its own mode choice only its first six cards, R9; never
        another hand), drawn by `sergeant_major_env.render`. `None` without a render mode."""
        if self.render_mode != "ansi":
            return None
        return self._text()

    # ------------------------------------------------------------------ internals
    def _require_state(self, call: str = "step()") -> engine.State:
        """The engine state, or a one-line RuntimeError naming `call`, made before `reset()`."""
        if self.state is None:
            raise RuntimeError(f"call reset() before {call}")
        return self.state

    @property
    def _legal(self) -> np.ndarray:
        """The legal actions of the decision as bits (uint64[1]; the learner's between steps):
        the one-game path's, none once an illegal action ended the episode."""
        return _NOTHING_LEGAL if self._ended_by_illegal_action else self._game.legal

    def _reward(self, result: StepResult) -> float:
        """The learner's reward from the step that gave `result`."""
        if not result.deal_ended:
            return 0.0  # every reward kind pays only as a deal ends
        rows, rewards = env_options.event_rewards(self.reward_kind, self.state, _FIRST_GAME)
        return float(rewards[0, self.learner_seat]) if rows.size else 0.0

    def _play_opponents(self, result: StepResult) -> tuple[float, StepResult]:
        """Play the opponents' decisions from the decision `result` says until the learner's
        turn or the end of the game: their rewards to the learner, and the last result."""
        game, reward = self._game, 0.0
        while result.to_act != self.learner_seat and not result.game_over:
            policy = self.opponents[(result.to_act - self.learner_seat) % 3 - 1]
            actions = decide(policy, self.state, _FIRST_GAME, bits_to_bool(game.legal, NUM_ACTIONS), self.opponent_rng)
            result = game.step(int(actions[0]))
            reward += self._reward(result)
        return reward, result

    def _observation(self) -> np.ndarray:
        """The learner's observation now (a new array)."""
        return self._game.observe(self.learner_seat, np.empty(OBSERVATION_SIZE, dtype=np.float32))

    def _info(self, illegal_action: bool = False) -> dict[str, Any]:
        state = self.state
        dealer = int(state.dealer[0])
        return {
            "action_mask": env_options.action_mask(self._legal)[0],
            "decision": OVER if self._ended_by_illegal_action else int(state.phase[0]),
            "deal": int(state.deal[0]),
            "role": (self.learner_seat - dealer) % 3,
            "learner_seat": self.learner_seat,
            "scores": state.scores[0].astype(np.int64),
            "illegal_action": illegal_action,
        }

    def _text(self) -> str:
        state = self._require_state("render()")
        return learner_view(state, self.learner_seat, [policy_name(policy) for policy in self.opponents])


def learner_view(state: engine.State, seat: int, opponents: Any, game: int = 0) -> str:
    """The `"ansi"` text of game `game` as the learner in `seat` sees it, called "you";
    `opponents`: the names of its (left, right) opponents. The single-seat env's and the
    vector env's render."""
    names = ["learner"] * 3
    for offset, name in zip((1, 2), opponents):  # left, then right of the learner
        names[(seat + offset) % 3] = name
    return seat_view(state, seat, seat_labels(names, you=seat), game)


def register() -> None:
    """Register `SergeantMajor-v0` with Gymnasium (done on `import sergeant_major_env`):
    `gymnasium.make` makes this env, `gymnasium.make_vec` the native vector env."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point="sergeant_major_env.single_seat:SergeantMajorEnv",
                           vector_entry_point="sergeant_major_env.gym_vector:SergeantMajorVectorEnv")


register()
