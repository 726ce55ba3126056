"""The learned flow's compiled sampler (`learned_flow.sampler.EventSampler`) written again in
Python, line by line, for the tests: `reference_events` draws what the sampler draws with the
same generator, on the book's Python methods; `known_model`, the flow of known parameters
the tests draw from and learn again; and `small_model`, a plain one for the file tests."""

from __future__ import annotations

import math

import numpy as np

from tradearena.envs.data.events import N_EVENT_KINDS, EventKind, Events, StatePath
from tradearena.envs.simulator.book import MAX_QTY, OrderBook
from tradearena.envs.simulator.learned_flow.exciters import EMPTIED, N_EXCITERS, Exciter
from tradearena.envs.simulator.learned_flow.kernels import jumps
from tradearena.envs.simulator.learned_flow.marks import FAMILIES, By, Marks
from tradearena.envs.simulator.learned_flow.model import EventModel
from tradearena.envs.simulator.learned_flow.sampler import baseline_bound

OPEN = 34_200.0
"""The known model's open: 09:30, seconds after midnight."""


def known_model(alpha_scale: float = 1.0) -> EventModel:
    """A model with two spread buckets (1-2, 3+ ticks) and two queue buckets (< 4, 4+ lots):
    limit orders come faster when the own queue is short, inside orders only when the spread
    is wide, market orders faster when the opposite queue is short; a market order that
    empties the best level excites limit orders at the touch on its side (fast: the queue
    refilled), one that does not excites more market orders (slow), the first at full gain
    when the spread is narrow and 0.3 when it is wide, the second at half gain when the
    spread is wide."""
    spread_edges, queue_edges = np.array([3.0]), np.array([4.0])
    sb, qo, qp = np.unravel_index(np.arange(8), (2, 2, 2))
    mu = np.zeros((N_EVENT_KINDS, 8))
    mu[EventKind.LIMIT_TOUCH] = np.where(qo == 0, 0.6, 0.2)
    mu[EventKind.LIMIT_INSIDE] = np.where(sb == 1, 0.5, 0.0)
    mu[EventKind.CANCEL_TOUCH] = np.where(qo == 0, 0.1, 0.4)
    mu[EventKind.MARKET] = np.where(qp == 0, 0.3, 0.1)
    alpha = np.zeros((2, N_EVENT_KINDS, 2 * N_EXCITERS))
    alpha[0, EventKind.LIMIT_TOUCH, Exciter.MARKET_EMPTIED] = 0.4 * alpha_scale
    alpha[1, EventKind.MARKET, Exciter.MARKET] = 0.3 * alpha_scale
    alpha[1, EventKind.CANCEL_TOUCH, N_EXCITERS + Exciter.LIMIT_INSIDE] = 0.2 * alpha_scale
    gain = np.ones((N_EVENT_KINDS, 2))
    gain[EventKind.LIMIT_TOUCH] = (1.0, 0.3)
    gain[EventKind.MARKET] = (1.0, 0.5)
    one = (np.ones(1), np.ones(1))
    halves = (np.array([1.0, 2.0]), np.array([0.5, 0.5]))
    marks = Marks(
        sizes=tuple(halves for _ in range(N_EVENT_KINDS - 1)),
        taken=((np.array([0.5, 1.0]), np.array([0.5, 0.5])),) * 2,
        inside=(one, (np.array([0.25, 0.5]), np.array([0.7, 0.3]))),
        limit_behind=(one,),
        cancel_behind=(one,),
        gap=(one, one),
        queue=((np.array([2.0, 3.0]), np.array([0.5, 0.5])),) * 2,
    )
    return EventModel(
        spread_edges=spread_edges,
        queue_edges=queue_edges,
        mu=mu,
        alpha=alpha,
        gain=gain,
        decays=np.array([50.0, 1.0]),
        profile=np.array([1.5, 0.5]),
        start=OPEN,
        bin_seconds=3600.0,
        marks=marks,
        depth=2,
        book=np.array([[1.0, 3.0, -1.0, 3.0]]),
        tick_size=0.01,
        lot_size=1.0,
    )


