"""A book that writes what happens to it as LOBSTER messages, to record synthetic tapes."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from envs.book import Fill, OrderBook

__all__ = ["RecordingBook"]

NEW, PARTIAL_CANCEL, DELETE, EXECUTE = 1, 2, 3, 4


class RecordingBook(OrderBook):
    """An `OrderBook` that appends a LOBSTER message (time, type, order id, size, price ticks,
    direction) to ``log`` for every change of its resting orders: 1 for an order that rests,
    2 / 3 for a partial / full cancel, 4 for each execution of a resting order (direction is
    the resting order's side). ``now`` is the time stamped on messages (seconds after
    midnight); `timed` sets it per row as the market carries rows out."""

    __slots__ = ("now", "log")

    def __init__(self) -> None:
        super().__init__()
        self.now = 0.0
        self.log: list[tuple[float, int, int, int, int, int]] = []

    def timed(self, times: list[float], rows: Iterable[tuple]) -> Iterator[tuple]:
        """Yield ``rows``, setting ``now`` to each row's time before it is carried out."""
        for t, row in zip(times, rows):
            self.now = t
            yield row

    def limit(self, side: int, price: int, qty: int, owner: int = 0) -> tuple[int, list[Fill]]:
        oid, fills = super().limit(side, price, qty, owner)
        self._executions(fills)
        rest = self.resting(oid)
        if rest:
            self.log.append((self.now, NEW, oid, rest, price, side))
        return oid, fills

    def market(self, side: int, qty: int, owner: int = 0) -> list[Fill]:
        fills = super().market(side, qty, owner)
        self._executions(fills)
        return fills

    def immediate(self, side: int, price: int, qty: int, owner: int = 0) -> list[Fill]:
        fills = super().immediate(side, price, qty, owner)
        self._executions(fills)
        return fills

    def cancel(self, order_id: int, qty: int | None = None) -> int:
        order = self.order(order_id)
        done = super().cancel(order_id, qty)
        if done:
            kind = PARTIAL_CANCEL if self.resting(order_id) else DELETE
            self.log.append((self.now, kind, order_id, done, order[1], order[0]))
        return done

    def _executions(self, fills: list[Fill]) -> None:
        now = self.now
        self.log.extend(
            (now, EXECUTE, f.maker_order, f.qty, f.price, -f.taker_side) for f in fills
        )
