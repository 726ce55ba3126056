"""Expected payoffs of an empirical game at many population mixes: a complete table of p = 8
players over k = 4 strategies (165 profiles, random payoffs, seed 0) evaluated at 10,000 random
mixes in one `expected_payoffs` call. Prints one JSON line per weighting: egta_mixes_per_s."""

from __future__ import annotations

import json
import platform
import time

import numpy as np

from tradearena.evaluation.analysis.dynamics import WEIGHTINGS, expected_payoffs
from tradearena.evaluation.analysis.payoffs import PayoffTable


def game(p: int = 8, k: int = 4, seed: int = 0) -> PayoffTable:
    """The complete table of ``p`` players over ``k`` strategies with N(0, 1) payoffs."""
    rng = np.random.default_rng(seed)
    counts = np.array(list(PayoffTable.profiles(p, k)))
    payoffs = np.where(counts > 0, rng.standard_normal(counts.shape), np.nan)
    return PayoffTable.from_arrays(counts, payoffs)


def run(table: PayoffTable, mixes: np.ndarray, weighting: str) -> float:
    """Seconds for one call evaluating every mix."""
    start = time.perf_counter()
    expected_payoffs(table, mixes, weighting)
    return time.perf_counter() - start


def main() -> None:
    table = game()
    n = 10_000
    mixes = np.random.default_rng(1).dirichlet(np.ones(table.k), size=n)
    for weighting in WEIGHTINGS:
        run(table, mixes, weighting)  # builds the cached coefficients
        best = min(run(table, mixes, weighting) for _ in range(20))
        print(
            json.dumps(
                {
                    "name": "egta_mixes_per_s",
                    "value": round(n / best),
                    "unit": "mixes/s",
                    "rows": len(table),
                    "players": table.p,
                    "strategies": table.k,
                    "mixes": n,
                    "weighting": weighting,
                    "python": platform.python_version(),
                }
            )
        )


if __name__ == "__main__":
    main()
