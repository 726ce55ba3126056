"""Training throughput of our DQN against Stable-Baselines3's DQN on the synthetic market.

Both train on ``gymnasium.make("tradearena/SyntheticMarket-v0", n_steps=390, **RMSC04)`` (390-step
sessions) for ``--steps`` environment steps with the same Q-network (two hidden layers of 64,
ReLU), buffer size, batch size, learning_starts, train_freq, gradient_steps, target update
interval, learning rate, gamma and epsilon schedule, one torch thread each. Prints JSON lines:
``dqn_steps_per_s`` and ``sb3_dqn_steps_per_s`` (environment steps per second while training,
env time included; detail: mean greedy test PnL in dollars over ``--test-episodes`` sessions)
and ``dqn_vs_sb3_steps_ratio`` (ours / theirs; target >= 1). Then ``dqn_batched_steps_per_s``:
our DQN trained on the making task (light population, 60-step sessions) in ``--sessions``
sessions at once (`envs.batch.BatchedMarket`: one forward pass acts for all), with the same
training one session at a time beside it, on ``--device`` (``auto``: CUDA when there is one).
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from tradearena import (
    agents,
    envs,  # noqa: F401 (registers the market ids)
)
from tradearena.envs.batch import BatchedMarket
from tradearena.envs.seats import SeatedMarket
from tradearena.envs.spec import MarketSpec

ENV_ID = "tradearena/SyntheticMarket-v0"
SHARED = {
    "learning_rate": 1e-3,
    "buffer_size": 50_000,
    "learning_starts": 500,
    "batch_size": 64,
    "gamma": 0.99,
    "train_freq": 4,
    "gradient_steps": 1,
    "target_update_interval": 500,
    "exploration_fraction": 0.1,
    "exploration_initial_eps": 1.0,
    "exploration_final_eps": 0.05,
    "max_grad_norm": 10.0,
}
"""Hyperparameters given to both (SB3's names)."""
RMSC04 = {"population": "rmsc04", "position_limit": 1000, "reward_scale": 1.0}
"""The synthetic market both train in: the rmsc04 population, rewards in dollars."""


def make_env(n_steps: int) -> gym.Env:
    return gym.make(ENV_ID, n_steps=n_steps, **RMSC04)


def test_pnl(policy: Any, n_steps: int, episodes: int) -> float:
    """Mean greedy session PnL in dollars (sum of rewards, reward_scale 1) over test seeds."""
    env, totals = make_env(n_steps), []
    for episode in range(episodes):
        obs, _ = env.reset(seed=10_000 + episode)
        total, done = 0.0, False
        while not done:
            obs, reward, terminated, truncated, _ = env.step(policy(obs))
            total += reward
            done = terminated or truncated
        totals.append(total)
    return float(np.mean(totals))


def warm_up_torch() -> None:
    """A few Adam steps on a small MLP: torch's one-off start-up costs (kernel loading, first
    allocations) fall here and not on whichever learner is timed first."""
    net = torch.nn.Sequential(torch.nn.Linear(7, 64), torch.nn.ReLU(), torch.nn.Linear(64, 3))
    optimizer = torch.optim.Adam(net.parameters())
    x = torch.randn(64, 7)
    for _ in range(50):
        loss = torch.nn.functional.smooth_l1_loss(net(x).amax(dim=1), x[:, 0])
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 10.0)
        optimizer.step()
        with torch.no_grad():
            net(x[:1]).argmax()


def make_dqn(
    observation_space: gym.Space, action_space: gym.Space, steps: int, device: str, seed: int
) -> Any:
    """Our DQN with SB3's network (two hidden layers of 64) and the `SHARED` settings, for
    ``steps`` training steps."""
    return agents.make(
        "dqn",
        observation_space=observation_space,
        action_space=action_space,
        total_timesteps=steps,
        hidden=64,
        torso_options={"layers": 2},
        device=device,
        seed=seed,
        **SHARED,
    )


def run_ours(steps: int, n_steps: int, seed: int) -> tuple[float, Any]:
    """(env steps per second while training, agent)."""
    env = make_env(n_steps)
    agent = make_dqn(env.observation_space, env.action_space, steps, "cpu", seed)
    obs, _ = env.reset(seed=seed)
    start = time.perf_counter()
    for _ in range(steps):
        action = agent.act(obs)
        next_obs, reward, terminated, truncated, _ = env.step(action)
        agent.update(obs, action, reward, next_obs, terminated, truncated)
        obs = next_obs
        if terminated or truncated:
            agent.end_episode()
            obs, _ = env.reset()
    return steps / (time.perf_counter() - start), agent


