"""The compiled policy network (agents/network_kernels.py): the same most likely legal action
as the torch network, at every kind of decision, but where two legal logits tie to float32's
last bits; the weights it reads, and what it refuses."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import needs

torch = needs("torch")

from sergeant_major_env import Rules, engine  # noqa: E402
from sergeant_major_env.agents import make_agent  # noqa: E402
from sergeant_major_env.agents.network_kernels import RELU, TANH, network_actions, network_weights  # noqa: E402
from sergeant_major_env.agents.policy_file import PolicyNetwork, load_policy  # noqa: E402
from sergeant_major_env.agents.ppo import PPOAgent  # noqa: E402
from sergeant_major_env.cards import NUM_ACTIONS, bits_to_bool, random_member  # noqa: E402
from sergeant_major_env.engine import OVER  # noqa: E402
from sergeant_major_env.observation import OBSERVATION_SIZE, observe, observe_card_sets  # noqa: E402


def _positions(seed: int, batch: int = 200, num_deals: int = 2):
    """Every decision of ``batch`` games played by random moves: (observed games, legal bits)."""
    state = engine.init(engine.game_seeds(seed, batch), Rules(num_deals=num_deals))
    rng = np.random.default_rng(seed)
    while (state.phase != OVER).any():
        live = np.flatnonzero(state.phase != OVER)
        legal = engine.legal_bits(state)
        yield state.take(live), legal[live]
        engine.step(state, random_member(legal, rng))


def _torch_logits(network, view) -> np.ndarray:
    with torch.no_grad():
        return network.action_logits(torch.as_tensor(observe(view, view.to_act))).numpy()


def _compare(network, weights, seed: int) -> tuple[int, int, set]:
    """(rows, rows whose actions differ where torch's best legal logit is clear of the
    runner-up by 1e-4, decision kinds seen)."""
    rows = unclear_differ = 0
    kinds = set()
    for view, legal in _positions(seed):
        kinds.update(view.phase.tolist())
        got = network_actions(weights, *observe_card_sets(view, view.to_act), legal)
        logits = np.where(bits_to_bool(legal, NUM_ACTIONS), _torch_logits(network, view), -np.inf)
        want = logits.argmax(axis=1)
        ordered = np.sort(logits, axis=1)
        clear = ordered[:, -1] - ordered[:, -2] > 1e-4 * (1 + np.abs(ordered[:, -1]))
        assert (got[clear] == want[clear]).all()
        unclear_differ += int((got[~clear] != want[~clear]).sum())
        rows += view.batch_size
    return rows, unclear_differ, kinds


def test_the_shipped_policy_compiled_chooses_as_torch_at_every_decision_kind():
    """``learned`` compiled: the action torch's logits give on thousands of positions of every
    kind (ties closer than 1e-4 may go either way: none expected many)."""
    network, _ = load_policy(make_agent("learned").path)
    rows, differ, kinds = _compare(network, network_weights(network), seed=3)
    assert rows > 5000 and differ <= rows / 1000, (rows, differ)
    assert kinds >= {engine.MODE, engine.GIVE, engine.RETURN, engine.DISCARD, engine.PLAY}
    agent = make_agent("learned")
    assert agent.compiled_network() is agent.compiled_network()  # made once


def test_other_shapes_and_relu_are_compiled_too():
    """A network of another shape (three hidden layers, relu) gives torch's choices as well."""
    torch.manual_seed(0)
    network = PolicyNetwork(OBSERVATION_SIZE, NUM_ACTIONS, [64, 32, 48], [16], "relu")
    for parameter in network.parameters():
        parameter.data.normal_(0, 0.3)
    weights = network_weights(network)
    assert weights.activation == RELU and weights.shapes.tolist() == [[64, 32], [32, 48]] and weights.width == 64
    rows, differ, _ = _compare(network, weights, seed=4)
    assert rows > 5000 and differ <= rows / 1000, (rows, differ)
    single = PolicyNetwork(OBSERVATION_SIZE, NUM_ACTIONS, [32], [], "tanh")
    assert network_weights(single).activation == TANH and network_weights(single).shapes.shape == (0, 2)
    _compare(single, network_weights(single), seed=5)


