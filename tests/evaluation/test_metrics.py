"""evaluation.analysis.metrics (and .summary's tables): hand-computed values, degenerate data,
input errors, bootstrap, tables."""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tradearena.evaluation.analysis.metrics import (
    ConfidenceInterval,
    DegenerateMetricWarning,
    bootstrap_ci,
    cvar,
    hit_rate,
    max_drawdown,
    sharpe,
    sortino,
    summarize,
    total_pnl,
)
from tradearena.evaluation.analysis.summary import summary_table

IGNORE_DEGENERATE = "ignore::tradearena.evaluation.analysis.metrics.DegenerateMetricWarning"

# cvar tests: sorted -5, -3, -1, 0, 1, 2, 3, 4
EIGHT = [-5.0, 3.0, -1.0, 2.0, 0.0, 4.0, -3.0, 1.0]


def test_sharpe_hand_values():
    # mean([1, 2, 3, 4]) = 2.5; deviations -1.5, -0.5, 0.5, 1.5; squares sum to 5
    # std(ddof=1) = sqrt(5 / 3) = 1.2909944; sharpe = 2.5 / 1.2909944 = 1.9364917
    assert sharpe([1, 2, 3, 4]) == pytest.approx(1.9364917, rel=1e-7)
    # annualised: 1.9364917 * sqrt(252) = sqrt(3.75 * 252) = sqrt(945) = 30.7408523
    assert sharpe([1, 2, 3, 4], periods_per_year=252) == pytest.approx(30.7408523, rel=1e-7)
    # risk_free 0.5: excess 0.5 .. 3.5, mean 2.0, same std: 2.0 / 1.2909944 = 1.5491933
    assert sharpe([1, 2, 3, 4], risk_free=0.5) == pytest.approx(1.5491933, rel=1e-7)
    # a loss-making run: mean(-1, -3) = -2, std = 2 / sqrt(2) = 1.4142136 -> -1.4142136
    assert sharpe(np.array([-1.0, -3.0])) == pytest.approx(-1.4142136, rel=1e-7)
    assert sharpe(pd.Series([1, 2, 3, 4])) == sharpe([1, 2, 3, 4])


@pytest.mark.parametrize(
    ("returns", "reason"),
    [
        ([3.0, 3.0, 3.0], "zero variance"),
        ([0.0, 0.0], "zero variance"),
        ([0.1 + 0.2, 0.3], "zero variance"),  # 0.30000000000000004 vs 0.3: round-off, not spread
        ([5.0], "at least 2 returns, got 1"),
        ([], "at least 2 returns, got 0"),
    ],
)
def test_sharpe_degenerate_is_nan_with_warning(returns, reason):
    with pytest.warns(DegenerateMetricWarning, match=f"sharpe: .*{reason}"):
        assert math.isnan(sharpe(returns))


def test_sortino_hand_values():
    # returns 2, -1, 3, -2: mean 0.5; min(r - 0, 0) = 0, -1, 0, -2; squares 0, 1, 0, 4
    # dd = sqrt(5 / 4) = 1.1180340 (over all 4 episodes); sortino = 0.5 / 1.1180340 = 0.4472136
    returns = [2.0, -1.0, 3.0, -2.0]
    assert sortino(returns) == pytest.approx(0.4472136, rel=1e-7)
    # target 1: r - 1 = 1, -2, 2, -3; squares 0, 4, 0, 9; dd = sqrt(13 / 4) = 1.8027756
    # sortino = 0.5 / 1.8027756 = 0.2773501 (the numerator keeps risk_free = 0)
    assert sortino(returns, target=1.0) == pytest.approx(0.2773501, rel=1e-7)
    # risk_free 0.5: mean(r - 0.5) = 0, dd unchanged
    assert sortino(returns, risk_free=0.5) == 0.0
    # 4 episodes a year: 0.4472136 * sqrt(4) = 0.8944272
    assert sortino(returns, periods_per_year=4) == pytest.approx(0.8944272, rel=1e-7)


def test_sortino_without_downside_is_nan_with_warning():
    with pytest.warns(DegenerateMetricWarning, match="sortino: no return is below the target"):
        assert math.isnan(sortino([1.0, 2.0, 0.0]))  # 0 is not below the target 0
    with pytest.warns(DegenerateMetricWarning, match="sortino: needs at least 1 return"):
        assert math.isnan(sortino([]))


def test_max_drawdown_hand_values():
    # cumsum of 1, -2, 3, -5, 1 is 1, -1, 2, -3, -2: from the peak 2 to the trough -3 is 5
    assert max_drawdown([1, -2, 3, -5, 1]) == 5.0
    # the start at 0 is a peak: path 0, -1, -3 falls 3
    assert max_drawdown([-1, -2]) == 3.0
    assert max_drawdown([1, 2, 0]) == 0.0  # path 0, 1, 3, 3: never falls
    assert max_drawdown([]) == 0.0


