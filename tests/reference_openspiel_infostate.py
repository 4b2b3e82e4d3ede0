"""The OpenSpiel game's states as sergeant_major_env/openspiel.py kept them before issue 52 (item 1):
the judge of the one-game path's observations and information states (tests/test_openspiel_infostate.py).

A copy of that module's game, state, observers and information state (the per-event record
`_Views` kept in Python, the tensor blocks folded from it by `_Fold`), trimmed of what did not
compute them (records, serialisation, the C++ bots' guards, the load_game checks), registered
as `python_sergeant_major_reference` so that OpenSpiel's own calls (clone, the observers)
reach it. Its decisions go through `engine.step` on a batch of one, each card dealt by chance
is installed with `engine._set_cards_checked`, and every seat's observation after an event is
`observation.observe_card_sets`: the engine's and the observation's public kernels, not the
one-game kernels that openspiel.py uses now.
"""

from __future__ import annotations

import math
import numbers
import operator
from typing import Any

import numpy as np
import pyspiel

from sergeant_major_env import engine
from sergeant_major_env.cards import MODE_ACTION_OFFSET, NUM_ACTIONS, NUM_CARDS, RANKS, action_name, card_name
from sergeant_major_env.observation import CARD_SETS_WIDTH, OBSERVATION_SIZE, SCALES, SEGMENTS, observe, observe_card_sets
from sergeant_major_env.options import DEFAULT_REWARD, check_reward, rank_rewards
from sergeant_major_env.limits import shorten
from sergeant_major_env.render import card_text, hand_text, seat_view
from sergeant_major_env.rules import Rules
from sergeant_major_env.worlds import sample_worlds

SHORT_NAME = "python_sergeant_major_reference"
NUM_PLAYERS = 3
POINTS_BOUND = 13
"""The most points a seat can win or lose in one deal (R23, R24): 16 - 3 or 3 - 16."""
MAX_EXCHANGED = 13
"""The most cards exchanged after one deal: a giver's points (R19), at most 13."""
SEAT_NAMES = ("seat 0", "seat 1", "seat 2")
_ONE = np.zeros(1, dtype=np.intp)  # game 0 of a batch of one
ALL_CARDS = (1 << NUM_CARDS) - 1
_UNCHANGED = " The state is unchanged."  # the end of a refusal, as the engine's
REWARD_PARAMETER = "reward"
"""The game parameter of the rewards (module docstring, "Rewards"): [`options.REWARDS`][]."""
PARAMETERS = {**Rules().to_dict(), REWARD_PARAMETER: DEFAULT_REWARD}
"""The game's parameters and defaults: the rule options (RULES.md section 9) and `reward`."""

GAME_TYPE = pyspiel.GameType(
    short_name=SHORT_NAME,
    long_name="Python 3-5-8 (Sergeant Major), the reference of tests",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.REWARDS,
    max_num_players=NUM_PLAYERS,
    min_num_players=NUM_PLAYERS,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=PARAMETERS,
)


def game_type(reward: str) -> pyspiel.GameType:
    """The game type of a game with `reward` (module docstring, "Rewards"): `GAME_TYPE`,
    whose reward model is `REWARDS`, for `points`; the same with `TERMINAL` otherwise."""
    if reward == "points":
        return GAME_TYPE
    fields = {name: getattr(GAME_TYPE, name) for name in (
        "short_name", "long_name", "dynamics", "chance_mode", "information", "utility", "max_num_players",
        "min_num_players", "provides_information_state_string", "provides_information_state_tensor",
        "provides_observation_string", "provides_observation_tensor", "parameter_specification")}
    return pyspiel.GameType(**fields, reward_model=pyspiel.GameType.RewardModel.TERMINAL)


class IllegalActionError(engine.IllegalActionError, pyspiel.SpielError):
    """An action refused by the game (module docstring, "Refusals"); the state is unchanged.
    Caught as pyspiel's `SpielError` and as this package's `engine.IllegalActionError`."""


def max_decisions(num_deals: int) -> int:
    """The most decisions of a game (module docstring, "Game length")."""
    return 53 * num_deals + 2 * MAX_EXCHANGED * (num_deals - 1)


def game_info(rules: Rules, reward: str = DEFAULT_REWARD) -> pyspiel.GameInfo:
    """OpenSpiel's GameInfo of a game under `rules` with `reward` (module docstring)."""
    bound = 1 if reward == "rank" else POINTS_BOUND * rules.num_deals
    return pyspiel.GameInfo(
        num_distinct_actions=NUM_ACTIONS,
        max_chance_outcomes=NUM_CARDS,
        num_players=NUM_PLAYERS,
        min_utility=-float(bound),
        max_utility=float(bound),
        utility_sum=0.0,
        max_game_length=max_decisions(rules.num_deals),
    )


def rules_from_params(params: dict[str, Any] | None) -> Rules:
    """The [`Rules`][] of OpenSpiel game parameters (one clear line for a bad one)."""
    return Rules.from_dict({name: value for name, value in dict(params or {}).items() if name != REWARD_PARAMETER})


