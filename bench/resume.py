"""How long a finished run takes to answer when resumed: ``tradearena run
configs/quickstart.toml --out RUN --resume`` on a run directory whose jobs are all stored
(``make run`` makes runs/quickstart), as a user types it, in a process of its own.

Method: the command runs ``--repeat`` times; the figure is the best wall time (seconds),
with the CPU time (user + system, seconds) of that run beside it: a wall time well above the
CPU time means other processes held the cores. The run must skip every job (checked: the
command prints how many it skipped and the store holds them all). Target: under 3 s on a
quiet machine, from bytecode (`make` compiles it at install). Prints one JSON line,
quickstart_resumed_s.

    python bench/resume.py [--run runs/quickstart] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

from tradearena.evaluation.config import parse_config
from tradearena.evaluation.experiment import plan
from tradearena.evaluation.store import Store

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "quickstart.toml"


def resumed(run: Path) -> tuple[float, float]:
    """(wall s, CPU s) of one resumed run of the quickstart into ``run``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "tradearena.evaluation.cli", "run", str(CONFIG)]
        + ["--out", str(run), "--resume", "--no-progress"],
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0 or "resumed:" not in done.stdout:
        sys.exit(f"the resumed run failed or ran jobs:\n{done.stdout[-1000:]}{done.stderr[-1000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, default=Path("runs/quickstart"))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    jobs = {job.id for job in plan(parse_config(CONFIG.read_text(), complete=False))}
    database = args.run / "results.sqlite"
    if not database.exists():
        sys.exit(f"{args.run} holds no run: make one with `make run` first")
    with Store(database) as store:
        missing = jobs - store.finished()
    if missing:
        sys.exit(f"{args.run} is not finished ({len(missing)} jobs left): `make run` first")
    wall, cpu = min(resumed(args.run) for _ in range(args.repeat))
    detail = {
        "cpu_s": round(cpu, 2),
        "jobs_skipped": len(jobs),
        "bytecode_writes_off": os.environ.get("PYTHONDONTWRITEBYTECODE", "") != "",
        "python": platform.python_version(),
        "cores": os.cpu_count(),
    }
    line = {"name": "quickstart_resumed_s", "value": round(wall, 2), "unit": "s", **detail}
    print(json.dumps(line))


if __name__ == "__main__":
    main()
