"""What the fundamental's options and the metaorder traders cost, and the impact they show.

Prints one JSON line per figure:

- light_day_s, light_mechanisms_day_s: wall seconds per simulated day (390 one-minute steps,
  no seats, best of ``days``) of the light population as it is, and with its
  zero-intelligence traders given volatility regimes and a 600 s forecast horizon plus 4
  metaorder traders; ``ratio`` is the second over the first (goal: at most 2).
- metaorder_impact_exponent: the log-log slope of a parent's mean move (ticks, in its own
  direction, read off 5 s mids) against its size (shares), over the parents of ``days``
  days of the light market with 4 metaorder traders (`evaluation.analysis.impact`); the
  square-root law of real markets is about 0.5.

``python bench/fundamental.py [days]`` (default 100).
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

from tradearena.envs.simulator.impact import metaorder_moves
from tradearena.envs.simulator.market import Market
from tradearena.envs.simulator.traders import Metaorder, Trader, ZeroIntelligence, light
from tradearena.evaluation.analysis.impact import impact_exponent

REGIMES = {"volatile_sigma": 0.2, "volatile_rate": 1 / 3600, "calm_rate": 1 / 1800}
"""Volatile stretches of 4x the calm volatility, a third of the time, half an hour each."""


def with_mechanisms() -> list[Trader]:
    """The light population, its zero-intelligence traders with volatility regimes and a
    600 s horizon, and 4 metaorder traders."""
    traders = light()
    traders[1] = ZeroIntelligence(20, arrival_rate=1 / 60, horizon=600.0, **REGIMES)
    return [*traders, Metaorder(4)]


def day_seconds(traders: list[Trader], days: int) -> float:
    """Best wall time of ``days`` seeded days of ``traders`` (390 one-minute steps)."""
    market = Market(traders, n_seats=0, n_steps=390)
    best = np.inf
    for seed in range(days):
        start = time.perf_counter()
        market.reset(seed)
        while not market.done:
            market.step()
        best = min(best, time.perf_counter() - start)
    return best


def impact(days: int) -> tuple[float, int]:
    """The impact exponent of the metaorders of ``days`` days, and how many parents it fits."""
    size, move = metaorder_moves([*light(), Metaorder(4)], days)
    return impact_exponent(size, move, n_bins=8).exponent, len(size)


def main() -> None:
    days = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    off = day_seconds(light(), min(days, 20))
    on = day_seconds(with_mechanisms(), min(days, 20))
    print(json.dumps({"name": "light_day_s", "value": round(off, 5), "unit": "s"}))
    line = {"name": "light_mechanisms_day_s", "value": round(on, 5), "unit": "s"}
    print(json.dumps(line | {"ratio": round(on / off, 2), "goal_ratio": 2.0}))
    exponent, parents = impact(days)
    line = {"name": "metaorder_impact_exponent", "value": round(exponent, 3), "unit": ""}
    print(json.dumps(line | {"parents": parents, "days": days, "square_root_law": 0.5}))


if __name__ == "__main__":
    main()
