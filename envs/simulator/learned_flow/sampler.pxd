# cython: language_level=3
"""The C declarations of `learned_flow.sampler`, so the compiled flow (`envs.simulator.flow`)
draws a learned population's events without going through Python."""

from libcpp.vector cimport vector
from numpy.random cimport bitgen_t

from tradearena.envs.simulator.book cimport OrderBook, i64
from tradearena.envs.simulator.learned_flow.state cimport StateGrid, Touch


cdef class MarkTables:
    cdef vector[double] values, cdf  # every mark's distribution, one after another
    cdef vector[Py_ssize_t] first  # where each distribution starts in values (and its end)
    cdef vector[Py_ssize_t] guide  # per value: where a draw's search starts
    cdef vector[Py_ssize_t] family_first  # per family: its first distribution (and the end)
    cdef vector[int] by  # per family: what its distributions are indexed by
    cdef list names  # per family: its name

    cdef int _guide(self) except -1


cdef class BookActor:
    cdef readonly MarkTables marks
    cdef StateGrid _grid
    cdef public i64 depth, bid_owner, ask_owner
    cdef public i64 bid_deepest, ask_deepest
    cdef readonly bint causal
    cdef object _rng
    cdef bitgen_t* _bitgen

    cdef double uniform(self) noexcept
    cdef double draw(self, Py_ssize_t distribution) noexcept
    cdef double mark(
        self, OrderBook book, Py_ssize_t family, int side, Py_ssize_t kind, double lots,
        double spread,
    ) except? -1
    cdef i64 reader(self, int side) noexcept
    cdef void read(self, OrderBook book, Py_ssize_t* cells) noexcept
    cdef double spread(self, OrderBook book) noexcept
    cdef Py_ssize_t act(self, OrderBook book, Py_ssize_t kind, int side, i64* counts) except -1
    cdef int _carry(
        self, OrderBook book, Py_ssize_t kind, int side, Touch best, i64* counts
    ) except -1
    cdef int keep_depth(self, OrderBook book, int side, i64* counts) except -1


cdef class ProfileTable:
    cdef vector[double] levels
    cdef double start, bin_seconds, peak

    cdef Py_ssize_t bin(self, double t) noexcept


cdef class Sampler:
    cdef readonly BookActor actor
    cdef StateGrid _grid
    cdef ProfileTable _profile
    cdef public double next_time, end
    cdef public i64 events, candidates, observed
    cdef i64 _traded[2]  # the flow's owners' shares traded after its last event
    cdef i64 _best[2]  # the flow's best prices then (0: none)

    cdef int _fire(self, OrderBook book, i64* counts) except -1
    cdef void _rates(self, OrderBook book, double t, double* rates) noexcept
    cdef int observe(self, OrderBook book, double t) except -1
    cdef void _count(self, OrderBook book) noexcept
    cdef int _heard(self, Py_ssize_t source, double t) except -1


cdef class RateTables:
    cdef vector[double] mu, gain, jump, decays
    cdef double base_bound


cdef class EventSampler(Sampler):
    cdef RateTables _t
    cdef vector[double] _excitation  # per [kernel, side index, kind]: its rate at _last
    cdef vector[double] _totals  # per kernel: the sum of its rates at _last
    cdef vector[double] _kernel_next  # each kernel's next event
    cdef double _last, _base_next
    cdef Py_ssize_t _kernels, _which
    cdef object _model

    cdef double _baseline(self, OrderBook book, double* rates) noexcept
    cdef void _begin(self, double t) noexcept
    cdef double _base_draw(self, double t) noexcept
    cdef double _kernel_draw(self, Py_ssize_t k, double t) noexcept
    cdef void _choose(self) noexcept
    cdef int _accepted(self, Py_ssize_t source, double t) except -1


cdef class NeuralSampler(Sampler):
    cdef vector[double] _table, _burst  # the rates the GRU set after the last event
    cdef double _delta, _event_time, _table_bound, _bound
    cdef object _net, _h

    cdef int _load(self) except -1
    cdef void _candidate(self, double t) noexcept
    cdef int _read(self, Py_ssize_t e, double t) except -1
