# cython: language_level=3
"""The C declarations of `learned_flow.state`, so the compiled samplers read the book's state
as the estimate counts it."""

from libcpp.vector cimport vector

from tradearena.envs.simulator.book cimport OrderBook


cdef class StateGrid:
    cdef vector[double] _spread_edges, _queue_edges
    cdef readonly Py_ssize_t n_spread, n_queue, cells

    cdef Py_ssize_t spread_bucket(self, double spread) noexcept
    cdef Py_ssize_t cell(self, double spread, double own, double other) noexcept
    cdef void read(self, OrderBook book, Py_ssize_t* cells) noexcept
