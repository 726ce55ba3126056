"""Tests for the responsive replay (envs.simulator.responsive, envs.simulator.seat_response):
with no seat trading it is the tape exactly; a trade shifts the tape's later prices by its
kernel, trades add up concavely, the volume taken is held out until it refills, orphans
follow the replay's rule; the compiled and Python paths agree; the estimate gives back a
known propagator."""

from __future__ import annotations

import pickle
from dataclasses import replace

import numpy as np
import pytest

from tests.envs.quiet_tapes import DEPTH, PRICE, quiet_tape
from tradearena.envs.simulator.book import OrderBook
from tradearena.envs.simulator.market import Market
from tradearena.envs.simulator.orders import Kind
from tradearena.envs.simulator.recording import recorded_tape, synthetic_tape
from tradearena.envs.simulator.response_estimate import (
    bare_propagator,
    estimate_response,
    fit_kernel,
    market_orders,
)
from tradearena.envs.simulator.responsive import QUANTILES, ResponseModel, market_order_counts
from tradearena.envs.simulator.seat_response import SeatResponse
from tradearena.envs.simulator.traders import MarketReplay
from tradearena.envs.spec import MarketSpec, SpecError


def hand_model(
    kernel, *, refill: float = 0.0, concavity: float = 1.0, reference: float = 10.0
) -> ResponseModel:
    """A response with the given ``kernel`` (ticks by lag, a fresh trade of ``reference``
    lots) and every level refilling after ``refill`` seconds."""
    kernel = np.asarray(kernel, dtype=float)
    times = np.full(QUANTILES, refill)
    return ResponseModel(
        kernel=kernel,
        reference=reference,
        spread=1.0,
        emptied=times,
        thinned=times,
        concavity=concavity,
        hours=(0.0, 86_400.0),
        propagator=kernel,
        mechanical=np.zeros_like(kernel),
        orders=0,
    )


class Replay(MarketReplay):
    """A replay whose `handle` carries a message out at its own time (``book.now``), as the
    market's flow does."""

    def handle(self, book, ref):
        if ref >= 0:
            book.now = float(self.time[ref])
        return super().handle(book, ref)


def start(tape, model, seed=0):
    """A replay of ``tape`` answering by ``model`` on a fresh book (owner 1), its seat 0."""
    replay = Replay(tape, response=model)
    book = OrderBook(recycle=True)
    replay.start(book, 1, np.random.default_rng(seed))
    return replay, book


def top(book):
    """(best bid, bid lots, best ask, ask lots)."""
    (bid, bid_lots), (ask, ask_lots) = book.best_bid(), book.best_ask()
    return bid, bid_lots, ask, ask_lots


# ------------------------------------------------------------------------------ the seat
def test_a_trade_shifts_the_tapes_later_prices_by_its_kernel():
    """One seat market order with a flat kernel of 3 ticks: from the next message on, the
    tape's book is its rows moved 3 ticks in the order's direction (the dither, under 1, does
    not change a whole number), and it refills the volume taken at once."""
    tape = quiet_tape(10.0)
    replay, book = start(tape, hand_model([3.0] * 5, reference=50))
    for ref in range(4):
        replay.handle(book, ref)
    book.market(1, 50, 0)  # the seat buys 50 of the ask's 1000
    replay.replayer.observe(book)
    for ref in range(4, 40):
        replay.handle(book, ref)
        ask, ask_lots, bid, bid_lots = tape.book[ref]
        assert top(book) == (bid + 3, bid_lots, ask + 3, ask_lots)
    response = replay.replayer.response
    assert (response.shift, response.taken, response.orders) == (3, 50, 1)


@pytest.mark.parametrize(("concavity", "moved"), [(1.0, 6.0), (0.5, 3 * np.sqrt(2.0))])
def test_trades_add_up_concavely(concavity, moved):
    """Two buys of the reference size with a flat kernel of 3 ticks move the price 6 ticks
    when they add linearly and 3 sqrt(2) at the square root (the second adds sqrt(2) - 1 of a
    fresh one), rounded down after the session's dither."""
    tape = quiet_tape(10.0)
    replay, book = start(tape, hand_model([3.0] * 5, concavity=concavity, reference=20), seed=4)
    for ref in range(2):
        book.market(1, 20, 0)
        replay.replayer.observe(book)
        replay.handle(book, ref)
    response = replay.replayer.response
    assert response.moved == pytest.approx(moved)
    assert response.shift == int(np.floor(moved + response.dither))
    replay.handle(book, 2)
    assert book.best_bid()[0] == PRICE + response.shift


