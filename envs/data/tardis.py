"""Tardis CSV exports: an ``incremental_book_L2`` file and a ``trades`` file (or several of
each, in the order given), told apart by their headers.

- incremental_book_L2: ``exchange,symbol,timestamp,local_timestamp,is_snapshot,side,price,
  amount``; timestamps in microseconds since the epoch, side bid / ask; each row sets a level's
  amount (0 deletes it); a run of is_snapshot=true rows (of one timestamp) replaces the book;
- trades: ``exchange,symbol,timestamp,local_timestamp,id,side,price,amount``; side is the
  taker's (buy / sell, or unknown: the trade takes the side its price reaches, see
  `envs.data.builder`).

The rows of one book message (one timestamp and local_timestamp) are applied together, their
deletions first. Trades go among the book's messages by exchange time (``timestamp``: a trade
goes before the first book message at or after it, which already shows it); trades before the
first book row are dropped (``trades_before_book``). The tape's times are ``local_timestamp``,
made never to decrease.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from decimal import Decimal

import numpy as np

from tradearena.envs.data import text
from tradearena.envs.data.decimals import Decimals, to_steps
from tradearena.envs.data.feed import Feed, interleave, level_events, receive_order
from tradearena.envs.data.files import FeedError, Table, scan_tables, table_column

__all__ = ["read"]

_SIDES = (text.CSV_ENUM, (b"bid", b"ask"))
BOOK = Table(
    "incremental_book_L2",
    {
        "exchange": text.CSV_SAME,
        "symbol": text.CSV_SAME,
        "timestamp": text.CSV_INT,
        "local_timestamp": text.CSV_INT,
        "is_snapshot": text.CSV_BOOL,
        "side": _SIDES,
        "price": text.CSV_DECIMAL,
        "amount": text.CSV_DECIMAL,
    },
)
TRADES = Table(
    "trades",
    {
        "exchange": text.CSV_SAME,
        "symbol": text.CSV_SAME,
        "timestamp": text.CSV_INT,
        "local_timestamp": text.CSV_INT,
        "id": text.CSV_SKIP,
        "side": (text.CSV_ENUM, (b"buy", b"sell", b"unknown")),
        "price": text.CSV_DECIMAL,
        "amount": text.CSV_DECIMAL,
    },
)
_US = 1_000  # ns per microsecond


def read(
    paths: Sequence[str | os.PathLike], tick: Decimal | None = None, lot: Decimal | None = None
) -> Feed:
    """The `Feed` of Tardis ``incremental_book_L2`` and ``trades`` CSV files."""
    sources, files = scan_tables(paths, [BOOK, TRADES])
    book, trades = files[BOOK.name], files[TRADES.name]
    symbols = {columns["symbol"] for _, columns in book + trades} - {None}
    if len(symbols) > 1:
        raise FeedError(f"{', '.join(sorted(symbols))}: one symbol per tape")

    n_book = sum(len(columns["timestamp"]) for _, columns in book)
    prices = Decimals.of_tables(book + trades, "price", sources)
    quantities = Decimals.of_tables(book + trades, "amount", sources)
    traded = np.arange(len(prices)) >= n_book
    steps = to_steps(prices, quantities, traded, tick, lot, sources, ("price", "amount"))

    stamp, local = table_column(book, "timestamp"), table_column(book, "local_timestamp")
    snapshot = table_column(book, "is_snapshot").astype(bool)
    side = np.where(table_column(book, "side") == 0, 1, -1)
    # a new book message where the timestamps or the snapshot flag change
    new = np.ones(n_book, bool)
    new[1:] = (stamp[1:] != stamp[:-1]) | (local[1:] != local[:-1])
    new[1:] |= snapshot[1:] != snapshot[:-1]
    start = np.flatnonzero(new)
    stop = np.append(start[1:], n_book)

    trade_stamp = table_column(trades, "timestamp") if trades else np.zeros(0, np.int64)
    trade_local = table_column(trades, "local_timestamp") if trades else trade_stamp
    taker = table_column(trades, "side") if trades else np.zeros(0, np.int8)
    before = trade_stamp < (stamp[0] if n_book else 0)
    kept = np.flatnonzero(~before)
    order = interleave(stamp[start], trade_stamp[kept])
    n_items = len(start)
    trade_rows = n_book + kept
    items_start = np.concatenate([start, trade_rows])[order]
    items_stop = np.concatenate([stop, trade_rows + 1])[order]
    is_trade = order >= n_items
    is_snapshot = np.concatenate([snapshot[start], np.zeros(len(kept), bool)])[order]
    times = np.concatenate([local[start], trade_local[kept]])[order]
    maker = np.select([taker == 0, taker == 1], [-1, 1], 0)  # buy takes the asks
    events = level_events(
        items_start,
        items_stop,
        is_snapshot,
        is_trade,
        receive_order(times) * _US,
        np.concatenate([side, maker]).astype(np.int8),
        steps.price,
        steps.qty,
        steps.off_grid,
    )
    counts = {
        "book_rows": n_book,
        "snapshots": int(np.count_nonzero(snapshot[start])),
        "trades": len(trade_stamp),
        "trades_before_book": int(np.count_nonzero(before)),
        "off_grid_quotes": int(np.count_nonzero(steps.off_grid)),
    }
    symbol = symbols.pop() if symbols else None
    inputs = tuple(s.path for s in sources)
    return Feed("tardis", inputs, symbol, steps.tick, steps.lot, events, False, counts)
