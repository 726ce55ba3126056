# cython: language_level=3
"""The C declarations of `learned_flow.state`, so the compiled samplers read the book's state
as the estimate counts it."""

from libcpp.vector cimport vector

from tradearena.envs.simulator.book cimport OrderBook, i64


cdef struct Touch:
    # one side's best as a reader sees it
    i64 price  # ticks; 0 when the side holds nothing the reader sees
    double lots  # the reader's lots there


cdef int touch(OrderBook book, int side, i64 owner, Touch* out) noexcept


cdef class StateGrid:
    cdef vector[double] _spread_edges, _queue_edges
    cdef readonly Py_ssize_t n_spread, n_queue, cells

    cdef Py_ssize_t spread_bucket(self, double spread) noexcept
    cdef Py_ssize_t queue_bucket(self, double lots) noexcept
    cdef Py_ssize_t cell(self, double spread, double own, double other) noexcept
    cdef Py_ssize_t spread_of(self, Py_ssize_t cell) noexcept
    cdef void read(self, OrderBook book, i64 bid_owner, i64 ask_owner, Py_ssize_t* cells) noexcept
