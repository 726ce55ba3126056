"""The summary that the experiment kinds share: ``summary.csv`` (test metrics per agent and
condition with intervals over seeds; with the task's reference among the agents, each agent's
probability of beating it, session by session), the learning curves and the Sharpe bars."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from tradearena.envs.tasks import TASKS
from tradearena.evaluation.analysis.summary import run_summary

if TYPE_CHECKING:
    from tradearena.evaluation.experiment.schema import Config

__all__ = ["reference_label", "summary_figures", "summary_tables"]


def summary_tables(directory: Path, config: Config, records: pd.DataFrame) -> pd.DataFrame:
    """Write ``summary.csv``; return the summary."""
    market = config.market
    summary = run_summary(
        records,
        config.training,
        parent_order=market.parent_order or 0,
        reference=reference_label(config, market.task),
    )
    summary.to_csv(directory / "summary.csv", index=False)
    return summary


def reference_label(config: Config, task: str | None) -> str | None:
    """The label of the agent that is ``task``'s reference policy (`envs.tasks.Task.reference`),
    None when the task has none or no agent of the experiment is it."""
    reference = TASKS[task].reference if task in TASKS else ""
    labels = [spec.label for spec in config.agents if spec.id == reference]
    return labels[0] if reference and labels else None


def summary_figures(directory: Path, config: Config, records: pd.DataFrame) -> list[Path]:
    """Learning curves and one Sharpe bar chart per condition."""
    from tradearena.evaluation.analysis.plots import (  # matplotlib: loaded to draw only
        save_learning_curves,
        save_sharpe_bars,
    )

    return save_learning_curves(directory, records, config.training) + save_sharpe_bars(
        directory, run_summary(records, config.training)
    )
