"""Performance and risk metrics of per-episode returns, with their intervals.

Every metric takes ``returns``: a 1-D array-like of per-episode returns in dollars, one value per
test episode, in time order. Inputs are checked before any computing; a bad one raises
``ValueError`` naming the parameter. Data too degenerate for a metric (too few episodes, no
spread, no downside) give NaN and a :class:`DegenerateMetricWarning`: never ``inf``, never an
exception. Standard deviations are sample standard deviations (``ddof=1``). The tables of a
run, these metrics across seeds and agents, are `evaluation.analysis.summary`'s.
"""

from __future__ import annotations

import inspect
import math
import numbers
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "ConfidenceInterval",
    "DegenerateMetricWarning",
    "bootstrap_ci",
    "cvar",
    "floored_sharpe",
    "gain_loss_ratio",
    "hit_rate",
    "max_drawdown",
    "outperformance",
    "pnl_to_map",
    "sharpe",
    "shortfall_bp",
    "sortino",
    "summarize",
    "total_pnl",
    "wilson_interval",
]

_ZERO_SPREAD = 10 * np.finfo(np.float64).resolution
"""A standard deviation at most this fraction (1e-14) of the largest |value| is round-off."""

_CVAR_LEVEL = 0.05
"""The tail fraction behind ``cvar_5`` in :func:`summarize`."""

_LEVEL_TOLERANCE = 1e-9
"""Slack in ceil(level * n), so that 0.1 * 30 (3.0000000000000004 in floats) counts as 3."""


class DegenerateMetricWarning(UserWarning):
    """The data cannot define the metric (too few values, no spread, no downside): NaN."""


@dataclass(frozen=True)
class ConfidenceInterval:
    """A bootstrap confidence interval [``low``, ``high``] and the statistic's ``estimate``."""

    low: float
    high: float
    estimate: float


def sharpe(
    returns: ArrayLike, *, risk_free: float = 0.0, periods_per_year: float | None = None
) -> float:
    """Sharpe ratio of per-episode returns.

    Args:
        returns (array_like, shape (n,)): Per-episode returns in dollars, in time order.
        risk_free (float, optional): Risk-free return per episode, in dollars (default 0).
        periods_per_year (float, optional): Episodes per year; if given the ratio is annualised,
            if None (default) it is per episode.

    Returns:
        float: The ratio (dimensionless), or NaN if n < 2 or the excess returns have zero
            variance.

    Warns:
        DegenerateMetricWarning: When NaN is returned.

    Notes:
        With excess returns ``x = returns - risk_free``::

            sharpe = mean(x) / std(x, ddof=1) * sqrt(periods_per_year)
            std(x, ddof=1) = sqrt(sum((x - mean(x))**2) / (n - 1))

        and no square-root factor when ``periods_per_year`` is None. It is computed on
        ``x / max(abs(x))``, which leaves the ratio unchanged and cannot overflow; a standard
        deviation of at most 1e-14 of ``max(abs(x))`` is round-off and counts as zero variance.

    Examples:
        >>> sharpe([1.0, 2.0, 3.0, 4.0])  # 2.5 / std([1, 2, 3, 4], ddof=1) = 2.5 / 1.2909944
        1.9364916731037085
    """
    r = _returns_iv(returns, "returns")
    _finite_iv(risk_free, "risk_free")
    annualisation = _periods_iv(periods_per_year)
    if r.size < 2:
        return _degenerate("sharpe", f"needs at least 2 returns, got {r.size}")
    excess = r - risk_free
    scale = np.max(np.abs(excess))
    z = excess / scale if scale > 0 else excess
    spread = z.std(ddof=1)
    if spread <= _ZERO_SPREAD:
        return _degenerate("sharpe", "the excess returns have zero variance")
    return float(z.mean() / spread * annualisation)


def floored_sharpe(returns: ArrayLike, floor: float) -> float:
    """Mean over max(std, ``floor``) of per-episode returns (dollars; std with ddof=1, 0 for
    one value): a Sharpe ratio that is 0 for a seat that never trades and never infinite,
    as a tournament payoff needs. ``floor`` > 0 dollars."""
    values = _returns_iv(returns, "returns")
    _finite_iv(floor, "floor")
    if floor <= 0:
        raise ValueError(f"floor must be > 0 dollars, got {floor}")
    std = values.std(ddof=1) if len(values) > 1 else 0.0
    return float(values.mean() / max(std, floor))


