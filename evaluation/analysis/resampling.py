"""Bootstrap intervals for the equilibria of an empirical game (Wiedenbeck, Cassell and Wellman
2014).

A table's payoffs are means over sampled episodes, so every equilibrium, regret and welfare
computed from it is an estimate. Each bootstrap resample redraws every cell's mean:

- "records": from the raw observations behind the table (one value per seat and repetition,
  as `PayoffTable.from_records` takes them), the cell's ``n`` values drawn ``n`` times with
  replacement and averaged: the nonparametric bootstrap;
- "stderr": from the table's ``stderr_<s>`` columns alone, the cell's mean drawn from a normal
  law with the cell's standard error, the law that resampling its ``n`` episodes gives the mean
  to the central-limit approximation (a cell with one sample, NaN standard error, stays fixed).

Against each resampled table, an equilibrium ``x`` of the original table gets its regret and
its welfare (deviation payoffs are linear in the payoffs, `equilibria.deviation_weights`, so all
resamples take one product), and is tracked: the solution of ``f_i = f_j`` on its support,
started from ``x``; it survives the resample when that solution exists inside the support's
face and its regret is at most ``tol``. Intervals are percentile intervals over the resamples
(the mixture's over those where it survives); an equilibrium's regret has a one-sided bound
instead (`Bootstrap.regret_bound`): its regret is 0, the least a regret can be, so every
resample's regret lies at or above it and a percentile interval would lie above its own
estimate.

A run's tournament and ``tradearena games`` on its ``payoffs.csv`` both draw from the
standard errors: the intervals depend on the table alone, so the two agree, and with the few
seats behind a cell (2 to 20) the normal law of the cell's mean, from its standard error
(ddof 1), is not narrowed by (n - 1) / n as the means of its resampled values are.

References:
    Wiedenbeck, B., Cassell, B.-A. and Wellman, M. P. (2014). Bootstrap statistics for empirical
    games. Proceedings of AAMAS 2014, 597-604.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from tradearena.evaluation.analysis.equilibria import deviation_weights
from tradearena.evaluation.analysis.payoffs import PayoffTable, parse_profile

__all__ = ["SOURCES", "Bootstrap", "bootstrap", "regret_variance", "resampled_payoffs"]

SOURCES = ("records", "stderr")
"""What the resamples are drawn from (module docstring)."""


@dataclass(frozen=True)
class Bootstrap:
    """Bootstrap distributions of ``E`` equilibria over ``B`` resamples.

    Attributes:
        source (str): One of `SOURCES`.
        level (float): Coverage of the intervals, e.g. 0.95.
        regret (numpy.ndarray, shape (E, B)): Regret of each original mixture in each resampled
            table, payoff units.
        welfare (numpy.ndarray, shape (E, B)): Welfare ``x . f(x)`` of each original mixture in
            each resampled table.
        mixtures (numpy.ndarray, shape (E, B, k), or None): The equilibrium tracked in each
            resample (NaN where it does not survive); None when not tracked.
        survived (numpy.ndarray of bool, shape (E, B), or None): Whether it survives the
            resample; None when not tracked.
    """

    source: str
    level: float
    regret: np.ndarray
    welfare: np.ndarray
    mixtures: np.ndarray | None = None
    survived: np.ndarray | None = None

    def _bounds(self, values: np.ndarray, axis: int) -> np.ndarray:
        tail = 100 * (1 - self.level) / 2
        return np.moveaxis(np.nanpercentile(values, [tail, 100 - tail], axis=axis), 0, -1)

    @property
    def regret_interval(self) -> np.ndarray:
        """(E, 2): low and high percentiles of each equilibrium's regret."""
        return self._bounds(self.regret, 1)

    @property
    def regret_bound(self) -> np.ndarray:
        """(E,): the ``level`` percentile of each mixture's regret, the one-sided bound of an
        equilibrium's regret: [0, bound] holds its regret, 0, and holds the regret of a
        ``level`` share of the resamples."""
        return np.nanpercentile(self.regret, 100 * self.level, axis=1)

    @property
    def welfare_interval(self) -> np.ndarray:
        """(E, 2): low and high percentiles of each equilibrium's welfare."""
        return self._bounds(self.welfare, 1)

    @property
    def mixture_interval(self) -> np.ndarray | None:
        """(E, k, 2): low and high percentiles of each share over the surviving resamples
        (NaN for an equilibrium that survives none); None when not tracked."""
        if self.mixtures is None:
            return None
        out = np.full((*self.mixtures.shape[::2], 2), np.nan)
        for e, mixtures in enumerate(self.mixtures):
            if self.survived[e].any():
                out[e] = self._bounds(mixtures[self.survived[e]], 0)
        return out

    @property
    def survival(self) -> np.ndarray:
        """(E,): share of resamples in which each equilibrium survives (NaN when not
        tracked)."""
        if self.survived is None:
            return np.full(self.regret.shape[:1], np.nan)
        return self.survived.mean(axis=1)


