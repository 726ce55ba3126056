"""Order-by-order captures converted to tapes: a hand-built orders and trades pair (a snapshot
with bogus quotes at price 0 and 1,000x the market, a change that re-queues an order, a trade
of a maker not first in its queue, a created order crossing the book for a moment, late deletes
and unknown orders) converted message by message, its replay fidelity, the seat's exact queue
whatever the queue model, and bad rows; a capture of orders that cross, matched as the exchange
matches them, whose top of book is a plain replay's wherever that replay is not crossed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from recordings import MIDNIGHT_NS, replays_exactly, rows_of, write_csv

from tradearena.envs import OrderBook
from tradearena.envs.data.convert import convert, load_converted, write_converted
from tradearena.envs.data.files import FeedError
from tradearena.envs.data.tapes import EMPTY_ASK, EMPTY_BID
from tradearena.envs.simulator.replayer import QUEUE_MODELS
from tradearena.envs.simulator.traders import MarketReplay

ORDERS_HEADER = "id,timestamp,exchange_timestamp,price,volume,action,direction"
TRADES_HEADER = "trade_id,timestamp,exchange_timestamp,price,amount,buy_order_id,sell_order_id,side"
M = MIDNIGHT_NS // 1_000_000 + 36_000_000  # 10:00 UTC, ms


def order(t: int, oid: int, price: str, volume: str, action: str, direction: str) -> tuple:
    return (oid, M + t + 3, M + t, price, volume, action, direction)


def trade(t: int, price: str, amount: str, buyer: int, seller: int, side: str) -> tuple:
    return (1, M + t + 3, M + t, price, amount, buyer, seller, side)


ORDERS = [
    order(0, 11, "100.00", "1.0", "created", "bid"),
    order(0, 12, "99.50", "2.0", "created", "bid"),
    order(0, 13, "0.00", "5.0", "created", "bid"),  # bogus: price 0
    order(0, 14, "100.50", "1.5", "created", "ask"),
    order(0, 15, "100000.00", "1.0", "created", "ask"),  # bogus: 1,000x the market
    order(0, 16, "100.00", "0.5", "created", "bid"),  # behind 11 at 100.00
    order(1000, 17, "101.00", "2.0", "created", "ask"),
    order(2000, 16, "100.00", "0.2", "changed", "bid"),  # after its trade (same ms)
    order(3000, 11, "100.20", "1.0", "changed", "bid"),  # moves: re-queued
    order(4000, 13, "0.00", "5.0", "deleted", "bid"),  # was dropped: unknown
    order(5000, 18, "100.60", "0.4", "created", "bid"),  # crosses the ask 100.50: held back
    order(6000, 14, "100.50", "1.5", "deleted", "ask"),  # 18 then crosses no more: placed
    order(7000, 99, "100.00", "1.0", "changed", "bid"),  # never seen
]
TRADES = [
    trade(2000, "100.00", "0.1", 16, 500, "sell"),  # maker 16 is behind 11: a cancel
    trade(3500, "100.20", "0.3", 11, 501, "sell"),  # maker 11, first at the best bid
    trade(6500, "101.00", "0.5", 502, 17, "buy"),  # maker 17, first at the best ask
    trade(8000, "100.60", "0.1", 777, 503, "sell"),  # an unknown maker
]
# (time ms after M, type, tape order id, size lots of 0.1, price ticks of 0.1, direction)
EXPECTED = [
    (0, 1, 1, 10, 1000, 1),
    (0, 1, 2, 20, 995, 1),
    (0, 1, 3, 15, 1005, -1),
    (0, 1, 4, 5, 1000, 1),
    (1000, 1, 5, 20, 1010, -1),
    (2000, 2, 4, 1, 1000, 1),  # the trade of 16, second in its queue
    (2000, 2, 4, 2, 1000, 1),  # 16 changed to 0.2
    (3000, 3, 1, 10, 1000, 1),  # 11 moves to 100.20
    (3000, 1, 6, 10, 1002, 1),
    (3500, 4, 6, 3, 1002, 1),
    (6000, 3, 3, 15, 1005, -1),  # 14 deleted
    (6000, 1, 7, 4, 1006, 1),  # 18, held back since 5000, crosses no more
    (6500, 4, 5, 5, 1010, -1),
]
COUNTS = {
    "order_events": 13,
    "trades": 4,
    "off_grid_quotes": 0,
    "crossings": 1,
    "crossed_lots": 4,
    "out_of_band": 2,
    "unknown_order_events": 2,
    "trades_unknown": 1,
    "trades_out_of_queue": 1,
    "traded_beyond_book": 0,
}


@pytest.fixture
def files(tmp_path: Path) -> list[Path]:
    return [
        write_csv(tmp_path / "orders.csv", ORDERS_HEADER, ORDERS),
        write_csv(tmp_path / "trades.csv", TRADES_HEADER, TRADES),
    ]


def test_every_message_of_the_capture(files: list[Path]):
    conversion = convert("l3", files, levels=2)
    messages, meta = conversion.tape.messages, conversion.meta
    assert rows_of(conversion.tape) == [row[1:] for row in EXPECTED]
    times = [(M + row[0]) * 1_000_000 - MIDNIGHT_NS for row in EXPECTED]
    assert messages["time"].tolist() == [t / 1e9 for t in times]
    assert meta["counts"] == COUNTS
    assert (meta["tick_size"], meta["lot_size"], meta["by_order"]) == ("0.1", "0.1", True)
    assert conversion.tape.book[-1].tolist() == [1010, 15, 1006, 4, EMPTY_ASK, 0, 1002, 7]
    assert replays_exactly(conversion.tape)


@pytest.mark.parametrize("queue", QUEUE_MODELS)
def test_the_seat_moves_up_exactly_as_named_orders_leave(files: list[Path], queue: str):
    tape = convert("l3", files).tape
    replay = MarketReplay(tape, queue=queue)
    book = OrderBook()
    replay.start(book, 1)
    for i in range(4):  # the snapshot
        replay.handle(book, i)
    book.limit(1, 1000, 1, 0)  # the seat joins 100.00 behind 11 (10 lots) and 16 (5 lots)
    queues = []
    for i in range(4, 8):  # 17 arrives; 16 trades 1 and is cut to 2; 11 leaves the level
        replay.handle(book, i)
        queues.append([(owner, qty) for _, qty, owner in book.orders_at(1, 1000)])
    assert queues == [
        [(1, 10), (1, 5), (0, 1)],
        [(1, 10), (1, 4), (0, 1)],
        [(1, 10), (1, 2), (0, 1)],
        [(1, 2), (0, 1)],
    ]


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([order(0, 1, "1.0", "1", "moved", "bid")], "line 2, column action: 'moved' is not"),
        ([order(0, 1, "1.0", "1", "created", "up")], "line 2, column direction: 'up' is not"),
        ([order(0, "x", "1.0", "1", "created", "bid")], "line 2, column id: 'x' is not an int"),
        ([(1, 2, 3)], "line 2: 3 field"),
    ],
)
def test_a_bad_row_is_named(tmp_path: Path, rows: list, message: str):
    path = write_csv(tmp_path / "orders.csv", ORDERS_HEADER, rows)
    with pytest.raises(FeedError, match=f"orders.csv, {message}"):
        convert("l3", [path])


def test_a_capture_without_orders_is_named(files: list[Path]):
    with pytest.raises(FeedError, match="trades.csv: no orders file"):
        convert("l3", files[1:])


def test_crypto_sizes_beyond_32_bits(tmp_path: Path):
    """Quantities of 8 decimals above 21.47483647 units (2**31 - 1 lots of 1E-8): a capture of
    125.30623107 and 300.12345679 coins converts to the lot, goes through its files and replays
    exactly, and a seat trades 120 coins against the replayed book."""
    orders = [
        order(0, 1, "30000.00", "125.30623107", "created", "bid"),
        order(0, 2, "29999.99", "21.47483648", "created", "bid"),  # 2**31 lots
        order(0, 3, "30000.50", "300.12345679", "created", "ask"),
        order(0, 4, "30001.00", "0.5", "created", "ask"),
        order(1000, 1, "30000.00", "25.30623106", "changed", "bid"),  # after its trade
        order(2000, 3, "30000.50", "200.00000000", "changed", "ask"),
        order(3000, 2, "29999.99", "21.47483648", "deleted", "bid"),
    ]
    trades = [trade(1000, "30000.00", "100.00000001", 1, 900, "sell")]
    files = [
        write_csv(tmp_path / "orders.csv", ORDERS_HEADER, orders),
        write_csv(tmp_path / "trades.csv", TRADES_HEADER, trades),
    ]
    conversion = convert("l3", files, levels=2)
    assert (conversion.meta["tick_size"], conversion.meta["lot_size"]) == ("0.01", "1E-8")
    # (type, tape order id, size lots of 1E-8, price ticks of 0.01, direction)
    assert rows_of(conversion.tape) == [
        (1, 1, 12_530_623_107, 3_000_000, 1),
        (1, 2, 2_147_483_648, 2_999_999, 1),
        (1, 3, 30_012_345_679, 3_000_050, -1),
        (1, 4, 50_000_000, 3_000_100, -1),
        (4, 1, 10_000_000_001, 3_000_000, 1),
        (2, 3, 10_012_345_679, 3_000_050, -1),
        (3, 2, 2_147_483_648, 2_999_999, 1),
    ]
    last = [3_000_050, 20_000_000_000, 3_000_000, 2_530_623_106, 3_000_100, 50_000_000]
    assert conversion.tape.book[-1].tolist() == [*last, EMPTY_BID, 0]
    assert replays_exactly(conversion.tape)
    written = load_converted(write_converted(conversion, tmp_path / "tape"))
    assert rows_of(written) == rows_of(conversion.tape)
    assert np.array_equal(written.book, conversion.tape.book)
    replay = MarketReplay(conversion.tape)
    book = OrderBook()
    replay.start(book, 1)
    for i in range(4):  # the snapshot
        replay.handle(book, i)
    fills = book.market(-1, 12_000_000_000, owner=0)  # a seat sells 120 coins
    assert [(f.price, f.qty, f.maker_owner) for f in fills] == [(3_000_000, 12_000_000_000, 1)]
    assert book.depth(1) == ([(3_000_000, 530_623_107)], [(3_000_050, 30_012_345_679)])


# Orders that cross, as the exchange reports them: the taker's creation, then (a millisecond or
# two later) the trades naming the makers, the makers' changes and deletions, and the taker's
# own change (its rest) or deletion. Ticks and lots of 0.01.
CROSSING_ORDERS = [
    order(0, 1, "100.00", "1.00", "created", "bid"),
    order(0, 2, "99.90", "2.00", "created", "bid"),
    order(0, 3, "100.10", "1.00", "created", "ask"),
    order(0, 4, "100.20", "2.00", "created", "ask"),
    order(0, 9, "0.01", "3.00", "created", "bid"),  # bogus: far from the market
    order(1000, 5, "100.20", "2.00", "created", "bid"),  # takes 3 and 1.00 of 4
    order(1001, 3, "100.10", "1.00", "deleted", "ask"),
    order(1002, 4, "100.20", "1.00", "changed", "ask"),
    order(1002, 5, "100.20", "2.00", "deleted", "bid"),
    order(2000, 6, "100.00", "1.50", "created", "ask"),  # takes 1, rests with 0.50
    order(2001, 1, "100.00", "1.00", "deleted", "bid"),
    order(2002, 6, "100.00", "0.50", "changed", "ask"),
    order(3000, 7, "100.00", "0.80", "created", "bid"),  # its maker 8 is created after it
    order(3000, 8, "100.00", "0.30", "created", "ask"),
    order(3001, 8, "100.00", "0.30", "deleted", "ask"),
    order(3001, 6, "100.00", "0.50", "deleted", "ask"),
    order(3002, 7, "100.00", "0.00", "deleted", "bid"),
    order(4000, 10, "100.25", "0.40", "changed", "bid"),  # unknown: never created
]
CROSSING_TRADES = [
    trade(1001, "100.10", "1.00", 5, 3, "buy"),
    trade(1001, "100.20", "1.00", 5, 4, "buy"),
    trade(2001, "100.00", "1.00", 1, 6, "sell"),
    trade(3001, "100.00", "0.30", 7, 8, "buy"),
    trade(3001, "100.00", "0.50", 7, 6, "buy"),
]


def plain_replay_tops(rows: list[tuple], tick: float, lot: float) -> dict[int, tuple | None]:
    """A plain replay of the capture's order events (created, changed and deleted applied as
    given, quotes within 5% of the opening mid): ms -> (bid ticks, bid lots, ask ticks, ask
    lots) after the events of that ms (counted from M), None where the book is crossed."""
    live: dict[int, tuple[int, float, float]] = {}
    tops: dict[int, tuple | None] = {}
    mid = None
    for oid, _, stamp, price, volume, action, direction in sorted(rows, key=lambda r: r[2]):
        ms = stamp - M
        side, price, volume = (1 if direction == "bid" else -1), float(price), float(volume)
        if action == "deleted" or volume == 0:
            live.pop(oid, None)
        elif action == "created" or oid in live:
            live[oid] = (side, price, volume)
        bids = [(p, v) for s, p, v in live.values() if s > 0]
        asks = [(p, v) for s, p, v in live.values() if s < 0]
        if mid is None and bids and asks:
            mid = (max(bids)[0] + min(asks)[0]) / 2
        near = [(s, p, v) for s, p, v in live.values() if mid is None or abs(p / mid - 1) < 0.05]
        bid = max((p for s, p, _ in near if s > 0), default=None)
        ask = min((p for s, p, _ in near if s < 0), default=None)
        if bid is not None and ask is not None and bid >= ask:
            tops[ms] = None
            continue
        size = {p: sum(v for s, q, v in near if q == p) for p in (bid, ask) if p is not None}
        tops[ms] = (
            round(bid / tick) if bid else None,
            round(size[bid] / lot) if bid else 0,
            round(ask / tick) if ask else None,
            round(size[ask] / lot) if ask else 0,
        )
    return tops


def test_orders_that_cross_wait_for_the_exchange_to_match_them(tmp_path: Path):
    """Each created order that crosses is held back until the trades, changes and deletions
    the exchange reports for it have come: the converted top of book equals a plain replay
    of the feed's own events at every millisecond where that replay is not crossed, and the
    converted book never crosses."""
    files = [
        write_csv(tmp_path / "orders.csv", ORDERS_HEADER, CROSSING_ORDERS),
        write_csv(tmp_path / "trades.csv", TRADES_HEADER, CROSSING_TRADES),
    ]
    tape = convert("l3", files, levels=2, lot="0.01").tape
    assert (tape.tick_size, tape.lot_size) == (0.01, 0.01)
    assert replays_exactly(tape)
    book, times = tape.book, np.round(tape.messages["time"] * 1000 - (M - MIDNIGHT_NS // 10**6))
    best = book[:, [2, 3, 0, 1]]  # bid price, bid size, ask price, ask size
    shown = best[:, 1] > 0
    assert not (shown & (best[:, 3] > 0) & (best[:, 0] >= best[:, 2])).any()
    tops = plain_replay_tops(CROSSING_ORDERS, 0.01, 0.01)
    assert [ms for ms, top in tops.items() if top is None] == [1000, 1001, 2000, 3000]
    for ms, top in tops.items():
        if top is None:
            continue
        row = best[np.flatnonzero(times <= ms)[-1]].tolist()
        row = [None if p in (EMPTY_BID, EMPTY_ASK) else p for p in row]
        assert tuple(row) == top, ms
    counts = convert("l3", files, lot="0.01").meta["counts"]
    assert (counts["crossings"], counts["crossed_lots"]) == (3, 200 + 150 + 80)