def sortino(
    returns: ArrayLike,
    *,
    risk_free: float = 0.0,
    target: float = 0.0,
    periods_per_year: float | None = None,
) -> float:
    """Sortino ratio: mean excess return over the downside deviation below ``target``.

    Args:
        returns (array_like, shape (n,)): Per-episode returns in dollars, in time order.
        risk_free (float, optional): Risk-free return per episode, in dollars (default 0).
        target (float, optional): Minimum acceptable return per episode, in dollars (default 0).
        periods_per_year (float, optional): Episodes per year; if given the ratio is annualised,
            if None (default) it is per episode.

    Returns:
        float: The ratio (dimensionless), or NaN if n = 0 or no return is below ``target``.

    Warns:
        DegenerateMetricWarning: When NaN is returned.

    Notes:
        ::

            sortino = mean(returns - risk_free) / dd * sqrt(periods_per_year)
            dd = sqrt(mean(min(returns - target, 0)**2))

        The downside deviation ``dd`` averages over all n episodes (those above ``target`` count
        as 0), i.e. it is the root of the second lower partial moment; no ``ddof`` correction.

    Examples:
        >>> sortino([2.0, -1.0, 3.0, -2.0])  # 0.5 / sqrt((1 + 4) / 4) = 0.5 / 1.1180340
        0.4472135954999579
    """
    r = _returns_iv(returns, "returns")
    _finite_iv(risk_free, "risk_free")
    _finite_iv(target, "target")
    annualisation = _periods_iv(periods_per_year)
    if r.size == 0:
        return _degenerate("sortino", "needs at least 1 return, got 0")
    downside = np.sqrt(np.mean(np.minimum(r - target, 0.0) ** 2))
    if downside == 0:
        return _degenerate("sortino", f"no return is below the target {target}")
    return float(np.mean(r - risk_free) / downside * annualisation)


def max_drawdown(returns: ArrayLike) -> float:
    """Largest peak-to-trough fall of the cumulative P&L, in dollars (>= 0).

    The P&L path is ``w = [0, cumsum(returns)...]``: it starts at 0, and that start counts as
    a peak. ``max_drawdown = max_t (max_{s <= t} w_s - w_t)``; 0 for no returns.

    Examples:
        >>> max_drawdown([1.0, -2.0, 3.0, -5.0, 1.0])  # path 0, 1, -1, 2, -3, -2: from 2 to -3
        5.0
    """
    r = _returns_iv(returns, "returns")
    wealth = np.concatenate(([0.0], np.cumsum(r)))
    return float(np.max(np.maximum.accumulate(wealth) - wealth))


def cvar(returns: ArrayLike, *, level: float = 0.05) -> float:
    """Conditional value at risk (expected shortfall): the mean of the worst returns, in dollars.

    Args:
        returns (array_like, shape (n,)): Per-episode returns in dollars.
        level (float, optional): Tail fraction, in (0, 1) (default 0.05).

    Returns:
        float: The mean of the ``k = ceil(level * n)`` smallest returns, signed (a loss is
            negative); NaN (with a :class:`DegenerateMetricWarning`) if n = 0.

    Notes:
        The empirical estimator ``mean(sort(returns)[:k])`` with ``k = ceil(level * n)`` (at
        least 1), so the tail always holds whole episodes and at least ``level`` of them.
        ``level * n`` is rounded up with a 1e-9 tolerance: ``level=0.1`` on 30 returns averages
        the worst 3.

    Examples:
        >>> cvar([-5.0, 3.0, -1.0, 2.0, 0.0, 4.0, -3.0, 1.0], level=0.25)  # (-5 - 3) / 2
        -4.0
    """
    r = _returns_iv(returns, "returns")
    _fraction_iv(level, "level")
    if r.size == 0:
        return _degenerate("cvar", "needs at least 1 return, got 0")
    k = max(1, math.ceil(level * r.size - _LEVEL_TOLERANCE))
    return float(np.mean(np.sort(r)[:k]))


def total_pnl(returns: ArrayLike) -> float:
    """Sum of the per-episode returns, in dollars (0 for no returns)."""
    return float(np.sum(_returns_iv(returns, "returns")))


def hit_rate(returns: ArrayLike) -> float:
    """Fraction of episodes with a return > 0 (a return of exactly 0 is not a hit).

    NaN (with a :class:`DegenerateMetricWarning`) if there are no returns.
    """
    r = _returns_iv(returns, "returns")
    if r.size == 0:
        return _degenerate("hit_rate", "needs at least 1 return, got 0")
    return float(np.mean(r > 0))


