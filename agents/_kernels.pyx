# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled inner loops of the tabular learners (built by setup.py as ``agents._kernels``).

`risk_update` is the RAQL rule over an ensemble of k tables (`agents.ensembles.RiskTables`),
`risk_update_batch` the same over N transitions in one call;
RAQL, Q-learning-with-a-utility and every ensemble learner go through it, so that an ensemble
of one table and the single-table learner agree to the bit. `risk_row` is Qbar - lam * var
(or + lam * var) at one state, `risk_rows` at many, `risk_argmax` its greedy action;
`epsilon_greedy` acts for a batch of sessions with the draws `EpsilonGreedy` makes one by
one. The utility and the step
size are selected by the codes `UtilityKind` and `StepKind` (Python IntEnums, C constants
here), with one parameter each (see `agents.utility`, `agents.schedules`: ``kernel_args``).
"""

import numpy as np

from cpython.pycapsule cimport PyCapsule_GetPointer
from libc.math cimport expm1, pow
from libc.stdint cimport uint32_t, uint64_t
from numpy.random cimport bitgen_t

cimport numpy as cnp

cnp.import_array()


cpdef enum UtilityKind:
    # u(d) applied to the TD error d, parameter p
    IDENTITY = 0  # d
    EXPONENTIAL = 1  # expm1(p d) / p, p = beta, p d clipped to [-clip, clip]
    PIECEWISE_LINEAR = 2  # (1 - p) d if d > 0 else (1 + p) d, p = kappa


cpdef enum StepKind:
    # alpha(n) of the n-th update of a state-action pair, parameter p
    CONSTANT = 0  # p
    VISITS = 1  # 1 / n
    VISITS_POWER = 2  # 1 / n**p, p = omega
    RESCALED_LINEAR = 3  # 1 / (1 + p n), p = 1 - gamma


cdef inline double _alpha(StepKind kind, double p, long long n) noexcept nogil:
    if kind == StepKind.CONSTANT:
        return p
    if kind == StepKind.VISITS:
        return 1.0 / <double>n
    if kind == StepKind.VISITS_POWER:
        return 1.0 / pow(<double>n, p)
    return 1.0 / (1.0 + p * <double>n)  # StepKind.RESCALED_LINEAR


def risk_update(
    double[:, :, ::1] q,
    cnp.int64_t[:, :, ::1] visits,
    Py_ssize_t s,
    Py_ssize_t a,
    double r,
    Py_ssize_t s2,
    double g,
    cnp.int64_t[::1] counts,
    UtilityKind ukind,
    double up,
    double clip,
    StepKind skind,
    double sp,
    double[:, ::1] v_ref=None,
    double[:, :, ::1] ttilde=None,
    Py_ssize_t fixed=-1,
    double w_max=1.0,
    double w_fixed=0.0,
):
    """Update table i ``counts[i]`` times at (s, a); return the number of clipped utilities.

    ``q`` (k, S, A) and ``visits`` (k, S, A) are updated in place; ``counts`` (k,); ``g`` is
    the discount of this transition (0 if it terminated); ``ukind``, ``up``, ``clip`` the
    utility, ``skind``, ``sp`` the step size.

    d_i = r + g * max Q_i(s2, .) - Q_i(s, a) (recentered by ``v_ref``, ``ttilde`` if given:
    target - (r + g * v_ref[i, s2]) + ttilde[i, s, a]); Q_i(s, a) += alpha(N_i(s, a)) * u(d_i).
    With an action ``fixed`` >= 0 the bootstrap value is the mixture
    ``w_max * max Q_i(s2, .) + w_fixed * Q_i(s2, fixed)`` (probabilistic action-robust
    target of `agents.tabular.ra3q.RA3Q`); ``fixed`` < 0 (default): ``max Q_i(s2, .)``.
    """
    cdef bint mixed = fixed >= 0
    if mixed and fixed >= q.shape[2]:
        raise IndexError(f"fixed action {fixed} out of range for {q.shape[2]} actions")
    return _update(
        q, visits, s, a, r, s2, g, &counts[0], ukind, up, clip, skind, sp, v_ref, ttilde,
        fixed, w_max, w_fixed,
    )


def risk_update_batch(
    double[:, :, ::1] q,
    cnp.int64_t[:, :, ::1] visits,
    const cnp.int64_t[::1] s,
    const cnp.int64_t[::1] a,
    const double[::1] r,
    const cnp.int64_t[::1] s2,
    const double[::1] g,
    cnp.int64_t[:, ::1] counts,
    UtilityKind ukind,
    double up,
    double clip,
    StepKind skind,
    double sp,
):
    """`risk_update` for N transitions in order (arrays of length N; ``counts`` (N, k)), with
    the same result as N calls; returns the number of clipped utilities."""
    cdef Py_ssize_t t
    cdef int clipped = 0
    for t in range(s.shape[0]):
        clipped += _update(
            q, visits, s[t], a[t], r[t], s2[t], g[t], &counts[t, 0], ukind, up, clip, skind,
            sp, None, None, -1, 1.0, 0.0,
        )
    return clipped


cdef int _update(
    double[:, :, ::1] q,
    cnp.int64_t[:, :, ::1] visits,
    Py_ssize_t s,
    Py_ssize_t a,
    double r,
    Py_ssize_t s2,
    double g,
    cnp.int64_t* counts,
    UtilityKind ukind,
    double up,
    double clip,
    StepKind skind,
    double sp,
    double[:, ::1] v_ref,
    double[:, :, ::1] ttilde,
    Py_ssize_t fixed,
    double w_max,
    double w_fixed,
):
    """The rule of `risk_update` at one transition."""
    cdef Py_ssize_t k = q.shape[0], n_actions = q.shape[2], i, b
    cdef long long m, j, n
    cdef double best, target, d, z, ud
    cdef int clipped = 0
    cdef bint recenter = v_ref is not None
    cdef bint mixed = fixed >= 0
    for i in range(k):
        m = counts[i]
        for j in range(m):
            best = q[i, s2, 0]
            for b in range(1, n_actions):
                if q[i, s2, b] > best:
                    best = q[i, s2, b]
            if mixed:
                best = w_max * best + w_fixed * q[i, s2, fixed]
            target = r + g * best
            if recenter:
                target = target - (r + g * v_ref[i, s2]) + ttilde[i, s, a]
            d = target - q[i, s, a]
            if ukind == UtilityKind.IDENTITY:
                ud = d
            elif ukind == UtilityKind.EXPONENTIAL:
                z = up * d
                if z > clip or z < -clip:
                    clipped += 1
                    z = clip if z > clip else -clip
                ud = expm1(z) / up
            else:  # UtilityKind.PIECEWISE_LINEAR
                ud = (1.0 - up) * d if d > 0 else (1.0 + up) * d
            n = visits[i, s, a] + 1
            visits[i, s, a] = n
            q[i, s, a] = q[i, s, a] + _alpha(skind, sp, n) * ud
    return clipped


cdef inline double _risk_value(double[:, :, ::1] q, Py_ssize_t s, Py_ssize_t b, double lam,
                               bint seeking):
    """Qbar(s, b) -/+ lam * var(s, b) over the k tables (ddof=1; var = 0 if k = 1)."""
    cdef Py_ssize_t k = q.shape[0], i
    cdef double total = 0.0, mean, dev, var = 0.0
    for i in range(k):
        total = total + q[i, s, b]
    mean = total / k
    if k > 1:
        for i in range(k):
            dev = q[i, s, b] - mean
            var = var + dev * dev
        var = var / (k - 1)
    return mean + lam * var if seeking else mean - lam * var


def risk_row(double[:, :, ::1] q, Py_ssize_t s, double lam, bint seeking=False):
    """Qbar(s, .) -/+ lam * var(s, .) over the k tables (ddof=1; var = 0 if k = 1), (A,)."""
    cdef Py_ssize_t n_actions = q.shape[2], b
    cdef cnp.ndarray[cnp.float64_t, ndim=1] out = np.empty(n_actions)
    for b in range(n_actions):
        out[b] = _risk_value(q, s, b, lam, seeking)
    return out


def risk_rows(double[:, :, ::1] q, const long long[::1] states, double lam, bint seeking=False):
    """`risk_row` at each of ``states`` (N,): (N, A), each row the same numbers."""
    cdef Py_ssize_t n_actions = q.shape[2], i, b
    for i in range(states.shape[0]):
        if not 0 <= states[i] < q.shape[1]:
            raise ValueError(f"state {states[i]} is not in range({q.shape[1]})")
    out = np.empty((states.shape[0], n_actions))
    cdef double[:, ::1] rows = out
    for i in range(states.shape[0]):
        for b in range(n_actions):
            rows[i, b] = _risk_value(q, states[i], b, lam, seeking)
    return out


def risk_argmax(double[:, :, ::1] q, Py_ssize_t s, double lam, bint seeking=False):
    """The greedy action on `risk_row` ``(q, s, lam, seeking)``; ties to the lowest index."""
    cdef Py_ssize_t n_actions = q.shape[2], b, arg = 0
    cdef double value, best = 0.0
    for b in range(n_actions):
        value = _risk_value(q, s, b, lam, seeking)
        if b == 0 or value > best:
            best = value
            arg = b
    return arg


def epsilon_greedy(const double[:, ::1] values, rng, const double[::1] epsilon=None):
    """Actions for N sessions in order, int64 (N,), drawn as `agents.schedules.EpsilonGreedy`
    draws them one by one from ``rng`` (the same actions, the generator left in the same
    state): with ``epsilon`` (N,) given, one ``rng.random()`` for each row whose epsilon is
    above 0, and a uniform action (``rng.integers(A)``) when it falls below; otherwise the
    argmax of the row of ``values`` (N, A) (finite), ties broken by ``rng.integers(ties)``."""
    cdef Py_ssize_t n = values.shape[0], n_actions = values.shape[1], i, b
    if epsilon is not None and epsilon.shape[0] != n:
        raise ValueError(f"{epsilon.shape[0]} epsilons for {n} rows of values")
    if n_actions < 1:
        raise ValueError("values need at least one action")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy Generator, got {type(rng).__name__}")
    out = np.empty(n, dtype=np.int64)
    cdef long long[::1] action = out
    cdef bitgen_t* bitgen = <bitgen_t*>PyCapsule_GetPointer(
        rng.bit_generator.capsule, "BitGenerator"
    )
    cdef double best
    cdef Py_ssize_t ties, first, k
    with rng.bit_generator.lock:
        for i in range(n):
            if epsilon is not None and epsilon[i] > 0.0:
                if bitgen.next_double(bitgen.state) < epsilon[i]:
                    action[i] = _below(bitgen, n_actions)
                    continue
            best, first, ties = values[i, 0], 0, 1
            for b in range(1, n_actions):
                if values[i, b] > best:
                    best, first, ties = values[i, b], b, 1
                elif values[i, b] == best:
                    ties += 1
            if ties > 1:  # the k-th of the tied actions
                k = _below(bitgen, ties)
                for b in range(first, n_actions):
                    if values[i, b] == best:
                        if k == 0:
                            first = b
                            break
                        k -= 1
            action[i] = first
    return out


cdef inline Py_ssize_t _below(bitgen_t* bitgen, Py_ssize_t n) noexcept nogil:
    """``rng.integers(n)`` for 1 <= n < 2**32: numpy's draw for such a range (Lemire's
    multiply-and-reject on 32-bit draws, rejecting below (2**32 - n) mod n; none for n = 1)."""
    if n == 1:
        return 0
    cdef uint32_t size = <uint32_t>n
    cdef uint64_t m = <uint64_t>bitgen.next_uint32(bitgen.state) * size
    cdef uint32_t threshold
    if <uint32_t>m < size:
        threshold = (<uint32_t>0 - size) % size
        while <uint32_t>m < threshold:
            m = <uint64_t>bitgen.next_uint32(bitgen.state) * size
    return <Py_ssize_t>(m >> 32)
