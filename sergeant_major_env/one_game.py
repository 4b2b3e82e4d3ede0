"""One game, one kernel call a decision: the one way every view of one game steps it.

The PettingZoo AEC env, the Gymnasium single-seat env, the OpenSpiel game, `play` and the
web page step one game at a time, all through a [`OneGame`][]. Through the batched API a
decision there is five calls ([`engine.legal_bits`][], the mask, [`observation.observe`][],
the action, [`engine.step`][]), each with numpy's and numba's fixed costs, which at one game
are the whole cost. A [`OneGame`][] keeps a batch-of-one [`State`][] together with its
decision's legal actions, action mask and the acting seat's observation, and
[`OneGame.step`][] does all of it in one compiled call: check the action against the legal
actions (as [`engine.step`][] does, the state unchanged on a refusal), apply it with the
engine's own rules kernel (`engine.apply_action_k`), then compute the next decision's legal
actions, mask and observation (`observation.observe_row_k`, the same code as
[`observation.observe`][]). Same games, same numbers as the
batched API, bit for bit (tests/test_one_game.py).

```pycon
>>> from sergeant_major_env import Rules, engine
>>> from sergeant_major_env.one_game import OneGame
>>> game = OneGame(engine.init([7], Rules(num_deals=1)))
>>> int(game.mask.sum())        # the playmaker's six modes (R8)
6
>>> result = game.step(52)      # mode ♠
>>> game.observation.shape
(919,)
>>> result                      # seat 0, the playmaker, discards (R17, section 5)
StepResult(to_act=0, phase=3, legal_count=20, deal_ended=False, game_over=False, points=None)
>>> engine.DECISIONS[result.phase]
'discard'
>>> try:
...     game.step(53)           # a mode where a card is discarded: refused, the game unchanged
... except engine.IllegalActionError as refusal:
...     print(str(refusal).split(":")[0])
illegal action 53 (mode C) for seat 0 in decision 'discard'

```

## What a step returns: `StepResult`

[`OneGame.step`][], [`OneGame.refresh`][] and [`OneGame.deal`][] return a [`StepResult`][],
an immutable record saying what follows (read from the kernel's answer, never from
the state by the view):

| field | type | what |
|---|---|---|
| `to_act` | `int` | the seat to act next, 0..2; -1 once the game is over |
| `phase` | `int` | the decision it faces, an index into `engine.DECISIONS` (0 mode .. 4 play); `engine.OVER` (5) once the game is over |
| `legal_count` | `int` | how many actions are legal; their ids, ascending, are `game.legal_ids[:legal_count]` |
| `deal_ended` | `bool` | this step ended a deal (R23, R24; the next deal is dealt, unless the game is over) |
| `game_over` | `bool` | the game is over (its last deal ended): `phase == engine.OVER` (with `autoreset`, never: the next game has started) |
| `points` | `tuple[int, int, int]` or `None` | the ended deal's points by seat (R23, R24) when `deal_ended`, else `None` |

The results are frozen dataclasses (with slots: a field costs next to nothing to read), made
once and shared: the same object for the same decision. A refused
action is no result: [`OneGame.step`][] raises [`engine.IllegalActionError`][]
(a `ValueError`) whose message is the engine's one line (the rule id, why, the legal
actions: `illegal action 51 (A♦) for seat 0 in decision 'mode': R8: ...`), the game
unchanged. A finished game ignores its action and returns its result again.

The arrays `legal` (uint64[1]), `mask` (int8[58]), `legal_ids` (int8[58]: the legal
actions' ids first, `legal_count` of them) and `observation` (float32[919], the view of the
seat to act, or of `seat` when one is fixed) are rewritten in place at every step: copy
them to keep them. After changing `state` by other means (`engine.set_cards`,
a reset) or the attributes `seat` and `autoreset`, call [`OneGame.refresh`][].
"""

from __future__ import annotations

import dataclasses
from collections import deque

import numpy as np

