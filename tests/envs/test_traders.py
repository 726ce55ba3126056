"""Tests for the background traders: arrival-time helpers and each population's orders,
checked against hand-computed values."""

from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tradearena.envs.simulator.arrivals import Profile
from tradearena.envs.simulator.flow import periodic_times
from tradearena.envs.simulator.market import Market
from tradearena.envs.simulator.orders import Kind, Orders
from tradearena.envs.simulator.traders import (
    MarketMaker,
    Momentum,
    Noise,
    ZeroIntelligence,
    zero_intelligence,
)
from tradearena.envs.simulator.traders.base import poisson_times, window


def fake_market(**fields) -> SimpleNamespace:
    """The few attributes of a `Market` that a trader's `reset` / `orders` read."""
    base = {"open_time": 100.0, "start_time": 100.0, "close_time": 200.0, "last_mid": 10_000.0}
    return SimpleNamespace(**(base | fields))


# ------------------------------------------------------------------------------- helpers
def test_poisson_times_count_order_and_range():
    """Counts average rate * n * (t1 - t0) with Poisson variance; times are sorted, inside
    [t0, t1), and agents are valid indices drawn about uniformly."""
    rng = np.random.default_rng(7)
    rate, n_agents, t0, t1 = 0.01, 20, 50.0, 150.0
    expected = rate * n_agents * (t1 - t0)  # 20 arrivals
    counts, agent_hits = [], np.zeros(n_agents)
    for _ in range(2000):
        times, agents = poisson_times(rate, n_agents, t0, t1, rng)
        assert len(times) == len(agents)
        assert np.all(np.diff(times) >= 0)
        assert np.all((times >= t0) & (times < t1))
        assert np.all((agents >= 0) & (agents < n_agents))
        counts.append(len(times))
        agent_hits += np.bincount(agents, minlength=n_agents)
    counts = np.array(counts)
    standard_error = np.sqrt(expected / len(counts))
    assert abs(counts.mean() - expected) < 5 * standard_error
    assert counts.var() == pytest.approx(expected, rel=0.15)
    share = agent_hits / agent_hits.sum()
    assert np.all(np.abs(share - 1 / n_agents) < 0.01)


def test_poisson_times_without_mechanisms_are_the_constant_rate_draws():
    """No profile, no Hawkes: exactly a Poisson count, sorted uniforms and agent indices, in
    that order from the generator (the draws of every session before the mechanisms); a flat
    profile draws the same count and the same times up to rounding."""
    rate, n_agents, t0, t1 = 0.05, 20, 50.0, 150.0
    times, agents = poisson_times(rate, n_agents, t0, t1, np.random.default_rng(3))
    rng = np.random.default_rng(3)
    n = rng.poisson(rate * n_agents * (t1 - t0))
    assert times.tolist() == np.sort(rng.uniform(t0, t1, n)).tolist()
    assert agents.tolist() == rng.integers(0, n_agents, size=n).tolist()
    flat = Profile((2.0, 2.0, 2.0))
    warped, _ = poisson_times(
        rate, n_agents, t0, t1, np.random.default_rng(3), profile=flat, day=(0.0, 300.0)
    )
    assert warped == pytest.approx(times, abs=1e-9)


def test_poisson_times_empty_interval():
    """A zero-length interval has no arrivals."""
    times, agents = poisson_times(1.0, 5, 10.0, 10.0, np.random.default_rng(0))
    assert len(times) == len(agents) == 0


def test_periodic_times_hand_computed():
    """Wake-ups phase + j * period inside [t0, t1), merged in time order with their agents."""
    times, agents = periodic_times(np.array([0.5, 2.0]), 3.0, 1.0, 10.0)
    assert times.tolist() == [2.0, 3.5, 5.0, 6.5, 8.0, 9.5]
    assert agents.tolist() == [1, 0, 1, 0, 1, 0]


def test_periodic_times_bounds_are_half_open():
    """A wake exactly at t0 is included and one exactly at t1 is not; j runs over all
    integers, so a phase after t1 still lands on its grid inside the window."""
    times, agents = periodic_times(np.array([10.0, 4.0, 52.0]), 5.0, 10.0, 20.0)
    assert times.tolist() == [10.0, 12.0, 14.0, 15.0, 17.0, 19.0]
    assert agents.tolist() == [0, 2, 1, 0, 2, 1]


