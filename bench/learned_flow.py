"""Order flow learned event by event: how long it takes to learn, and to run.

Prints one JSON line per figure: ``learned_fit_s``, learning the parametric flow from a day's
morning (to 12:45; bar 120 s on 2 cores); ``learned_neural_fit_s``, its neural variant
(bar 900 s on the CPU; skipped without torch); ``learned_day_s``, one simulated day (390
one-minute steps, no seats) of the learned market on one core, the best of three (bar 1 s);
``learned_vector_steps_per_s``, agent steps per second of 64 batched making sessions with
the learned flow, beside the same with the light population measured in the same run (bar:
at least half of it). The day is the LOBSTER level-1 sample when it is beside the project
(../shared/data), else a recorded synthetic day of the light population.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from vector_env import SAMPLE, vector_rate  # bench/vector_env.py

from tradearena.envs.data.events import window_events
from tradearena.envs.data.load import load_tape
from tradearena.envs.data.tapes import write_lobster
from tradearena.envs.simulator.learned_flow.estimate import fit_events
from tradearena.envs.simulator.market import Market
from tradearena.envs.simulator.recording import synthetic_tape
from tradearena.envs.simulator.traders import LearnedFlow, light

MORNING_END = 12.75 * 3600  # 12:45


def line(name: str, value: float, unit: str, **detail: object) -> None:
    print(json.dumps({"name": name, "value": round(value, 4), "unit": unit} | detail), flush=True)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        day = SAMPLE
        if not day.exists():
            day = Path(tmp, "light_34200000_57600000_message_1.csv")
            write_lobster(
                synthetic_tape(0, traders=light(), levels=1),
                day,
                str(day).replace("_message_", "_orderbook_"),
            )
        tape = load_tape(str(day))
        start = time.perf_counter()
        model = fit_events(tape, end=MORNING_END)
        line(
            "learned_fit_s",
            time.perf_counter() - start,
            "s",
            bar=120,
            day=day.stem,
            events=model.meta["events"],
        )
        try:
            from tradearena.envs.simulator.learned_flow.neural_fit import fit_neural

            ev, path = window_events(tape, *model.meta["window"])
            start = time.perf_counter()
            neural = fit_neural(model, ev, path)
            line(
                "learned_neural_fit_s",
                time.perf_counter() - start,
                "s",
                bar=900,
                epochs=neural.meta["epochs"],
            )
        except ImportError:
            pass
        flow_file = model.save(Path(tmp, "flow.json"))
        clock = {"tick_size": model.tick_size, "initial_price": 22_356, "open_time": 34_200.0}
        best = float("inf")
        for seed in range(3):
            market = Market(
                [LearnedFlow(model)], n_seats=0, n_steps=390, warmup_seconds=0.0, **clock
            )
            start = time.perf_counter()
            market.reset(seed)
            while not market.done:
                market.step()
            best = min(best, time.perf_counter() - start)
        line("learned_day_s", best, "s", bar=1.0, events=market.traders[0].sampler.events)
        making = {"task": "making", "n_steps": 60}
        learned = {**making, **clock, "traders": [{"type": "LearnedFlow", "model": str(flow_file)}]}
        rate, _ = vector_rate(64, learned, 20_000, workers=1)
        light_rate, _ = vector_rate(64, {**making, "population": "light"}, 20_000, workers=1)
        line(
            "learned_vector_steps_per_s",
            rate,
            "steps/s",
            light=round(light_rate, 1),
            ratio=round(rate / light_rate, 3),
            bar_ratio=0.5,
            sessions=64,
        )


if __name__ == "__main__":
    main()
