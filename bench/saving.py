"""Saved agents: the size of a saved agent of each kind and the time to save and load it.

Agents as the making task's quickstart seats them (60 tabular states or the 7 features, 17
actions): RAQL and RA2-Q (k = 5) with every table entry filled, DQN with its default network
(two layers of 64) and a full replay memory of 50,000 transitions (``buffer=True``, what
training on needs) or none (``buffer=False``, enough to act), and the Avellaneda-Stoikov
rule. Prints three JSON lines per agent: ``saved_agent_bytes`` (both files),
``save_agent_s`` and ``load_agent_s`` (`agents.load`, the agent built and restored; best of
``--repeats`` runs).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from tradearena import agents
from tradearena.agents.base import Agent
from tradearena.envs.spec import MarketSpec

MARKET = MarketSpec(task="making", population="light", n_steps=60, position_limit=500)
CASES: dict[str, tuple[str, dict, bool]] = {
    "raql": ("raql", {}, True),
    "ra2q_k5": ("ra2q", {"k": 5}, True),
    "dqn_with_buffer": ("dqn", {}, True),
    "dqn_without_buffer": ("dqn", {}, False),
    "avellaneda_stoikov": ("avellaneda_stoikov", {}, True),
}
"""Case -> (agent id, parameters, whether the replay memory is saved)."""


def trained_like(name: str, params: dict) -> Agent:
    """The agent with its arrays filled as after training (random values; a full memory)."""
    kind = agents.resolve(name).observation
    agent = agents.make(
        name,
        observation_space=MARKET.observation_space(kind),
        action_space=MARKET.action_space,
        seed=0,
        market_spec=MARKET,
        **params,
    )
    rng = np.random.default_rng(0)
    state = agent.state_dict()
    for key, value in state.items():
        if isinstance(value, np.ndarray) and value.dtype.kind == "f":
            state[key] = rng.random(value.shape).astype(value.dtype)
    agent.load_state_dict(state)
    buffer = getattr(agent, "buffer", None)
    if buffer is not None:
        for array in (buffer.observations, buffer.next_observations, buffer.rewards):
            array[:] = rng.random(array.shape)
        buffer.actions[:] = rng.integers(MARKET.action_space.n, size=buffer.buffer_size)
        buffer.pos, buffer.full = 0, True
    return agent


def best_time(call: Callable[[], object], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as work:
        for case, (name, params, buffer) in CASES.items():
            agent, path = trained_like(name, params), Path(work, case)
            save = best_time(lambda: agent.save(path, buffer=buffer), args.repeats)  # noqa: B023
            load = best_time(lambda: agents.load(path), args.repeats)  # noqa: B023
            size = sum(f.stat().st_size for f in path.iterdir())
            for figure, value, unit in (
                ("saved_agent_bytes", size, "bytes"),
                ("save_agent_s", round(save, 5), "s"),
                ("load_agent_s", round(load, 5), "s"),
            ):
                print(json.dumps({"name": figure, "value": value, "unit": unit, "agent": case}))


if __name__ == "__main__":
    main()
