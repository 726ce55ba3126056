"""The compiled tabular kernels against the Python building blocks they stand for."""

import numpy as np
import pytest

from tradearena.agents._kernels import StepKind, UtilityKind, risk_row, risk_update
from tradearena.agents.ensembles import risk_values
from tradearena.agents.schedules import StepSize
from tradearena.agents.utility import Exponential, Identity, PiecewiseLinear


def _reference(q, visits, s, a, r, s2, g, counts, u, step, recenter=None):
    """The RAQL rule of docs/algorithms.md (building block 1) written out in Python, table by
    table."""
    for i, m in enumerate(counts):
        for _ in range(m):
            target = r + g * q[i, s2].max()
            if recenter is not None:
                target = target - (r + g * recenter[0][i, s2]) + recenter[1][i, s, a]
            visits[i, s, a] += 1
            q[i, s, a] += step(visits[i, s, a]) * (u(target - q[i, s, a]) - u.x0)


@pytest.mark.parametrize(
    "utility", [Identity(), Exponential(-0.5), Exponential(2.0, clip=1.0), PiecewiseLinear(0.3)]
)
@pytest.mark.parametrize("spec", [0.2, "visits", ("visits", 0.7), "rescaled_linear"])
@pytest.mark.parametrize("recentered", [False, True])
def test_risk_update_matches_python(utility, spec, recentered):
    rng = np.random.default_rng(3)
    k, n_states, n_actions = 4, 5, 3
    q, visits = rng.normal(size=(k, n_states, n_actions)), np.zeros((k, 5, 3), dtype=np.int64)
    q_ref, visits_ref = q.copy(), visits.copy()
    step = StepSize(spec, gamma=0.9)
    recenter = (rng.normal(size=(k, n_states)), rng.normal(size=q.shape)) if recentered else None
    clipped, before = 0, utility.clipped  # the parameter's instance is shared by the cases
    for _ in range(200):
        s, a, s2 = int(rng.integers(5)), int(rng.integers(3)), int(rng.integers(5))
        r, counts = 3.0 * rng.normal(), rng.poisson(1.0, size=k)
        _reference(q_ref, visits_ref, s, a, r, s2, 0.9, counts, utility, step, recenter)
        clipped += risk_update(
            q,
            visits,
            s,
            a,
            r,
            s2,
            0.9,
            counts,
            *utility.kernel_args(),
            *step.kernel_args(),
            *(recenter or ()),
        )
    np.testing.assert_array_equal(visits, visits_ref)
    np.testing.assert_allclose(q, q_ref, rtol=1e-12, atol=1e-12)
    assert clipped == utility.clipped - before


@pytest.mark.parametrize("k", [1, 2, 7])
@pytest.mark.parametrize("seeking", [False, True])
def test_risk_row_matches_risk_values(k, seeking):
    q = np.random.default_rng(k).normal(size=(k, 4, 3))
    for s in range(4):
        np.testing.assert_allclose(
            risk_row(q, s, 0.7, seeking), risk_values(q[:, s], 0.7, seeking), rtol=1e-13
        )


def test_kernel_args_name_their_kinds():
    assert Identity().kernel_args() == (UtilityKind.IDENTITY, 0.0, 0.0)
    assert Exponential(0.0).kernel_args()[0] is UtilityKind.IDENTITY
    assert Exponential(-0.5, clip=4.0).kernel_args() == (UtilityKind.EXPONENTIAL, -0.5, 4.0)
    assert PiecewiseLinear(0.3).kernel_args() == (UtilityKind.PIECEWISE_LINEAR, 0.3, 0.0)
    steps = [StepSize(spec, gamma=0.9).kernel_args() for spec in (0.2, "visits", ("visits", 0.7))]
    assert steps == [(StepKind.CONSTANT, 0.2), (StepKind.VISITS, 0.0), (StepKind.VISITS_POWER, 0.7)]
    kind, rescale = StepSize("rescaled_linear", gamma=0.9).kernel_args()
    assert kind is StepKind.RESCALED_LINEAR and rescale == pytest.approx(0.1)
