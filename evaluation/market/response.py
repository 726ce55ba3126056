"""How a market answers a market order, measured alike on a tape and in a simulated market
(``tradearena response``).

On the tape: after each market order (`envs.data.events`' MARKET events: a sweep's
executions at one time stamp as one order), how far the mid moved in the order's direction
within each horizon (`HORIZONS`), and, for an order that emptied the best level it met,
whether that price was quoted again on its side within each horizon (the queue refilled).
In a market: the same after the market orders of a seat that trades every `EVERY` seconds
and nothing else, on a random side, of sizes drawn from the tape's market orders; the
market's own flow goes on around it. By size (the tape's orders' terciles), so that a
market's answer to a small order and to a large one are compared with the tape's own.
A learned flow that reacts as the tape's flow does answers the seat as the tape answers its
own orders: a flow that reads the seats' quotes, or one that does not hear the seat's trades,
does not.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from tradearena.envs.data.events import EventKind, Events, events
from tradearena.envs.data.load import load_tape
from tradearena.envs.data.tapes import EMPTY_ASK, EMPTY_BID, Tape
from tradearena.envs.errors import UserError, into, replacing, together
from tradearena.envs.simulator.orders import Kind
from tradearena.envs.simulator.recording import recorded_tape
from tradearena.envs.spec import SYNTHETIC_DAY_STEPS, MarketSpec
from tradearena.evaluation.market.sources import (
    clipped,
    clock,
    distinct_labels,
    label_of,
    read_market,
    session_of,
)

__all__ = [
    "COLUMNS",
    "EVERY",
    "HORIZONS",
    "Response",
    "format_response",
    "order_responses",
    "response",
    "response_table",
    "seat_responses",
    "tape_responses",
    "write_response_figure",
]

HORIZONS = (0.1, 1.0, 10.0)
"""Seconds after a market order at which its response is read."""
EVERY = 30.0
"""Seconds between a seat's market orders: longer than the longest horizon, so that one
order's response has faded before the next (and is not read into it)."""
MIN_ORDERS = 30
"""The fewest market orders a size bucket needs for its figures to be given."""
_NO_LIMIT = 10**9  # lots: the seat's orders are never cut to a position limit
PASS_SHARE = 0.9
"""The share of a market's figures whose 95% intervals must meet the tape's for its response
to pass: two 95% intervals of one mean meet 99% of the time, so a market that answers as
the tape does meets nearly all; the rest is room for figures that move together."""
UNITS = {"move": "move, ticks", "refill": "refill, share"}
"""The measures as the printed table names them, with their units."""
COLUMNS = ("source", "sizes", "what", "horizon", "n", "value", "low", "high")
"""response.csv's columns: the tape or market, its size bucket (lots), what was measured
("move": ticks the mid moved in the order's direction; "refill": the share of emptying
orders whose price was quoted again), the horizon (seconds), the orders measured, the mean
or share and its 95% interval."""


# ------------------------------------------------------------------------- the measures
def order_responses(
    tape: Tape, orders: Events, horizons: Sequence[float] = HORIZONS
) -> pd.DataFrame:
    """One row per market order of ``orders`` (MARKET events of ``tape``): its ``size``
    (lots), whether it ``emptied`` the best level, ``move_<h>`` (ticks the mid moved in the
    order's direction ``h`` seconds after it, from the mid just before it; NaN while a side
    is empty) and ``refill_<h>`` (for an order that emptied its level: whether that price
    was quoted again on its side within ``h`` seconds; NaN for one that did not)."""
    time, rows = tape.messages["time"], tape.book_rows
    ask, bid = rows[:, 0].astype(np.float64), rows[:, 2].astype(np.float64)
    quoted = (rows[:, 1] > 0) & (rows[:, 3] > 0) & (rows[:, 0] != EMPTY_ASK)
    quoted &= rows[:, 2] != EMPTY_BID
    mid = np.where(quoted, (ask + bid) / 2, np.nan)
    before = np.maximum(np.searchsorted(time, orders.time, side="left") - 1, 0)
    after = np.searchsorted(time, orders.time, side="right")  # the first message after it
    side = orders.side.astype(np.int64)  # +1: the bid was taken (a sell)
    table = {"size": orders.size, "emptied": orders.emptied}
    for h in horizons:
        at = np.searchsorted(time, orders.time + h, side="right") - 1
        table[f"move_{h:g}"] = side * (mid[before] - mid[at])
    best = np.where(side > 0, bid[before], ask[before])
    refilled = np.full(len(orders), np.inf)  # seconds until the price is quoted again
    for i in np.flatnonzero(orders.emptied):
        last = int(np.searchsorted(time, orders.time[i] + max(horizons), side="right"))
        span = slice(int(after[i]), last)
        back = bid[span] >= best[i] if side[i] > 0 else ask[span] <= best[i]
        back &= rows[span, 3 if side[i] > 0 else 1] > 0
        if back.any():
            refilled[i] = time[span][int(np.argmax(back))] - orders.time[i]
    for h in horizons:
        table[f"refill_{h:g}"] = np.where(orders.emptied, refilled <= h, np.nan)
    return pd.DataFrame(table)


