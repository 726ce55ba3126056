"""evaluation.analysis.transfer: per-seed metrics and their paired differences."""

import numpy as np
import pandas as pd
import pytest

from tradearena.evaluation.analysis.metrics import bootstrap_ci
from tradearena.evaluation.analysis.transfer import paired_difference, seed_metric


def _records() -> pd.DataFrame:
    """Agent x seed x phase episodes with hand-chosen PnLs (dollars)."""
    rows = []
    pnls = {("q", 0): [1.0, 3.0], ("q", 1): [2.0, 2.0, 5.0], ("ref", 0): [4.0, 0.0]}
    for (agent, seed), values in pnls.items():
        rows += [{"agent": agent, "seed": seed, "phase": "test", "pnl": v} for v in values]
    rows.append({"agent": "q", "seed": 0, "phase": "train", "pnl": 100.0})
    return pd.DataFrame(rows)


@pytest.mark.filterwarnings(
    "ignore::tradearena.evaluation.analysis.metrics.DegenerateMetricWarning"
)
def test_seed_metric_is_the_test_episodes_metric_per_agent_and_seed():
    means = seed_metric(_records(), "mean_pnl")
    assert means.loc[0, "q"] == 2.0 and means.loc[1, "q"] == 3.0  # the train episode left out
    assert means.loc[0, "ref"] == 2.0 and np.isnan(means.loc[1, "ref"])
    sharpes = seed_metric(_records(), "sharpe")
    assert sharpes.loc[0, "q"] == pytest.approx(2.0 / np.sqrt(2.0))  # mean 2, sd (ddof 1) sqrt 2
    assert sharpes.loc[1, "q"] == pytest.approx(3.0 / np.sqrt(3.0))  # mean 3, sd sqrt 3


def test_paired_difference_takes_the_seeds_both_hold():
    a = pd.Series([1.0, 2.0, 3.0, np.nan], index=[0, 1, 2, 3])
    b = pd.Series([2.0, 2.0, 7.0, 1.0, 9.0], index=[0, 1, 2, 3, 4])
    interval = paired_difference(a, b)
    assert interval.estimate == pytest.approx(5.0 / 3.0)  # differences 1, 0, 4
    expected = bootstrap_ci(np.array([1.0, 0.0, 4.0]))
    assert (interval.low, interval.high) == (expected.low, expected.high)
    assert 0.0 <= interval.low < interval.estimate < interval.high <= 4.0
