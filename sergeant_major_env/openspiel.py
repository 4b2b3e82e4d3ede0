"""3-5-8 inside OpenSpiel: the game `python_sergeant_major`, driving this package's engine.

Importing this module registers the game with OpenSpiel (`pip install
"sergeant-major-env[openspiel]"`, Python 3.11 and later):

```python
import pyspiel
import sergeant_major_env.openspiel  # registers python_sergeant_major
game = pyspiel.load_game("python_sergeant_major(num_deals=2)")
```

The game has no rule of its own: it takes the one-game path of the AEC env
([`one_game.OneGame`][]): every decision is one compiled call of the engine's rules (the
action checked against the decision's legal bits, applied, the next decision's legal actions
computed), observations are [`observation.observe`][]'s numbers written by the same kernels,
text views are `render`'s, records are [`records.Recorder`][]'s. What OpenSpiel adds is the
deal as chance nodes:

* **Parameters** are the rule options of RULES.md section 9 ([`rules.Rules`][]), same
  names and defaults: `num_deals` (18), `exchanges` (true), `must_overtake`,
  `must_overtrump`, `dealer_builds_talon` (false); and `reward`, the envs' option of
  the same name ([`options`][], [`options.REWARDS`][]): `points` (the default),
  `score` or `rank` (see Rewards).
* **Chance nodes.** The first chance node draws the first dealer by lot (R4): outcomes
  0, 1, 2 (the seat), probability 1/3 each. Then each deal's 52 cards are dealt one chance
  node at a time, uniformly over the cards not dealt yet (outcome = card id, R3), as the
  engine deals (R10): cards 1..48 go one at a time clockwise starting left of the dealer,
  so card k (0-based) goes to seat `(dealer + 1 + k) % 3` as its card `k // 3` in dealing
  order, and cards 49..52 form the talon. With `dealer_builds_talon` (R11) the engine
  takes the dealer's placement of the talon as a random choice, which leaves every card
  uniformly placed as above, so the chance nodes are the same; the option is passed to the
  engine with the others. The cards dealt so far are kept in the state and given to the
  engine ([`OneGame.deal`][]: [`engine.set_cards`][]' start of a deal, the record replayer's
  entry point) when it is read (an observation, a text, an information state being recorded)
  and once the 52 are dealt, when the playmaker decides.
* **Players' actions** are the action ids of RULES.md section 10 (58 distinct actions).
  Forced returns (R21) are applied by the engine, never asked.
* **Rewards**: with `reward=points` (the default) the reward model is `REWARDS`:
  `SergeantMajorState.rewards` gives each deal's points (R23, R24) after the
  decision that ends the deal (through the chance nodes of the next deal's cards, up to the
  next decision), 0 elsewhere; `returns()` is the running total (the scores, R25). With
  `reward=score` or `reward=rank` the reward model is `TERMINAL` (what OpenSpiel's
  MCTS requires): rewards and returns are 0 until the game ends, then each seat's total
  (`score`) or +1 / 0 / -1 by place, ties sharing (`rank`, R6,
  [`options.rank_rewards`][]). The points of a deal sum to 0 (R25), so the game is
  declared `ZERO_SUM` (utility sum 0); utilities are bounded by +-13 points a deal (a
  seat makes at most 16 tricks: 16 - 3 as dealer; 3 - 16 as playmaker in MIN), +-1 with
  `rank`.
* **Game length**: OpenSpiel's `max_game_length` counts decisions, not chance outcomes:
  per deal 1 mode choice, 4 discards, 48 plays, and after the first deal at most 13
  exchanged cards (a giver's points, R19, are at most 13), each a give and at most one free
  return (R21): `53 * num_deals + 26 * (num_deals - 1)`. The chance nodes (`1 + 52 *
  num_deals`) are within `max_chance_nodes_in_history`, which OpenSpiel sets equal to
  `max_game_length` for Python games.
* **Observations** (OpenSpiel's observer API, `SergeantMajorGame.make_py_observer`):
  the tensor is [`observation.observe`][]'s of the player (`OBSERVATION_SIZE` floats),
  written by the one-game kernel ([`OneGame.observe`][]) into the observer's buffer, its
  named pieces are `observation.SEGMENTS`; the string is `render.seat_view` of
  the player plus the deal's tricks so far. Before the lot is drawn the tensor is zeros;
  while a deal is being dealt it shows the cards dealt so far (the playmaker: of its first
  six only, R9). The observation is the seat's knowledge of the current deal; it does not
  recall earlier deals, nor the order of what it saw (its own discards, its cards as dealt).
* **Information state** (perfect recall: `make_py_observer` with
  `perfect_recall=True`; `information_state_string` / `information_state_tensor`):
  each seat's record of the game as it saw it, one event per history entry: the event's
  kind (the lot, a card dealt, a decision of some seat), the action if the seat saw it (its
  own; the lot; modes and plays, which are public: R8, R12; not another seat's discard or
  exchange card), and what changed in its observation (its card planes as cards added and
  removed, its other non-derived entries as new values). So it holds the seat's cards as
  dealt, in order (the playmaker's last ten only after its mode choice, R9), its own
  actions, the public actions, what an exchange shows the pair (R22) and the counts it
  shows the third seat, and never a card the seat has not seen: the observation is the one
  source of what a seat sees. The string is that record, one line an event. The tensor
  (`information_state_size`: `OBSERVATION_SIZE + 687 * num_deals` floats, named
  `observation` and `deals`) is the current observation and, per deal, a block read
  from the record (`_DEAL_PIECES`): the roles (9), mode (6), own cards by order of
  arrival (52: the k-th event that brought cards into the hand gives them k / 32), talon
  (52), own discards in order (52), who played each card (156), in which trick (52), who led
  each trick (48), which pairs handed a card at each exchange step (26 x 6), and the step
  of each card the seat gave or received (52 + 52). The record is kept per event, one
  compiled call each ([`one_game.Recall`][]: each seat's observation after the event, compared
  with the one before, folded into the deal's block), from the first time an information
  state is asked (the history is replayed then), so play that never asks pays nothing; the
  events as text (what the string shows) are kept from the first time a string is asked (the
  history replayed again). A clone records only once asked: from where it was made. A
  state made from an engine state (`SergeantMajorGame.state_from_engine`) has no history:
  its record starts with what each seat sees then.
* **Resampling** (`resample_from_infostate(player_id, probability_sampler)`, for IS-MCTS):
  a state with the same information state for `player_id`, the seat to act at a
  decision, and everything it has not seen redrawn uniformly among the deals consistent
  with what it saw ([`worlds.sample_worlds`][], seeded by one draw of the sampler). The
  new state has no history; `player_id`'s record is kept, the other seats' start with
  what they see in the new state. Bad players, a chance node or finished state, another
  seat than the one to act, and a sampler that is not callable or does not return a number
  in [0, 1) are one `SpielError` line each, this state unchanged.
* **C++ search bots.** pyspiel's `MCTSBot` and `ISMCTSBot` crash the interpreter
  (signal 11) on Python games (OpenSpiel's own `python_tic_tac_toe` and
  `python_kuhn_poker` too, open_spiel 2.0.x), so importing this module makes them refuse
  this game in one `SpielError` line instead: `MCTSBot` when built, both at `step` and
  `step_with_policy`, and `pyspiel.evaluate_bots` when handed either with a state of
  this game (its C++ loop calls the bots without Python). The guards are patched into
  pyspiel's own classes, so `from pyspiel import MCTSBot` before this import is guarded
  too; only `from pyspiel import evaluate_bots` before it keeps the unguarded function.
  The Python bots (`open_spiel.python.algorithms.mcts`, `ismcts`) run on it.
* **Refusals.** Every action that is not in `legal_actions()` (at a chance node: not an
  outcome of `chance_outcomes()`), and any action on a terminal state, raises
  `IllegalActionError`, one line naming the action and what is allowed, and leaves
  the state as it was (history, player to act, engine state). It is both pyspiel's
  `SpielError` (what OpenSpiel's C++ games raise) and this package's
  [`engine.IllegalActionError`][] (a `ValueError`). The checks are in
  `_apply_action`, the one way in of every action (`apply_action`, OpenSpiel's C++ tools,
  `deserialize_state`): bit tests, a decision's in the one-game kernel, which refuses an
  action changing nothing, with the engine's words (`_check`, the same tests, takes the ids
  that are never legal before pyspiel sees them). A player id that is not a seat in `information_state_string` /
  `information_state_tensor` is one `SpielError` line. Bad parameters are one
  `ValueError` line ([`rules.Rules`][], `options.check_reward`); pyspiel checks
  their types and names itself. Two things the game cannot see, as it is handed the
  parameters parsed and converted: a parameter named twice in a game string (pyspiel keeps
  the last), and an integer beyond C++ `int` (such as `2**63`: pybind11's "Unable to
  cast" error). Importing this module wraps `pyspiel.load_game` to check both for this game
  first (`check_load_game`), as one `ValueError` line; a `load_game` imported from
  pyspiel before this module, and C++ callers, go without that check.
* **Speed.** A decision is one compiled call, a card dealt by chance is a few Python
  operations (no engine call until the deal is complete or read), and the methods a Python
  caller asks at every step (`is_chance_node`, `legal_actions`, `chance_outcomes`,
  `observation_tensor`, `information_state_tensor`) are answered in Python without
  pyspiel's round trips through C++ (which ask `current_player` several times, and for a
  tensor make a new initial state to size the buffer, then convert every float). The
  tensors are handed out as lists kept from one ask to the next, only the entries that
  changed converted ([`one_game.TensorList`][]). A clone (OpenSpiel deep-copies a state's
  attributes) copies the engine game, the deal and, for a record, its current deal's block
  and the seats' observations; the rest is shared. C++ callers (OpenSpiel's own tools) take
  pyspiel's paths, which reach the same code through `_apply_action`, `_legal_actions` and
  the observers. `benchmarks/openspiel_speed.py` measures it against OpenSpiel's C++ `skat`.
* `game_record(state)` is the RULES.md section 11 record of a finished state, replayed
  from its history through a [`records.Recorder`][]; `records check` accepts it.

Serialisation. `state.serialize()` / `game.deserialize_state(text)` are OpenSpiel's
for Python games: the history plus the state's attributes *pickled*, which OpenSpiel's own
tests (`random_sim_test(serialize=True)`) use. Unpickling can run code, so for text from
elsewhere use `deserialize_state`, which reads the history line only and replays it.
"""

