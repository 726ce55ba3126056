"""evaluation.analysis.resampling: bootstrap intervals of equilibria, on tables with known
noise."""

import numpy as np
import pandas as pd
import pytest

from tradearena.evaluation.analysis.equilibria import equilibria, regret
from tradearena.evaluation.analysis.payoffs import PayoffTable, profile_key
from tradearena.evaluation.analysis.resampling import bootstrap, regret_variance, resampled_payoffs

HAWK_DOVE = np.array([[-2.0, 2.0], [0.0, 1.0]])  # hawks at 1/3
COORDINATION = np.array([[2.0, 0.0], [0.0, 1.0]])


def _records(matrix: np.ndarray, n: int, sigma: float, rng: np.random.Generator) -> pd.DataFrame:
    """``n`` observations per cell of the 2-player game ``matrix``, normal noise ``sigma``."""
    exact = PayoffTable.from_matrix(matrix)
    rows = []
    for counts, payoffs in zip(exact.counts, exact.payoffs):
        for i, strategy in enumerate(exact.strategies):
            if counts[i]:
                for rep, noise in enumerate(rng.normal(0.0, sigma, n)):
                    rows.append((profile_key(counts), strategy, rep, payoffs[i] + noise))
    return pd.DataFrame(rows, columns=["profile", "strategy", "repetition", "payoff"])


def _table(records: pd.DataFrame) -> PayoffTable:
    return PayoffTable.from_records(records, strategies=["s0", "s1"])


def test_zero_standard_errors_give_point_intervals():
    exact = PayoffTable.from_matrix(COORDINATION)
    table = PayoffTable.from_arrays(
        exact.counts, exact.payoffs, stderr=np.where(exact.counts > 0, 0.0, np.nan)
    )
    found = equilibria(table)
    result = bootstrap(table, [e.x for e in found], resamples=20)
    assert result.source == "stderr"
    np.testing.assert_allclose(result.regret_interval, 0.0, atol=1e-12)
    np.testing.assert_allclose(result.welfare_interval[:, 0], [2.0, 1.0, 2 / 3], atol=1e-12)
    np.testing.assert_allclose(result.welfare_interval[:, 1], [2.0, 1.0, 2 / 3], atol=1e-12)
    np.testing.assert_array_equal(result.survival, [1.0, 1.0, 1.0])
    np.testing.assert_allclose(result.mixture_interval[2, 0], [1 / 3, 1 / 3], atol=1e-10)


def test_stderr_draws_have_the_cells_standard_errors():
    exact = PayoffTable.from_matrix(HAWK_DOVE)
    stderr = np.where(exact.counts > 0, 0.5, np.nan)
    table = PayoffTable.from_arrays(exact.counts, exact.payoffs, stderr=stderr)
    payoffs, source = resampled_payoffs(table, 20000, seed=1)
    present = exact.counts > 0
    assert source == "stderr" and payoffs.shape == (20000, 3, 2)
    np.testing.assert_allclose(payoffs.std(axis=0)[present], 0.5, rtol=0.03)
    np.testing.assert_allclose(payoffs.mean(axis=0)[present], exact.payoffs[present], atol=0.02)
    assert np.isnan(payoffs[:, ~present]).all()


def test_record_resamples_stay_within_each_cells_values():
    records = _records(HAWK_DOVE, 5, 1.0, np.random.default_rng(0))
    table = _table(records)
    payoffs, source = resampled_payoffs(table, 500, records=records, seed=2)
    assert source == "records"
    for (key, strategy), values in records.groupby(["profile", "strategy"])["payoff"]:
        r, i = table.row([int(n) for n in key.split("-")]), table.strategies.index(strategy)
        assert values.min() - 1e-12 <= payoffs[:, r, i].min()
        assert payoffs[:, r, i].max() <= values.max() + 1e-12
    # a cell of identical values never moves
    same = records.assign(payoff=np.where(records["profile"] == "2-0", 7.0, records["payoff"]))
    payoffs, _ = resampled_payoffs(_table(same), 50, records=same)
    np.testing.assert_array_equal(payoffs[:, table.row([2, 0]), 0], 7.0)


def test_records_that_do_not_average_to_the_table_are_named():
    records = _records(HAWK_DOVE, 3, 1.0, np.random.default_rng(0))
    table = _table(records)
    shifted = records.assign(payoff=records["payoff"] + 1.0)
    with pytest.raises(ValueError, match="average"):
        resampled_payoffs(table, 10, records=shifted)


def test_noisy_mixed_equilibrium_is_tracked_near_the_true_share():
    records = _records(HAWK_DOVE, 200, 0.5, np.random.default_rng(4))
    table = _table(records)
    (found,) = equilibria(table)
    result = bootstrap(table, [found.x], resamples=300, records=records, seed=5)
    low, high = result.mixture_interval[0, 0]
    assert low < 1 / 3 < high and high - low < 0.1
    assert result.survival[0] == 1.0  # interior of a 2-strategy game: always an equilibrium
    np.testing.assert_allclose(result.regret[0], 0.0, atol=0.2)


def test_regret_intervals_cover_the_true_regret_at_their_rate():
    # x = (0.6, 0.4) is no equilibrium of hawk-dove: f = A x = (-0.4, 0.4), x . f = -0.08,
    # regret 0.48. Over 200 noisy tables the 90% intervals should hold it about 180 times.
    x = np.array([0.6, 0.4])
    truth = regret(PayoffTable.from_matrix(HAWK_DOVE), x)
    assert truth == pytest.approx(0.48)
    rng = np.random.default_rng(6)
    covered = 0
    draws = 200
    for draw in range(draws):
        records = _records(HAWK_DOVE, 30, 1.0, rng)
        table = _table(records)
        result = bootstrap(
            table, [x], resamples=400, records=records, level=0.9, track=False, seed=draw
        )
        low, high = result.regret_interval[0]
        covered += low <= truth <= high
    assert np.isnan(result.survival).all() and result.mixtures is None
    # binomial(200, 0.9): 99.9% of draws fall in [168, 192]
    assert 168 <= covered <= 192


def test_regret_variance_by_hand():
    # hawk-dove, p = 2, x = (0.6, 0.4). Weights: W[(2,0), 0] = x_0, W[(1,1), 0] = x_1,
    # W[(1,1), 1] = x_0, W[(0,2), 1] = x_1. Slopes W ([i = j] - x_i), cells (2,0),0; (1,1),0;
    # (1,1),1; (0,2),1: for j = 0: 0.24, 0.16, -0.24, -0.16; for j = 1: -0.36, -0.24, 0.36,
    # 0.24. Standard errors 1, 2, 1, 1: row (2,0): 0.24^2 + 0.36^2 = 0.1872; row (1,1):
    # 0.32^2 + 0.24^2 + 0.48^2 + 0.36^2 = 0.52; row (0,2): 0.16^2 + 0.24^2 = 0.0832
    exact = PayoffTable.from_matrix(HAWK_DOVE)
    stderr = [[1.0, np.nan], [2.0, 1.0], [np.nan, 1.0]]
    table = PayoffTable.from_arrays(exact.counts, exact.payoffs, stderr=stderr)
    terms = np.array([0.1872, 0.52, 0.0832])
    np.testing.assert_allclose(regret_variance(table, [0.6, 0.4]), terms / terms.sum())
    # all hawks: the dove's gain U_dove(1,1) - U_hawk(2,0), two cells of standard error 1
    np.testing.assert_allclose(regret_variance(table, [1.0, 0.0]), [0.5, 0.5, 0.0])
