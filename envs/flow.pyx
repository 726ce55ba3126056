# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
# distutils: language = c++
"""A market's decision steps, compiled: `advance` steps one or many markets (the seats'
orders, the background flow, marking to market) in one call, and `Flow` is a session's
background order flow, the rows of every population merged in time order once per session,
priced and carried out interval by interval without returning to Python.

Each background population that can says what it will send as a `envs.orders.Program`: all
its rows for the session (what does not depend on the market: times, kinds, sizes, owners)
and the `envs.orders.Rule` that prices them from what the market shows at the start of each
interval. `Flow.run` then does what the market's Python path does with the populations'
``orders`` methods (concatenate an interval's batches in population order, sort by time,
price, carry out), with the same arithmetic, so both give the same session to the bit
(``tests/envs/test_flow.py``).
"""

import numpy as np

cimport numpy as cnp
from libc.math cimport NAN, ceil, floor, rint

from envs.book cimport (
    K_CANCEL_ALL, K_QUOTE, K_REPLACE, OrderBook, best_key, i64,
)

cnp.import_array()

__all__ = ["Flow", "advance", "linear_recursion"]

cdef enum:
    # envs.orders.Rule
    FIXED = 0
    ZERO_INTELLIGENCE = 1
    MOMENTUM = 2
    MAKER = 3


def advance(list markets, list orders, double[:, ::1] change):
    """One decision step of each of ``markets`` (`envs.market.Market`, each with
    ``change.shape[1]`` seats and not done): ``orders[i][seat]`` are the seat's orders
    (`envs.orders.SeatOrder`; missing seats do nothing). Writes each seat's change of
    marked-to-market value, dollars, into ``change[i, seat]``.

    A step (`envs.market.Market` describes it): the seats' orders at the step's start, seats
    in a random order from the market's generator, quantities clipped to the position limit;
    the background flow over the step; every seat marked to the mid.
    """
    cdef Py_ssize_t i
    for i in range(len(markets)):
        _advance(markets[i], orders[i], change[i])


cdef _advance(object market, list seat_orders, double[::1] change):
    cdef OrderBook book = market.book
    cdef double t0 = market.t, t1 = t0 + market.step_seconds, mid
    cdef Py_ssize_t seat, n_seats = change.shape[0], k = market.step_index + 1
    cdef i64 counts[2]
    cdef Flow flow = market._compiled
    counts[0] = counts[1] = 0
    book.now = t0
    if len(seat_orders) > 1:
        for seat in market.rng.permutation(len(seat_orders)).tolist():
            _submit(book, seat, seat_orders[seat], market.position_limit, counts)
    elif seat_orders:
        _submit(book, 0, seat_orders[0], market.position_limit, counts)
    if flow is not None:
        orders, cancels = flow.run(book, t0, t1, market.last_mid, market.mids())
        counts[0] += orders
        counts[1] += cancels
    else:
        market._flow(t0, t1)
    market.n_orders += counts[0]
    market.n_cancels += counts[1]
    market.t = t1
    market.step_index = k
    if not book._bids.empty() and not book._asks.empty():
        market.last_mid = _mid(book)
    mid = market.last_mid
    market._mids[k] = mid
    market._spreads[k] = _spread(book)
    values = market._values
    for seat in range(n_seats):
        value = _value(book, seat, mid, market.tick_size, market.fee_per_share)
        change[seat] = value - values[seat]
        values[seat] = value


cdef _submit(OrderBook book, i64 seat, object orders, i64 limit, i64* counts):
    """A seat's orders, quantities clipped to the position limit (a quote beyond it still
    cancels the seat's old quote on that side), through the book's Python methods (`quote`,
    `submit`), which a subclass of the book may extend."""
    cdef i64 kind, side, price, qty, capacity
    for kind, side, price, qty in orders:
        capacity = limit - side * _position(book, seat)
        capacity = capacity if capacity > 0 else 0
        if kind == K_QUOTE:
            placed, cancelled, _ = book.quote(side, price, min(qty, capacity), seat)
            counts[0] += placed
            counts[1] += cancelled
            continue
        if kind != K_CANCEL_ALL:
            qty = min(qty, capacity)
            if qty <= 0:
                continue
            counts[0] += 1
        book.submit(kind, side, price, qty, seat)


cdef inline i64 _position(OrderBook book, i64 owner):
    return book._position[owner] if owner < <i64>book._position.size() else 0


