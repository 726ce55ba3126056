"""tradearena.evaluation.experiment.parallel: executors stream every job's result exactly once, and
a job that raises inside Ray (or kills its worker) comes back as a failed JobResult, not an
exception."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import Counter

import pytest

from tradearena.evaluation.experiment.config import load_config
from tradearena.evaluation.experiment.kinds import one_thread
from tradearena.evaluation.experiment.parallel import (
    LocalExecutor,
    RayExecutor,
    Study,
    make_executor,
)
from tradearena.evaluation.experiment.runner import plan
from tradearena.evaluation.experiment.store import EpisodeRecord, JobResult

ray = pytest.importorskip("ray")
# Ray workers cannot import this test module: ship its functions by value.
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

SLOW = "job-0"  # sleeps long enough that every other job finishes first


def fake_jobs(n: int = 6) -> list[Study]:
    return [Study(f"job-{i}", i, "fake") for i in range(n)]


def result_of(job: Study) -> JobResult:
    """One record whose reward is the seed, and the worker's pid as the seconds."""
    record = EpisodeRecord(0, job.work, "test", "clean", 0, float(job.seed), 0.0, 0, 0, 0.0, 1)
    return JobResult(job.id, job.seed, (record,), float(os.getpid()))


def echo(job: Study) -> JobResult:
    """A job function: `result_of`, after a pause for the slow job."""
    if job.id == SLOW:
        time.sleep(1.5)
    return result_of(job)


def explode(job: Study) -> JobResult:
    """Raises for odd seeds (a bug outside run_job), echoes the others."""
    if job.seed % 2:
        raise RuntimeError(f"exploded on {job.id}")
    return result_of(job)


def crash(job: Study) -> JobResult:
    """Kills its worker process for seed 1."""
    if job.seed == 1:
        os._exit(3)
    return result_of(job)


def check_echoed(results: list[JobResult], jobs: list[Study]) -> None:
    """Every job exactly once, each result carrying its own job's data."""
    assert Counter(r.job_id for r in results) == Counter(j.id for j in jobs)
    for result in results:
        assert result.error is None
        assert result.records[0].reward == result.seed == int(result.job_id.split("-")[1])


def test_local_executor_streams_in_order():
    """LocalExecutor runs the jobs in this process, in order, each once."""
    jobs = fake_jobs()
    results = list(LocalExecutor(progress=False, job=result_of).run(jobs))
    assert [r.job_id for r in results] == [j.id for j in jobs]
    check_echoed(results, jobs)
    assert {r.seconds for r in results} == {float(os.getpid())}


def test_ray_executor_streams_as_jobs_finish(ray_session):
    """RayExecutor yields each job once, as it finishes: the slow first job comes last; the
    jobs ran in worker processes, not here."""
    jobs = fake_jobs()
    results = list(RayExecutor(workers=2, progress=False, job=echo).run(jobs))
    check_echoed(results, jobs)
    assert [r.job_id for r in results][-1] == SLOW
    assert float(os.getpid()) not in {r.seconds for r in results}


def test_ray_job_that_raises_is_a_failed_result(ray_session):
    """An exception in a Ray task becomes a failed JobResult (no records, the exception named
    in the error); the other jobs come back normally."""
    jobs = fake_jobs()
    results = {r.job_id: r for r in RayExecutor(progress=False, job=explode).run(jobs)}
    assert sorted(results) == sorted(j.id for j in jobs)
    for job in jobs:
        result = results[job.id]
        assert result.seed == job.seed
        if job.seed % 2:
            assert result.records == () and result.seconds == 0.0
            assert result.error.startswith("RayTaskError")
            assert f"RuntimeError: exploded on {job.id}" in result.error
        else:
            assert result.error is None and result.records[0].reward == job.seed


def test_ray_worker_death_is_a_failed_result(ray_session):
    """A worker that dies (and is not retried) gives a failed JobResult for its job only."""
    jobs = fake_jobs(3)
    executor = RayExecutor(progress=False, max_retries=0, job=crash)
    results = {r.job_id: r for r in executor.run(jobs)}
    assert sorted(results) == ["job-0", "job-1", "job-2"]
    assert results["job-1"].records == ()
    assert "WorkerCrashedError" in results["job-1"].error
    assert results["job-0"].error is None and results["job-2"].error is None


def test_no_jobs_start_no_ray(monkeypatch):
    """A finished run resumed has no jobs left: RayExecutor yields nothing, starting nothing."""
    monkeypatch.setattr(RayExecutor, "start", lambda self: pytest.fail("Ray was started"))
    assert list(RayExecutor(progress=False, job=echo).run([])) == []