from __future__ import annotations

import copy
import math
import numbers
import operator
from typing import Any, Sequence

import numpy as np
import pyspiel

from . import engine
from .cards import MODE_ACTION_OFFSET, NUM_ACTIONS, NUM_CARDS, RANKS, action_name, card_name
from .observation import CARD_SETS_WIDTH, OBSERVATION_SIZE, SCALES, SEGMENTS
from .one_game import MAX_EXCHANGE_STEPS, MAX_EXCHANGED  # noqa: F401  (this module's constants before issue 52)
from .one_game import (CARD, KEPT_REST, LOT, RECALL_BLOCK, RECALL_OFFSETS, RECALL_PIECES, START, OneGame, Recall,
                       StepResult, TensorList, announce_compiling_views)
from .options import DEFAULT_REWARD, check_reward, rank_rewards
from .limits import shorten
from .records import Recorder
from .render import card_text, hand_text, seat_view
from .rules import Rules
from .worlds import sample_worlds

SHORT_NAME = "python_sergeant_major"
NUM_PLAYERS = 3
POINTS_BOUND = 13
"""The most points a seat can win or lose in one deal (R23, R24): 16 - 3 or 3 - 16."""
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
    long_name="Python 3-5-8 (Sergeant Major)",
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
        self._template = OneGame(engine.init(np.zeros(1, dtype=np.uint64), self.rules), observing=False)
        announce_compiling_views()

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
        return self._state_at(state.take(_ONE), self.rules.num_deals - 1 if last_deal is None else int(last_deal),
                              _NO_REWARDS)

    def _state_at(self, world: engine.State, last_deal: int, rewards: tuple) -> "SergeantMajorState":
        """A state at the decision of `world` (a batch of one, kept), its deal dealt (the
        order unknown), with no history: its information states start here (`_Origin`)."""
        new = SergeantMajorState(self)
        new._t = _Table.at(OneGame(world, observing=False), last_deal, rewards, self.reward)
        new._t.origin = _Origin(new)
        return new


