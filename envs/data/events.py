"""A tape's order flow as typed events with the book state each one met: what a learned flow
is estimated from (`envs.simulator.learned_flow.estimate`), what the responsive replay's
answer is estimated from (`envs.simulator.response_estimate`) and what the judges read
(`evaluation.market.response`).

Each visible message of a `Tape` with orderbook rows (LOBSTER types 1-4) becomes one event on
the *side* of the book it acts on (+1 bid, -1 ask: the resting order's side, so a sell market
order acts on the bid side) of one of six kinds (`EventKind`), with an *offset* in ticks from that
side's best price before it (its distance inside the spread for ``LIMIT_INSIDE``, behind the
touch for the ``*_BEHIND`` kinds, else 0) and a *size* in lots. Consecutive executions at one
time stamp on one side are one market order (a sweep), its size their sum. Hidden executions,
crosses and halts (types 5-7) change no visible queue and are left out; a limit order that
would cross the opposite best is left out too (the tape shows it only as executions).

The state before an event is read from the book row before it: the spread (ticks) and the
queues at the touch on the event's own side and the opposite one (lots), so that bid and ask
share one description ("mirrored"); the first message, with no row before it, is left out.
`StatePath` is the same state as a step function of time on both sides, for the time the
model is exposed to each state.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum

import numpy as np

from tradearena.envs.data.tapes import EMPTY_ASK, EMPTY_BID, Event, Tape
from tradearena.envs.errors import UserError

__all__ = [
    "N_EVENT_KINDS",
    "EventKind",
    "Events",
    "EventsError",
    "Revealed",
    "StatePath",
    "events",
    "joined",
    "market_events",
    "market_order_starts",
    "revealed",
    "state_path",
    "window",
    "window_events",
]


class EventKind(IntEnum):
    """An event's kind, on the side of the book it acts on."""

    LIMIT_TOUCH = 0  # a limit order joining the best queue
    LIMIT_INSIDE = 1  # a limit order inside the spread: a new best price
    LIMIT_BEHIND = 2  # a limit order ``offset`` ticks behind the best
    CANCEL_TOUCH = 3  # shares cancelled at the best
    CANCEL_BEHIND = 4  # shares cancelled ``offset`` ticks behind the best
    MARKET = 5  # shares taken from the best queue (and beyond) by a market order


N_EVENT_KINDS = len(EventKind)
"""How many kinds of event there are."""


@dataclass(frozen=True)
class Events:
    """Typed events, each array of shape (n,), in time order.

    time: seconds after midnight; kind: `EventKind` (int8); side: +1 bid / -1 ask (int8);
    offset: ticks (int64); size: lots (int64); spread: ticks before the event (int64; 0 when
    a side was empty); own, other: lots at the best of the event's side and of the opposite
    side before it (int64); emptied: whether the event moved its side's best price away
    (bool: a cancel or a market order that emptied the best level).
    """

    time: np.ndarray
    kind: np.ndarray
    side: np.ndarray
    offset: np.ndarray
    size: np.ndarray
    spread: np.ndarray
    own: np.ndarray
    other: np.ndarray
    emptied: np.ndarray

    def __len__(self) -> int:
        return len(self.time)

    def take(self, rows: np.ndarray | slice) -> Events:
        """The events selected by a boolean mask, index array or slice."""
        return Events(*(getattr(self, f)[rows] for f in self.__dataclass_fields__))


@dataclass(frozen=True)
class StatePath:
    """The book's state as a step function: on [time[i], time[i + 1]) (the last until
    ``end``) the spread is ``spread[i]`` ticks and the best queues ``bid[i]`` and ``ask[i]``
    lots; arrays of shape (n,). end: the last second covered."""

    time: np.ndarray
    spread: np.ndarray
    bid: np.ndarray
    ask: np.ndarray
    end: float

    @property
    def durations(self) -> np.ndarray:
        """Seconds spent in each state, shape (n,)."""
        return np.diff(np.append(self.time, self.end))


