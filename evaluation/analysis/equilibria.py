"""Nash equilibria of a symmetric empirical game, each confirmed by its regret.

A symmetric mixed profile ``x`` (shape ``(k,)``) is a Nash equilibrium when no player gains by
deviating from it. The payoff of a deviator to strategy ``i`` against ``p - 1`` others drawn from
``x`` is the "focal" expected payoff of `dynamics.expected_payoffs`,
``f_i(x) = sum_{|n| = p - 1} multinomial(p - 1; n) x^n U_i(n + e_i)``, the deviation payoff of
the empirical-game literature (Wellman's ``gameanalysis``). The deviation gain of ``i`` is
``f_i(x) - x . f(x)`` and the regret of ``x`` is the largest gain, in payoff units (Sharpe
ratio or dollars, as the table's). ``x . f(x)`` is also the welfare of ``x``: the expected
payoff of a player when all ``p`` play ``x``.

The "tuyls" weighting is not used here: it conditions on ``i`` being present among all ``p``
seats, which is not a deviation payoff, and its rest points are not Nash equilibria in general
(the coordination game ``diag(2, 1)`` has its mixed rest point at share
``(sqrt(33) - 5) / 2 = 0.372`` of the first strategy there, its Nash equilibrium at ``1/3``).

Two methods find equilibria, and each candidate is kept only when its regret is at most
``tol``:

- "replicator": the replicator dynamics (multiplicative-weights steps) from every point of a
  simplex grid, vertices, edges and faces included; the endpoint and the time average of each
  run (which converges where orbits cycle, as in rock-paper-scissors) are polished by solving
  ``f_i = f_j`` on their support;
- "support": support enumeration, the rest points of every face (`dynamics.rest_points`, all
  solutions of ``f_i = f_j`` on the face's relative interior from a grid of starts), of which
  the Nash equilibria are those no absent strategy gains against.

References:
    Wellman, M. P., Tuyls, K. and Greenwald, A. (2025). Empirical game-theoretic analysis: a survey.
    Journal of Artificial Intelligence Research 82.
    Weibull, J. W. (1995). Evolutionary Game Theory. MIT Press (folk theorem: stable rest points of
    the replicator dynamics are Nash equilibria, Nash equilibria are its rest points).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from tradearena.evaluation.analysis.dynamics import (
    expected_payoffs,
    rest_points,
    simplex_grid,
    solve_face,
)
from tradearena.evaluation.analysis.payoffs import PayoffTable

__all__ = [
    "METHODS",
    "Equilibrium",
    "MaxWelfare",
    "check_methods",
    "deviation_gains",
    "deviation_weights",
    "equilibria",
    "max_welfare",
    "merge_candidates",
    "regret",
    "welfare",
]

METHODS = ("replicator", "support")
"""The methods of `equilibria`."""

_WEIGHTING = "focal"
"""Deviation payoffs are the focal expected payoffs (see the module docstring)."""


@dataclass(frozen=True)
class Equilibrium:
    """A symmetric Nash equilibrium of a table, up to its regret.

    Attributes:
        x (numpy.ndarray, shape (k,)): The mixture: share of each strategy.
        regret (float): ``max_i gains[i]`` (>= 0), payoff units.
        gains (numpy.ndarray, shape (k,)): Deviation gain ``f_i(x) - x . f(x)`` of each strategy
            (0 on the support, up to rounding; <= ``regret`` off it).
        welfare (float): ``x . f(x)``, the expected payoff per player when all play ``x``.
        support (tuple of int): Strategies with ``x_i > 0``.
        methods (tuple of str): The `METHODS` that found it.
    """

    x: np.ndarray
    regret: float
    gains: np.ndarray
    welfare: float
    support: tuple[int, ...]
    methods: tuple[str, ...]


@dataclass(frozen=True)
class MaxWelfare:
    """The profile of the table whose mean payoff per player is largest.

    Attributes:
        counts (tuple of int): Players per strategy (length k, sums to p).
        welfare (float): ``sum_i N_i U_i(N) / p``, payoff units.
    """

    counts: tuple[int, ...]
    welfare: float


def deviation_gains(table: PayoffTable, x: ArrayLike) -> np.ndarray:
    """Deviation gain ``f_i(x) - x . f(x)`` of each strategy against mixture(s) ``x``.

    ``x`` has shape (k,) or (M, k); the result has the same shape, payoff units.
    """
    f = expected_payoffs(table, x, _WEIGHTING)
    return f - np.sum(np.asarray(x, dtype=float) * f, axis=-1, keepdims=True)


def regret(table: PayoffTable, x: ArrayLike) -> float | np.ndarray:
    """Regret ``max_i (f_i(x) - x . f(x))`` of mixture ``x`` (k,), a float, or of each row of
    ``x`` (M, k), shape (M,). Payoff units; 0 exactly at a Nash equilibrium."""
    gains = deviation_gains(table, x)
    return float(gains.max()) if gains.ndim == 1 else gains.max(axis=-1)


def welfare(table: PayoffTable, x: ArrayLike) -> float | np.ndarray:
    """Expected payoff per player ``x . f(x)`` when all ``p`` players play ``x`` (k,), a
    float, or each row of ``x`` (M, k), shape (M,)."""
    x = np.asarray(x, dtype=float)
    value = np.sum(x * expected_payoffs(table, x, _WEIGHTING), axis=-1)
    return float(value) if value.ndim == 0 else value


def deviation_weights(table: PayoffTable, x: ArrayLike) -> np.ndarray:
    """The weights ``W`` (rows, k) with ``f_i(x) = sum_r W[r, i] U[r, i]`` for a mixture ``x``
    (k,); (..., rows, k) for mixtures (..., k).

    ``W[r, i] = multinomial(p - 1; N_r - e_i) x^(N_r - e_i)`` where ``N_r[i] > 0``, else 0.
    Deviation payoffs are linear in the table's payoffs, so one ``W`` gives them for any number
    of resampled payoff arrays at once (see `analysis.resampling`). The table may lack profiles:
    those rows then carry no weight, and the weights of each strategy sum to less than 1.
    """
    x = np.asarray(x, dtype=float)
    if x.ndim < 1 or x.shape[-1] != table.k:
        raise ValueError(f"x: expected shape (..., {table.k}), got {x.shape}")
    p, k = table.p, table.k
    others = table.counts[:, None, :] - np.eye(k, dtype=np.int64)[None]  # (rows, i, j)
    valid = (others >= 0).all(axis=2)  # (rows, i): N_r[i] > 0
    others = np.clip(others, 0, None)
    log_factorial = np.array([math.lgamma(n + 1) for n in range(p + 1)])
    coefficient = np.exp(log_factorial[p - 1] - log_factorial[others].sum(axis=2))
    monomial = np.prod(x[..., None, None, :] ** others, axis=-1)
    return np.where(valid, coefficient * monomial, 0.0)


def max_welfare(table: PayoffTable) -> MaxWelfare:
    """The table's profile with the largest mean payoff per player (first on ties)."""
    totals = np.nansum(table.counts * np.nan_to_num(table.payoffs), axis=1) / table.p
    r = int(np.argmax(totals))
    return MaxWelfare(tuple(int(n) for n in table.counts[r]), float(totals[r]))


