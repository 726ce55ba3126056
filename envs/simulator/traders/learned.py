"""Order flow learned from a tape: a population whose events are drawn one at a time from an
`envs.simulator.eventmodel.EventModel`, reacting to the book as it is (the seats' orders
included). The compiled sampler is `envs.simulator.learned.EventSampler`; `reference_events`
is the same draw written in Python, for the tests."""

from __future__ import annotations

import json
import math
from pathlib import Path as FilePath
from typing import TYPE_CHECKING

import numpy as np

from tradearena.envs.data.events import KINDS, Events, Kind, Path
from tradearena.envs.errors import ParameterError
from tradearena.envs.simulator.book import MAX_QTY
from tradearena.envs.simulator.eventmodel import EventModel, EventModelError
from tradearena.envs.simulator.learned import (
    EventSampler,
    NeuralSampler,
    baseline_bound,
    jumps,
)
from tradearena.envs.simulator.neuralflow import NeuralModel, is_neural
from tradearena.envs.simulator.orders import Orders, Program, Rule
from tradearena.envs.simulator.traders.base import Trader

if TYPE_CHECKING:
    from tradearena.envs.simulator.book import OrderBook
    from tradearena.envs.simulator.market import Market


class LearnedFlow(Trader):
    """The order flow of ``model`` (an `EventModel` or a `NeuralModel`, or the path of its
    parameter file written by ``tradearena fit --model events`` or ``neural``), as one
    population with two owners: the bid side's resting orders are the first's, the ask
    side's the second's.

    At reset it places the model's opening book around the market's initial price (its
    offsets from the mid, its queues), fills both sides to the model's depth and draws its
    first candidate from the session's start; the compiled flow then carries its events out.
    The market must run at the tape's tick of one lot (``tick_size``: the tape's tick times
    its lot, as a market of a converted recording counts them): another is an error naming
    both."""

    n_owners = 2
    file_parameters = ("model",)

    @classmethod
    def file_parts(cls, parameter: str, path: FilePath) -> list[FilePath]:
        """A parameter file (JSON) and the files it names beside it: its arrays
        (``"arrays"``), and a neural flow's base model (``"base"``) with the base's own; each
        a plain file name (no folder, no ``..``) of a regular file, else `ParameterError`."""
        parts = super().file_parts(parameter, path)
        try:
            named = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            reason = f"{path}: not a learned flow's parameter file ({error})"
            raise ParameterError(parameter, reason) from None
        if not isinstance(named, dict) or not isinstance(named.get("arrays"), str):
            raise ParameterError(parameter, f'{path}: names no arrays file (key "arrays")')
        for key in ("arrays", "base"):
            name = named.get(key)
            if key == "base" and name is None:
                continue
            if not isinstance(name, str) or name in ("", ".", "..") or FilePath(name).name != name:
                reason = f"{path}: {key!r} must name a file beside it, got {name!r}"
                raise ParameterError(parameter, reason)
            beside = path.parent / name
            read = cls.file_parts if key == "base" else super().file_parts
            parts += read(parameter, beside)
        return parts

    def __init__(self, model: EventModel | NeuralModel | str | FilePath) -> None:
        if isinstance(model, str | FilePath):
            read = NeuralModel.load if is_neural(model) else EventModel.load
            try:
                model = read(model)
            except EventModelError as error:
                raise ParameterError("model", str(error)) from None
        if not isinstance(model, EventModel | NeuralModel):
            reason = f"must be an EventModel, a NeuralModel or its file, got {model!r}"
            raise ParameterError("model", reason)
        self.model = model

    def reset(self, market: Market, owners: range, rng: np.random.Generator) -> None:
        super().reset(market, owners, rng)
        model = self.model.base if isinstance(self.model, NeuralModel) else self.model
        tick = model.tick_size * model.lot_size  # dollars a tick of one lot
        if not math.isclose(market.tick_size, tick, rel_tol=1e-9):
            raise ParameterError(
                "model",
                f"was learned at a tick of ${tick:g} a lot; this market's tick is "
                f"${market.tick_size:g}: run it at the tape's (tick_size = {tick:g})",
            )
        self.sampler = sampler(self.model, owners, rng, market.t)
        open_book(market.book, model, market.initial_price, owners)
        self.sampler.fill(market.book)

    def program(self) -> Program:
        return Program(Orders.empty(), Rule.LEARNED, sampler=self.sampler)

    def orders(self, market: Market, t0: float, t1: float, rng: np.random.Generator) -> Orders:
        raise TypeError(
            "a learned flow reacts to the book event by event, so it runs only in the compiled "
            "flow: every other population must have a program (the built-in ones all do)"
        )