def gain_loss_ratio(returns: ArrayLike) -> float:
    """Gain-loss ratio: the sum of the gains over the sum of the losses (dimensionless).

    ``gain_loss = sum(max(r, 0)) / sum(max(-r, 0))`` over the per-episode returns ``r``
    (dollars); a return of 0 is neither. NaN (with a :class:`DegenerateMetricWarning`) if no
    return is below 0.

    Examples:
        >>> gain_loss_ratio([3.0, -1.0, 0.0, 2.0, -4.0])  # (3 + 2) / (1 + 4)
        1.0
    """
    r = _returns_iv(returns, "returns")
    losses = float(np.sum(np.maximum(-r, 0.0)))
    if losses == 0:
        return _degenerate("gain_loss_ratio", "no return is below 0")
    return float(np.sum(np.maximum(r, 0.0)) / losses)


def pnl_to_map(returns: ArrayLike, positions: ArrayLike) -> float:
    """P&L-to-MAP: mean P&L over mean absolute position (Spooner et al. 2018), dollars per share.

    ``returns`` (n,): per-episode P&L, dollars; ``positions`` (n,): each episode's mean
    absolute position, shares (an episode record's ``exposure``: |inventory| after each
    decision step, averaged over the steps). ``pnl_to_map = mean(returns) / mean(positions)``;
    NaN (with a :class:`DegenerateMetricWarning`) for no episodes or a mean position of 0 (a
    seat that never held a share).

    Examples:
        >>> pnl_to_map([4.0, -1.0, 3.0], [10.0, 30.0, 20.0])  # 2 / 20
        0.1
    """
    r = _returns_iv(returns, "returns")
    held = _returns_iv(positions, "positions")
    if held.shape != r.shape:
        raise ValueError(f"positions must have the shape of returns {r.shape}, got {held.shape}")
    if (held < 0).any():
        raise ValueError("positions must be >= 0 shares (mean absolute positions)")
    if r.size == 0 or held.mean() == 0:
        return _degenerate("pnl_to_map", "the mean absolute position is 0 (or no episodes)")
    return float(r.mean() / held.mean())


def shortfall_bp(returns: ArrayLike, arrival: ArrayLike, parent_order: int) -> np.ndarray:
    """Implementation shortfall of each execution episode, in basis points of its arrival price.

    ``returns`` (n,): each episode's score, dollars, which for an execution is minus its
    shortfall against the arrival price (`envs.seats.SeatedMarket.score`: the parent order's
    value at the arrival price less what filling it cost, for a buy or a sell);
    ``arrival`` (n,): the arrival price (the opening mid), dollars per share;
    ``parent_order``: shares of the parent order (negative: a sale). Returns (n,)::

        shortfall_bp = -returns / (|parent_order| * arrival) * 1e4

    positive when the execution cost more than the arrival price (bought above it, sold
    below it).

    Examples:
        >>> shortfall_bp([-10.0, 5.0], [100.0, 50.0], 1000)  # $10 on $100,000; -$5 on $50,000
        array([ 1., -1.])
    """
    r = _returns_iv(returns, "returns")
    price = _returns_iv(arrival, "arrival")
    if price.shape != r.shape:
        raise ValueError(f"arrival must have the shape of returns {r.shape}, got {price.shape}")
    if (price <= 0).any():
        raise ValueError("arrival must be > 0 dollars per share")
    if not isinstance(parent_order, numbers.Integral) or parent_order == 0:
        raise ValueError(f"parent_order must be a non-zero number of shares, got {parent_order!r}")
    return -r / (abs(parent_order) * price) * 1e4


