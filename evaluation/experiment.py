"""Run an experiment file: plan its jobs, execute them, store the results, write the tables.

A run directory holds ``config.toml`` (the file as run), ``results.sqlite`` (every finished
job), ``summary.csv`` (the metrics table) and the figures; everything after the jobs can be
rebuilt from it alone (`load_run`, `summarize`, ``tradearena plot``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from evaluation.config import load_config, parse_config
from evaluation.metrics import DegenerateMetricWarning, summary_table
from evaluation.parallel import Executor
from evaluation.rollout import Job
from evaluation.store import Store

__all__ = [
    "RunOutcome",
    "load_run",
    "plan",
    "run_experiment",
    "summarize",
    "write_tables",
]


def plan(config: dict) -> list[Job]:
    """The jobs of an experiment, in a fixed order.

    compare: one job per (agent, seed), each training and testing one agent; robustness: one
    job per seed, training every agent (the adversary comes from one of them) and testing each
    under every condition; tournament: one job per (profile, repetition).
    """
    seeds = range(config["seeds"])
    labels = [spec["label"] for spec in config["agents"]]
    if config["kind"] == "compare":
        return [Job(f"{label}/seed={s}", s, (label,), config) for label in labels for s in seeds]
    if config["kind"] == "robustness":
        return [Job(f"all/seed={s}", s, tuple(labels), config) for s in seeds]
    if config["kind"] == "tournament":
        from evaluation.tournament import plan_tournament

        return plan_tournament(config)
    raise ValueError(f"experiment kind {config['kind']!r} has no planner")


@dataclass(frozen=True)
class RunOutcome:
    """What a run did: its directory, the summary table, and the jobs that failed (job id ->
    error) or were skipped because a resumed run had them already."""

    directory: Path
    summary: pd.DataFrame
    failed: dict[str, str]
    skipped: int


def run_experiment(
    path: str | Path,
    executor: Executor,
    *,
    out: str | Path | None = None,
    resume: bool = False,
    figures: bool | None = None,
    overrides: dict | None = None,
) -> RunOutcome:
    """Run the experiment file at ``path`` with ``executor`` into ``out`` (default: the
    file's ``output.dir``), with ``overrides`` applied (see `load_config`). The config is
    checked before anything is written; an existing run directory is only continued with
    ``resume``."""
    config = load_config(path, overrides)
    directory = Path(out or config["output"]["dir"])
    database = directory / "results.sqlite"
    if database.exists() and not resume:
        raise ValueError(
            f"{directory} already holds a run: pass --resume to continue it, or --out a new "
            "directory"
        )
    directory.mkdir(parents=True, exist_ok=True)
    with Store(database) as store:
        store.start_run(config["source_text"], resume=resume)
        (directory / "config.toml").write_text(config["source_text"])
        done = store.finished()
        jobs = [job for job in plan(config) if job.id not in done]
        for result in executor.run(jobs):
            store.record(result)
        failed = store.failed()
    summary = write_tables(directory)
    if config["output"]["figures"] if figures is None else figures:
        from evaluation.plots import save_run_figures

        save_run_figures(directory)
    return RunOutcome(directory, summary, failed, len(done))


def load_run(directory: str | Path) -> tuple[dict, pd.DataFrame]:
    """(config as run, defaults filled in; all episode records) of a run directory; needs
    nothing but the directory (not the data files or custom agents the run used)."""
    directory = Path(directory)
    text = (directory / "config.toml").read_text()
    config = parse_config(text, source=str(directory / "config.toml"), complete=False)
    with Store(directory / "results.sqlite") as store:
        return config, store.episodes()


def write_tables(directory: str | Path) -> pd.DataFrame:
    """Write the run's tables: summary.csv and, for a tournament, payoffs.csv (the config's
    payoff) with payoffs_sharpe.csv and payoffs_pnl.csv; return the summary."""
    directory = Path(directory)
    config, records = load_run(directory)
    summary = summarize(records)
    summary.to_csv(directory / "summary.csv", index=False)
    if config["kind"] == "tournament" and not records.empty:
        from evaluation.tournament import payoff_table

        payoff_table(records, config).to_csv(directory / "payoffs.csv")
        for payoff in ("sharpe", "pnl"):
            payoff_table(records, config, payoff).to_csv(directory / f"payoffs_{payoff}.csv")
    return summary


def summarize(records: pd.DataFrame) -> pd.DataFrame:
    """The summary table of a run's records: test-episode metrics per agent and condition
    (mean over seeds with bootstrap intervals; see `evaluation.metrics.summary_table`)."""
    test = records[records["phase"] == "test"]
    if test.empty:
        return pd.DataFrame()
    with warnings.catch_warnings():  # NaN in the table says it: e.g. an agent that never trades
        warnings.simplefilter("ignore", DegenerateMetricWarning)
        return summary_table(test, by=["condition", "agent"])