def test_periodic_times_phase_before_t0():
    """Phases long before t0 still land on their grid: first wake is the first grid point
    at or after t0."""
    times, agents = periodic_times(np.array([-95.0]), 10.0, 0.0, 30.0)
    assert times.tolist() == [5.0, 15.0, 25.0]
    assert agents.tolist() == [0, 0, 0]


def sorted_wake_ups(phase, period, t0, t1):
    """`periodic_times` in numpy: every agent's wake-ups one agent after another, then a
    stable argsort by time."""
    first = np.ceil((t0 - phase) / period)
    last = np.ceil((t1 - phase) / period)
    counts = np.maximum(last - first, 0).astype(np.int64)
    agents = np.repeat(np.arange(len(phase), dtype=np.int32), counts)
    offsets = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    times = phase[agents] + (first[agents] + offsets) * period
    order = np.argsort(times, kind="stable")
    return times[order], agents[order]


@settings(max_examples=200, deadline=None)
@given(
    phases=st.lists(
        st.one_of(st.floats(-500.0, 500.0), st.sampled_from([0.0, 1.5, 3.0, 100.0])),
        max_size=30,
    ),
    period=st.one_of(st.floats(0.01, 200.0), st.sampled_from([1.5, 3.0, 37.0, 60.0])),
    t0=st.floats(-100.0, 100.0),
    length=st.floats(0.0, 2000.0),
)
def test_periodic_times_equal_a_stable_sort(phases, period, t0, length):
    """Times and agents to the bit as a stable sort of every agent's wake-ups gives them,
    repeated phases (ties, which take the one-row-at-a-time merge) included."""
    phase = np.array(phases, dtype=np.float64)
    times, agents = periodic_times(phase, period, t0, t0 + length)
    expected_times, expected_agents = sorted_wake_ups(phase, period, t0, t0 + length)
    assert times.dtype == np.float64 and agents.dtype == np.int32
    assert times.tobytes() == expected_times.tobytes()
    assert agents.tolist() == expected_agents.tolist()


def test_periodic_times_need_a_positive_period():
    with pytest.raises(ValueError, match="period must be > 0"):
        periodic_times(np.array([1.0]), 0.0, 0.0, 10.0)


def test_window_is_half_open():
    """`window` selects sorted times t0 <= t < t1."""
    times = np.array([1.0, 2.0, 2.0, 3.0, 4.0, 5.0])
    assert window(times, 2.0, 4.0) == slice(1, 4)
    assert times[window(times, 2.0, 4.0)].tolist() == [2.0, 2.0, 3.0]
    assert window(times, 0.0, 1.0) == slice(0, 0)
    assert window(times, 5.0, 9.0) == slice(5, 6)
    assert window(times, 6.0, 9.0) == slice(6, 6)


def test_orders_concat_sorts_stably():
    """Batches merge by time; equal times keep the batches' order."""
    a = Orders.build(np.array([1.0, 3.0]), Kind.LIMIT, 1, 100, 5, owner=np.array([10, 11]))
    b = Orders.build(np.array([1.0, 2.0]), Kind.MARKET, -1, 0, 7, owner=np.array([20, 21]))
    merged = Orders.concat([a, Orders.empty(), b])
    assert merged.time.tolist() == [1.0, 1.0, 2.0, 3.0]
    assert merged.owner.tolist() == [10, 20, 21, 11]
    assert merged.kind.tolist() == [1, 2, 2, 1]
    assert merged.qty.tolist() == [5, 7, 7, 5]
    assert len(Orders.concat([]).time) == 0


def test_order_rows_are_32_bit_and_a_value_beyond_names_its_column():
    rows = Orders.build(np.array([1.0, 2.0]), Kind.LIMIT, 1, np.array([100, 101]), 5, 7)
    assert {c.dtype for c in rows[1:]} == {np.dtype(np.int32)}
    assert rows.price.tolist() == [100, 101] and rows.ref.tolist() == [-1, -1]
    with pytest.raises(
        ValueError, match=r"price must fit 32 bits: got values in \[100, 4294967296\]"
    ):
        Orders.build(np.array([1.0, 2.0]), Kind.LIMIT, 1, np.array([100, 2**32]))
    with pytest.raises(ValueError, match="qty must fit 32 bits"):
        Orders.build(np.array([1.0]), Kind.LIMIT, 1, 100, 2**31)
    wide = Orders(*(np.array(c[:1], dtype=np.int64 if i else float) for i, c in enumerate(rows)))
    merged = Orders.concat([wide, rows])  # a population's own int64 batch joins the rest
    assert merged.price.dtype == np.int32 and merged.price.tolist() == [100, 100, 101]