def equilibria(
    table: PayoffTable,
    *,
    methods: tuple[str, ...] = METHODS,
    grid: int = 6,
    tol: float = 1e-6,
    same: float = 0.01,
    steps: int = 4000,
) -> list[Equilibrium]:
    """The symmetric Nash equilibria of a complete table, each once.

    Args:
        table (PayoffTable): A complete table of ``p`` players over ``k`` strategies.
        methods (tuple of str): Any of `METHODS` (module docstring); equilibria found by several
            are merged.
        grid (int): Resolution of the starting points (``simplex_grid(k, grid)`` for
            "replicator", the starts of `dynamics.rest_points` for "support").
        tol (float): Largest regret of an equilibrium, payoff units.
        same (float): Mixtures closer than this in every share are one equilibrium (the first
            found, the one on the smallest support, is kept).
        steps (int): Replicator steps per start.

    Returns:
        list of Equilibrium: Sorted by support size, then by mixture (largest share of the first
            strategy first).
    """
    check_methods(methods)
    if not tol > 0:
        raise ValueError(f"tol: expected a regret > 0, got {tol!r}")
    candidates: list[tuple[np.ndarray, str]] = []
    if "support" in methods:
        points = rest_points(table, _WEIGHTING, grid=grid, tol=min(tol, 1e-8), same=same)
        candidates += [(point.x, "support") for point in points]
    if "replicator" in methods:
        candidates += [(x, "replicator") for x in _replicator_candidates(table, grid, steps)]
    found = merge_candidates(candidates, lambda x: regret(table, x), tol, same)
    out = [_equilibrium(table, x, found_by) for x, found_by in found]
    return sorted(out, key=lambda e: (len(e.support), tuple(-e.x)))


