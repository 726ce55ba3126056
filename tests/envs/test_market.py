"""Tests for envs.simulator.market: conservation of shares and cash, seat accounting and rewards,
position limits, fees, seeding, and argument checks."""

import pickle
from collections import defaultdict

import numpy as np
import pytest

from tradearena.envs import OrderBook
from tradearena.envs.simulator.market import Account, Market
from tradearena.envs.simulator.orders import Kind
from tradearena.envs.simulator.recording import synthetic_tape
from tradearena.envs.simulator.traders import (
    MarketMaker,
    Momentum,
    Noise,
    ZeroIntelligence,
    light,
    rmsc04,
)
from tradearena.envs.spec import MarketSpec


class LoggingBook(OrderBook):
    """A book that keeps every fill of the market's batches and seat orders in ``fills``."""

    def __init__(self, record: bool = False) -> None:
        self.fills = []

    def run(self, *args, collect=True):
        fills, orders, cancels = super().run(*args, collect=True)
        self.fills.extend(fills)
        return fills, orders, cancels

    def submit(self, *args):
        fills = super().submit(*args)
        self.fills.extend(fills)
        return fills


class LoggingMarket(Market):
    """A market whose sessions use a `LoggingBook`: ``fills`` is every fill since reset,
    warm-up included. Its populations send their rows through `orders` (no compiled flow,
    which bypasses the book's Python `run`; `tests/envs/test_flow.py` shows both paths give
    the same sessions)."""

    def __init__(self, traders: list, **kwargs) -> None:
        for trader in traders:
            trader.program = lambda: None
        super().__init__(traders, **kwargs)

    def new_book(self) -> OrderBook:
        return LoggingBook(record=self.record)

    @property
    def fills(self) -> list:
        return self.book.fills


def small_population() -> list:
    """Every kind of background trader, in small numbers."""
    return [
        Noise(100),
        ZeroIntelligence(20, arrival_rate=1 / 30),
        MarketMaker(2, levels=5),
        Momentum(4, period=20.0, short=2, long=5),
    ]


def random_seat_orders(market: Market, rng: np.random.Generator) -> list[list[tuple]]:
    """Each seat: a market order of random side and size, sometimes a limit order at the best
    price of its side or a cancel of its resting orders."""
    orders = []
    for _ in range(market.n_seats):
        seat = [(Kind.MARKET, int(rng.choice([-1, 1])), 0, int(rng.integers(1, 150)))]
        roll = rng.random()
        if roll < 0.4:
            side = int(rng.choice([-1, 1]))
            best = market.book.best_bid() if side == 1 else market.book.best_ask()
            price = best[0] if best else market.initial_price - side
            seat.append((Kind.LIMIT, side, price, int(rng.integers(1, 100))))
        elif roll < 0.5:
            seat.append((Kind.CANCEL_ALL, 0, 0, 0))
        orders.append(seat)
    return orders


def run_logged(seed: int, fee: float = 0.0, n_steps: int = 40) -> tuple[LoggingMarket, list]:
    """A 3-seat session trading randomly; returns the market and each step's reward vector."""
    market = LoggingMarket(small_population(), n_seats=3, n_steps=n_steps, fee_per_share=fee)
    market.reset(seed)
    rng = np.random.default_rng(seed + 1000)
    rewards = []
    while not market.done:
        rewards.append(market.step(random_seat_orders(market, rng)))
    return market, rewards


