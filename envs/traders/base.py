"""What every background trader shares: the order batch it returns and the class it extends.

A background trader is a *population* of participants of one kind (1000 noise traders are one
`Noise` object): vectorised over its members, it returns in one numpy batch all the orders they
send in an interval of market time, and the market merges the batches of all traders in time
order. Decisions inside an interval use what the market showed at its start. What does not
depend on the market (arrival times, sizes, coin flips, a fundamental value) is drawn once per
session in `reset`, so an interval costs a slice and a few array operations.
"""

from __future__ import annotations

from enum import IntEnum
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from envs import book

if TYPE_CHECKING:
    from envs.book import Fill, OrderBook
    from envs.market import Market


class Kind(IntEnum):
    """What an order row asks the market to do (carried out by `OrderBook.run`)."""

    LIMIT = book.LIMIT  # limit order; the remainder rests
    MARKET = book.MARKET  # market order; nothing rests
    REPLACE = book.REPLACE  # cancel the owner's resting orders, then a limit order
    CANCEL_ALL = book.CANCEL_ALL  # cancel the owner's resting orders (side, price, qty ignored)
    HANDLE = book.HANDLE  # handed back to the owner's trader: `Trader.handle(book, ref)`


class Orders(NamedTuple):
    """A batch of order rows, one numpy array per column, all of shape (n,).

    time: seconds after midnight; kind: `Kind`; side: +1 buy / -1 sell; price: ticks;
    qty: shares; owner: the market's owner id; ref: the trader's own reference (HANDLE rows).
    """

    time: np.ndarray
    kind: np.ndarray
    side: np.ndarray
    price: np.ndarray
    qty: np.ndarray
    owner: np.ndarray
    ref: np.ndarray

    @classmethod
    def build(
        cls,
        time: np.ndarray,
        kind: int | np.ndarray,
        side: int | np.ndarray = 0,
        price: int | np.ndarray = 0,
        qty: int | np.ndarray = 0,
        owner: int | np.ndarray = 0,
        ref: int | np.ndarray = -1,
    ) -> Orders:
        """Rows at ``time`` (shape (n,)); scalar columns are broadcast to it."""
        n = len(time)

        def column(values: int | np.ndarray) -> np.ndarray:
            if isinstance(values, np.ndarray):
                return values
            return np.full(n, values, dtype=np.int64)

        return cls(time, *(column(c) for c in (kind, side, price, qty, owner, ref)))

    def take(self, rows: slice | np.ndarray) -> Orders:
        """The rows selected by a slice or index array."""
        return Orders(*(c[rows] for c in self))

    @classmethod
    def empty(cls) -> Orders:
        """No rows (one shared, empty batch)."""
        return _EMPTY

    @classmethod
    def concat(cls, batches: list[Orders]) -> Orders:
        """All rows of ``batches`` sorted by time (stable: ties keep batch order)."""
        batches = [b for b in batches if len(b.time)]
        if not batches:
            return cls.empty()
        if len(batches) == 1:
            return batches[0]
        columns = [np.concatenate(c) for c in zip(*batches)]
        order = np.argsort(columns[0], kind="stable")
        return cls(*(c[order] for c in columns))


class Trader:
    """A population of background participants of one kind.

    Subclasses set ``n_owners`` (how many owner ids their members need) and implement
    `orders`. The market calls `reset` at the start of a session with the owner ids it gave
    the population and `orders` once per interval. What a member holds is in the book's
    record of fills (``market.book.positions(...)``).
    """

    n_owners: int = 1

    def reset(self, market: Market, owners: range, rng: np.random.Generator) -> None:
        """Start a session: remember ``owners``; may place an initial book into
        ``market.book``."""
        self.owners = owners

    def orders(self, market: Market, t0: float, t1: float, rng: np.random.Generator) -> Orders:
        """The orders the population sends in [t0, t1) seconds after midnight."""
        raise NotImplementedError

    def handle(self, book: OrderBook, ref: int) -> list[Fill]:
        """Carry out a HANDLE row of this trader on ``book``; return its fills."""
        raise NotImplementedError(f"{type(self).__name__} sends no HANDLE rows")


_EMPTY = Orders.build(np.empty(0), Kind.LIMIT)


def window(times: np.ndarray, t0: float, t1: float) -> slice:
    """The slice of sorted ``times`` that falls in [t0, t1)."""
    lo, hi = np.searchsorted(times, (t0, t1)).tolist()
    return slice(lo, hi)


def poisson_times(
    rate: float, n_agents: int, t0: float, t1: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Arrivals of ``n_agents`` independent Poisson processes of ``rate`` per second in
    [t0, t1): (times, agent indices), sorted by time."""
    n = rng.poisson(rate * n_agents * (t1 - t0))
    times = np.sort(rng.uniform(t0, t1, size=n))
    return times, rng.integers(0, n_agents, size=n)


def periodic_times(
    phase: np.ndarray, period: float, t0: float, t1: float
) -> tuple[np.ndarray, np.ndarray]:
    """Wake-ups at ``phase + j * period`` (phase per agent, shape (n,)) in [t0, t1):
    (times, agent indices), sorted by time."""
    first = np.ceil((t0 - phase) / period)
    last = np.ceil((t1 - phase) / period)  # exclusive
    counts = np.maximum(last - first, 0).astype(np.int64)
    agents = np.repeat(np.arange(len(phase)), counts)
    offsets = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    times = phase[agents] + (first[agents] + offsets) * period
    order = np.argsort(times, kind="stable")
    return times[order], agents[order]
