"""Test fixture: 0.3.0's numpy engine, frozen (the reference of the compiled engine).

A verbatim copy of ``sergeant_major_env/engine.py`` at commit ff9955b (version 0.3.0, before
its rules became compiled kernels); only the relative imports were made absolute. The
kernels of ``sergeant_major_env.engine`` must give the same games bit for bit: the same
deals, masks and states after every step (tests/test_kernels_match_reference.py), and
benchmarks/engine.py reports its speed beside theirs. Do not edit it to follow changes of
the engine: a change of the rules' results is a new version, and then this file and the
test are replaced together, on purpose.

The original module docstring:

The batched rules engine of 3-5-8: the one place where the rules of RULES.md live.

A :class:`State` is a plain container of numpy arrays over a batch of B independent
games; :func:`init`, :func:`legal_action_mask` and :func:`step` are the rules over it
(observations are in :mod:`sergeant_major_env.observation`). Every view of the game
(the PettingZoo and Gymnasium environments, the SB3 vector env, the agents' search,
the record replayer) drives these functions.

Decisions (``state.phase``; the seat to act is ``state.to_act``):

=====  ==================  =======================================================
phase  decision            legal actions
=====  ==================  =======================================================
0      ``mode``            52..57: a mode the playmaker has not chosen yet (R8)
1      ``exchange_give``   a card of the giver's hand (R21)
2      ``exchange_return`` a card of the receiver's hand, after a trump was given (R21)
3      ``discard``         a card of the playmaker's 20 (section 5, four decisions)
4      ``play``            a card allowed by R13-R15
5      game over           none (the game's actions are ignored)
=====  ==================  =======================================================

Forced returns (a non-trump given, R21) are applied inside :func:`step`.
:func:`step` validates all actions first and raises :class:`IllegalActionError`
without touching the state if any is illegal; otherwise it updates the state in place.

Randomness is counter-based: the cards of deal k of a game are a function of the game's
own seed and k only, so a game plays out the same alone or in any
batch, and duplicate tables can replay the same deals under other seatings.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from sergeant_major_env.cards import (
    MINIMUM,
    MODE_ACTION_OFFSET,
    MODE_NAMES,
    NUM_ACTIONS,
    FREE_MODES,
    SAME_SUIT,
    SUIT_MASKS,
    TRUMPS,
    above,
    action_name,
    bit,
    bits_to_bool,
    card_list,
    cards_to_bits,
    count,
    highest,
    suit_of,
)
from sergeant_major_env.rules import Rules
from sergeant_major_env.limits import check_count, check_fits, shorten
from sergeant_major_env.seeding import check_seed_span

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

_U64 = np.uint64
# Stream ids of the counter-based generator, one per kind of random draw.
_FIRST_GAME = np.zeros(1, dtype=np.intp)
NEXT_SEAT = np.array([1, 2, 0], dtype=np.int8)  # left of each seat (R1)
_POSITION = np.array([0, 1, 2, 1, 2], dtype=np.intp)  # [seat - leader]: position in the trick
_STREAM_GAME, _STREAM_DEALER, _STREAM_DECK, _STREAM_TALON = 0x5EED, 0xDEA1, 0xDEC0, 0x7A10


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser: a bijective, well-mixed hash of uint64 values."""
    with np.errstate(over="ignore"):
        z = np.asarray(x, dtype=_U64) + _U64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> _U64(30))) * _U64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> _U64(27))) * _U64(0x94D049BB133111EB)
        return z ^ (z >> _U64(31))


def _random(key: np.ndarray, stream: int, counter: np.ndarray) -> np.ndarray:
    """Random uint64s indexed by (key, stream, counter); broadcasts key against counter."""
    return _mix(_mix(np.asarray(key, dtype=_U64) ^ _U64(stream)) ^ np.asarray(counter, dtype=_U64))


class IllegalActionError(ValueError):
    """An action the rules do not allow; the state was left unchanged."""


def _field(shape: tuple, dtype, initial=0, reset: str | None = None):
    """One array field of :class:`State`, declared once: its shape per game, dtype, initial
    value, and when the rules reset it to that value: ``"game"`` (a new game), ``"deal"``
    (a new deal), ``"step"`` (every :func:`step`: the step's events) or ``None`` (set by
    the rules themselves)."""
    return dataclasses.field(metadata={"shape": shape, "dtype": dtype, "initial": initial, "reset": reset})


