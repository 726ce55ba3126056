"""What a parent order costs per share as it grows, on the plain replay of a day's hours and on
its responsive replay.

    python examples/execution_sizes.py DAY_message_1.csv [--from 12:45] [--sizes 100,300,...]

A TWAP (the execution zoo's reference: equal market orders, one a minute) buys a parent of
each size over 30 minutes, at the same random starts in the hours from ``--from`` (default
12:45) to the close; the responsive replay's answer is estimated from the hours before.
Each session is run again without the seat (the same seed), and a share's cost is what it
paid over the mid the tape had then without the seat (ticks): the spread and the impact, the
tape's own moves taken out. Prints, per market, the mean cost per share at each size with
its 95% bootstrap interval over sessions, and the slope of log cost against log size: the
square-root law says a parent's cost per share grows about as its size to the 0.5 (Toth et
al. 2011); a replay that puts back whatever a seat took leaves the cost to the depth it
happens to hold behind the best.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from tradearena.envs.data.load import load_tape
from tradearena.envs.spec import MarketSpec
from tradearena.evaluation.analysis.metrics import bootstrap_ci
from tradearena.evaluation.market.impact import GRID, STEP, Script, run_scripts
from tradearena.evaluation.market.sources import session_of

SECONDS = 1800.0
"""The time a parent is bought over, seconds: a child order every `CHILD_EVERY`."""
CHILD_EVERY = 60.0


def hhmm(text: str) -> float:
    hours, minutes = (int(part) for part in text.split(":"))
    return hours * 3600.0 + minutes * 60.0


def parents(first: float, last: float, size: int, n: int, seed: int) -> list[Script]:
    """``n`` TWAP buys of ``size`` lots, each at a random start on the grid of the hours."""
    rng = np.random.default_rng(seed)
    children = int(SECONDS // CHILD_EVERY)
    lots = np.full(children, size // children)
    lots[: size % children] += 1
    at = (np.arange(children) * CHILD_EVERY / STEP).astype(np.int64)
    starts = first + GRID * np.floor(rng.uniform(0, last - first - SECONDS - GRID, n) / GRID)
    return [
        Script(
            float(s),
            int(SECONDS / STEP) + 1,
            at[lots > 0],
            np.ones(children, int)[lots > 0],
            lots[lots > 0],
        )
        for s in starts
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tape")
    parser.add_argument("--from", dest="start", default="12:45")
    parser.add_argument("--sizes", default="100,300,1000,3000,10000")
    parser.add_argument("--sessions", type=int, default=100)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    start = hhmm(args.start)
    open_, close = session_of(load_tape(args.tape))
    print(
        f"TWAP over 30 minutes, {args.start}-close: cost per share, ticks over the mid without it"
    )
    print("| market | " + " | ".join(f"{q:,}" for q in sizes) + " | slope |")
    print("|---|" + "---|" * (len(sizes) + 1))
    measured = {}
    for name, responsive in (("replay", False), ("responsive", True)):
        spec = MarketSpec(
            task="execution",
            tape=args.tape,
            responsive=responsive,
            response_hours=(open_, start) if responsive else None,
        )
        costs, cells = [], []
        for size in sizes:
            scripts = parents(start, close, size, args.sessions, seed=size)
            seeds = list(range(len(scripts)))
            seated = run_scripts(spec, scripts, seeds)
            alone = run_scripts(spec, scripts, seeds, seat=False)
            paid = np.array(
                [
                    (-s.cash - np.sum(script.lots * a.mids[script.at])) / size
                    for script, s, a in zip(scripts, seated, alone)
                ]
            )
            interval = bootstrap_ci(paid, n_resamples=1000)
            costs.append(interval.estimate)
            cells.append(f"{interval.estimate:.2f} [{interval.low:.2f}, {interval.high:.2f}]")
        print(f"| {name} | " + " | ".join(cells) + f" | {_slope(sizes, costs):.2f} |")
        measured[name] = np.array(costs)
    extra = measured["responsive"] - measured["replay"]
    print(
        f"\nThe responsive replay's cost over the plain replay's (its impact), ticks a share: "
        f"{', '.join(f'{c:.2f}' for c in extra)}; it grows as the size to the "
        f"{_slope(sizes, extra):.2f}."
    )


def _slope(sizes: list[int], costs) -> float:
    """The slope of log cost against log size over the positive costs."""
    costs = np.asarray(costs, float)
    positive = costs > 0
    if positive.sum() < 2:
        return math.nan
    return float(np.polyfit(np.log(np.array(sizes)[positive]), np.log(costs[positive]), 1)[0])


if __name__ == "__main__":
    main()
