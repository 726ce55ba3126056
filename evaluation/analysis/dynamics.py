"""Evolutionary dynamics of an empirical game given by a heuristic payoff table.

The population state is a mix ``x`` on the simplex (shape ``(k,)``, or ``(M, k)`` for ``M`` mixes at
once). `expected_payoffs` turns a `PayoffTable` into the fitness ``f(x)`` of each strategy, with one
of two weightings (``WEIGHTINGS``); `replicator` is the dynamic as a function of ``(state,
fitness)``; `field`, `rest_points` and `trajectory` combine them (`analysis.alpharank` ranks the
pure strategies). Every function takes a whole grid of mixes in one call (no Python loop over
mixes). Bad input raises ``ValueError`` naming the parameter.

References:
    Taylor, P. D. and Jonker, L. B. (1978). Evolutionary stable strategies and game dynamics.
    Mathematical Biosciences 40, 145-156.
    Tuyls, K., Perolat, J., Lanctot, M., et al. (2020). Bounds and dynamics for empirical
    game-theoretic analysis. Autonomous Agents and Multi-Agent Systems 34, 7.
    Hofbauer, J. and Sigmund, K. (1998). Evolutionary Games and Population Dynamics. Cambridge
    University Press (rest points on the boundary: the transversal eigenvalues, Section 7.2).
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations, product

import numpy as np
from numpy.typing import ArrayLike
from scipy import integrate, optimize
from scipy.linalg import null_space

from tradearena.envs.errors import not_one_of
from tradearena.evaluation.analysis.payoffs import PayoffTable

__all__ = [
    "WEIGHTINGS",
    "RestPoint",
    "Trajectory",
    "expected_payoffs",
    "field",
    "format_rest_points",
    "replicator",
    "rest_points",
    "rest_points_on_face",
    "simplex_grid",
    "solve_face",
    "support_starts",
    "trajectory",
]

WEIGHTINGS = ("tuyls", "focal")
"""Names of the expected-payoff weightings of `expected_payoffs`."""

_SIMPLEX_TOL = 1e-9
"""Slack allowed on ``x >= 0`` and ``sum(x) = 1`` for mixes passed in."""

_CHUNK_BYTES = 1 << 20
"""Mixes are evaluated in chunks whose monomial array is about this size (stays in cache)."""

_JACOBIAN_STEP = 1e-6
"""Central-difference step for the Jacobian of the field (error ~ step**2)."""

"""Rest points closer than this (max norm) are one point."""


# ---------------------------------------------------------------------------------------------
# Expected payoffs
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Polynomial:
    """The expected payoffs of a table as polynomials in ``x``.

    Both weightings are sums over the profiles ``n`` of the other ``p - 1`` players
    (``others``, shape (R', k), ``R' = C(p + k - 2, k - 1)``):
    ``f_i(x) = sum_n weights[n, i] x^n / norm_i(x)`` with ``norm_i = 1`` for "focal" and
    ``norm_i = sum_{m=0}^{p-1} (1 - x_i)^m`` for "tuyls".
    """

    others: np.ndarray
    weights: np.ndarray
    p: int
    normalised: bool


_POLYNOMIALS: weakref.WeakKeyDictionary[PayoffTable, dict[str, _Polynomial]] = (
    weakref.WeakKeyDictionary()
)


def _polynomial(table: PayoffTable, weighting: str) -> _Polynomial:
    """Check ``table`` and ``weighting`` and return (cached) coefficients of the payoffs."""
    if weighting not in WEIGHTINGS:
        raise ValueError(f"weighting: {not_one_of(weighting, WEIGHTINGS)}")
    if not isinstance(table, PayoffTable):
        raise ValueError(f"table: expected a PayoffTable, got {type(table).__name__}")
    cached = _POLYNOMIALS.setdefault(table, {})
    if weighting in cached:
        return cached[weighting]
    if not table.complete:
        expected = math.comb(table.p + table.k - 1, table.k - 1)
        raise ValueError(
            f"table: expected payoffs need every profile; the table has {len(table)} of the "
            f"{expected} profiles of p = {table.p} players over k = {table.k} strategies"
        )
    p, k = table.p, table.k
    others = np.array(list(PayoffTable.profiles(p - 1, k)), dtype=np.int64)
    factorial = np.array([math.factorial(n) for n in range(p + 1)], dtype=float)
    focal = factorial[p - 1] / factorial[others].prod(axis=1)  # multinomial(p - 1; n)
    weights = np.empty(others.shape)
    for i in range(k):
        rows = [table.row(n) for n in (others + np.eye(k, dtype=np.int64)[i]).tolist()]
        payoff = table.payoffs[rows, i]
        if weighting == "focal":
            weights[:, i] = focal * payoff
        else:  # multinomial(p; n + e_i) = multinomial(p - 1; n) p / (n_i + 1)
            weights[:, i] = focal * p / (others[:, i] + 1) * payoff
    polynomial = _Polynomial(others, weights, p, normalised=weighting == "tuyls")
    cached[weighting] = polynomial
    return polynomial


def _evaluate(polynomial: _Polynomial, x: np.ndarray) -> np.ndarray:
    """Fitness (M, k) at mixes ``x`` (M, k); no checks, so ``x`` may leave the simplex."""
    others, weights, p = polynomial.others, polynomial.weights, polynomial.p
    chunk = max(64, _CHUNK_BYTES // (8 * len(others)))
    out = np.empty(x.shape)
    for start in range(0, x.shape[0], chunk):
        xt = x[start : start + chunk].T  # (k, m): rows are contiguous per strategy
        powers = np.empty((xt.shape[0], p, xt.shape[1]))  # powers[j, d] = x_j^d, d < p
        powers[:, 0] = 1.0
        for d in range(1, p):
            np.multiply(powers[:, d - 1], xt, out=powers[:, d])
        monomials = powers[0][others[:, 0]]  # (R', m): x^n = prod_j x_j^{n_j}
        for j in range(1, xt.shape[0]):
            monomials *= powers[j][others[:, j]]
        f = weights.T @ monomials  # (k, m)
        if polynomial.normalised:
            f /= _geometric_sum(1.0 - xt, p)
        out[start : start + chunk] = f.T
    return out


def _geometric_sum(q: np.ndarray, p: int) -> np.ndarray:
    """``sum_{m=0}^{p-1} q^m`` elementwise, by Horner's rule (= (1 - q^p) / (1 - q))."""
    total = np.ones_like(q)
    for _ in range(p - 1):
        total = 1.0 + q * total
    return total


def _check_mixes(x: ArrayLike, k: int) -> np.ndarray:
    """``x`` as a float array (..., k) on the simplex, up to ``_SIMPLEX_TOL``."""
    x = np.asarray(x, dtype=float)
    if x.ndim not in (1, 2) or x.shape[-1] != k:
        raise ValueError(f"x: expected shape (k,) or (M, k) with k = {k}, got {x.shape}")
    if not np.isfinite(x).all() or (x < -_SIMPLEX_TOL).any():
        raise ValueError("x: expected finite, non-negative population mixes")
    if (np.abs(x.sum(axis=-1) - 1.0) > _SIMPLEX_TOL).any():
        raise ValueError("x: each mix must sum to 1")
    return x


def expected_payoffs(table: PayoffTable, x: ArrayLike, weighting: str = "tuyls") -> np.ndarray:
    """Expected payoff ``f_i(x)`` of each strategy in a population with mix ``x``.

    Args:
        table (PayoffTable): A complete table of ``p`` players over ``k`` strategies.
        x (array_like, shape (k,) or (M, k)): Population mixes on the simplex.
        weighting ({"tuyls", "focal"}): "tuyls" (default; OpenSpiel ``egt``, Tuyls et al. 2020,
            Sec. 3): all ``p`` seats are drawn from ``x`` and ``U_i(N)`` is weighted by
            ``P(N | x)`` conditioned on strategy ``i`` being present::

                f_i(x) = sum_{N: N_i > 0} P(N | x) U_i(N) / (1 - (1 - x_i)^p),
                P(N | x) = p! / prod_j N_j! * prod_j x_j^{N_j}.

            "focal": one player is fixed on ``i`` and the other ``p - 1`` are drawn from ``x``::

                f_i(x) = sum_{n: |n| = p - 1} (p - 1)! / prod_j n_j!
                         * prod_j x_j^{n_j} U_i(n + e_i),

            which is ``A x`` for a 2-player matrix game ``A``.

    Returns:
        numpy.ndarray, shape (k,) or (M, k): ``f(x)``, same shape as ``x``.

    Notes:
        With ``N = n + e_i``, ``x^N / (1 - (1 - x_i)^p) = x^n / sum_{m=0}^{p-1} (1 - x_i)^m``,
        so "tuyls" is evaluated in this form: finite on the faces ``x_i = 0`` and equal there to
        the limit from inside (``f_i -> sum_n P(n + e_i | ...)`` of the others alone, divided by
        ``p``). Monomials ``x^n`` are products of precomputed powers (no logarithms), so zeros in
        ``x`` are exact; all mixes go through a few array operations and one matrix product.
    """
    polynomial = _polynomial(table, weighting)
    x = _check_mixes(x, table.k)
    return _evaluate(polynomial, np.atleast_2d(x)).reshape(x.shape)


# ---------------------------------------------------------------------------------------------
# Replicator dynamics
# ---------------------------------------------------------------------------------------------
def replicator(x: ArrayLike, fitness: ArrayLike, time: float | None = None) -> np.ndarray:
    """Replicator dynamics (Taylor & Jonker 1978; Tuyls et al. 2020, Eq. 1).

    ``xdot_i = x_i (f_i - x . f)``.

    Args:
        x (array_like, shape (k,) or (M, k)): Population mixes.
        fitness (array_like, same shape as ``x``): Fitness ``f`` of each strategy at each mix.
        time (float, optional): Unused: the dynamic is autonomous; kept so ODE integrators can
            call it.

    Returns:
        numpy.ndarray, same shape as ``x``: ``xdot``; each row sums to 0 on the simplex and
            vanishes at the vertices.
    """
    x = np.asarray(x, dtype=float)
    fitness = np.asarray(fitness, dtype=float)
    if fitness.shape != x.shape:
        raise ValueError(f"fitness: shape {fitness.shape} differs from x shape {x.shape}")
    return x * (fitness - np.sum(x * fitness, axis=-1, keepdims=True))


def field(table: PayoffTable, x: ArrayLike, weighting: str = "tuyls") -> np.ndarray:
    """The replicator field at ``x`` (k,) or (M, k): ``replicator(x, expected_payoffs(x))``."""
    return replicator(x, expected_payoffs(table, x, weighting))


def simplex_grid(k: int, resolution: int, *, interior: bool = False) -> np.ndarray:
    """The mixes ``n / resolution`` for integer ``n >= 0`` summing to ``resolution``.

    Shape ``(C(resolution + k - 1, k - 1), k)``; with ``interior=True`` only those with every
    ``n_i >= 1``: ``(C(resolution - 1, k - 1), k)``. Order as `PayoffTable.profiles`.
    """
    if k < 1 or resolution < 1 or (interior and resolution < k):
        raise ValueError(f"resolution: {resolution} is too small for k = {k} (interior={interior})")
    offset = 1 if interior else 0
    counts = np.array(list(PayoffTable.profiles(resolution - offset * k, k)), dtype=float)
    return (counts + offset) / resolution


def support_starts(
    blocks: Sequence[Sequence[int]], grid: int, *, smallest: int = 1
) -> Iterator[tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]]:
    """The support search's candidates: every product of one support per block of strategy
    indices (within a block by size from ``smallest``, then in `itertools.combinations`
    order), each with its starts, the products of each support's shares at its centre and,
    when ``1 < size <= grid``, at the interior points of ``simplex_grid(size, grid)``. The
    symmetric equilibria (one block, `rest_points`) and the role equilibria (a block per role,
    `roles.role_equilibria`) search from them."""
    per_block = [
        [np.array(s) for size in range(smallest, len(b) + 1) for s in combinations(b, size)]
        for b in blocks
    ]
    for supports in product(*per_block):
        for parts in product(*(_face_starts(s.size, grid) for s in supports)):
            yield supports, parts


