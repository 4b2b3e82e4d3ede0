"""Teacher labels for behaviour cloning: every seat of a teacher's own games, from the raw engine.

The teacher (any batched policy, e.g. `agents.make_agent("heuristic")`) plays all three
seats of `num_games` games held in one engine state. Every engine step is one decision in
every game, and every decision is a label: the deciding seat's observation, its legal mask,
the teacher's action and the seat's return. An env that records the learner's seat only
labels a third of that, and spends the rest of its time in opponent rounds.

A seat's return follows the reward of train.py's vec env: each deal's points (R23, R24),
credited to the seat's last decision before the deal ended, discounted by `gamma` per
decision of that seat, and bootstrapped at the end of each chunk with `value(observations)`
of each seat's view (the value network). A finished game cuts the returns: the slot's next
game (the engine's automatic reset, seed + B) starts from zero.

`imitate` is train.py's warm start (`--imitate AGENT`): it fits a MaskablePPO policy
to these labels, the policy to the teacher's moves and the value network to the returns.

Nothing here imports torch at import time: `imitate` imports it when called, and
`value` is any function from `float32[B, D]` to `float[B]`.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Callable, Iterator

import numpy as np

from sergeant_major_env import engine
from sergeant_major_env.cards import NUM_ACTIONS, bits_to_bool
from sergeant_major_env.observation import observe
from sergeant_major_env.policies import decide
from sergeant_major_env.progress import progress_bar
from sergeant_major_env.rules import Rules

from .train_config import IMITATION_SEED  # the imitation games' seeds start here (+ --seed)


@dataclasses.dataclass
class Labels:
    """`steps * num_games` labels, in step order (row `k * num_games + g`: step k of game slot g)."""

    observations: np.ndarray  # float32[N, D]  the deciding seat's observation
    masks: np.ndarray         # bool[N, 58]     its legal actions
    actions: np.ndarray       # int64[N]        the teacher's choice
    returns: np.ndarray       # float32[N]      the deciding seat's discounted return from here


def teacher_labels(teacher: object, num_games: int, steps: int, seed: int, rules: Rules, gamma: float,
                   value: Callable[[np.ndarray], np.ndarray], rng: np.random.Generator,
                   reward_scale: float = 1.0) -> Iterator[Labels]:
    """Endless chunks of `steps` engine steps of `num_games` teacher self-play games (slot g
    plays seeds `seed + g`, `seed + g + num_games`, ...), as `Labels`."""
    state = engine.init(engine.game_seeds(seed, num_games), rules)
    games = np.arange(num_games)
    while True:
        observations, masks, actions, seats, points, ended = [], [], [], [], [], []
        for _ in range(steps):
            seat = state.to_act.copy()  # never -1: finished games restart at once (autoreset)
            legal = engine.legal_bits(state)
            mask = bits_to_bool(legal, NUM_ACTIONS)
            action = decide(teacher, state, games, mask, rng)
            observations.append(observe(state, seat)), masks.append(mask), actions.append(action), seats.append(seat)
            engine.step(state, action, autoreset=True, legal=legal)
            points.append(state.deal_points * np.float32(reward_scale))  # zero where no deal ended
            ended.append(state.game_ended.copy())
        bootstrap = np.stack([value(observe(state, np.full(num_games, s))) for s in range(3)], axis=1)
        returns = seat_returns(np.stack(seats), np.stack(points), np.stack(ended), bootstrap, gamma)
        yield Labels(np.concatenate(observations), np.concatenate(masks), np.concatenate(actions),
                     returns.reshape(-1))


def seat_returns(seats: np.ndarray, points: np.ndarray, ended: np.ndarray, bootstrap: np.ndarray,
                 gamma: float) -> np.ndarray:
    """float32[T, B]: the return of the decision of step k in game slot b, for its seat.

    `seats` int[T, B] the deciding seat of each step; `points` float[T, B, 3] the deal points
    each seat got from the step (zero if no deal ended); `ended` bool[T, B] the step ended the
    game; `bootstrap` float[T=end, B, 3] each seat's value after the last step. Walking back, a
    seat's rewards gather until its decision takes them, plus `gamma` times its next return."""
    steps, num_games = seats.shape
    rows = np.arange(num_games)
    future = np.asarray(bootstrap, dtype=np.float64).copy()  # each seat's return at its next decision
    gathered = np.zeros((num_games, 3))                       # its rewards since then
    returns = np.empty((steps, num_games), dtype=np.float32)
    for k in reversed(range(steps)):
        future[ended[k]] = 0.0  # what follows a finished game is the next game's
        gathered[ended[k]] = 0.0
        gathered += points[k]
        seat = seats[k]
        returns[k] = gathered[rows, seat] + gamma * future[rows, seat]
        future[rows, seat] = returns[k]
        gathered[rows, seat] = 0.0
    return returns


