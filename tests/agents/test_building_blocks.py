"""Utilities, schedules, masks, ensemble statistics, snapshots, memory: hand-computed values."""

import math

import numpy as np
import pytest

from tradearena.agents.ensembles import (
    AdversarialPair,
    SnapshotAverage,
    TransitionMemory,
    generative_estimate,
    mean_var,
    poisson_masks,
    risk_values,
)
from tradearena.agents.schedules import (
    EpsilonGreedy,
    StepSize,
    exponential_schedule,
    greedy_action,
    linear_schedule,
    make_epsilon,
)
from tradearena.agents.tabular.ra3q_minimax import maximin
from tradearena.agents.utility import Exponential, Identity, PiecewiseLinear, make_utility


def test_exponential_values_scalar_and_array():
    u = Exponential(-0.5)
    assert u.x0 == 0.0 and u(0.0) == 0.0
    assert u(1.0) == pytest.approx((math.exp(-0.5) - 1) / -0.5)
    assert u(-2.0) == pytest.approx((math.e - 1) / -0.5)
    np.testing.assert_allclose(u(np.array([1.0, -2.0])), [u(1.0), u(-2.0)], rtol=0, atol=0)
    assert Exponential(0.0)(3.5) == 3.5


def test_exponential_clips_and_counts():
    u = Exponential(1.0, clip=30.0)
    assert u(100.0) == pytest.approx(math.expm1(30.0))
    assert u(-100.0) == pytest.approx(-1.0)
    assert u.clipped == 2
    out = u(np.array([0.0, 31.0, -40.0, 29.0]))
    assert np.all(np.isfinite(out)) and u.clipped == 4
    assert u(1e308) == pytest.approx(math.expm1(30.0)) and u.clipped == 5


def test_piecewise_linear_and_identity():
    u = PiecewiseLinear(0.5)
    assert u(2.0) == 1.0 and u(-2.0) == -3.0 and u(0.0) == 0.0
    np.testing.assert_array_equal(u(np.array([2.0, -2.0])), [1.0, -3.0])
    assert Identity()(1.25) == 1.25
    with pytest.raises(ValueError, match="kappa"):
        PiecewiseLinear(1.0)


def test_make_utility_specs():
    assert isinstance(make_utility("identity"), Identity)
    u = make_utility({"name": "exponential", "beta": -0.5, "clip": 10.0})
    assert (u.beta, u.clip) == (-0.5, 10.0)
    with pytest.raises(ValueError, match="utility must name one of"):
        make_utility("cubic")
    with pytest.raises(ValueError, match=r"\(did you mean 'exponential'\?\)"):
        make_utility({"name": "exponentail", "beta": -0.5})
    with pytest.raises(ValueError, match="utility"):
        make_utility({"name": "exponential", "gamma": 1})


def test_step_sizes():
    assert StepSize(0.1)(7) == 0.1
    assert StepSize("visits")(4) == 0.25
    assert StepSize(("visits", 0.5000001))(4) == pytest.approx(0.5, rel=1e-6)
    assert StepSize(("visits", 0.8))(32) == pytest.approx(32**-0.8)
    assert StepSize("rescaled_linear", gamma=0.9)(10) == pytest.approx(0.5)
    np.testing.assert_array_equal(StepSize("visits")(np.array([1, 2, 4])), [1, 0.5, 0.25])
    for bad in (0.0, 1.5, "often", ("visits", 0.4)):
        with pytest.raises(ValueError, match="learning_rate"):
            StepSize(bad)


def test_epsilon_schedules():
    assert linear_schedule(1.0, 0.1, 10, 0) == 1.0
    assert linear_schedule(1.0, 0.1, 10, 5) == pytest.approx(0.55)
    assert linear_schedule(1.0, 0.1, 10, 50) == pytest.approx(0.1)
    assert exponential_schedule(1.0, 0.0, 100, 100) == pytest.approx(0.5)
    assert exponential_schedule(0.5, 0.1, 10, 20) == pytest.approx(0.2)
    assert make_epsilon(0.3)(10**6) == 0.3
    assert make_epsilon(("linear", 1.0, 0.0, 4))(2) == 0.5
    with pytest.raises(ValueError, match="exploration"):
        make_epsilon(("cosine", 1.0, 0.0, 4))