def _face_starts(size: int, grid: int) -> list[np.ndarray]:
    """The starts on a support of ``size`` strategies (`support_starts`)."""
    starts = [np.full(size, 1.0 / size)]
    if 1 < size <= grid:
        starts.extend(simplex_grid(size, grid, interior=True))
    return starts


def _field(polynomial: _Polynomial, x: np.ndarray) -> np.ndarray:
    return replicator(x, _evaluate(polynomial, x))


# ---------------------------------------------------------------------------------------------
# Rest points
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RestPoint:
    """A rest point of the replicator field and its linear stability.

    Attributes:
        x (numpy.ndarray, shape (k,)): The mix.
        kind (str): "stable", "unstable", "saddle", "center" or "neutral", judged in the whole
            simplex (see `rest_points`).
        eigenvalues (numpy.ndarray, shape (k - 1,), complex): Eigenvalues of the field's
            Jacobian on the simplex: the ``|support| - 1`` within the point's face, then one
            transversal eigenvalue ``f_j(x) - x . f(x)`` per absent strategy ``j`` (in order).
        support (tuple of int): Strategies with ``x_i > 0``.
        invaders (tuple of int): Absent strategies whose transversal eigenvalue is above
            ``eig_tol``: they earn more than the mix and invade it.
    """

    x: np.ndarray
    kind: str
    eigenvalues: np.ndarray
    support: tuple[int, ...]
    invaders: tuple[int, ...] = ()


