"""The compiled draws give exactly numpy's numbers and leave the generator as numpy does."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tradearena.envs.simulator.draws import normal, poisson, uniform

RATES = st.lists(
    st.one_of(
        st.just(0.0),
        st.floats(1e-9, 1e-3),  # the megashocks' rates
        st.floats(0.5, 1.5),  # around 1, where 1 - lam - 1e-12 stops deciding
        st.floats(1.5, 9.999),
    ),
    max_size=300,
)


@settings(max_examples=200, deadline=None)
@given(rates=RATES, seed=st.integers(0, 2**32 - 1))
def test_poisson_equals_numpy(rates, seed):
    """Counts, dtype and the generator's state after the draws are numpy's, for every rate
    below 10 (zero included: numpy draws nothing for it)."""
    lam = np.array(rates, dtype=np.float64)
    ours, theirs = np.random.default_rng(seed), np.random.default_rng(seed)
    counts = poisson(ours, lam)
    expected = theirs.poisson(lam)
    assert counts.dtype == expected.dtype == np.int64
    assert counts.tolist() == expected.tolist()
    assert ours.bit_generator.state == theirs.bit_generator.state


def test_poisson_rare_events_match_numpy():
    """Over 2 million small rates (about 480 events), every event lands where numpy puts it,
    each with numpy's extra uniforms."""
    lam = np.full(2_000_000, 2.4e-4)
    counts = poisson(np.random.default_rng(7), lam)
    expected = np.random.default_rng(7).poisson(lam)
    assert counts.sum() == expected.sum() > 400
    assert np.array_equal(np.flatnonzero(counts), np.flatnonzero(expected))


def test_poisson_leaves_large_and_bad_rates_to_numpy():
    """Rates of 10 or more take numpy's other algorithm (the same numbers); a negative rate is
    numpy's error."""
    lam = np.array([0.1, 12.0, 3.0, 40.0])
    assert poisson(np.random.default_rng(3), lam).tolist() == (
        np.random.default_rng(3).poisson(lam).tolist()
    )
    with pytest.raises(ValueError, match="lam"):
        poisson(np.random.default_rng(3), np.array([0.1, -1.0]))


@settings(max_examples=100, deadline=None)
@given(
    low=st.floats(-1e6, 1e6),
    width=st.floats(0.0, 1e5),
    loc=st.floats(-1e4, 1e4),
    scale=st.floats(0.0, 100.0),
    n=st.integers(0, 2000),
    seed=st.integers(0, 2**32 - 1),
)
def test_uniform_and_normal_equal_numpy(low, width, loc, scale, n, seed):
    """Every number to the bit (negative zeros included) and the generator's state after
    are numpy's, for a vector and for a matrix of normals."""
    ours, theirs = np.random.default_rng(seed), np.random.default_rng(seed)
    for x, y in (
        (uniform(ours, low, low + width, n), theirs.uniform(low, low + width, n)),
        (normal(ours, loc, scale, n), theirs.normal(loc, scale, n)),
        (normal(ours, 0.0, scale, (n // 20, 20)), theirs.normal(0.0, scale, (n // 20, 20))),
        (normal(ours, 0.0, 1.0, n), theirs.normal(size=n)),
    ):
        assert x.dtype == y.dtype == np.float64 and x.shape == y.shape
        assert x.tobytes() == y.tobytes()
    assert ours.bit_generator.state == theirs.bit_generator.state


def test_uniform_and_normal_refuse_what_numpy_refuses():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="scale < 0"):
        normal(rng, 0.0, -1.0, 3)
    with pytest.raises(OverflowError, match="Range exceeds valid bounds"):
        uniform(rng, -1e308, 1e308, 3)