class _Table:
    """The game of a state (module docstring, "Speed"): the engine game as a
    [`one_game.OneGame`][] (one compiled call a decision), the current deal as chance dealt
    it so far, and who acts. OpenSpiel clones a state by deep-copying its attributes: this
    copies the engine game and the deal, and shares the rest.

    A new game's engine game is the game's template, copied at the first change (`own`):
    OpenSpiel makes a new initial state for every clone and every C++ `observation_tensor`
    call (to size its buffers), which never look inside it. The cards chance deals reach the
    engine when it is read or the deal is complete (`install`), not one call a card."""

    __slots__ = ("one", "ids", "shared", "lot", "deck", "count", "dealt", "left", "installed", "player",
                 "legal_count", "rewards", "last_deal", "reward", "origin", "observed")

    @classmethod
    def fresh(cls, game: SergeantMajorGame) -> "_Table":
        """The start of a game: the lot is drawn next (R4)."""
        t = cls.__new__(cls)
        t.use(game._template)
        t.shared, t.lot, t.deck, t.count, t.dealt, t.left, t.installed = True, False, None, 0, 0, None, True
        t.player, t.legal_count, t.rewards, t.last_deal, t.reward, t.origin, t.observed = \
            _CHANCE, 0, _NO_REWARDS, game.rules.num_deals - 1, game.reward, None, None
        return t

    @classmethod
    def at(cls, one: OneGame, last_deal: int, rewards: tuple, reward: str) -> "_Table":
        """At the decision of `one`, its deal dealt (the order unknown: -1 each)."""
        t = cls.__new__(cls)
        t.use(one)
        t.shared, t.lot, t.deck, t.count, t.dealt, t.left, t.installed = \
            False, True, np.full(NUM_CARDS, -1, dtype=np.int8), NUM_CARDS, ALL_CARDS, [], True
        t.last_deal, t.rewards, t.reward, t.origin, t.observed = last_deal, tuple(rewards), reward, None, None
        state = one.state
        t.decision(one.refresh())
        if state.phase.item(0) == engine.OVER or state.deal.item(0) > last_deal:
            t.player = _TERMINAL
        return t

    def __deepcopy__(self, memo) -> "_Table":
        new = _Table.__new__(_Table)
        new.use(self.one if self.shared else self.one.copy())
        new.deck = None if self.deck is None else self.deck.copy()
        new.left = None if self.left is None else list(self.left)
        new.shared, new.lot, new.count, new.dealt, new.installed, new.player, new.legal_count, new.rewards, \
            new.last_deal, new.reward, new.origin = self.shared, self.lot, self.count, self.dealt, self.installed, \
            self.player, self.legal_count, self.rewards, self.last_deal, self.reward, self.origin
        new.observed = None  # (a cache)
        return new

    def __getstate__(self) -> dict:
        """Pickled (`state.serialize()`) without the observations' cache."""
        return {name: getattr(self, name) for name in self.__slots__ if name not in ("observed", "shared", "ids")}

    def __setstate__(self, saved: dict) -> None:
        for name, value in saved.items():
            setattr(self, name, value)
        self.shared, self.observed = False, None
        self.use(self.one)
        self.player = {-1: _CHANCE, -4: _TERMINAL}.get(int(self.player), int(self.player))

    def use(self, one: OneGame) -> None:
        """Play `one`; `ids`: its legal actions' ids, read as a memoryview (faster than numpy's)."""
        self.one, self.ids = one, memoryview(one.legal_ids)

    def own(self) -> None:
        """Copy the game's template before the first change."""
        if self.shared:
            self.use(self.one.copy())
            self.shared = False

    def install(self) -> StepResult:
        """Give the engine the cards of the current deal dealt so far (R10); the decision's result."""
        self.installed = True
        return self.one.deal_checked(self.deck)

    @property
    def state(self) -> engine.State:
        """The engine game, with the cards dealt so far."""
        if not self.installed:
            self.install()
        return self.one.state

    def decision(self, result: StepResult) -> None:
        """The player to act and the number of legal actions of a step's result."""
        self.player, self.legal_count = result.to_act, result.legal_count

    def legal(self) -> int:
        """The legal actions of the decision as bits."""
        return self.one.legal.item(0)

    def legal_actions(self) -> list[int]:
        """The legal actions of the decision, ascending."""
        return self.ids[:self.legal_count].tolist()

    def observe(self, player: int, out: np.ndarray) -> np.ndarray:
        """The observation of `player` into `out`: zeros before the lot (R4)."""
        if not self.lot:
            out.fill(0.0)
            return out
        if not self.installed:
            self.install()
        return self.one.observe(player, out)

    def observation_list(self, player: int) -> list[float]:
        """The observation of `player` as a new list (OpenSpiel's `observation_tensor`)."""
        observed = self.observations()
        if self.lot:
            observed[player].patch(0, self.observe(player, observed[NUM_PLAYERS]))
        return observed[player].list()

    def observations(self) -> list:
        """The seats' observations as lists ([`one_game.TensorList`][]) and room for one
        observation (a cache, not copied with the table)."""
        if self.observed is None:
            self.observed = [*(TensorList(OBSERVATION_SIZE, OBSERVATION_SIZE) for _ in range(NUM_PLAYERS)),
                             np.zeros(OBSERVATION_SIZE, dtype=np.float32)]
        return self.observed


