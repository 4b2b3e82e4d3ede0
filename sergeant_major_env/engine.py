"""The batched rules engine of 3-5-8: the one place where the rules of RULES.md live.

A [`State`][] is a plain container of numpy arrays over a batch of B independent
games; [`init`][], [`legal_action_mask`][] and [`step`][] are the rules over it
(observations are in [`sergeant_major_env.observation`][]). Every view of the game
(the PettingZoo and Gymnasium environments, the SB3 vector env, the agents' search,
the record replayer) drives these functions.

Decisions (`state.phase`; the seat to act is `state.to_act`):

| phase | decision | legal actions |
|---|---|---|
| 0 | `mode` | 52..57: a mode the playmaker has not chosen yet (R8) |
| 1 | `exchange_give` | a card of the giver's hand (R21) |
| 2 | `exchange_return` | a card of the receiver's hand, after a trump was given (R21) |
| 3 | `discard` | a card of the playmaker's 20 (section 5, four decisions) |
| 4 | `play` | a card allowed by R13-R15 |
| 5 | game over | none (the game's actions are ignored) |

Forced returns (a non-trump given, R21) are applied inside [`step`][].
[`step`][] validates all actions first and raises [`IllegalActionError`][]
without touching the state if any is illegal; otherwise it updates the state in place.

Randomness is counter-based: the cards of deal k of a game are a function of the game's
own seed and k only, so a game plays out the same alone or in any
batch, and duplicate tables can replay the same deals under other seatings.

**Compiled.** The rules are compiled kernels (numba, declared with
`sergeant_major_env.jit.kernel`): [`legal_bits`][], [`step`][] (the check of every
action, then mode choice, exchanges, talon, discards, play, trick winner, scoring, the next
deal's dealing and automatic resets), the dealing of [`init`][] and [`set_cards`][], and
[`play_classes`][] / [`ruled_out`][], each a loop over the games; the Python functions
around them check their input (one-line errors) and pass the state's one buffer: a
[`State`][]'s arrays are views of a single uint8 array ([`PACKED_BYTES`][] a game), so a
kernel call hands over one argument, not 41. They give the same games, bit for bit, as 0.3.0's
numpy engine (kept frozen in tests/reference_engine.py). One game at a time,
[`sergeant_major_env.one_game.OneGame`][] does a whole decision (check, rules, the next
legal actions, mask and observation) in one call.
The machine code is cached on disk (`__pycache__` beside this file, or numba's cache
folder): the first run compiles for up to a minute and says so in one line on stderr; later
runs load it in about a second. The kernels release the GIL, and big batches run on every
core: with numba's tbb threading layer, from 256 games on (`prange`, `NUMBA_NUM_THREADS`);
elsewhere (most pip installs) in chunks of games on a pool of Python threads, one per core
(`sergeant_major_env.threads.spread`), from 8,192 games for [`step`][] and 32,768 for
[`legal_bits`][] (a step costs about 60 ns a game, a thread's hand-off about 0.1 ms). The
threaded [`step`][] checks every chunk's actions, waits for all, and only then applies the
chunks, so an illegal action anywhere still leaves every game unchanged; any number of threads
gives the same games, bit for bit (`SERGEANT_MAJOR_THREADS=1` keeps every batch on one
core). The views' helpers [`trick_winner_position`][], [`targets`][] and
[`deal_points`][] run the rules' own kernels (R16, R23, R24 are written once);
[`win_credits`][] and [`places`][] (R6, a game's result) are numpy.
"""

from __future__ import annotations

import dataclasses

import numba
import numpy as np

from .cards import (ALL_CARDS, MINIMUM, MODE_ACTION_OFFSET, MODE_NAMES, NUM_ACTIONS, action_name, bits_to_bool, card_list,
                    count_cards_k, highest_card_k)
from .jit import (BUFFER, FLAG, GAMES, INT, INTS, RULES, SETS, announce_compiling, buffer_view, compile_ahead,
                  contiguous, kernel, prange)
from .threads import PARALLEL_CHUNK, PARALLEL_SAFE, over_games
from .rules import Rules
from .limits import check_count, check_fits, shorten
from .seeding import check_seed_span

MODE, GIVE, RETURN, DISCARD, PLAY, OVER = range(6)
DECISIONS = ("mode", "exchange_give", "exchange_return", "discard", "play", "game_over")

DEALER, PLAYMAKER, THIRD = 0, 1, 2  # roles; the seat of role r is (dealer + r) % 3 (R5)
ROLE_NAMES = ("dealer", "playmaker", "third")
TARGETS = np.array([3, 8, 5], dtype=np.int8)  # by role, trump and NT deals (R23)
MIN_TARGETS = np.array([8, 3, 5], dtype=np.int8)  # by role, MIN deals (R24)
# Exchange pairs (giver role, receiver role) in the order R20 serves them: the giver with
# the larger current target first, then its receiver with the larger target (8 > 5 > 3).
EXCHANGE_ORDER = ((PLAYMAKER, THIRD), (PLAYMAKER, DEALER), (THIRD, PLAYMAKER),
                  (THIRD, DEALER), (DEALER, PLAYMAKER), (DEALER, THIRD))

NEXT_SEAT = np.array([1, 2, 0], dtype=np.int8)  # left of each seat (R1)
# Stream ids of the counter-based generator, one per kind of random draw.
_STREAM_GAME, _STREAM_DEALER, _STREAM_DECK, _STREAM_TALON = 0x5EED, 0xDEA1, 0xDEC0, 0x7A10


class IllegalActionError(ValueError):
    """An action the rules do not allow; the state was left unchanged."""


def _field(shape: tuple, dtype, initial=0, reset: str | None = None):
    """One array field of [`State`][], declared once: its shape per game, dtype, initial
    value, and when the rules reset it to that value: `"game"` (a new game), `"deal"`
    (a new deal), `"step"` (every [`step`][]: the step's events) or `None` (set by
    the rules themselves)."""
    return dataclasses.field(metadata={"shape": shape, "dtype": dtype, "initial": initial, "reset": reset})