cdef inline double _mid(OrderBook book):
    """The mid (ticks) of a book with both sides."""
    return (best_key(&book._bids) - best_key(&book._asks)) / 2.0


cdef inline double _spread(OrderBook book):
    """Best ask - best bid, ticks; NaN while a side is empty."""
    if book._bids.empty() or book._asks.empty():
        return NAN
    return <double>(-best_key(&book._asks) - best_key(&book._bids))


cdef inline double _value(OrderBook book, i64 seat, double mid, double tick, double fee):
    """The seat's marked-to-market value, dollars (`envs.market.Account.value`)."""
    if seat >= <i64>book._position.size():
        return 0.0
    return (book._cash[seat] + book._position[seat] * mid) * tick - fee * book._traded[seat]


cdef class Flow:
    """The merged rows of ``programs`` (one `envs.orders.Program` per population, in the
    market's population order); ``handlers`` maps owners to the traders that carry out their
    HANDLE rows."""

    cdef double[::1] time, value
    cdef i64[::1] kind, side, price, qty, owner, ref, member, population
    cdef cnp.uint8_t[::1] skip
    cdef int[::1] rule
    cdef i64[::1] q_max, short, long, theta_start
    cdef double[::1] lot, half_spread, theta
    cdef i64[::1] decision  # a momentum population's side this interval (0: no orders)
    cdef dict handlers
    cdef list programs
    cdef Py_ssize_t cursor
    cdef readonly Py_ssize_t n_rows

    def __init__(self, list programs, dict handlers):
        sizes = [len(p.rows.time) for p in programs]
        time = _joined([p.rows.time for p in programs], sizes, np.float64)
        order = np.argsort(time, kind="stable")  # ties keep population order, as Orders.concat
        self.n_rows = len(time)
        self.time = time[order]
        self.kind, self.side, self.price, self.qty, self.owner, self.ref = [
            _joined([getattr(p.rows, c) for p in programs], sizes, np.int64)[order]
            for c in ("kind", "side", "price", "qty", "owner", "ref")
        ]
        self.value = _joined([p.value for p in programs], sizes, np.float64)[order]
        self.member = _joined([p.member for p in programs], sizes, np.int64)[order]
        self.population = np.repeat(np.arange(len(programs), dtype=np.int64), sizes)[order]
        self.skip = np.zeros(self.n_rows, np.uint8)
        self.rule = np.array([int(p.rule) for p in programs], np.intc)
        self.q_max = np.array([p.q_max for p in programs], np.int64)
        self.short = np.array([p.short for p in programs], np.int64)
        self.long = np.array([p.long for p in programs], np.int64)
        self.lot = np.array([p.lot for p in programs], np.float64)
        self.half_spread = np.array([p.half_spread for p in programs], np.float64)
        thetas = [np.empty(0) if p.theta is None else np.ravel(p.theta) for p in programs]
        lengths = [len(t) for t in thetas]
        self.theta_start = np.array([sum(lengths[:p]) for p in range(len(lengths))], np.int64)
        self.theta = _joined(thetas, lengths, np.float64)
        self.decision = np.zeros(len(programs), np.int64)
        self.handlers, self.programs = handlers, programs
        self.cursor = 0

    def __reduce__(self):
        return _restore, (self.programs, self.handlers, self.cursor)

    def run(self, OrderBook book, double t0, double t1, double last_mid, const double[:] mids):
        """Carry out the rows in [t0, t1) seconds on ``book``, priced from what it shows now,
        ``last_mid`` (ticks) and ``mids`` (the mids of the decision steps so far, ticks) ->
        (orders submitted, orders cancelled)."""
        cdef Py_ssize_t lo = self._first(t0), hi = self._first(t1), i
        cdef i64 counts[2]
        counts[0] = counts[1] = 0
        self._price(book, lo, hi, last_mid, mids)
        for i in range(lo, hi):
            if self.skip[i]:
                continue
            book.now = self.time[i]
            book._row(
                self.kind[i], self.side[i], self.price[i], self.qty[i], self.owner[i],
                self.ref[i], self.handlers, None, counts,
            )
        self.cursor = hi
        return counts[0], counts[1]

    cdef Py_ssize_t _first(self, double t):
        """The first row at or after ``t`` (rows are in time order; searches from the last
        interval's end)."""
        cdef Py_ssize_t lo = 0, hi = self.n_rows, mid
        if self.cursor < self.n_rows and self.time[self.cursor] < t:
            lo = self.cursor
        elif self.cursor <= self.n_rows and (self.cursor == 0 or self.time[self.cursor - 1] < t):
            hi = self.cursor
        while lo < hi:
            mid = (lo + hi) // 2
            if self.time[mid] < t:
                lo = mid + 1
            else:
                hi = mid
        return lo

    cdef void _price(
        self, OrderBook book, Py_ssize_t lo, Py_ssize_t hi, double last_mid, const double[:] mids
    ):
        """Fill in the prices (and kinds, sides, skips) of rows lo..hi from the market now."""
        cdef Py_ssize_t i, n_mids = mids.shape[0]
        cdef i64 p, holdings, units, index, width, best_bid = 0, best_ask = 0
        cdef int r
        cdef bint quoted = not book._bids.empty() and not book._asks.empty()
        cdef double level
        cdef i64[::1] decision = self.decision
        if quoted and hi > lo:
            best_bid = best_key(&book._bids)
            best_ask = -best_key(&book._asks)
        for p in range(self.rule.shape[0] if hi > lo else 0):
            decision[p] = 0
            if self.rule[p] == MOMENTUM and quoted and n_mids >= self.long[p]:
                level = _mean(mids, n_mids, self.short[p]) - _mean(mids, n_mids, self.long[p])
                decision[p] = 1 if level > 0 else -1 if level < 0 else 0
        for i in range(lo, hi):
            p = self.population[i]
            r = self.rule[p]
            if r == ZERO_INTELLIGENCE:
                holdings = book._position[self.owner[i]] if self.owner[i] < <i64>book._position.size() else 0
                units = <i64>rint(<double>holdings / self.lot[p])
                width = 2 * self.q_max[p]
                index = units + self.q_max[p] - (1 if self.side[i] < 0 else 0)
                self.kind[i] = K_REPLACE if 0 <= index < width else K_CANCEL_ALL
                index = 0 if index < 0 else width - 1 if index >= width else index
                level = rint(self.value[i] + self.theta[self.theta_start[p] + self.member[i] * width + index])
                self.price[i] = <i64>(level if level > 1.0 else 1.0)
            elif r == MOMENTUM:
                self.skip[i] = decision[p] == 0
                self.side[i] = decision[p]
                self.price[i] = best_ask if decision[p] > 0 else best_bid
            elif r == MAKER:
                if self.side[i] < 0:
                    self.price[i] = <i64>self.value[i] + <i64>ceil(last_mid + self.half_spread[p])
                else:
                    self.price[i] = <i64>self.value[i] + <i64>floor(last_mid - self.half_spread[p])


