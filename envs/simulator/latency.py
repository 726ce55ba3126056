"""Latency between the seats and the book: order entry and market data.

Order entry: each step, every seat's delay (seconds) is drawn from an `OrderLatency` model,
as hftbacktest's order latency models draw them: `Constant`, `LogNormal` (a median and the
sigma of its logarithm) or `Empirical` (measured delays, drawn uniformly with replacement).
A seat's orders sent at step time t land at t + delay, merged in time order with the
background's rows (ties: the seat's orders first, seats in the step's random order); an
order whose delay runs past the step lands in the step it falls in (one still in flight at
the close never does). Its quantity is clipped to the position limit when it lands.

Market data: with a feed latency L (seconds) the seats' view at step time t is the book as of
t - L (after every event before then): its mid, spread and the volumes of its best levels,
recorded while the flow runs (`Market.seen_mids`); before the open, the open's view. The
seats' inventories are their own and current.

The draws come from a generator of their own under the session's seed (spawn key
`LATENCY_KEY`), so turning latency on leaves the market's and the traders' draws as they
were; both default off, and a market without latency steps exactly as before.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple, Protocol

import numpy as np

from tradearena.envs.errors import ParameterError, known_keys, not_one_of, number
from tradearena.envs.simulator.flow import MarketState, submit
from tradearena.envs.simulator.observation import volumes

if TYPE_CHECKING:
    from tradearena.envs.simulator.orders import Orders

__all__ = [
    "LATENCY_KEY",
    "LATENCY_MODELS",
    "MAX_LATENCY_SECONDS",
    "MAX_LATENCY_SIGMA",
    "Constant",
    "Empirical",
    "Latency",
    "LogNormal",
    "OrderLatency",
    "order_latency",
]

LATENCY_KEY = 2**32 - 2
"""Spawn-key entry of the latency draws' stream under a session's seed."""


class OrderLatency(Protocol):
    """A model of order-entry delays: ``draw(rng, n)`` -> n delays, seconds, float64 (n,)."""

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray: ...


class Constant(NamedTuple):
    """Every order ``seconds`` late (draws nothing)."""

    seconds: float

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return np.full(n, self.seconds)


class LogNormal(NamedTuple):
    """Delays whose logarithm is normal: ``median`` seconds, ``sigma`` the standard
    deviation of the log (mean: median x exp(sigma^2 / 2))."""

    median: float
    sigma: float

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.lognormal(math.log(self.median), self.sigma, n)


class Empirical(NamedTuple):
    """Measured delays, ``rows`` (seconds), drawn uniformly with replacement."""

    rows: tuple[float, ...]

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return np.asarray(self.rows)[rng.integers(len(self.rows), size=n)]


MAX_LATENCY_SECONDS = 3600.0
"""The longest delay an order (or the seats' view of the book) may have, seconds: an hour,
thousands of times any venue's (microseconds to a few seconds); an order delayed longer would
reach the book after most sessions close."""
MAX_LATENCY_SIGMA = 10.0
"""The largest log-normal ``sigma`` of an order's delay: e^10 (22,000) times the median at
one standard deviation."""


def _delay(path: tuple[str, ...], value: object) -> float:
    """``value`` as a delay in seconds, in [0, `MAX_LATENCY_SECONDS`], else `ParameterError`
    at ``path``."""
    seconds = number(path, value)
    if not 0 <= seconds <= MAX_LATENCY_SECONDS:
        raise ParameterError(
            path, f"must be in [0, {MAX_LATENCY_SECONDS:g}] seconds, got {value!r}"
        )
    return seconds


LATENCY_MODELS = {
    "constant": ("seconds",),
    "lognormal": ("median", "sigma"),
    "empirical": ("rows",),
}
"""Order latency models by name, with the keys of their tables (beside ``model``)."""


def order_latency(value: float | Mapping, name: str = "order_latency") -> OrderLatency | None:
    """The model of ``value``: seconds (a constant delay), or a table ``{model = "constant",
    seconds}``, ``{model = "lognormal", median, sigma}`` or ``{model = "empirical", rows =
    [seconds, ...]}``; None for no delay (0 seconds). `ParameterError` at ``name`` and the
    key for anything else."""
    if not isinstance(value, Mapping):
        seconds = _delay((name,), value)
        return Constant(seconds) if seconds > 0 else None
    model = value.get("model")
    if model not in LATENCY_MODELS:
        raise ParameterError((name, "model"), not_one_of(model, list(LATENCY_MODELS)))
    known_keys(name, value, ("model", *LATENCY_MODELS[model]))
    missing = [key for key in LATENCY_MODELS[model] if key not in value]
    if missing:
        raise ParameterError((name, missing[0]), f"a {model} latency needs it")
    if model == "constant":
        return order_latency(value["seconds"], name)
    if model == "lognormal":
        median = _delay((name, "median"), value["median"])
        if median == 0:
            raise ParameterError((name, "median"), "must be > 0 seconds, got 0")
        sigma = number((name, "sigma"), value["sigma"])
        if not 0 <= sigma <= MAX_LATENCY_SIGMA:
            raise ParameterError(
                (name, "sigma"), f"must be in [0, {MAX_LATENCY_SIGMA:g}], got {sigma!r}"
            )
        return LogNormal(median, sigma)
    rows = value["rows"]
    if isinstance(rows, str) or not isinstance(rows, Sequence) or not rows:
        raise ParameterError((name, "rows"), f"must be a non-empty list of seconds, got {rows!r}")
    delays = tuple(_delay((name, "rows", str(i)), row) for i, row in enumerate(rows))
    return Empirical(delays)


class Latency:
    """One market's latency: its ``order`` model (None: orders land at once), its
    ``feed`` latency (seconds; 0: the seats see the book now) and the levels of the
    imbalance's volumes it records (``depth_levels``). Keeps the orders in flight (a heap of
    (landing time, sending order, seat, orders)) and the view recorded for each step. Its
    ``market`` is an `envs.simulator.market.Market` (which imports this module)."""

    def __init__(self, order: OrderLatency | None, feed: float, depth_levels: int) -> None:
        self.order, self.feed, self.depth_levels = order, feed, depth_levels

    def reset(self, market: MarketState, seq: np.random.SeedSequence) -> None:
        """Start ``market``'s session (just opened, seeded by ``seq``): nothing in flight; with
        feed latency, every step whose view falls before the open sees the open."""
        key = (*seq.spawn_key, LATENCY_KEY)
        self.rng = np.random.default_rng(np.random.SeedSequence(seq.entropy, spawn_key=key))
        self.in_flight: list[tuple[float, int, int, list]] = []
        self.sent = self.next_view = 0
        if not self.feed:
            return
        market._seen_mids = np.full(market.n_steps + 1, np.nan)
        market._seen_book = np.full((market.n_steps + 1, 3), np.nan)
        self.seen_mid = market.last_mid
        while (
            self.next_view <= market.n_steps
            and self._view_time(market, self.next_view) <= market.open_time
        ):
            self._record(market)

    def step(
        self, market: MarketState, seat_orders: Sequence, t0: float, t1: float
    ) -> tuple[int, int]:
        """The seats' orders and the background's flow over [t0, t1) seconds, with the views
        that fall in it recorded -> (orders submitted, orders cancelled)."""
        book, limit = market.book, market.position_limit
        n = len(seat_orders)
        seats = market.rng.permutation(n).tolist() if n > 1 else list(range(n))
        views, j = [], self.next_view
        while self.feed and j <= market.n_steps and self._view_time(market, j) < t1:
            views.append(self._view_time(market, j))
            j += 1
        counts = []  # (orders submitted, orders cancelled) of each piece
        while views and views[0] <= t0:  # a view as of t0 is before the step's orders
            self._record(market)
            views.pop(0)
        if self.order is None:
            for seat in seats:
                counts.append(submit(book, seat, seat_orders[seat], limit))
        else:
            delays = self.order.draw(self.rng, n).tolist()
            for seat in seats:
                if seat_orders[seat]:
                    flight = (t0 + delays[seat], self.sent, seat, list(seat_orders[seat]))
                    heapq.heappush(self.in_flight, flight)
                    self.sent += 1
        events = [(t, 0, None) for t in views]
        while self.in_flight and self.in_flight[0][0] < t1:
            landing, _, seat, orders = heapq.heappop(self.in_flight)
            events.append((landing, 1, (seat, orders)))
        events.sort(key=lambda event: event[:2])  # stable: landings keep their sending order
        background = _Background(market, t0, t1)
        for t, kind, landing in events:
            counts.append(background.until(t))
            if kind == 0:
                self._record(market)
            else:
                book.now = t
                counts.append(submit(book, landing[0], landing[1], limit))
        counts.append(background.until(math.inf))
        return sum(c[0] for c in counts), sum(c[1] for c in counts)

    def _view_time(self, market: MarketState, step: int) -> float:
        """When ``step``'s view shows the book: the step's time less the feed latency."""
        return market.open_time + step * market.step_seconds - self.feed

    def _record(self, market: MarketState) -> None:
        """Record the book now as the next step's view (the last mid seen while a side is
        empty)."""
        book, j = market.book, self.next_view
        mid = book.mid()
        self.seen_mid = self.seen_mid if mid is None else mid
        spread = market.spread()
        market._seen_mids[j] = self.seen_mid
        market._seen_book[j] = (spread, *volumes(book, self.depth_levels))
        self.next_view += 1


class _Background:
    """The background's flow over [t0, t1) carried out in pieces, as one run would carry it
    out: priced (or drawn) at t0, then each piece's rows in time order."""

    def __init__(self, market: MarketState, t0: float, t1: float) -> None:
        self.market, self.flow = market, market._compiled
        self.batch: Orders | None = None
        if self.flow is not None:
            self.flow.open(market.book, t0, t1, market.last_mid, market.mids())
        else:
            self.batch, self.done = market._background(t0, t1), 0

    def until(self, t: float) -> tuple[int, int]:
        """Carry out the rows before ``t`` seconds not yet carried out -> (orders submitted,
        orders cancelled) of a compiled flow; (0, 0) for orders the market counted itself."""
        if self.flow is not None:
            return self.flow.until(self.market.book, t)
        stop = int(np.searchsorted(self.batch.time, t, side="left"))
        if stop > self.done:
            self.market._carry(self.batch.take(slice(self.done, stop)))
            self.done = stop
        return 0, 0
