"""Order flow learned event by event: the events a tape holds, the estimator's known answers on
flow simulated from known parameters, the compiled sampler equal to its Python reference, the
book consistent after every event, and the flow's reaction to a seat's order."""

from __future__ import annotations

import pickle
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference_flow import OPEN, known_model, reference_events  # tests/reference_flow.py

from tradearena.envs.data.events import N_EVENT_KINDS, EventKind, Revealed, events, revealed
from tradearena.envs.data.tapes import MESSAGE_DTYPE, Tape
from tradearena.envs.errors import ParameterError
from tradearena.envs.simulator.book import OrderBook
from tradearena.envs.simulator.learned_flow.estimate import (
    estimate,
    fit_events,
    kernel_sums,
    log_likelihood,
)
from tradearena.envs.simulator.learned_flow.exciters import N_EXCITERS, Exciter
from tradearena.envs.simulator.learned_flow.marks import FAMILIES, By, Family, count_marks
from tradearena.envs.simulator.learned_flow.model import EventModel, check
from tradearena.envs.simulator.learned_flow.parameters import LearnedFlowError
from tradearena.envs.simulator.market import Market, TraderError
from tradearena.envs.simulator.orders import Kind as Order
from tradearena.envs.simulator.recording import synthetic_tape
from tradearena.envs.simulator.traders.learned import LearnedFlow, open_book, sampler


def tape_of(rows: list[tuple], book: list[list[int]]) -> Tape:
    """A level-1 tape of (time, type, order id, size, price ticks, direction) messages and
    the book after each: (ask, ask lots, bid, bid lots)."""
    messages = np.array(rows, MESSAGE_DTYPE)
    return Tape(messages, np.array(book, np.int64))


def test_events_name_each_message_and_group_a_sweep():
    """Before each message the book is 100 x 105 (bid x ask, 5 ticks wide), 300 and 200 lots
    at the touch; the bid side's messages classify by their offset from 100, the ask side's
    from 105, and two executions at one time stamp on one side are one market order."""
    rows = [
        (0.5, 5, 0, 1, 103, 1),  # the first message: no state before it, left out
        (1.0, 1, 1, 10, 100, 1),  # limit at the best bid
        (2.0, 1, 2, 20, 102, 1),  # 2 ticks inside the spread
        (3.0, 1, 3, 30, 97, 1),  # 3 ticks behind the best bid
        (4.0, 3, 4, 40, 105, -1),  # delete at the best ask
        (5.0, 2, 5, 50, 107, -1),  # partial cancel 2 ticks behind the best ask
        (6.0, 4, 6, 60, 100, 1),  # a sweep of the bid: two executions at 6.0
        (6.0, 4, 7, 70, 100, 1),
        (7.0, 5, 8, 80, 103, 1),  # hidden: left out
        (8.0, 1, 9, 90, 106, 1),  # would cross the ask: left out
    ]
    book = [[105, 200, 100, 300]] * len(rows)
    ev = events(tape_of(rows, book))
    kinds = [
        EventKind.LIMIT_TOUCH,
        EventKind.LIMIT_INSIDE,
        EventKind.LIMIT_BEHIND,
        EventKind.CANCEL_TOUCH,
    ]
    kinds += [EventKind.CANCEL_BEHIND, EventKind.MARKET]
    assert ev.kind.tolist() == kinds
    assert ev.side.tolist() == [1, 1, 1, -1, -1, 1]
    assert ev.offset.tolist() == [0, 2, 3, 0, 2, 0]
    assert ev.size.tolist() == [10, 20, 30, 40, 50, 130]
    assert ev.spread.tolist() == [5] * 6
    assert ev.own.tolist() == [300, 300, 300, 200, 200, 300]
    assert ev.other.tolist() == [200, 200, 200, 300, 300, 200]


def test_a_level_one_tape_reveals_the_level_behind_an_emptied_best():
    rows = [(1.0, 1, 1, 5, 100, 1), (2.0, 4, 1, 305, 100, 1)]
    book = [[105, 200, 100, 305], [105, 200, 98, 40]]  # the bid at 100 taken: 98 shows 40
    shown = revealed(tape_of(rows, book))
    assert (shown.gap.tolist(), shown.size.tolist()) == ([2], [40])


