"""Executors: run Jobs and stream their results back as they finish, with a progress bar.

`RayExecutor` (the default) starts a local Ray for the run, or joins a cluster given by
``address`` or ``RAY_ADDRESS``; a task whose worker dies is retried (``max_retries``). Ray is
started only when there are jobs to run (a finished run's tables need none). A local Ray
keeps the token authentication Ray gives new local clusters (``RAY_AUTH_MODE=token``, the
token in ``~/.ray/auth_token``, made on first use), stated rather than left to Ray's default
so that Ray does not warn of it on every run (when this process has not imported Ray before:
Ray reads the mode on import); a ``RAY_AUTH_MODE`` of the user's is kept. A job
that raises is not retried: `evaluation.experiment.kinds.run_job` turns the exception into a failed
result. `LocalExecutor` runs jobs one after the other in this process (tests, debugging).
Both give bit-identical results: a job's randomness depends only on its config and seed.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from tqdm import tqdm

from tradearena.envs.errors import UserError
from tradearena.evaluation.experiment.kinds import run_job
from tradearena.evaluation.experiment.rollout import Job
from tradearena.evaluation.experiment.schema import MAX_WORKERS
from tradearena.evaluation.experiment.store import JobResult

__all__ = [
    "Executor",
    "LocalExecutor",
    "RayExecutor",
    "Study",
    "Unit",
    "check_address",
    "make_executor",
]

W = TypeVar("W")


@dataclass(frozen=True)
class Study(Generic[W]):
    """One unit of a study of the market (`evaluation.market`: a fit's candidate, a transfer's
    side, an impact's chunk of work): its ``id``, its ``seed`` index and the ``work`` the
    study's job function reads, which the executor is given (``job``) as an experiment's
    `Job` is run by its kind's (`run_job`)."""

    id: str
    seed: int
    work: W


Unit = Job | Study
"""What an executor runs: an experiment's `Job` or a study's `Study`."""


class Executor(Protocol):
    """Runs jobs; yields each `JobResult` as soon as its job finishes (any order)."""

    def run(self, jobs: Sequence[Unit]) -> Iterator[JobResult]: ...

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

    def __init__(self, *, progress: bool = True, job: Callable[[Unit], JobResult] = run_job):
        self.progress, self.job = progress, job

    def close(self) -> None:
        """Nothing to release: jobs ran in this process."""

    def run(self, jobs: Sequence[Unit]) -> Iterator[JobResult]:
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
        job: Callable[[Unit], JobResult] = run_job,
    ) -> None:
        if workers is not None and not 1 <= workers <= MAX_WORKERS:
            rule = ">= 1" if workers < 1 else f"<= {MAX_WORKERS:,}"
            raise ValueError(f"workers must be {rule}, got {workers}")
        self.workers, self.max_retries, self.progress, self.job = (
            workers,
            max_retries,
            progress,
            job,
        )
        self.address = address or os.environ.get("RAY_ADDRESS")
        self._name = "--address" if address else "RAY_ADDRESS"
        self._started = self._warm = False
        self._watchdog: subprocess.Popen | None = None

    def connect(self) -> None:
        """Connect to Ray (or start it locally) if not connected yet. A cluster (``address``)
        is checked first (`check_address`) and Ray tries `CONNECT_TRIES` times, about a
        second apart; a cluster that does not answer is a `UserError` naming the address."""
        if not self.address and "ray" not in sys.modules:
            # Ray reads the mode once, on import: state its default for local clusters
            os.environ.setdefault("RAY_AUTH_MODE", "token")
        if self.address:
            check_address(self.address, self._name)
        import ray

        if ray.is_initialized():
            return
        if self.address:
            os.environ.setdefault("RAY_gcs_server_port_wait_time_s", str(CONNECT_TRIES))
            try:
                ray.init(address=self.address, logging_level="WARNING")
            except (ConnectionError, RuntimeError) as error:
                raise UserError(
                    f"{self._name} {self.address}: cannot connect to a Ray cluster there "
                    f"(Ray gave up after {CONNECT_TRIES} tries: {error})"
                ) from None
        else:  # a Ray of its own, even beside another local one (a `ray start`)
            ray.init(
                address="local",
                num_cpus=self.workers or os.cpu_count(),
                include_dashboard=False,
                logging_level="WARNING",
                log_to_driver=False,
            )
            self._watchdog = watch_children()
        self._started = True

    def start(self) -> None:
        """`connect`, and warm Ray's workers: one process per CPU, each with the simulator
        imported, so the first jobs do not pay for it (start-up is then all in this call)."""
        if self._warm:
            return
        self.connect()
        import ray

        cpus = max(int(ray.available_resources().get("CPU", 1)), 1)
        warm = ray.remote(num_cpus=1)(_warm_worker)
        ray.get([warm.remote(cpus) for _ in range(cpus)])
        self._warm = True

    def run(self, jobs: Sequence[Unit]) -> Iterator[JobResult]:
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
        if self._watchdog is not None:
            self._watchdog.stdin.close()
            self._watchdog.wait()
            self._watchdog = None
        self._started = self._warm = False


