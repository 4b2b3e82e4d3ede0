"""Train OpenSpiel's PyTorch DQN on 3-5-8 through OpenSpiel's RL environment, briefly.

    python examples/openspiel_dqn.py                      # 1000 training deals, then 300 to evaluate
    python examples/openspiel_dqn.py --episodes 3000 --eval-episodes 500 --seed 1

One DQN (``open_spiel.python.pytorch.dqn.DQN``) plays seat 0 of ``python_sergeant_major``
(one deal a game, ``num_deals=1``) against two of OpenSpiel's random agents
(``open_spiel.python.algorithms.random_agent``), through
``open_spiel.python.rl_environment.Environment``: its observations are the game's
information-state tensors (``information_state_tensor``: the observation and the seat's
recall of the deal), its reward the deal's points (R23, R24). Seat 0's role changes with the
lot for the first dealer (R4), so the score averages roles.

Prints, for the same evaluation deals (the environment reseeded alike): the mean points of
seat 0 when the trained DQN plays it greedily, and when a random agent plays it (about 0
against two random players, by symmetry), each with its 95% interval, and the paired
difference (DQN minus random on the same deals) with its interval. Needs the ``openspiel``
extra and torch.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def play(env, agents, episodes: int, learn: bool) -> np.ndarray:
    """Points of seat 0 in each of ``episodes`` games (training the agents when ``learn``)."""
    points = []
    for _ in range(episodes):
        time_step = env.reset()
        while not time_step.last():
            player = time_step.observations["current_player"]
            output = agents[player].step(time_step, is_evaluation=not learn)
            time_step = env.step([output.action])
        if learn:
            for agent in agents:  # the last step: each agent sees the final rewards
                agent.step(time_step)
        points.append(time_step.rewards[0])
    return np.array(points)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=1000, help="training deals (default 1000)")
    parser.add_argument("--eval-episodes", type=int, default=300, help="evaluation deals (default 300)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the deals and the agents (default 0)")
    args = parser.parse_args()
    if args.episodes < 1 or args.eval_episodes < 1 or args.seed < 0:
        parser.error("--episodes and --eval-episodes must be positive, --seed non-negative")

    import torch
    from open_spiel.python import rl_environment
    from open_spiel.python.algorithms import random_agent
    from open_spiel.python.pytorch import dqn

    import sergeant_major_env.openspiel  # noqa: F401  (registers python_sergeant_major)
    from sergeant_major_env.statistics import format_ci, mean_ci

    torch.manual_seed(args.seed)
    torch.set_num_threads(1)  # small networks: one thread is fastest, and leaves the other cores free
    env = rl_environment.Environment("python_sergeant_major(num_deals=1)")
    env.seed(args.seed)
    size = env.observation_spec()["info_state"][0]
    actions = env.action_spec()["num_actions"]
    learner = dqn.DQN(player_id=0, state_representation_size=size, num_actions=actions,
                      hidden_layers_sizes=(256, 256), replay_buffer_capacity=50_000, batch_size=64,
                      learning_rate=1e-3, optimizer_str="adam", update_target_network_every=500,
                      learn_every=4, min_buffer_size_to_learn=500, epsilon_start=1.0, epsilon_end=0.05,
                      epsilon_decay_duration=max(1, 10 * args.episodes), epsilon_decay_schedule_str="linear",
                      seed=args.seed)
    randoms = [random_agent.RandomAgent(player_id=p, num_actions=actions) for p in range(3)]

    start = time.perf_counter()
    play(env, [learner, randoms[1], randoms[2]], args.episodes, learn=True)
    trained = time.perf_counter() - start
    env.seed(args.seed + 1)
    dqn_points = play(env, [learner, randoms[1], randoms[2]], args.eval_episodes, learn=False)
    env.seed(args.seed + 1)
    random_points = play(env, randoms, args.eval_episodes, learn=False)
    print(f"trained {args.episodes} deals in {trained:.0f} s ({learner.step_counter} DQN decisions)")
    print(f"seat 0 mean points over {args.eval_episodes} deals against two random agents (95% intervals):")
    for label, points in (("DQN", dqn_points), ("random", random_points), ("DQN - random, same deals",
                                                                          dqn_points - random_points)):
        mean, ci = mean_ci(points)
        print(f"  {label:<26}{mean:+.2f}  {format_ci(ci)}")


if __name__ == "__main__":
    main()