def test_kernel_sums_are_the_decayed_counts_of_earlier_events():
    rows = [(0.0, 5, 0, 1, 103, 1), (0.0, 1, 1, 1, 100, 1), (0.5, 1, 2, 1, 105, -1)]
    rows += [(1.5, 3, 1, 1, 100, 1)]
    book = [[105, 200, 100, 300]] * 4
    ev = events(tape_of(rows, book))
    sums = kernel_sums(ev, np.array([2.0])).reshape(3, 2, N_EXCITERS)
    # the third event (bid side): the bid limit 1.5 s ago on its side, the ask limit 1 s ago
    assert sums[2, 0, EventKind.LIMIT_TOUCH] == pytest.approx(2.0 * np.exp(-3.0))
    assert sums[2, 1, EventKind.LIMIT_TOUCH] == pytest.approx(2.0 * np.exp(-2.0))
    assert not sums[0].any()


@pytest.fixture(scope="module")
def simulated():
    """Two hours of the known model's flow, drawn by the Python reference."""
    model = known_model()
    book = OrderBook()
    book.now = OPEN
    open_book(book, model, 10_000, range(2))
    ev, path = reference_events(model, book, range(2), np.random.default_rng(7), OPEN, OPEN + 7200)
    return model, ev, path


def test_the_estimator_recovers_intensities_branching_and_profile(simulated):
    """Fitted at the true decays and state buckets, on about 10,000 events: each baseline
    rate of a state the flow spent ten minutes in within five standard errors of a Poisson
    count (the split of each state's events between its baseline and the excitation, and the
    gain's share of that, add to a count's error), each excitation within 0.08 of its value,
    the gains of the excited kinds at each spread within 0.15, the profile within 10%."""
    truth, ev, path = simulated
    assert len(ev) > 8000
    edges = (truth.spread_edges, truth.queue_edges)
    fit = estimate(
        [(ev, path)], decays=((50.0,), (1.0,)), bin_seconds=3600.0, edges=edges, gain=True
    )
    seconds = np.zeros(8)
    quoted = path.spread > 0
    for own, other in ((path.bid, path.ask), (path.ask, path.bid)):
        cells = truth.cell(path.spread[quoted], own[quoted], other[quoted])
        np.add.at(seconds, cells, path.durations[quoted])
    visited = seconds > 600  # states the flow spent ten minutes in
    assert visited.sum() >= 4
    exposure = seconds[visited] * truth.profile.mean()
    for kind in (
        EventKind.LIMIT_TOUCH,
        EventKind.LIMIT_INSIDE,
        EventKind.CANCEL_TOUCH,
        EventKind.MARKET,
    ):
        true, got = truth.mu[kind, visited], fit.mu[kind, visited]
        error = np.sqrt(np.maximum(true, 0.01) / exposure)
        assert np.all(np.abs(got - true) < 5 * error), (kind, got, true, error)
    assert fit.alpha == pytest.approx(truth.alpha, abs=0.08)
    for kind in (EventKind.LIMIT_TOUCH, EventKind.MARKET):
        assert fit.gain[kind] == pytest.approx(truth.gain[kind], abs=0.15)
    assert fit.profile == pytest.approx(truth.profile, rel=0.1)
    assert log_likelihood(fit, ev, path) >= log_likelihood(truth, ev, path)


def test_the_marks_are_recovered_from_a_recorded_day():
    """An hour of the known model's market recorded as a tape and learned again: the sizes
    of limit orders at and inside the best (1 or 2 lots, half each) and the share of market
    orders that take the whole queue they meet (half) within four standard errors."""
    tape = synthetic_tape(
        0,
        traders=[LearnedFlow(known_model())],
        levels=2,
        n_steps=60,
        open_time=OPEN,
        warmup_seconds=0.0,
        tick_size=0.01,
        initial_price=10_000,
    )
    fit = fit_events(tape, decays=((50.0,), (1.0,)))
    ev = events(tape)
    counts = np.bincount(ev.kind, minlength=N_EVENT_KINDS)
    for kind in (EventKind.LIMIT_TOUCH, EventKind.LIMIT_INSIDE):
        values, probabilities = fit.marks["sizes"][kind]
        error = 4 * np.sqrt(0.25 / counts[kind])
        assert values[0] == 1.0 and abs(probabilities[0] - 0.5) < error, (kind, probabilities)
    met = fit.grid.queue_buckets(ev.own[ev.kind == EventKind.MARKET])
    values, probabilities = fit.marks["taken"][-1]  # queues of 4 lots and more, where half the
    n = np.sum(met == len(fit.marks["taken"]) - 1)  # market orders take the whole queue
    whole = probabilities[values >= 1.0].sum()
    assert n >= 100 and abs(whole - 0.5) < 4 * np.sqrt(0.25 / n), (values, probabilities)


