"""The PettingZoo AEC environment of 3-5-8: a thin adapter over a batch-of-one engine game.

    from sergeant_major_env import env
    game = env(num_deals=2)
    game.reset(seed=7)
    for agent in game.agent_iter():
        observation, reward, termination, truncation, info = game.last()
        action = None if termination or truncation else policy(observation, info)
        game.step(action)

:func:`env` wraps :class:`raw_env` with the standard PettingZoo wrappers the way the
``pettingzoo.classic`` games do (``TerminateIllegalWrapper`` with
``illegal_action="terminate"``, ``AssertOutOfBoundsWrapper``, ``OrderEnforcingWrapper``).
The rules themselves live only in :mod:`sergeant_major_env.engine`.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from . import engine, records
from .cards import NUM_ACTIONS
from .observation import OBSERVATION_SIZE, observation_bounds, observe
from .render import referee_view, seat_view
from .rules import Rules

AGENTS = ("player_0", "player_1", "player_2")
"""Agent ``player_i`` is seat i of RULES.md (R1)."""
REWARDS = ("points", "score", "rank")
ILLEGAL_ACTIONS = ("raise", "terminate")
ENV_OPTIONS = {"reward": REWARDS, "illegal_action": ILLEGAL_ACTIONS}
"""The env's own options and their allowed values (the first is the default)."""
RENDER_MODES = ("human", "ansi")


def env(render_mode: str | None = None, render_seat: int | None = None, **options: Any) -> AECEnv:
    """The AEC environment with PettingZoo's standard wrappers; options as :class:`raw_env`."""
    game = raw_env(render_mode=render_mode, render_seat=render_seat, **options)
    if game.illegal_action == "terminate":
        game = wrappers.TerminateIllegalWrapper(game, illegal_reward=-1)
    game = wrappers.AssertOutOfBoundsWrapper(game)
    return wrappers.OrderEnforcingWrapper(game)


def parse_options(options: dict[str, Any]) -> tuple[Rules, str, str]:
    """Split and check ``options``: (rules, reward, illegal_action); a ValueError names the allowed values."""
    options = dict(options)
    unknown = sorted(set(options) - set(Rules.names()) - set(ENV_OPTIONS))
    if unknown:
        raise ValueError(f"unknown option(s) {', '.join(unknown)}; rule options (RULES.md section 9): "
                         f"{', '.join(Rules.names())}; env options: {', '.join(ENV_OPTIONS)}")
    chosen = []
    for name, allowed in ENV_OPTIONS.items():
        value = options.pop(name, allowed[0])
        if value not in allowed:
            raise ValueError(f"option {name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")
        chosen.append(value)
    return Rules.from_dict(options), *chosen


def rank_rewards(scores) -> list[float]:
    """+1 / 0 / -1 by final place; players sharing places share (average) their values (R6)."""
    return (2 - engine.places(np.asarray(scores)[None]))[0].tolist()


