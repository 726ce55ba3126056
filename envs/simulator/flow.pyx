# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
# distutils: language = c++
"""A market's decision steps, compiled: `advance` steps one or many markets (the seats'
orders, the background flow, marking to market) in one call, and `Flow` is a session's
background order flow: every population's rows, merged in time order, priced and carried out
interval by interval without returning to Python.

Each background population that can says what it will send as a `envs.simulator.orders.Program`: all
its rows for the session (what does not depend on the market: times, kinds, sizes, owners)
and the `envs.simulator.orders.Rule` that prices them from what the market shows at the start of each
interval. `Flow.run` then does what the market's Python path does with the populations'
``orders`` methods (concatenate an interval's batches in population order, sort by time,
price, carry out), with the same arithmetic, so both give the same session to the bit
(``tests/envs/test_flow.py``). Two compiled helpers of the populations' resets live here too:
`periodic_times` (wake-ups on a grid) and `linear_recursion` (the fundamental's path).
"""

import numpy as np

cimport numpy as cnp
from cpython.exc cimport PyErr_CheckSignals
from libc.math cimport INFINITY, NAN, ceil, floor, rint
from cython.operator cimport dereference as deref, predecrement as dec
from libcpp.vector cimport vector

from tradearena.envs.simulator.book cimport (
    K_CANCEL_ALL, K_LIMIT, K_MARKET, K_QUOTE, K_REPLACE, SIGNAL_EVERY, Account, Half, LevelIter,
    Order, OrderBook, Owned, best_key, i32, i64, mid_ticks, position, quoted, spread_ticks,
)
from tradearena.envs.simulator.learned_flow.sampler cimport Sampler
from tradearena.envs.simulator.replayer cimport Replayer

cnp.import_array()

__all__ = [
    "Flow", "MAX_AT_ONE_TIME", "MarketState", "advance", "linear_recursion", "make_orders",
    "periodic_times", "submit",
]

MAX_AT_ONE_TIME = 1_000_000  # the most rows the flow carries out at one time (see the stub)

cdef enum:
    # tradearena.envs.simulator.orders.Rule
    FIXED = 0
    ZERO_INTELLIGENCE = 1
    MOMENTUM = 2
    MAKER = 3
    REPLAY = 4
    LEARNED = 5


cdef class MarketState:
    """What a market's decision step reads and writes, as C fields (declared in flow.pxd)
    that `advance` and `envs.simulator.observation.observe` reach without Python attribute look-ups;
    `envs.simulator.market.Market` is one and describes them."""

    @property
    def done(self) -> bool:
        """Whether the session is over (its last decision step taken)."""
        return self._over()


def advance(
    list markets,
    list orders,
    double[:, ::1] change,
    double[:, ::1] mids=None,
    cnp.int64_t[:, ::1] inventory=None,
    cnp.uint8_t[::1] ended=None,
):
    """One decision step of each of ``markets`` (`envs.simulator.market.Market`, each with
    ``change.shape[1]`` seats and not done): ``orders[i][seat]`` are the seat's orders
    (`envs.simulator.orders.SeatOrder`; missing seats do nothing). Writes each seat's change of
    marked-to-market value, dollars, into ``change[i, seat]``, and when given, the mid
    before and after the step (ticks) into ``mids[i]``, each seat's inventory after it
    (shares) into ``inventory[i]`` and whether the session is over into ``ended[i]``.

    A step (`envs.simulator.market.Market` describes it): the seats' orders at the step's start, seats
    in a random order from the market's generator, quantities clipped to the position limit;
    the background flow over the step; every seat marked to the mid. A market with latency
    has `envs.simulator.latency.Latency.step` carry out its orders and flow.
    """
    cdef Py_ssize_t i, seat
    cdef OrderBook book
    cdef MarketState market
    for i in range(len(markets)):
        market = markets[i]
        if mids is not None:
            mids[i, 0] = market.last_mid
        book = _advance(market, orders[i], change[i])
        if mids is not None:
            mids[i, 1] = market.last_mid
        if inventory is not None:
            for seat in range(inventory.shape[1]):
                inventory[i, seat] = position(book, seat)
        if ended is not None:
            ended[i] = market._over()