@dataclasses.dataclass
class State:
    """B games as arrays (leading axis = game). Seats 0..2; cards as uint64 sets.

    Each field is declared once below (shape per game, dtype, initial value, reset), like
    Pgx's ``State``; :func:`init` builds the arrays from these declarations."""

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

    @property
    def exchange_count(self) -> np.ndarray:
        """int8[B,2]: cards due per pair of ``exchange_giver``/``exchange_receiver`` (0 if unused)."""
        rows = np.arange(self.batch_size)[:, None]
        due = self.exchange_due[rows, self.exchange_giver, self.exchange_receiver]
        return np.where(self.exchange_giver >= 0, due, 0).astype(np.int8)

    @property
    def batch_size(self) -> int:
        return self.phase.shape[0]

    def arrays(self) -> dict[str, np.ndarray]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "rules"}

    def take(self, games) -> "State":
        """A new state holding copies of the given games (an index array, a boolean mask or a slice)."""
        if isinstance(games, slice):
            return State(rules=self.rules, **{k: v[games].copy() for k, v in self.arrays().items()})
        index = np.asarray(games)
        if index.dtype == bool:
            index = np.flatnonzero(index)
        # ndarray.take copies rows about 3x faster than fancy indexing on these small arrays.
        return State(rules=self.rules, **{k: v.take(index, axis=0) for k, v in self.arrays().items()})

    def copy(self) -> "State":
        return self.take(slice(None))

    def put(self, games, other: "State") -> None:
        """Overwrite the given games with the games of ``other`` (same order)."""
        for name, value in other.arrays().items():
            getattr(self, name)[games] = value

    def nbytes_per_game(self) -> float:
        return sum(v.nbytes for v in self.arrays().values()) / self.batch_size


_ARRAY_FIELDS = tuple(f for f in dataclasses.fields(State) if f.name != "rules")
_RESETS = {when: tuple((f.name, f.metadata["initial"]) for f in _ARRAY_FIELDS if f.metadata["reset"] == when)
           for when in ("game", "deal", "step")}


def _empty(rules: Rules, batch: int) -> State:
    """B games with every field at its declared initial value."""
    return State(rules=rules, **{f.name: np.full((batch, *f.metadata["shape"]), f.metadata["initial"],
                                                 dtype=f.metadata["dtype"]) for f in _ARRAY_FIELDS})


def _reset(state: State, games, when: str) -> None:
    """Set the fields declared with ``reset=when`` back to their initial values in ``games``."""
    for name, initial in _RESETS[when]:
        getattr(state, name)[games] = initial


def game_seeds(seed: int, batch_size: int) -> np.ndarray:
    """The per-game seeds of a batch started from ``seed``: ``seed, seed + 1, ...``; each within
    the seed rule (:mod:`~sergeant_major_env.seeding`: the last, ``seed + batch_size - 1``, at
    most 2**63 - 1) and the batch within this machine's memory (a one-line ValueError)."""
    batch_size = check_count(batch_size, "engine.game_seeds: batch_size", 0)
    seed = check_seed_span(seed, batch_size)
    check_batch_fits(batch_size, "engine.game_seeds")
    return (np.uint64(seed) + np.arange(batch_size, dtype=np.uint64)).astype(np.uint64)


BYTES_PER_GAME = sum(int(np.prod(f.metadata["shape"], dtype=np.int64)) * np.dtype(f.metadata["dtype"]).itemsize
                     for f in _ARRAY_FIELDS)
"""Bytes of one game's :class:`State` (its arrays)."""

BATCH_BYTES_PER_GAME = 4 * BYTES_PER_GAME
"""What a batch holds at once per game while it is stepped (the state, a copy, the legal
actions, an observation's temporaries): the measure of :func:`check_batch_fits`."""


def check_batch_fits(batch_size: int, what: str = "a batch") -> None:
    """A one-line ValueError when ``batch_size`` games would not fit in this machine's available
    memory (:func:`sergeant_major_env.limits.check_fits`), before anything is allocated."""
    check_fits(f"{what} of {batch_size:,} games", batch_size * BATCH_BYTES_PER_GAME, "give a smaller batch")