def resampled_payoffs(
    table: PayoffTable,
    resamples: int,
    *,
    records: pd.DataFrame | None = None,
    value: str = "payoff",
    seed: int = 0,
) -> tuple[np.ndarray, str]:
    """``resamples`` redrawn payoff arrays of ``table``, shape (B, rows, k) (NaN where the
    count is 0), and the source they were drawn from ("records" when ``records`` is given,
    else "stderr").

    ``records`` has columns ``profile``, ``strategy`` and ``value``, the input of
    `PayoffTable.from_records`; each cell's values must average to the table's payoff.
    """
    if int(resamples) != resamples or resamples < 1:
        raise ValueError(f"resamples: expected an integer >= 1, got {resamples!r}")
    rng = np.random.default_rng(seed)
    base = np.broadcast_to(table.payoffs, (int(resamples), *table.payoffs.shape))
    if records is None:
        if table.stderr is None:
            raise ValueError(
                "table: no stderr_<s> columns and no records: its payoffs cannot be resampled"
            )
        spread = np.nan_to_num(table.stderr)
        return base + spread * rng.standard_normal(base.shape), "stderr"
    out = base.copy()
    for (r, i), values in _cells(table, records, value).items():
        draws = rng.integers(0, values.size, size=(int(resamples), values.size))
        out[:, r, i] = values[draws].mean(axis=1)
    return out, "records"


def _cells(
    table: PayoffTable, records: pd.DataFrame, value: str
) -> dict[tuple[int, int], np.ndarray]:
    """The observations of each cell (row, strategy index) of ``table`` in ``records``."""
    missing = [c for c in ("profile", "strategy", value) if c not in records]
    if missing:
        raise ValueError(f"records: missing columns {missing}")
    column = {s: i for i, s in enumerate(table.strategies)}
    cells: dict[tuple[int, int], list[float]] = {}
    for key, strategy, observed in zip(records["profile"], records["strategy"], records[value]):
        profile = parse_profile(key, table.k)
        r = table.row(profile)
        if r is None or strategy not in column or profile[column[strategy]] == 0:
            raise ValueError(f"records: no cell of the table for {strategy!r} in {key!r}")
        cells.setdefault((r, column[strategy]), []).append(float(observed))
    out = {cell: np.array(values) for cell, values in cells.items()}
    for (r, i), values in out.items():
        if not np.isclose(values.mean(), table.payoffs[r, i], rtol=1e-9, atol=1e-12):
            raise ValueError(
                f"records: the values of {table.strategies[i]!r} in profile "
                f"{table.counts[r].tolist()} average {values.mean()!r}, the table says "
                f"{table.payoffs[r, i]!r}"
            )
    return out


def bootstrap(
    table: PayoffTable,
    mixtures: ArrayLike,
    *,
    resamples: int = 1000,
    records: pd.DataFrame | None = None,
    value: str = "payoff",
    level: float = 0.95,
    tol: float = 1e-6,
    track: bool = True,
    seed: int = 0,
) -> Bootstrap:
    """Bootstrap distributions of the regret, welfare and equilibrium of each of ``mixtures``
    (module docstring).

    Args:
        table (PayoffTable): A complete table.
        mixtures (array_like, shape (E, k)): Mixtures, usually the equilibria of ``table``
            (``[e.x for e in equilibria(table)]``); each is tracked on its support (its nonzero
            shares).
        resamples (int): Number of resamples ``B``.
        records (DataFrame, optional): The observations behind the table (see
            `resampled_payoffs`); without them the table's standard errors are used.
        value (str): Column of ``records`` holding the payoff.
        level (float): Coverage of the percentile intervals, in (0, 1).
        tol (float): Largest regret of a surviving equilibrium, payoff units.
        track (bool): Track each mixture's equilibrium in every resample (mixture intervals,
            survival): Newton's method on all resamples at once (`_track`). Without it, regret
            and welfare alone are one matrix product.
        seed (int): Seed of the resampling.
    """
    if not 0 < level < 1:
        raise ValueError(f"level: expected a coverage in (0, 1), got {level!r}")
    payoffs, source = resampled_payoffs(table, resamples, records=records, value=value, seed=seed)
    points = np.asarray(mixtures, dtype=float).reshape(-1, table.k)
    clean = np.nan_to_num(payoffs)
    size, k = len(points), table.k
    regrets, welfares = np.empty((size, int(resamples))), np.empty((size, int(resamples)))
    for e, x in enumerate(points):
        f = np.einsum("ri,bri->bi", deviation_weights(table, x), clean)
        mean = f @ x
        regrets[e], welfares[e] = (f - mean[:, None]).max(axis=1), mean
    if not track:
        return Bootstrap(source, level, regrets, welfares)
    tracks = np.stack([_track(table, clean, x, tol) for x in points]).reshape(size, -1, k)
    survived = ~np.isnan(tracks[..., 0])
    return Bootstrap(source, level, regrets, welfares, tracks, survived)


