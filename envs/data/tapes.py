"""Market data tapes: LOBSTER message and order-book files as numpy arrays.

Units: time in seconds after midnight, sizes in shares (lots of ``lot_size`` for a converted
recording), prices in integer ticks of ``tick_size`` dollars. LOBSTER writes prices as
dollars x 10000, so a tick is ``round(tick_size * 10000)`` of LOBSTER's units and ``ticks =
lobster_price // that``. Directions are +1 (buy) and -1 (sell), as in ``envs.simulator.book``.

Two kinds of price are not converted to ticks:

- halts (type 7) keep LOBSTER's price code as is: -1 halt, 0 quoting, 1 resume;
- empty order-book levels keep LOBSTER's dummy prices unscaled, ``EMPTY_ASK`` (9999999999) and
  ``EMPTY_BID`` (-9999999999), with size 0, whatever the tick size: they stay above (below)
  any real ask (bid) price in ticks, and ``write_lobster`` maps them back exactly.

Visible events (types 1-4) must be on the tick grid. Hidden executions and crosses (types 5, 6)
may trade between ticks (a hidden order can rest at the midpoint); their prices are rounded down
to a tick, so only these are not restored exactly by ``write_lobster``.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from enum import IntEnum
from functools import cached_property
from typing import NoReturn

import numpy as np
import pandas as pd

from tradearena.envs.data.decimals import MAX_LOTS as MAX_SIZE
from tradearena.envs.errors import UserError

__all__ = [
    "MESSAGE_DTYPE",
    "EMPTY_ASK",
    "EMPTY_BID",
    "MAX_TIME",
    "Event",
    "TapeError",
    "Tape",
    "clock",
    "load_lobster",
    "tick_dollars",
    "write_lobster",
]

MESSAGE_DTYPE = np.dtype(
    [
        ("time", "f8"),
        ("type", "i1"),
        ("order_id", "i8"),
        ("size", "i8"),
        ("price", "i8"),
        ("direction", "i1"),
    ]
)
MESSAGE_COLUMNS: tuple[str, ...] = MESSAGE_DTYPE.names

MAX_TIME = 7 * 86_400.0
"""The latest a message may be, seconds after midnight of the tape's first day: a week (a
converted recording may run past midnight). Far later, float seconds grow too coarse for the
waits between a market's events."""
EMPTY_ASK = 9_999_999_999  # price of an empty ask level (LOBSTER's dummy, unscaled)
EMPTY_BID = -9_999_999_999  # price of an empty bid level (LOBSTER's dummy, unscaled)

_MAX_WHY = "the most one order of the book holds"
_LOBSTER_UNITS_PER_DOLLAR = 10_000
_INTEGER = re.compile(r"\s*[+-]?\d+\s*")
_NUMBER = re.compile(r"\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*")


class Event(IntEnum):
    """LOBSTER message types."""

    NEW = 1
    CANCEL = 2  # partial cancellation
    DELETE = 3  # whole order
    EXECUTE = 4  # visible order
    EXECUTE_HIDDEN = 5
    CROSS = 6
    HALT = 7


def clock(seconds: float) -> str:
    """Seconds after midnight as HH:MM (HH:MM:SS when not a whole minute)."""
    hours, rest = divmod(int(round(seconds)), 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours:02d}:{minutes:02d}" + (f":{secs:02d}" if secs else "")


def tick_dollars(tick_size: float, lot_size: float) -> float:
    """Dollars a tick is worth on one lot: ``tick_size`` (dollars per tick of one unit of the
    instrument) times ``lot_size`` (units per lot)."""
    return tick_size * lot_size


class TapeError(UserError):
    """A tape file that cannot be read; the message names file, line (1-based) and column
    (name and 1-based index)."""


