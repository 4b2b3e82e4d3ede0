"""OpenSpiel's own algorithms on python_sergeant_major (sergeant_major_env/openspiel.py): the
Python MCTS bot (terminal rewards), the Python IS-MCTS bot (the game's information state and
``resample_from_infostate``), rl_environment with OpenSpiel's PyTorch DQN and NFSP on
information-state tensors, and OpenSpiel bots played against this package's agents with an
interval. Each is short (one deal, a few simulations or a few hundred steps): they show that
the algorithms run on the game, not how strong they are."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import needs

pyspiel = needs("pyspiel")

from open_spiel.python.algorithms import ismcts, mcts  # noqa: E402

from sergeant_major_env import openspiel as smo  # noqa: E402  (registers the game)
from sergeant_major_env.records import check_record  # noqa: E402


def play_out(state, bots, rng):
    """Play ``state`` to its end: chance by its outcomes, seat s by ``bots[s]`` (None: random).
    Returns the number of bot decisions."""
    decisions = 0
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probabilities = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(outcomes, p=probabilities)))
            continue
        bot = bots[state.current_player()]
        if bot is None:
            state.apply_action(int(rng.choice(state.legal_actions())))
        else:
            action = bot.step(state)
            assert action in state.legal_actions()
            state.apply_action(action)
            decisions += 1
    return decisions


def test_mcts_bot_plays_a_game_with_terminal_rewards():
    """OpenSpiel's Python MCTS needs a TERMINAL reward model: ``reward=score`` gives it."""
    game = pyspiel.load_game("python_sergeant_major(num_deals=1,reward=score)")
    bot = mcts.MCTSBot(game, uct_c=4.0, max_simulations=8,
                       evaluator=mcts.RandomRolloutEvaluator(1, np.random.RandomState(0)),
                       random_state=np.random.RandomState(1))
    state = game.new_initial_state()
    decisions = play_out(state, [bot, None, None], np.random.default_rng(0))
    assert decisions >= 16 and sum(state.returns()) == 0
    assert check_record(smo.game_record(state)) is None  # every move legal (RULES.md section 11)
    with pytest.raises(ValueError, match="Game must have terminal rewards"):
        mcts.MCTSBot(pyspiel.load_game("python_sergeant_major(num_deals=1)"), 4.0, 8,
                     mcts.RandomRolloutEvaluator(1, np.random.RandomState(0)))


def test_ismcts_bot_uses_the_games_information_state_and_resampling():
    """OpenSpiel's Python IS-MCTS as written: tree nodes keyed by information-state strings,
    each simulation from ``state.resample_from_infostate`` (no resampler of ours); it checks
    that every resampled root has the root's information state."""
    game = pyspiel.load_game("python_sergeant_major(num_deals=1,reward=score)")
    bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, np.random.RandomState(0)), 4.0, 6,
                           random_state=np.random.RandomState(2))
    calls = []
    original = smo.SergeantMajorState.resample_from_infostate

    def counting(self, player, sampler):
        calls.append(player)
        return original(self, player, sampler)

    smo.SergeantMajorState.resample_from_infostate = counting
    try:
        state = game.new_initial_state()
        decisions = play_out(state, [None, bot, None], np.random.default_rng(3))
    finally:
        smo.SergeantMajorState.resample_from_infostate = original
    assert decisions >= 16 and sum(state.returns()) == 0
    assert len(calls) >= 6 and set(calls) == {1}
    assert check_record(smo.game_record(state)) is None


def run_rl(agents, env, steps):
    """Step ``env`` with ``agents`` (learning) for at least ``steps`` decisions; episodes played."""
    played = episodes = 0
    while played < steps:
        time_step = env.reset()
        while not time_step.last():
            player = time_step.observations["current_player"]
            time_step = env.step([agents[player].step(time_step).action])
            played += 1
        for agent in agents:
            agent.step(time_step)
        episodes += 1
    return episodes


@pytest.mark.parametrize("learner", ["dqn", "nfsp"])
def test_rl_environment_trains_openspiels_pytorch_agents_on_information_states(learner):
    torch = needs("torch")
    from open_spiel.python import rl_environment
    from open_spiel.python.algorithms import random_agent

    torch.manual_seed(0)
    torch.set_num_threads(1)
    env = rl_environment.Environment("python_sergeant_major(num_deals=1)")
    env.seed(0)
    size = env.observation_spec()["info_state"][0]
    assert size == smo.information_state_size(1)
    if learner == "dqn":
        from open_spiel.python.pytorch import dqn

        agent = dqn.DQN(player_id=0, state_representation_size=size, num_actions=58, hidden_layers_sizes=(32,),
                        replay_buffer_capacity=1000, batch_size=16, min_buffer_size_to_learn=32, learn_every=4,
                        update_target_network_every=50, seed=0)
    else:
        from open_spiel.python.pytorch import nfsp

        agent = nfsp.NFSP(player_id=0, state_representation_size=size, num_actions=58, hidden_layers_sizes=(32,),
                          reservoir_buffer_capacity=1000, anticipatory_param=0.1, batch_size=16,
                          min_buffer_size_to_learn=32, learn_every=4, replay_buffer_capacity=1000,
                          update_target_network_every=50, seed=0)
    agents = [agent] + [random_agent.RandomAgent(player_id=p, num_actions=58) for p in (1, 2)]
    episodes = run_rl(agents, env, steps=300)
    assert episodes >= 5
    loss = agent.loss if learner == "dqn" else agent.loss[1]  # NFSP: (supervised, RL) losses
    assert loss is not None and np.isfinite(float(loss))  # it learned from the tensors


def test_openspiel_bots_against_this_packages_agents_with_an_interval():
    """OpenSpiel's MCTS (via ``PyspielBotAgent``: each decision searches one world drawn for
    the seat to act) against ``random`` and ``heuristic`` in evaluate's tournament: 12 games
    of one deal, two duplicate groups, so every figure has a 95% interval. The test shows that
    the result is recorded with its interval; it does not claim a strength."""
    from sergeant_major_env.agents import make_agent
    from sergeant_major_env.agents.ismcts import EngineRolloutEvaluator, PyspielBotAgent
    from sergeant_major_env.evaluation import TablePlan, play_tables

    def make_bot(game, rng):
        return mcts.MCTSBot(game, uct_c=4.0, max_simulations=6, evaluator=EngineRolloutEvaluator(None, rng),
                            random_state=np.random.RandomState(int(rng.integers(2**31))))

    bot = PyspielBotAgent(make_bot, name="mcts", reward="score")
    result = play_tables([bot, "random", "heuristic"],
                         TablePlan(games=12, seed=0, rules={"num_deals": 1}, progress=False, workers=1),
                         make_agent=make_agent)
    stats = {s.name: s for s in result.tables[0].stats}
    assert set(stats) == {"mcts", "random", "heuristic"}
    assert all(s.games == 12 and s.ci95 is not None and s.ci95[0] <= s.mean_points <= s.ci95[1]
               for s in stats.values())
    assert sum(s.mean_points for s in stats.values()) == pytest.approx(0.0)  # R25
    with pytest.raises(ValueError, match="mcts: reward must be one of 'points', 'score', 'rank'"):
        PyspielBotAgent(make_bot, name="mcts", reward="terminal")
