# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
# cython: cdivision=True
# distutils: language = c++
"""A learned population's events drawn one at a time against the live book, compiled.

A sampler is two parts. Its timing says when the next event comes and of which kind and
side: `EventSampler` for the parametric model (`learned_flow.model.EventModel`), `NeuralSampler`
for its neural variant (`learned_flow.neural.NeuralModel`); both read the book's state
through the model's `learned_flow.state.StateGrid`. Its `BookActor`, the same for both,
carries the event out on the book with marks drawn from the model's `learned_flow.marks`.

`EventSampler`'s rate is a baseline (read from the book's state, times the time of day's
profile) plus a Hawkes excitation per kernel (`learned_flow.kernels`) times the state's gain,
drawn as the superposition of those parts: each part's next event is drawn and the first one
taken. A kernel's excitation only decays until the next event, so its next candidate is
drawn exactly (by inverting its integral), its kind and side in proportion to its rates,
and kept with the gain of the state the book is in then (at most 1): a candidate not kept
leaves the excitation as it was, and the kernel's next is drawn from it. The baseline
part is thinned (Ogata 1981): a candidate time comes from a bound (the largest total over
both sides of the baseline of any one state of the book, times the profile, piecewise by
its bins), and is kept with probability (the baseline of the book as it is then) / bound,
its kind and side in proportion to their baselines. Whatever changes the book between
events (the seats' orders, other populations) is therefore seen exactly, so the flow reacts
to it. `NeuralSampler`'s rates are set by a GRU after each event, every candidate thinned
against one bound.

A kept event acts on the book at once (`BookActor`):

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
  through the seats' quotes as it would without them, and never past the population's deepest
  level (a seat's order resting beyond the levels it keeps is not swept into); sent by the
  other side's owner so that the population never trades with itself.

What others trade with the flow's resting orders (the seats' market orders) the flow hears
as market orders of its own kind, at the start of the interval that follows (`observe`): they
excite it as the tape's market orders excite the tape's flow, and its next events read the
book they left. With ``causal`` (the default) it reads only its own book (`BookActor`).

After each event every side holds ``depth`` levels of the population's own (the tape's
levels, at least 2; a seat's levels do not count): a missing level is added behind its
deepest at a gap and with a queue drawn from those the tape reveals behind the best; its
volume on levels beyond them is taken out. The uniforms come from the population's numpy
generator (``rng.random()`` gives the same numbers), so the Python reference of the tests
(tests/reference_flow.py) draws the same events.
"""

import weakref

import numpy as np

from cpython.pycapsule cimport PyCapsule_GetPointer
from cython.operator cimport dereference as deref, predecrement as dec
from libc.math cimport INFINITY, NAN, exp, floor, isnan, log, rint
from libc.string cimport memcpy

from tradearena.envs.simulator.book cimport (
    K_LIMIT, K_MARKET, QTY_MAX, Half, LevelIter, OrderBook, best_key, i64,
)
from tradearena.envs.simulator.learned_flow.kernels cimport fade, wait
from tradearena.envs.simulator.learned_flow.state cimport StateGrid, Touch, touch

from tradearena.envs.data.events import N_EVENT_KINDS as _N_EVENT_KINDS
from tradearena.envs.simulator.learned_flow.exciters import N_EXCITERS as _N_EXCITERS
from tradearena.envs.simulator.learned_flow.kernels import jumps
from tradearena.envs.simulator.learned_flow.marks import FAMILIES, By
from tradearena.envs.simulator.learned_flow.model import check

__all__ = [
    "BookActor", "EventSampler", "MarkTables", "NeuralSampler", "Sampler", "baseline_bound",
]

cdef enum:
    N_KINDS = 6  # envs.data.events.N_EVENT_KINDS, checked below
    N_EXC = 8  # learned_flow.exciters.N_EXCITERS, checked below

cdef enum:  # envs.data.events.EventKind
    LIMIT_TOUCH = 0
    LIMIT_INSIDE = 1
    LIMIT_BEHIND = 2
    CANCEL_TOUCH = 3
    CANCEL_BEHIND = 4
    MARKET = 5
    CANCEL_EMPTIED = 6  # learned_flow.exciters.Exciter
    MARKET_EMPTIED = 7

if (_N_EVENT_KINDS, _N_EXCITERS) != (N_KINDS, N_EXC):
    raise ImportError(
        f"the sampler is compiled for {N_KINDS} kinds of event and {N_EXC} exciters, not "
        f"{_N_EVENT_KINDS} and {_N_EXCITERS}"
    )

