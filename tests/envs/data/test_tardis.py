"""Tardis CSV exports converted to tapes: a hand-built incremental_book_L2 and trades pair
(a snapshot, an update whose deletion must go first, a bogus quote, a crossing ask, a snapshot
mid-stream, trades of unknown side, a trade before the book) converted message by message,
its replay fidelity, and bad rows."""

from __future__ import annotations

from pathlib import Path

import pytest
from recordings import MIDNIGHT_NS, replays_exactly, rows_of, write_csv

from tradearena.envs.data.convert import convert
from tradearena.envs.data.files import FeedError
from tradearena.envs.data.tapes import EMPTY_BID

BOOK_HEADER = "exchange,symbol,timestamp,local_timestamp,is_snapshot,side,price,amount"
TRADES_HEADER = "exchange,symbol,timestamp,local_timestamp,id,side,price,amount"
S = MIDNIGHT_NS // 1000 + 12 * 3_600_000_000  # 12:00 UTC, microseconds
LATE = 100  # us between the exchange's time and the local receive time


def book_row(t: int, snap: bool, side: str, price: str, amount: str) -> tuple:
    return ("binance", "BTCUSDT", S + t, S + t + LATE, str(snap).lower(), side, price, amount)


def trade_row(t: int, side: str, price: str, amount: str) -> tuple:
    return ("binance", "BTCUSDT", S + t, S + t + LATE, 7, side, price, amount)


BOOK = [
    book_row(0, True, "bid", "50.00", "2"),
    book_row(0, True, "bid", "49.90", "1"),
    book_row(0, True, "ask", "50.10", "3"),
    book_row(0, True, "ask", "50.20", "1"),
    # one message: a bid at the price an ask leaves (the deletion goes first)
    book_row(1_000_000, False, "bid", "50.10", "1"),
    book_row(1_000_000, False, "ask", "50.15", "2"),
    book_row(1_000_000, False, "ask", "50.10", "0"),
    book_row(2_000_000, False, "bid", "5000.00", "1"),  # bogus: out of the band
    book_row(3_000_000, False, "ask", "50.00", "0.5"),  # crosses the bids 50.10 and 50.00
    book_row(4_000_000, True, "bid", "49.90", "1"),  # a snapshot mid-stream
    book_row(4_000_000, True, "ask", "50.00", "0.5"),
    book_row(4_000_000, True, "ask", "50.20", "1"),
]
TRADES = [
    trade_row(-1_000_000, "sell", "50.00", "1"),  # before the book: dropped
    trade_row(1_500_000, "buy", "50.15", "1"),  # a buyer takes the asks
    trade_row(4_500_000, "unknown", "49.90", "0.5"),  # at the best bid: takes the bids
    trade_row(4_600_000, "unknown", "49.95", "0.5"),  # inside the spread: changes nothing
]
# (time us after S, type, order id, size lots of 0.5, price ticks of 0.05, direction)
EXPECTED = [
    (0, 1, 1, 2, 998, 1),
    (0, 1, 2, 4, 1000, 1),
    (0, 1, 3, 6, 1002, -1),
    (0, 1, 4, 2, 1004, -1),
    (1_000_000, 3, 0, 6, 1002, -1),
    (1_000_000, 1, 5, 2, 1002, 1),
    (1_000_000, 1, 6, 4, 1003, -1),
    (1_500_000, 4, 0, 2, 1003, -1),
    (3_000_000, 3, 0, 2, 1002, 1),  # the crossing ask removes the bids it crosses
    (3_000_000, 3, 0, 4, 1000, 1),
    (3_000_000, 1, 7, 1, 1000, -1),
    (4_000_000, 3, 0, 2, 1003, -1),  # the snapshot lacks the ask 50.15
    (4_500_000, 4, 0, 1, 998, 1),
]
COUNTS = {
    "book_rows": 12,
    "snapshots": 2,
    "trades": 4,
    "trades_before_book": 1,
    "off_grid_quotes": 0,
    "crossings": 1,
    "crossed_lots": 6,
    "out_of_band": 1,
    "unknown_order_events": 0,
    "trades_unknown": 1,
    "trades_out_of_queue": 0,
    "traded_beyond_book": 0,
}


@pytest.fixture
def files(tmp_path: Path) -> list[Path]:
    return [
        write_csv(tmp_path / "trades.csv.gz", TRADES_HEADER, TRADES, compress=True),
        write_csv(tmp_path / "book.csv", BOOK_HEADER, BOOK),
    ]


def test_every_message_of_the_export(files: list[Path]):
    conversion = convert("tardis", files, levels=2)
    messages, meta = conversion.tape.messages, conversion.meta
    assert rows_of(conversion.tape) == [row[1:] for row in EXPECTED]
    times = [(S + row[0] + LATE) * 1000 for row in EXPECTED]
    assert messages["time"].tolist() == [(t - MIDNIGHT_NS) / 1e9 for t in times]
    assert meta["counts"] == COUNTS
    assert (meta["symbol"], meta["tick_size"], meta["lot_size"]) == ("BTCUSDT", "0.05", "0.5")
    assert conversion.tape.book[-1].tolist() == [1000, 1, 998, 1, 1004, 2, EMPTY_BID, 0]
    assert replays_exactly(conversion.tape)


@pytest.mark.parametrize(
    ("target", "row", "message"),
    [
        ("book", ("binance", "BTCUSDT", 1, 2, "true", "bid", "50.0"), "line 3: 7 field"),
        ("book", book_row(0, False, "buy", "50.00", "1"), "line 3, column side: 'buy' is not"),
        ("book", book_row(0, False, "bid", "5O.00", "1"), "line 3, column price: '5O.00' is"),
        ("book", book_row(0, False, "bid", "50.00", "1") + ("x",), "line 3: more than 8"),
        (
            "book",
            book_row(0, False, "bid", "50.00", "1e400"),
            "line 3, column amount: .1e400. is out of",
        ),
        (
            "book",
            ("binance", "ETHUSDT", 1, 2, "true", "bid", "50.00", "1"),
            "line 3, column symbol: 'ETHUSDT', but the file began with 'BTCUSDT'",
        ),
        ("trades", trade_row(0, "buy", "50.00", "-1"), "line 3, column amount: '-1' is negative"),
    ],
)
def test_a_bad_row_is_named(tmp_path: Path, target: str, row: tuple, message: str):
    good = {"book": BOOK[0], "trades": TRADES[1]}[target]
    header = {"book": BOOK_HEADER, "trades": TRADES_HEADER}[target]
    path = write_csv(tmp_path / f"{target}.csv", header, [good, row])
    inputs = (
        [path] if target == "book" else [path, write_csv(tmp_path / "b.csv", BOOK_HEADER, BOOK)]
    )
    with pytest.raises(FeedError, match=f"{target}.csv, {message}"):
        convert("tardis", inputs)


def test_files_of_neither_kind_are_named(tmp_path: Path):
    odd = write_csv(tmp_path / "odd.csv", "time,price", [(1, 2)])
    with pytest.raises(FeedError, match="odd.csv, line 1: the header 'time,price' lacks"):
        convert("tardis", [odd])
    trades = write_csv(tmp_path / "t.csv", TRADES_HEADER, TRADES)
    with pytest.raises(FeedError, match="t.csv: no incremental_book_L2 file"):
        convert("tardis", [trades])
