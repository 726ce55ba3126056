# cython: language_level=3
"""The C declarations of `envs.simulator.learned`, so the compiled flow (`envs.simulator.flow`)
draws a learned population's events without going through Python."""

from libcpp.vector cimport vector
from numpy.random cimport bitgen_t

from tradearena.envs.simulator.book cimport OrderBook, i64


cdef class Tables:
    cdef vector[double] mu, jump, decays, profile, spread_edges, queue_edges
    cdef vector[double] values, cdf  # every mark's distribution, one after another
    cdef vector[Py_ssize_t] first  # where each distribution starts in values (and its end)
    cdef vector[Py_ssize_t] guide  # per value: where a draw's search starts
    cdef double base_bound
    cdef object __weakref__

    cdef int _guide_marks(self) except -1


cdef class EventSampler:
    cdef Tables _t
    cdef vector[double] _excitation  # per [kernel, side index, kind]: its rate at _last
    cdef vector[double] _totals  # per kernel: the sum of its rates at _last
    cdef vector[double] _kernel_next  # each kernel's next event
    cdef double _start, _bin_seconds, _bound, _last, _base_next
    cdef public double next_time, end
    cdef public i64 depth, bid_owner, ask_owner, events, candidates
    cdef Py_ssize_t _kernels, _cells, _queue_buckets, _which
    cdef object _rng
    cdef bitgen_t* _bitgen
    cdef tuple _parameters

    cdef int _fire(self, OrderBook book, i64* counts) except -1
    cdef double _uniform(self) noexcept
    cdef double _draw(self, Py_ssize_t distribution) noexcept
    cdef void _cells_of(self, OrderBook book, Py_ssize_t* cells) noexcept
    cdef double _level(self, double t) noexcept
    cdef void _rates(self, OrderBook book, double t, double* rates) noexcept
    cdef double _baseline(self, OrderBook book, double* rates) noexcept
    cdef int _act(self, OrderBook book, Py_ssize_t kind, int side, i64* counts) except -1
    cdef int _carry(self, OrderBook book, Py_ssize_t kind, int side, i64 best, i64* counts) except -1
    cdef Py_ssize_t _behind(self, int which) noexcept
    cdef int _keep_depth(self, OrderBook book, int side, i64* counts) except -1
    cdef void _begin(self, double t) noexcept
    cdef double _base_draw(self, double t) noexcept
    cdef double _kernel_draw(self, Py_ssize_t k, double t) noexcept
    cdef void _choose(self) noexcept
    cdef int _accepted(self, Py_ssize_t e, double t) except -1


cdef class NeuralSampler(EventSampler):
    cdef vector[double] _table, _burst  # the rates the GRU set after the last event
    cdef double _delta, _event_time, _profile_peak, _table_bound
    cdef Py_ssize_t _cell_count
    cdef object _net, _h

    cdef int _load(self) except -1
    cdef void _candidate(self, double t) noexcept