def reward_from_params(params: dict[str, Any] | None) -> str:
    """The `reward` game parameter, checked by `options.check_reward` (one line)."""
    return check_reward(dict(params or {}).get(REWARD_PARAMETER, DEFAULT_REWARD), SHORT_NAME)


class SergeantMajorGame(pyspiel.Game):
    """The OpenSpiel game; its parameters are the rule options ([`Rules`][])."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        self.rules = rules_from_params(params)
        self.reward = reward_from_params(params)
        super().__init__(game_type(self.reward), game_info(self.rules, self.reward),
                         {**self.rules.to_dict(), REWARD_PARAMETER: self.reward})
        self._template = engine.init(np.zeros(1, dtype=np.uint64), self.rules)

    def new_initial_state(self) -> "SergeantMajorState":
        """The start of a game: the first chance node, the lot for the first dealer (R4)."""
        return SergeantMajorState(self)

    def make_py_observer(self, iig_obs_type=None, params=None):
        """The observer of the module docstring for the default observation type, the
        information-state observer for perfect recall (module docstring, "Information
        state"); `None` (not provided) for public-only or factored observations."""
        if isinstance(iig_obs_type, dict):  # OpenSpiel passes the params alone when there is no type
            iig_obs_type, params = None, iig_obs_type
        if params:
            raise ValueError(f"{SHORT_NAME} takes no observation parameters, got {dict(params)}")
        if iig_obs_type is not None and (
                not iig_obs_type.public_info or iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER):
            return None
        if iig_obs_type is not None and iig_obs_type.perfect_recall:
            return InformationStateObserver(self.rules.num_deals)
        return SergeantMajorObserver()

    def state_from_engine(self, state: engine.State, last_deal: int | None = None) -> "SergeantMajorState":
        """An OpenSpiel state at the decision of game 0 of an engine `state` (copied), with
        no history: for search bots that resample worlds ([`sergeant_major_env.worlds`][]).
        `last_deal` (0-based) ends the game after that deal (a search horizon; the
        returns are then the scores so far)."""
        if state.rules != self.rules:
            raise ValueError(f"the engine state's rules {state.rules.to_dict()} are not this game's "
                             f"{self.rules.to_dict()}")
        new = SergeantMajorState(self)
        new._engine = _Engine(state.take(_ONE))
        new._lot_drawn = True
        new._deal = [-1] * NUM_CARDS  # the deal is dealt; its order is not known here
        new._dealt = ALL_CARDS
        if last_deal is not None:
            new._last_deal = int(last_deal)
        new._origin = _Origin(new)  # its information states start here (module docstring)
        return new


class _Engine:
    """The engine game (a batch of one) of a state; OpenSpiel clones states by deep-copying
    their attributes, and this copies the engine's buffer, sharing the frozen rules.

    A new game's engine is the game's template, copied only when first used: pyspiel makes a
    new initial state for every `observation_tensor` call of a Python game (to size its
    buffers) and never looks inside it."""

    def __init__(self, state: engine.State, shared: bool = False) -> None:
        self._state, self._shared = state, shared

    @property
    def state(self) -> engine.State:
        if self._shared:
            self._state, self._shared = self._state.copy(), False
        return self._state

    def __deepcopy__(self, memo) -> "_Engine":
        return _Engine(self._state, shared=True) if self._shared else _Engine(self._state.copy())


class SergeantMajorState(pyspiel.State):
    """A game in progress: a chance node (the lot, R4, or a card being dealt, R10) or a
    decision of the engine's seat to act."""

    def __init__(self, game: SergeantMajorGame) -> None:
        super().__init__(game)
        self._engine = _Engine(game._template, shared=True)
        self._lot_drawn = False
        self._deal: list[int] = []  # the chance outcomes of the current deal: cards in dealing order
        self._dealt = 0  # the same cards as a set (bit c: card c), for chance_outcomes and the check
        self._rewards = [0.0] * NUM_PLAYERS
        self._last_deal = game.rules.num_deals - 1
        self._reward = game.reward
        self._legal: int | None = None  # the legal actions of the decision, once asked
        self._views: _Views | None = None  # what each seat has seen, once an information state is asked
        self._origin: _Origin | None = None  # where the history starts, if not at the lot (state_from_engine)

    # ------------------------------------------------------------------ OpenSpiel API

    @property
    def engine_state(self) -> engine.State:
        """The engine game (a batch of one) this state drives; it holds every hidden card."""
        return self._engine.state

    def current_player(self) -> int:
        if self.is_terminal():
            return pyspiel.PlayerId.TERMINAL
        if self._dealing():
            return pyspiel.PlayerId.CHANCE
        return self._engine.state.to_act.item(0)

    def _dealing(self) -> bool:
        return not self._lot_drawn or len(self._deal) < NUM_CARDS

    def is_terminal(self) -> bool:
        state = self._engine.state
        return state.phase.item(0) == engine.OVER or state.deal.item(0) > self._last_deal

    def _legal_actions(self, player: int) -> list[int]:
        if self._legal is None:  # kept for the step that follows (engine.step's `legal`)
            self._legal = int(engine.legal_bits(self._engine.state)[0])
        return _members(self._legal)

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The lot (R4): each seat 1/3; a card (R10): each card not dealt yet, uniformly."""
        if not self._lot_drawn:
            return [(seat, 1 / NUM_PLAYERS) for seat in range(NUM_PLAYERS)]
        left = _members(ALL_CARDS & ~self._dealt)
        return [(card, 1 / len(left)) for card in left]

    def apply_action(self, action: int) -> None:
        """OpenSpiel's `apply_action`; an action id that is never legal (outside 0..57: -1 is
        OpenSpiel's invalid action, which pyspiel would refuse with its C++ check's text, and
        ids beyond 64 bits, which pybind would refuse as a bad argument) gets the game's one
        line (`_check`) first. Everything else is checked in `_apply_action`."""
        try:
            action = operator.index(action)
        except TypeError:
            raise TypeError(f"an action is an integer id, got {action!r}") from None
        if not 0 <= action < NUM_ACTIONS:
            self._check(action)
        super().apply_action(action)

    def _check(self, action: int) -> None:
        """Raise `IllegalActionError` (one line, nothing changed) unless `action` is
        legal here: the lot's seats (R4), a card not dealt yet (R10), a decision's legal bit
        (the engine's), nothing once the game is over."""
        if self.is_terminal():
            raise IllegalActionError(f"{self._ended()}: no action is legal, got action {action}.{_UNCHANGED}")
        if not self._lot_drawn:
            if not 0 <= action < NUM_PLAYERS:
                raise IllegalActionError(f"R4: the first dealer is drawn by lot, outcomes 0, 1, 2 (a seat), "
                                         f"got {action}.{_UNCHANGED}")
        elif self._dealing():
            if not 0 <= action < NUM_CARDS or self._dealt >> action & 1:
                why = "was dealt already" if 0 <= action < NUM_CARDS else "is not a card id (0..51)"
                raise IllegalActionError(f"R10: chance deals one of the {NUM_CARDS - len(self._deal)} cards not "
                                         f"dealt yet (chance_outcomes()); card {action} {why}.{_UNCHANGED}")
        else:
            if self._legal is None:  # kept for the step that follows (engine.step's `legal`)
                self._legal = int(engine.legal_bits(self._engine.state)[0])
            if not (0 <= action < NUM_ACTIONS and self._legal >> action & 1):
                # the engine's own refusal text (rule id, reason, the legal actions), as engine.step words it
                raise IllegalActionError(engine._illegal_message(self._engine.state, 0, action, 1))

    def _ended(self) -> str:
        """Why the state is terminal: the game's last deal, or the search horizon, ended."""
        if self._engine.state.phase.item(0) == engine.OVER:
            return "the game is over"
        return f"the search horizon (deal {self._last_deal + 1}) has ended"

    def _apply_action(self, action: int) -> None:
        self._check(action)
        event = None if self._views is None else self._event(action)  # the information states' record
        if not self._lot_drawn:
            state = self._engine.state
            state.first_dealer[0] = state.dealer[0] = action  # R4, as the record replayer sets it
            self._lot_drawn = True
            self._install()
        elif self._dealing():
            self._deal.append(int(action))
            self._dealt |= 1 << action
            self._install()
        else:  # a decision; the chance nodes after it keep its rewards (OpenSpiel sums them per decision)
            self._step_engine(int(action))
            self._legal = None  # (a subclass's _step_engine may not clear it)
            self._rewards = [0.0] * NUM_PLAYERS
            state = self._engine.state
            if state.deal_ended[0]:
                self._rewards = [float(p) for p in state.deal_points[0]]
                if not self.is_terminal():  # the next deal is dealt by chance nodes, not the engine's seed
                    self._deal, self._dealt = [], 0
                    self._install()
        if event is not None:
            self._views.record(self._engine.state, *event)

    def _step_engine(self, action: int) -> None:
        legal = None if self._legal is None else np.array([self._legal], dtype=np.uint64)
        self._legal = None
        engine.step(self._engine.state, np.array([action]), legal=legal)

    def _install(self) -> None:
        """Give the engine the cards of the current deal dealt so far (-1: not yet)."""
        cards = np.full(NUM_CARDS, -1, dtype=np.int8)
        cards[: len(self._deal)] = self._deal
        dealt, talon = deal_cards(cards, int(self._engine.state.dealer[0]))
        engine._set_cards_checked(self._engine.state, _ONE, dealt, talon)  # cards checked by _check (R10)
        if len(self._deal) == NUM_CARDS:
            self._deal_installed()

    def _deal_installed(self) -> None:
        """Called once all the cards of a deal are in the engine (a hook for records)."""

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            if not self._lot_drawn:
                return f"first dealer seat {action}"
            position = len(self._deal)
            if position >= 48:
                return f"deal {card_name(action)} to the talon"
            seat = (int(self._engine.state.dealer[0]) + 1 + position) % 3
            return f"deal {card_name(action)} to seat {seat}"
        return action_name(action)

    def returns(self) -> list[float]:
        """Each seat's points so far (R25): its total once the game is over. With a terminal
        `reward` (module docstring, "Rewards"): zeros until the end, then the total
        (`score`) or +1 / 0 / -1 by place (`rank`, R6)."""
        scores = [float(s) for s in self._engine.state.scores[0]]
        reward = self._reward
        if reward == "points":
            return scores
        if not self.is_terminal():
            return [0.0] * NUM_PLAYERS
        return scores if reward == "score" else rank_rewards(scores).tolist()

    def rewards(self) -> list[float]:
        """The points of the deal the last decision ended (R23, R24), else zeros; the chance
        nodes that deal the next deal keep them, since OpenSpiel reads rewards at decisions.
        With a terminal `reward`: zeros until the end, then `returns`."""
        if self._reward != "points":
            return self.returns()
        return list(self._rewards)

    # ------------------------------------------------------------------ information state

    def _event(self, action: int) -> tuple[int, int, int, int, int] | None:
        """(kind, actor, action, deal, dealer) of `action` before it is applied: kind is the
        engine's decision phase, or `_LOT` / `_CARD` for chance. `None` in a
        clone whose record waits until an information state is asked (`_Views`)."""
        views = self._views
        if views.lazy:
            if views.resume is None:  # a copy of where the record stops; the actions follow in the history
                views.resume = (_Origin(self, _Views(views.logs, views.planes, views.rest, views.lines)),
                                len(self.history()))
            return None
        state = self._engine.state
        if not self._lot_drawn:
            return _LOT, -1, action, 0, action
        deal, dealer = int(state.deal[0]), int(state.dealer[0])
        if self._dealing():
            return _CARD, -1, action, deal, dealer
        return int(state.phase[0]), int(state.to_act[0]), action, deal, dealer

    def _information(self) -> "_Views":
        """What each seat has seen (`_Views`), recorded from now on: replayed from the
        history (from the lot, or from the `_Origin` of a state made from an engine
        state) the first time an information state is asked, then kept up to date."""
        views, start = self._views, 0
        if views is not None and not views.lazy:
            return views
        if views is not None and views.resume is None:  # a clone, no action since
            views.lazy = False
            return views
        if views is not None:
            replay, start = views.resume[0].state(), views.resume[1]
        elif self._origin is not None:
            replay = self._origin.state()
        else:
            replay = SergeantMajorState(self.get_game())
            replay._views = _Views.start(replay, start=False)
        for action in self.history()[start:]:
            replay._apply_action(action)
        self._views = replay._views
        return self._views

    def information_state_string(self, player: Any = None) -> str:
        """OpenSpiel's, with a player that is not a seat refused in one `SpielError` line
        (pyspiel's own check spans two lines); `None`: the player to act."""
        return super().information_state_string(self._player(player, "information_state_string"))

    def information_state_tensor(self, player: Any = None) -> list[float]:
        """OpenSpiel's, with the player checked as in `information_state_string`."""
        return super().information_state_tensor(self._player(player, "information_state_tensor"))

    def _player(self, player: Any, where: str) -> int:
        if player is None:
            player = self.current_player()
            if player < 0:
                raise pyspiel.SpielError(f"{where}: no player to act here ({_who(player)}); name a seat 0, 1 or 2")
        return _checked_player(player, where)

    def resample_from_infostate(self, player_id: int, probability_sampler) -> "SergeantMajorState":
        """A state that `player_id` cannot tell from this one (module docstring,
        "Resampling"): the same information state for it, everything it has not seen redrawn
        uniformly among the deals consistent with what it saw ([`worlds.sample_worlds`][]).
        `probability_sampler()` (OpenSpiel's `UniformProbabilitySampler`, or any callable
        returning a float in [0, 1)) seeds the draw. Only the seat to act at a decision can be
        resampled for; anything else is one `SpielError` line, this state unchanged."""
        player = _checked_player(player_id, "resample_from_infostate")
        if self.is_terminal() or self._dealing():
            raise pyspiel.SpielError(f"resample_from_infostate needs a decision, not "
                                     f"{'a finished state' if self.is_terminal() else 'a chance node'}")
        to_act = self._engine.state.to_act.item(0)
        if player != to_act:
            raise pyspiel.SpielError(f"resample_from_infostate samples for the seat to act (player {to_act}), "
                                     f"got player {player}")
        rng = np.random.default_rng(_seed_from(probability_sampler))
        views = self._information()
        world = sample_worlds(self._engine.state, _ONE, 1, rng)
        new = SergeantMajorState(self.get_game())
        new._engine = _Engine(world)
        new._lot_drawn, new._deal, new._dealt = True, [-1] * NUM_CARDS, ALL_CARDS
        new._last_deal, new._rewards = self._last_deal, list(self._rewards)
        new._views = _Views.start(new, keep=(player, views))
        new._origin = _Origin(new)
        return new

    def __str__(self) -> str:
        """The whole table (every hand: a referee's view, for debugging and playthroughs)."""
        state = self._engine.state
        if not self._lot_drawn:
            return "first dealer not drawn yet (R4)"
        deal = min(int(state.deal[0]), state.rules.num_deals - 1) + 1
        dealer = int(state.dealer[0])
        lines = [f"deal {deal}/{state.rules.num_deals}, dealer seat {dealer}, playmaker seat {(dealer + 1) % 3}, "
                 f"scores {state.scores[0].tolist()}"]
        if self._dealing():
            lines.append(f"dealing: {len(self._deal)} of 52 cards dealt")
        for seat in range(NUM_PLAYERS):
            lines.append(f"seat {seat}: {hand_text(int(state.hands[0, seat]), RANKS)}")
        talon = [card_text(c, RANKS) for c in state.talon_cards[0] if c >= 0]
        if talon and state.phase[0] < engine.DISCARD:
            lines.append(f"talon: {' '.join(talon)}")
        if state.discards[0]:
            lines.append(f"discards: {hand_text(int(state.discards[0]), RANKS)}")
        mode = int(state.mode[0])
        if mode >= 0:
            lines.append(f"mode {action_name(MODE_ACTION_OFFSET + mode)[5:]}, tricks {state.tricks_won[0].tolist()}")
        if self.is_terminal():
            lines.append("game over" if state.phase[0] == engine.OVER else f"search horizon: deal {self._last_deal + 1} ended")
        elif not self._dealing():
            lines.append(f"seat {int(state.to_act[0])} to {engine.DECISIONS[int(state.phase[0])]}")
        return "\n".join(lines)


def _members(bits: int) -> list[int]:
    """The ids of the set bits of `bits`, ascending."""
    members = []
    while bits:
        low = bits & -bits
        members.append(low.bit_length() - 1)
        bits ^= low
    return members


def deal_cards(cards: np.ndarray, dealer: int) -> tuple[np.ndarray, np.ndarray]:
    """(int8[3, 16] hands in dealing order, int8[4] talon) of 52 cards in dealing order
    (-1 for cards not dealt yet): card k < 48 goes to seat `(dealer + 1 + k) % 3` (R10:
    one at a time clockwise from the left of the dealer), the last four to the talon."""
    cards = np.asarray(cards, dtype=np.int8)
    dealt = np.empty((3, 16), dtype=np.int8)
    rounds = cards[:48].reshape(16, 3)
    for k in range(3):
        dealt[(dealer + 1 + k) % 3] = rounds[:, k]
    return dealt, cards[48:].copy()


# ============================================================================ observation

class SergeantMajorObserver:
    """OpenSpiel's observer API over [`observation.observe`][] (module docstring)."""

    def __init__(self) -> None:
        self.tensor = np.zeros(OBSERVATION_SIZE, dtype=np.float32)
        self.dict = {name: self.tensor[segment] for name, segment in SEGMENTS.items()}

    def set_from(self, state: SergeantMajorState, player: int) -> None:
        """The tensor (and its named pieces) of `player`: [`observation.observe`][]."""
        if not state._lot_drawn:
            self.tensor.fill(0.0)
        else:
            self.tensor[:] = observe(state._engine.state, player)[0]

    def string_from(self, state: SergeantMajorState, player: int) -> str:
        """What `player` sees, as text: `render.seat_view` and the deal's tricks."""
        if not state._lot_drawn:
            return "the first dealer is drawn by lot (R4)"
        engine_state = state._engine.state
        lines = []
        if state._dealing():
            lines.append(f"dealing deal {int(engine_state.deal[0]) + 1}: {len(state._deal)} of 52 cards dealt (R10)")
        lines.append(seat_view(engine_state, player, SEAT_NAMES, ranks=RANKS))  # R3's letters: T, not 10
        tricks = tricks_text(engine_state)
        if tricks:
            lines.append(tricks)
        return "\n".join(lines)


def tricks_text(state: engine.State) -> str:
    """This deal's completed tricks (public): `tricks: 1. seat 2 Q♥ 2♥ 3♥ > seat 2; ...`."""
    done = int(state.tricks_won[0].sum()) if state.phase[0] == engine.PLAY else 0
    tricks = []
    for t in range(done):
        leader = int(state.trick_leaders[0, t])
        cards = " ".join(card_text(c, RANKS) for c in state.past_tricks[0, t])
        winner = int(state.trick_leaders[0, t + 1]) if t + 1 < 16 else -1
        tricks.append(f"{t + 1}. seat {leader} {cards}" + (f" > seat {winner}" if winner >= 0 else ""))
    return "tricks: " + "; ".join(tricks) if tricks else ""


# ============================================================================ information state

_LOT, _CARD, _START = -1, -2, -3
"""Event kinds besides the engine's decision phases (0..4): the lot (R4), a card dealt (R10),
the start of a state made from an engine state."""
_PUBLIC = (engine.MODE, engine.PLAY)
"""Decisions whose action every seat sees: the mode is announced (R8, section 5 step 2), cards
are played face up (R12). The others' (discards, exchange cards) only the actor sees; what
else a seat learns of them is in its observation (R22: the receiver's card, the counts)."""
_KEPT_PLANES = 11  # observe_card_sets' planes hand .. exchange_received; the last three are derived
_KEPT_REST = SEGMENTS["winning_seat"].start - CARD_SETS_WIDTH  # the rest's entries before its derived ones
_REST_NAMES = [(name, SEGMENTS[name].start - CARD_SETS_WIDTH) for name in SEGMENTS
               if CARD_SETS_WIDTH <= SEGMENTS[name].start < CARD_SETS_WIDTH + _KEPT_REST]
_PLANE_NAMES = ("hand", "played by you", "played by left", "played by right", "trick 1st", "trick 2nd", "trick 3rd",
                "talon", "discards", "exchange given", "exchange received")
_DEAL_PIECES = (("roles", 9), ("mode", 6), ("hand_arrival", 52), ("talon", 52), ("discards", 52),
                ("played", 156), ("card_trick", 52), ("trick_leaders", 48), ("exchange_steps", 156),
                ("exchange_given", 52), ("exchange_received", 52))
"""The information-state tensor's block of one deal (module docstring, "Information state")."""
DEAL_BLOCK = sum(size for _, size in _DEAL_PIECES)
_DEAL_OFFSETS = dict(zip((name for name, _ in _DEAL_PIECES),
                         np.cumsum([0, *(size for _, size in _DEAL_PIECES[:-1])]).tolist()))
_HAND, _TALON, _GIVEN, _RECEIVED = (SEGMENTS[name].start // NUM_CARDS for name in (
    "hand", "talon", "exchange_given", "exchange_received"))  # their planes in observe_card_sets
