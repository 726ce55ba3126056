"""The `Feed` a reader hands to `envs.data.convert`: a recording's book events for
`envs.data.builder`, in the order they are carried out, with what the reader found; and the
pieces the readers share to put them in that order."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

import numpy as np

from tradearena.envs.data import builder

__all__ = ["Feed", "event_columns", "interleave", "level_events", "receive_order"]


def event_columns(n: int) -> dict[str, np.ndarray]:
    """Empty event columns of `envs.data.builder.build` for ``n`` events."""
    return {
        "kind": np.zeros(n, np.int8),
        "side": np.zeros(n, np.int8),
        "price": np.zeros(n, np.int64),
        "qty": np.zeros(n, np.int64),
        "order": np.zeros(n, np.int64),
        "time": np.zeros(n, np.int64),
    }


def band_reference(events: dict[str, np.ndarray]) -> int:
    """The band's price before the first trade (ticks): the first trade's price, else the
    median price of the quotes (0 without any)."""
    kind = events["kind"]
    trades = np.flatnonzero(kind == builder.TRADE)
    if len(trades):
        return int(events["price"][trades[0]])
    quotes = (kind != builder.SNAPSHOT_BEGIN) & (kind != builder.SNAPSHOT_END)
    quotes &= events["qty"] > 0
    prices = events["price"][quotes]
    return int(np.median(prices)) if len(prices) else 0


@dataclass
class Feed:
    """A recording read for the builder: ``events`` (`event_columns`, in order; times in ns
    since the epoch, never decreasing), by order (L3) or by level (L2), the instrument's
    ``tick_size`` and ``lot_size``, what the reader ``counts`` (messages read, dropped, gaps)
    and where the gaps are (``gaps``: 'file, line N: ...')."""

    format: str
    inputs: tuple[str, ...]
    symbol: str | None
    tick_size: Decimal
    lot_size: Decimal
    events: dict[str, np.ndarray]
    by_order: bool
    counts: dict[str, int] = field(default_factory=dict)
    gaps: list[str] = field(default_factory=list)

    @property
    def reference(self) -> int:
        return band_reference(self.events)


def receive_order(times: np.ndarray) -> np.ndarray:
    """Times made never to decrease: each is at least every time before it (a message moved
    ahead of one received later takes that one's time, never an earlier one)."""
    return np.maximum.accumulate(times) if len(times) else times


def interleave(book_keys: np.ndarray, trade_keys: np.ndarray, first: int = 0) -> np.ndarray:
    """The order (indexes into book items then trades) in which a feed is carried out: the
    book items (snapshots, updates) in their own order, each trade before the first book item
    whose exchange time (``book_keys``, made never to decrease) is at least its own
    (``trade_keys``), which already shows it, and never before book item ``first``."""
    keys = np.maximum.accumulate(book_keys) if len(book_keys) else book_keys
    position = np.maximum(np.searchsorted(keys, trade_keys, "left"), first)
    slots = np.concatenate([2 * np.arange(len(book_keys)) + 1, 2 * position])
    return np.argsort(slots, kind="stable")


def level_events(
    start: np.ndarray,
    stop: np.ndarray,
    snapshot: np.ndarray,
    trade: np.ndarray,
    time: np.ndarray,
    side: np.ndarray,
    price: np.ndarray,
    qty: np.ndarray,
    drop: np.ndarray,
) -> dict[str, np.ndarray]:
    """The builder's events of L2 items in the order they are carried out: item i covers the
    level rows [start[i], stop[i]) (side, price ticks, qty lots; rows where ``drop`` holds are
    left out) at ``time[i]`` (ns); a ``snapshot`` item's rows go between SNAPSHOT_BEGIN and
    SNAPSHOT_END, a ``trade`` item's one row is a TRADE, any other item's rows are LEVEL
    events, its deletions (qty 0) first."""
    pad = (side, price, qty, drop)
    side, price, qty, drop = (np.append(a, a.dtype.type(0)) for a in pad)
    width = stop - start + 2 * snapshot
    item = np.repeat(np.arange(len(start)), width)
    offset = np.arange(len(item)) - np.repeat(np.cumsum(width) - width, width)
    begin = snapshot[item] & (offset == 0)
    end = snapshot[item] & (offset == width[item] - 1)
    level = np.where(begin | end, len(side) - 1, start[item] + offset - snapshot[item])
    rank = np.where(begin, 0, np.where(end, 3, np.where(qty[level] == 0, 1, 2)))
    order = np.argsort(item * 4 + rank, kind="stable")
    order = order[(begin | end | ~drop[level])[order]]
    item, level, begin, end = item[order], level[order], begin[order], end[order]
    events = event_columns(len(order))
    kind = np.where(trade[item], builder.TRADE, builder.LEVEL)
    events["kind"][:] = np.where(
        begin, builder.SNAPSHOT_BEGIN, np.where(end, builder.SNAPSHOT_END, kind)
    )
    events["side"][:] = side[level]
    events["price"][:] = price[level]
    events["qty"][:] = qty[level]
    events["time"][:] = time[item]
    return events
