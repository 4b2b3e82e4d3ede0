"""The PettingZoo AEC environment of 3-5-8, `sergeant_major_v0`: a thin adapter over a batch-of-one engine game.

This docstring is the environment's page in PettingZoo's shape; `docs/envs/aec.md` is the
same with the tables generated from the code (the observation by index range, the actions,
the options).

|  |  |
|---|---|
| Import | `from sergeant_major_env import sergeant_major_v0` |
| Make | `sergeant_major_v0.env()` (wrapped), `sergeant_major_v0.raw_env()` |
| Agents | `player_0`, `player_1`, `player_2` (seats 0, 1, 2 of RULES.md, R1) |
| Parallel API | no: turn-based, one seat decides at a time |
| Manual control | yes: `sergeant-major play` |
| Action space | `Discrete(58)`: 0..51 a card, 52..57 a mode (RULES.md section 10) |
| Observation space | `Dict(observation=Box(919,) float32, action_mask=Box(58,) int8)` |
| Action mask | yes, `observation["action_mask"]` |
| Reward range | -13..+13 points a deal (`reward="points"`) |
| Render modes | `"human"`, `"ansi"` |
| `metadata["name"]` | `"sergeant_major_v0"` |

Usage:

```python
from sergeant_major_env import sergeant_major_v0
game = sergeant_major_v0.env(num_deals=2)
game.reset(seed=7)
for agent in game.agent_iter():
    observation, reward, termination, truncation, info = game.last()
    action = None if termination or truncation else policy(observation, info)
    game.step(action)
```

**Observation**: `observation["observation"]` is
[`sergeant_major_env.observation.observe`][] of the agent's seat, what that seat knows
(its complete information state, seats relative to it), laid out in the segments of
`observation.SEGMENTS` (the module's docstring has the table); `action_mask` has a 1
for each legal action of the agent to act, zeros for the others. **Actions**: a card id
`suit * 13 + rank` (R3) to play, discard, give or return, or `52 + mode` for ♠ ♣ ♥ ♦ NT
MIN. **Rewards**: each deal's points (R23, R24) when the deal ends (`reward="points"`), or
the final score or rank once (`"score"`, `"rank"`); see [`raw_env`][].
**Termination**: after the last deal, or at an illegal action (`illegal_action`); no
truncation.

[`env`][] wraps [`raw_env`][] with the standard PettingZoo wrappers the way the
`pettingzoo.classic` games do (`AssertOutOfBoundsWrapper`, `OrderEnforcingWrapper`).
An illegal action ends the game with a penalty for the offender by default, the classic
games' convention, which the raw env applies itself (so its infos can say so); see
`illegal_action` in [`raw_env`][]. The rules themselves live only in
[`sergeant_major_env.engine`][], the env options in [`sergeant_major_env.options`][].

**Version history** ([`sergeant_major_env.versions`][]): the version number (`_v0`, and
the Gymnasium id `SergeantMajor-v0`) goes up when the rules' behaviour, the observation
layout (`observation.VERSION`, which every model file records), the action ids or the
rewards change. `sergeant_major_v0` (package 0.1.0): the rules of RULES.md, observation
layout version 2 (919 floats), actions 0..57, rewards `points`/`score`/`rank`. Packages 0.2.0
to 0.4.0 keep it: for a seed, the same games, observations, legal actions and rewards, bit
for bit (0.4.0 runs them on compiled kernels; `tests/reference_engine.py` and the frozen
tables check it); what changed around them (a ten written as 10 in `render()`, new agents
and commands) is in the changelog.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any, Mapping

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from . import engine, options as env_options, records
from .cards import NUM_ACTIONS
from .observation import OBSERVATION_SIZE, observation_bounds, observe
from .one_game import OneGame, StepResult, compile_kernels
from .render import referee_view, seat_view
from .rules import Rules
from .seeding import check_seed
from .versions import AEC_NAME

AGENTS = ("player_0", "player_1", "player_2")
"""Agent `player_i` is seat i of RULES.md (R1)."""
_SEATS = {agent: seat for seat, agent in enumerate(AGENTS)}
ENV_OPTIONS = {"reward": env_options.DEFAULT_REWARD,
               "illegal_action": env_options.AEC_ILLEGAL_ACTIONS[0],
               "illegal_reward": env_options.ILLEGAL_REWARD}
"""The env's own options and their defaults (allowed values: [`sergeant_major_env.options`][])."""
CONSTRUCTOR_OPTIONS = (*Rules.names(), *ENV_OPTIONS, "rules", "render_mode", "render_seat", "learner_seat", "seed")
"""Names a `reset(options=...)` may not give: they are the constructor's (or `reset`'s own
`seed`; `learner_seat` is the single-seat env's)."""
NOT_TO_ACT = -1
"""`infos[agent]["decision"]` of an agent that is not the one to act."""
_FIRST_GAME = np.zeros(1, dtype=np.intp)
RENDER_MODES = ("human", "ansi")