REACH_SECONDS = 10.0
"""How long `check_address` waits for a Ray cluster to answer."""
CONNECT_TRIES = 10
"""How many times Ray tries to connect to a cluster (about a second apart) before giving up
(``RAY_gcs_server_port_wait_time_s``, unless set)."""


_HTTP2_HELLO = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
"""An HTTP/2 client's preface and empty SETTINGS frame: a gRPC server (Ray's GCS, its client
server) answers with a SETTINGS frame of its own (frame type 4, the header's fourth byte)."""


def check_address(address: str, name: str = "--address", seconds: float = REACH_SECONDS) -> None:
    """`UserError` naming ``name`` unless the Ray cluster at ``address`` (``HOST:PORT`` or
    ``ray://HOST:PORT``; ``auto`` and ``local`` are Ray's to resolve) answers as a gRPC server
    within ``seconds``: an unreachable cluster is refused before a run writes anything (Ray
    itself retries for minutes). With ``RAY_USE_TLS`` set only the connection is checked."""
    if address in ("auto", "local"):
        return
    host, _, port = address.split("://", 1)[-1].rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit():
        raise UserError(f"{name} {address!r}: expected HOST:PORT, ray://HOST:PORT or auto")
    deadline = time.monotonic() + seconds
    try:
        with socket.create_connection((host, int(port)), timeout=seconds) as connection:
            if os.environ.get("RAY_USE_TLS", "0").lower() in ("0", "false", ""):
                connection.sendall(_HTTP2_HELLO)
                header = b""
                while len(header) < 4:
                    connection.settimeout(max(deadline - time.monotonic(), 0.001))
                    received = connection.recv(9 - len(header))
                    if not received:
                        break
                    header += received
                if header[3:4] != b"\x04":
                    raise ConnectionError("it does not answer as Ray's gRPC server does")
    except OSError as error:
        reason = "timed out" if isinstance(error, TimeoutError) else error.strerror or str(error)
        raise UserError(
            f"{name} {address}: no Ray cluster answers there within {seconds:g} s ({reason})"
        ) from None


_WATCHDOG = """\
import sys

import psutil

sys.stdin.read()
processes = []
for item in sys.argv[1:]:
    pid, created = item.split("@")
    try:
        process = psutil.Process(int(pid))
        if f"{process.create_time():.3f}" == created:
            processes.append(process)
    except psutil.Error:
        pass
for process in processes:
    try:
        process.terminate()
    except psutil.Error:
        pass
for process in psutil.wait_procs(processes, timeout=3)[1]:
    try:
        process.kill()
    except psutil.Error:
        pass
"""
"""The watchdog's program: wait for the end of its input (its parent gone, or done with it),
then end the processes its arguments name (``PID@CREATED``, so that a reused id is spared)."""


def watch_children() -> subprocess.Popen:
    """A watchdog that ends this process's Ray descendants (a local Ray's) when it ends,
    even killed with SIGKILL: the Ray processes that share the driver's fate through the
    kernel do, but the dashboard and runtime-env agents the raylet starts outlive it (they
    wait on the dead GCS). Close its ``stdin`` (after `ray.shutdown`) to end it."""
    import psutil  # a dependency of Ray

    named = []
    for child in psutil.Process().children(recursive=True):
        try:
            if any("ray" in part for part in child.cmdline()):
                named.append(f"{child.pid}@{child.create_time():.3f}")
        except psutil.Error:  # gone already
            continue
    return subprocess.Popen(
        [sys.executable, "-c", _WATCHDOG, *named],
        stdin=subprocess.PIPE,
        start_new_session=True,  # not interrupted with the driver's Ctrl-C
    )


def _warm_worker(concurrent: int) -> None:
    """Import the simulator in this worker; linger so that ``concurrent`` warm-up tasks land
    on as many worker processes."""
    import tradearena.evaluation.experiment.kinds  # noqa: F401 (the import is the point)

    time.sleep(0.2 if concurrent > 1 else 0.0)


def make_executor(
    name: str,
    *,
    workers: int | None = None,
    address: str | None = None,
    progress: bool = True,
    job: Callable[[Unit], JobResult] = run_job,
) -> LocalExecutor | RayExecutor:
    """``"ray"`` or ``"local"``, running each job with ``job`` (default: its kind's)."""
    if name == "local":
        return LocalExecutor(progress=progress, job=job)
    if name == "ray":
        return RayExecutor(workers=workers, address=address, progress=progress, job=job)
    raise ValueError(f"executor must be 'ray' or 'local', got {name!r}")
