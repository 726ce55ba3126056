# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
# distutils: language = c++
"""The seats' feature vectors, compiled: `envs.simulator.features.features` for one seat and
`observe` for every seat of many markets in one call compute them with the same code;
`discretize` turns many feature vectors into tabular states (`envs.simulator.features.Discretizer`).

The features and their units are described in `envs.simulator.features`.
"""

import numpy as np

cimport numpy as cnp
from cython.operator cimport dereference as deref, predecrement as dec
from libc.math cimport NAN, isnan, log, sqrt

from tradearena.envs.simulator.book cimport Half, LevelIter, OrderBook, i64, position, quoted, spread_ticks
from tradearena.envs.simulator.flow cimport MarketState

cnp.import_array()

__all__ = ["discretize", "fill_features", "observe", "volumes"]


def discretize(
    const double[:, :] x,
    const long long[::1] columns,
    const double[::1] edges,
    const long long[::1] ends,
    long long[::1] out,
):
    """Tabular states of the feature vectors ``x`` (N, F) into ``out`` (N,): the bins of
    features ``columns`` (U,) in mixed radix, feature ``columns[u]`` binned by
    ``edges[ends[u - 1]:ends[u]]`` (increasing; ``ends`` (U,)) as ``searchsorted(edges, v,
    side="right")`` bins it (NaN past the last edge)."""
    cdef Py_ssize_t i, u, k, start, stop
    cdef long long state
    cdef double v
    for i in range(x.shape[0]):
        state = 0
        start = 0
        for u in range(columns.shape[0]):
            stop = ends[u]
            v = x[i, columns[u]]
            k = start
            if isnan(v):
                k = stop
            else:
                while k < stop and edges[k] <= v:
                    k += 1
            state = state * (stop - start + 1) + (k - start)
            start = stop
        out[i] = state


def fill_features(
    OrderBook book,
    i64 inventory,
    i64 position_limit,
    const double[::1] mids,
    i64 step_index,
    i64 n_steps,
    const i64[::1] windows,
    i64 depth_levels,
    double spread_cap,
    double return_cap,
    float[::1] out,
):
    """Write the features of a seat holding ``inventory`` shares into ``out`` (shape
    (len(windows) + 5,), float32): inventory, imbalance, spread, returns, time left,
    volatility."""
    _fill(inventory, position_limit, _volume(&book._bids, depth_levels),
          _volume(&book._asks, depth_levels), _spread(book), &mids[0] if mids.shape[0] else NULL,
          mids.shape[0], step_index, n_steps, windows, spread_cap, return_cap, &out[0])


def observe(
    list markets,
    Py_ssize_t n_seats,
    const i64[::1] windows,
    i64 depth_levels,
    double spread_cap,
    double return_cap,
    float[:, :, ::1] out,
):
    """Write every seat's features in each of ``markets`` (`envs.simulator.market.Market`, opened) into
    ``out[i, seat]`` (shape (len(markets), n_seats, F), float32). A market with feed latency
    shows the view recorded for its step (`envs.simulator.latency`: mids, spread and the
    volumes at its own depth), the seats' inventories as they are now."""
    cdef Py_ssize_t i, seat
    cdef OrderBook book
    cdef MarketState market
    cdef const double* mids
    cdef const double* seen
    cdef i64 k, bid_volume, ask_volume
    cdef double spread
    for i in range(len(markets)):
        market = markets[i]
        book = market.book
        k = market.step_index
        if market._seen_mids is None:
            mids = <const double*>cnp.PyArray_DATA(market._mids)  # float64, contiguous
            bid_volume = _volume(&book._bids, depth_levels)
            ask_volume = _volume(&book._asks, depth_levels)
            spread = _spread(book)
        else:
            mids = <const double*>cnp.PyArray_DATA(market._seen_mids)
            seen = <const double*>cnp.PyArray_DATA(market._seen_book) + 3 * k
            spread, bid_volume, ask_volume = seen[0], <i64>seen[1], <i64>seen[2]
        for seat in range(n_seats):
            _fill(position(book, seat), market.position_limit, bid_volume, ask_volume, spread,
                  mids, k + 1, k, market.n_steps, windows, spread_cap, return_cap,
                  &out[i, seat, 0])


cdef inline double _spread(OrderBook book) noexcept:
    """The spread in ticks, NaN while a side is empty."""
    return <double>spread_ticks(book) if quoted(book) else NAN


cdef void _fill(
    i64 inventory,
    i64 position_limit,
    i64 bid_volume,
    i64 ask_volume,
    double spread,
    const double* mids,
    Py_ssize_t n_mids,
    i64 step_index,
    i64 n_steps,
    const i64[::1] windows,
    double spread_cap,
    double return_cap,
    float* out,
):
    """The features from the seat's ``inventory`` (shares), the book's volumes at the depth
    observed (shares) and ``spread`` (ticks; NaN: a side is empty) and the first ``n_mids``
    ``mids`` (ticks)."""
    cdef double x = <double>inventory / <double>position_limit
    out[0] = <float>(-1.0 if x < -1.0 else 1.0 if x > 1.0 else x)
    cdef i64 total = bid_volume + ask_volume
    out[1] = <float>(<double>(bid_volume - ask_volume) / <double>total if total else 0.0)
    if isnan(spread):
        x = spread_cap
    else:
        x = 0.0 if spread < 0.0 else spread_cap if spread > spread_cap else spread
    out[2] = <float>x
    cdef Py_ssize_t j, last = n_mids - 1
    cdef i64 w
    for j in range(windows.shape[0]):
        w = windows[j]
        if w > last:
            out[3 + j] = 0.0
            continue
        x = 1e4 * log(mids[last] / mids[last - w])
        out[3 + j] = <float>(-return_cap if x < -return_cap else return_cap if x > return_cap else x)
    out[3 + windows.shape[0]] = <float>(1.0 - <double>step_index / <double>n_steps)
    out[4 + windows.shape[0]] = <float>_volatility(mids, last, windows, return_cap)


cdef inline double _volatility(
    const double* mids, Py_ssize_t last, const i64[::1] windows, double cap
):
    """Root mean square of the one-step log returns (bp) over the last max(windows) steps
    (fewer while fewer exist; 0 before the first), capped at ``cap``."""
    cdef i64 n = 0
    cdef Py_ssize_t j
    for j in range(windows.shape[0]):
        n = windows[j] if windows[j] > n else n
    n = last if last < n else n
    if n < 1:
        return 0.0
    cdef double total = 0.0, r
    for j in range(last - n + 1, last + 1):
        r = 1e4 * log(mids[j] / mids[j - 1])
        total += r * r
    r = sqrt(total / <double>n)
    return cap if r > cap else r


cdef inline i64 _volume(Half* half, i64 levels):
    """Shares resting at the best ``levels`` levels of one side."""
    cdef i64 total = 0
    if half.empty():
        return 0
    cdef LevelIter it = half.end()
    cdef LevelIter first = half.begin()
    while levels > 0:
        dec(it)
        total += deref(it).second.volume
        levels -= 1
        if it == first:
            break
    return total


def volumes(OrderBook book, i64 depth_levels):
    """(bid, ask) shares resting at the best ``depth_levels`` levels of each side, as the
    imbalance feature counts them."""
    return _volume(&book._bids, depth_levels), _volume(&book._asks, depth_levels)
