"""Tests for envs.simulator.features: hand-computed features on real and stub markets, bounds on
random
books, and the discretizer's indices, bijection and input checks."""

import math
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tradearena.envs.simulator.book import OrderBook, Side
from tradearena.envs.simulator.features import (
    FEATURE_NAMES,
    RETURN_CAP,
    SPREAD_CAP,
    Discretizer,
    feature_names,
    feature_space,
    features,
)
from tradearena.envs.simulator.market import Account, Market
from tradearena.envs.simulator.orders import Kind
from tradearena.envs.simulator.traders.zero_intelligence import ZeroIntelligence

BUY, SELL = Side.BUY, Side.SELL


def empty_market(n_steps: int = 4) -> Market:
    """A real market with one seat, no traders and an empty book at the open (mid 10000)."""
    market = Market(traders=[], n_seats=1, warmup_seconds=0, n_steps=n_steps)
    market.reset(0)
    return market


def stub(
    mids: list[float],
    book: OrderBook | None = None,
    inventory: int = 0,
    step_index: int = 0,
    n_steps: int = 10,
) -> SimpleNamespace:
    """The attributes `features` reads, with a given mid history."""
    history = np.array(mids, dtype=float)
    return SimpleNamespace(
        book=OrderBook() if book is None else book,
        mids=lambda: history,
        account=lambda seat: Account(inventory=inventory),
        position_limit=1_000,
        step_index=step_index,
        n_steps=n_steps,
    )


def bp(new: float, old: float) -> np.float32:
    return np.float32(1e4 * math.log(new / old))


# ---------------------------------------------------------------------------- names, space
def test_feature_names_follow_windows():
    assert FEATURE_NAMES == (
        "inventory",
        "imbalance",
        "spread",
        "return_1",
        "return_5",
        "return_15",
        "time_left",
        "volatility",
    )
    assert feature_names((3, 2)) == [
        "inventory",
        "imbalance",
        "spread",
        "return_3",
        "return_2",
        "time_left",
        "volatility",
    ]


@pytest.mark.parametrize("windows", [(), (0,), (1, -2), (5, 5)])
def test_feature_names_reject_bad_windows(windows):
    with pytest.raises(ValueError, match="windows must be distinct positive step counts"):
        feature_names(windows)


def test_feature_space_bounds():
    space = feature_space((1, 10))
    assert space.dtype == np.float32
    assert space.shape == (7,)
    np.testing.assert_array_equal(space.low, [-1, -1, 0, -RETURN_CAP, -RETURN_CAP, 0, 0])
    high = [1, 1, SPREAD_CAP, RETURN_CAP, RETURN_CAP, 1, RETURN_CAP]
    np.testing.assert_array_equal(space.high, high)
    assert feature_space().shape == (len(FEATURE_NAMES),)
    with pytest.raises(ValueError, match="depth_levels must be >= 1, got 0"):
        feature_space(depth_levels=0)


# ------------------------------------------------------------------------ book and account
def test_book_features_on_a_real_market():
    """Bids 30 @ 9998 and 10 @ 9997, asks 20 @ 10001 and 10 @ 10003."""
    market = empty_market()
    book = market.book
    book.limit(SELL, 10002, 250, owner=5)
    book.market(BUY, 250, owner=0)  # seat 0 holds 250 shares; the level is gone
    book.limit(BUY, 9998, 30)
    book.limit(BUY, 9997, 10)
    book.limit(SELL, 10001, 20)
    book.limit(SELL, 10003, 10)

    x = features(market, 0)
    assert x.dtype == np.float32 and x.shape == (8,)
    np.testing.assert_array_equal(x, np.float32([0.25, 10 / 70, 3, 0, 0, 0, 1, 0]))
    assert features(market, 0, depth_levels=1)[1] == np.float32(0.2)  # (30 - 20) / 50

    market.step()  # marks the mid (9998 + 10001) / 2 against the open's 10000
    x = features(market, 0, windows=(1, 2))
    move = bp(9999.5, 10000)
    np.testing.assert_array_equal(x, [0.25, np.float32(10 / 70), 3, move, 0, 0.75, abs(move)])


