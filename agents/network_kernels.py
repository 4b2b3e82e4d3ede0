"""A policy network's most likely legal action as a compiled loop: the search's rollouts with
`learned` (or any `ppo:PATH`) inside, without a Python step per move.

`pimc:rollout=learned` rolls every world x action out with the network choosing the
searching seat's moves. Stepped from Python, each rollout step builds the observations of the
asking games, hands them to torch and reads the logits back: the numpy and torch calls of a
step cost more than the arithmetic. Here one game's decision is computed where the rollout
kernel (`agents.pimc_kernels`) stands, from the seat's view as the observation kernel writes
it (`observation.observe_game_k`: 14 card sets and the other entries):

* every layer adds to its bias the weight rows of its non-zero inputs only, in ascending
  order: for the first layer a card set's cards (each entry 1.0) and the few non-zero numbers
  of the rest (a 919-wide observation has about seventy non-zero entries), for the later ones
  the hidden units a relu left above zero. The non-zero inputs are listed without a branch
  (`_non_zero_k`) and eight rows go through the sums in one vectorised pass
  (`_add_rows_k`), each sum rounded as one row at a time would round it (a pass per row
  is bound by writing the sums, a branch per input by its mispredictions);
* the activation (tanh or relu) as plain loops over float32; the output layer sums the legal
  actions' logits only (a few of the 58), four at a time (`_four_logits_k`), each in the
  same order and so to the same bits; the first of the largest is the action
  (`agents.policy_file.most_likely_legal`, the deterministic choice of MaskablePPO).

The sums run in another order than torch's matrix products, so a logit can differ from
torch's in its last bits (about 1e-7 of its size): the chosen action is the same except where
two legal logits tie that closely (tests/test_network_kernels.py counts them on thousands of
positions). The value network is not needed and not copied.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from sergeant_major_env.cards import NUM_ACTIONS
from sergeant_major_env.jit import INT, INT_ROWS, REAL32_ROWS, REALS32, kernel, tuple_of
from sergeant_major_env.observation import CARD_SETS_WIDTH, OBSERVATION_SIZE

TANH, RELU = 0, 1
"""The activation codes of `NetworkWeights` (`activation`)."""

_ONE = np.uint64(1)
# The index of a one-bit uint64 by de Bruijn multiplication (the lowest card of a set).
_DEBRUIJN = np.uint64(0x03F79D71B4CB0A89)
_DEBRUIJN_INDEX = np.zeros(64, dtype=np.int64)
for _i in range(64):
    _DEBRUIJN_INDEX[(((1 << _i) * int(_DEBRUIJN)) & 0xFFFFFFFFFFFFFFFF) >> 58] = _i


class NetworkWeights(NamedTuple):
    """A policy network's actor as contiguous float32 arrays, the layout the kernels read:
    `first` [OBSERVATION_SIZE, H1] (the first layer transposed: one row per observation
    entry), `hidden` the later hidden layers' transposed matrices one after another, flat
    (`shapes` int64[L, 2]: each one's inputs and outputs), `output` [NUM_ACTIONS, H] (the
    last layer as torch keeps it: a row per action, so that a legal action's logit reads one
    row)."""

    first: np.ndarray
    first_bias: np.ndarray
    hidden: np.ndarray
    hidden_bias: np.ndarray
    shapes: np.ndarray
    output: np.ndarray
    output_bias: np.ndarray
    activation: int
    width: int
    """The widest layer (the scratch the kernels need)."""


NETWORK_WEIGHTS_TYPE = tuple_of(REAL32_ROWS, REALS32, REALS32, REALS32, INT_ROWS, REAL32_ROWS, REALS32, INT, INT)
"""`NetworkWeights` as a plain tuple, in jit's named types: the type an entry kernel compiled ahead
declares for it (`tuple(weights)`; the kernel makes the named tuple again, `NetworkWeights(*network)`)."""


class NetworkScratch(NamedTuple):
    """The working arrays of `network_action_k` (`network_scratch_k` makes them)."""

    h: np.ndarray
    """float32[width]: a layer's units"""
    h2: np.ndarray
    """float32[width]: the next layer's units"""
    logits: np.ndarray
    """float32[NUM_ACTIONS]: the legal actions' logits"""
    rows: np.ndarray
    """int64[max(OBSERVATION_SIZE, width)]: the indices of a layer's non-zero inputs"""
    values: np.ndarray
    """float32[max(OBSERVATION_SIZE, width)]: their values"""


