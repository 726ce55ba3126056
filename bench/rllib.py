"""RLlib's faces: env steps per second of the batched market against the plain wrapper.

Prints one JSON line per figure, each over N sessions of the two-seat making market (random
actions for both seats, whole 60-step sessions restarting as RLlib's runner restarts them):

- rllib_wrapper_steps_per_s: RLlib's ``SyncVectorMultiAgentEnv`` over N
  ``ParallelPettingZooEnv(MarketParallelEnv)`` (what ``.environment("tradearena-making-2")``
  with ``num_envs_per_env_runner=N`` steps);
- rllib_batched_steps_per_s: `envs.rllib.BatchedMarketEnv` of N sessions (what
  `envs.rllib.BatchedEnvRunner` steps), with the ratio to the wrapper at the same N;
- rllib_runner_steps_per_s: env steps per second of RLlib's PPO env runner sampling (its
  module's forward pass and episode bookkeeping included), the default runner against
  `BatchedEnvRunner`, with N sessions per runner.

An env step is one step of one session (both seats acting).
``python bench/rllib.py [N ...]`` (default 1 16 64).
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import numpy as np
from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner
from ray.rllib.env.vector.sync_vector_multi_agent_env import SyncVectorMultiAgentEnv

from tradearena.envs.rllib import AGENTS, BatchedEnvRunner, BatchedMarketEnv, market_env, ppo_config
from tradearena.envs.spec import MarketSpec

MARKET = {"task": "making", "n_steps": 60}
SEATS = AGENTS["2"]
STEPS = 6_000
"""Env steps timed per figure (at least)."""


def random_actions(rng: np.random.Generator, n: int) -> list[dict[str, int]]:
    """One random action per seat for each of ``n`` sessions."""
    draws = rng.integers(MarketSpec(**MARKET).action_space.n, size=(n, len(SEATS))).tolist()
    return [dict(zip(SEATS, row)) for row in draws]


def env_rate(env: Any, n: int) -> float:
    """Env steps per second of ``env`` (``n`` sessions) under random actions."""
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    rounds = -(-STEPS // n)
    actions = [random_actions(rng, n) for _ in range(rounds)]
    start = time.perf_counter()
    for chosen in actions:
        env.step(chosen)
    return rounds * n / (time.perf_counter() - start)


def runner_rate(n: int, batched: bool) -> float:
    """Env steps per second of a PPO env runner sampling ``STEPS`` env steps from ``n``
    sessions (RLlib's own runner over the plain wrapper, or `BatchedEnvRunner`)."""
    config = ppo_config("making", market=MARKET, sessions=n, batched=batched)
    runner = (BatchedEnvRunner if batched else MultiAgentEnvRunner)(config=config)
    runner.sample(num_timesteps=n * 60)  # warm-up, outside the clock
    start = time.perf_counter()
    runner.sample(num_timesteps=STEPS)
    rate = STEPS / (time.perf_counter() - start)
    runner.stop()
    return rate


def line(figure: str, n: int, **values: float) -> None:
    """Print one figure's JSON line."""
    print(json.dumps({"figure": figure, "sessions": n, **values}), flush=True)


def main(sizes: list[int]) -> None:
    for n in sizes:
        wrapper = env_rate(SyncVectorMultiAgentEnv([lambda: market_env(MARKET)] * n), n)
        batched = env_rate(BatchedMarketEnv(n, **MARKET), n)
        line("rllib_wrapper_steps_per_s", n, value=round(wrapper))
        ratio = round(batched / wrapper, 2)
        line("rllib_batched_steps_per_s", n, value=round(batched), ratio=ratio)
    for n in sizes:
        plain, batched = runner_rate(n, False), runner_rate(n, True)
        rates = {"wrapper": round(plain), "batched": round(batched)}
        line("rllib_runner_steps_per_s", n, **rates, ratio=round(batched / plain, 2))


if __name__ == "__main__":
    main([int(n) for n in sys.argv[1:]] or [1, 16, 64])
