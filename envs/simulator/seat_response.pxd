# cython: language_level=3
"""The C declarations of `envs.simulator.seat_response`, so a replay's compiled messages
(`envs.simulator.replayer`) carry the seats' difference forward without going through Python."""

from libcpp.vector cimport vector

from tradearena.envs.simulator.book cimport OrderBook, i64


cdef struct Trade:
    # what the seats took from the tape's liquidity between two of its messages
    double weight  # its side (+1 the seats bought) x its amplitude x the spread's scale
    i64 lots  # lots, signed: + the seats bought
    i64 first  # the market orders up to it, the tape's and the seats', itself included


cdef struct Deficit:
    # volume the seats took from a side's shown levels, held out of it until it has refilled
    int side  # +1 bid, -1 ask
    i64 qty  # lots
    double until  # seconds after midnight


cdef class SeatResponse:
    cdef const double[::1] _kernel  # (lags,): ticks, a fresh trade of the reference size
    cdef const i64[::1] _counts  # (messages,): the tape's market orders up to each message
    cdef const double[::1] _scale  # (messages,): the tape's spread then over the model's
    cdef const double[::1] _emptied  # refill-time quantiles, seconds, a level emptied
    cdef const double[::1] _thinned  # the same, a level thinned
    cdef double _reference  # lots
    cdef double _concavity
    cdef tuple _arrays  # what the views above show, for pickling
    cdef vector[Trade] _trades  # within the kernel's lags
    cdef vector[Deficit] _deficits
    cdef vector[i64] _target  # the last row reconciled to (shifted, less deficits)
    cdef double _permanent  # ticks: the trades past the kernel's lags, at their last lag
    cdef double _moved  # ticks: every trade's shift as of the last one computed
    cdef double _dither  # the session's rounding offset in [0, 1)
    cdef i64 _counted  # the market orders when ``shift`` was last computed (-1: afresh)
    cdef i64 _position  # the replay's position after its last message (lots)
    cdef Py_ssize_t _last  # the last message carried out (-1: none yet)
    cdef object _rng  # the session's generator (None: refill at the median)
    cdef public i64 shift  # ticks added to the tape's prices now
    cdef public i64 taken  # lots the seats took from the tape's liquidity this session
    cdef public i64 counted  # the tape's market orders so far (after the last message)
    cdef public i64 orders  # the seats' trades this session (market orders of theirs)

    cdef int _observe(self, OrderBook book, i64 owner) except -1
    cdef double _amplitude(self, int side, i64 lots) noexcept
    cdef double _next_release(self) noexcept
    cdef int _hold(self, int side, i64 lots, double now) except -1
    cdef double _refill(self, bint emptied) except? -1
    cdef i64 _shift(self, i64 count) except? -1
    cdef const i64* _targeted(self, const i64* row, Py_ssize_t levels, double now) except NULL
    cdef void _settled(self, OrderBook book, i64 owner, Py_ssize_t ref) noexcept
