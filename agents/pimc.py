"""`pimc`: determinized Monte Carlo search (perfect-information Monte Carlo) on the engine.

At each decision with more than one real choice, for the seat to act:

1. sample `worlds` complete deals consistent with what the seat knows
   ([`sergeant_major_env.worlds.sample_worlds`][]: uniform among them);
2. in every world, try every legal action, then play the rest of the deal (or `horizon`
   more decisions) with fast policies, `rollouts` times: `rollout` for the seat's own
   later moves, `others` (the heuristic: a model of the other players) for theirs;
3. choose the action with the best mean outcome for the seat: its points of the deal
   (R23, R24). Mode choices add the value of the modes kept for later deals (the
   heuristic's plan over the open modes, R8), since a mode used now is gone for good.
   With a `prior` (a policy with action probabilities, such as `learned`), each
   action's value also gets `prior_weight` points per unit of the log-probability the
   policy gives it at the real decision: the search's noisy means (a few worlds) are
   pulled towards what the policy would play, and a move the policy finds very unlikely
   must win clearly in the worlds to be chosen.

It covers every decision: mode choice (worlds redraw the ten cards the playmaker has not
seen, R9), exchange gives and free returns (R21), discards and play. Only the seat's
knowledge enters the worlds, never the real hidden cards, so the agent may be handed the
live engine state (`act_on_state`).

`pimc:cheat` (measurement only). The one exception: with the flag `cheat` the search
SEES EVERY HIDDEN CARD. Its worlds are copies of the true deal (the real games of the
state, `state.take`) instead of sampled ones; everything else (rollouts, pruning, the
mode plan) is pimc's. It is not a fair player: it measures what perfect inference is
worth, the bound of any belief model (how far `pimc:cheat` is ahead of `pimc`). It says
so (`cheats = True`, [`sergeant_major_env.policies.sees_hidden_cards`][]): a table with a
person refuses it (`play`, `play --web`, `evaluate --agents human,...`:
[`sergeant_major_env.policies.refuse_cheats`][]) and `evaluate` prints a note under
its report. Worlds: with deterministic rollouts (the default) every copy of the true deal
gives the same outcome, so one copy is searched whatever `worlds` says (the same
decisions, `worlds` times faster); with random rollouts (a random policy, `epsilon` >
0) `worlds` copies are searched, each with its own rollout noise, as pimc's `worlds`
sampled deals would be: the two compare at equal search width. `infer` (weighting sampled
worlds) and `belief` (weighting them by a belief model) do not apply and are refused with it.

`belief` (`pimc:belief=learned`). A belief model (`sergeant_major_env.agents.belief`,
trained by `sergeant-major distill belief` on the project's own games, where the true hands
are known) reads the seat's observation and gives each unseen card's probability of being in
the left hand, the right hand or the pile. The `worlds` worlds are drawn by it, exactly
([`sample_worlds`][]' `exact`): among the worlds consistent with
what the seat knows (voids, shown cards, exchanges, hand sizes), each with a probability
proportional to the product, over the unseen cards, of the model's probability of the place
the world puts it, raised to `belief_power`. Every world is a fresh draw, and at power 1 the
worlds' marginals are the model's. The model reads the seat's observation only, never a
hidden card, once a decision. At `belief_power` 0.5 (the default) the search closes about 29%
of the gap between `pimc` and `pimc:cheat` at equal worlds (25% to 32% on four sets of 600
games), 26% inside `search` (16% and 38% on two sets); at 0.75 and 1 it is ahead of `pimc`
too, by less (docs/results.md). Most of that gap is the cheat's rollouts replaying the
heuristic seat's moves (its cards known, the heuristic deterministic); at a table of three
searches, where no moves are replayed, the belief closes 97% [52%, 177%] of the gap over 1,200
games.

`belief_exact=false` draws the worlds the way before it (2026-12-06): the sampler picks each
card for the pile and for the left hand by a key that adds `belief_power` times the card's
log-odds in the model (pile against the hands, the left hand against the right) to its random
draw (a Gumbel top-k draw), the counts of each kind of card on the pile by their uniform
weights. Its worlds are sharper than the model where it is sure and miss what it knows
elsewhere; it plays best at `belief_power` 0.25 to 0.35, a fifth of the gap.

`belief_draw=false` weights uniform worlds instead (the first way, kept for comparison):
`candidates` x `worlds` uniform worlds are drawn and `worlds` kept by weight, a world's
log-weight `belief_power` times the sum, over the unseen cards, of log p - log u for the bin
the world put the card in, p the model's probability and u the share of the candidates
putting it there (`world_log_weights`); with
`infer` too, the two log-weights add (with a drawing belief, `infer` weights the drawn
candidates). At `belief_power` 1 so few distinct worlds are kept that the search plays worse
than on uniform ones; at 0.25, the best measured, it is level with `pimc`.

Speed. All the games handed to one `act_on_state` call (evaluate.py hands it every game
of the table where this agent is to act) are searched together: their worlds x actions x
rollouts advance through the engine as one batch. Games in which the seat knows exactly the
same are searched once (a duplicate table with two copies of one opponent plays each deal
twice alike: the seatings that swap the copies). Rollout decisions without a real choice (a
single legal card, or cards that are all equivalent, R16, `choices`) are played
directly. With the heuristic as both rollout policies (the default) and no `epsilon`, the
rollouts are compiled (`agents/pimc_kernels.py`): one kernel plays every rollout game on
to its next real choice with the engine's per-game rules, gathers the heuristic's inputs
straight from the state and runs the heuristic's card kernels on all the games of the
round, until the deal ends (the last card is scored without dealing the next deal); only
exchange gives, whose heuristic is numpy, come back to Python. The rollout heuristic is the
heuristic agent's card kernels with the compiled `exp` and `log` (the agent itself calls
numpy's: its actions are 0.3.0's bit for bit); they differ in the last bit on a few arguments
in a hundred, which flips a rollout's card only where two cards' scores tie to the last bit
(6 of 50,640 rollouts of a 6-game table end otherwise), so the search's choices are those of
the step-by-step loop all but very rarely: head to head with it (0.3.0's decisions) over 600
games, `benchmarks/pimc_strength.py`, docs/results.md. A policy network playing its most
likely action (`learned`, `learned-ppo`, `ppo:PATH`; `pimc:rollout=learned` is the
`search` agent) runs in the same kernel, for the seats it plays, beside the heuristic for
the others (`agents/network_kernels.py`: the network's sums in float32 in another order than
torch, so a rollout move differs from the step-by-step loop's only where two legal logits tie
to the last bits); it decides exchange gives there too. Every other rollout policy takes
the step-by-step loop: one policy call per rollout step for the batch (in slices of
`POLICY_ROWS` rows). The worlds are made by a kernel too (`worlds._worlds_k`, from random
numbers drawn in numpy as before: the same worlds). Across cores: `evaluate.py` shares a
table's games out over worker processes (`--workers`), which the search's randomness allows
(below: the agent is `deterministic` unless its rollouts are random); and one decision's
compiled rollouts, when there are at least `ROLLOUT_THREADS_FROM` of them, run in chunks on
every core (`threads.spread`'s threads: the kernel releases the GIL; the same points bit for bit
on any number of threads), so a single game's search uses every core too. Speed:
docs/results.md ("One game at a time, and every core").

Randomness. Each game's worlds are drawn from a generator of its own, seeded by `seed`
and the seat's observation (its whole information state), so a decision depends only on
what the seat knows and on `seed`: not on the caller's `rng`, nor on which other
games are searched in the same call. (A random rollout policy or `epsilon` > 0 draws
its rollout noise for the whole batch, so with those a decision also depends on the
batch.)

Parameters (`pimc:worlds=32:rollout=greedy`, options separated by colons since
`evaluate.py --agents` separates agents by commas; `rollout=ppo:RUN` keeps its colon):

| name | default | meaning |
|---|---|---|
| worlds | 16 | deals sampled per decision |
| rollouts | 1 | rollouts per world and action (more help only a random rollout policy, or `epsilon` > 0: the others are deterministic) |
| rollout | heuristic | the policy of the seat's own later moves in rollouts: an agent name (heuristic, greedy, random, learned, ppo:RUN; not pimc) |
| others | heuristic | the policy of the other two seats in rollouts (an agent name, or `rollout`: the same policy as the seat's own) |
| horizon | 0 | decisions rolled out after the action; 0 = to the end of the deal. A cut-off deal is scored as if the remaining tricks fell in proportion to the targets |
| epsilon | 0.0 | chance of a random legal move at each rollout decision |
| prune | 0.0 | > 0: after half the worlds, drop the actions worse than the best by more than `prune` standard errors (paired over the worlds); only the rest are rolled out in the other half. Fewer rollouts, but two passes: it pays only where rollouts are many rows (big tables). 0 = every action in every world |
| infer | none | a policy with action probabilities (learned, ppo:RUN) to weight the worlds by how well they explain the other seats' plays of the deal (agents.inference): `candidates` x `worlds` are drawn, `worlds` of them kept by weight (likelihood ** `infer_power`). `auto`: the others' or the rollout policy's probabilities |
| infer_power | 0.5 | how much the likelihood counts (0: uniform worlds) |
| belief | none | a belief model drawing the worlds by where it puts each unseen card (agents.belief): `learned` (the shipped one) or a belief file or folder (`distill belief --out`) |
| belief_power | 0.5 | how much the belief counts (0: uniform worlds); drawn exactly, 0.5 measured best of 0.35, 0.5, 0.75 and 1 (docs/results.md); by keys (`belief_exact=false`), 0.25 and 0.35 of 0.2 to 1; weighting, 0.25 of 0.125 to 1 (at 1 the worlds kept are too few and too sure, 16 points a game behind `pimc`) |
| prior | none | a policy with action probabilities (learned, ppo:RUN) whose log-probabilities at the decision are added to the values, times `prior_weight`. `auto`: the rollout policy's, if it has any (the heuristic has none). Off by default: `learned` as a prior at weight 0.5 made the search play much like the policy itself, 8.6 points per game behind `pimc` head to head (README, "Search") |
| prior_weight | 0.5 | points of value per unit of log-probability of the prior |
| belief_draw | true | draw the worlds by the belief; `false`: draw `candidates` x `worlds` uniform worlds and keep `worlds` by the belief's weight (level with `pimc` at best, docs/results.md) |
| belief_exact | true | drawing, each world in proportion to the product of the belief's probabilities (to `belief_power`); `false`: each card by a key biased by its log-odds (the draw of 2026-12-06) |
| candidates | 4 | worlds drawn per world kept, with inference or a weighting belief |
| max_rows | 60000 | most rollout games advanced together (memory bound) |
| seed | 0 | seeds the worlds (with the seat's observation, see above) |
| cheat | false | a flag (`pimc:cheat`): search the true deal, SEEING EVERY HIDDEN CARD; for measuring the value of perfect inference only (above) |

Bounds (one game's search is held in memory at once; each is checked when the agent is
made, with the memory the search needs against what this machine has available): worlds
x rollouts at most `MAX_SEARCH_WIDTH` (100,000), worlds x candidates at most
`MAX_DRAWN` (400,000), max_rows at most `MAX_ROWS` (4,000,000); `epsilon`,
`prune`, `infer_power`, `belief_power` and `prior_weight` finite numbers (`inf` and
`nan` refused). A belief file is checked when the agent is made (one line for anything
malformed; nothing in it can run code).
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from typing import NamedTuple

import numpy as np

from sergeant_major_env import engine
from sergeant_major_env.cards import MODE_ACTION_OFFSET, NUM_ACTIONS, bits_to_bool, cards_to_bits, count, lowest
from sergeant_major_env.jit import compile_ahead
from sergeant_major_env.threads import spread, threads
from sergeant_major_env.limits import check_count, check_fits, shorten
from sergeant_major_env.observation import observe
from sergeant_major_env.policies import decide, is_deterministic
from sergeant_major_env.seeding import check_seed
from sergeant_major_env.worlds import knowledge, sample_worlds

from .base import agent_options, option_items
from .heuristic import HeuristicAgent, plan_values
from .heuristic_kernels import KNOWN_MASS, LOG_MISS_KNOWN, PARAM_ORDER, RANK_TIE, TIE
from .inference import play_log_likelihoods, policy_log_probs, resample
from .network_kernels import NetworkWeights
from .pimc_kernels import ASK_POLICY, HeuristicWeights, RolloutGames, distinct_cards_k, rollouts_k

POLICY_OPTIONS = ("rollout", "others", "infer", "prior")
"""Options whose value names an agent, which may hold colons itself (`ppo:RUN`)."""

ROLLOUT_THREADS_FROM = 32
"""From this many rollout games on, compiled rollouts run in chunks on `threads.spread`'s
threads, one a core: one decision's search on every core, for a single game too (a rollout
game takes 20-40 us, a chunk's hand-off about 0.1 ms; one game at a time, 16 worlds, 2 cores:
`pimc:rollout=learned` 2.8 ms a decision from 32 rollouts on, 3.0 from 64, 3.7 from 256, 4.1
on one thread)."""

POLICY_ROWS = 1024
"""Most rollout games one rollout-policy call decides, so that big tables do not push the
policy's temporaries out of the CPU caches (the heuristic, measured here: 11.3 us a row in
calls of 1024 rows, 12.0 in calls of 8192; before its speed-up of e9e9b19, 24 and 32)."""


MAX_SEARCH_WIDTH = 100_000
"""Most `worlds` x `rollouts`: a game's search rolls out that many games per choice, all at
once (100,000 x 20 choices x 1.5 KB: 3 GB), and keeps float64[58, worlds x rollouts] values."""

MAX_DRAWN = 400_000
"""Most `worlds` x `candidates` (the worlds drawn per game with inference: 400,000 engine
states of 390 bytes, 160 MB)."""

MAX_ROWS = 4_000_000
"""Most `max_rows` (rollout games advanced together: 4,000,000 x 1.5 KB, 6 GB)."""

MAX_CHOICES = 20
"""Most distinct choices of one decision (the playmaker's discard from 20 cards): the rollout
games of one game's search are at most this many times `worlds` x `rollouts`."""


def search_bytes(worlds: int, rollouts: int, max_rows: int) -> int:
    """Memory a search holds at its peak: the rollout games advanced together (`max_rows`, or
    one game's whole search where that is more) and one game's values."""
    width = int(worlds) * int(rollouts)
    rows = max(int(max_rows), MAX_CHOICES * width)
    return rows * engine.BATCH_BYTES_PER_GAME + NUM_ACTIONS * width * 8


def _number(value) -> float:
    """`value` as a float when it is a real number (not a bool), else NaN (refused by every check)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        return math.nan
    return float(value)


@dataclasses.dataclass(frozen=True)
class PIMCSettings:
    """Every option of the `pimc` agent (the module docstring's table), checked when made: a bad
    one is a one-line ValueError naming it. `pimc:worlds=32:rollout=greedy` makes one
    (`make_pimc_agent`), as does `PIMCAgent(worlds=32, rollout="greedy")`. The policy
    options (`rollout`, `others`, `infer`, `prior`) are agent names or agent objects;
    the agent builds them (an unknown name is refused there)."""

    worlds: int = 16
    """deals sampled per decision"""
    rollouts: int = 1
    """rollouts per world and action (more help only a random rollout policy, or `epsilon` > 0)"""
    rollout: str | object = "heuristic"
    """the policy of the seat's own later moves in rollouts (heuristic, greedy, random, learned, ppo:RUN; not pimc)"""
    horizon: int = 0
    """decisions rolled out after the action; 0 = to the end of the deal"""
    epsilon: float = 0.0
    """chance of a random legal move at each rollout decision"""
    prune: float = 0.0
    """> 0: after half the worlds, drop the actions worse than the best by more than `prune`
    standard errors; 0 = every action in every world"""
    others: str | object = "heuristic"
    """the policy of the other two seats in rollouts (an agent, or `rollout`: the seat's own)"""
    infer: str | object = "none"
    """a policy with action probabilities weighting the worlds by the others' plays
    (agents.inference); `auto`: the others' or the rollout policy's; `none`: uniform worlds"""
    infer_power: float = 0.5
    """how much the likelihood counts (0: uniform worlds)"""
    belief: str | object = "none"
    """a belief model weighting the worlds by where it puts each unseen card (agents.belief):
    `learned` (the shipped one), a belief file or folder, or a loaded `Belief`; `none`:
    uniform worlds"""
    belief_power: float = 0.5
    """how much the belief counts (0: uniform worlds; the best of those measured for the exact draw)"""
    belief_draw: bool = True
    """draw the worlds' cards by the belief (sample_worlds' `log_probs`); false: weight uniform
    candidates by it instead"""
    belief_exact: bool = True
    """drawing, each world with a probability proportional to the product of the belief's
    probabilities of its placements (sample_worlds' `exact`); false: each card by a key biased
    by its log-odds"""
    prior: str | object = "none"
    """a policy with action probabilities whose log-probabilities are added to the values;
    `auto`: the rollout policy's, if it has any; `none`: no prior"""
    prior_weight: float = 0.5
    """points of value per unit of log-probability of the prior"""
    candidates: int = 4
    """worlds drawn per world kept, with inference or a weighting belief"""
    max_rows: int = 60_000
    """most rollout games advanced together (memory bound)"""
    seed: int = 0
    """seeds the worlds (with the seat's observation: a decision depends on what the seat knows)"""
    cheat: bool = False
    """search the true deal, seeing every hidden card (`pimc:cheat`): for measuring the value of
    perfect inference only, never a fair player (the module docstring)"""

    def __post_init__(self) -> None:
        for label, low, high in (("worlds", 1, MAX_SEARCH_WIDTH), ("rollouts", 1, MAX_SEARCH_WIDTH),
                                 ("horizon", 0, None), ("candidates", 1, MAX_DRAWN), ("max_rows", 1, MAX_ROWS)):
            check_count(getattr(self, label), f"pimc: {label}", low, high)
        worlds, rollouts, candidates, max_rows = self.worlds, self.rollouts, self.candidates, self.max_rows
        if worlds * rollouts > MAX_SEARCH_WIDTH or worlds * candidates > MAX_DRAWN:
            raise ValueError(f"pimc: worlds x rollouts must be at most {MAX_SEARCH_WIDTH:,} and worlds x candidates at "
                             f"most {MAX_DRAWN:,} (the search of one game is held in memory at once), got worlds="
                             f"{worlds}, rollouts={rollouts}, candidates={candidates}")
        if not 0.0 <= _number(self.epsilon) <= 1.0:
            raise ValueError(f"pimc: epsilon must be a number in [0, 1], got {shorten(self.epsilon)}")
        for label in ("prune", "infer_power", "belief_power", "prior_weight"):
            value = getattr(self, label)
            if not (math.isfinite(_number(value)) and _number(value) >= 0.0):
                raise ValueError(f"pimc: {label} must be a finite number >= 0, got {shorten(value)}")
        check_fits(f"pimc: a search of {worlds} worlds x {rollouts} rollouts (max_rows={max_rows})",
                   search_bytes(worlds, rollouts, max_rows), "give fewer worlds, rollouts or max_rows")
        for label in ("worlds", "rollouts", "horizon", "candidates", "max_rows"):
            object.__setattr__(self, label, int(getattr(self, label)))
        for label in ("epsilon", "prune", "infer_power", "belief_power", "prior_weight"):
            object.__setattr__(self, label, float(getattr(self, label)))
        object.__setattr__(self, "seed", check_seed(self.seed, "pimc: seed"))
        for label in POLICY_OPTIONS:
            _check_policy(getattr(self, label), label)
        if not isinstance(self.cheat, (bool, np.bool_)):
            raise ValueError(f"pimc: cheat must be true or false, got {shorten(self.cheat)}")
        object.__setattr__(self, "cheat", bool(self.cheat))
        for label in ("belief_draw", "belief_exact"):
            if not isinstance(getattr(self, label), (bool, np.bool_)):
                raise ValueError(f"pimc: {label} must be true or false, got {shorten(getattr(self, label))}")
            object.__setattr__(self, label, bool(getattr(self, label)))
        if isinstance(self.belief, str) and not (self.belief and len(self.belief) <= 1000 and "\n" not in self.belief):
            raise ValueError(f"pimc: belief must be none, learned or a belief file or folder, got {shorten(self.belief)}")
        if self.cheat and not (isinstance(self.infer, str) and self.infer == "none"):
            raise ValueError("pimc: cheat searches the true deal; infer (weighting sampled worlds) does not "
                             "apply to it")
        if self.cheat and not (isinstance(self.belief, str) and self.belief == "none"):
            raise ValueError("pimc: cheat searches the true deal; belief (weighting sampled worlds) does not "
                             "apply to it")


DEFAULTS = {field.name: field.default for field in dataclasses.fields(PIMCSettings)}
"""The options of `pimc:NAME=VALUE:...` and their defaults ([`PIMCSettings`][])."""


class PIMCAgent:
    """The search bot of the module docstring. Needs the engine state: callers that hold one
    (`evaluate.py`, the vec env and single-seat env opponents) call [`act_on_state`][].

    With `cheat` (`pimc:cheat`) it SEES EVERY HIDDEN CARD: it searches the true deal, for
    measuring the value of perfect inference only; `cheats` is then True, its name
    `pimc:cheat`, and a table with a person refuses it (the module docstring)."""

    name = "pimc"
    cheats = False
    """True for `pimc:cheat`: it reads the hidden cards ([`sergeant_major_env.policies.sees_hidden_cards`][])"""

    def __init__(self, settings: PIMCSettings | None = None, **fields) -> None:
        """`PIMCAgent(PIMCSettings(worlds=8))` or, the same, `PIMCAgent(worlds=8)`: the
        settings, or their fields ([`PIMCSettings`][], checked there)."""
        if settings is None:
            settings = PIMCSettings(**fields)
        elif fields or not isinstance(settings, PIMCSettings):
            raise TypeError(f"PIMCAgent takes a PIMCSettings or its fields, got {settings!r} and {sorted(fields)}")
        self.settings = settings
        self.worlds, self.rollouts, self.horizon = settings.worlds, settings.rollouts, settings.horizon
        self.epsilon, self.prune, self.max_rows = settings.epsilon, settings.prune, settings.max_rows
        self.infer_power, self.candidates, self.prior_weight = settings.infer_power, settings.candidates, \
            settings.prior_weight
        self.seed = settings.seed
        self.rollout_policy = _policy(settings.rollout)
        # One policy object for both when they are the same agent: one call a rollout step.
        others = settings.others
        same = others == "rollout" or (isinstance(others, str) and others == settings.rollout)
        self.others_policy = self.rollout_policy if same else _policy(others)
        self._log_probs = self._inference_model(settings.infer)
        self.belief_power, self.belief_draw = settings.belief_power, settings.belief_draw
        self.belief_exact = settings.belief_exact
        self._belief = _belief_model(settings.belief)
        self._prior = self._prior_model(settings.prior)
        self._plan = plan_values()
        if settings.cheat:
            self.cheats, self.name = True, "pimc:cheat"
            if self.deterministic:  # every copy of the true deal rolls out alike: one is enough
                self.worlds = 1

    def _prior_model(self, prior: str | object):
        """The log-probabilities added to the action values, or None. `auto`: the rollout
        policy's, if it has probabilities; `none`: no prior."""
        return self._probabilities("prior", prior, (self.rollout_policy,))

    def _inference_model(self, infer: str | object):
        """The log-probabilities the worlds are weighted with (agents.inference), or None.
        `auto`: those of the model of the other seats (`others`), else of `rollout`, if it
        has probabilities (ppo:, learned); `none`: no inference."""
        return self._probabilities("infer", infer, (self.others_policy, self.rollout_policy))

    @staticmethod
    def _probabilities(option: str, value: str | object, auto: tuple[object, ...]):
        """The log-probability function of the policy an option names (`none`: None;
        `auto`: the first of `auto` that has probabilities, else None); a named policy
        without probabilities is refused."""
        if value == "none":
            return None
        if value == "auto":
            models = (policy_log_probs(policy) for policy in auto)
            return next((model for model in models if model is not None), None)
        policy = _policy(value)
        log_probs = policy_log_probs(policy)
        if log_probs is None:
            raise ValueError(f"pimc: {option} needs a policy with action probabilities (learned, ppo:RUN), got "
                             f"{getattr(policy, 'name', policy)!r}")
        return log_probs

    def __repr__(self) -> str:
        rollout = getattr(self.rollout_policy, "name", type(self.rollout_policy).__name__)
        return (f"PIMCAgent(worlds={self.worlds}, rollouts={self.rollouts}, rollout={rollout!r}, "
                f"horizon={self.horizon}, epsilon={self.epsilon}, prune={self.prune}, "
                f"prior={'none' if self._prior is None else 'on'}, prior_weight={self.prior_weight}, seed={self.seed}"
                f"{', cheat=True' if self.cheats else ''})")

    @property
    def deterministic(self) -> bool:
        """Each game's decision depends on what its seat knows and `seed` alone (module
        docstring) when the rollout policies do too and `epsilon` is 0
        (sergeant_major_env.policies)."""
        policies = (self.rollout_policy, self.others_policy)
        return self.epsilon == 0 and all(is_deterministic(policy) for policy in policies)

    # ------------------------------------------------------------------ interface

    def act(self, observations: np.ndarray, legal_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        raise TypeError("pimc searches the engine state: it is played by callers that hold one "
                        "(evaluate.py, the vec env and single-seat env opponents) through act_on_state")

    def act_on_state(self, state: engine.State, games: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
        """int64[len(games)]: the chosen action of the seat to act in each of `games`.

        `rng` is not used: each game's search draws from its own generator (module docstring)."""
        games = np.asarray(games, dtype=np.intp)
        legal = choices(state, games)
        actions = lowest(legal).astype(np.int64)  # the only action where there is one
        searched = np.flatnonzero(count(legal) > 1)
        if searched.size == 0:
            return actions
        compile_ahead("search", "the search's kernels")
        # Games where the seat knows exactly the same get the same search: do it once. (In a
        # duplicate table with two copies of one opponent, the two seatings that swap the
        # copies are the same game.)
        keys = self.keys(state, games[searched])
        first_of_key: dict[bytes, int] = {}
        same_as = np.array([first_of_key.setdefault(key, i) for i, key in enumerate(keys)])
        leaders = np.unique(same_as)
        chosen = np.zeros(searched.size, dtype=np.int64)
        per_game = self.worlds * self.rollouts * count(legal[searched[leaders]]).astype(np.int64)
        start = 0
        while start < leaders.size:  # chunks of at most max_rows rollout games
            stop = start + max(1, int(np.searchsorted(np.cumsum(per_game[start:]), self.max_rows, side="right")))
            chunk = searched[leaders[start:stop]]
            streams = [_stream(keys[i]) for i in leaders[start:stop]]
            chosen[leaders[start:stop]] = self.decision_values(state, games[chunk], legal[chunk], streams).argmax(axis=1)
            start = stop
        actions[searched] = chosen[same_as]
        return actions

    def keys(self, state: engine.State, games: np.ndarray) -> list[bytes]:
        """A 16-byte digest per game of `seed` and the observation of the seat to act (its
        whole information state): the seed of that game's search. `cheat`: of the whole game
        (every field of the state), since its search reads the hidden cards too."""
        view = state.take(games)
        if self.cheats:
            rows = np.concatenate([array.reshape(games.size, -1).view(np.uint8) for array in view.arrays().values()],
                                  axis=1)
        else:
            rows = observe(view, view.to_act)
        key = self.seed.to_bytes(8, "little")
        return [hashlib.blake2b(row.tobytes(), key=key, digest_size=16).digest() for row in rows]

    def streams(self, state: engine.State, games: np.ndarray) -> list[np.random.Generator]:
        """One generator per game, seeded by [`keys`][]: the same knowledge gives the same
        worlds, whatever the batch or the call."""
        return [_stream(key) for key in self.keys(state, games)]

    # ------------------------------------------------------------------ search

    def action_values(self, state: engine.State, games: np.ndarray, legal: np.ndarray,
                      streams: list[np.random.Generator]) -> tuple[np.ndarray, np.ndarray]:
        """(values, kept): float[G, 58], each legal action's mean points for the seat to act over
        the worlds it was rolled out in (-inf if illegal); bool[G, 58], the actions rolled out in
        every world (not pruned). `streams`: one generator per game ([`streams`][])."""
        worlds = self._worlds(state, games, streams)
        seat = state.to_act[games].astype(np.intp)
        later = self._later_modes(state, games, legal)
        width = self.worlds * self.rollouts
        points = np.full((games.size, NUM_ACTIONS, width), np.nan)
        kept = bits_to_bool(legal, NUM_ACTIONS).copy()
        # Noise for a random rollout policy or epsilon: one generator for the batch, drawn from the games' own.
        batch_rng = np.random.default_rng([int(stream.integers(2**63)) for stream in streams])
        for first, last in self._stages():
            game_of_pair, action_of_pair = np.nonzero(kept)
            # One rollout game per (game, action, world, rollout), worlds repeated for each action.
            world_rows = (game_of_pair[:, None] * self.worlds + np.arange(first, last)).reshape(-1)
            sims = worlds.take(np.repeat(world_rows, self.rollouts))
            per_pair = (last - first) * self.rollouts
            engine.step(sims, np.repeat(action_of_pair, per_pair))
            outcome = self._roll_out(sims, np.repeat(seat[game_of_pair], per_pair), batch_rng)
            points[game_of_pair, action_of_pair, first * self.rollouts:last * self.rollouts] = outcome.reshape(-1, per_pair)
            if last < self.worlds:
                kept &= ~self._clearly_worse(points[:, :, :last * self.rollouts] + later[:, :, None], kept)
        done = ~np.isnan(points)
        mean = np.where(done, points, 0.0).sum(axis=2) / np.maximum(done.sum(axis=2), 1)
        return np.where(done.any(axis=2), mean + later, -np.inf), kept

    def decision_values(self, state: engine.State, games: np.ndarray, legal: np.ndarray,
                        streams: list[np.random.Generator]) -> np.ndarray:
        """float[G, 58]: what the search chooses by, the highest value winning: each searched
        action's value ([`action_values`][]), plus the prior's when there is one; -inf for the
        actions not searched or pruned. `legal`: the `choices` of `games`."""
        values, kept = self.action_values(state, games, legal, streams)
        if self._prior is not None:
            values = values + self.prior_weight * self.prior_log_probs(state, games, legal)
        return np.where(kept, values, -np.inf)

    def prior_log_probs(self, state: engine.State, games: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """float[G, 58]: the prior's log-probability of each searched action (`legal`: the
        `choices` of `games`; -inf elsewhere). A card that stands for equivalent ones
        (R16) gets their probabilities summed: the policy may prefer any card of the run."""
        view = state.take(games)
        probs = np.exp(self._prior(observe(view, view.to_act), engine.legal_action_mask(view)))
        searched = bits_to_bool(legal, NUM_ACTIONS)
        cards = probs[:, :52].reshape(-1, 4, 13)
        representative = searched[:, :52].reshape(-1, 4, 13)
        merged = np.zeros_like(cards)
        owner = np.zeros(cards.shape[:2], dtype=np.intp)  # the last searched card so far, per suit
        rows, suits = np.indices(cards.shape[:2])
        for rank in range(13):
            owner = np.where(representative[:, :, rank], rank, owner)
            merged[rows, suits, owner] += cards[:, :, rank]
        probs = np.concatenate([merged.reshape(-1, 52), probs[:, 52:]], axis=1)
        # A floor keeps a legal action the policy rounds to probability 0 searchable.
        return np.where(searched, np.log(np.maximum(probs, 1e-30)), -np.inf)

    def _stages(self) -> list[tuple[int, int]]:
        """The worlds rolled out together, as (first, end) ranges: with pruning, half of them
        for every action, then the rest for the actions still in the race."""
        half = self.worlds // 2
        return [(0, half), (half, self.worlds)] if self.prune and half else [(0, self.worlds)]

    def _clearly_worse(self, points: np.ndarray, kept: np.ndarray) -> np.ndarray:
        """bool[G, 58]: kept actions whose points, world by world, fall short of the leader's by
        more than `prune` standard errors of the mean difference (a spread of at least a
        quarter point assumed: equal differences in a few worlds are no certainty)."""
        rows = np.arange(points.shape[0])
        means = np.where(kept, points.mean(axis=2), -np.inf)
        difference = points - points[rows, means.argmax(axis=1)][:, None, :]
        n = points.shape[2]
        spread = np.maximum(difference.std(axis=2, ddof=1) if n > 1 else 0.0, 0.25)
        return kept & (difference.mean(axis=2) + self.prune * spread / np.sqrt(n) < 0)

    def _later_modes(self, state: engine.State, games: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """float[G, 58]: what a mode choice leaves for later deals (0 for other actions). R8: a
        mode chosen now cannot be chosen again by this playmaker; the value of the modes
        kept is the heuristic's plan over its remaining turns."""
        later = np.zeros((games.size, NUM_ACTIONS))
        choosing = state.phase[games] == engine.MODE
        if choosing.any():
            open_modes = (legal[choosing] >> np.uint64(MODE_ACTION_OFFSET)).astype(np.int64)
            later[choosing, MODE_ACTION_OFFSET:] = self._plan[open_modes[:, None] & ~(1 << np.arange(6))[None, :]]
        return later

    def _worlds(self, state: engine.State, games: np.ndarray, streams: list[np.random.Generator]) -> engine.State:
        """`worlds` worlds per game (row `i * worlds + w`), drawn by the belief model if there
        is one (agents.belief; `belief_draw`), else uniformly. With inference, or a belief that
        weights (`belief_draw=false`), `candidates` times as many are drawn, weighted by how
        well they explain the other seats' plays (agents.inference, raised to `infer_power`)
        and by the belief model (raised to `belief_power`), and `worlds` drawn by weight.
        `cheat`: copies of the real games, the hidden cards as they are."""
        if self.cheats:
            return state.take(np.repeat(games, self.worlds))
        drawing = self._belief is not None and self.belief_draw
        log_p = self.belief_log_probs(state, games) if drawing else None
        if self._log_probs is None and (self._belief is None or drawing):
            return self._sample_worlds(state, games, streams, self.worlds, log_p, self.belief_power, self.belief_exact)
        drawn = self.worlds * self.candidates
        pool = self._sample_worlds(state, games, streams, drawn, log_p, self.belief_power, self.belief_exact)
        observer = np.repeat(state.to_act[games].astype(np.intp), drawn)
        playing = np.repeat(state.phase[games] == engine.PLAY, drawn)
        weights = np.zeros(pool.batch_size)
        if self._log_probs is not None and playing.any():
            rows = np.flatnonzero(playing)
            weights[rows] = self.infer_power * play_log_likelihoods(self._log_probs, pool.take(rows), observer[rows])
        if self._belief is not None and not drawing:
            weights += self.belief_power * self.belief_log_weights(state, games, pool, drawn)
        chosen = [i * drawn + resample(weights[i * drawn:(i + 1) * drawn], self.worlds, stream)
                  for i, stream in enumerate(streams)]
        return pool.take(np.concatenate(chosen))

    def belief_log_probs(self, state: engine.State, games: np.ndarray) -> np.ndarray:
        """float64[G, 52, 3]: the belief model's log-probability of each card in the left hand, the
        right hand and the pile, from the observation of the seat to act in each of `games`
        (what it knows; agents.belief)."""
        view = state.take(games)
        return self._belief.log_probs(observe(view, view.to_act))

    def belief_log_weights(self, state: engine.State, games: np.ndarray, pool: engine.State,
                           per_game: int) -> np.ndarray:
        """float[G * per_game]: the belief model's log-weight of each world of `pool` (row
        `i * per_game + w` a world of `games[i]`), from the observation of the seat to act in
        the real game (what it knows; agents.belief)."""
        view = state.take(games)
        unseen = knowledge(state, games)["unseen"]
        return self._belief.world_log_weights(observe(view, view.to_act), pool, view.to_act, unseen, per_game)

    @staticmethod
    def _sample_worlds(state: engine.State, games: np.ndarray, streams: list[np.random.Generator],
                       per_game: int, log_probs: np.ndarray | None = None, power: float = 1.0,
                       exact: bool = False) -> engine.State:
        """`per_game` worlds per game (row `i * per_game + w`), uniform or drawn by a belief's
        `log_probs` (sample_worlds), each game's from its own stream: one sampler call for all
        the games, the same worlds as one call per game."""
        return sample_worlds(state, games, per_game, _StreamPerGame(streams, per_game), log_probs, power, exact)

    def _roll_out(self, sims: engine.State, seat: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """float[R]: the deal's points for `seat` in each rollout game, played to the deal's end:
        in compiled rounds where every rollout policy runs compiled (`_compiled_rollouts`),
        else one Python-level step of the batch at a time."""
        plan = self._compiled_rollouts()
        if plan is not None:
            return self._roll_out_compiled(sims, seat, plan, rng)
        return self._roll_out_stepwise(sims, seat, rng)

    def _compiled_rollouts(self) -> _CompiledRollouts | None:
        """How the rollouts run compiled (`agents.pimc_kernels`), or None (the Python loop): no
        `epsilon`, and each rollout policy either the deterministic heuristic (the same weights
        when both are) or a policy network that plays its most likely action (`learned`,
        `ppo:PATH`: `agents.network_kernels`; the same network when both are)."""
        if self.epsilon:
            return None
        kinds = [_compiled_kind(policy) for policy in (self.rollout_policy, self.others_policy)]
        if any(kind is None for kind in kinds):
            return None
        heuristics = [kind for kind in kinds if isinstance(kind, np.ndarray)]
        networks = [kind for kind in kinds if not isinstance(kind, np.ndarray)]
        if len(heuristics) == 2 and not np.array_equal(*heuristics):
            return None
        if len(networks) == 2 and networks[0] is not networks[1]:
            return None
        params = heuristics[0] if heuristics else _NO_PARAMS
        return _CompiledRollouts(HeuristicWeights(params, TIE, RANK_TIE, KNOWN_MASS, LOG_MISS_KNOWN),
                                 np.array([not isinstance(kind, np.ndarray) for kind in kinds], dtype=np.int64),
                                 networks[0] if networks else _NO_NETWORK)

    def _roll_out_compiled(self, sims: engine.State, seat: np.ndarray, plan: _CompiledRollouts,
                           rng: np.random.Generator) -> np.ndarray:
        """`_roll_out` in `pimc_kernels.rollouts_k`: compiled rounds, each playing every live
        rollout game on to its next real choice, the heuristic's card kernels deciding all the
        card choices of the round and the network (if any) its seats' choices; it returns here
        only when games wait for the heuristic's exchange give, which the policy (numpy) decides.
        The same decisions, game by game, as the step-by-step loop (but for last-bit ties:
        `pimc_kernels`, `network_kernels`). The rollout games are left unfinished."""
        n = sims.batch_size
        points, decisions = np.zeros(n), np.zeros(n, dtype=np.int64)
        seat_of = np.ascontiguousarray(seat, dtype=np.int64)

        def roll_out(start: int, stop: int) -> np.ndarray:
            """Plays the rollout games start..stop-1 (their rows of `points` and `decisions`);
            returns those cut at the horizon."""
            n = stop - start
            games = RolloutGames(live=np.arange(start, stop, dtype=np.int64), pending=np.full(n, -1, dtype=np.int64),
                                 status=np.empty(n, dtype=np.int64), legal=np.empty(n, dtype=np.uint64),
                                 cut=np.empty(n, dtype=np.int64), seat=seat_of, decisions=decisions, points=points)
            n_live, n_cut = n, 0
            while n_live:
                n_live, n_cut = rollouts_k(sims.buffer, tuple(games), n_live, n_cut, self.horizon, sims.rule_code,
                                           plan.by_network, tuple(plan.heuristic), tuple(plan.network))
                if n_live:  # some games wait for the policy (an exchange give): asked here, numpy
                    rows = np.flatnonzero(games.status[:n_live] == ASK_POLICY)
                    asking = games.live[rows]
                    games.pending[rows] = self._ask(sims, asking, games.legal[rows],
                                                    sims.to_act[asking] == seat_of[asking], rng)
            return games.cut[:n_cut]

        # Many rollout games: in chunks on every core (the kernel releases the GIL; each game's
        # rows are its own, so the points are those of one call, bit for bit).
        cut_games = np.concatenate(spread(roll_out, n)) if n >= ROLLOUT_THREADS_FROM and threads() >= 2 \
            else roll_out(0, n)
        if cut_games.size:
            points[cut_games] = _partial_points(sims.take(cut_games), seat_of[cut_games])
        return points

    def _roll_out_stepwise(self, sims: engine.State, seat: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """float[R]: `_roll_out` one step of the whole batch at a time, each rollout
        decision with a real choice asked of the rollout policies (`_rollout_actions`)."""
        points = np.zeros(sims.batch_size)
        origin = np.arange(sims.batch_size)  # row of each live rollout game in ``points``
        done = sims.deal_ended.copy()
        points[done] = sims.deal_points[done, seat[done]]
        decisions = 0
        while True:
            if done.any():  # drop finished games so the rest step as a dense batch
                keep = np.flatnonzero(~done)
                if keep.size == 0:
                    return points
                sims, origin, seat = sims.take(keep), origin[keep], seat[keep]
            if self.horizon and decisions >= self.horizon:
                points[origin] = _partial_points(sims, seat)
                return points
            legal = engine.legal_bits(sims)
            engine.step(sims, self._rollout_actions(sims, legal, seat, rng), legal=legal)
            decisions += 1
            done = sims.deal_ended.copy()
            points[origin[done]] = sims.deal_points[done, seat[done]]

    def _rollout_actions(self, sims: engine.State, legal: np.ndarray, seat: np.ndarray,
                         rng: np.random.Generator) -> np.ndarray:
        """int64[R]: the rollout policies' actions in every rollout game (`seat`: the searching
        seat of each; `rollout` plays it, `others` the other two); rows without a real
        choice (one legal action, or only equivalent cards) take the lowest without asking."""
        options = choices(sims, legal=legal)
        actions = lowest(options).astype(np.int64)
        asked = np.flatnonzero(count(options) > 1)
        own = sims.to_act[asked] == seat[asked]
        for start in range(0, asked.size, POLICY_ROWS):
            rows = asked[start:start + POLICY_ROWS]
            actions[rows] = self._ask(sims, rows, legal[rows], own[start:start + POLICY_ROWS], rng)
        if self.epsilon and asked.size:
            explore = asked[rng.random(asked.size) < self.epsilon]
            noise = np.where(bits_to_bool(options[explore], NUM_ACTIONS), rng.random((explore.size, NUM_ACTIONS)), -1.0)
            actions[explore] = noise.argmax(axis=1)
        return actions

    def _ask(self, sims: engine.State, rows: np.ndarray, legal: np.ndarray, own: np.ndarray,
             rng: np.random.Generator) -> np.ndarray:
        """int64[len(rows)]: the decisions of `rollout` (rows where `own`: the searching
        seat to act) and `others` (the rest), each policy asked once for its rows."""
        mask = bits_to_bool(legal, NUM_ACTIONS)
        if self.others_policy is self.rollout_policy:
            return decide(self.rollout_policy, sims, rows, mask, rng)
        actions = np.empty(rows.size, dtype=np.int64)
        for policy, part in ((self.rollout_policy, np.flatnonzero(own)), (self.others_policy, np.flatnonzero(~own))):
            if part.size:
                actions[part] = decide(policy, sims, rows[part], mask[part], rng)
        return actions


class _CompiledRollouts(NamedTuple):
    """What `pimc_kernels.rollouts_k` needs to play the rollouts (`PIMCAgent._compiled_rollouts`)."""

    heuristic: HeuristicWeights
    """the heuristic's card weights (`heuristic_kernels.PARAM_ORDER`) and tables"""
    by_network: np.ndarray
    """int64[2]: whether the network decides for the searching seat, for the others"""
    network: NetworkWeights


_NO_PARAMS = np.zeros(len(PARAM_ORDER))
_NO_NETWORK = NetworkWeights(np.zeros((0, 1), dtype=np.float32), np.zeros(0, dtype=np.float32),
                             np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.float32),
                             np.zeros((0, 2), dtype=np.int64), np.zeros((0, 1), dtype=np.float32),
                             np.zeros(0, dtype=np.float32), 0, 1)


def _compiled_kind(policy: object) -> np.ndarray | NetworkWeights | None:
    """How a rollout policy runs compiled: the heuristic's card weights (a deterministic
    `HeuristicAgent`), a network's weights (an agent whose `compiled_network()` gives them:
    `PPOAgent` playing its most likely action), or None (only step by step)."""
    if type(policy) is HeuristicAgent:
        return None if policy.explore_modes else np.array([policy.params[name] for name in PARAM_ORDER],
                                                           dtype=np.float64)
    compiled = getattr(policy, "compiled_network", None)
    return compiled() if callable(compiled) else None


def _check_policy(policy: str | object, option: str) -> None:
    """A one-line ValueError when `option` (rollout, others, infer, prior) names a policy a
    search cannot roll out: a person, or pimc itself (`search` too: it is pimc)."""
    from .human import refuse_human

    refuse_human(policy, f"pimc: {option}={policy if isinstance(policy, str) else 'human'}",
                 "a search's rollouts cannot ask a person")
    name = policy.partition(":")[0].strip() if isinstance(policy, str) else None
    if name in ("pimc", "search"):
        alias = " (search is pimc)" if name == "search" else ""
        raise ValueError(f"pimc: the {option} policy cannot itself be pimc{alias}")


def _policy(policy: str | object) -> object:
    """The agent of a policy option (checked by `_check_policy`): a name is built by `make_agent`."""
    from .base import make_agent

    return make_agent(policy) if isinstance(policy, str) else policy


def _belief_model(belief: str | object):
    """The belief model of the `belief` option (agents.belief), or None for `none`: a name or
    path is loaded and checked (one line for anything malformed), a loaded model kept."""
    if not isinstance(belief, str):
        return belief
    if belief == "none":
        return None
    try:
        from .belief import Belief
    except ImportError:
        raise ValueError("pimc: belief needs torch and safetensors (pip install 'sergeant-major-env[train]')") from None
    try:
        return Belief(belief)
    except ValueError as error:
        raise ValueError(f"pimc: belief: {error}") from None


def _stream(key: bytes) -> np.random.Generator:
    return np.random.default_rng(int.from_bytes(key, "little"))


class _StreamPerGame:
    """The random draws of [`sample_worlds`][] for many games at once, each game's block of
    `per_game` rows drawn from that game's own generator: every draw of the sampler has
    one row per world, so each stream draws exactly what a call for its game alone would
    (the same worlds), without one sampler call per game."""

    def __init__(self, streams: list[np.random.Generator], per_game: int) -> None:
        self.streams, self.per_game = streams, per_game

    def _blocks(self, draw, size) -> np.ndarray:
        shape = (size,) if np.isscalar(size) else tuple(size)
        if shape[0] != len(self.streams) * self.per_game:
            raise ValueError(f"expected {len(self.streams)} x {self.per_game} rows, got a draw of shape {shape}")
        return np.concatenate([draw(stream, (self.per_game, *shape[1:])) for stream in self.streams])

    def random(self, size) -> np.ndarray:
        return self._blocks(lambda stream, shape: stream.random(shape), size)

    def gumbel(self, size) -> np.ndarray:
        return self._blocks(lambda stream, shape: stream.gumbel(size=shape), size)

    def integers(self, low, high, size, dtype=np.int64) -> np.ndarray:
        return self._blocks(lambda stream, shape: stream.integers(low, high, size=shape, dtype=dtype), size)


def choices(state: engine.State, games: np.ndarray | None = None, legal: np.ndarray | None = None) -> np.ndarray:
    """uint64[G]: the legal actions of the seat to act in `games` (default all), equivalent
    cards merged (`distinct_cards`) where the card leaves play (discards, R16 in play);
    an exchanged card goes to another hand, so gives and returns keep every card (R21).
    `legal`: `engine.legal_bits(state, games)` when the caller has it."""
    select = slice(None) if games is None else games
    if legal is None:
        legal = engine.legal_bits(state, games)
    on_table = cards_to_bits(state.trick[select])
    played = np.bitwise_or.reduce(state.played[select], axis=1) & ~on_table
    leaves_play = (state.phase[select] == engine.DISCARD) | (state.phase[select] == engine.PLAY)
    return np.where(leaves_play, distinct_cards(legal, played), legal)


def distinct_cards(legal: np.ndarray, played: np.ndarray) -> np.ndarray:
    """`legal` without the cards that are equivalent to a lower legal card of the same suit:
    when every card between them was played in earlier tricks, the two take and lose the
    same tricks (R16), so only the lowest of each such run needs searching (mode actions
    are kept). `played`: the cards of completed tricks (the current trick's still count).
    The rule is `pimc_kernels.distinct_cards_k`'s, its Python code run on whole arrays."""
    return distinct_cards_k.py_func(np.asarray(legal, dtype=np.uint64), np.asarray(played, dtype=np.uint64))


def _partial_points(state: engine.State, seat: np.ndarray) -> np.ndarray:
    """Points of an unfinished deal, the tricks still to play shared in proportion to the targets."""
    rows = np.arange(state.batch_size)
    minimum = state.mode == engine.MINIMUM
    target = engine.targets(state.dealer, state.mode)[rows, seat].astype(np.float64)
    played = state.tricks_won.sum(axis=1)
    won = state.tricks_won[rows, seat] + target * (16 - played) / 16
    return np.where(minimum, target - won, won - target)


def make_pimc_agent(argument: str | None) -> PIMCAgent:
    """`pimc` or `pimc:worlds=32:rollout=greedy:...` (see the module docstring); `pimc:cheat`
    sees every hidden card (measurement only)."""
    return PIMCAgent(PIMCSettings(**agent_options("pimc", argument or "", DEFAULTS, POLICY_OPTIONS)))


def _option_items(text: str) -> list[tuple[str, str]]:
    """pimc's `NAME=VALUE` pieces (`agents.base.option_items`): a piece that does not start
    a known option continues the value of a policy option (`rollout=ppo:runs/x`)."""
    return option_items("pimc", text, DEFAULTS, POLICY_OPTIONS)
