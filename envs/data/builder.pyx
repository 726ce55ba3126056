# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
# distutils: language = c++
"""A feed's book events carried out on a book of its own, written as LOBSTER messages with
the book's top levels after each one, compiled: what `envs.data.convert` builds a tape with.

The events (in the order the reader puts them, one per row of int64 columns ``kind``,
``side`` (+1 bid, -1 ask), ``price`` (ticks), ``qty`` (lots), ``order`` (the feed's order id)
and ``time`` (ns)) are of two families:

- by level (L2): ``LEVEL`` sets the volume at (side, price), a run of them between
  ``SNAPSHOT_BEGIN`` and ``SNAPSHOT_END`` replaces the whole book, ``TRADE`` (order 0) takes
  ``qty`` from the maker's ``side`` at ``price`` or better, best first. A level that grows
  becomes a new order (LOBSTER type 1, a fresh id); one that shrinks, a cancel naming no order
  (type 2, or 3 when the level empties, order id 0): the feed does not say whose; a trade, an
  execution (type 4, order id 0, the trade's size) on the maker's side;
- by order (L3): ``CREATE``, ``CHANGE`` (the order's new price and remaining volume) and
  ``DELETE`` name the feed's order; ``TRADE`` names the maker. A new order is type 1 with a
  fresh id; a change that keeps the price and lowers the volume, a partial cancel (type 2); one
  that moves the price or raises the volume re-queues it (type 3, then type 1 with a fresh id),
  as exchanges do; a delete, type 3. A trade is an execution (type 4) of the maker when it is
  first in time at the best price of its side (where the replay's execution, which takes a
  level's volume in time priority, finds it); otherwise a cancel of the maker's traded volume
  (``trades_out_of_queue``), so the book stays exact.

Rules, each counted:

- band: a quote that would add a price level (L2) or a new order (L3) more than ``band`` (a
  fraction) away from the reference price (the last trade's; before the first, ``reference``)
  is dropped (``out_of_band``); an L2 level already in the book follows the feed wherever it
  goes;
- crossing (``crossings`` events, ``crossed_lots``): by level, volume added at a price that
  crosses the other side's best first removes the crossed levels of the other side, type 3
  each: the feed's newest word wins. By order, an order that crosses is held back, off the
  tape: the exchange matched it, and the feed reports its trades and the makers' changes and
  deletions, and the order's own; its events change the held order, trades naming it as the
  maker take from it, and it is placed (type 1) once it crosses no more. The tape's book is
  then the feed's orders as given wherever those do not cross;
- ``unknown_order_events``: L3 changes and deletes of orders not in the book (never created,
  dropped out of band); ``trades_unknown``: trades of such makers, and
  L2 trades of no side inside the spread, which change nothing; ``traded_beyond_book``: lots
  of trades beyond the volume the book held.
"""

import numpy as np

from cython.operator cimport dereference as deref, postincrement as inc, predecrement as dec
from cpython.exc cimport PyErr_CheckSignals
from libc.string cimport memcpy
from libcpp.list cimport list as clist
from libcpp.map cimport map as cmap
from libcpp.unordered_map cimport unordered_map
from libcpp.vector cimport vector

from tradearena.envs.data.vectors cimport i64_array, i8_array

ctypedef long long i64
ctypedef signed char i8

__all__ = [
    "CHANGE",
    "CREATE",
    "DELETE",
    "LEVEL",
    "SNAPSHOT_BEGIN",
    "SNAPSHOT_END",
    "TRADE",
    "build",
]

cdef enum:
    E_LEVEL = 1
    E_SNAPSHOT_BEGIN = 2
    E_SNAPSHOT_END = 3
    E_TRADE = 4
    E_CREATE = 5
    E_CHANGE = 6
    E_DELETE = 7
    # LOBSTER message types
    NEW = 1
    CANCEL = 2
    DELETE_ORDER = 3
    EXECUTE = 4

LEVEL, SNAPSHOT_BEGIN, SNAPSHOT_END, TRADE = E_LEVEL, E_SNAPSHOT_BEGIN, E_SNAPSHOT_END, E_TRADE
CREATE, CHANGE, DELETE = E_CREATE, E_CHANGE, E_DELETE

cdef i64 EMPTY_ASK = 9_999_999_999
cdef i64 EMPTY_BID = -9_999_999_999