def check_methods(methods: tuple[str, ...]) -> None:
    """Raise ValueError unless ``methods`` is a non-empty selection of `METHODS`."""
    unknown = [m for m in methods if m not in METHODS]
    if unknown or not methods:
        raise ValueError(f"methods: expected some of {list(METHODS)}, got {list(methods)}")


def merge_candidates(
    candidates: list[tuple[np.ndarray, str]],
    regret_of: Callable[[np.ndarray], float],
    tol: float,
    same: float,
) -> list[tuple[np.ndarray, tuple[str, ...]]]:
    """The candidate mixtures (each with the method that found it) of regret at most ``tol``
    (payoff units), smallest support first, those within ``same`` in every share of an earlier
    one merged into it: (mixture, the methods that found it, in `METHODS` order) each."""
    found: list[tuple[np.ndarray, set[str]]] = []
    for x, method in sorted(candidates, key=lambda c: np.count_nonzero(c[0] > 0)):
        if regret_of(x) > tol:
            continue
        match = next((f for f in found if np.abs(f[0] - x).max() < same), None)
        if match is None:
            found.append((x, {method}))
        else:
            match[1].add(method)
    return [(x, tuple(m for m in METHODS if m in by)) for x, by in found]


def _equilibrium(table: PayoffTable, x: np.ndarray, methods: tuple[str, ...]) -> Equilibrium:
    gains = deviation_gains(table, x)
    support = tuple(int(i) for i in np.flatnonzero(x > 0))
    return Equilibrium(x, float(gains.max()), gains, welfare(table, x), support, methods)


def _replicator_candidates(table: PayoffTable, grid: int, steps: int) -> list[np.ndarray]:
    """Endpoints and time averages of the replicator dynamics from every grid point, each
    polished on its support (`_polish`)."""
    starts = simplex_grid(table.k, grid)
    ends, averages = _replicate(table, starts, steps)
    return [_polish(table, x) for x in np.concatenate([ends, averages])]


def _replicate(table: PayoffTable, x: np.ndarray, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """Multiplicative-weights steps ``x <- x exp(eta (f - x . f)) / Z`` of every start at once
    (rows of ``x``, (M, k)), with ``eta`` one tenth over the table's payoff range (the
    replicator dynamics as ``eta -> 0``). Returns the endpoints and the time averages of the
    second half, both (M, k)."""
    spread = np.nanmax(table.payoffs) - np.nanmin(table.payoffs)
    eta = 0.1 / spread if spread > 0 else 0.0
    average = np.zeros_like(x)
    for step in range(steps):
        f = expected_payoffs(table, x, _WEIGHTING)
        gain = f - np.sum(x * f, axis=1, keepdims=True)
        x = x * np.exp(eta * gain)
        x /= x.sum(axis=1, keepdims=True)
        if step >= steps // 2:
            average += x
    return x, average / (steps - steps // 2)


def _polish(table: PayoffTable, x: np.ndarray) -> np.ndarray:
    """``x`` with shares below 1e-3 set to 0, then the solution of ``f_i = f_j`` on that
    support started from it, when one lies inside the support's face; else ``x`` as cut."""
    cut = np.where(x < 1e-3, 0.0, x)
    cut /= cut.sum()
    support = list(np.flatnonzero(cut))
    if len(support) < 2:
        return cut
    solved = solve_face(table, support, cut[support], 1e-10, _WEIGHTING)
    return cut if solved is None else solved