_EXCHANGE_DONE = SEGMENTS["exchange_done"].start - CARD_SETS_WIDTH  # its place in the rest
MAX_EXCHANGE_STEPS = 2 * MAX_EXCHANGED  # each exchanged card a give and at most one return (R21)


def information_state_size(num_deals: int) -> int:
    """The length of the information-state tensor: the observation and a block per deal."""
    return OBSERVATION_SIZE + DEAL_BLOCK * num_deals


def _views_of(state: engine.State, lot_drawn: bool) -> tuple[np.ndarray, np.ndarray]:
    """(uint64[3, 11] card planes, float32[3, _KEPT_REST]) of each seat's observation (zeros
    before the lot, as the observation)."""
    if not lot_drawn:
        return np.zeros((NUM_PLAYERS, _KEPT_PLANES), dtype=np.uint64), np.zeros((NUM_PLAYERS, _KEPT_REST), np.float32)
    views = [observe_card_sets(state, seat) for seat in range(NUM_PLAYERS)]
    return (np.concatenate([sets[:, :_KEPT_PLANES] for sets, _ in views]),
            np.concatenate([numbers[:, :_KEPT_REST] for _, numbers in views]))


class _Views:
    """Each seat's record of the game as it saw it: one event per history entry (kind, actor,
    the action if the seat saw it else -1, deal, dealer, the changes of its observation's card
    planes as (plane, added, removed) card sets, and of its other non-derived entries as
    (index, value)). Events are tuples, shared by the clones of a state."""

    def __init__(self, logs, planes, rest, lines=None, folds=None) -> None:
        self.logs, self.planes, self.rest = logs, planes, rest
        self.lines = lines or [[], [], []]  # each seat's events as text, as far as asked (a cache)
        self.folds = folds or [None, None, None]  # each seat's tensor blocks, as far as asked (a cache)
        self.lazy = False  # a clone's copy: recording waits until an information state is asked
        self.resume = None  # (an _Origin where the record stops, the history length there), once lazy

    def __getstate__(self) -> dict:
        """Pickled (`state.serialize()`) without the text and tensor caches, rebuilt when asked."""
        return {**self.__dict__, "lines": None, "folds": None}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.lines, self.folds = state["lines"] or [[], [], []], state["folds"] or [None, None, None]

    def __deepcopy__(self, memo) -> "_Views":
        """A clone's record: the same events, recorded on only if the clone is asked for an
        information state (search bots clone for rollouts that never ask)."""
        if self.lazy and self.resume is not None:  # a clone of a waiting clone waits from the same place
            copy = _Views(self.logs, self.planes, self.rest, self.lines, self.folds)
            copy.lazy, copy.resume = True, self.resume
            return copy
        copy = _Views([list(log) for log in self.logs], self.planes.copy(), self.rest.copy(),
                      [list(lines) for lines in self.lines], [fold and fold.copy() for fold in self.folds])
        copy.lazy = True
        return copy

    @classmethod
    def start(cls, state: SergeantMajorState, start: bool = True, keep=None) -> "_Views":
        """The record of `state` from now on; `start`: it begins with a start event (what
        each seat sees now; a state made from an engine state); `keep`: (player, views) whose
        record of `player` is kept (a resampled state)."""
        views = cls([[], [], []], *_views_of(state._engine.state, state._lot_drawn))
        if start:
            deal, dealer = int(state._engine.state.deal[0]), int(state._engine.state.dealer[0])
            zeros = cls([[], [], []], np.zeros_like(views.planes), np.zeros_like(views.rest))
            for seat in range(NUM_PLAYERS):
                views.logs[seat].append((_START, -1, -1, deal, dealer,
                                         *zeros._changes(seat, views.planes[seat], views.rest[seat])))
        if keep is not None:
            player, old = keep
            views.logs[player], views.lines[player] = list(old.logs[player]), list(old.lines[player])
        return views

    def _changes(self, seat: int, planes: np.ndarray, rest: np.ndarray) -> tuple[tuple, tuple]:
        before, after = self.planes[seat].tolist(), planes.tolist()
        plane_changes = tuple((p, a & ~b, b & ~a) for p, (b, a) in enumerate(zip(before, after)) if a != b)
        changed = (self.rest[seat] != rest).nonzero()[0]
        rest_changes = tuple(zip(changed.tolist(), rest[changed].tolist())) if changed.size else ()
        return plane_changes, rest_changes

    def record(self, state: engine.State, kind: int, actor: int, action: int, deal: int, dealer: int) -> None:
        """Add the event of an action just applied to every seat's record."""
        planes, rest = _views_of(state, True)
        for seat in range(NUM_PLAYERS):
            seen = action if kind in (_LOT, *_PUBLIC) or seat == actor else -1
            self.logs[seat].append((kind, actor, seen, deal, dealer, *self._changes(seat, planes[seat], rest[seat])))
        self.planes, self.rest = planes, rest