def _market_orders(tape: Tape, start: float, end: float) -> Events:
    every = events(tape)
    chosen = (every.kind == EventKind.MARKET) & (every.spread > 0)
    return every.take(chosen & (every.time >= start) & (every.time < end))


def tape_responses(tape: Tape, start: float, end: float) -> pd.DataFrame:
    """`order_responses` of ``tape``'s market orders from ``start`` to ``end`` (seconds after
    midnight) met with both sides quoted."""
    return order_responses(tape, _market_orders(tape, start, end))


def seat_responses(
    spec: MarketSpec,
    sizes: np.ndarray,
    days: int,
    *,
    start: float | None = None,
    end: float | None = None,
    first_seed: int = 0,
) -> pd.DataFrame:
    """`order_responses` of a seat's market orders in ``days`` sessions of ``spec``'s
    market (seeds ``first_seed`` onwards), from ``start`` to ``end`` (seconds after
    midnight; None: its open, close): one every `EVERY` seconds, on a side and of a size
    (lots) drawn at random (``sizes``: the sizes drawn from, with replacement)."""
    steps = max(spec.day_steps or SYNTHETIC_DAY_STEPS, spec.n_steps or 0)
    day = replace(spec, n_steps=steps, day_steps=None, window_steps=None, tape=None).market(0)
    first, last = clipped(day.open_time, day.close_time, start, end, f"{spec.task} market")
    seated = replace(
        spec,
        step_seconds=EVERY,
        n_steps=max(int((last - first) // EVERY), 1),
        day_steps=None,
        window_steps=None,
        tape=None,
        open_time=first,
        position_limit=_NO_LIMIT,
        record=True,
    )
    market = seated.market(1)
    frames = []
    for seed in range(first_seed, first_seed + days):
        market.reset(seed)
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(1,)))
        times = []
        while not market.done:
            side = 1 if rng.random() < 0.5 else -1
            times.append(market.t)
            market.step([[(int(Kind.MARKET), side, 0, int(rng.choice(sizes)))]])
        tape = recorded_tape(market, 1)
        ev = _market_orders(tape, first, last + EVERY)
        frames.append(order_responses(tape, ev.take(np.isin(ev.time, times))))
    return pd.concat(frames, ignore_index=True)


# ---------------------------------------------------------------------------- the table
def size_edges(sizes: np.ndarray) -> np.ndarray:
    """The size buckets' upper edges (lots): the terciles of ``sizes`` (fewer where they
    coincide), the last bucket open."""
    return np.unique(np.quantile(sizes, [1 / 3, 2 / 3], method="lower"))


def _bucket_names(edges: np.ndarray) -> list[str]:
    lows = [1, *(int(e) + 1 for e in edges)]
    highs = [*(int(e) for e in edges), None]
    return [f"{lo}+" if hi is None else f"{lo}-{hi}" for lo, hi in zip(lows, highs)]


def response_table(
    responses: dict[str, pd.DataFrame], edges: np.ndarray, horizons: Sequence[float] = HORIZONS
) -> pd.DataFrame:
    """The rows (`COLUMNS`) of each source's ``responses`` (`order_responses`), by size
    bucket (``edges``, `size_edges`): each horizon's mean move with its normal 95% interval
    and its refill share with its Wilson 95% interval; a bucket with fewer than
    `MIN_ORDERS` orders (emptying orders for the refill) gives NaN."""
    names = _bucket_names(edges)
    rows = []
    for source, frame in responses.items():
        bucket = np.searchsorted(edges, frame["size"].to_numpy(), side="left")
        for b, name in enumerate(names):
            part = frame[bucket == b]
            for h in horizons:
                move = part[f"move_{h:g}"].dropna().to_numpy()
                rows.append((source, name, "move", h, len(move), *_mean(move)))
                refill = part[f"refill_{h:g}"].dropna().to_numpy()
                rows.append((source, name, "refill", h, len(refill), *_share(refill)))
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _mean(x: np.ndarray) -> tuple[float, float, float]:
    if len(x) < MIN_ORDERS:
        return math.nan, math.nan, math.nan
    half = 1.96 * x.std(ddof=1) / math.sqrt(len(x))
    return float(x.mean()), float(x.mean() - half), float(x.mean() + half)


def _share(x: np.ndarray) -> tuple[float, float, float]:
    if len(x) < MIN_ORDERS:
        return math.nan, math.nan, math.nan
    n, p, z = len(x), float(x.mean()), 1.96
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return p, centre - half, centre + half


# ------------------------------------------------------------------------------ the run
@dataclass(frozen=True)
class Response:
    """What `response` finds: the ``table`` (`COLUMNS`), the ``tape``'s label and the
    ``hours`` (HH:MM-HH:MM) its orders were read over, and per market the share of its
    cells (bucket, measure, horizon) whose interval meets the tape's (``agree``)."""

    table: pd.DataFrame
    tape: str
    hours: str
    agree: dict[str, tuple[int, int]]