@dataclass(frozen=True, eq=False)
class Tape:
    """A stream of LOBSTER messages, optionally with the order book after each one.

    messages: ``MESSAGE_DTYPE`` array, shape (n,); prices in ticks (see the module docstring).
    book: int64 array, shape (n, 4 * levels), or None; per level ask price (ticks), ask size,
    bid price (ticks), bid size (shares); row i is the book after message i; empty levels have
    price ``EMPTY_ASK`` / ``EMPTY_BID`` and size 0.
    tick_size: dollars per tick. source: where the tape came from (the message file's path).
    complete: the messages explain the whole book from an empty one (a recorded synthetic
    session, a converted recording), so a replay of the messages alone is exact and needs no
    reconciliation. lot_size: what one unit of size is, in the instrument's units (1: a share;
    a converted recording's lot, e.g. 0.00001 BTC). opening_price: the price (ticks) a
    market replaying the tape opens at, when its initial book does not show both sides (None:
    the initial book's mid).

    Tapes compare by identity (arrays have no single ``==``); compare their fields.
    """

    messages: np.ndarray
    book: np.ndarray | None
    tick_size: float = 0.01
    source: str = "memory"
    complete: bool = False
    lot_size: float = 1.0
    opening_price: int | None = None

    def __post_init__(self) -> None:
        for name in ("tick_size", "lot_size"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be > 0, got {value}")
        if self.messages.dtype != MESSAGE_DTYPE or self.messages.ndim != 1:
            raise ValueError(
                f"messages must be a 1-D MESSAGE_DTYPE array, got {self.messages.dtype} "
                f"with shape {self.messages.shape}"
            )
        book = self.book
        if book is not None and (
            book.dtype != np.int64
            or book.ndim != 2
            or book.shape[0] != len(self.messages)
            or book.shape[1] == 0
            or book.shape[1] % 4
        ):
            raise ValueError(
                f"book must be an int64 array of shape ({len(self.messages)}, 4 * levels), "
                f"got {book.dtype} with shape {book.shape}"
            )

    @property
    def tick_dollars(self) -> float:
        """What a tick is worth on one lot, dollars (`tick_dollars`): a market replaying the
        tape runs at this tick."""
        return tick_dollars(self.tick_size, self.lot_size)

    @property
    def levels(self) -> int:
        """Order-book levels per side (0 without a book)."""
        return 0 if self.book is None else self.book.shape[1] // 4

    def __len__(self) -> int:
        return len(self.messages)

    @cached_property
    def columns(self) -> tuple[np.ndarray, ...]:
        """The messages as int64 columns (type, order id, size, price ticks, direction), each
        of shape (n,), made once per tape and shared by every replay of it."""
        m = self.messages
        names = ("type", "order_id", "size", "price", "direction")
        return tuple(np.ascontiguousarray(m[name], dtype=np.int64) for name in names)

    @cached_property
    def book_rows(self) -> np.ndarray | None:
        """The orderbook rows as one C-contiguous int64 array (None without them), made once
        per tape and shared by every replay of it."""
        return None if self.book is None else np.ascontiguousarray(self.book, dtype=np.int64)

    @cached_property
    def quotes(self) -> tuple[np.ndarray, np.ndarray]:
        """(best bid, best ask) after each message, ticks, float64 (n,) each: its row's, NaN
        while that side is empty; a `TapeError` without orderbook rows."""
        if self.book is None:
            raise TapeError(f"{self.source}: the best quotes need the tape's orderbook rows")
        ask, ask_size, bid, bid_size = self.book_rows[:, :4].T
        shown_bid = (bid_size > 0) & (bid != EMPTY_BID)
        shown_ask = (ask_size > 0) & (ask != EMPTY_ASK)
        return np.where(shown_bid, bid, np.nan), np.where(shown_ask, ask, np.nan)

    @property
    def quoted(self) -> np.ndarray:
        """Whether both sides are quoted after each message, bool (n,)."""
        return np.isfinite(self.mids)

    @cached_property
    def mids(self) -> np.ndarray:
        """The mid after each message, ticks, float64 (n,): half the best bid and ask of its
        row, NaN while a side is empty; a `TapeError` without orderbook rows."""
        bid, ask = self.quotes
        return (bid + ask) / 2.0

    def initial_book(self) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        """(bids, asks) as lists of (price ticks, shares), best first: the book before the first
        message, at most ``levels`` per side; empty without a book.

        It is the first book row with the first message's effect removed: a new order (type 1)
        is subtracted from its level if the row shows it; a cancel, delete or visible execution
        (types 2-4) is added back on its ``direction`` side (for an execution, the side of the
        resting order), inserting the level if needed; types 5-7 leave the visible book alone.
        A level that a new order pushed out of the row stays unknown, so that side may show
        fewer levels.
        """
        if self.book is None or len(self) == 0:
            return [], []
        row = self.book[0].tolist()
        sides: dict[int, dict[int, int]] = {1: {}, -1: {}}
        for level in range(self.levels):
            ask_price, ask_size, bid_price, bid_size = row[4 * level : 4 * level + 4]
            if ask_size:
                sides[-1][ask_price] = ask_size
            if bid_size:
                sides[1][bid_price] = bid_size

        first = self.messages[0]
        kind, price, size = int(first["type"]), int(first["price"]), int(first["size"])
        side = sides[int(first["direction"])]
        if kind == Event.NEW and price in side:
            if side[price] < size:
                raise TapeError(
                    f"{self.source}: the first message adds {size} shares at {price} ticks "
                    f"but the first book row has only {side[price]} there"
                )
            side[price] -= size
        elif kind in (Event.CANCEL, Event.DELETE, Event.EXECUTE):
            side[price] = side.get(price, 0) + size

        def best(levels: dict[int, int], descending: bool) -> list[tuple[int, int]]:
            ordered = sorted(((p, q) for p, q in levels.items() if q), reverse=descending)
            return ordered[: self.levels]

        return best(sides[1], descending=True), best(sides[-1], descending=False)


def load_lobster(
    messages: str | os.PathLike,
    orderbook: str | os.PathLike | None = None,
    *,
    tick_size: float = 0.01,
    start: float | None = None,
    end: float | None = None,
    in_ticks: bool = False,
) -> Tape:
    """Read a LOBSTER message file (and its order-book file) into a ``Tape``.

    ``start``/``end`` (seconds after midnight) keep the messages with ``start <= time < end``
    and their book rows; the whole file is validated regardless. ``in_ticks``: the files'
    prices are ticks already (a converted recording's), not dollars x 10000. Raises
    ``TapeError`` naming the file, line and column of the first problem found.
    """
    factor = 1 if in_ticks else _tick_factor(tick_size)
    table = _read_csv(messages, MESSAGE_COLUMNS)
    _check_messages(messages, table, factor, tick_size)
    kind = table[1].to_numpy()
    raw_price = table[4].to_numpy()
    tape_messages = np.empty(len(table), MESSAGE_DTYPE)
    for column, name in enumerate(MESSAGE_COLUMNS):
        tape_messages[name] = table[column].to_numpy()
    tape_messages["price"] = np.where(kind == Event.HALT, raw_price, raw_price // factor)

    book = None
    if orderbook is not None:
        book_table = _read_csv(orderbook, None)
        n, n_book = len(table), len(book_table)
        if n != n_book:
            longer = os.fspath(messages if n > n_book else orderbook)
            raise TapeError(
                f"{os.fspath(messages)} has {n} lines but {os.fspath(orderbook)} has {n_book}: "
                f"each message needs one book row (line {min(n, n_book) + 1} of {longer} has "
                "no counterpart)"
            )
        book = np.ascontiguousarray(book_table.to_numpy(np.int64, copy=True))
        _check_book(orderbook, book, factor, tick_size)
        _convert_book_prices(book, lambda prices: prices // factor)

    if start is not None or end is not None:
        times = tape_messages["time"]
        lo = 0 if start is None else int(np.searchsorted(times, start, "left"))
        hi = len(times) if end is None else int(np.searchsorted(times, end, "left"))
        if lo >= hi:
            raise ValueError(
                f"{os.fspath(messages)}: no messages with {start} <= time < {end}; the file "
                f"spans {times[0]} to {times[-1]} seconds after midnight"
            )
        tape_messages = tape_messages[lo:hi].copy()
        book = None if book is None else book[lo:hi].copy()
    return Tape(tape_messages, book, tick_size, os.fspath(messages))


def write_lobster(
    tape: Tape,
    messages_path: str | os.PathLike,
    orderbook_path: str | os.PathLike | None = None,
) -> None:
    """Write ``tape`` as LOBSTER CSV files (prices as dollars x 10000, no header); the inverse
    of ``load_lobster``, which reads the files back to the same arrays."""
    factor = _tick_factor(tape.tick_size)
    messages = tape.messages
    columns = {name: messages[name] for name in MESSAGE_COLUMNS}
    columns["price"] = np.where(
        messages["type"] == Event.HALT, messages["price"], messages["price"] * factor
    )
    pd.DataFrame(columns).to_csv(messages_path, header=False, index=False, lineterminator="\n")
    if orderbook_path is None:
        return
    if tape.book is None:
        raise ValueError(f"{tape.source} has no order book to write to {orderbook_path}")
    book = tape.book.copy()
    _convert_book_prices(book, lambda prices: prices * factor)
    pd.DataFrame(book).to_csv(orderbook_path, header=False, index=False, lineterminator="\n")


def _convert_book_prices(book: np.ndarray, convert: Callable[[np.ndarray], np.ndarray]) -> None:
    """Apply ``convert`` in place to the book's prices, except the empty levels' sentinels."""
    for first, empty_price in ((0, EMPTY_ASK), (2, EMPTY_BID)):
        prices = book[:, first::4]
        book[:, first::4] = np.where(prices == empty_price, prices, convert(prices))


# --------------------------------------------------------------------------------- reading
def _tick_factor(tick_size: float) -> int:
    """LOBSTER price units (dollars x 10000) per tick."""
    factor = round(tick_size * _LOBSTER_UNITS_PER_DOLLAR)
    if factor < 1 or not math.isclose(factor, tick_size * _LOBSTER_UNITS_PER_DOLLAR):
        raise ValueError(f"tick_size must be a positive multiple of $0.0001, got {tick_size}")
    return factor


def _book_columns(width: int) -> list[str]:
    """Names of an order-book file's columns: ask_price_1, ask_size_1, bid_price_1, ..."""
    return [
        f"{('ask', 'bid')[j % 4 // 2]}_{('price', 'size')[j % 2]}_{j // 4 + 1}"
        for j in range(width)
    ]


def _where(path: str | os.PathLike, row: int, column: int, names: Sequence[str]) -> str:
    return f"{os.fspath(path)}, line {row + 1}, column {column + 1} ({names[column]})"


def _read_csv(path: str | os.PathLike, names: Sequence[str] | None) -> pd.DataFrame:
    """Parse a message file (``names`` given: float time, then int64 columns) or an order-book
    file (``names`` None: int64, 4 columns per level), fast; on failure find the bad line."""
    dtype = {0: np.float64, **dict.fromkeys(range(1, 6), np.int64)} if names else np.int64
    try:
        table = pd.read_csv(
            path, header=None, dtype=dtype, skip_blank_lines=False, compression=None
        )
    except OSError as exc:
        raise TapeError(f"{os.fspath(path)}: cannot read the file ({exc})") from exc
    except pd.errors.EmptyDataError as exc:
        raise TapeError(f"{os.fspath(path)}: the file is empty") from exc
    except (ValueError, OverflowError) as exc:
        _locate_parse_error(path, names, exc)
    if names:  # the time column parses "nan" and "inf"; a short line leaves a NaN
        unreadable = table.shape[1] != len(names) or not np.isfinite(table[0].to_numpy()).all()
    else:
        unreadable = table.shape[1] % 4 != 0
    if unreadable:
        _locate_parse_error(path, names, None)
    return table


NOT_MESSAGES = (
    "; tradearena replays order-book messages (LOBSTER's message file: one order event a "
    "line), not trades or quotes: see `tradearena data`"
)
"""What a message file's error adds when its first line is no message."""


def _locate_parse_error(
    path: str | os.PathLike, names: Sequence[str] | None, cause: Exception | None
) -> NoReturn:
    """The slow path: scan the file line by line and raise a TapeError at the first field or
    line that does not parse."""
    expected = len(names) if names else None
    with open(path, encoding="utf-8", errors="replace") as lines:
        for row, line in enumerate(lines):
            fields = line.rstrip("\r\n").split(",")
            if not line.strip():
                raise TapeError(f"{os.fspath(path)}, line {row + 1}: empty line")
            if expected is None:
                expected = len(fields)
                if expected % 4:
                    raise TapeError(
                        f"{os.fspath(path)}, line 1: {expected} columns, but an order-book "
                        "file has 4 per level (ask price, ask size, bid price, bid size)"
                    )
            # a first line that is no message: most likely trades or another format
            hint = NOT_MESSAGES if names and row == 0 else ""
            if len(fields) != expected:
                raise TapeError(
                    f"{os.fspath(path)}, line {row + 1}: {len(fields)} columns, expected "
                    f"{expected}" + (f" ({', '.join(names)})" if names else " as on line 1") + hint
                )
            for column, text in enumerate(fields):
                problem = _field_problem(text, integer=column > 0 or not names)
                if problem:
                    where = _where(path, row, column, names or _book_columns(expected))
                    raise TapeError(f"{where}: {text.strip()!r} {problem}{hint}")
    detail = f" ({cause})" if cause else ""
    raise TapeError(f"{os.fspath(path)}: cannot parse the file{detail}") from cause


def _field_problem(text: str, integer: bool) -> str | None:
    """Why one CSV field is not a valid value, or None."""
    if integer and _INTEGER.fullmatch(text):
        return None if -(2**63) <= int(text) < 2**63 else "is out of range"
    if not _NUMBER.fullmatch(text):
        return "is not a number"
    if not integer:
        return None if math.isfinite(float(text)) else "is out of range"
    value = Decimal(text.strip())
    if value != value.to_integral_value():
        return "is not an integer"
    return None if -(2**63) <= value < 2**63 else "is out of range"


# ------------------------------------------------------------------------------ validation
_Check = tuple[int, np.ndarray, Callable[[int], str]]  # column, bad rows mask, problem at row


def _raise_first(path: str | os.PathLike, names: Sequence[str], checks: list[_Check]) -> None:
    """Raise a TapeError for the earliest (line, column) that fails a check, if any."""
    failures = [(int(np.argmax(bad)), column, why) for column, bad, why in checks if bad.any()]
    if failures:
        row, column, why = min(failures, key=lambda failure: failure[:2])
        raise TapeError(f"{_where(path, row, column, names)}: {why(row)}")


def _check_messages(
    path: str | os.PathLike, table: pd.DataFrame, factor: int, tick_size: float
) -> None:
    time, kind, _, size, price, direction = (table[c].to_numpy() for c in range(6))
    traded = (kind >= Event.NEW) & (kind < Event.HALT)
    visible = (kind >= Event.NEW) & (kind <= Event.EXECUTE)
    backwards = np.r_[False, time[1:] < time[:-1]]
    unknown = (kind < Event.NEW) | (kind > Event.HALT)
    sideless = (direction != 1) & (direction != -1)

    def earlier(i: int) -> str:
        return f"time {float(time[i])!r} is earlier than {float(time[i - 1])!r} on the line before"

    checks: list[_Check] = [
        (0, time < 0, lambda i: f"time {float(time[i])!r} is negative (seconds after midnight)"),
        (
            0,
            time > MAX_TIME,
            lambda i: (
                f"time {float(time[i])!r} is more than a week ({MAX_TIME:,.0f} s) after midnight"
            ),
        ),
        (0, backwards, earlier),
        (1, unknown, lambda i: f"unknown event type {kind[i]} (expected 1 to 7)"),
        (3, traded & (size <= 0), lambda i: f"size {size[i]} is not a positive number of shares"),
        (3, size > MAX_SIZE, lambda i: f"size {size[i]} is more than {MAX_SIZE:,}, {_MAX_WHY}"),
        (4, traded & (price <= 0), lambda i: f"price {price[i]} is not positive"),
        (4, visible & (price % factor != 0), lambda i: _off_tick(price[i], factor, tick_size)),
        (5, sideless, lambda i: f"direction {direction[i]} is not 1 (buy) or -1 (sell)"),
    ]
    _raise_first(path, MESSAGE_COLUMNS, checks)


def _check_book(path: str | os.PathLike, book: np.ndarray, factor: int, tick_size: float) -> None:
    checks: list[_Check] = []
    for column in range(0, book.shape[1], 2):
        price, size = book[:, column], book[:, column + 1]
        empty = price == (EMPTY_ASK if column % 4 == 0 else EMPTY_BID)
        checks += [
            (column, ~empty & (price <= 0), lambda i, p=price: f"price {p[i]} is not positive"),
            (
                column,
                ~empty & (price % factor != 0),
                lambda i, p=price: _off_tick(p[i], factor, tick_size),
            ),
            (column + 1, size < 0, lambda i, s=size: f"size {s[i]} is negative"),
            (
                column + 1,
                size > MAX_SIZE,
                lambda i, s=size: f"size {s[i]} is more than {MAX_SIZE:,}, {_MAX_WHY}",
            ),
            (
                column + 1,
                empty & (size != 0),
                lambda i, s=size: f"size {s[i]} at an empty level (dummy price) is not 0",
            ),
        ]
    _raise_first(path, _book_columns(book.shape[1]), checks)


def _off_tick(price: int, factor: int, tick_size: float) -> str:
    return f"price {price} is not a multiple of the tick ({factor} = tick_size {tick_size} x 10000)"