from .cards import MODE_ACTION_OFFSET, NUM_ACTIONS, NUM_CARDS
from .engine import DEAL_ENDED as _DEAL_ENDED_FIELD
from .engine import (DEALER, DEALT, DISCARD, MODE, MODES_USED, OVER, PHASE, PLAY, TALON_CARDS, TO_ACT, TRICK, HANDS,
                     MODE_, IllegalActionError, State, apply_action_k, illegal_action_message, install_deal_k,
                     legal_actions_k, state_arrays_k)
from .jit import BUFFER, INT, announce_compiling, buffer_view, compile_ahead, kernel
from .limits import shorten
from .observation import CARD_SETS_WIDTH, OBSERVATION_SIZE, SEGMENTS, observe_row_k


# The arrays a OneGame keeps beside its state, as views of one uint8 buffer (one argument for
# the kernel to dispatch, not eight): byte offsets of each. The settings (autoreset, the rule
# code, the fixed seat or -1) travel in it too: numba's dispatch costs about 50 ns an argument.
# The one-game kernels allocate nothing and compile without numba's reference counting
# (counted=False): with it, the views of the state's fields cost about 0.5 us a call, more
# than a decision's rules (measured on the 2-core machine: 0.26 us a refresh without, 1.2 us with).
_SETTINGS, _LEGAL, _PLANES, _KEYS, _ORDER = 0, 3 * 8, 4 * 8, 18 * 8, 70 * 8
_OBSERVATION = 122 * 8
_MASK = _OBSERVATION + 4 * OBSERVATION_SIZE
_IDS = _MASK + NUM_ACTIONS
_SCRATCH_BYTES = _IDS + NUM_ACTIONS
_TO_ACT_SEAT, _NO_SEAT = -1, -2  # the settings' seat: the seat to act, or nobody (observing=False)

# The kernels' answer, a status: what the decision after a step is, packed in one int (numba
# returns one int faster than a tuple). `_unpacked` is the one place it is read.
_REFUSED = 1 << 12  # the action was refused, nothing changed: one past the largest status
_SEAT_MASK = 3  # status & 3: the seat to act + 1 (0 once the game is over)
_PHASE_SHIFT, _PHASE_MASK = 2, 7  # status >> 2 & 7: the phase (engine.DECISIONS' index, engine.OVER)
_DEAL_ENDED_BIT = 32  # the step ended a deal (state.deal_ended)
_LEGAL_COUNT_SHIFT = 6  # status >> 6: the number of legal actions


@dataclasses.dataclass(frozen=True, slots=True)
class StepResult:
    """What follows a step of one game (the module docstring's table): the seat to act
    (-1 once over), the phase (`engine.DECISIONS`' index, `engine.OVER`), the number of legal
    actions (their ids: `OneGame.legal_ids[:legal_count]`), whether the step ended a deal,
    whether the game is over, and the ended deal's points by seat (R23, R24; else `None`).
    Frozen, with slots: reading a field costs next to nothing."""

    to_act: int
    phase: int
    legal_count: int
    deal_ended: bool
    game_over: bool
    points: tuple[int, int, int] | None = None


def _unpacked(status: int) -> StepResult:
    """The result a kernel's status says (without the points, which the state holds)."""
    phase = status >> _PHASE_SHIFT & _PHASE_MASK
    return StepResult((status & _SEAT_MASK) - 1, phase, status >> _LEGAL_COUNT_SHIFT, bool(status & _DEAL_ENDED_BIT),
                      phase == OVER)


_RESULTS: list[StepResult | None] = [None] * (_REFUSED + 1)
"""`_unpacked(status)` by status, made the first time the status occurs (`OneGame._result`): a
step looks its result up (a list is the fastest lookup; a few hundred statuses occur), and only
a deal's end has one per points (`_DEAL_RESULTS`). `_RESULTS[_REFUSED]` stays None."""
_DEAL_RESULTS: dict[tuple[int, tuple[int, int, int]], StepResult] = {}
"""The results of a deal's end by status and points, each made once (few: the next deal
starts with the mode, R8, and a deal's points are few, R23, R24)."""