def test_the_spectral_radius_is_the_offspring_matrixs():
    """One kernel, market orders exciting market orders on their own side (0.3) and the
    opposite one (0.2): the matrix over (side, kind) has the eigenvalue 0.3 + 0.2 and no
    larger one; doubled, it is explosive."""
    alpha = np.zeros((1, N_EVENT_KINDS, 2 * N_EXCITERS))
    alpha[0, EventKind.MARKET, Exciter.MARKET] = 0.3
    alpha[0, EventKind.MARKET, N_EXCITERS + Exciter.MARKET] = 0.2
    model = replace(known_model(), alpha=alpha, decays=np.array([1.0]))
    assert model.spectral_radius == pytest.approx(0.5)
    assert replace(model, alpha=2.5 * alpha).spectral_radius == pytest.approx(1.25)


def test_the_decays_are_chosen_by_likelihood(simulated):
    """Coordinate ascent from each grid's middle (5 and 10 per second) reaches the true
    decays, and each likelihood it tried is recorded."""
    truth, ev, path = simulated
    fit = estimate([(ev, path)], decays=((0.5, 5.0, 50.0), (0.1, 10.0, 1.0)), edges=None)
    assert fit.decays.tolist() == [50.0, 1.0]
    tried = fit.meta["by_decays"]
    assert "5, 10" in tried and max(tried, key=tried.get) == "50, 1"


def test_sparse_states_are_pooled_and_named(simulated):
    _, ev, path = simulated
    fit = estimate([(ev.take(slice(0, 600)), path)], decays=((50.0,), (1.0,)))
    assert fit.meta["pooled"], "a state seen by few events is pooled"
    assert {"state", "events", "pooled_with"} <= set(fit.meta["pooled"][0])
    assert np.isfinite(fit.mu).all()


def seated_market(model: EventModel, seats: int = 0, reaction: str = "causal", **market) -> Market:
    return Market(
        [LearnedFlow(model, reaction=reaction)],
        n_seats=seats,
        n_steps=market.pop("n_steps", 20),
        step_seconds=market.pop("step_seconds", 60.0),
        open_time=OPEN,
        warmup_seconds=0.0,
        tick_size=0.01,
        initial_price=10_000,
        **market,
    )


def twin_logs(
    seat: list[tuple[int, int, int]], reaction: str = "causal", model: EventModel | None = None
) -> tuple[list, list, Market]:
    """The book's log of 20 minutes of ``model``'s market (the known model's by default;
    seed 3) with a seat's orders ``seat`` (side, price, lots) resting from the open, the log
    of the Python reference on a book with the same orders and the market's generator for
    the population, and the market."""
    model = known_model() if model is None else model
    market = seated_market(model, seats=1 if seat else 0, reaction=reaction, record=True)
    market.reset(3)
    for side, price, lots in seat:
        market.book.limit(side, price, lots, 0)
    while not market.done:
        market.step()
    owners = market.trader_owners[0]
    book = OrderBook(record=True)
    book.now = OPEN
    open_book(book, model, 10_000, owners)
    for side, price, lots in seat:
        book.limit(side, price, lots, 0)
    rng = np.random.default_rng(np.random.SeedSequence(3).spawn(2)[1])
    reference_events(model, book, owners, rng, OPEN, OPEN + 20 * 60.0, reaction == "causal")
    return market.book.log, book.log, market


def test_the_compiled_sampler_draws_what_its_python_reference_draws():
    """The same book changes, message for message, in a market of the learned flow alone and
    from the Python reference with the market's generator for the population."""
    compiled, reference, _ = twin_logs([])
    assert len(compiled) > 1000
    assert compiled == reference