@dataclass(frozen=True)
class Revealed:
    """Levels behind the best, as the tape shows them: ``gap`` (ticks behind the level in
    front), ``size`` (lots), ``spread`` (ticks, the book's spread then; inf with a side
    empty) and ``time`` (seconds after midnight), shape (n,) each. On a level-1 tape, the
    level that becomes the best when a best queue empties (the spread before it did); on a
    deeper tape, its deepest level."""

    gap: np.ndarray
    size: np.ndarray
    spread: np.ndarray
    time: np.ndarray

    def take(self, rows: np.ndarray | slice) -> Revealed:
        """The levels selected by a boolean mask, index array or slice."""
        return Revealed(*(getattr(self, f)[rows] for f in self.__dataclass_fields__))


def joined(parts: Sequence[Events] | Sequence[Revealed]):
    """Several days' `Events` (or `Revealed`) one after another."""
    kind = type(parts[0])
    return kind(
        *(np.concatenate([getattr(p, f) for p in parts]) for f in kind.__dataclass_fields__)
    )


class EventsError(UserError):
    """A tape that holds no events to learn from."""


def _touch(tape: Tape) -> tuple[np.ndarray, ...]:
    """(best ask, ask lots, best bid, bid lots) per book row, int64 (n,); empty sides have
    size 0."""
    if tape.book is None:
        raise EventsError(
            f"{tape.source}: learning order flow needs the tape's orderbook rows (LOBSTER's "
            "orderbook file beside the message file, or a converted recording)"
        )
    book = tape.book_rows
    return book[:, 0], book[:, 1], book[:, 2], book[:, 3]


def _before(column: np.ndarray, first: int) -> np.ndarray:
    """Each row's value in the row before (``first`` for row 0)."""
    return np.concatenate(([first], column[:-1]))


def market_order_starts(messages: np.ndarray) -> np.ndarray:
    """Which of ``messages`` (a tape's, MESSAGE_DTYPE (n,)) start a market order, bool (n,):
    visible executions, those after the first of a sweep (executions at one time stamp on
    one side, one after another) left out."""
    execute = messages["type"] == Event.EXECUTE
    time, side = messages["time"], messages["direction"]
    joins = execute & np.concatenate(
        ([False], execute[:-1] & (time[1:] == time[:-1]) & (side[1:] == side[:-1]))
    )
    return execute & ~joins


def events(tape: Tape) -> Events:
    """The tape's visible messages as `Events` (see the module docstring)."""
    after_ask, _, after_bid, _ = _touch(tape)
    ask, ask_size, bid, bid_size = (_before(c, 0) for c in _touch(tape))
    m = tape.messages
    kind, side = m["type"].astype(np.int64), m["direction"].astype(np.int64)
    price, size, time = m["price"], m["size"].astype(np.int64), m["time"]
    quoted = _before(tape.quoted, False)
    best = np.where(side > 0, bid, ask)
    opposite = np.where(side > 0, ask, bid)
    offset = side * (best - price)  # < 0 inside the spread, 0 at the touch, > 0 behind
    own = np.where(side > 0, bid_size, ask_size)
    other = np.where(side > 0, ask_size, bid_size)
    has_own = own > 0

    limit = (kind == Event.NEW) & has_own & (side * (opposite - price) > 0)
    cancel = ((kind == Event.CANCEL) | (kind == Event.DELETE)) & has_own & (offset >= 0)
    execute = kind == Event.EXECUTE
    lead = market_order_starts(m)
    sweep = np.cumsum(lead) - 1  # each execution's market order
    swept = np.bincount(sweep[execute], weights=size[execute], minlength=int(lead.sum()))
    # the book after a message, or after a sweep's last execution for its lead
    row = np.arange(len(m))
    last = np.zeros(int(lead.sum()), np.int64)
    np.maximum.at(last, sweep[execute], row[execute])
    row[lead] = last
    moved = np.where(side > 0, after_bid[row], after_ask[row]) != best

    out_kind = np.full(len(m), -1, np.int64)
    out_kind[limit & (offset == 0)] = EventKind.LIMIT_TOUCH
    out_kind[limit & (offset < 0)] = EventKind.LIMIT_INSIDE
    out_kind[limit & (offset > 0)] = EventKind.LIMIT_BEHIND
    out_kind[cancel & (offset == 0)] = EventKind.CANCEL_TOUCH
    out_kind[cancel & (offset > 0)] = EventKind.CANCEL_BEHIND
    out_kind[lead] = EventKind.MARKET
    keep = out_kind >= 0
    out_size = size.copy()
    out_size[lead] = swept.astype(np.int64)
    out_offset = np.where(out_kind == EventKind.MARKET, 0, np.abs(offset))
    return Events(
        time=time[keep].copy(),
        kind=out_kind[keep].astype(np.int8),
        side=side[keep].astype(np.int8),
        offset=out_offset[keep],
        size=out_size[keep],
        spread=np.where(quoted, ask - bid, 0)[keep],
        own=own[keep],
        other=other[keep],
        emptied=(moved & ((out_kind == EventKind.CANCEL_TOUCH) | (out_kind == EventKind.MARKET)))[
            keep
        ],
    )