def sampler(
    model: EventModel | NeuralModel, owners: range, rng: np.random.Generator, t0: float
) -> EventSampler:
    """The compiled sampler of ``model`` for a population of ``owners`` (bid, ask), its first
    candidate drawn from ``t0`` seconds."""
    if isinstance(model, NeuralModel):
        return NeuralSampler(model, _marks(model.base), owners[0], owners[1], rng, t0)
    return EventSampler(
        model.mu,
        model.alpha,
        model.decays,
        model.profile,
        model.start,
        model.bin_seconds,
        model.spread_edges,
        model.queue_edges,
        _marks(model),
        model.depth,
        owners[0],
        owners[1],
        rng,
        t0,
    )


def _marks(model: EventModel) -> list:
    """The model's mark distributions in the order the sampler takes them."""
    m = model.marks
    return [*m.sizes, *m.inside, m.limit_behind, m.cancel_behind, m.gap, m.queue]


def open_book(book: OrderBook, model: EventModel, mid: float, owners: range) -> None:
    """Place ``model``'s opening book around ``mid`` (ticks): its levels' offsets and lots,
    asks above the mid and bids below it."""
    for ask_offset, ask_lots, bid_offset, bid_lots in model.book.tolist():
        if ask_lots > 0:
            book.limit(-1, int(math.ceil(mid + max(ask_offset, 0.5))), int(ask_lots), owners[1])
        if bid_lots > 0:
            book.limit(1, int(math.floor(mid + min(bid_offset, -0.5))), int(bid_lots), owners[0])


