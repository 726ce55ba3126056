"""Training through batched sessions: the quickstart's learners trained one episode after
another and ``sessions`` episodes at once, to the same plateau in less wall time?

Prints one JSON line per learner of ``configs/quickstart.toml`` (`{"name":
"batched_training_s", "agent": ..., ...}`): the wall time of its training (greedy checkpoints
included) summed over seeds, serial and batched, and their ratio; for each, where the
learning curve stopped moving (`evaluation.analysis.summary.plateau`) and the level it reached (mean
greedy PnL of the last three checkpoints, dollars per episode, with a 95% bootstrap interval
over seeds); and the difference of the levels, batched less serial, paired by seed (the same
market randomness). ``python bench/batched_training.py --seeds 16 --sessions 4 16`` (the
defaults: 8 seeds, 4 and 16 sessions, the quickstart's 600 episodes and its three learners;
``--episodes`` and ``--learners`` change those, ``--learning-rate`` gives them a constant step
size).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from tradearena.evaluation.analysis.metrics import bootstrap_ci
from tradearena.evaluation.analysis.summary import plateau
from tradearena.evaluation.experiment.config import load_config
from tradearena.evaluation.experiment.rollout import trained_alone
from tradearena.evaluation.experiment.schema import Training
from tradearena.evaluation.kinds.compare import plan

QUICKSTART = Path(__file__).resolve().parents[1] / "configs/quickstart.toml"
LEARNERS = ("q_learning", "raql", "ra2q")
LAST = 3  # checkpoints averaged for the level reached


def train(
    agent: str, seeds: int, sessions: int, episodes: int, params: dict
) -> tuple[float, pd.DataFrame, Training]:
    """(training seconds summed over ``seeds``, the greedy checkpoints' records, the
    ``[training]`` table) of ``agent`` (its parameters updated by ``params``) trained
    ``episodes`` episodes with ``sessions`` sessions at once."""
    training = {"sessions": sessions, "episodes": episodes}
    config = load_config(QUICKSTART, {"seeds": seeds, "training": training})
    index = config.index(agent)
    spec = dataclasses.replace(
        config.agents[index], params={**config.agents[index].params, **params}
    )
    seconds, rows = 0.0, []
    for job in plan(config):
        if job.labels != (agent,):
            continue
        start = time.perf_counter()
        _, records = trained_alone(config, job, spec, index)
        seconds += time.perf_counter() - start
        rows += [dataclasses.asdict(r) | {"seed": job.seed} for r in records if r.phase == "eval"]
    return seconds, pd.DataFrame(rows), config.training


def levels(records: pd.DataFrame, training: Training) -> np.ndarray:
    """Each seed's mean greedy PnL over the last `LAST` checkpoints, shape (seeds,)."""
    checkpoint = records["episode"] // training.evaluate_episodes
    last = records[checkpoint > checkpoint.max() - LAST]
    return last.groupby("seed")["pnl"].mean().to_numpy()


def interval(values: np.ndarray) -> list[float]:
    ci = bootstrap_ci(values)
    return [round(ci.estimate, 2), round(ci.low, 2), round(ci.high, 2)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--sessions", type=int, nargs="+", default=[4, 16])
    parser.add_argument("--episodes", type=int, default=600)
    parser.add_argument("--learners", nargs="+", default=list(LEARNERS))
    parser.add_argument("--learning-rate", type=float, help="a constant step size for all")
    args = parser.parse_args()
    for agent in args.learners:
        params = {"learning_rate": args.learning_rate} if args.learning_rate else {}
        serial = train(agent, args.seeds, 1, args.episodes, params)
        for sessions in args.sessions:
            batched = train(agent, args.seeds, sessions, args.episodes, params)
            line = {"name": "batched_training_s", "agent": agent, "sessions": sessions}
            line |= {"seeds": args.seeds, "episodes": args.episodes, **params}
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
