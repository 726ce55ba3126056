"""Batched markets: agent steps per second of `MarketVectorEnv` over N sessions.

Prints one JSON line per market: vector_env_steps_per_s (the rmsc04-sized population, 1-minute
steps, random actions, whole 390-step days with their resets; the figure is the best N of 1,
16, 64, 128, 256 and 1024 in one process or two (``workers=2``), each rate in the detail) with the
single `TradingEnv` measured in the same run and the ratio; vector_env_bytes_per_session, the
resident growth per session at the close of one rmsc04 day of 1,024 sessions in a fresh
process, with its peak resident memory (GiB); then vector_replay_steps_per_s, the same rates
over one-hour windows of the real LOBSTER sample day when its file is beside the project
(../shared/data), else of a recorded synthetic day, and vector_replay_bytes_per_session, its
memory line at N = 64.

``python bench/vector_env.py N [--replay]`` prints only the memory line, for N sessions.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from tradearena.envs.trading_env import TradingEnv
from tradearena.envs.vector import MarketVectorEnv

SAMPLE = (
    Path(__file__).resolve().parents[2]
    / "shared/data/lobster/AMZN_2012-06-21_L1/AMZN_2012-06-21_34200000_57600000_message_1.csv"
)


REPLAY = {"tape": str(SAMPLE) if SAMPLE.exists() else "synthetic", "n_steps": 60}
DAY = {"population": "rmsc04", "n_steps": 390, "position_limit": 1000, "reward_scale": 1.0}
"""Whole rmsc04 days of one-minute steps (not the taker task's default hour)."""


def resident_bytes() -> int:
    """This process's resident memory, bytes."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def vector_rate(n: int, market: dict, agent_steps: int, workers: int) -> tuple[float, float]:
    """(agent steps per second over whole episodes of ``n`` sessions in ``workers``
    processes, at least ``agent_steps`` of them, resets included (the first, which also
    starts the workers, outside the clock); resident bytes per session
    of this process at the end, a true figure only in a process that ran nothing before)."""
    before = resident_bytes()
    env = MarketVectorEnv(n, workers=workers, **market)
    rng = np.random.default_rng(0)
    length = TradingEnv(**market).market.n_steps
    episodes = max(1, -(-agent_steps // (n * length)))
    env.reset(seed=0)  # outside the clock: worker processes start up here (a second or two)
    start = time.perf_counter()
    for _ in range(episodes):
        for _ in range(length):
            env.step(rng.integers(env.single_action_space.n, size=n))
        env.step(np.zeros(n, dtype=np.int64))  # the autoreset step: every session restarts
    rate = episodes * length * n / (time.perf_counter() - start)
    memory = (resident_bytes() - before) / n
    env.close()
    return rate, memory


def single_rate(market: dict, agent_steps: int) -> float:
    """`TradingEnv` steps per second with random actions over whole episodes (at least
    ``agent_steps``)."""
    env = TradingEnv(**market)
    rng = np.random.default_rng(0)
    steps, seed = 0, 0
    start = time.perf_counter()
    while steps < agent_steps:
        env.reset(seed=seed)
        done = False
        while not done:
            _, _, done, _, _ = env.step(int(rng.integers(env.action_space.n)))
            steps += 1
        seed += 1
    return steps / (time.perf_counter() - start)


def report(
    name: str, market: dict, sizes: tuple[int, ...], agent_steps: int, **detail: object
) -> None:
    single = single_rate(market, agent_steps // 4)
    rates = {}
    for workers in (1, 2):
        for n in sizes:
            if n >= workers:
                rates[n, workers], _ = vector_rate(n, market, agent_steps, workers)
    best = max(rates, key=rates.get)
    line = {
        "name": name,
        "value": round(rates[best], 1),
        "unit": "agent steps/s",
        "best_n": best[0],
        "best_workers": best[1],
        "by_n": {n: round(rates[n, 1], 1) for n in sizes},
        "by_n_2_workers": {n: round(rates[n, 2], 1) for n in sizes if (n, 2) in rates},
        "single_env_steps_per_s": round(single, 1),
        "ratio_to_single": round(rates[best] / single, 2),
        **detail,
    }
    print(json.dumps(line))


def memory(n: int, replay: bool) -> None:
    """One rmsc04 day (or one replayed window) in ``n`` sessions: bytes per session and the
    peak resident memory."""
    market = REPLAY if replay else DAY
    rate, per_session = vector_rate(n, market, n, 1)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
    line = {
        "name": f"vector_{'replay' if replay else 'env'}_bytes_per_session",
        "value": int(per_session),
        "unit": "bytes",
        "sessions": n,
        "peak_resident_gib": round(peak / 2**30, 2),
        "agent_steps_per_s": round(rate, 1),
    }
    print(json.dumps(line))


def main() -> None:
    if len(sys.argv) > 1:
        memory(int(sys.argv[1]), "--replay" in sys.argv)
        return
    report(
        "vector_env_steps_per_s",
        DAY,
        (1, 16, 64, 128, 256, 1024),
        100_000,
        population="rmsc04",
        step_seconds=60,
        bar=100_000,
        jaxmarl_hft_l40s=[21_969, 351_119],
    )
    subprocess.run([sys.executable, __file__, "1024"], check=True)  # memory: a fresh process
    report(
        "vector_replay_steps_per_s",
        REPLAY,
        (1, 16, 64),
        10_000,
        tape=Path(REPLAY["tape"]).name,
        step_seconds=60,
    )
    subprocess.run([sys.executable, __file__, "64", "--replay"], check=True)


if __name__ == "__main__":
    main()
