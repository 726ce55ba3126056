"""What latency costs a step: `TradingEnv` steps per second over whole rmsc04 days (as
bench/env.py measures them) with latency off, with order-entry latency (log-normal, median
50 ms, sigma 1) and with that and a feed latency of 30 s (every step's view recorded inside
the flow).

Prints one JSON line per setting: env_steps_per_s (the best of five rounds, the settings
taking turns) with the setting named, and its ratio to the steps per second without latency.
"""

from __future__ import annotations

import json

from env import env_steps_per_second  # bench/env.py: whole rmsc04 days

ORDER = {"model": "lognormal", "median": 0.05, "sigma": 1.0}
SETTINGS = {
    "off": {},
    "order": {"order_latency": ORDER},
    "order_and_feed": {"order_latency": ORDER, "feed_latency": 30.0},
}


def main(rounds: int = 5) -> None:
    best = dict.fromkeys(SETTINGS, 0.0)
    for _ in range(rounds):  # interleaved, best of the rounds: the machine's load is shared
        for name, latency in SETTINGS.items():
            best[name] = max(best[name], env_steps_per_second(**latency))
    for name, latency in SETTINGS.items():
        rate, base = best[name], best["off"]
        line = {"name": "env_steps_per_s", "latency": name, "value": round(rate, 1)}
        line |= {"unit": "steps/s", "population": "rmsc04", "step_seconds": 60}
        line |= {"vs_off": round(rate / base, 3), **latency}
        print(json.dumps(line))


if __name__ == "__main__":
    main()
