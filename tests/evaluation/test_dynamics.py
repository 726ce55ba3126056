"""evaluation.analysis.dynamics: hand-computed payoffs, replicator field, rest points, trajectories
and
alpha-rank on games with known answers."""

import warnings

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tradearena.evaluation.analysis.alpharank import alpharank
from tradearena.evaluation.analysis.dynamics import (
    WEIGHTINGS,
    _jacobian,
    _polynomial,
    expected_payoffs,
    field,
    replicator,
    rest_points,
    simplex_grid,
    trajectory,
)
from tradearena.evaluation.analysis.payoffs import PayoffTable

NAN = np.nan
PRISONERS = [[3.0, 0.0], [5.0, 1.0]]  # strategy 1 (defect) strictly dominant
RPS = [[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]]
# p = 3, two strategies A, B (docs/algorithms.md#payoff-tables-and-replicator-dynamics)
THREE = PayoffTable.from_arrays(
    [[3, 0], [2, 1], [1, 2], [0, 3]], [[1, NAN], [2, 0], [3, 1], [NAN, 2]]
)


def _random_table(p: int, k: int, seed: int) -> PayoffTable:
    rng = np.random.default_rng(seed)
    counts = np.array(list(PayoffTable.profiles(p, k)))
    return PayoffTable.from_arrays(counts, rng.standard_normal(counts.shape))


def test_two_player_test_vector():
    # rows (2,0): U_A = 3; (1,1): U_A = 0, U_B = 5; (0,2): U_B = 1; x = (1/2, 1/2)
    # tuyls: f_A = (1/4 * 3 + 1/2 * 0) / (1 - 1/4) = 1; f_B = (1/2 * 5 + 1/4 * 1) / (3/4) = 11/3
    # focal: A x = (1.5, 3)
    table = PayoffTable.from_matrix(PRISONERS)
    np.testing.assert_allclose(expected_payoffs(table, [0.5, 0.5]), [1.0, 11 / 3], rtol=1e-14)
    np.testing.assert_allclose(expected_payoffs(table, [0.5, 0.5], "focal"), [1.5, 3.0])


def test_three_player_test_vector():
    # x = (0.4, 0.6); P(3,0) = .064, P(2,1) = 3 * .16 * .6 = .288, P(1,2) = 3 * .4 * .36 = .432,
    # P(0,3) = .216.
    # tuyls: f_A = (.064 * 1 + .288 * 2 + .432 * 3) / (1 - .6^3) = 1.936 / .784 = 2.469388
    #        f_B = (.288 * 0 + .432 * 1 + .216 * 2) / (1 - .4^3) = .864 / .936 = 0.923077
    # focal (the other two drawn from x): f_A = .16 * 1 + .48 * 2 + .36 * 3 = 2.2
    #        f_B = .16 * 0 + .48 * 1 + .36 * 2 = 1.2
    x = [0.4, 0.6]
    np.testing.assert_allclose(expected_payoffs(THREE, x), [1.936 / 0.784, 0.864 / 0.936])
    np.testing.assert_allclose(expected_payoffs(THREE, x, weighting="focal"), [2.2, 1.2])
    assert expected_payoffs(THREE, x)[0] == pytest.approx(2.469, abs=5e-4)
    assert expected_payoffs(THREE, x)[1] == pytest.approx(0.923, abs=5e-4)


@pytest.mark.parametrize("p", [2, 3, 5])
def test_focal_is_a_x_for_matrix_games(p):
    a = np.array([[1.0, -2.0, 0.5], [0.0, 3.0, 1.0], [2.0, 1.0, -1.0]])
    x = simplex_grid(3, 7)
    np.testing.assert_allclose(
        expected_payoffs(PayoffTable.from_matrix(a, p), x, "focal"), x @ a.T, atol=1e-12
    )


@pytest.mark.parametrize("weighting", WEIGHTINGS)
def test_vectorised_equals_point_by_point(weighting):
    table = _random_table(p=5, k=4, seed=3)
    x = np.random.default_rng(0).dirichlet(np.ones(4), size=3000)  # more than one chunk
    x[:4] = np.eye(4)
    batch = expected_payoffs(table, x, weighting)
    assert batch.shape == x.shape
    loop = np.array([expected_payoffs(table, row, weighting) for row in x[:50]])
    np.testing.assert_allclose(batch[:50], loop, rtol=1e-13)
    loop_field = [field(table, row, weighting) for row in x[-5:]]
    np.testing.assert_allclose(field(table, x, weighting)[-5:], loop_field, atol=1e-14)


