# cython: language_level=3
"""The exponential kernel of a learned flow's excitation, as inline C for the compiled
samplers (`learned_flow.kernels` is the whole definition, with its numpy forms)."""

from libc.math cimport INFINITY, exp, log1p


cdef inline double fade(double decay, double dt) noexcept nogil:
    """What a unit of excitation decaying at ``decay`` per second is worth ``dt`` seconds
    later."""
    return exp(-decay * dt)


cdef inline double mass(double decay, double dt) noexcept nogil:
    """The share of an event's excitation spent within ``dt`` seconds of it: the kernel's
    integral over [0, dt]."""
    return 1.0 - exp(-decay * dt)


cdef inline double wait(double decay, double total, double work) noexcept nogil:
    """Seconds to the next event of an excitation of ``total`` events per second now,
    decaying at ``decay`` per second, for an exponential draw ``work`` (the inverse of its
    integral); infinite when the excitation dies out first."""
    cdef double x = decay * work / total
    return -log1p(-x) / decay if x < 1.0 else INFINITY
