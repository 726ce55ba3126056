"""How long the main job takes: ``tradearena run configs/quickstart.toml`` from nothing (Ray's
start included), then resumed once finished, as a user types it, each in a process of its
own.

Method: the quickstart runs once into a new directory (``--run``, default a temporary one);
the figure is its wall time (seconds). Then the same command with ``--resume`` runs
``--repeat`` times on that finished directory; the figure is the best wall time, with the
CPU time (user + system) of that run beside it: a wall time well above the CPU time means
other processes held the cores. The resumed run must skip every job (checked: the command
prints how many it skipped and the store holds them all). Targets on a quiet 2-core machine,
from bytecode (`make` compiles it at install): the run in at most 60 s, resumed under 3 s.
Prints two JSON lines, quickstart_run_s and quickstart_resumed_s (``--resumed-only`` on an
existing ``--run``: the second alone).

    python bench/quickstart.py [--run DIR] [--repeat N] [--resumed-only]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tradearena.evaluation.experiment.config import parse_config
from tradearena.evaluation.experiment.runner import plan
from tradearena.evaluation.experiment.store import Store

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "quickstart.toml"


def quickstart(run: Path, *options: str) -> tuple[float, float, str]:
    """(wall s, CPU s of the command's own process, its output) of one quickstart run into
    ``run``; exits if it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "tradearena.evaluation.cli.main", "run", str(CONFIG)]
        + ["--out", str(run), "--no-progress", *options],
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"the quickstart failed:\n{done.stdout[-1000:]}{done.stderr[-1000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def resumed(run: Path) -> tuple[float, float]:
    """(wall s, CPU s) of one resumed run of the finished quickstart in ``run``."""
    wall, cpu, out = quickstart(run, "--resume")
    if "resumed:" not in out:
        sys.exit(f"the resumed run ran jobs:\n{out[-1000:]}")
    return wall, cpu


def figure(name: str, seconds: float, **detail) -> str:
    """One JSON line of a figure in seconds, with the machine's details."""
    machine = {
        "bytecode_writes_off": os.environ.get("PYTHONDONTWRITEBYTECODE", "") != "",
        "python": platform.python_version(),
        "cores": os.cpu_count(),
        "load_average_1min": round(os.getloadavg()[0], 2),
    }
    return json.dumps({"name": name, "value": round(seconds, 2), "unit": "s", **detail, **machine})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, help="run directory (default: a temporary one)")
    parser.add_argument("--repeat", type=int, default=3, help="resumed runs (the best counts)")
    parser.add_argument(
        "--resumed-only", action="store_true", help="time only resuming the finished --run"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        run = args.run or Path(scratch) / "quickstart"
        jobs = {job.id for job in plan(parse_config(CONFIG.read_text(), complete=False))}
        if not args.resumed_only:
            if (run / "results.sqlite").exists():
                sys.exit(f"{run} holds a run already: give a new --run, or --resumed-only")
            wall, _, _ = quickstart(run)
            print(figure("quickstart_run_s", wall, jobs=len(jobs)), flush=True)
        database = run / "results.sqlite"
        if not database.exists():
            sys.exit(f"{run} holds no run: make one with `make run` first")
        with Store(database) as store:
            missing = jobs - store.finished()
        if missing:
            sys.exit(f"{run} is not finished ({len(missing)} jobs left): `make run` first")
        wall, cpu = min(resumed(run) for _ in range(args.repeat))
        print(figure("quickstart_resumed_s", wall, cpu_s=round(cpu, 2), jobs_skipped=len(jobs)))


if __name__ == "__main__":
    main()
