"""Equilibrium analysis of empirical games. Prints one JSON line each:

- ``games_equilibria_s``: `equilibria` (both methods) of a complete table of p = 4 players over
  k = 4 strategies (35 profiles, N(0, 1) payoffs, seed 0);
- ``games_bootstrap_s``: 1,000 bootstrap resamples of its equilibria (standard errors 0.1),
  each mixed equilibrium tracked in every resample;
- ``games_dpr_s``: reduction of a 61-seat, 3-strategy table (the 63 profiles DPR reads) to 6
  players, then its equilibria and 1,000 resamples.
"""

from __future__ import annotations

import json
import platform
import time
from collections.abc import Callable

import numpy as np

from tradearena.evaluation.analysis.equilibria import equilibria
from tradearena.evaluation.analysis.payoffs import PayoffTable
from tradearena.evaluation.analysis.reduction import dpr_profiles, reduce_dpr
from tradearena.evaluation.analysis.resampling import bootstrap


def game(p: int, k: int, seed: int = 0, profiles: np.ndarray | None = None) -> PayoffTable:
    """A table of ``p`` players over ``k`` strategies (every profile, or ``profiles``) with
    N(0, 1) payoffs and standard errors 0.1."""
    rng = np.random.default_rng(seed)
    counts = np.array(list(PayoffTable.profiles(p, k))) if profiles is None else profiles
    present = counts > 0
    payoffs = np.where(present, rng.standard_normal(counts.shape), np.nan)
    return PayoffTable.from_arrays(counts, payoffs, stderr=np.where(present, 0.1, np.nan))


def seconds(work: Callable[[], object]) -> float:
    """Best of three wall-clock timings of ``work``."""
    best = np.inf
    for _ in range(3):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def analysis(table: PayoffTable) -> None:
    found = equilibria(table)
    bootstrap(table, [e.x for e in found], resamples=1000)


def main() -> None:
    small = game(4, 4)
    found = equilibria(small)
    mixtures = [e.x for e in found]
    many = game(61, 3, profiles=dpr_profiles(61, 6, 3))
    lines = [
        ("games_equilibria_s", seconds(lambda: equilibria(small)), small, len(found)),
        (
            "games_bootstrap_s",
            seconds(lambda: bootstrap(small, mixtures, resamples=1000)),
            small,
            len(found),
        ),
        ("games_dpr_s", seconds(lambda: analysis(reduce_dpr(many, 6))), many, None),
    ]
    for name, value, table, count in lines:
        record = {"name": name, "value": round(value, 3), "unit": "s", "players": table.p}
        record.update(strategies=table.k, rows=len(table), equilibria=count)
        print(json.dumps({**record, "python": platform.python_version()}))


if __name__ == "__main__":
    main()
