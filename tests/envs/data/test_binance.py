"""Binance recordings converted to tapes: a hand-built recording (updates before the
snapshot, a trade moved ahead of the update that shows it, bogus quotes, a gap with a
crossing update, a snapshot mid-stream that puts the book back in step, a stale update)
converted message by message, its replay fidelity, split and gzip files, and bad lines."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest
from recordings import (
    MIDNIGHT_NS,
    at,
    depth,
    replays_exactly,
    rows_of,
    snapshot,
    ticker,
    trade,
    write,
)

from tradearena.envs.data.convert import convert, load_converted, write_converted
from tradearena.envs.data.files import FeedError
from tradearena.envs.data.tapes import EMPTY_ASK, EMPTY_BID


def line_time(k: int) -> int:
    """Receive time (ns) of line k (1-based): 86,399.5 s after midnight, then every 0.1 s
    (into the next day from line 6)."""
    return at(86_399.5 + 0.1 * (k - 1))


LINES = [
    # 1: an update before the snapshot that it covers: dropped
    depth(line_time(1), 900, 1, 3, [("99.99", "2.0")], []),
    # 2: an update that overlaps the snapshot (U <= 6 <= u): applied right after it
    depth(line_time(2), 1000, 4, 6, [("100.00", "1.2")], []),
    # 3: a trade before the book exists: dropped
    trade(line_time(3), 950, "100.00", "0.1", True),
    # 4: the snapshot
    snapshot(
        line_time(4),
        5,
        [("100.00", "1.0"), ("99.99", "2.0")],
        [("100.01", "1.5"), ("100.05", "3.0")],
    ),
    # 5: a trade on the bids, before update 6 (E 1100 >= T 1050), which shows it
    trade(line_time(5), 1050, "100.00", "0.2", True),
    # 6: the bid as after that trade; an ask leaves, another comes
    depth(line_time(6), 1100, 7, 8, [("100.00", "1.0")], [("100.01", "0"), ("100.02", "0.5")]),
    # 7: a book ticker: read, not applied
    ticker(line_time(7), 8, "100.00", "1.0", "100.02", "0.5"),
    # 8: bogus quotes 5x and 1/10,000 of the market: out of the band
    depth(line_time(8), 1200, 9, 9, [("500.00", "1.0"), ("0.01", "1.0")], []),
    # 9: a gap (ids 10, 11 missing); its bid crosses the stale ask 100.02
    depth(line_time(9), 1300, 12, 13, [("100.03", "0.4")], []),
    # 10: a snapshot mid-stream puts the book in step again
    snapshot(
        line_time(10),
        14,
        [("100.03", "0.4"), ("100.00", "1.0")],
        [("100.04", "2.0"), ("100.05", "3.0")],
    ),
    # 11: in step with the snapshot (U 15 = 14 + 1)
    depth(line_time(11), 1400, 15, 16, [], [("100.05", "2.5")]),
    # 12: an old update received late: dropped
    depth(line_time(12), 1250, 14, 14, [("100.00", "7.0")], []),
    # 13: a trade on the asks
    trade(line_time(13), 1500, "100.04", "0.5", False),
]

# (line whose receive time it carries, type, order id, size lots, price ticks, direction)
EXPECTED = [
    (4, 1, 1, 20, 9999, 1),  # the snapshot's levels as new orders, each side from the low price
    (4, 1, 2, 10, 10000, 1),
    (4, 1, 3, 15, 10001, -1),
    (4, 1, 4, 30, 10005, -1),
    (4, 1, 5, 2, 10000, 1),  # update 2, received before the snapshot, at the snapshot's time
    (5, 4, 0, 2, 10000, 1),  # the trade: an execution on the bids
    (6, 3, 0, 15, 10001, -1),  # the update's deletion first
    (6, 1, 6, 5, 10002, -1),
    (9, 3, 0, 5, 10002, -1),  # the crossing: the stale ask goes
    (9, 1, 7, 4, 10003, 1),
    (10, 3, 0, 20, 9999, 1),  # the snapshot: what it lacks goes, then what it adds
    (10, 1, 8, 20, 10004, -1),
    (11, 2, 0, 5, 10005, -1),
    (13, 4, 0, 5, 10004, -1),
]
COUNTS = {
    "depth_updates": 7,
    "depth_updates_applied": 5,
    "depth_updates_dropped": 2,
    "snapshots": 2,
    "snapshots_skipped": 0,
    "gaps": 1,
    "depth_levels": 18,  # in the updates and the snapshots
    "trades": 3,
    "tickers": 1,
    "other_messages": 0,
    "trades_before_book": 1,
    "off_grid_quotes": 0,
    "crossings": 1,
    "crossed_lots": 5,
    "out_of_band": 2,
    "unknown_order_events": 0,
    "trades_unknown": 0,
    "trades_out_of_queue": 0,
    "traded_beyond_book": 0,
}


@pytest.fixture
def recording(tmp_path: Path) -> Path:
    return write(tmp_path / "btcusdt.txt", LINES)


def test_every_message_of_the_recording(recording: Path):
    conversion = convert("binance", [recording], levels=3)
    messages, meta = conversion.tape.messages, conversion.meta
    assert rows_of(conversion.tape) == [row[1:] for row in EXPECTED]
    times = [(line_time(row[0]) - MIDNIGHT_NS) / 1e9 for row in EXPECTED]
    assert messages["time"].tolist() == times
    assert messages["time"][-1] > 86_400  # past midnight: the next day goes on counting
    assert meta["counts"] == COUNTS
    assert meta["gaps"] == [
        f"{recording}, line 9: update ids 10 to 11 missing; in step again at the snapshot "
        f"of {recording}, line 10"
    ]
    expected_meta = {"format": "binance", "symbol": "BTCUSDT", "date": "2024-08-08"}
    expected_meta |= {"tick_size": "0.01", "lot_size": "0.1", "levels": 3, "messages": 14}
    assert {key: meta[key] for key in expected_meta} == expected_meta
    assert meta["opening_price"] == (10001 + 10000) // 2  # the first row with both sides
    last = [10004, 15, 10003, 4, 10005, 25, 10000, 10, EMPTY_ASK, 0, EMPTY_BID, 0]
    assert conversion.tape.book[-1].tolist() == last


def test_the_tape_replays_with_fidelity_one(recording: Path, tmp_path: Path):
    conversion = convert("binance", [recording], levels=2)
    write_converted(conversion, tmp_path / "tape")
    tape = load_converted(tmp_path / "tape")
    assert tape.complete and tape.tick_size == 0.01 and tape.lot_size == 0.1
    for name in tape.messages.dtype.names:
        assert tape.messages[name].tolist() == conversion.tape.messages[name].tolist()
    assert np.array_equal(tape.book, conversion.tape.book)
    assert replays_exactly(tape)


def test_written_files_are_lobster_columns(recording: Path, tmp_path: Path):
    write_converted(convert("binance", [recording], levels=1), tmp_path)
    messages = (tmp_path / "message.csv").read_text().splitlines()
    assert messages[0] == "86399.800000000,1,1,20,9999,1"
    assert messages[-1] == "86400.700000000,4,0,5,10004,-1"
    book = (tmp_path / "orderbook.csv").read_text().splitlines()
    assert book[0] == f"{EMPTY_ASK},0,9999,20"
    assert book[-1] == "10004,15,10003,4"


def test_consecutive_files_and_gzip_read_as_one_recording(recording: Path, tmp_path: Path):
    first = write(tmp_path / "part1.gz", LINES[:7], compress=True)
    second = write(tmp_path / "part2.txt", LINES[7:])  # no snapshot of its own
    joined = convert("binance", [first, second], levels=3)
    whole = convert("binance", [recording], levels=3)
    for name in whole.tape.messages.dtype.names:
        assert joined.tape.messages[name].tolist() == whole.tape.messages[name].tolist()
    assert np.array_equal(joined.tape.book, whole.tape.book)
    assert joined.meta["gaps"] == [
        f"{second}, line 2: update ids 10 to 11 missing; in step again at the snapshot of "
        f"{second}, line 3"
    ]


def test_a_snapshot_while_in_step_is_not_needed(tmp_path: Path):
    lines = [
        snapshot(at(1), 5, [("10.0", "1")], [("10.1", "1")]),
        depth(at(2), 10, 6, 7, [("10.0", "2")], []),
        snapshot(at(3), 7, [("10.0", "9")], [("10.1", "9")]),  # in step: skipped
        depth(at(4), 20, 8, 8, [], [("10.1", "3")]),
    ]
    conversion = convert("binance", [write(tmp_path / "r.txt", lines)], levels=1)
    assert conversion.meta["counts"]["snapshots_skipped"] == 1
    assert conversion.tape.book[-1].tolist() == [101, 3, 100, 2]


def test_given_steps_drop_quotes_off_the_grid(recording: Path):
    conversion = convert("binance", [recording], levels=1, tick="0.01", lot="0.05")
    assert conversion.meta["lot_size"] == "0.05"
    assert conversion.tape.messages["size"][0] == 40  # 2.0 in lots of 0.05
    with pytest.raises(FeedError, match=r"line 5: trade price 100 is not a multiple of the tick"):
        convert("binance", [recording], tick="0.03")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("17 {", r"line 2: not valid JSON \(expected a string\) \(at column 5\)"),
        ("x {}", "line 2: does not start with the receive time"),
        ("", "line 2: empty line"),
        (depth(1, 1, 6, 6, [("1.2.3", "1")], []), "line 2: a price or quantity '1.2.3' is not"),
        (depth(1, 1, 6, 6, [("1", "-1")], []), "line 2: a price or quantity '-1' is negative"),
        (depth(1, 1, 6, 6, [], []).replace('"u":6,', ""), 'line 2: a depthUpdate without "u"'),
        (depth(1, 1, 7, 6, [], []), 'line 2: a depthUpdate with "U" 7 after "u" 6'),
        (trade(1, 1, "1", "1", True).replace('"m":true', '"m":1'), 'line 2: "m" is not true'),
        (trade(1, 1, "1", "1", True).replace(',"q":"1"', ""), 'line 2: a trade without "q"'),
        (
            depth(1, 1, 6, 6, [], []).replace("BTCUSDT", "ETHUSDT"),
            "line 2: symbol 'ETHUSDT', but the recording began with 'BTCUSDT'",
        ),
    ],
)
def test_a_bad_line_is_named(tmp_path: Path, line: str, message: str):
    first = depth(at(1), 1, 1, 5, [("10.0", "1")], [])
    path = write(tmp_path / "bad.txt", [first, line, snapshot(at(3), 5, [], [])])
    with pytest.raises(FeedError, match=f"^{tmp_path}/bad.txt, {message}"):
        convert("binance", [path])


def test_bad_files_are_named(recording: Path, tmp_path: Path):
    empty = tmp_path / "empty.gz"
    empty.write_bytes(gzip.compress(b"\n"))
    with pytest.raises(FeedError, match="empty.gz: the recording is empty"):
        convert("binance", [empty])
    truncated = tmp_path / "cut.gz"
    truncated.write_bytes(gzip.compress(recording.read_bytes())[:-30])
    with pytest.raises(FeedError, match="cut.gz: truncated gzip"):
        convert("binance", [truncated])
    alone = write(tmp_path / "alone.txt", LINES[:3])
    with pytest.raises(FeedError, match="alone.txt: no depth snapshot"):
        convert("binance", [alone])
    with pytest.raises(FeedError, match="missing.txt: cannot read the file"):
        convert("binance", [tmp_path / "missing.txt"])
    for price, qty, fault in (("0", "1", "price 0"), ("10.0", "0", "quantity 0")):
        zero = write(tmp_path / "zero.txt", [*LINES[:4], trade(at(9), 9_000, price, qty, True)])
        with pytest.raises(FeedError, match=f"zero.txt, line 5: trade {fault} is not positive"):
            convert("binance", [zero])
    too_many = "100000000000"  # 10**16 lots of 1E-5: more than 2**53 - 1
    huge = write(tmp_path / "huge.txt", [snapshot(at(1), 1, [("10.0", too_many)], [])])
    with pytest.raises(FeedError, match=f"huge.txt, line 1: quantity {too_many} is more than"):
        convert("binance", [huge], lot="0.00001")
