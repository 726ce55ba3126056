"""The realism scorecard of 100 simulated days (bar: 10 s).

Simulates ``--days`` days (default 100) of the ``--population`` market (default rmsc04, the
busier one), each recorded as a tape and seen as a level-1 file, and scores them against one
reference day (a further simulated day, or ``--lobster MESSAGES``: a real LOBSTER day). Prints
one JSON line per figure, with the wall time and the process's CPU time (on a busy machine the
fairer figure): ``realism_simulate_s`` (recording the days and their level-1 views),
``realism_scorecard_s`` (every fact and distance of every day, simulation excluded),
``realism_figures_s`` (the four figures), ``realism_total_s`` (all three: simulation included).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from tradearena.envs.data.load import load_tape
from tradearena.envs.simulator.recording import synthetic_tape
from tradearena.envs.spec import POPULATIONS, MarketSpec
from tradearena.evaluation.market.realism import measure, scorecard, write_realism_figures
from tradearena.evaluation.market.sources import RealismSource, simulate_days, tape_view

BAR_SECONDS = 10.0


def timed(work: Callable[[], object]) -> tuple[object, float, float]:
    """(result, wall seconds, CPU seconds) of ``work()``."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = work()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def line(name: str, wall: float, cpu: float, **detail) -> None:
    record = {"name": name, "value": round(wall, 3), "unit": "s", "cpu_seconds": round(cpu, 3)}
    print(json.dumps(record | detail))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=100)
    parser.add_argument("--population", choices=sorted(POPULATIONS), default="rmsc04")
    parser.add_argument("--lobster", help="a real LOBSTER message file as the reference day")
    args = parser.parse_args()
    if args.lobster:
        reference = RealismSource(
            Path(args.lobster).stem, [tape_view(load_tape(args.lobster))], False
        )
    else:
        tape = synthetic_tape(args.days, traders=POPULATIONS[args.population](), levels=1)
        reference = RealismSource("synthetic", [tape_view(tape, 34_200.0, 57_600.0)], False)
    spec = MarketSpec(population=args.population)
    views, sim_wall, sim_cpu = timed(lambda: simulate_days(spec, args.days))
    source = RealismSource(args.population, views, simulated=True)
    detail = {"days": args.days, "population": args.population, "reference": reference.label}
    detail["messages_per_day"] = round(sum(len(v.time) for v in views) / args.days)
    line("realism_simulate_s", sim_wall, sim_cpu, **detail)

    def card():
        measured = [measure(reference), measure(source)]
        return measured, scorecard(measured, measured[0])

    (measured, _), card_wall, card_cpu = timed(card)
    line("realism_scorecard_s", card_wall, card_cpu, bar_s=BAR_SECONDS, **detail)
    with tempfile.TemporaryDirectory() as tmp:
        _, fig_wall, fig_cpu = timed(lambda: write_realism_figures(measured, Path(tmp)))
    line("realism_figures_s", fig_wall, fig_cpu, **detail)
    total_wall, total_cpu = sim_wall + card_wall + fig_wall, sim_cpu + card_cpu + fig_cpu
    line("realism_total_s", total_wall, total_cpu, **detail)


if __name__ == "__main__":
    main()
