"""Price impact of metaorders, and the statistics of the impact scorecard.

`impact_exponent` fits the power law move ~ Y size^delta across parents (their moves read
off simulated days by `envs.simulator.impact.metaorder_moves`; the square-root law of
empirical markets has delta about 0.5: Toth et al., "Anomalous price impact and the critical
nature of liquidity in financial markets", PRX 2011). The scorecard (`CHECKS`; the judge that
measures a market is `evaluation.market.impact`) fits the square-root law over metaorders
(`square_root_law`), the relaxation after them (`relaxation`, `decay_exponent`) and compares
a seat's figures with the tape's (`ratio_of_means`, `ks_p`), each with a bootstrap interval.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from tradearena.evaluation.analysis.metrics import (
    ConfidenceInterval,
    DegenerateMetricWarning,
    bootstrap_ci,
)

__all__ = [
    "CHECKS",
    "ImpactFit",
    "SquareRootFit",
    "Target",
    "decay_exponent",
    "decay_shape",
    "impact_exponent",
    "interval",
    "ks_p",
    "mean_interval",
    "ratio_of_means",
    "relaxation",
    "square_root_law",
]


class ImpactFit(NamedTuple):
    """move = prefactor * size^exponent fitted on ``bins`` log-spaced size bins (those with a
    positive mean move and enough parents); ``size`` and ``move`` are the bins' means."""

    exponent: float
    prefactor: float
    size: np.ndarray
    move: np.ndarray


def impact_exponent(
    size: np.ndarray, move: np.ndarray, n_bins: int = 10, min_count: int = 20
) -> ImpactFit:
    """The log-log slope of the mean signed move (any unit: ticks, bp) against parent size
    (shares), both shape (p,): parents are grouped into ``n_bins`` bins equally spaced in
    log size, and a least-squares line is fitted through the (log mean size, log mean move)
    of the bins holding at least ``min_count`` parents and a positive mean move."""
    size, move = np.asarray(size, dtype=float), np.asarray(move, dtype=float)
    if size.shape != move.shape or size.ndim != 1 or np.any(size <= 0):
        raise ValueError(f"need positive sizes and moves of one shape (p,), got {size.shape}")
    edges = np.geomspace(size.min(), size.max() * (1 + 1e-12), n_bins + 1)
    which = np.searchsorted(edges, size, side="right") - 1
    count = np.bincount(which, minlength=n_bins)
    keep = count >= min_count
    mean_size = np.bincount(which, size, n_bins)[keep] / count[keep]
    mean_move = np.bincount(which, move, n_bins)[keep] / count[keep]
    positive = mean_move > 0
    mean_size, mean_move = mean_size[positive], mean_move[positive]
    if len(mean_size) < 2:
        raise ValueError(f"fewer than 2 bins with {min_count} parents and a positive mean move")
    slope, intercept = np.polyfit(np.log(mean_size), np.log(mean_move), 1)
    return ImpactFit(float(slope), float(np.exp(intercept)), mean_size, mean_move)


# -------------------------------------------------------------------- the impact scorecard
@dataclass(frozen=True)
class Target:
    """Where a scorecard check's value must lie: in [``low``, ``high``] (``high`` inf: above
    ``low``), or, for a P&L (``at_most_zero``), with its interval reaching 0 or below."""

    low: float
    high: float
    at_most_zero: bool = False

    def holds(self, value: float, low: float) -> bool:
        """Whether ``value`` (with its interval's ``low``) meets the target; NaN never does."""
        if self.at_most_zero:
            return bool(np.isfinite(value) and low <= 0)
        return bool(self.low <= value <= self.high)


CHECKS: dict[str, Target] = {
    "null_seat_differences": Target(0, 0),
    "sqrt_exponent": Target(0.4, 0.6),
    "sqrt_prefactor": Target(0.3, 1.0),
    "relaxation": Target(0.5, 0.9),
    "decay_exponent": Target(0.5, 0.8),
    "response_1": Target(0.8, 1.25),
    "response_10": Target(0.8, 1.25),
    "refill_ks_p": Target(0.05, np.inf),
    "passive_markout_1s": Target(0.8, 1.25),
    "passive_markout_10s": Target(0.8, 1.25),
    "round_trip_pnl": Target(-np.inf, 0, at_most_zero=True),
    "pump_dump_pnl": Target(-np.inf, 0, at_most_zero=True),
}
"""The impact scorecard's checks, in order, and their targets (LOB-Impact's, from the empirical
literature: the square-root law's exponent 0.49 +- 0.07 and prefactor of order one, Toth et
al. PRX 2011; impact after a metaorder relaxing to about 2/3 of its peak, as a power law,
Bucci et al. 2019; no round trip that earns, Gatheral 2010)."""