@pytest.mark.parametrize("reaction", ["causal", "book"])
def test_the_compiled_sampler_draws_what_its_python_reference_draws_beside_a_seat(reaction):
    """As above with a seat's orders resting from the open: a bid inside the spread, which
    market orders meet before the flow's best, and an ask far behind, a level the depth
    rule neither counts nor trims. The book changes are the same (order ids aside: the
    market refills its depth before the seat's orders, the reference after them)."""
    compiled, reference, market = twin_logs([(1, 10_000, 4), (-1, 10_012, 2)], reaction)

    def changes(log: list) -> list:  # (time, type, lots, price, side): no order ids
        return [(t, kind, lots, price, side) for t, kind, _, lots, price, side in log]

    compiled, reference = changes(compiled), changes(reference)
    assert market.book.account(0)[3] > 0, "the seat's orders were met"
    assert sorted(compiled[:6]) == sorted(reference[:6])  # the opening book, its depth, the seat
    assert len(compiled) > 1000 and compiled[6:] == reference[6:]


def test_a_mark_familys_definition_is_read_by_every_user(monkeypatch):
    """`limit_behind` made to depend on the spread's bucket in `FAMILIES` alone (the known
    model's flow given limit orders behind the best: 1 tick behind at a narrow spread, 2 or
    3 at a wide one): the marks counted from its events hold one distribution per spread
    bucket, each the one it was drawn from; `check` asks for as many and refuses one; the
    marks laid out flat and the compiled tables move the families after it; and the
    compiled sampler, drawing from the distribution of the spread's bucket, draws what the
    Python reference draws."""
    monkeypatch.setitem(FAMILIES, "limit_behind", Family(By.SPREAD, "ticks, by the spread"))
    known = known_model()
    mu = known.mu.copy()
    mu[EventKind.LIMIT_BEHIND] = 0.4
    one, wide = (np.ones(1), np.ones(1)), (np.array([2.0, 3.0]), np.array([0.5, 0.5]))
    model = replace(known, mu=mu, marks=known.marks.replace(limit_behind=(one, wide)))
    assert check(model) is model
    with pytest.raises(LearnedFlowError, match=r"marks\.limit_behind must hold 2 .*got 1"):
        check(replace(model, marks=model.marks.replace(limit_behind=(one,))))

    _, first = model.marks.flat()
    assert first["cancel_behind"] == first["limit_behind"] + 2
    tables = sampler(model, range(2), np.random.default_rng(0), OPEN).actor.marks.layout()
    grid = model.grid
    assert tables == {n: (first[n], f.count(grid), f.by) for n, f in FAMILIES.items()}
    assert tables["limit_behind"][1:] == (2, By.SPREAD)

    book = OrderBook()
    book.now = OPEN
    open_book(book, model, 10_000, range(2))
    ev, _ = reference_events(model, book, range(2), np.random.default_rng(7), OPEN, OPEN + 1800)
    nothing = Revealed(*(np.zeros(0) for _ in range(4)))
    narrow, wide_seen = count_marks(ev, nothing, grid)["limit_behind"]
    assert narrow.values.tolist() == [1.0] and wide_seen.values.tolist() == [2.0, 3.0]

    compiled, reference, _ = twin_logs([], model=model)
    assert len(compiled) > 1000 and compiled == reference


def test_a_pickled_market_goes_on_as_the_original():
    model = known_model()
    market = seated_market(model)
    market.reset(4)
    for _ in range(5):
        market.step()
    copy = pickle.loads(pickle.dumps(market))
    for m in (market, copy):
        while not m.done:
            m.step()
    assert copy.summary() == market.summary()
    assert copy.book.depth(100) == market.book.depth(100)
    assert copy.traders[0].sampler.events == market.traders[0].sampler.events


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31), orders=st.lists(st.tuples(st.integers(0, 3), st.integers(1, 6))))
def test_the_book_stays_consistent_with_a_seat_trading(seed, orders):
    """One-second steps; a seat sends market orders, quotes inside the spread or cancels.
    After every step (the flow refills a side the seat emptied at the step's start): the
    book is not crossed, each side holds the model's depth of the flow's own levels, and
    each level's volume is the sum of the orders resting there."""
    model = known_model()
    market = seated_market(model, seats=1, n_steps=max(len(orders), 1), step_seconds=1.0)
    market.reset(seed)
    for action, size in orders or [(0, 1)]:
        mid = int(market.last_mid)
        seat = [
            [(int(Order.MARKET), 1, 0, size)],
            [(int(Order.MARKET), -1, 0, size)],
            [(int(Order.QUOTE), 1, mid, size), (int(Order.QUOTE), -1, mid + 1, size)],
            [(int(Order.CANCEL_ALL), 0, 0, 0)],
        ][action]
        market.step([seat])
        bids, asks = market.book.depth(1000)
        bid_owner, ask_owner = market.trader_owners[0]
        for owner, side in ((bid_owner, 1), (ask_owner, -1)):  # the flow's own levels
            held = {price for _, s, price, _ in market.book.owned(owner) if s == side}
            assert len(held) == model.depth
        assert bids[0][0] < asks[0][0]
        resting: dict[tuple[int, int], int] = {}
        for owner in range(3):
            for _, side, price, qty in market.book.owned(owner):
                resting[side, price] = resting.get((side, price), 0) + qty
        assert resting == {**{(1, p): v for p, v in bids}, **{(-1, p): v for p, v in asks}}


