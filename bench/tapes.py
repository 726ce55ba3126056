"""Converting exchange recordings into tapes, and replaying the tapes.

Writes a synthetic recording in each format of `envs.data.convert.FORMATS` (the size of the
Binance sample hour's six minutes: a 1,000-level snapshot, 3,500 depth updates of 36 levels,
10,000 trades and 28,000 book tickers; the same book as Tardis rows; an L3 capture of 130,000
order events and 10,000 trades) and prints one JSON line per format,
``convert_<format>_messages_per_s``: the recording's messages (lines or rows) read, checked
and built into the tape per second, best of 3, with the wall time, the process's CPU time (on a
busy machine the fairer figure) and, for Binance, the depth levels per second (bar 500,000).
Then ``replay_<kind>_messages_per_s``: a whole day replayed by the compiled market (no seats),
for the converted Binance tape and for a LOBSTER tape (a synthetic day written as LOBSTER files
and read back, replayed with reconciliation), in messages per second.

``--binance FILE`` / ``--lobster MESSAGES`` measure a real recording / LOBSTER day too.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from tradearena.envs.data.convert import convert
from tradearena.envs.data.load import load_tape
from tradearena.envs.data.tapes import Tape, write_lobster
from tradearena.envs.simulator.recording import synthetic_tape
from tradearena.envs.spec import MarketSpec

START_NS = 1_723_161_600 * 10**9  # 2024-08-09 00:00 UTC


def l2_book(seed: int = 0, updates: int = 3_500, width: int = 36) -> dict[str, np.ndarray]:
    """A random L2 market: a 1,000-level snapshot around a drifting mid, then ``updates``
    messages of ``width`` levels each (a fifth of them deletions, most far from the mid, as on
    Binance) and three trades per update at the touch. Prices in cents, sizes in 1e-5."""
    rng = np.random.default_rng(seed)
    mid = 6_000_000 + np.cumsum(rng.integers(-3, 4, updates))
    offsets = np.minimum(rng.geometric(0.01, (updates, width)), 3_000)
    side = rng.choice([1, -1], (updates, width))
    price = mid[:, None] - side * offsets
    qty = rng.integers(1, 200_000, (updates, width)) * (rng.random((updates, width)) > 0.2)
    trade_side = rng.choice([1, -1], (updates, 3))
    trade_price = mid[:, None] - trade_side * 1
    return {
        "snapshot": np.arange(1, 501),
        "mid": mid,
        "side": side,
        "price": price,
        "qty": qty,
        "trade_side": trade_side,
        "trade_price": trade_price,
        "trade_qty": rng.integers(1, 50_000, (updates, 3)),
    }


def decimal(value: int, places: int) -> str:
    return f"{value // 10**places}.{value % 10**places:0{places}d}"


def write_binance(book: dict[str, np.ndarray], path: Path) -> None:
    """The book as a Binance recording."""
    lines = []
    mid0 = int(book["mid"][0])
    bids = [[decimal(mid0 - k, 2), "1.00000000"] for k in book["snapshot"]]
    asks = [[decimal(mid0 + k, 2), "1.00000000"] for k in book["snapshot"]]
    t = START_NS
    lines.append(f"{t} " + json.dumps({"lastUpdateId": 0, "bids": bids, "asks": asks}))
    for i in range(len(book["mid"])):
        t += 100_000_000
        E = t // 1_000_000
        pairs = {1: [], -1: []}
        for s, p, q in zip(book["side"][i], book["price"][i], book["qty"][i]):
            pairs[int(s)].append([decimal(int(p), 2), decimal(int(q), 8)])
        data = {"e": "depthUpdate", "E": E, "s": "BTCUSDT", "U": i + 1, "u": i + 1}
        data |= {"b": pairs[1], "a": pairs[-1]}
        lines.append(f"{t} " + json.dumps({"stream": "btcusdt@depth@100ms", "data": data}))
        for k in range(3):
            p, q = (
                decimal(int(book["trade_price"][i, k]), 2),
                decimal(int(book["trade_qty"][i, k]), 8),
            )
            m = bool(book["trade_side"][i, k] > 0)
            trade = {"e": "trade", "E": E - 50, "s": "BTCUSDT", "p": p, "q": q, "T": E - 50, "m": m}
            lines.append(f"{t + k} " + json.dumps({"stream": "btcusdt@trade", "data": trade}))
        for k in range(8):
            ticker = {"u": i, "s": "BTCUSDT", "b": decimal(int(book["mid"][i]) - 1, 2)}
            ticker |= {"B": "1.0", "a": decimal(int(book["mid"][i]) + 1, 2), "A": "1.0"}
            lines.append(
                f"{t + 5 + k} " + json.dumps({"stream": "btcusdt@bookTicker", "data": ticker})
            )
    path.write_text("\n".join(lines) + "\n")


def write_tardis(book: dict[str, np.ndarray], directory: Path) -> None:
    """The book as Tardis incremental_book_L2 and trades files."""
    rows = ["exchange,symbol,timestamp,local_timestamp,is_snapshot,side,price,amount"]
    mid0 = int(book["mid"][0])
    t = START_NS // 1000
    for k in book["snapshot"]:
        for side, p in (("bid", mid0 - k), ("ask", mid0 + k)):
            rows.append(f"binance,BTCUSDT,{t},{t + 7},true,{side},{decimal(p, 2)},1")
    trades = ["exchange,symbol,timestamp,local_timestamp,id,side,price,amount"]
    for i in range(len(book["mid"])):
        t = START_NS // 1000 + 100_000 * (i + 1)
        for s, p, q in zip(book["side"][i], book["price"][i], book["qty"][i]):
            side, price, amount = "bid" if s > 0 else "ask", decimal(int(p), 2), decimal(int(q), 5)
            rows.append(f"binance,BTCUSDT,{t},{t + 7},false,{side},{price},{amount}")
        for k in range(3):
            side = "sell" if book["trade_side"][i, k] > 0 else "buy"
            p, q = (
                decimal(int(book["trade_price"][i, k]), 2),
                decimal(int(book["trade_qty"][i, k]), 5),
            )
            trades.append(f"binance,BTCUSDT,{t - 50_000},{t - 49_990},{i},{side},{p},{q}")
    (directory / "incremental_book_L2.csv").write_text("\n".join(rows) + "\n")
    (directory / "trades.csv").write_text("\n".join(trades) + "\n")


def write_l3(directory: Path, seed: int = 0, events: int = 130_000, trades: int = 10_000) -> None:
    """A random L3 capture: a 2,000-order snapshot, then creates (45%), changes (15%) and
    deletes (40%) of live orders around a drifting mid, and trades of the best bids."""
    rng = np.random.default_rng(seed)
    ms = START_NS // 1_000_000
    mid = 6_000_000
    live: dict[int, tuple[str, int, int]] = {}
    orders = ["id,timestamp,exchange_timestamp,price,volume,action,direction"]
    fills = ["trade_id,timestamp,exchange_timestamp,price,amount,buy_order_id,sell_order_id,side"]
    next_id = 1
    every = events // trades
    for i in range(2_000 + events):
        t = ms + (i - 2_000) * 3 if i >= 2_000 else ms
        mid += int(rng.integers(-1, 2)) if i % 50 == 0 else 0
        roll = rng.random() if i >= 2_000 else 0.0
        if roll < 0.45 or len(live) < 100:
            side = "bid" if rng.random() < 0.5 else "ask"
            price = (
                mid - int(rng.integers(1, 500))
                if side == "bid"
                else mid + int(rng.integers(1, 500))
            )
            volume = int(rng.integers(1, 100_000))
            live[next_id] = (side, price, volume)
            orders.append(
                f"{next_id},{t},{t},{decimal(price, 2)},{decimal(volume, 5)},created,{side}"
            )
            next_id += 1
        else:
            oid = list(live)[int(rng.integers(len(live)))]
            side, price, volume = live[oid]
            if roll < 0.6 and volume > 1:
                volume //= 2
                live[oid] = (side, price, volume)
                orders.append(
                    f"{oid},{t},{t},{decimal(price, 2)},{decimal(volume, 5)},changed,{side}"
                )
            else:
                del live[oid]
                orders.append(f"{oid},{t},{t},{decimal(price, 2)},0,deleted,{side}")
        if i >= 2_000 and i % every == 0:
            bids = [(p, o) for o, (s, p, _) in live.items() if s == "bid"]
            if bids:
                price, oid = max(bids)
                fills.append(f"{i},{t},{t},{decimal(price, 2)},0.00001,{oid},0,sell")
    (directory / "orders.csv").write_text("\n".join(orders) + "\n")
    (directory / "trades.csv").write_text("\n".join(fills) + "\n")


MESSAGES = {
    "binance": ("depth_updates", "snapshots", "trades", "tickers", "other_messages"),
    "tardis": ("book_rows", "trades"),
    "l3": ("order_events", "trades"),
}
"""The counts of a conversion that add up to its recording's messages (lines or rows)."""


