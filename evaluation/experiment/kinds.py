"""The experiment kinds, registered in one table, and the running of one Job.

Each kind is a module of ``evaluation.kinds`` answering the `ExperimentKind` protocol: five
functions, ``check(config, where)`` (what the schema cannot say; raises through the
`evaluation.experiment.schema.Locator`), ``plan(config) -> list[Job]``, ``run(job) ->
records``, ``tables(directory, config, records) -> summary`` and ``figures(directory, config,
records) -> paths``, plus ``SECTIONS``, the optional config tables it reads. A kind may also be
`Driven`: ``drive(config, execute, records)``, for a kind whose jobs depend on the results of
earlier ones (PSRO's rounds): it plans its jobs step by step, runs each step through
``execute`` (`evaluation.experiment.runner.Execution`) and reads what they stored with
``records(phase)``, ``plan`` then giving only the first step; and it may be
`SavesStrategies`: ``agent_entries(config) -> {label: AgentEntry}``, the entries of the
strategies it saves beyond the file's ``[[agents]]`` (for their cards). ``config`` is the
checked `evaluation.experiment.schema.Config`, read by attribute.
"""

from __future__ import annotations

import importlib
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, cast, runtime_checkable

from tradearena import agents
from tradearena.agents import calibration
from tradearena.evaluation.experiment.rollout import Job
from tradearena.evaluation.experiment.schema import KIND_NAMES
from tradearena.evaluation.experiment.store import EpisodeRecord, JobResult

if TYPE_CHECKING:
    import pandas as pd

    from tradearena.evaluation.experiment.schema import AgentEntry, Config, Locator

__all__ = [
    "CALIBRATIONS",
    "KINDS",
    "Driven",
    "ExperimentKind",
    "SavesStrategies",
    "one_thread",
    "run_job",
]


class ExperimentKind(Protocol):
    """An experiment kind: what every module of ``evaluation.kinds`` defines."""

    SECTIONS: tuple[str, ...]
    """The optional config tables it reads (besides market, training, testing, agents)."""

    def check(self, config: Config, where: Locator) -> None:
        """Check what the schema cannot say, raising through ``where``."""

    def plan(self, config: Config) -> list[Job]:
        """The jobs of an experiment (of its first step, for a `Driven` kind)."""

    def run(self, job: Job) -> list[EpisodeRecord]:
        """Run one job: its records."""

    def tables(self, directory: Path, config: Config, records: pd.DataFrame) -> pd.DataFrame:
        """Write the run's tables into ``directory``; return the summary."""

    def figures(self, directory: Path, config: Config, records: pd.DataFrame) -> list[Path]:
        """Draw the run's figures into ``directory``; return their paths."""


@runtime_checkable
class Driven(Protocol):
    """A kind whose jobs depend on the results of earlier ones (PSRO's rounds)."""

    def drive(
        self,
        config: Config,
        execute: Callable[[list[Job]], None],
        records: Callable[[str], pd.DataFrame],
    ) -> None:
        """Plan the jobs step by step, run each step through ``execute``, read what they
        stored with ``records(phase)``."""


@runtime_checkable
class SavesStrategies(Protocol):
    """A kind that saves strategies beyond the file's ``[[agents]]``."""

    def agent_entries(self, config: Config) -> dict[str, AgentEntry]:
        """The agent entries of those strategies, by label (for their cards)."""


class _Kinds(Mapping[str, ExperimentKind]):
    """Kind name -> its module (``tradearena.evaluation.kinds.<name>``), imported when first looked
    up: a run imports only its own kind (the game analysis' modules stay out of a compare
    run's start)."""

    NAMES = KIND_NAMES

    def __getitem__(self, name: str) -> ExperimentKind:
        if name not in self.NAMES:
            raise KeyError(name)
        return cast(ExperimentKind, importlib.import_module(f"tradearena.evaluation.kinds.{name}"))

    def __iter__(self) -> Iterator[str]:
        return iter(self.NAMES)

    def __len__(self) -> int:
        return len(self.NAMES)


KINDS: Mapping[str, ExperimentKind] = _Kinds()
"""Experiment kind name -> its module."""
CALIBRATIONS = "calibrations.json"
"""The run directory's file of calibrations and tunings (`agents.calibration.keep`), which
every job's process reuses."""


@contextmanager
def one_thread(job: Job) -> Iterator[None]:
    """Torch's intra-op pool at one thread while ``job`` runs (when the modules of the
    agents it seats, imported here, or anything before them imported torch), as it was after.

    A sum split across threads adds in another order: a deep learner's arithmetic, and so its
    results, would depend on the threads of the process running the job (all the cores by
    default in the user's process, one in a Ray worker). Tiny networks run fastest on one."""
    for spec in job.config.agents:
        if spec.label in job.labels:
            agents.resolve(spec.id)
    torch = sys.modules.get("torch")
    if torch is None:
        yield
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def run_job(job: Job) -> JobResult:
    """Run a job with its kind's ``run`` on one torch thread (`one_thread`), its agents'
    modules looked for in the config's ``agent_folders`` as where the config was read, the
    calibrations of its run directory reused; an exception (a custom agent's bug, say)
    becomes a failed result with its traceback instead of propagating."""
    start = time.perf_counter()
    agents.add_folders(*job.config.agent_folders)
    if job.directory:
        calibration.reuse(Path(job.directory) / CALIBRATIONS)
    try:
        with one_thread(job):
            records = KINDS[job.config.kind].run(job)
    except Exception:  # noqa: BLE001 - recorded with its traceback; the other jobs go on
        return JobResult(job.id, job.seed, (), time.perf_counter() - start, traceback.format_exc())
    return JobResult(job.id, job.seed, tuple(records), time.perf_counter() - start)