def network_weights(network) -> NetworkWeights:
    """The `NetworkWeights` of a `policy_file.PolicyNetwork` (or an SB3 policy with
    the same parameter names: `mlp_extractor.policy_net`, `action_net`), copied."""
    import torch.nn as nn

    linears = [m for m in network.mlp_extractor.policy_net if isinstance(m, nn.Linear)]
    kinds = {type(m).__name__ for m in network.mlp_extractor.policy_net if not isinstance(m, nn.Linear)}
    if not linears or kinds - {"Tanh", "ReLU"} or len(kinds) > 1:
        raise ValueError(f"a compiled network needs hidden layers with tanh or relu, got {sorted(kinds) or 'none'}")

    def weight(layer):
        return layer.weight.detach().cpu().numpy().astype(np.float32)

    def bias(layer):
        return np.ascontiguousarray(layer.bias.detach().cpu().numpy(), dtype=np.float32)

    first = np.ascontiguousarray(weight(linears[0]).T)
    if first.shape[0] != OBSERVATION_SIZE:
        raise ValueError(f"a compiled network takes {OBSERVATION_SIZE} observation entries, this one {first.shape[0]}")
    later = linears[1:]
    hidden = (np.concatenate([weight(layer).T.ravel() for layer in later]) if later
              else np.zeros(0, dtype=np.float32))
    hidden_bias = np.concatenate([bias(layer) for layer in later]) if later else np.zeros(0, dtype=np.float32)
    shapes = np.array([[layer.in_features, layer.out_features] for layer in later], dtype=np.int64).reshape(-1, 2)
    output = np.ascontiguousarray(weight(network.action_net))
    if output.shape[0] != NUM_ACTIONS:
        raise ValueError(f"a compiled network has {NUM_ACTIONS} actions, this one {output.shape[0]}")
    width = max(layer.out_features for layer in linears)
    return NetworkWeights(first, bias(linears[0]), np.ascontiguousarray(hidden, dtype=np.float32), hidden_bias,
                          shapes, output, bias(network.action_net), RELU if "ReLU" in kinds else TANH, width)


@kernel(inline=True)
def lowest_bit_k(bits):
    """The index of the lowest set bit of a non-empty uint64."""
    return _DEBRUIJN_INDEX[((bits & (~bits + _ONE)) * _DEBRUIJN) >> np.uint64(58)]


# tanh as Eigen's rational function for float32 (``generic_fast_tanh_float``): within a few
# units in the last place of tanh, and only multiplications, additions and one division, which
# the compiler turns into vector instructions (libm's ``tanhf``, one call an entry, took half
# of a decision's time).
_TANH_CLAMP = np.float32(7.90531110763549805)
_TANH_P = tuple(np.float32(a) for a in (-2.76076847742355e-16, 2.00018790482477e-13, -8.60467152213735e-11,
                                         5.12229709037114e-08, 1.48572235717979e-05, 6.37261928875436e-04,
                                         4.89352455891786e-03))
_TANH_Q = tuple(np.float32(b) for b in (1.19825839466702e-06, 1.18534705686654e-04, 2.26843463243900e-03,
                                         4.89352518554385e-03))
_P13, _P11, _P9, _P7, _P5, _P3, _P1 = _TANH_P
_Q6, _Q4, _Q2, _Q0 = _TANH_Q


@kernel(inline=True)
def _tanh_k(x):
    x = min(max(x, -_TANH_CLAMP), _TANH_CLAMP)
    x2 = x * x
    p = ((((((_P13 * x2 + _P11) * x2 + _P9) * x2 + _P7) * x2 + _P5) * x2 + _P3) * x2 + _P1) * x
    q = ((_Q6 * x2 + _Q4) * x2 + _Q2) * x2 + _Q0
    return p / q


@kernel(inline=True)
def _activate_k(h, n, activation):
    if activation == RELU:
        for j in range(n):
            h[j] = max(h[j], np.float32(0))
    else:
        for j in range(n):
            h[j] = _tanh_k(h[j])