def test_tuyls_matches_the_unfactored_formula_inside():
    # f_i = sum_{N_i > 0} P(N|x) U_i(N) / (1 - (1 - x_i)^p), written out directly
    table = _random_table(p=4, k=3, seed=5)
    x = np.array([0.2, 0.5, 0.3])
    counts, payoffs = table.counts, table.payoffs
    factorial = np.array([1, 1, 2, 6, 24])
    prob = factorial[4] / factorial[counts].prod(axis=1) * (x**counts).prod(axis=1)
    direct = [
        np.nansum(prob * np.where(counts[:, i] > 0, payoffs[:, i], 0)) / (1 - (1 - x[i]) ** 4)
        for i in range(3)
    ]
    np.testing.assert_allclose(expected_payoffs(table, x), direct, rtol=1e-13)


@pytest.mark.parametrize("weighting", WEIGHTINGS)
def test_face_limits_are_finite_and_continuous(weighting):
    table = _random_table(p=6, k=3, seed=7)
    on_face = np.array([[0.0, 0.3, 0.7], [0.0, 0.0, 1.0], [0.5, 0.5, 0.0]])
    inside = on_face + 1e-9 * np.array([[2, -1, -1], [2, 1, -3], [-1, -1, 2]])
    f_face = expected_payoffs(table, on_face, weighting)
    assert np.isfinite(f_face).all()
    np.testing.assert_allclose(f_face, expected_payoffs(table, inside, weighting), atol=1e-7)


def test_tuyls_at_a_vertex_of_the_prisoners_dilemma():
    # at x = (1, 0): f_A = U_A(2, 0) = 3; f_B = limit = U_B(1, 1) = 5 (one B among A's)
    table = PayoffTable.from_matrix(PRISONERS)
    np.testing.assert_allclose(expected_payoffs(table, [1.0, 0.0]), [3.0, 5.0])


def test_replicator_sums_to_zero_and_vanishes_at_vertices():
    x = simplex_grid(4, 6)
    fitness = np.random.default_rng(1).standard_normal(x.shape)
    xdot = replicator(x, fitness)
    np.testing.assert_allclose(xdot.sum(axis=1), 0.0, atol=1e-15)
    np.testing.assert_array_equal(replicator(np.eye(4), np.arange(16.0).reshape(4, 4)), 0.0)
    # hand value: x = (1/2, 1/2), f = (1, 3): x.f = 2, xdot = (-1/2, 1/2)
    np.testing.assert_allclose(replicator([0.5, 0.5], [1.0, 3.0], time=4.0), [-0.5, 0.5])
    table = _random_table(p=4, k=3, seed=2)
    for weighting in WEIGHTINGS:
        np.testing.assert_allclose(field(table, np.eye(3), weighting), 0.0, atol=1e-15)
        xdot = field(table, simplex_grid(3, 9), weighting)
        np.testing.assert_allclose(xdot.sum(axis=1), 0.0, atol=1e-14)


def test_simplex_grid_sizes():
    assert simplex_grid(3, 4).shape == (15, 3)
    interior = simplex_grid(3, 10, interior=True)
    assert interior.shape == (36, 3) and (interior > 0).all()
    np.testing.assert_allclose(interior.sum(axis=1), 1.0)
    with pytest.raises(ValueError, match="resolution"):
        simplex_grid(3, 2, interior=True)


def _kinds(points):
    return {tuple(np.round(r.x, 6)): r.kind for r in points}


@pytest.mark.parametrize("weighting", WEIGHTINGS)
def test_rest_points_of_rock_paper_scissors(weighting):
    points = rest_points(PayoffTable.from_matrix(RPS), weighting)
    third = round(1 / 3, 6)
    assert _kinds(points) == {
        (1.0, 0.0, 0.0): "saddle",
        (0.0, 1.0, 0.0): "saddle",
        (0.0, 0.0, 1.0): "saddle",
        (third, third, third): "center",
    }
    centre = points[-1]
    np.testing.assert_allclose(centre.x, 1 / 3, atol=1e-10)
    assert np.abs(centre.eigenvalues.real).max() < 1e-8
    assert centre.support == (0, 1, 2)
    if weighting == "focal":  # A x: the Jacobian at the centre has eigenvalues +-i/sqrt(3)
        np.testing.assert_allclose(np.abs(centre.eigenvalues.imag), 1 / np.sqrt(3), rtol=1e-6)
    vertex_eigenvalues = [np.sort(r.eigenvalues.real) for r in points[:3]]
    np.testing.assert_allclose(vertex_eigenvalues, [[-1, 1]] * 3, atol=1e-8)


@pytest.mark.parametrize("weighting", WEIGHTINGS)
def test_rest_points_of_coordination(weighting):
    points = rest_points(PayoffTable.from_matrix(np.eye(2)), weighting)
    assert _kinds(points) == {(1.0, 0.0): "stable", (0.0, 1.0): "stable", (0.5, 0.5): "unstable"}
    # focal, interior: xdot = x(1-x)(2x-1), derivative at 1/2 = 1/4 * 2 = 1/2
    if weighting == "focal":
        assert points[-1].eigenvalues[0].real == pytest.approx(0.5, rel=1e-6)


