"""Recording a synthetic session as a tape, so that replay works with no data at all.

The market records every change of its book as a LOBSTER message (``Market(record=True)``);
`synthetic_tape` runs a session that way and `envs.simulator.book.top_levels` rebuilds the top
of the book after each message, the tape's book rows; `book_snapshots` is its plain-Python
reference.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tradearena.envs.data.tapes import EMPTY_ASK, EMPTY_BID, MESSAGE_DTYPE, Event, Tape
from tradearena.envs.simulator.book import OrderBook, top_levels
from tradearena.envs.simulator.market import Market
from tradearena.envs.simulator.traders import rmsc04

__all__ = ["book_snapshots", "recorded_tape", "synthetic_tape"]


def book_snapshots(messages: np.ndarray, levels: int) -> np.ndarray:
    """The top ``levels`` of the book after each of ``messages``, for a tape that starts from
    an empty book and names every order it touches (a recorded one): int64 array (n,
    4 * levels) in the layout of ``Tape.book``.

    The plain-Python reference of the compiled `envs.simulator.book.top_levels` (envs/simulator/
    book.pyx), which `synthetic_tape` uses; tests/envs/test_recording.py holds the two equal to
    the bit on recorded sessions and hand-built messages."""
    book = OrderBook()
    ids: dict[int, int] = {}
    rows = np.empty((len(messages), 4 * levels), dtype=np.int64)
    empty = [EMPTY_ASK, 0, EMPTY_BID, 0] * levels
    columns = (messages[c].tolist() for c in ("type", "order_id", "size", "price", "direction"))
    for i, (kind, order_id, size, price, side) in enumerate(zip(*columns)):
        if kind == Event.NEW:
            ids[order_id], _ = book.limit(side, price, size)
        elif kind in (Event.CANCEL, Event.DELETE, Event.EXECUTE):
            book.cancel(ids[order_id], size)
        bids, asks = book.depth(levels)
        row = list(empty)
        for level, (ask_price, ask_size) in enumerate(asks):
            row[4 * level : 4 * level + 2] = ask_price, ask_size
        for level, (bid_price, bid_size) in enumerate(bids):
            row[4 * level + 2 : 4 * level + 4] = bid_price, bid_size
        rows[i] = row
    return rows


def synthetic_tape(
    seed: int = 0,
    *,
    traders: Sequence | None = None,
    levels: int = 5,
    **market_kwargs,
) -> Tape:
    """Record a synthetic session as a tape, so that replay works with no data at all.

    The session (``traders``, default the rmsc04-sized population, and
    `envs.simulator.market.Market` keywords such as ``n_steps``) runs with no seats from an empty
    book; every change of the book becomes a LOBSTER message and the top ``levels`` after each one a
    book row. Replaying the tape alone reproduces the session's book exactly."""
    market = Market(
        rmsc04() if traders is None else traders, n_seats=0, record=True, **market_kwargs
    )
    market.reset(seed)
    while not market.done:
        market.step()
    return recorded_tape(market, levels, f"synthetic_tape(seed={seed})")


def recorded_tape(market: Market, levels: int, source: str = "memory") -> Tape:
    """The tape of what ``market`` (``record=True``) has done so far: its book's log as
    LOBSTER messages and its top ``levels`` after each, named ``source``."""
    log = market.book.log
    messages = np.fromiter(log, dtype=MESSAGE_DTYPE, count=len(log))
    return Tape(
        messages, top_levels(messages, levels), market.tick_size, complete=True, source=source
    )
