"""Run an experiment file: plan its jobs, execute them, store the results, write the tables.

A run directory holds ``config.toml`` (the file as run), ``results.sqlite`` (every finished job),
``calibrations.json`` (the references' calibrations, computed once for the run), ``summary.csv``
(the metrics table), the figures (``figures.json`` names those last drawn), ``agents/`` (every
agent as its testing began, with a card; `evaluation.experiment.trained`) and ``models/`` (its
own copy of every file a trader names, e.g. a learned flow's model, which its ``config.toml``
names: `evaluation.experiment.markets.trader_files`); everything after the jobs can be rebuilt
from it alone, from any folder (`load_run`, ``tradearena plot``, ``tradearena evaluate``).
``inputs.json`` records the size and SHA-256 of every data file the config names (its tape, the
saved agents it loads, the traders' files), so that ``--resume`` goes on only with the data the
run started with; ``.lock`` is held (and names the process) while a run writes the directory,
so that two never write it at once.
"""

from __future__ import annotations

import dataclasses
import fcntl
import hashlib
import json
import os
import shutil
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from tradearena.agents import calibration
from tradearena.agents.saving import ARRAYS, HEADER
from tradearena.envs.errors import UserError, replacing, together, writing
from tradearena.evaluation.experiment.config import load_config
from tradearena.evaluation.experiment.kinds import CALIBRATIONS, KINDS, Driven, SavesStrategies
from tradearena.evaluation.experiment.markets import trader_files
from tradearena.evaluation.experiment.parallel import Executor
from tradearena.evaluation.experiment.rollout import Job
from tradearena.evaluation.experiment.rundir import load_run
from tradearena.evaluation.experiment.schema import Config, Output
from tradearena.evaluation.experiment.store import Store
from tradearena.evaluation.experiment.trained import discard_checkpoints, write_cards

__all__ = [
    "FIGURES",
    "INPUTS",
    "LOCK",
    "Execution",
    "Interrupted",
    "RunOutcome",
    "check_inputs",
    "locked",
    "plan",
    "run_config",
    "run_experiment",
    "write_run_figures",
    "write_tables",
]


INPUTS, LOCK, FIGURES = "inputs.json", ".lock", "figures.json"
"""The run directory's record of its data files, its lock file, and the names of the figures
it last drew."""


@contextmanager
def locked(directory: Path) -> Iterator[None]:
    """Hold the run directory's lock while the enclosed code writes it: an exclusive
    ``flock`` on its `LOCK` file, which names the holding process; the system releases it
    when that process ends, however it ends (``kill -9`` included). `UserError` naming the
    process when another holds it."""
    with open(directory / LOCK, "a+") as file:
        try:
            fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            file.seek(0)
            holder = file.read().strip() or "unknown"
            raise UserError(
                f"{directory} is being written by another run (pid {holder}): wait for it to "
                "finish, or give another directory with --out"
            ) from None
        file.seek(0)
        file.truncate()
        file.write(f"{os.getpid()}\n")
        file.flush()
        try:
            yield
        finally:
            file.truncate(0)


def data_files(config: Config) -> dict[str, Path]:
    """The data files a checked config names, by the name `INPUTS` records them by: its tape
    (a file, or every file of a converted or recorded directory) and the saved agents its
    agent tables load ``from`` (their ``agent.json`` and ``arrays.npz``, not their cards), by
    their paths; the files its traders name, with the files they name, by the names of the
    run directory's copies (`keep_files`), so that the run resumes from them too."""
    files = []
    if config.market.replays_file:
        tape = Path(config.market.tape)
        files += sorted(p for p in tape.rglob("*") if p.is_file()) if tape.is_dir() else [tape]
    for spec in config.agents:
        if spec.saved:
            saved = (p for p in Path(spec.saved).rglob("*") if p.name in (HEADER, ARRAYS))
            files += sorted(saved)
    named = {str(path): path for path in files}
    for folder, parts in trader_files(config.market):
        named |= {f"{folder}/{part.name}": part for part in parts}
    return named


def _fingerprint(path: Path) -> dict[str, int | str]:
    """A file's size (bytes) and SHA-256 (hex)."""
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(2**20), b""):
            digest.update(block)
    return {"bytes": path.stat().st_size, "sha256": digest.hexdigest()}


def keep_files(config: Config, directory: Path) -> None:
    """Copy every file the traders of ``config`` name, with the files it names, into the
    run directory's folder of it (`evaluation.experiment.markets.trader_files`), where the
    config's text as run names it: the run directory reads its market again from itself
    alone. A file that is its own copy already (a run of a run directory's own config.toml
    into that directory) stays as it is."""
    for folder, parts in trader_files(config.market):
        target = directory / folder
        target.mkdir(parents=True, exist_ok=True)
        for part in parts:
            copy = target / part.name
            if not (copy.exists() and copy.samefile(part)):
                shutil.copy2(part, copy)


def check_inputs(config: Config, directory: Path, *, resume: bool) -> None:
    """Record the size and hash of every data file of ``config`` (`data_files`) in the run
    directory's `INPUTS`; a resumed run that recorded them must find them unchanged (a
    `UserError` names the first file that changed, appeared or went missing)."""
    record = directory / INPUTS
    now = {name: _fingerprint(path) for name, path in data_files(config).items() if path.is_file()}
    if resume and record.exists():
        then = json.loads(record.read_text())
        for name in sorted(then.keys() | now.keys()):
            if then.get(name) != now.get(name):
                change = "is missing" if name not in now else "changed"
                change = "is new" if name not in then else change
                raise UserError(
                    f"{name} {change} since the run in {directory} started ({INPUTS} records "
                    "its data files): restore it, or start a new run directory"
                )
        return
    record.write_text(json.dumps(now, indent=1) + "\n")


