"""The response to a market order, measured (the judge that reads a tape and simulates a
market is `evaluation.market.response`; its figure is `response_plots`).

Per order (`order_responses`): how far the mid moved in the order's direction within each
horizon (`HORIZONS`), and, for an order that emptied the best level it met, whether that
price was quoted again on its side within each horizon (the queue refilled). By size bucket
(the tape's orders' terciles, `envs.simulator.response_estimate.size_edges`) with 95%
intervals (`response_table`), so that a market's answer to a small order and to a large one
are compared with the tape's own; a market passes when `PASS_SHARE` of its figures meet the
tape's (`agreement`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Protocol

import numpy as np
import pandas as pd

__all__ = [
    "COLUMNS",
    "HORIZONS",
    "MIN_ORDERS",
    "PASS_SHARE",
    "UNITS",
    "MarketOrders",
    "agreement",
    "order_responses",
    "response_table",
]

HORIZONS = (0.1, 1.0, 10.0)
"""Seconds after a market order at which its response is read."""
MIN_ORDERS = 30
"""The fewest market orders a size bucket needs for its figures to be given."""
PASS_SHARE = 0.9
"""The share of a market's figures whose 95% intervals must meet the tape's for its response
to pass: two 95% intervals of one mean meet 99% of the time, so a market that answers as
the tape does meets nearly all; the rest is room for figures that move together."""
UNITS = {"move": "move, ticks", "refill": "refill, share"}
"""The measures as the printed table names them, with their units."""
COLUMNS = ("source", "sizes", "what", "horizon", "n", "value", "low", "high")
"""The table's columns: the tape or market, its size bucket (lots), what was measured
("move": ticks the mid moved in the order's direction; "refill": the share of emptying
orders whose price was quoted again), the horizon (seconds), the orders measured, the mean
or share and its 95% interval."""


class MarketOrders(Protocol):
    """Market orders, arrays of shape (n,): ``time`` (seconds after midnight), ``side`` (the
    side taken: +1 the bid, a sell; -1 the ask), ``size`` (lots) and ``emptied`` (whether
    the order emptied the best level it met); a tape's `envs.data.events.Events` are."""

    time: np.ndarray
    side: np.ndarray
    size: np.ndarray
    emptied: np.ndarray


def order_responses(
    time: np.ndarray,
    bid: np.ndarray,
    ask: np.ndarray,
    orders: MarketOrders,
    horizons: Sequence[float] = HORIZONS,
) -> pd.DataFrame:
    """One row per market order of ``orders`` in a book whose best ``bid`` and ``ask``
    (ticks, float64 (n,), NaN while that side is empty) are those after each message at
    ``time`` (seconds, (n,), sorted): its ``size`` (lots), whether it ``emptied`` the best
    level, ``move_<h>`` (ticks the mid moved in the order's direction ``h`` seconds after it,
    from the mid just before it; NaN while a side is empty) and ``refill_<h>`` (for an order
    that emptied its level: whether that price was quoted again on its side within ``h``
    seconds; NaN for one that did not)."""
    mid = (bid + ask) / 2
    before = np.maximum(np.searchsorted(time, orders.time, side="left") - 1, 0)
    after = np.searchsorted(time, orders.time, side="right")  # the first message after it
    side = orders.side.astype(np.int64)  # +1: the bid was taken (a sell)
    table = {"size": orders.size, "emptied": orders.emptied}
    for h in horizons:
        at = np.searchsorted(time, orders.time + h, side="right") - 1
        table[f"move_{h:g}"] = side * (mid[before] - mid[at])
    best = np.where(side > 0, bid[before], ask[before])
    refilled = np.full(len(orders.time), np.inf)  # seconds until the price is quoted again
    for i in np.flatnonzero(orders.emptied):
        last = int(np.searchsorted(time, orders.time[i] + max(horizons), side="right"))
        span = slice(int(after[i]), last)
        back = bid[span] >= best[i] if side[i] > 0 else ask[span] <= best[i]
        if back.any():
            refilled[i] = time[span][int(np.argmax(back))] - orders.time[i]
    for h in horizons:
        table[f"refill_{h:g}"] = np.where(orders.emptied, refilled <= h, np.nan)
    return pd.DataFrame(table)


def _bucket_names(edges: np.ndarray) -> list[str]:
    lows = [1, *(int(e) + 1 for e in edges)]
    highs = [*(int(e) for e in edges), None]
    return [f"{lo}+" if hi is None else f"{lo}-{hi}" for lo, hi in zip(lows, highs)]


def response_table(
    responses: Mapping[str, pd.DataFrame],
    edges: np.ndarray,
    horizons: Sequence[float] = HORIZONS,
) -> pd.DataFrame:
    """The rows (`COLUMNS`) of each source's ``responses`` (`order_responses`), by size
    bucket (``edges``: the buckets' upper edges, lots, the last bucket open): each horizon's
    mean move with its normal 95% interval and its refill share with its Wilson 95%
    interval; a bucket with fewer than `MIN_ORDERS` orders (emptying orders for the refill)
    gives NaN."""
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


def agreement(table: pd.DataFrame, tape: str, market: str) -> tuple[int, int]:
    """(cells whose 95% intervals meet, cells measured on both) of ``market`` against
    ``tape`` in ``table`` (`response_table`), a cell being a size bucket, measure and
    horizon."""
    keys = ["sizes", "what", "horizon"]
    both = table[table.source == tape].merge(table[table.source == market], on=keys).dropna()
    met = (both.low_x <= both.high_y) & (both.low_y <= both.high_x)
    return int(met.sum()), len(both)
