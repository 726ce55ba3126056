"""The reference workload: an rmsc04-sized trading day (1000 noise, 102 zero-intelligence,
2 market makers, 12 momentum traders; 390 one-minute steps).

Prints one JSON line per figure: rmsc04_day_s (wall seconds per simulated day with no seats,
best of several days), env_steps_per_s (TradingEnv steps per second with random actions over
whole days, reset included) and the day's message and fill counts as detail.
"""

from __future__ import annotations

import json
import time
from typing import Any

import numpy as np

from tradearena.envs.simulator.market import Market
from tradearena.envs.simulator.traders import rmsc04
from tradearena.envs.trading_env import TradingEnv

DAY = {"population": "rmsc04", "n_steps": 390, "position_limit": 1000, "reward_scale": 1.0}
"""The `TradingEnv` of the figure: whole rmsc04 days, not the taker task's default hour."""


def day_seconds(days: int = 5) -> tuple[float, dict]:
    """Best wall time of ``days`` seeded days, and the last day's summary."""
    market = Market(rmsc04(), n_seats=0)
    times = []
    for seed in range(days):
        start = time.perf_counter()
        market.reset(seed)
        while not market.done:
            market.step()
        times.append(time.perf_counter() - start)
    return min(times), market.summary()


def env_steps_per_second(days: int = 3, **settings: Any) -> float:
    """TradingEnv steps per second with uniformly random actions, resets included; ``settings``
    (e.g. latency) are passed to the env beside `DAY`."""
    env = TradingEnv(**DAY, **settings)
    rng = np.random.default_rng(0)
    steps = 0
    start = time.perf_counter()
    for seed in range(days):
        env.reset(seed=seed)
        done = False
        while not done:
            _, _, done, _, _ = env.step(int(rng.integers(env.action_space.n)))
            steps += 1
    return steps / (time.perf_counter() - start)


def main() -> None:
    seconds, summary = day_seconds()
    print(
        json.dumps(
            {
                "name": "rmsc04_day_s",
                "value": round(seconds, 4),
                "unit": "s",
                "orders": summary["orders"],
                "cancels": summary["cancels"],
                "fills": summary["fills"],
                "abides_s": 28.0,
                "speedup_vs_abides": round(28.0 / seconds, 1),
            }
        )
    )
    rate = env_steps_per_second()
    print(
        json.dumps(
            {
                "name": "env_steps_per_s",
                "value": round(rate, 1),
                "unit": "steps/s",
                "step_seconds": 60,
                "population": "rmsc04",
                "abides_gym_steps_per_s": 11.5,
                "speedup_vs_abides": round(rate / 11.5, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