def small_model(
    *,
    excitation: float = 0.0,
    mu: np.ndarray | None = None,
    decays: tuple[float, ...] = (50.0, 1.0),
    profile: tuple[float, ...] = (1.0,),
    bin_seconds: float = 7200.0,
) -> EventModel:
    """A plain model for the file and market tests: two spread buckets (1-2, 3+ ticks) and two
    queue buckets (< 4, 4+ lots), limit orders at and inside the best, cancels at the best and
    market orders at 0.5, 0.3, 0.4 and 0.2 a second in every state (or ``mu``), a market
    order that empties its level exciting limit orders at the touch (first kernel) and market
    orders (second) by ``excitation``; every mark one value, a book of 3 lots a side one tick
    from the mid."""
    if mu is None:
        mu = np.zeros((N_EVENT_KINDS, 8))
        mu[[0, 1, 3, 5]] = [[0.5], [0.3], [0.4], [0.2]]
    alpha = np.zeros((len(decays), N_EVENT_KINDS, 2 * N_EXCITERS))
    if excitation:
        alpha[0, 0, Exciter.MARKET_EMPTIED] = alpha[1, 5, Exciter.MARKET_EMPTIED] = excitation
    one = (np.ones(1), np.ones(1))
    return EventModel(
        spread_edges=np.array([3.0]),
        queue_edges=np.array([4.0]),
        mu=mu,
        alpha=alpha,
        gain=np.ones((N_EVENT_KINDS, 2)),
        decays=np.array(decays),
        profile=np.array(profile),
        start=OPEN,
        bin_seconds=bin_seconds,
        marks=Marks(
            sizes=tuple(one for _ in range(N_EVENT_KINDS - 1)),
            taken=(one, one),
            inside=(one, (np.array([0.5]), np.ones(1))),
            limit_behind=(one,),
            cancel_behind=(one,),
            gap=(one, one),
            queue=((np.array([3.0]), np.ones(1)),) * 2,
        ),
        depth=2,
        book=np.array([[1.0, 3.0, -1.0, 3.0]]),
        tick_size=0.01,
        lot_size=1.0,
    )