def test_greedy_ties_uniform_and_seeded():
    rng = np.random.default_rng(0)
    picks = [greedy_action(np.array([1.0, 3.0, 3.0, 0.0, 3.0]), rng) for _ in range(3000)]
    counts = np.bincount(picks, minlength=5)
    assert counts[0] == counts[3] == 0
    assert all(abs(c / 3000 - 1 / 3) < 0.04 for c in counts[[1, 2, 4]])
    assert greedy_action(np.array([0.0, 2.0, 1.0]), rng) == 1
    policy = EpsilonGreedy(3, 0.0)
    state = rng.bit_generator.state
    assert policy(np.array([0.0, 2.0, 1.0]), rng, 0) == 1
    assert rng.bit_generator.state == state  # no draw when epsilon is 0 and no tie


def test_poisson_masks():
    assert poisson_masks(np.random.default_rng(1), 4, enabled=False).tolist() == [1, 1, 1, 1]
    counts = poisson_masks(np.random.default_rng(1), 100_000)
    assert counts.dtype.kind == "i"
    assert counts.mean() == pytest.approx(1.0, abs=0.01)
    assert np.mean(counts == 0) == pytest.approx(math.exp(-1), abs=0.01)
    np.testing.assert_array_equal(
        poisson_masks(np.random.default_rng(5), 7), np.random.default_rng(5).poisson(1.0, 7)
    )


def test_mean_var_and_risk_values():
    tables = np.array([[1.0, 2.0], [3.0, 2.0], [5.0, 2.0]])
    mean, var = mean_var(tables)
    np.testing.assert_array_equal(mean, [3.0, 2.0])
    np.testing.assert_array_equal(var, [4.0, 0.0])
    np.testing.assert_array_equal(risk_values(tables, 0.5), [1.0, 2.0])
    np.testing.assert_array_equal(risk_values(tables, 0.5, seeking=True), [5.0, 2.0])
    mean, var = mean_var(tables[:1])
    np.testing.assert_array_equal(var, [0.0, 0.0])


def test_snapshot_average_keeps_last_k():
    q = np.zeros((1, 1))
    average = SnapshotAverage(q, 3)
    for value in (3.0, 6.0, 9.0):
        average.add(np.full((1, 1), value))
    assert average.count == 3 and average.average[0, 0] == 6.0  # 3, 6, 9 (0 dropped)
    with pytest.raises(ValueError, match="n_snapshots"):
        SnapshotAverage(q, 0)


def test_transition_memory_estimate_ring_buffer():
    memory = TransitionMemory(2, 1, size=2)
    memory.add((0, 0, 1.0, 1, False, 0.5))
    memory.add((0, 0, 2.0, 0, True, 0.0))
    memory.add((0, 0, 4.0, 1, False, 0.5))  # overwrites the first
    v_ref = np.array([10.0, 20.0])
    ttilde, filled = memory.estimate(v_ref, 0.5)
    assert filled.tolist() == [[True], [False]]
    assert ttilde[0, 0] == pytest.approx((2.0 + 4.0 + 0.5 * 20.0) / 2)
    ttilde_k, _ = memory.estimate(np.stack([v_ref, 2 * v_ref]), 0.5)
    assert ttilde_k.shape == (2, 2, 1) and ttilde_k[1, 0, 0] == pytest.approx(13.0)


def test_generative_estimate_deterministic_model():
    ttilde = generative_estimate(
        lambda s, a, rng: (float(a), 1), np.array([0.0, 10.0]), 2, 0.9, 3, None
    )
    np.testing.assert_allclose(ttilde, [[9.0, 10.0], [9.0, 10.0]])


def test_adversarial_pair():
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    assert not AdversarialPair("takeover", 0.0).adversary_acts(rng)
    assert not AdversarialPair("trader", 1.0).adversary_acts(rng)
    assert rng.bit_generator.state == state
    assert AdversarialPair("takeover", 1.0).adversary_acts(rng)
    freq = np.mean([AdversarialPair("takeover", 0.2).adversary_acts(rng) for _ in range(5000)])
    assert freq == pytest.approx(0.2, abs=0.02)
    with pytest.raises(ValueError, match="adversary_mode"):
        AdversarialPair("swap", 0.2)


def test_maximin_known_games():
    x, v = maximin(np.array([[1.0, -1.0], [-1.0, 1.0]]))
    np.testing.assert_allclose(x, [0.5, 0.5], atol=1e-9)
    assert v == pytest.approx(0.0, abs=1e-9)
    x, v = maximin(np.array([[3.0, 1.0], [4.0, 2.0]]))  # saddle point: row 1, value 2
    assert x.tolist() == [0.0, 1.0] and v == 2.0
    x, v = maximin(np.array([[2.0, -1.0], [-1.0, 1.0]]))  # x = (2/5, 3/5), v = 1/5
    np.testing.assert_allclose(x, [0.4, 0.6], atol=1e-9)
    assert v == pytest.approx(0.2)