class SergeantMajorState(pyspiel.State):
    """A game in progress: a chance node (the lot, R4, or a card being dealt, R10) or a
    decision of the engine's seat to act."""

    def __init__(self, game: SergeantMajorGame) -> None:
        super().__init__(game)
        self._t = _Table.fresh(game)  # the game (module docstring, "Speed")
        self._rec: _Record | None = None  # what each seat has seen, once an information state is asked

    # ------------------------------------------------------------------ OpenSpiel API

    @property
    def engine_state(self) -> engine.State:
        """The engine game (a batch of one) this state drives; it holds every hidden card."""
        return self._t.state

    @property
    def _deal(self) -> list[int]:
        """The chance outcomes of the current deal: cards in dealing order (-1: not known)."""
        t = self._t
        return [] if t.deck is None else t.deck[:t.count].tolist()

    @property
    def _last_deal(self) -> int:
        """The game's last deal, 0-based (a search horizon's, `state_from_engine`)."""
        return self._t.last_deal

    def current_player(self) -> int:
        return self._t.player

    def is_terminal(self) -> bool:
        return self._t.player is _TERMINAL

    def is_chance_node(self) -> bool:
        """OpenSpiel's, answered here (pyspiel's asks `current_player` through C++)."""
        return self._t.player is _CHANCE

    def legal_actions(self, player: Any = None) -> list[int]:
        """OpenSpiel's, answered here for the player to act (pyspiel's asks `current_player`
        three times through C++ first); other players as pyspiel answers them."""
        t = self._t
        current = t.player
        if player is not None and player != current:
            return super().legal_actions(player)
        if current is _CHANCE:
            return list(t.left) if t.lot else [0, 1, 2]
        if current is _TERMINAL:
            return []
        return t.ids[:t.legal_count].tolist()  # (_Table.legal_actions, inline: asked at every decision)

    def _legal_actions(self, player: int) -> list[int]:
        return self._t.legal_actions()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The lot (R4): each seat 1/3; a card (R10): each card not dealt yet, uniformly."""
        t = self._t
        if not t.lot:
            return list(_LOT_OUTCOMES)
        left = t.left
        return list(zip(left, _UNIFORM[len(left)]))

    def apply_action(self, action: int) -> None:
        """OpenSpiel's `apply_action`; an action id that is never legal (outside 0..57: -1 is
        OpenSpiel's invalid action, which pyspiel would refuse with its C++ check's text, and
        ids beyond 64 bits, which pybind would refuse as a bad argument) gets the game's one
        line (`_check`) first. Everything else is checked in `_apply_action`."""
        if type(action) is not int or not 0 <= action < NUM_ACTIONS:
            try:
                action = operator.index(action)
            except TypeError:
                raise TypeError(f"an action is an integer id, got {action!r}") from None
            if not 0 <= action < NUM_ACTIONS:
                self._check(action)
        _APPLY_ACTION(self, action)

    def _check(self, action: int) -> None:
        """Raise `IllegalActionError` (one line, nothing changed) unless `action` is legal
        here: the lot's seats (R4), a card not dealt yet (R10), a decision's legal bit (the
        engine's), nothing once the game is over."""
        t = self._t
        if t.player is _TERMINAL:
            raise self._refusal(action)
        if t.player is _CHANCE:
            if (not 0 <= action < NUM_PLAYERS) if not t.lot else (not 0 <= action < NUM_CARDS or t.dealt >> action & 1):
                raise self._refusal(action)
        elif not (0 <= action < NUM_ACTIONS and t.legal() >> action & 1):
            raise self._refusal(action)

    def _refusal(self, action: int) -> IllegalActionError:
        """The refusal of `action` here (one line naming it and what is allowed, R4, R10, the
        engine's reason for a decision)."""
        t = self._t
        if t.player is _TERMINAL:
            return IllegalActionError(f"{self._ended()}: no action is legal, got action {action}.{_UNCHANGED}")
        if not t.lot:
            return IllegalActionError(f"R4: the first dealer is drawn by lot, outcomes 0, 1, 2 (a seat), "
                                      f"got {action}.{_UNCHANGED}")
        if t.player is _CHANCE:
            why = "was dealt already" if 0 <= action < NUM_CARDS else "is not a card id (0..51)"
            return IllegalActionError(f"R10: chance deals one of the {NUM_CARDS - t.count} cards not "
                                      f"dealt yet (chance_outcomes()); card {action} {why}.{_UNCHANGED}")
        # the engine's own refusal text (rule id, reason, the legal actions), as engine.step words it
        return IllegalActionError(engine.illegal_action_message(t.one.state, 0, action, 1))

    def _ended(self) -> str:
        """Why the state is terminal: the game's last deal, or the search horizon, ended."""
        if self._t.one.state.phase.item(0) == engine.OVER:
            return "the game is over"
        return f"the search horizon (deal {self._t.last_deal + 1}) has ended"

    def _apply_action(self, action: int) -> None:
        """The one way in of every action (module docstring, "Refusals"): a card dealt (R10),
        the lot (R4) or a decision (one compiled call, [`OneGame.step`][sergeant_major_env.one_game.OneGame.step])."""
        t, rec = self._t, self._rec
        if rec is not None and rec.paused:  # a clone's record: replayed from here if ever asked
            if rec.resume is None:
                rec.resume = (copy.deepcopy(t), len(self.history()))
            rec = None
        player = t.player
        if player is _CHANCE and t.lot:  # a card: kept here, given to the engine when read or complete
            if not 0 <= action < NUM_CARDS or t.dealt >> action & 1:
                raise self._refusal(action)
            if rec is not None:
                state = t.one.state
                deal, dealer = state.deal.item(0), state.dealer.item(0)
            t.deck[t.count] = action
            t.count += 1
            t.dealt |= 1 << action
            t.left.remove(action)
            if t.count == NUM_CARDS:  # the deal is dealt: the playmaker decides
                result = t.install()
                t.player, t.legal_count = result.to_act, result.legal_count  # (_Table.decision, inline)
                self._deal_installed()
            elif rec is not None:
                t.install()
            else:
                t.installed = False
            if rec is not None:
                rec.event(t.one, CARD, -1, action, deal, dealer)
        elif player is _CHANCE:
            self._draw_lot(action, rec)
        elif player is _TERMINAL:
            raise self._refusal(action)
        else:
            if rec is not None:
                state = t.one.state
                kind, deal, dealer = state.phase.item(0), state.deal.item(0), state.dealer.item(0)
            try:  # one compiled call; a refusal is the engine's line (rule, reason, legal actions), nothing changed
                result = t.one.step(action) if self._step_engine is None else self._step_engine(action)
            except engine.IllegalActionError as error:
                raise IllegalActionError(str(error)) from None
            if result.deal_ended:  # the chance nodes after it keep its rewards (OpenSpiel sums them per decision)
                self._end_deal(result)
            else:
                t.rewards = _NO_REWARDS
                t.player, t.legal_count = result.to_act, result.legal_count  # (_Table.decision, inline)
            if rec is not None:
                rec.event(t.one, kind, player, action, deal, dealer)

    def _draw_lot(self, action: int, rec: "_Record | None") -> None:
        if not 0 <= action < NUM_PLAYERS:
            raise self._refusal(action)
        t = self._t
        t.own()
        state = t.one.state
        state.first_dealer[0] = state.dealer[0] = action  # R4, as the record replayer sets it
        t.lot, t.deck, t.count, t.dealt, t.left = True, np.full(NUM_CARDS, -1, dtype=np.int8), 0, 0, list(_CARDS)
        t.install()
        if rec is not None:
            rec.event(t.one, LOT, -1, action, 0, action)

    def _end_deal(self, result: StepResult) -> None:
        t = self._t
        state = t.one.state
        t.rewards = tuple(map(float, result.points))
        if result.game_over or state.deal.item(0) > t.last_deal:
            t.player = _TERMINAL
        else:  # the next deal is dealt by chance nodes, not the engine's seed
            t.deck.fill(-1)
            t.count, t.dealt, t.left = 0, 0, list(_CARDS)
            t.install()
            t.player = _CHANCE

    _step_engine = None
    """A subclass's way of applying a decision to the engine instead of the one-game kernel (a
    method taking the action, returning the [`StepResult`][sergeant_major_env.one_game.StepResult] of
    `OneGame.step`; `_RecordedState`'s records)."""

    def _deal_installed(self) -> None:
        """Called once all the cards of a deal are in the engine (a hook for records)."""

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            t = self._t
            if not t.lot:
                return f"first dealer seat {action}"
            if t.count >= 48:
                return f"deal {card_name(action)} to the talon"
            seat = (t.one.state.dealer.item(0) + 1 + t.count) % 3
            return f"deal {card_name(action)} to seat {seat}"
        return action_name(action)

    def returns(self) -> list[float]:
        """Each seat's points so far (R25): its total once the game is over. With a terminal
        `reward` (module docstring, "Rewards"): zeros until the end, then the total
        (`score`) or +1 / 0 / -1 by place (`rank`, R6)."""
        t = self._t
        scores = [float(s) for s in t.one.state.scores[0].tolist()]
        if t.reward == "points":
            return scores
        if t.player is not _TERMINAL:
            return [0.0] * NUM_PLAYERS
        return scores if t.reward == "score" else rank_rewards(scores).tolist()

    def rewards(self) -> list[float]:
        """The points of the deal the last decision ended (R23, R24), else zeros; the chance
        nodes that deal the next deal keep them, since OpenSpiel reads rewards at decisions.
        With a terminal `reward`: zeros until the end, then `returns`."""
        if self._t.reward != "points":
            return self.returns()
        return list(self._t.rewards)

    def observation_tensor(self, player: Any = None) -> list[float]:
        """OpenSpiel's, answered here for a seat (pyspiel's makes a new initial state to size
        its buffer, then converts 919 floats); anything else as pyspiel answers it."""
        if player is None:
            player = self._t.player
            if type(player) is not int:
                return super().observation_tensor()
        elif type(player) is not int or not 0 <= player < NUM_PLAYERS:
            return super().observation_tensor(player)
        return self._t.observation_list(player)

    # ------------------------------------------------------------------ information state

    def _record(self, strings: bool) -> "_Record":
        """What each seat has seen (`_Record`), with each seat's events as text if `strings`,
        recorded from now on: the first time, replayed from the history (from the lot, or from
        the `_Origin` of a state made from an engine state); a clone's, replayed from where
        the clone was made."""
        rec = self._rec
        if rec is not None and (rec.strings or not strings):
            if not rec.paused:
                return rec
            if rec.resume is None:  # a clone, no action since
                rec.paused = False
                return rec
            table, start = rec.resume
            replay = SergeantMajorState(self.get_game())
            replay._t, replay._rec = copy.deepcopy(table), rec
            rec.paused, rec.resume = False, None
        else:
            start = 0
            origin = self._t.origin
            if origin is not None:
                replay = origin.state(strings)
            else:
                replay = SergeantMajorState(self.get_game())
                replay._rec = _Record(self.get_game().rules.num_deals, strings)
        for action in self.history()[start:]:
            replay._apply_action(action)
        self._rec = replay._rec
        return self._rec

    def information_state_string(self, player: Any = None) -> str:
        """OpenSpiel's, with a player that is not a seat refused in one `SpielError` line
        (pyspiel's own check spans two lines); `None`: the player to act."""
        player = self._player(player, "information_state_string")
        return information_state_string(self._record(True), player)

    def information_state_tensor(self, player: Any = None) -> list[float]:
        """OpenSpiel's, with the player checked as in `information_state_string`; answered
        here (pyspiel's makes a new initial state to size its buffer, then converts every float)."""
        player = self._player(player, "information_state_tensor")
        return self._record(False).tensor_list(self._t, player)

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
        t = self._t
        if t.player is _TERMINAL or t.player is _CHANCE:
            raise pyspiel.SpielError(f"resample_from_infostate needs a decision, not "
                                     f"{'a finished state' if t.player is _TERMINAL else 'a chance node'}")
        if player != t.player:
            raise pyspiel.SpielError(f"resample_from_infostate samples for the seat to act (player {t.player}), "
                                     f"got player {player}")
        rng = np.random.default_rng(_seed_from(probability_sampler))
        rec = self._record(True)
        world = sample_worlds(t.state, _ONE, 1, rng)
        new = SergeantMajorState(self.get_game())
        new._t = _Table.at(OneGame(world, observing=False), t.last_deal, t.rewards, t.reward)
        new._rec = _Record.start(new._t, self.get_game().rules.num_deals, True, keep=(player, rec))
        new._t.origin = _Origin(new)
        return new

    def __str__(self) -> str:
        """The whole table (every hand: a referee's view, for debugging and playthroughs)."""
        t = self._t
        if not t.lot:
            return "first dealer not drawn yet (R4)"
        state = t.state
        deal = min(int(state.deal[0]), state.rules.num_deals - 1) + 1
        dealer = int(state.dealer[0])
        lines = [f"deal {deal}/{state.rules.num_deals}, dealer seat {dealer}, playmaker seat {(dealer + 1) % 3}, "
                 f"scores {state.scores[0].tolist()}"]
        if t.player is _CHANCE:
            lines.append(f"dealing: {t.count} of 52 cards dealt")
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
        if t.player is _TERMINAL:
            lines.append("game over" if state.phase[0] == engine.OVER else f"search horizon: deal {t.last_deal + 1} ended")
        elif t.player is not _CHANCE:
            lines.append(f"seat {int(state.to_act[0])} to {engine.DECISIONS[int(state.phase[0])]}")
        return "\n".join(lines)


_APPLY_ACTION = pyspiel.State.apply_action  # OpenSpiel's C++ ApplyAction (history, then `_apply_action`)
_CHANCE, _TERMINAL = pyspiel.PlayerId.CHANCE, pyspiel.PlayerId.TERMINAL
_NO_REWARDS = (0.0, 0.0, 0.0)
_LOT_OUTCOMES = tuple((seat, 1 / NUM_PLAYERS) for seat in range(NUM_PLAYERS))
_CARDS = tuple(range(NUM_CARDS))
_UNIFORM = [[1 / n] * n if n else [] for n in range(NUM_CARDS + 1)]
"""The probabilities of n outcomes drawn uniformly: `_UNIFORM[n]` is n times 1 / n."""
_BYTE_MEMBERS = tuple(tuple(tuple(8 * k + i for i in range(8) if byte >> i & 1) for byte in range(256))
                      for k in range(8))
"""The members of each byte of a 64-bit set, at each of its eight places (`_members`)."""


def _members(bits: int) -> list[int]:
    """The ids of the set bits of `bits`, ascending."""
    if bits >> 64:  # (never a card set nor legal actions)
        return [i for i in range(bits.bit_length()) if bits >> i & 1]
    members, place = [], 0
    while bits:
        members += _BYTE_MEMBERS[place][bits & 255]
        bits >>= 8
        place += 1
    return members


# ============================================================================ observation

class SergeantMajorObserver:
    """OpenSpiel's observer API over the observation of [`observation.observe`][] (module docstring)."""

    def __init__(self) -> None:
        self.tensor = np.zeros(OBSERVATION_SIZE, dtype=np.float32)
        self.dict = {name: self.tensor[segment] for name, segment in SEGMENTS.items()}

    def set_from(self, state: SergeantMajorState, player: int) -> None:
        """The tensor (and its named pieces) of `player`, written by the one-game kernel
        ([`OneGame.observe`][]: the numbers of [`observation.observe`][])."""
        state._t.observe(_checked_player(player, "observation_tensor"), self.tensor)

    def string_from(self, state: SergeantMajorState, player: int) -> str:
        """What `player` sees, as text: `render.seat_view` and the deal's tricks."""
        t = state._t
        if not t.lot:
            return "the first dealer is drawn by lot (R4)"
        engine_state = t.state
        lines = []
        if t.player is _CHANCE:
            lines.append(f"dealing deal {int(engine_state.deal[0]) + 1}: {t.count} of 52 cards dealt (R10)")
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

_PUBLIC = (engine.MODE, engine.PLAY)
"""Decisions whose action every seat sees: the mode is announced (R8, section 5 step 2), cards
are played face up (R12). The others' (discards, exchange cards) only the actor sees; what
else a seat learns of them is in its observation (R22: the receiver's card, the counts)."""
_REST_NAMES = [(name, SEGMENTS[name].start - CARD_SETS_WIDTH) for name in SEGMENTS
               if CARD_SETS_WIDTH <= SEGMENTS[name].start < CARD_SETS_WIDTH + KEPT_REST]
_PLANE_NAMES = ("hand", "played by you", "played by left", "played by right", "trick 1st", "trick 2nd", "trick 3rd",
                "talon", "discards", "exchange given", "exchange received")
_DEAL_PIECES = RECALL_PIECES
"""The information-state tensor's block of one deal (module docstring, "Information state")."""
DEAL_BLOCK = RECALL_BLOCK
_DEAL_OFFSETS = RECALL_OFFSETS


def information_state_size(num_deals: int) -> int:
    """The length of the information-state tensor: the observation and a block per deal."""
    return OBSERVATION_SIZE + DEAL_BLOCK * num_deals


class _Log:
    """A seat's events (or their text), one list shared by a state and its clones as far as
    they agree: each keeps its own length and copies the list before adding past another's."""

    __slots__ = ("items", "n")

    def __init__(self, items: list | None = None, n: int = 0) -> None:
        self.items, self.n = ([] if items is None else items), n

    def share(self) -> "_Log":
        return _Log(self.items, self.n)

    def append(self, item: Any) -> None:
        if len(self.items) != self.n:
            self.items = self.items[:self.n]
        self.items.append(item)
        self.n += 1

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, index: int) -> Any:
        return self.items[index]

    def view(self) -> list:
        return self.items if len(self.items) == self.n else self.items[:self.n]

    def __getstate__(self) -> dict:
        return {"items": self.view()}

    def __setstate__(self, saved: dict) -> None:
        self.items, self.n = list(saved["items"]), len(saved["items"])