class Reference:
    """`learned_flow.sampler.EventSampler` in Python, line by line, on the book's Python
    methods: the same uniforms in the same order, the same floating-point operations."""

    def __init__(
        self,
        model: EventModel,
        owners: range,
        rng: np.random.Generator,
        t0: float,
        causal: bool = True,
    ):
        self.m, self.rng, self.owners = model, rng, (owners[0], owners[1])
        self.causal = causal
        self.deepest = {1: 0, -1: 0}  # the deepest price each side held, to rebuild behind
        self.decays = model.decays.tolist()
        self.excitation = [[0.0] * (2 * N_EVENT_KINDS) for _ in self.decays]
        self.kernel_next = [math.inf] * len(self.decays)
        self.jump = jumps(model.alpha, model.decays).tolist()
        self.marks, self.first = model.marks.flat()
        self.cdfs = [(np.cumsum(p) / np.cumsum(p)[-1]).tolist() for _, p in self.marks]
        self.base_bound = baseline_bound(model.mu, *model.shape[:2])
        self.mu, self.profile = model.mu.tolist(), model.profile.tolist()
        self.gain = model.gain.tolist()
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

    def mark(
        self,
        book: OrderBook,
        family: str,
        side: int,
        kind: int,
        lots: float | None = None,
        spread: float | None = None,
    ) -> float:
        """A value of ``family``'s marks, from the distribution what it is indexed by
        (`FAMILIES`) picks: the event's kind, the bucket of the lots at ``side``'s best as
        seen (None: read from the book), of the spread (None: read), or its one."""
        by = FAMILIES[family].by
        index = 0
        if by == By.KIND:
            index = kind
        elif by == By.QUEUE:
            if lots is None:
                lots = self.touch(book, side)[1] if self.touch(book, side) else 0.0
            index = int(self.m.grid.queue_buckets(lots))
        elif by == By.SPREAD:
            if spread is None:
                spread, _, _ = self.state(book, 1)
                spread = spread if spread >= 0 else np.inf
            index = int(self.m.grid.spread_buckets(spread))
        return self.draw(self.first[family] + index)

    def reader(self, side: int) -> int:
        """Whose orders on ``side`` the flow sees: its own (causal) or anyone's (-1)."""
        return self.owners[0 if side > 0 else 1] if self.causal else -1

    def touch(self, book: OrderBook, side: int) -> tuple[int, float] | None:
        """``side``'s best as the flow sees it: (price, lots), or None."""
        return touch(book, side, self.reader(side))

    def state(self, book: OrderBook, side: int) -> tuple[float, float, float]:
        """(spread ticks or -1 unquoted, own best lots, opposite best lots), as seen."""
        bid, ask = self.touch(book, 1), self.touch(book, -1)
        own, other = (bid, ask) if side > 0 else (ask, bid)
        spread = float(ask[0] - bid[0]) if bid and ask else -1.0
        return spread, own[1] if own else 0.0, other[1] if other else 0.0

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
        total = total * math.exp(-self.decays[k] * (t - self.last))
        if not total > 0:
            return math.inf
        x = self.decays[k] * -math.log(1.0 - self.rng.random()) / total
        return t + -math.log1p(-x) / self.decays[k] if x < 1.0 else math.inf

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
            while e < 2 * N_EVENT_KINDS - 1 and u >= part[e]:
                u -= part[e]
                e += 1
            cell = self.cell(book, 1 if e < N_EVENT_KINDS else -1)
            spread = int(self.m.grid.spread_of_cell(cell))
            if not self.rng.random() < self.gain[e % N_EVENT_KINDS][spread]:
                self.kernel_next[which] = self.kernel_draw(which, t)
                self.choose()
                return
        else:
            cells = (self.cell(book, 1), self.cell(book, -1))
            rates = [
                self.mu[e % N_EVENT_KINDS][cells[e // N_EVENT_KINDS]]
                for e in range(2 * N_EVENT_KINDS)
            ]
            for r in rates:
                total += r
            u = self.rng.random() * self.base_bound
            e = -1
            if u < total:
                e = 0
                while e < 2 * N_EVENT_KINDS - 1 and u >= rates[e]:
                    u -= rates[e]
                    e += 1
        if e >= 0:
            kind, side = e % N_EVENT_KINDS, 1 if e < N_EVENT_KINDS else -1
            before = self.state(book, side)
            offset, emptied = self.act(book, kind, side)
            log.append((t, kind, side, offset, *before, emptied))
            exciter = EMPTIED[kind] if emptied else kind
            source = (0 if side > 0 else 1) * N_EXCITERS + exciter
            for k, decay in enumerate(self.decays):
                fade = math.exp(-decay * (t - self.last))
                jump = self.jump[k][source]
                self.excitation[k] = [x * fade + j for x, j in zip(self.excitation[k], jump)]
            self.last = t
            self.kernel_next = [self.kernel_draw(k, t) for k in range(len(self.decays))]
        if which < 0:
            self.base_next = self.base_draw(t)
        self.choose()

    def act(self, book: OrderBook, kind: int, side: int) -> tuple[int, bool]:
        """Carry the event out -> its offset (ticks from the best) and whether it emptied
        the best level (a cancel at the touch or a market order only)."""
        owner, taker = self.owners if side > 0 else self.owners[::-1]
        own, other = self.touch(book, side), self.touch(book, -side)
        offset, emptied = 0, False
        if own is not None:
            best = own[0]
            if kind == EventKind.MARKET:
                fraction = self.mark(book, "taken", side, kind, own[1])
                book.market(-side, _lots(_met(book, side, owner, fraction, self.causal)), taker)
            else:
                qty = _lots(self.mark(book, "sizes", side, kind, own[1]))
                price = best
                if kind in (EventKind.LIMIT_TOUCH, EventKind.LIMIT_INSIDE, EventKind.LIMIT_BEHIND):
                    if kind == EventKind.LIMIT_INSIDE:
                        spread = side * (other[0] - best) if other is not None else 0
                        if other is not None and spread > 1:
                            inside = self.mark(book, "inside", side, kind, own[1], spread)
                            ticks = int(round(inside * float(spread)))
                            price = best + side * max(1, min(ticks, spread - 1))
                    elif kind == EventKind.LIMIT_BEHIND:
                        ticks = int(round(self.mark(book, "limit_behind", side, kind, own[1])))
                        price = best - side * ticks
                    if price > 0:
                        book.limit(side, price, qty, owner)
                else:
                    if kind == EventKind.CANCEL_BEHIND:
                        ticks = int(round(self.mark(book, "cancel_behind", side, kind, own[1])))
                        price = best - side * ticks
                    mine = [oid for oid, _, who in book.orders_at(side, price) if who == owner]
                    if mine:
                        book.cancel(mine[-1])
                offset = abs(price - best)
            if kind in EMPTIED:
                after = self.touch(book, side)
                emptied = (after[0] if after else 0) != best
        self.keep_depth(book, 1)
        self.keep_depth(book, -1)
        return offset, emptied

    def keep_depth(self, book: OrderBook, side: int) -> None:
        owner = self.owners[0 if side > 0 else 1]
        bids, asks = book.depth(1 << 30)
        everyone, other = (bids, asks) if side > 0 else (asks, bids)
        levels = [(p, v) for p, v in everyone if _holds(book, side, p, owner)]
        depth = self.m.depth
        for price, _ in levels[depth:]:
            book.reduce(side, price, MAX_QTY, owner)
        n = min(len(levels), depth)
        deepest = levels[n - 1][0] if n else 0
        held = self.deepest[side]
        while n < depth:
            if n == 0:
                if held > 0 and (not other or side * (other[0][0] - held) > 0):
                    deepest = held
                elif everyone:
                    deepest = everyone[0][0]
                elif not other:
                    return
                else:
                    deepest = other[0][0]
            spread, _, _ = self.state(book, 1)
            spread = spread if spread >= 0 else np.inf
            price = deepest - side * int(round(self.mark(book, "gap", side, -1, spread=spread)))
            if price <= 0:
                return
            qty = _lots(self.mark(book, "queue", side, -1, spread=spread))
            book.limit(side, price, qty, owner)
            deepest, n = price, n + 1
        if n:
            self.deepest[side] = deepest


def reference_events(
    model: EventModel,
    book: OrderBook,
    owners: range,
    rng: np.random.Generator,
    t0: float,
    t1: float,
    causal: bool = True,
) -> tuple[Events, StatePath]:
    """The learned flow of ``model`` alone on ``book`` (as it is: `open_book` places the
    model's opening book) from ``t0`` to ``t1`` seconds, drawn in Python exactly as the
    compiled sampler draws it with the same generator: the events, each with the state
    before it, and the state after each one (the book's steps), for the known-answer
    tests."""
    reference = Reference(model, owners, rng, t0, causal)
    log: list[tuple] = []
    steps = [(t0, *_touch(book))]
    reference.keep_depth(book, 1)
    reference.keep_depth(book, -1)
    while reference.next_time < t1:
        count = len(log)
        reference.fire(book, log)
        if len(log) > count:
            steps.append((reference.last, *_touch(book)))
    columns = list(zip(*log)) if log else [()] * 8
    time, kind, side, offset, spread, own, other, emptied = (np.array(c) for c in columns)
    ev = Events(
        time=time.astype(np.float64),
        kind=kind.astype(np.int8),
        side=side.astype(np.int8),
        offset=offset.astype(np.int64),
        size=np.ones(len(time), np.int64),
        spread=np.maximum(spread, 0).astype(np.int64),
        own=own.astype(np.int64),
        other=other.astype(np.int64),
        emptied=emptied.astype(bool),
    )
    t, sp, bid, ask = (np.array(c) for c in zip(*steps))
    return ev, StatePath(t.astype(np.float64), sp.astype(np.int64), bid, ask, float(t1))


def _met(book: OrderBook, side: int, owner: int, fraction: float, own: bool) -> float:
    """The lots a market order on ``side`` takes (the compiled sampler's rule): every level
    better than ``owner``'s best there, and ``fraction`` of ``owner``'s lots at it (``own``)
    or of the level (of the best level when ``owner`` rests nowhere on the side); nothing
    behind ``owner``'s deepest level."""
    levels = book.depth(1 << 30)[0 if side > 0 else 1]
    ahead, size, reach = 0.0, None, 0.0
    for price, volume in levels:
        if _holds(book, side, price, owner):
            if size is None:
                lots = touch(book, side, owner)[1] if own else float(volume)
                size = ahead + fraction * lots
            reach = ahead + float(volume)
        ahead += float(volume)
    return fraction * float(levels[0][1]) if size is None else min(size, reach)


def touch(book: OrderBook, side: int, owner: int) -> tuple[int, float] | None:
    """``side``'s best as ``owner`` sees it (`learned_flow.state.touch`): the best level
    holding one of its orders and its lots there (``owner`` -1: the best level and all its
    lots); None when there is none."""
    for price, volume in book.depth(1 << 30)[0 if side > 0 else 1]:
        if owner < 0:
            return price, float(volume)
        lots = sum(qty for _, qty, who in book.orders_at(side, price) if who == owner)
        if lots > 0:
            return price, float(lots)
    return None


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
