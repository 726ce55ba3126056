"""One trading session: an order book, background traders and the seats that learners fill."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, Protocol

import numpy as np

from tradearena.envs.errors import UserError
from tradearena.envs.simulator.book import OrderBook
from tradearena.envs.simulator.flow import Flow, MarketState, advance
from tradearena.envs.simulator.latency import Latency, OrderLatency
from tradearena.envs.simulator.orders import Orders, Program, SeatOrder

__all__ = ["Account", "Background", "Market", "TraderError"]


class Account(NamedTuple):
    """A seat's account. cash: ticks x shares; inventory: shares; fees: dollars; trades: fills
    taken part in; volume: shares traded. (A named tuple: read on every step, made cheaply.)"""

    cash: int = 0
    inventory: int = 0
    fees: float = 0.0
    trades: int = 0
    volume: int = 0

    def value(self, mid: float, tick_size: float) -> float:
        """Marked-to-market value in dollars at ``mid`` ticks."""
        return (self.cash + self.inventory * mid) * tick_size - self.fees


class Background(Protocol):
    """What a market asks of a background population (`envs.simulator.traders.Trader` is one): how
    many owner ids it needs, a reset per session, its orders per interval (or, from
    `program`, the session's rows priced by compiled code) and the carrying out of its HANDLE
    rows."""

    n_owners: int

    def reset(self, market: Market, owners: range, rng: np.random.Generator) -> None: ...

    def orders(self, market: Market, t0: float, t1: float, rng: np.random.Generator) -> Orders: ...

    def program(self) -> Program | None: ...

    def handle(self, book: OrderBook, ref: int) -> list: ...


class TraderError(UserError):
    """A background trader that cannot open a session (a value only the market shows wrong:
    a learned flow's tick against the market's, its opening book): ``index``, its place in
    the market's traders, and ``error``, what it raised; the message is the error's."""

    def __init__(self, index: int, error: ValueError) -> None:
        self.index, self.error = index, error
        super().__init__(str(error))


class Market(MarketState):
    """A session of ``n_steps`` decision steps of ``step_seconds`` from ``open_time``.

    Owner ids 0 .. n_seats - 1 are the seats; each trader population gets the next block of
    ids. `reset` starts a session: fresh book, traders reset (replay places its initial book),
    then ``warmup_seconds`` of background flow before the open. `step` is one decision:

    1. the seats' orders are executed at the step's start, seats in a random order drawn from
       the session's generator, quantities clipped to the position limit;
    2. the background traders' flow over [t, t + step_seconds) is merged in time order and
       executed;
    3. every account is marked to market at the mid (ticks; the last known mid while a side
       is empty) and the change of each seat's value in dollars is returned.

    With ``day_steps`` (> n_steps) a session is a window of a longer day: each `reset` opens
    it at a step drawn uniformly from the day's first ``day_steps - n_steps + 1`` steps, and
    the flow from the day's start (``warmup_seconds`` before ``open_time``) up to the window
    runs first, as warm-up. Episodes of a replayed day are then different windows of it.
    ``window_steps`` (first, last) narrows the opening step to first .. last (steps of the
    day, 0 at ``open_time``; last at most ``day_steps - n_steps``): sessions of a part of
    the day, e.g. mornings to train on and afternoons to test on. None, the default, is
    (0, day_steps - n_steps), which draws exactly the offsets of the whole day.

    With ``record`` the book logs every change as a LOBSTER message (``market.book.log``).

    Latency (`envs.simulator.latency`): with ``order_latency`` (a model of the delay, seconds)
    the seats' orders (1.) land at t + delay, merged in time order with the background's
    rows (a delay past the step lands in a later step); with ``feed_latency`` (seconds) the
    seats see the book as it was that long before each step (`seen_mids`; the imbalance at
    ``depth_levels`` levels).

    Randomness: one `numpy.random.SeedSequence` per session, spawned into one generator per
    trader and one for the market, so adding a trader leaves the others' draws unchanged.
    """

    def __init__(
        self,
        traders: Sequence[Background] = (),
        *,
        n_seats: int = 1,
        step_seconds: float = 60.0,
        n_steps: int = 390,
        open_time: float = 34_200.0,
        warmup_seconds: float = 300.0,
        tick_size: float = 0.01,
        initial_price: int = 10_000,
        position_limit: int = 1_000,
        fee_per_share: float = 0.0,
        day_steps: int | None = None,
        window_steps: tuple[int, int] | None = None,
        record: bool = False,
        order_latency: OrderLatency | None = None,
        feed_latency: float = 0.0,
        depth_levels: int = 5,
    ) -> None:
        if n_seats < 0 or n_steps < 1 or step_seconds <= 0 or warmup_seconds < 0:
            raise ValueError(
                "need n_seats >= 0, n_steps >= 1, step_seconds > 0 and warmup_seconds >= 0, "
                f"got {n_seats}, {n_steps}, {step_seconds}, {warmup_seconds}"
            )
        if not (np.isfinite(feed_latency) and feed_latency >= 0):
            raise ValueError(f"feed_latency must be >= 0 seconds, got {feed_latency}")
        if day_steps is not None and day_steps < n_steps:
            raise ValueError(f"day_steps ({day_steps}) must be >= n_steps ({n_steps})")
        self.window_steps = _window_steps(window_steps, day_steps or n_steps, n_steps)
        self.traders = list(traders)
        self.n_seats, self.n_steps, self.step_seconds = n_seats, n_steps, step_seconds
        self.day_open, self.warmup_seconds, self.day_steps = open_time, warmup_seconds, day_steps
        self.open_time = open_time
        self.close_time = open_time + n_steps * step_seconds
        self.start_time = open_time - warmup_seconds
        self.tick_size, self.initial_price = tick_size, initial_price
        self.position_limit, self.fee_per_share = position_limit, fee_per_share
        self.record = record
        self.order_latency, self.feed_latency = order_latency, feed_latency
        self._latency = None
        if order_latency is not None or feed_latency > 0:
            self._latency = Latency(order_latency, feed_latency, depth_levels)
        owners, start = [], n_seats
        self._handlers = {}  # owner -> the population that carries out its HANDLE rows
        for trader in self.traders:
            owners.append(range(start, start + trader.n_owners))
            self._handlers.update(dict.fromkeys(owners[-1], trader))
            start += trader.n_owners
        self.trader_owners = owners
        self.book = OrderBook()

    # ---------------------------------------------------------------------------- session
    def reset(self, seed: int | np.random.SeedSequence | None = None) -> None:
        """Start a new session (see the class docstring)."""
        seq = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
        children = seq.spawn(len(self.traders) + 1)
        self.rng = np.random.default_rng(children[0])
        self.trader_rngs = [np.random.default_rng(c) for c in children[1:]]
        self.book = self.new_book()
        self.last_mid = float(self.initial_price)
        self.n_orders = self.n_cancels = 0
        self.step_index = 0
        self._mids = np.full(self.n_steps + 1, np.nan)
        self._spreads = np.full(self.n_steps + 1, np.nan)
        offset = 0
        if self.day_steps is not None and self.day_steps > self.n_steps:
            first, last = self.window_steps
            offset = first + int(self.rng.integers(last - first + 1))
        self.open_time = self.day_open + offset * self.step_seconds
        self.close_time = self.open_time + self.n_steps * self.step_seconds
        self.start_time = self.day_open - self.warmup_seconds
        self.t = self.start_time
        self.book.now = self.t
        self._opened = False
        for i, (trader, owners) in enumerate(zip(self.traders, self.trader_owners)):
            try:
                trader.reset(self, owners, self.trader_rngs[i])
            except ValueError as error:  # a UserError too: the trader's, named by its place
                raise TraderError(i, error) from None
        programs = [trader.program() for trader in self.traders]
        compiled = self.traders and None not in programs
        self._compiled = Flow(programs, self._handlers) if compiled else None
        if self.open_time > self.t:  # the warm-up
            alone = self.traders[0] if len(self.traders) == 1 else None
            if alone is None or not alone.warm_up(self, self.t, self.open_time):
                self._flow(self.t, self.open_time)
        self.t = self.open_time
        self._opened = True
        self._mids[0] = self._mark()
        self._spreads[0] = self.spread()
        self._values = [self.value(seat) for seat in range(self.n_seats)]
        if self._latency is not None:
            self._latency.reset(self, seq)

    @property
    def day(self) -> tuple[float, float]:
        """The trading day's first and last second (a session is a window of it with
        ``day_steps``): what an intraday arrival profile spans."""
        steps = self.day_steps or self.n_steps
        return self.day_open, self.day_open + steps * self.step_seconds

    def new_book(self) -> OrderBook:
        """The book a session starts with: recording its changes when ``record``, else reusing
        the slots of gone orders (a session's memory follows the orders resting)."""
        return OrderBook(record=self.record, recycle=not self.record)

    def step(self, seat_orders: Sequence[Sequence[SeatOrder]] = ()) -> np.ndarray:
        """One decision step; ``seat_orders[i]`` are seat i's orders (missing seats do
        nothing). Returns the change of each seat's marked-to-market value, dollars, (n_seats,).
        """
        if self.done:
            raise RuntimeError("the session is over: call reset()")
        if len(seat_orders) > self.n_seats:
            raise ValueError(f"orders for {len(seat_orders)} seats, the market has {self.n_seats}")
        change = np.empty((1, self.n_seats))
        advance([self], [list(seat_orders)], change)
        return change[0]

    # ---------------------------------------------------------------------------- queries
    def mids(self) -> np.ndarray:
        """Mid price (ticks) at the open and after each step so far, shape (step_index + 1,);
        before the open, the mids so far are empty."""
        return self._mids[: self.step_index + 1] if self._opened else self._mids[:0]

    def seen_mids(self) -> np.ndarray:
        """The mid (ticks) the seats saw at the open and after each step so far, shape
        (step_index + 1,): `mids` without feed latency, else the mid ``feed_latency``
        seconds before each step (the open's while that is before the open)."""
        seen = self._seen_mids if self._seen_mids is not None else self._mids
        return seen[: self.step_index + 1] if self._opened else seen[:0]

    def spreads(self) -> np.ndarray:
        """Spread (ticks, NaN while a side is empty) at the open and after each step."""
        return self._spreads[: self.step_index + 1] if self._opened else self._spreads[:0]

    def spread(self) -> float:
        """Current spread in ticks (NaN while a side is empty)."""
        bid, ask = self.book.best_bid(), self.book.best_ask()
        return float("nan") if bid is None or ask is None else float(ask[0] - bid[0])

    def value(self, seat: int) -> float:
        """Seat's marked-to-market value in dollars."""
        return self.account(seat).value(self.last_mid, self.tick_size)

    def capacity(self, seat: int, side: int) -> int:
        """Shares the seat may still buy (side +1) or sell (-1) within its position limit."""
        return max(self.position_limit - side * self.book.account(seat)[0], 0)

    def account(self, seat: int) -> Account:
        """The seat's account now (from the book's record of its fills)."""
        inventory, cash, volume, trades = self.book.account(seat)
        return Account(cash, inventory, self.fee_per_share * volume, trades, volume)

    @property
    def accounts(self) -> list[Account]:
        """Every seat's account, by seat."""
        return [self.account(seat) for seat in range(self.n_seats)]

    # ---------------------------------------------------------------------------- internals
    def _mark(self) -> float:
        mid = self.book.mid()
        if mid is not None:
            self.last_mid = mid
        return self.last_mid

    def _flow(self, t0: float, t1: float) -> None:
        """Execute the background traders' orders in [t0, t1) in time order: compiled when
        every population has a `envs.simulator.traders.Trader.program`, else from their `orders`."""
        if self._compiled is not None:
            orders, cancels = self._compiled.run(self.book, t0, t1, self.last_mid, self.mids())
            self.n_orders += orders
            self.n_cancels += cancels
            return
        self._carry(self._background(t0, t1))

    def _background(self, t0: float, t1: float) -> Orders:
        """The populations' orders in [t0, t1), from their `orders`, merged in time order."""
        return Orders.concat(
            [
                trader.orders(self, t0, t1, rng)
                for trader, rng in zip(self.traders, self.trader_rngs)
            ]
        )

    def _carry(self, batch: Orders) -> None:
        """Execute ``batch``'s rows on the book, in order, counting its orders and cancels."""
        _, orders, cancels = self.book.run(*batch, self._handlers, collect=False)
        self.n_orders += orders
        self.n_cancels += cancels

    def summary(self) -> dict[str, float]:
        """Session statistics so far: order messages, cancels, fills, volume (shares), mean
        spread (ticks), first and last mid (ticks)."""
        spreads = self.spreads()
        mids = self.mids()
        return {
            "steps": self.step_index,
            "orders": self.n_orders,
            "cancels": self.n_cancels,
            "fills": self.book.trades,
            "volume": self.book.volume,
            "mean_spread": float(np.nanmean(spreads)) if np.isfinite(spreads).any() else np.nan,
            "open_mid": float(mids[0]),
            "close_mid": float(mids[-1]),
            "low_mid": float(mids.min()),
            "high_mid": float(mids.max()),
        }


def _window_steps(window: tuple[int, int] | None, day_steps: int, n_steps: int) -> tuple:
    """The steps (first, last) of a day of ``day_steps`` at which a session of ``n_steps``
    may open: ``window``, checked, or the whole day's (0, day_steps - n_steps)."""
    latest = day_steps - n_steps
    if window is None:
        return 0, latest
    first, last = (int(step) for step in window)
    if not 0 <= first <= last <= latest:
        raise ValueError(
            f"window_steps ({first}, {last}) must satisfy 0 <= first <= last <= "
            f"day_steps - n_steps = {latest} (a day of {day_steps} steps, sessions of {n_steps})"
        )
    return first, last