def _tangent_basis(k: int) -> np.ndarray:
    """Orthonormal basis (k, k - 1) of the tangent space ``{v : sum(v) = 0}``."""
    return null_space(np.ones((1, k)))


def _jacobian(
    polynomial: _Polynomial, x: np.ndarray, support: Sequence[int] | None = None
) -> np.ndarray:
    """Jacobian (s - 1, s - 1) of the field at ``x`` within the face ``support`` (default:
    the whole simplex; ``s`` strategies), in the face's `_tangent_basis`.

    Central differences along the basis vectors, all ``2 (s - 1)`` points in one call. The
    field maps the face's plane (its strategies summing to 1, the others 0) into the face's
    tangent space, so ``B^T J B`` is its restriction there.
    """
    support = range(x.size) if support is None else support
    basis = np.zeros((x.size, len(support) - 1))
    basis[list(support)] = _tangent_basis(len(support))
    h = _JACOBIAN_STEP
    points = np.concatenate([x + h * basis.T, x - h * basis.T])
    values = _field(polynomial, points)
    m = basis.shape[1]
    derivative = (values[:m] - values[m:]).T / (2 * h)  # (k, k - 1): J B
    return basis.T @ derivative


def _classify(eigenvalues: np.ndarray, tol: float) -> str:
    real, imaginary = eigenvalues.real, eigenvalues.imag
    if (real > tol).any() and (real < -tol).any():
        return "saddle"
    if (real < -tol).all():
        return "stable"
    if (real > tol).all():
        return "unstable"
    if (np.abs(real) <= tol).all() and (np.abs(imaginary) > tol).any():
        return "center"
    return "neutral"


