"""Experiment kind ``compare``: each agent trained alone, then tested, in one market.

One job per (agent, seed); all agents of a seed index meet the same market randomness.
Tables: ``summary.csv`` (test metrics per agent with intervals over seeds; with the task's
reference among the agents, each agent's probability of beating it, session by session).
Figures: learning curves and Sharpe bars.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from tradearena.envs.seats import SeatedMarket
from tradearena.envs.tasks import TASKS
from tradearena.evaluation.analysis.metrics import run_summary
from tradearena.evaluation.rollout import TEST, Job, episodes, market_spec, trained_alone
from tradearena.evaluation.store import EpisodeRecord

__all__ = ["check", "figures", "plan", "run", "tables"]

SECTIONS: tuple[str, ...] = ()
"""Optional config tables this kind reads (besides market, training, testing, agents)."""


def check(config: dict, where) -> None:
    """Nothing beyond the common checks: any agents compare."""


def plan(config: dict) -> list[Job]:
    """One job per (agent, seed), agents in file order."""
    labels = [spec["label"] for spec in config["agents"]]
    return [
        Job(f"{label}/seed={s}", s, (label,), config)
        for label in labels
        for s in range(config["seeds"])
    ]


def run(job: Job) -> list[EpisodeRecord]:
    """Train one agent in the clean market, then test it there."""
    config = job.config
    (label,) = job.labels
    index, spec = next((i, s) for i, s in enumerate(config["agents"]) if s["label"] == label)
    agent, records = trained_alone(config, job, spec, index)
    table = SeatedMarket(market_spec(config), [agent])
    return records + episodes(
        table, config, job, phase=TEST, condition=0, condition_name="clean", labels=[label]
    )


def tables(directory: Path, config: dict, records: pd.DataFrame) -> pd.DataFrame:
    """Write ``summary.csv``; return the summary."""
    market = market_spec(config)
    summary = run_summary(
        records,
        config["training"],
        parent_order=market.parent_order or 0,
        reference=reference_label(config, market.task),
    )
    summary.to_csv(directory / "summary.csv", index=False)
    return summary


def reference_label(config: dict, task: str | None) -> str | None:
    """The label of the agent that is ``task``'s reference policy (`envs.tasks.Task.reference`),
    None when the task has none or no agent of the experiment is it."""
    reference = TASKS[task].reference if task in TASKS else ""
    labels = [spec["label"] for spec in config["agents"] if spec["id"] == reference]
    return labels[0] if reference and labels else None


def figures(directory: Path, config: dict, records: pd.DataFrame) -> list[Path]:
    """Learning curves and one Sharpe bar chart per condition."""
    from tradearena.evaluation.analysis.plots import (  # matplotlib: loaded to draw only
        save_learning_curves,
        save_sharpe_bars,
    )

    return save_learning_curves(directory, records, config["training"]) + save_sharpe_bars(
        directory, run_summary(records, config["training"])
    )
