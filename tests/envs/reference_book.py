"""A plain-Python order book: the reference the compiled `envs.simulator.book.OrderBook` is tested
against.

Same semantics and method names as `envs.simulator.book` (limit, market, immediate, cancel, reduce,
quote, cancel_owner and the queries), written for clarity rather than speed.

Prices are integer ticks, quantities integer shares, sides +1 (buy) and -1 (sell), as in LOBSTER.
Owners are integers chosen by the caller (the market gives each seat and background trader one).

Internally both sides are stored the same way, keyed by ``key = side * price``: the best level
of either side is the largest key, kept at the end of an ascending list, so a bid and an ask
are matched by the same code. An incoming order of side ``s`` and limit ``p`` crosses the
opposite side while that side's best key is ``>= -s * p``. Cancels delete the order from the
order table at once and leave its id in the level's queue, where matching skips it (lazy
deletion); a level whose volume reaches zero is removed whole.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections import deque
from enum import IntEnum
from typing import NamedTuple

__all__ = ["Side", "Fill", "OrderBook"]

_NO_LIMIT = -(1 << 62)  # a key every level's key exceeds: a market order's "limit"


class Side(IntEnum):
    """Order side, with LOBSTER's values."""

    BUY = 1
    SELL = -1


class Fill(NamedTuple):
    """One execution between a resting (maker) order and an incoming (taker) order.

    price is in ticks (always the maker's price), qty in shares; taker_side is +1 when the
    taker bought.
    """

    price: int
    qty: int
    maker_order: int
    maker_owner: int
    taker_owner: int
    taker_side: int


class _Half:
    """One side of the book: sorted level keys and, per key, [volume, FIFO queue of ids]."""

    __slots__ = ("keys", "levels")

    def __init__(self) -> None:
        self.keys: list[int] = []  # ascending; the best level is keys[-1]
        self.levels: dict[int, list] = {}  # key -> [volume (shares), deque of order ids]

    def remove_level(self, key: int) -> None:
        keys = self.keys
        if keys[-1] == key:
            keys.pop()
        else:
            del keys[bisect_left(keys, key)]
        del self.levels[key]