def init(seeds, rules: Rules | None = None) -> State:
    """B new games, game i from ``seeds[i]`` (use :func:`game_seeds` for ``seed, seed+1, ...``).

    A game depends on its own seed only: the same seed gives the same game in any batch.
    ``seeds`` is a 1-D sequence (a single number is refused: ``init(5)`` is not five games),
    ``rules`` a :class:`Rules` or None (the rule book's); anything else, or a batch this
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


def _game_key(state: State, games: np.ndarray) -> np.ndarray:
    return _random(state.seed[games], _STREAM_GAME, 0)


def _start_game(state: State, games: np.ndarray) -> None:
    key = _game_key(state, games)
    state.first_dealer[games] = (_random(key, _STREAM_DEALER, 0) % _U64(3)).astype(np.int8)
    state.dealer[games] = state.first_dealer[games]
    _reset(state, games, "game")
    _start_deal(state, games)


def _start_deal(state: State, games: np.ndarray) -> None:
    """Shuffle and deal (R10, R11) from the game's counter-based random stream."""
    n = games.size
    key = _game_key(state, games)
    deal = state.deal[games].astype(np.uint64)
    deck_key = _random(key, _STREAM_DECK, deal)
    deck = np.argsort(_random(deck_key[:, None], 0, np.arange(52)), axis=1).astype(np.int8)
    if state.rules.dealer_builds_talon:
        # R11: four positions of the 52-card deal, never the first or the last, never
        # adjacent. Drawing 4 of 47 slots and spreading them (+0, +1, +2, +3) is uniform
        # over such sets. The dealer places them face down, so it is a random choice here.
        slot_key = _random(key, _STREAM_TALON, deal)
        slots = np.sort(np.argsort(_random(slot_key[:, None], 0, np.arange(47)), axis=1)[:, :4], axis=1)
        talon_positions = 1 + slots + np.arange(4)
    else:
        talon_positions = np.broadcast_to(np.arange(48, 52), (n, 4))
    in_talon = np.zeros((n, 52), dtype=bool)
    np.put_along_axis(in_talon, talon_positions, True, axis=1)
    sequence = np.take_along_axis(deck, np.argsort(in_talon, axis=1, kind="stable"), axis=1)
    # The other 48 cards go one at a time clockwise, starting left of the dealer.
    rounds = sequence[:, :48].reshape(n, 16, 3)
    dealt = np.empty((n, 3, 16), dtype=np.int8)
    for k in range(3):
        dealt[np.arange(n), (state.dealer[games] + 1 + k) % 3] = rounds[:, :, k]
    set_cards(state, games, dealt, sequence[:, 48:])


def set_cards(state: State, games: np.ndarray, dealt: np.ndarray, talon_cards: np.ndarray) -> None:
    """Start the current deal of ``games`` with these cards (as dealt, and the talon).

    The dealing step of :func:`step`; the record replayer calls it with a record's cards.
    """
    playmaker = (state.dealer[games] + PLAYMAKER) % 3
    state.dealt[games] = dealt
    state.first_six[games] = cards_to_bits(state.dealt[games, playmaker, :6])
    state.talon_cards[games] = talon_cards
    state.hands[games] = cards_to_bits(dealt)
    state.talon[games] = cards_to_bits(talon_cards)
    state.phase[games] = MODE
    state.to_act[games] = playmaker
    _reset(state, games, "deal")


# ----------------------------------------------------------------------------- legality

def roles(state: State) -> np.ndarray:
    """int8[B,3]: the role of each seat (0 dealer, 1 playmaker, 2 third)."""
    return ((np.arange(3) - state.dealer[:, None]) % 3).astype(np.int8)


def trump_suit(mode: np.ndarray) -> np.ndarray:
    """The trump suit of each mode, 4 ("no suit") in NT, MIN and before the choice."""
    mode = np.asarray(mode)
    return np.where((mode >= 0) & (mode < 4), mode, 4).astype(np.int8)


_ALL_CARDS = np.uint64((1 << 52) - 1)


def play_classes(rules: Rules, trick: np.ndarray, mode: np.ndarray) -> list:
    """R13-R15 as card classes in priority order (a list of uint64[B] sets, or scalars).
    The legal plays of a hand are its cards in the first class it holds any card of, so
    playing a card of class k shows to everyone that the hand held no card of the classes
    before k (:func:`ruled_out` reads voids that way, into ``State.shown_out``).

    Default rules: the led suit (R13), trumps (R14), any card; the leader: any card.
    ``must_overtake`` puts first the led-suit cards above the best one on the table (unless
    the trick is already trumped); ``must_overtrump`` puts the trumps above the best trump
    on the table right after the led suit, when trumps were not led (R15).
    """
    led_suit = SAME_SUIT[trick[:, 0]]  # empty when leading
    trumps = TRUMPS[mode] * (led_suit != 0)  # the leader plays any card
    if not (rules.must_overtake or rules.must_overtrump):
        return [led_suit, trumps, _ALL_CARDS]
    in_suit = (bit(trick)[:, :, None] & np.stack([led_suit, trumps], axis=1)[:, None, :]) != 0
    # Best card of the led suit / of trumps on the table, -1 if none.
    best_led, best_trump = np.where(in_suit, trick[:, :, None], -1).max(axis=1).T
    zero = np.uint64(0)
    trumped = (best_trump >= 0) & (led_suit != trumps)
    overtake = np.where(~trumped, above(best_led), zero) if rules.must_overtake else zero
    overtrump = np.where(led_suit != trumps, above(best_trump), zero) if rules.must_overtrump else zero
    return [overtake, led_suit, overtrump, trumps, _ALL_CARDS]