cdef OrderBook _advance(MarketState market, list seat_orders, double[::1] change):
    cdef OrderBook book = market.book
    cdef double t0 = market.t, t1 = t0 + market.step_seconds, mid
    cdef Py_ssize_t seat, n_seats = change.shape[0], k = market.step_index + 1
    cdef i64 counts[2]
    cdef Flow flow = market._compiled
    counts[0] = counts[1] = 0
    book.now = t0
    cdef cnp.ndarray mids = market._mids  # float64; the first k are the mids so far
    if market._latency is not None:  # orders in flight, views recorded (envs.simulator.latency)
        counts[0], counts[1] = market._latency.step(market, seat_orders, t0, t1)
    else:
        if len(seat_orders) > 1:
            for seat in market.rng.permutation(len(seat_orders)).tolist():
                _submit(book, seat, seat_orders[seat], market.position_limit, counts)
        elif seat_orders:
            _submit(book, 0, seat_orders[0], market.position_limit, counts)
        if flow is not None:
            flow._open(book, t0, t1, market.last_mid, <double*>cnp.PyArray_DATA(mids), k)
            flow._until(book, INFINITY, counts)
        else:
            market._flow(t0, t1)
    market.n_orders += counts[0]
    market.n_cancels += counts[1]
    market.t = t1
    market.step_index = k
    if quoted(book):
        market.last_mid = mid_ticks(book)
    mid = market.last_mid
    cdef cnp.ndarray spreads = market._spreads
    (<double*>cnp.PyArray_DATA(mids))[k] = mid
    (<double*>cnp.PyArray_DATA(spreads))[k] = spread_ticks(book) if quoted(book) else NAN
    cdef list values = market._values
    for seat in range(n_seats):
        value = _value(book, seat, mid, market.tick_size, market.fee_per_share)
        change[seat] = value - values[seat]
        values[seat] = value
    return book


def submit(OrderBook book, i64 seat, object orders, i64 limit):
    """Carry out a seat's orders (`envs.simulator.orders.SeatOrder`) now, as a decision step
    does, quantities clipped to the position limit ``limit`` (shares) -> (orders submitted,
    orders cancelled)."""
    cdef i64 counts[2]
    counts[0] = counts[1] = 0
    _submit(book, seat, orders, limit, counts)
    return counts[0], counts[1]


cdef _submit(OrderBook book, i64 seat, object orders, i64 limit, i64* counts):
    """A seat's orders, quantities clipped to the position limit (a quote beyond it still
    cancels the seat's old quote on that side). A subclass of the book gets them through its
    Python methods (`quote`, `submit`), which it may extend; a plain book straight in C, with
    the same effect and counts."""
    cdef i64 kind, side, price, qty, capacity
    cdef i64 scratch[2]
    cdef bint plain = type(book) is OrderBook
    for kind, side, price, qty in orders:
        capacity = limit - side * position(book, seat)
        capacity = capacity if capacity > 0 else 0
        if kind == K_QUOTE:
            qty = min(qty, capacity)
            if plain:
                book._row(K_QUOTE, side, price, qty, seat, -1, None, None, counts)
                continue
            placed, cancelled, _ = book.quote(side, price, qty, seat)
            counts[0] += placed
            counts[1] += cancelled
            continue
        if kind != K_CANCEL_ALL:
            qty = min(qty, capacity)
            if qty <= 0:
                continue
            counts[0] += 1
        if plain:  # the seat's own cancels are not counted (as `submit` does not count them)
            book._row(kind, side, price, qty, seat, -1, None, None, scratch)
        else:
            book.submit(kind, side, price, qty, seat)


