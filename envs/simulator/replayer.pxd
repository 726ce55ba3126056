# cython: language_level=3
"""The C declarations of `envs.simulator.replayer`, so the compiled flow (`envs.simulator.flow`) carries out a
replay's messages without going through Python."""

from libcpp.unordered_map cimport unordered_map

from tradearena.envs.simulator.book cimport OrderBook, i64
from tradearena.envs.simulator.seat_response cimport SeatResponse


cdef class Replayer:
    cdef const i64[::1] _kind, _order_id, _size, _price, _direction
    cdef const i64[:, ::1] _rows  # None: no reconciliation
    cdef tuple _arrays  # what the views above show, for pickling
    cdef unordered_map[i64, i64] _ids  # tape order id -> book order id
    cdef public i64 owner, added, removed, skipped
    cdef int _queue  # index into QUEUE_MODELS
    cdef double _queue_power
    cdef SeatResponse _response  # None: the replay does not answer the seats

    cdef int _observe(self, OrderBook book) except -1
    cdef int _release(self, OrderBook book) except -1
    cdef double _next_release(self) noexcept
    cdef int _handle(self, OrderBook book, Py_ssize_t ref, list fills) except -1
    cdef i64 _cancel_unnamed(self, OrderBook book, int side, i64 price, i64 qty) except -1
    cdef double _weight(self, i64 lots) noexcept
    cdef int _match_row(
        self, OrderBook book, const i64* row, const i64* target, list fills
    ) except -1
    cdef int _trim(self, OrderBook book, int side, const i64* row, const i64* target) except -1
