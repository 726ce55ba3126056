# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
# distutils: language = c++
"""A limit order book with price-time priority, compiled (Cython over C++).

Prices are integer ticks, quantities integer shares, sides +1 (buy) and -1 (sell), as in LOBSTER.
Owners are integers chosen by the caller (the market gives each seat and background trader one).

Layout: each side is a C++ ``std::map`` from ``key = side * price`` to a level (volume and the
first and last order of a doubly linked FIFO list), so the best level of either side is the
largest key and a bid and an ask are matched by the same code: an incoming order of side ``s``
and limit ``p`` crosses the opposite side while that side's best key is ``>= -s * p``. Orders
live in a vector indexed by their id (ids count up from 1), so a cancel finds and unlinks its
order in constant time plus one map look-up.

Besides single orders the book carries out whole batches of order rows (`run`), the market's
hot loop, and can record every change as a LOBSTER message (``record=True``), which is how
synthetic sessions become replayable tapes.

``tests/envs/reference_book.py`` is a plain-Python implementation of the same semantics; the
property tests check that both agree operation by operation.
"""

from collections import namedtuple
from enum import IntEnum

import numpy as np

cimport numpy as cnp
from cython.operator cimport dereference as deref, predecrement as dec
from libcpp.unordered_map cimport unordered_map
from libcpp.vector cimport vector

cnp.import_array()

__all__ = [
    "Side", "Fill", "OrderBook", "LIMIT", "MARKET", "REPLACE", "CANCEL_ALL", "HANDLE", "QUOTE"
]

LIMIT, MARKET, REPLACE, CANCEL_ALL, HANDLE = K_LIMIT, K_MARKET, K_REPLACE, K_CANCEL_ALL, K_HANDLE
QUOTE = K_QUOTE

cdef i64 NO_LIMIT = -(1LL << 62)  # a key every level's key exceeds: a market order's "limit"


class Side(IntEnum):
    """Order side, with LOBSTER's values."""

    BUY = 1
    SELL = -1


Fill = namedtuple("Fill", ["price", "qty", "maker_order", "maker_owner", "taker_owner", "taker_side"])
Fill.__doc__ = """One execution between a resting (maker) order and an incoming (taker) order.

price is in ticks (always the maker's price), qty in shares; taker_side is +1 when the taker
bought."""

cdef object _new_tuple = tuple.__new__


cdef inline int check_side(int side) except -1:
    if side != 1 and side != -1:
        raise ValueError(f"side must be +1 (buy) or -1 (sell), got {side}")
    return 0


cdef inline int check_qty(i64 qty) except -1:
    if qty <= 0 or qty > I32_MAX:
        raise ValueError(f"qty must be a positive number of shares up to {I32_MAX}, got {qty}")
    return 0


def _rebuild(list orders, i64 next_id, list accounts, i64 volume, i64 trades):
    """Unpickle: a book holding ``orders`` (id, side, price, qty, owner) in queue order and
    the owners' ``accounts`` (position, cash, traded, fills) by owner id."""
    cdef OrderBook book = OrderBook()
    book._orders.resize(next_id)
    for oid, side, price, qty, owner in orders:
        book._rest(oid, side, price, qty, owner)
        book._owned[owner].push_back(oid)
    for position, cash, traded, fills in accounts:
        book._position.push_back(position)
        book._cash.push_back(cash)
        book._traded.push_back(traded)
        book._fills.push_back(fills)
    book.volume, book.trades = volume, trades
    return book