def make_orders(
    list markets, const long long[::1] actions, i64 seat, const long long[:, ::1] levels, i64 size
):
    """`envs.simulator.actions.MakeActions.orders` of ``seat`` in each of ``markets`` (its action in
    ``actions``, (N,)), the same orders computed from the books' records in C: a list of N
    order lists. ``levels`` (A, 2) is each action's bid and ask level (-1: off); action 0
    reduces the inventory."""
    cdef Py_ssize_t i
    cdef MarketState market
    cdef OrderBook book
    cdef i64 action, inventory, bid_level, ask_level, top_bid, top_ask, best_bid, best_ask
    cdef i64 mine_price[2]
    cdef i64 mine_qty[2]
    cdef Owned* owned
    cdef Order* order
    cdef i64 slot
    cdef bint has_bid, has_ask
    cdef list out = []
    if levels.shape[1] != 2 or actions.shape[0] != len(markets):
        raise ValueError(
            f"need levels (A, 2) and one action per market, got {levels.shape[1]} columns, "
            f"{actions.shape[0]} actions for {len(markets)} markets"
        )
    for i in range(len(markets)):
        market = markets[i]
        if market is None:
            raise TypeError(f"markets[{i}] is None")
        book = market.book
        action = actions[i]
        if not 0 <= action < levels.shape[0]:
            raise ValueError(f"action {action} of market {i} is not in [0, {levels.shape[0]})")
        if action == 0:
            inventory = position(book, seat)
            if inventory == 0:
                out.append([(K_CANCEL_ALL, 0, 0, 0)])
            else:
                out.append([
                    (K_CANCEL_ALL, 0, 0, 0),
                    (K_MARKET, -1 if inventory > 0 else 1, 0, min(size, abs(inventory))),
                ])
            continue
        mine_qty[0] = mine_qty[1] = 0  # [bid, ask]: the seat's newest order on each side
        owned = book._list(seat, False)
        slot = owned.head if owned != NULL else 0
        while slot:
            order = &book._orders[slot]
            mine_price[order.side < 0], mine_qty[order.side < 0] = order.price, order.qty
            slot = order.owner_next
        has_bid = _others_best(book, 1, mine_price[0], mine_qty[0], &best_bid)
        has_ask = _others_best(book, -1, mine_price[1], mine_qty[1], &best_ask)
        top_bid = best_bid if has_bid else <i64>ceil(market.last_mid) - 1
        top_ask = best_ask if has_ask else <i64>floor(market.last_mid) + 1
        bid_level, ask_level = levels[action, 0], levels[action, 1]
        out.append([
            _make_quote(1, bid_level, top_bid, has_ask, best_ask, size),
            _make_quote(-1, ask_level, top_ask, has_bid, best_bid, size),
        ])
    return out


cdef bint _others_best(OrderBook book, int side, i64 price, i64 qty, i64* best) noexcept:
    """The best price among ``side``'s top 3 levels not made by the seat's order (``price``,
    ``qty``; qty 0: none) alone, into ``best``; False when there is none."""
    cdef Half* half = book._half(side)
    cdef LevelIter it = half.end()
    cdef int k
    for k in range(3):
        if it == half.begin():
            return False
        dec(it)
        if qty == 0 or side * deref(it).first != price or deref(it).second.volume > qty:
            best[0] = side * deref(it).first
            return True
    return False


cdef tuple _make_quote(int side, i64 level, i64 top, bint has_opposite, i64 opposite, i64 size):
    """A quote ``level`` ticks behind ``top`` on ``side`` (-1: none), never crossing
    ``opposite``."""
    if level < 0:
        return (K_QUOTE, side, 0, 0)
    cdef i64 price = top - side * level
    if has_opposite and side * (price - opposite) >= 0:
        price = opposite - side
    return (K_QUOTE, side, price, size)


cdef inline double _value(
    OrderBook book, i64 seat, double mid, double tick, double fee
) noexcept:
    """The seat's marked-to-market value, dollars (`envs.simulator.market.Account.value`)."""
    if seat >= <i64>book._accounts.size():
        return 0.0
    cdef Account* a = &book._accounts[seat]
    return (a.cash + a.position * mid) * tick - fee * a.traded


