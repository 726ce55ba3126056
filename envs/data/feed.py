"""What the readers share: reading a recording's files, exact decimals to ticks and lots, and
the `Feed` a reader hands to `envs.data.convert` (the book events of `envs.data.builder`, in
the order they are carried out, with what the reader found).

Prices and quantities stay exact decimals (`Decimals`: an integer mantissa and a count of
decimals per value) until they are divided by the tick and the lot (`Decimals.steps`); a
value that is not a whole number of them is never rounded.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, NamedTuple

import numpy as np

from envs.data import builder, text
from envs.data.text import ScanError
from envs.errors import UserError

__all__ = [
    "MAX_LOTS",
    "Decimals",
    "Feed",
    "FeedError",
    "Source",
    "Steps",
    "event_columns",
    "read_sources",
    "to_steps",
]

MAX_LOTS = 2**31 - 1
"""The most lots one order of the book holds."""


class FeedError(UserError):
    """A recording that cannot be read; the message names the file, the line and what is
    wrong."""


@dataclass(frozen=True, eq=False)
class Source:
    """One file of a recording: its ``path``, its text (``data``, decompressed) and the byte
    where its rows start (``start``, after a CSV header; its line is ``first_line``)."""

    path: str
    data: bytes
    start: int = 0
    first_line: int = 1

    def where(self, row: int, column: str | None = None) -> str:
        """'path, line N[, column NAME]' of ``row`` (0-based, counted from ``start``)."""
        place = f"{self.path}, line {self.first_line + row}"
        return f"{place}, column {column}" if column else place

    def error(self, error: ScanError, columns: Sequence[str] = ()) -> FeedError:
        name = columns[error.column] if 0 <= error.column < len(columns) else None
        return FeedError(f"{self.where(error.row, name)}: {error.reason}")


def read_sources(paths: Sequence[str | os.PathLike], header: bool = False) -> list[Source]:
    """The files of a recording, gzip (by its magic bytes) or plain; with ``header``, a CSV's
    first line is its header (``Source.start`` after it). An unreadable, truncated or empty
    file is a `FeedError` naming it."""
    if not paths:
        raise FeedError("no input files given")
    sources = []
    for path in map(os.fspath, paths):
        try:
            with open(path, "rb") as file:
                data = file.read()
        except OSError as exc:
            raise FeedError(f"{path}: cannot read the file ({exc.strerror or exc})") from exc
        if data[:2] == b"\x1f\x8b":
            data = _gunzip(data, path)
        if not data.strip():
            raise FeedError(f"{path}: the recording is empty")
        start = data.find(b"\n") + 1 if header else 0
        if header and start == 0:
            start = len(data)
        sources.append(Source(path, data, start, 2 if header else 1))
    return sources


@dataclass(frozen=True)
class Table:
    """One kind of CSV file of a recording: ``columns`` it must have, name -> a
    `envs.data.text` CSV kind, or (CSV_ENUM, allowed words); other columns are skipped."""

    name: str
    columns: dict[str, int | tuple[int, tuple[bytes, ...]]]

    def matches(self, header: list[str]) -> bool:
        return set(self.columns) <= set(header)


def scan_tables(
    paths: Sequence[str | os.PathLike], tables: Sequence[Table]
) -> tuple[list[Source], dict[str, list[tuple[Source, dict[str, Any]]]]]:
    """The files of a CSV recording, and each by the first of ``tables`` its header matches:
    table name -> [(its source, column name -> what `envs.data.text.scan_csv` read)], in the
    order given. A file that matches none, a row that does not scan, or no file of the first
    table (the book's) is a `FeedError`."""
    out: dict[str, list] = {table.name: [] for table in tables}
    sources = read_sources(paths, header=True)
    for source in sources:
        header = source.data[: source.start].decode("utf-8", "replace").strip().split(",")
        table = next((t for t in tables if t.matches(header)), None)
        if table is None:
            expected = "; or ".join(",".join(t.columns) for t in tables)
            raise FeedError(
                f"{source.path}, line 1: the header {','.join(header)!r} lacks the columns of "
                f"any file of this format ({expected})"
            )
        kinds, enums = [], []
        for name in header:
            spec = table.columns.get(name, text.CSV_SKIP)
            kind, words = spec if isinstance(spec, tuple) else (spec, None)
            kinds.append(kind)
            enums.append(list(words) if words else None)
        try:
            scanned = text.scan_csv(source.data, source.start, kinds, enums)
        except text.ScanError as error:
            raise source.error(error, header) from None
        columns = {name: scanned[header.index(name)] for name in table.columns}
        out[table.name].append((source, columns))
    if not out[tables[0].name]:
        raise FeedError(f"{', '.join(s.path for s in sources)}: no {tables[0].name} file")
    return sources, out


def table_decimals(
    files: Sequence[tuple[Source, dict[str, Any]]], column: str, sources: Sequence[Source]
) -> Decimals:
    """Column ``column`` (decimal) of ``files`` as one `Decimals`, each value knowing its
    source (its index in ``sources``) and row."""
    parts = []
    for source, columns in files:
        mantissa, decimals = columns[column]
        n = len(mantissa)
        index = np.full(n, sources.index(source))
        parts.append(Decimals(mantissa, decimals, index, np.arange(n)))
    return Decimals.join(parts)


def table_column(files: Sequence[tuple[Source, dict[str, Any]]], column: str) -> np.ndarray:
    """Column ``column`` of ``files`` joined in order."""
    return np.concatenate([columns[column] for _, columns in files])


def _gunzip(data: bytes, path: str) -> bytes:
    """The text of gzip ``data`` (every member of it, each checked against its CRC)."""
    parts = []
    while data:
        unzip = zlib.decompressobj(wbits=31)
        try:
            parts.append(unzip.decompress(data))
        except zlib.error as exc:
            raise FeedError(f"{path}: not a readable gzip file ({exc})") from exc
        if not unzip.eof:
            raise FeedError(
                f"{path}: truncated gzip (the compressed data ends before its end marker)"
            )
        data = unzip.unused_data
    return b"".join(parts)


@dataclass
class Decimals:
    """Decimal values read exactly (value = mantissa / 10**decimals), with the file and the
    line (0-based row of its `Source`) each came from, for errors."""

    mantissa: np.ndarray  # int64
    decimals: np.ndarray  # int8
    source: np.ndarray  # index into the sources
    row: np.ndarray

    def __len__(self) -> int:
        return len(self.mantissa)

    def take(self, index: np.ndarray) -> Decimals:
        return Decimals(*(a[index] for a in (self.mantissa, self.decimals, self.source, self.row)))

    @staticmethod
    def join(parts: Sequence[Decimals]) -> Decimals:
        if not parts:
            empty = np.zeros(0, np.int64)
            return Decimals(empty, empty.astype(np.int8), empty, empty)
        return Decimals(
            *(np.concatenate([getattr(p, f) for p in parts]) for f in Decimals.__annotations__)
        )

    def text(self, i: int) -> str:
        """Value ``i`` as the decimal it was written as (trailing zeros dropped)."""
        return str(Decimal(int(self.mantissa[i])).scaleb(-int(self.decimals[i])))

    def steps(
        self,
        step: Decimal | None,
        what: str,
        unit: str,
        sources: Sequence[Source],
        column: str | None = None,
    ) -> tuple[np.ndarray, Decimal, np.ndarray]:
        """(values in whole steps (int64), the step, mask of values off the step's grid) with
        the step given (``step``) or, when None, inferred as the largest step dividing every
        value (the gcd). A value too large for int64 at the finest scale is a `FeedError`
        naming ``what``, its file and line."""
        scale = int(self.decimals.max(initial=0))
        if step is not None:
            scale = max(scale, -int(step.as_tuple().exponent))
        power = (scale - self.decimals).astype(np.int64)
        factor = np.power(10, power, dtype=np.int64)
        too_large = self.mantissa > np.iinfo(np.int64).max // factor
        if too_large.any():
            i = int(np.argmax(too_large))
            raise FeedError(
                f"{self._where(i, sources, column)}: {what} {self.text(i)} has too many digits "
                f"next to the finest {what} of the recording (1e-{scale})"
            )
        scaled = self.mantissa * factor
        if step is None:
            units = int(np.gcd.reduce(scaled)) if len(scaled) else 0
            units = units or 10**scale
            step = Decimal(units).scaleb(-scale).normalize()
        else:
            units = int(step.scaleb(scale))
        off = scaled % units != 0
        return scaled // units, step, off

    def _where(self, i: int, sources: Sequence[Source], column: str | None) -> str:
        return sources[int(self.source[i])].where(int(self.row[i]), column)

    def fail_at(
        self, mask: np.ndarray, sources: Sequence[Source], message: str, column: str | None = None
    ) -> None:
        """Raise a `FeedError` at the first value where ``mask`` holds: '<where>: <message>'
        with {value} replaced by its text."""
        if mask.any():
            i = int(np.argmax(mask))
            where = self._where(i, sources, column)
            raise FeedError(f"{where}: {message.format(value=self.text(i))}")


class Steps(NamedTuple):
    """A recording's prices and quantities in whole steps: ``price`` (ticks) and ``qty``
    (lots), int64; the ``tick`` and ``lot``; ``off_grid``, the prices not on the tick's grid
    (quotes a reader drops: no order of the instrument can rest there)."""

    price: np.ndarray
    qty: np.ndarray
    tick: Decimal
    lot: Decimal
    off_grid: np.ndarray


def to_steps(
    prices: Decimals,
    quantities: Decimals,
    traded: np.ndarray,
    tick: Decimal | None,
    lot: Decimal | None,
    sources: Sequence[Source],
    columns: tuple[str | None, str | None] = (None, None),
) -> Steps:
    """``prices`` and ``quantities`` in ticks and lots (given, or inferred: see
    `Decimals.steps`). A quantity that is not a whole number of lots or more than an order of
    the book holds (`MAX_LOTS`), or a trade price (where ``traded`` holds) off the tick's grid,
    is a `FeedError` naming its file, line and column (``columns``: of the prices, of the
    quantities)."""
    price_column, qty_column = columns
    price, tick, off_grid = prices.steps(tick, "price", "tick", sources, price_column)
    qty, lot, off_lot = quantities.steps(lot, "quantity", "lot", sources, qty_column)
    quantities.fail_at(
        off_lot, sources, f"quantity {{value}} is not a multiple of the lot {lot}", qty_column
    )
    quantities.fail_at(
        qty > MAX_LOTS,
        sources,
        f"quantity {{value}} is more than {MAX_LOTS:,} lots of {lot}, the most one order of "
        "the book holds (give a larger --lot)",
        qty_column,
    )
    prices.fail_at(
        traded & off_grid,
        sources,
        f"trade price {{value}} is not a multiple of the tick {tick}",
        price_column,
    )
    return Steps(price, qty, tick, lot, off_grid)


def event_columns(n: int) -> dict[str, np.ndarray]:
    """Empty event columns of `envs.data.builder.build` for ``n`` events."""
    return {
        "kind": np.zeros(n, np.int8),
        "side": np.zeros(n, np.int8),
        "price": np.zeros(n, np.int64),
        "qty": np.zeros(n, np.int64),
        "order": np.zeros(n, np.int64),
        "time": np.zeros(n, np.int64),
    }


def band_reference(events: dict[str, np.ndarray]) -> int:
    """The band's price before the first trade (ticks): the first trade's price, else the
    median price of the quotes (0 without any)."""
    kind = events["kind"]
    trades = np.flatnonzero(kind == builder.TRADE)
    if len(trades):
        return int(events["price"][trades[0]])
    quotes = (kind != builder.SNAPSHOT_BEGIN) & (kind != builder.SNAPSHOT_END)
    quotes &= events["qty"] > 0
    prices = events["price"][quotes]
    return int(np.median(prices)) if len(prices) else 0


@dataclass
class Feed:
    """A recording read for the builder: ``events`` (`event_columns`, in order; times in ns
    since the epoch, never decreasing), by order (L3) or by level (L2), the instrument's
    ``tick_size`` and ``lot_size``, what the reader ``counts`` (messages read, dropped, gaps)
    and where the gaps are (``gaps``: 'file, line N: ...')."""

    format: str
    inputs: tuple[str, ...]
    symbol: str | None
    tick_size: Decimal
    lot_size: Decimal
    events: dict[str, np.ndarray]
    by_order: bool
    counts: dict[str, int] = field(default_factory=dict)
    gaps: list[str] = field(default_factory=list)

    @property
    def reference(self) -> int:
        return band_reference(self.events)


def receive_order(times: np.ndarray) -> np.ndarray:
    """Times made never to decrease: each is at least every time before it (a message moved
    ahead of one received later takes that one's time, never an earlier one)."""
    return np.maximum.accumulate(times) if len(times) else times


def interleave(book_keys: np.ndarray, trade_keys: np.ndarray, first: int = 0) -> np.ndarray:
    """The order (indexes into book items then trades) in which a feed is carried out: the
    book items (snapshots, updates) in their own order, each trade before the first book item
    whose exchange time (``book_keys``, made never to decrease) is at least its own
    (``trade_keys``), which already shows it, and never before book item ``first``."""
    keys = np.maximum.accumulate(book_keys) if len(book_keys) else book_keys
    position = np.maximum(np.searchsorted(keys, trade_keys, "left"), first)
    slots = np.concatenate([2 * np.arange(len(book_keys)) + 1, 2 * position])
    return np.argsort(slots, kind="stable")


def level_events(
    start: np.ndarray,
    stop: np.ndarray,
    snapshot: np.ndarray,
    trade: np.ndarray,
    time: np.ndarray,
    side: np.ndarray,
    price: np.ndarray,
    qty: np.ndarray,
    drop: np.ndarray,
) -> dict[str, np.ndarray]:
    """The builder's events of L2 items in the order they are carried out: item i covers the
    level rows [start[i], stop[i]) (side, price ticks, qty lots; rows where ``drop`` holds are
    left out) at ``time[i]`` (ns); a ``snapshot`` item's rows go between SNAPSHOT_BEGIN and
    SNAPSHOT_END, a ``trade`` item's one row is a TRADE, any other item's rows are LEVEL
    events, its deletions (qty 0) first."""
    pad = (side, price, qty, drop)
    side, price, qty, drop = (np.append(a, a.dtype.type(0)) for a in pad)
    width = stop - start + 2 * snapshot
    item = np.repeat(np.arange(len(start)), width)
    offset = np.arange(len(item)) - np.repeat(np.cumsum(width) - width, width)
    begin = snapshot[item] & (offset == 0)
    end = snapshot[item] & (offset == width[item] - 1)
    level = np.where(begin | end, len(side) - 1, start[item] + offset - snapshot[item])
    rank = np.where(begin, 0, np.where(end, 3, np.where(qty[level] == 0, 1, 2)))
    order = np.argsort(item * 4 + rank, kind="stable")
    order = order[(begin | end | ~drop[level])[order]]
    item, level, begin, end = item[order], level[order], begin[order], end[order]
    events = event_columns(len(order))
    kind = np.where(trade[item], builder.TRADE, builder.LEVEL)
    events["kind"][:] = np.where(
        begin, builder.SNAPSHOT_BEGIN, np.where(end, builder.SNAPSHOT_END, kind)
    )
    events["side"][:] = side[level]
    events["price"][:] = price[level]
    events["qty"][:] = qty[level]
    events["time"][:] = time[item]
    return events