def test_a_trades_impact_decays_along_its_kernel_to_its_permanent_part():
    """The kernel counts market orders since the trade (the tape's and the seats'): the
    tape's message after l - 1 of its market orders since a trade is shifted by kernel[l - 1],
    and by the last lag's (the permanent part) ever after."""
    kernel = [9.0, 7.0, 5.0, 4.0]
    tape = quiet_tape(30.0, trades_every=3)
    before = np.concatenate(([0], market_order_counts(tape)[:-1]))
    replay, book = start(tape, hand_model(kernel, reference=30))
    book.market(-1, 30, 0)  # a sell: the shift is negative
    replay.replayer.observe(book)
    shifts = []
    for ref in range(len(tape)):
        replay.handle(book, ref)
        shifts.append(replay.replayer.response.shift)
    expected = [-kernel[min(c, len(kernel) - 1)] for c in before]
    assert shifts == expected and min(before) == 0 and max(before) > 5


def test_a_metaorder_relaxes_to_its_permanent_part_only():
    """On a tape whose own market orders move nothing, four buys of the reference size in a
    row (a run of 4 references: sqrt(4) = 2 times one's impact, all within the kernel's
    lags) with a kernel of 5, 4, 3 then 2 ticks for good: once its lags have passed, the
    price stays shifted by its permanent part alone, 2 x 2 = 4 ticks."""
    tape = quiet_tape(60.0, trades_every=2)
    replay, book = start(tape, hand_model([5.0, 4.0, 3.0] + [2.0] * 5, concavity=0.5))
    for ref in range(4):
        book.market(1, 10, 0)
        replay.replayer.observe(book)
        replay.handle(book, ref)
    for ref in range(4, len(tape)):
        replay.handle(book, ref)
    response = replay.replayer.response
    assert response.moved == pytest.approx(4.0) and response.shift == 4
    assert book.best_bid()[0] == PRICE + 4


def test_volume_taken_is_held_out_until_it_refills():
    """With no shift, a seat's buy of the whole best ask empties it until the refill time
    (5 s) has passed, although the tape's rows show it; then the row's volume is back."""
    tape = quiet_tape(20.0)
    replay, book = start(tape, hand_model([0.0] * 3, refill=5.0))
    replay.handle(book, 0)
    book.now = tape.messages["time"][0]
    taken_at = book.now
    book.market(1, DEPTH, 0)  # the whole best ask (the row before showed 1000)
    replay.replayer.observe(book)
    held = replay.replayer.response.held
    assert held == [(-1, DEPTH, pytest.approx(taken_at + 5.0))]
    for ref in range(1, len(tape)):
        replay.handle(book, ref)
        ask = book.best_ask()
        if tape.messages["time"][ref] < taken_at + 5.0:
            assert ask is None or ask[0] != PRICE + 1 or ask[1] == tape.book[ref][1] - DEPTH
        else:
            assert ask == (PRICE + 1, tape.book[ref][1])
            break


def test_orphans_take_another_order_never_fail():
    """The tape cancels and executes orders a seat already took: a cancel takes the replay's
    volume at that price instead, an execution whatever rests there, and the replay goes on to
    the end of the day without an error and with its rows' prices shifted."""
    tape = quiet_tape(5.0, trades_every=2)
    replay, book = start(tape, hand_model([2.0] * 3))
    replay.handle(book, 0)  # order 1 (10 lots) joins the ask behind the 1000
    book.market(1, DEPTH + 10, 0)  # the seat takes the whole level, order 1 too
    replay.replayer.observe(book)
    for ref in range(1, len(tape)):
        replay.handle(book, ref)  # order 1's execution, later deletes: orphans
    assert book.best_bid()[0] == PRICE + replay.replayer.response.shift


# ------------------------------------------------------------------------- no seat trading
@pytest.fixture(scope="module")
def level_one_day():
    """A recorded synthetic session read as a level-1 file would be: rows to reconcile to."""
    recorded = synthetic_tape(3, n_steps=120, levels=1)
    return replace(recorded, complete=False, source="level one")