# --------------------------------------------------------------------------------- noise
def test_noise_sends_one_market_order_per_agent():
    """Over a whole session each noise trader sends exactly one market order, inside the
    session, with a side of +-1 and a size in the configured range."""
    noise = Noise(50, size=(3, 9))
    market = Market([noise], n_seats=2, n_steps=20, step_seconds=30.0)
    market.reset(4)
    assert noise.owners == range(2, 52)
    batches = []
    t = market.open_time
    while t < market.close_time:
        batches.append(noise.orders(market, t, t + market.step_seconds, None))
        t += market.step_seconds
    rows = Orders.concat(batches)
    assert len(rows.time) == 50
    assert set(rows.kind.tolist()) == {Kind.MARKET}
    assert sorted(rows.owner.tolist()) == list(range(2, 52))
    assert set(rows.side.tolist()) <= {-1, 1}
    assert rows.qty.min() >= 3 and rows.qty.max() <= 9
    assert np.all((rows.time >= market.open_time) & (rows.time < market.close_time))

    while not market.done:
        market.step()
    summary = market.summary()
    assert summary["orders"] == 50  # the market counts the same 50, all against an empty book
    assert summary["fills"] == 0


# --------------------------------------------------------------------------- market maker
def test_market_maker_ladder_hand_computed():
    """Each wake is a CANCEL_ALL then `levels` bids and asks: best bid floor(mid - half
    spread), best ask ceil(mid + half spread), then `spacing` ticks apart."""
    maker = MarketMaker(1, period=10.0, levels=3, half_spread=2, spacing=2, size=7)
    market = fake_market(last_mid=10_000.5)
    maker.reset(market, range(5, 6), np.random.default_rng(0))
    orders = maker.orders(market, 100.0, 200.0, None)
    assert len(orders.time) == 10 * 7  # one wake per 10 s over 100 s, 7 rows each
    first = slice(0, 7)
    assert orders.kind[first].tolist() == [4, 1, 1, 1, 1, 1, 1]
    assert orders.side[first].tolist() == [0, 1, 1, 1, -1, -1, -1]
    assert orders.price[first].tolist()[1:] == [9998, 9996, 9994, 10003, 10005, 10007]
    assert orders.qty[first].tolist() == [7] * 7
    assert set(orders.owner.tolist()) == {5}
    assert np.all(orders.time[first] == orders.time[0])
    assert np.all(np.diff(orders.time[::7]) == 10.0)
    # an integer mid: 10000 -> bids from 9998, asks from 10002
    market.last_mid = 10_000.0
    orders = maker.orders(market, 100.0, 200.0, None)
    assert orders.price[1:7].tolist() == [9998, 9996, 9994, 10002, 10004, 10006]


def test_market_maker_alone_keeps_one_ladder_in_the_book():
    """In a market, each wake cancels the previous ladder: after the warm-up the book holds
    exactly one ladder of `levels` per side around the initial price."""
    maker = MarketMaker(1, period=60.0, levels=3)
    market = Market([maker], n_seats=0, n_steps=5, warmup_seconds=300.0)
    market.reset(1)
    wakes = 5  # one per 60 s period over the 300 s warm-up, whatever the phase
    assert market.book.depth(10) == (
        [(9999, 100), (9998, 100), (9997, 100)],
        [(10001, 100), (10002, 100), (10003, 100)],
    )
    assert len(market.book) == 6
    assert market.n_orders == 6 * wakes
    assert market.n_cancels == 6 * (wakes - 1)


# ------------------------------------------------------------------------------ momentum
def momentum_market(mids: list[float]) -> Market:
    """A market with no traders whose recorded mids are set by hand and a book with best bid
    9990 and best ask 10010."""
    market = Market([], n_seats=0, n_steps=60)
    market.reset(0)
    market.book.limit(1, 9990, 50)
    market.book.limit(-1, 10_010, 50)
    market._mids[: len(mids)] = mids
    market.step_index = len(mids) - 1
    return market