def interval(
    statistic: Callable[[np.ndarray], float], n: int, *, resamples: int = 1000, seed: int = 0
) -> ConfidenceInterval:
    """A percentile bootstrap interval (95%) of ``statistic(rows)``, a statistic of the rows
    (an int64 index array into n paired samples) of a sample of ``n``: the rows resampled
    with replacement (`evaluation.analysis.metrics.bootstrap_ci`)."""
    if n == 0:
        return ConfidenceInterval(np.nan, np.nan, np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateMetricWarning)
        return bootstrap_ci(
            np.arange(n, dtype=float),
            lambda rows: statistic(rows.astype(np.int64)),
            n_resamples=resamples,
            seed=seed,
        )


@dataclass(frozen=True)
class SquareRootFit:
    """I / sigma_D = intercept + prefactor (Q / V_D) ** exponent, least squares over
    metaorders (one point each), with 95% bootstrap intervals."""

    exponent: ConfidenceInterval
    prefactor: ConfidenceInterval
    intercept: float


def square_root_law(
    participation: np.ndarray, impact: np.ndarray, *, resamples: int = 200, seed: int = 0
) -> SquareRootFit:
    """Fit I(Q) = Y sigma_D (Q / V)^delta with an intercept: ``participation`` Q / V_D and
    ``impact`` I / sigma_D (each metaorder's impact at its end over the daily volatility),
    shape (m,), by least squares in the impact itself (a metaorder whose impact came out
    negative counts as it is)."""
    x, y = np.asarray(participation, float), np.asarray(impact, float)
    keep = np.isfinite(x) & np.isfinite(y) & (x > 0)
    x, y = x[keep], y[keep]
    if len(x) < 3 or np.ptp(y) == 0:  # too few, or no impact to fit
        nan = ConfidenceInterval(np.nan, np.nan, np.nan)
        return SquareRootFit(nan, nan, np.nan)

    def fit(rows: np.ndarray) -> np.ndarray:
        return _power_fit(x[rows], y[rows])

    best = fit(np.arange(len(x)))
    rng = np.random.default_rng(seed)
    draws = np.array([fit(rng.integers(0, len(x), len(x))) for _ in range(resamples)])
    low, high = _percentiles(draws)
    return SquareRootFit(
        ConfidenceInterval(float(low[2]), float(high[2]), float(best[2])),
        ConfidenceInterval(float(low[1]), float(high[1]), float(best[1])),
        float(best[0]),
    )