_FAMILY = {name: i for i, name in enumerate(FAMILIES)}
# the families of marks `BookActor` draws, by their place in `learned_flow.marks.FAMILIES`
cdef Py_ssize_t F_SIZES = _FAMILY["sizes"], F_TAKEN = _FAMILY["taken"]
cdef Py_ssize_t F_INSIDE = _FAMILY["inside"], F_LIMIT_BEHIND = _FAMILY["limit_behind"]
cdef Py_ssize_t F_CANCEL_BEHIND = _FAMILY["cancel_behind"]
cdef Py_ssize_t F_GAP = _FAMILY["gap"], F_QUEUE = _FAMILY["queue"]
# what a family's distributions are indexed by (`learned_flow.marks.By`)
cdef int BY_KIND = By.KIND, BY_QUEUE = By.QUEUE, BY_SPREAD = By.SPREAD


def baseline_bound(mu, Py_ssize_t n_spread, Py_ssize_t n_queue) -> float:
    """The largest baseline (events per second at a profile of 1) of both sides together
    over the book's states: mu (kinds, cells) summed over kinds at the bid side's state plus
    at the ask side's, which is the bid side's with the queues swapped."""
    total = np.asarray(mu, np.float64).sum(axis=0).reshape(n_spread, n_queue, n_queue)
    return float((total + total.transpose(0, 2, 1)).max())


# ------------------------------------------------------------------ a model's fixed tables
cdef class MarkTables:
    """A model's mark distributions as the samplers draw them (`learned_flow.marks.Marks`,
    flat), laid out by the families' definitions (`learned_flow.marks.FAMILIES`): their
    values and cumulative probabilities one after another, and per family where it starts
    and what its distributions are indexed by."""

    def layout(self) -> dict:
        """Per family, in the tables' order: (its first distribution, how many it holds,
        what they are indexed by: a `learned_flow.marks.By`)."""
        return {
            name: (
                self.family_first[f],
                self.family_first[f + 1] - self.family_first[f],
                By(self.by[f]),
            )
            for f, name in enumerate(self.names)
        }

    cdef int _guide(self) except -1:
        """Each distribution's guide: its n entries, the j-th the first value whose
        cumulative probability exceeds j / n, where `BookActor.draw` starts its search."""
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


cdef class RateTables:
    """A parametric model's rates as `EventSampler` reads them: mu (kinds x cells), the gain
    (kinds x spread buckets), what an event adds to each kernel's excitation (`learned_flow.kernels.jumps`),
    the decays and the baseline's bound."""


cdef class ProfileTable:
    """The time of day's relative rate: ``levels`` from ``start`` seconds after midnight,
    ``bin_seconds`` each, flat beyond them; ``peak`` the largest."""

    cdef Py_ssize_t bin(self, double t) noexcept:
        """The bin at ``t`` seconds (the first before them, the last after them)."""
        cdef Py_ssize_t bins = self.levels.size()
        cdef double position = floor((t - self.start) / self.bin_seconds)
        return 0 if position < 0 else <Py_ssize_t>min(position, <double>(bins - 1))


_SHARED = weakref.WeakKeyDictionary()
"""Per model: its tables, made once, shared by its samplers."""


def _shared(model) -> tuple:
    """(`MarkTables`, `ProfileTable`, `RateTables`) of an `EventModel` (checked as a sampler
    needs it: `learned_flow.model.check`), made once per model."""
    tables = _SHARED.get(model)
    if tables is None:
        check(model)
        tables = (_mark_tables(model.marks, FAMILIES), _profile(model), _rate_tables(model))
        _SHARED[model] = tables
    return tables


cdef MarkTables _mark_tables(marks, families):
    """The tables of ``marks`` laid out by the families' definitions ``families`` (name ->
    `learned_flow.marks.Family`, in the marks' order)."""
    cdef MarkTables tables = MarkTables()
    flat, first = marks.flat()
    values, cdfs, starts, total = [], [], [0], 0
    for v, probabilities in flat:
        cdf = np.cumsum(np.asarray(probabilities, np.float64))
        cdf /= cdf[len(cdf) - 1]
        values.append(np.asarray(v, np.float64))
        cdfs.append(cdf)
        total += len(cdf)
        starts.append(total)
    _fill(tables.values, np.concatenate(values))
    _fill(tables.cdf, np.concatenate(cdfs))
    tables.first = starts
    tables._guide()
    tables.names = list(families)
    tables.family_first = [first[name] for name in families] + [len(flat)]
    tables.by = [int(family.by) for family in families.values()]
    return tables


cdef ProfileTable _profile(model):
    cdef ProfileTable profile = ProfileTable()
    _fill(profile.levels, np.ascontiguousarray(model.profile, np.float64))
    profile.start, profile.bin_seconds = model.start, model.bin_seconds
    profile.peak = float(np.max(model.profile))
    return profile