def test_rest_points_of_a_dominant_strategy_and_on_faces():
    # defect dominates: a single stable vertex, cooperation unstable
    assert _kinds(rest_points(PayoffTable.from_matrix(PRISONERS))) == {
        (1.0, 0.0): "unstable",
        (0.0, 1.0): "stable",
    }
    # a rest point on an edge of a 3-strategy game: coordination between 0 and 1, 2 dominated
    a = [[1.0, 0.0, 2.0], [0.0, 1.0, 2.0], [-1.0, -1.0, 0.0]]
    points = rest_points(PayoffTable.from_matrix(a), "focal")
    edge = [r for r in points if r.support == (0, 1)]
    assert len(edge) == 1 and edge[0].kind == "saddle"
    np.testing.assert_allclose(edge[0].x, [0.5, 0.5, 0.0], atol=1e-10)
    with pytest.raises(ValueError, match="grid"):
        rest_points(PayoffTable.from_matrix(a), grid=0)


@pytest.mark.parametrize(
    ("outsider", "kind", "invaders"), [(2.0, "saddle", (2,)), (0.0, "stable", ())]
)
def test_a_rest_point_on_an_edge_is_stable_only_if_no_absent_strategy_invades(
    outsider, kind, invaders
):
    """Anti-coordination between 0 and 1 (f = A x): the edge's midpoint is stable within the
    edge (eigenvalue -1: xdot_0 = 2 p (1 - p) (1 - 2 p)) and the mix earns 1; strategy 2 earns
    ``outsider`` against it, so its transversal eigenvalue is ``outsider - 1``: +1 invades
    (a saddle of the simplex), -1 does not (stable)."""
    a = [[0.0, 2.0, 0.0], [2.0, 0.0, 0.0], [outsider, outsider, 0.0]]
    points = rest_points(PayoffTable.from_matrix(a), "focal")
    (edge,) = [r for r in points if r.support == (0, 1)]
    np.testing.assert_allclose(edge.x, [0.5, 0.5, 0.0], atol=1e-10)
    np.testing.assert_allclose(edge.eigenvalues.real, [-1.0, outsider - 1.0], atol=1e-6)
    assert (edge.kind, edge.invaders) == (kind, invaders)


def test_eigenvalues_within_the_face_and_transversal_are_the_simplex_jacobians():
    """The face's eigenvalues with the exact transversal ones are the spectrum of the whole
    simplex's Jacobian (by central differences) at every rest point of a 4-strategy game;
    no two rest points lie closer than ``same``."""
    table = _random_table(p=3, k=4, seed=5)
    polynomial = _polynomial(table, "tuyls")
    points = rest_points(table)
    assert len(points) > table.k  # some on edges, faces or inside
    for point in points:
        whole = np.linalg.eigvals(_jacobian(polynomial, point.x))
        np.testing.assert_allclose(
            np.sort_complex(point.eigenvalues), np.sort_complex(whole), atol=1e-5
        )
    for i, first in enumerate(points):
        for second in points[i + 1 :]:
            assert np.abs(first.x - second.x).max() >= 0.01


def test_a_continuum_of_rest_points_is_listed_a_tolerance_apart():
    """Strategy 2 a copy of strategy 1: the whole edge {1, 2} rests (f_1 = f_2 there); every
    point listed is a rest point, no two closer than ``same`` in every share."""
    a = np.array([[1.0, 0.0, 0.0], [2.0, 1.0, 1.0], [2.0, 1.0, 1.0]])
    for same in (1e-3, 0.2):
        points = rest_points(PayoffTable.from_matrix(a), "focal", same=same)
        xs = np.array([r.x for r in points])
        np.testing.assert_allclose(field(PayoffTable.from_matrix(a), xs, "focal"), 0.0, atol=1e-8)
        gaps = np.abs(xs[:, None, :] - xs[None, :, :]).max(axis=-1)
        assert (gaps[np.triu_indices(len(xs), 1)] >= same).all()