def run_batched(sessions: int, steps: int, seed: int, device: str) -> float:
    """Environment steps per second of DQN trained on the making task for at least ``steps``
    steps, ``sessions`` at once (1: one `SeatedMarket` episode after another)."""
    spec = MarketSpec(task="making", population="light", n_steps=60)
    agent = make_dqn(spec.observation_space("features"), spec.action_space, steps, device, seed)
    rounds = -(-steps // (sessions * spec.n_steps))
    start = time.perf_counter()
    if sessions == 1:
        seated = SeatedMarket(spec, [agent], learners=[0])
        for episode in range(rounds):
            seated.play(seed + episode, learn=True)
    else:
        batch = BatchedMarket(spec, sessions, [agent], learners=[0])
        for episode in range(rounds):
            batch.play([seed + episode * sessions + i for i in range(sessions)], learn=True)
    return rounds * sessions * spec.n_steps / (time.perf_counter() - start)


def run_sb3(steps: int, n_steps: int, seed: int) -> tuple[float, Any]:
    """(env steps per second while training, model) for SB3's DQN."""
    from stable_baselines3 import DQN

    model = DQN(
        "MlpPolicy",
        make_env(n_steps),
        policy_kwargs={"net_arch": [64, 64], "activation_fn": torch.nn.ReLU},
        device="cpu",
        seed=seed,
        verbose=0,
        **SHARED,
    )
    start = time.perf_counter()
    model.learn(total_timesteps=steps)
    return steps / (time.perf_counter() - start), model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=3900, help="training env steps (3900)")
    parser.add_argument("--session", type=int, default=390, help="steps per session (390)")
    parser.add_argument("--test-episodes", type=int, default=3, help="greedy test sessions")
    parser.add_argument("--repeats", type=int, default=1, help="runs each; best rate kept")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sessions", type=int, default=16, help="batched sessions (16)")
    parser.add_argument("--device", default="cpu", help="for the batched figure: cpu, auto")
    args = parser.parse_args()
    if args.sessions < 2:
        parser.error("--sessions must be at least 2 (the batched figure is set beside one by one)")
    torch.set_num_threads(1)
    warm_up_torch()
    rates: dict[str, float] = {"dqn": 0.0, "sb3_dqn": 0.0}
    learners: dict[str, Any] = {}
    for _ in range(args.repeats):  # alternate, so slow spells of the machine hit both
        for name, run in (("dqn", run_ours), ("sb3_dqn", run_sb3)):
            rate, learner = run(args.steps, args.session, args.seed)
            if rate > rates[name]:
                rates[name], learners[name] = rate, learner
    policies = {
        "dqn": lambda obs: learners["dqn"].act(obs, explore=False),
        "sb3_dqn": lambda obs: int(learners["sb3_dqn"].predict(obs, deterministic=True)[0]),
    }
    for name in ("dqn", "sb3_dqn"):
        pnl = test_pnl(policies[name], args.session, args.test_episodes)
        detail = {"test_pnl_dollars": round(pnl, 2), "steps": args.steps, **SHARED}
        line = {"name": f"{name}_steps_per_s", "value": round(rates[name], 1), "unit": "steps/s"}
        print(json.dumps({**line, "detail": detail}))
    ratio = rates["dqn"] / rates["sb3_dqn"]
    print(json.dumps({"name": "dqn_vs_sb3_steps_ratio", "value": round(ratio, 3), "unit": "x"}))
    steps = 2 * args.steps  # each run trains at least this many (whole rounds of sessions)
    batched = max(
        run_batched(args.sessions, steps, args.seed, args.device) for _ in range(args.repeats)
    )
    alone = max(run_batched(1, steps, args.seed, args.device) for _ in range(args.repeats))
    line = {"name": "dqn_batched_steps_per_s", "value": round(batched, 1), "unit": "steps/s"}
    detail = {"sessions": args.sessions, "one_by_one_steps_per_s": round(alone, 1)}
    detail |= {"ratio": round(batched / alone, 2), "device": args.device, "steps_at_least": steps}
    print(json.dumps({**line, "detail": detail}))


if __name__ == "__main__":
    main()