@pytest.mark.parametrize(
    ("mids", "side", "price"),
    [
        (list(range(10_000, 10_008)), 1, 10_010),  # rising: short MA > long MA, buy the ask
        (list(range(10_008, 10_000, -1)), -1, 9990),  # falling: sell the bid
    ],
)
def test_momentum_trades_with_the_trend(mids, side, price):
    """Short MA above the long one buys at the best ask; below sells at the best bid; every
    wake in the window sends one marketable limit order of its drawn size."""
    market = momentum_market(mids)
    assert len(market.mids()) == 8
    trader = Momentum(3, period=10.0, short=2, long=5, size=(4, 6))
    trader.reset(market, range(1, 4), np.random.default_rng(3))
    t0, t1 = market.open_time, market.open_time + 60.0
    orders = trader.orders(market, t0, t1, None)
    assert len(orders.time) == 18  # 3 agents x 6 wakes of 10 s
    assert np.all((orders.time >= t0) & (orders.time < t1))
    assert set(orders.kind.tolist()) == {Kind.LIMIT}
    assert set(orders.side.tolist()) == {side}
    assert set(orders.price.tolist()) == {price}
    assert set(orders.qty.tolist()) <= {4, 5, 6}
    assert set(orders.owner.tolist()) == {1, 2, 3}


def test_momentum_waits_for_history_and_ignores_flat_mids():
    """No orders with fewer than `long` mids, when the averages are equal, or when a side of
    the book is empty."""
    trader = Momentum(2, period=5.0, short=2, long=5)
    short_history = momentum_market([10_000, 10_001, 10_002, 10_003])
    trader.reset(short_history, range(0, 2), np.random.default_rng(0))
    t0 = short_history.open_time
    assert len(trader.orders(short_history, t0, t0 + 60, None).time) == 0
    flat = momentum_market([10_000] * 8)
    assert len(trader.orders(flat, t0, t0 + 60, None).time) == 0
    one_sided = momentum_market(list(range(10_000, 10_008)))
    one_sided.book.cancel(2)  # the ask
    assert len(trader.orders(one_sided, t0, t0 + 60, None).time) == 0


def test_momentum_rejects_bad_windows():
    """short must be positive and below long."""
    with pytest.raises(ValueError, match="short"):
        Momentum(short=5, long=5)
    with pytest.raises(ValueError, match="short"):
        Momentum(short=0, long=5)


# --------------------------------------------------------------------- zero intelligence
class NoDiffusion:
    """A generator stand-in: normal draws at their mean, and a + sign for every shock."""

    def normal(self, loc=0.0, scale=1.0, size=None):
        return np.full(size, float(loc))

    def standard_normal(self, size=None):
        return np.zeros(size)

    def integers(self, low, high=None, size=None):
        return np.full(size, 1)  # index 1 of (-1, +1)


def shock_at_first_time(rng, lam):
    """Shock counts: one megashock at the first time, none after."""
    counts = np.zeros(np.shape(lam), dtype=np.int64)
    counts[0] = 1
    return counts


def test_fundamental_decays_exactly_after_a_shock(monkeypatch):
    """With sigma = 0, r - r_bar decays as exp(-kappa (t - t_shock)) after a +10 tick shock."""
    monkeypatch.setattr(zero_intelligence, "poisson", shock_at_first_time)
    zi = ZeroIntelligence(1, r_bar=5_000, kappa=1e-3, sigma=0.0, shock_mean=10.0, shock_std=0.0)
    times = np.array([10.0, 20.0, 110.0, 1010.0, 5010.0])
    path = zi.fundamental_path(times, 0.0, NoDiffusion())
    expected = 5_000 + 10.0 * np.exp(-1e-3 * (times - 10.0))
    np.testing.assert_allclose(path, expected, rtol=0, atol=1e-9)
    assert path[2] == pytest.approx(5_000 + 10.0 * np.exp(-0.1), abs=1e-12)


def test_fundamental_without_noise_or_shocks_stays_at_r_bar():
    """sigma = 0 and no shocks: the path starts at r_bar and stays there exactly."""
    zi = ZeroIntelligence(1, r_bar=9_000, sigma=0.0, shock_rate=0.0)
    path = zi.fundamental_path(np.linspace(1.0, 20_000.0, 50), 0.0, np.random.default_rng(1))
    assert path.tolist() == [9_000.0] * 50