def test_empty_one_sided_and_wide_books():
    market = empty_market()
    assert features(market, 0)[1:3].tolist() == [0.0, SPREAD_CAP]  # empty book
    market.book.limit(BUY, 9990, 7)
    assert features(market, 0)[1:3].tolist() == [1.0, SPREAD_CAP]  # bids only
    market.book.limit(SELL, 10080, 21)
    assert features(market, 0)[1:3].tolist() == [-0.5, SPREAD_CAP]  # spread 90, clipped
    market.book.limit(SELL, 10000, 7)
    assert features(market, 0)[1:3].tolist() == [np.float32(-21 / 35), 10.0]


def test_volatility_is_the_rms_of_one_step_returns_over_the_longest_window():
    """Windows (1, 3): the last three one-step returns of mids 100, 101, 99, 99, 102 (bp);
    with two mids, the one return; at the open, 0; capped at RETURN_CAP."""
    mids = [100.0, 101.0, 99.0, 99.0, 102.0]
    steps = [1e4 * math.log(b / a) for a, b in zip(mids[1:-1], mids[2:])]
    expected = math.sqrt(sum(r * r for r in steps) / 3)
    assert features(stub(mids), 0, windows=(1, 3))[-1] == pytest.approx(expected, rel=1e-6)
    assert features(stub(mids[:2]), 0, windows=(1, 3))[-1] == pytest.approx(abs(bp(101, 100)))
    assert features(stub(mids[:1]), 0, windows=(1, 3))[-1] == 0.0
    assert features(stub([100.0, 300.0]), 0)[-1] == RETURN_CAP


@pytest.mark.parametrize(("inventory", "expected"), [(-1500, -1.0), (-1000, -1.0), (3, 0.003)])
def test_inventory_is_a_clipped_fraction_of_the_limit(inventory, expected):
    assert features(stub([100.0], inventory=inventory), 0)[0] == np.float32(expected)


def test_depth_levels_must_be_positive():
    with pytest.raises(ValueError, match="depth_levels must be >= 1, got 0"):
        features(stub([100.0]), 0, depth_levels=0)


# -------------------------------------------------------------------------- returns, time
def test_returns_against_hand_computed_logs():
    market = stub([100.0, 101.0, 99.0, 102.0, 103.0, 104.0], step_index=5, n_steps=8)
    x = features(market, 0, windows=(1, 5, 6, 2))
    # return_6 needs 7 mids: 0
    np.testing.assert_array_equal(
        x[3:-1], [bp(104, 103), bp(104, 100), 0, bp(104, 102), np.float32(3 / 8)]
    )


def test_returns_are_clipped_and_zero_before_the_open():
    assert features(stub([100.0, 200.0]), 0, windows=(1,))[3] == RETURN_CAP
    assert features(stub([200.0, 100.0]), 0, windows=(1,))[3] == -RETURN_CAP
    assert features(stub([]), 0).tolist()[3:6] == [0.0, 0.0, 0.0]


def test_windows_must_be_positive():
    with pytest.raises(ValueError, match=r"windows must be positive step counts, got \(1, 0\)"):
        features(stub([100.0, 101.0]), 0, windows=(1, 0))