class _Origin:
    """The start of a state made from an engine state (`state_from_engine`, a resampled
    state): a frozen copy from which its history is replayed (shared by its clones)."""

    def __init__(self, state: SergeantMajorState, views: "_Views | None" = None) -> None:
        views = views if views is not None else state._views
        if views is not None:  # a frozen copy
            views = _Views([list(log) for log in views.logs], views.planes.copy(), views.rest.copy())
        self._frozen = (state._engine.state.copy(), list(state._deal), state._dealt, state._last_deal,
                        list(state._rewards), views, state._lot_drawn)
        self._game = state.get_game()

    def __deepcopy__(self, memo) -> "_Origin":
        return self

    def state(self) -> SergeantMajorState:
        """A new state at the origin, recording each seat's views from a start event."""
        engine_state, deal, dealt, last_deal, rewards, views, lot_drawn = self._frozen
        new = SergeantMajorState(self._game)
        new._engine = _Engine(engine_state.copy())
        new._lot_drawn, new._deal, new._dealt, new._last_deal, new._rewards = lot_drawn, list(deal), dealt, \
            last_deal, list(rewards)
        if views is None:
            new._views = _Views.start(new)
        else:
            new._views = _Views([list(log) for log in views.logs], views.planes.copy(), views.rest.copy(),
                                [list(lines) for lines in views.lines])
        return new