def test_cvar_hand_values():
    # ceil(0.25 * 8) = 2 worst: (-5 + -3) / 2 = -4
    assert cvar(EIGHT, level=0.25) == -4.0
    # ceil(0.3 * 8) = ceil(2.4) = 3 worst: (-5 - 3 - 1) / 3 = -3
    assert cvar(EIGHT, level=0.3) == -3.0
    # ceil(0.05 * 8) = 1 worst: -5
    assert cvar(EIGHT) == -5.0
    # 0.1 * 30 is 3.0000000000000004 in floats but means 3: worst of -10 .. 19 are -10, -9, -8
    assert cvar(np.arange(30.0) - 10, level=0.1) == -9.0
    with pytest.warns(DegenerateMetricWarning, match="cvar: needs at least 1 return"):
        assert math.isnan(cvar([]))


def test_total_pnl_and_hit_rate():
    assert total_pnl([1.0, -2.0, 3.5]) == 2.5
    assert total_pnl([]) == 0.0
    assert hit_rate([1.0, 0.0, -1.0, 2.0]) == 0.5  # 2 of 4 above 0; 0 is not a hit
    with pytest.warns(DegenerateMetricWarning, match="hit_rate: needs at least 1 return"):
        assert math.isnan(hit_rate([]))


def test_summarize_hand_values():
    # returns 2, -1, 3, -2: mean 0.5; deviations 1.5, -1.5, 2.5, -2.5; squares sum to 17
    # std(ddof=1) = sqrt(17 / 3) = 2.3804761; sharpe = 0.5 / 2.3804761 = 0.2100420
    # path 0, 2, 1, 4, 2: drawdown 4 - 2 = 2; cvar_5: ceil(0.05 * 4) = 1 worst = -2
    summary = summarize([2.0, -1.0, 3.0, -2.0])
    expected = {
        "sharpe": 0.2100420,
        "sortino": 0.4472136,
        "max_drawdown": 2.0,
        "cvar_5": -2.0,
        "total_pnl": 2.0,
        "mean_pnl": 0.5,
        "std_pnl": 2.3804761,
        "hit_rate": 0.5,
        "episodes": 4,
    }
    assert list(summary) == list(expected)
    assert summary == pytest.approx(expected, rel=1e-6)
    # periods_per_year reaches both ratios: sharpe * sqrt(4) = 0.4200840
    assert summarize([2.0, -1.0, 3.0, -2.0], periods_per_year=4)["sharpe"] == pytest.approx(
        0.4200840, rel=1e-6
    )


@pytest.mark.filterwarnings(IGNORE_DEGENERATE)
def test_summarize_one_episode():
    summary = summarize([-3.0])
    assert math.isnan(summary["sharpe"]) and math.isnan(summary["std_pnl"])
    assert summary["sortino"] == -1.0  # -3 / sqrt(9)
    assert summary["max_drawdown"] == 3.0 and summary["cvar_5"] == -3.0
    assert summary["episodes"] == 1


def test_bootstrap_ci_covers_the_true_mean():
    # 200 normal samples of 50 (mean 1, sd 2): the 95% percentile interval should cover the
    # mean about 95% of the time (a little less, as the percentile bootstrap undercovers)
    rng = np.random.default_rng(2024)
    intervals = [
        bootstrap_ci(rng.normal(1.0, 2.0, size=50), n_resamples=500, seed=i) for i in range(200)
    ]
    coverage = np.mean([ci.low < 1.0 < ci.high for ci in intervals])
    assert 0.88 <= coverage <= 0.99
    # widths near the normal-theory 2 * 1.96 * 2 / sqrt(50) = 1.1087
    assert np.mean([ci.high - ci.low for ci in intervals]) == pytest.approx(1.1087, rel=0.1)


def test_bootstrap_ci_is_reproducible_with_the_seed():
    sample = np.random.default_rng(0).normal(size=40)
    first = bootstrap_ci(sample, seed=7)
    assert first == bootstrap_ci(sample, seed=7)
    assert first == bootstrap_ci(sample, seed=np.random.default_rng(7))
    assert first != bootstrap_ci(sample, seed=8)
    assert first.estimate == pytest.approx(sample.mean(), rel=1e-12)
    assert first.low < first.estimate < first.high
    narrow = bootstrap_ci(sample, confidence=0.5, seed=7)
    assert first.low < narrow.low < narrow.high < first.high