# --------------------------------------------------------------------------------- bounds
orders = st.lists(
    st.tuples(st.sampled_from([BUY, SELL]), st.integers(1, 200), st.integers(1, 1_000)),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(
    orders=orders,
    mids=st.lists(st.floats(1.0, 1e6), max_size=30),
    inventory=st.integers(-3_000, 3_000),
    n_steps=st.integers(1, 50),
    data=st.data(),
    windows=st.lists(st.integers(1, 40), min_size=1, max_size=4, unique=True),
    depth_levels=st.integers(1, 8),
)
def test_features_lie_in_the_space(orders, mids, inventory, n_steps, data, windows, depth_levels):
    book = OrderBook()
    for side, price, qty in orders:
        book.limit(side, price, qty)
    step_index = data.draw(st.integers(0, n_steps))
    market = stub(mids, book, inventory, step_index, n_steps)
    x = features(market, 0, windows=windows, depth_levels=depth_levels)
    assert feature_space(windows, depth_levels).contains(x)


def test_features_lie_in_the_space_over_a_session():
    """A seat that keeps buying on a ZI market: every step's features are in the space."""
    market = Market([ZeroIntelligence()], n_seats=1, n_steps=40, position_limit=50)
    market.reset(7)
    space = feature_space()
    seen = []
    for _ in range(market.n_steps):
        x = features(market, 0)
        assert space.contains(x)
        seen.append(x)
        market.step([[(Kind.MARKET, BUY, 0, 5)]])
    assert space.contains(features(market, 0))
    seen = np.array(seen)
    assert seen[-1, 0] == 1.0  # the seat bought up to its limit
    assert np.any(seen[:, 3] != 0)  # and the mid moved


# ----------------------------------------------------------------------------- discretizer
def test_default_discretizer_indices():
    d = Discretizer.default()
    assert d.n_states == 54
    assert list(d.bins) == ["inventory", "imbalance", "return_1", "time_left"]
    # flat, buy pressure, return down, late: ((1 * 3 + 2) * 3 + 0) * 2 + 0
    assert d(np.float32([0.0, 0.5, 3, -2, 9, 9, 0.3, 0])) == 30
    assert d.decode(30) == {"inventory": 1, "imbalance": 2, "return_1": 0, "time_left": 0}
    # edge values go to the bin above: ((0 * 3 + 1) * 3 + 2) * 2 + 1
    assert d(np.float32([-0.1, -0.2, 0, 0.75, 0, 0, 0.5, 0])) == 11
    assert d([1.0, 1.0, 50, 500, 0, 0, 1.0, 0]) == 53  # a list works too
    assert d([-1.0, -1.0, 0, -500, 0, 0, 0.0, 0]) == 0
    # spread, the longer returns and volatility are ignored
    assert d([0.0, 0.0, 0, 0, -500, 500, 1.0, 0]) == d([0.0, 0.0, 50, 0, 500, -500, 1.0, 9])


def test_default_discretizer_uses_the_shortest_window():
    d = Discretizer.default((10, 3))
    names = ("inventory", "imbalance", "spread", "return_10", "return_3", "time_left")
    assert d.names == (*names, "volatility")
    assert list(d.bins) == ["inventory", "imbalance", "return_3", "time_left"]
    assert d.n_states == 54


@pytest.mark.parametrize(
    ("mid", "expected"), [(10_001, 2), (9_999, 0), (10_000.5, 1), (9_999.5, 1), (10_000, 1)]
)
def test_default_return_bins_are_symmetric_in_ticks(mid, expected):
    """From a mid of 10000 ticks, a tick up or down is a move; half a tick is not."""
    d = Discretizer.default()
    assert d.decode(d(features(stub([10_000.0, mid]), 0)))["return_1"] == expected


def test_imbalance_on_an_edge_from_a_real_book():
    """(4 - 6) / 10 = -0.2 in float32 is the edge -0.2 in float32: the middle bin."""
    market = empty_market()
    market.book.limit(BUY, 9999, 4)
    market.book.limit(SELL, 10001, 6)
    d = Discretizer.default()
    assert d.decode(d(features(market, 0)))["imbalance"] == 1


def test_bijection_between_states_and_bins():
    d = Discretizer({"spread": [1, 2, 5], "imbalance": [0.0], "time_left": [0.25, 0.5, 0.75]})
    assert d.n_states == 2 * 4 * 4
    assert list(d.bins) == ["imbalance", "spread", "time_left"]  # the names' order
    seen = set()
    for state in range(d.n_states):
        bins = d.decode(state)
        seen.add(tuple(bins.values()))
        x = [0.0] * len(FEATURE_NAMES)
        for name, b in bins.items():
            edges = d.bins[name]
            x[FEATURE_NAMES.index(name)] = edges[b - 1] if b else edges[0] - 1
        assert d(x) == state
        assert state == np.ravel_multi_index(tuple(bins.values()), (2, 4, 4))
    assert len(seen) == d.n_states


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-2, 2, width=32), min_size=8, max_size=8))
def test_matches_np_digitize(values):
    d = Discretizer({"inventory": [-0.5, 0, 0.5], "imbalance": [-0.2, 0.2], "time_left": [0.1]})
    x = np.float32(values)
    digits = [
        np.digitize(x[i], np.float32(d.bins[n]))
        for i, n in [(0, "inventory"), (1, "imbalance"), (6, "time_left")]
    ]
    assert d(x) == np.ravel_multi_index(digits, (4, 3, 2))


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.lists(
            st.sampled_from([-0.5, 0.0, 0.5, -0.2, 0.2, 0.1, np.nan]) | st.floats(-2, 2),
            min_size=8,
            max_size=8,
        ),
        min_size=1,
        max_size=12,
    ),
    st.booleans(),
)
def test_states_equal_the_discretizer_vector_by_vector(rows, wide):
    """The compiled batch form bins as `__call__` does: edges exactly, NaN past the last edge,
    float64 input too, any leading shape."""
    d = Discretizer({"inventory": [-0.5, 0, 0.5], "imbalance": [-0.2, 0.2], "time_left": [0.1]})
    x = np.array(rows, dtype=np.float64 if wide else np.float32)
    expected = [d(v) for v in x]
    assert d.states(x).tolist() == expected
    assert d.states(x.reshape(1, len(x), 8)).tolist() == [expected]
    assert d.states(x[::2]).tolist() == expected[::2]