class _Record:
    """What each seat has seen (module docstring, "Information state"), from the lot or from
    a start: the seats' observations at the last event and the current deal's counts
    ([`one_game.Recall`][], one compiled call an event), each seat's recall of each deal
    (`blocks`: float32[3, DEAL_BLOCK] a deal, None before its first event; `deal`: the deal
    of the last, the earlier ones are final), and with `strings` each seat's events (`logs`:
    kind, actor, the action if the seat saw it else -1, deal, dealer, the changes of its card
    planes as (plane, added, removed) card sets and of its other entries as (index, value))
    and their text as far as asked (`lines`).

    A clone's record waits (`paused`) until an information state is asked: search bots clone
    for rollouts that never ask. Its first action notes where it stopped (`resume`: the
    game there and the history's length), from where it is replayed if ever asked."""

    __slots__ = ("recall", "blocks", "deal", "strings", "logs", "lines", "paused", "resume", "lists")

    def __init__(self, num_deals: int, strings: bool) -> None:
        self.recall, self.blocks, self.deal, self.strings = Recall(), [None] * num_deals, 0, strings
        self.logs = [_Log() for _ in range(NUM_PLAYERS)] if strings else None
        self.lines = [_Log() for _ in range(NUM_PLAYERS)] if strings else None
        self.paused, self.resume, self.lists = False, None, None

    @classmethod
    def start(cls, table: _Table, num_deals: int, strings: bool, keep: tuple | None = None) -> "_Record":
        """The record of the game of `table` from now on: it begins with a start event (what
        each seat sees now); `keep`: (player, record) whose record of `player` is kept (a
        resampled state)."""
        record = cls(num_deals, strings)
        state = table.state
        record.event(table.one, START, -1, -1, state.deal.item(0), state.dealer.item(0))
        if keep is not None:
            player, old = keep
            record.logs[player], record.lines[player] = old.logs[player].share(), old.lines[player].share()
            for deal, block in enumerate(old.blocks):
                if block is not None:
                    record.blocks[deal] = np.zeros((NUM_PLAYERS, DEAL_BLOCK), dtype=np.float32)
                    record.blocks[deal][player] = block[player]
            record.recall.counts[player] = old.recall.counts[player]
            record.recall.counted[:] = old.recall.counted
            record.deal = old.deal
        return record

    def copy(self, paused: bool = False) -> "_Record":
        """A copy; the views and the current deal's blocks copied, the rest shared."""
        new = _Record.__new__(_Record)
        new.recall, new.blocks, new.deal, new.strings = self.recall.copy(), list(self.blocks), self.deal, self.strings
        if new.blocks[self.deal] is not None:
            new.blocks[self.deal] = new.blocks[self.deal].copy()
        new.logs = None if self.logs is None else [log.share() for log in self.logs]
        new.lines = None if self.lines is None else [lines.share() for lines in self.lines]
        new.paused, new.resume, new.lists = paused, (self.resume if paused and self.paused else None), None
        return new

    def __deepcopy__(self, memo) -> "_Record":
        """A clone's record: the same, recorded on only if the clone is asked for an
        information state."""
        return self.copy(paused=True)

    def __getstate__(self) -> dict:
        """Pickled (`state.serialize()`) without the tensors' cache."""
        return {name: getattr(self, name) for name in self.__slots__ if name != "lists"}

    def __setstate__(self, saved: dict) -> None:
        for name, value in saved.items():
            setattr(self, name, value)
        self.lists = None

    def event(self, one: OneGame, kind: int, actor: int, action: int, deal: int, dealer: int) -> None:
        """Add an event that just happened in `one` to every seat's record: its kind (an
        engine decision phase, LOT, CARD, START), actor (-1: chance), action, deal and dealer."""
        block = None
        if kind != LOT and kind != START and deal < len(self.blocks):
            block = self.blocks[deal]
            if block is None:
                block = self.blocks[deal] = np.zeros((NUM_PLAYERS, DEAL_BLOCK), dtype=np.float32)
            self.deal = deal
        if not self.strings:
            self.recall.event(one, kind, actor, action, deal, dealer, block)
            return
        planes, rest = self.recall.planes.copy(), self.recall.rest.copy()
        self.recall.event(one, kind, actor, action, deal, dealer, block)
        for seat in range(NUM_PLAYERS):
            seen = action if kind in (LOT, *_PUBLIC) or seat == actor else -1
            changes = _changes(planes[seat], rest[seat], self.recall.planes[seat], self.recall.rest[seat])
            self.logs[seat].append((kind, actor, seen, deal, dealer, *changes))

    def tensor_list(self, table: _Table, player: int) -> list[float]:
        """`player`'s information-state tensor as a new list (OpenSpiel's): the observation
        now, then its recall of each deal."""
        if self.lists is None:
            self.lists = [None] * NUM_PLAYERS
        if self.lists[player] is None:  # the list, and the first deal that may have changed since the last ask
            self.lists[player] = [TensorList(information_state_size(len(self.blocks)), OBSERVATION_SIZE), 0]
        listed, first = self.lists[player]
        if table.lot:
            listed.patch(0, table.observe(player, table.observations()[NUM_PLAYERS]))
        for deal in range(first, self.deal + 1):
            block = self.blocks[deal]
            if block is not None:
                listed.patch(OBSERVATION_SIZE + DEAL_BLOCK * deal, block[player])
        self.lists[player][1] = self.deal
        return listed.list()

    def fill(self, player: int, out: np.ndarray) -> None:
        """`player`'s recall of each deal into `out` (float32[num_deals, DEAL_BLOCK])."""
        for deal, block in enumerate(self.blocks):
            out[deal] = 0.0 if block is None else block[player]