cdef class Flow:
    """The rows of ``programs`` (one `envs.simulator.orders.Program` per population, in the market's
    population order), carried out interval by interval in time order, ties in population
    order (as ``Orders.concat`` orders them); ``handlers`` maps owners to the traders that
    carry out their HANDLE rows, and a REPLAY program's ``replayer`` carries out its rows
    (tape messages by ``ref``) in C, and a LEARNED program's ``sampler`` draws its events
    one at a time against the book as it is (it has no rows). Each population's rows stay
    in its program's arrays, which the flow prices in place."""

    def __init__(self, list programs, dict handlers):
        self.arrays, self.handlers, self.programs = [], handlers, programs
        self.end = -INFINITY
        self.populations.resize(len(programs))
        for p, program in enumerate(programs):
            self._keep(p, program)

    cdef _keep(self, Py_ssize_t p, object program):
        """Point population ``p`` at ``program``'s arrays (sorted by time if they are not)."""
        rows, keep = program.rows, self.arrays
        times = np.asarray(rows.time, dtype=np.float64)
        order = slice(None) if np.all(np.diff(times) >= 0) else np.argsort(times, kind="stable")
        cdef Population* pop = &self.populations[p]
        cdef double[::1] time = _column(times, np.float64, order, keep)
        cdef i32[::1] kind = _column(rows.kind, np.int32, order, keep)
        cdef i32[::1] side = _column(rows.side, np.int32, order, keep)
        cdef i32[::1] price = _column(rows.price, np.int32, order, keep)
        cdef i32[::1] qty = _column(rows.qty, np.int32, order, keep)
        cdef i32[::1] owner = _column(rows.owner, np.int32, order, keep)
        cdef i32[::1] ref = _column(rows.ref, np.int32, order, keep)
        cdef double[::1] value = _column(program.value, np.float64, order, keep)
        cdef double[::1] theta = None
        if program.theta is not None:
            theta = _column(np.ravel(program.theta), np.float64, slice(None), keep)
        pop.n = time.shape[0]
        pop.cursor = pop.stop = 0
        if pop.n:
            pop.time, pop.kind, pop.side, pop.price = &time[0], &kind[0], &side[0], &price[0]
            pop.qty, pop.owner, pop.ref = &qty[0], &owner[0], &ref[0]
        pop.value = &value[0] if value is not None and pop.n else NULL
        pop.theta = &theta[0] if theta is not None and theta.shape[0] else NULL
        pop.first_owner = program.first_owner
        pop.rule = int(program.rule)
        pop.q_max, pop.short, pop.long = program.q_max, program.short, program.long
        pop.lot, pop.half_spread = program.lot, program.half_spread
        pop.levels, pop.spacing, pop.size = program.levels, program.spacing, program.size
        pop.decision = pop.bid = pop.ask = 0
        pop.replayer = pop.sampler = NULL
        if (program.rule == LEARNED) != (program.sampler is not None):
            raise ValueError(f"a LEARNED program, and only one, has a sampler: {program.rule!r}")
        if program.sampler is not None:
            if not isinstance(program.sampler, Sampler):
                raise TypeError(f"a sampler must be a learned flow's Sampler, got {program.sampler!r}")
            keep.append(program.sampler)
            pop.sampler = <void*>program.sampler
        if (program.rule == REPLAY) != (program.replayer is not None):
            raise ValueError(f"a REPLAY program, and only one, has a replayer: {program.rule!r}")
        if program.replayer is not None:
            if not isinstance(program.replayer, Replayer):
                raise TypeError(f"a replayer must be a Replayer, got {program.replayer!r}")
            if pop.n and not (0 <= np.min(ref) and np.max(ref) < len(program.replayer)):
                raise ValueError(f"refs must be messages of the replayer's {len(program.replayer)}")
            keep.append(program.replayer)
            pop.replayer = <void*>program.replayer

    def cursors(self) -> list[int]:
        """Each population's next row."""
        return [self.populations[p].cursor for p in range(self.populations.size())]

    def seek(self, cursors) -> None:
        """Go on from each population's next row as `cursors` gave them (each interval prices
        its rows afresh, so nothing else needs keeping)."""
        if len(cursors) != self.populations.size():
            raise ValueError(f"{len(cursors)} cursors for {self.populations.size()} populations")
        for p, cursor in enumerate(cursors):
            if not 0 <= cursor <= self.populations[p].n:
                raise ValueError(f"cursor {cursor} past population {p}'s rows")
            self.populations[p].cursor = self.populations[p].stop = cursor

    def __reduce__(self):
        return _restore, (self.programs, self.handlers, self.cursors())

    def run(self, OrderBook book, double t0, double t1, double last_mid, const double[::1] mids):
        """Carry out the rows in [t0, t1) seconds on ``book``, priced from what it shows now,
        ``last_mid`` (ticks) and ``mids`` (the mids of the decision steps so far, ticks) ->
        (orders submitted, orders cancelled)."""
        self.open(book, t0, t1, last_mid, mids)
        return self.until(book, INFINITY)

    def open(self, OrderBook book, double t0, double t1, double last_mid, const double[::1] mids):
        """Start the interval [t0, t1) seconds: its rows priced as `run` prices them; `until`
        then carries them out."""
        n = mids.shape[0]
        self._open(book, t0, t1, last_mid, &mids[0] if n else NULL, n)

    def until(self, OrderBook book, double limit):
        """Carry out the opened interval's rows before ``limit`` seconds, in time order ->
        (orders submitted, orders cancelled)."""
        cdef i64 counts[2]
        counts[0] = counts[1] = 0
        self._until(book, limit, counts)
        return counts[0], counts[1]

    cdef int _open(
        self, OrderBook book, double t0, double t1, double last_mid, const double* mids,
        Py_ssize_t n_mids,
    ) except -1:
        """`open`: each population's rows in [t0, t1), priced."""
        cdef Py_ssize_t p, n_pops = self.populations.size()
        cdef Population* pop
        cdef Sampler sampler
        cdef i64 scratch[2]
        for p in range(n_pops):
            pop = &self.populations[p]
            if pop.rule == LEARNED:  # what the seats traded heard, the sides they emptied
                sampler = <Sampler>pop.sampler  # refilled, at the start
                sampler.end = t1
                sampler.observe(book, t0)
                sampler.actor.keep_depth(book, 1, scratch)
                sampler.actor.keep_depth(book, -1, scratch)
                sampler._count(book)
                continue
            if pop.rule == REPLAY:  # what the seats took from it, heard at the start
                (<Replayer>pop.replayer)._observe(book)
                self.end = t1
            while pop.cursor < pop.n and pop.time[pop.cursor] < t0:  # never in an interval
                pop.cursor += 1
            pop.stop = pop.cursor
            while pop.stop < pop.n and pop.time[pop.stop] < t1:
                pop.stop += 1
        self._price(book, last_mid, mids, n_mids)
        return 0

    cdef int _until(self, OrderBook book, double limit, i64* counts) except -1:
        """`until`, adding to counts[0] the orders submitted and to counts[1] those
        cancelled."""
        cdef Py_ssize_t p, best, n_pops = self.populations.size(), rows = 0, same = 0
        cdef Population* pop
        cdef double t, when, refill, last = -INFINITY
        cdef Sampler sampler
        while True:  # merge the populations' rows by time, ties in population order
            best = -1
            for p in range(n_pops):
                pop = &self.populations[p]
                if pop.rule == LEARNED:
                    sampler = <Sampler>pop.sampler
                    when = sampler.next_time
                    if when < sampler.end and (best < 0 or when < t):
                        best, t = p, when
                    continue
                when = pop.time[pop.cursor] if pop.cursor < pop.stop else INFINITY
                if pop.rule == REPLAY:  # a level the seats took refills before the message
                    refill = (<Replayer>pop.replayer)._next_release()
                    if refill < self.end and refill < when:
                        when = refill
                if when < INFINITY and (best < 0 or when < t):
                    best, t = p, when
            if best < 0 or not t < limit:
                break
            rows += 1
            if rows & (SIGNAL_EVERY - 1) == 0:  # a power of 2
                PyErr_CheckSignals()  # an interrupt raises here
            same = same + 1 if t == last else 0
            if same > MAX_AT_ONE_TIME:
                raise RuntimeError(
                    f"the background flow's clock stopped at {t:g} s: more than "
                    f"{MAX_AT_ONE_TIME:,} rows at that time (times this large leave no room "
                    "between its events; a session's times lie within a week)"
                )
            last = t
            pop = &self.populations[best]
            book.now = t
            if pop.rule == LEARNED:
                (<Sampler>pop.sampler)._fire(book, counts)
                continue
            if pop.rule == REPLAY and (pop.cursor == pop.stop or t < pop.time[pop.cursor]):
                (<Replayer>pop.replayer)._release(book)
                continue
            if pop.rule == MAKER:
                _ladder(book, pop, pop.owner[pop.cursor], counts)
            elif pop.rule == REPLAY:
                (<Replayer>pop.replayer)._handle(book, pop.ref[pop.cursor], None)
            else:
                book._row(
                    pop.kind[pop.cursor], pop.side[pop.cursor], pop.price[pop.cursor],
                    pop.qty[pop.cursor], pop.owner[pop.cursor], pop.ref[pop.cursor],
                    self.handlers, None, counts,
                )
            pop.cursor += 1
        return 0

    cdef int _price(
        self, OrderBook book, double last_mid, const double* mids, Py_ssize_t n_mids
    ) except -1:
        """Fill in the prices (and kinds, sides) of this interval's rows from the market now
        and the first ``n_mids`` mids; a momentum population with no decision skips its
        rows."""
        cdef Py_ssize_t i, p
        cdef Population* pop
        cdef i64 holdings, units, index, width, member, best_bid = 0, best_ask = 0
        cdef bint both = quoted(book)
        cdef double level
        if both:
            best_bid = best_key(&book._bids)
            best_ask = -best_key(&book._asks)
        for p in range(self.populations.size()):
            pop = &self.populations[p]
            if pop.cursor == pop.stop or pop.rule == FIXED or pop.rule == REPLAY:
                continue  # nothing to price
            if pop.rule == MAKER:
                pop.bid = <i64>floor(last_mid - pop.half_spread)
                pop.ask = <i64>ceil(last_mid + pop.half_spread)
                continue
            if pop.rule == MOMENTUM:
                pop.decision = 0
                if both and n_mids >= pop.long:
                    level = _mean(mids, n_mids, pop.short) - _mean(mids, n_mids, pop.long)
                    pop.decision = 1 if level > 0 else -1 if level < 0 else 0
                if pop.decision == 0:
                    pop.cursor = pop.stop  # no orders this interval
                    continue
            width = 2 * pop.q_max
            for i in range(pop.cursor, pop.stop):
                if pop.rule == ZERO_INTELLIGENCE:
                    holdings = position(book, pop.owner[i])
                    units = <i64>rint(<double>holdings / pop.lot)
                    index = units + pop.q_max - (1 if pop.side[i] < 0 else 0)
                    pop.kind[i] = K_REPLACE if 0 <= index < width else K_CANCEL_ALL
                    index = 0 if index < 0 else width - 1 if index >= width else index
                    member = pop.owner[i] - pop.first_owner
                    level = rint(pop.value[i] + pop.theta[member * width + index])
                    pop.price[i] = <i32>(level if level > 1.0 else 1.0)
                elif pop.rule == MOMENTUM:
                    pop.side[i] = pop.decision
                    pop.price[i] = best_ask if pop.decision > 0 else best_bid
        return 0