def _legal_plays(rules: Rules, hand: np.ndarray, trick: np.ndarray, mode: np.ndarray) -> np.ndarray:
    """R13-R15: the cards of ``hand`` the seat to act may play to ``trick``."""
    classes = play_classes(rules, trick, mode)
    if hand.size == 1:  # one game: the same choice in Python ints (fewer numpy calls)
        held = hand.item(0)
        for cards in _class_ints(classes)[:-1]:
            if held & cards:
                return np.array([held & cards], dtype=np.uint64)
        return hand & classes[-1]
    legal = hand & classes[-1]
    for cards in reversed(classes[:-1]):  # the first class the hand holds any card of
        held = hand & cards
        legal = np.where(held != 0, held, legal)
    return legal


def ruled_out(rules: Rules, trick: np.ndarray, mode: np.ndarray, cards: np.ndarray) -> np.ndarray:
    """uint64[G]: the cards a seat shows it does not hold by playing ``cards`` to ``trick`` (the
    trick before the card, by position): a card of class k (:func:`play_classes`) rules out the
    classes before k (R13: a void in the led suit; R14: no trump either; the R15 options:
    nothing that could beat the table). Leading shows nothing. Kept in ``State.shown_out``."""
    if not (rules.must_overtake or rules.must_overtrump):  # whole suits: the suits alone decide
        return _SUITS_RULED_OUT[mode, trick[:, 0] // 13, np.asarray(cards) // 13]
    card = bit(cards)
    classes = play_classes(rules, trick, mode)
    found = trick[:, 0] < 0  # leading shows nothing
    shown = np.zeros(card.shape, dtype=np.uint64)
    for cards_of_class in classes[:-1]:  # the last class (any card) rules out nothing
        found = found | ((cards_of_class & card) != 0)
        shown |= np.where(found, _NONE, cards_of_class)
    return shown


_NONE = np.uint64(0)


def _class_ints(classes: list) -> list[int]:
    """:func:`play_classes` of one game as Python ints."""
    return [c.item(0) for c in classes]


def _ruled_out_one(classes: list[int], card: int) -> int:
    """:func:`ruled_out` of one game, from its :func:`play_classes` as Python ints: the
    classes before the first one holding ``card``."""
    shown = 0
    for cards in classes:
        if cards >> card & 1:
            break
        shown |= cards
    return shown


def _suits_ruled_out() -> np.ndarray:
    """uint64[mode, led suit, card suit]: :func:`ruled_out` under the rule book's default
    rules, where every class of :func:`play_classes` is a whole suit (the led suit, trumps,
    any card), so that the suits alone decide it; computed from play_classes itself. Index -1
    (mode not chosen; nothing led) is the last row, as numpy reads negative indices."""
    table = np.zeros((7, 5, 4), dtype=np.uint64)
    for mode in range(-1, 6):
        for led in range(-1, 4):
            trick = np.array([[13 * led if led >= 0 else -1, -1, -1]], dtype=np.int8)
            classes = _class_ints(play_classes(Rules(), trick, np.array([mode], dtype=np.int8)))
            for suit in range(4):
                table[mode, led, suit] = _ruled_out_one(classes, 13 * suit + 12)  # any card of the suit
    return table


_SUITS_RULED_OUT = _suits_ruled_out()


def legal_bits(state: State, games: np.ndarray | None = None) -> np.ndarray:
    """uint64[B] (or [len(games)]): bit a is set when action a is legal for the seat to act."""
    rows = np.arange(state.batch_size) if games is None else games
    select = slice(None) if games is None else games
    to_act = state.to_act[select]  # -1 once a game is over: reads a hand that is ignored below
    hand = state.hands[rows, to_act]
    phase = state.phase[select]
    if phase.size == 1:  # one game (the AEC env, replays): only its own decision's set
        phase = int(phase[0])
        if phase == PLAY:
            return _legal_plays(state.rules, hand, state.trick[select], state.mode[select])
        if phase == MODE:
            return FREE_MODES[state.modes_used[rows, to_act]]
        return hand if phase != OVER else np.zeros(1, dtype=np.uint64)
    free_modes = FREE_MODES[state.modes_used[rows, to_act]]  # R8
    plays = _legal_plays(state.rules, hand, state.trick[select], state.mode[select])
    # Exchange gives, free returns and discards may be any held card (R21, section 5).
    return np.choose(phase, (free_modes, hand, hand, hand, plays, np.uint64(0)))


def legal_action_mask(state: State) -> np.ndarray:
    """bool[B,58]: the legal actions of the seat to act (all False once a game is over)."""
    return bits_to_bool(legal_bits(state), NUM_ACTIONS)


# ----------------------------------------------------------------------------- step

def step(state: State, actions, autoreset: bool = False, legal: np.ndarray | None = None,
         games: np.ndarray | None = None) -> State:
    """Apply one decision per game (ignored for finished games); returns ``state``.

    ``games`` (an index array) steps only those games, ``actions`` then holding one action
    per listed game; the other games and their step events are left as they are.
    With ``autoreset`` a game that ends is replaced at once by the slot's next game, whose
    seed is the old one plus the batch size (slot i of a batch started at seed S plays
    S + i, S + i + B, ...), so every game is still reproduced by its seed alone;
    ``game_ended`` and ``final_scores`` keep what happened. ``legal`` may pass
    ``legal_bits(state, games)`` when the caller has just computed it for this very state.
    """
    actions = np.asarray(actions)
    if games is not None:
        games = _checked_games(games, state.batch_size)
    n = state.batch_size if games is None else games.size
    if actions.shape != (n,) or actions.dtype.kind not in "iu":
        raise ValueError(f"actions must be integers of shape ({n},), got {actions.dtype} {actions.shape}")
    if games is None:  # the whole batch: slices instead of index arrays where it can
        games, select = (_FIRST_GAME if n == 1 else np.arange(n)), slice(None)
    else:
        select = games
    if legal is None:
        legal = legal_bits(state, None if isinstance(select, slice) else games)
    phase = state.phase[select]
    # numpy's shifts by 64 or more give 0, so out-of-range ids (negative ones wrap) are refused too.
    refused = ((legal >> actions.astype(np.uint64)) & np.uint64(1)) == 0
    if np.count_nonzero(refused):  # finished games ignore their actions; any other refusal is an error
        bad = np.flatnonzero(refused & (phase != OVER))
        if bad.size:
            raise IllegalActionError(_illegal_message(state, int(games[bad[0]]), int(actions[bad[0]]), bad.size))

    _reset(state, select, "step")
    if n == 1:  # one game (the AEC env, replays): no grouping needed
        groups = [] if phase[0] == OVER else [(int(phase[0]), games, actions)]
    else:
        present = np.flatnonzero(np.bincount(phase, minlength=OVER + 1)[:OVER])
        groups = [(p, games[phase == p], actions[phase == p]) for p in present.tolist()]
    for p, group, group_actions in groups:  # each game once, in the phase it was in
        _HANDLERS[p](state, group, group_actions)
    if autoreset:
        ended = games[state.game_ended[select]]
        if ended.size:
            state.episode[ended] += 1
            state.seed[ended] += np.uint64(state.batch_size)
            _start_game(state, ended)
    return state


def _checked_games(games, batch_size: int) -> np.ndarray:
    """``games`` of :func:`step` as ``intp[k]``: distinct game numbers 0..B-1, or a ValueError.

    A repeated game would be stepped twice with one validation, and numpy would wrap -1 to
    the last game, so both are refused. An index array in increasing order (what
    ``np.flatnonzero`` gives, as in the vec env's opponent rounds) is distinct with one
    vector comparison, and its first and last entries bound it; only others pay for
    ``np.unique``."""
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
    return games.astype(np.intp, copy=False)


def _choose_mode(state: State, games: np.ndarray, actions: np.ndarray) -> None:
    mode = (actions - MODE_ACTION_OFFSET).astype(np.int8)
    playmaker = state.to_act[games]
    state.mode[games] = mode
    state.modes_used[games, playmaker] |= (1 << mode).astype(np.uint8)  # R8
    # R17: exchanges only in trump deals after the first, and only with the option on.
    exchanging = (mode < 4) & (state.deal[games] > 0) & state.rules.exchanges
    _plan_exchanges(state, games[exchanging])
    _reveal_talon(state, games[~exchanging])


def _plan_exchanges(state: State, games: np.ndarray) -> None:
    """R18-R20: pair givers (positive points) with receivers (negative) in serving order."""
    if games.size == 0:
        return
    points = state.prev_points[games].astype(np.int16)
    dealer = state.dealer[games][:, None]
    giver = (dealer + _ORDER_GIVERS) % 3  # [G, 6]: every (giver, receiver) of EXCHANGE_ORDER
    receiver = (dealer + _ORDER_RECEIVERS) % 3
    rows = np.arange(games.size)[:, None]
    given_points, received_points = points[rows, giver], points[rows, receiver]
    has = (given_points > 0) & (received_points < 0)
    # R19: min(giver's points, receiver's lost points) covers all three cases.
    cards = np.minimum(given_points, -received_points)
    slot = np.cumsum(has, axis=1) - 1  # at most two pairs: points sum to zero over three seats
    row, pair = np.nonzero(has)
    game, pair_giver, pair_receiver = games[row], giver[row, pair], receiver[row, pair]
    state.exchange_giver[game, slot[row, pair]] = pair_giver
    state.exchange_receiver[game, slot[row, pair]] = pair_receiver
    state.exchange_due[game, pair_giver, pair_receiver] = cards[row, pair]
    exchanging = has.any(axis=1)
    started = games[exchanging]
    state.phase[started] = GIVE
    state.to_act[started] = state.exchange_giver[started, 0]
    _reveal_talon(state, games[~exchanging])  # R18: nobody scored, no exchange


_ORDER_GIVERS = np.array([giver for giver, _ in EXCHANGE_ORDER])
_ORDER_RECEIVERS = np.array([receiver for _, receiver in EXCHANGE_ORDER])


def _current_pair(state: State, games: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    pair = state.exchange_pair[games]
    return state.exchange_giver[games, pair], state.exchange_receiver[games, pair]


def _give(state: State, games: np.ndarray, cards: np.ndarray) -> None:
    giver, receiver = _current_pair(state, games)
    card_bit = bit(cards)
    state.hands[games, giver] &= ~card_bit
    state.hands[games, receiver] |= card_bit
    state.given[games, giver] |= card_bit
    state.received[games, receiver] |= card_bit
    # R21: after a trump the receiver chooses its return (a decision) ...
    trump = suit_of(cards) == state.mode[games]
    chooser = games[trump]
    state.phase[chooser] = RETURN
    state.to_act[chooser] = receiver[trump]
    state.exchange_trump[chooser] = cards[trump]
    # ... otherwise it must return its highest card of that suit, the one just given included.
    forced = games[~trump]
    suit_held = state.hands[forced, receiver[~trump]] & SUIT_MASKS[suit_of(cards[~trump])]
    _return_card(state, forced, highest(suit_held))


def _return_card(state: State, games: np.ndarray, cards: np.ndarray) -> None:
    giver, receiver = _current_pair(state, games)
    card_bit = bit(cards)
    state.hands[games, receiver] &= ~card_bit
    state.hands[games, giver] |= card_bit
    state.given[games, receiver] |= card_bit
    state.received[games, giver] |= card_bit
    state.last_returned[games] = cards
    state.exchange_trump[games] = -1
    state.exchange_done[games, giver, receiver] += 1
    # R20: a pair completes all its cards before the next pair starts.
    pair_done = state.exchange_done[games, giver, receiver] >= state.exchange_due[games, giver, receiver]
    state.phase[games[~pair_done]] = GIVE
    state.to_act[games[~pair_done]] = giver[~pair_done]
    finished = games[pair_done]
    state.exchange_pair[finished] += 1
    next_pair = np.minimum(state.exchange_pair[finished], 1)
    more = (state.exchange_pair[finished] < 2) & (state.exchange_giver[finished, next_pair] >= 0)
    state.phase[finished[more]] = GIVE
    state.to_act[finished[more]] = state.exchange_giver[finished[more], next_pair[more]]
    _reveal_talon(state, finished[~more])


def _reveal_talon(state: State, games: np.ndarray) -> None:
    """Section 5, step 4: the talon is shown to all and joins the playmaker's hand."""
    playmaker = (state.dealer[games] + PLAYMAKER) % 3
    state.hands[games, playmaker] |= state.talon[games]
    state.phase[games] = DISCARD
    state.to_act[games] = playmaker


def _discard(state: State, games: np.ndarray, cards: np.ndarray) -> None:
    playmaker = state.to_act[games]
    state.hands[games, playmaker] &= ~bit(cards)
    state.discards[games] |= bit(cards)
    done = games[count(state.discards[games]) == 4]
    state.phase[done] = PLAY
    state.leader[done] = state.to_act[done]  # the playmaker leads the first trick
    state.trick_leaders[done, 0] = state.to_act[done]


def _play(state: State, games: np.ndarray, cards: np.ndarray) -> None:
    if games.size == 1:
        _play_one(state, games.item(0), cards.item(0))
        return
    seat = state.to_act[games]
    card_bit = bit(cards)
    hand = state.hands[games, seat]
    # The index of this trick: every hand holds 16 cards at the first lead and gives one per trick.
    number = 16 - count(hand)
    state.hands[games, seat] = hand & ~card_bit
    state.played[games, seat] |= card_bit
    state.card_trick[games, cards] = number
    position = _POSITION[seat - state.leader[games]]  # 0 for the leader, then clockwise
    if np.count_nonzero(position):  # a lead shows nothing
        shown = ruled_out(state.rules, state.trick[games], state.mode[games], cards)
        if np.count_nonzero(shown):  # most cards follow suit and show nothing either
            state.shown_out[games, seat] |= shown
    state.trick[games, position] = cards
    state.to_act[games] = NEXT_SEAT[seat]  # R12: clockwise
    last = position == 2
    complete, number = games[last], number[last]
    if complete.size == 0:
        return
    trick = state.trick[complete]
    state.past_tricks[complete, number] = trick
    winner = (state.leader[complete] + trick_winner_position(trick, state.mode[complete])) % 3
    state.tricks_won[complete, winner] += 1
    state.last_trick[complete] = trick
    state.last_trick_leader[complete] = state.leader[complete]
    state.last_trick_winner[complete] = winner
    state.trick[complete] = -1
    state.leader[complete] = winner  # the winner leads the next trick
    state.to_act[complete] = winner
    going_on = number < 15
    state.trick_leaders[complete[going_on], number[going_on] + 1] = winner[going_on]
    _end_deal(state, complete[state.hands[complete, winner] == 0])  # all hands empty: 16 tricks


def _play_one(state: State, game: int, card: int) -> None:
    """:func:`_play` for one game (the AEC env and replays step one game at a time) with
    Python ints, where numpy's fixed cost per call is most of the batch code's cost. The
    same updates in the same order; tests/test_determinism.py checks that a game played
    alone (this path) and in a batch (the other) goes through the same states."""
    seat, leader = state.to_act.item(game), state.leader.item(game)
    hand = state.hands.item(game, seat)
    number = 16 - hand.bit_count()  # the index of this trick, as in _play
    state.hands[game, seat] = hand & ~(1 << card)
    state.played[game, seat] = state.played.item(game, seat) | 1 << card
    state.card_trick[game, card] = number
    position = (seat - leader) % 3  # 0 for the leader, then clockwise
    one = slice(game, game + 1)
    if position:  # a lead shows nothing
        if state.rules.must_overtake or state.rules.must_overtrump:
            shown = _ruled_out_one(_class_ints(play_classes(state.rules, state.trick[one], state.mode[one])), card)
        else:  # whole suits, as in ruled_out
            shown = _SUITS_RULED_OUT.item(state.mode.item(game), state.trick.item(game, 0) // 13, card // 13)
        if shown:
            state.shown_out[game, seat] = state.shown_out.item(game, seat) | shown
    state.trick[game, position] = card
    state.to_act[game] = NEXT_SEAT[seat]  # R12: clockwise
    if position < 2:
        return
    trick = state.trick[game].tolist()
    state.past_tricks[game, number] = trick
    winner = (leader + trick_winner_position(state.trick[one], state.mode[one]).item(0)) % 3
    state.tricks_won[game, winner] += 1
    state.last_trick[game] = trick
    state.last_trick_leader[game] = leader
    state.last_trick_winner[game] = winner
    state.trick[game] = -1
    state.leader[game] = winner  # the winner leads the next trick
    state.to_act[game] = winner
    if number < 15:
        state.trick_leaders[game, number + 1] = winner
    if state.hands.item(game, winner) == 0:  # all hands empty: 16 tricks
        _end_deal(state, np.array([game]))


# STRENGTH[mode, led suit, card] (R16): trumps beat the led suit, which beats the rest,
# each by rank. Modes 4 (NT) and 5 (MIN) have no trumps. The highest strength on the table wins.
STRENGTH = np.array([[[26 + c % 13 if c // 13 == mode else 13 + c % 13 if c // 13 == led else 0
                        for c in range(52)] for led in range(4)] for mode in range(6)], dtype=np.int8)


# STRENGTH flattened for one `take`, each [mode, led suit] row preceded by -1, the strength of
# an empty position (card -1): _STRENGTH_ROWS[mode, led] + card indexes it. Mode -1 (not
# chosen) and led suit -1 (empty table) read rows 5 and 3, as numpy's negative indices do.
_STRENGTH_OR_EMPTY = np.concatenate([np.full((6, 4, 1), -1, dtype=np.int8), STRENGTH], axis=2).reshape(-1)
_STRENGTH_ROWS = np.arange(6 * 4).reshape(6, 4) * 53 + 1


def trick_winner_position(trick: np.ndarray, mode: np.ndarray) -> np.ndarray:
    """R16: position (0 = leader) of the highest trump, else of the highest card of the led
    suit. In a trick still being played the empty positions (-1) never win; an empty trick
    gives position 0."""
    rows = _STRENGTH_ROWS[mode, trick[:, 0] // 13]
    return _STRENGTH_OR_EMPTY.take(rows[:, None] + trick).argmax(axis=1)


def targets(dealer: np.ndarray, mode: np.ndarray) -> np.ndarray:
    """int8[B, 3]: the tricks each seat must make, by its role (R23; R24 in MIN)."""
    role = (np.arange(3) - np.asarray(dealer)[:, None]) % 3
    return np.where((np.asarray(mode) == MINIMUM)[:, None], MIN_TARGETS[role], TARGETS[role])


def deal_points(tricks_won: np.ndarray, dealer: np.ndarray, mode: np.ndarray) -> np.ndarray:
    """R23, R24: points of each seat, ``W - Z``, or ``Z - W`` in MIN."""
    minimum = (np.asarray(mode) == MINIMUM)[:, None]
    target = targets(dealer, mode)
    won = np.asarray(tricks_won, dtype=np.int8)
    return np.where(minimum, target - won, won - target).astype(np.int8)


def _end_deal(state: State, games: np.ndarray) -> None:
    if games.size == 0:
        return
    points = deal_points(state.tricks_won[games], state.dealer[games], state.mode[games])
    state.scores[games] += points  # R25
    state.prev_points[games] = points
    state.deal_points[games] = points
    state.deal_ended[games] = True
    state.deal[games] += 1
    last = state.deal[games] >= state.rules.num_deals
    over = games[last]
    state.phase[over] = OVER
    state.to_act[over] = -1
    state.game_ended[over] = True
    state.final_scores[over] = state.scores[over]
    going_on = games[~last]
    state.dealer[going_on] = (state.dealer[going_on] + 1) % 3  # R4: the deal passes left
    _start_deal(state, going_on)


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


_HANDLERS = {MODE: _choose_mode, GIVE: _give, RETURN: _return_card, DISCARD: _discard, PLAY: _play}


# ----------------------------------------------------------------------------- explanations

def illegal_reason(state: State, game: int, action: int) -> str:
    """Why ``action`` is illegal in ``game``, citing the rule (``''`` if it is legal)."""
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
    # Only play can refuse a held card.
    led = int(state.trick[game, 0])
    led_mask, trump_mask = int(SUIT_MASKS[led // 13]), int(SUIT_MASKS[trump_suit(state.mode[game : game + 1])[0]])
    if hand & led_mask and not (1 << action) & led_mask:
        return f"R13: seat {seat} must follow suit {action_name(led)[1]}"
    if not hand & led_mask and hand & trump_mask and not (1 << action) & trump_mask:
        return f"R14: seat {seat} cannot follow suit and must play a trump"
    if (1 << action) & led_mask:
        return "R15: with must_overtake, seat must beat the best card of the led suit"
    return "R15: with must_overtrump, seat must beat the trump already in the trick"


def _illegal_message(state: State, game: int, action: int, n_bad: int) -> str:
    seat, phase = int(state.to_act[game]), int(state.phase[game])
    legal = [action_name(a) for a in card_list(int(legal_bits(state.take([game]))[0]))]
    where = f"game {game}: " if state.batch_size > 1 else ""
    more = f" ({n_bad - 1} other game(s) also got illegal actions)" if n_bad > 1 else ""
    shown = action_name(action) if 0 <= action < NUM_ACTIONS else "out of range"
    return (f"{where}illegal action {action} ({shown}) for seat {seat} in decision "
            f"'{DECISIONS[phase]}': {illegal_reason(state, game, action)}; legal actions: "
            f"{', '.join(legal)}{more}. The state is unchanged.")
