"""Run an experiment file: plan its jobs, execute them, store the results, write the tables.

A run directory holds ``config.toml`` (the file as run), ``results.sqlite`` (every finished
job), ``calibrations.json`` (the references' calibrations, computed once for the run),
``summary.csv`` (the metrics table), the figures, and ``agents/`` (every agent as its
testing began, with a card; `evaluation.trained`); everything after the jobs can be rebuilt
from it alone (`load_run`, `summarize`, ``tradearena plot``).
"""

from __future__ import annotations

import dataclasses
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from tradearena.agents import calibration
from tradearena.envs.errors import UserError
from tradearena.evaluation.config import config_locator, config_text, parse_config
from tradearena.evaluation.kinds import CALIBRATIONS, KINDS
from tradearena.evaluation.parallel import Executor
from tradearena.evaluation.rollout import Job
from tradearena.evaluation.rundir import load_run
from tradearena.evaluation.store import Store
from tradearena.evaluation.trained import discard_checkpoints, write_cards

__all__ = [
    "Execution",
    "RunOutcome",
    "plan",
    "run_config",
    "run_experiment",
    "write_figures",
    "write_tables",
]


def plan(config: dict) -> list[Job]:
    """The jobs of an experiment, in a fixed order (see its kind's ``plan``)."""
    return KINDS[config["kind"]].plan(config)


@dataclass(frozen=True)
class RunOutcome:
    """What a run did: its directory, the summary table, and the jobs that failed (job id ->
    error) or were skipped because a resumed run had them already."""

    directory: Path
    summary: pd.DataFrame
    failed: dict[str, str]
    skipped: int


class Execution:
    """Runs jobs of one run into its store: those not stored yet, stage by stage, each
    stored as it finishes (its checkpoints then dropped). A kind whose jobs depend on the
    results of earlier ones (``drive``, as PSRO's rounds do) calls it once per step."""

    def __init__(self, store: Store, executor: Executor, directory: Path) -> None:
        self.store, self.executor, self.directory = store, executor, directory
        self.where = str(directory.resolve())  # the same folder from a worker of another cwd

    def __call__(self, jobs: list[Job]) -> None:
        """Run the ``jobs`` not stored yet."""
        done = self.store.finished()
        pending = [
            dataclasses.replace(job, directory=self.where) for job in jobs if job.id not in done
        ]
        for stage in sorted({job.stage for job in pending}):
            for result in self.executor.run([job for job in pending if job.stage == stage]):
                self.store.record(result)
                if result.error is None:
                    discard_checkpoints(self.directory, result.job_id)

    def records(self, phase: str | None = None) -> pd.DataFrame:
        """The episode records stored so far (of one ``phase``, "train", "eval" or "test",
        when given)."""
        return self.store.episodes(phase=phase)


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
    checked before anything is written, with the calibrations the run directory keeps (see
    `run_config`); an existing run directory is only continued with ``resume``."""
    text, where = config_text(path, overrides), config_locator(path, overrides)
    named = parse_config(text, source=str(path), complete=False, where=where)
    directory = Path(out or named["output"].dir)
    calibration.reuse(directory / CALIBRATIONS)
    config = parse_config(text, source=str(path), base=Path(path).parent, where=where)
    return run_config(config, executor, directory, resume=resume, figures=figures)


def run_config(
    config: dict,
    executor: Executor,
    directory: Path,
    *,
    resume: bool = False,
    figures: bool | None = None,
) -> RunOutcome:
    """Run a checked experiment ``config`` into ``directory``: the calibrations its check
    computed kept there (`agents.calibration.keep`, reused by every job's process), its jobs
    stage by stage (every job stored as it finishes, its checkpoints then dropped), then the
    tables, the agents' cards and (``figures``, default the config's ``output.figures``) the
    figures, which a resumed run whose records did not change keeps as they are when it has
    any (`write_figures` redraws them). A kind with a ``drive(config, execute, records)``
    function plans its own jobs step by step through the `Execution` it is given (and its
    ``records``); the others' jobs are their ``plan``'s."""
    database = directory / "results.sqlite"
    if database.exists() and not resume:
        raise UserError(
            f"{directory} already holds a run: pass --resume to continue it, or --out a new "
            "directory"
        )
    directory.mkdir(parents=True, exist_ok=True)
    with Store(database) as store:
        store.start_run(config["source_text"], resume=resume)
        (directory / "config.toml").write_text(config["source_text"])
        calibration.keep(directory / CALIBRATIONS)
        done = store.finished()
        execute = Execution(store, executor, directory)
        kind = KINDS[config["kind"]]
        if hasattr(kind, "drive"):
            kind.drive(config, execute, execute.records)
        else:
            execute(plan(config))
        failed, new_records = store.failed(), store.finished() != done
    stage = Stages(getattr(executor, "progress", False) and new_records)
    stage("reading the records")
    as_run, records = load_run(directory)
    stage("the tables" + (" (payoffs, equilibria)" if config["kind"] == "tournament" else ""))
    summary = kind.tables(directory, as_run, records)
    stage("the agents' cards")
    tables = kind.agent_tables(as_run) if hasattr(kind, "agent_tables") else None
    write_cards(directory, as_run, records, tables)
    if (config["output"].figures if figures is None else figures) and (
        new_records or not any(directory.glob("*.png"))
    ):
        stage("the figures")
        kind.figures(directory, as_run, records)
    stage.end()
    return RunOutcome(directory, summary, failed, len(done))


class Stages:
    """One line per stage of the analysis after the jobs, on stderr beside the progress bar
    (when ``shown``: the executor shows progress and the run has new records to analyse):
    the stage that starts, then the seconds the whole analysis took."""

    def __init__(self, shown: bool) -> None:
        self.shown, self.start = shown, time.perf_counter()

    def __call__(self, what: str) -> None:
        if self.shown:
            print(f"analysis: {what} ...", file=sys.stderr, flush=True)

    def end(self) -> None:
        if self.shown:
            seconds = time.perf_counter() - self.start
            print(f"analysis: done in {seconds:.0f} s", file=sys.stderr, flush=True)


def write_tables(directory: str | Path) -> pd.DataFrame:
    """Write the run's tables (see its kind's ``tables``: summary.csv, and payoff tables for
    a tournament); return the summary."""
    directory = Path(directory)
    config, records = load_run(directory)
    return KINDS[config["kind"]].tables(directory, config, records)


def write_figures(directory: str | Path) -> list[Path]:
    """Draw every figure the run supports into its directory (see its kind's ``figures``);
    return the files written."""
    directory = Path(directory)
    config, records = load_run(directory)
    return KINDS[config["kind"]].figures(directory, config, records)
