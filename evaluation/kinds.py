"""The experiment kinds, registered in one table, and the running of one Job.

Each kind is a module with the same five functions: ``check(config, where)`` (what the
schema cannot say; raises through the `evaluation.schema.Locator`), ``plan(config) ->
list[Job]``, ``run(job) -> records``, ``tables(directory, config, records) -> summary`` and
``figures(directory, config, records) -> paths``, plus ``SECTIONS``, the optional config
tables it reads. Two functions are optional: ``drive(config, execute, records)``, for a
kind whose jobs depend on the results of earlier ones (PSRO's rounds): it plans its jobs
step by step, runs each step through ``execute`` (`evaluation.experiment.Execution`) and
reads what they stored with ``records(phase)``, ``plan`` then giving only the first step;
and ``agent_tables(config) -> {label: TOML table}``, the tables
of the strategies it saves beyond the file's ``[[agents]]`` (for their cards).
"""

from __future__ import annotations

import importlib
import sys
import time
import traceback
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

from tradearena import agents
from tradearena.agents import calibration
from tradearena.evaluation.rollout import Job
from tradearena.evaluation.store import JobResult

__all__ = ["CALIBRATIONS", "KINDS", "one_thread", "run_job"]


class _Kinds(Mapping[str, ModuleType]):
    """Kind name -> its module (``tradearena.evaluation.<name>``), imported when first looked
    up: a run imports only its own kind (the game analysis' modules stay out of a compare
    run's start)."""

    NAMES = ("compare", "psro", "robustness", "tournament")

    def __getitem__(self, name: str) -> ModuleType:
        if name not in self.NAMES:
            raise KeyError(name)
        return importlib.import_module(f"tradearena.evaluation.{name}")

    def __iter__(self) -> Iterator[str]:
        return iter(self.NAMES)

    def __len__(self) -> int:
        return len(self.NAMES)


KINDS: Mapping[str, ModuleType] = _Kinds()
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
    for spec in job.config["agents"]:
        if spec["label"] in job.labels:
            agents.resolve(spec["id"])
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
    agents.add_folders(*job.config.get("agent_folders", ()))
    if job.directory:
        calibration.reuse(Path(job.directory) / CALIBRATIONS)
    try:
        with one_thread(job):
            records = KINDS[job.config["kind"]].run(job)
    except Exception:  # noqa: BLE001 - recorded with its traceback; the other jobs go on
        return JobResult(job.id, job.seed, (), time.perf_counter() - start, traceback.format_exc())
    return JobResult(job.id, job.seed, tuple(records), time.perf_counter() - start)