@pytest.mark.parametrize("statistic", [np.mean, np.median])
def test_bootstrap_ci_vectorised_equals_loop(statistic):
    # np.mean and np.median take axis=, so they see all resamples at once; a lambda does not
    sample = np.random.default_rng(1).exponential(size=30)
    vectorised = bootstrap_ci(sample, statistic, seed=3)
    looped = bootstrap_ci(sample, lambda values: statistic(values), seed=3)
    assert (vectorised.low, vectorised.high) == pytest.approx((looped.low, looped.high))
    assert vectorised.estimate == looped.estimate


def test_bootstrap_ci_other_statistic_and_constant_sample():
    median = bootstrap_ci([1.0, 2.0, 10.0], np.median)
    assert median.estimate == 2.0
    assert 1.0 <= median.low <= median.high <= 10.0
    assert bootstrap_ci([4.0, 4.0, 4.0]) == ConfidenceInterval(4.0, 4.0, 4.0)


def test_bootstrap_ci_drops_nan_with_warning():
    with pytest.warns(DegenerateMetricWarning, match="dropped 1 NaN of 3 values"):
        interval = bootstrap_ci([1.0, np.nan, 3.0])
    assert interval == bootstrap_ci([1.0, 3.0])


def test_bootstrap_ci_one_value_has_nan_bounds():
    with pytest.warns(DegenerateMetricWarning, match="one value has no spread"):
        interval = bootstrap_ci([2.5])
    assert math.isnan(interval.low) and math.isnan(interval.high)
    assert interval.estimate == 2.5
    with (
        pytest.warns(DegenerateMetricWarning, match="dropped 1 NaN of 1 values"),
        pytest.warns(DegenerateMetricWarning, match="no values"),
    ):
        interval = bootstrap_ci([np.nan])
    assert all(math.isnan(bound) for bound in (interval.low, interval.high, interval.estimate))


def _episodes(agent, seed, pnls):
    return pd.DataFrame({"agent": agent, "seed": seed, "episode": range(len(pnls)), "pnl": pnls})


TABLE = pd.concat(
    [
        # two-episode seeds: mean (a + b) / 2, std(ddof=1) = |a - b| / sqrt(2)
        _episodes("b", 0, [1.0, -1.0]),  # sharpe 0 / 1.4142136 = 0
        _episodes("b", 1, [1.0, -3.0]),  # sharpe -1 / 2.8284271 = -0.3535534
        _episodes("a", 0, [3.0, -1.0]),  # sharpe 1 / 2.8284271 = 0.3535534
        _episodes("a", 1, [5.0, -1.0]),  # sharpe 2 / 4.2426407 = 0.4714045
    ],
    ignore_index=True,
)


def test_summary_table_hand_values():
    table = summary_table(TABLE, by="agent")
    metrics = ["sharpe", "sortino", "max_drawdown", "cvar_5", "total_pnl", "mean_pnl"]
    metrics += ["std_pnl", "hit_rate"]
    bounds = [f"{m}{suffix}" for m in metrics for suffix in ("", "_low", "_high")]
    assert list(table.columns) == ["agent", *bounds, "episodes", "seeds"]
    assert list(table["agent"]) == ["a", "b"]  # by sharpe, descending
    a, b = (row for _, row in table.iterrows())

    # mean over seeds: a (0.3535534 + 0.4714045) / 2 = 0.4124789, b (0 - 0.3535534) / 2
    # with two seeds the 2.5% and 97.5% resample means are the two per-seed values
    assert (a.sharpe, a.sharpe_low, a.sharpe_high) == pytest.approx(
        (0.4124789, 0.3535534, 0.4714045), rel=1e-6
    )
    assert (b.sharpe, b.sharpe_low, b.sharpe_high) == pytest.approx(
        (-0.1767767, -0.3535534, 0.0), abs=1e-7
    )
    # sortino: dd = sqrt(1 / 2) = 0.7071068 in every seed; a: 1 / dd = 1.4142136, 2 / dd
    assert a.sortino == pytest.approx((1.4142136 + 2.8284271) / 2, rel=1e-6)
    # drawdowns a: 1, 1; b: 1 (path 0, 1, 0), 3 (path 0, 1, -2)
    assert (a.max_drawdown, b.max_drawdown, b.max_drawdown_high) == (1.0, 2.0, 3.0)
    assert (a.cvar_5, b.cvar_5) == (-1.0, -2.0)  # worst of two: a -1, -1; b -1, -3
    assert (a.total_pnl, b.total_pnl) == (3.0, -1.0)  # a (2 + 4) / 2, b (0 - 2) / 2
    assert (a.mean_pnl, b.mean_pnl) == (1.5, -0.5)
    assert (a.hit_rate, a.hit_rate_low, a.hit_rate_high) == (0.5, 0.5, 0.5)
    assert (a.episodes, a.seeds, b.episodes, b.seeds) == (4, 2, 4, 2)


