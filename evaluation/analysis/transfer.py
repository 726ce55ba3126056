"""Skill that carries over, and whether a market's verdicts carry over to a real day.

Runs with the same ``root_seed`` tested on the same market meet the same test sessions at
the same seed index (a seed's sessions are spawned from the root seed and its index), so a
metric of two training markets is compared seed by seed: the difference is taken per seed
and its interval is over seeds (a paired comparison: the sessions' luck cancels).

`predictivity` judges a market by the policies it ranks (sim-to-real predictivity, as
robotics measures a simulator): a zoo of fixed policies is tested in the market and on a
real day, and the market predicts well when it orders them as the real day does (Spearman's
rank correlation of their mean PnL) and when the policy it would pick earns on the real day
about what the real day's best does (the pick's regret).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from tradearena.evaluation.analysis.metrics import ConfidenceInterval, bootstrap_ci, summarize

__all__ = [
    "Predictivity",
    "agreeing",
    "paired_difference",
    "predictivity",
    "seed_metric",
    "spearman",
]


def seed_metric(records: pd.DataFrame, metric: str, *, phase: str = "test") -> pd.DataFrame:
    """`summarize`'s ``metric`` (e.g. "mean_pnl", dollars per episode, or "sharpe") of each agent
    and seed over the episodes of ``phase``: a frame indexed by seed, one column per agent.
    ``records``: episode records with the columns ``agent``, ``seed``, ``phase`` and ``pnl`` (a run
    directory's, `evaluation.experiment.rundir.load_run`); clean condition only when the records
    have a ``condition``."""
    rows = records[records["phase"] == phase]
    if "condition" in rows:
        rows = rows[rows["condition"] == "clean"]
    values = {
        key: summarize(episodes.to_numpy())[metric]
        for key, episodes in rows.groupby(["agent", "seed"], sort=True)["pnl"]
    }
    index = pd.MultiIndex.from_tuples(list(values), names=["agent", "seed"])
    return pd.Series(list(values.values()), index=index, dtype=float).unstack("agent")


def paired_difference(
    a: pd.Series, b: pd.Series, *, confidence: float = 0.95
) -> ConfidenceInterval:
    """The mean over seeds of ``b - a`` (per-seed values indexed by seed; only the seeds
    both hold, NaN left out), with the percentile bootstrap interval of that mean over seeds
    (`bootstrap_ci`, seed 0)."""
    both = a.index.intersection(b.index)
    differences = (b.loc[both] - a.loc[both]).to_numpy(dtype=np.float64)
    return bootstrap_ci(differences[~np.isnan(differences)], np.mean, confidence=confidence)


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's rank correlation of ``a`` and ``b`` (shape (n,); ties share their mean
    rank); NaN when either does not vary."""
    if len(a) < 2 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return math.nan
    return float(np.corrcoef(stats.rankdata(a), stats.rankdata(b))[0, 1])


@dataclass(frozen=True)
class Predictivity:
    """How a market's ranking of policies carries over to a real day: ``rho`` (`spearman`
    of the policies' mean PnL in the market and on the day) with its bootstrap interval over
    seeds (``low``, ``high``, 95%), ``pick`` (the index of the market's best policy),
    ``best`` (the real day's), and ``regret``: the real day's best mean PnL less the pick's
    (dollars per session; 0 when the market picks the real best)."""

    rho: float
    low: float
    high: float
    pick: int
    best: int
    regret: float


def predictivity(
    simulated: np.ndarray, real: np.ndarray, *, replicates: int = 2000, seed: int = 0
) -> Predictivity:
    """`Predictivity` of PnL arrays of shape (policies, seeds, sessions), dollars: each
    policy's mean over every session; the interval resamples the seeds (both sides' sessions
    of a seed index go together: common sessions across policies within a side)."""
    if simulated.shape[:2] != real.shape[:2]:
        raise ValueError(
            f"need one shape of policies and seeds, got {simulated.shape}, {real.shape}"
        )
    sim_means, real_means = simulated.mean(axis=(1, 2)), real.mean(axis=(1, 2))
    rho = spearman(sim_means, real_means)
    picked = np.random.default_rng(seed).integers(
        simulated.shape[1], size=(replicates, simulated.shape[1])
    )
    draws = _row_spearman(
        simulated.mean(axis=2)[:, picked].mean(axis=2).T,
        real.mean(axis=2)[:, picked].mean(axis=2).T,
    )
    finite = draws[np.isfinite(draws)]
    low, high = np.percentile(finite, [2.5, 97.5]) if len(finite) else (math.nan, math.nan)
    pick, best = int(np.argmax(sim_means)), int(np.argmax(real_means))
    regret = float(real_means[best] - real_means[pick])
    return Predictivity(rho, float(low), float(high), pick, best, regret)


def _row_spearman(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`spearman` of each row of ``a`` with the same row of ``b`` (shape (rows, n))."""
    ra, rb = stats.rankdata(a, axis=1), stats.rankdata(b, axis=1)
    ra -= ra.mean(axis=1, keepdims=True)
    rb -= rb.mean(axis=1, keepdims=True)
    norm = np.sqrt((ra * ra).sum(axis=1) * (rb * rb).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(norm > 0, (ra * rb).sum(axis=1) / norm, np.nan)


def agreeing(columns: Mapping[str, np.ndarray]) -> dict[str, list[str]]:
    """The keys of ``columns`` grouped where their arrays are equal (NaN equal to NaN): the
    first key of each group -> every key of it, in order (queue models whose verdicts or
    PnL agree, shown once)."""
    groups: dict[str, list[str]] = {}
    for key, values in columns.items():
        same = (g for g in groups if np.array_equal(columns[g], values, equal_nan=True))
        groups.setdefault(next(same, key), []).append(key)
    return groups