def test_a_seats_resting_quote_moves_the_flows_rates_only_when_it_reads_the_whole_book():
    """With no excitation, the rates are the baseline of the state the flow reads. Reading
    the whole book ("book"), a seat that joins the best ask (3 lots) with 5 makes its queue
    long, where limit orders at the touch come at a third of a short queue's rate, and
    cancelling restores it; reading its own book ("causal"), the seat's quote changes no
    rate, nor does a seat's bid that narrows the spread."""
    model = known_model(alpha_scale=0.0)
    for reaction in ("book", "causal"):
        market = seated_market(model, seats=1, reaction=reaction, n_steps=2, step_seconds=1.0)
        market.reset(0)
        sampler = market.traders[0].sampler
        book = market.book
        ask, lots = book.best_ask()
        assert lots == 3
        t = market.t
        level = model.relative_rate(np.array([t]))[0]

        def expected(book=book, level=level) -> np.ndarray:
            (b, bq), (a, aq) = book.best_bid(), book.best_ask()
            cells = [model.cell(a - b, bq, aq), model.cell(a - b, aq, bq)]
            return np.array([model.mu[:, c] for c in cells]) * level

        before = sampler.rates(book, t)
        short_queue = before[1, EventKind.LIMIT_TOUCH]
        assert short_queue == pytest.approx(0.6 * level)
        order, _ = book.limit(-1, ask, 5, 0)  # the seat joins the best ask: 8 lots
        if reaction == "book":
            assert sampler.rates(book, t) == pytest.approx(expected())
            assert sampler.rates(book, t)[1, EventKind.LIMIT_TOUCH] == pytest.approx(
                short_queue / 3
            )
        else:
            tight, _ = book.limit(1, ask - 1, 5, 0)  # and bids a tick below it
            assert sampler.rates(book, t) == pytest.approx(before)
            book.cancel(tight)
        book.cancel(order)
        assert sampler.rates(book, t)[1, EventKind.LIMIT_TOUCH] == pytest.approx(short_queue)


@pytest.mark.parametrize(("lots", "exciter"), [(1, Exciter.MARKET), (3, Exciter.MARKET_EMPTIED)])
def test_what_a_seat_trades_with_the_flow_excites_it_as_a_market_order(lots, exciter):
    """A seat's market order into the flow's best bid (3 lots) is heard at the start of the
    next interval as a market order on the bid side, one that emptied the level when it took
    all 3: its excitation (alpha by side and kind times the decays, times the gain at the
    spread then) is added to the baseline of the state it left; reading the whole book, it
    is not heard."""
    model = known_model()
    for reaction, heard in (("causal", 1), ("book", 0)):
        market = seated_market(model, seats=1, reaction=reaction, n_steps=3, step_seconds=1.0)
        market.reset(0)
        book, sampler, t = market.book, market.traders[0].sampler, market.t
        sampler.end = t  # no event of the flow's own in between
        book.market(-1, lots, 0)  # the seat sells into the flow's bid
        assert sampler.hear(book, t) == heard
        (b, bq), (a, aq) = book.best_bid(), book.best_ask()
        cells = [model.cell(a - b, bq, aq), model.cell(a - b, aq, bq)]
        baseline = np.array([model.mu[:, c] for c in cells]) * model.relative_rate(t)
        width = N_EXCITERS
        jump = np.stack(
            [
                (model.alpha[:, :, exciter] * model.decays[:, None]).sum(axis=0),
                (model.alpha[:, :, width + exciter] * model.decays[:, None]).sum(axis=0),
            ]
        )
        gain = model.gain[:, int(model.grid.spread_buckets(a - b))]
        assert sampler.rates(book, t) == pytest.approx(baseline + gain * jump * heard)
        assert sampler.hear(book, t) == 0  # heard once
    refill = model.alpha[0, EventKind.LIMIT_TOUCH, Exciter.MARKET_EMPTIED] * model.decays[0]
    assert jump[0, EventKind.LIMIT_TOUCH] == pytest.approx(refill if lots == 3 else 0.0)


