"""A tape from what a user names: a `Tape`, a LOBSTER message file, a converted directory, or
a recording of one of `envs.data.convert.FORMATS` converted on the fly."""

from __future__ import annotations

import hashlib
import json
import os
import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tradearena.envs.data.convert import FORMATS, META, convert, load_converted
from tradearena.envs.data.files import FeedError
from tradearena.envs.data.tapes import EMPTY_ASK, EMPTY_BID, Event, Tape, TapeError, load_lobster

__all__ = [
    "CrossedBook",
    "TapeIdentity",
    "MIN_MINUTES",
    "MIN_TRADES",
    "PARTIAL_FIDELITY",
    "TAPE_FORMATS",
    "PartialTape",
    "ThinTape",
    "crossed",
    "load_tape",
    "missing_book",
    "orderbook_beside",
    "partial",
    "require_book",
    "thin",
    "without_orderbooks",
]

TAPE_FORMATS = ("lobster", *FORMATS)
"""What a tape's files can be: LOBSTER's (or a converted directory), or a recording format."""
MIN_TRADES, MIN_MINUTES = 20, 20
"""The least a tape needs to stand for a day: executions (types 4 and 5), and minutes from
its first message to its last (the realism facts' autocorrelations reach lag 20)."""


class ThinTape(TapeError, UserWarning):
    """A tape too short to stand for a day (`thin`): a warning where it is replayed or
    measured, an error where a market is fitted to it."""


def thin(tape: Tape) -> str | None:
    """Why ``tape`` is too short to stand for a day (fewer than `MIN_TRADES` executions or
    `MIN_MINUTES` minutes, counted), or None."""
    times, kinds = tape.messages["time"], tape.messages["type"]
    trades = int(np.count_nonzero((kinds == Event.EXECUTE) | (kinds == Event.EXECUTE_HIDDEN)))
    minutes = float(times[-1] - times[0]) / 60 if len(times) else 0.0
    if trades >= MIN_TRADES and minutes >= MIN_MINUTES:
        return None
    return (
        f"{tape.source}: {trades} trades over {minutes:.1f} minutes, too few to stand for a "
        f"day (a session replaying it trades little, its facts are noise): at least "
        f"{MIN_TRADES} trades over {MIN_MINUTES} minutes"
    )


class PartialTape(TapeError, UserWarning):
    """A LOBSTER message file without its orderbook file (`partial`): a warning where it is
    replayed, an error where the realism judges need the book (`require_book`)."""


PARTIAL_FIDELITY = 0.0267
"""The replay fidelity of LOBSTER's level-1 AMZN sample day (2012-06-21) from its messages
alone: the share of messages after which the replayed best bid and ask equal the orderbook
file's (`tradearena data check` of the pair; 1.0 with the orderbook file)."""


def partial(tape: Tape) -> str | None:
    """Why replaying ``tape`` drifts from the real book (a message file whose orderbook file
    is missing: nothing says what enters the touch from deeper levels), or None."""
    if tape.book is not None or tape.complete:
        return None
    beside = orderbook_beside(tape.source)
    where = f" (expected beside it: {beside})" if beside is not None else ""
    return (
        f"{tape.source}: replayed from its messages alone, without its orderbook "
        f"file{where}; the replayed book drifts from the real one (on LOBSTER's AMZN sample "
        f"day its best quotes matched the real ones after {PARTIAL_FIDELITY:.1%} of messages, "
        "against 100% with the orderbook file)"
    )


class CrossedBook(TapeError, UserWarning):
    """An orderbook file whose best bid is at or above its best ask on some rows (`crossed`):
    a book that matching never leaves, so those rows do not show a real book."""


