"""Figures of the realism scorecard. Each function draws one panel on the ``ax`` it is given
(or on a new bare `Figure`), one line per source, and returns it; nothing goes through
pyplot's global state."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator, MultipleLocator
from scipy import stats

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "acf_lines",
    "feature_histograms",
    "profile_lines",
    "return_tails",
    "tail_lines",
    "transfer_scatter",
]


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
    ax.legend(fontsize="small", loc="upper right")  # the tails fall away from that corner
    return ax


def acf_lines(acfs: Mapping[str, np.ndarray], title: str, ax: Axes | None = None) -> Axes:
    """Each source's autocorrelations at lags 1, 2, ... (shape (lags,)), with 0 marked, at
    whole-minute ticks; the legend under the axes, clear of every line."""
    ax = _axes(ax)
    for label, values in acfs.items():
        ax.plot(np.arange(1, len(values) + 1), values, marker="o", markersize=3, label=label)
    ax.axhline(0.0, color="k", linewidth=0.8)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("lag, minutes")
    ax.set_ylabel("autocorrelation")
    ax.set_title(title)
    _legend_below(ax)
    return ax


def profile_lines(
    profiles: Mapping[str, np.ndarray],
    ylabel: str,
    title: str,
    ax: Axes | None = None,
    *,
    opens: Mapping[str, float] | None = None,
) -> Axes:
    """Each source's value per 30-min bucket (shape (buckets,)) at the time of day its bucket
    starts, the first at the source's ``opens`` (seconds after midnight: the session's open,
    or where the days were cut, ``--from``), or in minutes after the open without them; a
    source with no whole bucket (a day under 30 minutes) is named in the legend as such. The
    legend stands under the axes, clear of every line."""
    ax = _axes(ax)
    for label, values in profiles.items():
        start = 0.0 if opens is None else opens[label] / 60
        if not np.isfinite(values).any():
            label = f"{label} (no whole 30-min bucket)"
        x = start + 30 * np.arange(len(values))
        ax.plot(x, values, marker="o", markersize=3, label=label)
    if opens is None:
        ax.set_xlabel("minutes after the open (bucket start)")
    else:
        ax.xaxis.set_major_formatter(FuncFormatter(_clock))
        ax.xaxis.set_major_locator(MultipleLocator(60))  # on the hours
        ax.set_xlabel("time of day (bucket start)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    _legend_below(ax)
    return ax


def _legend_below(ax: Axes) -> None:
    """The legend under the axes' label, two columns: clear of the lines, however they run."""
    ax.legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.16), ncols=2)


def _clock(minutes: float, _position: object = None) -> str:
    """Minutes after midnight as HH:MM."""
    hours, rest = divmod(int(round(minutes)), 60)
    return f"{hours:02d}:{rest:02d}"


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


def feature_histograms(
    values: Mapping[str, np.ndarray],
    feature: str,
    aucs: Mapping[str, float],
    ax: Axes | None = None,
    legend: bool = True,
) -> Axes:
    """Density histograms of one window feature, one outline per source (the first is the
    real day, filled), on shared bins over the pooled central 98%; each simulated source's
    single-feature AUC (``aucs``, by label) in the title."""
    ax = _axes(ax)
    finite = {label: v[np.isfinite(v)] for label, v in values.items()}
    pooled = np.concatenate([v for v in finite.values() if len(v)] or [np.zeros(1)])
    low, high = np.percentile(pooled, [1, 99])
    if not high > low:
        low, high = low - 0.5, high + 0.5
    bins = np.linspace(low, high, 31)
    for i, (label, v) in enumerate(finite.items()):
        ax.hist(
            np.clip(v, low, high),
            bins=bins,
            density=True,
            histtype="stepfilled" if i == 0 else "step",
            alpha=0.35 if i == 0 else 1.0,
            linewidth=1.5,
            label=label,
        )
    ax.set_xlabel(feature)
    ax.set_ylabel("density")
    ax.set_title("AUC " + ", ".join(f"{auc:.2f}" for auc in aucs.values()), fontsize="small")
    if legend:
        ax.legend(fontsize="x-small", loc="best")
    return ax


