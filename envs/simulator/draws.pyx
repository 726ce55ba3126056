# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Random draws of the background traders, compiled: each gives exactly what the numpy
``Generator`` call it stands for gives (the same numbers, the generator left in the same
state), only faster for the parameters the traders use (``tests/envs/test_draws.py``)."""

import numpy as np

from cpython.pycapsule cimport PyCapsule_GetPointer
from libc.math cimport exp
from numpy.random cimport bitgen_t

__all__ = ["normal", "poisson", "uniform"]


def poisson(rng: np.random.Generator, lam: np.ndarray) -> np.ndarray:
    """``rng.poisson(lam)`` for an array of rates ``lam`` (float64, shape (n,)): int64 counts,
    shape (n,).

    For rates below 10 numpy multiplies uniforms until the product falls to exp(-lam), so
    most draws of a small rate end at the first uniform. This does the same with the same
    uniforms, but decides a first uniform below 1 - lam - 1e-12 (under exp(-lam)) without
    computing the exponential. Any other rate (10 or more, negative, NaN) goes to numpy.
    """
    rates = np.ascontiguousarray(lam, dtype=np.float64)
    if rates.ndim != 1 or not (rates.size == 0 or (rates.min() >= 0 and rates.max() < 10)):
        return rng.poisson(lam)
    out = np.empty(rates.shape[0], dtype=np.int64)
    cdef const double[::1] rate = rates
    cdef long long[::1] count = out
    cdef bitgen_t* bitgen = <bitgen_t*>PyCapsule_GetPointer(
        rng.bit_generator.capsule, "BitGenerator"
    )
    cdef Py_ssize_t i
    cdef double u, product, floor_exp
    cdef long long k
    with rng.bit_generator.lock:
        for i in range(rate.shape[0]):
            if rate[i] == 0.0:  # numpy draws nothing for a zero rate
                count[i] = 0
                continue
            u = bitgen.next_double(bitgen.state)
            if u <= 1.0 - rate[i] - 1e-12:  # below exp(-rate) (>= 1 - rate)
                count[i] = 0
                continue
            floor_exp = exp(-rate[i])
            k, product = 0, u
            while product > floor_exp:
                k += 1
                product *= bitgen.next_double(bitgen.state)
            count[i] = k
    return out


def uniform(rng: np.random.Generator, double low, double high, Py_ssize_t n) -> np.ndarray:
    """``rng.uniform(low, high, n)``: float64, shape (n,). numpy computes each number as
    low + (high - low) u from a standard uniform u; this draws the uniforms with numpy's own
    fill (``rng.random``) and does that arithmetic in two array operations, without the
    per-number call of the general method."""
    cdef double span = high - low
    if not np.isfinite(span):
        raise OverflowError("Range exceeds valid bounds")  # numpy's error
    out = rng.random(n)
    out *= span
    out += low
    return out


def normal(rng: np.random.Generator, double loc, double scale, size) -> np.ndarray:
    """``rng.normal(loc, scale, size)``: float64 of shape ``size``. numpy computes each number
    as loc + scale z from a standard normal z; this draws the z with numpy's own fill
    (``rng.standard_normal``) and does that arithmetic in two array operations (scale z + loc
    is the same sum, zeros' signs included), without the per-number call."""
    if scale < 0:
        raise ValueError("scale < 0")  # numpy's error
    out = rng.standard_normal(size)
    out *= scale
    out += loc
    return out