class _Reference:
    """`envs.simulator.learned.EventSampler` in Python, line by line, on the book's Python
    methods: the same uniforms in the same order, the same floating-point operations."""

    def __init__(self, model: EventModel, owners: range, rng: np.random.Generator, t0: float):
        self.m, self.rng, self.owners = model, rng, (owners[0], owners[1])
        self.decays = model.decays.tolist()
        self.excitation = [[0.0] * (2 * KINDS) for _ in self.decays]
        self.kernel_next = [math.inf] * len(self.decays)
        self.jump = jumps(model.alpha, model.decays).tolist()
        self.marks = _marks(model)
        self.cdfs = [(np.cumsum(p) / np.cumsum(p)[-1]).tolist() for _, p in self.marks]
        n_spread, n_queue = len(model.spread_edges) + 1, len(model.queue_edges) + 1
        self.base_bound = baseline_bound(model.mu, n_spread, n_queue)
        self.mu, self.profile = model.mu.tolist(), model.profile.tolist()
        self.last = t0
        self.base_next = self.base_draw(t0)
        self.choose()

    def draw(self, d: int) -> float:
        u = self.rng.random()
        cdf = self.cdfs[d]
        lo, hi = 0, len(cdf) - 1
        while lo < hi:
            mid = (lo + hi) // 2
            if cdf[mid] > u:
                hi = mid
            else:
                lo = mid + 1
        return float(self.marks[d][0][lo])

    def state(self, book: OrderBook, side: int) -> tuple[float, float, float]:
        """(spread ticks or -1 unquoted, own best lots, opposite best lots)."""
        bid, ask = book.best_bid(), book.best_ask()
        own, other = (bid, ask) if side > 0 else (ask, bid)
        spread = float(ask[0] - bid[0]) if bid and ask else -1.0
        return spread, float(own[1]) if own else 0.0, float(other[1]) if other else 0.0

    def cell(self, book: OrderBook, side: int) -> int:
        spread, own, other = self.state(book, side)
        return int(self.m.cell(spread if spread >= 0 else np.inf, own, other))  # unquoted: widest

    def base_draw(self, t: float) -> float:
        m, bins = self.m, len(self.profile)
        work = -math.log(1.0 - self.rng.random())
        position = math.floor((t - m.start) / m.bin_seconds)
        i = 0 if position < 0 else int(min(position, bins - 1))
        while True:
            rate = self.base_bound * self.profile[i]
            if i == bins - 1:
                return t + work / rate if rate > 0 else math.inf
            end = m.start + float(i + 1) * m.bin_seconds
            if rate > 0 and work < rate * (end - t):
                return t + work / rate
            work -= rate * (end - t)
            t = end
            i += 1

    def kernel_draw(self, k: int, t: float) -> float:
        total = 0.0
        for x in self.excitation[k]:
            total += x
        if not total > 0:
            return math.inf
        x = self.decays[k] * -math.log(1.0 - self.rng.random()) / total
        return t - math.log1p(-x) / self.decays[k] if x < 1.0 else math.inf

    def choose(self) -> None:
        self.next_time, self.which = self.base_next, -1
        for k, when in enumerate(self.kernel_next):
            if when < self.next_time:
                self.next_time, self.which = when, k

    def fire(self, book: OrderBook, log: list) -> None:
        t, which = self.next_time, self.which
        book.now = t
        total = 0.0
        if which >= 0:
            part = self.excitation[which]
            for x in part:
                total += x
            u = self.rng.random() * total
            e = 0
            while e < 2 * KINDS - 1 and u >= part[e]:
                u -= part[e]
                e += 1
        else:
            cells = (self.cell(book, 1), self.cell(book, -1))
            rates = [self.mu[e % KINDS][cells[e // KINDS]] for e in range(2 * KINDS)]
            for r in rates:
                total += r
            u = self.rng.random() * self.base_bound
            e = -1
            if u < total:
                e = 0
                while e < 2 * KINDS - 1 and u >= rates[e]:
                    u -= rates[e]
                    e += 1
        if e >= 0:
            kind, side = e % KINDS, 1 if e < KINDS else -1
            before = self.state(book, side)
            offset = self.act(book, kind, side)
            log.append((t, kind, side, offset, *before))
            for k, decay in enumerate(self.decays):
                fade = math.exp(-decay * (t - self.last))
                jump = self.jump[k][e]
                self.excitation[k] = [x * fade + j for x, j in zip(self.excitation[k], jump)]
            self.last = t
            self.kernel_next = [self.kernel_draw(k, t) for k in range(len(self.decays))]
        if which < 0:
            self.base_next = self.base_draw(t)
        self.choose()

    def act(self, book: OrderBook, kind: int, side: int) -> int:
        """Carry the event out; its offset (ticks from the best)."""
        owner, taker = self.owners if side > 0 else self.owners[::-1]
        own, other = (book.best_bid(), book.best_ask())[:: 1 if side > 0 else -1]
        offset = 0
        if own is not None:
            best = own[0]
            size = self.draw(kind)
            if kind == Kind.MARKET:
                size = _met(book, side, owner, size)
            qty = _lots(size)
            n_spread = len(self.m.spread_edges) + 1
            if kind in (Kind.LIMIT_TOUCH, Kind.LIMIT_INSIDE, Kind.LIMIT_BEHIND):
                price = best
                if kind == Kind.LIMIT_INSIDE and other is not None:
                    spread = side * (other[0] - best)
                    if spread > 1:
                        bucket = sum(e <= spread for e in self.m.spread_edges.tolist())
                        ticks = int(round(self.draw(KINDS + bucket) * float(spread)))
                        price = best + side * max(1, min(ticks, spread - 1))
                elif kind == Kind.LIMIT_BEHIND:
                    price = best - side * int(round(self.draw(KINDS + n_spread)))
                if price > 0:
                    book.limit(side, price, qty, owner)
                offset = abs(price - best)
            elif kind in (Kind.CANCEL_TOUCH, Kind.CANCEL_BEHIND):
                price = best
                if kind == Kind.CANCEL_BEHIND:
                    price = best - side * int(round(self.draw(KINDS + n_spread + 1)))
                mine = [oid for oid, _, who in book.orders_at(side, price) if who == owner]
                if mine:
                    book.cancel(mine[-1])
                offset = abs(price - best)
            else:
                book.market(-side, qty, taker)
        self.keep_depth(book, 1)
        self.keep_depth(book, -1)
        return offset

    def keep_depth(self, book: OrderBook, side: int) -> None:
        owner = self.owners[0 if side > 0 else 1]
        bids, asks = book.depth(1 << 30)
        everyone, other = (bids, asks) if side > 0 else (asks, bids)
        levels = [(p, v) for p, v in everyone if _holds(book, side, p, owner)]
        depth = self.m.depth
        for price, _ in levels[depth:]:
            book.reduce(side, price, MAX_QTY, owner)
        n, n_spread = min(len(levels), depth), len(self.m.spread_edges) + 1
        deepest = levels[n - 1][0] if n else 0
        while n < depth:
            if n == 0:
                if everyone:
                    deepest = everyone[0][0]
                elif not other:
                    return
                else:
                    deepest = other[0][0]
            price = deepest - side * int(round(self.draw(KINDS + n_spread + 2)))
            if price <= 0:
                return
            qty = _lots(self.draw(KINDS + n_spread + 3))
            book.limit(side, price, qty, owner)
            deepest, n = price, n + 1


def reference_events(
    model: EventModel,
    book: OrderBook,
    owners: range,
    rng: np.random.Generator,
    t0: float,
    t1: float,
) -> tuple[Events, Path]:
    """The learned flow of ``model`` alone on ``book`` (as it is: `open_book` places the
    model's opening book) from ``t0`` to ``t1`` seconds, drawn in Python exactly as the
    compiled sampler draws it with the same generator: the events, each with the state
    before it, and the state after each one (the book's steps), for the known-answer
    tests."""
    reference = _Reference(model, owners, rng, t0)
    log: list[tuple] = []
    steps = [(t0, *_touch(book))]
    reference.keep_depth(book, 1)
    reference.keep_depth(book, -1)
    while reference.next_time < t1:
        count = len(log)
        reference.fire(book, log)
        if len(log) > count:
            steps.append((reference.last, *_touch(book)))
    columns = list(zip(*log)) if log else [()] * 7
    time, kind, side, offset, spread, own, other = (np.array(c) for c in columns)
    ev = Events(
        time=time.astype(np.float64),
        kind=kind.astype(np.int8),
        side=side.astype(np.int8),
        offset=offset.astype(np.int64),
        size=np.ones(len(time), np.int64),
        spread=np.maximum(spread, 0).astype(np.int64),
        own=own.astype(np.int64),
        other=other.astype(np.int64),
    )
    t, sp, bid, ask = (np.array(c) for c in zip(*steps))
    return ev, Path(t.astype(np.float64), sp.astype(np.int64), bid, ask, float(t1))


def _met(book: OrderBook, side: int, owner: int, fraction: float) -> float:
    """The lots a market order on ``side`` takes (the compiled sampler's rule): every level
    better than ``owner``'s best there, and ``fraction`` of the level at it (of the best
    level when ``owner`` rests nowhere on the side)."""
    levels = book.depth(1 << 30)[0 if side > 0 else 1]
    ahead = 0.0
    for price, volume in levels:
        if _holds(book, side, price, owner):
            return ahead + fraction * float(volume)
        ahead += float(volume)
    return fraction * float(levels[0][1])


def _lots(size: float) -> int:
    """A drawn size as an order's lots, as the compiled sampler rounds it: rounded, at least
    1, at most the book's largest quantity."""
    return min(max(int(round(size)), 1), MAX_QTY)


def _holds(book: OrderBook, side: int, price: int, owner: int) -> bool:
    """Whether the level (side, price) holds an order of ``owner``."""
    return any(who == owner for _, _, who in book.orders_at(side, price))


def _touch(book: OrderBook) -> tuple[int, int, int]:
    """(spread ticks, 0 unquoted; best bid lots; best ask lots)."""
    bid, ask = book.best_bid(), book.best_ask()
    spread = ask[0] - bid[0] if bid and ask else 0
    return spread, bid[1] if bid else 0, ask[1] if ask else 0