def rest_points(
    table: PayoffTable,
    weighting: str = "tuyls",
    *,
    grid: int = 6,
    tol: float = 1e-8,
    eig_tol: float = 1e-6,
    same: float = 0.01,
) -> list[RestPoint]:
    """Rest points of the replicator field on the simplex, each once, with its stability in
    the whole simplex.

    Args:
        table (PayoffTable): A complete table.
        weighting ({"tuyls", "focal"}): See `expected_payoffs`.
        grid (int): Resolution of the starting points: on every face (support ``S``,
            ``|S| >= 2``) the interior points of ``simplex_grid(|S|, grid)`` and the face's
            centre.
        tol (float): A point is kept when ``max_{i, j in S} |f_i - f_j| < tol`` and
            ``max |xdot| < tol`` (payoff units).
        eig_tol (float): Real or imaginary parts with ``|.| <= eig_tol`` count as zero in the
            classification.
        same (float): Points closer than ``same`` in every share are one rest point: the one on
            the smallest face (found first) is kept. An empirical table's payoffs are estimates,
            and near-degenerate ones give, beside a rest point on a face, another a fraction of
            a percent inside it: one point to a reader of shares to two decimals.

    Returns:
        list of RestPoint: Vertices first, then points on edges, faces and the interior, by
            support.

    Notes:
        Every vertex is a rest point. On the relative interior of a face ``S`` the field
        vanishes iff the payoffs of the strategies in ``S`` are equal, so for each face the
        ``|S| - 1`` equations ``f_i(x) = f_last(x)`` (``i in S``) are solved in the face's reduced
        coordinates with ``scipy.optimize.least_squares`` (bounded to ``[0, 1]``) from each start;
        solutions on the face's boundary are left to the smaller face.

        Stability is judged in the whole simplex, as Hofbauer and Sigmund (1998, Section 7.2)
        do: at a rest point on a face the Jacobian is block-triangular, its eigenvalues those
        within the face (the Jacobian restricted to the face's tangent space, by central
        differences) and one transversal eigenvalue ``f_j(x) - x . f(x)`` per absent strategy
        ``j``, exact: a strategy that earns more than the mix invades it. So a point is
        "stable" only if it is stable within its face and no absent strategy can invade (all
        ``Re lambda < -eig_tol``), "unstable" if all ``> eig_tol``, "saddle" if both signs occur,
        "center" if all ``|Re lambda| <= eig_tol`` with some ``|Im lambda| > eig_tol`` (e.g. the
        centre of rock-paper-scissors, neutrally stable), otherwise "neutral" (non-hyperbolic:
        the linearisation does not decide). A game with a continuum of rest points gives one
        point per start that converges, ``same`` apart at least.
    """
    polynomial = _polynomial(table, weighting)
    if int(grid) != grid or grid < 1:
        raise ValueError(f"grid: expected an integer >= 1, got {grid!r}")
    if not 0 < same < 1:
        raise ValueError(f"same: expected a share in (0, 1), got {same!r}")
    k = table.k
    found: list[tuple[np.ndarray, tuple[int, ...]]] = [((np.eye(k)[i]), (i,)) for i in range(k)]
    for (support,), (start,) in support_starts([range(k)], grid, smallest=2):
        x = solve_face(table, support.tolist(), start, tol, weighting)
        if x is not None and not any(np.abs(x - y).max() < same for y, _ in found):
            found.append((x, tuple(support.tolist())))
    return [_judged(polynomial, x, support, eig_tol) for x, support in found]


