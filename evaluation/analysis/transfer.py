"""Skill that carries over: agents trained in different markets, tested on one, seed by seed.

Runs with the same ``root_seed`` tested on the same market meet the same test sessions at
the same seed index (a seed's sessions are spawned from the root seed and its index), so a
metric of two training markets is compared seed by seed: the difference is taken per seed
and its interval is over seeds (a paired comparison: the sessions' luck cancels).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tradearena.evaluation.analysis.metrics import ConfidenceInterval, bootstrap_ci, summarize

__all__ = ["paired_difference", "seed_metric"]


def seed_metric(records: pd.DataFrame, metric: str, *, phase: str = "test") -> pd.DataFrame:
    """`summarize`'s ``metric`` (e.g. "mean_pnl", dollars per episode, or "sharpe") of each
    agent and seed over the episodes of ``phase``: a frame indexed by seed, one column per
    agent. ``records``: episode records with the columns ``agent``, ``seed``, ``phase`` and
    ``pnl`` (a run directory's, `evaluation.rundir.load_run`); clean condition only when the
    records have a ``condition``."""
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