@kernel(ahead="one game", seconds=30, signature=(INT, BUFFER, BUFFER), counted=False)  # scratch: bytes too
def _one_step_k(action, buffer, scratch) -> int:
    """Game 0 of `buffer`: with `action` >= 0, refuse it (`_REFUSED`, nothing changed)
    unless the game is over or the legal actions in `scratch` hold it, else apply it; then the
    decision's legal actions and mask and, when the seat to act (or the fixed seat, if >= 0) is
    a seat, its observation into `scratch`; returns the status (`_REFUSED`, or what
    `_unpacked` reads). `action` -1 only refreshes."""
    settings = buffer_view(scratch, _SETTINGS, np.int64, 3)  # autoreset, rules, the fixed seat or -1
    legal = buffer_view(scratch, _LEGAL, np.uint64, 1)
    keys, order = buffer_view(scratch, _KEYS, np.uint64, 52), buffer_view(scratch, _ORDER, np.int64, 52)  # dealing's
    s = state_arrays_k(buffer)
    if action >= 0 and s[PHASE][0] != OVER:
        if action >= 64 or not (legal[0] >> np.uint64(action)) & np.uint64(1):
            return _REFUSED
        apply_action_k(s, 0, action, settings[0] != 0, 1, settings[1], keys, order)
    return _decision_k(s, buffer, scratch)


@kernel(inline=True, counted=False)
def _decision_k(s, buffer, scratch) -> int:
    """The decision of game 0 (the state's fields `s`, its `buffer`) into `scratch`: its legal
    actions (as bits and as ids) and mask and, when the seat to act (or the fixed seat, if >= 0; none if -2) is a
    seat, its observation; returns the status (`_unpacked`)."""
    settings = buffer_view(scratch, _SETTINGS, np.int64, 3)  # autoreset, rules, the fixed seat, -1 or -2
    legal = buffer_view(scratch, _LEGAL, np.uint64, 1)
    planes = buffer_view(scratch, _PLANES, np.uint64, (1, 14))  # the observation's card sets
    observation = buffer_view(scratch, _OBSERVATION, np.float32, OBSERVATION_SIZE)
    mask = buffer_view(scratch, _MASK, np.uint8, NUM_ACTIONS)
    ids = buffer_view(scratch, _IDS, np.int8, NUM_ACTIONS)
    bits = legal_actions_k(s[PHASE], s[TO_ACT], s[HANDS], s[MODES_USED], s[TRICK], s[MODE_], 0, settings[1])
    legal[0] = bits
    count = 0
    for a in range(mask.size):
        bit = (bits >> np.uint64(a)) & np.uint64(1)
        mask[a] = bit
        if bit:
            ids[count] = a
            count += 1
    to_act = np.int64(s[TO_ACT][0])
    seat = to_act if settings[2] == _TO_ACT_SEAT else settings[2]
    if seat >= 0:
        observe_row_k(0, seat, state_arrays_k(buffer), observation, planes[:0], planes[0])
    return ((to_act + 1) | np.int64(s[PHASE][0]) << _PHASE_SHIFT | (_DEAL_ENDED_BIT if s[_DEAL_ENDED_FIELD][0] else 0)
            | np.int64(count) << _LEGAL_COUNT_SHIFT)


