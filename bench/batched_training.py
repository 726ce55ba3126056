"""Training through batched sessions: the quickstart's learners trained one episode after
another and ``sessions`` episodes at once, to the same plateau in less wall time?

Prints one JSON line per learner of ``configs/quickstart.toml`` (`{"name":
"batched_training_s", "agent": ..., ...}`): the wall time of its training (greedy checkpoints
included) summed over seeds, serial and batched, and their ratio; for each, where the
learning curve stopped moving (`evaluation.metrics.plateau`) and the level it reached (mean
greedy PnL of the last three checkpoints, dollars per episode, with a 95% bootstrap interval
over seeds); and the difference of the levels, batched less serial, paired by seed (the same
market randomness). Run it with ``python bench/batched_training.py [seeds] [sessions ...]``
(default 8 seeds; 4 and 16 sessions).
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from evaluation.compare import plan
from evaluation.config import load_config
from evaluation.metrics import bootstrap_ci, plateau
from evaluation.rollout import trained_alone

QUICKSTART = Path(__file__).resolve().parents[1] / "configs/quickstart.toml"
LEARNERS = ("q_learning", "raql", "ra2q")
LAST = 3  # checkpoints averaged for the level reached


def train(agent: str, seeds: int, sessions: int) -> tuple[float, pd.DataFrame, dict]:
    """(training seconds summed over ``seeds``, the greedy checkpoints' records, the
    ``[training]`` table) of ``agent`` trained with ``sessions`` sessions at once."""
    config = load_config(QUICKSTART, {"seeds": seeds, "training": {"sessions": sessions}})
    index, spec = next((i, s) for i, s in enumerate(config["agents"]) if s["label"] == agent)
    seconds, rows = 0.0, []
    for job in plan(config):
        if job.labels != (agent,):
            continue
        start = time.perf_counter()
        _, records = trained_alone(config, job, spec, index)
        seconds += time.perf_counter() - start
        rows += [dataclasses.asdict(r) | {"seed": job.seed} for r in records if r.phase == "eval"]
    return seconds, pd.DataFrame(rows), config["training"]


def levels(records: pd.DataFrame, training: dict) -> np.ndarray:
    """Each seed's mean greedy PnL over the last `LAST` checkpoints, shape (seeds,)."""
    checkpoint = records["episode"] // training["evaluate_episodes"]
    last = records[checkpoint > checkpoint.max() - LAST]
    return last.groupby("seed")["pnl"].mean().to_numpy()


def interval(values: np.ndarray) -> list[float]:
    ci = bootstrap_ci(values)
    return [round(ci.estimate, 2), round(ci.low, 2), round(ci.high, 2)]


def main() -> None:
    seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    sizes = [int(n) for n in sys.argv[2:]] or [4, 16]
    for agent in LEARNERS:
        serial = train(agent, seeds, 1)
        for sessions in sizes:
            batched = train(agent, seeds, sessions)
            line = {"name": "batched_training_s", "agent": agent, "sessions": sessions}
            line["seeds"] = seeds
            for mode, (seconds, records, training) in (("serial", serial), ("batched", batched)):
                curve = plateau(records, training=training).iloc[0]
                line[f"{mode}_s"] = round(seconds, 2)
                line[f"{mode}_plateau_episode"] = int(curve["plateau_episode"])
                line[f"{mode}_level_pnl"] = interval(levels(records, training))
            line["speedup"] = round(line["serial_s"] / line["batched_s"], 2)
            difference = levels(*batched[1:]) - levels(*serial[1:])
            line["level_difference_pnl"] = interval(difference)
            print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
