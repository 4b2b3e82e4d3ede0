"""Training a belief model (`sergeant-major distill belief`): where the unseen cards are.

**Positions** (`make_positions`). Games are played by `players` (agent names), game g
from the engine seed `seed + g`, seat s of game g by `players[(g // n**s) % n]` for n
players (two players: every mix of them at the table over eight games). At every decision with
a real choice (the decisions `pimc` searches: two or more distinct legal actions) of the seat
to act, one position is kept: the seat's observation, and for each card the bins it may be in
([`sergeant_major_env.worlds.knowledge`][]: only what the seat knows) and the bin it is in (the
truth, read from the engine state). The truth is what the game's record holds (RULES.md section
11: the deal's hands, talon, exchanges and discards; a record replays to the same states), read
straight from the states while the games are played instead of written and replayed. The
default seeds (3,000,000 on) are apart from every evaluation's (0, 100,000, 1,000,000), so a
model is never measured on the deals it learnt.

| array | dtype, shape | meaning |
|---|---|---|
| observation | float16 [N, D] | the seat's observation ([`observation.observe`][]; half precision keeps a million positions in 2 GB, each value within 0.05% of the float32 one, which the model reads when it plays) |
| allowed | bool [N, 52, 3] | the bins (left hand, right hand, pile) each unseen card may be in |
| truth | int8 [N, 52] | the bin each unseen card is in (-1: a card the seat sees) |
| game | int32 [N] | the game's index in the run (its seed is `seed + game`) |
| uniform | float32 [H, 52, 3] | the H held-out positions only: the marginals of `UNIFORM_WORLDS` uniform worlds ([`sample_worlds`][]), the baseline |

**Fit** (`fit_belief`). An MLP (`sergeant_major_env.agents.belief.BeliefNetwork`)
from the observation to 52 x 3 logits, trained with Adam on the cross-entropy of each unseen
card's true bin, its softmax over the bins it may be in (a card with one possible bin teaches
nothing). A tenth of the games (by game index, `distill.held_out`) is held out and
measured, for the model and for the uniform worlds' marginals alike, over the unseen cards
with more than one possible bin: the mean probability given to the true bin, the share whose
most likely bin is the true one, and the cross-entropy.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable

import numpy as np

from sergeant_major_env import engine, limits
from sergeant_major_env.agents import make_agent
from sergeant_major_env.agents.pimc import choices
from sergeant_major_env.cards import NUM_ACTIONS, NUM_CARDS, bits_to_bool, count
from sergeant_major_env.observation import observe
from sergeant_major_env.policies import decide
from sergeant_major_env.rules import Rules
from sergeant_major_env.seeding import check_seed_span
from sergeant_major_env.worlds import knowledge, sample_worlds

from .distill import held_out

UNIFORM_WORLDS = 64
"""Uniform worlds per held-out position whose marginals are the baseline."""
BELIEF_SEED = 3_000_000
"""The first game's seed of the default positions: apart from evaluate's 0, the bound's 100,000
and train's 1,000,000."""
MAX_GAMES = 100_000
POSITIONS_PER_DEAL = 40
"""About how many positions (decisions with a real choice) a deal gives: for progress bars."""


@dataclasses.dataclass(frozen=True)
class BeliefOptions:
    """Everything that makes a belief model: the games (positions) and the fit."""

    games: int = 240
    """games played for positions"""
    seed: int = BELIEF_SEED
    """game g plays engine seed S+g (apart from evaluation seeds)"""
    players: tuple[str, ...] = ("heuristic", "learned")
    """the agents at the tables (every mix of them over the games)"""
    layers: tuple[int, ...] = (256, 256)
    """hidden layer sizes"""
    epochs: int = 6
    """passes over the positions"""
    batch_size: int = 512
    """positions per step"""
    learning_rate: float = 1e-3
    """Adam's step size"""
    holdout: float = 0.1
    """share of the games held out for measuring"""
    fit_seed: int = 0
    """seeds the network's first weights and the order of the positions"""
    rules: Rules = Rules()
    """the games' rule options"""

    def check(self) -> "BeliefOptions":
        """These options, or a one-line ValueError naming the one out of range."""
        limits.check_count(self.games, "games", 1, MAX_GAMES)
        check_seed_span(self.seed, self.games)
        if not self.players or not all(isinstance(name, str) and name for name in self.players):
            raise ValueError(f"players must be agent names, got {limits.shorten(self.players)}")
        if not self.layers or len(self.layers) > 8 or not all(isinstance(n, int) and 1 <= n <= 4096
                                                              for n in self.layers):
            raise ValueError(f"layers must be 1 to 8 sizes from 1 to 4096, got {limits.shorten(self.layers)}")
        limits.check_count(self.epochs, "epochs", 1, 1000)
        limits.check_count(self.batch_size, "batch size", 1, 1_000_000)
        if not (isinstance(self.learning_rate, float) and 0 < self.learning_rate < 1):
            raise ValueError(f"learning rate must be a number in (0, 1), got {limits.shorten(self.learning_rate)}")
        if not (isinstance(self.holdout, float) and 0 < self.holdout < 1):
            raise ValueError(f"holdout must be a number in (0, 1), got {limits.shorten(self.holdout)}")
        return self

    def to_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "players": list(self.players), "layers": list(self.layers),
                "rules": self.rules.to_dict()}