def test_a_market_order_goes_through_a_seats_quote_inside_the_spread():
    """A market order takes every order resting better than the population's own best and
    then its drawn fraction of the population's best level: with the fraction 1, a seat's
    bid inside the spread is filled and the population's best bid behind it is taken too,
    as it would be were the seat's bid not there."""
    base = known_model(alpha_scale=0.0)
    mu = np.zeros_like(base.mu)
    mu[EventKind.MARKET] = 1.0
    all_of_it = ((np.ones(1), np.ones(1)),) * 2
    model = replace(base, mu=mu, marks=base.marks.replace(taken=all_of_it))
    market = seated_market(model, seats=1, n_steps=2, step_seconds=1.0)
    market.reset(0)
    book, sampler = market.book, market.traders[0].sampler
    bid, lots = book.best_bid()
    book.limit(1, bid + 1, 2, 0)  # the seat's bid, inside the two-tick-wide spread
    traded = book.volume
    for _ in range(1000):  # until a market order meets the bids
        if book.account(0)[0]:
            break
        traded = book.volume
        sampler.fire(book)
    assert book.account(0)[0] == 2
    assert book.volume - traded == 2 + lots


def test_a_model_saved_and_loaded_is_the_same(tmp_path):
    model = known_model()
    path = model.save(tmp_path / "flow.json")
    again = EventModel.load(path)
    for name in ("spread_edges", "queue_edges", "mu", "alpha", "gain", "decays", "profile", "book"):
        assert np.array_equal(getattr(again, name), getattr(model, name))
    assert again.marks["inside"][1][1].tolist() == [0.7, 0.3]
    assert (again.depth, again.start, again.tick_size) == (2, OPEN, 0.01)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"bin_seconds": 0.0}, "bin_seconds must be a finite float in"),
        ({"profile": np.zeros(0)}, "profile must have 1 to"),
        ({"decays": np.array([50.0, -1.0])}, "decays must lie in"),
        ({"mu": np.full((N_EVENT_KINDS, 8), np.nan)}, "mu must be finite"),
    ],
)
def test_a_sampler_of_bad_parameters_is_an_error_naming_them(change, message):
    model = replace(known_model(), **change)
    with pytest.raises(ValueError, match=message):
        sampler(model, range(2), np.random.default_rng(0), OPEN)


def test_a_learned_market_at_another_tick_is_an_error_naming_both():
    """The learned flow's error, raised as the market's first trader's."""
    market = Market([LearnedFlow(known_model())], n_seats=0, n_steps=2, tick_size=0.05)
    with pytest.raises(TraderError, match=r"\$0\.01.*\$0\.05") as raised:
        market.reset(0)
    assert raised.value.index == 0 and isinstance(raised.value.error, ParameterError)


def test_a_tape_too_short_is_refused_with_its_count():
    tape = synthetic_tape(0, n_steps=2, step_seconds=10.0)
    with pytest.raises(LearnedFlowError, match=r"756 events from 09:25 until 09:30:18, too few"):
        fit_events(tape)


def test_a_learned_market_learned_from_a_recorded_day_runs_it_again(tmp_path):
    """A day recorded from a synthetic population, learned, saved and run: the learned
    market's day holds about as many events as the day it learned from (within a quarter:
    the light population's flow is not a queue-reactive process)."""
    tape = synthetic_tape(1, n_steps=390, step_seconds=60.0)
    model = fit_events(tape, decays=((300.0,), (1.0,)))
    path = model.save(tmp_path / "flow.json")
    market = Market(
        [LearnedFlow(path)], n_seats=0, n_steps=390, open_time=float(tape.messages["time"][0])
    )
    market.reset(0)
    while not market.done:
        market.step()
    sampler = market.traders[0].sampler
    assert sampler.events == pytest.approx(model.meta["events"], rel=0.25)