def _power_fit(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(intercept, prefactor, exponent) of y = a + Y x^delta by least squares, delta in
    [0.05, 2]: for each exponent on a grid the line is solved exactly, then refined."""
    from scipy.optimize import minimize_scalar

    logx = np.log(x)

    def line(delta: float) -> tuple[float, np.ndarray]:
        design = np.column_stack([np.ones_like(x), np.exp(delta * logx)])
        coefficients, *_ = np.linalg.lstsq(design, y, rcond=None)
        return float(np.sum((design @ coefficients - y) ** 2)), coefficients

    grid = np.linspace(0.05, 2.0, 40)
    start = grid[int(np.argmin([line(d)[0] for d in grid]))]
    found = minimize_scalar(
        lambda d: line(d)[0],
        bounds=(max(0.05, start - 0.05), min(2.0, start + 0.05)),
        method="bounded",
    )
    (a, prefactor) = line(found.x)[1]
    return np.array([a, prefactor, found.x])


def relaxation(at_end: np.ndarray, later: np.ndarray, *, seed: int = 0) -> ConfidenceInterval:
    """The impact left later (3T) over the impact at a metaorder's end (T): mean ``later``
    over mean ``at_end`` over metaorders (shape (m,) each, impacts in the metaorders'
    directions), with its 95% bootstrap interval."""
    a, b = np.asarray(at_end, float), np.asarray(later, float)

    def ratio(rows: np.ndarray) -> float:
        top = np.mean(a[rows])
        return float(np.mean(b[rows]) / top) if top > 0 else np.nan

    return interval(ratio, len(a), seed=seed)


def decay_shape(u: np.ndarray, exponent: float, permanent: float) -> np.ndarray:
    """The impact after a metaorder's end over the impact at its end, ``u`` (t - T) / T after
    it, for a propagator G(t) ~ t^-exponent over a constant-rate execution and a
    ``permanent`` share: p + (1 - p) ((1 + u)^(1 - exponent) - u^(1 - exponent)); 1 at u = 0,
    decaying as u^-exponent."""
    u = np.asarray(u, float)
    return permanent + (1 - permanent) * ((1 + u) ** (1 - exponent) - u ** (1 - exponent))


def decay_exponent(
    u: np.ndarray, impacts: np.ndarray, *, resamples: int = 200, seed: int = 0
) -> ConfidenceInterval:
    """The exponent of the decay after metaorders' end: `decay_shape` (exponent in (0, 1),
    permanent share in [0, 1]) fitted to the mean impact ``u`` (shape (k,), > 0) after the
    end over the mean impact at the end, with ``impacts`` (m, k + 1): each metaorder's impact
    at its end, then at each ``u``; 95% bootstrap interval over metaorders."""
    from scipy.optimize import least_squares

    u, impacts = np.asarray(u, float), np.asarray(impacts, float)

    def fit(rows: np.ndarray) -> float:
        mean = impacts[rows].mean(axis=0)
        if not mean[0] > 0:
            return np.nan
        curve = mean[1:] / mean[0]
        found = least_squares(
            lambda p: decay_shape(u, p[0], p[1]) - curve,
            [0.5, 0.5],
            bounds=([0.01, 0.0], [0.99, 1.0]),
        )
        return float(found.x[0])

    best = fit(np.arange(len(impacts)))
    rng = np.random.default_rng(seed)
    draws = [fit(rng.integers(0, len(impacts), len(impacts))) for _ in range(resamples)]
    low, high = _percentiles(np.array(draws))
    return ConfidenceInterval(float(low), float(high), best)


def _percentiles(draws: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The 2.5% and 97.5% points of bootstrap ``draws`` (along the first axis), NaN ones left
    out (a resample the fit could not use); NaN where every draw is."""
    finite = np.isfinite(draws)
    if not finite.any():
        nan = np.full(draws.shape[1:], np.nan)
        return nan, nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a column of NaN draws: NaN
        low, high = np.nanquantile(draws, [0.025, 0.975], axis=0)
    return low, high


def ratio_of_means(
    values: np.ndarray, references: np.ndarray, *, seed: int = 0
) -> ConfidenceInterval:
    """Mean ``values`` over mean ``references`` (paired, shape (n,): each of a seat's orders'
    measure and the tape's figure for an order like it), with its 95% bootstrap interval."""
    v, r = np.asarray(values, float), np.asarray(references, float)
    keep = np.isfinite(v) & np.isfinite(r)
    v, r = v[keep], r[keep]

    def ratio(rows: np.ndarray) -> float:
        bottom = np.mean(r[rows])
        return float(np.mean(v[rows]) / bottom) if bottom != 0 else np.nan

    return interval(ratio, len(v), seed=seed)


def mean_interval(values: np.ndarray, *, seed: int = 0) -> ConfidenceInterval:
    """The mean of ``values`` (NaN left out) with its 95% bootstrap interval."""
    v = np.asarray(values, float)
    v = v[np.isfinite(v)]
    return interval(lambda rows: float(np.mean(v[rows])), len(v), seed=seed)


def ks_p(sample: np.ndarray, reference: np.ndarray) -> float:
    """The two-sample Kolmogorov-Smirnov test's p-value of ``sample`` against ``reference``
    (NaN when either is empty)."""
    from scipy.stats import ks_2samp

    if not len(sample) or not len(reference):
        return np.nan
    return float(ks_2samp(sample, reference).pvalue)