def report(format: str, inputs: list[Path], **detail) -> Tape:
    """Convert ``inputs`` 3 times and print the best one's rates; its tape."""
    runs = []
    for _ in range(3):
        wall, cpu = time.perf_counter(), time.process_time()
        conversion = convert(format, inputs)
        runs.append((time.perf_counter() - wall, time.process_time() - cpu))
    wall, cpu = min(runs)
    counts = conversion.meta["counts"]
    messages = sum(counts[name] for name in MESSAGES[format])
    line = {
        "name": f"convert_{format}_messages_per_s",
        "value": round(messages / wall),
        "unit": "messages/s",
        "cpu_messages_per_s": round(messages / cpu),
        "messages": messages,
        "tape_messages": len(conversion.tape),
        "seconds": round(wall, 4),
        "cpu_seconds": round(cpu, 4),
    }
    if format == "binance":
        levels = counts["depth_levels"]
        line |= {"depth_levels_per_s": round(levels / wall)}
        line |= {"cpu_depth_levels_per_s": round(levels / cpu), "depth_levels": levels}
        line |= {"bar_depth_levels_per_s": 500_000}
    print(json.dumps(line | detail))
    return conversion.tape


def replay_rate(tape: Tape, kind: str, **detail) -> None:
    """Messages per second of a whole day replayed by the compiled market, best of 3."""
    market = MarketSpec(tape=tape, step_seconds=60.0).market(0)
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        market.reset(0)
        while not market.done:
            market.step()
        best = min(best, time.perf_counter() - start)
    line = {"name": f"replay_{kind}_messages_per_s", "value": round(len(tape) / best)}
    line |= {"unit": "messages/s", "messages": len(tape), "reconciled": market.traders[0].reconcile}
    print(json.dumps(line | detail))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binance", help="a real Binance recording to convert too")
    parser.add_argument("--lobster", help="a real LOBSTER message file to replay too")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        book = l2_book()
        write_binance(book, directory / "binance.txt")
        converted = report("binance", [directory / "binance.txt"], source="synthetic")
        (directory / "tardis").mkdir()
        write_tardis(book, directory / "tardis")
        report("tardis", sorted((directory / "tardis").iterdir()), source="synthetic")
        (directory / "l3").mkdir()
        write_l3(directory / "l3")
        report("l3", sorted((directory / "l3").iterdir()), source="synthetic")
        real = (
            report("binance", [Path(args.binance)], source=args.binance) if args.binance else None
        )
        replay_rate(converted, "converted_binance", source="synthetic Binance recording")
        if real is not None:
            replay_rate(real, "converted_binance", source=args.binance)
        day = synthetic_tape(0)
        write_lobster(day, directory / "m.csv", directory / "o.csv")
        replay_rate(
            load_tape(directory / "m.csv", orderbook=directory / "o.csv"),
            "lobster",
            source="synthetic_tape(0) as LOBSTER files",
        )
        if args.lobster:
            replay_rate(load_tape(args.lobster), "lobster", source=args.lobster)


if __name__ == "__main__":
    main()