_NEWTON_STEPS = 30
"""Newton iterations of `_track`; from the original equilibrium it converges in a few."""
_STEP = 1e-7
"""Central-difference step of `_track`'s Jacobian."""


def _track(table: PayoffTable, payoffs: np.ndarray, x: np.ndarray, tol: float) -> np.ndarray:
    """The equilibrium on the support of ``x`` in each resampled table (``payoffs``, (B, rows,
    k), zeros where the count is 0), shape (B, k), NaN where it leaves the support's face or
    its regret exceeds ``tol``.

    All resamples at once: Newton's method on ``f_i(y) = f_last(y)`` (``i`` in the support),
    ``y`` the support's shares, from ``x``, with a central-difference Jacobian.
    """
    support = np.flatnonzero(x > 0)
    count = payoffs.shape[0]
    if support.size == 1:
        y = np.tile(x, (count, 1))
        return np.where((_gains(table, payoffs, y).max(axis=1) <= tol)[:, None], y, np.nan)
    free, last = support[:-1], support[-1]

    def mixtures(shares: np.ndarray) -> np.ndarray:
        y = np.zeros((*shares.shape[:-1], table.k))
        y[..., free] = shares
        y[..., last] = 1.0 - shares.sum(axis=-1)
        return y

    def residual(shares: np.ndarray, cells: np.ndarray) -> np.ndarray:
        f = np.einsum("...ri,...ri->...i", deviation_weights(table, mixtures(shares)), cells)
        return f[..., free] - f[..., last, None]

    shares = np.tile(x[free], (count, 1))
    steps = _STEP * np.eye(free.size)  # (s - 1, s - 1)
    stacked = np.broadcast_to(payoffs[:, None], (count, 2 * free.size, *payoffs.shape[1:]))
    for _ in range(_NEWTON_STEPS):
        g = residual(shares, payoffs)
        if np.nanmax(np.abs(g)) < 1e-12:
            break
        probes = np.concatenate([shares[:, None] + steps, shares[:, None] - steps], axis=1)
        values = residual(probes, stacked)
        jacobian = (values[:, : free.size] - values[:, free.size :]).transpose(0, 2, 1) / (
            2 * _STEP
        )
        shares = shares - np.einsum("bij,bj->bi", np.linalg.pinv(jacobian), g)
    y = mixtures(shares)
    ok = (np.abs(residual(shares, payoffs)).max(axis=1) < 1e-10) & (y[:, support] > 0).all(axis=1)
    ok &= _gains(table, payoffs, np.where(ok[:, None], y, x)).max(axis=1) <= tol
    return np.where(ok[:, None], y, np.nan)


def _gains(table: PayoffTable, payoffs: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Deviation gains (B, k) of mixture ``y[b]`` in resampled table ``payoffs[b]``."""
    f = np.einsum("bri,bri->bi", deviation_weights(table, y), payoffs)
    return f - np.sum(y * f, axis=1, keepdims=True)


def regret_variance(table: PayoffTable, x: np.ndarray) -> np.ndarray:
    """Each profile's share of the sampling variance of the deviation gains against mixture
    ``x`` (k,), shape (rows,), summing to 1: where more episodes would narrow its regret
    interval most.

    Each gain ``g_j = f_j(x) - x . f(x)`` is linear in the cells, ``dg_j / dU[r, i] =
    W[r, i] ([i = j] - x_i)`` (`equilibria.deviation_weights`), so its variance is
    ``sum_{r, i} (W[r, i] ([i = j] - x_i) stderr[r, i])^2``. The regret is the largest gain,
    and which one that is in a resample is not known beforehand, so the variances of all
    ``k`` gains are summed; row ``r``'s terms are its share (cells with unknown standard errors
    count 0). Needs the table's standard errors; all zeros when the variance is 0.
    """
    if table.stderr is None:
        raise ValueError("table: no stderr_<s> columns: the sampling variance is unknown")
    x = np.asarray(x, dtype=float)
    weights = deviation_weights(table, x)  # (rows, i)
    slopes = weights[:, None, :] * (np.eye(table.k) - x[None, :])[None]  # (rows, j, i)
    terms = np.sum((slopes * np.nan_to_num(table.stderr)[:, None, :]) ** 2, axis=(1, 2))
    total = terms.sum()
    return terms / total if total > 0 else terms