def test_network_actions_refuse_bad_input_in_one_line():
    network, _ = load_policy(make_agent("learned").path)
    weights = network_weights(network)
    view, legal = next(_positions(1, batch=4))
    card_sets, rest = observe_card_sets(view, view.to_act)
    with pytest.raises(ValueError, match="card_sets \\[B, 14\\]"):
        network_actions(weights, card_sets[:, :3], rest, legal)
    with pytest.raises(ValueError, match="needs a legal action"):
        network_actions(weights, card_sets, rest, np.zeros_like(legal))
    with pytest.raises(ValueError, match="takes 919 observation entries"):
        network_weights(PolicyNetwork(12, NUM_ACTIONS, [8], [8], "tanh"))


def test_only_a_policy_file_playing_its_most_likely_action_is_compiled():
    """A sampling policy is not deterministic, and a live SB3 model's weights change while it
    learns: neither gives compiled weights (the search then steps its rollouts in Python)."""
    path = make_agent("learned").path
    assert PPOAgent(path).compiled_network() is not None
    assert PPOAgent(path, sample=True).compiled_network() is None


def _logits_row_by_row(weights, card_sets: np.ndarray, rest: np.ndarray) -> np.ndarray:
    """float32 logits of one observation summed as the kernel promises: each layer's bias plus
    its non-zero inputs' weight rows one at a time, in ascending order of the input (numpy's
    float32 products and sums, each rounded once)."""
    entries = np.concatenate([bits_to_bool(card_sets[None, :], 52)[0].reshape(-1).astype(np.float32), rest])
    def layer(x, matrix, bias):
        h = bias.copy()
        for i in np.flatnonzero(x):
            h = h + x[i] * matrix[i]
        return h
    def activate(h):
        return np.maximum(h, np.float32(0)) if weights.activation == RELU else np.tanh(h)
    h = activate(layer(entries, weights.first, weights.first_bias))
    at = bias_at = 0
    for n_in, n_out in weights.shapes:
        matrix = weights.hidden[at:at + n_in * n_out].reshape(n_in, n_out)
        h = activate(layer(h, matrix, weights.hidden_bias[bias_at:bias_at + n_out]))
        at, bias_at = at + n_in * n_out, bias_at + n_out
    return layer(h, weights.output.T, weights.output_bias)


def test_the_compiled_sums_are_those_of_one_row_at_a_time():
    """Eight weight rows a pass (``_add_rows_k``) and four legal logits a pass
    (``_four_logits_k``) round every sum as adding one row at a time does: the legal logits of
    ``learned`` on positions of every kind equal, bit for bit (a zero's sign aside), those of the
    one-row-at-a-time sums, and the action is the first of the largest."""
    from sergeant_major_env.agents.network_kernels import NetworkScratch, network_action_k

    weights = network_weights(load_policy(make_agent("learned").path)[0])
    width = max(OBSERVATION_SIZE, weights.width)
    scratch = NetworkScratch(np.empty(weights.width, np.float32), np.empty(weights.width, np.float32),
                             np.empty(NUM_ACTIONS, np.float32), np.empty(width, np.int64), np.empty(width, np.float32))
    logits = scratch.logits
    checked = 0
    for k, (view, legal) in enumerate(_positions(seed=5, batch=20)):
        if k % 7:
            continue
        card_sets, rest = observe_card_sets(view, view.to_act)
        for g in range(view.batch_size):
            logits[:] = np.nan
            action = network_action_k(card_sets[g], rest[g], legal[g], weights, scratch)
            want = _logits_row_by_row(weights, card_sets[g], rest[g])
            allowed = bits_to_bool(legal[g:g + 1], NUM_ACTIONS)[0]
            assert np.array_equal(logits[allowed], want[allowed]), (k, g)  # the legal logits, summed alike
            assert action == np.flatnonzero(allowed)[np.argmax(want[allowed])], (k, g)  # the first of the largest
            checked += 1
    assert checked > 200
