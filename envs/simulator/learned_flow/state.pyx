# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
# cython: cdivision=True
# distutils: language = c++
"""The book's state a learned flow's rates read, defined once for the estimate, the compiled
samplers and the neural variant.

Seen from one side of the book, the state is three numbers: the spread (ticks; a book with a
side empty counts as the widest), the lots at the best of that side (its *own* queue) and at
the best of the opposite side. Each falls in a bucket (how many of its edges are at or
below it), and the three buckets make one *cell*:
``(spread bucket x n_queue + own bucket) x n_queue + opposite bucket``. Bid and ask share
the cells (the state is mirrored: the ask side's cell is the bid side's with the queues
swapped). The edges are the `QUANTILES` of what the tape shows (`edges`).

A flow reads the state of its own book (`touch` of its owners: the best level holding one of
its orders and its lots there), so that a seat's resting quotes do not move its rates: a
rate estimated from a tape is what goes with a state there, not a response to it. Read by
any owner, it is the whole book's state.

To change the state's buckets, change `QUANTILES` (or give `learned_flow.estimate.estimate`
its own edges); to read another quantity of the book, change `touch` and `StateGrid.read`
and the tape's side of it, `envs.data.events`.
"""

import numpy as np

from cython.operator cimport dereference as deref, predecrement as dec
from libc.math cimport INFINITY

from tradearena.envs.simulator.book cimport Half, LevelIter, OrderBook, i64

__all__ = ["QUANTILES", "StateGrid", "edges"]

QUANTILES = (0.05, 0.25, 0.5, 0.75)
"""The quantiles of the spreads and of the best queues the buckets part at: the quartiles,
and the tail where the spread (a queue) is near its least, where the flow changes most (an
order cannot improve a one-tick spread; a short queue empties)."""


def edges(values) -> np.ndarray:
    """The distinct `QUANTILES` of ``values`` (bucket edges, float64), above the least
    value."""
    values = np.asarray(values)
    q = np.ceil(np.quantile(values, QUANTILES))
    return np.unique(np.maximum(q, values.min() + 1)).astype(np.float64)