cdef inline double _mean(const double[:] mids, Py_ssize_t n, i64 last):
    """The mean of the ``last`` mids of the first ``n``. Mids are multiples of half a tick far
    below 2**52, so the sum is exact in any order (numpy's pairwise sum gives the same)."""
    cdef double total = 0.0
    cdef Py_ssize_t i
    for i in range(n - last, n):
        total += mids[i]
    return total / last


def linear_recursion(const double[::1] decay, const double[::1] kicks):
    """x_i = x_{i-1} decay_i + kicks_i from x_{-1} = 0, shape (n,): an Ornstein-Uhlenbeck path
    sampled at uneven times (`envs.traders.ZeroIntelligence.fundamental_path`)."""
    out = np.empty(kicks.shape[0])
    cdef double[::1] path = out
    cdef double x = 0.0
    cdef Py_ssize_t i
    for i in range(kicks.shape[0]):
        x = x * decay[i] + kicks[i]
        path[i] = x
    return out


def _restore(programs, handlers, cursor):
    """Unpickle: the flow of ``programs`` with the rows before ``cursor`` carried out (each
    interval prices its rows afresh, so nothing else needs keeping)."""
    cdef Flow flow = Flow(programs, handlers)
    flow.cursor = cursor
    return flow


def _joined(parts, sizes, dtype):
    """``parts`` (arrays, or None for zeros of the matching size) end to end, as ``dtype``."""
    return np.concatenate(
        [np.zeros(n, dtype) if a is None else np.asarray(a, dtype) for a, n in zip(parts, sizes)]
        + [np.empty(0, dtype)]
    )
