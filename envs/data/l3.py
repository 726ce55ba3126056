"""Order-by-order (L3) captures, as of Bitstamp's live-orders channel: an orders CSV and a
trades CSV (or several of each, in the order given), told apart by their headers.

- orders: ``id,timestamp,exchange_timestamp,price,volume,action,direction``; epoch ms; action
  created / changed / deleted, direction bid / ask; a changed row carries the order's new
  remaining volume and price; the capture starts with the full-depth book as created rows;
- trades: ``trade_id,timestamp,exchange_timestamp,price,amount,buy_order_id,sell_order_id,
  side``; side is the taker's (buy: the maker is the sell order).

Rows go in ``exchange_timestamp`` order (the capture's), a trade before the order events of
its millisecond (the maker's change follows its fill), and that is the tape's time. Such
captures hold far-away or bogus quotes (price 0, prices 1,000x the market), and created orders
that cross the book for a moment: the exchange matches them, and the channel reports the
trades, the makers' changes and deletions and the taker's own a little later.
`envs.data.builder` drops new orders outside a band around the last trade price and holds a
crossing order back until it crosses no more, counting both: the tape's book is the feed's
orders as given wherever those do not cross.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from decimal import Decimal

import numpy as np

from tradearena.envs.data import builder, text
from tradearena.envs.data.decimals import Decimals, to_steps
from tradearena.envs.data.feed import Feed, event_columns, interleave, receive_order
from tradearena.envs.data.files import Table, scan_tables, table_column

__all__ = ["read"]

ORDERS = Table(
    "orders",
    {
        "id": text.CSV_INT,
        "timestamp": text.CSV_SKIP,
        "exchange_timestamp": text.CSV_INT,
        "price": text.CSV_DECIMAL,
        "volume": text.CSV_DECIMAL,
        "action": (text.CSV_ENUM, (b"created", b"changed", b"deleted")),
        "direction": (text.CSV_ENUM, (b"bid", b"ask")),
    },
)
TRADES = Table(
    "trades",
    {
        "trade_id": text.CSV_SKIP,
        "timestamp": text.CSV_SKIP,
        "exchange_timestamp": text.CSV_INT,
        "price": text.CSV_DECIMAL,
        "amount": text.CSV_DECIMAL,
        "buy_order_id": text.CSV_INT,
        "sell_order_id": text.CSV_INT,
        "side": (text.CSV_ENUM, (b"buy", b"sell")),
    },
)
_ACTIONS = np.array([builder.CREATE, builder.CHANGE, builder.DELETE], np.int8)
_MS = 1_000_000  # ns per millisecond


def read(
    paths: Sequence[str | os.PathLike], tick: Decimal | None = None, lot: Decimal | None = None
) -> Feed:
    """The `Feed` of an L3 capture's orders and trades CSV files."""
    sources, files = scan_tables(paths, [ORDERS, TRADES])
    orders, trades = files[ORDERS.name], files[TRADES.name]
    n_orders = sum(len(columns["id"]) for _, columns in orders)
    prices = Decimals.of_tables(orders + trades, "price", sources)
    quantities = Decimals.join(
        [
            Decimals.of_tables(orders, "volume", sources),
            Decimals.of_tables(trades, "amount", sources),
        ]
    )
    traded = np.arange(len(prices)) >= n_orders
    steps = to_steps(prices, quantities, traded, tick, lot, sources, ("price", None))

    stamp = table_column(orders, "exchange_timestamp")
    trade_stamp = table_column(trades, "exchange_timestamp") if trades else stamp[:0]
    action = _ACTIONS[table_column(orders, "action")]
    dropped = steps.off_grid[:n_orders] & (action != builder.DELETE)  # a delete's price is not used
    order = interleave(stamp, trade_stamp)
    order = order[~np.append(dropped, np.zeros(len(trade_stamp), bool))[order]]
    events = event_columns(len(order))
    is_trade = order >= n_orders
    row = np.where(is_trade, order - n_orders, order)
    direction = np.where(table_column(orders, "direction") == 0, 1, -1)
    events["kind"][:] = np.where(is_trade, builder.TRADE, action[np.minimum(row, n_orders - 1)])
    if trades:
        buyer, seller = table_column(trades, "buy_order_id"), table_column(trades, "sell_order_id")
        taker_buys = table_column(trades, "side") == 0
        maker = np.where(taker_buys, seller, buyer)
        maker_side = np.where(taker_buys, -1, 1)
    else:
        maker = maker_side = np.zeros(0, np.int64)
    ids = np.concatenate([table_column(orders, "id"), maker])
    sides = np.concatenate([direction, maker_side])
    events["order"][:] = ids[order]
    events["side"][:] = sides[order]
    events["price"][:] = steps.price[order]
    events["qty"][:] = steps.qty[order]
    events["time"][:] = receive_order(np.concatenate([stamp, trade_stamp])[order]) * _MS
    counts = {
        "order_events": n_orders,
        "trades": len(trade_stamp),
        "off_grid_quotes": int(np.count_nonzero(dropped)),
    }
    inputs = tuple(s.path for s in sources)
    return Feed("l3", inputs, None, steps.tick, steps.lot, events, True, counts)