# ---------------------------------------------------------------------------- conservation
def test_fills_conserve_shares_and_cash_and_match_accounts():
    """Over all owners share and cash changes sum to zero; the book's account of every owner
    (seats and background) and each seat's `Account` are exactly the sums of their own fills;
    the market's fill and volume counts agree with the fill log."""
    fee = 0.002
    market, _ = run_logged(seed=11, fee=fee)
    fills = market.fills
    summary = market.summary()
    assert len(fills) == summary["fills"] > 100
    assert sum(f.qty for f in fills) == summary["volume"]

    shares, cash = defaultdict(int), defaultdict(int)
    trades, volume = defaultdict(int), defaultdict(int)
    for f in fills:
        shares[f.taker_owner] += f.taker_side * f.qty
        shares[f.maker_owner] -= f.taker_side * f.qty
        cash[f.taker_owner] -= f.taker_side * f.qty * f.price
        cash[f.maker_owner] += f.taker_side * f.qty * f.price
        for owner in (f.taker_owner, f.maker_owner):
            trades[owner] += 1
            volume[owner] += f.qty
    assert sum(shares.values()) == 0
    assert sum(cash.values()) == 0

    n_owners = market.trader_owners[-1].stop
    accounts = [market.book.account(owner) for owner in range(n_owners)]
    assert [a[:2] for a in accounts] == [(shares[o], cash[o]) for o in range(n_owners)]
    assert [a[2:] for a in accounts] == [(volume[o], trades[o]) for o in range(n_owners)]
    assert sum(a[0] for a in accounts) == 0 and sum(a[1] for a in accounts) == 0
    positions = market.book.positions(0, n_owners).tolist()
    assert positions == [shares[o] for o in range(n_owners)]

    seats_traded = 0
    for seat, account in enumerate(market.accounts):
        assert account.inventory == shares[seat]
        assert account.cash == cash[seat]
        assert account.trades == trades[seat]
        assert account.volume == volume[seat]
        assert account.fees == pytest.approx(fee * volume[seat], rel=1e-12)
        seats_traded += account.trades > 0
    assert seats_traded == 3
    assert any(f.maker_owner < 3 for f in fills)  # seats also traded as makers


def test_rewards_are_value_changes_and_telescope():
    """Each step's reward is the change of (cash + inventory * mid) * tick - fees, by hand;
    the rewards of a session sum to the final value."""
    market = Market(small_population(), n_seats=2, n_steps=40, fee_per_share=0.001)
    market.reset(5)
    rng = np.random.default_rng(6)

    def by_hand(account: Account, mid: float) -> float:
        return (account.cash + account.inventory * mid) * market.tick_size - account.fees

    assert [market.value(s) for s in range(2)] == [0.0, 0.0]
    before = [0.0, 0.0]
    total = np.zeros(2)
    while not market.done:
        reward = market.step(random_seat_orders(market, rng))
        assert reward.shape == (2,)
        mid = market.mids()[-1]
        assert mid == market.last_mid
        after = [by_hand(a, mid) for a in market.accounts]
        np.testing.assert_allclose(reward, np.subtract(after, before), rtol=0, atol=1e-9)
        before = after
        total += reward
    assert np.any(total != 0)
    final = [market.value(s) for s in range(2)]
    np.testing.assert_allclose(total, final, rtol=1e-12, atol=1e-8)


def test_fees_are_charged_per_traded_share():
    """Fees do not change what trades: the same session with a fee has the same fills, and
    each seat's value is lower by exactly fee_per_share x its traded shares."""
    free, _ = run_logged(seed=3, fee=0.0)
    charged, _ = run_logged(seed=3, fee=0.005)
    assert free.fills == charged.fills
    for a, b in zip(free.accounts, charged.accounts, strict=True):
        assert (a.cash, a.inventory, a.volume) == (b.cash, b.inventory, b.volume)
        assert a.volume > 0 and a.fees == 0.0
        assert b.fees == pytest.approx(0.005 * b.volume, rel=1e-12)
    for seat in range(3):
        assert free.value(seat) - charged.value(seat) == pytest.approx(
            0.005 * charged.account(seat).volume, rel=1e-9
        )


# --------------------------------------------------------------------------- position limit
def test_market_orders_are_clipped_to_the_position_limit():
    """Buying 300 a step with a limit of 500 stops at +500 exactly; then selling 2000 a step
    is clipped to the 1000 shares of capacity and stops at -500."""
    market = Market(
        [MarketMaker(2, levels=10, size=500)], n_seats=1, n_steps=12, position_limit=500
    )
    market.reset(2)
    inventories = []
    for _ in range(4):
        assert market.capacity(0, 1) == 500 - market.account(0).inventory
        market.step([[(Kind.MARKET, 1, 0, 300)]])
        inventories.append(market.account(0).inventory)
    assert inventories == [300, 500, 500, 500]
    assert market.capacity(0, 1) == 0 and market.capacity(0, -1) == 1000
    for _ in range(3):
        market.step([[(Kind.MARKET, -1, 0, 2000)]])
        inventories.append(market.account(0).inventory)
    assert inventories[4:] == [-500, -500, -500]
    assert market.account(0).volume == 500 + 1000