cdef class StateGrid:
    """The cells of the state (see the module docstring): ``spread_edges`` (ticks) and
    ``queue_edges`` (lots), each sorted, float64."""

    def __init__(self, spread_edges, queue_edges):
        for name, values in (("spread_edges", spread_edges), ("queue_edges", queue_edges)):
            if np.ndim(values) != 1:
                raise ValueError(f"{name} must be one-dimensional, got shape {np.shape(values)}")
        self._spread_edges = np.asarray(spread_edges, np.float64)
        self._queue_edges = np.asarray(queue_edges, np.float64)
        self.n_spread = self._spread_edges.size() + 1
        self.n_queue = self._queue_edges.size() + 1
        self.cells = self.n_spread * self.n_queue * self.n_queue

    def __reduce__(self):
        return StateGrid, (self.spread_edges, self.queue_edges)

    @property
    def spread_edges(self) -> np.ndarray:
        """The spread's bucket edges, ticks (float64)."""
        return np.array(self._spread_edges, np.float64)

    @property
    def queue_edges(self) -> np.ndarray:
        """The queues' bucket edges, lots (float64)."""
        return np.array(self._queue_edges, np.float64)

    @property
    def shape(self) -> tuple:
        """(spread buckets, own queue buckets, opposite queue buckets)."""
        return self.n_spread, self.n_queue, self.n_queue

    def cell_of(self, spread, own, other) -> np.ndarray:
        """The cells (int64, the inputs' broadcast shape) of spreads (ticks; ``inf`` for a
        side empty) and the best queues of the side seen from and of the opposite one
        (lots)."""
        s, o, p = np.broadcast_arrays(
            np.asarray(spread, np.float64), np.asarray(own, np.float64),
            np.asarray(other, np.float64),
        )
        flat_s, flat_o, flat_p = s.ravel(), o.ravel(), p.ravel()
        out = np.empty(flat_s.size, np.int64)
        cdef const double[:] vs = flat_s, vo = flat_o, vp = flat_p
        cdef long long[::1] view = out
        cdef Py_ssize_t i
        for i in range(view.shape[0]):
            view[i] = self.cell(vs[i], vo[i], vp[i])
        return out.reshape(s.shape)

    def spread_buckets(self, spread) -> np.ndarray:
        """The spread's buckets (int64, ``spread``'s shape) of spreads in ticks."""
        return self._buckets(spread, True)

    def queue_buckets(self, lots) -> np.ndarray:
        """The queues' buckets (int64, ``lots``' shape) of queues in lots."""
        return self._buckets(lots, False)

    def _buckets(self, values, bint spread) -> np.ndarray:
        values = np.asarray(values, np.float64)
        flat = values.ravel()
        out = np.empty(flat.size, np.int64)
        cdef const double[:] vs = flat
        cdef long long[::1] view = out
        cdef Py_ssize_t i
        for i in range(view.shape[0]):
            view[i] = self.spread_bucket(vs[i]) if spread else self.queue_bucket(vs[i])
        return out.reshape(values.shape)

    def of_book(self, OrderBook book, owners=(-1, -1)) -> tuple:
        """The book's cells seen from the bid side and from the ask side, as ``owners`` (bid
        side, ask side; -1: anyone) see it (`touch`)."""
        cdef Py_ssize_t cells[2]
        self.read(book, owners[0], owners[1], cells)
        return cells[0], cells[1]

    def spread_of_cell(self, cell) -> np.ndarray:
        """The spread buckets (int64, ``cell``'s shape) of cells."""
        cells = np.asarray(cell, np.int64)
        flat = np.ascontiguousarray(cells.ravel())
        out = np.empty(flat.size, np.int64)
        cdef const long long[::1] vc = flat
        cdef long long[::1] view = out
        cdef Py_ssize_t i
        for i in range(view.shape[0]):
            view[i] = self.spread_of(vc[i])
        return out.reshape(cells.shape)

    def describe(self, Py_ssize_t cell) -> str:
        """A cell in words: its buckets' ranges."""
        sb, qo, qp = np.unravel_index(cell, self.shape)

        def span(edges: np.ndarray, b: int, unit: str) -> str:
            low = "0" if b == 0 else f"{edges[b - 1]:g}"
            return f"{low}+ {unit}" if b == len(edges) else f"{low}-{edges[b] - 1:g} {unit}"

        return (
            f"spread {span(self.spread_edges, sb, 'ticks')}, own queue "
            f"{span(self.queue_edges, qo, 'lots')}, opposite "
            f"{span(self.queue_edges, qp, 'lots')}"
        )

    cdef Py_ssize_t spread_bucket(self, double spread) noexcept:
        """The spread's bucket: how many of its edges are at or below ``spread``."""
        cdef Py_ssize_t i, n = 0
        for i in range(<Py_ssize_t>self._spread_edges.size()):
            n += self._spread_edges[i] <= spread
        return n

    cdef Py_ssize_t queue_bucket(self, double lots) noexcept:
        """The queue's bucket: how many of its edges are at or below ``lots``."""
        cdef Py_ssize_t i, n = 0
        for i in range(<Py_ssize_t>self._queue_edges.size()):
            n += self._queue_edges[i] <= lots
        return n

    cdef Py_ssize_t cell(self, double spread, double own, double other) noexcept:
        """The cell of a spread (ticks) and two queues (lots)."""
        return (
            self.spread_bucket(spread) * self.n_queue + self.queue_bucket(own)
        ) * self.n_queue + self.queue_bucket(other)

    cdef Py_ssize_t spread_of(self, Py_ssize_t cell) noexcept:
        """A cell's spread bucket."""
        return cell // (self.n_queue * self.n_queue)

    cdef void read(self, OrderBook book, i64 bid_owner, i64 ask_owner, Py_ssize_t* cells) noexcept:
        """The book's state as the owners (-1: anyone) see it (`touch`), from the bid side
        (cells[0]) and from the ask side (cells[1])."""
        cdef Touch bid, ask
        cdef double spread = INFINITY
        touch(book, 1, bid_owner, &bid)
        touch(book, -1, ask_owner, &ask)
        if bid.price and ask.price:
            spread = <double>(ask.price - bid.price)
        cells[0] = self.cell(spread, bid.lots, ask.lots)
        cells[1] = self.cell(spread, ask.lots, bid.lots)


cdef int touch(OrderBook book, int side, i64 owner, Touch* out) noexcept:
    """``side``'s best as ``owner`` sees it into ``out``: the best level holding one of its
    orders and its lots there (``owner`` -1: the best level and all its lots); price 0 and no
    lots when there is none."""
    cdef Half* half = book._half(side)
    cdef LevelIter it = half.end()
    cdef i64 slot
    cdef double lots
    out.price, out.lots = 0, 0.0
    while it != half.begin():
        dec(it)
        if owner < 0:
            out.price, out.lots = side * deref(it).first, <double>deref(it).second.volume
            return 0
        slot, lots = deref(it).second.head, 0.0
        while slot:
            if book._orders[slot].owner == owner:
                lots += <double>book._orders[slot].qty
            slot = book._orders[slot].next
        if lots > 0:
            out.price, out.lots = side * deref(it).first, lots
            return 0
    return 0