def _changes(planes_before: np.ndarray, rest_before: np.ndarray, planes: np.ndarray,
             rest: np.ndarray) -> tuple[tuple, tuple]:
    """What changed in a seat's observation: its card planes as (plane, added, removed) card
    sets, its other entries as (index, new value)."""
    before, after = planes_before.tolist(), planes.tolist()
    plane_changes = tuple((p, a & ~b, b & ~a) for p, (b, a) in enumerate(zip(before, after)) if a != b)
    changed = (rest_before != rest).nonzero()[0]
    rest_changes = tuple(zip(changed.tolist(), rest[changed].tolist())) if changed.size else ()
    return plane_changes, rest_changes


class _Origin:
    """The start of a state made from an engine state (`state_from_engine`, a resampled
    state): a frozen copy from which its history is replayed (shared by its clones)."""

    def __init__(self, state: SergeantMajorState) -> None:
        self._table = copy.deepcopy(state._t)
        self._record = None if state._rec is None else state._rec.copy()
        self._game = state.get_game()

    def __deepcopy__(self, memo) -> "_Origin":
        return self

    def state(self, strings: bool) -> SergeantMajorState:
        """A new state at the origin, recording each seat's views from a start event (with
        their text if `strings`), or as the origin's record (a resampled state's)."""
        new = SergeantMajorState(self._game)
        new._t = copy.deepcopy(self._table)
        new._t.origin = self
        record = self._record
        if record is not None and (record.strings or not strings):
            new._rec = record.copy()
        else:
            new._rec = _Record.start(new._t, self._game.rules.num_deals, strings)
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


