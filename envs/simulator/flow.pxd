# cython: language_level=3
"""The C declarations of `envs.simulator.flow`: a population's rows, a session's background `Flow` and
the `MarketState` a decision step reads and writes, so other compiled modules
(`envs.simulator.observation`) reach a market without Python attribute look-ups."""

cimport cython
cimport numpy as cnp
from libcpp.vector cimport vector

from tradearena.envs.simulator.book cimport OrderBook, i32, i64


cdef struct Population:
    # one population's rows for the session (arrays owned by its Program), in time order
    const double* time
    i32* kind
    i32* side
    i32* price
    const i32* qty
    const i32* owner
    const i32* ref
    const double* value  # ZERO_INTELLIGENCE: limit before the private value
    const double* theta  # ZERO_INTELLIGENCE: private values, (members, 2 q_max)
    i64 first_owner  # ZERO_INTELLIGENCE: the owner of theta's first row
    Py_ssize_t n, cursor, stop  # rows; the next row; the end of this interval's rows
    int rule
    i64 q_max, short, long, decision
    double lot, half_spread
    i64 levels, spacing, size, bid, ask  # MAKER: its ladder; its best quotes this interval
    void* replayer  # REPLAY: the `envs.simulator.replayer.Replayer` of its messages (kept by the Flow)
    void* sampler  # LEARNED: the `learned_flow.sampler.Sampler` drawing its events (kept too)


cdef class Flow:
    cdef vector[Population] populations
    cdef list arrays  # keeps the rows' arrays alive
    cdef dict handlers
    cdef double end  # the interval's end (seconds): a replay's refills before it fire
    cdef list programs

    @cython.final
    cdef _keep(self, Py_ssize_t p, object program)
    @cython.final
    cdef int _open(
        self, OrderBook book, double t0, double t1, double last_mid, const double* mids,
        Py_ssize_t n_mids,
    ) except -1
    @cython.final
    cdef int _until(self, OrderBook book, double limit, i64* counts) except -1
    @cython.final
    cdef int _price(
        self, OrderBook book, double last_mid, const double* mids, Py_ssize_t n_mids
    ) except -1


cdef class MarketState:
    cdef public double t, last_mid, step_seconds, tick_size, fee_per_share
    cdef public i64 step_index, n_steps, n_orders, n_cancels, position_limit
    cdef public OrderBook book
    cdef public Flow _compiled  # None: the populations send their orders from Python
    cdef public cnp.ndarray _mids  # float64 (n_steps + 1,): the mid at the open and each step
    cdef public cnp.ndarray _spreads  # float64, the same for the spread
    cdef public list _values  # each seat's marked-to-market value at the last step, dollars
    cdef public object _latency  # None: seats' orders land at once and they see the book now
    cdef public cnp.ndarray _seen_mids  # float64 (n_steps + 1,): the mid each step's view shows
    cdef public cnp.ndarray _seen_book  # float64 (n_steps + 1, 3): its spread, bid, ask volume

    @cython.final
    cdef inline bint _over(self) noexcept:
        return self.step_index >= self.n_steps