cdef int _ladder(OrderBook book, Population* pop, i64 owner, i64* counts) except -1:
    """A market maker's wake-up: cancel its orders, then its bids, then its asks."""
    cdef i64 j
    book._row(K_CANCEL_ALL, 0, 0, 0, owner, -1, None, None, counts)
    for j in range(pop.levels):
        book._row(K_LIMIT, 1, pop.bid - j * pop.spacing, pop.size, owner, -1, None, None, counts)
    for j in range(pop.levels):
        book._row(K_LIMIT, -1, pop.ask + j * pop.spacing, pop.size, owner, -1, None, None, counts)
    return 0


cdef inline double _mean(const double* mids, Py_ssize_t n, i64 last) noexcept:
    """The mean of the ``last`` mids of the first ``n``. Mids are multiples of half a tick far
    below 2**52, so the sum is exact in any order (numpy's pairwise sum gives the same)."""
    cdef double total = 0.0
    cdef Py_ssize_t i
    for i in range(n - last, n):
        total += mids[i]
    return total / last


def linear_recursion(const double[::1] decay, const double[::1] kicks):
    """x_i = x_{i-1} decay_i + kicks_i from x_{-1} = 0, shape (n,): an Ornstein-Uhlenbeck path
    sampled at uneven times (`envs.simulator.traders.ZeroIntelligence.fundamental_path`)."""
    out = np.empty(kicks.shape[0])
    cdef double[::1] path = out
    cdef double x = 0.0
    cdef Py_ssize_t i
    for i in range(kicks.shape[0]):
        x = x * decay[i] + kicks[i]
        path[i] = x
    return out


