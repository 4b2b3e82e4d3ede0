"""A CleanRL-style single-file PPO with masked logits on the native Gymnasium vector env.

    python examples/cleanrl_ppo.py                                  # 200,000 steps vs random, then evaluate
    python examples/cleanrl_ppo.py --total-timesteps 6000000 --opponents heuristic --imitate-steps 600000 \
        --imitate-epochs 6 --learning-rate 0.0002 --ent-coef 0.003 --num-envs 64 --eval-games 1200 \
        --eval-against heuristic --seed 3                           # beats the heuristic (about 40 min)

One file, as CleanRL writes its algorithms: a typed :class:`Args` dataclass (every field is a
command-line option), an actor-critic MLP, a rollout loop and the PPO update. The env is
``gymnasium.make_vec("SergeantMajor-v0", num_envs=N)``: the vector entry point,
:class:`~sergeant_major_env.gym_vector.SergeantMajorVectorEnv`, N games in one batched
engine state. The learner's seat is drawn at each game (``learner_seat=None``), so every
seat and role is learned.

Masking: the policy's logits of the actions that ``infos["action_mask"]`` marks illegal are
``-inf``. That is safe on every row: a finished game's mask marks action 0 alone, never
nothing (:func:`sergeant_major_env.options.action_mask`), so no row is all ``-inf``.

Autoreset (Gymnasium's ``NEXT_STEP``): the step after a game's terminal step returns the
slot's next game and ignores its action. Those transitions (from a terminal observation)
are not experience: they are left out of the loss, and the advantage estimate stops at each
terminal step (``nextnonterminal = 1 - terminated``).

At the end the greedy policy (the most probable legal action) plays a duplicate-deal
evaluation (:func:`sergeant_major_env.evaluation.play_tables`) against two ``random``
players, or ``--eval-against``: the learned policy's mean points and their 95% interval,
and its head-to-head margin over each opponent. Needs torch (the ``train`` extra).

Measured (1-deal games, 1 torch thread, a shared 2-CPU machine):

* ``--total-timesteps 100000 --seed 2 --eval-games 300`` (2026-12-07, load average 8: 32 s
  of training, 40 s in all; docs/envs/gymnasium.md; the test runs it):
  +0.44 points a game [+0.16, +0.72] against two ``random`` players, margins +0.79
  [+0.33, +1.24] and +0.53 [+0.07, +1.00];
* ``--total-timesteps 400000 --seed 3 --eval-games 600 --eval-against heuristic`` (206 s):
  -1.99 points a game [-2.26, -1.71] against two ``heuristic`` players, margin -2.98
  [-3.39, -2.57]: not yet the heuristic's level, which takes a far longer run;
* ``--total-timesteps 3000000 --opponents heuristic --eval-games 1200 --eval-against heuristic
  --seed 3`` (2026-12-03, 661 s of training at about 4,500 steps/s, a test run on the other
  core): -0.91 points a game [-1.08, -0.73] against two ``heuristic`` players, margin -1.36
  [-1.62, -1.10]: closer, still behind;
* the same with a warm start of the moves alone, ``--imitate-steps 400000 --learning-rate
  0.0003`` (2026-12-03, before the warm start fitted the value: 75.1% agreement in 4 passes,
  then 611 s of PPO): -0.59 points a game [-0.76, -0.41], margin -0.88 [-1.15, -0.61];
* **beating the heuristic**: ``--total-timesteps 6000000 --opponents heuristic --imitate-steps
  600000 --imitate-epochs 6 --learning-rate 0.0002 --ent-coef 0.003 --num-envs 64 --eval-games
  1200 --eval-against heuristic --seed 3`` (2026-12-03: the moves and the value copied, 88.8%
  agreement, then 1,500 s of PPO at about 4,000 steps/s; 7 GB at its peak): **+0.44 points a
  game [+0.28, +0.60]** against two ``heuristic`` players, margin +0.66 [+0.42, +0.89], ahead
  in 57.2% of the games.

Warm start (``--imitate-steps N``): before PPO, ``--imitate`` (the heuristic) plays the
learner's seat for N decisions and the policy is fitted to its moves (cross-entropy of the
masked logits), as train.py's imitation does.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from typing import Any

import gymnasium
import numpy as np
import torch
from torch import nn

import sergeant_major_env  # noqa: F401  (registers SergeantMajor-v0)
from sergeant_major_env.evaluation import TablePlan, play_tables
from sergeant_major_env.options import action_mask


@dataclasses.dataclass
class Args:
    """The run's settings (CleanRL's names); each is an option, ``--total-timesteps 100000``."""

    seed: int = 1
    """seed of the games (slot i of the vector env: seed + i), the network and the sampling"""
    num_deals: int = 1
    """deals per game (RULES.md section 9)"""
    opponents: str = "random"
    """the two opponents' agent (sergeant_major_env.agents.make_agent)"""
    total_timesteps: int = 200_000
    """learner decisions to train on, over all the games"""
    num_envs: int = 32
    """games in the one engine state"""
    num_steps: int = 32
    """steps per game slot in each rollout"""
    learning_rate: float = 1e-3
    """Adam's learning rate (annealed linearly to 0)"""
    gamma: float = 1.0
    """discount: 1, the score is what counts"""
    gae_lambda: float = 0.95
    """GAE's lambda"""
    num_minibatches: int = 4
    """minibatches per epoch"""
    update_epochs: int = 4
    """epochs over each rollout"""
    clip_coef: float = 0.2
    """PPO's clipping"""
    ent_coef: float = 0.01
    """entropy bonus"""
    vf_coef: float = 0.5
    """value loss weight"""
    max_grad_norm: float = 0.5
    """gradient clipping"""
    reward_scale: float = 1 / 13
    """rewards are multiplied by it (a deal's points are -13..13)"""
    hidden: int = 256
    """width of the two hidden layers"""
    eval_games: int = 600
    """duplicate-deal evaluation games at the end (a multiple of 6); 0: none"""
    eval_against: str = ""
    """the evaluation's two opponents (default: --opponents)"""
    eval_seed: int = 1_000_000
    """first seed of the evaluation's deals (apart from training's)"""
    threads: int = 1
    """torch threads"""
    imitate: str = "heuristic"
    """the teacher of the warm start (an agent name): it plays the learner's seat and the policy
    copies its moves before PPO"""
    imitate_steps: int = 0
    """teacher decisions to copy before PPO; 0: no warm start"""
    imitate_epochs: int = 4
    """passes over the teacher's decisions"""
    imitate_learning_rate: float = 1e-3
    """Adam's learning rate of the warm start (constant)"""