# ============================================================================ positions

def seat_players(games: int, players: int) -> np.ndarray:
    """int[games, 3]: the index of the player in each seat of each game (module docstring)."""
    g = np.arange(games)[:, None]
    return (g // players ** np.arange(3)[None, :]) % players


def make_positions(options: BeliefOptions, on_positions: Callable[[int], None] = lambda n: None
                   ) -> dict[str, np.ndarray]:
    """The positions of the module docstring's table, for every game of `options`."""
    agents = [make_agent(name) for name in options.players]
    state = engine.init(engine.game_seeds(options.seed, options.games), options.rules)
    seats = seat_players(options.games, len(agents))
    holdout = held_out(np.arange(options.games), options.holdout)
    rng = np.random.default_rng([options.seed, 1])  # the players' randomness, if any
    uniform_rng = np.random.default_rng([options.seed, 2])
    parts: list[dict[str, np.ndarray]] = []
    while (live := np.flatnonzero(state.phase != engine.OVER)).size:
        legal = engine.legal_bits(state, live)
        real = count(choices(state, live, legal)) > 1
        if real.any():
            part = positions(state, live[real])
            kept = holdout[part["game"]]
            part["uniform"] = uniform_marginals(state, live[real][kept], uniform_rng)
            parts.append(part)
            on_positions(int(real.sum()))
        actions = np.zeros(state.batch_size, dtype=np.int64)
        who = seats[live, state.to_act[live]]
        for index, agent in enumerate(agents):
            rows = np.flatnonzero(who == index)
            if rows.size:
                actions[live[rows]] = decide(agent, state, live[rows], bits_to_bool(legal[rows], NUM_ACTIONS), rng)
        engine.step(state, actions)
    return {name: np.concatenate([part[name] for part in parts]) for name in parts[0]}


def positions(state: engine.State, games: np.ndarray) -> dict[str, np.ndarray]:
    """The positions of the seats to act in `games`: observation, allowed bins, true bins, game."""
    known = knowledge(state, games)
    rows = np.arange(games.size)
    unseen = known["unseen"]
    allowed = np.stack([bits_to_bool(known["allowed"][:, b] & unseen, NUM_CARDS) for b in range(3)], axis=2)
    left = state.hands[games, known["left"]] & unseen
    right = state.hands[games, known["right"]] & unseen
    truth = np.full((games.size, NUM_CARDS), -1, dtype=np.int8)
    for b, bits in enumerate((left, right, unseen & ~(left | right))):
        truth[bits_to_bool(bits, NUM_CARDS)] = b
    assert allowed[rows[:, None], np.arange(NUM_CARDS)[None, :], np.maximum(truth, 0)][truth >= 0].all()
    return {"observation": observe(state.take(games), state.to_act[games]).astype(np.float16), "allowed": allowed,
            "truth": truth,
            "game": games.astype(np.int32)}


def uniform_marginals(state: engine.State, games: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """float32[G, 52, 3]: the share of `UNIFORM_WORLDS` uniform worlds putting each card in
    each bin (the seat to act's bins), for each of `games`."""
    out = np.zeros((games.size, NUM_CARDS, 3), dtype=np.float32)
    if games.size == 0:
        return out
    worlds = sample_worlds(state, games, UNIFORM_WORLDS, rng)
    seat = np.repeat(state.to_act[games].astype(np.intp), UNIFORM_WORLDS)
    rows = np.arange(worlds.batch_size)
    for b in (0, 1):
        bits = worlds.hands[rows, (seat + 1 + b) % 3]
        out[:, :, b] = bits_to_bool(bits, NUM_CARDS).reshape(games.size, UNIFORM_WORLDS, NUM_CARDS).mean(axis=1)
    out[:, :, 2] = 1 - out[:, :, 0] - out[:, :, 1]
    return out


# ============================================================================ fit

def fit_belief(data: dict[str, np.ndarray], options: BeliefOptions,
               on_epoch: Callable[[dict[str, Any]], None] = lambda row: None):
    """(network, history): a `BeliefNetwork` fitted to the positions (module docstring),
    torch on one thread; `history` one row per epoch (epoch 0: before training) with the
    held-out measures, and the uniform worlds' in `history[0]["uniform"]`."""
    import torch

    from sergeant_major_env.agents.belief import BeliefNetwork
    from sergeant_major_env.agents.torch_setup import use_torch_threads

    use_torch_threads()
    torch.manual_seed(options.fit_seed)
    network = BeliefNetwork(list(options.layers))
    test = held_out(data["game"], options.holdout)
    train_rows, test_rows = np.flatnonzero(~test), np.flatnonzero(test)
    tensors = {name: torch.as_tensor(data[name]) for name in ("observation", "allowed", "truth")}
    optimizer = torch.optim.Adam(network.parameters(), lr=options.learning_rate)
    order_rng = np.random.default_rng(options.fit_seed)

    def measured(epoch: int, loss: float) -> dict[str, Any]:
        row = {"epoch": epoch, "train_loss": loss, **_measure(network, tensors, test_rows)}
        on_epoch(row)
        return row

    history = [measured(0, float("nan"))]
    history[0]["uniform"] = uniform_measures(data["uniform"], data["allowed"][test_rows], data["truth"][test_rows])
    for epoch in range(1, options.epochs + 1):
        network.train()
        total, steps = 0.0, 0
        order = order_rng.permutation(train_rows)
        for start in range(0, order.size, options.batch_size):
            batch = torch.as_tensor(order[start:start + options.batch_size])
            loss = _loss(network, tensors, batch)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total, steps = total + float(loss.detach()), steps + 1
        history.append(measured(epoch, total / max(steps, 1)))
    network.eval()
    network.requires_grad_(False)
    return network, history


def _masked_log_probs(network, tensors: dict, rows) -> tuple[Any, Any, Any]:
    """(log-probabilities over the allowed bins [B, 52, 3], truth [B, 52], the cards that count:
    unseen with more than one possible bin [B, 52])."""
    import torch

    allowed = tensors["allowed"][rows]
    logits = network(tensors["observation"][rows].float()).masked_fill(~allowed, -1e9)
    truth = tensors["truth"][rows].long()
    counts = (truth >= 0) & (allowed.sum(dim=2) > 1)
    return torch.log_softmax(logits, dim=2), truth, counts


def _loss(network, tensors: dict, rows):
    log_probs, truth, counts = _masked_log_probs(network, tensors, rows)
    picked = log_probs.gather(2, truth.clamp(min=0).unsqueeze(2)).squeeze(2)
    return -(picked * counts).sum() / counts.sum().clamp(min=1)


def _measure(network, tensors: dict, rows: np.ndarray) -> dict[str, float]:
    """The held-out measures of the network (module docstring)."""
    import torch

    network.eval()
    total = {"cross_entropy": 0.0, "true_bin_probability": 0.0, "top_bin_accuracy": 0.0}
    cards = 0
    with torch.no_grad():
        for start in range(0, rows.size, 4096):
            log_probs, truth, counts = _masked_log_probs(network, tensors, torch.as_tensor(rows[start:start + 4096]))
            picked = log_probs.gather(2, truth.clamp(min=0).unsqueeze(2)).squeeze(2)
            total["cross_entropy"] -= float((picked * counts).sum())
            total["true_bin_probability"] += float((picked.exp() * counts).sum())
            total["top_bin_accuracy"] += float(((log_probs.argmax(dim=2) == truth) & counts).sum())
            cards += int(counts.sum())
    return {name: value / max(cards, 1) for name, value in total.items()} | {"cards": cards}


def uniform_measures(marginals: np.ndarray, allowed: np.ndarray, truth: np.ndarray) -> dict[str, float]:
    """The same measures for the uniform worlds' marginals (float[N, 52, 3]); the top bin among
    the allowed ones, a probability floored at 1e-6 for the cross-entropy."""
    counts = (truth >= 0) & (allowed.sum(axis=2) > 1)
    picked = np.take_along_axis(marginals, np.maximum(truth, 0)[:, :, None].astype(np.intp), axis=2)[:, :, 0]
    top = np.where(allowed, marginals, -1.0).argmax(axis=2)
    cards = int(counts.sum())
    return {"cross_entropy": float(-np.log(np.maximum(picked, 1e-6))[counts].sum() / max(cards, 1)),
            "true_bin_probability": float(picked[counts].sum() / max(cards, 1)),
            "top_bin_accuracy": float((top == truth)[counts].sum() / max(cards, 1)), "cards": cards}


def train_belief(options: BeliefOptions, on_positions: Callable[[int], None] = lambda n: None,
                 on_epoch: Callable[[dict[str, Any]], None] = lambda row: None):
    """(network, report): positions made and a model fitted (the whole of `distill belief`)."""
    start = time.perf_counter()
    data = make_positions(options, on_positions)
    made = time.perf_counter()
    network, history = fit_belief(data, options, on_epoch)
    return network, {"options": options.to_dict(), "positions": int(data["game"].size),
                     "held_out_positions": int(held_out(data["game"], options.holdout).sum()),
                     "history": history, "seconds": {"positions": made - start, "fit": time.perf_counter() - made}}