@kernel(counted=False)
def _one_deal_k(cards, buffer, scratch) -> int:
    """Game 0's current deal started with `cards` (int8[52] in dealing order, -1 for cards not
    dealt yet): card k < 48 to seat (dealer + 1 + k) % 3 as its card k // 3 (R10: one at a time
    clockwise from the left of the dealer), the last four to the talon, then `engine.set_cards`'
    start of the deal; then the decision into `scratch` as `_one_step_k`; returns the status."""
    s = state_arrays_k(buffer)
    dealer = np.int64(s[DEALER][0])
    for k in range(48):
        s[DEALT][0, (dealer + 1 + k) % 3, k // 3] = cards[k]
    for k in range(4):
        s[TALON_CARDS][0, k] = cards[48 + k]
    install_deal_k(s, 0)
    return _decision_k(s, buffer, scratch)


@kernel(counted=False)
def _one_observe_k(seat, out, buffer, scratch) -> None:
    """The observation of `seat` (0, 1 or 2) in game 0 into `out` (float32[OBSERVATION_SIZE])."""
    planes = buffer_view(scratch, _PLANES, np.uint64, (1, 14))
    observe_row_k(0, seat, state_arrays_k(buffer), out, planes[:0], planes[0])


def compile_kernels() -> None:
    """Compiles what a one-game view needs (the start of a game and `_one_step_k`) where
    the disk cache lacks it, on every core at once (`jit.compile_ahead`; once per process,
    one line on stderr). A view calls it before `engine.init` makes its first game, which would
    otherwise compile the batched game's kernels."""
    compile_ahead("one game", "the one-game kernels")


class OneGame:
    """A batch-of-one engine state with its decision's legal actions, mask and observation,
    advanced by one compiled call a decision (module docstring).

    `state`: a [`State`][] of one game (it is stepped in place). `seat`: observe this
    seat at every decision instead of the seat to act (a seat's own table, as the single-seat
    env has). `autoreset`: as [`engine.step`][]'s. `observing=False`: observe no seat at the
    steps (a view that asks [`OneGame.observe`][] for the seat it wants, as the OpenSpiel game).
    `arguments`: the state's buffer and the decision's arrays, as the kernels take them."""

    def __init__(self, state: State, seat: int | None = None, autoreset: bool = False,
                 observing: bool = True) -> None:
        if not isinstance(state, State) or state.batch_size != 1:
            raise ValueError(f"OneGame needs an engine State of one game, got "
                             f"{type(state).__name__}{'' if not isinstance(state, State) else f' of {state.batch_size} games'}")
        if seat is not None and (type(seat) is not int or not 0 <= seat <= 2):
            raise ValueError(f"OneGame: seat must be 0, 1, 2 or None, got {seat!r}")
        self.state = state
        self.seat = -1 if seat is None else seat
        self.autoreset = bool(autoreset)
        self.observing = bool(observing)
        self._views(np.zeros(_SCRATCH_BYTES, dtype=np.uint8))
        compile_kernels()
        self.refresh()

    def _views(self, scratch: np.ndarray) -> None:
        """Keep `scratch` and its views (`legal`, `observation`, `mask`)."""
        self._scratch = scratch
        self.legal = scratch[_LEGAL:_PLANES].view(np.uint64)
        self.observation = scratch[_OBSERVATION:_MASK].view(np.float32)
        self.mask = scratch[_MASK:_IDS].view(np.int8)
        self.legal_ids = scratch[_IDS:].view(np.int8)
        self.arguments = (self.state.buffer, scratch)

    def __getstate__(self) -> dict:
        """Pickling and `copy.deepcopy` keep the state and the settings; the arrays (views of
        one scratch buffer) are made again from the state."""
        return {"state": self.state, "seat": self.seat, "autoreset": self.autoreset, "observing": self.observing}

    def __setstate__(self, saved: dict) -> None:
        self.__init__(saved["state"], None if saved["seat"] < 0 else saved["seat"], saved["autoreset"],
                      saved.get("observing", True))

    def copy(self) -> "OneGame":
        """An independent copy (the state and the decision's arrays copied, no kernel call)."""
        new = object.__new__(OneGame)
        new.state, new.seat, new.autoreset, new.observing = self.state.copy(), self.seat, self.autoreset, self.observing
        new._views(self._scratch.copy())
        return new

    def refresh(self) -> StepResult:
        """Recompute the legal actions, mask and observation from `state` (after changing it,
        or its `rules`); returns the decision's [`StepResult`][] (`deal_ended` and `points`:
        the state's last step's)."""
        seat = self.seat if self.observing else _NO_SEAT
        self._scratch[_SETTINGS:_LEGAL].view(np.int64)[:] = (self.autoreset, self.state.rule_code, seat)
        self.arguments = (self.state.buffer, self._scratch)
        return self._result(_one_step_k(-1, *self.arguments))

    def step(self, action: int) -> StepResult:
        """Apply `action` (an int 0..57) to the game and return what follows, a
        [`StepResult`][]; the next decision's legal actions, mask and observation are then in
        place. A refused action raises [`engine.IllegalActionError`][] (the engine's one line:
        the rule, why, the legal actions) with the game unchanged; a finished game ignores its
        action."""
        if type(action) is not int or not 0 <= action < NUM_ACTIONS:
            action = self._checked_action(action)
        status = _one_step_k(action, *self.arguments)
        result = _RESULTS[status]
        if result is None or result.deal_ended:  # a refusal, a status seen first, a deal's end
            return self._result(status, action)
        return result

    def _checked_action(self, action) -> int:
        """`action` as an int 0..57, or -1 (refresh only) for an id out of range in a finished
        game; a ValueError line for what is not an integer, the engine's refusal for an id
        out of range."""
        if type(action) is not int:
            if not isinstance(action, (int, np.integer)) or isinstance(action, bool):
                raise ValueError(f"OneGame.step: action must be an int 0..{NUM_ACTIONS - 1}, got {action!r}")
            action = int(action)
        if 0 <= action < NUM_ACTIONS:
            return action
        if self.state.phase[0] == OVER:
            return -1
        raise IllegalActionError(illegal_action_message(self.state, 0, action, 1))

    def _result(self, status: int, action: int = -1) -> StepResult:
        """The [`StepResult`][] of a kernel's status, kept in `_RESULTS` the first time, with
        the deal's points (R23, R24) at a deal's end (`_DEAL_RESULTS`); for `_REFUSED`, the
        refusal of `action` ([`engine.IllegalActionError`][], the engine's one line)."""
        if status == _REFUSED:
            raise IllegalActionError(illegal_action_message(self.state, 0, action, 1))
        result = _RESULTS[status]
        if result is None:
            result = _RESULTS[status] = _unpacked(status)
        if result.deal_ended:
            points = tuple(self.state.deal_points[0].tolist())
            ended = _DEAL_RESULTS.get((status, points))
            if ended is None:
                ended = _DEAL_RESULTS[status, points] = dataclasses.replace(result, points=points)
            return ended
        return result

    def deal(self, cards: np.ndarray) -> StepResult:
        """Start the current deal with `cards` instead of the engine's own (a view whose deal
        comes from elsewhere, as OpenSpiel's chance nodes): int8[52] in dealing order, -1 for
        the cards not dealt yet (a deal being dealt). Card k < 48 goes to seat
        (dealer + 1 + k) % 3 as its card k // 3 (R10: one at a time clockwise from the left of
        the dealer), the last four to the talon; the deal starts as with `engine.set_cards`,
        the decision's arrays follow. Returns the decision's [`StepResult`][] (`deal_ended`
        False: no step ended a deal). Cards that are not
        distinct card ids 0..51 (or -1) are one ValueError line, the game unchanged."""
        cards = np.asarray(cards)
        if cards.shape != (NUM_CARDS,) or cards.dtype.kind not in "iu" or cards.min() < -1 or cards.max() >= NUM_CARDS \
                or np.unique(cards[cards >= 0]).size != np.count_nonzero(cards >= 0):
            raise ValueError(f"OneGame.deal: cards must be {NUM_CARDS} distinct card ids 0..{NUM_CARDS - 1} in dealing "
                             f"order (-1 for a card not dealt yet), got {shorten(cards)}")
        return self.deal_checked(np.ascontiguousarray(cards, dtype=np.int8))

    def deal_checked(self, cards: np.ndarray) -> StepResult:
        """[`OneGame.deal`][] of cards known good (int8[52], C-contiguous), unchecked: the
        OpenSpiel game's chance outcomes, which it checks itself, come here."""
        return self._result(_one_deal_k(cards, *self.arguments) & ~_DEAL_ENDED_BIT)  # a deal starts: no step ended one

    def observe(self, seat: int, out: np.ndarray) -> np.ndarray:
        """The observation of `seat` (0, 1 or 2; [`observation.observe`][]'s numbers) written
        into `out` (float32[OBSERVATION_SIZE], C-contiguous); returns `out`."""
        if type(seat) is not int or not 0 <= seat <= 2:
            raise ValueError(f"OneGame.observe: seat must be 0, 1 or 2, got {shorten(seat)}")
        if not (isinstance(out, np.ndarray) and out.dtype == np.float32 and out.shape == (OBSERVATION_SIZE,)
                and out.flags.c_contiguous and out.flags.writeable):
            raise ValueError(f"OneGame.observe: out must be a writeable C-contiguous float32[{OBSERVATION_SIZE}] "
                             f"array, got {type(out).__name__} {getattr(out, 'dtype', '')} {np.shape(out)}")
        _one_observe_k(seat, out, *self.arguments)
        return out

    @property
    def to_act(self) -> int:
        """The seat to act, -1 once the game is over."""
        return int(self.state.to_act[0])


# ============================================================================ a seat's recall

LOT, CARD, START = -1, -2, -3
"""Event kinds of a seat's record besides the engine's decision phases (0..4): the lot (R4),
a card dealt (R10), the start of a record made mid-game (what each seat sees then)."""
MAX_EXCHANGED = 13
"""The most cards exchanged after one deal: a giver's points (R19), at most 13."""
MAX_EXCHANGE_STEPS = 2 * MAX_EXCHANGED
"""The most exchange steps of a deal: each exchanged card a give and at most one free return (R21)."""
RECALL_PIECES = (("roles", 9), ("mode", 6), ("hand_arrival", 52), ("talon", 52), ("discards", 52),
                 ("played", 156), ("card_trick", 52), ("trick_leaders", 48), ("exchange_steps", 6 * MAX_EXCHANGE_STEPS),
                 ("exchange_given", 52), ("exchange_received", 52))
"""A seat's recall of one deal, float32 (the OpenSpiel game's information state, its module
docstring): the roles (per relative seat, one-hot), the mode, own cards by order of arrival
(the k-th event that brought cards into the hand gives them k / 32), the talon, own discards
in order (k / 4), who played each card (per relative seat), in which trick ((t + 1) / 16), who
led each trick, which pairs handed a card at each exchange step (6 per step), and the step of
each card the seat gave or received ((step + 1) / MAX_EXCHANGE_STEPS)."""
RECALL_BLOCK = sum(size for _, size in RECALL_PIECES)
RECALL_OFFSETS = dict(zip((name for name, _ in RECALL_PIECES),
                          np.cumsum([0, *(size for _, size in RECALL_PIECES[:-1])]).tolist()))
KEPT_PLANES = 11
"""The observation's card planes a record compares (hand .. exchange_received; the last three are derived)."""
KEPT_REST = SEGMENTS["winning_seat"].start - CARD_SETS_WIDTH
"""The observation's entries after its card planes that a record compares (those before the derived ones)."""
_REST_WIDTH = OBSERVATION_SIZE - CARD_SETS_WIDTH
(_R_ROLES, _R_MODE, _R_HAND_ARRIVAL, _R_TALON, _R_DISCARDS, _R_PLAYED, _R_CARD_TRICK, _R_TRICK_LEADERS, _R_STEPS,
 _R_GIVEN, _R_RECEIVED) = RECALL_OFFSETS.values()
_HAND, _TALON, _GIVEN, _RECEIVED = (SEGMENTS[name].start // 52 for name in (
    "hand", "talon", "exchange_given", "exchange_received"))  # their planes