def _checked_player(player: Any, where: str) -> int:
    """`player` as a seat 0, 1, 2 (one SpielError line otherwise)."""
    if isinstance(player, (bool, np.bool_)) or not isinstance(player, (int, np.integer)) or not 0 <= player < NUM_PLAYERS:
        raise pyspiel.SpielError(f"{where}: player must be a seat 0, 1 or 2, got {shorten(player)}")
    return int(player)


def _seed_from(sampler: Any) -> int:
    """A seed from one draw of OpenSpiel's probability sampler (a float in [0, 1))."""
    if not callable(sampler):
        raise pyspiel.SpielError(f"resample_from_infostate: probability_sampler must be callable (OpenSpiel's "
                                 f"UniformProbabilitySampler), got {type(sampler).__name__}")
    draw = sampler()
    if isinstance(draw, (bool, np.bool_)) or not isinstance(draw, numbers.Real) or not (
            math.isfinite(draw) and 0 <= draw < 1):
        raise pyspiel.SpielError(f"resample_from_infostate: probability_sampler() must return a number in [0, 1), "
                                 f"got {shorten(draw)}")
    return int(float(draw) * 2**53)


def information_state_string(views: _Views, player: int) -> str:
    """The text of `player`'s record: one line per event, what it saw."""
    lines = views.lines[player]
    for n in range(len(lines), len(views.logs[player])):
        lines.append(_event_text(n + 1, player, *views.logs[player][n]))
    return "\n".join([f"seat {player}'s information state (perfect recall)", *lines])