# ============================================================================ train.py's warm start

def imitate(model, config, logger, stop, earlier: dict | None = None) -> dict:
    """Behaviour cloning warm start of `model` (MaskablePPO) on `teacher_labels` of the
    `config.imitate` agent: `config.num_envs` games in one engine state, so every engine step
    labels a decision in every game. Labels are gathered in rounds of `config.imitate_round`
    decisions (whole chunks of `config.n_steps` steps); on each round the policy minimises the
    cross-entropy of its masked logits against the teacher's moves and the value network the
    squared error to each deciding seat's discounted return (bootstrapped with its own value at
    the chunk's end), `config.imitate_epochs` passes in shuffled minibatches of
    `config.batch_size` on `config.update_threads` torch threads, with a learning rate falling
    linearly from `config.imitate_lr` to 0 over `config.imitate_steps` decisions. Rounds, not
    chunks: minibatches drawn from many games and deal phases at once, and the falling rate,
    agreed with the teacher on 86.6% of held-out decisions against 81% (chunk by chunk, constant
    rate) at the same cost. `config` is the run's `TrainConfig`; `logger`
    gets imitation/* records.

    A stop signal (`stop.requested`) ends it after the current pass (the record says
    `complete: false`); `earlier` (that record, on --resume) continues it with the steps
    still to do, on new games and with a new optimizer. Returns the record of summary.json."""
    from sergeant_major_env.agents.torch_setup import UpdateThreads

    threads = UpdateThreads(config.update_threads)
    threads.learning()  # the teacher's games' values and the fit, as PPO's rollouts and updates
    try:
        return _imitate(model, config, logger, stop, earlier)
    finally:
        threads.done()