def wilson_interval(successes: int, n: int, *, confidence: float = 0.95) -> ConfidenceInterval:
    """Wilson score interval of a proportion: ``successes`` of ``n`` trials.

    With p = successes / n and z the standard normal quantile of (1 + confidence) / 2::

        centre = (p + z^2 / (2n)) / (1 + z^2 / n)
        half = z / (1 + z^2 / n) * sqrt(p (1 - p) / n + z^2 / (4 n^2))

    ``low, high = centre -/+ half``, within [0, 1]: ``low`` is 0 when no trial succeeds,
    ``high`` 1 when every trial does; ``estimate = p``. All
    NaN (with a :class:`DegenerateMetricWarning`) for n = 0.

    Examples:
        >>> wilson_interval(8, 10)  # p 0.8, z 1.959964: centre 0.7166, half 0.2263
        ConfidenceInterval(low=0.49016247153664183, high=0.9433178485456247, estimate=0.8)
    """
    if not isinstance(n, numbers.Integral) or n < 0:
        raise ValueError(f"n must be an integer >= 0, got {n!r}")
    if not isinstance(successes, numbers.Integral) or not 0 <= successes <= n:
        raise ValueError(f"successes must be an integer in [0, n={n}], got {successes!r}")
    _fraction_iv(confidence, "confidence")
    if n == 0:
        _degenerate("wilson_interval", "no trials")
        return ConfidenceInterval(np.nan, np.nan, np.nan)
    z = NormalDist().inv_cdf((1.0 + confidence) / 2.0)
    p = successes / n
    shrink = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / shrink
    half = z / shrink * math.sqrt(p * (1.0 - p) / n + z * z / (4 * n * n))
    low = 0.0 if successes == 0 else max(centre - half, 0.0)
    high = 1.0 if successes == n else min(centre + half, 1.0)
    return ConfidenceInterval(low, high, p)


def outperformance(
    returns: ArrayLike, reference: ArrayLike, *, confidence: float = 0.95
) -> ConfidenceInterval:
    """Probability of outperforming the reference: the share of paired episodes in which the
    agent's return beats the reference's, with its Wilson interval (:func:`wilson_interval`).

    ``returns`` and ``reference`` (n,): dollars, pair i being the same session (the same
    seed) played by the agent and by the reference. A pair counts when ``returns[i] >
    reference[i]`` (a tie is not a win).

    Examples:
        >>> outperformance([2.0, 1.0, -1.0, 3.0], [1.0, 1.0, -2.0, 4.0]).estimate  # wins 1st, 3rd
        0.5
    """
    r = _returns_iv(returns, "returns")
    ref = _returns_iv(reference, "reference")
    if ref.shape != r.shape:
        raise ValueError(f"reference must have the shape of returns {r.shape}, got {ref.shape}")
    return wilson_interval(int(np.sum(r > ref)), r.size, confidence=confidence)


def bootstrap_ci(
    values: ArrayLike,
    statistic: Callable[[np.ndarray], float] = np.mean,
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int | np.random.Generator = 0,
) -> ConfidenceInterval:
    """Percentile bootstrap confidence interval of ``statistic(values)``.

    Args:
        values (array_like, shape (n,)): The sample. NaN values are dropped (with a
            :class:`DegenerateMetricWarning`).
        statistic (callable, optional): Maps a 1-D sample to a number (default ``np.mean``). If
            it takes an ``axis`` keyword (as ``np.mean`` and ``np.median`` do), it is called
            once on all resamples with ``axis=-1``, as in ``scipy.stats.bootstrap``; otherwise
            once per resample.
        confidence (float, optional): Coverage of the interval, in (0, 1) (default 0.95).
        n_resamples (int, optional): Number of bootstrap resamples, >= 1 (default 2000).
        seed (int or numpy.random.Generator, optional): Seed of the ``numpy.random.default_rng``
            that draws the resamples (default 0), or the generator itself.

    Returns:
        ConfidenceInterval: ``estimate = statistic(values)``; ``low`` and ``high`` are the
            ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles (linear
            interpolation) of the statistic over ``n_resamples`` resamples of n values drawn
            with replacement. One value: ``low = high = NaN`` and
            ``estimate = statistic(values)`` (one value shows no spread to resample, and a
            zero-width interval would claim certainty). No values: all three NaN. Both warn with
            a :class:`DegenerateMetricWarning`.
    """
    sample = _returns_iv(values, "values", allow_nan=True)
    if not callable(statistic):
        raise ValueError(f"statistic must be callable, got {statistic!r}")
    _fraction_iv(confidence, "confidence")
    if not isinstance(n_resamples, numbers.Integral) or n_resamples < 1:
        raise ValueError(f"n_resamples must be an integer >= 1, got {n_resamples!r}")
    if not isinstance(seed, np.random.Generator) and (
        not isinstance(seed, numbers.Integral) or seed < 0
    ):
        raise ValueError(f"seed must be an integer >= 0 or a numpy Generator, got {seed!r}")

    missing = np.isnan(sample)
    if missing.any():
        message = f"bootstrap_ci: dropped {missing.sum()} NaN of {sample.size} values"
        warnings.warn(message, DegenerateMetricWarning, stacklevel=2)
        sample = sample[~missing]
    if sample.size == 0:
        message = "bootstrap_ci: no values; returning NaN"
        warnings.warn(message, DegenerateMetricWarning, stacklevel=2)
        return ConfidenceInterval(np.nan, np.nan, np.nan)
    estimate = float(statistic(sample))
    if sample.size == 1:
        message = "bootstrap_ci: one value has no spread to resample; low and high are NaN"
        warnings.warn(message, DegenerateMetricWarning, stacklevel=2)
        return ConfidenceInterval(np.nan, np.nan, estimate)

    rng = np.random.default_rng(seed)
    resamples = sample[rng.integers(0, sample.size, size=(n_resamples, sample.size))]
    if _accepts_axis(statistic):
        statistics = np.asarray(statistic(resamples, axis=-1), dtype=np.float64)
    else:
        statistics = np.array([statistic(resample) for resample in resamples], dtype=np.float64)
    alpha = 1.0 - confidence
    low, high = np.quantile(statistics, [alpha / 2, 1.0 - alpha / 2])
    return ConfidenceInterval(float(low), float(high), estimate)


