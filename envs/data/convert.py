"""Exchange recordings converted to tapes: `convert` reads a recording (`FORMATS`) and builds
the project's tape from it (`envs.data.builder`); `write_converted` writes it as LOBSTER-style
files with a ``meta.json``; `load_converted` reads such a directory back.

A converted directory holds ``message.csv`` and ``orderbook.csv`` in LOBSTER's columns (no
header): time as seconds after midnight UTC of the recording's first day (9 decimals, past
86,400 on later days), prices in integer ticks, sizes in integer lots; orderbook row i is the
book after message i, ``levels`` levels, LOBSTER's dummy prices for empty levels. Its
``meta.json`` names the format, the symbol, ``tick_size`` and ``lot_size`` (decimal strings),
the levels, the band, and what the conversion counted (``counts``: messages read, dropped,
gaps, out-of-band quotes, crossings; ``gaps``: where). The messages explain the whole book
from an empty one (the first snapshot is written as new orders), so the tape is `complete`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import numpy as np

from tradearena.envs.data import binance, builder, l3, tardis
from tradearena.envs.data.feed import Feed
from tradearena.envs.data.files import FeedError
from tradearena.envs.data.tapes import MESSAGE_DTYPE, Tape, TapeError, load_lobster
from tradearena.envs.data.text import format_csv
from tradearena.envs.errors import into, replacing, together

__all__ = [
    "DEFAULT_BAND",
    "FORMATS",
    "MAX_BOOK_LEVELS",
    "META",
    "Conversion",
    "convert",
    "load_converted",
    "write_converted",
]

FORMATS: dict[str, Callable[..., Feed]] = {
    "binance": binance.read,
    "tardis": tardis.read,
    "l3": l3.read,
}
"""Recording formats -> their reader: (paths, tick, lot) -> `Feed`."""
DEFAULT_BAND = 0.5
"""Quotes more than this fraction away from the last trade price are dropped (see
`envs.data.builder`): wide enough for any real quote of a day, narrow enough for price-0 and
1,000x quotes."""
MAX_BOOK_LEVELS = 100
"""The most levels of the orderbook rows a conversion writes (``levels``): ten times LOBSTER's
deepest sample files; a row holds four numbers a level for every message."""
META = "meta.json"
MESSAGES, ORDERBOOK = "message.csv", "orderbook.csv"
_NS_PER_DAY = 86_400 * 10**9


@dataclass(frozen=True)
class Conversion:
    """A converted recording: its ``tape`` and its ``meta`` (what ``meta.json`` holds)."""

    tape: Tape
    meta: dict[str, Any]


def convert(
    format: str,
    inputs: Sequence[str | os.PathLike],
    *,
    levels: int = 10,
    tick: Decimal | str | None = None,
    lot: Decimal | str | None = None,
    band: float = DEFAULT_BAND,
) -> Conversion:
    """Read the recording ``inputs`` (files of one ``format`` of `FORMATS`, gzip or plain) and
    build its tape, with orderbook rows of ``levels`` levels. ``tick`` / ``lot`` (decimal,
    in the feed's price and quantity units): the instrument's steps, inferred as the largest
    step dividing every price (quantity) when not given. ``band``: the fraction around the
    last trade price beyond which new quotes are dropped (0: none). Raises `FeedError`
    (a `envs.errors.UserError`) naming the file and line of a bad input."""
    if format not in FORMATS:
        raise FeedError(f"unknown format {format!r}; known formats: {sorted(FORMATS)}")
    if not 1 <= levels <= MAX_BOOK_LEVELS:
        raise FeedError(f"levels must be in [1, {MAX_BOOK_LEVELS}], got {levels}")
    if not band >= 0:
        raise FeedError(f"band must be >= 0 (a fraction of the price), got {band}")
    feed = FORMATS[format](inputs, _step(tick, "tick"), _step(lot, "lot"))
    events = feed.events
    if not len(events["kind"]):
        raise FeedError(f"{', '.join(feed.inputs)}: no book events to convert")
    columns = [events[name] for name in ("kind", "side", "price", "qty", "order", "time")]
    built, rows, counts = builder.build(
        *columns, levels, band, feed.reference if band else 0, feed.by_order
    )
    if not len(built["type"]):
        raise FeedError(f"{', '.join(feed.inputs)}: the recording changes no book level")
    midnight = int(built["time"][0]) // _NS_PER_DAY * _NS_PER_DAY
    messages = np.empty(len(built["type"]), MESSAGE_DTYPE)
    messages["time"] = (built["time"] - midnight) / 1e9
    for name in ("type", "order_id", "size", "price", "direction"):
        messages[name] = built[name]
    meta = {
        "format": feed.format,
        "symbol": feed.symbol,
        "inputs": [os.path.basename(p) for p in feed.inputs],
        "date": str(np.datetime64(midnight, "ns").astype("datetime64[D]")),
        "tick_size": str(feed.tick_size),
        "lot_size": str(feed.lot_size),
        "levels": levels,
        "band": band,
        "by_order": feed.by_order,
        "messages": len(messages),
        "opening_price": _opening_price(rows),
        "counts": feed.counts | counts,
        "gaps": feed.gaps,
    }
    return Conversion(_tape(messages, rows, meta, source=", ".join(feed.inputs)), meta)


def write_converted(conversion: Conversion, out: str | os.PathLike) -> Path:
    """Write ``message.csv``, ``orderbook.csv`` and ``meta.json`` into the directory ``out``
    (made if needed), each under a temporary name first, so that a failed write (a full
    disk: an `envs.errors.OutputError` naming the file) leaves none of them (nor the
    directory it made); the message file's path."""
    directory = Path(out)
    tape = conversion.tape
    m = tape.messages
    ints = np.stack([m[name].astype(np.int64) for name in MESSAGE_DTYPE.names[1:]], axis=1)
    contents = {
        MESSAGES: format_csv(np.ascontiguousarray(m["time"]), 9, ints),
        ORDERBOOK: format_csv(None, 0, tape.book_rows),
        META: (json.dumps(conversion.meta, indent=2) + "\n").encode(),
    }
    with into(directory), together():
        for name, content in contents.items():
            with replacing(directory / name) as temporary:
                temporary.write_bytes(content)
    return directory / MESSAGES


def load_converted(path: str | os.PathLike, orderbook: str | os.PathLike | None = None) -> Tape:
    """The tape of a converted directory (or of its message file, ``meta.json`` beside it);
    its orderbook file is ``orderbook`` or ``orderbook.csv`` beside it."""
    path = Path(path)
    messages = path / MESSAGES if path.is_dir() else path
    meta = read_meta(messages.with_name(META))
    book = Path(orderbook) if orderbook is not None else messages.with_name(ORDERBOOK)
    tape = load_lobster(messages, book, tick_size=float(meta["tick_size"]), in_ticks=True)
    return _tape(tape.messages, tape.book, meta, source=os.fspath(messages))


def read_meta(path: str | os.PathLike) -> dict[str, Any]:
    """A converted directory's ``meta.json``, checked for what a tape needs."""
    try:
        meta = json.loads(Path(path).read_text())
    except OSError as exc:
        raise TapeError(f"{os.fspath(path)}: cannot read the file ({exc.strerror})") from exc
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:  # or too deep
        raise TapeError(f"{os.fspath(path)}: not JSON ({exc})") from exc
    for key in ("tick_size", "lot_size"):
        value = meta.get(key) if isinstance(meta, Mapping) else None
        try:
            if Decimal(value) <= 0:
                raise InvalidOperation
        except (TypeError, InvalidOperation):
            raise TapeError(
                f"{os.fspath(path)}: {key} must be a positive decimal string, got {value!r}"
            ) from None
    return meta


def _tape(messages: np.ndarray, rows: np.ndarray, meta: Mapping[str, Any], source: str) -> Tape:
    return Tape(
        messages,
        rows,
        tick_size=float(meta["tick_size"]),
        source=source,
        complete=True,
        lot_size=float(meta["lot_size"]),
        opening_price=meta.get("opening_price"),
    )


def _opening_price(rows: np.ndarray) -> int | None:
    """The mid (ticks, rounded down) of the first book row that shows both sides."""
    both = np.flatnonzero((rows[:, 1] > 0) & (rows[:, 3] > 0))
    if not len(both):
        return None
    ask, bid = int(rows[both[0], 0]), int(rows[both[0], 2])
    return (ask + bid) // 2


def _step(value: Decimal | str | None, name: str) -> Decimal | None:
    if value is None:
        return None
    try:
        step = Decimal(value)
    except InvalidOperation:
        raise FeedError(f"{name} must be a decimal number, got {value!r}") from None
    if not step.is_finite() or step <= 0:
        raise FeedError(f"{name} must be > 0, got {value}")
    return step.normalize()
