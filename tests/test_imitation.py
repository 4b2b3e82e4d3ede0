"""Teacher labels for imitation (training/imitation.py): every seat of the teacher's games,
with returns as the vec env pays them (deal points, R23 and R24, discounted per own decision)."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import needs

from sergeant_major_env import Rules, engine
from sergeant_major_env.policies import RandomPolicy
from sergeant_major_env.agents import make_agent
from sergeant_major_env.training.imitation import teacher_labels


def _reference_returns(seed: int, actions: list[int], gamma: float) -> dict[int, float]:
    """Replay one game with ``actions`` and return, for each seat, the return of its first
    decision: each deal's points go to the seat's last decision at or before the step that
    ended the deal, and the i-th of its decisions is discounted by gamma ** (i - 1)."""
    state = engine.init([seed], Rules(num_deals=2))
    decisions = {0: 0, 1: 0, 2: 0}  # decisions made so far, per seat
    total = {0: 0.0, 1: 0.0, 2: 0.0}
    for action in actions:
        seat = int(state.to_act[0])
        decisions[seat] += 1
        engine.step(state, np.array([action]))
        if state.deal_ended[0]:
            for s in range(3):
                total[s] += gamma ** (decisions[s] - 1) * float(state.deal_points[0, s])
        if state.game_ended[0]:
            return total
    raise AssertionError("the game did not end")


@pytest.mark.parametrize("gamma", [1.0, 0.97])
def test_each_seats_first_return_is_its_discounted_deal_points(gamma):
    """With gamma 1 the return of a seat's first decision is its final score (R25); with
    gamma < 1 each deal's points are discounted by the seat's own decisions before them."""
    games, steps, seed = 6, 260, 11  # a 2-deal game takes about 110 decisions
    chunk = next(teacher_labels(RandomPolicy(), games, steps, seed, Rules(num_deals=2), gamma,
                                value=lambda obs: np.zeros(len(obs)), rng=np.random.default_rng(0)))
    actions = chunk.actions.reshape(steps, games)
    returns = chunk.returns.reshape(steps, games)
    for g in range(games):
        state = engine.init([seed + g], Rules(num_deals=2))
        first_step = {}
        for k in range(steps):  # the first decision of each seat in the slot's first game
            first_step.setdefault(int(state.to_act[0]), k)
            engine.step(state, actions[k, g:g + 1])
            if state.game_ended[0]:
                break
        expected = _reference_returns(seed + g, actions[: k + 1, g].tolist(), gamma)
        for seat, k0 in first_step.items():
            assert returns[k0, g] == pytest.approx(expected[seat], abs=1e-4)
        if gamma == 1.0:
            assert sorted(expected.values()) == sorted(float(x) for x in state.final_scores[0])


def test_labels_are_legal_teacher_decisions_of_every_seat_and_chunks_continue():
    teacher = RandomPolicy()
    chunks = teacher_labels(teacher, 4, 50, 3, Rules(), 0.99, value=lambda obs: np.zeros(len(obs)),
                            rng=np.random.default_rng(1))
    first, second = next(chunks), next(chunks)
    for chunk in (first, second):
        assert chunk.observations.shape == (200, chunk.observations.shape[1]) and chunk.observations.dtype == np.float32
        assert chunk.masks[np.arange(200), chunk.actions].all()
    assert not np.array_equal(first.observations, second.observations)  # the games go on


def test_the_value_bootstraps_each_seats_last_decision_of_a_chunk():
    """At the end of a chunk a seat's return is its gathered points plus gamma times the value
    of its view then (here a constant)."""
    chunk = next(teacher_labels(RandomPolicy(), 5, 4, 21, Rules(), 0.5, value=lambda obs: np.full(len(obs), 8.0),
                                rng=np.random.default_rng(2)))
    # The first four decisions of a game are the playmaker's (its mode, then three of its four
    # discards; no deal ends): its last one is 0.5 * 8, each earlier one half the next.
    returns = chunk.returns.reshape(4, 5)
    np.testing.assert_allclose(returns, np.array([[0.5], [1.0], [2.0], [4.0]]) * np.ones((1, 5)))


# ----------------------------------------------------------------------------- train.py's warm start

class _Stop:
    """StopSignals as imitate reads it: ``requested`` (here set by the logger after a chunk)."""

    requested = False


class _Logger:
    """The SB3 logger calls imitate makes; ``stop_after`` chunks it requests a stop."""

    def __init__(self, stop: _Stop, stop_after: int | None = None) -> None:
        self.stop, self.stop_after, self.records, self.dumps = stop, stop_after, {}, []

    def record(self, key, value):
        self.records[key] = value

    def dump(self, step):
        self.dumps.append(step)
        if self.stop_after is not None and len(self.dumps) >= self.stop_after:
            self.stop.requested = True


def _imitation_setup(**changes):
    needs("sb3_contrib")
    from sb3_contrib import MaskablePPO

    from sergeant_major_env import SergeantMajorVecEnv
    from sergeant_major_env.training.train_config import TrainConfig

    args = TrainConfig(imitate="greedy", seed=4, num_envs=16, n_steps=16, option=("num_deals=1",), gamma=0.99,
                       reward_scale=1.0, imitate_lr=1e-3, imitate_steps=1024, imitate_epochs=2, imitate_round=512,
                       batch_size=128, vf_coef=0.5, max_grad_norm=0.5, no_progress=True).replace(**changes)
    model = MaskablePPO("MlpPolicy", SergeantMajorVecEnv(4, seed=0, rules=args.rules), n_steps=8, batch_size=8,
                        seed=0, device="cpu", policy_kwargs={"net_arch": dict(pi=[64], vf=[64])})
    return args, model


def _agreement(model, teacher_name: str, seed: int) -> float:
    """How often the policy's most likely legal action is the teacher's, on the teacher's own games."""
    from sergeant_major_env.agents import PPOAgent, make_agent

    chunk = next(teacher_labels(make_agent(teacher_name), 32, 32, seed, Rules(num_deals=1), 0.99,
                                value=lambda obs: np.zeros(len(obs)), rng=np.random.default_rng(9)))
    played = PPOAgent.from_sb3(model).act(chunk.observations, chunk.masks, None)
    return float((played == chunk.actions).mean())


