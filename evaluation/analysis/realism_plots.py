"""Figures of the realism scorecard. Each function draws one panel on the ``ax`` it is given
(or on a new bare `Figure`), one line per source, and returns it; nothing goes through
pyplot's global state."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from scipy import stats

__all__ = ["acf_lines", "profile_lines", "return_tails", "tail_lines"]


def _survival(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the distinct values of ``x``, the share of ``x`` at or above each): the empirical
    survival function at its steps only, however large the sample."""
    values, counts = np.unique(x, return_counts=True)
    return values, 1.0 - (np.cumsum(counts) - counts) / len(x)


def _axes(ax: Axes | None) -> Axes:
    if ax is not None:
        return ax
    return Figure(figsize=(6.4, 4.0), layout="constrained").add_subplot()


def return_tails(returns: Mapping[str, np.ndarray], ax: Axes | None = None) -> Axes:
    """P(|r - mean| / sd > x) of each source's returns (any unit: each is standardised by its
    own sample sd) against a Gaussian's, log scale: heavy tails lie above the Gaussian."""
    ax = _axes(ax)
    top, floor = 1.0, 1.0
    for label, r in returns.items():
        if len(r) < 2 or r.std(ddof=1) == 0:
            continue
        x, survival = _survival(np.abs(r - r.mean()) / r.std(ddof=1))
        ax.step(x, survival, where="post", label=label)
        top, floor = max(top, x[-1]), min(floor, survival[survival > 0].min())
    grid = np.linspace(0.0, top, 200)
    ax.plot(grid, 2 * stats.norm.sf(grid), "k--", label="Gaussian")
    ax.set_yscale("log")
    ax.set_ylim(floor / 3, 1.5)  # the samples' range: the Gaussian's far tail is not drawn
    ax.set_xlabel("|return - mean| / sd")
    ax.set_ylabel("share at or beyond")
    ax.set_title("Tails of 1-min mid returns")
    ax.legend(fontsize="small", loc="lower left")
    return ax


def acf_lines(acfs: Mapping[str, np.ndarray], title: str, ax: Axes | None = None) -> Axes:
    """Each source's autocorrelations at lags 1, 2, ... (shape (lags,)), with 0 marked."""
    ax = _axes(ax)
    for label, values in acfs.items():
        ax.plot(np.arange(1, len(values) + 1), values, marker="o", markersize=3, label=label)
    ax.axhline(0.0, color="k", linewidth=0.8)
    ax.set_xlabel("lag, minutes")
    ax.set_ylabel("autocorrelation")
    ax.set_title(title)
    ax.legend(fontsize="small", loc="upper right")
    return ax


def profile_lines(
    profiles: Mapping[str, np.ndarray], ylabel: str, title: str, ax: Axes | None = None
) -> Axes:
    """Each source's value per 30-min bucket from the open (shape (buckets,))."""
    ax = _axes(ax)
    for label, values in profiles.items():
        ax.plot(30 * np.arange(len(values)), values, marker="o", markersize=3, label=label)
    ax.set_xlabel("minutes after the open (bucket start)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize="small", loc="best")  # where it covers the fewest points
    return ax


def tail_lines(
    values: Mapping[str, np.ndarray], xlabel: str, title: str, ax: Axes | None = None
) -> Axes:
    """Each source's empirical survival function P(X > x) of a sample (spreads, sizes), log
    scales."""
    ax = _axes(ax)
    for label, x in values.items():
        if np.any(x > 0):
            ax.step(*_survival(x[x > 0]), where="post", label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("share at or above")
    ax.set_title(title)
    ax.legend(fontsize="small", loc="lower left")
    return ax