def test_two_market_orders_in_one_step_respect_the_limit():
    """A seat sending two market buys of 100 in one step with a limit of 150 ends at +150:
    the second order is clipped against the inventory after the first."""
    market = Market(
        [MarketMaker(2, levels=10, size=1000)], n_seats=1, n_steps=5, position_limit=150
    )
    market.reset(0)
    market.step([[(Kind.MARKET, 1, 0, 100), (Kind.MARKET, 1, 0, 100)]])
    assert market.account(0).inventory == 150


def test_fills_earlier_in_the_step_count_against_the_limit():
    """Seat 1 (limit 100) rests a bid of 100 at the top of the book; next step seat 0 sells
    100 at market while seat 1 cancels and buys 100 at market (what QuoteActions "buy" sends).
    Whichever seat the random order puts first (seeds 0-3 give both orders), seat 1 ends at
    exactly +100."""
    for seed in range(4):
        market = Market(
            [MarketMaker(1, levels=5, size=1000)], n_seats=2, n_steps=5, position_limit=100
        )
        market.reset(seed)
        bid = market.book.best_bid()[0]
        market.step([[], [(Kind.LIMIT, 1, bid + 1, 100)]])
        assert market.book.best_bid() == (bid + 1, 100)
        market.step(
            [[(Kind.MARKET, -1, 0, 100)], [(Kind.CANCEL_ALL, 0, 0, 0), (Kind.MARKET, 1, 0, 100)]]
        )
        assert market.account(0).inventory == -100
        assert market.account(1).inventory == 100, f"seed {seed}"


# ------------------------------------------------------------------------------- seeding
def run_plain(seed: int, traders=None, n_steps: int = 30) -> Market:
    market = Market(rmsc04() if traders is None else traders, n_seats=0, n_steps=n_steps)
    market.reset(seed)
    while not market.done:
        market.step()
    return market


def test_same_seed_same_session_different_seed_differs():
    """Mids, spreads and the summary are identical for one seed and differ for another."""
    a, b, c = run_plain(1), run_plain(1), run_plain(2)
    assert len(a.mids()) == 31
    np.testing.assert_array_equal(a.mids(), b.mids())
    np.testing.assert_array_equal(a.spreads(), b.spreads())
    assert a.summary() == b.summary()
    assert a.summary()["fills"] > 0
    assert not np.array_equal(a.mids(), c.mids()) or not np.array_equal(a.spreads(), c.spreads())
    assert a.summary() != c.summary()


def whole_session_orders(trader, market: Market):
    """Everything ``trader`` would send over the session, asked in one call after reset."""
    return trader.orders(market, market.open_time - market.warmup_seconds, market.close_time, None)


def test_adding_a_population_leaves_other_draws_unchanged():
    """A Noise population draws the same wake times, sides, sizes and owners whether or not a
    ZeroIntelligence population is appended after it; another seed changes them."""
    batches = []
    for traders, seed in (
        ([Noise(200)], 9),
        ([Noise(200), ZeroIntelligence(30)], 9),
        ([Noise(200)], 10),
    ):
        market = Market(traders, n_seats=1, n_steps=30)
        market.reset(seed)
        batches.append(whole_session_orders(traders[0], market))
    alone, with_zi, other = batches
    assert len(alone.time) == 200
    for name in ("time", "side", "qty", "owner"):
        np.testing.assert_array_equal(getattr(alone, name), getattr(with_zi, name))
    assert not np.array_equal(alone.time, other.time)


def test_summary_counts():
    """The summary's fills and volume agree with the fill log; steps and mids with the
    session's mids."""
    market = LoggingMarket(rmsc04(), n_seats=0, n_steps=30)
    market.reset(4)
    while not market.done:
        market.step()
    summary = market.summary()
    mids = market.mids()
    assert summary["steps"] == 30
    assert summary["fills"] == len(market.fills) > 0
    assert summary["volume"] == sum(f.qty for f in market.fills)
    assert summary["orders"] > summary["cancels"] > 0
    assert (summary["open_mid"], summary["close_mid"]) == (mids[0], mids[-1])
    assert (summary["low_mid"], summary["high_mid"]) == (mids.min(), mids.max())
    assert summary["mean_spread"] == pytest.approx(np.nanmean(market.spreads()))


