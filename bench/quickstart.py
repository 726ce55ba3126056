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
existing ``--run``: the second alone), then a third, quickstart_dqn_sharpe: the DQN's row of
the table (README's) to every digit, with the processor and the kernels torch ran on, to
compare across machines (`tradearena.envs.cpu` pins the kernels: every x86-64 processor
with AVX2 should print the same row; ``--row-only`` on a finished ``--run`` prints this line
alone).

    python bench/quickstart.py [--run DIR] [--repeat N] [--resumed-only | --row-only]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from tradearena.envs.cpu import OPT_OUT, has_avx2, pin_cpu_arithmetic
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


def processor() -> str:
    """The processor's model name (Linux's /proc/cpuinfo, else the platform's word)."""
    cpuinfo = Path("/proc/cpuinfo")
    found = (
        re.search(r"^model name\s*:\s*(.+)$", cpuinfo.read_text(), re.M)
        if cpuinfo.exists()
        else None
    )
    return found.group(1).strip() if found else platform.processor()


def dqn_row(run: Path) -> str:
    """The DQN's row of the finished quickstart in ``run`` (its summary.csv) as one JSON line:
    the Sharpe ratio and its interval, the mean PnL ($ a session), the mean absolute inventory
    (shares), P(beat reference), the plateau's episode (None: not reached), with the
    processor, whether it has AVX2, and the kernel variables that processes started from
    this environment set (`tradearena.envs.cpu`; those of the run when it was started from
    it)."""
    row = pd.read_csv(run / "summary.csv").set_index("agent").loc["dqn"]
    columns = ("sharpe", "sharpe_low", "sharpe_high", "mean_pnl", "mean_pnl_low", "mean_pnl_high")
    figures = {key: float(row[key]) for key in (*columns, "exposure", "p_beat_reference")}
    pinned = pin_cpu_arithmetic(dict(os.environ))
    return json.dumps(
        {
            "name": "quickstart_dqn_sharpe",
            "value": figures.pop("sharpe"),
            "unit": "Sharpe",
            **figures,
            "plateau_episode": int(row["plateau_episode"]) if row["plateaued"] else None,
            "processor": processor(),
            "avx2": has_avx2(),
            "kernels": pinned or {OPT_OUT: os.environ.get(OPT_OUT, "native")},
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", type=Path, help="run directory (default: a temporary one)")
    parser.add_argument("--repeat", type=int, default=3, help="resumed runs (the best counts)")
    only = parser.add_mutually_exclusive_group()
    only.add_argument(
        "--resumed-only", action="store_true", help="time only resuming the finished --run"
    )
    only.add_argument(
        "--row-only", action="store_true", help="print only the DQN's row of the finished --run"
    )
    args = parser.parse_args()
    if args.row_only:
        if args.run is None or not (args.run / "summary.csv").exists():
            sys.exit(
                "--row-only needs --run DIR, a finished quickstart (`make run`: runs/quickstart)"
            )
        print(dqn_row(args.run))
        return
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
        print(dqn_row(run))


if __name__ == "__main__":
    main()
