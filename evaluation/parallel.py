"""Executors: run Jobs and stream their results back as they finish, with a progress bar.

`RayExecutor` (the default) starts a local Ray for the run, or joins a cluster given by
``address`` or ``RAY_ADDRESS``; a task whose worker dies is retried (``max_retries``). Ray is
started only when there are jobs to run (a finished run's tables need none). A local Ray
keeps the token authentication Ray gives new local clusters (``RAY_AUTH_MODE=token``, the
token in ``~/.ray/auth_token``, made on first use), stated rather than left to Ray's default
so that Ray does not warn of it on every run (when this process has not imported Ray before:
Ray reads the mode on import); a ``RAY_AUTH_MODE`` of the user's is kept. A job
that raises is not retried: `evaluation.kinds.run_job` turns the exception into a failed
result. `LocalExecutor` runs jobs one after the other in this process (tests, debugging).
Both give bit-identical results: a job's randomness depends only on its config and seed.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Protocol

from tqdm import tqdm

from tradearena.evaluation.kinds import run_job
from tradearena.evaluation.rollout import Job
from tradearena.evaluation.store import JobResult

__all__ = ["Executor", "LocalExecutor", "RayExecutor", "make_executor"]


class Executor(Protocol):
    """Runs jobs; yields each `JobResult` as soon as its job finishes (any order)."""

    def run(self, jobs: Sequence[Job]) -> Iterator[JobResult]: ...

    def close(self) -> None:
        """Release what the executor started."""


class Progress:
    """A progress bar over jobs: done, running, queued (waiting for a free CPU) and failed,
    with tqdm's rate and ETA."""

    def __init__(self, total: int, enabled: bool = True) -> None:
        self.bar = tqdm(
            total=total, unit="job", disable=not enabled or total == 0, dynamic_ncols=True
        )
        self.failed = 0

    def update(self, result: JobResult, left: int, slots: int) -> None:
        """Count ``result`` as done; of the ``left`` jobs not done, as many as there are
        ``slots`` (CPUs that run jobs) are running, the others queued."""
        self.failed += result.error is not None
        running = min(left, slots)
        counts = {"running": running, "queued": left - running, "failed": self.failed}
        self.bar.set_postfix(counts, refresh=False)  # in this order (keywords would be sorted)
        self.bar.update(1)

    def close(self) -> None:
        self.bar.close()


class LocalExecutor:
    """Runs jobs in this process, in order."""

    def __init__(self, *, progress: bool = True, job: Callable[[Job], JobResult] = run_job):
        self.progress, self.job = progress, job

    def close(self) -> None:
        """Nothing to release: jobs ran in this process."""

    def run(self, jobs: Sequence[Job]) -> Iterator[JobResult]:
        bar = Progress(len(jobs), self.progress)
        try:
            for i, job in enumerate(jobs):
                result = self.job(job)
                bar.update(result, left=len(jobs) - i - 1, slots=1)
                yield result
        finally:
            bar.close()


class RayExecutor:
    """Runs jobs as Ray tasks on ``workers`` CPUs of a local Ray (default: all cores), or on
    the cluster at ``address`` (or ``RAY_ADDRESS``). Ray is started on first use and shut
    down by `close` if this executor started it."""

    def __init__(
        self,
        *,
        workers: int | None = None,
        address: str | None = None,
        max_retries: int = 3,
        progress: bool = True,
        job: Callable[[Job], JobResult] = run_job,
    ) -> None:
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        self.workers, self.max_retries, self.progress, self.job = (
            workers,
            max_retries,
            progress,
            job,
        )
        self.address = address or os.environ.get("RAY_ADDRESS")
        self._started = self._warm = False

    def start(self) -> None:
        """Connect to Ray (or start it locally) if not connected yet, and warm its workers:
        one process per CPU, each with the simulator imported, so the first jobs do not pay
        for it (start-up is then all in this call)."""
        if not self.address and "ray" not in sys.modules:
            # Ray reads the mode once, on import: state its default for local clusters
            os.environ.setdefault("RAY_AUTH_MODE", "token")
        import ray

        if self._warm:
            return
        if not ray.is_initialized():
            if self.address:
                ray.init(address=self.address, logging_level="WARNING")
            else:  # a Ray of its own, even beside another local one (a `ray start`)
                ray.init(
                    address="local",
                    num_cpus=self.workers or os.cpu_count(),
                    include_dashboard=False,
                    logging_level="WARNING",
                    log_to_driver=False,
                )
            self._started = True
        cpus = max(int(ray.available_resources().get("CPU", 1)), 1)
        warm = ray.remote(num_cpus=1)(_warm_worker)
        ray.get([warm.remote(cpus) for _ in range(cpus)])
        self._warm = True

    def run(self, jobs: Sequence[Job]) -> Iterator[JobResult]:
        if not jobs:
            return
        self.start()
        import ray

        slots = max(int(ray.cluster_resources().get("CPU", 1)), 1)  # one job a CPU
        remote = ray.remote(num_cpus=1, max_retries=self.max_retries)(self.job)
        pending = {remote.remote(job): job for job in jobs}
        bar = Progress(len(jobs), self.progress)
        try:
            while pending:
                done, _ = ray.wait(list(pending), num_returns=1)
                job = pending.pop(done[0])
                try:
                    result = ray.get(done[0])
                except ray.exceptions.RayError as error:  # the worker died too often
                    result = JobResult(
                        job.id, job.seed, (), 0.0, f"{type(error).__name__}: {error}"
                    )
                bar.update(result, left=len(pending), slots=slots)
                yield result
        finally:
            bar.close()
            for ref in pending:
                ray.cancel(ref, force=True)

    def close(self) -> None:
        """Shut down the Ray this executor started (Ray is not imported when it started none:
        a finished run's tables need no Ray)."""
        if self._started:
            import ray

            if ray.is_initialized():
                ray.shutdown()
        self._started = self._warm = False


def _warm_worker(concurrent: int) -> None:
    """Import the simulator in this worker; linger so that ``concurrent`` warm-up tasks land
    on as many worker processes."""
    import time

    import tradearena.evaluation.kinds  # noqa: F401 (the import is the point)

    time.sleep(0.2 if concurrent > 1 else 0.0)


def make_executor(
    name: str,
    *,
    workers: int | None = None,
    address: str | None = None,
    progress: bool = True,
    job: Callable[[Job], JobResult] = run_job,
) -> LocalExecutor | RayExecutor:
    """``"ray"`` or ``"local"``, running each job with ``job`` (default: its kind's)."""
    if name == "local":
        return LocalExecutor(progress=progress, job=job)
    if name == "ray":
        return RayExecutor(workers=workers, address=address, progress=progress, job=job)
    raise ValueError(f"executor must be 'ray' or 'local', got {name!r}")
