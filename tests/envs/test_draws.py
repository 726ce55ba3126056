"""The compiled draws give exactly numpy's numbers and leave the generator as numpy does."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from envs.draws import poisson

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