class raw_env(AECEnv):
    """3-5-8 (RULES.md) as a PettingZoo AEC environment, without wrappers (use :func:`env`).

    **Agents** ``player_0``, ``player_1``, ``player_2`` are seats 0, 1, 2. The agent to act,
    ``agent_selection``, is ``player_{to_act}`` of the engine; the same agent acts several times
    in a row where the rules say so (the playmaker's four discards, successive exchange gives).
    Forced returns (R21) are made by the engine inside a step and are never asked.

    **Action space** ``Discrete(58)`` (RULES.md section 10): 0..51 a card (play, discard, give,
    or return after a trump), 52..57 a mode ♠ ♣ ♥ ♦ NT MIN.

    **Observation space** ``Dict(observation=Box(low, high, (OBSERVATION_SIZE,), float32),
    action_mask=Box(0, 1, (58,), int8))``. ``observation`` is
    :func:`sergeant_major_env.observation.observe` for the agent's seat: what that seat knows,
    seats relative to it, in the segments of ``observation.SEGMENTS`` (see that module's
    docstring: hand, played, trick, talon, discards, exchange cards, decision, to_act, mode,
    roles, targets, tricks_won, trick_leader, exchange counts, prev_points, scores, deal,
    modes_available). All entries lie in 0..1 except ``prev_points`` (-1..1) and ``scores``
    (+-13 * num_deals / 50); see :func:`observation_bounds`. ``action_mask`` has a 1 for each
    legal action of the agent to act and is all zero for every other agent and after the game.
    ``observe(agent)`` works for any agent at any time; the space objects never change.

    **Rewards** (option ``reward``):

    * ``"points"`` (default): when a deal ends, each agent gets its points of that deal (R23,
      R24), so the cumulative reward is the game score;
    * ``"score"``: the final score, once, when the game ends;
    * ``"rank"``: when the game ends, +1 / 0 / -1 for first / second / third place; players
      with equal scores share their places' values (two tied first get +0.5 each, three tied 0).

    The game ends with ``terminations`` after the last deal; there is no truncation.

    **Infos** ``infos[agent]`` = ``{"decision", "deal", "role"}``: the decision the agent faces
    (an ``engine.DECISIONS`` name) if it is the one to act, else ``None`` (``"game_over"`` for
    all once the game is over); the 1-based deal number; the agent's role in this deal
    (``"dealer"``, ``"playmaker"``, ``"third"``).

    **Options** (keywords; anything else is a ValueError naming the known ones):

    * the rule options of RULES.md section 9: ``num_deals`` (1..18, default 18), ``exchanges``,
      ``must_overtake``, ``must_overtrump``, ``dealer_builds_talon`` (see :class:`Rules`);
    * ``reward``: ``"points"`` | ``"score"`` | ``"rank"``, as above;
    * ``illegal_action``: ``"raise"`` (default): ``step`` raises
      :class:`engine.IllegalActionError` (a ValueError naming the action, the decision and the
      legal actions) and the game is unchanged; ``"terminate"``: the PettingZoo classic
      behaviour (offender -1, others 0, the game ends), by ``TerminateIllegalWrapper`` in
      :func:`env` (the raw env itself always raises);
    * ``render_mode``: ``None``, ``"ansi"`` (``render()`` returns the table as text) or
      ``"human"`` (prints it, also after every step). The table is drawn by
      :mod:`sergeant_major_env.render` and shows what one seat knows;
    * ``render_seat``: ``None`` (default): the *referee's view*, the table as the seat to act
      sees it: its hand (its first six cards while it chooses the mode, R9), its own discards
      and exchange cards, the public table; it follows the turn, so over a game it shows every
      hand in turn. ``0``, ``1`` or ``2``: always that seat's view (never another hand, R22:
      never the other pair's exchanged cards), for watching or playing one seat.

    **Seeding** ``reset(seed=s)`` plays the engine game ``engine.init([s])``; ``reset()``
    draws the game's seed from the env's numpy generator, which ``reset(seed=s)`` also seeds
    (so later unseeded resets are reproducible too); never seeded, it starts from OS entropy.

    **Records** :meth:`game_record` gives the game record of RULES.md section 11. The env keeps
    only the list of actions taken and builds the record on demand by replaying them through
    :class:`records.Recorder` (stepping the recorder live would cost about as much as the
    engine step itself).

    **Pickling** ``pickle.dumps(env)`` keeps the game in progress: the unpickled env goes on
    exactly as the original would (unlike the classic envs' ``EzPickle``, which rebuilds a
    fresh env from the constructor's arguments).

    ``engine_state`` is the live engine :class:`~engine.State` (a batch of one game), for
    inspection; change it only through :meth:`step`.
    """

    metadata = {
        "name": "sergeant_major_v0",
        "is_parallelizable": False,
        "render_modes": list(RENDER_MODES),
        "render_fps": 1,
    }

    def __init__(self, render_mode: str | None = None, render_seat: int | None = None, **options: Any) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode must be None or one of {', '.join(map(repr, RENDER_MODES))}, "
                             f"got {render_mode!r}")
        if render_seat is not None and (isinstance(render_seat, (bool, np.bool_))
                                        or not isinstance(render_seat, (int, np.integer)) or render_seat not in (0, 1, 2)):
            raise ValueError(f"render_seat must be None (the referee's view: the seat to act) or a seat 0, 1 or 2, "
                             f"got {render_seat!r}")
        self.render_seat = None if render_seat is None else int(render_seat)
        self.rules, self.reward, self.illegal_action = parse_options(options)
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
        self._legal: np.ndarray | None = None  # legal_bits of the current decision, once computed
        self._actions: list[int] = []  # every decision of the game, for game_record()
        self._deals_end = 0  # len(self._actions) when the last completed deal ended
        self._record: dict | None = None  # the finished game's record, once built
        self._rewarded = False  # self.rewards holds non-zero values to clear at the next step
        self._info_seat = self._info_phase = -1  # the seat whose info holds the decision, and the phase
        self._deal_number, self._roles = 0, ("",) * 3  # of the infos, set once a deal

    # ------------------------------------------------------------------ spaces

    def observation_space(self, agent: str) -> spaces.Dict:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Discrete:
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ AEC API

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start a new game (``options`` is accepted for the API and ignored: rule options are
        given to the constructor)."""
        if seed is not None:
            self._np_random = np.random.default_rng(seed)
        elif self._np_random is None:
            self._np_random = np.random.default_rng()
        game_seed = seed if seed is not None else int(self._np_random.integers(2**63))
        self.engine_state = engine.init([game_seed], self.rules)
        self._legal = None
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
        seat = AGENTS.index(agent)
        state = self.engine_state
        if agent == self.agent_selection and state.phase[0] != engine.OVER:
            bits = self._legal_bits().astype("<u8", copy=False)
            mask = np.unpackbits(bits.view(np.uint8), count=NUM_ACTIONS, bitorder="little").view(np.int8)
        else:
            mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        return {"observation": observe(state, seat)[0], "action_mask": mask}

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        state = self.engine_state
        # Raises IllegalActionError (a ValueError) and changes nothing if the action is illegal.
        engine.step(state, np.array([action]), legal=self._legal_bits())
        self._legal = None
        self._actions.append(int(action))
        self._cumulative_rewards[agent] = 0.0
        if self._rewarded:
            self._clear_rewards()
            self._rewarded = False
        seat, phase = int(state.to_act[0]), int(state.phase[0])
        if state.deal_ended[0]:
            self._end_deal()
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

    def _legal_bits(self) -> np.ndarray:
        """uint64[1]: the legal actions of this decision (computed once per decision)."""
        if self._legal is None:
            self._legal = engine.legal_bits(self.engine_state)
        return self._legal

    def _end_deal(self) -> None:
        """A deal (maybe the game) ended in this step: rewards, infos, termination."""
        state = self.engine_state
        self._deals_end = len(self._actions)
        rewards = None
        if self.reward == "points":
            rewards = state.deal_points[0].tolist()
        if state.game_ended[0]:
            scores = state.final_scores[0].tolist()
            if self.reward == "score":
                rewards = scores
            elif self.reward == "rank":
                rewards = rank_rewards(scores)
            self.terminations = dict.fromkeys(AGENTS, True)
        if rewards is not None:
            self.rewards = {agent: float(r) for agent, r in zip(AGENTS, rewards)}
            self._accumulate_rewards()
            self._rewarded = True
        self._refresh_infos()

    def _info(self, seat: int, phase: int, to_act: int) -> dict[str, Any]:
        acting = phase == engine.OVER or seat == to_act
        return {"decision": engine.DECISIONS[phase] if acting else None, "deal": self._deal_number,
                "role": self._roles[seat]}

    def _refresh_infos(self) -> None:
        """New infos for every agent (at reset and when a deal ends)."""
        state = self.engine_state
        self._deal_number = min(int(state.deal[0]), self.rules.num_deals - 1) + 1  # the last deal once over
        self._roles = tuple(engine.ROLE_NAMES[role] for role in engine.roles(state)[0])
        phase, to_act = int(state.phase[0]), int(state.to_act[0])
        self.infos = {agent: self._info(seat, phase, to_act) for seat, agent in enumerate(AGENTS)}
        self._info_seat, self._info_phase = max(to_act, 0), phase

    # ------------------------------------------------------------------ records

    def game_record(self, players: list[str] | None = None) -> dict[str, Any]:
        """The game record of RULES.md section 11 (``players`` default to the agent names).

        A finished game gives its full record, which :func:`records.replay` accepts. An
        unfinished game gives the same format holding the deals completed so far (possibly
        none) and ``scores`` = the totals after them; ``rules`` are the game's own, so
        :func:`records.replay` rejects it as short (R4) until the game is over. The record is
        built by replaying the game's actions through :class:`records.Recorder`.
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
        replayed = engine.init(state.seed, dataclasses.replace(self.rules, num_deals=completed))
        recorder = records.Recorder(replayed, players)
        for action in self._actions[: self._deals_end]:
            recorder.step(np.array([action]))
        record = recorder.finished[0]
        record["rules"] = self.rules.to_dict()
        if finished:
            self._record = copy.deepcopy(record)
        return record

    # ------------------------------------------------------------------ rendering

    def render(self) -> str | None:
        """The table as text (:mod:`sergeant_major_env.render`): the view of ``render_seat``,
        or by default the referee's view (the seat to act's). Returned (``"ansi"``) or printed
        (``"human"``)."""
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        state = self.engine_state
        if state is None:
            raise RuntimeError(f"{type(self).__name__}.render: no game yet: call reset() first")
        if self.render_seat is None:
            text = referee_view(state, AGENTS)
        else:
            text = seat_view(state, self.render_seat, AGENTS)
        if self.render_mode == "human":
            print(text)
            return None
        return text