@kernel(inline=True)
def _add_rows_k(h, n, matrix, rows, values, count):
    """`h[:n] += values[k] * matrix[rows[k], :n]` for k = 0 .. count-1, in that order. Eight
    (then four) rows go through `h` in one pass, each entry summed in the same order and so
    rounded the same way as one row at a time: `h` is read and written once per eight rows
    instead of once per row (a pass per row is bound by its stores)."""
    k = 0
    while k + 8 <= count:
        r0, r1, r2, r3 = matrix[rows[k]], matrix[rows[k + 1]], matrix[rows[k + 2]], matrix[rows[k + 3]]
        r4, r5, r6, r7 = matrix[rows[k + 4]], matrix[rows[k + 5]], matrix[rows[k + 6]], matrix[rows[k + 7]]
        x0, x1, x2, x3 = values[k], values[k + 1], values[k + 2], values[k + 3]
        x4, x5, x6, x7 = values[k + 4], values[k + 5], values[k + 6], values[k + 7]
        for j in range(n):
            h[j] = (((((((h[j] + x0 * r0[j]) + x1 * r1[j]) + x2 * r2[j]) + x3 * r3[j]) + x4 * r4[j]) + x5 * r5[j])
                    + x6 * r6[j]) + x7 * r7[j]
        k += 8
    while k + 4 <= count:
        r0, r1, r2, r3 = matrix[rows[k]], matrix[rows[k + 1]], matrix[rows[k + 2]], matrix[rows[k + 3]]
        x0, x1, x2, x3 = values[k], values[k + 1], values[k + 2], values[k + 3]
        for j in range(n):
            h[j] = (((h[j] + x0 * r0[j]) + x1 * r1[j]) + x2 * r2[j]) + x3 * r3[j]
        k += 4
    while k < count:
        r0, x0 = matrix[rows[k]], values[k]
        for j in range(n):
            h[j] = h[j] + x0 * r0[j]
        k += 1


@kernel(inline=True)
def _non_zero_k(x, n, offset, rows, values, count):
    """Appends the non-zero entries of `x[:n]` to the list `rows` (`offset` + their
    indices, ascending), `values` of `count` entries; returns the new count. Without a
    branch: every entry is written and the count moves on only past a non-zero one (about half
    the entries are zero, and a mispredicted branch per entry cost a quarter of a decision's
    time)."""
    for i in range(n):
        rows[count] = offset + i
        values[count] = x[i]
        count += x[i] != 0
    return count


@kernel(inline=True)
def _four_logits_k(output, output_bias, a0, a1, a2, a3, rows, values, count, logits):
    """`logits[a] = output_bias[a] + values[k] * output[a, rows[k]]` summed over k in order, for
    the four actions a0..a3: the terms of each sum in the order `_add_rows_k` adds the
    rows, so each logit is rounded as there; four independent sums in one pass over the inputs,
    so that an addition does not wait for the one before it."""
    w0, w1, w2, w3 = output[a0], output[a1], output[a2], output[a3]
    s0, s1, s2, s3 = output_bias[a0], output_bias[a1], output_bias[a2], output_bias[a3]
    for k in range(count):
        r, x = rows[k], values[k]
        s0, s1, s2, s3 = s0 + x * w0[r], s1 + x * w1[r], s2 + x * w2[r], s3 + x * w3[r]
    logits[a0], logits[a1], logits[a2], logits[a3] = s0, s1, s2, s3


@kernel(inline=True)
def network_scratch_k(weights):
    """A `NetworkScratch` for the network of `weights` (a `NetworkWeights`)."""
    size = max(OBSERVATION_SIZE, weights.width)
    return NetworkScratch(np.empty(weights.width, dtype=np.float32), np.empty(weights.width, dtype=np.float32),
                          np.empty(weights.output_bias.shape[0], dtype=np.float32), np.empty(size, dtype=np.int64),
                          np.empty(size, dtype=np.float32))


