"""evaluation.analysis.roles: role-symmetric games with known equilibria."""

from itertools import product

import numpy as np
import pytest

from tradearena.evaluation.analysis.equilibria import deviation_gains
from tradearena.evaluation.analysis.payoffs import PayoffTable
from tradearena.evaluation.analysis.roles import (
    RoleTable,
    role_equilibria,
    role_gains,
    role_regret,
    role_welfare,
)


def _bimatrix(row: list, column: list, names=("row", "column")) -> RoleTable:
    """One player per role: ``row[i][j]`` and ``column[i][j]`` when row plays i, column j."""
    counts, payoffs = [], []
    for i, j in product(range(2), range(2)):
        counts.append([*np.eye(2)[i], *np.eye(2)[j]])
        payoffs.append(
            [row[i][j] if c == i else np.nan for c in range(2)]
            + [column[i][j] if c == j else np.nan for c in range(2)]
        )
    roles = {names[0]: (1, ["a", "b"]), names[1]: (1, ["a", "b"])}
    return RoleTable.from_arrays(roles, counts, payoffs)


PENNIES = _bimatrix([[1, -1], [-1, 1]], [[-1, 1], [1, -1]], ("even", "odd"))
SEXES = _bimatrix([[3, 0], [0, 2]], [[2, 0], [0, 3]])


def test_matching_pennies_between_roles_mixes_half_half():
    (found,) = role_equilibria(PENNIES)
    np.testing.assert_allclose(found.x, [0.5, 0.5, 0.5, 0.5], atol=1e-10)
    np.testing.assert_allclose(found.regret, [0.0, 0.0], atol=1e-12)
    assert found.methods == ("replicator", "support")


def test_battle_of_the_sexes_has_two_pure_and_the_analytic_mixed_equilibrium():
    # row mixes p on a with 2 p = 3 (1 - p): p = 3/5; column q on a with 3 q = 2 (1 - q): 2/5
    found = role_equilibria(SEXES)
    np.testing.assert_allclose(
        [e.x for e in found], [[1, 0, 1, 0], [0, 1, 0, 1], [0.6, 0.4, 0.4, 0.6]], atol=1e-10
    )
    for e in found:
        np.testing.assert_allclose(e.regret, 0.0, atol=1e-12)


def test_regret_per_role_by_hand():
    # both on heads: even matches (gain of tails 1 - 1 = -2), odd would gain 1 - (-1) = 2
    np.testing.assert_allclose(role_gains(PENNIES, [1, 0, 1, 0]), [0, -2, 0, 2])
    np.testing.assert_allclose(role_regret(PENNIES, [1, 0, 1, 0]), [0, 2])
    # row on (1/2, 1/2) against column on a: row's f = (3, 0), mean 1.5, gains (1.5, -1.5)
    np.testing.assert_allclose(role_gains(SEXES, [0.5, 0.5, 1, 0])[:2], [1.5, -1.5])
    # welfare at the mixed equilibrium: row 3 * 3/5 * 2/5 + 2 * 2/5 * 3/5 = 1.2, column too
    np.testing.assert_allclose(role_welfare(SEXES, [0.6, 0.4, 0.4, 0.6]), [1.2, 1.2])


def test_one_role_is_the_symmetric_game():
    symmetric = PayoffTable.from_matrix([[2.0, 0.0], [0.0, 1.0]], 3)
    table = RoleTable.from_arrays({"all": (3, ["s0", "s1"])}, symmetric.counts, symmetric.payoffs)
    x = np.array([0.3, 0.7])
    np.testing.assert_allclose(role_gains(table, x), deviation_gains(symmetric, x), rtol=1e-12)
    found = role_equilibria(table)
    np.testing.assert_allclose([e.x for e in found], [[1, 0], [0, 1], [1 / 3, 2 / 3]], atol=1e-10)


def test_two_makers_and_one_taker_by_hand():
    # makers M (2 players: quote q or wait w), one taker T (take t or skip s). A maker quoting
    # earns 2 / (number quoting) if the taker takes, else -1; waiting earns 0. The taker earns
    # 1 per quoting maker when taking, skipping 0.5. With the makers quoting at share m and
    # the taker taking at share t, a deviating maker earns from quoting
    # t * (m * 1 + (1 - m) * 2) - (1 - t), the taker earns 2 m from taking.
    counts, payoffs = [], []
    for quoting, take in product(range(3), range(2)):
        counts.append([quoting, 2 - quoting, take, 1 - take])
        maker = (2 / quoting if take else -1.0) if quoting else np.nan
        payoffs.append(
            [
                maker if quoting else np.nan,
                0.0 if quoting < 2 else np.nan,
                quoting if take else np.nan,
                np.nan if take else 0.5,
            ]
        )
    table = RoleTable.from_arrays(
        {"maker": (2, ["q", "w"]), "taker": (1, ["t", "s"])}, counts, payoffs
    )
    m, t = 0.5, 0.4
    quote = t * (m + 2 * (1 - m)) - (1 - t)  # 0.4 * 1.5 - 0.6 = 0
    take = 2 * m  # 1, skip 0.5
    mean_maker = m * quote
    mean_taker = t * take + (1 - t) * 0.5
    np.testing.assert_allclose(
        role_gains(table, [m, 1 - m, t, 1 - t]),
        [quote - mean_maker, -mean_maker, take - mean_taker, 0.5 - mean_taker],
        atol=1e-12,
    )
    # equilibria: all quote and take (quoting earns 3 - 1 - 1 = 1 > 0, taking 2 > 0.5); all
    # wait and skip (quoting earns -1, taking 0); and the mix where the taker is indifferent,
    # 2 m = 0.5, m = 1/4, and the makers are, t (3 - m) = 1, t = 4/11
    found = role_equilibria(table)
    np.testing.assert_allclose(
        [e.x for e in found], [[1, 0, 1, 0], [0, 1, 0, 1], [0.25, 0.75, 4 / 11, 7 / 11]], atol=1e-9
    )
    for e in found:
        np.testing.assert_allclose(e.regret, 0.0, atol=1e-9)


def test_a_bad_role_declaration_is_named():
    with pytest.raises(ValueError, match="role 'maker'"):
        RoleTable.from_arrays({"maker": (0, ["q"])}, [[0]], [[1.0]])
    with pytest.raises(ValueError, match="players in the roles"):
        RoleTable.from_arrays({"maker": (2, ["q", "w"])}, [[1, 0]], [[1.0, np.nan]])


def test_frame_round_trip():
    frame = SEXES.to_frame()
    assert list(frame.columns[:4]) == ["n_row_a", "n_row_b", "n_column_a", "n_column_b"]
    back = RoleTable.from_frame(frame, ["row", "column"])
    np.testing.assert_array_equal(back.counts, SEXES.counts)
    np.testing.assert_array_equal(back.payoffs, SEXES.payoffs)
    assert back.players == (1, 1)
    with pytest.raises(ValueError, match="belong to no declared role"):
        RoleTable.from_frame(frame, ["row"])