@dataclasses.dataclass
class State:
    """B games as arrays (leading axis = game). Seats 0..2; cards as uint64 sets.

    Each field is declared once below (shape per game, dtype, initial value, reset), like
    Pgx's `State`; [`init`][] builds the arrays from these declarations."""

    rules: Rules
    seed: np.ndarray = _field((), np.uint64)             # the game's own seed: it alone decides the cards
    episode: np.ndarray = _field((), np.uint32)          # games finished in this slot (automatic reset)
    first_dealer: np.ndarray = _field((), np.int8)       # drawn by lot from the seed (R4)
    deal: np.ndarray = _field((), np.int8, 0, "game")    # index of the current deal, 0-based
    dealer: np.ndarray = _field((), np.int8)
    phase: np.ndarray = _field((), np.int8)              # decision kind, see the module docstring
    to_act: np.ndarray = _field((), np.int8)             # seat to decide, -1 once the game is over
    hands: np.ndarray = _field((3,), np.uint64)
    dealt: np.ndarray = _field((3, 16), np.int8, -1)     # each hand as dealt, in dealing order (R10)
    first_six: np.ndarray = _field((), np.uint64)        # the playmaker's first six cards (R9)
    talon_cards: np.ndarray = _field((4,), np.int8, -1)
    talon: np.ndarray = _field((), np.uint64)
    mode: np.ndarray = _field((), np.int8, -1, "deal")   # 0..3 trumps S C H D, 4 NT, 5 MIN, -1 not chosen
    modes_used: np.ndarray = _field((3,), np.uint8, 0, "game")  # bit m: the seat has played mode m as playmaker (R8)
    exchange_giver: np.ndarray = _field((2,), np.int8, -1, "deal")     # the deal's exchange pairs in R20 order, -1 unused
    exchange_receiver: np.ndarray = _field((2,), np.int8, -1, "deal")
    exchange_due: np.ndarray = _field((3, 3), np.int8, 0, "deal")      # cards due from giver g to receiver r (R19)
    exchange_pair: np.ndarray = _field((), np.int8, 0, "deal")         # the pair exchanging now
    exchange_done: np.ndarray = _field((3, 3), np.int8, 0, "deal")     # cards handed from giver g to receiver r
    exchange_trump: np.ndarray = _field((), np.int8, -1, "deal")       # the trump given and awaiting a free return, -1
    given: np.ndarray = _field((3,), np.uint64, 0, "deal")     # cards each seat handed over in this deal's exchanges
    received: np.ndarray = _field((3,), np.uint64, 0, "deal")  # cards each seat received in them
    discards: np.ndarray = _field((), np.uint64, 0, "deal")
    played: np.ndarray = _field((3,), np.uint64, 0, "deal")    # cards each seat has played in this deal
    shown_out: np.ndarray = _field((3,), np.uint64, 0, "deal")  # cards each seat has shown it lacks (R13-R15)
    trick: np.ndarray = _field((3,), np.int8, -1, "deal")      # the current trick by position, -1 empty
    past_tricks: np.ndarray = _field((16, 3), np.int8, -1, "deal")  # this deal's completed tricks by position
    trick_leaders: np.ndarray = _field((16,), np.int8, -1, "deal")  # the seat leading each trick, the current one too
    card_trick: np.ndarray = _field((52,), np.int8, -1, "deal")     # the trick each card was played in, -1 not played
    leader: np.ndarray = _field((), np.int8, -1, "deal")       # seat leading the current trick, -1 before play
    tricks_won: np.ndarray = _field((3,), np.int8, 0, "deal")
    prev_points: np.ndarray = _field((3,), np.int8, 0, "game")  # points of the previous deal (R17, R18)
    scores: np.ndarray = _field((3,), np.int16, 0, "game")
    # What the last step() did, for rewards, records and renderers:
    last_returned: np.ndarray = _field((), np.int8, -1, "step")      # card returned in an exchange, -1 none
    last_trick: np.ndarray = _field((3,), np.int8, -1)               # the trick completed, by position
    last_trick_leader: np.ndarray = _field((), np.int8, -1)
    last_trick_winner: np.ndarray = _field((), np.int8, -1, "step")  # -1 if no trick was completed
    deal_ended: np.ndarray = _field((), bool, False, "step")
    deal_points: np.ndarray = _field((3,), np.int8, 0, "step")       # points of the deal that ended
    game_ended: np.ndarray = _field((), bool, False, "step")
    final_scores: np.ndarray = _field((3,), np.int16)                # scores of the game that ended

    def __post_init__(self) -> None:
        """Copies the given arrays into one new buffer ([`PACKED_BYTES`][] a game) and keeps
        the fields as views of it: the kernels are handed that one buffer (`state_arrays_k`)."""
        fresh = _packed(self.rules, np.shape(self.phase)[0])
        for name in _FIELD_NAMES:
            getattr(fresh, name)[...] = self.__dict__[name]
        self.__dict__.update(fresh.__dict__)

    def __setattr__(self, name: str, value) -> None:
        """A field of a built state is written into its view (`state.talon = x` copies x), so
        the fields stay the buffer's views; anything else is set as usual."""
        if name in _FIELD_SET and "buffer" in self.__dict__:
            getattr(self, name)[...] = value
        else:
            object.__setattr__(self, name, value)
            if name == "rules" and "buffer" in self.__dict__:
                self.__dict__["rule_code"] = _rule_code(value)

    def __getattr__(self, name: str) -> np.ndarray:
        """A field's view of the buffer, made at its first use and kept: a state made by
        [`take`][] or [`copy`][] (the opponents' games of a vector env, a search's worlds)
        is handed to kernels as its buffer, and makes no view it is not asked for."""
        view = _VIEW_OF.get(name)
        buffer = self.__dict__.get("buffer")
        if view is None or buffer is None:
            raise AttributeError(f"'State' object has no attribute '{name}'")
        dtype, shape, start = view
        batch = buffer.size // PACKED_BYTES
        array = self.__dict__[name] = np.ndarray((batch, *shape), dtype, buffer, batch * start)
        return array

    def __getstate__(self) -> dict:
        """Pickling and `copy.deepcopy` keep the rules and the buffer (the views are remade)."""
        return {"rules": self.rules, "buffer": self.buffer}

    def __setstate__(self, saved: dict) -> None:
        self.__dict__.update(_packed(saved["rules"], saved["buffer"].size // PACKED_BYTES, saved["buffer"]).__dict__)

    @property
    def exchange_count(self) -> np.ndarray:
        """int8[B,2]: cards due per pair of `exchange_giver`/`exchange_receiver` (0 if unused)."""
        rows = np.arange(self.batch_size)[:, None]
        due = self.exchange_due[rows, self.exchange_giver, self.exchange_receiver]
        return np.where(self.exchange_giver >= 0, due, 0).astype(np.int8)

    @property
    def batch_size(self) -> int:
        return self.buffer.size // PACKED_BYTES

    def arrays(self) -> dict[str, np.ndarray]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "rules"}

    def take(self, games) -> "State":
        """A new state holding copies of the given games (an index array, a boolean mask or a slice)."""
        if isinstance(games, slice):
            index = np.arange(self.batch_size)[games]
        else:
            index = np.asarray(games)
            if index.dtype == bool:
                index = np.flatnonzero(index)
            elif index.size == 0:
                index = index.astype(np.intp)  # [] is float64 to numpy
        if index.ndim != 1:
            raise ValueError(f"State.take: games must be one index per game, got an array of shape {index.shape}")
        if index.dtype.kind == "u":  # ids past int64 stay out of range
            index = np.minimum(index.astype(np.uint64), np.uint64(np.iinfo(np.int64).max)).astype(np.int64)
        index = np.ascontiguousarray(index.astype(np.int64, casting="same_kind", copy=False))  # float ids: numpy's TypeError
        out = _packed(self.rules, index.size)
        bad = _take_k(self.buffer, index, out.buffer)  # every field's rows in one call
        if bad >= 0:
            raise IndexError(f"index {index[bad]} is out of bounds for axis 0 with size {self.batch_size}")
        return out

    def copy(self) -> "State":
        """A new state holding a copy of every game (one copy of the buffer)."""
        return _packed(self.rules, self.batch_size, self.buffer.copy())

    def put(self, games, other: "State") -> None:
        """Overwrite the given games with the games of `other` (same order)."""
        for name, value in other.arrays().items():
            getattr(self, name)[games] = value

    def nbytes_per_game(self) -> float:
        return sum(v.nbytes for v in self.arrays().values()) / self.batch_size


_ARRAY_FIELDS = tuple(f for f in dataclasses.fields(State) if f.name != "rules")
_FIELD_NAMES = tuple(f.name for f in _ARRAY_FIELDS)
_FIELD_SET = frozenset(_FIELD_NAMES)


# The packed layout. A state's arrays live in one uint8 buffer, one region per field: field k
# takes bytes B * _STARTS[k] .. B * (_STARTS[k] + _NBYTES[k]), a C-contiguous [B, ...] view.
# The regions go by decreasing item size (uint64 first), so each is aligned for its dtype at
# any B without padding.
_NBYTES = tuple(int(np.prod(f.metadata["shape"], dtype=np.int64)) * np.dtype(f.metadata["dtype"]).itemsize
                for f in _ARRAY_FIELDS)


def _starts() -> tuple[int, ...]:
    starts, start = [0] * len(_ARRAY_FIELDS), 0
    for k in sorted(range(len(_ARRAY_FIELDS)), key=lambda k: -np.dtype(_ARRAY_FIELDS[k].metadata["dtype"]).itemsize):
        starts[k], start = start, start + _NBYTES[k]
    return tuple(starts)


_STARTS = _starts()
PACKED_BYTES = sum(_NBYTES)
"""Bytes of one game in a state's buffer (its fields, back to back)."""
_VIEW_OF = {f.name: (np.dtype(f.metadata["dtype"]), f.metadata["shape"], start)
            for f, start in zip(_ARRAY_FIELDS, _STARTS)}
_WORDS_END = min(start for start, item in zip(_STARTS, (np.dtype(f.metadata["dtype"]).itemsize for f in _ARRAY_FIELDS))
                 if item < 8)
_REGIONS = np.array([(start, nbytes, start < _WORDS_END) for start, nbytes in zip(_STARTS, _NBYTES)], dtype=np.int64)
"""Each field's (first byte a game, bytes a game, whether it is one of the 8-byte fields, which
come first in the buffer, as whole words)."""


@kernel(inline=True, counted=False)
def _take_rows_k(source, source_at, target, target_at, rows, width):
    if width == 1:  # most fields: one byte a game
        for i in range(rows.size):
            target[target_at + i] = source[source_at + rows[i]]
        return
    for i in range(rows.size):
        at = source_at + rows[i] * width
        for b in range(width):
            target[target_at + b] = source[at + b]
        target_at += width


@kernel(ahead="game", seconds=0.3, signature=(BUFFER, GAMES, BUFFER))
def _take_k(buffer, index, out):
    """[`State.take`][]: the games `index` of the state over `buffer` (a negative id counts
    from the end, as numpy's) copied, field by field, into `out`, the buffer of a state of
    `index.size` games. Returns the position in `index` of the first id out of range (nothing
    copied), else -1. Rows of whole 8-byte words (the card sets) go a word at a time."""
    batch, n = buffer.size // PACKED_BYTES, index.size
    rows = np.empty(n, dtype=np.int64)
    for i in range(n):
        g = index[i] + batch if index[i] < 0 else index[i]
        if g < 0 or g >= batch:
            return i
        rows[i] = g
    words = buffer[:batch * _WORDS_END].view(np.uint64)
    target_words = out[:n * _WORDS_END].view(np.uint64)
    for k in range(_REGIONS.shape[0]):
        start, width, whole_words = _REGIONS[k, 0], _REGIONS[k, 1], _REGIONS[k, 2]
        if whole_words:
            _take_rows_k(words, batch * start // 8, target_words, n * start // 8, rows, width // 8)
        else:
            _take_rows_k(buffer, batch * start, out, n * start, rows, width)
    return -1


def _packed(rules: Rules, batch: int, buffer: np.ndarray | None = None) -> State:
    """A state of `batch` games over `buffer` (a new zeroed one if None), built without
    copying (no `__init__`); its fields are the buffer's views, each made at its first use
    (`State.__getattr__`)."""
    if buffer is None:
        buffer = np.zeros(batch * PACKED_BYTES, dtype=np.uint8)
    state = object.__new__(State)
    fields = state.__dict__
    fields["rules"] = rules
    fields["buffer"] = buffer
    fields["rule_code"] = _rule_code(rules)  # the kernels' form of the rules, kept with them
    return state
_RESETS = {when: tuple((f.name, f.metadata["initial"]) for f in _ARRAY_FIELDS if f.metadata["reset"] == when)
           for when in ("game", "deal", "step")}


def _empty(rules: Rules, batch: int) -> State:
    """B games with every field at its declared initial value."""
    state = _packed(rules, batch)
    for f in _ARRAY_FIELDS:
        if f.metadata["initial"]:
            getattr(state, f.name)[...] = f.metadata["initial"]
    return state


def _reset(state: State, games, when: str) -> None:
    """Set the fields declared with `reset=when` back to their initial values in `games`."""
    for name, initial in _RESETS[when]:
        getattr(state, name)[games] = initial


def game_seeds(seed: int, batch_size: int) -> np.ndarray:
    """The per-game seeds of a batch started from `seed`: `seed, seed + 1, ...`; each within
    the seed rule (`seeding`: the last, `seed + batch_size - 1`, at
    most 2**63 - 1) and the batch within this machine's memory (a one-line ValueError)."""
    batch_size = check_count(batch_size, "engine.game_seeds: batch_size", 0)
    seed = check_seed_span(seed, batch_size)
    check_batch_fits(batch_size, "engine.game_seeds")
    return (np.uint64(seed) + np.arange(batch_size, dtype=np.uint64)).astype(np.uint64)


BYTES_PER_GAME = sum(int(np.prod(f.metadata["shape"], dtype=np.int64)) * np.dtype(f.metadata["dtype"]).itemsize
                     for f in _ARRAY_FIELDS)
"""Bytes of one game's [`State`][] (its arrays)."""

BATCH_BYTES_PER_GAME = 4 * BYTES_PER_GAME
"""What a batch holds at once per game while it is stepped (the state, a copy, the legal
actions, an observation's temporaries): the measure of [`check_batch_fits`][]."""


def check_batch_fits(batch_size: int, what: str = "a batch") -> None:
    """A one-line ValueError when `batch_size` games would not fit in this machine's available
    memory (`sergeant_major_env.limits.check_fits`), before anything is allocated."""
    check_fits(f"{what} of {batch_size:,} games", batch_size * BATCH_BYTES_PER_GAME, "give a smaller batch")


def init(seeds, rules: Rules | None = None) -> State:
    """B new games, game i from `seeds[i]` (use [`game_seeds`][] for `seed, seed+1, ...`).

    A game depends on its own seed only: the same seed gives the same game in any batch.
    `seeds` is a 1-D sequence (a single number is refused: `init(5)` is not five games),
    `rules` a [`Rules`][] or None (the rule book's); anything else, or a batch this
    machine cannot hold, is a one-line ValueError.
    """
    if rules is not None and not isinstance(rules, Rules):
        raise ValueError(f"engine.init: rules must be a Rules (Rules.from_dict(options) makes one from a dict) "
                         f"or None, got {shorten(rules)}")
    if np.ndim(seeds) == 0:
        raise ValueError(f"engine.init: seeds must be a 1-D sequence of per-game seeds (one game each), got "
                         f"{shorten(seeds)}; for N games from seed S give engine.game_seeds(S, N)")
    seeds = np.asarray(seeds)
    if seeds.ndim != 1 or seeds.size == 0 or not np.issubdtype(seeds.dtype, np.integer) or (seeds < 0).any():
        raise ValueError("seeds must be a non-empty 1-D sequence of non-negative integers")
    check_batch_fits(seeds.size, "engine.init")
    state = _empty(rules if rules is not None else Rules(), seeds.size)
    state.seed[:] = seeds.astype(np.uint64)
    _start_game(state, np.arange(seeds.size))
    return state


# ----------------------------------------------------------------------------- kernels
#
# The rules as compiled loops over games (module docstring). A kernel receives the state's
# one buffer (a single argument: numba's dispatch costs about 0.05 us an array argument, so
# 41 arrays cost 2 us at every call), views it as the tuple ``s`` of State's fields in order
# (state_arrays_k) and hands that with a game number ``g`` to the per-game rules below, which read
# ``s[HANDS][g, seat]`` and so on. The rule options travel as one int (_rule_code). Cards
# are uint64 sets, as in the numpy code (cards.py).

(SEED, EPISODE, FIRST_DEALER, DEAL, DEALER, PHASE, TO_ACT, HANDS, DEALT, FIRST_SIX, TALON_CARDS, TALON, MODE_,
 MODES_USED, EXCHANGE_GIVER, EXCHANGE_RECEIVER, EXCHANGE_DUE, EXCHANGE_PAIR, EXCHANGE_DONE, EXCHANGE_TRUMP, GIVEN,
 RECEIVED, DISCARDS, PLAYED, SHOWN_OUT, TRICK, PAST_TRICKS, TRICK_LEADERS, CARD_TRICK, LEADER, TRICKS_WON,
 PREV_POINTS, SCORES, LAST_RETURNED, LAST_TRICK, LAST_TRICK_LEADER, LAST_TRICK_WINNER, DEAL_ENDED, DEAL_POINTS_,
 GAME_ENDED, FINAL_SCORES) = range(len(_FIELD_NAMES))
assert all(globals().get(name.upper() + "_", globals().get(name.upper())) == k for k, name in enumerate(_FIELD_NAMES)), \
    "the kernels' field numbers must follow State's fields"


@kernel(inline=True, counted=False)
def state_arrays_k(buffer):
    """The tuple `s` of a state's arrays (State's fields in order) as views of its buffer
    (`jit.buffer_view`: a few ns an array; the layout puts each in bounds and aligned)."""
    b = buffer.size // PACKED_BYTES
    return (buffer_view(buffer, b * _STARTS[SEED], np.uint64, b),
            buffer_view(buffer, b * _STARTS[EPISODE], np.uint32, b),
            buffer_view(buffer, b * _STARTS[FIRST_DEALER], np.int8, b),
            buffer_view(buffer, b * _STARTS[DEAL], np.int8, b),
            buffer_view(buffer, b * _STARTS[DEALER], np.int8, b),
            buffer_view(buffer, b * _STARTS[PHASE], np.int8, b),
            buffer_view(buffer, b * _STARTS[TO_ACT], np.int8, b),
            buffer_view(buffer, b * _STARTS[HANDS], np.uint64, (b, 3)),
            buffer_view(buffer, b * _STARTS[DEALT], np.int8, (b, 3, 16)),
            buffer_view(buffer, b * _STARTS[FIRST_SIX], np.uint64, b),
            buffer_view(buffer, b * _STARTS[TALON_CARDS], np.int8, (b, 4)),
            buffer_view(buffer, b * _STARTS[TALON], np.uint64, b),
            buffer_view(buffer, b * _STARTS[MODE_], np.int8, b),
            buffer_view(buffer, b * _STARTS[MODES_USED], np.uint8, (b, 3)),
            buffer_view(buffer, b * _STARTS[EXCHANGE_GIVER], np.int8, (b, 2)),
            buffer_view(buffer, b * _STARTS[EXCHANGE_RECEIVER], np.int8, (b, 2)),
            buffer_view(buffer, b * _STARTS[EXCHANGE_DUE], np.int8, (b, 3, 3)),
            buffer_view(buffer, b * _STARTS[EXCHANGE_PAIR], np.int8, b),
            buffer_view(buffer, b * _STARTS[EXCHANGE_DONE], np.int8, (b, 3, 3)),
            buffer_view(buffer, b * _STARTS[EXCHANGE_TRUMP], np.int8, b),
            buffer_view(buffer, b * _STARTS[GIVEN], np.uint64, (b, 3)),
            buffer_view(buffer, b * _STARTS[RECEIVED], np.uint64, (b, 3)),
            buffer_view(buffer, b * _STARTS[DISCARDS], np.uint64, b),
            buffer_view(buffer, b * _STARTS[PLAYED], np.uint64, (b, 3)),
            buffer_view(buffer, b * _STARTS[SHOWN_OUT], np.uint64, (b, 3)),
            buffer_view(buffer, b * _STARTS[TRICK], np.int8, (b, 3)),
            buffer_view(buffer, b * _STARTS[PAST_TRICKS], np.int8, (b, 16, 3)),
            buffer_view(buffer, b * _STARTS[TRICK_LEADERS], np.int8, (b, 16)),
            buffer_view(buffer, b * _STARTS[CARD_TRICK], np.int8, (b, 52)),
            buffer_view(buffer, b * _STARTS[LEADER], np.int8, b),
            buffer_view(buffer, b * _STARTS[TRICKS_WON], np.int8, (b, 3)),
            buffer_view(buffer, b * _STARTS[PREV_POINTS], np.int8, (b, 3)),
            buffer_view(buffer, b * _STARTS[SCORES], np.int16, (b, 3)),
            buffer_view(buffer, b * _STARTS[LAST_RETURNED], np.int8, b),
            buffer_view(buffer, b * _STARTS[LAST_TRICK], np.int8, (b, 3)),
            buffer_view(buffer, b * _STARTS[LAST_TRICK_LEADER], np.int8, b),
            buffer_view(buffer, b * _STARTS[LAST_TRICK_WINNER], np.int8, b),
            buffer_view(buffer, b * _STARTS[DEAL_ENDED], np.bool_, b),
            buffer_view(buffer, b * _STARTS[DEAL_POINTS_], np.int8, (b, 3)),
            buffer_view(buffer, b * _STARTS[GAME_ENDED], np.bool_, b),
            buffer_view(buffer, b * _STARTS[FINAL_SCORES], np.int16, (b, 3)))


_ZERO, _ONE64 = np.uint64(0), np.uint64(1)
_SUIT13 = np.uint64(0x1FFF)
_GOLDEN, _MIX1, _MIX2 = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_R30, _R27, _R31 = np.uint64(30), np.uint64(27), np.uint64(31)
_K_GAME, _K_DEALER, _K_DECK, _K_TALON = (np.uint64(x) for x in (_STREAM_GAME, _STREAM_DEALER, _STREAM_DECK,
                                                                _STREAM_TALON))
_K_TARGETS, _K_MIN_TARGETS = TARGETS.copy(), MIN_TARGETS.copy()
_K_ORDER = np.array(EXCHANGE_ORDER, dtype=np.int64)  # [pair, (giver role, receiver role)] (R20)
_PARALLEL_FROM = 256
"""Batches of at least this many games run on every core (the `parallel=True` kernels, with tbb)."""
_STEP_THREADS_FROM, _LEGAL_THREADS_FROM = 8192, 32768
"""Without tbb, batches of at least this many games step (check their legal actions) on
`threads.spread`'s threads. Handing a chunk to a thread and back costs about 0.1 ms (a
thread's wake-up, measured on the 2-core development machine), while a step takes about
60 ns a game and legal_bits 5 ns: smaller batches are as fast on one core."""


def _rule_code(rules: Rules) -> int:
    """The rule options as one int for the kernels: num_deals in bits 0-7, then one bit each."""
    return (rules.num_deals | rules.exchanges << 8 | rules.must_overtake << 9 | rules.must_overtrump << 10
            | rules.dealer_builds_talon << 11)


@kernel
def _mix_k(z):
    """splitmix64's finaliser: a bijective, well-mixed hash of a uint64."""
    z = z + _GOLDEN
    z = (z ^ (z >> _R30)) * _MIX1
    z = (z ^ (z >> _R27)) * _MIX2
    return z ^ (z >> _R31)


@kernel
def _random_k(key, stream, counter):
    """A random uint64 indexed by (key, stream, counter), all uint64: the counter-based generator."""
    return _mix_k(_mix_k(key ^ stream) ^ counter)


@kernel
def _bit_k(card):
    """The one-card set of a card id 0..51 (empty for anything else)."""
    if card < 0 or card >= 52:
        return _ZERO
    return _ONE64 << np.uint64(card)


@kernel
def _suit_k(card):
    """The 13 cards of `card`'s suit (empty for -1, no card)."""
    if card < 0 or card >= 52:
        return _ZERO
    return _SUIT13 << np.uint64(13 * (card // 13))


@kernel
def _above_k(card):
    """The cards of `card`'s suit that beat it (empty for -1)."""
    if card < 0 or card >= 52:
        return _ZERO
    return _suit_k(card) & ~((_ONE64 << np.uint64(card + 1)) - _ONE64)


@kernel(counted=False)
def _cards_bits_k(cards):
    """OR of the one-card sets of a row of card ids (-1: none)."""
    bits = _ZERO
    for c in cards:
        bits |= _bit_k(c)
    return bits


@kernel
def _play_classes_k(t0, t1, t2, mode, rules):
    """R13-R15 as five card classes in priority order and how many are used (3 or 5):
    [`play_classes`][] of one game, the trick `t0, t1, t2` by position (-1 empty)."""
    led = _suit_k(t0)  # empty when leading
    trumps = _SUIT13 << np.uint64(13 * mode) if 0 <= mode < 4 and led != _ZERO else _ZERO  # R14
    overtake_rule, overtrump_rule = (rules >> 9) & 1, (rules >> 10) & 1
    if not (overtake_rule or overtrump_rule):
        return (led, trumps, ALL_CARDS, _ZERO, _ZERO), 3  # R13, R14, any card
    best_led, best_trump = -1, -1  # the best card of the led suit / of trumps on the table
    for c in (t0, t1, t2):
        if _bit_k(c) & led:
            best_led = max(best_led, c)
        if _bit_k(c) & trumps:
            best_trump = max(best_trump, c)
    trumped = best_trump >= 0 and led != trumps
    overtake = _above_k(best_led) if overtake_rule and not trumped else _ZERO  # R15
    overtrump = _above_k(best_trump) if overtrump_rule and led != trumps else _ZERO  # R15
    return (overtake, led, overtrump, trumps, ALL_CARDS), 5


@kernel
def _legal_plays_k(hand, t0, t1, t2, mode, rules):
    """R13-R15: the cards of `hand` in the first class it holds any card of."""
    classes, n = _play_classes_k(t0, t1, t2, mode, rules)
    for k in range(n - 1):
        if hand & classes[k]:
            return hand & classes[k]
    return hand & ALL_CARDS


@kernel
def _ruled_out_k(t0, t1, t2, mode, card, rules):
    """[`ruled_out`][] of one card: the classes before the first one holding it (leading
    shows nothing)."""
    if t0 < 0:
        return _ZERO
    classes, n = _play_classes_k(t0, t1, t2, mode, rules)
    card_bit, shown = _bit_k(card), _ZERO
    for k in range(n - 1):  # the last class (any card) rules out nothing
        if classes[k] & card_bit:
            break
        shown |= classes[k]
    return shown


@kernel
def _legal_k(phase, seat, hand, used, t0, t1, t2, mode, rules):
    """The legal actions of one game's decision as a uint64 (bit a: action a)."""
    if phase == MODE:
        return (~np.uint64(used) & np.uint64(0x3F)) << np.uint64(MODE_ACTION_OFFSET)  # R8: modes not used yet
    if phase == PLAY:
        return _legal_plays_k(hand, t0, t1, t2, mode, rules)
    if phase == OVER:
        return _ZERO
    return hand  # exchange gives, free returns and discards: any held card (R21, section 5)


@kernel(counted=False)
def legal_actions_k(phase, to_act, hands, modes_used, trick, mode, g, rules):
    p, seat = phase[g], to_act[g]
    if p == OVER or seat < 0:
        return _ZERO
    return _legal_k(p, seat, hands[g, seat], modes_used[g, seat], trick[g, 0], trick[g, 1], trick[g, 2], mode[g],
                    rules)


@kernel(inline=True, counted=False)
def _game_k(games, subset, i):
    """The game number of the i-th game stepped: `games[i]`, or i for the whole batch.
    (Compiled with reference counting, this call per game cost two atomic operations on
    `games`: legal_bits of 4,096 games took 0.69 ms, now 0.11 ms.)"""
    return np.int64(games[i]) if subset else np.int64(i)


@kernel(inline=True, counted=False)
def _legal_of_k(s, games, subset, i, rules):
    """The legal actions of the i-th game asked for (every loop over games below asks this)."""
    g = _game_k(games, subset, i)
    return legal_actions_k(s[PHASE], s[TO_ACT], s[HANDS], s[MODES_USED], s[TRICK], s[MODE_], g, rules)


@kernel(ahead=("game", "threads"), seconds=5.5, counted=False, signature=(INT, INT, BUFFER, GAMES, FLAG, SETS, RULES))
def legal_range_k(start, stop, buffer, games, subset, out, rules):
    """[`legal_bits`][]' one job: the legal actions of the games start..stop-1 asked for
    (`games[i]`, or game i when not `subset`) into `out` (`threads.over_games` spreads it).
    Compiled without reference counting: in a kernel with it, the arrays each game reads from
    the state cost two atomic operations each (legal_bits of 4,096 games took 0.3 ms, now
    0.03 ms)."""
    s = state_arrays_k(buffer)
    for i in range(start, stop):
        out[i] = _legal_of_k(s, games, subset, i, rules)


@kernel(parallel=True)
def _legal_parallel(buffer, games, subset, out, rules):
    """`legal_range_k` of every game over numba's threads (tbb), `PARALLEL_CHUNK` games at a time."""
    n = out.size
    for c in prange((n + PARALLEL_CHUNK - 1) // PARALLEL_CHUNK):
        legal_range_k(c * PARALLEL_CHUNK, min(n, (c + 1) * PARALLEL_CHUNK), buffer, games, subset, out, rules)


@kernel
def card_strength_k(card, mode, led):
    """R16, the one place of a card's strength in a trick: a trump (`mode` 0..3) beats the led
    suit `led`, which beats the rest, each by rank: `26 + rank`, `13 + rank`, else 0. Modes
    4 (NT) and 5 (MIN) have no trumps. [`trick_winner_k`][] and `STRENGTH` read it."""
    suit, rank = card // 13, card % 13
    if suit == mode:
        return 26 + rank
    if suit == led:
        return 13 + rank
    return 0


@kernel
def trick_winner_k(t0, t1, t2, mode):
    """R16, the trick's winner: the position (0 = leader) of the highest trump, else of the
    highest card of the led suit ([`card_strength_k`][]), of the trick `t0, t1, t2` by
    position; empty positions (-1) never win, and an empty trick gives 0. The engine, the
    observation, the heuristic and the search call it."""
    led, best, position = t0 // 13, -1, 0
    for p, c in enumerate((t0, t1, t2)):
        if c < 0:
            continue
        strength = card_strength_k(c, mode, led)
        if strength > best:
            best, position = strength, p
    return position


# --- dealing (R4, R10, R11)

@kernel(counted=False)
def _reset_deal_k(s, g):
    """The fields declared `reset="deal"` back to their initial values (_RESETS checks the list)."""
    s[MODE_][g] = -1
    s[EXCHANGE_GIVER][g, :] = -1
    s[EXCHANGE_RECEIVER][g, :] = -1
    s[EXCHANGE_DUE][g, :, :] = 0
    s[EXCHANGE_PAIR][g] = 0
    s[EXCHANGE_DONE][g, :, :] = 0
    s[EXCHANGE_TRUMP][g] = -1
    s[GIVEN][g, :] = 0
    s[RECEIVED][g, :] = 0
    s[DISCARDS][g] = 0
    s[PLAYED][g, :] = 0
    s[SHOWN_OUT][g, :] = 0
    s[TRICK][g, :] = -1
    s[PAST_TRICKS][g, :, :] = -1
    s[TRICK_LEADERS][g, :] = -1
    s[CARD_TRICK][g, :] = -1
    s[LEADER][g] = -1
    s[TRICKS_WON][g, :] = 0


_KERNEL_RESETS = {
    "deal": ("mode", "exchange_giver", "exchange_receiver", "exchange_due", "exchange_pair", "exchange_done",
             "exchange_trump", "given", "received", "discards", "played", "shown_out", "trick", "past_tricks",
             "trick_leaders", "card_trick", "leader", "tricks_won"),
    "game": ("deal", "modes_used", "prev_points", "scores"),
    "step": ("last_returned", "last_trick_winner", "deal_ended", "deal_points", "game_ended"),
}
assert all(tuple(name for name, _ in _RESETS[when]) == names for when, names in _KERNEL_RESETS.items()), \
    "the kernels' resets must list the fields declared with each reset"


@kernel(counted=False)
def install_deal_k(s, g):
    """[`set_cards`][] of one game, from its `dealt` and `talon_cards` rows."""
    playmaker = (s[DEALER][g] + PLAYMAKER) % 3
    s[FIRST_SIX][g] = _cards_bits_k(s[DEALT][g, playmaker, :6])  # R9
    for seat in range(3):
        s[HANDS][g, seat] = _cards_bits_k(s[DEALT][g, seat])
    s[TALON][g] = _cards_bits_k(s[TALON_CARDS][g])
    s[PHASE][g] = MODE
    s[TO_ACT][g] = playmaker
    _reset_deal_k(s, g)


@kernel(counted=False)
def insertion_argsort_k(keys, order, n):
    """`order[:n]`: the indices of `keys[:n]` by increasing key (insertion sort; no allocation)."""
    for i in range(n):
        j = i
        while j > 0 and keys[order[j - 1]] > keys[i]:
            order[j] = order[j - 1]
            j -= 1
        order[j] = i


@kernel(counted=False)
def _start_deal_k(s, g, rules, keys, order):
    """Shuffle and deal (R10, R11) from the game's counter-based random stream (`keys`,
    `order`: scratch of 52).

    The deck is the order of 52 random keys (numpy's argsort of them in 0.3.0). The keys
    are `mix(mix(deck_key) ^ i)` for i = 0..51: mix is a bijection, so they are distinct,
    there are no ties, and any sort gives the same deck; so for the talon slots (47 keys)."""
    key = _random_k(s[SEED][g], _K_GAME, _ZERO)
    deal = np.uint64(s[DEAL][g])
    p0, p1, p2, p3 = 48, 49, 50, 51  # the talon's positions in the deal
    if (rules >> 11) & 1:
        # R11: four positions of the 52-card deal, never the first or the last, never
        # adjacent. Drawing 4 of 47 slots and spreading them (+0, +1, +2, +3) is uniform
        # over such sets. The dealer places them face down, so it is a random choice here.
        slot_key = _random_k(key, _K_TALON, deal)
        for i in range(47):
            keys[i] = _random_k(slot_key, _ZERO, np.uint64(i))
        insertion_argsort_k(keys, order, 47)
        for i in range(4):  # the four drawn slots in increasing order
            keys[i] = order[i]
        insertion_argsort_k(keys, order, 4)
        p0, p1, p2, p3 = 1 + keys[order[0]], 2 + keys[order[1]], 3 + keys[order[2]], 4 + keys[order[3]]
    deck_key = _random_k(key, _K_DECK, deal)
    for i in range(52):
        keys[i] = _random_k(deck_key, _ZERO, np.uint64(i))
    insertion_argsort_k(keys, order, 52)
    # The talon's cards in deal order; the other 48 go one at a time clockwise, starting
    # left of the dealer.
    dealer, dealt, talon, n, t = s[DEALER][g], s[DEALT], s[TALON_CARDS], 0, 0
    for j in range(52):
        if j == p0 or j == p1 or j == p2 or j == p3:
            talon[g, t] = order[j]
            t += 1
        else:
            dealt[g, (dealer + 1 + n % 3) % 3, n // 3] = order[j]
            n += 1
    install_deal_k(s, g)


@kernel(counted=False)
def _start_game_k(s, g, rules, keys, order):
    key = _random_k(s[SEED][g], _K_GAME, _ZERO)
    s[FIRST_DEALER][g] = _random_k(key, _K_DEALER, _ZERO) % np.uint64(3)  # R4: by lot
    s[DEALER][g] = s[FIRST_DEALER][g]
    s[DEAL][g] = 0
    s[MODES_USED][g, :] = 0
    s[PREV_POINTS][g, :] = 0
    s[SCORES][g, :] = 0
    _start_deal_k(s, g, rules, keys, order)


# --- the decisions

@kernel(inline=True, counted=False)
def _reveal_talon_k(s, g):
    """Section 5, step 4: the talon is shown to all and joins the playmaker's hand."""
    playmaker = (s[DEALER][g] + PLAYMAKER) % 3
    s[HANDS][g, playmaker] |= s[TALON][g]
    s[PHASE][g] = DISCARD
    s[TO_ACT][g] = playmaker


@kernel(inline=True, counted=False)
def _plan_exchanges_k(s, g):
    """R18-R20: pair givers (positive points) with receivers (negative) in serving order."""
    dealer, pairs = s[DEALER][g], 0
    for j in range(6):  # EXCHANGE_ORDER; at most two pairs: points sum to zero over three seats
        giver, receiver = (dealer + _K_ORDER[j, 0]) % 3, (dealer + _K_ORDER[j, 1]) % 3
        given_points, received_points = np.int64(s[PREV_POINTS][g, giver]), np.int64(s[PREV_POINTS][g, receiver])
        if given_points > 0 and received_points < 0 and pairs < 2:
            s[EXCHANGE_GIVER][g, pairs] = giver
            s[EXCHANGE_RECEIVER][g, pairs] = receiver
            s[EXCHANGE_DUE][g, giver, receiver] = min(given_points, -received_points)  # R19
            pairs += 1
    if pairs:
        s[PHASE][g] = GIVE
        s[TO_ACT][g] = s[EXCHANGE_GIVER][g, 0]
    else:
        _reveal_talon_k(s, g)  # R18: nobody scored, no exchange


@kernel(inline=True, counted=False)
def _choose_mode_k(s, g, action, rules):
    mode = action - MODE_ACTION_OFFSET
    playmaker = s[TO_ACT][g]
    s[MODE_][g] = mode
    s[MODES_USED][g, playmaker] |= np.uint8(1 << mode)  # R8
    # R17: exchanges only in trump deals after the first, and only with the option on.
    if mode < 4 and s[DEAL][g] > 0 and (rules >> 8) & 1:
        _plan_exchanges_k(s, g)
    else:
        _reveal_talon_k(s, g)


@kernel(inline=True, counted=False)
def _hand_over_k(s, g, card, sender, taker):
    """R21: `card` passes from `sender`'s hand to `taker`'s, each remembering it (given, received)."""
    card_bit = _bit_k(card)
    s[HANDS][g, sender] &= ~card_bit
    s[HANDS][g, taker] |= card_bit
    s[GIVEN][g, sender] |= card_bit
    s[RECEIVED][g, taker] |= card_bit


@kernel(inline=True, counted=False)
def _return_card_k(s, g, card):
    pair = s[EXCHANGE_PAIR][g]
    giver, receiver = s[EXCHANGE_GIVER][g, pair], s[EXCHANGE_RECEIVER][g, pair]
    _hand_over_k(s, g, card, receiver, giver)
    s[LAST_RETURNED][g] = card
    s[EXCHANGE_TRUMP][g] = -1
    s[EXCHANGE_DONE][g, giver, receiver] += 1
    # R20: a pair completes all its cards before the next pair starts.
    if s[EXCHANGE_DONE][g, giver, receiver] < s[EXCHANGE_DUE][g, giver, receiver]:
        s[PHASE][g] = GIVE
        s[TO_ACT][g] = giver
        return
    s[EXCHANGE_PAIR][g] += 1
    if s[EXCHANGE_PAIR][g] < 2 and s[EXCHANGE_GIVER][g, 1] >= 0:
        s[PHASE][g] = GIVE
        s[TO_ACT][g] = s[EXCHANGE_GIVER][g, 1]
    else:
        _reveal_talon_k(s, g)


@kernel(inline=True, counted=False)
def _give_k(s, g, card):
    pair = s[EXCHANGE_PAIR][g]
    giver, receiver = s[EXCHANGE_GIVER][g, pair], s[EXCHANGE_RECEIVER][g, pair]
    _hand_over_k(s, g, card, giver, receiver)
    if card // 13 == s[MODE_][g]:  # R21: after a trump the receiver chooses its return (a decision) ...
        s[PHASE][g] = RETURN
        s[TO_ACT][g] = receiver
        s[EXCHANGE_TRUMP][g] = card
    else:  # ... otherwise it must return its highest card of that suit, the one just given included.
        _return_card_k(s, g, highest_card_k(s[HANDS][g, receiver] & _suit_k(card)))


@kernel(inline=True, counted=False)
def _discard_k(s, g, card):
    playmaker = s[TO_ACT][g]
    s[HANDS][g, playmaker] &= ~_bit_k(card)
    s[DISCARDS][g] |= _bit_k(card)
    if count_cards_k(s[DISCARDS][g]) == 4:
        s[PHASE][g] = PLAY
        s[LEADER][g] = playmaker  # the playmaker leads the first trick
        s[TRICK_LEADERS][g, 0] = playmaker


@kernel
def _target_k(role, mode):
    """R23, R24: the tricks a role must make (dealer, playmaker, third): 3, 8, 5; 8, 3, 5 in MIN."""
    return np.int64(_K_MIN_TARGETS[role] if mode == MINIMUM else _K_TARGETS[role])


@kernel
def _points_k(won, role, mode):
    """R23, R24: a seat's points of a deal, `W - Z`, or `Z - W` in MIN."""
    target = _target_k(role, mode)
    return target - won if mode == MINIMUM else won - target


@kernel(counted=False)
def _end_deal_k(s, g, rules, keys, order):
    for seat in range(3):
        role = (seat - s[DEALER][g]) % 3
        points = _points_k(np.int64(s[TRICKS_WON][g, seat]), role, s[MODE_][g])
        s[SCORES][g, seat] += points  # R25
        s[PREV_POINTS][g, seat] = points
        s[DEAL_POINTS_][g, seat] = points
    s[DEAL_ENDED][g] = True
    s[DEAL][g] += 1
    if s[DEAL][g] >= (rules & 0xFF):
        s[PHASE][g] = OVER
        s[TO_ACT][g] = -1
        s[GAME_ENDED][g] = True
        for seat in range(3):
            s[FINAL_SCORES][g, seat] = s[SCORES][g, seat]
    else:
        s[DEALER][g] = (s[DEALER][g] + 1) % 3  # R4: the deal passes left
        _start_deal_k(s, g, rules, keys, order)


@kernel(inline=True, counted=False)
def _play_k(s, g, card, rules, keys, order):
    seat, leader = s[TO_ACT][g], s[LEADER][g]
    card_bit = _bit_k(card)
    hand = s[HANDS][g, seat]
    number = 16 - count_cards_k(hand)  # the index of this trick: 16 cards at the first lead, one less a trick
    s[HANDS][g, seat] = hand & ~card_bit
    s[PLAYED][g, seat] |= card_bit
    s[CARD_TRICK][g, card] = number
    position = (seat - leader) % 3  # 0 for the leader, then clockwise
    trick = s[TRICK]
    if position:  # a lead shows nothing
        s[SHOWN_OUT][g, seat] |= _ruled_out_k(trick[g, 0], trick[g, 1], trick[g, 2], s[MODE_][g], card, rules)
    trick[g, position] = card
    s[TO_ACT][g] = (seat + 1) % 3  # R12: clockwise
    if position < 2:
        return
    winner = (leader + trick_winner_k(trick[g, 0], trick[g, 1], trick[g, 2], s[MODE_][g])) % 3  # R16
    s[TRICKS_WON][g, winner] += 1
    for p in range(3):
        s[PAST_TRICKS][g, number, p] = trick[g, p]
        s[LAST_TRICK][g, p] = trick[g, p]
    s[LAST_TRICK_LEADER][g] = leader
    s[LAST_TRICK_WINNER][g] = winner
    trick[g, :] = -1
    s[LEADER][g] = winner  # the winner leads the next trick
    s[TO_ACT][g] = winner
    if number < 15:
        s[TRICK_LEADERS][g, number + 1] = winner
    if s[HANDS][g, winner] == 0:  # all hands empty: 16 tricks
        _end_deal_k(s, g, rules, keys, order)


@kernel(inline=True, counted=False)
def apply_action_k(s, g, action, autoreset, batch_size, rules, keys, order):
    """One game's (checked) action; with `autoreset` a game that ends starts the slot's next."""
    s[LAST_RETURNED][g] = -1
    s[LAST_TRICK_WINNER][g] = -1
    s[DEAL_ENDED][g] = False
    s[DEAL_POINTS_][g, :] = 0
    s[GAME_ENDED][g] = False
    phase = s[PHASE][g]
    if phase == MODE:
        _choose_mode_k(s, g, action, rules)
    elif phase == GIVE:
        _give_k(s, g, action)
    elif phase == RETURN:
        _return_card_k(s, g, action)
    elif phase == DISCARD:
        _discard_k(s, g, action)
    elif phase == PLAY:
        _play_k(s, g, action, rules, keys, order)
    if autoreset and s[GAME_ENDED][g]:
        s[EPISODE][g] += 1
        s[SEED][g] += np.uint64(batch_size)
        _start_game_k(s, g, rules, keys, order)


@kernel(inline=True, counted=False)
def _refused_k(s, g, action, legal, have_legal, i, rules):
    """Whether a game that is not over gets an action outside its legal set."""
    if s[PHASE][g] == OVER:
        return False  # finished games ignore their actions
    bits = legal[i] if have_legal else legal_actions_k(s[PHASE], s[TO_ACT], s[HANDS], s[MODES_USED], s[TRICK],
                                                     s[MODE_], g, rules)
    return action < 0 or action >= 64 or not (bits >> np.uint64(action)) & _ONE64


@kernel(counted=False)
def _check_range_k(s, actions, games, subset, legal, have_legal, start, stop, rules):
    """(position of the first game of start..stop-1 given an illegal action or -1, how many)."""
    first, bad = -1, 0
    for i in range(start, stop):
        if _refused_k(s, _game_k(games, subset, i), actions[i], legal, have_legal, i, rules):
            first = i if bad == 0 else first
            bad += 1
    return first, bad


@kernel(counted=False)
def _apply_range_k(s, actions, games, subset, start, stop, autoreset, rules, keys, order):
    """Applies the (checked) actions of the games start..stop-1 of the step (`keys`,
    `order`: the dealing's scratch). The per-game rules are inlined here (one call a range,
    not several a game)."""
    batch_size = s[PHASE].size
    for i in range(start, stop):
        apply_action_k(s, _game_k(games, subset, i), actions[i], autoreset, batch_size, rules, keys, order)


@kernel(ahead=("game", "threads"), seconds=12.5, signature=(
        INT, INT, FLAG, BUFFER, INTS, GAMES, FLAG, SETS, FLAG, FLAG, RULES))
def step_range_k(start, stop, checked, buffer, actions, games, subset, legal, have_legal, autoreset, rules):
    """[`step`][]'s one job over the games start..stop-1 of the step (`threads.over_games`
    spreads it): returns (position of the first illegal action or -1, how many, whether the
    actions were applied). Unless `checked`, the actions are checked first, and applied only
    when the range is the whole step and none is refused: all or nothing. A step spread in
    chunks is so checked chunk by chunk, then, when no chunk refused an action, applied chunk
    by chunk (`checked`)."""
    s = state_arrays_k(buffer)
    if not checked:
        first, bad = _check_range_k(s, actions, games, subset, legal, have_legal, start, stop, rules)
        if bad or start > 0 or stop < actions.size:
            return first, bad, False
    _apply_range_k(s, actions, games, subset, start, stop, autoreset, rules, np.empty(52, dtype=np.uint64),
                   np.empty(52, dtype=np.int64))
    return -1, 0, True


@kernel(parallel=True)
def _step_parallel(checked, buffer, actions, games, subset, legal, have_legal, autoreset, rules):
    """`step_range_k` of every game over numba's threads (tbb), `PARALLEL_CHUNK` games at a
    time: every chunk checked, then, when none refused an action, every chunk applied."""
    n = actions.size
    chunks = (n + PARALLEL_CHUNK - 1) // PARALLEL_CHUNK
    first, bad = np.full(chunks, -1, dtype=np.int64), np.zeros(chunks, dtype=np.int64)
    applied = np.zeros(chunks, dtype=np.bool_)
    for c in prange(chunks):
        first[c], bad[c], applied[c] = step_range_k(c * PARALLEL_CHUNK, min(n, (c + 1) * PARALLEL_CHUNK), checked,
                                                    buffer, actions, games, subset, legal, have_legal, autoreset, rules)
    if bad.sum():
        return first[np.flatnonzero(bad)[0]], bad.sum(), False
    if not applied.all():
        for c in prange(chunks):
            step_range_k(c * PARALLEL_CHUNK, min(n, (c + 1) * PARALLEL_CHUNK), True, buffer, actions, games, subset,
                         legal, have_legal, autoreset, rules)
    return -1, 0, True


@kernel(ahead=("game", "one game"), seconds=10, signature=(BUFFER, GAMES, INT, RULES))
def _start_games_k(buffer, games, what, rules):
    """What `init` (`what` 0: new games) and `set_cards` (1: the deal's cards are in
    `dealt` and `talon_cards`) do to each of `games`."""
    s = state_arrays_k(buffer)
    keys, order = np.empty(52, dtype=np.uint64), np.empty(52, dtype=np.int64)  # dealing's scratch
    for g in games:
        if what == 0:
            _start_game_k(s, g, rules, keys, order)
        else:
            install_deal_k(s, g)


@kernel
def _classes_k(trick, mode, cards, rules):
    """[`play_classes`][] (`cards` empty) or [`ruled_out`][] of `cards`, over games."""
    n = trick.shape[0]
    if cards.size:
        out = np.zeros((n, 1), dtype=np.uint64)
        for i in range(n):
            out[i, 0] = _ruled_out_k(trick[i, 0], trick[i, 1], trick[i, 2], mode[i], cards[i], rules)
        return out
    out = np.zeros((n, 5), dtype=np.uint64)
    for i in range(n):
        classes, used = _play_classes_k(trick[i, 0], trick[i, 1], trick[i, 2], mode[i], rules)
        for k in range(used):
            out[i, k] = classes[k]
    return out




# ----------------------------------------------------------------------------- the public rules

def _start_game(state: State, games: np.ndarray) -> None:
    # What a program that plays games compiles (on a first run), unless a one-game view said so first.
    compile_ahead("game", "the game's kernels", unless=("one game",))
    _start_games_k(state.buffer, contiguous(games, np.intp), 0, state.rule_code)


def set_cards(state: State, games: np.ndarray, dealt: np.ndarray, talon_cards: np.ndarray) -> None:
    """Start the current deal of `games` with these cards (as dealt, and the talon).

    The dealing step of [`step`][]; the record replayer calls it with a record's cards.
    `dealt` is int8[G, 3, 16] (or broadcasts to it), `talon_cards` int8[G, 4]; card ids
    0..51, -1 for none; anything else is a one-line ValueError, the state unchanged.
    """
    games = game_numbers(games, state.batch_size, "engine.set_cards")
    cards = []
    for name, value, shape in (("dealt", dealt, (3, 16)), ("talon_cards", talon_cards, (4,))):
        value = np.asarray(value)
        try:
            value = np.broadcast_to(value, (games.size, *shape))
        except ValueError:
            raise ValueError(f"engine.set_cards: {name} must have shape ({games.size}, "
                             f"{', '.join(map(str, shape))}), got {value.shape}") from None
        if value.dtype.kind not in "iu" or (value.size and (value.min() < -1 or value.max() > 51)):
            raise ValueError(f"engine.set_cards: {name} must be card ids 0..51 (-1 for none), got {shorten(value)}")
        cards.append(value)
    _set_cards_checked(state, games, cards[0], cards[1])


def _set_cards_checked(state: State, games: np.ndarray, dealt: np.ndarray, talon_cards: np.ndarray) -> None:
    """[`set_cards`][] once its input is known good (the OpenSpiel adapter's chance outcomes,
    which it checks itself, come here once a card)."""
    state.dealt[games] = dealt
    state.talon_cards[games] = talon_cards
    _start_games_k(state.buffer, contiguous(games, np.intp), 1, state.rule_code)


def game_numbers(games, batch_size: int, what: str) -> np.ndarray:
    """`games` (an index array, a boolean mask or a slice, as numpy indexes the batch) as
    `intp[k]` game numbers, or a one-line ValueError."""
    try:
        rows = np.arange(batch_size)[games]
    except (IndexError, TypeError, ValueError):
        rows = None
    if rows is None or np.ndim(rows) != 1:
        raise ValueError(f"{what}: games must be game numbers 0..{batch_size - 1} (an index array, a boolean mask "
                         f"or a slice), got {shorten(games)}")
    return rows


# ----------------------------------------------------------------------------- legality

def roles(state: State) -> np.ndarray:
    """int8[B,3]: the role of each seat (0 dealer, 1 playmaker, 2 third)."""
    return ((np.arange(3) - state.dealer[:, None]) % 3).astype(np.int8)


def trump_suit(mode: np.ndarray) -> np.ndarray:
    """The trump suit of each mode, 4 ("no suit") in NT, MIN and before the choice."""
    mode = np.asarray(mode)
    return np.where((mode >= 0) & (mode < 4), mode, 4).astype(np.int8)



def play_classes(rules: Rules, trick: np.ndarray, mode: np.ndarray) -> list:
    """R13-R15 as card classes in priority order (a list of uint64[B] sets, or scalars).
    The legal plays of a hand are its cards in the first class it holds any card of, so
    playing a card of class k shows to everyone that the hand held no card of the classes
    before k ([`ruled_out`][] reads voids that way, into `State.shown_out`).

    Default rules: the led suit (R13), trumps (R14), any card; the leader: any card.
    `must_overtake` puts first the led-suit cards above the best one on the table (unless
    the trick is already trumped); `must_overtrump` puts the trumps above the best trump
    on the table right after the led suit, when trumps were not led (R15).
    The kernel of legal play computes them (`trick` int8[B, 3] by position, `mode` int8[B]).
    """
    trick, mode = contiguous(trick, np.int8).reshape(-1, 3), contiguous(mode, np.int8).reshape(-1)
    classes = _classes_k(trick, mode, np.zeros(0, dtype=np.int8), _rule_code(rules))
    used = 5 if rules.must_overtake or rules.must_overtrump else 3
    return [classes[:, k] for k in range(used - 1)] + [ALL_CARDS]


def ruled_out(rules: Rules, trick: np.ndarray, mode: np.ndarray, cards: np.ndarray) -> np.ndarray:
    """uint64[G]: the cards a seat shows it does not hold by playing `cards` to `trick` (the
    trick before the card, by position): a card of class k ([`play_classes`][]) rules out the
    classes before k (R13: a void in the led suit; R14: no trump either; the R15 options:
    nothing that could beat the table). Leading shows nothing. Kept in `State.shown_out`."""
    trick, mode = contiguous(trick, np.int8).reshape(-1, 3), contiguous(mode, np.int8).reshape(-1)
    cards = contiguous(np.broadcast_to(cards, mode.shape), np.int8)
    return _classes_k(trick, mode, cards, _rule_code(rules))[:, 0] if cards.size else np.zeros(0, np.uint64)


def legal_bits(state: State, games: np.ndarray | None = None) -> np.ndarray:
    """uint64[B] (or [len(games)]): bit a is set when action a is legal for the seat to act."""
    if games is None:
        rows, subset, n = _NO_GAMES, False, state.phase.shape[0]
    else:
        rows, subset = game_numbers(games, state.batch_size, "engine.legal_bits"), True
        n = rows.size
    out = np.empty(n, dtype=np.uint64)
    over_games(legal_range_k, n, state.buffer, rows, subset, out, state.rule_code, threads_from=_LEGAL_THREADS_FROM,
               parallel=_legal_parallel if n >= _PARALLEL_FROM and _parallel(n) else None)
    return out


_NO_GAMES = np.zeros(0, dtype=np.intp)


def _parallel(games: int) -> bool:
    """Whether `games` games run on every core: from _PARALLEL_FROM games, when numba has threads
    on a layer that forked workers survive (`threads.PARALLEL_SAFE`)."""
    if games < _PARALLEL_FROM or not PARALLEL_SAFE or numba.get_num_threads() < 2:
        return False
    announce_compiling((_legal_parallel, _step_parallel), "the engine's parallel kernels")
    return True


def legal_action_mask(state: State) -> np.ndarray:
    """bool[B,58]: the legal actions of the seat to act (all False once a game is over)."""
    return bits_to_bool(legal_bits(state), NUM_ACTIONS)


# ----------------------------------------------------------------------------- step

def step(state: State, actions, autoreset: bool = False, legal: np.ndarray | None = None,
         games: np.ndarray | None = None) -> State:
    """Apply one decision per game (ignored for finished games); returns `state`.

    `games` (an index array) steps only those games, `actions` then holding one action
    per listed game; the other games and their step events are left as they are.
    With `autoreset` a game that ends is replaced at once by the slot's next game, whose
    seed is the old one plus the batch size (slot i of a batch started at seed S plays
    S + i, S + i + B, ...), so every game is still reproduced by its seed alone;
    `game_ended` and `final_scores` keep what happened. `legal` may pass
    `legal_bits(state, games)` when the caller has just computed it for this very state.
    """
    if type(actions) is not np.ndarray:
        actions = np.asarray(actions)
    subset = games is not None
    games = _checked_games(games, state.batch_size) if subset else _NO_GAMES
    n = games.size if subset else state.phase.shape[0]
    if actions.shape != (n,) or actions.dtype.kind not in "iu":
        raise ValueError(f"actions must be integers of shape ({n},), got {actions.dtype} {actions.shape}")
    if legal is None:
        legal = _NO_LEGAL
    else:
        legal = np.asarray(legal)
        if legal.shape != (n,) or legal.dtype.kind not in "iu":
            raise ValueError(f"legal must be legal_bits(state, games): uint64 of shape ({n},), "
                             f"got {legal.dtype} {legal.shape}")
        legal = contiguous(legal, np.uint64)
    # Negative ids (and uint64 ones from 2**63) become negative int64s: refused as out of range.
    first, bad = _step_games(n, state.buffer, contiguous(actions, np.int64), games, subset, legal,
                             legal is not _NO_LEGAL, autoreset is True or bool(autoreset), state.rule_code)
    if bad:
        raise IllegalActionError(illegal_action_message(state, int(games[first]) if subset else first,
                                                  int(actions[first]), bad))
    return state


def _step_games(n: int, *arguments) -> tuple[int, int]:
    """`step_range_k` over the `n` games of the step (`arguments`: its own from `buffer` on),
    spread by `threads.over_games`: one call checks and applies a small batch; a big one is
    checked chunk by chunk, then applied chunk by chunk when no chunk refused an action (all or
    nothing). Returns (position of the first illegal action or -1, how many)."""
    parallel = _step_parallel if n >= _PARALLEL_FROM and _parallel(n) else None
    done = over_games(step_range_k, n, False, *arguments, threads_from=_STEP_THREADS_FROM, parallel=parallel)
    if len(done) == 1:
        first, bad, applied = done[0]
    else:  # chunks: checked only
        bad, applied = sum(chunk[1] for chunk in done), False
        first = next((chunk[0] for chunk in done if chunk[1]), -1)
    if not bad and not applied:
        over_games(step_range_k, n, True, *arguments, threads_from=_STEP_THREADS_FROM, parallel=parallel)
    return first, bad


_NO_LEGAL = np.zeros(0, dtype=np.uint64)


def _checked_games(games, batch_size: int) -> np.ndarray:
    """`games` of [`step`][] as `intp[k]`: distinct game numbers 0..B-1, or a ValueError.

    A repeated game would be stepped twice with one validation, and numpy would wrap -1 to
    the last game, so both are refused. An index array in increasing order (what
    `np.flatnonzero` gives, as in the vec env's opponent rounds) is distinct with one
    vector comparison, and its first and last entries bound it; only others pay for
    `np.unique`."""
    games = np.asarray(games)
    if games.ndim != 1 or games.dtype.kind not in "iu":
        raise ValueError(f"games must be a 1-D array of game numbers 0..{batch_size - 1}, "
                         f"got {games.dtype} {games.shape}")
    if games.size:
        if games.size == 1 or not np.count_nonzero(games[1:] <= games[:-1]):
            low, high = games[0], games[-1]
        else:
            values, counts = np.unique(games, return_counts=True)
            if values.size != games.size:
                raise ValueError(f"games must be distinct, got game {values[counts > 1][0]} more than once")
            low, high = values[0], values[-1]
        if low < 0 or high >= batch_size:
            raise ValueError(f"games must be game numbers 0..{batch_size - 1}, got {low if low < 0 else high}")
    return contiguous(games, np.intp)



STRENGTH = np.array([[[card_strength_k.py_func(c, mode, led) for c in range(52)] for led in range(4)]
                     for mode in range(6)], dtype=np.int8)
"""STRENGTH[mode, led suit, card]: [`card_strength_k`][] (R16) as a table, for numpy code."""


@kernel
def _deal_rules_k(trick, dealer, mode, tricks_won, positions, targets, points):
    """The rules' own R16, R23 and R24 over games, for the views: the trick's winning position
    (when `positions` is not empty), each seat's target and its points."""
    for g in range(mode.size):
        if positions.size:
            positions[g] = trick_winner_k(trick[g, 0], trick[g, 1], trick[g, 2], mode[g])
        if targets.size:
            for seat in range(3):
                role = (seat - np.int64(dealer[g])) % 3
                targets[g, seat] = _target_k(role, mode[g])
                points[g, seat] = _points_k(np.int64(tricks_won[g, seat]), role, mode[g])


_NO_ROWS = np.zeros((0, 3), dtype=np.int8)


def _games_int8(value, shape_tail: tuple, what: str) -> np.ndarray:
    """An int array as C-contiguous int8 `[G, *shape_tail]` (the rules' values fit in int8)."""
    value = np.asarray(value)
    if value.dtype.kind not in "iu" or value.ndim != 1 + len(shape_tail) or value.shape[1:] != shape_tail:
        raise ValueError(f"{what} must be integers of shape (games, {', '.join(map(str, shape_tail))})"
                         if shape_tail else f"{what} must be integers of shape (games,)")
    return contiguous(value, np.int8)


def trick_winner_position(trick: np.ndarray, mode: np.ndarray) -> np.ndarray:
    """R16: position (0 = leader) of the highest trump, else of the highest card of the led
    suit. In a trick still being played the empty positions (-1) never win; an empty trick
    gives position 0. `trick` int[G, 3] by position, `mode` int[G]; int64[G]."""
    trick, mode = _games_int8(trick, (3,), "trick"), _games_int8(mode, (), "mode")
    positions = np.zeros(mode.size, dtype=np.int64)
    _deal_rules_k(trick, mode, mode, _NO_ROWS, positions, _NO_ROWS, _NO_ROWS)
    return positions


def _targets_and_points(dealer, mode, tricks_won) -> tuple[np.ndarray, np.ndarray]:
    dealer, mode = _games_int8(dealer, (), "dealer"), _games_int8(mode, (), "mode")
    won = _games_int8(np.zeros((mode.size, 3), np.int8) if tricks_won is None else tricks_won, (3,), "tricks_won")
    targets, points = np.zeros((mode.size, 3), dtype=np.int8), np.zeros((mode.size, 3), dtype=np.int8)
    _deal_rules_k(_NO_ROWS, dealer, mode, won, np.zeros(0, dtype=np.int64), targets, points)
    return targets, points


def targets(dealer: np.ndarray, mode: np.ndarray) -> np.ndarray:
    """int8[B, 3]: the tricks each seat must make, by its role (R23; R24 in MIN)."""
    return _targets_and_points(dealer, mode, None)[0]


def deal_points(tricks_won: np.ndarray, dealer: np.ndarray, mode: np.ndarray) -> np.ndarray:
    """R23, R24: points of each seat, `W - Z`, or `Z - W` in MIN (int8[B, 3])."""
    return _targets_and_points(dealer, mode, tricks_won)[1]


def win_credits(scores: np.ndarray) -> np.ndarray:
    """float[G,3]: R6, each seat's share of the win: the highest total wins, and each of
    k tied leaders gets 1/k (equal totals share the win)."""
    scores = np.asarray(scores)
    leader = scores == scores.max(axis=1, keepdims=True)
    return leader / leader.sum(axis=1, keepdims=True)


def places(scores: np.ndarray) -> np.ndarray:
    """float[G,3]: R6, each seat's final place (1 = first); tied seats share the average place."""
    scores = np.asarray(scores)
    above = (scores[:, None, :] > scores[:, :, None]).sum(axis=2)  # players strictly ahead
    tied = (scores[:, None, :] == scores[:, :, None]).sum(axis=2)  # itself included
    return 1 + above + (tied - 1) / 2


# ----------------------------------------------------------------------------- explanations

def illegal_reason(state: State, game: int, action: int) -> str:
    """Why `action` is illegal in `game`, citing the rule (`''` if it is legal)."""
    phase, seat = int(state.phase[game]), int(state.to_act[game])
    if phase == OVER:
        return "the game is over"
    if not 0 <= action < NUM_ACTIONS:
        return f"action ids are 0..{NUM_ACTIONS - 1}"
    if (int(legal_bits(state.take([game]))[0]) >> action) & 1:
        return ""
    if phase == MODE:
        if action < MODE_ACTION_OFFSET:
            return "R8: the playmaker must choose a mode (actions 52..57), not a card"
        return f"R8: seat {seat} has already chosen mode {MODE_NAMES[action - MODE_ACTION_OFFSET]} as playmaker"
    rule = {GIVE: "R21", RETURN: "R21", DISCARD: "R10", PLAY: "R12"}[phase]
    if action >= MODE_ACTION_OFFSET:
        return f"{rule}: a card is expected in this decision ({DECISIONS[phase]}), not a mode"
    hand = int(state.hands[game, seat])
    if not hand >> action & 1:
        return f"{rule}: seat {seat} does not hold {action_name(action)}"
    # Only play can refuse a held card: R13-R15, as the rules' kernel classes the plays.
    return _refused_play_reason(state, game, action, seat, hand)


# The rule each class of play_classes stands for (3 classes: the default rules; 5: with an
# R15 option), and the class it narrows: R15's overtake narrows the led suit, its overtrump
# the trumps. The last class (any card) refuses nothing.
_CLASS_RULES = {3: (("R13", -1), ("R14", -1), ("", -1)),
                5: (("R15 overtake", 1), ("R13", -1), ("R15 overtrump", 3), ("R14", -1), ("", -1))}


def _refused_play_reason(state: State, game: int, action: int, seat: int, hand: int) -> str:
    """R13-R15: why the held card `action` may not be played, from [`play_classes`][]: the
    first class the hand holds (its legal plays) names the rule, or the wider class it
    narrows does, when the card is not even in that (a card off the led suit breaks R13, not
    R15's overtaking)."""
    trick, mode = state.trick[game : game + 1], state.mode[game : game + 1]
    classes = [int(np.asarray(cards).flat[0]) for cards in play_classes(state.rules, trick, mode)]
    rules = _CLASS_RULES[len(classes)]
    legal = next(k for k, cards in enumerate(classes) if hand & cards)
    rule, wider = rules[legal]
    if wider >= 0 and not classes[wider] >> action & 1:
        rule = rules[wider][0]
    if rule == "R13":
        return f"R13: seat {seat} must follow suit {action_name(int(state.trick[game, 0]))[1]}"
    if rule == "R14":
        return f"R14: seat {seat} cannot follow suit and must play a trump"
    if rule == "R15 overtake":
        return "R15: with must_overtake, seat must beat the best card of the led suit"
    return "R15: with must_overtrump, seat must beat the trump already in the trick"


def illegal_action_message(state: State, game: int, action: int, n_bad: int) -> str:
    seat, phase = int(state.to_act[game]), int(state.phase[game])
    legal = [action_name(a) for a in card_list(int(legal_bits(state.take([game]))[0]))]
    where = f"game {game}: " if state.batch_size > 1 else ""
    more = f" ({n_bad - 1} other game(s) also got illegal actions)" if n_bad > 1 else ""
    shown = action_name(action) if 0 <= action < NUM_ACTIONS else "out of range"
    return (f"{where}illegal action {action} ({shown}) for seat {seat} in decision "
            f"'{DECISIONS[phase]}': {illegal_reason(state, game, action)}; legal actions: "
            f"{', '.join(legal)}{more}. The state is unchanged.")
