"""evaluation.analysis.reduction: deviation-preserving reduction by hand and on games whose
equilibria it keeps exactly."""

import math

import numpy as np
import pytest

from tradearena.evaluation.analysis.equilibria import deviation_gains, equilibria
from tradearena.evaluation.analysis.payoffs import PayoffTable
from tradearena.evaluation.analysis.reduction import dpr_profiles, reduce_dpr

HAWK_DOVE_RPS = [[0.0, -1.0, 2.0], [2.0, 0.0, -1.0], [-1.0, 2.0, 0.0]]  # interior (1/3, 1/3, 1/3)
COORDINATION = [[2.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 3.0]]


def test_reduced_payoffs_are_read_from_the_scaled_profiles():
    # N = 5, n = 3, c = 2: in (2, 1, 0) strategy 0 sees e_0 + 2 (1, 1, 0) = (3, 2, 0),
    # strategy 1 sees e_1 + 2 (2, 0, 0) = (4, 1, 0)
    full_counts = np.array(list(PayoffTable.profiles(5, 3)))
    code = full_counts @ [100, 10, 1]  # each full profile's payoff names it: U = 100 a + 10 b + c
    full = PayoffTable.from_arrays(full_counts, np.repeat(code[:, None], 3, axis=1))
    small = reduce_dpr(full, 3)
    assert small.p == 3 and small.complete
    assert small.payoffs[small.row([2, 1, 0])].tolist()[:2] == [320.0, 410.0]
    assert small.payoffs[small.row([1, 1, 1])].tolist() == [122.0, 212.0, 221.0]
    assert math.isnan(small.payoffs[small.row([2, 1, 0]), 2])


def test_only_the_needed_profiles_are_read():
    needed = dpr_profiles(61, 6, 3)
    assert len(needed) == 63 and (needed.sum(axis=1) == 61).all()
    full = PayoffTable.from_matrix(COORDINATION, 61)
    partial = PayoffTable.from_arrays(
        needed, full.payoffs[[full.row(n) for n in needed]], strategies=full.strategies
    )
    np.testing.assert_array_equal(reduce_dpr(partial, 6).payoffs, reduce_dpr(full, 6).payoffs)
    with pytest.raises(ValueError, match="DPR needs the profile 61-0-0 of 61 players"):
        reduce_dpr(PayoffTable.from_arrays(needed[1:], partial.payoffs[1:]), 6)
    with pytest.raises(ValueError, match="multiple of reduced - 1 = 7"):
        reduce_dpr(full, 8)


@pytest.mark.parametrize("matrix", [HAWK_DOVE_RPS, COORDINATION])
def test_a_game_linear_in_the_counts_keeps_its_equilibria(matrix):
    # pairwise payoffs U_s(N) = sum_j A[s, j] (N_j - [s = j]) / (N - 1) are linear in the
    # opponents' counts: the 61-player game reduced to 6 is the 6-player pairwise game, and
    # both have the deviation payoffs A x and the same equilibria
    full = PayoffTable.from_matrix(matrix, 61)
    small = reduce_dpr(full, 6)
    np.testing.assert_allclose(small.payoffs, PayoffTable.from_matrix(matrix, 6).payoffs)
    x = np.array([0.2, 0.3, 0.5])
    np.testing.assert_allclose(deviation_gains(small, x), deviation_gains(full, x), atol=1e-12)
    reduced_found = equilibria(small)
    full_found = equilibria(full, methods=("support",), grid=3)
    np.testing.assert_allclose([e.x for e in reduced_found], [e.x for e in full_found], atol=1e-8)
    for e in reduced_found:
        assert deviation_gains(full, e.x).max() < 1e-9  # an equilibrium of the full game
