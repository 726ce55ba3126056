"""Time to skill: how long each learner trains before it makes 90% of the reference's PnL.

On the market of ``configs/quickstart.toml`` (the making task), each learner of the config
(and ``--learners`` more, with their default parameters) trains in batches of ``--sessions``
sessions; after every ``--every`` training episodes its greedy policy plays the config's
test sessions of seed 0, and the clock stops the first time its mean PnL there reaches
``--fraction`` (0.9) of the reference's (Avellaneda-Stoikov, calibrated, on the same
sessions). Prints one JSON line per learner: ``{"name": "time_to_skill_s", "agent": ...,
"value": seconds of training (greedy checks not counted), "steps": environment steps,
"episodes": ..., "level": greedy PnL reached, "target": ...}``; a learner that has not reached
it after ``--episodes`` episodes reports ``"reached": false``, its best level and ``value``
null. The first learner's clock includes the process's first torch calls (a warm-up learner
runs first, untimed, so that it does not). ``python bench/time_to_skill.py [--learners
averaged_dqn deep_raql ...]``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from tradearena.envs.batch import BatchedMarket
from tradearena.envs.seats import SeatedMarket
from tradearena.evaluation.experiment.config import AgentEntry, load_config
from tradearena.evaluation.experiment.rollout import (
    AGENT,
    TEST,
    TRAIN,
    build_agent,
    seed_int,
    seed_sequence,
)

QUICKSTART = Path(__file__).resolve().parents[1] / "configs/quickstart.toml"
NOT_LEARNING = {"avellaneda_stoikov", "hold", "random"}


def greedy_pnl(seated: SeatedMarket, seeds: list) -> float:
    """Mean PnL (dollars) of the seated policy over ``seeds``, acting greedily."""
    return float(np.mean([seated.play(seed)[0]["pnl"] for seed in seeds]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--learners", nargs="*", default=[], help="ids beyond the config's")
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--every", type=int, default=16, help="training episodes per check")
    parser.add_argument("--episodes", type=int, default=1200, help="the most trained")
    parser.add_argument("--fraction", type=float, default=0.9)
    args = parser.parse_args()
    torch.set_num_threads(1)  # small networks: one thread is fastest (as bench/deep.py)
    config = load_config(QUICKSTART)
    market = config.market
    tests = [seed_sequence(config, 0, TEST, 0, e) for e in range(config.testing.episodes)]
    specs = [s for s in config.agents if s.id not in NOT_LEARNING]
    specs += [AgentEntry(name, name) for name in args.learners]
    reference = build_agent(AgentEntry("avellaneda_stoikov"), market, 0)
    target = args.fraction * greedy_pnl(SeatedMarket(market, [reference]), tests)
    warm_up = build_agent(AgentEntry("dqn", params={"learning_starts": 8}), market, 0, 1)
    SeatedMarket(market, [warm_up], learners=(0,)).play(0, learn=True)
    for index, spec in enumerate(specs):
        seed = seed_int(config, 0, AGENT, index)
        agent = build_agent(spec, market, seed, args.episodes)
        trainer = BatchedMarket.like(SeatedMarket(market, [agent], learners=(0,)), args.sessions)
        tester = SeatedMarket(market, [agent])
        seconds, episodes, best = 0.0, 0, -np.inf
        while episodes < args.episodes and best < target:
            for start in range(episodes, episodes + args.every, args.sessions):
                chunk = range(start, start + args.sessions)
                seeds = [seed_sequence(config, 0, TRAIN, 0, e) for e in chunk]
                clock = time.perf_counter()
                trainer.play(seeds, learn=True)
                seconds += time.perf_counter() - clock
            episodes += args.every
            best = max(best, greedy_pnl(tester, tests))
        reached = best >= target
        print(
            json.dumps(
                {
                    "name": "time_to_skill_s",
                    "agent": spec.label,
                    "value": round(seconds, 2) if reached else None,
                    "unit": "s",
                    "reached": bool(reached),
                    "steps": episodes * market.n_steps,
                    "episodes": episodes,
                    "level": round(best, 2),
                    "target": round(target, 2),
                    "sessions": args.sessions,
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    main()
