"""Figures. Each function draws on the ``ax`` it is given (or on a new bare `Figure`) and
returns it; nothing goes through pyplot's global state, so they work in notebooks, scripts and
headless tests alike."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

__all__ = ["learning_curves", "save_run_figures", "sharpe_bars"]


def _axes(ax: Axes | None, size: tuple[float, float] = (6.4, 4.0)) -> Axes:
    if ax is not None:
        return ax
    return Figure(figsize=size, layout="constrained").add_subplot()


def sharpe_bars(
    summary: pd.DataFrame,
    ax: Axes | None = None,
    *,
    condition: str | None = None,
    metric: str = "sharpe",
) -> Axes:
    """Bars of ``metric`` per agent with their confidence intervals (``metric_low`` /
    ``metric_high`` columns of `evaluation.metrics.summary_table`), for one condition."""
    ax = _axes(ax)
    rows = summary if condition is None else summary[summary["condition"] == condition]
    rows = rows.sort_values(metric, ascending=False)
    values = rows[metric].to_numpy(float)
    low = values - rows[f"{metric}_low"].to_numpy(float)
    high = rows[f"{metric}_high"].to_numpy(float) - values
    x = np.arange(len(rows))
    ax.bar(x, values, yerr=np.vstack([low, high]), capsize=4, color="tab:blue", alpha=0.8)
    ax.set_xticks(x, rows["agent"].tolist(), rotation=20)
    ax.axhline(0.0, color="black", linewidth=0.8)
    ax.set_ylabel(f"{metric.replace('_', ' ')} of test PnL per episode")
    title = "Sharpe ratio by agent" if metric == "sharpe" else metric
    ax.set_title(title if condition in (None, "clean") else f"{title}: {condition}")
    return ax


def learning_curves(
    records: pd.DataFrame, ax: Axes | None = None, *, value: str = "pnl", window: int = 5
) -> Axes:
    """Training ``value`` (dollars) per episode for each agent: the mean over seeds, smoothed
    by a moving average of ``window`` episodes, with a band of one standard error."""
    ax = _axes(ax)
    train = records[records["phase"] == "train"]
    for agent, rows in train.groupby("agent", sort=True):
        by_episode = rows.groupby("episode")[value]
        mean = by_episode.mean().rolling(window, min_periods=1).mean()
        sem = by_episode.sem().fillna(0.0).rolling(window, min_periods=1).mean()
        ax.plot(mean.index, mean.to_numpy(), label=agent)
        ax.fill_between(mean.index, mean - sem, mean + sem, alpha=0.2)
    ax.set_xlabel("training episode")
    ax.set_ylabel(f"{value} per episode (dollars), {window}-episode average")
    ax.set_title("Learning curves")
    ax.legend(fontsize="small")
    return ax


def save_run_figures(directory: str | Path) -> list[Path]:
    """Draw every figure a run directory supports into it; return the files written."""
    from evaluation.experiment import load_run, tables

    directory = Path(directory)
    _, records = load_run(directory)
    summary = tables(directory)
    written = []
    if not records[records["phase"] == "train"].empty:
        written.append(_save(learning_curves(records), directory / "learning_curves.png"))
    for condition in summary["condition"].unique() if not summary.empty else []:
        name = "sharpe.png" if condition == "clean" else f"sharpe_{condition}.png"
        written.append(_save(sharpe_bars(summary, condition=condition), directory / name))
    return written


def _save(ax: Axes, path: Path) -> Path:
    ax.figure.savefig(path, dpi=120)
    return path
