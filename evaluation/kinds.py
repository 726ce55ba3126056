"""The experiment kinds, registered in one table, and the running of one Job.

Each kind is a module with the same five functions: ``check(config, where)`` (what the
schema cannot say; raises through the `evaluation.schema.Locator`), ``plan(config) ->
list[Job]``, ``run(job) -> records``, ``tables(directory, config, records) -> summary`` and
``figures(directory, config, records) -> paths``, plus ``SECTIONS``, the optional config
tables it reads.
"""

from __future__ import annotations

import time
import traceback
from types import ModuleType

from tradearena import agents
from tradearena.evaluation import compare, robustness, tournament
from tradearena.evaluation.rollout import Job
from tradearena.evaluation.store import JobResult

__all__ = ["KINDS", "run_job"]

KINDS: dict[str, ModuleType] = {
    "compare": compare,
    "robustness": robustness,
    "tournament": tournament,
}
"""Experiment kind name -> its module."""


def run_job(job: Job) -> JobResult:
    """Run a job with its kind's ``run``, its agents' modules looked for in the config's
    ``agent_folders`` as where the config was read; an exception (a custom agent's bug, say)
    becomes a failed result with its traceback instead of propagating."""
    start = time.perf_counter()
    agents.add_folders(*job.config.get("agent_folders", ()))
    try:
        records = KINDS[job.config["kind"]].run(job)
    except Exception:  # noqa: BLE001 - recorded with its traceback; the other jobs go on
        return JobResult(job.id, job.seed, (), time.perf_counter() - start, traceback.format_exc())
    return JobResult(job.id, job.seed, tuple(records), time.perf_counter() - start)