# ------------------------------------------------------------------- pickling, recording
def test_pickled_market_keeps_accounts_mid_session():
    """A market pickled mid-session keeps the seat's account and the session counters, and
    continues exactly as the original."""
    market = Market(small_population(), n_seats=1, n_steps=10)
    market.reset(1)
    for _ in range(3):
        market.step([[(Kind.MARKET, 1, 0, 100)]])
    assert market.account(0).inventory == 300
    clone = pickle.loads(pickle.dumps(market))
    assert clone.book.depth(10) == market.book.depth(10)  # the resting orders survive
    assert clone.account(0) == market.account(0)
    assert clone.summary() == market.summary()
    sell = [[(Kind.MARKET, -1, 0, 50)]]
    for _ in range(3):
        assert market.step(sell).tolist() == clone.step(sell).tolist()


def test_pickled_market_resets_like_the_original():
    """After a pickle round trip, reset with a seed gives the same session as the original."""
    market = Market(small_population(), n_seats=1, n_steps=10)
    market.reset(1)
    market.step([[(Kind.MARKET, 1, 0, 100)]])
    clone = pickle.loads(pickle.dumps(market))
    rewards = []
    for m in (market, clone):
        m.reset(7)
        rewards.append([m.step([[(Kind.MARKET, 1, 0, 30)]]).tolist() for _ in range(10)])
    assert rewards[0] == rewards[1]
    assert market.summary() == clone.summary()
    assert market.account(0) == clone.account(0)


def test_recorded_seat_orders_carry_the_step_start_time():
    """With record=True a seat's order, executed at the step's start t0, is logged at t0."""
    market = Market([MarketMaker(1, levels=2)], n_seats=1, n_steps=3, record=True)
    market.reset(0)
    stamps = []
    for k in range(3):
        t0, n = market.t, len(market.book.log)
        market.step([[(Kind.LIMIT, 1, 9_990 - k, 10)]])
        new = [m for m in market.book.log[n:] if m[1] == 1 and m[4] == 9_990 - k]
        assert len(new) == 1
        stamps.append((new[0][0], t0))
    assert [t for t, _ in stamps] == [t0 for _, t0 in stamps]


def test_recording_logs_every_change_in_time_order():
    """A recording session's log is in time order, names each order it cancels or executes
    after it rested, and its counts agree with the market's."""
    market = Market(small_population(), n_seats=0, n_steps=20, record=True)
    market.reset(3)
    while not market.done:
        market.step()
    log = market.book.log
    times = [m[0] for m in log]
    assert times == sorted(times)
    assert times[0] >= market.open_time - market.warmup_seconds and times[-1] < market.close_time
    rested = set()
    for _, kind, order_id, size, _, side in log:
        assert size > 0 and side in (-1, 1)
        if kind == 1:
            rested.add(order_id)
        else:
            assert order_id in rested
    assert sum(m[3] for m in log if m[1] == 4) == market.summary()["volume"]
    assert sum(1 for m in log if m[1] == 4) == market.summary()["fills"]


# ----------------------------------------------------------------------------- invariants
def test_book_is_never_crossed_at_step_end():
    """With seats trading and the full rmsc04 population, best bid < best ask after every
    step, and the recorded spread equals ask - bid."""
    market = Market(rmsc04(), n_seats=2, n_steps=40)
    market.reset(8)
    rng = np.random.default_rng(8)
    both_sides = 0
    while not market.done:
        market.step(random_seat_orders(market, rng))
        bid, ask = market.book.best_bid(), market.book.best_ask()
        if bid is not None and ask is not None:
            both_sides += 1
            assert bid[0] < ask[0]
            assert market.spreads()[-1] == ask[0] - bid[0]
            assert market.mids()[-1] == (bid[0] + ask[0]) / 2
    assert both_sides == 40


def test_mids_before_and_after_open():
    """Mids hold the open and one entry per step; the last known mid carries over while a
    side is empty."""
    market = Market([], n_seats=1, n_steps=3, initial_price=5_000)
    market.reset(0)
    assert market.mids().tolist() == [5_000.0]
    assert np.isnan(market.spreads()[0])
    market.book.limit(1, 4_990, 10, owner=0)
    market.book.limit(-1, 5_020, 10, owner=0)
    market.step()
    assert market.mids().tolist() == [5_000.0, 5_005.0]
    market.book.cancel(2)
    market.step()
    assert market.mids().tolist() == [5_000.0, 5_005.0, 5_005.0]


