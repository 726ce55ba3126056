# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
# distutils: language = c++
"""A limit order book with price-time priority, compiled (Cython over C++).

Prices are integer ticks, quantities integer shares (or lots: 64-bit, up to ``MAX_QTY`` an order),
sides +1 (buy) and -1 (sell), as in LOBSTER.
Owners are integers below 2**20 chosen by the caller (the market gives each seat and background
trader one); an owner below zero trades without an account.

Layout: each side is a C++ ``std::map`` from ``key = side * price`` to a level (volume and the
first and last order of a doubly linked FIFO list), so the best level of either side is the
largest key and a bid and an ask are matched by the same code: an incoming order of side ``s``
and limit ``p`` crosses the opposite side while that side's best key is ``>= -s * p``. Orders
live in a vector of slots; each keeps its level and its neighbours in two doubly linked lists,
its level's queue and its owner's resting orders, so a cancel, and each order of an owner's
cancel-all, takes constant time (no search). Accounts are one record per owner. Ids count up
from 1 (an id is its slot); a book made with ``recycle=True`` reuses the slots of orders that
are gone, so its memory follows the orders resting rather than every order of the day, and an
id is its slot plus 2**32 times the slot's generation, so a stale id still finds nothing.

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
cimport cython
from cpython.exc cimport PyErr_CheckSignals
from cython.operator cimport dereference as deref, predecrement as dec, preincrement as inc
from libcpp.unordered_map cimport unordered_map
from libcpp.utility cimport pair
from libcpp.vector cimport vector

cnp.import_array()

cdef extern from *:
    """
    template <class Map>
    static inline typename Map::iterator insert_before(
        Map* map, typename Map::iterator hint, const typename Map::value_type& value
    ) {
        return map->insert(hint, value);  // amortized constant time: no second search
    }
    """
    LevelIter insert_before(Half* half, LevelIter hint, pair[i64, Level] value) except +

__all__ = [
    "Side", "Fill", "OrderBook", "LIMIT", "MARKET", "REPLACE", "CANCEL_ALL", "HANDLE", "QUOTE",
    "top_levels", "MAX_QTY",
]

LIMIT, MARKET, REPLACE, CANCEL_ALL, HANDLE = K_LIMIT, K_MARKET, K_REPLACE, K_CANCEL_ALL, K_HANDLE
QUOTE = K_QUOTE
MAX_QTY = QTY_MAX  # the most shares (lots) one order holds: 2**53 - 1

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


cdef i64 SLOT_MASK = 0xFFFFFFFF


def _rebuild(
    list orders, list owned, list generations, list free, bint recycle, list accounts,
    i64 volume, i64 trades,
):
    """Unpickle: a book holding ``orders`` (id, side, price, qty, owner) in queue order, their
    ids in their owners' order (``owned``), its slots' ``generations`` and ``free`` slots, and
    the owners' ``accounts`` (position, cash, traded, fills) by owner id."""
    cdef OrderBook book = OrderBook(recycle=recycle)
    book._orders.resize(len(generations))
    for slot, generation in enumerate(generations):
        book._orders[slot].generation = generation
    for slot in free:
        book._free.push_back(slot)
    for oid, side, price, qty, owner in orders:
        book._rest(oid & SLOT_MASK, side, price, qty, owner)
    for oid in owned:
        book._own(oid & SLOT_MASK)
    for position, cash, traded, fills in accounts:
        book._accounts.push_back(Account(position, cash, traded, fills))
    book.volume, book.trades = volume, trades
    return book