ctypedef cmap[i64, i64] Levels  # price -> lots
ctypedef clist[i64] Queue  # feed order ids at a price, oldest first
ctypedef cmap[i64, Queue] Queues

cdef extern from *:
    """
    template <class M> static inline typename M::mapped_type* slot_of(M* m, long long key) {
        return &(*m)[key];
    }
    """
    # the value at ``key`` of a map (made when missing), in place
    i64* volume_at "slot_of"(Levels* levels, i64 price) noexcept
    Queue* queue_at "slot_of"(Queues* queues, i64 price) noexcept


cdef struct Order:
    i64 tape_id
    i64 price
    i64 qty
    int side
    Queue.iterator at  # its place in its price's queue


cdef struct Held:  # an order held back while it crosses the book
    i64 price
    i64 qty
    int side


cdef class _Book:
    """The converter's book and the tape written from it."""

    cdef Levels bids, asks
    cdef Queues bid_queues, ask_queues
    cdef unordered_map[i64, Order] orders
    cdef unordered_map[i64, Held] held
    cdef Queues held_bids, held_asks  # price -> held feed ids, oldest first
    cdef Levels pending_bids, pending_asks
    cdef int n_levels
    cdef double band
    cdef i64 reference, next_id
    cdef i64 now
    cdef vector[i64] time, order_id, size, price, rows
    cdef vector[i8] kind, direction
    cdef public i64 crossings, crossed_lots, out_of_band, unknown_order_events
    cdef public i64 trades_unknown, trades_out_of_queue, traded_beyond_book

    cdef inline Levels* levels(self, int side) noexcept:
        return &self.bids if side > 0 else &self.asks

    cdef inline Queues* queues(self, int side) noexcept:
        return &self.bid_queues if side > 0 else &self.ask_queues

    cdef bint out_of_band_at(self, i64 price) noexcept:
        if self.reference <= 0 or not self.band > 0:
            return False
        return abs(<double>(price - self.reference)) > self.band * self.reference

    cdef void emit(self, int kind, i64 order_id, i64 size, i64 price, int side) noexcept:
        """One tape message at the current time, and the book's top levels after it (the row
        before, when the message changed only a level deeper than the side's shown ones: any
        but an execution, which takes from the best level down)."""
        self.time.push_back(self.now)
        self.kind.push_back(kind)
        self.order_id.push_back(order_id)
        self.size.push_back(size)
        self.price.push_back(price)
        self.direction.push_back(side)
        cdef size_t width = 4 * self.n_levels, at = self.rows.size()
        self.rows.resize(at + width)
        cdef i64* row = &self.rows[at]
        cdef i64* before = row - width
        cdef size_t last = width - 4 + (0 if side < 0 else 2)  # the side's deepest level
        cdef bint deep
        deep = at and kind != EXECUTE and before[last + 1] > 0 and side * price < side * before[last]
        if deep:
            memcpy(row, before, width * sizeof(i64))
            return
        cdef Levels.iterator ask = self.asks.begin()
        cdef Levels.iterator bid = self.bids.end()
        cdef int i
        for i in range(self.n_levels):
            if ask != self.asks.end():
                row[4 * i], row[4 * i + 1] = deref(ask).first, deref(ask).second
                inc(ask)
            else:
                row[4 * i], row[4 * i + 1] = EMPTY_ASK, 0
            if bid != self.bids.begin():
                dec(bid)
                row[4 * i + 2], row[4 * i + 3] = deref(bid).first, deref(bid).second
            else:
                row[4 * i + 2], row[4 * i + 3] = EMPTY_BID, 0

    cdef void add_volume(self, int side, i64 price, i64 qty) noexcept:
        volume_at(self.levels(side), price)[0] += qty

    cdef void take_volume(self, int side, i64 price, i64 qty) noexcept:
        cdef Levels* levels = self.levels(side)
        cdef i64* volume = volume_at(levels, price)
        volume[0] -= qty
        if volume[0] <= 0:
            levels.erase(price)

    cdef bint crosses(self, int side, i64 price) noexcept:
        """Whether volume added at (side, price) crosses the other side's best."""
        if side > 0:
            return not self.asks.empty() and deref(self.asks.begin()).first <= price
        if self.bids.empty():
            return False
        cdef Levels.iterator best = self.bids.end()
        dec(best)
        return deref(best).first >= price

    cdef void uncross(self, int side, i64 price) noexcept:
        """Remove the other side's levels that (side, price) crosses (by level)."""
        cdef int other = -side
        cdef Levels* levels = self.levels(other)
        cdef Levels.iterator it
        cdef i64 level_price, volume
        self.crossings += 1
        while self.crosses(side, price):
            if other < 0:
                it = levels.begin()
            else:
                it = levels.end()
                dec(it)
            level_price, volume = deref(it).first, deref(it).second
            self.crossed_lots += volume
            levels.erase(it)
            self.emit(DELETE_ORDER, 0, volume, level_price, other)

    # ------------------------------------------------------------------------ by level
    cdef void set_level(self, int side, i64 price, i64 qty) noexcept:
        cdef Levels* levels = self.levels(side)
        cdef Levels.iterator it = levels.find(price)
        cdef i64 current = 0 if it == levels.end() else deref(it).second
        if qty < current:
            self.take_volume(side, price, current - qty)
            self.emit(DELETE_ORDER if qty == 0 else CANCEL, 0, current - qty, price, side)
        elif qty > current:
            if current == 0 and self.out_of_band_at(price):
                self.out_of_band += 1
                return
            if self.crosses(side, price):
                self.uncross(side, price)
            self.add_volume(side, price, qty - current)
            self.next_id += 1
            self.emit(NEW, self.next_id, qty - current, price, side)

    cdef void snapshot_end(self) noexcept:
        """Replace the book by the pending snapshot: what it lacks goes first, then what it
        adds (so the additions cross nothing stale)."""
        cdef int side
        cdef Levels* pending
        cdef Levels* levels
        cdef Levels.iterator it, found
        cdef vector[i64] prices, sizes
        cdef size_t j
        for side in (1, -1):
            pending = &self.pending_bids if side > 0 else &self.pending_asks
            levels = self.levels(side)
            prices.clear()
            sizes.clear()
            it = levels.begin()
            while it != levels.end():
                found = pending.find(deref(it).first)
                if found == pending.end():
                    prices.push_back(deref(it).first)
                    sizes.push_back(0)
                elif deref(found).second < deref(it).second:
                    prices.push_back(deref(it).first)
                    sizes.push_back(deref(found).second)
                inc(it)
            for j in range(prices.size()):
                self.set_level(side, prices[j], sizes[j])
        for side in (1, -1):
            pending = &self.pending_bids if side > 0 else &self.pending_asks
            it = pending.begin()
            while it != pending.end():
                self.set_level(side, deref(it).first, deref(it).second)
                inc(it)
            pending.clear()

    cdef void trade_levels(self, int side, i64 price, i64 qty) noexcept:
        """An execution on the maker's ``side``: ``qty`` from its levels at ``price`` or
        better, best first, as the replay's execution takes them. A trade whose side the feed
        does not give (``side`` 0) takes the side its price reaches (at or above the best ask:
        the asks; at or below the best bid: the bids); inside the spread it changes nothing
        (``trades_unknown``)."""
        if side == 0:
            if not self.asks.empty() and price >= deref(self.asks.begin()).first:
                side = -1
            elif self.crosses(-1, price):  # at or below the best bid
                side = 1
            else:
                self.trades_unknown += 1
                return
        cdef Levels* levels = self.levels(side)
        cdef Levels.iterator best
        cdef i64 left = qty, take
        while left > 0 and not levels.empty():
            if side > 0:
                best = levels.end()
                dec(best)
            else:
                best = levels.begin()
            if side * deref(best).first < side * price:
                break
            take = min(left, deref(best).second)
            left -= take
            self.take_volume(side, deref(best).first, take)
        self.traded_beyond_book += left
        self.emit(EXECUTE, 0, qty, price, side)

    # ------------------------------------------------------------------------ by order
    cdef void create(self, i64 feed_id, int side, i64 price, i64 qty) noexcept:
        if qty <= 0:
            return
        if self.out_of_band_at(price):
            self.out_of_band += 1
            return
        if self.crosses(side, price):
            self.hold(feed_id, side, price, qty)
            return
        self.place(feed_id, side, price, qty)

    cdef void place(self, i64 feed_id, int side, i64 price, i64 qty) noexcept:
        """A new order in the book and on the tape (it crosses nothing)."""
        cdef Queue* queue = queue_at(self.queues(side), price)
        queue.push_back(feed_id)
        cdef Queue.iterator at = queue.end()
        dec(at)
        self.next_id += 1
        self.orders[feed_id] = Order(self.next_id, price, qty, side, at)
        self.add_volume(side, price, qty)
        self.emit(NEW, self.next_id, qty, price, side)

    cdef void remove(self, i64 feed_id, i64 qty, int kind) noexcept:
        """Take ``qty`` lots from a live order (all of them: it leaves the book), writing a
        message of ``kind`` (cancel, delete or execution)."""
        cdef Order* order = &self.orders[feed_id]
        cdef i64 price = order.price, tape_id = order.tape_id
        cdef int side = order.side
        cdef Queues* queues
        cdef Queue* queue
        self.take_volume(side, price, qty)
        if qty >= order.qty:
            queues = self.queues(side)
            queue = queue_at(queues, price)
            queue.erase(order.at)
            if queue.empty():
                queues.erase(price)
            self.orders.erase(feed_id)
        else:
            order.qty -= qty
        self.emit(kind, tape_id, qty, price, side)

    cdef void hold(self, i64 feed_id, int side, i64 price, i64 qty) noexcept:
        """Hold back an order that crosses the book: the exchange has matched it, and the
        feed's trades and the makers' changes and deletions are on their way."""
        self.crossings += 1
        self.crossed_lots += qty
        self.held[feed_id] = Held(price, qty, side)
        queue_at(&self.held_bids if side > 0 else &self.held_asks, price).push_back(feed_id)

    cdef void unhold(self, i64 feed_id) noexcept:
        cdef Held order = self.held[feed_id]
        cdef Queues* queues = &self.held_bids if order.side > 0 else &self.held_asks
        cdef Queue* queue = queue_at(queues, order.price)
        queue.remove(feed_id)
        if queue.empty():
            queues.erase(order.price)
        self.held.erase(feed_id)

    cdef void release(self) noexcept:
        """Place the held orders that cross the book no more, each side's best first (and,
        at a price, oldest first)."""
        cdef int side
        cdef Queues* queues
        cdef Queues.iterator best
        cdef i64 price
        cdef Held order
        for side in (1, -1):
            queues = &self.held_bids if side > 0 else &self.held_asks
            while not queues.empty():
                if side > 0:
                    best = queues.end()
                    dec(best)
                else:
                    best = queues.begin()
                price = deref(best).first
                if self.crosses(side, price):
                    break
                for feed_id in deref(best).second:
                    order = self.held[feed_id]
                    self.held.erase(feed_id)
                    self.place(feed_id, side, price, order.qty)
                queues.erase(price)

    cdef void change(self, i64 feed_id, int side, i64 price, i64 qty) noexcept:
        cdef Held* waiting
        if self.held.count(feed_id):
            waiting = &self.held[feed_id]
            if waiting.side == side and waiting.price == price:
                waiting.qty = qty
                if qty <= 0:
                    self.unhold(feed_id)
            else:
                self.unhold(feed_id)
                self.create(feed_id, side, price, qty)
            return
        if not self.orders.count(feed_id):
            self.unknown_order_events += 1
            return
        cdef Order* order = &self.orders[feed_id]
        if order.side == side and order.price == price and qty <= order.qty:
            if qty < order.qty:
                self.remove(feed_id, order.qty - qty, DELETE_ORDER if qty == 0 else CANCEL)
            return
        self.remove(feed_id, order.qty, DELETE_ORDER)
        self.create(feed_id, side, price, qty)

    cdef void delete(self, i64 feed_id) noexcept:
        if self.held.count(feed_id):
            self.unhold(feed_id)
            return
        if not self.orders.count(feed_id):
            self.unknown_order_events += 1
            return
        self.remove(feed_id, self.orders[feed_id].qty, DELETE_ORDER)

    cdef void trade_order(self, i64 maker, i64 qty) noexcept:
        cdef Held* waiting
        if self.held.count(maker):  # a maker whose creation came after its taker's
            waiting = &self.held[maker]
            waiting.qty -= min(qty, waiting.qty)
            if waiting.qty == 0:
                self.unhold(maker)
            return
        if not self.orders.count(maker):
            self.trades_unknown += 1
            return
        cdef Order* order = &self.orders[maker]
        cdef i64 take = min(qty, order.qty)
        cdef Levels* levels = self.levels(order.side)
        cdef Levels.iterator best
        self.traded_beyond_book += qty - take
        if order.side > 0:
            best = levels.end()
            dec(best)
        else:
            best = levels.begin()
        cdef bint first = queue_at(self.queues(order.side), order.price).front() == maker
        if first and deref(best).first == order.price:
            self.remove(maker, take, EXECUTE)
        else:
            self.trades_out_of_queue += 1
            self.remove(maker, take, DELETE_ORDER if take == order.qty else CANCEL)