_EXCHANGE_DONE = SEGMENTS["exchange_done"].start - CARD_SETS_WIDTH  # its place after the planes

# A record's arrays, as views of one uint8 buffer: byte offsets (see Recall).
_R_COUNTS = 0                                   # int64[3, 4]
_R_DEAL = _R_COUNTS + 3 * 4 * 8                 # int64[1]
_R_PLANES = _R_DEAL + 8                         # uint64[3, KEPT_PLANES]
_R_ROOM = _R_PLANES + 3 * KEPT_PLANES * 8       # uint64[14]
_R_REST = _R_ROOM + 14 * 8                      # float32[3, KEPT_REST]
_R_ROW = _R_REST + 3 * KEPT_REST * 4            # float32[_REST_WIDTH]
_RECALL_BYTES = _R_ROW + _REST_WIDTH * 4


@kernel(inline=True, counted=False)
def _mark_cards_k(block, start, cards, value) -> None:
    """`block[start + c] = value` for each card c of the set `cards`."""
    for c in range(52):
        if (cards >> np.uint64(c)) & np.uint64(1):
            block[start + c] = value


@kernel(inline=True, counted=False)
def _fold_k(p, kind, actor, action, dealer, before, after, rest_before, rest_after, count, block) -> None:
    """Seat `p`'s recall `block` of the event's deal (RECALL_PIECES) updated with one event:
    its kind, actor, action and dealer, the seat's card planes and other entries `before` and
    `after` it; `count`: the deal's events that brought cards into the hand, own discards,
    plays and exchange steps so far."""
    for seat in range(3):
        block[_R_ROLES + 3 * ((seat - p + 3) % 3) + (seat - dealer + 3) % 3] = 1
    if kind == MODE:
        block[_R_MODE + action - MODE_ACTION_OFFSET] = 1  # the mode is announced (R8)
    elif kind == PLAY:  # cards are played face up (R12)
        relative, trick = (actor - p + 3) % 3, count[2] // 3
        block[_R_PLAYED + 52 * relative + action] = 1
        block[_R_CARD_TRICK + action] = (trick + 1) / 16
        if count[2] % 3 == 0:
            block[_R_TRICK_LEADERS + 3 * trick + relative] = 1
        count[2] += 1
    elif kind == DISCARD and actor == p:  # only the playmaker sees its discards
        count[1] += 1
        block[_R_DISCARDS + action] = count[1] / 4
    exchanged = False
    added = after[_HAND] & ~before[_HAND]
    if added:
        count[0] += 1
        _mark_cards_k(block, _R_HAND_ARRIVAL, added, count[0] / 32)
    _mark_cards_k(block, _R_TALON, after[_TALON] & ~before[_TALON], 1.0)
    step = (count[3] + 1) / MAX_EXCHANGE_STEPS
    for plane, start in ((_GIVEN, _R_GIVEN), (_RECEIVED, _R_RECEIVED)):
        added = after[plane] & ~before[plane]
        if added:
            _mark_cards_k(block, start, added, step)
            exchanged = True
    for i in range(6):  # R22: the public counts of each pair
        if rest_after[_EXCHANGE_DONE + i] != rest_before[_EXCHANGE_DONE + i] and count[3] < MAX_EXCHANGE_STEPS:
            block[_R_STEPS + 6 * count[3] + i] = 1
            exchanged = True
    if exchanged:
        count[3] += 1