def periodic_times(const double[::1] phase, double period, double t0, double t1):
    """Wake-ups at ``phase + j * period`` (phase per agent, seconds, shape (n,)) in [t0, t1):
    (times float64, agent indices int32), sorted by time, ties by agent: what a stable argsort
    of every agent's wake-ups one agent after another gives (`envs.simulator.traders.base`), the same
    numbers computed the same way. Every agent's first wake-up lies in [t0, t0 + period), so
    taking the agents in the order of their first wake-up round after round sorts them; that
    order is checked strictly increasing, else the agents' lists are merged one row at a
    time."""
    if not period > 0:
        raise ValueError(f"period must be > 0 (seconds), got {period}")
    cdef Py_ssize_t n = phase.shape[0], a, i, k, r, total = 0, rounds = 0
    first_array, counts_array = np.empty(n), np.empty(n, dtype=np.int64)
    cdef double[::1] first = first_array
    cdef long long[::1] count = counts_array
    cdef double span
    for a in range(n):
        first[a] = ceil((t0 - phase[a]) / period)
        span = ceil((t1 - phase[a]) / period) - first[a]
        count[a] = <long long>(span if span > 0 else 0.0)
        total += count[a]
        rounds = max(rounds, count[a])
    times_array = np.empty(total)
    agents_array = np.empty(total, dtype=np.int32)
    cdef double[::1] times = times_array
    cdef int[::1] agents = agents_array
    cdef const long long[::1] lead = np.argsort(
        np.asarray(phase) + first_array * period, kind="stable"
    )
    cdef bint increasing = True
    k = 0
    for r in range(rounds):
        for i in range(n):
            a = lead[i]
            if r < count[a]:
                times[k] = phase[a] + (first[a] + <double>r) * period
                agents[k] = <int>a
                increasing = increasing and (k == 0 or times[k] > times[k - 1])
                k += 1
    if not increasing:
        _merge_agents(phase, first, count, period, times, agents)
    return times_array, agents_array


