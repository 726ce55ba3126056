"""Parallel speed-up of experiment jobs on Ray: the same 8 compare jobs (q_learning and ra2q,
4 seeds each; a light market of 60 steps, 60 training and 5 test episodes: about 2-4 s a job)
run with one Ray worker and with two.

Method: Ray is started once, with 2 CPUs, before any timing; its start-up (``ray.init``) and
the warm-up of both worker processes (one small job each, which imports the simulator) are
timed apart and reported as ``ray_startup_s``. The 2-worker run is `RayExecutor(workers=2)`
as ``tradearena run`` uses it (tasks of 1 CPU, so two run at once); the 1-worker run submits
the same tasks through the same wait-for-the-next-result loop but asks 2 CPUs per task, so Ray
runs only one at a time in the same worker pool. Each figure is the best of ``--repeat`` runs.
Both runs must give identical records (checked). Prints JSON lines: ray_startup_s,
ray_1_worker_s, ray_2_workers_s and ray_speedup_2_workers (t1 / t2; target >= 1.8). The run
lines also give the jobs' CPU time and ``cpu_share``, CPU time / (workers x wall time): well
below 1 means other processes took the CPUs and the speed-up says little.

    PYTHONPATH=. python bench/parallel.py [--repeat N]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import time

import ray

from tradearena.evaluation.experiment.config import parse_config
from tradearena.evaluation.experiment.kinds import run_job
from tradearena.evaluation.experiment.parallel import RayExecutor
from tradearena.evaluation.experiment.rollout import Job
from tradearena.evaluation.experiment.runner import plan
from tradearena.evaluation.experiment.store import JobResult

CONFIG = """\
kind = "compare"
name = "bench-parallel"
seeds = {seeds}

[market]
population = "light"
n_steps = 60

[training]
episodes = {training}

[testing]
episodes = 5

[[agents]]
id = "q_learning"

[[agents]]
id = "ra2q"
params = {{ k = 5 }}
"""


def jobs(seeds: int = 6, training: int = 60) -> list[Job]:
    """The benchmark's jobs: 2 agents x ``seeds`` seeds."""
    return plan(parse_config(CONFIG.format(seeds=seeds, training=training), source="bench"))


def cpu_timed_job(job: Job) -> JobResult:
    """`run_job`, with ``seconds`` the CPU time of the worker process on the job: their sum over
    the workers' wall time (``cpu_share``) tells how much of its CPUs the run really got."""
    start = time.process_time()
    result = run_job(job)
    return dataclasses.replace(result, seconds=time.process_time() - start)


def run_one_at_a_time(work: list[Job]) -> list[JobResult]:
    """The jobs as Ray tasks of 2 CPUs each on the 2-CPU Ray: one runs at a time."""
    remote = ray.remote(num_cpus=2, max_retries=3)(cpu_timed_job)
    pending = [remote.remote(job) for job in work]
    results = []
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        results.append(ray.get(done[0]))
    return results


def run_two_at_a_time(work: list[Job]) -> list[JobResult]:
    """The jobs through `RayExecutor(workers=2)` (tasks of 1 CPU)."""
    return list(RayExecutor(workers=2, progress=False, job=cpu_timed_job).run(work))


def timed(run, work: list[Job], repeat: int) -> tuple[float, list[JobResult]]:
    """Best wall time of ``repeat`` runs, with that run's results."""
    best, kept = float("inf"), []
    for _ in range(repeat):
        start = time.perf_counter()
        results = run(work)
        seconds = time.perf_counter() - start
        failed = [r.job_id for r in results if r.error is not None]
        assert not failed, f"failed jobs: {failed}"
        if seconds < best:
            best, kept = seconds, results
    return best, kept


def records(results: list[JobResult]) -> dict[str, tuple]:
    return {r.job_id: r.records for r in results}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=1, help="runs per figure (best is kept)")
    args = parser.parse_args()

    start = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING", log_to_driver=False)
    init = time.perf_counter() - start
    warm = time.perf_counter()
    RayExecutor(workers=2, progress=False).start()  # Ray is up: warms its two workers
    run_two_at_a_time(jobs(seeds=1, training=1))  # and one small job each
    warmup = time.perf_counter() - warm
    print(
        json.dumps(
            {
                "name": "ray_startup_s",
                "value": round(init + warmup, 3),
                "unit": "s",
                "init_s": round(init, 3),
                "warmup_s": round(warmup, 3),
            }
        )
    )

    work = jobs()
    t1, one = timed(run_one_at_a_time, work, args.repeat)
    t2, two = timed(run_two_at_a_time, work, args.repeat)
    assert records(one) == records(two), "1 and 2 workers gave different records"
    ray.shutdown()

    load = round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None
    detail = {"jobs": len(work), "repeat": args.repeat, "load_1min": load}
    for name, seconds, results, workers in [
        ("ray_1_worker_s", t1, one, 1),
        ("ray_2_workers_s", t2, two, 2),
    ]:
        cpu = sum(r.seconds for r in results)
        figure = {"name": name, "value": round(seconds, 3), "unit": "s", **detail}
        figure |= {"job_cpu_s": round(cpu, 3), "cpu_share": round(cpu / (workers * seconds), 3)}
        print(json.dumps(figure))
    speedup = {"name": "ray_speedup_2_workers", "value": round(t1 / t2, 3), "unit": "x"}
    print(json.dumps(speedup | {"target": 1.8}))


if __name__ == "__main__":
    main()