class OrderBook:
    """A price-time priority limit order book.

    >>> book = OrderBook()
    >>> oid, fills = book.limit(Side.SELL, 10_001, 50, owner=7)
    >>> book.best_ask()
    (10001, 50)
    >>> [(f.price, f.qty, f.maker_owner) for f in book.market(Side.BUY, 20, owner=3)]
    [(10001, 20, 7)]
    >>> book.cancel(oid)
    30
    """

    __slots__ = ("_halves", "_orders", "_next_id")

    def __init__(self) -> None:
        self._halves = {1: _Half(), -1: _Half()}
        # order id -> [side, price, remaining qty, owner]; only live (resting) orders
        self._orders: dict[int, list[int]] = {}
        self._next_id = 1

    # ----------------------------------------------------------------------------- orders
    def limit(self, side: int, price: int, qty: int, owner: int = 0) -> tuple[int, list[Fill]]:
        """Submit a limit order of ``qty`` shares at ``price`` ticks.

        The marketable part trades at once against the opposite side (the fills, best price
        first); the rest rests under the returned order id (see ``resting(order_id)``).
        """
        if qty <= 0:
            raise ValueError(f"qty must be a positive number of shares, got {qty}")
        oid = self._next_id
        self._next_id = oid + 1
        opposite = self._halves[-side].keys
        if opposite and opposite[-1] >= -side * price:
            fills, qty = self._match(side, -side * price, qty, owner)
            if not qty:
                return oid, fills
        else:
            fills = []
        self._orders[oid] = [side, price, qty, owner]
        half = self._halves[side]
        key = side * price
        level = half.levels.get(key)
        if level is None:
            insort(half.keys, key)
            half.levels[key] = [qty, deque((oid,))]
        else:
            level[0] += qty
            level[1].append(oid)
        return oid, fills

    def market(self, side: int, qty: int, owner: int = 0) -> list[Fill]:
        """Trade ``qty`` shares against the opposite side at any price; nothing rests.

        Against an empty (or too thin) side the order fills what it can: no fills at all says
        the side was empty, and the shares not traded are ``qty - sum(f.qty for f in fills)``.
        It never raises for lack of liquidity.
        """
        if qty <= 0:
            raise ValueError(f"qty must be a positive number of shares, got {qty}")
        return self._match(side, _NO_LIMIT, qty, owner)[0]

    def immediate(self, side: int, price: int, qty: int, owner: int = 0) -> list[Fill]:
        """Immediate-or-cancel: trade up to ``qty`` at ``price`` or better; nothing rests."""
        if qty <= 0:
            raise ValueError(f"qty must be a positive number of shares, got {qty}")
        return self._match(side, -side * price, qty, owner)[0]

    def cancel(self, order_id: int, qty: int | None = None) -> int:
        """Cancel ``qty`` shares (all when None) of a resting order; return the shares cancelled.

        An id that is unknown, already filled or already cancelled cancels nothing and returns
        0. A partial cancel keeps the order's place in its queue.
        """
        order = self._orders.get(order_id)
        if order is None:
            return 0
        side, price, remaining, _ = order
        if qty is None or qty >= remaining:
            qty = remaining
            del self._orders[order_id]
        elif qty <= 0:
            return 0
        else:
            order[2] = remaining - qty
        half = self._halves[side]
        key = side * price
        level = half.levels[key]
        level[0] -= qty
        if not level[0]:
            half.remove_level(key)
        return qty

    def reduce(self, side: int, price: int, qty: int, owner: int | None = None) -> int:
        """Cancel up to ``qty`` shares resting at (side, price), newest orders first.

        Only orders of ``owner`` are touched when it is given. Returns the shares removed. Used
        by replay for cancels of orders it never saw (placed before the tape starts, or deeper
        than its levels).
        """
        level = self._halves[side].levels.get(side * price)
        if level is None or qty <= 0:
            return 0
        done = 0
        for oid in reversed(list(level[1])):
            order = self._orders.get(oid)
            if order is None or (owner is not None and order[3] != owner):
                continue
            done += self.cancel(oid, qty - done)
            if done == qty:
                break
        return done

    def quote(self, side: int, price: int, qty: int, owner: int = 0) -> tuple[int, int, list]:
        """Make ``owner``'s resting orders on ``side`` one order at ``price`` -> (orders
        placed, orders cancelled, fills): its oldest order at ``price`` stays, the others on
        that side are cancelled; with none at ``price`` a limit order of ``qty`` shares is
        placed; ``qty`` 0 cancels the side."""
        placed = cancelled = 0
        kept = False
        for oid, order_side, order_price, _ in self.owned(owner):
            if order_side == side and (kept or order_price != price or qty == 0):
                self.cancel(oid)
                cancelled += 1
            else:
                kept = kept or order_side == side
        fills: list[Fill] = []
        if not kept and qty > 0:
            fills = self.limit(side, price, qty, owner)[1]
            placed = 1
        return placed, cancelled, fills

    def cancel_owner(self, owner: int) -> int:
        """Cancel every resting order of ``owner``; the number cancelled."""
        mine = [oid for oid, *_ in self.owned(owner)]
        for oid in mine:
            self.cancel(oid)
        return len(mine)

    def owned(self, owner: int) -> list[tuple[int, int, int, int]]:
        """The live orders of ``owner``, oldest first: (order id, side, price, qty)."""
        return [(oid, s, p, q) for oid, (s, p, q, o) in self._orders.items() if o == owner]

    def _match(self, side: int, limit_key: int, qty: int, owner: int) -> tuple[list[Fill], int]:
        """Trade ``qty`` against the opposite side while its best key is >= ``limit_key``;
        return the fills and the shares left over."""
        fills: list[Fill] = []
        new = tuple.__new__
        half = self._halves[-side]
        keys = half.keys
        orders = self._orders
        levels = half.levels
        while qty and keys and keys[-1] >= limit_key:
            key = keys[-1]
            level = levels[key]
            queue = level[1]
            price = -side * key
            traded = 0
            while qty and queue:
                oid = queue[0]
                order = orders.get(oid)
                if order is None:  # cancelled earlier: lazy deletion
                    queue.popleft()
                    continue
                size = order[2]
                if size <= qty:
                    queue.popleft()
                    del orders[oid]
                else:
                    order[2] = size - qty
                    size = qty
                qty -= size
                traded += size
                fills.append(new(Fill, (price, size, oid, order[3], owner, side)))
            level[0] -= traded
            if not level[0]:
                half.remove_level(key)
        return fills, qty

    # ------------------------------------------------------------------------------ queries
    def best_bid(self) -> tuple[int, int] | None:
        """(price, volume) of the best bid, or None when there is no bid."""
        half = self._halves[1]
        if not half.keys:
            return None
        key = half.keys[-1]
        return key, half.levels[key][0]

    def best_ask(self) -> tuple[int, int] | None:
        """(price, volume) of the best ask, or None when there is no ask."""
        half = self._halves[-1]
        if not half.keys:
            return None
        key = half.keys[-1]
        return -key, half.levels[key][0]

    def mid(self) -> float | None:
        """Mid price in ticks, or None unless both sides are present."""
        bids, asks = self._halves[1].keys, self._halves[-1].keys
        if not bids or not asks:
            return None
        return (bids[-1] - asks[-1]) / 2

    def depth(self, levels: int = 10) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        """The best ``levels`` levels of each side: (bids, asks), each a list of (price, volume)
        with the best level first."""
        out = []
        for side in (1, -1):
            half = self._halves[side]
            book = half.levels
            out.append([(side * k, book[k][0]) for k in half.keys[: -levels - 1 : -1]])
        return out[0], out[1]

    def volume_at(self, side: int, price: int) -> int:
        """Shares resting at (side, price)."""
        level = self._halves[side].levels.get(side * price)
        return 0 if level is None else level[0]

    def resting(self, order_id: int) -> int:
        """Shares still resting under ``order_id`` (0 once filled or cancelled)."""
        order = self._orders.get(order_id)
        return 0 if order is None else order[2]

    def order(self, order_id: int) -> tuple[int, int, int, int] | None:
        """(side, price, remaining qty, owner) of a resting order, or None."""
        order = self._orders.get(order_id)
        return None if order is None else (order[0], order[1], order[2], order[3])

    def orders_at(self, side: int, price: int) -> list[tuple[int, int, int]]:
        """The live orders at (side, price) in queue order: (order id, qty, owner)."""
        level = self._halves[side].levels.get(side * price)
        queue = () if level is None else level[1]
        orders = self._orders
        return [(oid, orders[oid][2], orders[oid][3]) for oid in queue if oid in orders]

    def __len__(self) -> int:
        """Number of resting orders."""
        return len(self._orders)

    def __repr__(self) -> str:
        return f"OrderBook(bid={self.best_bid()}, ask={self.best_ask()}, orders={len(self)})"