class Interrupted(KeyboardInterrupt):
    """A run interrupted (Ctrl-C) while its jobs ran; the message says what is stored."""


def plan(config: Config) -> list[Job]:
    """The jobs of an experiment, in a fixed order (see its kind's ``plan``)."""
    return KINDS[config.kind].plan(config)


@dataclass(frozen=True)
class RunOutcome:
    """What a run did: its directory, its config as run, the summary table, and the jobs
    that failed (job id -> error) or were skipped because a resumed run had them already."""

    directory: Path
    config: Config
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

    def reuse(output: Output) -> None:  # the run directory known, before agents calibrate
        calibration.reuse(Path(out or output.dir) / CALIBRATIONS)

    config = load_config(path, overrides, prepare=reuse)
    directory = Path(out or config.output.dir)
    return run_config(config, executor, directory, resume=resume, figures=figures)


def run_config(
    config: Config,
    executor: Executor,
    directory: Path,
    *,
    resume: bool = False,
    figures: bool | None = None,
) -> RunOutcome:
    """Run a checked experiment ``config`` into ``directory``: the files its traders name
    copied there (`keep_files`), the calibrations its check computed kept there
    (`agents.calibration.keep`, reused by every job's process), its jobs stage by stage
    (every job stored as it finishes, its checkpoints then dropped), then the tables, the
    agents' cards and (``figures``, default the config's ``output.figures``) the figures,
    which a resumed run whose records did not change keeps as they are when every figure it
    last drew is there (`write_run_figures` redraws them). A kind with a
    ``drive(config, execute, records)``
    function plans its own jobs step by step through the `Execution` it is given (and its
    ``records``); the others' jobs are their ``plan``'s."""
    _check_run_directory(directory, resume)
    with writing(directory):
        directory.mkdir(parents=True, exist_ok=True)
        with locked(directory):
            return _run_locked(config, executor, directory, resume, figures)


def _check_run_directory(directory: Path, resume: bool) -> None:
    """`UserError` unless a run may write ``directory``: a new or empty one (but for the lock
    of a run cut before it stored anything), or one holding a run, which only ``resume``
    continues; a folder of other files is refused, so that none of them is overwritten."""
    if (directory / "results.sqlite").exists():
        if not resume:
            raise UserError(
                f"{directory} already holds a run: pass --resume to continue it, or --out a "
                "new directory"
            )
        return
    with writing(directory):
        others = directory.is_dir() and any(p.name != LOCK for p in directory.iterdir())
    if others:
        raise UserError(
            f"{directory} holds files and no run (no results.sqlite): give --out a new or "
            "empty directory, so that none of them is overwritten"
        )


def _run_locked(
    config: Config, executor: Executor, directory: Path, resume: bool, figures: bool | None
) -> RunOutcome:
    """`run_config` once the run directory is locked (errors of writing name the directory)."""
    database = directory / "results.sqlite"
    with Store(database) as store:
        check_inputs(config, directory, resume=resume)
        store.start_run(config.text, resume=resume)
        keep_files(config, directory)
        (directory / "config.toml").write_text(config.text)
        calibration.keep(directory / CALIBRATIONS)
        done = store.finished()
        execute = Execution(store, executor, directory)
        kind = KINDS[config.kind]
        try:
            if isinstance(kind, Driven):
                kind.drive(config, execute, execute.records)
            else:
                execute(plan(config))
        except KeyboardInterrupt:
            raise Interrupted(
                f"{len(store.finished())} finished jobs stored in {database}; the same "
                "command with --resume goes on from them"
            ) from None
        failed, new_records = store.failed(), store.finished() != done
    stage = Stages(getattr(executor, "progress", False) and new_records)
    stage("reading the records")
    as_run, records = load_run(directory)
    stage("the tables" + (" (payoffs, equilibria)" if config.kind == "tournament" else ""))
    summary = kind.tables(directory, as_run, records)
    stage("the agents' cards")
    entries = kind.agent_entries(as_run) if isinstance(kind, SavesStrategies) else None
    write_cards(directory, as_run, records, entries)
    if (config.output.figures if figures is None else figures) and (
        new_records or _figures_missing(directory)
    ):
        stage("the figures")
        with together():  # a run cut while drawing leaves none of them, and redraws
            drawn = kind.figures(directory, as_run, records)
            with replacing(directory / FIGURES) as path:
                path.write_text(json.dumps(sorted(p.name for p in drawn), indent=1) + "\n")
    stage.end()
    return RunOutcome(directory, as_run, summary, failed, len(done))


def _figures_missing(directory: Path) -> bool:
    """Whether a figure the run last drew is gone from ``directory`` (or it drew none)."""
    record = directory / FIGURES
    if not record.exists():
        return True
    return not all((directory / name).exists() for name in json.loads(record.read_text()))


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
    return KINDS[config.kind].tables(directory, config, records)


def write_run_figures(directory: str | Path) -> list[Path]:
    """Draw every figure the run supports into its directory (see its kind's ``figures``);
    return the files written. A run none of whose jobs finished is a `UserError` saying so
    (it has nothing to draw)."""
    directory = Path(directory)
    config, records = load_run(directory)
    if records.empty:
        with Store(directory / "results.sqlite") as store:
            failed = len(store.failed())
        raise UserError(
            f"{directory}: no job of the run finished ({failed} failed), so there is nothing "
            "to draw: `tradearena run CONFIG --out DIR --resume` runs them again"
        )
    return KINDS[config.kind].figures(directory, config, records)
