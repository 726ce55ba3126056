"""The responsive replay beside the plain one: a day with a trading seat, and the impact
scorecard's wall time.

Prints one JSON line per figure:

- ``replay_seated_messages_per_s`` and ``responsive_seated_messages_per_s``: a whole day of a
  LOBSTER tape (a synthetic day written as LOBSTER files and read back, reconciled; or
  ``--lobster MESSAGES``) replayed by the compiled market with one seat that sends a market
  order of the tape's median size every minute on a random side, best of 3, in the tape's
  messages per second; the second gives its ratio to the first (bar: at least 0.5);
- ``responsive_estimate_s``: the seconds the responsive replay's answer takes to estimate from
  the whole tape (the bare propagator, the mechanical probes, the refill times), once;
- ``impact_scorecard_s`` (with ``--impact``): ``tradearena impact TAPE replay responsive
  --metaorders 1000`` on Ray with 2 workers, wall seconds (bar: 2 minutes on 2 cores for the
  AMZN level-1 day).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from tradearena.envs.data.load import load_tape
from tradearena.envs.data.tapes import Tape, write_lobster
from tradearena.envs.simulator.orders import Kind
from tradearena.envs.simulator.recording import synthetic_tape
from tradearena.envs.simulator.response_estimate import estimate_response, market_orders
from tradearena.envs.spec import MarketSpec


def seated_rate(spec: MarketSpec, lots: int) -> float:
    """Messages per second of ``spec``'s whole day with a seat trading every step, best of 3."""
    market = spec.market(1)
    best = float("inf")
    for _ in range(3):
        rng = np.random.default_rng(0)
        start = time.perf_counter()
        market.reset(0)
        while not market.done:
            market.step([[(int(Kind.MARKET), 1 if rng.random() < 0.5 else -1, 0, lots)]])
        best = min(best, time.perf_counter() - start)
    return len(spec.replayed_tape()) / best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lobster", help="a LOBSTER message file (its orderbook beside)")
    parser.add_argument("--impact", action="store_true", help="time the impact scorecard too")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = args.lobster or _synthetic_day(Path(folder))
        tape: Tape = load_tape(path)
        lots = max(int(np.median(market_orders(tape, 0.0, 86_400.0).size)), 1)
        plain = MarketSpec(tape=path, step_seconds=60.0, position_limit=10**9)
        responsive = replace(plain, responsive=True)
        began = time.perf_counter()
        estimate_response(tape)
        estimate = time.perf_counter() - began
        responsive.response()  # estimated once, before the timing
        rates = {
            name: seated_rate(spec, lots)
            for name, spec in (("replay", plain), ("responsive", responsive))
        }
        detail = {"messages": len(tape), "seat_lots": lots, "tape": Path(path).name}
        print(
            json.dumps(
                {
                    "name": "replay_seated_messages_per_s",
                    "value": round(rates["replay"]),
                    "unit": "messages/s",
                }
                | detail
            )
        )
        ratio = rates["responsive"] / rates["replay"]
        print(
            json.dumps(
                {
                    "name": "responsive_seated_messages_per_s",
                    "value": round(rates["responsive"]),
                    "unit": "messages/s",
                    "ratio_to_plain": round(ratio, 3),
                }
                | detail
            )
        )
        print(
            json.dumps(
                {"name": "responsive_estimate_s", "value": round(estimate, 2), "unit": "s"} | detail
            )
        )
        if args.impact:
            print(
                json.dumps(
                    {
                        "name": "impact_scorecard_s",
                        "value": round(_impact_seconds(path), 1),
                        "unit": "s",
                        "metaorders": 1000,
                    }
                    | detail
                )
            )


def _synthetic_day(folder: Path) -> str:
    """A synthetic day of 390 one-minute steps written as LOBSTER level-1 files."""
    messages = folder / "DAY_34200000_57600000_message_1.csv"
    write_lobster(
        synthetic_tape(0, n_steps=390, levels=1),
        messages,
        folder / "DAY_34200000_57600000_orderbook_1.csv",
    )
    return str(messages)


def _impact_seconds(path: str) -> float:
    from tradearena.evaluation.experiment.parallel import make_executor
    from tradearena.evaluation.market.impact import impact, impact_job

    executor = make_executor("ray", workers=2, progress=False, job=impact_job)
    try:
        began = time.perf_counter()
        impact(path, ["replay", "responsive"], executor=executor, metaorders=1000)
        return time.perf_counter() - began
    finally:
        executor.close()


if __name__ == "__main__":
    main()
