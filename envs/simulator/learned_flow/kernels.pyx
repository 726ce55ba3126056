# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
# cython: cdivision=True
"""The kernel through which each event of a learned flow excites later ones, defined once.

An event excites every kind on both sides through each of K kernels: kernel k adds
``alpha[k, b, e] * phi_k(t - t_j)`` to the rate of kind b, e being the event's exciter
(`learned_flow.exciters.Exciter`: its kind, and whether it emptied the best level), with
``phi_k(dt) = decay_k * exp(-decay_k * dt)`` (integral 1, so alpha is the number of
events one event causes, its branching ratio). The inline C forms (`fade`, `mass`,
`wait`, in kernels.pxd) are what the compiled samplers run; the functions here are the
estimate's forms, built on them.

To change the kernel's shape, change kernels.pxd and `jumps` (what an event adds to the
excitation now); to change the number of kernels or their decays, change the estimate's
grid, `learned_flow.estimate.DECAYS`.
"""

import numpy as np

__all__ = ["jumps", "masses", "stretch_sums", "sums"]


def jumps(alpha, decays) -> np.ndarray:
    """What an event adds to each kernel's excitation: (kernels, 2 exciters sources, 2 kinds
    targets), each by side index (0 bid, 1 ask) then exciter or kind; ``alpha`` (kernels,
    kinds, 2 exciters: the exciter on the same side | on the opposite side) times the kernel
    at 0."""
    alpha = np.asarray(alpha, np.float64)
    kernels, kinds, width = alpha.shape
    sources = width // 2
    scale = np.asarray(decays, np.float64)[:, None, None]
    same, other = alpha[:, :, :sources] * scale, alpha[:, :, sources:] * scale  # [k, b, j]
    out = np.empty((kernels, 2 * sources, 2 * kinds))
    out[:, :sources, :kinds] = out[:, sources:, kinds:] = same.transpose(0, 2, 1)
    out[:, :sources, kinds:] = out[:, sources:, :kinds] = other.transpose(0, 2, 1)
    return out


def masses(double decay, dt) -> np.ndarray:
    """The kernel's integral over [0, dt] for each of ``dt`` (seconds, float64 (n,)):
    the share of an event's excitation spent within it."""
    values = np.ascontiguousarray(dt, np.float64)
    out = np.empty_like(values)
    cdef const double[::1] d = values
    cdef double[::1] view = out
    cdef Py_ssize_t i
    for i in range(d.shape[0]):
        view[i] = mass(decay, d[i])
    return out


def sums(time, side, source, decays, Py_ssize_t sources) -> np.ndarray:
    """R (events, kernels x 2 sources): for each event and kernel k, the sum over the events
    of each source (exciter) strictly earlier on its own side (columns 0..sources-1 of the
    kernel's block) and on the opposite side (sources..) of the kernel phi_k(dt), dt seconds
    ago: events at one time stamp do not excite each other (a feed that stamps a batch of
    updates with one time does not say which caused which). ``time``: seconds, in order
    (n,); ``side``: +1 bid, -1 ask (n,); ``source``: each event's exciter, < ``sources``
    (n,); ``decays``: per second (kernels,)."""
    cdef const double[::1] t = np.ascontiguousarray(time, np.float64)
    cdef const long long[::1] s = np.ascontiguousarray(np.asarray(side) < 0, np.int64)
    cdef const long long[::1] b = np.ascontiguousarray(source, np.int64)
    cdef const double[::1] d = np.ascontiguousarray(decays, np.float64)
    cdef Py_ssize_t n = t.shape[0], n_kernels = d.shape[0], i, k, j, own, first = 0
    out = np.empty((n, n_kernels, 2, sources))
    running = np.zeros((n_kernels, 2, sources))  # [kernel, side index (0 bid, 1 ask), source]
    cdef double[:, :, :, ::1] o = out
    cdef double[:, :, ::1] r = running
    cdef double last = t[0] if n else 0.0, f
    for i in range(n):
        if t[i] != last:  # the events at the last time stamp excite from now on
            for j in range(first, i):
                for k in range(n_kernels):
                    r[k, s[j], b[j]] += d[k]
            first = i
            for k in range(n_kernels):
                f = fade(d[k], t[i] - last)
                for j in range(sources):
                    r[k, 0, j] *= f
                    r[k, 1, j] *= f
            last = t[i]
        own = s[i]
        for k in range(n_kernels):
            for j in range(sources):
                o[i, k, 0, j] = r[k, own, j]
                o[i, k, 1, j] = r[k, 1 - own, j]
    return out.reshape(n, -1)


def stretch_sums(time, side, source, starts, ends, decays, Py_ssize_t sources) -> np.ndarray:
    """I (stretches, kernels, 2 sides, sources): for each stretch [starts[i], ends[i]) of
    time (in order, each starting at or after the last) and kernel k, the integral over it of
    the sum over the events at or before its start of each source on each side (0 bid, 1 ask)
    of the kernel phi_k: what those events' excitation gives over the stretch, per unit of
    alpha. ``time``, ``side``, ``source``: the events as in `sums`."""
    cdef const double[::1] t = np.ascontiguousarray(time, np.float64)
    cdef const long long[::1] s = np.ascontiguousarray(np.asarray(side) < 0, np.int64)
    cdef const long long[::1] b = np.ascontiguousarray(source, np.int64)
    cdef const double[::1] a = np.ascontiguousarray(starts, np.float64)
    cdef const double[::1] e = np.ascontiguousarray(ends, np.float64)
    cdef const double[::1] d = np.ascontiguousarray(decays, np.float64)
    cdef Py_ssize_t n = t.shape[0], m = a.shape[0], n_kernels = d.shape[0], i, j = 0, k, x
    out = np.empty((m, n_kernels, 2, sources))
    running = np.zeros((n_kernels, 2, sources))  # [kernel, side index, source] at `last`
    cdef double[:, :, :, ::1] o = out
    cdef double[:, :, ::1] r = running
    cdef double last = a[0] if m else 0.0, f, spent
    if n and t[0] < last:
        last = t[0]
    for i in range(m):
        while j < n and t[j] <= a[i]:  # the events up to the stretch's start
            for k in range(n_kernels):
                f = fade(d[k], t[j] - last)
                for x in range(sources):
                    r[k, 0, x] *= f
                    r[k, 1, x] *= f
                r[k, s[j], b[j]] += d[k]
            last = t[j]
            j += 1
        for k in range(n_kernels):
            f = fade(d[k], a[i] - last)
            spent = mass(d[k], e[i] - a[i]) / d[k]
            for x in range(sources):
                r[k, 0, x] *= f
                r[k, 1, x] *= f
                o[i, k, 0, x] = r[k, 0, x] * spent
                o[i, k, 1, x] = r[k, 1, x] * spent
        last = a[i]
    return out