def env(render_mode: str | None = None, render_seat: int | None = None, **options: Any) -> AECEnv:
    """The AEC environment with PettingZoo's standard wrappers; options as [`raw_env`][]."""
    game = raw_env(render_mode=render_mode, render_seat=render_seat, **options)
    game = CheckedActionsWrapper(game)
    return wrappers.OrderEnforcingWrapper(game)


class CheckedActionsWrapper(wrappers.AssertOutOfBoundsWrapper):
    """PettingZoo's bounds wrapper, with the env's own one-line ValueError for an action that is
    not an id 0..57 ([`options.check_action`][]): `step(58)`, `step(1.5)` and `step(2**70)`
    alike, where the base class asserts or overflows converting to a C long."""

    def step(self, action) -> None:
        agent = self.agent_selection
        if not (action is None and (self.terminations.get(agent) or self.truncations.get(agent))):
            action = env_options.check_action(action, f"{type(self.unwrapped).__name__}.step({agent})")
        super().step(action)


class raw_env(AECEnv):
    """3-5-8 (RULES.md) as a PettingZoo AEC environment, without wrappers (use [`env`][]).

    **Agents** `player_0`, `player_1`, `player_2` are seats 0, 1, 2. The agent to act,
    `agent_selection`, is `player_{to_act}` of the engine; the same agent acts several times
    in a row where the rules say so (the playmaker's four discards, successive exchange gives).
    Forced returns (R21) are made by the engine inside a step and are never asked.

    **Action space** `Discrete(58)` (RULES.md section 10): 0..51 a card (play, discard, give,
    or return after a trump), 52..57 a mode ♠ ♣ ♥ ♦ NT MIN.

    **Observation space** `Dict(observation=Box(low, high, (OBSERVATION_SIZE,), float32),
    action_mask=Box(0, 1, (58,), int8))`. `observation` is
    [`sergeant_major_env.observation.observe`][] for the agent's seat: what that seat knows,
    seats relative to it, in the segments of `observation.SEGMENTS` (see that module's
    docstring: the card planes hand, played, trick, talon, discards, exchange cards and the
    derived winning card, winners in hand and highest left; the decision, seat to act, mode,
    roles, targets, tricks, trick leader, exchange counts, previous points, scores, deal and
    modes available; the trick history card_trick and trick_leaders; voids; the derived
    winning seat, tricks needed and unseen cards per suit). All entries lie in 0..1 except
    `prev_points` (-1..1), `tricks_needed` (-13/16..1/2) and `scores`
    (+-13 * num_deals / 50); see [`observation_bounds`][]. `action_mask` has a 1 for each
    legal action of the agent to act and is all zero for every other agent and after the game.
    `observe(agent)` works for any of the three agents at any time after `reset()` (another
    name is a ValueError naming them); the space objects never change.

    **Rewards** (option `reward`):

    * `"points"` (default): when a deal ends, each agent gets its points of that deal (R23,
      R24), so the cumulative reward is the game score;
    * `"score"`: the final score, once, when the game ends;
    * `"rank"`: when the game ends, +1 / 0 / -1 for first / second / third place; players
      with equal scores share their places' values (two tied first get +0.5 each, three tied 0).

    The game ends with `terminations` after the last deal (or at an illegal action, see
    `illegal_action`); there is no truncation.

    **Infos** `infos[agent]` holds numbers only, the same four keys at every step, so that
    tensor-based clients (TorchRL's `PettingZooWrapper`, Tianshou's `PettingZooEnv`) take
    them as they are:

    * `"decision"` (int): the engine phase id of the decision the agent faces if it is the
      one to act (names in `engine.DECISIONS`: 0 mode, 1 exchange_give, 2 exchange_return,
      3 discard, 4 play), [`NOT_TO_ACT`][] (-1) for the others, and `engine.OVER` (5,
      `"game_over"`) for all once the game has ended;
    * `"deal"` (int): the engine's 0-based index of the current deal (`state.deal`;
      `num_deals` once the game is over);
    * `"role"` (int): the agent's role in that deal, an index into `engine.ROLE_NAMES`
      (0 dealer, 1 playmaker, 2 third; the last deal's once the game is over);
    * `"illegal_action"` (bool): True for the agent whose illegal action ended the game.

    **Options** (keywords; anything else is a ValueError naming the known ones; the env
    options are described once in [`sergeant_major_env.options`][]):

    * the rule options of RULES.md section 9: `num_deals` (1..18, default 18), `exchanges`,
      `must_overtake`, `must_overtrump`, `dealer_builds_talon` (see [`Rules`][]), or
      `rules=Rules(...)` (or a mapping of them), not both, as in every environment;
    * `reward`: `"points"` | `"score"` | `"rank"`, as above;
    * `illegal_action`: what a legal-looking action id (0..57) that the rules refuse does:
      `"terminate"` (default, PettingZoo's classic convention: the game ends, the offender
      gets `illegal_reward`, its info has `illegal_action` True; `engine_state` keeps
      the position where the action was tried) or `"raise"`; `illegal_reward`. Described
      once, for every env, in [`sergeant_major_env.options`][]. An action that is not an
      integer 0..57 (a bool, a float, `None` for a live agent) is a ValueError either way;
    * `render_mode`: `None`, `"ansi"` (`render()` returns the table as text) or
      `"human"` (prints it, also after every step). The table is drawn by
      `sergeant_major_env.render` and shows what one seat knows;
    * `render_seat`: `None` (default): the *referee's view*, the table as the seat to act
      sees it: its hand (its first six cards while it chooses the mode, R9), its own discards
      and exchange cards, the public table; it follows the turn, so over a game it shows every
      hand in turn. `0`, `1` or `2`: always that seat's view (never another hand, R22:
      never the other pair's exchanged cards), for watching or playing one seat.

    **Seeding** `reset(seed=s)` plays the engine game `engine.init([s])`; `reset()`
    draws the game's seed from the env's numpy generator, which `reset(seed=s)` also seeds
    (so later unseeded resets are reproducible too); never seeded, it starts from OS entropy.
    `s` follows the one seed rule of `sergeant_major_env.seeding` (an integer 0 to
    2**63 - 1), checked before anything changes.

    `observe`, `last` and `step` before the first `reset()` raise a RuntimeError
    saying so.

    **Records** [`game_record`][] gives the game record of RULES.md section 11. The env keeps
    only the list of actions taken and builds the record on demand by replaying them through
    [`records.Recorder`][] (stepping the recorder live would cost about as much as the
    engine step itself).

    **Pickling** `pickle.dumps(env)` keeps the game in progress: the unpickled env goes on
    exactly as the original would (unlike the classic envs' `EzPickle`, which rebuilds a
    fresh env from the constructor's arguments).

    `engine_state` is the live engine [`State`][sergeant_major_env.engine.State] (a batch of one game), for
    inspection; change it only through `step`.
    """

    metadata = {
        "name": AEC_NAME,
        "is_parallelizable": False,
        "render_modes": list(RENDER_MODES),
        "render_fps": 1,
    }

    def __init__(
        self,
        render_mode: str | None = None,
        render_seat: int | None = None,
        reward: str = env_options.DEFAULT_REWARD,
        illegal_action: str = env_options.AEC_ILLEGAL_ACTIONS[0],
        illegal_reward: float = env_options.ILLEGAL_REWARD,
        rules: Rules | Mapping[str, Any] | None = None,
        **rule_options: Any,
    ) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode must be None or one of {', '.join(map(repr, RENDER_MODES))}, "
                             f"got {render_mode!r}")
        if render_seat is not None and (isinstance(render_seat, (bool, np.bool_))
                                        or not isinstance(render_seat, (int, np.integer)) or render_seat not in (0, 1, 2)):
            raise ValueError(f"render_seat must be None (the referee's view: the seat to act) or a seat 0, 1 or 2, "
                             f"got {render_seat!r}")
        self.render_seat = None if render_seat is None else int(render_seat)
        where = type(self).__name__
        self.rules, _ = env_options.split_options(rule_options, ENV_OPTIONS, where, rules)
        self.reward = env_options.check_reward(reward, where)
        self.illegal_action = env_options.check_illegal_action(illegal_action, env_options.AEC_ILLEGAL_ACTIONS, where)
        self.illegal_reward = env_options.check_illegal_reward(illegal_reward, where)
        self.render_mode = render_mode
        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        self.action_spaces = {agent: spaces.Discrete(NUM_ACTIONS) for agent in AGENTS}
        low, high = observation_bounds(self.rules.num_deals)
        self.observation_spaces = {
            agent: spaces.Dict({
                "observation": spaces.Box(low, high, (OBSERVATION_SIZE,), np.float32),
                "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), np.int8),
            })
            for agent in AGENTS
        }
        self.engine_state: engine.State | None = None
        self._np_random: np.random.Generator | None = None
        self._game: OneGame | None = None  # engine_state with its decision's mask and observation (one_game)
        self._actions: list[int] = []  # every decision of the game, for game_record()
        self._deals_end = 0  # len(self._actions) when the last completed deal ended
        self._record: dict | None = None  # the finished game's record, once built
        self._rewarded = False  # self.rewards holds non-zero values to clear at the next step
        self._info_seat = self._info_phase = -1  # the seat whose info holds the decision, and the phase
        self._deal_index, self._roles = 0, (0, 0, 0)  # of the infos, set once a deal

    # ------------------------------------------------------------------ spaces

    def observation_space(self, agent: str) -> spaces.Dict:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Discrete:
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ AEC API

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start a new game. The env has no reset options: `options` that are not a dict, or
        that name an option of the constructor (a rule option such as `num_deals`, `reward`,
        `learner_seat`...), are a ValueError worded as the single-seat env's, before anything
        changes; other keys are ignored (PettingZoo's API test passes `{"options": 1}`)."""
        env_options.check_reset_options(options, (), f"{type(self).__name__}.reset", only=CONSTRUCTOR_OPTIONS)
        if seed is not None:
            seed = check_seed(seed, f"{type(self).__name__}.reset: seed")  # before anything changes
            self._np_random = np.random.default_rng(seed)
        elif self._np_random is None:
            self._np_random = np.random.default_rng()
        game_seed = seed if seed is not None else int(self._np_random.integers(2**63))
        compile_kernels()  # a first run: the one-game kernels, not the batched game's (init's)
        self.engine_state = engine.init([game_seed], self.rules)
        self._game = OneGame(self.engine_state)
        self._actions = []
        self._deals_end = 0
        self._record = None
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(AGENTS, 0.0)
        self._cumulative_rewards = dict.fromkeys(AGENTS, 0.0)
        self._rewarded = False
        self.terminations = dict.fromkeys(AGENTS, False)
        self.truncations = dict.fromkeys(AGENTS, False)
        self._skip_agent_selection = None
        self._refresh_infos()
        self.agent_selection = AGENTS[int(self.engine_state.to_act[0])]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        try:
            seat = _SEATS[agent]
        except (KeyError, TypeError):
            raise ValueError(f"{type(self).__name__}.observe: unknown agent {agent!r}; "
                             f"agents: {', '.join(AGENTS)}") from None
        state = self.engine_state
        if state is None:
            self._require_game("observe")
        if agent == self.agent_selection and not self.terminations.get(agent, True):
            # The seat to act: its view and mask came with the last step (one kernel call).
            return {"observation": self._game.observation.copy(), "action_mask": self._game.mask.copy()}
        return {"observation": observe(state, seat)[0], "action_mask": np.zeros(NUM_ACTIONS, dtype=np.int8)}

    def last(self, observe: bool = True):
        """As `AECEnv.last` (written out, one call less per decision), with a clear error
        before `reset()`."""
        if self.engine_state is None:
            self._require_game("last")
        agent = self.agent_selection
        return (self.observe(agent) if observe else None, self._cumulative_rewards[agent],
                self.terminations[agent], self.truncations[agent], self.infos[agent])

    def step(self, action: int | None) -> None:
        state = self.engine_state
        if state is None:
            self._require_game("step")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if type(action) is not int or not 0 <= action < NUM_ACTIONS:  # the common case costs one test
            action = env_options.check_action(action, f"{type(self).__name__}.step({agent})")
        try:  # refused: IllegalActionError (a ValueError), and the engine state is unchanged
            result = self._game.step(action)  # who acts next, the phase, a deal's end (one_game.StepResult)
        except engine.IllegalActionError:
            if self.illegal_action == "raise":
                raise
            self._end_by_illegal_action(agent)
            return
        self._actions.append(action)
        self._cumulative_rewards[agent] = 0.0
        if self._rewarded:
            self._clear_rewards()
            self._rewarded = False
        seat, phase = result.to_act, result.phase
        if result.deal_ended:
            self._end_deal(result)
        elif seat != self._info_seat or phase != self._info_phase:  # new infos for the two changed
            self.infos[AGENTS[self._info_seat]] = self._info(self._info_seat, phase, seat)
            self.infos[AGENTS[seat]] = self._info(seat, phase, seat)
            self._info_seat, self._info_phase = seat, phase
        if seat >= 0:  # -1 once the game is over: the agents then step out in turn (None)
            self.agent_selection = AGENTS[seat]
        if self.render_mode == "human":
            self.render()

    def close(self) -> None:
        pass

    # ------------------------------------------------------------------ internals

    def _require_game(self, what: str) -> engine.State:
        if self.engine_state is None:
            raise RuntimeError(f"{type(self).__name__}.{what}: no game yet: call reset() first")
        return self.engine_state

    def _end_deal(self, result: StepResult) -> None:
        """A deal (maybe the game) ended in this step (its `result`): rewards, infos, termination."""
        self._deals_end = len(self._actions)
        rows, rewards = env_options.event_rewards(self.reward, self.engine_state, _FIRST_GAME)
        if rows.size:
            self._pay(rewards[0].tolist())
        if result.game_over:
            self.terminations = dict.fromkeys(AGENTS, True)
        self._refresh_infos()

    def _end_by_illegal_action(self, offender: str) -> None:
        """`illegal_action="terminate"`: the game ends here; `illegal_reward` for the offender."""
        self._cumulative_rewards[offender] = 0.0  # as in a normal step: last() has paid it
        if self._rewarded:
            self._clear_rewards()
        self._pay([self.illegal_reward if agent == offender else 0.0 for agent in AGENTS])
        self.terminations = dict.fromkeys(AGENTS, True)
        self._refresh_infos(over=True)
        self.infos[offender]["illegal_action"] = True
        if self.render_mode == "human":
            self.render()

    def _pay(self, rewards: list[float]) -> None:
        """This step's rewards, by seat; cleared at the next step."""
        self.rewards = {agent: float(reward) for agent, reward in zip(AGENTS, rewards)}
        self._accumulate_rewards()
        self._rewarded = True

    def _info(self, seat: int, phase: int, to_act: int) -> dict[str, Any]:
        acting = phase == engine.OVER or seat == to_act
        return {"decision": phase if acting else NOT_TO_ACT, "deal": self._deal_index,
                "role": self._roles[seat], "illegal_action": False}

    def _refresh_infos(self, over: bool = False) -> None:
        """New infos for every agent (at reset, when a deal ends, and `over` when an illegal
        action ends the game)."""
        state = self.engine_state
        self._deal_index = int(state.deal[0])
        self._roles = tuple(engine.roles(state)[0].tolist())  # the engine keeps the last dealer once over
        phase, to_act = (engine.OVER, -1) if over else (int(state.phase[0]), int(state.to_act[0]))
        self.infos = {agent: self._info(seat, phase, to_act) for seat, agent in enumerate(AGENTS)}
        self._info_seat, self._info_phase = max(to_act, 0), phase

    # ------------------------------------------------------------------ records

    def game_record(self, players: list[str] | None = None) -> dict[str, Any]:
        """The game record of RULES.md section 11 (`players` default to the agent names).

        A finished game gives its full record, which [`records.replay`][] accepts. An
        unfinished game gives the same format holding the deals completed so far (possibly
        none) and `scores` = the totals after them; `rules` are the game's own, so
        [`records.replay`][] rejects it as short (R4) until the game is over. The record is
        built by replaying the game's actions through [`records.Recorder`][].
        """
        if self.engine_state is None:
            raise RuntimeError("game_record() needs a game: call reset() first")
        players = list(AGENTS if players is None else players)
        finished = bool(self.engine_state.phase[0] == engine.OVER)
        if finished and self._record is not None and self._record["players"] == players:
            return copy.deepcopy(self._record)
        state = self.engine_state
        completed = self.rules.num_deals if finished else int(state.deal[0])
        if completed == 0:
            return {"format": records.FORMAT, "rules": self.rules.to_dict(), "seed": int(state.seed[0]),
                    "players": players, "first_dealer": int(state.first_dealer[0]), "deals": [],
                    "scores": [0, 0, 0]}
        # The cards of deal k depend only on the seed and k, so a game of `completed` deals
        # replays exactly the deals played so far.
        record = records.record_of_actions(int(state.seed[0]), dataclasses.replace(self.rules, num_deals=completed),
                                           self._actions[: self._deals_end], players)
        record["rules"] = self.rules.to_dict()
        if finished:
            self._record = copy.deepcopy(record)
        return record

    # ------------------------------------------------------------------ rendering

    def render(self) -> str | None:
        """The table as text (`sergeant_major_env.render`): the view of `render_seat`,
        or by default the referee's view (the seat to act's). Returned (`"ansi"`) or printed
        (`"human"`)."""
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        state = self._require_game("render")
        if self.render_seat is None:
            text = referee_view(state, AGENTS)
        else:
            text = seat_view(state, self.render_seat, AGENTS)
        if self.render_mode == "human":
            print(text)
            return None
        return text

