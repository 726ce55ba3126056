# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
# cython: cdivision=True
# distutils: language = c++
"""A learned population's events drawn one at a time against the live book, compiled.

`EventSampler` draws the events of an `envs.simulator.eventmodel.EventModel`, whose rate is
a baseline (read from the book's state, times the time of day's profile) plus a Hawkes
excitation per kernel, as the superposition of those parts: each part's next event is drawn
and the first one taken. A kernel's excitation only decays until the next event, so its
next event is drawn exactly (by inverting its integral) and its kind and side in proportion
to its rates. The baseline part is thinned (Ogata 1981): a candidate time comes from a
bound (the largest total over both sides of the baseline of any one state of the book,
times the profile, piecewise by its bins), and is kept with probability (the baseline of
the book as it is then) / bound, its kind and side in proportion to their baselines.
Whatever changes the book between events (the seats' orders, other populations) is
therefore seen exactly, so the flow reacts to it. A kept event's marks are drawn from their
distributions, then it acts on the book at once:

- a limit order at the best, inside the spread (a drawn fraction of the spread, rounded, at
  least 1 tick and at most spread - 1) or behind the best; the bid side's orders are
  ``bid_owner``'s, the ask side's ``ask_owner``'s;
- a cancel of the population's newest order at the best or behind it (none there: nothing
  happens): a whole order, as nearly every cancel on a tape is;
- the best these offsets start from is the side's, a seat's quote included: the flow joins
  or improves on a seat's quote as on anyone's, and a cancel at a best that a seat holds
  alone finds nothing to cancel;
- a market order that takes a drawn fraction of the queue it meets (most take all of it):
  the population's best level on its side, the seats' orders there included, after every
  order resting at a better price (a seat's quote inside the spread), so that the price moves
  through the seats' quotes as it would without them; sent by the other side's owner so that
  the population never trades with itself.

After each event every side holds ``depth`` levels of the population's own (the tape's
levels, at least 2; a seat's levels do not count): a missing level is added behind its
deepest at a gap and with a queue drawn from those the tape reveals behind the best; its
volume on levels beyond them is taken out. The uniforms come from the population's numpy
generator (``rng.random()`` gives the same numbers), so
`envs.simulator.traders.learned.reference_events` draws the same events in Python.
`NeuralSampler` draws a neural flow's events against the same book, its rates set by a GRU
after each event (`envs.simulator.neuralflow`), every event thinned against one bound.
"""

import weakref

import numpy as np

from cpython.pycapsule cimport PyCapsule_GetPointer
from cython.operator cimport dereference as deref, predecrement as dec
from libc.math cimport INFINITY, exp, floor, log, log1p, rint
from libc.string cimport memcpy

from tradearena.envs.simulator.book cimport (
    K_LIMIT, K_MARKET, QTY_MAX, Half, LevelIter, OrderBook, best_key, i64,
)

__all__ = ["EventSampler", "KINDS", "NeuralSampler", "baseline_bound", "jumps"]

cdef enum:
    N_KINDS = 6

KINDS = N_KINDS

cdef enum:
    LIMIT_TOUCH = 0
    LIMIT_INSIDE = 1
    LIMIT_BEHIND = 2
    CANCEL_TOUCH = 3
    CANCEL_BEHIND = 4
    MARKET = 5


def baseline_bound(mu, Py_ssize_t n_spread, Py_ssize_t n_queue) -> float:
    """The largest baseline (events per second at a profile of 1) of both sides together
    over the book's states: mu (KINDS, cells) summed over kinds at the bid side's state plus
    at the ask side's, which is the bid side's with the queues swapped."""
    total = np.asarray(mu, np.float64).sum(axis=0).reshape(n_spread, n_queue, n_queue)
    return float((total + total.transpose(0, 2, 1)).max())


