"""How far the mid moves against the side a market order hit, on a real day and in a learned
market: the adverse selection a resting quote meets.

``python examples/trade_impact.py DAY_message_1.csv FLOW.json [--from HH:MM]`` prints, for
1, 10 and 60 seconds after each market order (a sweep of executions at one time stamp), the
mean move of the mid in ticks, signed so that a move against the resting side is negative:
on the day after ``--from`` (default 12:45), and on a day of the learned market of FLOW.json
(`tradearena fit --model events`) recorded at level 1.
"""

from __future__ import annotations

import argparse

import numpy as np

from tradearena.envs.data.events import Kind, events
from tradearena.envs.data.load import load_tape
from tradearena.envs.data.tapes import Tape
from tradearena.envs.simulator.recording import synthetic_tape
from tradearena.envs.simulator.traders import LearnedFlow

HORIZONS = (1.0, 10.0, 60.0)


def impact(tape: Tape, start: float) -> tuple[int, list[float]]:
    """(market orders after ``start``, mean signed mid move at each of `HORIZONS`, ticks)."""
    ev, book, times = events(tape), tape.book_rows, tape.messages["time"]
    mid = (book[:, 0] + book[:, 2]) / 2.0
    hit = (ev.kind == Kind.MARKET) & (ev.time >= start)
    before = np.maximum(np.searchsorted(times, ev.time[hit], side="left") - 1, 0)
    moves = []
    for horizon in HORIZONS:
        after = np.searchsorted(times, ev.time[hit] + horizon, side="right") - 1
        moves.append(float(np.mean((mid[after] - mid[before]) * ev.side[hit])))
    return int(hit.sum()), moves


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("day")
    parser.add_argument("flow")
    parser.add_argument("--from", dest="start", default="12:45")
    args = parser.parse_args()
    hours, minutes = (int(x) for x in args.start.split(":"))
    real = load_tape(args.day)
    open_time = float(np.floor(real.messages["time"][0] / 60) * 60)
    flow = LearnedFlow(args.flow)
    simulated = synthetic_tape(
        0,
        traders=[flow],
        levels=1,
        n_steps=390,
        warmup_seconds=0.0,
        open_time=open_time,
        tick_size=real.tick_size,
        initial_price=int(real.book_rows[0, 0] + real.book_rows[0, 2]) // 2,
    )
    for name, tape, start in (
        ("day", real, 3600 * hours + 60 * minutes),
        ("learned", simulated, 0),
    ):
        count, moves = impact(tape, start)
        cells = ", ".join(f"{h:g} s: {m:+.2f}" for h, m in zip(HORIZONS, moves))
        print(f"{name:8} {count:6,} market orders; mid move against the side hit, ticks: {cells}")


if __name__ == "__main__":
    main()