def test_fundamental_stationary_variance():
    """Samples far apart (decay ~ e^-10) have mean r_bar and variance sigma^2 / (2 kappa)."""
    kappa, sigma = 1e-3, 0.5
    zi = ZeroIntelligence(1, r_bar=1_000, kappa=kappa, sigma=sigma, shock_rate=0.0)
    times = np.arange(1, 20_001) * 10_000.0
    path = zi.fundamental_path(times, 0.0, np.random.default_rng(2))
    variance = sigma**2 / (2 * kappa)  # 125 ticks^2
    assert abs(path.mean() - 1_000) < 5 * np.sqrt(variance / len(times))
    assert path.var() == pytest.approx(variance, rel=0.05)


def quiet_zi(n_agents: int, **kwargs) -> ZeroIntelligence:
    """ZI traders whose forecast is exactly r_bar = 10000: no diffusion, shocks or noise."""
    return ZeroIntelligence(
        n_agents, r_bar=10_000, sigma=0.0, shock_rate=0.0, obs_noise=0.0, **kwargs
    )


def test_zero_intelligence_prices_without_private_values():
    """With no private values every order is a REPLACE at r_bar - surplus (buy) or r_bar +
    surplus (sell)."""
    zi = quiet_zi(8, private_value_std=0.0, surplus=(3, 3), arrival_rate=1 / 20)
    market = Market([zi], n_seats=0, n_steps=10, warmup_seconds=0.0)
    market.reset(1)
    orders = zi.orders(market, market.open_time, market.close_time, None)
    assert len(orders.time) > 100
    assert set(orders.kind.tolist()) == {Kind.REPLACE}
    assert set(orders.side.tolist()) == {-1, 1}
    assert orders.price.tolist() == (10_000 - 3 * orders.side).tolist()
    assert set(orders.owner.tolist()) <= set(zi.owners)
    assert orders.qty.min() >= 1 and orders.qty.max() <= 100


def test_zero_intelligence_limit_prices_are_value_minus_side_surplus():
    """Flat agents value their next lot (buy) at theta[q_max] and their last (sell) at
    theta[q_max - 1]; the price is that value minus (buy) or plus (sell) the surplus."""
    zi = quiet_zi(8, q_max=3, private_value_std=4.0, surplus=(2, 2), arrival_rate=1 / 20)
    market = Market([zi], n_seats=0, n_steps=10, warmup_seconds=0.0)
    market.reset(2)
    assert np.all(np.diff(zi.theta, axis=1) <= 0)  # marginal values fall with holdings
    orders = zi.orders(market, market.open_time, market.close_time, None)
    agent = orders.owner - zi.owners.start
    lot = 3 - (orders.side < 0)
    expected = np.rint(10_000 + zi.theta[agent, lot] - 2 * orders.side)
    assert orders.price.tolist() == expected.astype(np.int64).tolist()
    assert len(set(orders.price.tolist())) > 4


def test_zero_intelligence_holdings_follow_fills():
    """After a seat sells one lot into a ZI agent's bid, the agent (q_max = 1 lot) sends no
    more buys, and prices its sells with the value of its last lot, theta[0, 1]."""
    zi = quiet_zi(
        1, q_max=1, size=(10, 10), private_value_std=4.0, surplus=(2, 2), arrival_rate=1 / 10
    )
    market = Market([zi], n_seats=1, n_steps=30, warmup_seconds=0.0)
    market.reset(3)
    high, low = zi.theta[0].tolist()
    buy, sell = round(10_000 + low - 2), round(10_000 + high + 2)  # prices while flat
    while market.book.best_bid() is None:
        market.step()
    assert market.book.best_bid() == (buy, 10)
    assert market.step_index < 10
    market.step([[(Kind.MARKET, -1, 0, 10)]])
    assert market.account(0).inventory == -10
    assert market.account(0).cash == 10 * buy
    assert market.book.positions(1, 2).tolist() == [10]  # the ZI agent (owner 1) holds a lot

    later = zi.orders(market, market.t, market.close_time, None)
    quotes = np.isin(later.kind, [Kind.LIMIT, Kind.REPLACE])
    assert quotes.sum() > 3
    assert set(later.side[quotes].tolist()) == {-1}  # holding +1 lot = q_max: no buys
    assert set(later.price[quotes].tolist()) == {round(10_000 + low + 2)}
    assert round(10_000 + low + 2) != sell


def test_zero_intelligence_rejects_bad_kappa():
    """The mean-reversion rate must be positive."""
    with pytest.raises(ValueError, match="kappa"):
        ZeroIntelligence(kappa=0.0)
