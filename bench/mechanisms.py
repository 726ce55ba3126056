"""What the flow mechanisms cost: a light-population day (390 one-minute steps, no seats, reset
included) with each mechanism on (an intraday U profile, Hawkes arrivals, round-lot sizes, and
all three; the market maker's wake-ups in Hawkes bursts) against the same day with none.

Prints one JSON line per figure: light_day_s (none) and light_<mechanism>_day_s, wall seconds
per simulated day (best of ``days`` seeded days, the settings taken in turn so that the
machine's load falls on all alike), with ratio_to_off (bar: at most 2).
``python bench/mechanisms.py [days]`` (default 10).
"""

from __future__ import annotations

import json
import sys
import time

from tradearena.envs.simulator.market import Market
from tradearena.envs.simulator.traders import MarketMaker, Trader, light

MECHANISMS = {
    "profile": {"profile": {"shape": "u", "ratio": 3.0}},
    "hawkes": {"hawkes": {"branching": 0.7, "decay": 0.2}},
    "sizes": {"sizes": {"round_share": 0.4, "lots_mean": 1.5, "odd_median": 30, "odd_sigma": 0.8}},
}
SETTINGS = {
    "off": {},
    **MECHANISMS,
    "all": {k: v for mechanism in MECHANISMS.values() for k, v in mechanism.items()},
}
"""The light population's keywords per setting."""
MAKER_BURSTS = {"branching": 0.5, "decay": 1.0}
"""The market maker's wake-ups of setting "maker_bursts" (its mean period kept, 30 s)."""


def population(name: str) -> list[Trader]:
    """The light population of setting ``name`` ("maker_bursts": its maker's wake-ups in
    Hawkes bursts, the rest as "off")."""
    traders = light(**SETTINGS.get(name, {}))
    if name == "maker_bursts":
        traders[2] = MarketMaker(1, period=30.0, levels=5, hawkes=MAKER_BURSTS)
    return traders


def day_seconds(market: Market, seed: int) -> float:
    """Wall seconds of one seeded day of ``market``, reset included."""
    start = time.perf_counter()
    market.reset(seed)
    while not market.done:
        market.step()
    return time.perf_counter() - start


def main() -> None:
    days = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    names = [*SETTINGS, "maker_bursts"]
    markets = {name: Market(population(name), n_seats=0) for name in names}
    best = dict.fromkeys(names, float("inf"))
    for seed in range(days):
        for name, market in markets.items():
            best[name] = min(best[name], day_seconds(market, seed))
    for name in names:
        line = {
            "name": "light_day_s" if name == "off" else f"light_{name}_day_s",
            "value": round(best[name], 5),
            "unit": "s",
            "days": days,
            "keywords": SETTINGS.get(name, {"maker": {"hawkes": MAKER_BURSTS}}),
            "ratio_to_off": round(best[name] / best["off"], 3),
            "bar": 2.0,
        }
        print(json.dumps(line))


if __name__ == "__main__":
    main()