@kernel(counted=False)
def _recall_k(kind, actor, action, deal, dealer, fold, buffer, record, block) -> None:
    """One event in each seat's record (`record`, a [`Recall`][]'s buffer) after it happened in
    game 0 of `buffer`: each seat's observation now (its card planes and other entries) becomes
    the record's, and with `fold` each seat's row of `block` (float32[3, RECALL_BLOCK], the
    event's deal) is updated first (`_fold_k`)."""
    counts = buffer_view(record, _R_COUNTS, np.int64, (3, 4))
    counted = buffer_view(record, _R_DEAL, np.int64, 1)
    planes = buffer_view(record, _R_PLANES, np.uint64, (3, KEPT_PLANES))
    room = buffer_view(record, _R_ROOM, np.uint64, (1, 14))
    rest = buffer_view(record, _R_REST, np.float32, (3, KEPT_REST))
    row = buffer_view(record, _R_ROW, np.float32, _REST_WIDTH)
    fields = state_arrays_k(buffer)
    if fold and counted[0] != deal:  # the counts are the deal's
        for p in range(3):
            for k in range(4):
                counts[p, k] = 0
        counted[0] = deal
    for p in range(3):
        observe_row_k(0, p, fields, row, room[:0], room[0])
        if fold:
            _fold_k(p, kind, actor, action, dealer, planes[p], room[0], rest[p], row, counts[p], block[p])
        for i in range(KEPT_PLANES):
            planes[p, i] = room[0, i]
        for i in range(KEPT_REST):
            rest[p, i] = row[i]