def rest_points_on_face(
    table: PayoffTable, strategies: Sequence[str], weighting: str = "tuyls"
) -> list[RestPoint]:
    """The rest points of the whole game ``table`` that lie on the face of ``strategies``
    (their support within it), each judged in the whole simplex (`rest_points`), with ``x``
    cut to those strategies (shape ``(len(strategies),)``, in their order) and ``support``
    and ``invaders`` still indices into ``table.strategies``.

    This is the one answer on stability: a point stable within a face that an absent
    strategy invades is a saddle here, where the sub-game ``table.restrict(strategies)``
    would call it stable."""
    index = [table.strategies.index(s) for s in strategies]
    return [
        RestPoint(point.x[index], point.kind, point.eigenvalues, point.support, point.invaders)
        for point in rest_points(table, weighting)
        if set(point.support) <= set(index)
    ]


def format_rest_points(table: PayoffTable, weighting: str = "tuyls") -> list[str]:
    """One line per rest point of `rest_points` (stability in the whole simplex): its kind,
    its mix (shares to two decimals, by strategy) and the strategies that invade it, e.g.
    ``saddle   (raql 0.00, ra2q 1.00, ra3q 0.00) invaded by ra3q``. The text the command
    prints and the notebook shows."""
    lines = []
    for point in rest_points(table, weighting):
        mix = ", ".join(f"{s} {x:.2f}" for s, x in zip(table.strategies, point.x))
        invaders = ", ".join(table.strategies[j] for j in point.invaders)
        lines.append(f"{point.kind:<8} ({mix})" + (f" invaded by {invaders}" if invaders else ""))
    return lines