def crossed(tape: Tape) -> str | None:
    """How many of ``tape``'s orderbook rows show a crossed or locked book (both sides quoted,
    the best bid at or above the best ask), and the first of them (its line in the orderbook
    file and its prices, dollars); None when none does, or without a book."""
    if tape.book is None:
        return None
    ask, bid = tape.book[:, 0], tape.book[:, 2]
    bad = np.flatnonzero((ask != EMPTY_ASK) & (bid != EMPTY_BID) & (bid >= ask))
    if not len(bad):
        return None
    first = bad[0]
    return (
        f"{tape.source}: {len(bad):,} of its {len(tape.book):,} orderbook rows are crossed or "
        f"locked (best bid at or above best ask), the first on line {first + 1} of the "
        f"orderbook file: bid {bid[first] * tape.tick_size:.10g} >= ask "
        f"{ask[first] * tape.tick_size:.10g} dollars"
    )


def load_tape(
    tape: Tape | str | os.PathLike,
    *,
    format: str = "lobster",
    orderbook: str | os.PathLike | None = None,
    tick_size: float = 0.01,
) -> Tape:
    """``tape`` as is when a `Tape`; else the tape of the path ``tape`` (a `ThinTape` warning
    when it is too short to stand for a day, `thin`; a `PartialTape` warning for a message
    file without its orderbook file, `partial`; a `CrossedBook` warning for a book crossed
    or locked, `crossed`, whose rows what reads the book leaves out):

    - ``format`` "lobster": a converted directory (``message.csv``, ``orderbook.csv``,
      ``meta.json``), or a message file with a ``meta.json`` beside it (prices in ticks, sizes
      in lots, the tick and lot from the meta); otherwise a LOBSTER message file (prices in
      dollars x 10000, ``tick_size`` dollars per tick) with ``orderbook`` or, when not given,
      the orderbook file beside it named as LOBSTER names it, when present;
    - a recording format ("binance", "tardis", "l3"): the recording (one file, or a directory
      of its files in name order) converted with `envs.data.convert.convert`'s defaults.
    """
    if isinstance(tape, Tape):
        return tape
    loaded = _read(Path(tape), format, orderbook, tick_size)
    if (reason := thin(loaded)) is not None:
        warnings.warn(ThinTape(reason), stacklevel=2)
    if (reason := partial(loaded)) is not None:
        warnings.warn(PartialTape(reason), stacklevel=2)
    if (reason := crossed(loaded)) is not None:
        warnings.warn(CrossedBook(reason), stacklevel=2)
    return loaded


def _read(path: Path, format: str, orderbook: str | os.PathLike | None, tick_size: float) -> Tape:
    if format != "lobster":
        if format not in FORMATS:
            raise FeedError(f"unknown tape format {format!r}; known: {list(TAPE_FORMATS)}")
        files = sorted(p for p in path.iterdir() if p.is_file()) if path.is_dir() else [path]
        return convert(format, files).tape
    _refuse_non_tape(path)
    if path.is_dir() or path.with_name(META).exists():
        return load_converted(path, orderbook)
    if orderbook is None:
        book = orderbook_beside(path)
        orderbook = book if book is not None and book.exists() else None
    return load_lobster(path, orderbook, tick_size=tick_size)


def _refuse_non_tape(path: Path) -> None:
    """Raise `TapeError` naming ``path`` when its name alone says it is not a LOBSTER tape
    (an experiment file, LOBSTER's orderbook file, a directory that was not converted):
    checked before any work, without reading the file."""
    if path.suffix == ".toml":
        raise TapeError(
            f"{path}: an experiment file (a market), not a tape: give a LOBSTER message file "
            "or a directory that `tradearena data` converted"
        )
    if re.search(r"_orderbook_\d+\.csv$", path.name) and path.is_file():
        messages = path.with_name(path.name.replace("_orderbook_", "_message_"))
        raise TapeError(
            f"{path}: LOBSTER's orderbook file (the book after each message), not its "
            f"messages: give the message file, {messages.name}, and the orderbook file is "
            "read from beside it"
        )
    if path.is_dir() and not (path / META).exists():
        messages = sorted(path.glob("*_message_*.csv"))
        hint = f" (here: {messages[0].name})" if messages else ""
        raise TapeError(
            f"{path}: a directory without {META} is not a converted tape; give a LOBSTER "
            f"message file{hint}, or a directory that `tradearena data` converted"
        )


