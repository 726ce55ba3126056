"""The figure of the response to a market order (`response`): each measure at each horizon,
by size bucket, the tape and the markets side by side. Nothing goes through pyplot's global
state."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from tradearena.evaluation.analysis.plots import axes_or_new, save_figure

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["response_points", "write_response_figure"]


def response_points(table: pd.DataFrame, what: str, horizon: float, ax: Axes | None = None) -> Axes:
    """One measure of the response to a market order (``what``: "move" or "refill") at one
    ``horizon`` (seconds), by size bucket (x), each source's value with its 95% interval
    (``table``: the rows of `response.response_table`), the sources side by side within a
    bucket, the first (the tape) in black."""
    ax = axes_or_new(ax)
    rows = table[(table.what == what) & (table.horizon == horizon)]
    sources = list(dict.fromkeys(rows.source))
    buckets = list(dict.fromkeys(rows.sizes))
    width = 0.7 / max(len(sources), 1)
    for i, source in enumerate(sources):
        part = rows[rows.source == source].set_index("sizes").loc[buckets]
        x = np.arange(len(buckets)) + (i - (len(sources) - 1) / 2) * width
        ax.errorbar(
            x,
            part.value,
            yerr=[part.value - part.low, part.high - part.value],
            fmt="o",
            markersize=4,
            capsize=2,
            color="k" if i == 0 else f"C{i - 1}",
            label=source,
        )
    ax.set_xticks(np.arange(len(buckets)), [f"{b} lots" for b in buckets], fontsize=7)
    if what == "move":
        ax.axhline(0.0, color="k", linewidth=0.6)
        ax.set_ylabel(f"mid's move, ticks, {horizon:g} s after", fontsize=8)
    else:
        ax.set_ylim(-0.02, 1.02)
        ax.set_ylabel(f"emptied price quoted again in {horizon:g} s", fontsize=8)
    return ax


def write_response_figure(table: pd.DataFrame, title: str, out: Path) -> Path:
    """``out``/response.png: each measure (rows) at each horizon (columns) of ``table``
    (`response.response_table`), by size bucket, tape and markets side by side."""
    horizons = list(dict.fromkeys(table.horizon))
    figure = Figure(figsize=(3.2 * len(horizons), 6.0), layout="constrained")
    axes = figure.subplots(2, len(horizons), squeeze=False)
    for row, what in enumerate(("move", "refill")):
        for col, horizon in enumerate(horizons):
            response_points(table, what, horizon, axes[row, col])
    handles, labels = axes[0, 0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside lower center", ncols=len(labels), fontsize=8)
    figure.suptitle(f"The response to a market order: {title}", fontsize=10)
    return save_figure(figure, out / "response.png", dpi=100)
