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

To change the state's buckets, change `QUANTILES` (or give `learned_flow.estimate.estimate`
its own edges); to read another quantity of the book, change `StateGrid.read` and the
tape's side of it, `learned_flow.events`.
"""

import numpy as np

from cython.operator cimport dereference as deref, predecrement as dec
from libc.math cimport INFINITY

from tradearena.envs.simulator.book cimport LevelIter, OrderBook

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
        values = np.asarray(spread, np.float64)
        flat = values.ravel()
        out = np.empty(flat.size, np.int64)
        cdef const double[:] vs = flat
        cdef long long[::1] view = out
        cdef Py_ssize_t i
        for i in range(view.shape[0]):
            view[i] = self.spread_bucket(vs[i])
        return out.reshape(values.shape)

    def of_book(self, OrderBook book) -> tuple:
        """The book's cells seen from the bid side and from the ask side."""
        cdef Py_ssize_t cells[2]
        self.read(book, cells)
        return cells[0], cells[1]

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

    cdef Py_ssize_t cell(self, double spread, double own, double other) noexcept:
        """The cell of a spread (ticks) and two queues (lots)."""
        cdef Py_ssize_t i, qo = 0, qp = 0, n = self._queue_edges.size()
        cdef const double* queue = self._queue_edges.data()
        for i in range(n):
            qo += queue[i] <= own
            qp += queue[i] <= other
        return (self.spread_bucket(spread) * self.n_queue + qo) * self.n_queue + qp

    cdef void read(self, OrderBook book, Py_ssize_t* cells) noexcept:
        """The book's state seen from the bid side (cells[0]) and from the ask side
        (cells[1])."""
        cdef double spread = INFINITY, q_bid = 0.0, q_ask = 0.0
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
        cells[0] = self.cell(spread, q_bid, q_ask)
        cells[1] = self.cell(spread, q_ask, q_bid)