def test_custom_names_and_no_bins():
    d = Discretizer({"b": [0, 10]}, names=["a", "b"])
    assert (d.n_states, d([5, -1]), d([-5, 0]), d([0, 10])) == (3, 0, 1, 2)
    none = Discretizer()
    assert (none.n_states, none(np.zeros(8, np.float32)), none.decode(0)) == (1, 0, {})


@pytest.mark.parametrize(
    ("bins", "message"),
    [
        ({"foo": [0]}, r"unknown features \['foo'\]; allowed: \['inventory', 'imbalance'"),
        ({"imbalance": []}, "feature 'imbalance': edges must be a non-empty sequence"),
        ({"spread": 3}, "feature 'spread': edges must be a non-empty sequence"),
        ({"time_left": [0.5, 0.2]}, "feature 'time_left': edges must be finite and strictly"),
        ({"time_left": [0.5, 0.5]}, "feature 'time_left': edges must be finite and strictly"),
        ({"spread": [0.1, 0.1 + 1e-12]}, r"strictly increasing \(as float32\)"),
        ({"spread": [0, np.inf]}, "feature 'spread': edges must be finite"),
    ],
)
def test_bad_bins_raise(bins, message):
    with pytest.raises(ValueError, match=message):
        Discretizer(bins)


def test_bad_names_vectors_and_states_raise():
    with pytest.raises(ValueError, match=r"feature names must be distinct, got \['a', 'a'\]"):
        Discretizer(names=["a", "a"])
    d = Discretizer.default()
    with pytest.raises(ValueError, match="expected 8 features, got 6"):
        d(np.zeros(6, np.float32))
    with pytest.raises(ValueError, match=r"state must be in range\(54\), got 54"):
        d.decode(54)
    with pytest.raises(ValueError, match=r"state must be in range\(54\), got -1"):
        d.decode(-1)