cdef void _merge_agents(
    const double[::1] phase, const double[::1] first, const long long[::1] count,
    double period, double[::1] times, int[::1] agents,
) noexcept:
    """Each agent's wake-ups merged one row at a time: the earliest next one, ties to the
    lowest agent (a stable sort of the agents' lists one after another)."""
    cdef Py_ssize_t n = phase.shape[0], a, best, k
    cdef vector[i64] done = vector[i64](n, 0)
    cdef double t, best_time = 0.0
    for k in range(times.shape[0]):
        best = -1
        for a in range(n):
            if done[a] < count[a]:
                t = phase[a] + (first[a] + <double>done[a]) * period
                if best < 0 or t < best_time:
                    best, best_time = a, t
        times[k], agents[k] = best_time, <int>best
        done[best] += 1


def _column(values, dtype, order, list arrays):
    """``values`` (None: None) as a contiguous ``dtype`` array in ``order``, kept in
    ``arrays``; the same array when it already is one."""
    if values is None:
        return None
    array = np.ascontiguousarray(np.asarray(values, dtype)[order])
    arrays.append(array)
    return array


def _restore(programs, handlers, cursors):
    """Unpickle: the flow of ``programs`` with each population's rows before its cursor
    carried out."""
    cdef Flow flow = Flow(programs, handlers)
    flow.seek(cursors)
    return flow