def _event_text(n: int, player: int, kind: int, actor: int, action: int, deal: int, dealer: int,
                planes: tuple, rest: tuple) -> str:
    """Event `n` of `player`'s record as one line."""
    if kind == _START:
        what = f"deal {deal + 1}: from here (earlier history not recorded), seeing"
    elif kind == _LOT:
        what = f"chance: first dealer seat {action} (R4)"
    elif kind == _CARD:
        what = f"chance: a card of deal {deal + 1} dealt"
    else:
        who = "you" if actor == player else f"seat {actor}"
        seen = "" if action < 0 else f" {card_name(action) if action < NUM_CARDS else action_name(action)[5:]}"
        what = f"{who}: {engine.DECISIONS[kind]}{seen}"
    changes = [_PLANE_NAMES[p] + "".join(f" {sign}{card_name(c)}" for sign, cards in (("+", add), ("-", out))
                                         for c in _members(cards)) for p, add, out in planes]
    changes += [_rest_text(i, value) for i, value in rest]
    return f"{n}. {what}" + (" | " + "; ".join(changes) if changes else "")


def _rest_text(index: int, value: float) -> str:
    """`name[k]=value` of an entry of the observation after its card planes, in natural units."""
    name, start = max((item for item in _REST_NAMES if item[1] <= index), key=lambda item: item[1])
    return f"{name}[{index - start}]={round(value * SCALES[name], 3):g}"