cdef class OrderBook:
    """A price-time priority limit order book.

    With ``record=True`` every change of its resting orders is appended to ``log`` as a
    LOBSTER message (time ``now``, type, order id, size, price ticks, direction): 1 for an
    order that rests, 2 / 3 for a partial / full cancel, 4 for each execution of a resting
    order (direction: the resting order's side).

    >>> book = OrderBook()
    >>> oid, fills = book.limit(Side.SELL, 10_001, 50, owner=7)
    >>> book.best_ask()
    (10001, 50)
    >>> [(f.price, f.qty, f.maker_owner) for f in book.market(Side.BUY, 20, owner=3)]
    [(10001, 20, 7)]
    >>> book.cancel(oid)
    30
    """

    def __cinit__(self, bint record=False):
        self._orders.resize(1)
        self._live = 0
        self.volume = self.trades = 0
        self._record = record
        self.now = 0.0
        self.log = [] if record else None

    cdef inline Half* _half(self, int side):
        return &self._bids if side == 1 else &self._asks

    # ----------------------------------------------------------------------------- orders
    def limit(self, int side, i64 price, i64 qty, i64 owner=0):
        """Submit a limit order of ``qty`` shares at ``price`` ticks -> (order id, fills).

        The marketable part trades at once against the opposite side (the fills, best price
        first); the rest rests under the returned order id (see ``resting(order_id)``).
        """
        check_side(side)
        check_qty(qty)
        cdef list fills = []
        cdef i64 oid = self._limit(side, price, qty, owner, fills)
        return oid, fills

    def market(self, int side, i64 qty, i64 owner=0):
        """Trade ``qty`` shares against the opposite side at any price; nothing rests.

        Against an empty (or too thin) side the order fills what it can: no fills at all says
        the side was empty, and the shares not traded are ``qty - sum(f.qty for f in fills)``.
        It never raises for lack of liquidity.
        """
        check_side(side)
        check_qty(qty)
        cdef list fills = []
        self._match(side, NO_LIMIT, qty, owner, fills)
        return fills

    def immediate(self, int side, i64 price, i64 qty, i64 owner=0):
        """Immediate-or-cancel: trade up to ``qty`` at ``price`` or better; nothing rests."""
        check_side(side)
        check_qty(qty)
        cdef list fills = []
        self._match(side, -side * price, qty, owner, fills)
        return fills

    def cancel(self, i64 order_id, qty=None):
        """Cancel ``qty`` shares (all when None) of a resting order; return the shares cancelled.

        An id that is unknown, already filled or already cancelled cancels nothing and returns
        0. A partial cancel keeps the order's place in its queue.
        """
        return self._cancel(order_id, -1 if qty is None else max(<i64>qty, 0))

    def cancel_owner(self, i64 owner):
        """Cancel every resting order of ``owner``; return the number of orders cancelled."""
        return self._cancel_owner(owner)

    def quote(self, int side, i64 price, i64 qty, i64 owner=0):
        """Make ``owner``'s resting orders on ``side`` one order at ``price`` -> (orders
        placed, orders cancelled, fills).

        A live order of the owner already at ``price`` stays, keeping its place in the queue
        and its remaining size (the oldest, if several); the owner's other orders on that side
        are cancelled. With none at ``price``, a limit order of ``qty`` shares is placed (its
        marketable part trades at once, as any limit order). ``qty`` 0 cancels every order of
        the owner on that side. Orders on the other side are untouched. A market maker's quote
        that rests across steps.
        """
        check_side(side)
        if qty < 0:
            raise ValueError(f"qty must be >= 0 shares, got {qty}")
        cdef list fills = []
        cdef i64 counts[2]
        counts[0] = counts[1] = 0
        self._quote(side, price, qty, owner, fills, counts)
        return counts[0], counts[1], fills

    def reduce(self, int side, i64 price, i64 qty, owner=None):
        """Cancel up to ``qty`` shares resting at (side, price), newest orders first.

        Only orders of ``owner`` are touched when it is given. Returns the shares removed. Used
        by replay for cancels of orders it never saw (placed before the tape starts, or deeper
        than its levels).
        """
        check_side(side)
        cdef LevelIter it = self._half(side).find(side * price)
        if qty <= 0 or it == self._half(side).end():
            return 0
        cdef vector[i64] ids
        cdef i64 oid = deref(it).second.tail
        while oid:
            if owner is None or self._orders[oid].owner == owner:
                ids.push_back(oid)
            oid = self._orders[oid].prev
        cdef i64 done = 0
        for oid in ids:
            done += self._cancel(oid, qty - done)
            if done == qty:
                break
        return done

    def run(
        self,
        const cnp.float64_t[:] time,
        const cnp.int64_t[:] kind,
        const cnp.int64_t[:] side,
        const cnp.int64_t[:] price,
        const cnp.int64_t[:] qty,
        const cnp.int64_t[:] owner,
        const cnp.int64_t[:] ref,
        dict handlers,
        bint collect=True,
    ):
        """Carry out a batch of order rows in order -> (fills, orders submitted, orders
        cancelled); with ``collect=False`` no fill objects are made (the owners' accounts
        are kept either way) and the fills returned are empty.

        Each row is (time, kind, side, price, qty, owner, ref), arrays of shape (n,); kinds:
        LIMIT, MARKET, REPLACE (cancel the owner's resting orders, then a limit order),
        CANCEL_ALL, HANDLE (``handlers[owner].handle(book, ref)`` returns its fills). The
        time only stamps recorded messages.
        """
        cdef list fills = [] if collect else None
        cdef Py_ssize_t i, n = kind.shape[0]
        cdef i64 counts[2]
        counts[0] = counts[1] = 0
        for i in range(n):
            self.now = time[i]
            self._row(kind[i], side[i], price[i], qty[i], owner[i], ref[i], handlers, fills, counts)
        return fills if collect else [], counts[0], counts[1]

    def submit(self, i64 kind, i64 side, i64 price, i64 qty, i64 owner):
        """Carry out one order row (see `run`; not HANDLE) -> its fills."""
        cdef list fills = []
        cdef i64 counts[2]
        self._row(kind, side, price, qty, owner, -1, None, fills, counts)
        return fills

    # ------------------------------------------------------------------------- internals
    cdef int _row(
        self, i64 k, i64 side, i64 price, i64 qty, i64 owner, i64 ref, dict handlers,
        list fills, i64* counts,
    ) except -1:
        """One order row; counts[0] += orders submitted, counts[1] += orders cancelled."""
        if k == K_LIMIT or k == K_REPLACE:
            if k == K_REPLACE:
                counts[1] += self._cancel_owner(owner)
            check_side(side)
            check_qty(qty)
            self._limit(<int>side, price, qty, owner, fills)
            counts[0] += 1
        elif k == K_MARKET:
            check_side(side)
            check_qty(qty)
            self._match(<int>side, NO_LIMIT, qty, owner, fills)
            counts[0] += 1
        elif k == K_CANCEL_ALL:
            counts[1] += self._cancel_owner(owner)
        elif k == K_QUOTE:
            check_side(side)
            self._quote(<int>side, price, qty, owner, fills, counts)
        elif k == K_HANDLE and handlers is not None:
            handled = handlers[owner].handle(self, ref)
            if fills is not None:
                fills.extend(handled)
        else:
            raise ValueError(f"unknown order kind {k} from owner {owner}")
        return 0

    cdef i64 _limit(self, int side, i64 price, i64 qty, i64 owner, list fills) except -1:
        cdef i64 oid = self._orders.size()
        cdef Half* opposite = self._half(-side)
        cdef LevelIter best
        if not opposite.empty():
            best = opposite.end()
            dec(best)
            if deref(best).first >= -side * price:
                qty = self._match(side, -side * price, qty, owner, fills)
        self._orders.resize(oid + 1)
        if qty:
            self._rest(oid, side, price, qty, owner)
            self._owned[owner].push_back(oid)
            if self._record:
                self.log.append((self.now, M_NEW, oid, qty, price, side))
        return oid

    cdef int _rest(self, i64 oid, int side, i64 price, i64 qty, i64 owner) except -1:
        """Put order ``oid`` at the back of its level's queue."""
        if not -I32_MAX <= owner <= I32_MAX or oid > I32_MAX:
            raise ValueError(f"owners must be in [-{I32_MAX}, {I32_MAX}] and order ids at most that, got {owner}, {oid}")
        cdef Order* order = &self._orders[oid]
        order.side, order.price, order.qty, order.owner = side, price, qty, owner
        order.next = 0
        cdef Half* half = self._half(side)
        cdef i64 key = side * price
        cdef LevelIter it = half.find(key)
        cdef Level new
        cdef Level* level
        if it == half.end():
            order.prev = 0
            new.volume, new.head, new.tail = qty, oid, oid
            half.insert((key, new))
        else:
            level = &deref(it).second
            order.prev = level.tail
            self._orders[level.tail].next = oid
            level.tail = oid
            level.volume += qty
        self._live += 1
        return 0

    cdef i64 _match(self, int side, i64 limit_key, i64 qty, i64 owner, list fills) except -1:
        """Trade ``qty`` shares against the opposite side while its best key is
        >= ``limit_key``, appending the fills (unless ``fills`` is None); return the shares
        that did not trade."""
        cdef Half* half = self._half(-side)
        cdef LevelIter it
        cdef Level* level
        cdef Order* order
        cdef i64 key, price, oid, size, traded
        while qty and not half.empty():
            it = half.end()
            dec(it)
            key = deref(it).first
            if key < limit_key:
                break
            level = &deref(it).second
            price = -side * key
            traded = 0
            oid = level.head
            while qty and oid:
                order = &self._orders[oid]
                size = order.qty
                if size <= qty:
                    order.qty = 0
                    self._live -= 1
                    level.head = order.next
                    if order.next:
                        self._orders[order.next].prev = 0
                    else:
                        level.tail = 0
                else:
                    order.qty = size - qty
                    size = qty
                qty -= size
                traded += size
                self._settle(order.owner, -side, size, price)
                self._settle(owner, side, size, price)
                if fills is not None:
                    fills.append(_new_tuple(Fill, (price, size, oid, order.owner, owner, side)))
                self.trades += 1
                if self._record:
                    self.log.append((self.now, M_EXECUTE, oid, size, price, -side))
                oid = level.head
            level.volume -= traded
            self.volume += traded
            if level.volume == 0:
                half.erase(it)
        return qty

    cdef inline void _settle(self, i64 owner, i64 side, i64 qty, i64 price):
        """Book one side of a fill into ``owner``'s account."""
        if owner < 0:
            return
        if owner >= <i64>self._position.size():
            self._position.resize(owner + 1)
            self._cash.resize(owner + 1)
            self._traded.resize(owner + 1)
            self._fills.resize(owner + 1)
        self._position[owner] += side * qty
        self._cash[owner] -= side * qty * price
        self._traded[owner] += qty
        self._fills[owner] += 1

    cdef i64 _cancel(self, i64 order_id, i64 qty) except -1:
        """Cancel ``qty`` shares (all when negative) of an order; return the shares cancelled."""
        if order_id <= 0 or order_id >= <i64>self._orders.size():
            return 0
        cdef Order* order = &self._orders[order_id]
        cdef i64 remaining = order.qty
        cdef i64 n = remaining if qty < 0 or qty > remaining else qty
        if n == 0:
            return 0
        cdef Half* half = self._half(order.side)
        cdef LevelIter it = half.find(order.side * order.price)
        cdef Level* level = &deref(it).second
        level.volume -= n
        if self._record:
            kind = M_PARTIAL_CANCEL if n < remaining else M_DELETE
            self.log.append((self.now, kind, order_id, n, order.price, order.side))
        if n < remaining:
            order.qty = remaining - n
            return n
        order.qty = 0
        self._live -= 1
        if level.volume == 0:
            half.erase(it)
            return n
        if order.prev:
            self._orders[order.prev].next = order.next
        else:
            level.head = order.next
        if order.next:
            self._orders[order.next].prev = order.prev
        else:
            level.tail = order.prev
        return n

    cdef int _quote(
        self, int side, i64 price, i64 qty, i64 owner, list fills, i64* counts
    ) except -1:
        """See `quote`; counts[0] += orders placed, counts[1] += orders cancelled. The owner's
        list of order ids is compacted on the way (ids no longer resting are dropped)."""
        cdef unordered_map[i64, vector[i64]].iterator it = self._owned.find(owner)
        cdef vector[i64] live
        cdef bint kept = False
        cdef Order* order
        cdef i64 oid
        if it != self._owned.end():
            for oid in deref(it).second:
                order = &self._orders[oid]
                if order.qty == 0:
                    continue
                if order.side == side and (kept or order.price != price or qty == 0):
                    self._cancel(oid, -1)
                    counts[1] += 1
                    continue
                kept = kept or order.side == side
                live.push_back(oid)
            deref(it).second.swap(live)
        if not kept and qty > 0:
            self._limit(side, price, qty, owner, fills)
            counts[0] += 1
        return 0

    cdef i64 _cancel_owner(self, i64 owner) except -1:
        cdef unordered_map[i64, vector[i64]].iterator it = self._owned.find(owner)
        if it == self._owned.end():
            return 0
        cdef i64 oid, cancelled = 0
        for oid in deref(it).second:
            if self._cancel(oid, -1):
                cancelled += 1
        deref(it).second.clear()
        return cancelled

    # ------------------------------------------------------------------------------ queries
    def best_bid(self):
        """(price, volume) of the best bid, or None when there is no bid."""
        if self._bids.empty():
            return None
        cdef LevelIter it = self._bids.end()
        dec(it)
        return deref(it).first, deref(it).second.volume

    def best_ask(self):
        """(price, volume) of the best ask, or None when there is no ask."""
        if self._asks.empty():
            return None
        cdef LevelIter it = self._asks.end()
        dec(it)
        return -deref(it).first, deref(it).second.volume

    def mid(self):
        """Mid price in ticks, or None unless both sides are present."""
        return mid_ticks(self) if quoted(self) else None

    def depth(self, int levels=10):
        """The best ``levels`` levels of each side: (bids, asks), each a list of (price, volume)
        with the best level first."""
        return self._side_depth(1, levels), self._side_depth(-1, levels)

    cdef list _side_depth(self, int side, i64 levels):
        cdef Half* half = self._half(side)
        cdef list out = []
        if half.empty():
            return out
        cdef LevelIter it = half.end()
        cdef LevelIter first = half.begin()
        while levels > 0:
            dec(it)
            out.append((side * deref(it).first, deref(it).second.volume))
            levels -= 1
            if it == first:
                break
        return out

    def account(self, i64 owner):
        """What ``owner``'s fills add up to: (net shares bought, cash in ticks x shares, shares
        traded, fills)."""
        if owner < 0 or owner >= <i64>self._position.size():
            return 0, 0, 0, 0
        return self._position[owner], self._cash[owner], self._traded[owner], self._fills[owner]

    def positions(self, i64 start, i64 stop):
        """Net shares each owner in range(start, stop) bought through fills (negative: sold),
        int64 array of shape (stop - start,); owners must be >= 0."""
        out = np.zeros(max(stop - start, 0), dtype=np.int64)
        cdef cnp.int64_t[:] view = out
        cdef i64 owner
        for owner in range(max(start, 0), min(stop, <i64>self._position.size())):
            view[owner - start] = self._position[owner]
        return out

    def owned(self, i64 owner):
        """The live orders of ``owner``, oldest first: (order id, side, price, qty)."""
        cdef list out = []
        cdef unordered_map[i64, vector[i64]].iterator it = self._owned.find(owner)
        if it == self._owned.end():
            return out
        cdef i64 oid
        cdef Order* o
        for oid in deref(it).second:
            o = &self._orders[oid]
            if o.qty:
                out.append((oid, o.side, o.price, o.qty))
        return out

    def volume_at(self, int side, i64 price):
        """Shares resting at (side, price)."""
        check_side(side)
        cdef LevelIter it = self._half(side).find(side * price)
        return 0 if it == self._half(side).end() else deref(it).second.volume

    def resting(self, i64 order_id):
        """Shares still resting under ``order_id`` (0 once filled or cancelled)."""
        if order_id <= 0 or order_id >= <i64>self._orders.size():
            return 0
        return self._orders[order_id].qty

    def order(self, i64 order_id):
        """(side, price, remaining qty, owner) of a resting order, or None."""
        if order_id <= 0 or order_id >= <i64>self._orders.size():
            return None
        cdef Order* o = &self._orders[order_id]
        return None if o.qty == 0 else (o.side, o.price, o.qty, o.owner)

    def orders_at(self, int side, i64 price):
        """The live orders at (side, price) in queue order: (order id, qty, owner)."""
        check_side(side)
        cdef list out = []
        cdef LevelIter it = self._half(side).find(side * price)
        if it == self._half(side).end():
            return out
        cdef i64 oid = deref(it).second.head
        while oid:
            out.append((oid, self._orders[oid].qty, self._orders[oid].owner))
            oid = self._orders[oid].next
        return out

    def __len__(self):
        """Number of resting orders."""
        return self._live

    def __reduce__(self):
        if self._record:
            raise TypeError("a recording OrderBook cannot be pickled")
        orders = []
        for side in (1, -1):
            for price, _ in self._side_depth(side, 1LL << 62):
                orders += [(oid, side, price, qty, owner)
                           for oid, qty, owner in self.orders_at(side, price)]
        accounts = [self.account(owner) for owner in range(self._position.size())]
        return _rebuild, (orders, <i64>self._orders.size(), accounts, self.volume, self.trades)

    def __repr__(self):
        return f"OrderBook(bid={self.best_bid()}, ask={self.best_ask()}, orders={len(self)})"