def information_state_string(record: _Record, player: int) -> str:
    """The text of `player`'s record: one line per event, what it saw."""
    log, lines = record.logs[player], record.lines[player]
    for n in range(len(lines), len(log)):
        lines.append(_event_text(n + 1, player, *log[n]))
    return "\n".join([f"seat {player}'s information state (perfect recall)", *lines.view()])


def _event_text(n: int, player: int, kind: int, actor: int, action: int, deal: int, dealer: int,
                planes: tuple, rest: tuple) -> str:
    """Event `n` of `player`'s record as one line."""
    if kind == START:
        what = f"deal {deal + 1}: from here (earlier history not recorded), seeing"
    elif kind == LOT:
        what = f"chance: first dealer seat {action} (R4)"
    elif kind == CARD:
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


class InformationStateObserver:
    """OpenSpiel's observer API for perfect recall (module docstring, "Information state")."""

    def __init__(self, num_deals: int) -> None:
        self.tensor = np.zeros(information_state_size(num_deals), dtype=np.float32)
        self.dict = {"observation": self.tensor[:OBSERVATION_SIZE],
                     "deals": self.tensor[OBSERVATION_SIZE:].reshape(num_deals, DEAL_BLOCK)}

    def set_from(self, state: SergeantMajorState, player: int) -> None:
        player = _checked_player(player, "information_state_tensor")
        state._t.observe(player, self.dict["observation"])
        state._record(False).fill(player, self.dict["deals"])

    def string_from(self, state: SergeantMajorState, player: int) -> str:
        return information_state_string(state._record(True), _checked_player(player, "information_state_string"))


# ============================================================================ records

class _RecordedState(SergeantMajorState):
    """A state whose decisions go through a [`records.Recorder`][] (for `game_record`)."""

    def __init__(self, game: SergeantMajorGame, players: Sequence[str]) -> None:
        super().__init__(game)
        self.players = list(players)
        self.recorder: Recorder | None = None
        self.cards: list[tuple[np.ndarray, np.ndarray]] = []  # each deal's hands as dealt and talon

    def _deal_installed(self) -> None:
        state = self._t.one.state
        self.cards.append((state.dealt[0].copy(), state.talon_cards[0].copy()))

    def _step_engine(self, action: int) -> StepResult:
        one = self._t.one
        if self.recorder is None:  # the first decision: a fresh game with its cards installed
            self.recorder = Recorder(one.state, self.players)
        self.recorder.step(np.array([action]))
        return one.refresh()


def game_record(state: SergeantMajorState, players: Sequence[str] = ("openspiel",) * 3) -> dict[str, Any]:
    """The RULES.md section 11 record of a finished game, replayed from `state.history()`.

    The record's `seed` is 0: the cards came from OpenSpiel's chance nodes, not from an
    engine seed; the record holds them all, so it replays without one (`records check`)."""
    if not isinstance(state, SergeantMajorState):
        raise TypeError(f"game_record needs a {SHORT_NAME} state, got {type(state).__name__}")
    if not state.is_terminal() or state.engine_state.phase[0] != engine.OVER:
        raise ValueError("game_record needs a finished game (state.is_terminal() after the last deal)")
    replay = _RecordedState(state.get_game(), players)
    for action in state.history():
        replay.apply_action(action)
    record = replay.recorder.finished[0]
    # The Recorder keeps each deal's cards as the engine dealt them from its seed; the game's
    # cards are those its chance nodes dealt.
    for deal, (hands, talon) in zip(record["deals"], replay.cards):
        deal["hands"] = [[card_name(c) for c in hand] for hand in hands.tolist()]
        deal["talon"] = [card_name(c) for c in talon.tolist()]
    return record


# ============================================================================ serialisation

def deserialize_state(game: SergeantMajorGame, text: str) -> SergeantMajorState:
    """The state of `state.serialize()` text, replayed from its `history=` line only:
    never unpickles (OpenSpiel's `game.deserialize_state` unpickles the attributes)."""
    first = text.split("\n", 1)[0]
    if not first.startswith("history="):
        raise ValueError("expected OpenSpiel's serialised state, starting with a 'history=' line")
    state = game.new_initial_state()
    for n, item in enumerate(filter(None, first[len("history="):].split(",")), 1):
        player, sep, action = item.partition(":")
        try:
            player, action = int(player), int(action)
        except ValueError:
            sep = ""
        if not sep:
            raise ValueError(f"bad history entry {n} {item!r}: expected PLAYER:ACTION (integers)")
        if player != state.current_player():
            raise IllegalActionError(f"history entry {n} {item!r} is not a legal action here: player {player} "
                                     f"does not act here, {_who(state.current_player())} does")
        try:
            state.apply_action(action)
        except IllegalActionError as error:
            reason = str(error).removesuffix(_UNCHANGED)
            raise IllegalActionError(f"history entry {n} {item!r} is not a legal action here: {reason}") from None
    return state