class _Fold:
    """A seat's per-deal tensor blocks (`_DEAL_PIECES`) read from the first `done`
    events of its record, and the counts they need (per deal: events that brought cards into
    the hand, own discards, plays, exchange steps)."""

    def __init__(self, num_deals: int) -> None:
        self.done = 0
        self.blocks = np.zeros((num_deals, DEAL_BLOCK), dtype=np.float32)
        self.counts = np.zeros((num_deals, 4), dtype=np.int64)

    def copy(self) -> "_Fold":
        new = _Fold.__new__(_Fold)
        new.done, new.blocks, new.counts = self.done, self.blocks.copy(), self.counts.copy()
        return new

    def read(self, log: list, player: int) -> None:
        """Add the events of `log` after the first `done`."""
        o, done = _DEAL_OFFSETS, _EXCHANGE_DONE
        for kind, actor, action, deal, dealer, planes, rest in log[self.done:]:
            if kind in (_LOT, _START) or deal >= len(self.blocks):
                continue
            block, count = self.blocks[deal], self.counts[deal]
            for seat in range(NUM_PLAYERS):
                block[o["roles"] + 3 * ((seat - player) % 3) + (seat - dealer) % 3] = 1.0
            if kind == engine.MODE:
                block[o["mode"] + action - MODE_ACTION_OFFSET] = 1.0
            elif kind == engine.PLAY:
                relative, trick = (actor - player) % 3, count[2] // 3
                block[o["played"] + 52 * relative + action] = 1.0
                block[o["card_trick"] + action] = (trick + 1) / 16
                if count[2] % 3 == 0:
                    block[o["trick_leaders"] + 3 * trick + relative] = 1.0
                count[2] += 1
            elif kind == engine.DISCARD and action >= 0:
                count[1] += 1
                block[o["discards"] + action] = count[1] / 4
            exchanged = False
            for p, added, _ in planes:
                if not added or p not in (_HAND, _TALON, _GIVEN, _RECEIVED):
                    continue
                cards = np.array(_members(added), dtype=np.intp)
                if p == _HAND:
                    count[0] += 1
                    block[o["hand_arrival"] + cards] = count[0] / 32
                elif p == _TALON:
                    block[o["talon"] + cards] = 1.0
                else:
                    block[o["exchange_given" if p == _GIVEN else "exchange_received"] + cards] = \
                        (count[3] + 1) / MAX_EXCHANGE_STEPS
                    exchanged = True
            for i, _ in rest:
                if done <= i < done + 6 and count[3] < MAX_EXCHANGE_STEPS:
                    block[o["exchange_steps"] + 6 * count[3] + i - done] = 1.0
                    exchanged = True
            if exchanged:
                count[3] += 1
        self.done = len(log)