def build(
    const i8[::1] kind,
    const i8[::1] side,
    const i64[::1] price,
    const i64[::1] qty,
    const i64[::1] order,
    const i64[::1] time,
    int levels,
    double band,
    i64 reference,
    bint by_order,
):
    """Carry out the events (see the module docstring) -> (messages, rows, counts):
    ``messages`` a dict of the tape's columns (``time`` ns, ``type``, ``order_id``, ``size``
    lots, ``price`` ticks, ``direction``), ``rows`` int64 (n, 4 x ``levels``) in
    `envs.data.tapes.Tape.book`'s layout, ``counts`` the rules' counts. ``band``: a fraction
    (0 or inf: no band); ``reference``: the band's price (ticks) before the first trade (0:
    none); ``by_order``: the feed's trades name their makers (L3)."""
    cdef Py_ssize_t n = kind.shape[0], i
    if not (side.shape[0] == price.shape[0] == qty.shape[0] == order.shape[0] == time.shape[0] == n):
        raise ValueError("the event columns must be of one length")
    if levels < 1:
        raise ValueError(f"levels must be >= 1, got {levels}")
    cdef _Book book = _Book()
    book.n_levels, book.band, book.reference = levels, band, reference
    book.rows.reserve(n * 4 * levels)
    cdef bint in_snapshot = False
    cdef int k
    cdef Levels* pending
    for i in range(n):
        if i % 65536 == 65535:
            PyErr_CheckSignals()  # an interrupt (Ctrl-C) raises here
        k = kind[i]
        book.now = time[i]
        if k == E_LEVEL:
            if in_snapshot:
                if qty[i] > 0:
                    pending = &book.pending_bids if side[i] > 0 else &book.pending_asks
                    volume_at(pending, price[i])[0] = qty[i]
            else:
                book.set_level(side[i], price[i], qty[i])
        elif k == E_SNAPSHOT_BEGIN:
            in_snapshot = True
            book.pending_bids.clear()
            book.pending_asks.clear()
        elif k == E_SNAPSHOT_END:
            in_snapshot = False
            book.snapshot_end()
        elif k == E_TRADE:
            if by_order:
                book.trade_order(order[i], qty[i])
            else:
                book.trade_levels(side[i], price[i], qty[i])
            book.reference = price[i]
        elif k == E_CREATE:
            if book.orders.count(order[i]) or book.held.count(order[i]):
                book.change(order[i], side[i], price[i], qty[i])
            else:
                book.create(order[i], side[i], price[i], qty[i])
        elif k == E_CHANGE:
            book.change(order[i], side[i], price[i], qty[i])
        elif k == E_DELETE:
            book.delete(order[i])
        else:
            raise ValueError(f"event {i}: unknown kind {k}")
        if not book.held.empty():
            book.release()
    messages = {
        "time": i64_array(book.time),
        "type": i8_array(book.kind),
        "order_id": i64_array(book.order_id),
        "size": i64_array(book.size),
        "price": i64_array(book.price),
        "direction": i8_array(book.direction),
    }
    rows = i64_array(book.rows).reshape(-1, 4 * levels)
    counts = {
        "crossings": book.crossings,
        "crossed_lots": book.crossed_lots,
        "out_of_band": book.out_of_band,
        "unknown_order_events": book.unknown_order_events,
        "trades_unknown": book.trades_unknown,
        "trades_out_of_queue": book.trades_out_of_queue,
        "traded_beyond_book": book.traded_beyond_book,
    }
    return messages, rows, counts
