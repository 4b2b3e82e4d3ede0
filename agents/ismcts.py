"""`ismcts`: OpenSpiel's IS-MCTS bot as an agent, and `PyspielBotAgent`, the one
adapter that makes any pyspiel bot an agent of this package.

Needs the `openspiel` extra (`pip install "sergeant-major-env[openspiel]"`, Python 3.11+).

The adapter. An agent of this package decides for a batch of engine games; a pyspiel bot
decides from one OpenSpiel state (`bot.step(state) -> action`). `PyspielBotAgent`
bridges them through the game `python_sergeant_major`
(`sergeant_major_env.openspiel`): for each game where the agent is to act it

1. draws one *world* of the game with [`sergeant_major_env.worlds.sample_worlds`][]: the
   real game with everything the seat to act cannot see redrawn at random, so that no bot,
   whatever it reads of the state, ever sees a hidden card;
2. turns the world into an OpenSpiel state (`game.state_from_engine`), ending at the
   end of the current deal with `horizon="deal"` (a search horizon, as `pimc`'s), or
   running to the end of the game with `horizon="game"` (later deals are then dealt by
   the game's chance nodes);
3. asks `make_bot(game, rng)`'s bot for its action (`bot.step`).

`reward` is the game's parameter (`points` by default; `score` for bots that need
terminal rewards, such as OpenSpiel's MCTS).

Any pyspiel bot plugs in the same way; e.g. OpenSpiel's MCTS bot (a perfect-information
search, which here plays the one world it is given: a determinized search):

```python
from open_spiel.python.algorithms import mcts
from sergeant_major_env.agents import register_agent
from sergeant_major_env.agents.ismcts import PyspielBotAgent

def make_bot(game, rng):
    evaluator = mcts.RandomRolloutEvaluator(1, np.random.RandomState(rng.integers(2**31)))
    return mcts.MCTSBot(game, uct_c=4.0, max_simulations=100, evaluator=evaluator,
                        random_state=np.random.RandomState(rng.integers(2**31)))

register_agent("mcts", lambda: PyspielBotAgent(make_bot, name="mcts", reward="score"))
```

The `ismcts` agent is OpenSpiel's Python `ISMCTSBot`
(`open_spiel.python.algorithms.ismcts`) given this package's world sampler as its
resampler (`bot.set_resampler`): each simulation starts from a world drawn by
[`sample_worlds`][] for the seat to act. Its tree nodes are
keyed by the observation string (the seat's view and the deal's tricks; the game provides
no information-state string). Returns are the seats' points (scores), so within the
default horizon a leaf's value is the deal's points plus a constant.

Parameters (`ismcts:simulations=200:exploration=4`, colons between options as for
`pimc:`):

| name | default | meaning |
|---|---|---|
| simulations | 100 | IS-MCTS simulations per decision |
| exploration | 4.0 | UCT constant `uct_c` (values are points: a deal's range is +-13, so larger than the 2 of games scored +-1) |
| rollout | random | how a new leaf is valued: `random`: uniformly random moves to the horizon, on the engine (`EngineRolloutEvaluator`); `openspiel`: the same through pyspiel, with OpenSpiel's RandomRolloutEvaluator (about 2x slower); `heuristic`: the heuristic plays every seat, on the engine (much slower) |
| rollouts | 1 | rollouts per new leaf (their mean values it) |
| worlds | 0 | at most this many distinct worlds per decision (OpenSpiel's `max_world_samples`); 0 = a new world every simulation |
| final | visits | the move played: `visits` (most visited), `value` (best mean), `sample` (in proportion to the visits) |
| horizon | deal | `deal`: search to the end of the current deal; `game`: to the end of the game (slow: later deals are played out too) |

Randomness: each decision seeds the bot, its evaluator and the world sampler from the
caller's generator, so a run is reproducible from the seed of `evaluate.py`; the agent is
not `deterministic` in this package's sense (a decision depends on the order of calls).
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np

try:
    import pyspiel
    from open_spiel.python.algorithms import ismcts, mcts
except ImportError as error:  # pragma: no cover - exercised without the extra
    raise ImportError('the ismcts agent needs OpenSpiel: pip install "sergeant-major-env[openspiel]" '
                      f'(Python 3.11 or later) ({error})') from None

from sergeant_major_env import engine
from sergeant_major_env.cards import NUM_ACTIONS, bits_to_bool
from sergeant_major_env.options import check_reward
from sergeant_major_env.openspiel import SHORT_NAME, SergeantMajorGame, SergeantMajorState
from sergeant_major_env.policies import decide
from sergeant_major_env.rules import Rules
from sergeant_major_env.worlds import sample_worlds

from .base import agent_options

FINAL_POLICIES = {"visits": ismcts.ISMCTSFinalPolicyType.MAX_VISIT_COUNT,
                  "value": ismcts.ISMCTSFinalPolicyType.MAX_VALUE,
                  "sample": ismcts.ISMCTSFinalPolicyType.NORMALIZED_VISITED_COUNT}
HORIZONS = ("deal", "game")
ROLLOUTS = ("random", "openspiel", "heuristic")

BotFactory = Callable[[SergeantMajorGame, np.random.Generator], "pyspiel.Bot"]
_GAMES: dict[tuple[Rules, str], SergeantMajorGame] = {}


def openspiel_game(rules: Rules, reward: str = "points") -> SergeantMajorGame:
    """The `python_sergeant_major` game of `rules` and `reward` (the game parameter:
    `points`, or `score` / `rank` for terminal rewards), loaded once each."""
    if (rules, reward) not in _GAMES:
        _GAMES[rules, reward] = pyspiel.load_game(SHORT_NAME, {**rules.to_dict(), "reward": reward})
    return _GAMES[rules, reward]


def _seed(rng: np.random.Generator) -> np.random.RandomState:
    """A legacy RandomState (what OpenSpiel's Python bots take) seeded from `rng`."""
    return np.random.RandomState(int(rng.integers(2**31)))


class PyspielBotAgent:
    """Any pyspiel bot as a batched agent of this package (see the module docstring).

    `make_bot(game, rng)` builds the bot for one decision (`game` is the OpenSpiel game
    of the rules being played, `rng` a generator to seed it from); the agent hands it an
    OpenSpiel state of a world sampled for the seat to act, never the real hidden cards."""

    deterministic = False

    def __init__(self, make_bot: BotFactory, name: str = "pyspiel", horizon: str = "deal",
                 reward: str = "points") -> None:
        if horizon not in HORIZONS:
            raise ValueError(f"{name}: horizon must be one of {', '.join(HORIZONS)}, got {horizon!r}")
        self.make_bot, self.name, self.horizon = make_bot, name, horizon
        self.reward = check_reward(reward, name)  # the game's reward parameter: "score" for MCTS

    def act(self, observations: np.ndarray, legal_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        raise TypeError(f"{self.name} searches the engine state: it is played by callers that hold one "
                        "(evaluate.py, the terminal game, the vec env and single-seat env opponents) "
                        "through act_on_state")

    def act_on_state(self, state: engine.State, games: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """int64[len(games)]: the bot's action for the seat to act in each of `games`."""
        games = np.asarray(games, dtype=np.intp)
        game = openspiel_game(state.rules, self.reward)
        actions = np.empty(games.size, dtype=np.int64)
        for i, g in enumerate(games.tolist()):
            legal = engine.legal_bits(state, np.array([g]))[0]
            if int(legal).bit_count() == 1:  # nothing to search
                actions[i] = int(legal).bit_length() - 1
                continue
            actions[i] = self.make_bot(game, rng).step(self.world_state(game, state, g, rng))
        return actions

    def world_state(self, game: SergeantMajorGame, state: engine.State, g: int,
                    rng: np.random.Generator) -> SergeantMajorState:
        """An OpenSpiel state of a world of game `g` sampled for its seat to act."""
        world = sample_worlds(state, np.array([g]), 1, rng)
        last_deal = int(state.deal[g]) if self.horizon == "deal" else None
        return game.state_from_engine(world, last_deal=last_deal)

    def __repr__(self) -> str:
        return f"PyspielBotAgent({self.name!r}, horizon={self.horizon!r})"


class EngineRolloutEvaluator(mcts.Evaluator):
    """An OpenSpiel evaluator (`evaluate`, `prior`) that plays every seat from the state to
    its end (its horizon) on the engine directly, and returns the seats' scores there:
    uniformly random legal moves (`policy=None`, what OpenSpiel's RandomRolloutEvaluator
    plays, without a pyspiel call a move), or a policy of this package (the heuristic).
    Priors are uniform."""

    def __init__(self, policy: object | None, rng: np.random.Generator, rollouts: int = 1) -> None:
        self.policy, self.rng, self.rollouts = policy, rng, rollouts

    def evaluate(self, state: SergeantMajorState) -> np.ndarray:
        return np.mean([self._roll_out(state) for _ in range(self.rollouts)], axis=0)

    def _roll_out(self, state: SergeantMajorState) -> np.ndarray:
        sim = state.engine_state.copy()
        # With horizon="game" the rollout runs past the deal: the engine deals the next deals
        # from the world's seed, which sample_worlds drew at random (a uniform deal).
        games = np.zeros(1, dtype=np.intp)
        last_deal = state._last_deal
        while sim.phase.item(0) != engine.OVER and sim.deal.item(0) <= last_deal:
            legal = engine.legal_bits(sim)
            if self.policy is None:
                action = _random_member(int(legal[0]), self.rng)
            else:
                action = decide(self.policy, sim, games, bits_to_bool(legal, NUM_ACTIONS), self.rng)[0]
            engine.step(sim, np.array([action]), legal=legal)
        return sim.scores[0].astype(np.float64)

    def prior(self, state: SergeantMajorState) -> list[tuple[int, float]]:
        if state.is_chance_node():
            return state.chance_outcomes()
        legal = state.legal_actions()
        return [(action, 1.0 / len(legal)) for action in legal]


def _random_member(bits: int, rng: np.random.Generator) -> int:
    """A uniformly random set bit of `bits` (a legal action)."""
    k = int(rng.integers(bits.bit_count()))
    for _ in range(k):
        bits &= bits - 1  # drop the lowest
    return (bits & -bits).bit_length() - 1


@dataclasses.dataclass(frozen=True)
class ISMCTSSettings:
    """Every option of the `ismcts` agent (the module docstring's table), checked when made: a
    bad one is a one-line ValueError naming it. `ismcts:simulations=200:exploration=4` makes
    one (`make_ismcts_agent`), as does `ISMCTSAgent(simulations=200)`."""

    simulations: int = 100
    """IS-MCTS simulations per decision"""
    exploration: float = 4.0
    """UCT constant `uct_c` (values are points: a deal's range is +-13)"""
    rollouts: int = 1
    """rollouts per new leaf (their mean values it)"""
    rollout: str = "random"
    """how a new leaf is valued: `random` (on the engine), `openspiel` (OpenSpiel's
    RandomRolloutEvaluator) or `heuristic` (the heuristic plays every seat)"""
    worlds: int = 0
    """at most this many distinct worlds per decision; 0 = a new world every simulation"""
    final: str = "visits"
    """the move played: `visits` (most visited), `value` (best mean), `sample` (by visits)"""
    horizon: str = "deal"
    """`deal`: search to the end of the current deal; `game`: to the end of the game"""

    def __post_init__(self) -> None:
        for label, low in (("simulations", 1), ("rollouts", 1), ("worlds", 0)):
            value = getattr(self, label)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
                raise ValueError(f"ismcts: {label} must be an integer >= {low}, got {value!r}")
            object.__setattr__(self, label, int(value))
        if isinstance(self.exploration, bool) or not isinstance(self.exploration, (int, float, np.integer, np.floating)) \
                or not float(self.exploration) >= 0.0:
            raise ValueError(f"ismcts: exploration must be a number >= 0, got {self.exploration!r}")
        object.__setattr__(self, "exploration", float(self.exploration))
        for label, allowed in (("final", tuple(FINAL_POLICIES)), ("rollout", ROLLOUTS), ("horizon", HORIZONS)):
            if getattr(self, label) not in allowed:
                raise ValueError(f"ismcts: {label} must be one of {', '.join(allowed)}, got {getattr(self, label)!r}")


DEFAULTS = {field.name: field.default for field in dataclasses.fields(ISMCTSSettings)}
"""The options of `ismcts:NAME=VALUE:...` and their defaults (`ISMCTSSettings`)."""


class ISMCTSAgent(PyspielBotAgent):
    """OpenSpiel's `ISMCTSBot` with this package's world sampler (module docstring)."""

    name = "ismcts"

    def __init__(self, settings: ISMCTSSettings | None = None, **fields) -> None:
        """`ISMCTSAgent(ISMCTSSettings(simulations=200))` or, the same, `ISMCTSAgent(simulations=200)`."""
        if settings is None:
            settings = ISMCTSSettings(**fields)
        elif fields or not isinstance(settings, ISMCTSSettings):
            raise TypeError(f"ISMCTSAgent takes an ISMCTSSettings or its fields, got {settings!r} and {sorted(fields)}")
        super().__init__(self._make_bot, name="ismcts", horizon=settings.horizon)
        self.settings = settings
        self.simulations, self.exploration, self.rollouts = settings.simulations, settings.exploration, settings.rollouts
        self.rollout, self.worlds, self.final = settings.rollout, settings.worlds, settings.final
        self._policy = None
        if settings.rollout == "heuristic":
            from .heuristic import HeuristicAgent
            self._policy = HeuristicAgent()

    def _make_bot(self, game: SergeantMajorGame, rng: np.random.Generator) -> "ismcts.ISMCTSBot":
        if self.rollout == "openspiel":
            evaluator = mcts.RandomRolloutEvaluator(self.rollouts, _seed(rng))
        else:
            evaluator = EngineRolloutEvaluator(self._policy, rng, self.rollouts)
        bot = ismcts.ISMCTSBot(
            game, evaluator, self.exploration, self.simulations,
            max_world_samples=self.worlds or ismcts.UNLIMITED_NUM_WORLD_SAMPLES,
            random_state=_seed(rng), final_policy_type=FINAL_POLICIES[self.final],
            use_observation_string=True)
        bot.set_resampler(lambda state, player: game.state_from_engine(
            sample_worlds(state.engine_state, np.zeros(1, dtype=np.intp), 1, rng), last_deal=state._last_deal))
        return bot

    def __repr__(self) -> str:
        return (f"ISMCTSAgent(simulations={self.simulations}, exploration={self.exploration}, "
                f"rollouts={self.rollouts}, rollout={self.rollout!r}, worlds={self.worlds}, "
                f"final={self.final!r}, horizon={self.horizon!r})")


def make_ismcts_agent(argument: str | None) -> ISMCTSAgent:
    """`ismcts` or `ismcts:simulations=200:exploration=4:...` (module docstring); each option
    once (`agents.base.agent_options`, pimc's parser too)."""
    return ISMCTSAgent(ISMCTSSettings(**agent_options("ismcts", argument or "", DEFAULTS)))
