"""Agent update throughput: act + update per second on random tabular transitions.

Prints one JSON line per algorithm: ``{"name": "<id>_updates_per_s", "value": ..., "unit":
"updates/s"}`` (54 states as `Discretizer.default`, 3 actions; ra2q with k = 10). Targets:
>= 100,000/s for q_learning and raql, >= 30,000/s for ra2q. The learners' update rule is
compiled (``agents/_kernels.pyx``): build it first with ``python setup.py build_ext --inplace``.
"""

from __future__ import annotations

import json
import time

import numpy as np

from tradearena import agents

N_STATES, N_ACTIONS = 54, 3
PARAMS = {"ra2q": {"k": 10}, "ra21q": {"k": 10}, "ra3q": {"k": 10}}
STEPS = {"ra3q_minimax": 500}


def updates_per_second(name: str, steps: int = 20_000, seed: int = 0) -> float:
    """act + update calls per second over ``steps`` random transitions (best of 3 runs)."""
    rng = np.random.default_rng(seed)
    states = rng.integers(N_STATES, size=steps + 1).tolist()
    rewards = rng.normal(size=steps).tolist()
    best = 0.0
    for _ in range(3):
        agent = agents.make(
            name,
            n_states=N_STATES,
            n_actions=N_ACTIONS,
            gamma=0.99,
            seed=seed,
            **PARAMS.get(name, {}),
        )
        start = time.perf_counter()
        for t in range(steps):
            s = states[t]
            a = agent.act(s)
            agent.update(s, a, rewards[t], states[t + 1], False, False)
        best = max(best, steps / (time.perf_counter() - start))
    return best


def main() -> None:
    for name in agents.names():
        if agents.resolve(name).learning and agents.resolve(name).observation == "tabular":
            rate = updates_per_second(name, STEPS.get(name, 20_000))
            print(
                json.dumps(
                    {"name": f"{name}_updates_per_s", "value": round(rate), "unit": "updates/s"}
                )
            )


if __name__ == "__main__":
    main()