def test_trajectory_stays_on_the_simplex_and_conserves_rps_invariant():
    table = PayoffTable.from_matrix(RPS)
    path = trajectory(table, [0.5, 0.3, 0.2], 30.0, weighting="focal", n_points=301)
    assert path.x.shape == (301, 3) and path.t[-1] == 30.0
    assert (path.x >= 0).all()
    np.testing.assert_allclose(path.x.sum(axis=1), 1.0, atol=1e-12)
    # for A x on zero-sum RPS, prod_i x_i is a constant of motion
    np.testing.assert_allclose(path.x.prod(axis=1), 0.5 * 0.3 * 0.2, rtol=1e-5)
    # coordination: flows to the nearer vertex
    end = trajectory(PayoffTable.from_matrix(np.eye(2)), [0.6, 0.4], 40.0).x[-1]
    np.testing.assert_allclose(end, [1.0, 0.0], atol=1e-6)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda t: expected_payoffs(t, [0.5, 0.5]), "x: expected shape"),
        (lambda t: expected_payoffs(t, [0.5, 0.6, -0.1]), "x: expected finite, non-negative"),
        (lambda t: expected_payoffs(t, [0.5, 0.6, 0.1]), "x: each mix must sum to 1"),
        (lambda t: expected_payoffs(t, [1, 0, 0], "nash"), "weighting: must be one of"),
        (lambda t: expected_payoffs(t, [1, 0, 0], "focl"), "did you mean 'focal'"),
        (lambda t: replicator([1, 0, 0], [1, 2]), "fitness: shape"),
        (lambda t: trajectory(t, [1, 0, 0], -1.0), "t_max"),
        (lambda t: trajectory(t, [[1, 0, 0]], 1.0), "x0: expected one mix"),
        (lambda t: trajectory(t, [1, 0, 0], 1.0, n_points=1), "n_points"),
        (lambda t: alpharank(t, alpha=np.inf), "alpha: expected a finite"),
        (lambda t: alpharank(t, m=1), "m: expected an integer population size"),
    ],
)
def test_input_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call(PayoffTable.from_matrix(RPS))


def test_incomplete_table_is_rejected():
    table = PayoffTable.from_arrays([[2, 0], [1, 1]], [[1, NAN], [0, 2]])
    with pytest.raises(ValueError, match="table: expected payoffs need every profile"):
        expected_payoffs(table, [0.5, 0.5])
    with pytest.raises(ValueError, match=r"table: alpha-rank needs the missing profile"):
        alpharank(PayoffTable.from_arrays([[3, 0], [2, 1]], [[1, NAN], [0, 2]]))


@pytest.mark.parametrize("p", [2, 3])
def test_alpharank_dominant_strategy_takes_the_mass(p):
    table = PayoffTable.from_matrix(PRISONERS, p)
    masses = [alpharank(table, alpha).pi[1] for alpha in (0.0, 0.5, 2.0, 10.0)]
    assert masses[0] == pytest.approx(0.5)  # alpha = 0: neutral drift
    assert np.all(np.diff(masses) > 0) and masses[-1] > 1 - 1e-9
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow at huge alpha
        result = alpharank(table, 1e6)
    assert result.pi.tolist() == [0.0, 1.0] and result.closed_classes == ((1,),)


@pytest.mark.parametrize("alpha", [0.1, 1.0, 50.0, 1e5])
def test_alpharank_rps_is_uniform(alpha):
    result = alpharank(PayoffTable.from_matrix(RPS), alpha, m=5)
    np.testing.assert_allclose(result.pi, 1 / 3, rtol=1e-12)
    np.testing.assert_allclose(result.transitions.sum(axis=1), 1.0)


def test_alpharank_fixation_by_hand_and_reducible_chain():
    # p = m = 2: one mutant r meets the resident s: Delta = A[r, s] - A[s, r];
    # PD, cooperators invaded by a defector: Delta = 5 - 0 = 5, rho = 1 / (1 + e^{-5 alpha})
    result = alpharank(PayoffTable.from_matrix(PRISONERS), 0.2)
    assert result.fixation[0, 1] == pytest.approx(1 / (1 + np.exp(-1.0)))
    assert result.fixation[1, 0] == pytest.approx(1 / (1 + np.exp(1.0)))
    # stationary: pi_0 rho_01 = pi_1 rho_10 -> pi_1 = rho_01 / (rho_01 + rho_10) = 1/(1+e^-1)
    assert result.pi[1] == pytest.approx(1 / (1 + np.exp(-1.0)))
    # coordination in a population of 10: at huge alpha neither vertex can be invaded
    table = PayoffTable.from_matrix([[2.0, 0.0], [0.0, 1.0]])
    assert alpharank(table, 1.0, m=10).pi[0] > 0.5
    reducible = alpharank(table, 1e4, m=10)
    assert reducible.closed_classes == ((0,), (1,))
    np.testing.assert_array_equal(reducible.pi, [0.5, 0.5])


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.floats(0.0, 1e3))
@example(781, 429.0)  # products of tiny fixation probabilities once underflowed to 0 / 0
def test_alpharank_is_a_distribution(seed, alpha):
    result = alpharank(_random_table(p=3, k=4, seed=seed), alpha)
    assert np.isfinite(result.pi).all() and (result.pi >= 0).all()
    assert result.pi.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(result.pi @ result.transitions, result.pi, atol=1e-12)
