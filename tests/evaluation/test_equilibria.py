"""evaluation.analysis.equilibria: equilibria, regrets, deviation gains and welfare of games with
known answers."""

import math

import numpy as np
import pytest

from tradearena.evaluation.analysis.dynamics import expected_payoffs, rest_points
from tradearena.evaluation.analysis.equilibria import (
    MaxWelfare,
    deviation_gains,
    deviation_weights,
    equilibria,
    max_welfare,
    regret,
    welfare,
)
from tradearena.evaluation.analysis.payoffs import PayoffTable

RPS = [[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]]
COORDINATION = [[2.0, 0.0], [0.0, 1.0]]  # pure (1, 0), (0, 1); mixed at x_0 = 1/3
PRISONERS = [[3.0, 0.0], [5.0, 1.0]]  # cooperate, defect
HAWK_DOVE = [[-2.0, 2.0], [0.0, 1.0]]  # V = 2, C = 6: hawks at V / C = 1/3


def _mixtures(found):
    return np.array([e.x for e in found])


def test_rock_paper_scissors_has_only_the_centre():
    found = equilibria(PayoffTable.from_matrix(RPS))
    assert len(found) == 1
    np.testing.assert_allclose(found[0].x, [1 / 3, 1 / 3, 1 / 3], atol=1e-12)
    assert found[0].regret == pytest.approx(0.0, abs=1e-12)
    assert found[0].support == (0, 1, 2)
    assert found[0].methods == ("replicator", "support")  # the time average finds it
    assert found[0].welfare == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("p", [2, 4])
def test_coordination_game_has_two_pure_and_one_mixed(p):
    # f = A x for every p (pairwise game): 2 x_0 = x_1 at x_0 = 1/3
    found = equilibria(PayoffTable.from_matrix(COORDINATION, p))
    np.testing.assert_allclose(_mixtures(found), [[1, 0], [0, 1], [1 / 3, 2 / 3]], atol=1e-10)
    np.testing.assert_allclose([e.regret for e in found], 0.0, atol=1e-12)
    # welfare x . A x: 2, 1, and 2/9 + 4/9 * 1 = 2/3 at the mixture
    np.testing.assert_allclose([e.welfare for e in found], [2.0, 1.0, 2 / 3], atol=1e-10)
    # at the pure (0, 1), strategy 0 earns A[0, 1] = 0 against the mixture's 1: gain -1
    np.testing.assert_allclose(found[1].gains, [-1.0, 0.0], atol=1e-12)


def test_prisoners_dilemma_defects_and_cooperation_loses_one():
    table = PayoffTable.from_matrix(PRISONERS)
    (found,) = equilibria(table)
    np.testing.assert_array_equal(found.x, [0.0, 1.0])
    # cooperating against defectors earns A[C, D] = 0, defecting A[D, D] = 1
    np.testing.assert_allclose(found.gains, [-1.0, 0.0])
    assert found.regret == 0.0
    assert max_welfare(table) == MaxWelfare((2, 0), 3.0)


def test_hawk_dove_mixes_at_v_over_c():
    for method in ("replicator", "support"):
        (found,) = equilibria(PayoffTable.from_matrix(HAWK_DOVE, 3), methods=(method,))
        np.testing.assert_allclose(found.x, [1 / 3, 2 / 3], atol=1e-10)


def test_regret_of_a_non_equilibrium_by_hand():
    table = PayoffTable.from_matrix(RPS)
    # x = (1/2, 1/2, 0): f = A x = (-1/2, 1/2, 0), x . f = 0, so gains (-1/2, 1/2, 0)
    np.testing.assert_allclose(deviation_gains(table, [0.5, 0.5, 0.0]), [-0.5, 0.5, 0.0])
    assert regret(table, [0.5, 0.5, 0.0]) == pytest.approx(0.5)
    # hawk-dove, all hawks: f = (-2, 0), gain of dove 2
    assert regret(PayoffTable.from_matrix(HAWK_DOVE), [1.0, 0.0]) == pytest.approx(2.0)
    np.testing.assert_allclose(regret(table, [[0.5, 0.5, 0.0], [1 / 3] * 3]), [0.5, 0.0])


