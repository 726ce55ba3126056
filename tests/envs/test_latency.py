"""Order-entry and feed latency (`envs.simulator.latency`) on a hand-built replayed tape, whose
book at every instant is known, and on the synthetic populations: orders land late and meet
the book of their landing time, views show the book of ``feed_latency`` seconds ago, the
delays are the session seed's, and a bad setting is named."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from tradearena.envs.data.tapes import MESSAGE_DTYPE, Tape
from tradearena.envs.seats import SeatedMarket
from tradearena.envs.simulator.features import feature_names, features
from tradearena.envs.simulator.latency import (
    LATENCY_KEY,
    Constant,
    Empirical,
    LogNormal,
    order_latency,
)
from tradearena.envs.simulator.market import Market
from tradearena.envs.simulator.orders import Kind
from tradearena.envs.simulator.traders import light
from tradearena.envs.spec import MarketSpec, SpecError

# (time, type, order id, size, price ticks, direction): the book is built in the first second
# (bid 9999 x 100; asks 10001 x 80, 10002 x 100), the best ask is deleted at 34201.5 and a
# bid joins at 9998 at 34201.9. Steps of 1 s from 34200: two of them.
MESSAGES = [
    (34200.1, 1, 1, 80, 10001, -1),
    (34200.2, 1, 2, 100, 10002, -1),
    (34200.3, 1, 3, 100, 9999, 1),
    (34201.5, 3, 1, 80, 10001, -1),
    (34201.9, 1, 4, 10, 9998, 1),
]
HOLD = 1  # the hold action of every action set
BUY_50 = [(int(Kind.MARKET), 1, 0, 50)]
BID_50_AT_10001 = [(int(Kind.LIMIT), 1, 10001, 50)]


def tape() -> Tape:
    return Tape(np.array(MESSAGES, dtype=MESSAGE_DTYPE), None, complete=True)


def replay(**latency: object) -> Market:
    """The tape's market (one seat, steps of 1 s), opened."""
    market = MarketSpec(tape=tape(), step_seconds=1.0, **latency).market(1)
    market.reset(0)
    assert (market.open_time, market.n_steps) == (34200.0, 2)
    return market


def second_step(orders: list, **latency: object) -> Market:
    """The seat sends ``orders`` at 34201, when the best ask is still 10001 x 80."""
    market = replay(**latency)
    market.step()
    assert market.book.best_ask() == (10001, 80)
    market.step([orders])
    return market


def test_a_market_buy_fills_at_the_ask_in_force_when_it_lands():
    now = second_step(BUY_50).account(0)
    assert (now.inventory, now.cash) == (50, -50 * 10001)
    early = second_step(BUY_50, order_latency=0.4).account(0)  # lands at 34201.4
    assert (early.inventory, early.cash) == (50, -50 * 10001)
    late = second_step(BUY_50, order_latency=0.7).account(0)  # lands at 34201.7: 10001 gone
    assert (late.inventory, late.cash) == (50, -50 * 10002)


def test_a_bid_that_would_have_filled_misses_when_the_level_is_gone():
    now = second_step(BID_50_AT_10001)
    assert now.account(0).inventory == 50
    late = second_step(BID_50_AT_10001, order_latency={"model": "constant", "seconds": 0.7})
    assert late.account(0).inventory == 0  # it rests as the best bid instead
    assert late.book.best_bid() == (10001, 50)
    assert late.book.best_ask() == (10002, 100)


def test_orders_in_flight_past_the_step_land_in_a_later_one():
    market = replay(order_latency=1.6)
    market.step([BUY_50])  # sent at 34200 into an empty book, lands at 34201.6
    assert market.account(0).inventory == 0
    assert [flight[0] for flight in market._latency.in_flight] == [34201.6]
    market.step()
    account = market.account(0)
    assert (account.inventory, account.cash) == (50, -50 * 10002)
    assert market._latency.in_flight == []


def test_the_view_shows_the_book_feed_latency_seconds_ago():
    """At 34202 the book is bid 9999 / ask 10002 (mid 10000.5, spread 3); as of 34201.5 the
    delete at 34201.5 has not happened (mid 10000, spread 2); as of 34201.6 it has."""
    names = feature_names()
    spread, return_1 = names.index("spread"), names.index("return_1")
    for feed, mid, spread_seen in [(0.0, 10000.5, 3.0), (0.5, 10000.0, 2.0), (0.4, 10000.5, 3.0)]:
        table = SeatedMarket(
            MarketSpec(tape=tape(), step_seconds=1.0, feed_latency=feed), ["features"]
        )
        table.reset(0)
        table.step([HOLD])
        obs, _, done = table.step([HOLD])
        market = table.market
        assert done and market.mids().tolist() == [10000.0, 10000.0, 10000.5]
        assert market.seen_mids().tolist() == [10000.0, 10000.0, mid]
        assert obs[0][spread] == spread_seen
        assert obs[0][return_1] == np.float32(1e4 * math.log(mid / 10000.0))
        assert np.array_equal(features(market, 0), obs[0])  # one seat's features alike


