"""Order vocabulary shared by the market, the background traders and the seats' action sets.

`Kind` says what an order row asks the market to do, `Orders` is a batch of rows (what a
background trader returns for an interval) and `SeatOrder` is one order a seat asks for.
"""

from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple

import numpy as np

import tradearena.envs.simulator.book as book

__all__ = ["Kind", "Orders", "Program", "Rule", "SeatOrder"]


class Kind(IntEnum):
    """What an order row asks the market to do (carried out by `OrderBook.run`)."""

    LIMIT = book.LIMIT  # limit order; the remainder rests
    MARKET = book.MARKET  # market order; nothing rests
    REPLACE = book.REPLACE  # cancel the owner's resting orders, then a limit order
    CANCEL_ALL = book.CANCEL_ALL  # cancel the owner's resting orders (side, price, qty ignored)
    HANDLE = book.HANDLE  # handed back to the owner's trader: `Trader.handle(book, ref)`
    QUOTE = book.QUOTE  # the owner's one resting order on a side at a price (`OrderBook.quote`)


SeatOrder = tuple[int, int, int, int]
"""(kind, side, price ticks, qty shares): what a seat asks for, with `Kind` codes
(LIMIT, MARKET, REPLACE, CANCEL_ALL, QUOTE)."""


ROW_INT = np.int32  # the integer columns of order rows
_ROW_MIN, _ROW_MAX = int(np.iinfo(ROW_INT).min), int(np.iinfo(ROW_INT).max)
_FITS = {np.dtype(t) for t in (ROW_INT, np.int8, np.int16, np.uint8, np.uint16, np.bool_)}


class Orders(NamedTuple):
    """A batch of order rows, one numpy array per column, all of shape (n,).

    time: seconds after midnight (float64); the rest int32 (a session's rows are its largest
    state): kind: `Kind`; side: +1 buy / -1 sell; price: ticks; qty: shares; owner: the
    market's owner id; ref: the trader's own reference (HANDLE rows).
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
        """Rows at ``time`` (shape (n,)); scalar columns are broadcast to it. Integer columns
        become int32; a value beyond its range is an error that names the column."""
        n = len(time)

        def column(name: str, values: int | np.ndarray) -> np.ndarray:
            scalar = not isinstance(values, np.ndarray)
            if not scalar and (values.dtype in _FITS or not values.size):
                return values.astype(ROW_INT, copy=False)
            low, high = (values, values) if scalar else (values.min(), values.max())
            if low < _ROW_MIN or high > _ROW_MAX:
                raise ValueError(
                    f"order rows' {name} must fit 32 bits: got values in [{low}, {high}]"
                )
            return np.full(n, values, ROW_INT) if scalar else values.astype(ROW_INT)

        columns = zip(cls._fields[1:], (kind, side, price, qty, owner, ref))
        return cls(time, *(column(name, values) for name, values in columns))

    def take(self, rows: slice | np.ndarray) -> Orders:
        """The rows selected by a slice or index array."""
        return Orders(*(c[rows] for c in self))

    @classmethod
    def empty(cls) -> Orders:
        """No rows (one shared, empty batch)."""
        return _EMPTY

    @classmethod
    def concat(cls, batches: list[Orders]) -> Orders:
        """All rows of ``batches`` sorted by time (stable: ties keep batch order), integer
        columns int32 as `build` makes them (whatever a population built its batch with)."""
        batches = [b for b in batches if len(b.time)]
        if not batches:
            return cls.empty()
        if len(batches) == 1:
            return cls.build(*batches[0])
        columns = [np.concatenate(c) for c in zip(*batches)]
        order = np.argsort(columns[0], kind="stable")
        return cls.build(*(c[order] for c in columns))


_EMPTY = Orders.build(np.empty(0), Kind.LIMIT)


class Rule(IntEnum):
    """How the market prices a `Program`'s rows at the start of the interval they fall in."""

    FIXED = 0  # as they are
    ZERO_INTELLIGENCE = 1  # forecast + private value at the member's holdings (ZeroIntelligence)
    MOMENTUM = 2  # side and price from the mids' moving averages and the touch (Momentum)
    MAKER = 3  # one row per wake-up: a cancel, then a ladder from the last mid (MarketMaker)
    REPLAY = 4  # one row per tape message, carried out by the program's `replayer` (MarketReplay)
    LEARNED = 5  # no rows: the program's `sampler` draws events against the book (LearnedFlow)


class Program(NamedTuple):
    """A background population's order rows for a whole session and the `Rule` that prices them,
    which the compiled `envs.simulator.flow.Flow` carries out interval by interval exactly as the
    population's ``orders`` method would.

    rows: the session's rows (their prices, and for ZERO_INTELLIGENCE kinds, MOMENTUM sides,
    are filled in at each interval; the flow keeps and writes the arrays themselves, so a
    program hands them over); value: per row, ZERO_INTELLIGENCE the limit before the
    private value (ticks); theta: ZERO_INTELLIGENCE private values, ticks, shape (members,
    2 q_max), a row's member being its owner less ``first_owner``; lot (shares per
    private-value unit), q_max; short, long (mids averaged, MOMENTUM); MAKER: each row a
    wake-up, carried out as a cancel of the owner's orders, then ``levels`` bids of ``size``
    shares from ``half_spread`` ticks below the last mid (rounded down) and ``spacing`` ticks
    apart, then ``levels`` asks likewise above it (rounded up). REPLAY: each row's ``ref`` is a
    message of the tape that ``replayer`` (an `envs.simulator.replayer.Replayer`) carries out.
    LEARNED: no rows; ``sampler`` (a `learned_flow.sampler.Sampler`) draws the
    population's events one at a time against the book.
    """

    rows: Orders
    rule: Rule = Rule.FIXED
    value: np.ndarray | None = None
    theta: np.ndarray | None = None
    first_owner: int = 0
    lot: float = 1.0
    q_max: int = 0
    short: int = 0
    long: int = 0
    half_spread: float = 0.0
    levels: int = 0
    spacing: int = 0
    size: int = 0
    replayer: object = None
    sampler: object = None