def test_three_player_table_by_hand():
    # p = 3, rows (3,0): U_A = 1; (2,1): 2, 0; (1,2): 3, 1; (0,3): U_B = 2. Against x = (x, 1-x)
    # the deviator to A meets 2 others: f_A = x^2 + 2 * 2 x (1 - x) + 3 (1 - x)^2,
    # f_B = 0 x^2 + 2 * 1 x (1 - x) + 2 (1 - x)^2. f_A - f_B = x^2 + 2 x (1 - x) + (1 - x)^2
    # = 1 > 0: A strictly dominates, the only equilibrium is all A, welfare U_A(3, 0) = 1.
    nan = np.nan
    table = PayoffTable.from_arrays(
        [[3, 0], [2, 1], [1, 2], [0, 3]], [[1, nan], [2, 0], [3, 1], [nan, 2]]
    )
    (found,) = equilibria(table)
    np.testing.assert_array_equal(found.x, [1.0, 0.0])
    np.testing.assert_allclose(found.gains, [0.0, -1.0])
    assert welfare(table, [1.0, 0.0]) == 1.0
    # welfare per row: 1, (2 * 2 + 0) / 3 = 4/3, (3 + 2 * 1) / 3 = 5/3, 2: all B is best
    assert max_welfare(table).counts == (0, 3)
    assert max_welfare(table).welfare == pytest.approx(2.0)


def test_deviation_weights_give_the_focal_payoffs():
    rng = np.random.default_rng(3)
    counts = np.array(list(PayoffTable.profiles(4, 3)))
    table = PayoffTable.from_arrays(counts, rng.standard_normal(counts.shape))
    x = np.array([0.2, 0.5, 0.3])
    weights = deviation_weights(table, x)
    f = np.nansum(weights * table.payoffs, axis=0)
    np.testing.assert_allclose(f, expected_payoffs(table, x, "focal"), rtol=1e-12)
    np.testing.assert_allclose(weights.sum(axis=0), 1.0)  # a distribution over the others


def test_every_equilibrium_of_a_random_game_has_zero_regret_and_is_a_rest_point():
    rng = np.random.default_rng(0)
    counts = np.array(list(PayoffTable.profiles(4, 4)))
    table = PayoffTable.from_arrays(counts, rng.standard_normal(counts.shape))
    found = equilibria(table)
    assert len(found) >= 1
    for e in found:
        assert 0.0 <= e.regret < 1e-9
        assert math.isclose(e.x.sum(), 1.0)
        np.testing.assert_allclose(e.gains[list(e.support)], 0.0, atol=1e-9)


def test_bad_methods_are_named():
    with pytest.raises(ValueError, match="methods"):
        equilibria(PayoffTable.from_matrix(RPS), methods=("fictitious",))


def test_the_tuyls_rest_point_is_not_the_nash_equilibrium():
    # tuyls, p = 2, A = diag(2, 1): f_0 = 2 x_0 / (2 - x_0), f_1 = x_1 / (2 - x_1); equal where
    # x_0^2 + 5 x_0 - 2 = 0, x_0 = (sqrt(33) - 5) / 2 = 0.3723; the Nash equilibrium is at 1/3
    table = PayoffTable.from_matrix(COORDINATION)
    (mixed,) = [r.x for r in rest_points(table, "tuyls") if len(r.support) == 2]
    assert mixed[0] == pytest.approx((math.sqrt(33) - 5) / 2, abs=1e-9)
    assert regret(table, mixed) == pytest.approx(
        2 * mixed[0] - (2 * mixed[0] ** 2 + mixed[1] ** 2), abs=1e-12
    )
    assert equilibria(table)[2].x[0] == pytest.approx(1 / 3, abs=1e-12)