def orderbook_beside(messages: str | os.PathLike) -> Path | None:
    """The orderbook file LOBSTER names beside the message file ``messages`` (its name with
    ``_message_`` replaced by ``_orderbook_``), whether or not it exists; None for a file not
    named as LOBSTER names them."""
    path = Path(messages)
    if "_message_" not in path.name:
        return None
    return path.with_name(path.name.replace("_message_", "_orderbook_"))


def require_book(tape: Tape, what: str) -> Tape:
    """``tape``, when its book after each message is known (an orderbook file, or messages
    that explain the whole book); else a TapeError saying that ``what`` needs the orderbook
    file, naming the file expected beside the message file."""
    if tape.book is not None or tape.complete:
        return tape
    raise missing_book(tape, what)


def missing_book(tape: Tape, what: str) -> TapeError:
    """The error that ``what`` needs ``tape``'s orderbook file, naming the file expected
    beside its message file."""
    beside = orderbook_beside(tape.source)
    where = f" beside it: {beside}" if beside is not None else ""
    return TapeError(f"{tape.source}: {what} need the tape's orderbook file{where}")


def without_orderbooks(names: Sequence[str]) -> list[str]:
    """``names`` (paths, as a user lists a LOBSTER day: ``X_message_N.csv X_orderbook_N.csv``)
    without each orderbook file whose message file is among them too: `load_tape` reads it
    from beside its message file."""
    beside = {os.path.abspath(b) for b in map(orderbook_beside, names) if b is not None}
    return [
        name
        for name in names
        if "_orderbook_" not in Path(name).name or os.path.abspath(name) not in beside
    ]


LOBSTER_NAME = re.compile(r"^(?P<ticker>[^_]+)_(?P<date>\d{4}-\d{2}-\d{2})_")
"""The start of a LOBSTER file's name: ``TICKER_YYYY-MM-DD_``."""


@dataclass(frozen=True)
class TapeIdentity:
    """A tape named by its content, as a learned market names the days it learned from: the
    ``digest`` of its messages (the first 16 hex digits of their SHA-256: the same for the
    same messages, wherever the file is and whatever it is called), the ``ticker`` and
    ``date`` its files give (LOBSTER's name; a converted directory's ``meta.json``) and the
    ``name`` of its file or directory, never its folder. An older file's identity has a
    name alone (``digest`` "")."""

    name: str
    digest: str = ""
    ticker: str = ""
    date: str = ""

    @classmethod
    def of(cls, tape: Tape) -> TapeIdentity:
        """The identity of ``tape`` (read from ``tape.source``'s name and folder)."""
        source = Path(tape.source)
        converted = source.with_name(META)
        named = LOBSTER_NAME.match(source.name)
        if named is not None:
            ticker, date = named["ticker"], named["date"]
        elif converted.is_file():
            meta = json.loads(converted.read_text())
            ticker, date = str(meta.get("symbol", "")), str(meta.get("date", ""))
        else:
            ticker = date = ""
        name = source.parent.name if converted.is_file() else source.name
        digest = hashlib.sha256(np.ascontiguousarray(tape.messages).tobytes()).hexdigest()
        return cls(name, digest[:16], ticker, date)

    @classmethod
    def read(cls, value: str | Mapping[str, str]) -> TapeIdentity:
        """An identity as a file stores it: a mapping of its fields, or (an older file's) a
        path, of which the name alone is kept."""
        if isinstance(value, str):
            return cls(Path(value).name)
        return cls(
            **{key: str(value[key]) for key in ("name", "digest", "ticker", "date") if key in value}
        )

    def same(self, other: TapeIdentity) -> bool:
        """Whether ``other`` is this tape: the same messages when both digests are known,
        else the same file name."""
        if self.digest and other.digest:
            return self.digest == other.digest
        return self.name == other.name

    def __str__(self) -> str:
        day = " ".join(part for part in (self.ticker, self.date) if part)
        described = f"{day}, {self.name}" if day else self.name
        return f"{described} (messages {self.digest})" if self.digest else described