def market_events(tape: Tape, first: float, last: float) -> Events:
    """The tape's market orders (`EventKind.MARKET` events) at ``first <= time < last``
    (seconds after midnight) met with both sides quoted."""
    every = events(tape)
    chosen = (every.kind == EventKind.MARKET) & (every.spread > 0)
    return every.take(chosen & (every.time >= first) & (every.time < last))


def state_path(tape: Tape, end: float | None = None) -> StatePath:
    """The book's spread and best queues after each message, as a step function of time
    from the first message to ``end`` (default: the last message's time)."""
    ask, ask_size, bid, bid_size = _touch(tape)
    time = tape.messages["time"]
    quoted = tape.quoted
    last = float(time[-1]) if end is None else float(end)
    return StatePath(
        time.copy(), np.where(quoted, ask - bid, 0), bid_size.copy(), ask_size.copy(), last
    )


def revealed(tape: Tape) -> Revealed:
    """The levels behind the best the tape shows (see `Revealed`)."""
    book = tape.book_rows
    time = tape.messages["time"]
    ask, ask_size, bid, bid_size = _touch(tape)
    quoted = tape.quoted
    spread = np.where(quoted, ask - bid, np.inf).astype(np.float64)
    parts = []
    if tape.levels >= 2:
        deep = 4 * (tape.levels - 1)
        for side, price_col in ((-1, deep), (1, deep + 2)):
            ahead = book[:, price_col - 4]
            shown = (book[:, price_col + 1] > 0) & (book[:, price_col - 3] > 0)
            gap = side * (ahead - book[:, price_col])
            parts.append((gap[shown], book[shown, price_col + 1], spread[shown], time[shown]))
    else:
        for price, lots, side, empty in (
            (bid, bid_size, 1, EMPTY_BID),
            (ask, ask_size, -1, EMPTY_ASK),
        ):
            was, now = price[:-1], price[1:]
            worse = (side * (was - now) > 0) & (was != empty) & (now != empty) & (lots[1:] > 0)
            parts.append(
                ((side * (was - now))[worse], lots[1:][worse], spread[:-1][worse], time[1:][worse])
            )
    return Revealed(*(np.concatenate(column) for column in zip(*parts)))


def window_events(tape: Tape, lo: float, hi: float) -> tuple[Events, StatePath]:
    """The tape's events in [lo, hi) seconds met with both sides quoted, and the book's
    states over that window."""
    every = events(tape)
    ev = every.take((every.time >= lo) & (every.time < hi) & (every.spread > 0))
    return ev, window(state_path(tape), lo, hi)


def window(path: StatePath, lo: float, hi: float) -> StatePath:
    """``path`` cut to [lo, hi): the state at ``lo`` is the one in force then."""
    first = max(int(np.searchsorted(path.time, lo, side="right")) - 1, 0)
    last = int(np.searchsorted(path.time, hi))
    time = path.time[first:last].copy()
    if len(time):
        time[0] = max(time[0], lo)
    return StatePath(time, path.spread[first:last], path.bid[first:last], path.ask[first:last], hi)
