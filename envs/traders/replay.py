"""Market replay: a recorded tape of order flow played into the book, in time order."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from envs.orders import Kind, Orders, Program
from envs.traders.base import Trader, window

if TYPE_CHECKING:
    from envs.book import Fill, OrderBook
    from envs.market import Market
    from envs.tapes import Tape

NEW, PARTIAL_CANCEL, DELETE, EXECUTE = 1, 2, 3, 4  # LOBSTER event types acted on


class MarketReplay(Trader):
    """One participant that replays a `Tape` (Balch et al. 2019, "single agent market replay").

    At reset it places the tape's initial book; then each message is carried out when market
    time reaches it (LOBSTER event types):

    - 1 new limit order: submitted as a limit order (it trades if another participant's
      order now crosses it);
    - 2 partial cancel, 3 delete: cancel the order if it still rests; what the tape cancels
      beyond that (an order placed before the tape starts, deeper than its levels, or already
      filled by another participant) is removed from the replay's volume at (price, side),
      and skipped when there is none;
    - 4 visible execution: an immediate-or-cancel order from the other side at the tape's
      price takes the resting volume there in time priority, so other participants' orders
      at that price (or better) trade first;
    - 5 hidden execution, 6 cross trade, 7 halt: no change to the visible book.

    With ``reconcile`` (default: when the tape has orderbook rows its messages cannot fully
    explain, i.e. a file rather than a recorded synthetic session) the replay then adjusts
    its own resting volume so that the book's top levels equal the tape's row after that
    message: messages of a level-L file cannot explain volume that enters the top L levels
    from deeper in the book. ``added`` and ``removed`` count the shares this took.
    """

    def __init__(self, tape: Tape, *, reconcile: bool | None = None) -> None:
        if reconcile and tape.book is None:
            raise ValueError(f"reconcile=True needs a tape with orderbook rows ({tape.source})")
        self.tape = tape
        if reconcile is None:  # needed where the messages cannot explain the book's levels
            reconcile = tape.book is not None and not tape.complete
        self.reconcile = reconcile
        self.time = tape.messages["time"]
        self._rows = tape.rows
        self._book_rows = tape.book_rows if self.reconcile else None

    def reset(self, market: Market, owners: range, rng: np.random.Generator) -> None:
        super().reset(market, owners, rng)
        self.start(market.book, owners.start)

    def start(self, book: OrderBook, owner: int) -> None:
        """Place the tape's initial book into ``book`` as ``owner``'s orders."""
        self.owner = owner
        self.ids: dict[int, int] = {}  # tape order id -> book order id
        self.added = self.removed = self.skipped = 0
        bids, asks = self.tape.initial_book()
        for side, levels in ((1, bids), (-1, asks)):
            for price, qty in levels:
                book.limit(side, price, qty, owner)

    def program(self) -> Program:
        n = len(self.time)
        return Program(Orders.build(self.time, Kind.HANDLE, 0, 0, 0, self.owner, np.arange(n)))

    def orders(self, market: Market, t0: float, t1: float, rng: np.random.Generator) -> Orders:
        w = window(self.time, t0, t1)
        refs = np.arange(w.start, w.stop, dtype=np.int64)
        return Orders.build(self.time[w], Kind.HANDLE, 0, 0, 0, self.owner, refs)

    def handle(self, book: OrderBook, ref: int) -> list[Fill]:
        """Carry out tape message ``ref`` (then reconcile); return the fills it caused."""
        kind, tape_id, size, price, side = self._rows[ref]
        fills: list[Fill] = []
        if kind == NEW:
            oid, fills = book.limit(side, price, size, self.owner)
            self.ids[tape_id] = oid
        elif kind in (PARTIAL_CANCEL, DELETE):
            oid = self.ids.get(tape_id)
            done = book.cancel(oid, size) if oid is not None else 0
            if kind == DELETE:
                self.ids.pop(tape_id, None)
            if done < size:
                left = size - done
                gone = book.reduce(side, price, left, self.owner)
                self.skipped += left - gone
        elif kind == EXECUTE:
            fills = book.immediate(-side, price, size, self.owner)
        if self._book_rows is not None:
            fills = fills + self.match_row(book, self._book_rows[ref])
        return fills

    def match_row(self, book: OrderBook, row: list[int]) -> list[Fill]:
        """Adjust the replay's own volume so that the book's top levels equal an orderbook
        row (ask price, ask size, bid price, bid size per level); return any fills."""
        levels = len(row) // 4
        bids, asks = book.depth(levels)
        if len(bids) == len(asks) == levels and all(
            asks[i] == (row[4 * i], row[4 * i + 1]) and bids[i] == (row[4 * i + 2], row[4 * i + 3])
            for i in range(levels)
        ):
            return []  # the book already shows the row (the common case)
        targets = {
            side: {
                row[4 * i + col]: row[4 * i + col + 1]
                for i in range(levels)
                if row[4 * i + col + 1] > 0
            }
            for side, col in ((-1, 0), (1, 2))
        }
        # First remove what should not be there on both sides, then add what is missing, so
        # that added volume never crosses stale volume of the replay's own.
        for side, target in targets.items():
            full = len(target) == levels  # all L levels shown: deeper levels are unknown
            worst = (max if side == 1 else min)(target, key=lambda p: -side * p) if full else None
            for price, volume in self._levels_within(book, side, worst):
                excess = volume - target.get(price, 0)
                if excess > 0:
                    self.removed += book.reduce(side, price, excess, self.owner)
        fills: list[Fill] = []
        for side, target in targets.items():
            for price, wanted in target.items():
                missing = wanted - book.volume_at(side, price)
                if missing > 0:
                    _, new = book.limit(side, price, missing, self.owner)
                    fills.extend(new)
                    self.added += missing
        return fills

    @staticmethod
    def _levels_within(book: OrderBook, side: int, worst: int | None) -> list[tuple[int, int]]:
        """The book's levels on ``side`` from the best down to price ``worst`` (all of them
        when None), as (price, volume)."""
        n = 16
        while True:
            bids, asks = book.depth(n)
            levels = bids if side == 1 else asks
            if worst is not None:
                inside = [lv for lv in levels if side * lv[0] >= side * worst]
                if len(inside) < len(levels) or len(levels) < n:
                    return inside
            elif len(levels) < n:
                return levels
            n *= 4


@dataclass(frozen=True)
class ReplayReport:
    """How closely a replay of messages follows the tape's orderbook file.

    fidelity: fraction of messages after which the replayed best bid and best ask (price and
    size) equal the file's first level; added / removed: shares reconciliation put in or took
    out; skipped: shares of cancels that found nothing to remove.
    """

    messages: int
    fidelity: float
    added: int
    removed: int
    skipped: int


def replay_fidelity(tape: Tape, *, reconcile: bool) -> ReplayReport:
    """Replay ``tape`` alone through a fresh book and compare with its orderbook rows."""
    from envs.book import OrderBook

    if tape.book is None:
        raise ValueError(f"fidelity needs the tape's orderbook file ({tape.source})")
    replay = MarketReplay(tape, reconcile=reconcile)
    book = OrderBook()
    replay.start(book, owner=0)
    top = tape.book[:, :4].tolist()
    hits = 0
    for i in range(len(tape.messages)):
        replay.handle(book, i)
        ask_p, ask_s, bid_p, bid_s = top[i]
        ask, bid = book.best_ask(), book.best_bid()
        hits += (ask == (ask_p, ask_s) if ask_s else ask is None) and (
            bid == (bid_p, bid_s) if bid_s else bid is None
        )
    n = len(tape.messages)
    return ReplayReport(n, hits / n if n else 1.0, replay.added, replay.removed, replay.skipped)