def _who(player: int) -> str:
    """A player id as text: `seat 1`, `chance (-1)`, `nobody (-4, the game is over)`."""
    player = int(player)
    if player == pyspiel.PlayerId.CHANCE:
        return f"chance ({player})"
    if player == pyspiel.PlayerId.TERMINAL:
        return f"nobody ({player}, the game is over)"
    return f"seat {player}"


# ============================================================================ OpenSpiel's C++ search bots

_CPP_BOT = ("OpenSpiel's C++ {} cannot search a Python game such as " + SHORT_NAME + " (pyspiel crashes the "
            "interpreter, on its own python_ games too); use open_spiel.python.algorithms.{}")
_CPP_SEARCH_BOTS = {"MCTSBot": "mcts.MCTSBot", "ISMCTSBot": "ismcts.ISMCTSBot"}
"""pyspiel's C++ search bots and the Python bot to use instead (module docstring, "C++ search bots")."""


def _is_this_game(game: Any) -> bool:
    """Whether `game` is a `python_sergeant_major` game (by name: a reloaded module's class
    is another class, and the guards installed first stay)."""
    try:
        return isinstance(game, pyspiel.Game) and game.get_type().short_name == SHORT_NAME
    except Exception:  # a game whose type cannot be read is not this one
        return False


def _refuse_cpp_search(bot: Any, game: Any) -> None:
    """One SpielError line if `bot` is one of pyspiel's C++ search bots and `game` this game."""
    for name, python_bot in _CPP_SEARCH_BOTS.items():
        if isinstance(bot, getattr(pyspiel, name)) and _is_this_game(game):
            raise pyspiel.SpielError(_CPP_BOT.format(name, python_bot))


def _guard_cpp_search_bots() -> None:
    """Make pyspiel's C++ search bots refuse this game in one line instead of crashing.

    The guards are patched into pyspiel's own classes (not subclasses), so a name imported
    before this module (`from pyspiel import MCTSBot`) is guarded too: `MCTSBot` when built
    (it takes the game), both bots at `step` / `step_with_policy`, and `pyspiel.evaluate_bots`,
    whose C++ loop calls the bots' C++ `Step` without going through Python (an `ISMCTSBot`
    there failed with `ResampleFromInfostate() not implemented.`). A reloaded module keeps the
    guards installed first."""
    build = pyspiel.MCTSBot.__init__

    def guarded_init(self, game, *args, **kwargs):
        _refuse_cpp_search(self, game)
        build(self, game, *args, **kwargs)

    pyspiel.MCTSBot.__init__ = guarded_init
    for name in _CPP_SEARCH_BOTS:
        for method in ("step", "step_with_policy"):
            _guard_step(getattr(pyspiel, name), method)
    pyspiel.evaluate_bots = _guarded_evaluate_bots(pyspiel.evaluate_bots)
    pyspiel._sergeant_major_guards = True


def _guard_step(cls: type, method: str) -> None:
    """`cls.method(state)` refuses a state of this game (`_refuse_cpp_search`)."""
    search = getattr(cls, method)

    def guarded(self, state, *args, **kwargs):
        _refuse_cpp_search(self, _game_of(state))
        return search(self, state, *args, **kwargs)

    guarded.__name__, guarded.__doc__ = method, search.__doc__
    setattr(cls, method, guarded)


def _guarded_evaluate_bots(evaluate_bots):
    """`pyspiel.evaluate_bots` that first refuses a C++ search bot on a state of this game."""

    def guarded(state, bots, *args, **kwargs):
        for bot in bots:
            _refuse_cpp_search(bot, _game_of(state))
        return evaluate_bots(state, bots, *args, **kwargs)

    guarded.__name__, guarded.__doc__ = "evaluate_bots", evaluate_bots.__doc__
    return guarded


def _game_of(state: Any) -> Any:
    """The game of a pyspiel state, None for anything else."""
    return state.get_game() if isinstance(state, pyspiel.State) else None


# ============================================================================ pyspiel.load_game

CPP_INT = (-2**31, 2**31 - 1)
"""The range of a game parameter's integer in pyspiel (C++ `int`); beyond it pybind11 fails
with "Unable to cast Python instance of type <class 'int'>", before the game sees the value."""


def check_load_game(game: Any, params: Any = None) -> None:
    """The checks of this game's parameters that pyspiel skips or fails unclearly, before
    `pyspiel.load_game(game, params)` (module docstring, "Refusals"), one ValueError line each:
    a parameter named twice in a game string (pyspiel's parser keeps the last one, and the game
    only sees the result), and an integer beyond C++ `int` (pybind11's cast error), refused by
    the game's own checks. Anything else is left to pyspiel and the game."""
    if not isinstance(game, str) or game.partition("(")[0].strip() != SHORT_NAME:
        return
    wide = {}
    if isinstance(params, dict):
        wide = {name: value for name, value in params.items() if _beyond_cpp_int(value)}
    elif "(" in game and game.rstrip().endswith(")"):
        wide = _wide_integers(_named_once(game.partition("(")[2].rstrip()[:-1]))
    if wide:
        rules_from_params(wide)
        reward_from_params(wide)


def _named_once(body: str) -> dict[str, str]:
    """`name: value` text of a game string's parameters (split at the commas outside
    parentheses), one ValueError line for a name given twice."""
    items, depth, start = [], 0, 0
    for i, char in enumerate(body + ","):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            items.append(body[start:i])
            start = i + 1
    given: dict[str, str] = {}
    for item in filter(str.strip, items):
        name, _, value = item.partition("=")
        name = name.strip()
        if name in given:
            raise ValueError(f"{SHORT_NAME}: parameter {shorten(name)} given twice ({shorten(name + '=' + given[name])} "
                             f"and {shorten(item.strip())}); give each parameter once")
        given[name] = value.strip()
    return given


def _wide_integers(given: dict[str, str]) -> dict[str, int]:
    """The parameters whose text is an integer beyond C++ `int`."""
    wide = {}
    for name, text in given.items():
        digits = text.lstrip("+-")
        if digits.isascii() and digits.isdigit() and len(digits) <= 4000:
            value = int(text)
            if _beyond_cpp_int(value):
                wide[name] = value
    return wide


def _beyond_cpp_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and not CPP_INT[0] <= value <= CPP_INT[1]


def _guarded_load_game(load_game):
    """`pyspiel.load_game` that runs `check_load_game` first."""

    def guarded(*args, **kwargs):
        if args:
            check_load_game(*args[:2])
        return load_game(*args, **kwargs)

    guarded.__name__, guarded.__doc__ = "load_game", load_game.__doc__
    return guarded


if not getattr(pyspiel, "_sergeant_major_guards", False):  # (a reloaded module keeps the first guards)
    pyspiel.load_game = _guarded_load_game(pyspiel.load_game)
    _guard_cpp_search_bots()
pyspiel.register_game(GAME_TYPE, SergeantMajorGame)