def jumps(alpha, decays):
    """What an event adds to each kernel's excitation: (kernels, 2 KINDS sources, 2 KINDS
    targets), by side index and kind; alpha (kernels, KINDS, 2 KINDS) times the decay."""
    alpha = np.asarray(alpha, np.float64)
    scale = np.asarray(decays, np.float64)[:, None, None]
    same, other = alpha[:, :, :N_KINDS] * scale, alpha[:, :, N_KINDS:] * scale  # [k, b, j]
    out = np.empty((len(alpha), 2 * N_KINDS, 2 * N_KINDS))
    out[:, :N_KINDS, :N_KINDS] = out[:, N_KINDS:, N_KINDS:] = same.transpose(0, 2, 1)
    out[:, :N_KINDS, N_KINDS:] = out[:, N_KINDS:, :N_KINDS] = other.transpose(0, 2, 1)
    return out


cdef class EventSampler:
    """Draws a learned population's events (see the module docstring).

    mu: (KINDS, cells) events per second; alpha: (kernels, KINDS, 2 KINDS); decays:
    (kernels,) per second; profile: (bins,) from ``start`` seconds, ``bin_seconds`` each;
    spread_edges, queue_edges: the state's bucket edges (ticks, lots); marks: the
    distributions (values, probabilities) of each kind's sizes, of the offsets inside the
    spread as fractions of it per spread bucket, of limit and cancel offsets behind the best,
    and of the gap and queue of a level added behind the deepest, in that order; rng: a numpy Generator; t0:
    seconds, the time the first event is drawn from.
    """

    def __init__(
        self, mu, alpha, decays, profile, double start, double bin_seconds, spread_edges,
        queue_edges, list marks, i64 depth, i64 bid_owner, i64 ask_owner, object rng,
        double t0,
    ):
        self._parameters = (
            mu, alpha, decays, profile, start, bin_seconds, spread_edges, queue_edges, marks,
            depth, bid_owner, ask_owner,
        )
        mu = np.asarray(mu, np.float64)
        alpha = np.asarray(alpha, np.float64)
        n_spread, n_queue = len(spread_edges) + 1, len(queue_edges) + 1
        if mu.shape != (N_KINDS, n_spread * n_queue * n_queue):
            raise ValueError(f"mu must be ({N_KINDS}, cells), got {mu.shape}")
        if alpha.ndim != 3 or alpha.shape[1:] != (N_KINDS, 2 * N_KINDS) or alpha.shape[0] != len(decays):
            raise ValueError(f"alpha must be (kernels, {N_KINDS}, {2 * N_KINDS}), got {alpha.shape}")
        if len(marks) != N_KINDS + n_spread + 4:
            raise ValueError(f"need {N_KINDS + n_spread + 4} mark distributions, got {len(marks)}")
        if depth < 1:
            raise ValueError(f"depth must be >= 1 levels, got {depth}")
        if not bin_seconds > 0 or not len(profile):
            raise ValueError(
                f"the profile needs bins of > 0 seconds, got {len(profile)} of {bin_seconds}"
            )
        if not (np.isfinite(decays).all() and (np.asarray(decays, np.float64) > 0).all()):
            raise ValueError(f"decays must be finite and > 0 per second, got {list(decays)}")
        if not (np.isfinite(mu).all() and np.isfinite(alpha).all()):
            raise ValueError("mu and alpha must be finite")
        self._t = _tables(mu, alpha, decays, profile, spread_edges, queue_edges, marks)
        self._start, self._bin_seconds = start, bin_seconds
        self._kernels, self._cells, self._queue_buckets = len(decays), mu.shape[1], n_queue
        self.depth, self.bid_owner, self.ask_owner = depth, bid_owner, ask_owner
        self._excitation.assign(self._kernels * 2 * N_KINDS, 0.0)
        self._totals.assign(self._kernels, 0.0)
        self._kernel_next.assign(self._kernels, INFINITY)
        self._rng = rng
        self._bitgen = <bitgen_t*>PyCapsule_GetPointer(rng.bit_generator.capsule, "BitGenerator")
        self.events = self.candidates = 0
        self.end = INFINITY
        self._last = t0
        self._begin(t0)

    def __reduce__(self):
        state = (
            self._rng, list(self._excitation), list(self._totals), list(self._kernel_next),
            self._last, self._base_next, self.end, self.events, self.candidates,
        )
        return _rebuild, (self._parameters, state)

    def fire(self, OrderBook book):
        """Take the candidate at `next_time` on ``book`` -> (orders submitted, orders
        cancelled)."""
        cdef i64 counts[2]
        counts[0] = counts[1] = 0
        book.now = self.next_time
        self._fire(book, counts)
        return counts[0], counts[1]

    def fill(self, OrderBook book):
        """Bring both sides of ``book`` to `depth` levels (the opening book) -> orders
        submitted."""
        cdef i64 counts[2]
        counts[0] = counts[1] = 0
        self._keep_depth(book, 1, counts)
        self._keep_depth(book, -1, counts)
        return counts[0]

    def rates(self, OrderBook book, double t):
        """The model's rates (events per second, (2, KINDS): bid side, ask side) at ``t``
        seconds with ``book`` (``t`` at or after the last event)."""
        out = np.empty(2 * N_KINDS)
        cdef double[::1] view = out
        self._rates(book, t, &view[0])
        return out.reshape(2, N_KINDS)

    cdef double _uniform(self) noexcept:
        return self._bitgen.next_double(self._bitgen.state)

    cdef double _draw(self, Py_ssize_t distribution) noexcept:
        """A value of a mark's distribution: the first whose cumulative probability exceeds
        a uniform."""
        cdef double u = self._uniform()
        cdef Py_ssize_t lo = self._t.first[distribution], hi = self._t.first[distribution + 1] - 1
        cdef Py_ssize_t n = hi - lo + 1, i
        cdef const double* cdf = self._t.cdf.data()
        i = <Py_ssize_t>(u * <double>n)
        i = self._t.guide[lo + (i if i < n else n - 1)]
        while i > lo and cdf[i - 1] > u:
            i -= 1
        while i < hi and cdf[i] <= u:
            i += 1
        return self._t.values[i]

    cdef void _cells_of(self, OrderBook book, Py_ssize_t* cells) noexcept:
        """The book's state seen from the bid side (cells[0]) and from the ask side
        (cells[1])."""
        cdef Py_ssize_t sb = self._t.spread_edges.size(), qb = 0, qa = 0, i, n
        cdef double spread, q_bid = 0.0, q_ask = 0.0
        cdef const double* edges
        cdef LevelIter bid, ask
        cdef bint bids = not book._bids.empty(), asks = not book._asks.empty()
        if bids:
            bid = book._bids.end()
            dec(bid)
            q_bid = <double>deref(bid).second.volume
        if asks:
            ask = book._asks.end()
            dec(ask)
            q_ask = <double>deref(ask).second.volume
        if bids and asks:
            spread = <double>(-deref(ask).first - deref(bid).first)
            sb = _bucket(self._t.spread_edges, spread)
        edges = self._t.queue_edges.data()
        n = self._t.queue_edges.size()
        for i in range(n):
            qb += edges[i] <= q_bid
            qa += edges[i] <= q_ask
        n = self._queue_buckets
        cells[0] = (sb * n + qb) * n + qa
        cells[1] = (sb * n + qa) * n + qb

    cdef double _level(self, double t) noexcept:
        """The profile's relative rate at ``t`` seconds (flat beyond its bins)."""
        cdef Py_ssize_t bins = self._t.profile.size()
        cdef double position = floor((t - self._start) / self._bin_seconds)
        return self._t.profile[0 if position < 0 else <Py_ssize_t>min(position, <double>(bins - 1))]

    cdef void _rates(self, OrderBook book, double t, double* rates) noexcept:
        """Each (side index, kind)'s rate at ``t`` (at or after the last event) into
        ``rates`` (2 KINDS)."""
        cdef Py_ssize_t k, e
        cdef double level = self._level(t), fade
        self._baseline(book, rates)
        for e in range(2 * N_KINDS):
            rates[e] *= level
        for k in range(self._kernels):
            fade = exp(-self._t.decays[k] * (t - self._last))
            for e in range(2 * N_KINDS):
                rates[e] += self._excitation[k * 2 * N_KINDS + e] * fade

    cdef double _baseline(self, OrderBook book, double* rates) noexcept:
        """Each (side index, kind)'s baseline in the book's state now, before the profile,
        into ``rates`` (2 KINDS); their total."""
        cdef Py_ssize_t e
        cdef Py_ssize_t cells[2]
        cdef double total = 0.0
        self._cells_of(book, cells)
        for e in range(2 * N_KINDS):
            rates[e] = self._t.mu[(e % N_KINDS) * self._cells + cells[e // N_KINDS]]
            total += rates[e]
        return total

    cdef void _begin(self, double t) noexcept:
        """The first event's draws from ``t`` (no excitation yet)."""
        self._base_next = self._base_draw(t)
        self._choose()

    cdef double _base_draw(self, double t) noexcept:
        """The next baseline candidate after ``t``: at the bound times the profile, bin by
        bin (flat before the first and beyond the last)."""
        cdef Py_ssize_t bins = self._t.profile.size(), i
        cdef double work = -log(1.0 - self._uniform()), rate, end
        cdef double position = floor((t - self._start) / self._bin_seconds)
        i = 0 if position < 0 else <Py_ssize_t>min(position, <double>(bins - 1))
        while True:
            rate = self._t.base_bound * self._t.profile[i]
            if i == bins - 1:
                return t + work / rate if rate > 0 else INFINITY
            end = self._start + <double>(i + 1) * self._bin_seconds
            if rate > 0 and work < rate * (end - t):
                return t + work / rate
            work -= rate * (end - t)
            t = end
            i += 1

    cdef double _kernel_draw(self, Py_ssize_t k, double t) noexcept:
        """Kernel ``k``'s next event after ``t`` (the last event's time, its excitation's
        then): the inverse of its integral, none if it stops short of the draw."""
        cdef double total = self._totals[k], x
        if not total > 0:
            return INFINITY
        x = self._t.decays[k] * -log(1.0 - self._uniform()) / total
        return t - log1p(-x) / self._t.decays[k] if x < 1.0 else INFINITY

    cdef void _choose(self) noexcept:
        """`next_time`: the first of the baseline's candidate and the kernels' events."""
        cdef Py_ssize_t k
        self.next_time, self._which = self._base_next, -1
        for k in range(self._kernels):
            if self._kernel_next[k] < self.next_time:
                self.next_time, self._which = self._kernel_next[k], k

    cdef int _fire(self, OrderBook book, i64* counts) except -1:
        """The candidate at `next_time`: a kernel's event, or the baseline's candidate kept
        or not; then the next one drawn."""
        cdef double t = self.next_time, total, u
        cdef double rates[2 * N_KINDS]
        cdef const double* part
        cdef Py_ssize_t e, which = self._which
        self.candidates += 1
        if which >= 0:  # a kernel's event: kind and side by its excitation
            part = &self._excitation[which * 2 * N_KINDS]
            e = _pick(part, self._uniform() * self._totals[which])
        else:  # the baseline's candidate: kept with (the book's baseline) / bound
            total = self._baseline(book, rates)
            u = self._uniform() * self._t.base_bound
            e = _pick(rates, u) if u < total else -1
        if e >= 0:
            self._act(book, e % N_KINDS, 1 if e < N_KINDS else -1, counts)
            self._accepted(e, t)
            self.events += 1
        if which < 0:
            self._base_next = self._base_draw(t)
        self._choose()
        return 0

    cdef int _accepted(self, Py_ssize_t e, double t) except -1:
        """After an event of (side index x KINDS + kind) ``e`` at ``t``: each kernel's
        excitation decayed to ``t`` plus the event's, and its next event drawn."""
        cdef Py_ssize_t k, j, width = 2 * N_KINDS
        cdef double fade
        cdef double* part
        cdef const double* jump
        cdef double total
        for k in range(self._kernels):
            fade = exp(-self._t.decays[k] * (t - self._last))
            part = &self._excitation[k * width]
            jump = &self._t.jump[(k * width + e) * width]
            total = 0.0
            for j in range(width):
                part[j] = part[j] * fade + jump[j]
                total += part[j]
            self._totals[k] = total
        self._last = t
        for k in range(self._kernels):
            self._kernel_next[k] = self._kernel_draw(k, t)
        return 0

    cdef int _act(self, OrderBook book, Py_ssize_t kind, int side, i64* counts) except -1:
        """Carry out an event of ``kind`` on ``side`` (see the module docstring)."""
        cdef Half* own = book._half(side)
        if not own.empty():  # else nothing happens, and the depth rule refills the side
            self._carry(book, kind, side, side * best_key(own), counts)
        self._keep_depth(book, 1, counts)
        self._keep_depth(book, -1, counts)
        return 0

    cdef int _carry(self, OrderBook book, Py_ssize_t kind, int side, i64 best, i64* counts) except -1:
        """`_act` on a side with a best price ``best``."""
        cdef Half* other = book._half(-side)
        cdef i64 owner = self.bid_owner if side > 0 else self.ask_owner
        cdef i64 taker = self.ask_owner if side > 0 else self.bid_owner
        cdef i64 opposite, spread, price, ticks, qty
        cdef Py_ssize_t bucket
        cdef double size = self._draw(kind)
        if kind == MARKET:
            size = _met(book, side, owner, size)
        qty = _lots(size)
        if kind == LIMIT_TOUCH or kind == LIMIT_INSIDE or kind == LIMIT_BEHIND:
            price = best
            if kind == LIMIT_INSIDE and not other.empty():
                opposite = -side * best_key(other)
                spread = side * (opposite - best)
                if spread > 1:
                    bucket = _bucket(self._t.spread_edges, <double>spread)
                    ticks = <i64>rint(self._draw(N_KINDS + bucket) * <double>spread)
                    price = best + side * max(1, min(ticks, spread - 1))
            elif kind == LIMIT_BEHIND:
                price = best - side * <i64>rint(self._draw(self._behind(0)))
            if price > 0:
                book._row(K_LIMIT, side, price, qty, owner, -1, None, None, counts)
        elif kind == CANCEL_TOUCH or kind == CANCEL_BEHIND:
            price = best
            if kind == CANCEL_BEHIND:
                price = best - side * <i64>rint(self._draw(self._behind(1)))
            counts[1] += _delete_newest(book, side, price, owner)
        else:
            book._row(K_MARKET, -side, 0, qty, taker, -1, None, None, counts)
        return 0

    cdef Py_ssize_t _behind(self, int which) noexcept:
        """The distribution of offsets behind the best: 0 limit orders, 1 cancels; 2 the gap
        and 3 the queue of a level added behind the deepest."""
        return N_KINDS + self._t.spread_edges.size() + 1 + which

    cdef int _keep_depth(self, OrderBook book, int side, i64* counts) except -1:
        """``side`` brought to `depth` levels of the population's own (other participants'
        levels neither count nor are touched): its volume beyond them taken out, missing
        ones added behind its deepest."""
        cdef Half* half = book._half(side)
        cdef Half* other = book._half(-side)
        cdef i64 owner = self.bid_owner if side > 0 else self.ask_owner
        cdef LevelIter it = half.end(), deeper
        cdef i64 n = 0, deepest = 0, price, qty
        cdef bint last
        while n < self.depth and it != half.begin():
            dec(it)
            if _holds(book, deref(it).second.head, owner):
                deepest = side * deref(it).first
                n += 1
        if n == self.depth and it != half.begin():  # levels beyond: best first
            dec(it)
            while True:
                price = side * deref(it).first
                last = it == half.begin()
                if not last:
                    deeper = it
                    dec(deeper)
                book._reduce(side, price, QTY_MAX, owner, False)  # may erase this level only
                if last:
                    break
                it = deeper
        while n < self.depth:
            if n == 0:
                if not half.empty():
                    deepest = side * best_key(half)
                elif other.empty():
                    return 0  # nothing to stand behind: the next event's side refills it
                else:
                    deepest = -side * best_key(other)
            price = deepest - side * <i64>rint(self._draw(self._behind(2)))
            if price <= 0:
                return 0
            qty = _lots(self._draw(self._behind(3)))
            book._row(K_LIMIT, side, price, qty, owner, -1, None, None, counts)
            deepest = price
            n += 1
        return 0


cdef inline bint _holds(OrderBook book, i64 slot, i64 owner) noexcept:
    """Whether the level whose oldest order is at ``slot`` holds an order of ``owner``."""
    while slot and book._orders[slot].owner != owner:
        slot = book._orders[slot].next
    return slot != 0


cdef class Tables:
    """A model's fixed tables as a sampler reads them, shared by the samplers of one model
    (`_tables`)."""

    cdef int _guide_marks(self) except -1:
        """Each mark distribution's guide: its n entries, the j-th the first value whose
        cumulative probability exceeds j / n, where `EventSampler._draw` starts its
        search."""
        cdef Py_ssize_t d, j, i, lo, hi, n
        self.guide.resize(self.values.size())
        for d in range(<Py_ssize_t>self.first.size() - 1):
            lo, hi = self.first[d], self.first[d + 1] - 1
            n, i = hi - lo + 1, lo
            for j in range(n):
                while i < hi and self.cdf[i] <= <double>j / <double>n:
                    i += 1
                self.guide[lo + j] = i
        return 0


_TABLES = weakref.WeakValueDictionary()


cdef Tables _tables(mu, alpha, decays, profile, spread_edges, queue_edges, list marks):
    """The tables of a model's parameters: those already made for the same parameters, if
    any sampler still holds them, else new ones."""
    arrays = [np.ascontiguousarray(a, np.float64) for a in (mu, alpha, decays, profile)]
    arrays += [np.ascontiguousarray(a, np.float64) for a in (spread_edges, queue_edges)]
    for values, probabilities in marks:
        arrays += [np.ascontiguousarray(values, np.float64)]
        arrays += [np.ascontiguousarray(probabilities, np.float64)]
    key = tuple((a.shape, a.tobytes()) for a in arrays)
    cdef Tables tables = _TABLES.get(key)
    if tables is not None:
        return tables
    mu, alpha = arrays[0], arrays[1]
    if (mu < 0).any() or (alpha < 0).any() or (arrays[3] < 0).any():
        raise ValueError("mu, alpha and the profile must not be negative")
    tables = Tables()
    _fill(tables.mu, mu.ravel())
    _fill(tables.jump, jumps(alpha, arrays[2]).ravel())
    _fill(tables.decays, arrays[2])
    _fill(tables.profile, arrays[3])
    _fill(tables.spread_edges, arrays[4])
    _fill(tables.queue_edges, arrays[5])
    values, cdfs, first, total = [], [], [0], 0
    for v, probabilities in marks:
        cdf = np.cumsum(np.asarray(probabilities, np.float64))
        cdf /= cdf[len(cdf) - 1]
        n = min(len(v), len(cdf))
        values.append(np.asarray(v, np.float64)[:n])
        cdfs.append(cdf[:n])
        total += n
        first.append(total)
    _fill(tables.values, np.concatenate(values))
    _fill(tables.cdf, np.concatenate(cdfs))
    tables.first = first
    tables._guide_marks()
    tables.base_bound = baseline_bound(mu, len(arrays[4]) + 1, len(arrays[5]) + 1)
    _TABLES[key] = tables
    return tables


cdef int _fill(vector[double]& out, const double[::1] data) except -1:
    """``out`` set to ``data``."""
    out.resize(data.shape[0])
    if data.shape[0]:
        memcpy(out.data(), &data[0], data.shape[0] * sizeof(double))
    return 0


cdef inline i64 _best_volume(Half* half) noexcept:
    """The lots at the best level of a side that is not empty."""
    cdef LevelIter it = half.end()
    dec(it)
    return deref(it).second.volume


cdef inline Py_ssize_t _pick(const double* rates, double u) noexcept:
    """The first of the 2 KINDS (side index, kind)s whose running sum of ``rates`` exceeds
    ``u`` (the last when none does)."""
    cdef Py_ssize_t e = 0
    while e < 2 * N_KINDS - 1 and u >= rates[e]:
        u -= rates[e]
        e += 1
    return e


cdef inline Py_ssize_t _bucket(const vector[double]& edges, double value) noexcept:
    """``value``'s bucket: how many of ``edges`` are at or below it."""
    cdef Py_ssize_t i, n = 0
    for i in range(<Py_ssize_t>edges.size()):
        n += edges[i] <= value
    return n


cdef inline i64 _lots(double size) noexcept:
    """A drawn size as an order's lots: rounded, at least 1, at most QTY_MAX."""
    cdef i64 qty = <i64>rint(size)
    return 1 if qty < 1 else QTY_MAX if qty > QTY_MAX else qty


cdef double _met(OrderBook book, int side, i64 owner, double fraction) noexcept:
    """The lots a market order on ``side`` takes, its size drawn as ``fraction`` of the queue
    it meets: all the volume at prices better than ``owner``'s best there (other
    participants' orders: the seats') and ``fraction`` of the level at that best (of the best
    level when ``owner`` rests nowhere on the side). So the price moves through a seat's
    quote inside the spread as it would were the quote not there."""
    cdef Half* half = book._half(side)
    cdef LevelIter it = half.end()
    cdef double ahead = 0.0
    while it != half.begin():
        dec(it)
        if _holds(book, deref(it).second.head, owner):
            return ahead + fraction * <double>deref(it).second.volume
        ahead += <double>deref(it).second.volume
    return fraction * <double>_best_volume(half)


cdef i64 _delete_newest(OrderBook book, int side, i64 price, i64 owner) except -1:
    """Cancel ``owner``'s newest order at (side, price) -> orders cancelled (0 or 1)."""
    cdef Half* half = book._half(side)
    cdef LevelIter it = half.find(side * price)
    if it == half.end():
        return 0
    cdef i64 slot = deref(it).second.tail
    while slot and book._orders[slot].owner != owner:
        slot = book._orders[slot].prev
    if not slot:
        return 0
    book._cancel(book._id(slot), -1)
    return 1


cdef class NeuralSampler(EventSampler):
    """Draws a neural flow's events (`envs.simulator.neuralflow.NeuralModel`): with the
    rates the GRU sets after each event (a table by side, kind and state, times the profile,
    plus a burst decaying since the event) in place of the Hawkes excitation, each candidate
    thinned against the table's largest total per side at the profile's peak plus the bursts
    (which only decay until the next event); the events act on the book as `EventSampler`'s
    do. ``net``: the model; the rest as `EventSampler`'s (its base model's)."""

    def __init__(self, object net, list marks, i64 bid_owner, i64 ask_owner, object rng, double t0):
        base = net.base
        self._net, self._h = net, np.zeros(net.hidden)
        self._delta, self._event_time = net.delta, t0
        self._profile_peak = float(np.max(base.profile))
        self._cell_count = base.mu.shape[1]
        self._load()
        EventSampler.__init__(
            self, base.mu, base.alpha, base.decays, base.profile, base.start, base.bin_seconds,
            base.spread_edges, base.queue_edges, marks, base.depth, bid_owner, ask_owner, rng,
            t0,
        )
        self._parameters = (net, marks, bid_owner, ask_owner)

    def __reduce__(self):
        state = (
            self._rng, self._h.copy(), self._event_time, self.next_time, self.end, self._bound,
            self.events, self.candidates,
        )
        return _rebuild_neural, (self._parameters, state)

    cdef int _load(self) except -1:
        """Set the rates the GRU gives from its hidden state now: the table (2 KINDS cells,)
        and the bursts (2 KINDS,), per second, and the table's part of the bound."""
        cdef Py_ssize_t cells = self._cell_count, si, b, c
        cdef double best, total
        table, burst = self._net.rates(self._h)
        self._table = table
        self._burst = burst
        self._table_bound = 0.0
        for si in range(2):
            best = 0.0
            for c in range(cells):
                total = 0.0
                for b in range(N_KINDS):
                    total += self._table[(si * N_KINDS + b) * cells + c]
                best = max(best, total)
            self._table_bound += best * self._profile_peak
        return 0

    cdef void _rates(self, OrderBook book, double t, double* rates) noexcept:
        cdef Py_ssize_t e
        cdef Py_ssize_t cells[2]
        cdef double level = self._level(t), fade = exp(-self._delta * (t - self._event_time))
        self._cells_of(book, cells)
        for e in range(2 * N_KINDS):
            rates[e] = (
                self._table[e * self._cell_count + cells[e // N_KINDS]] * level
                + self._burst[e] * fade
            )

    cdef void _begin(self, double t) noexcept:
        self._candidate(t)

    cdef void _candidate(self, double t) noexcept:
        """The next candidate after ``t`` against the bound: the table's part and the bursts
        now (which only decay until the next event)."""
        cdef double bound = self._table_bound, fade = exp(-self._delta * (t - self._event_time))
        cdef Py_ssize_t e
        for e in range(2 * N_KINDS):
            bound += self._burst[e] * fade
        self._bound = bound
        self.next_time = t - log(1.0 - self._uniform()) / bound if bound > 0 else INFINITY

    cdef int _fire(self, OrderBook book, i64* counts) except -1:
        """The candidate at `next_time`: kept with (the rates then) / bound, or not; then the
        next one drawn."""
        cdef double t = self.next_time, total = 0.0, u
        cdef double rates[2 * N_KINDS]
        cdef Py_ssize_t e
        self._rates(book, t, rates)
        for e in range(2 * N_KINDS):
            total += rates[e]
        u = self._uniform() * self._bound
        self.candidates += 1
        if u < total:
            e = _pick(rates, u)
            self._act(book, e % N_KINDS, 1 if e < N_KINDS else -1, counts)
            self._accepted(e, t)
            self.events += 1
        self._candidate(t)
        return 0

    cdef int _accepted(self, Py_ssize_t e, double t) except -1:
        self._h = self._net.read(self._h, e, t - self._event_time)
        self._event_time = t
        self._load()
        return 0


def _rebuild_neural(parameters, state):
    """Unpickle: a neural sampler of ``parameters`` in ``state``."""
    net, marks, bid_owner, ask_owner = parameters
    rng, h, event_time, next_time, end, bound, events, candidates = state
    drawn = rng.bit_generator.state
    cdef NeuralSampler sampler = NeuralSampler(net, marks, bid_owner, ask_owner, rng, event_time)
    rng.bit_generator.state = drawn
    sampler._h, sampler._event_time = h, event_time
    sampler._load()
    sampler.next_time, sampler.end, sampler._bound = next_time, end, bound
    sampler.events, sampler.candidates = events, candidates
    return sampler


def _rebuild(parameters, state):
    """Unpickle: a sampler of ``parameters`` in ``state``."""
    rng, excitation, totals, kernel_next, last, base_next, end, events, candidates = state
    drawn = rng.bit_generator.state
    cdef EventSampler sampler = EventSampler(*parameters, rng=rng, t0=last)
    rng.bit_generator.state = drawn  # the next draws are the pickled ones, not new draws
    sampler._excitation = excitation
    sampler._totals = totals
    sampler._kernel_next = kernel_next
    sampler._last, sampler._base_next, sampler.end = last, base_next, end
    sampler._choose()
    sampler.events, sampler.candidates = events, candidates
    return sampler
