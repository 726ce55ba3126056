"""Market replay: a recorded tape of order flow played into the book, in time order."""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tradearena.envs.simulator.book import OrderBook
from tradearena.envs.simulator.orders import Kind, Orders, Program, Rule
from tradearena.envs.simulator.replayer import Replayer
from tradearena.envs.simulator.traders.base import Trader, window

if TYPE_CHECKING:
    from tradearena.envs.data.tapes import Tape
    from tradearena.envs.simulator.book import Fill
    from tradearena.envs.simulator.market import Market
    from tradearena.envs.simulator.responsive import ResponseModel


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

    With ``reconcile`` (default: when the tape has orderbook rows its messages cannot fully explain,
    i.e. a file rather than a recorded synthetic session) the replay then adjusts its own resting
    volume so that the book's top levels equal the tape's row after that message: messages of a
    level-L file cannot explain volume that enters the top L levels from deeper in the book. It
    takes out, on both sides, the replay's volume that the row does not show (down to the row's
    deepest level when the row shows every level, as deeper levels are unknown then), then adds what
    is missing. ``added`` and ``removed`` count the shares this took. The messages are carried out
    by a compiled `envs.simulator.replayer.Replayer`, through the book's C methods.

    A cancel that names no order of the replay's (an L2 feed's, where the feed does not say
    whose volume left a level, or an order placed before the tape starts) is shared out at a
    level where another participant's order rests by the ``queue`` model (one of
    `envs.simulator.replayer.QUEUE_MODELS`, with ``queue_power`` for "power"): "risk_averse" (the
    default) takes it from behind that order first, so only trades advance it. Orders the
    tape names (L3 and LOBSTER) keep their exact queue.

    With ``response`` (a `envs.simulator.responsive.ResponseModel` of the tape) the replay
    answers the seats' trades (the responsive replay, that module's docstring says how); its
    ``response`` is that model (None: the plain replay).
    """

    def __init__(
        self,
        tape: Tape,
        *,
        reconcile: bool | None = None,
        queue: str = "risk_averse",
        queue_power: float = 2.0,
        response: ResponseModel | None = None,
    ) -> None:
        if reconcile and tape.book is None:
            raise ValueError(f"reconcile=True needs a tape with orderbook rows ({tape.source})")
        self.tape = tape
        if reconcile is None:  # needed where the messages cannot explain the book's levels
            reconcile = tape.book is not None and not tape.complete
        self.time = tape.messages["time"]
        rows = tape.book_rows if reconcile else None
        answer = None if response is None else response.seat_response(tape)
        self.replayer = Replayer(*tape.columns, rows, queue, queue_power, answer)
        self.response = response

    def reset(self, market: Market, owners: range, rng: np.random.Generator) -> None:
        super().reset(market, owners, rng)
        self.start(market.book, owners.start, rng)

    def start(self, book: OrderBook, owner: int, rng: np.random.Generator | None = None) -> None:
        """Place the tape's initial book into ``book`` as ``owner``'s orders; ``rng`` draws
        what the response to the seats draws (the rounding of its shift, refill times)."""
        self.owner = owner
        self.replayer.restart(owner, rng)
        bids, asks = self.tape.initial_book()
        for side, levels in ((1, bids), (-1, asks)):
            for price, qty in levels:
                book.limit(side, price, qty, owner)

    def program(self) -> Program | None:
        """One row per message (`message_rows`), carried out by the replayer in C; through
        `handle` where a subclass overrides it, unless the replay answers the seats: then
        None, and the market asks `orders`, which hears the seats' trades at the start of each
        interval as the compiled replay does."""
        rows = message_rows(self.tape, self.owner)
        if self._compiled_handle:
            return Program(rows, Rule.REPLAY, replayer=self.replayer)
        return Program(rows) if self.response is None else None

    @property
    def _compiled_handle(self) -> bool:
        """Whether messages are carried out as `handle` here does (by the replayer in C), not
        by a subclass's own `handle`."""
        return type(self).handle is MarketReplay.handle

    def warm_up(self, market: Market, t0: float, t1: float) -> bool:
        """The state at ``t1`` from a snapshot that every session of this tape shares, made
        by the first warm-up to ``t1``: a replay's flow draws nothing, so each warm-up to
        ``t1`` ends in the same state (book, replayer, flow, counts). One snapshot per window
        start (the book's resting orders and the replay's live ids: tens of kB on the real
        AMZN day). A recording market's book records from ``t1`` on, its log opening with the
        book's resting orders. Not for other books, nor a subclass's own `handle`."""
        flow = market._compiled
        if flow is None or type(market.book) is not OrderBook or not self._compiled_handle:
            return False
        snapshots = _WARM_UPS.setdefault(self.tape, {})
        key = (self.reconcile, self.replayer.queue, self.response, self.owner, t0, t1)
        if key not in snapshots:
            market._flow(t0, t1)
            state = (market.n_orders, market.n_cancels, flow.cursors())
            snapshots[key] = (market.book.copy(record=False), self.replayer.copy(), state)
        book, replayer, (market.n_orders, market.n_cancels, cursors) = snapshots[key]
        market.book = book.copy(record=market.record)
        self.replayer.load(replayer)
        flow.seek(cursors)
        return True

    def orders(self, market: Market, t0: float, t1: float, rng: np.random.Generator) -> Orders:
        """The reference of the compiled ``Rule.REPLAY`` in envs/simulator/flow.pyx (`Flow`,
        which stands in for it once `program` is given); tests/envs/test_flow.py
        (``test_compiled_flow_equals_orders_on_a_replay``) holds the two equal to the bit."""
        self.replayer.observe(market.book)  # what the seats took, heard at the start
        w = window(self.time, t0, t1)
        times = self.time[w]
        refs = np.arange(w.start, w.stop, dtype=np.int64)
        refills = self._refills(t1)  # levels the seats took refilling before t1: ref -1
        if len(refills):
            order = np.argsort(np.concatenate([times, refills]), kind="stable")
            times = np.concatenate([times, refills])[order]
            refs = np.concatenate([refs, np.full(len(refills), -1)])[order]
        return Orders.build(times, Kind.HANDLE, 0, 0, 0, self.owner, refs)

    def _refills(self, t1: float) -> np.ndarray:
        """The times before ``t1`` at which levels the seats took refill (they are known at
        the interval's start: the seats trade then)."""
        response = self.replayer.response
        if response is None:
            return np.empty(0)
        return np.array(sorted({until for *_, until in response.held if until < t1}))

    def handle(self, book: OrderBook, ref: int) -> list[Fill]:
        """Carry out tape message ``ref`` (then reconcile); return the fills it caused. A
        negative ``ref`` is a refill of the levels the seats took (`Replayer.release`)."""
        if ref < 0:
            self.replayer.release(book)
            return []
        return self.replayer.handle(book, ref)

    @property
    def reconcile(self) -> bool:
        """Whether the book is reconciled to the tape's orderbook row after each message."""
        return self.replayer.reconcile

    @property
    def ids(self) -> dict[int, int]:
        """Tape order id -> book order id of this session's replayed orders still heard of
        (not deleted, nor filled in full by an execution)."""
        return self.replayer.ids

    @property
    def added(self) -> int:
        """Shares reconciliation put in this session."""
        return self.replayer.added

    @property
    def removed(self) -> int:
        """Shares reconciliation took out this session."""
        return self.replayer.removed

    @property
    def skipped(self) -> int:
        """Shares of cancels this session that found nothing to remove."""
        return self.replayer.skipped


_MESSAGE_ROWS: weakref.WeakKeyDictionary[Tape, dict[int, Orders]] = weakref.WeakKeyDictionary()
_WARM_UPS: weakref.WeakKeyDictionary[Tape, dict[tuple, tuple]] = weakref.WeakKeyDictionary()


def message_rows(tape: Tape, owner: int) -> Orders:
    """One HANDLE row of ``owner`` per message of ``tape`` (ref: the message's index), made
    once per tape and owner and shared by every replay of it: the flow never writes them."""
    by_owner = _MESSAGE_ROWS.setdefault(tape, {})
    if owner not in by_owner:
        time = np.ascontiguousarray(tape.messages["time"])
        refs = np.arange(len(time))
        by_owner[owner] = Orders.build(time, Kind.HANDLE, 0, 0, 0, owner, refs)
    return by_owner[owner]


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
    from tradearena.envs.simulator.book import OrderBook

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
