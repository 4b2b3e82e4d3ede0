"""Cards, suits and the uint64 bitmask helpers the engine is built on.

A card id is `suit * 13 + rank` (R3): ranks `23456789TJQKA` (2 lowest), suits
`S C H D`. A set of cards is a uint64 whose bit `id` is set; within a suit a
higher bit is a higher card, so "the highest card of a suit" is the highest set bit.
Action ids 52..57 choose a mode (RULES.md section 10); the legal actions of a game fit
in one uint64 too (bits 0..57).
"""

from __future__ import annotations

import numpy as np
from numba.cpython.unsafe.numbers import leading_zeros, trailing_zeros

from .jit import FLAG_ROWS, SETS, kernel

RANKS = "23456789TJQKA"
SUITS = "SCHD"
SUIT_SYMBOLS = "♠♣♥♦"
NUM_CARDS = 52
NUM_ACTIONS = 58
MODE_ACTION_OFFSET = 52
MODE_NAMES = ("S", "C", "H", "D", "NT", "MIN")
NO_TRUMP, MINIMUM = 4, 5  # mode ids; 0..3 are trumps in that suit (R7)

_ONE = np.uint64(1)
ALL_CARDS = np.uint64((1 << NUM_CARDS) - 1)
"""The set of all 52 cards (bits 0..51)."""
SUIT_MASKS = np.array([0x1FFF << (13 * s) for s in range(4)] + [0], dtype=np.uint64)
"""SUIT_MASKS[s] holds the 13 cards of suit s; SUIT_MASKS[4] is empty ("no suit")."""
SAME_SUIT = np.append(SUIT_MASKS[np.arange(NUM_CARDS) // 13], np.uint64(0))
"""SAME_SUIT[c]: the 13 cards of c's suit; SAME_SUIT[-1] (no card) is empty."""
TRUMPS = np.array([*SUIT_MASKS[:4], 0, 0, 0], dtype=np.uint64)
"""TRUMPS[mode]: the trump cards of a mode (R7); NT, MIN and -1 (not chosen) have none."""
FREE_MODES = np.array([(~used & 0x3F) << MODE_ACTION_OFFSET for used in range(64)], dtype=np.uint64)
"""FREE_MODES[used]: the mode actions still open to a playmaker who has used the modes in `used`."""
_ABOVE = np.array(
    [SUIT_MASKS[c // 13] & ~np.uint64((2 << c) - 1) for c in range(NUM_CARDS)]
    + [np.uint64(0)],
    dtype=np.uint64,
)
"""_ABOVE[c]: the cards of c's suit that beat c; _ABOVE[-1] (no card) is empty."""
_ARANGE52 = np.arange(NUM_CARDS, dtype=np.uint64)


def card_name(card: int) -> str:
    """`0 -> '2S'`, `51 -> 'AD'` (R3)."""
    if not 0 <= int(card) < NUM_CARDS:
        raise ValueError(f"card id {card} is not in 0..51")
    return RANKS[int(card) % 13] + SUITS[int(card) // 13]


def parse_card(text: str) -> int:
    """`'QH' -> 36`: the inverse of [`card_name`][] (exact R3 notation)."""
    if not isinstance(text, str) or len(text) != 2 or text[0] not in RANKS or text[1] not in SUITS:
        raise ValueError(
            f"unknown card {text!r}: expected a rank of {RANKS!r} then a suit of {SUITS!r}, like 'QH'"
        )
    return SUITS.index(text[1]) * 13 + RANKS.index(text[0])


def action_name(action: int) -> str:
    """A readable name of an action id: a card (`'QH'`) or a mode (`'mode NT'`)."""
    action = int(action)
    if 0 <= action < NUM_CARDS:
        return card_name(action)
    if MODE_ACTION_OFFSET <= action < NUM_ACTIONS:
        return "mode " + MODE_NAMES[action - MODE_ACTION_OFFSET]
    raise ValueError(f"action id {action} is not in 0..57")


_CARD_BITS = np.append(_ONE << np.arange(NUM_CARDS, dtype=np.uint64), np.uint64(0))


def bit(cards: np.ndarray) -> np.ndarray:
    """The one-card set of each card id (-1, "no card", gives the empty set)."""
    return _CARD_BITS[cards]


def cards_to_bits(cards: np.ndarray) -> np.ndarray:
    """OR over the last axis: card ids `[..., n]` (`-1` = none) to a uint64 set `[...]`."""
    return np.bitwise_or.reduce(bit(cards), axis=-1)


def bits_to_bool(bits: np.ndarray, width: int = NUM_CARDS) -> np.ndarray:
    """uint64 sets `[...]` to booleans `[..., width]` (bit i -> column i; at most 64 columns)."""
    bits = np.asarray(bits)
    if bits.dtype != np.uint64 or not bits.flags.c_contiguous:
        bits = np.ascontiguousarray(bits, dtype=np.uint64)
    width = min(width, 64)
    out = np.empty(bits.shape + (width,), dtype=bool)
    _bits_to_bool_k(bits.reshape(-1), out.reshape(-1, width))
    return out


@kernel(ahead="game", seconds=0.1, signature=(SETS, FLAG_ROWS))
def _bits_to_bool_k(bits, out):
    one = np.uint64(1)
    for i in range(bits.size):
        word = bits[i]
        for c in range(out.shape[1]):
            out[i, c] = (word >> np.uint64(c)) & one


def count(bits: np.ndarray) -> np.ndarray:
    """Number of cards in each set."""
    return np.bitwise_count(np.asarray(bits, dtype=np.uint64)).astype(np.int8)


def highest(bits: np.ndarray) -> np.ndarray:
    """The highest card id in each set, `-1` for an empty set.

    Sets hold ids < 58, so they convert to float64 exactly and `frexp` reads the top bit.
    """
    _, exponent = np.frexp(np.asarray(bits, dtype=np.uint64).astype(np.float64))
    return (exponent - 1).astype(np.int8)


def lowest(bits: np.ndarray) -> np.ndarray:
    """The lowest card id in each set, `-1` for an empty set."""
    bits = np.asarray(bits, dtype=np.uint64)
    return highest(bits & (~bits + _ONE))


def above(cards: np.ndarray) -> np.ndarray:
    """The set of cards of the same suit that beat each card (empty for `-1`)."""
    return _ABOVE[np.asarray(cards)]


def suit_of(cards: np.ndarray) -> np.ndarray:
    """Suit index of each card id; `4` ("no suit") for `-1`."""
    cards = np.asarray(cards)
    return np.where(cards >= 0, cards // 13, 4).astype(np.int8)


def random_member(sets: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """int64[B]: a uniformly random element (card or action id) of each set, -1 if empty.

    Draws the rank k of the element, then finds the k-th set bit by halving the word six
    times: a few operations over the batch instead of one random key per possible id. Small
    batches, where the count of numpy calls is what costs, take the largest of random keys.
    """
    sets = np.ascontiguousarray(sets, dtype=np.uint64)
    out = np.empty(sets.shape, dtype=np.int64)
    if sets.size < 16:
        _largest_key_k(sets.reshape(-1), rng.random(sets.shape + (64,)).reshape(-1, 64), out.reshape(-1))
    else:
        _kth_member_k(sets.reshape(-1), rng.random(sets.shape).reshape(-1), out.reshape(-1))
    return out


@kernel
def _largest_key_k(sets, keys, out):
    """Small batches: the member with the largest key (numpy's argmax of keys x membership:
    the first largest), -1 for an empty set."""
    one = np.uint64(1)
    for i in range(sets.size):
        best, where = -1.0, 0
        for c in range(64):
            key = keys[i, c] if (sets[i] >> np.uint64(c)) & one else 0.0
            if key > best:
                best, where = key, c
        out[i] = where if sets[i] else -1


@kernel
def _kth_member_k(sets, draws, out):
    """Big batches: the k-th lowest member, k = floor(draw x size) as a uint8 (as numpy rounds
    it), -1 for an empty set: the lowest member once the k lowest are cleared (a scan of the 64
    ids took three times as long)."""
    one = np.uint64(1)
    for i in range(sets.size):
        size = 0
        bits = sets[i]
        while bits:
            bits &= bits - one
            size += 1
        bits = sets[i]
        for _ in range(np.uint8(draws[i] * size)):
            bits &= bits - one
        out[i] = np.int64(trailing_zeros(bits)) if bits else -1


@kernel(inline=True)
def count_cards_k(bits):
    """Inside a kernel: the number of cards in the uint64 set `bits` (a popcount: the bits
    summed in pairs, nibbles, then bytes; no loop)."""
    x = np.uint64(bits)
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@kernel
def highest_card_k(bits):
    """Inside a kernel: the highest card id in the set `bits`, -1 if empty: 63 less its
    leading zero bits (64 in an empty set; one instruction)."""
    return 63 - np.int64(leading_zeros(np.uint64(bits)))


def card_list(bits: int) -> list[int]:
    """The card ids of one set, ascending (for records and messages, not hot paths)."""
    bits = int(bits)
    return [c for c in range(64) if bits >> c & 1]