def test_imitate_fits_the_policy_to_the_teachers_moves():
    from sergeant_major_env.training.imitation import imitate

    args, model = _imitation_setup(imitate_steps=2048, imitate_epochs=4)
    before = _agreement(model, "greedy", seed=77)
    record = imitate(model, args, _Logger(_Stop()), _Stop())
    after = _agreement(model, "greedy", seed=77)
    assert record["teacher"] == "greedy" and record["steps"] == 2048 and record["complete"]
    assert after > before + 0.15, (before, after)  # measured: 0.26 before, 0.49 after


def test_a_stop_ends_imitation_after_its_round_and_resume_does_the_steps_left():
    from sergeant_major_env.training.imitation import imitate

    args, model = _imitation_setup()
    stop = _Stop()
    logger = _Logger(stop, stop_after=1)
    interrupted = imitate(model, args, logger, stop)
    assert interrupted["steps"] == args.imitate_round and interrupted["complete"] is False
    assert logger.dumps == [args.imitate_round]
    assert {"imitation/accuracy", "imitation/policy_loss", "imitation/value_loss"} <= set(logger.records)
    logger = _Logger(_Stop())
    resumed = imitate(model, args, logger, _Stop(), earlier=interrupted)
    assert resumed["steps"] == args.imitate_steps and resumed["complete"] is True
    assert logger.dumps == [args.imitate_steps]  # the one round still to do
    assert resumed["seconds"] >= interrupted["seconds"]


def test_a_round_gathers_whole_chunks_in_step_order():
    from sergeant_major_env.training.imitation import gather_round

    chunks = teacher_labels(make_agent("greedy"), 8, 4, 5, Rules(num_deals=1), 0.99,
                            value=lambda obs: np.zeros(len(obs)), rng=np.random.default_rng(1))
    again = teacher_labels(make_agent("greedy"), 8, 4, 5, Rules(num_deals=1), 0.99,
                           value=lambda obs: np.zeros(len(obs)), rng=np.random.default_rng(1))
    labels = gather_round(chunks, 70, _Stop())  # 70 labels need three chunks of 32
    first, second, third = next(again), next(again), next(again)
    assert len(labels.actions) == 96
    for name in ("observations", "masks", "actions", "returns"):
        expected = np.concatenate([getattr(c, name) for c in (first, second, third)])
        assert np.array_equal(getattr(labels, name), expected), name


def test_a_stop_while_gathering_drops_the_unlearned_round():
    from sergeant_major_env.training.imitation import gather_round

    stop = _Stop()
    stop.requested = True
    chunks = teacher_labels(make_agent("greedy"), 8, 4, 5, Rules(num_deals=1), 0.99,
                            value=lambda obs: np.zeros(len(obs)), rng=np.random.default_rng(1))
    assert gather_round(chunks, 10, stop) is None


def test_the_imitation_rate_falls_linearly_to_zero_over_the_steps():
    torch = needs("torch")

    from sergeant_major_env.training.imitation import LinearRate

    optimizer = torch.optim.Adam(torch.nn.Linear(2, 1).parameters(), lr=1.0)
    rate = LinearRate(optimizer, 3e-3, done=500, size=250, total=1000)
    rate.set(0.0)
    assert optimizer.param_groups[0]["lr"] == pytest.approx(1.5e-3)
    rate.set(1.0)  # the end of the round: 750 of 1000 decisions done
    assert optimizer.param_groups[0]["lr"] == pytest.approx(0.75e-3)
    LinearRate(optimizer, 3e-3, done=1000, size=10, total=1000).set(0.5)
    assert optimizer.param_groups[0]["lr"] == 0.0