def session_log(tape, response, seat_orders, seed=5):
    """The recorded log of a whole day's market on ``tape`` with one seat sending
    ``seat_orders(step)`` (the compiled flow)."""
    market = Market(
        [MarketReplay(tape, response=response)],
        n_seats=1,
        step_seconds=10.0,
        n_steps=int((tape.messages["time"][-1] - tape.messages["time"][0]) // 10),
        open_time=float(np.floor(tape.messages["time"][0])),
        warmup_seconds=0.0,
        record=True,
    )
    market.reset(seed)
    while not market.done:
        market.step([seat_orders(market.step_index)])
    return market, list(market.book.log)


def test_with_no_seat_trading_the_replay_is_the_tape(level_one_day):
    """A seat that holds, then one that quotes far from the touch all day: the responsive
    replay's every book change equals the plain replay's, its shift stays 0, nothing held."""
    model = hand_model([5.0] * 10, refill=30.0, concavity=0.5)
    far = [(int(Kind.QUOTE), 1, 1, 7), (int(Kind.QUOTE), -1, 100_000, 7)]
    for orders in (lambda step: [], lambda step: far):
        plain, plain_log = session_log(level_one_day, None, orders)
        market, log = session_log(level_one_day, model, orders)
        assert log == plain_log and len(log) > 10_000
        response = market.traders[0].replayer.response
        assert (response.shift, response.taken, response.held) == (0, 0, [])


def test_the_compiled_flow_equals_the_python_path(level_one_day):
    """A trading seat: the same session through the compiled flow and through the replay's
    Python ``orders``/``handle`` (a subclass that overrides ``handle``)."""

    model = hand_model(np.linspace(4, 1, 20), refill=3.0, concavity=0.5)

    def orders(step):
        return [(int(Kind.MARKET), 1 if step % 3 else -1, 0, 40)] if step % 2 else []

    compiled, log = session_log(level_one_day, model, orders)
    slow = Market(
        [Replay(level_one_day, response=model)],
        n_seats=1,
        step_seconds=compiled.step_seconds,
        n_steps=compiled.n_steps,
        open_time=compiled.open_time,
        warmup_seconds=0.0,
        record=True,
    )
    slow.reset(5)
    assert slow._compiled is None
    while not slow.done:
        slow.step([orders(slow.step_index)])
    assert list(slow.book.log) == log
    assert compiled.traders[0].replayer.response.taken > 0


def test_a_replayer_pickles_and_copies_mid_session(level_one_day):
    """Mid-session, a pickled and a copied replay go on exactly as the original."""
    model = hand_model(np.linspace(6, 2, 8), refill=4.0, concavity=0.5)
    replay, book = start(level_one_day, model, seed=2)
    for ref in range(300):
        if ref % 50 == 10:
            book.market(1 if ref % 100 else -1, 30, 0)
        replay.handle(book, ref)
    twins = [pickle.loads(pickle.dumps(replay.replayer)), replay.replayer.copy()]
    books = [pickle.loads(pickle.dumps(book)), book.copy()]
    for ref in range(300, 600):
        replay.handle(book, ref)
        for twin, twin_book in zip(twins, books):
            twin_book.now = book.now
            twin.handle(twin_book, ref)
    for twin, twin_book in zip(twins, books):
        assert twin_book.depth(5) == book.depth(5)
        assert twin.response.shift == replay.replayer.response.shift
        assert twin.response.held == replay.replayer.response.held


# ----------------------------------------------------------------------------- the estimate
def test_the_estimate_gives_back_a_known_propagator():
    """A tape recorded from the responsive replay of a quiet book, where a seat's market
    orders (signs persistent: C(1) = 0.6) are the only ones and every level refills at once:
    the bare propagator of the recorded tape is the known kernel, and the fit gives back its
    decay exponent."""
    lags = np.arange(1, 41)
    kernel = 200.0 + 300.0 * (1 + (lags - 1) / 4.0) ** -1.0  # ticks; the book's tick is 1
    model = hand_model(kernel, refill=0.0, concavity=1.0, reference=5)
    tape = quiet_tape(4_200.0, every=0.05)
    market = Market(
        [MarketReplay(tape, response=model)],
        n_seats=1,
        step_seconds=1.0,
        n_steps=4_000,
        open_time=34_200.0,
        warmup_seconds=0.0,
        position_limit=10**9,
        record=True,
    )
    market.reset(0)
    rng = np.random.default_rng(1)
    sign = 1
    while not market.done:
        sign = sign if rng.random() < 0.8 else -sign
        market.step([[(int(Kind.MARKET), sign, 0, 5)]])
    recorded = recorded_tape(market, 1)
    orders = market_orders(recorded, 0.0, 86_400.0)
    assert len(orders) == 4_000
    found = bare_propagator(orders.sign, orders.mid, 40)
    np.testing.assert_allclose(found, kernel, rtol=0.03)
    fitted = fit_kernel(found)
    np.testing.assert_allclose(fitted, kernel, rtol=0.02)


def test_the_estimate_holds_no_responsive_replay_to_too_few_orders():
    """Hours with fewer market orders than the estimate needs are refused, saying how many it
    needs; a spec names the field."""
    tape = quiet_tape(60.0, trades_every=5)
    with pytest.raises(Exception, match="too few to estimate .* at least 300"):
        estimate_response(tape)
    spec = MarketSpec(task="taker", tape=tape, responsive=True)
    with pytest.raises(SpecError, match="response_hours: .*at least 300"):
        spec.market(1)


def test_responsive_needs_a_tape_hours_in_order_and_a_concavity_in_range():
    with pytest.raises(SpecError, match="responsive: must be false without a tape"):
        MarketSpec(task="taker", responsive=True)
    with pytest.raises(SpecError, match="response_hours"):
        MarketSpec(task="taker", tape="synthetic", responsive=True, response_hours=(5.0, 1.0))
    for bad in (0.0, 1.5, float("nan")):
        with pytest.raises(SpecError, match="response_concavity: must be in \\(0, 1\\]"):
            MarketSpec(task="taker", tape="synthetic", responsive=True, response_concavity=bad)
    spec = MarketSpec(task="taker", tape="synthetic", responsive=True, response_hours=[1.0, 2.0])
    assert spec.response_hours == (1.0, 2.0) and spec.to_table()["response_hours"] == [1.0, 2.0]


def test_the_compiled_response_checks_its_model():
    counts, scale = np.zeros(3, np.int64), np.ones(3)
    times = np.zeros(2)
    with pytest.raises(ValueError, match="kernel must be finite ticks >= 0"):
        SeatResponse([-1.0], counts, scale, times, times, 10.0)
    with pytest.raises(ValueError, match="kernel must be \\(lags,\\)"):
        SeatResponse([[1.0]], counts, scale, times, times, 10.0)
    with pytest.raises(ValueError, match="scale must be 3 finite factors > 0"):
        SeatResponse([1.0], counts, -scale, times, times, 10.0)
    with pytest.raises(ValueError, match="reference must be lots > 0"):
        SeatResponse([1.0], counts, scale, times, times, 0.0)
    with pytest.raises(ValueError, match="concavity must be in"):
        SeatResponse([1.0], counts, scale, times, times, 10.0, 0.0)
    with pytest.raises(ValueError, match="quantiles"):
        SeatResponse([1.0], counts, scale, [3.0, 1.0], times, 10.0)


def test_a_run_adds_up_in_volume_however_it_is_split():
    """At the square root, 100 lots bought as one trade or as four of 25 move the price
    alike: sqrt(100 / 25) = 2 kernels with a reference of 25 lots; a sale after them is
    fresh (its amplitude does not shrink with the run against it)."""
    tape = quiet_tape(10.0)
    moved = []
    for pieces in (1, 4):
        replay, book = start(tape, hand_model([3.0] * 20, concavity=0.5, reference=25))
        for ref in range(pieces):
            book.market(1, 100 // pieces, 0)
            replay.replayer.observe(book)
            replay.handle(book, ref)
        moved.append(replay.replayer.response.moved)
    assert moved == pytest.approx([6.0, 6.0])
    book.market(-1, 25, 0)
    replay.replayer.observe(book)
    replay.handle(book, 4)
    assert replay.replayer.response.moved == pytest.approx(6.0 - 3.0)