def test_summary_table_groups_by_several_columns_and_single_seed():
    frame = TABLE.assign(condition="clean")
    table = summary_table(frame, by=["agent", "condition"])
    assert list(table.columns[:2]) == ["agent", "condition"]
    assert table["sharpe"].tolist() == pytest.approx([0.4124789, -0.1767767], rel=1e-6)
    with pytest.warns(DegenerateMetricWarning, match="one value has no spread"):
        single = summary_table(TABLE[TABLE["seed"] == 1], by="agent")
    # per-seed values pass through: a seed 1 0.4714045, b seed 1 -0.3535534
    assert single["sharpe"].tolist() == pytest.approx([0.4714045, -0.3535534], rel=1e-6)
    assert single["sharpe_low"].isna().all() and single["sharpe_high"].isna().all()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: sharpe([[1.0, 2.0], [3.0, 4.0]]), r"returns must be 1-D, got shape \(2, 2\)"),
        (lambda: sharpe(5.0), r"returns must be 1-D, got shape \(\)"),
        (lambda: sharpe(["a", "b"]), "returns must be a 1-D array of numbers"),
        (lambda: sharpe([1.0, np.nan]), "returns must be finite, got nan at index 1"),
        (lambda: max_drawdown([np.inf]), "returns must be finite, got inf at index 0"),
        (lambda: sharpe([1.0, 2.0], risk_free=np.nan), "risk_free must be a finite number"),
        (lambda: sharpe([1.0, 2.0], periods_per_year=0), "periods_per_year must be a number > 0"),
        (lambda: sortino([1.0], target="0"), "target must be a finite number"),
        (lambda: cvar([1.0], level=0.0), r"level must be in \(0, 1\), got 0.0"),
        (lambda: cvar([1.0], level=1), r"level must be in \(0, 1\), got 1"),
        (lambda: bootstrap_ci([1.0, np.inf]), "values must be finite or NaN, got inf"),
        (lambda: bootstrap_ci([1.0], "mean"), "statistic must be callable"),
        (lambda: bootstrap_ci([1.0], confidence=95), r"confidence must be in \(0, 1\)"),
        (lambda: bootstrap_ci([1.0], n_resamples=0), "n_resamples must be an integer >= 1"),
        (lambda: bootstrap_ci([1.0], seed=-1), "seed must be an integer >= 0"),
        (lambda: summary_table(TABLE.values, by="agent"), "df must be a pandas DataFrame"),
        (lambda: summary_table(TABLE, by=[]), "by must name at least one column"),
        (lambda: summary_table(TABLE, by="seed"), "by must not include 'seed'"),
        (lambda: summary_table(TABLE, by="agent", value="reward"), r"missing the columns \['r"),
        (lambda: summary_table(TABLE.drop(columns="seed"), by="agent"), r"columns \['seed'\]"),
        (lambda: summary_table(TABLE.iloc[:0], by="agent"), "df has no rows"),
        (lambda: summary_table(TABLE, by="agent", confidence=0), "confidence must be in"),
        (
            lambda: summary_table(TABLE.assign(agent=None), by="agent"),
            r"missing values in the key columns \['agent'\]",
        ),
        (
            lambda: summary_table(TABLE.assign(pnl=np.nan), by="agent"),
            r"df\['pnl'\] must be finite, got nan at index 0",
        ),
    ],
)
def test_errors_name_the_parameter(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.filterwarnings(IGNORE_DEGENERATE)
@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(-(10**8), 10**8), min_size=2, max_size=40),
    st.floats(1e-3, 1e3),
)
def test_sharpe_is_invariant_to_positive_scaling(cents, factor):
    # returns in whole cents up to $1M, so any spread is far above round-off
    returns = np.array(cents) / 100
    # equal_nan: constant returns are NaN at every scale
    np.testing.assert_allclose(sharpe(factor * returns), sharpe(returns), rtol=1e-6)


@pytest.mark.filterwarnings(IGNORE_DEGENERATE)
@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.floats(allow_nan=False, allow_infinity=False), max_size=40),
    st.none() | st.floats(1e-3, 1e6),
)
def test_sharpe_is_never_infinite(returns, periods_per_year):
    # any finite floats, from subnormal to 1.8e308 and near-constant runs
    value = sharpe(returns, periods_per_year=periods_per_year)
    assert math.isnan(value) or math.isfinite(value)