@pytest.mark.parametrize("steps_ago", [1, 2])
def test_the_seen_mid_is_the_mid_whole_steps_ago(steps_ago):
    """With a feed latency of whole steps the view of step k is the mid after step k - n
    (the open's before the open), and the market itself runs as without latency."""
    seen, plain = (
        Market(light(), n_steps=30, feed_latency=60.0 * steps_ago),
        Market(light(), n_steps=30),
    )
    for market in (seen, plain):
        market.reset(3)
        for _ in range(30):
            market.step([[(int(Kind.MARKET), 1, 0, 10)]])
    mids = plain.mids()
    assert np.array_equal(seen.mids(), mids)
    assert seen.accounts == plain.accounts
    expected = np.concatenate([[mids[0]] * steps_ago, mids[:-steps_ago]])
    assert np.array_equal(seen.seen_mids(), expected)
    assert len(set(mids.tolist())) > 5  # the mid moved: the comparison has teeth


def test_delays_are_drawn_from_the_session_seed():
    """A delay longer than the session keeps every order in flight: their landing times are
    the step times plus the seed's latency stream's draws, one per seat and step, and the
    market (whose own draws are untouched) runs as with no seats at all."""
    model = LogNormal(median=1e5, sigma=0.5)
    market, quiet = (
        Market(light(), n_seats=2, n_steps=10, order_latency=model),
        Market(light(), n_seats=2, n_steps=10),
    )
    market.reset(42)
    quiet.reset(42)
    for _ in range(10):
        market.step([BUY_50, BUY_50])
        quiet.step()
    stream = np.random.default_rng(np.random.SeedSequence(42, spawn_key=(LATENCY_KEY,)))
    steps = market.open_time + 60.0 * np.arange(10)
    expected = (steps[:, None] + stream.lognormal(math.log(1e5), 0.5, (10, 2))).ravel()
    assert sorted(f[0] for f in market._latency.in_flight) == sorted(expected.tolist())
    assert np.array_equal(market.mids(), quiet.mids())


def test_the_models_draw_what_they_say():
    rng = np.random.default_rng(0)
    assert Constant(0.25).draw(rng, 3).tolist() == [0.25] * 3
    rows = Empirical((0.001, 0.002, 0.004)).draw(np.random.default_rng(5), 1000)
    assert set(rows.tolist()) == {0.001, 0.002, 0.004}
    draws = LogNormal(0.002, 0.5).draw(np.random.default_rng(5), 20_000)
    assert abs(np.median(draws) / 0.002 - 1) < 0.03
    assert abs(np.std(np.log(draws)) - 0.5) < 0.01


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0, None),
        (0.003, Constant(0.003)),
        ({"model": "constant", "seconds": 0.0}, None),
        ({"model": "lognormal", "median": 0.002, "sigma": 0.4}, LogNormal(0.002, 0.4)),
        ({"model": "empirical", "rows": [0.001, 0.003]}, Empirical((0.001, 0.003))),
    ],
)
def test_settings_give_their_models(value, expected):
    assert order_latency(value) == expected


@pytest.mark.parametrize(
    ("keywords", "message"),
    [
        ({"feed_latency": -1.0}, "feed_latency: must be in [0, 3600] seconds"),
        ({"feed_latency": 1e300}, "feed_latency: must be in [0, 3600] seconds"),
        ({"order_latency": -0.1}, "order_latency: must be in [0, 3600] seconds"),
        ({"order_latency": 1e300}, "order_latency: must be in [0, 3600] seconds, got 1e+300"),
        (
            {"order_latency": {"model": "lognormal", "median": 1e300, "sigma": 1.0}},
            "order_latency.median: must be in [0, 3600] seconds",
        ),
        (
            {"order_latency": {"model": "lognormal", "median": 0.01, "sigma": 1e3}},
            "order_latency.sigma: must be in [0, 10]",
        ),
        ({"order_latency": {"model": "lognorm"}}, "did you mean 'lognormal'?"),
        (
            {"order_latency": {"model": "lognormal", "median": 1.0, "sigmma": 1.0}},
            "order_latency.sigmma: no such parameter (did you mean 'sigma'?)",
        ),
        ({"order_latency": {"model": "lognormal", "median": 1.0}}, "order_latency.sigma: a "),
        ({"order_latency": {"model": "empirical", "rows": []}}, "order_latency.rows: must be"),
        (
            {"order_latency": {"model": "empirical", "rows": [0.1, -1]}},
            "order_latency.rows.1: must be in [0, 3600] seconds",
        ),
    ],
)
def test_bad_latency_settings_are_named(keywords, message):
    with pytest.raises(SpecError) as error:
        MarketSpec(**keywords)
    assert message in str(error.value)


def test_a_market_pickled_mid_session_goes_on_the_same():
    """Orders in flight, the latency stream and the views recorded travel with the market."""
    model = LogNormal(median=30.0, sigma=1.0)
    market = Market(light(), n_steps=20, order_latency=model, feed_latency=75.0)
    market.reset(9)
    for _ in range(10):
        market.step([BUY_50])
    copy = pickle.loads(pickle.dumps(market))
    for m in (market, copy):
        for _ in range(10):
            m.step([BUY_50])
    assert np.array_equal(copy.mids(), market.mids())
    assert np.array_equal(copy.seen_mids(), market.seen_mids())
    assert copy.accounts == market.accounts and market.account(0).inventory > 0
