"""Figures of the impact scorecard. Each function draws one panel on the ``ax`` it is given
(or on a new bare `Figure`), one line per market, and returns it; ``curves`` maps a market's
label to what `evaluation.market.impact` measured: ``share`` (Q / V_D) and ``impact``
(I(T) / sigma_D) of each metaorder, its mean ``relaxation`` curve and its single orders'
``response`` by lag (ticks)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from matplotlib.axes import Axes

from tradearena.evaluation.analysis.plots import axes_or_new

__all__ = ["relaxation_curves", "response_by_lag", "square_root_points"]

Curves = Mapping[str, Mapping[str, np.ndarray]]


def square_root_points(curves: Curves, ax: Axes | None = None, bins: int = 8) -> Axes:
    """Each market's metaorders' mean impact at their end over the day's volatility against
    their size over the day's volume, in log-spaced bins of size (bins with a positive mean),
    on log-log axes beside the square-root law with prefactor 0.5 (dashed)."""
    ax = axes_or_new(ax)
    low, high = np.inf, 0.0
    for label, c in curves.items():
        share, impact = np.asarray(c["share"]), np.asarray(c["impact"])
        if not len(share):
            continue
        edges = np.geomspace(share.min(), share.max() * (1 + 1e-9), bins + 1)
        which = np.searchsorted(edges, share, side="right") - 1
        x = np.array([share[which == b].mean() for b in range(bins) if (which == b).any()])
        y = np.array([impact[which == b].mean() for b in range(bins) if (which == b).any()])
        shown = y > 0
        ax.plot(x[shown], y[shown], "o-", label=label, markersize=4)
        low, high = min(low, share.min()), max(high, share.max())
    if high > 0:
        grid = np.geomspace(low, high, 50)
        ax.plot(grid, 0.5 * np.sqrt(grid), "k--", label="square root, Y = 0.5")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("Q / daily volume")
    ax.set_ylabel("I(T) / daily volatility")
    ax.set_title("Impact at a metaorder's end")
    return ax


def relaxation_curves(curves: Curves, marks: np.ndarray, ax: Axes | None = None) -> Axes:
    """Each market's mean impact over its metaorders at ``marks`` (times in durations T from
    their start) over the mean at their end (T), with the empirical 2/3 left at 3T (dotted)."""
    ax = axes_or_new(ax)
    for label, c in curves.items():
        ax.plot(np.r_[0.0, marks], np.r_[0.0, c["relaxation"]], "o-", label=label, markersize=3)
    ax.axhline(2 / 3, color="k", linestyle=":", linewidth=1, label="2/3 of the peak")
    ax.axvline(1.0, color="grey", linewidth=0.8)
    ax.set_xlabel("time since the metaorder's start / T")
    ax.set_ylabel("impact / impact at T")
    ax.set_title("Relaxation after the metaorder")
    return ax


def response_by_lag(curves: Curves, propagator: np.ndarray, ax: Axes | None = None) -> Axes:
    """Each market's mean move after a seat's single market order, in its direction, 1 to n
    market orders later (ticks), beside the tape's bare propagator (black)."""
    ax = axes_or_new(ax)
    lags = np.arange(1, len(propagator) + 1)
    for label, c in curves.items():
        ax.plot(lags, c["response"], "o-", label=label, markersize=3)
    ax.plot(lags, propagator, "k-", linewidth=2, label="the tape's bare propagator")
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.set_xlabel("market orders later")
    ax.set_ylabel("mid's move, ticks")
    ax.set_title("Response to a single order")
    return ax