def transfer_scatter(
    table: pd.DataFrame,
    verdicts: Mapping[str, Mapping[str, object]],
    market: str,
    tape: str,
    ax: Axes | None = None,
) -> Axes:
    """Each policy's mean PnL a session in the market (x; filled markers) and in its
    baseline (the replay of the hours it learned from; open markers) against on the tape
    (y), with their 95% intervals (``table``: the rows of
    `evaluation.market.transfer.COLUMNS`); ``verdicts``: "market" and "baseline" -> queue
    model -> `Predictivity`. Queue models whose points agree are drawn once, the legend
    naming them with their rank correlation. Each policy is numbered beside its points (a
    number placed where it covers no other) and the numbers keyed beside the axes."""
    from tradearena.evaluation.analysis.transfer import agreeing

    ax = _axes(ax)
    policies = list(table.policy.unique())
    rows = {side: frame.set_index("policy").loc[policies] for side, frame in table.groupby("side")}
    colours = {"market": "tab:blue", "baseline": "tab:orange"}
    numbered = []
    for who, judged in verdicts.items():
        x = {q: rows["market" if who == "market" else f"{who}/{q}"] for q in judged}
        y = {q: rows[f"tape/{q}"] for q in judged}
        points = {q: np.r_[x[q].mean_pnl, y[q].mean_pnl] for q in judged}
        for i, (first, queues) in enumerate(agreeing(points).items()):
            sim, real = x[first], y[first]
            ax.errorbar(
                sim.mean_pnl,
                real.mean_pnl,
                xerr=[sim.mean_pnl - sim.low, sim.high - sim.mean_pnl],
                yerr=[real.mean_pnl - real.low, real.high - real.mean_pnl],
                fmt="osD^v"[i % 5],
                color=colours.get(who, "k"),
                markerfacecolor="none" if who == "baseline" else colours.get(who, "k"),
                markersize=5,
                elinewidth=0.6,
                capsize=0,
                alpha=0.8,
                label=f"{who}, {', '.join(queues)} queue{'s' if len(queues) > 1 else ''}: "
                f"Spearman {judged[first].rho:.2f}",
            )
            if i == 0:
                numbered += list(zip(sim.mean_pnl, real.mean_pnl, range(1, len(policies) + 1)))
    ax.axhline(0.0, color="k", linewidth=0.6)
    ax.axvline(0.0, color="k", linewidth=0.6)
    ax.set_xlabel("mean PnL a session in the market (or its baseline), $")
    ax.set_ylabel("mean PnL a session on the real day, $")
    ax.set_title(f"{market} against {tape}", fontsize="small")
    ax.legend(fontsize="x-small", loc="best")
    key = "\n".join(f"{i:>2}  {name}" for i, name in enumerate(policies, 1))
    ax.text(
        1.02, 1.0, key, transform=ax.transAxes, va="top", fontsize=6, family="monospace", gid="key"
    )
    _number(ax, numbered)
    return ax


def _number(ax: Axes, points: list[tuple[float, float, int]], size: float = 6.0) -> None:
    """Each (x, y, number) of ``points`` written beside its point (the numbers of points
    within 4 points of one another as one label, "1, 4, 10-12"), at the first of eight
    offsets whose box (estimated from the font ``size`` and the axes' size, in points) covers
    no label written before, else at the one that covers fewest."""
    ax.autoscale_view()
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    width, height = ax.figure.get_size_inches() * 72 * np.array([0.7, 0.8])
    clusters: list[tuple[np.ndarray, float, float, list[int]]] = []
    for x, y, number in points:
        at = np.array([(x - x0) / (x1 - x0) * width, (y - y0) / (y1 - y0) * height])
        near = next((c for c in clusters if np.abs(c[0] - at).max() < 4.0), None)
        if near is None:
            clusters.append((at, x, y, [number]))
        elif number not in near[3]:
            near[3].append(number)
    offsets = [(3, 2), (3, -8), (-3, 2), (-3, -8), (5, -3), (-5, -3), (-2, 5), (-2, -11)]
    placed: list[np.ndarray] = []
    for at, x, y, numbers in clusters:
        text = _ranges(sorted(numbers))
        extent = np.array([0.6 * size * len(text), size])
        boxes = [_box(at, np.array(o, float), extent) for o in offsets]
        covers = [sum(_overlap(b, c) for c in placed) for b in boxes]
        best = int(np.argmin(covers))  # the first of the fewest
        placed.append(boxes[best])
        dx, dy = offsets[best]
        ax.annotate(
            text,
            (x, y),
            xytext=(dx, dy),
            textcoords="offset points",
            ha="left" if dx >= 0 else "right",
            fontsize=size,
            gid="policy",
        )


def _ranges(numbers: list[int]) -> str:
    """Sorted ``numbers`` as text, runs of three or more as ranges: "1, 4, 10-12"."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ", ".join(f"{r[0]}-{r[-1]}" if len(r) > 2 else ", ".join(map(str, r)) for r in runs)


def _box(at: np.ndarray, offset: np.ndarray, extent: np.ndarray) -> np.ndarray:
    """(left, bottom, right, top) of a text of ``extent`` (width, height) written at
    ``offset`` from ``at``, left-aligned for a rightward offset, right-aligned otherwise."""
    corner = at + offset - np.array([extent[0] if offset[0] < 0 else 0.0, 0.0])
    return np.r_[corner, corner + extent]


def _overlap(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether the boxes ``a`` and ``b`` (left, bottom, right, top) overlap."""
    return bool(a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3])