def test_step_after_done_raises():
    """A finished session refuses further steps until reset."""
    market = Market([], n_seats=1, n_steps=2)
    market.reset(0)
    market.step()
    market.step()
    assert market.done
    with pytest.raises(RuntimeError, match="reset"):
        market.step()
    market.reset(0)
    assert not market.done and market.step_index == 0


@pytest.mark.parametrize(
    "kwargs",
    [
        {"n_seats": -1},
        {"n_steps": 0},
        {"step_seconds": 0.0},
        {"step_seconds": -60.0},
        {"warmup_seconds": -1.0},
    ],
)
def test_bad_constructor_arguments(kwargs):
    """Negative seats, no steps, non-positive step length or negative warm-up are refused."""
    with pytest.raises(ValueError):
        Market([], **kwargs)


def test_owner_blocks():
    """Seats take owner ids 0..n_seats-1 and each population the next block."""
    market = Market([Noise(5), MarketMaker(2), Momentum(3)], n_seats=2, n_steps=1)
    assert market.trader_owners == [range(2, 7), range(7, 9), range(9, 12)]


def test_day_windows_open_at_different_steps_and_replay_the_day_before():
    """With day_steps > n_steps each reset opens a window of the day at a step drawn from the
    session's seed; the book at the window's open is the book the full day shows then."""
    tape = synthetic_tape(3, traders=light(), n_steps=40)
    day = MarketSpec(tape=tape).market(0)
    window = MarketSpec(tape=tape, n_steps=10).market(0)
    assert window.day_steps == day.n_steps > 10
    opens = set()
    for seed in range(6):
        window.reset(seed)
        offset = round((window.open_time - window.day_open) / window.step_seconds)
        opens.add(offset)
        day.reset(seed)
        for _ in range(offset):
            day.step()
        assert day.t == window.open_time
        assert day.book.depth(50) == window.book.depth(50)
    assert len(opens) > 1


def _opening_steps(market: Market, seeds: range) -> list[int]:
    """The step of the day at which each seed's session opens."""
    steps = []
    for seed in seeds:
        market.reset(seed)
        steps.append(round((market.open_time - market.day_open) / market.step_seconds))
    return steps


def test_window_steps_open_sessions_only_in_the_window():
    """window_steps (12, 20) of a 45-step day: each session opens at 12 + the market
    generator's integers(9), so every opening lies in 12 .. 20 and both ends are reached."""
    tape = synthetic_tape(3, traders=light(), n_steps=40)
    window = MarketSpec(tape=tape, n_steps=10, window_steps=[12, 20]).market(0)
    opens = _opening_steps(window, range(60))
    first_draw = [  # the market's generator is the first child of the session's seed
        12 + int(np.random.default_rng(np.random.SeedSequence(s).spawn(2)[0]).integers(9))
        for s in range(60)
    ]
    assert opens == first_draw
    assert min(opens) == 12 and max(opens) == 20


def test_default_window_draws_the_whole_days_offsets_bit_for_bit():
    """No window_steps, and the window (0, day_steps - n_steps), draw integers(36) from the
    market's generator, the offsets of the whole day as before; the sessions' books agree."""
    tape = synthetic_tape(3, traders=light(), n_steps=40)
    whole = MarketSpec(tape=tape, n_steps=10).market(0)
    spelt = MarketSpec(tape=tape, n_steps=10, window_steps=[0, 35]).market(0)
    assert whole.window_steps == (0, 35)
    expected = [
        int(np.random.default_rng(np.random.SeedSequence(s).spawn(2)[0]).integers(36))
        for s in range(40)
    ]
    assert _opening_steps(whole, range(40)) == expected == _opening_steps(spelt, range(40))
    assert whole.book.depth(50) == spelt.book.depth(50)


@pytest.mark.parametrize("window", [(5, 3), (-1, 3), (0, 31)])
def test_a_window_outside_the_day_is_refused(window):
    """window_steps must satisfy 0 <= first <= last <= day_steps - n_steps (here 30)."""
    with pytest.raises(ValueError, match="window_steps"):
        Market([], n_steps=10, day_steps=40, window_steps=window)