@kernel(counted=False)
def network_action_k(planes, rest, legal, weights, scratch):
    """The most likely legal action (the first of the largest logits) of the observation
    given as its 14 card sets `planes` (uint64) and its entries `rest` (float32, from
    `decision` on); `legal` the legal actions as bits (non-empty); `weights` a
    `NetworkWeights`, `scratch` a `NetworkScratch` (the legal actions' logits are left in
    `scratch.logits`, the others untouched). Each layer adds the weight rows of its non-zero
    inputs to the bias in ascending order of the input (`_add_rows_k`; the output layer's
    legal logits `_four_logits_k`): an input of zero adds nothing, so the sums are those of
    the whole product but for the sign of a zero."""
    first, first_bias, hidden, hidden_bias, shapes = (weights.first, weights.first_bias, weights.hidden,
                                                      weights.hidden_bias, weights.shapes)
    output, output_bias, activation = weights.output, weights.output_bias, weights.activation
    h, h2, logits, rows, values = scratch.h, scratch.h2, scratch.logits, scratch.rows, scratch.values
    count = 0
    for p in range(14):  # the card sets: each card an entry 1.0
        bits = planes[p]
        while bits:
            rows[count] = 52 * p + lowest_bit_k(bits)
            values[count] = np.float32(1)
            count += 1
            bits &= bits - _ONE
    count = _non_zero_k(rest, rest.shape[0], CARD_SETS_WIDTH, rows, values, count)  # the rest: mostly zeros
    n = first_bias.shape[0]
    for j in range(n):
        h[j] = first_bias[j]
    _add_rows_k(h, n, first, rows, values, count)
    _activate_k(h, n, activation)
    at, bias_at = 0, 0
    for layer in range(shapes.shape[0]):
        n_in, n_out = shapes[layer, 0], shapes[layer, 1]
        for j in range(n_out):
            h2[j] = hidden_bias[bias_at + j]
        count = _non_zero_k(h, n_in, 0, rows, values, 0)
        _add_rows_k(h2, n_out, hidden[at:at + n_in * n_out].reshape((n_in, n_out)), rows, values, count)
        _activate_k(h2, n_out, activation)
        for j in range(n_out):
            h[j] = h2[j]
        at += n_in * n_out
        bias_at += n_out
        n = n_out
    count = _non_zero_k(h, n, 0, rows, values, 0)
    best, best_logit = -1, np.float32(0)
    remaining = legal
    while remaining:  # the legal actions' logits only, four at a time, in ascending order
        a0 = lowest_bit_k(remaining)
        remaining &= remaining - _ONE
        a1 = lowest_bit_k(remaining) if remaining else a0  # past the last legal action: a repeat
        remaining &= remaining - _ONE
        a2 = lowest_bit_k(remaining) if remaining else a1
        remaining &= remaining - _ONE
        a3 = lowest_bit_k(remaining) if remaining else a2
        remaining &= remaining - _ONE
        _four_logits_k(output, output_bias, a0, a1, a2, a3, rows, values, count, logits)
        for action in (a0, a1, a2, a3):  # a repeat is not larger than itself: the first of the largest
            if best < 0 or logits[action] > best_logit:
                best, best_logit = action, logits[action]
    return best


@kernel
def _network_actions_k(card_sets, rest, legal, weights, actions):
    """`network_action_k` of every row (the observation as `observe_card_sets` gives it)."""
    scratch = network_scratch_k(weights)
    for k in range(card_sets.shape[0]):
        actions[k] = network_action_k(card_sets[k], rest[k], legal[k], weights, scratch)


def network_actions(weights: NetworkWeights, card_sets: np.ndarray, rest: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """int64[B]: the most likely legal action of each observation (`card_sets` uint64[B, 14] and
    `rest` float32[B, ...], as [`sergeant_major_env.observation.observe_card_sets`][] gives
    them; `legal` uint64[B], the legal actions as bits, none empty) by the compiled network."""
    card_sets = np.ascontiguousarray(card_sets, dtype=np.uint64)
    rest = np.ascontiguousarray(rest, dtype=np.float32)
    legal = np.ascontiguousarray(legal, dtype=np.uint64)
    if card_sets.ndim != 2 or card_sets.shape[1] != 14 or rest.shape != (card_sets.shape[0], OBSERVATION_SIZE -
                                                                          CARD_SETS_WIDTH) or legal.shape != card_sets.shape[:1]:
        raise ValueError("network_actions: card_sets [B, 14], rest [B, observation entries from decision on] and "
                         "legal [B] expected")
    if (legal == 0).any():
        raise ValueError("network_actions: every row needs a legal action")
    actions = np.empty(card_sets.shape[0], dtype=np.int64)
    _network_actions_k(card_sets, rest, legal, weights, actions)
    return actions
