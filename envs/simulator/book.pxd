# cython: language_level=3
"""The C declarations of `envs.simulator.book`: its row kinds, its order and level records and the
`OrderBook` class's fields and C methods, so other compiled modules (`envs.simulator.flow`) can drive a
book without going through Python."""

cimport cython
from cython.operator cimport dereference as deref, predecrement as dec
from libcpp.map cimport map as cmap
from libcpp.unordered_map cimport unordered_map
from libcpp.vector cimport vector

ctypedef long long i64
ctypedef int i32

cdef enum:
    I32_MAX = 2147483647  # the largest order slot a book holds, and owners' bound below
    OWNERS = 1 << 20  # owners are below this (accounts and order lists are vectors by owner)
    SIGNAL_EVERY = 4096  # rows a compiled loop carries out between two looks for an interrupt

cdef extern from *:
    """
    static const long long QTY_MAX = (1LL << 53) - 1;
    """
    # the largest quantity an order holds: 2**53 - 1 lots, exact as a float64 (features and
    # Python read sizes as floats), an order of every bitcoin there is in lots of 1E-8
    const i64 QTY_MAX

cdef enum:
    # row kinds of `OrderBook.run` (tradearena.envs.simulator.orders.Kind has the same values)
    K_LIMIT = 1  # limit order; the remainder rests
    K_MARKET = 2  # market order; nothing rests
    K_REPLACE = 3  # cancel the owner's resting orders, then a limit order
    K_CANCEL_ALL = 4  # cancel the owner's resting orders
    K_HANDLE = 5  # handed to ``handlers[owner].handle(book, ref)``
    K_QUOTE = 6  # the owner's one resting order on a side at a price (see ``OrderBook.quote``)
    # LOBSTER message types written when recording
    M_NEW = 1
    M_PARTIAL_CANCEL = 2
    M_DELETE = 3
    M_EXECUTE = 4

cdef struct Level:
    i64 volume  # shares resting at the level
    i64 head  # oldest order's slot
    i64 tail  # newest order's slot


ctypedef cmap[i64, Level] Half
ctypedef cmap[i64, Level].iterator LevelIter


cdef struct Order:
    # 56 bytes (quantities are checked to fit QTY_MAX, owners and slots 32 bits, where they
    # enter)
    i64 price
    LevelIter level  # its level in its side's map, while it rests
    i64 qty  # shares (lots) still resting; 0 once filled or cancelled
    i32 owner
    i32 prev  # neighbours in the level's FIFO list, by slot (0: none)
    i32 next
    i32 owner_prev  # neighbours in its owner's list of resting orders, by slot (0: none)
    i32 owner_next
    i32 side
    i32 generation  # orders the slot has held before this one (order id = slot + 2**32 x this)


cdef struct Account:
    # what an owner's fills add up to
    i64 position  # net shares bought
    i64 cash  # ticks x shares received (sold) less paid (bought)
    i64 traded  # shares traded
    i64 fills  # fills taken part in


cdef struct Owned:
    # an owner's resting orders, oldest first: a doubly linked list through the orders' slots
    i32 head  # 0: none
    i32 tail


cdef inline i64 best_key(Half* half) noexcept:
    """The largest key of a side that is not empty: the best bid's price (bids), or minus the
    best ask's (asks)."""
    cdef LevelIter it = half.end()
    dec(it)
    return deref(it).first


cdef class OrderBook:
    cdef vector[Order] _orders  # index: slot; slot 0 unused
    cdef vector[i32] _free  # slots to reuse, last freed first (only when recycling)
    cdef bint _recycle
    cdef Half _bids  # key = price
    cdef Half _asks  # key = -price
    cdef vector[Owned] _owned  # owner -> its resting orders
    cdef unordered_map[i64, Owned] _owned_negative  # the same for owners below zero
    cdef vector[Account] _accounts  # by owner (>= 0)
    cdef public i64 volume  # shares traded
    cdef public i64 trades  # fills
    cdef i64 _live
    cdef bint _record
    cdef public double now
    cdef public list log

    cdef Half* _half(self, int side) noexcept
    cdef Order* _find(self, i64 order_id) noexcept
    cdef i64 _slot(self) except -1
    cdef void _release(self, i64 slot) noexcept
    @cython.final
    cdef Owned* _list(self, i64 owner, bint make) noexcept
    @cython.final
    cdef void _own(self, i64 slot) noexcept
    @cython.final
    cdef void _disown(self, i64 slot) noexcept
    cdef i64 _id(self, i64 slot) noexcept
    @cython.final
    cdef int _row(
        self, i64 k, i64 side, i64 price, i64 qty, i64 owner, i64 ref, dict handlers,
        list fills, i64* counts,
    ) except -1
    @cython.final
    cdef i64 _limit(self, int side, i64 price, i64 qty, i64 owner, list fills) except -1
    @cython.final
    cdef int _rest(self, i64 oid, int side, i64 price, i64 qty, i64 owner) except -1
    @cython.final
    cdef i64 _match(self, int side, i64 limit_key, i64 qty, i64 owner, list fills) except -1
    cdef void _settle(self, i64 owner, i64 side, i64 qty, i64 price) noexcept
    @cython.final
    cdef i64 _cancel(self, i64 order_id, i64 qty) except -1
    @cython.final
    cdef i64 _reduce(self, int side, i64 price, i64 qty, i64 owner, bint any_owner) except -1
    @cython.final
    cdef int _quote(
        self, int side, i64 price, i64 qty, i64 owner, list fills, i64* counts
    ) except -1
    @cython.final
    cdef i64 _cancel_owner(self, i64 owner) except -1
    cdef list _side_depth(self, int side, i64 levels)
    cdef list _resting(self)


cdef inline int check_side(i64 side) except -1:
    if side != 1 and side != -1:
        raise ValueError(f"side must be +1 (buy) or -1 (sell), got {side}")
    return 0


cdef inline int check_owner(i64 owner) except -1:
    if not -I32_MAX <= owner < OWNERS:
        raise ValueError(f"owners must be in [-{I32_MAX}, {OWNERS}), got {owner}")
    return 0


cdef inline int check_qty(i64 qty) except -1:
    if qty <= 0 or qty > QTY_MAX:
        raise ValueError(f"qty must be a positive number of shares up to {QTY_MAX}, got {qty}")
    return 0


cdef inline i64 level_volume(OrderBook book, int side, i64 price) noexcept:
    """Shares resting at (side, price)."""
    cdef Half* half = book._half(side)
    cdef LevelIter it = half.find(side * price)
    return 0 if it == half.end() else deref(it).second.volume


cdef inline bint quoted(OrderBook book) noexcept:
    """Whether both sides of ``book`` hold orders."""
    return not book._bids.empty() and not book._asks.empty()


cdef inline double mid_ticks(OrderBook book) noexcept:
    """The mid (ticks) of a `quoted` book."""
    return (best_key(&book._bids) - best_key(&book._asks)) / 2.0


cdef inline i64 spread_ticks(OrderBook book) noexcept:
    """Best ask - best bid (ticks) of a `quoted` book."""
    return -best_key(&book._asks) - best_key(&book._bids)


cdef inline i64 position(OrderBook book, i64 owner) noexcept:
    """Net shares ``owner`` (>= 0) bought through fills; 0 for one with no fills."""
    return book._accounts[owner].position if owner < <i64>book._accounts.size() else 0