def fill_information_state_tensor(views: _Views, player: int, observation: np.ndarray, out: np.ndarray) -> None:
    """`out` = the observation and, for each deal, the block of `_DEAL_PIECES` filled
    from `player`'s record (module docstring, "Information state"); read incrementally."""
    num_deals = (out.size - OBSERVATION_SIZE) // DEAL_BLOCK
    fold = views.folds[player]
    if fold is None or len(fold.blocks) != num_deals:
        fold = views.folds[player] = _Fold(num_deals)
    fold.read(views.logs[player], player)
    out[:OBSERVATION_SIZE] = observation
    out[OBSERVATION_SIZE:] = fold.blocks.reshape(-1)


class InformationStateObserver:
    """OpenSpiel's observer API for perfect recall (module docstring, "Information state")."""

    def __init__(self, num_deals: int) -> None:
        self.tensor = np.zeros(information_state_size(num_deals), dtype=np.float32)
        self.dict = {"observation": self.tensor[:OBSERVATION_SIZE],
                     "deals": self.tensor[OBSERVATION_SIZE:].reshape(num_deals, DEAL_BLOCK)}
        self._observation = SergeantMajorObserver()

    def set_from(self, state: SergeantMajorState, player: int) -> None:
        player = _checked_player(player, "information_state_tensor")
        self._observation.set_from(state, player)
        fill_information_state_tensor(state._information(), player, self._observation.tensor, self.tensor)

    def string_from(self, state: SergeantMajorState, player: int) -> str:
        return information_state_string(state._information(), _checked_player(player, "information_state_string"))



pyspiel.register_game(GAME_TYPE, SergeantMajorGame)