cdef RateTables _rate_tables(model):
    cdef RateTables tables = RateTables()
    _fill(tables.mu, np.ascontiguousarray(model.mu, np.float64).ravel())
    _fill(tables.gain, np.ascontiguousarray(model.gain, np.float64).ravel())
    _fill(tables.jump, jumps(model.alpha, model.decays).ravel())
    _fill(tables.decays, np.ascontiguousarray(model.decays, np.float64))
    tables.base_bound = baseline_bound(model.mu, *model.shape[:2])
    return tables


cdef int _fill(vector[double]& out, const double[::1] data) except -1:
    """``out`` set to ``data``."""
    out.resize(data.shape[0])
    if data.shape[0]:
        memcpy(out.data(), &data[0], data.shape[0] * sizeof(double))
    return 0


# -------------------------------------------------------------------- acting on the book
cdef class BookActor:
    """Carries a learned flow's events out on the book (see the module docstring): the
    model's marks and depth, the population's owners (bid side, ask side) and its
    generator. ``causal``: the flow reads its own book (its best levels and its lots there,
    `learned_flow.state.touch`), so that others' resting orders do not move its rates nor
    the prices it quotes from; else the whole book."""

    def __init__(self, model, i64 bid_owner, i64 ask_owner, object rng, bint causal=True):
        self.marks = _shared(model)[0]
        self._grid = model.grid
        self.depth, self.bid_owner, self.ask_owner = model.depth, bid_owner, ask_owner
        self.bid_deepest = self.ask_deepest = 0
        self.causal = causal
        self._rng = rng
        self._bitgen = <bitgen_t*>PyCapsule_GetPointer(rng.bit_generator.capsule, "BitGenerator")

    cdef double uniform(self) noexcept:
        return self._bitgen.next_double(self._bitgen.state)

    cdef double draw(self, Py_ssize_t distribution) noexcept:
        """A value of a mark's distribution: the first whose cumulative probability exceeds
        a uniform."""
        cdef double u = self.uniform()
        cdef Py_ssize_t lo = self.marks.first[distribution]
        cdef Py_ssize_t hi = self.marks.first[distribution + 1] - 1
        cdef Py_ssize_t n = hi - lo + 1, i
        cdef const double* cdf = self.marks.cdf.data()
        i = <Py_ssize_t>(u * <double>n)
        i = self.marks.guide[lo + (i if i < n else n - 1)]
        while i > lo and cdf[i - 1] > u:
            i -= 1
        while i < hi and cdf[i] <= u:
            i += 1
        return self.marks.values[i]

    cdef double mark(
        self, OrderBook book, Py_ssize_t family, int side, Py_ssize_t kind, double lots,
        double spread,
    ) except? -1:
        """A value of ``family``'s marks for the event at hand, drawn from the distribution
        that what the family is indexed by picks (`MarkTables`): the event's ``kind`` (-1 at
        the depth rule, where there is none), the bucket of the ``lots`` at the best of
        ``side`` as the flow sees it, the bucket of the ``spread`` (ticks), or its only one;
        ``lots`` or ``spread`` NAN when not at hand, read from ``book``."""
        cdef int by = self.marks.by[family]
        cdef Py_ssize_t first = self.marks.family_first[family], index = 0
        cdef Touch best
        if by == BY_KIND:
            index = kind
        elif by == BY_QUEUE:
            if isnan(lots):
                touch(book, side, self.reader(side), &best)
                lots = best.lots
            index = self._grid.queue_bucket(lots)
        elif by == BY_SPREAD:
            index = self._grid.spread_bucket(self.spread(book) if isnan(spread) else spread)
        if not 0 <= index < self.marks.family_first[family + 1] - first:
            raise ValueError(
                f"marks.{self.marks.names[family]}: no distribution {index} of "
                f"{By(by).name} where it is drawn"
            )
        return self.draw(first + index)

    cdef i64 reader(self, int side) noexcept:
        """Whose orders on ``side`` the flow sees (`touch`): its own, or anyone's (-1)."""
        if not self.causal:
            return -1
        return self.bid_owner if side > 0 else self.ask_owner

    cdef void read(self, OrderBook book, Py_ssize_t* cells) noexcept:
        """The book's state as the flow sees it, from the bid side and from the ask side."""
        self._grid.read(book, self.reader(1), self.reader(-1), cells)

    cdef double spread(self, OrderBook book) noexcept:
        """The book's spread as the flow sees it, ticks (inf with a side empty)."""
        cdef Touch bid, ask
        touch(book, 1, self.reader(1), &bid)
        touch(book, -1, self.reader(-1), &ask)
        return <double>(ask.price - bid.price) if bid.price and ask.price else INFINITY

    cdef Py_ssize_t act(self, OrderBook book, Py_ssize_t kind, int side, i64* counts) except -1:
        """Carry out an event of ``kind`` on ``side`` (see the module docstring) -> its
        exciter: its kind, or for a cancel at the touch or a market order that emptied the
        best level (as the flow sees it), the exciter that says so."""
        cdef Touch best, after
        cdef Py_ssize_t exciter = kind
        touch(book, side, self.reader(side), &best)
        if best.price:  # else nothing happens, and the depth rule refills the side
            self._carry(book, kind, side, best, counts)
            if kind == CANCEL_TOUCH or kind == MARKET:
                touch(book, side, self.reader(side), &after)
                if after.price != best.price:
                    exciter = CANCEL_EMPTIED if kind == CANCEL_TOUCH else MARKET_EMPTIED
        self.keep_depth(book, 1, counts)
        self.keep_depth(book, -1, counts)
        return exciter

    cdef int _carry(
        self, OrderBook book, Py_ssize_t kind, int side, Touch best, i64* counts
    ) except -1:
        """`act` on a side whose best (as the flow sees it) is ``best``."""
        cdef i64 owner = self.bid_owner if side > 0 else self.ask_owner
        cdef i64 taker = self.ask_owner if side > 0 else self.bid_owner
        cdef i64 spread, price, ticks
        cdef double fraction
        cdef Touch other
        if kind == MARKET:
            fraction = self.mark(book, F_TAKEN, side, kind, best.lots, NAN)
            book._row(
                K_MARKET, -side, 0, _lots(_met(book, side, owner, fraction, self.causal)),
                taker, -1, None, None, counts,
            )
            return 0
        cdef i64 qty = _lots(self.mark(book, F_SIZES, side, kind, best.lots, NAN))
        price = best.price
        if kind == LIMIT_TOUCH or kind == LIMIT_INSIDE or kind == LIMIT_BEHIND:
            if kind == LIMIT_INSIDE:
                touch(book, -side, self.reader(-side), &other)
                spread = side * (other.price - best.price)
                if other.price and spread > 1:
                    ticks = <i64>rint(
                        self.mark(book, F_INSIDE, side, kind, best.lots, <double>spread)
                        * <double>spread
                    )
                    price = best.price + side * max(1, min(ticks, spread - 1))
            elif kind == LIMIT_BEHIND:
                ticks = <i64>rint(self.mark(book, F_LIMIT_BEHIND, side, kind, best.lots, NAN))
                price = best.price - side * ticks
            if price > 0:
                book._row(K_LIMIT, side, price, qty, owner, -1, None, None, counts)
        else:
            if kind == CANCEL_BEHIND:
                ticks = <i64>rint(self.mark(book, F_CANCEL_BEHIND, side, kind, best.lots, NAN))
                price = best.price - side * ticks
            counts[1] += _delete_newest(book, side, price, owner)
        return 0

    cdef int keep_depth(self, OrderBook book, int side, i64* counts) except -1:
        """``side`` brought to `depth` levels of the population's own (other participants'
        levels neither count nor are touched): its volume beyond them taken out, missing
        ones added behind its deepest. A side with none of its levels left (a market order
        took them all) is rebuilt behind the deepest it held (``bid_deepest``,
        ``ask_deepest``: where that order's sweep went), whatever other participants rest
        behind it; else behind their best, or behind the opposite best when that price is not
        behind it, so that the price moves on the way the sweep took it."""
        cdef Half* half = book._half(side)
        cdef Half* other = book._half(-side)
        cdef i64 owner = self.bid_owner if side > 0 else self.ask_owner
        cdef LevelIter it = half.end(), deeper
        cdef i64 n = 0, deepest = 0, price, qty
        cdef double spread
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
        cdef i64 held = self.bid_deepest if side > 0 else self.ask_deepest
        while n < self.depth:
            if n == 0:
                if held > 0 and (other.empty() or side * (-side * best_key(other) - held) > 0):
                    deepest = held
                elif not half.empty():
                    deepest = side * best_key(half)
                elif other.empty():
                    return 0  # nothing to stand behind: the next event's side refills it
                else:
                    deepest = -side * best_key(other)
            spread = self.spread(book)
            price = deepest - side * <i64>rint(self.mark(book, F_GAP, side, -1, NAN, spread))
            if price <= 0:
                return 0
            qty = _lots(self.mark(book, F_QUEUE, side, -1, NAN, spread))
            book._row(K_LIMIT, side, price, qty, owner, -1, None, None, counts)
            deepest = price
            n += 1
        if n:
            if side > 0:
                self.bid_deepest = deepest
            else:
                self.ask_deepest = deepest
        return 0