class Recall:
    """What each seat of a game has seen, as the events of the game reach it (the OpenSpiel
    game's information state): each seat's observation at the last event, as its card planes
    (`planes`, uint64[3, KEPT_PLANES]) and other entries (`rest`, float32[3, KEPT_REST]),
    zeros before the first event, and the counts the current deal's recall needs (`counts`,
    per seat: events that brought cards into the hand, own discards, plays, exchange steps).
    [`Recall.event`][] reads the game after an event (one kernel call) and updates the
    seats' rows of the deal's recall block (RECALL_PIECES)."""

    def __init__(self, buffer: np.ndarray | None = None) -> None:
        self.buffer = np.zeros(_RECALL_BYTES, dtype=np.uint8) if buffer is None else buffer
        self.counts = self.buffer[_R_COUNTS:_R_DEAL].view(np.int64).reshape(3, 4)
        self.counted = self.buffer[_R_DEAL:_R_PLANES].view(np.int64)  # the deal of the counts
        self.planes = self.buffer[_R_PLANES:_R_ROOM].view(np.uint64).reshape(3, KEPT_PLANES)
        self.rest = self.buffer[_R_REST:_R_ROW].view(np.float32).reshape(3, KEPT_REST)

    def copy(self) -> "Recall":
        return Recall(self.buffer.copy())

    def __getstate__(self) -> dict:
        return {"buffer": self.buffer}

    def __setstate__(self, saved: dict) -> None:
        self.__init__(saved["buffer"])

    def event(self, game: OneGame, kind: int, actor: int, action: int, deal: int, dealer: int,
              block: np.ndarray | None) -> None:
        """An event that just happened in `game`: its kind (an engine decision phase, or
        LOT, CARD, START), the seat that acted (-1: chance), the action, and the deal and
        dealer it happened in; `block` (float32[3, RECALL_BLOCK], the deal's recall of each
        seat) is updated unless None (the lot, a start, a deal past the game's)."""
        fold = block is not None
        _recall_k(kind, actor, action, deal, dealer, fold, game.state.buffer, self.buffer,
                  block if fold else _NO_BLOCK)


