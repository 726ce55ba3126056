"""Order-book throughput on a mixed workload: limit orders around a drifting mid, cancels of
resting orders and marketable orders.

Prints two JSON lines: book_events_per_s (one Python call per event, as a seat or a user's
script drives the book) and book_batch_events_per_s (the same kind of flow as order rows
carried out by `OrderBook.run`, as the market drives it: accounts kept, no fill objects).
"""

from __future__ import annotations

import json
import platform
import time

import numpy as np

from tradearena.envs.simulator.book import CANCEL_ALL, LIMIT, MARKET, OrderBook


def workload(n: int, seed: int = 0) -> list[tuple[int, int, int, int]]:
    """n events (kind, side, price, qty): kind 0 limit (60%), 1 cancel (30%), 2 market (10%)."""
    rng = np.random.default_rng(seed)
    kind = rng.choice(3, size=n, p=[0.6, 0.3, 0.1])
    side = rng.choice([-1, 1], size=n)
    mid = 10_000 + np.cumsum(rng.choice([-1, 0, 1], size=n, p=[0.01, 0.98, 0.01]))
    price = mid - side * rng.integers(1, 15, size=n)  # passive prices, behind the mid
    qty = rng.integers(1, 200, size=n)
    return list(zip(kind.tolist(), side.tolist(), price.tolist(), qty.tolist()))


def run(events: list[tuple[int, int, int, int]]) -> float:
    """Seconds to apply the events to a fresh book, one call each."""
    book = OrderBook()
    live: list[int] = []
    start = time.perf_counter()
    for kind, side, price, qty in events:
        if kind == 0:
            oid, _ = book.limit(side, price, qty, 1)
            live.append(oid)
        elif kind == 1:
            if live:  # cancel a random live order (swap-remove keeps this O(1))
                i = price % len(live)
                live[i], live[-1] = live[-1], live[i]
                book.cancel(live.pop())
        else:
            book.market(side, qty, 2)
    return time.perf_counter() - start


def batch(events: list[tuple[int, int, int, int]]) -> tuple[float, int]:
    """Seconds for `OrderBook.run` on the events as rows (a cancel becomes a CANCEL_ALL of
    one of 1000 owners, each limit order belonging to one of them); and the row count."""
    kind, side, price, qty = (np.array(c, dtype=np.int32) for c in zip(*events))
    owner = np.arange(len(kind), dtype=np.int32) % 1000 + 10
    kind = np.choose(kind, [LIMIT, CANCEL_ALL, MARKET]).astype(np.int32)
    time_ = np.arange(len(kind), dtype=np.float64)
    ref = np.full(len(kind), -1, dtype=np.int32)
    book = OrderBook()
    start = time.perf_counter()
    book.run(time_, kind, side, price, qty, owner, ref, {}, collect=False)
    return time.perf_counter() - start, len(kind)


def main() -> None:
    n = 1_000_000
    events = workload(n)
    best = min(run(events) for _ in range(3))
    detail = {
        "events": n,
        "mix": "60% limit, 30% cancel, 10% market",
        "python": platform.python_version(),
    }
    print(
        json.dumps(
            {"name": "book_events_per_s", "value": round(n / best), "unit": "events/s", **detail}
        )
    )
    seconds, rows = min(batch(events) for _ in range(3))
    print(
        json.dumps(
            {
                "name": "book_batch_events_per_s",
                "value": round(rows / seconds),
                "unit": "events/s",
                **detail,
            }
        )
    )


if __name__ == "__main__":
    main()