# --------------------------------------------------------------------------- the timing
cdef class Sampler:
    """What the compiled flow runs of a learned population: when its next event comes
    (`next_time`, seconds; none at or after `end`), `fire` to take it, and its `actor`.
    Subclassed by `EventSampler` and `NeuralSampler`."""

    def fire(self, OrderBook book):
        """Take the candidate at `next_time` on ``book`` -> (orders submitted, orders
        cancelled)."""
        cdef i64 counts[2]
        counts[0] = counts[1] = 0
        book.now = self.next_time
        self._fire(book, counts)
        return counts[0], counts[1]

    def fill(self, OrderBook book):
        """Bring both sides of ``book`` to the model's depth (the opening book) -> orders
        submitted."""
        cdef i64 counts[2]
        counts[0] = counts[1] = 0
        self.actor.keep_depth(book, 1, counts)
        self.actor.keep_depth(book, -1, counts)
        self._count(book)
        return counts[0]

    def rates(self, OrderBook book, double t):
        """The model's rates (events per second, (2, kinds): bid side, ask side) at ``t``
        seconds with ``book`` (``t`` at or after the last event)."""
        out = np.empty(2 * N_KINDS)
        cdef double[::1] view = out
        self._rates(book, t, &view[0])
        return out.reshape(2, N_KINDS)

    def hear(self, OrderBook book, double t):
        """`observe` the book at ``t`` seconds -> the market orders heard (0 to 2)."""
        before = self.observed
        self.observe(book, t)
        return self.observed - before

    cdef int _fire(self, OrderBook book, i64* counts) except -1:
        raise NotImplementedError

    cdef void _rates(self, OrderBook book, double t, double* rates) noexcept:
        pass

    cdef int observe(self, OrderBook book, double t) except -1:
        """Hear, at ``t`` seconds (at or after the last event), what others traded with the
        flow's resting orders since its last event: a market order on each side whose
        owner's shares traded grew (its resting orders are all the flow trades with between
        its events), one that emptied the best level when the flow's best price there moved.
        Nothing without ``causal``."""
        cdef i64 traded[2]
        cdef i64 best[2]
        cdef int i
        if not self.actor.causal:
            return 0
        traded[0], traded[1], best[0], best[1] = (
            self._traded[0], self._traded[1], self._best[0], self._best[1]
        )
        self._count(book)
        for i in range(2):
            if self._traded[i] > traded[i]:
                self.observed += 1
                self._heard(
                    i * N_EXC + (MARKET_EMPTIED if self._best[i] != best[i] else MARKET), t
                )
        return 0

    cdef void _count(self, OrderBook book) noexcept:
        """Keep the flow's owners' shares traded and its best prices (after its own
        event)."""
        cdef Touch bid, ask
        self._traded[0] = _traded(book, self.actor.bid_owner)
        self._traded[1] = _traded(book, self.actor.ask_owner)
        touch(book, 1, self.actor.reader(1), &bid)
        touch(book, -1, self.actor.reader(-1), &ask)
        self._best[0], self._best[1] = bid.price, ask.price

    cdef int _heard(self, Py_ssize_t source, double t) except -1:
        raise NotImplementedError