def response(
    tape_name: str,
    markets: Sequence[str],
    *,
    start: float | None = None,
    end: float | None = None,
    days: int = 5,
    out: str | None = None,
) -> Response:
    """The response of the tape ``tape_name`` to its own market orders from ``start`` to
    ``end`` (seconds after midnight; None: its open, close) beside each market's (an
    experiment file or a Gymnasium id, ``days`` sessions over the same hours) to a seat's
    market orders of the tape's sizes (`seat_responses`). With ``out``, also
    ``out``/response.csv and response.png."""
    read = [read_market(name) for name in markets]
    distinct_labels([tape_name, *markets])
    tape = load_tape(tape_name)
    label = label_of(tape_name)
    first, last = clipped(*session_of(tape), start, end, label)
    responses = {label: tape_responses(tape, first, last)}
    _enough(tape_name, "market orders", responses[label], first, last)
    sizes = responses[label]["size"].to_numpy()
    for (spec, market_label), name in zip(read, markets):
        responses[market_label] = seat_responses(spec, sizes, days, start=first, end=last)
        _enough(name, "market orders of a seat traded", responses[market_label], first, last)
    table = response_table(responses, size_edges(sizes))
    agree = {m: _agreement(table, label, m) for m in list(responses)[1:]}
    hours = f"{clock(first)}-{clock(last)}"
    if out is not None:
        with into(out) as directory, together():
            with replacing(directory / "response.csv") as temporary:
                table.to_csv(temporary, index=False)
            write_response_figure(table, f"{label} {hours}", directory)
    return Response(table, label, hours, agree)


def write_response_figure(table: pd.DataFrame, title: str, out: Path) -> Path:
    """``out``/response.png: each measure (rows) at each horizon (columns) of ``table``
    (`response_table`), by size bucket, tape and markets side by side."""
    from matplotlib.figure import Figure

    from tradearena.evaluation.analysis.plots import save_figure
    from tradearena.evaluation.analysis.realism_plots import response_points

    horizons = list(dict.fromkeys(table.horizon))
    figure = Figure(figsize=(3.2 * len(horizons), 6.0), layout="constrained")
    axes = figure.subplots(2, len(horizons), squeeze=False)
    for row, what in enumerate(("move", "refill")):
        for col, horizon in enumerate(horizons):
            response_points(table, what, horizon, axes[row, col])
    handles, labels = axes[0, 0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside lower center", ncols=len(labels), fontsize=8)
    figure.suptitle(f"The response to a market order: {title}", fontsize=10)
    return save_figure(figure, out / "response.png", dpi=100)


def _enough(name: str, what: str, found: pd.DataFrame, first: float, last: float) -> None:
    """`UserError` naming the source ``name`` when it has fewer than `MIN_ORDERS` orders
    ``found`` (``what`` they are) from ``first`` to ``last``: no response to read from it."""
    if len(found) < MIN_ORDERS:
        raise UserError(
            f"{name}: {len(found)} {what} from {clock(first)} to {clock(last)}, too few to "
            f"read a response from (at least {MIN_ORDERS})"
        )


def _agreement(table: pd.DataFrame, tape: str, market: str) -> tuple[int, int]:
    """(cells whose 95% intervals meet, cells measured on both) of ``market`` against
    ``tape``."""
    keys = ["sizes", "what", "horizon"]
    both = table[table.source == tape].merge(table[table.source == market], on=keys).dropna()
    met = (both.low_x <= both.high_y) & (both.low_y <= both.high_x)
    return int(met.sum()), len(both)


def format_response(found: Response) -> str:
    """The verdict first (per market, how many of its cells meet the tape's, and whether
    that is `PASS_SHARE` of them), then the table: each size bucket's move (ticks) and
    refill (a share) at each horizon, tape and markets side by side."""
    lines = [f"The response to a market order, {found.tape} {found.hours}:"]
    for market, (met, cells) in found.agree.items():
        needed = math.ceil(PASS_SHARE * cells)
        lines.append(
            f"  {market}: {met} of {cells} figures within the tape's 95% interval, {needed} "
            f"to pass: {'passes' if met >= needed else 'fails'} (a seat's market orders of the "
            "tape's sizes)"
        )
    table = found.table.assign(
        what=lambda t: t.what.map(UNITS),
        cell=lambda t: t.apply(
            lambda r: "n/a" if np.isnan(r.value) else f"{r.value:.2f} [{r.low:.2f}, {r.high:.2f}]",
            axis=1,
        ),
    )
    buckets = list(dict.fromkeys(table.sizes))
    table["sizes"] = pd.Categorical(table.sizes, categories=buckets, ordered=True)
    wide = table.pivot_table(
        index=["what", "horizon", "sizes"],
        columns="source",
        values="cell",
        aggfunc="first",
        observed=True,
    )[list(dict.fromkeys(found.table.source))]
    lines += ["", wide.to_string()]
    return "\n".join(lines)