cdef class OrderBook:
    """A price-time priority limit order book.

    With ``record=True`` every change of its resting orders is appended to ``log`` as a
    LOBSTER message (time ``now``, type, order id, size, price ticks, direction): 1 for an
    order that rests, 2 / 3 for a partial / full cancel, 4 for each execution of a resting
    order (direction: the resting order's side). With ``recycle=True`` (not with ``record``)
    the slots of orders that are gone are reused: ids are then unique handles that no longer
    count up (see the module's docstring).

    Examples:
        >>> book = OrderBook()
        >>> oid, fills = book.limit(Side.SELL, 10_001, 50, owner=7)
        >>> book.best_ask()
        (10001, 50)
        >>> [(f.price, f.qty, f.maker_owner) for f in book.market(Side.BUY, 20, owner=3)]
        [(10001, 20, 7)]
        >>> book.cancel(oid)
        30
    """

    def __cinit__(self, bint record=False, bint recycle=False):
        if record and recycle:
            raise ValueError("a recording book keeps every order id: record and recycle exclude each other")
        self._orders.resize(1)
        self._recycle = recycle
        self._live = 0
        self.volume = self.trades = 0
        self._record = record
        self.now = 0.0
        self.log = [] if record else None

    cdef inline Half* _half(self, int side) noexcept:
        return &self._bids if side == 1 else &self._asks

    cdef inline Order* _find(self, i64 order_id) noexcept:
        """The record of order ``order_id`` (resting or gone), or NULL for an id this book never
        gave or whose slot has since held another order."""
        cdef i64 slot = order_id & SLOT_MASK
        if order_id <= 0 or slot == 0 or slot >= <i64>self._orders.size():
            return NULL
        cdef Order* order = &self._orders[slot]
        return order if order.generation == order_id >> 32 else NULL

    cdef inline i64 _slot(self) except -1:
        """A slot for a new order: a freed one, else a new one."""
        cdef i64 slot
        if not self._free.empty():
            slot = self._free.back()
            self._free.pop_back()
            return slot
        slot = self._orders.size()
        if slot > I32_MAX:
            raise ValueError(f"a book holds at most {I32_MAX} order slots")
        self._orders.resize(slot + 1)
        return slot

    cdef inline void _release(self, i64 slot) noexcept:
        """The order in ``slot`` is gone: free the slot when recycling."""
        if self._recycle:
            self._orders[slot].generation += 1
            self._free.push_back(slot)

    @cython.final
    cdef Owned* _list(self, i64 owner, bint make) noexcept:
        """``owner``'s list of resting orders (a new, empty one when it has none and ``make``,
        else NULL). The pointer is good until the next call that makes a list."""
        if owner >= 0:
            if owner >= <i64>self._owned.size():
                if not make:
                    return NULL
                self._owned.resize(owner + 1)
            return &self._owned[owner]
        if not make and self._owned_negative.count(owner) == 0:
            return NULL
        return &self._owned_negative[owner]

    @cython.final
    cdef void _own(self, i64 slot) noexcept:
        """Put the order in ``slot`` at the end of its owner's list."""
        cdef Order* order = &self._orders[slot]
        cdef Owned* owned = self._list(order.owner, True)
        order.owner_prev, order.owner_next = owned.tail, 0
        if owned.tail:
            self._orders[owned.tail].owner_next = slot
        else:
            owned.head = slot
        owned.tail = slot

    @cython.final
    cdef void _disown(self, i64 slot) noexcept:
        """Take the order in ``slot`` (gone) out of its owner's list."""
        cdef Order* order = &self._orders[slot]
        cdef Owned* owned = self._list(order.owner, False)
        if order.owner_prev:
            self._orders[order.owner_prev].owner_next = order.owner_next
        else:
            owned.head = order.owner_next
        if order.owner_next:
            self._orders[order.owner_next].owner_prev = order.owner_prev
        else:
            owned.tail = order.owner_prev

    cdef inline i64 _id(self, i64 slot) noexcept:
        """The id of the order in ``slot``."""
        return slot + (<i64>self._orders[slot].generation << 32)

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
        return self._reduce(side, price, qty, 0 if owner is None else owner, owner is None)

    def run(
        self,
        const cnp.float64_t[:] time,
        const cnp.int32_t[:] kind,
        const cnp.int32_t[:] side,
        const cnp.int32_t[:] price,
        const cnp.int32_t[:] qty,
        const cnp.int32_t[:] owner,
        const cnp.int32_t[:] ref,
        dict handlers,
        bint collect=True,
    ):
        """Carry out a batch of order rows in order -> (fills, orders submitted, orders
        cancelled); with ``collect=False`` no fill objects are made (the owners' accounts
        are kept either way) and the fills returned are empty.

        Each row is (time, kind, side, price, qty, owner, ref), arrays of shape (n,), float64
        and then int32 (`envs.simulator.orders.Orders`); kinds:
        LIMIT, MARKET, REPLACE (cancel the owner's resting orders, then a limit order),
        CANCEL_ALL, HANDLE (``handlers[owner].handle(book, ref)`` returns its fills). The
        time only stamps recorded messages.
        """
        cdef list fills = [] if collect else None
        cdef Py_ssize_t i, n = kind.shape[0]
        cdef i64 counts[2]
        counts[0] = counts[1] = 0
        for i in range(n):
            if i & (SIGNAL_EVERY - 1) == SIGNAL_EVERY - 1:  # a power of 2
                PyErr_CheckSignals()  # an interrupt raises here
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
    @cython.final
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

    @cython.final
    cdef i64 _limit(self, int side, i64 price, i64 qty, i64 owner, list fills) except -1:
        check_owner(owner)  # before a slot is taken
        cdef Half* opposite = self._half(-side)
        cdef LevelIter best
        if not opposite.empty():
            best = opposite.end()
            dec(best)
            if deref(best).first >= -side * price:
                qty = self._match(side, -side * price, qty, owner, fills)
        cdef i64 slot = self._slot()
        cdef i64 oid = self._id(slot)
        if not qty:
            self._release(slot)  # traded in full: the id is spent
            return oid
        self._rest(slot, side, price, qty, owner)
        self._own(slot)
        if self._record:
            self.log.append((self.now, M_NEW, oid, qty, price, side))
        return oid

    @cython.final
    cdef int _rest(self, i64 slot, int side, i64 price, i64 qty, i64 owner) except -1:
        """Put the order in ``slot`` at the back of its level's queue."""
        cdef Order* order = &self._orders[slot]
        order.side, order.price, order.qty, order.owner = side, price, qty, owner
        order.next = 0
        cdef Half* half = self._half(side)
        cdef i64 key = side * price
        cdef LevelIter it = half.lower_bound(key)  # its level, or where a new one goes
        cdef Level new
        cdef Level* level
        if it == half.end() or deref(it).first != key:
            order.prev = 0
            new.volume, new.head, new.tail = qty, slot, slot
            order.level = insert_before(half, it, pair[i64, Level](key, new))
        else:
            order.level = it
            level = &deref(it).second
            order.prev = level.tail
            self._orders[level.tail].next = slot
            level.tail = slot
            level.volume += qty
        self._live += 1
        return 0

    @cython.final
    cdef i64 _match(self, int side, i64 limit_key, i64 qty, i64 owner, list fills) except -1:
        """Trade ``qty`` shares against the opposite side while its best key is
        >= ``limit_key``, appending the fills (unless ``fills`` is None); return the shares
        that did not trade."""
        cdef Half* half = self._half(-side)
        cdef LevelIter it
        cdef Level* level
        cdef Order* order
        cdef i64 key, price, slot, oid, size, traded
        cdef bint gone
        check_owner(owner)
        while qty and not half.empty():
            it = half.end()
            dec(it)
            key = deref(it).first
            if key < limit_key:
                break
            level = &deref(it).second
            price = -side * key
            traded = 0
            slot = level.head
            while qty and slot:
                order = &self._orders[slot]
                oid = self._id(slot)
                size = order.qty
                gone = size <= qty
                if gone:
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
                if gone:
                    self._disown(slot)
                    self._release(slot)
                slot = level.head
            level.volume -= traded
            self.volume += traded
            if level.volume == 0:
                half.erase(it)
        return qty

    cdef inline void _settle(self, i64 owner, i64 side, i64 qty, i64 price) noexcept:
        """Book one side of a fill into ``owner``'s account."""
        if owner < 0:
            return
        if owner >= <i64>self._accounts.size():
            self._accounts.resize(owner + 1)
        cdef Account* account = &self._accounts[owner]
        account.position += side * qty
        account.cash -= side * qty * price
        account.traded += qty
        account.fills += 1

    @cython.final
    cdef i64 _reduce(self, int side, i64 price, i64 qty, i64 owner, bint any_owner) except -1:
        """`reduce`: up to ``qty`` shares at (side, price), newest first, of ``owner`` (of any
        owner when ``any_owner``); the shares removed."""
        cdef LevelIter it = self._half(side).find(side * price)
        if qty <= 0 or it == self._half(side).end():
            return 0
        cdef i64 slot = deref(it).second.tail, prev, done = 0
        while slot and done < qty:  # newest first; a cancel leaves the older ones in place
            prev = self._orders[slot].prev
            if any_owner or self._orders[slot].owner == owner:
                done += self._cancel(self._id(slot), qty - done)
            slot = prev
        return done

    @cython.final
    cdef i64 _cancel(self, i64 order_id, i64 qty) except -1:
        """Cancel ``qty`` shares (all when negative) of an order; return the shares cancelled."""
        cdef Order* order = self._find(order_id)
        if order == NULL:
            return 0
        cdef i64 remaining = order.qty
        cdef i64 n = remaining if qty < 0 or qty > remaining else qty
        if n == 0:
            return 0
        cdef LevelIter it = order.level
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
        cdef i64 slot = order_id & SLOT_MASK
        self._disown(slot)
        self._release(slot)
        if level.volume == 0:
            self._half(order.side).erase(it)
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

    @cython.final
    cdef int _quote(
        self, int side, i64 price, i64 qty, i64 owner, list fills, i64* counts
    ) except -1:
        """See `quote`; counts[0] += orders placed, counts[1] += orders cancelled."""
        cdef Owned* owned = self._list(owner, False)
        cdef bint kept = False
        cdef Order* order
        cdef i64 slot = owned.head if owned != NULL else 0
        cdef i64 after
        while slot:
            order = &self._orders[slot]
            after = order.owner_next  # read first: a cancel takes the order out of the list
            if order.side == side and (kept or order.price != price or qty == 0):
                self._cancel(self._id(slot), -1)
                counts[1] += 1
            else:
                kept = kept or order.side == side
            slot = after
        if not kept and qty > 0:
            self._limit(side, price, qty, owner, fills)
            counts[0] += 1
        return 0

    @cython.final
    cdef i64 _cancel_owner(self, i64 owner) except -1:
        cdef Owned* owned = self._list(owner, False)
        cdef i64 slot = owned.head if owned != NULL else 0
        cdef i64 after, cancelled = 0
        while slot:
            after = self._orders[slot].owner_next
            self._cancel(self._id(slot), -1)
            cancelled += 1
            slot = after
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
        if owner < 0 or owner >= <i64>self._accounts.size():
            return 0, 0, 0, 0
        cdef Account* a = &self._accounts[owner]
        return a.position, a.cash, a.traded, a.fills

    def positions(self, i64 start, i64 stop):
        """Net shares each owner in range(start, stop) bought through fills (negative: sold),
        int64 array of shape (stop - start,); owners must be >= 0."""
        out = np.zeros(max(stop - start, 0), dtype=np.int64)
        cdef cnp.int64_t[:] view = out
        cdef i64 owner
        for owner in range(max(start, 0), min(stop, <i64>self._accounts.size())):
            view[owner - start] = self._accounts[owner].position
        return out

    def owned(self, i64 owner):
        """The live orders of ``owner``, oldest first: (order id, side, price, qty)."""
        cdef list out = []
        cdef Owned* owned = self._list(owner, False)
        cdef i64 slot = owned.head if owned != NULL else 0
        cdef Order* o
        while slot:
            o = &self._orders[slot]
            out.append((self._id(slot), o.side, o.price, o.qty))
            slot = o.owner_next
        return out

    def volume_at(self, int side, i64 price):
        """Shares resting at (side, price)."""
        check_side(side)
        return level_volume(self, side, price)

    def resting(self, i64 order_id):
        """Shares still resting under ``order_id`` (0 once filled or cancelled)."""
        cdef Order* o = self._find(order_id)
        return 0 if o == NULL else o.qty

    def order(self, i64 order_id):
        """(side, price, remaining qty, owner) of a resting order, or None."""
        cdef Order* o = self._find(order_id)
        return None if o == NULL or o.qty == 0 else (o.side, o.price, o.qty, o.owner)

    def orders_at(self, int side, i64 price):
        """The live orders at (side, price) in queue order: (order id, qty, owner)."""
        check_side(side)
        cdef list out = []
        cdef LevelIter it = self._half(side).find(side * price)
        if it == self._half(side).end():
            return out
        cdef i64 slot = deref(it).second.head
        while slot:
            out.append((self._id(slot), self._orders[slot].qty, self._orders[slot].owner))
            slot = self._orders[slot].next
        return out

    def __len__(self):
        """Number of resting orders."""
        return self._live

    def copy(self, record=None):
        """An independent book in the same state: the same orders in the same queues under the
        same ids, the same accounts, counters and slots (a recording book's log too). With
        ``record`` True, a book that records its changes from now on (and reuses no slot):
        its log opens with its resting orders as new orders at ``now``, level by level in
        queue order, so that the log alone rebuilds it; with False, one that does not
        record."""
        cdef bint recording = self._record if record is None else bool(record)
        cdef bint recycle = self._recycle and not recording
        cdef OrderBook new = type(self).__new__(type(self), recording, recycle)
        new._orders, new._free = self._orders, self._free
        new._bids, new._asks = self._bids, self._asks
        new._owned, new._owned_negative = self._owned, self._owned_negative
        new._accounts = self._accounts
        new.volume, new.trades, new._live, new.now = self.volume, self.trades, self._live, self.now
        new.log = None if not recording else list(self.log) if self._record else self._resting()
        cdef Half* half
        cdef LevelIter it
        cdef i64 slot
        cdef int k
        for k in range(2):  # each resting order's level, in the new maps
            half = &new._bids if k == 0 else &new._asks
            it = half.begin()
            while it != half.end():
                slot = deref(it).second.head
                while slot:
                    new._orders[slot].level = it
                    slot = new._orders[slot].next
                inc(it)
        return new

    cdef list _resting(self):
        """The resting orders as LOBSTER new-order messages at ``now``: bids then asks, best
        level first, each level in queue order."""
        cdef list out = []
        cdef Half* half
        cdef LevelIter it
        cdef i64 slot
        cdef int side
        for side in (1, -1):
            half = self._half(side)
            it = half.end()
            while it != half.begin():
                dec(it)
                slot = deref(it).second.head
                while slot:
                    out.append((self.now, M_NEW, self._id(slot), self._orders[slot].qty,
                                self._orders[slot].price, side))
                    slot = self._orders[slot].next
        return out

    def __reduce__(self):
        if self._record:
            raise TypeError("a recording OrderBook cannot be pickled")
        orders = []
        for side in (1, -1):
            for price, _ in self._side_depth(side, 1LL << 62):
                orders += [(oid, side, price, qty, owner)
                           for oid, qty, owner in self.orders_at(side, price)]
        owned = [oid for owner in self._owners() for oid, _, _, _ in self.owned(owner)]
        accounts = [self.account(owner) for owner in range(self._accounts.size())]
        generations = [self._orders[slot].generation for slot in range(self._orders.size())]
        free = [slot for slot in self._free]
        return _rebuild, (
            orders, owned, generations, free, self._recycle, accounts, self.volume, self.trades
        )

    def _owners(self):
        """The owners with resting orders."""
        cdef list owners = [o for o in range(self._owned.size()) if self._owned[o].head]
        for entry in self._owned_negative:
            if entry.second.head:
                owners.append(entry.first)
        return owners

    def __repr__(self):
        return f"OrderBook(bid={self.best_bid()}, ask={self.best_ask()}, orders={len(self)})"


