"""Price impact of metaorders and the memory of order signs.

`impact_exponent` fits the power law move ~ Y size^delta across parents (their moves read
off simulated days by `envs.simulator.impact.metaorder_moves`; the square-root law of
empirical markets has delta about 0.5: Toth et al., "Anomalous price impact and the critical
nature of liquidity in financial markets", PRX 2011) and `sign_autocorrelation` measures how
long order signs stay correlated (Lillo and Farmer, "The long memory of the efficient
market", 2004).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["ImpactFit", "impact_exponent", "sign_autocorrelation"]


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


def sign_autocorrelation(signs: np.ndarray, lags: np.ndarray) -> np.ndarray:
    """The autocorrelation of a sequence of order signs (+1/-1, shape (n,)) at each of
    ``lags`` (orders, each in [1, n)): the sample correlation of s_i and s_{i+lag} about the
    sequence's mean, shape like ``lags``."""
    s = np.asarray(signs, dtype=float)
    s = s - s.mean()
    variance = float(np.dot(s, s)) / len(s)
    return np.array([np.dot(s[:-lag], s[lag:]) / (len(s) - lag) / variance for lag in lags])