class Agent(nn.Module):
    """An actor-critic MLP: the observation to 58 logits and a value."""

    def __init__(self, observation_size: int, num_actions: int, hidden: int) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(observation_size, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.actor = nn.Linear(hidden, num_actions)
        self.critic = nn.Linear(hidden, 1)
        nn.init.orthogonal_(self.actor.weight, 0.01)
        nn.init.zeros_(self.actor.bias)

    def value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(self.body(x)).squeeze(-1)

    def masked_logits(self, hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return torch.where(mask, self.actor(hidden), torch.tensor(-torch.inf))  # no row is all -inf

    def action_and_value(self, x: torch.Tensor, mask: torch.Tensor, action: torch.Tensor | None = None):
        hidden = self.body(x)
        distribution = torch.distributions.Categorical(logits=self.masked_logits(hidden, mask))
        if action is None:
            action = distribution.sample()
        return action, distribution.log_prob(action), masked_entropy(distribution), self.critic(hidden).squeeze(-1)


def masked_entropy(distribution: torch.distributions.Categorical) -> torch.Tensor:
    """The entropy, with the masked actions' 0 * -inf terms as 0 (not NaN)."""
    p_log_p = distribution.probs * torch.where(distribution.probs > 0, distribution.logits, 0.0)
    return -p_log_p.sum(-1)


class GreedyPolicy:
    """The trained agent as a batched policy (``sergeant_major_env.policies``): the most
    probable legal action, for the evaluation."""

    name = "cleanrl-ppo"
    deterministic = True

    def __init__(self, agent: Agent) -> None:
        self.agent = agent

    def act(self, observations: np.ndarray, legal_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        with torch.no_grad():
            hidden = self.agent.body(torch.as_tensor(observations))
            logits = self.agent.masked_logits(hidden, torch.as_tensor(legal_mask))
        return logits.argmax(-1).numpy().astype(np.int64)


def train(args: Args) -> tuple[Agent, dict[str, Any]]:
    """PPO on the vector env; returns the agent and the training's figures."""
    from sergeant_major_env.agents import make_agent

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    envs = gymnasium.make_vec("SergeantMajor-v0", num_envs=args.num_envs, num_deals=args.num_deals,
                              learner_seat=None, opponents=make_agent(args.opponents))
    assert envs.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.NEXT_STEP
    size = envs.single_observation_space.shape[0]
    n_actions = envs.single_action_space.n
    agent = Agent(size, n_actions, args.hidden)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
    batch = args.num_envs * args.num_steps
    iterations = max(1, args.total_timesteps // batch)

    obs_buf = torch.zeros((args.num_steps, args.num_envs, size))
    mask_buf = torch.zeros((args.num_steps, args.num_envs, n_actions), dtype=torch.bool)
    actions = torch.zeros((args.num_steps, args.num_envs), dtype=torch.long)
    logprobs = torch.zeros((args.num_steps, args.num_envs))
    rewards = torch.zeros((args.num_steps, args.num_envs))
    terminated = torch.zeros((args.num_steps, args.num_envs))
    valid = torch.zeros((args.num_steps, args.num_envs), dtype=torch.bool)  # not an autoreset step
    values = torch.zeros((args.num_steps, args.num_envs))

    agreement = imitate(agent, envs, args) if args.imitate_steps else None
    obs, infos = envs.reset(seed=args.seed)
    next_obs, next_mask = torch.as_tensor(obs), torch.as_tensor(infos["action_mask"])
    next_autoreset = torch.zeros(args.num_envs, dtype=torch.bool)
    returns_seen: list[float] = []
    episode_return = np.zeros(args.num_envs)
    start = time.time()
    for iteration in range(iterations):
        for group in optimizer.param_groups:
            group["lr"] = args.learning_rate * (1 - iteration / iterations)
        for step in range(args.num_steps):
            obs_buf[step], mask_buf[step], valid[step] = next_obs, next_mask, ~next_autoreset
            with torch.no_grad():
                action, logprob, _, value = agent.action_and_value(next_obs, next_mask)
            actions[step], logprobs[step], values[step] = action, logprob, value
            obs, reward, term, trunc, infos = envs.step(action.numpy())
            rewards[step] = torch.as_tensor(reward * args.reward_scale)
            terminated[step] = torch.as_tensor(term | trunc, dtype=torch.float32)
            episode_return += reward
            returns_seen += episode_return[term].tolist()
            episode_return[term] = 0
            next_obs, next_mask = torch.as_tensor(obs), torch.as_tensor(infos["action_mask"])
            next_autoreset = torch.as_tensor(term | trunc)
        # Generalised advantage estimation, cut at every terminal step.
        with torch.no_grad():
            next_value = agent.value(next_obs)
            advantages = torch.zeros_like(rewards)
            last = torch.zeros(args.num_envs)
            for t in reversed(range(args.num_steps)):
                following = next_value if t == args.num_steps - 1 else values[t + 1]
                nonterminal = 1.0 - terminated[t]
                delta = rewards[t] + args.gamma * following * nonterminal - values[t]
                last = delta + args.gamma * args.gae_lambda * nonterminal * last
                advantages[t] = last
            targets = advantages + values
        keep = valid.reshape(-1)
        b_obs, b_masks = obs_buf.reshape(-1, size)[keep], mask_buf.reshape(-1, n_actions)[keep]
        b_actions, b_logprobs = actions.reshape(-1)[keep], logprobs.reshape(-1)[keep]
        b_advantages, b_targets = advantages.reshape(-1)[keep], targets.reshape(-1)[keep]
        b_advantages = (b_advantages - b_advantages.mean()) / (b_advantages.std() + 1e-8)  # over the rollout
        for _ in range(args.update_epochs):
            for index in torch.tensor_split(torch.randperm(b_obs.shape[0]), args.num_minibatches):
                _, new_logprob, entropy, new_value = agent.action_and_value(b_obs[index], b_masks[index],
                                                                            b_actions[index])
                ratio = (new_logprob - b_logprobs[index]).exp()
                advantage = b_advantages[index]
                policy_loss = torch.max(-advantage * ratio,
                                        -advantage * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
                value_loss = 0.5 * ((new_value - b_targets[index]) ** 2).mean()
                loss = policy_loss - args.ent_coef * entropy.mean() + args.vf_coef * value_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()
        if returns_seen and (iteration + 1) % max(1, iterations // 10) == 0:
            recent = returns_seen[-500:]
            print(f"iteration {iteration + 1}/{iterations}: {(iteration + 1) * batch:,} steps, "
                  f"mean return of the last {len(recent)} games {np.mean(recent):+.2f}, "
                  f"{(iteration + 1) * batch / (time.time() - start):,.0f} steps/s", flush=True)
    envs.close()
    return agent, {"steps": iterations * batch, "games": len(returns_seen), "seconds": time.time() - start,
                   "imitation_agreement": agreement}


def imitate(agent: Agent, envs, args: Args) -> float:
    """The warm start: ``--imitate`` plays the learner's seat for ``--imitate-steps`` decisions
    (its own games, seeds apart from PPO's), and the policy is fitted to its moves (cross-entropy
    of the masked logits) and the value to its returns (the discounted, scaled rewards to the end
    of its game; decisions of a game still going when the teacher stops are left out), over
    ``--imitate-epochs`` passes in minibatches of 1024 at ``--imitate-learning-rate``. PPO then
    starts from the teacher's play and a critic that knows what it is worth. Returns the share of
    the first 20,000 decisions where the policy's most probable move is the teacher's."""
    from sergeant_major_env.agents import make_agent

    teacher, rng = make_agent(args.imitate), np.random.default_rng(args.seed)
    observations, masks, moves, rewards, ends, valids = [], [], [], [], [], []
    obs, infos = envs.reset(seed=args.seed + 10**9)
    autoreset, kept = np.zeros(args.num_envs, dtype=bool), 0
    while kept < args.imitate_steps:
        action = teacher.act(obs, infos["action_mask"], rng)
        valid = ~autoreset  # the step after a game's end starts the next game: not a decision
        observations.append(obs[valid].copy())
        masks.append(infos["action_mask"][valid].copy())
        moves.append(action[valid])
        valids.append(valid)
        kept += int(valid.sum())
        obs, reward, term, trunc, infos = envs.step(action)
        autoreset = term | trunc
        rewards.append(reward * args.reward_scale)
        ends.append(autoreset)
    # Returns, backwards per game slot; a decision counts only if its game ended in the data.
    returns = np.zeros((len(rewards), args.num_envs), dtype=np.float32)
    finished = np.zeros((len(rewards), args.num_envs), dtype=bool)
    following, done_later = np.zeros(args.num_envs), np.zeros(args.num_envs, dtype=bool)
    for t in reversed(range(len(rewards))):
        following = rewards[t] + args.gamma * following * ~ends[t]
        done_later = ends[t] | done_later
        returns[t], finished[t] = following, done_later
    keep = np.concatenate([finished[t][valids[t]] for t in range(len(valids))])  # in the order of the decisions
    every = np.concatenate(observations)
    del observations  # at most two copies of the observations at once
    x = torch.as_tensor(every[keep])
    del every
    m, y = torch.as_tensor(np.concatenate(masks)[keep]), torch.as_tensor(np.concatenate(moves)[keep])
    g = torch.as_tensor(np.concatenate([returns[t][valids[t]] for t in range(len(valids))])[keep])
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.imitate_learning_rate, eps=1e-5)
    for epoch in range(args.imitate_epochs):
        for index in torch.tensor_split(torch.randperm(x.shape[0]), max(1, x.shape[0] // 1024)):
            hidden = agent.body(x[index])
            loss = nn.functional.cross_entropy(agent.masked_logits(hidden, m[index]), y[index]) \
                + args.vf_coef * 0.5 * ((agent.critic(hidden).squeeze(-1) - g[index]) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        with torch.no_grad():
            agree = (agent.masked_logits(agent.body(x[:20000]), m[:20000]).argmax(-1) == y[:20000]).float().mean()
        print(f"imitation epoch {epoch + 1}/{args.imitate_epochs}: {x.shape[0]:,} decisions of {args.imitate}, "
              f"agreement {agree:.1%}", flush=True)
    return float(agree)


def evaluate(agent: Agent, args: Args) -> dict[str, Any]:
    """A duplicate-deal table: the greedy policy and two opponents (``--eval-against``)."""
    from sergeant_major_env.agents import make_agent

    opponent = args.eval_against or args.opponents
    plan = TablePlan(games=args.eval_games, seed=args.eval_seed, rules={"num_deals": args.num_deals}, progress=False,
                     workers=1)
    result = play_tables([GreedyPolicy(agent), opponent, opponent], plan, make_agent=make_agent)
    learned = result.agent(GreedyPolicy.name)
    margins = [h for h in result.tables[0].head_to_head if GreedyPolicy.name in (h.a, h.b)]
    print(result.format_text())
    return {"mean_points": learned.mean_points, "ci95": learned.ci95, "games": learned.games,
            "margins": [{"over": h.b if h.a == GreedyPolicy.name else h.a,
                         "margin": h.margin if h.a == GreedyPolicy.name else -h.margin,
                         "ci95": h.ci95 if h.a == GreedyPolicy.name or h.ci95 is None else [-h.ci95[1], -h.ci95[0]]}
                        for h in margins]}


def parse_args(argv: list[str] | None = None) -> Args:
    """The :class:`Args` fields as options (``--total-timesteps``), each with its default."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    docs = field_docs()
    for field in dataclasses.fields(Args):
        parser.add_argument("--" + field.name.replace("_", "-"), type=type(field.default), default=field.default,
                            help=f"{docs.get(field.name, '')} (default {field.default!r})")
    args = Args(**vars(parser.parse_args(argv)))
    if min(args.total_timesteps, args.num_envs, args.num_steps, args.num_minibatches, args.update_epochs) < 1:
        parser.error("--total-timesteps, --num-envs, --num-steps, --num-minibatches and --update-epochs must be "
                     "at least 1")
    return args


def field_docs() -> dict[str, str]:
    """Each field's docstring (the string under it in the class body)."""
    import ast
    import inspect

    body = ast.parse(inspect.getsource(Args)).body[0].body
    return {node.target.id: after.value.value for node, after in zip(body, body[1:])
            if isinstance(node, ast.AnnAssign) and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    agent, figures = train(args)
    print(f"trained on {figures['steps']:,} steps ({figures['games']:,} games) in {figures['seconds']:.0f} s")
    if args.eval_games:
        figures["evaluation"] = evaluate(agent, args)
    return figures


if __name__ == "__main__":
    main()