def top_levels(messages, i64 levels):
    """The top ``levels`` of the book after each of ``messages`` (a ``MESSAGE_DTYPE`` array of
    a tape that starts from an empty book and names every order it touches, a recorded one):
    int64 array (n, 4 * levels) in the layout of ``Tape.book`` (ask price, ask size, bid price,
    bid size per level; prices in ticks, sizes in shares; an empty level is EMPTY_ASK / EMPTY_BID
    with size 0). The compiled form of `envs.simulator.recording.book_snapshots`, which is its
    reference (tests/envs/test_recording.py holds them equal)."""
    from tradearena.envs.data.tapes import EMPTY_ASK, EMPTY_BID  # here: a book loads without pandas

    cdef Py_ssize_t n = len(messages)
    cdef const cnp.int64_t[:] kind = np.ascontiguousarray(messages["type"], dtype=np.int64)
    cdef const cnp.int64_t[:] ids = np.ascontiguousarray(messages["order_id"], dtype=np.int64)
    cdef const cnp.int64_t[:] size = np.ascontiguousarray(messages["size"], dtype=np.int64)
    cdef const cnp.int64_t[:] price = np.ascontiguousarray(messages["price"], dtype=np.int64)
    cdef const cnp.int64_t[:] side = np.ascontiguousarray(messages["direction"], dtype=np.int64)
    out = np.empty((n, 4 * levels), dtype=np.int64)
    cdef cnp.int64_t[:, :] rows = out
    cdef OrderBook book = OrderBook()
    cdef unordered_map[i64, i64] known  # the tape's order id -> the book's
    cdef unordered_map[i64, i64].iterator found
    cdef i64 empty_ask = EMPTY_ASK, empty_bid = EMPTY_BID
    cdef Py_ssize_t i
    cdef i64 k
    known.reserve(n)
    for i in range(n):
        k = kind[i]
        if k == M_NEW:
            check_side(side[i])
            check_qty(size[i])
            known[ids[i]] = book._limit(<int>side[i], price[i], size[i], 0, None)
        elif k == M_PARTIAL_CANCEL or k == M_DELETE or k == M_EXECUTE:
            found = known.find(ids[i])
            if found == known.end():
                raise KeyError(ids[i])
            book._cancel(deref(found).second, max(size[i], 0))
        if levels > 0:
            _top_row(&book._asks, -1, levels, empty_ask, &rows[i, 0])
            _top_row(&book._bids, 1, levels, empty_bid, &rows[i, 2])
    return out


cdef inline void _top_row(Half* half, i64 side, i64 levels, i64 empty, cnp.int64_t* row) noexcept:
    """Write ``half``'s best ``levels`` (price ticks, volume shares) into every fourth pair of
    ``row`` from its start, the rest as ``empty`` price and size 0."""
    cdef LevelIter it = half.end()
    cdef LevelIter first = half.begin()
    cdef i64 level = 0
    while level < levels and it != first:
        dec(it)
        row[4 * level] = side * deref(it).first
        row[4 * level + 1] = deref(it).second.volume
        level += 1
    while level < levels:
        row[4 * level] = empty
        row[4 * level + 1] = 0
        level += 1