def summarize(
    returns: ArrayLike,
    *,
    risk_free: float = 0.0,
    target: float = 0.0,
    periods_per_year: float | None = None,
) -> dict[str, float]:
    """All metrics of one run of episodes, for tables.

    ``risk_free``, ``target`` and ``periods_per_year`` go to :func:`sharpe` and :func:`sortino`.

    Returns:
        dict: ``sharpe``, ``sortino``, ``max_drawdown`` (dollars), ``cvar_5`` (:func:`cvar` at
            level 0.05, dollars), ``total_pnl``, ``mean_pnl``, ``std_pnl`` (dollars per episode,
            ``ddof=1``; NaN if n < 2), ``hit_rate`` and ``episodes`` (n), in that order.
    """
    r = _returns_iv(returns, "returns")
    return {
        "sharpe": sharpe(r, risk_free=risk_free, periods_per_year=periods_per_year),
        "sortino": sortino(
            r, risk_free=risk_free, target=target, periods_per_year=periods_per_year
        ),
        "max_drawdown": max_drawdown(r),
        "cvar_5": cvar(r, level=_CVAR_LEVEL),
        "total_pnl": total_pnl(r),
        "mean_pnl": float(r.mean()) if r.size else np.nan,
        "std_pnl": float(r.std(ddof=1)) if r.size >= 2 else np.nan,
        "hit_rate": hit_rate(r),
        "episodes": r.size,
    }


def _degenerate(metric: str, reason: str) -> float:
    """Warn that ``metric`` is undefined for the data (``reason``) and return NaN."""
    warnings.warn(f"{metric}: {reason}; returning NaN", DegenerateMetricWarning, stacklevel=3)
    return np.nan


def _accepts_axis(statistic: Callable[..., object]) -> bool:
    """Whether ``statistic`` takes an ``axis`` keyword (False if its signature is unknown)."""
    try:
        return "axis" in inspect.signature(statistic).parameters
    except (TypeError, ValueError):
        return False


def _returns_iv(values: ArrayLike, name: str, *, allow_nan: bool = False) -> np.ndarray:
    """``values`` as a 1-D float64 array of finite numbers (or NaN, if ``allow_nan``)."""
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be a 1-D array of numbers: {error}") from None
    if array.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {array.shape}")
    bad = np.isinf(array) if allow_nan else ~np.isfinite(array)
    if bad.any():
        index = int(np.flatnonzero(bad)[0])
        allowed = "finite or NaN" if allow_nan else "finite"
        raise ValueError(f"{name} must be {allowed}, got {array[index]} at index {index}")
    return array


def _finite_iv(value: float, name: str) -> None:
    if not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")


def _fraction_iv(value: float, name: str) -> None:
    if not isinstance(value, numbers.Real) or not 0 < value < 1:
        raise ValueError(f"{name} must be in (0, 1), got {value!r}")


def _periods_iv(periods_per_year: float | None) -> float:
    """The annualisation factor sqrt(periods_per_year), 1 for None."""
    if periods_per_year is None:
        return 1.0
    if (
        not isinstance(periods_per_year, numbers.Real)
        or not math.isfinite(periods_per_year)
        or periods_per_year <= 0
    ):
        raise ValueError(f"periods_per_year must be a number > 0 or None, got {periods_per_year!r}")
    return math.sqrt(periods_per_year)