def _imitate(model, config, logger, stop, earlier: dict | None) -> dict:
    import torch

    from sergeant_major_env.agents import make_agent

    steps_before = (earlier or {}).get("steps", 0)
    policy = model.policy

    def value(observations: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return policy.predict_values(torch.as_tensor(observations, device=policy.device)).cpu().numpy()[:, 0]

    chunks = teacher_labels(make_agent(config.imitate), config.num_envs, config.n_steps,
                            config.seed + IMITATION_SEED + steps_before, config.rules, config.gamma, value,
                            np.random.default_rng([config.seed, 3, steps_before]), reward_scale=config.reward_scale)
    optimizer = torch.optim.Adam(policy.parameters(), lr=config.imitate_lr)
    done_steps, start = steps_before, time.perf_counter()
    bar = progress_bar(config.imitate_steps, "step", f"imitate {config.imitate}", not config.no_progress, lines=True,
                       initial=done_steps, unit_scale=True)
    fit = None
    while done_steps < config.imitate_steps and not stop.requested:
        policy.set_training_mode(False)  # the chunks' bootstrap values, as PPO's rollouts compute them
        labels = gather_round(chunks, min(config.imitate_round, config.imitate_steps - done_steps), stop)
        if labels is None:
            break
        policy.set_training_mode(True)
        rate = LinearRate(optimizer, config.imitate_lr, done_steps, len(labels.actions), config.imitate_steps)
        fit = fit_round(policy, optimizer, labels, config, rate, stop)
        done_steps += len(labels.actions)
        for name in ("policy_loss", "value_loss", "accuracy"):
            logger.record(f"imitation/{name}", fit[name])
        logger.dump(done_steps)
        if bar is not None:
            bar.update(min(len(labels.actions), bar.total - bar.n))  # a round's whole chunks may go beyond
            bar.set_postfix_str(f"accuracy {fit['accuracy']:.2f}")
    if bar is not None:
        bar.close()
    policy.set_training_mode(False)
    seconds = time.perf_counter() - start + (earlier or {}).get("seconds", 0.0)
    complete = done_steps >= config.imitate_steps
    print(f"imitated {config.imitate} for {done_steps:,} decisions in {seconds:.1f} s"
          + ("" if fit is None else f" (last minibatch: accuracy {fit['accuracy']:.2f}, value loss "
                                    f"{fit['value_loss']:.2f})")
          + ("" if complete else " - interrupted"), flush=True)
    return {"teacher": config.imitate, "steps": done_steps, "complete": complete, "seconds": round(seconds, 2),
            **(fit or {"accuracy": None, "policy_loss": None, "value_loss": None})}


def gather_round(chunks: Iterator[Labels], size: int, stop) -> Labels | None:
    """Whole chunks of labels until `size` or more; None if a stop signal came first (the
    labels of an unfinished round are dropped: they were never learned from)."""
    parts, count = [], 0
    while count < size:
        if stop.requested:
            return None
        parts.append(next(chunks))
        count += len(parts[-1].actions)
    if len(parts) == 1:
        return parts[0]
    return Labels(*(np.concatenate([getattr(part, field.name) for part in parts])
                    for field in dataclasses.fields(Labels)))


class LinearRate:
    """The imitation learning rate, falling linearly from `peak` to 0 over `total` decisions:
    a round of `size` decisions, starting after `done`, sets it before each minibatch."""

    def __init__(self, optimizer, peak: float, done: int, size: int, total: int) -> None:
        self.optimizer, self.peak, self.done, self.size, self.total = optimizer, peak, done, size, total

    def set(self, fraction_of_round: float) -> None:
        left = 1.0 - (self.done + fraction_of_round * self.size) / self.total
        for group in self.optimizer.param_groups:
            group["lr"] = self.peak * max(0.0, left)


def fit_round(policy, optimizer, labels: Labels, config, rate: LinearRate, stop) -> dict[str, float]:
    """`config.imitate_epochs` passes over one round of labels in shuffled minibatches of
    `config.batch_size`: cross-entropy of the masked logits plus `config.vf_coef` times the value
    error, gradients clipped to `config.max_grad_norm`; a stop signal ends it after the current
    pass. Returns the last minibatch's figures."""
    import torch
    from torch.nn.functional import cross_entropy, mse_loss

    o, m, a, r = (torch.as_tensor(x, device=policy.device) for x in (
        labels.observations, labels.masks, labels.actions, labels.returns))
    minibatches = config.imitate_epochs * -(-len(a) // config.batch_size)
    done = 0
    for _ in range(config.imitate_epochs):
        for idx in torch.randperm(len(a), device=policy.device).split(config.batch_size):
            rate.set(done / minibatches)
            done += 1
            features = policy.extract_features(o[idx], policy.pi_features_extractor)
            latent_pi, latent_vf = policy.mlp_extractor(features)
            logits = policy.action_net(latent_pi).masked_fill(~m[idx], -1e9)
            policy_loss = cross_entropy(logits, a[idx])
            value_loss = mse_loss(policy.value_net(latent_vf).reshape(-1), r[idx])
            optimizer.zero_grad()
            (policy_loss + config.vf_coef * value_loss).backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), config.max_grad_norm)
            optimizer.step()
        if stop.requested:
            break
    return {"accuracy": float((logits.argmax(1) == a[idx]).float().mean()), "policy_loss": policy_loss.item(),
            "value_loss": value_loss.item()}