_NO_BLOCK = np.zeros((3, RECALL_BLOCK), dtype=np.float32)


# ============================================================================ tensors as lists

@kernel(counted=False)
def _patch_k(new, mirror, start, index, numbers) -> int:
    """The entries of `new` that differ, bit for bit, from `mirror[start:]`: copied there,
    their places in the mirror into `index` and their values into `numbers`; how many."""
    changed = 0
    bits, kept = new.view(np.uint32), mirror.view(np.uint32)
    for i in range(new.size):
        if bits[i] != kept[start + i]:
            mirror[start + i] = new[i]
            index[changed] = start + i
            numbers[changed] = new[i]
            changed += 1
    return changed


class TensorList:
    """A float32 tensor handed out as Python lists (as OpenSpiel's `observation_tensor` and
    `information_state_tensor` return them), kept from one ask to the next: only the entries
    that changed are converted (a new list of the 13,285 floats of an 18-deal information state
    takes about 160 us; a copy of a kept one about 9 us). `patch` takes a segment of at most
    `room` floats at a time."""

    __slots__ = ("values", "mirror", "index", "numbers")

    def __init__(self, size: int, room: int) -> None:
        self.values = [0.0] * size  # what the list holds
        self.mirror = np.zeros(size, dtype=np.float32)  # the same, as float32
        self.index, self.numbers = np.zeros(room, dtype=np.int64), np.zeros(room, dtype=np.float32)

    def patch(self, start: int, new: np.ndarray) -> None:
        """Entries `start` .. `start + new.size - 1` are `new` (float32, C-contiguous) now."""
        changed = _patch_k(new, self.mirror, start, self.index, self.numbers)
        if changed:  # values[i] = value for each, in C (a deque of length 0 drops what map returns)
            deque(map(self.values.__setitem__, self.index[:changed].tolist(), self.numbers[:changed].tolist()), 0)

    def list(self) -> list[float]:
        """The tensor as a new list."""
        return self.values.copy()


def announce_compiling_views() -> None:
    """One line on stderr, once per process, when the kernels of [`OneGame.deal`][],
    [`OneGame.observe`][], [`Recall.event`][] and [`TensorList.patch`][] are not in the disk
    cache yet (they compile at their first call)."""
    announce_compiling((_one_deal_k, _one_observe_k, _recall_k, _patch_k), "the one-game kernels of dealing and recall")


__all__ = ["OneGame", "Recall", "StepResult", "TensorList"]