def _judged(
    polynomial: _Polynomial, x: np.ndarray, support: tuple[int, ...], eig_tol: float
) -> RestPoint:
    """The rest point ``x`` of face ``support`` with its eigenvalues within the face, then
    transversal (``f_j - x . f`` per absent ``j``), and the kind they give."""
    within = np.linalg.eigvals(_jacobian(polynomial, x, support)) if len(support) > 1 else []
    fitness = _evaluate(polynomial, x[None, :])[0]
    absent = [j for j in range(x.size) if j not in support]
    transversal = fitness[absent] - x @ fitness
    eigenvalues = np.concatenate([np.asarray(within, complex), transversal.astype(complex)])
    invaders = tuple(j for j, value in zip(absent, transversal) if value > eig_tol)
    return RestPoint(x, _classify(eigenvalues, eig_tol), eigenvalues, support, invaders)


def solve_face(
    table: PayoffTable, support: list[int], start: np.ndarray, tol: float, weighting: str
) -> np.ndarray | None:
    """A rest point (of the ``weighting``'s field) in the relative interior of face
    ``support`` near ``start`` (the shares of ``support``), or None."""
    polynomial = _polynomial(table, weighting)
    k = polynomial.others.shape[1]

    def mix(y: np.ndarray) -> np.ndarray:
        x = np.zeros((1, k))
        x[0, support] = np.append(y, 1.0 - y.sum())
        return x

    def residual(y: np.ndarray) -> np.ndarray:
        f = _evaluate(polynomial, mix(y))[0, support]
        return f[:-1] - f[-1]

    solution = optimize.least_squares(
        residual, start[:-1], bounds=(0.0, 1.0), xtol=1e-13, ftol=1e-13, gtol=1e-13
    )
    x = mix(solution.x)
    if x[0, support].min() <= _SIMPLEX_TOL:
        return None
    if np.abs(residual(solution.x)).max() >= tol or np.abs(_field(polynomial, x)).max() >= tol:
        return None
    return x[0]


# ---------------------------------------------------------------------------------------------
# Trajectories
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Trajectory:
    """Solution of the replicator dynamics.

    Attributes:
        t (numpy.ndarray, shape (n_points,)): Times.
        x (numpy.ndarray, shape (n_points, k)): Mixes at those times, on the simplex.
    """

    t: np.ndarray
    x: np.ndarray


def _project(x: np.ndarray) -> np.ndarray:
    """Clip to ``x >= 0`` and renormalise each mix to sum 1 (undoes integrator drift)."""
    x = np.clip(x, 0.0, None)
    return x / x.sum(axis=-1, keepdims=True)


def trajectory(
    table: PayoffTable,
    x0: ArrayLike,
    t_max: float,
    *,
    weighting: str = "tuyls",
    n_points: int = 200,
    rtol: float = 1e-8,
    atol: float = 1e-10,
) -> Trajectory:
    """Integrate ``xdot = field(x)`` from ``x0`` (k,) over ``[0, t_max]``.

    ``scipy.integrate.solve_ivp`` (RK45, tolerances ``rtol``, ``atol``) on the field of the
    projected state; the ``n_points`` equally spaced outputs are clipped and renormalised to
    the simplex.
    """
    polynomial = _polynomial(table, weighting)
    x0 = _check_mixes(x0, table.k)
    if x0.ndim != 1:
        raise ValueError(f"x0: expected one mix of shape (k,), got {x0.shape}")
    if not (np.isfinite(t_max) and t_max > 0):
        raise ValueError(f"t_max: expected a finite time > 0, got {t_max!r}")
    if int(n_points) != n_points or n_points < 2:
        raise ValueError(f"n_points: expected an integer >= 2, got {n_points!r}")

    def rhs(time: float, y: np.ndarray) -> np.ndarray:
        return _field(polynomial, _project(y)[None])[0]

    times = np.linspace(0.0, t_max, int(n_points))
    solution = integrate.solve_ivp(rhs, (0.0, t_max), x0, t_eval=times, rtol=rtol, atol=atol)
    if not solution.success:
        raise RuntimeError(f"trajectory: solve_ivp failed: {solution.message}")
    return Trajectory(solution.t, _project(solution.y.T))