cdef class EventSampler(Sampler):
    """Draws the events of an `EventModel` (see the module docstring) for a population of
    owners ``bid_owner`` and ``ask_owner``, from a numpy Generator ``rng``, the first from
    ``t0`` seconds."""

    def __init__(
        self, model, i64 bid_owner, i64 ask_owner, object rng, double t0, bint causal=True
    ):
        marks, self._profile, self._t = _shared(model)
        self._model = model
        self.actor = BookActor(model, bid_owner, ask_owner, rng, causal)
        self._grid = model.grid
        self._kernels = self._t.decays.size()
        self._excitation.assign(self._kernels * 2 * N_KINDS, 0.0)
        self._totals.assign(self._kernels, 0.0)
        self._kernel_next.assign(self._kernels, INFINITY)
        self.events = self.candidates = self.observed = 0
        self.end = INFINITY
        self._last = t0
        self._begin(t0)

    def __reduce__(self):
        state = (
            self.actor._rng, list(self._excitation), list(self._totals),
            list(self._kernel_next), self._last, self._base_next, self.end, self.events,
            self.candidates, self.observed, self._traded[0], self._traded[1], self._best[0],
            self._best[1], self.actor.bid_deepest, self.actor.ask_deepest,
        )
        parameters = (self._model, self.actor.bid_owner, self.actor.ask_owner)
        return _rebuild, (parameters, self.actor.causal, state)

    cdef void _rates(self, OrderBook book, double t, double* rates) noexcept:
        """Each (side index, kind)'s rate at ``t`` (at or after the last event) into
        ``rates`` (2 kinds)."""
        cdef Py_ssize_t k, e, cells = self._grid.cells
        cdef Py_ssize_t seen[2]
        cdef double level = self._profile.levels[self._profile.bin(t)], f
        cdef double excited[2 * N_KINDS]
        self.actor.read(book, seen)
        for e in range(2 * N_KINDS):
            excited[e] = 0.0
        for k in range(self._kernels):
            f = fade(self._t.decays[k], t - self._last)
            for e in range(2 * N_KINDS):
                excited[e] += self._excitation[k * 2 * N_KINDS + e] * f
        for e in range(2 * N_KINDS):
            rates[e] = (
                self._t.mu[(e % N_KINDS) * cells + seen[e // N_KINDS]] * level
                + self._t.gain[
                    (e % N_KINDS) * self._grid.n_spread + self._grid.spread_of(seen[e // N_KINDS])
                ] * excited[e]
            )

    cdef double _baseline(self, OrderBook book, double* rates) noexcept:
        """Each (side index, kind)'s baseline in the book's state now, before the profile,
        into ``rates`` (2 kinds); their total."""
        cdef Py_ssize_t e, cells = self._grid.cells
        cdef Py_ssize_t seen[2]
        cdef double total = 0.0
        self.actor.read(book, seen)
        for e in range(2 * N_KINDS):
            rates[e] = self._t.mu[(e % N_KINDS) * cells + seen[e // N_KINDS]]
            total += rates[e]
        return total

    cdef void _begin(self, double t) noexcept:
        """The first event's draws from ``t`` (no excitation yet)."""
        self._base_next = self._base_draw(t)
        self._choose()

    cdef double _base_draw(self, double t) noexcept:
        """The next baseline candidate after ``t``: at the bound times the profile, bin by
        bin (flat before the first and beyond the last)."""
        cdef Py_ssize_t bins = self._profile.levels.size(), i = self._profile.bin(t)
        cdef double work = -log(1.0 - self.actor.uniform()), rate, end
        while True:
            rate = self._t.base_bound * self._profile.levels[i]
            if i == bins - 1:
                return t + work / rate if rate > 0 else INFINITY
            end = self._profile.start + <double>(i + 1) * self._profile.bin_seconds
            if rate > 0 and work < rate * (end - t):
                return t + work / rate
            work -= rate * (end - t)
            t = end
            i += 1

    cdef double _kernel_draw(self, Py_ssize_t k, double t) noexcept:
        """Kernel ``k``'s next candidate after ``t`` (at or after the last event), none if
        its excitation dies out first."""
        cdef double total = self._totals[k] * fade(self._t.decays[k], t - self._last)
        if not total > 0:
            return INFINITY
        return t + wait(self._t.decays[k], total, -log(1.0 - self.actor.uniform()))

    cdef void _choose(self) noexcept:
        """`next_time`: the first of the baseline's candidate and the kernels' events."""
        cdef Py_ssize_t k
        self.next_time, self._which = self._base_next, -1
        for k in range(self._kernels):
            if self._kernel_next[k] < self.next_time:
                self.next_time, self._which = self._kernel_next[k], k

    cdef int _fire(self, OrderBook book, i64* counts) except -1:
        """The candidate at `next_time`: a kernel's, kept with the gain of its kind in the
        state, or the baseline's, kept with (the book's baseline) / bound; then the next one
        drawn."""
        cdef double t = self.next_time, total, u
        cdef double rates[2 * N_KINDS]
        cdef const double* part
        cdef Py_ssize_t e, source, which = self._which
        cdef Py_ssize_t seen[2]
        self.candidates += 1
        if which >= 0:  # a kernel's candidate: kind and side by its excitation
            part = &self._excitation[which * 2 * N_KINDS]
            e = _pick(part, self.actor.uniform() * self._totals[which])
            self.actor.read(book, seen)
            if not self.actor.uniform() < self._t.gain[
                (e % N_KINDS) * self._grid.n_spread + self._grid.spread_of(seen[e // N_KINDS])
            ]:
                self._kernel_next[which] = self._kernel_draw(which, t)
                self._choose()
                return 0
        else:  # the baseline's candidate: kept with (the book's baseline) / bound
            total = self._baseline(book, rates)
            u = self.actor.uniform() * self._t.base_bound
            e = _pick(rates, u) if u < total else -1
        if e >= 0:
            source = self.actor.act(book, e % N_KINDS, 1 if e < N_KINDS else -1, counts)
            self._count(book)
            self._accepted((e // N_KINDS) * N_EXC + source, t)
            self.events += 1
        if which < 0:
            self._base_next = self._base_draw(t)
        self._choose()
        return 0

    cdef int _heard(self, Py_ssize_t source, double t) except -1:
        self._accepted(source, t)
        self._choose()
        return 0

    cdef int _accepted(self, Py_ssize_t source, double t) except -1:
        """After an event of (side index x exciters + exciter) ``source`` at ``t``: each
        kernel's excitation decayed to ``t`` plus the event's, and its next event drawn."""
        cdef Py_ssize_t k, j, width = 2 * N_KINDS
        cdef double f, total
        cdef double* part
        cdef const double* jump
        for k in range(self._kernels):
            f = fade(self._t.decays[k], t - self._last)
            part = &self._excitation[k * width]
            jump = &self._t.jump[(k * 2 * N_EXC + source) * width]
            total = 0.0
            for j in range(width):
                part[j] = part[j] * f + jump[j]
                total += part[j]
            self._totals[k] = total
        self._last = t
        for k in range(self._kernels):
            self._kernel_next[k] = self._kernel_draw(k, t)
        return 0


cdef class NeuralSampler(Sampler):
    """Draws a neural flow's events (`learned_flow.neural.NeuralModel` ``net``): with the
    rates the GRU sets after each event (a table by side, kind and state, times the profile,
    plus a burst decaying since the event) in place of the Hawkes excitation, each candidate
    thinned against the table's largest total per side at the profile's peak plus the bursts
    (which only decay until the next event); its base model's states, marks and depth. The
    rest as `EventSampler`'s."""

    def __init__(
        self, object net, i64 bid_owner, i64 ask_owner, object rng, double t0, bint causal=True
    ):
        base = net.base
        self._net, self._h = net, np.zeros(net.hidden)
        self._delta, self._event_time = net.delta, t0
        self._profile = _shared(base)[1]
        self._grid = base.grid
        self.actor = BookActor(base, bid_owner, ask_owner, rng, causal)
        self.events = self.candidates = self.observed = 0
        self.end = INFINITY
        self._load()
        self._candidate(t0)

    def __reduce__(self):
        state = (
            self.actor._rng, self._h.copy(), self._event_time, self.next_time, self.end,
            self._bound, self.events, self.candidates, self.observed, self._traded[0],
            self._traded[1], self._best[0], self._best[1], self.actor.bid_deepest,
            self.actor.ask_deepest,
        )
        parameters = (self._net, self.actor.bid_owner, self.actor.ask_owner)
        return _rebuild_neural, (parameters, self.actor.causal, state)

    cdef int _load(self) except -1:
        """Set the rates the GRU gives from its hidden state now: the table (2 kinds cells,)
        and the bursts (2 kinds,), per second, and the table's part of the bound."""
        cdef Py_ssize_t cells = self._grid.cells, si, b, c
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
            self._table_bound += best * self._profile.peak
        return 0

    cdef void _rates(self, OrderBook book, double t, double* rates) noexcept:
        cdef Py_ssize_t e, cells = self._grid.cells
        cdef Py_ssize_t seen[2]
        cdef double level = self._profile.levels[self._profile.bin(t)]
        cdef double f = fade(self._delta, t - self._event_time)
        self.actor.read(book, seen)
        for e in range(2 * N_KINDS):
            rates[e] = self._table[e * cells + seen[e // N_KINDS]] * level + self._burst[e] * f

    cdef void _candidate(self, double t) noexcept:
        """The next candidate after ``t`` against the bound: the table's part and the bursts
        now (which only decay until the next event)."""
        cdef double bound = self._table_bound, f = fade(self._delta, t - self._event_time)
        cdef Py_ssize_t e
        for e in range(2 * N_KINDS):
            bound += self._burst[e] * f
        self._bound = bound
        self.next_time = t - log(1.0 - self.actor.uniform()) / bound if bound > 0 else INFINITY

    cdef int _fire(self, OrderBook book, i64* counts) except -1:
        """The candidate at `next_time`: kept with (the rates then) / bound, or not; then the
        next one drawn."""
        cdef double t = self.next_time, total = 0.0, u
        cdef double rates[2 * N_KINDS]
        cdef Py_ssize_t e
        self._rates(book, t, rates)
        for e in range(2 * N_KINDS):
            total += rates[e]
        u = self.actor.uniform() * self._bound
        self.candidates += 1
        if u < total:
            e = _pick(rates, u)
            self.actor.act(book, e % N_KINDS, 1 if e < N_KINDS else -1, counts)
            self._count(book)
            self._read(e, t)
            self.events += 1
        self._candidate(t)
        return 0

    cdef int _heard(self, Py_ssize_t source, double t) except -1:
        self._read((source // N_EXC) * N_KINDS + MARKET, t)  # the GRU reads kinds
        self._candidate(t)
        return 0

    cdef int _read(self, Py_ssize_t e, double t) except -1:
        """The GRU's state after event ``e`` at ``t``, and the rates it sets."""
        self._h = self._net.read(self._h, e, t - self._event_time)
        self._event_time = t
        self._load()
        return 0


def _rebuild_neural(parameters, causal, state):
    """Unpickle: a neural sampler of ``parameters`` in ``state``."""
    rng, h, event_time, next_time, end, bound, events, candidates, observed = state[:9]
    traded, best, deepest = state[9:11], state[11:13], state[13:]
    drawn = rng.bit_generator.state
    cdef NeuralSampler sampler = NeuralSampler(*parameters, rng, event_time, causal)
    rng.bit_generator.state = drawn
    sampler._h, sampler._event_time = h, event_time
    sampler._load()
    sampler.next_time, sampler.end, sampler._bound = next_time, end, bound
    sampler.events, sampler.candidates, sampler.observed = events, candidates, observed
    sampler._traded[0], sampler._traded[1] = traded
    sampler._best[0], sampler._best[1] = best
    sampler.actor.bid_deepest, sampler.actor.ask_deepest = deepest
    return sampler


def _rebuild(parameters, causal, state):
    """Unpickle: a sampler of ``parameters`` in ``state``."""
    rng, excitation, totals, kernel_next, last, base_next, end, events, candidates = state[:9]
    observed, traded, best, deepest = state[9], state[10:12], state[12:14], state[14:]
    drawn = rng.bit_generator.state
    cdef EventSampler sampler = EventSampler(*parameters, rng, last, causal)
    rng.bit_generator.state = drawn  # the next draws are the pickled ones, not new draws
    sampler._excitation = excitation
    sampler._totals = totals
    sampler._kernel_next = kernel_next
    sampler._last, sampler._base_next, sampler.end = last, base_next, end
    sampler._choose()
    sampler.events, sampler.candidates, sampler.observed = events, candidates, observed
    sampler._traded[0], sampler._traded[1] = traded
    sampler._best[0], sampler._best[1] = best
    sampler.actor.bid_deepest, sampler.actor.ask_deepest = deepest
    return sampler


# ------------------------------------------------------------------------------- helpers
cdef inline i64 _traded(OrderBook book, i64 owner) noexcept:
    """``owner``'s shares traded (0 before its first fill)."""
    return book._accounts[owner].traded if 0 <= owner < <i64>book._accounts.size() else 0


cdef inline bint _holds(OrderBook book, i64 slot, i64 owner) noexcept:
    """Whether the level whose oldest order is at ``slot`` holds an order of ``owner``."""
    while slot and book._orders[slot].owner != owner:
        slot = book._orders[slot].next
    return slot != 0


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


cdef inline i64 _lots(double size) noexcept:
    """A drawn size as an order's lots: rounded, at least 1, at most QTY_MAX (clamped as a
    float, before the conversion, which is undefined for a float beyond 64-bit integers)."""
    if not size < <double>QTY_MAX:
        return QTY_MAX
    return 1 if size < 1.5 else <i64>rint(size)


cdef double _met(OrderBook book, int side, i64 owner, double fraction, bint own) noexcept:
    """The lots a market order on ``side`` takes, its size drawn as ``fraction`` of the queue
    it meets: all the volume at prices better than ``owner``'s best there (other
    participants' orders: the seats') and ``fraction`` of ``owner``'s lots at that best
    (``own``) or of the whole level (of the best level when ``owner`` rests nowhere on the
    side). So the price moves through a seat's quote inside the spread as it would were the
    quote not there. It takes nothing behind ``owner``'s deepest level: a seat's order resting
    beyond the levels the flow keeps is never swept into, however far behind it rests."""
    cdef Half* half = book._half(side)
    cdef LevelIter it = half.end()
    cdef double ahead = 0.0, size = NAN, reach = 0.0
    cdef Touch mine
    while it != half.begin():
        dec(it)
        if _holds(book, deref(it).second.head, owner):
            if isnan(size):  # owner's best
                if own:
                    touch(book, side, owner, &mine)
                    size = ahead + fraction * mine.lots
                else:
                    size = ahead + fraction * <double>deref(it).second.volume
            reach = ahead + <double>deref(it).second.volume
        ahead += <double>deref(it).second.volume
    if isnan(size):
        return fraction * <double>_best_volume(half)
    return min(size, reach)


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
