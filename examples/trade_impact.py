"""How far the mid moves against the side a market order hit, on a real day and in a learned
market, and what a resting quote earns there: the adverse selection a quote meets.

``python examples/trade_impact.py DAY_message_1.csv FLOW.json [--from HH:MM]`` prints, on the
day after ``--from`` (default 12:45) and on a day of the learned market of FLOW.json
(`tradearena learn --model events`) recorded at level 1:

- for 1, 10 and 60 seconds after each market order (a sweep of executions at one time
  stamp), the mean move of the mid in ticks, signed so that a move against the resting side
  is negative;
- a quote of one share ``QUOTE_TICKS`` either side of each minute's opening mid, left for the
  minute, filled by the first market order on its side that meets it (it rests at or better
  than the best) or the first quote of the other side that reaches it; its fills per hour and
  their mean mark-out (the mid then against the quote's price, ticks, positive when the quote
  earned) 1, 10 and 60 seconds after the fill. The quote does not change the flow: the
  replay judge's assumption, here taken on both sides.
"""

from __future__ import annotations

import argparse

import numpy as np

from tradearena.envs.data.events import EventKind, events
from tradearena.envs.data.load import load_tape
from tradearena.envs.data.tapes import EMPTY_ASK, EMPTY_BID, Tape
from tradearena.envs.simulator.recording import synthetic_tape
from tradearena.envs.simulator.traders import LearnedFlow

HORIZONS = (1.0, 10.0, 60.0)
QUOTE_TICKS = 2


def mids(tape: Tape) -> np.ndarray:
    """The mid after each message (ticks, (n,)); NaN while a side is empty."""
    ask, ask_lots, bid, bid_lots = tape.book_rows[:, :4].T
    quoted = (ask_lots > 0) & (bid_lots > 0) & (ask != EMPTY_ASK) & (bid != EMPTY_BID)
    return np.where(quoted, (ask + bid) / 2.0, np.nan)


def impact(tape: Tape, start: float) -> tuple[int, list[float]]:
    """(market orders after ``start``, mean signed mid move at each of `HORIZONS`, ticks)."""
    ev, times, mid = events(tape), tape.messages["time"], mids(tape)
    hit = (ev.kind == EventKind.MARKET) & (ev.time >= start)
    before = np.maximum(np.searchsorted(times, ev.time[hit], side="left") - 1, 0)
    moves = []
    for horizon in HORIZONS:
        after = np.searchsorted(times, ev.time[hit] + horizon, side="right") - 1
        moves.append(float(np.nanmean((mid[after] - mid[before]) * ev.side[hit])))
    return int(hit.sum()), moves


def quote_markout(tape: Tape, start: float, end: float) -> tuple[float, list[float]]:
    """(fills per hour, mean mark-out at each of `HORIZONS`, ticks) of a quote `QUOTE_TICKS`
    either side of each minute's opening mid (rounded away from it) between ``start`` and
    ``end`` seconds; a minute that opens with a side empty has no quote."""
    ev, times, mid = events(tape), tape.messages["time"], mids(tape)
    ask, bid = tape.book_rows[:, 0], tape.book_rows[:, 2]
    market = ev.kind == EventKind.MARKET
    minutes = np.arange(max(start, float(times[0])), end - 60.0, 60.0)
    marks = []
    for minute in minutes:
        first, last = np.searchsorted(times, [minute, minute + 60.0], side="right") - 1
        if np.isnan(mid[first]):
            continue
        for side in (1, -1):
            away = mid[first] - side * QUOTE_TICKS
            price = np.floor(away) if side > 0 else np.ceil(away)
            reach = (ask if side > 0 else bid)[first + 1 : last + 1]
            crossed = np.flatnonzero(side * (price - reach) >= 0)
            fill = times[first + 1 + crossed[0]] if len(crossed) else np.inf
            hits = market & (ev.side == side) & (ev.time > minute) & (ev.time < minute + 60.0)
            for t in ev.time[hits]:
                row = np.searchsorted(times, t, side="left") - 1
                if side * (price - (bid if side > 0 else ask)[row]) >= 0:
                    fill = min(fill, t)
                    break
            if fill < np.inf:
                after = np.searchsorted(times, fill + np.array(HORIZONS), side="right") - 1
                marks.append(side * (mid[after] - price))
    hours = len(minutes) / 60.0
    return len(marks) / hours, np.nanmean(marks, axis=0).tolist() if marks else [np.nan] * 3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
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
    start = 3600 * hours + 60 * minutes
    for name, tape, first in (("day", real, start), ("learned", simulated, 0)):
        count, moves = impact(tape, first)
        cells = ", ".join(f"{h:g} s: {m:+.2f}" for h, m in zip(HORIZONS, moves))
        print(f"{name:8} {count:6,} market orders; mid move against the side hit, ticks: {cells}")
    for name, tape in (("day", real), ("learned", simulated)):
        rate, marks = quote_markout(tape, start, float(real.messages["time"][-1]))
        cells = ", ".join(f"{h:g} s: {m:+.2f}" for h, m in zip(HORIZONS, marks))
        print(
            f"{name:8} a quote {QUOTE_TICKS} ticks from the mid: {rate:5.1f} fills an hour, "
            f"mark-out, ticks: {cells}"
        )


if __name__ == "__main__":
    main()
