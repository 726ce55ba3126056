"""Where a batched step's time goes: `MarketVectorEnv` over N rmsc04-sized sessions (one
process, 1-minute steps, random actions, whole days with their resets), split into the
compiled step (`envs.simulator.flow.advance`), the sessions' resets, the seats' features
(`envs.simulator.observation.observe`) and the Python around them.

Prints one JSON line, vector_step_us: microseconds per agent step, in all and by part.
``python bench/step_cost.py [N] [days]`` (default 64 sessions, 2 days). Under valgrind,
``valgrind --tool=callgrind --instr-atstart=no python bench/step_cost.py 16 1 --callgrind``
counts the instructions of the timed days only (then ``callgrind_annotate --inclusive=yes``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable

import numpy as np

import tradearena.envs.batch
from tradearena.envs.seats import SeatedMarket
from tradearena.envs.vector import MarketVectorEnv

SPENT: Counter[str] = Counter()


def timed(part: str, function: Callable) -> Callable:
    """``function``, adding the seconds each call takes to ``SPENT[part]``."""

    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            SPENT[part] += time.perf_counter() - start

    return wrapper


def callgrind(on: bool) -> None:
    """Switch valgrind's instruction counting for this process."""
    state = "on" if on else "off"
    subprocess.run(["callgrind_control", "-i", state, str(os.getpid())], capture_output=True)


def main() -> None:
    words = [w for w in sys.argv[1:] if not w.startswith("--")]
    n, days = (int(words[0]) if words else 64), (int(words[1]) if len(words) > 1 else 2)
    count = "--callgrind" in sys.argv
    tradearena.envs.batch.advance = timed("compiled_step", tradearena.envs.batch.advance)
    tradearena.envs.batch.observe = timed("features", tradearena.envs.batch.observe)
    SeatedMarket.reset = timed("resets", SeatedMarket.reset)  # one session's reset
    env = MarketVectorEnv(n, population="rmsc04", n_steps=390, position_limit=1000)
    rng = np.random.default_rng(0)
    length = env.market_spec.market(1).n_steps
    actions = [rng.integers(env.single_action_space.n, size=n) for _ in range(days * length)]
    env.reset(seed=0)
    SPENT.clear()
    if count:
        callgrind(True)
    start = time.perf_counter()
    for day in range(days):
        for action in actions[day * length : (day + 1) * length]:
            env.step(action)
        env.step(np.zeros(n, dtype=np.int64))  # the autoreset step: every session restarts
    total = time.perf_counter() - start
    if count:
        callgrind(False)
    steps = days * length * n
    parts = {part: round(SPENT[part] / steps * 1e6, 2) for part in sorted(SPENT)}
    python = total - sum(SPENT.values())
    line = {
        "name": "vector_step_us",
        "value": round(total / steps * 1e6, 2),
        "unit": "us per agent step",
        "sessions": n,
        "days": days,
        **parts,
        "python": round(python / steps * 1e6, 2),
        "agent_steps_per_s": round(steps / total, 1),
    }
    print(json.dumps(line))


if __name__ == "__main__":
    main()