def test_a_job_runs_torch_on_one_thread_and_leaves_it_as_it_was(tiny_config):
    """Inside a job torch's intra-op pool has one thread (results then do not depend on the
    process's cores); after it, the pool is as it was."""
    torch = pytest.importorskip("torch")
    job = plan(load_config(tiny_config))[0]
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with one_thread(job):
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_an_executor_that_started_nothing_closes_without_importing_ray():
    """Importing Ray takes half a second: a finished run resumed (no jobs) never pays it."""
    code = (
        "import sys\n"
        "from tradearena.evaluation.experiment.parallel import RayExecutor\n"
        "executor = RayExecutor(progress=False)\n"
        "assert list(executor.run([])) == []\n"
        "executor.close()\n"
        "print('ray imported:', 'ray' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ray imported: False\n"


def test_local_ray_keeps_token_authentication_without_a_warning(tiny_config, tmp_path):
    """`tradearena run` on a local Ray (in a fresh process, as from the shell) authenticates
    by token, as Ray 2.59+ makes new local clusters do, and says nothing of it: the mode is
    stated (RAY_AUTH_MODE=token) rather than left to Ray's default, which warns."""
    code = (
        "import sys\n"
        "from tradearena.evaluation.cli.main import main\n"
        f"status = main(['run', {str(tiny_config)!r}, '--out', {str(tmp_path / 'run')!r}, "
        "'--workers', '1', '--no-progress'])\n"
        "from ray._raylet import get_authentication_mode\n"
        "print('mode', int(get_authentication_mode()), 'status', status)\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_AUTH_MODE", "RAY_ADDRESS")}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr
    from ray._raylet import AuthenticationMode

    assert f"mode {int(AuthenticationMode.TOKEN)} status 0" in done.stdout
    assert "run directory:" in done.stdout
    assert "authentication" not in done.stderr.lower()


def test_make_executor():
    """make_executor builds the named executor with its settings; a bad name or worker count
    is a ValueError naming it."""
    local = make_executor("local", progress=False)
    assert isinstance(local, LocalExecutor) and local.progress is False
    remote = make_executor("ray", workers=3, address="10.0.0.1:6379", progress=False)
    assert isinstance(remote, RayExecutor)
    assert (remote.workers, remote.address, remote.progress) == (3, "10.0.0.1:6379", False)
    with pytest.raises(ValueError, match=r"executor must be 'ray' or 'local', got 'dask'"):
        make_executor("dask")
    with pytest.raises(ValueError, match=r"workers must be >= 1, got 0"):
        RayExecutor(workers=0)


def test_a_local_ray_ends_with_its_driver_killed(tmp_path):
    """A driver killed with SIGKILL: every Ray process it started ends within seconds, the
    raylet's dashboard and runtime-env agents too, and the watchdog that ends them."""
    psutil = pytest.importorskip("psutil")
    code = (
        "import os, time, psutil\n"
        "from tradearena.evaluation.experiment.parallel import RayExecutor\n"
        "RayExecutor(workers=1, progress=False).start()\n"
        "children = psutil.Process().children(recursive=True)\n"
        "print(' '.join(f'{p.pid}:{p.name()}' for p in children), flush=True)\n"
        "time.sleep(300)\n"
    )
    driver = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        started = dict(item.split(":", 1) for item in driver.stdout.readline().split())
    finally:
        driver.kill()
        driver.wait()
    assert any("Agent" in name for name in started.values()), started

    def running(pid: str) -> bool:
        try:
            return psutil.Process(int(pid)).status() != psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return False

    deadline = time.monotonic() + 30
    while (alive := [p for p in started if running(p)]) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not alive, {pid: started[pid] for pid in alive}


def test_the_progress_bar_counts_running_jobs_by_the_cpus_and_queues_the_rest():
    """69 jobs left on 2 CPUs: 2 running, 67 queued; at the end none of either."""
    from tradearena.evaluation.experiment.parallel import JobResult, Progress

    bar = Progress(71, enabled=True)
    try:
        bar.update(JobResult("a", 0, (), 0.0, None), left=69, slots=2)
        assert bar.bar.postfix == "running=2, queued=67, failed=0"
        bar.update(JobResult("b", 1, (), 0.0, "boom"), left=1, slots=2)
        assert bar.bar.postfix == "running=1, queued=0, failed=1"
    finally:
        bar.close()
