# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
# distutils: language = c++
"""A replayed tape's messages carried out on a book, compiled: `Replayer` is what
`envs.simulator.traders.MarketReplay` does with each LOBSTER message (its docstring says what), called
from Python (``handle``) and, without a Python call per message, from the market's compiled
flow (`envs.simulator.flow.Flow`)."""

import numpy as np

from cython.operator cimport dereference as deref, predecrement as dec
from libc.math cimport INFINITY, floor, log1p, pow
from libcpp.pair cimport pair
from libcpp.vector cimport vector

from tradearena.envs.simulator.book cimport (
    M_DELETE, M_EXECUTE, M_NEW, M_PARTIAL_CANCEL, Half, LevelIter, Order, OrderBook, check_qty,
    check_side, i64, level_volume,
)
from tradearena.envs.simulator.seat_response cimport SeatResponse

__all__ = ["QUEUE_MODELS", "Replayer"]

QUEUE_MODELS = ("risk_averse", "power", "log", "optimistic")
"""How a cancel that names no order of the replay's (an L2 feed's, or one placed before the
tape starts) is shared out at a level where another owner's order (a seat's) rests, between
the replay's volume ahead of that order and behind it:

- ``risk_averse``: from behind first, newest first, so only trades (and a level shrinking below
  what is ahead) advance the order (hftbacktest's RiskAverseQueueModel);
- ``power``: a share f(ahead) / (f(ahead) + f(behind)) of the cancel from ahead, the rest
  from behind, with f(x) = x ** ``queue_power`` (x in lots), rounded to the nearest lot;
- ``log``: the same with f(x) = log(1 + x);
- ``optimistic``: from ahead first, so every cancel advances the order as far
  as it can: the bound opposite to ``risk_averse``.

The probabilistic models take the expected share of each cancel, as hftbacktest's
ProbQueueModel does with its PowerProbQueueFunc and LogProbQueueFunc."""

cdef enum:
    RISK_AVERSE = 0
    POWER = 1
    LOG = 2
    OPTIMISTIC = 3


cdef class Replayer:
    """The messages of a tape, as int64 columns of shape (n,): ``kind`` (LOBSTER type),
    ``order_id``, ``size`` (shares), ``price`` (ticks), ``direction`` (+1 buy, -1 sell); with
    ``rows`` (int64, (n, 4 levels): the book after each message, as `envs.data.tapes.Tape.book`)
    it reconciles the book to each row. `restart` begins a session as ``owner``, `handle`
    carries out one message. ``added`` / ``removed``: shares reconciliation put in or took
    out; ``skipped``: shares of cancels that found nothing to remove. ``queue`` (one of
    `QUEUE_MODELS`, with ``queue_power`` for "power") shares out the cancels that name no
    order of the replay's at a level where another owner's order rests. With ``response`` (a
    `envs.simulator.seat_response.SeatResponse` of the same tape) the replay answers the seats:
    what they took is carried forward as a shift of the tape's prices and volume held out of
    the levels it reconciles to (that module's docstring says how), the book reconciled again
    as soon as it is heard; an execution then takes
    the order it names where it rests (a shift may have moved it), else the tape's price
    shifted. Without it, or until a seat trades, the replay is the tape's."""

    def __init__(
        self, kind, order_id, size, price, direction, rows=None, str queue="risk_averse",
        double queue_power=2.0, SeatResponse response=None,
    ):
        if queue not in QUEUE_MODELS:
            raise ValueError(f"queue must be one of {list(QUEUE_MODELS)}, got {queue!r}")
        if not queue_power > 0:
            raise ValueError(f"queue_power must be > 0, got {queue_power}")
        self._queue, self._queue_power = QUEUE_MODELS.index(queue), queue_power
        columns = [
            np.ascontiguousarray(c, dtype=np.int64) for c in (kind, order_id, size, price, direction)
        ]
        if len({c.shape for c in columns}) != 1 or columns[0].ndim != 1:
            raise ValueError("the message columns must be 1-D and of one length")
        if rows is not None:
            rows = np.ascontiguousarray(rows, dtype=np.int64)
            n = columns[0].shape[0]
            if rows.ndim != 2 or rows.shape[0] != n or not rows.shape[1] or rows.shape[1] % 4:
                raise ValueError(f"rows must be ({n} messages, 4 x levels >= 1), got {rows.shape}")
            for col in (0, 2):  # a side's shown levels have distinct prices
                prices, sizes = rows[:, col::4], rows[:, col + 1 :: 4]
                shown = (sizes[:, 1:] > 0) & (sizes[:, :-1] > 0)
                repeated = np.flatnonzero((shown & (prices[:, 1:] == prices[:, :-1])).any(axis=1))
                if len(repeated):
                    side = "ask" if col == 0 else "bid"
                    raise ValueError(f"row {repeated[0]} shows one {side} price at two levels")
        if response is not None and len(response) != columns[0].shape[0]:
            raise ValueError(
                f"the response answers for {len(response)} messages, the tape has "
                f"{columns[0].shape[0]}"
            )
        self._rows = rows  # a view, or None
        self._kind, self._order_id, self._size, self._price, self._direction = columns
        self._arrays = (*columns, rows)
        self._response = response
        self.restart(0)

    @property
    def reconcile(self) -> bool:
        """Whether the book is reconciled to the tape's rows after each message."""
        return self._rows is not None

    @property
    def ids(self) -> dict[int, int]:
        """Tape order id -> book order id of the orders this session placed and has not seen
        deleted or filled in full by an execution (the tape names them no more)."""
        return {entry.first: entry.second for entry in self._ids}

    @property
    def response(self) -> SeatResponse | None:
        """How the replay answers the seats (None: it does not)."""
        return self._response

    def restart(self, i64 owner, rng=None) -> None:
        """Begin a session whose replayed orders are ``owner``'s; ``rng`` (a numpy Generator)
        draws what the response draws."""
        self._ids.clear()
        self.owner, self.added, self.removed, self.skipped = owner, 0, 0, 0
        if self._response is not None:
            self._response.restart(rng)

    def copy(self) -> Replayer:
        """A replayer of the same tape (its arrays shared) in the same session state."""
        cdef Replayer new = Replayer.__new__(Replayer)
        new._kind, new._order_id, new._size = self._kind, self._order_id, self._size
        new._price, new._direction, new._rows = self._price, self._direction, self._rows
        new._arrays, new._ids = self._arrays, self._ids
        new._queue, new._queue_power = self._queue, self._queue_power
        new.owner, new.added, new.removed, new.skipped = (
            self.owner, self.added, self.removed, self.skipped
        )
        new._response = None if self._response is None else self._response.copy()
        return new

    def load(self, Replayer other not None) -> None:
        """Take ``other``'s session state (ids, counters, owner); ``other`` replays the same
        tape."""
        if not all(a is b for a, b in zip(self._arrays, other._arrays)):
            raise ValueError("load takes the state of a replayer of the same tape")
        if (self._response is None) != (other._response is None):
            raise ValueError("load takes the state of a replayer that answers the seats alike")
        self._ids = other._ids
        self.owner, self.added, self.removed, self.skipped = (
            other.owner, other.added, other.removed, other.skipped
        )
        if self._response is not None:
            self._response.load(other._response)

    @property
    def queue(self) -> tuple[str, float]:
        """The queue model's name and power."""
        return QUEUE_MODELS[self._queue], self._queue_power

    def __len__(self) -> int:
        """The tape's messages."""
        return self._kind.shape[0]

    def handle(self, OrderBook book not None, Py_ssize_t ref) -> list:
        """Carry out message ``ref`` (then reconcile) on ``book``; the fills it caused."""
        if not 0 <= ref < self._kind.shape[0]:
            raise IndexError(f"message {ref} of a tape of {self._kind.shape[0]}")
        fills = []
        self._handle(book, ref, fills)
        return fills

    @property
    def next_release(self) -> float:
        """When (seconds after midnight) a level the seats took from refills next (inf:
        none is held, or the replay does not answer the seats)."""
        return self._next_release()

    cdef double _next_release(self) noexcept:
        return INFINITY if self._response is None else self._response._next_release()

    def release(self, OrderBook book not None) -> None:
        """Reconcile ``book`` now (``book.now``) to the tape's last row again, the levels
        held until now back in it (`next_release`'s event)."""
        self._release(book)

    def observe(self, OrderBook book not None) -> None:
        """Hear what the seats took from the replay's orders since its last message, now
        (``book.now``), as the replay does at each message and at the start of each interval
        (nothing when it does not answer the seats)."""
        self._observe(book)

    def __reduce__(self):
        state = (self.owner, self.added, self.removed, self.skipped, self.ids)
        return _restore, (self._arrays, self.queue, state, self._response)

    cdef int _observe(self, OrderBook book) except -1:
        """Hear what the seats took since the last message (at the start of an interval, and
        at each message) and answer at once: the book reconciled again to the tape's last
        row, shifted and with the volume taken held out of it."""
        cdef SeatResponse response = self._response
        if response is not None and response._observe(book, self.owner):
            response._shift(response.counted)
            self._release(book)
        return 0

    cdef int _release(self, OrderBook book) except -1:
        """`release`."""
        cdef SeatResponse response = self._response
        if response is None or self._rows is None or response._last < 0:
            return 0
        cdef const i64* row = &self._rows[response._last, 0]
        self._match_row(
            book, row, response._targeted(row, self._rows.shape[1] // 4, book.now), None
        )
        return 0

    cdef int _handle(self, OrderBook book, Py_ssize_t ref, list fills) except -1:
        cdef i64 kind = self._kind[ref], tape_id = self._order_id[ref], size = self._size[ref]
        cdef i64 price = self._price[ref], side = self._direction[ref], done = 0, left, at
        cdef unordered_map[i64, i64].iterator found
        cdef Order* order
        cdef SeatResponse response = self._response
        cdef const i64* row
        if response is not None:  # what the seats took, and the shift it makes now
            self._observe(book)
            price += response._shift(response._counts[ref - 1] if ref > 0 else 0)
        if kind == M_NEW:
            check_side(side)
            check_qty(size)
            self._ids[tape_id] = book._limit(<int>side, price, size, self.owner, fills)
        elif kind == M_PARTIAL_CANCEL or kind == M_DELETE:
            found = self._ids.find(tape_id)
            if found != self._ids.end():
                done = book._cancel(deref(found).second, size if size > 0 else 0)
                if kind == M_DELETE:
                    self._ids.erase(found)
            if done < size:  # what the book no longer holds under that id
                left = size - done
                check_side(side)
                self.skipped += left - self._cancel_unnamed(book, <int>side, price, left)
        elif kind == M_EXECUTE:  # the other side takes the resting volume in time priority
            check_side(side)
            check_qty(size)
            at = price
            found = self._ids.find(tape_id)
            if response is not None and found != self._ids.end():  # where the order rests
                order = book._find(deref(found).second)
                if order != NULL and order.qty > 0:
                    at = order.price
            book._match(<int>-side, side * at, size, self.owner, fills)
            if found != self._ids.end():  # an order filled in full hears no more of the tape
                order = book._find(deref(found).second)
                if order == NULL or order.qty == 0:
                    self._ids.erase(found)
        if self._rows is not None:
            row = &self._rows[ref, 0]
            if response is None:
                self._match_row(book, row, row, fills)
            else:
                self._match_row(
                    book, row, response._targeted(row, self._rows.shape[1] // 4, book.now), fills
                )
        if response is not None:
            response._settled(book, self.owner, ref)
        return 0

    cdef i64 _cancel_unnamed(self, OrderBook book, int side, i64 price, i64 qty) except -1:
        """Cancel up to ``qty`` shares of the replay's at (side, price), shared out by the
        queue model around the level's first order of another owner (see `QUEUE_MODELS`);
        the shares cancelled."""
        cdef Half* half = book._half(side)
        cdef LevelIter it = half.find(side * price)
        if self._queue == RISK_AVERSE or qty <= 0 or it == half.end():
            return book._reduce(side, price, qty, self.owner, False)
        cdef i64 slot = deref(it).second.head, other = 0, ahead = 0, behind = 0
        while slot:  # the replay's volume ahead of the first order of another owner
            if book._orders[slot].owner != self.owner:
                other = slot
                break
            ahead += book._orders[slot].qty
            slot = book._orders[slot].next
        if not other:
            return book._reduce(side, price, qty, self.owner, False)
        slot = book._orders[other].next
        while slot:
            if book._orders[slot].owner == self.owner:
                behind += book._orders[slot].qty
            slot = book._orders[slot].next
        cdef i64 total = min(qty, ahead + behind)
        cdef double f_ahead = self._weight(ahead), f_behind = self._weight(behind)
        cdef i64 front = 0
        if self._queue == OPTIMISTIC:
            front = total
        elif f_ahead + f_behind > 0:
            front = <i64>floor(total * f_ahead / (f_ahead + f_behind) + 0.5)
        front = max(min(front, ahead, total), total - behind)
        return (
            _cancel_newest(book, book._orders[other].prev, front, self.owner)
            + _cancel_newest(book, deref(it).second.tail, total - front, self.owner)
        )

    cdef double _weight(self, i64 lots) noexcept:
        """The queue model's f of a volume."""
        if self._queue == POWER:
            return pow(<double>lots, self._queue_power)
        return log1p(<double>lots)

    cdef int _match_row(
        self, OrderBook book, const i64* row, const i64* target, list fills
    ) except -1:
        """Adjust the replay's own volume so that the book's top levels equal ``target``
        (ask price, ask size, bid price, bid size per level): first take out, on both sides,
        what should not be there, then add what is missing, so that added volume never
        crosses stale volume of the replay's own. ``target`` is the tape's ``row``, or that
        row as the seats' response shifts it and holds volume out of it (a level held empty
        still bounds the levels known, as the row's does)."""
        cdef Py_ssize_t levels = self._rows.shape[1] // 4, i
        cdef i64 missing
        cdef const i64* want
        cdef int side
        if _shows(book, -1, target, levels) and _shows(book, 1, target + 2, levels):
            return 0  # the common case
        self._trim(book, -1, row, target)
        self._trim(book, 1, row + 2, target + 2)
        for side in (-1, 1):
            want = target if side < 0 else target + 2
            for i in range(levels):
                if want[4 * i + 1] > 0:
                    missing = want[4 * i + 1] - level_volume(book, side, want[4 * i])
                    if missing > 0:
                        check_qty(missing)
                        book._limit(side, want[4 * i], missing, self.owner, fills)
                        self.added += missing
        return 0

    cdef int _trim(self, OrderBook book, int side, const i64* row, const i64* target) except -1:
        """Take the replay's excess volume out of ``side``'s levels against ``target`` (price,
        size pairs 4 apart, one per level): every level it does not show with as much, from
        the best down to the deepest level the ``row`` shows when it shows all of them (deeper
        levels are unknown then), else all the way."""
        cdef Py_ssize_t levels = self._rows.shape[1] // 4, i, j
        cdef Py_ssize_t shown = 0
        cdef i64 worst = 0, price, excess
        for i in range(levels):
            if row[4 * i + 1] > 0:
                if shown == 0 or side * target[4 * i] < side * worst:
                    worst = target[4 * i]
                shown += 1
        cdef vector[pair[i64, i64]] present  # (price, volume), best first, before any change
        cdef Half* half = book._half(side)
        cdef LevelIter it = half.end()
        while it != half.begin():
            dec(it)
            price = side * deref(it).first
            if shown == levels and side * price < side * worst:
                break
            present.push_back(pair[i64, i64](price, deref(it).second.volume))
        for j in range(<Py_ssize_t>present.size()):
            price = present[j].first
            excess = present[j].second
            for i in range(levels):
                if target[4 * i + 1] > 0 and target[4 * i] == price:
                    excess = present[j].second - target[4 * i + 1]
            if excess > 0:
                self.removed += book._reduce(side, price, excess, self.owner, False)
        return 0


cdef i64 _cancel_newest(OrderBook book, i64 slot, i64 qty, i64 owner) except -1:
    """Cancel up to ``qty`` shares of ``owner``'s orders from ``slot`` towards the level's
    head (newest first); the shares cancelled."""
    cdef vector[i64] ids
    while slot and qty > 0:
        if book._orders[slot].owner == owner:
            ids.push_back(book._id(slot))
        slot = book._orders[slot].prev
    cdef i64 done = 0, oid
    for oid in ids:
        if done == qty:
            break
        done += book._cancel(oid, qty - done)
    return done


cdef bint _shows(OrderBook book, int side, const i64* target, Py_ssize_t levels) noexcept:
    """Whether ``side``'s best ``levels`` levels are exactly ``target``'s (price, size) pairs,
    4 apart."""
    cdef Half* half = book._half(side)
    cdef LevelIter it = half.end()
    cdef Py_ssize_t i
    for i in range(levels):
        if it == half.begin():
            return False
        dec(it)
        if side * deref(it).first != target[4 * i] or deref(it).second.volume != target[4 * i + 1]:
            return False
    return True


def _restore(tuple arrays, tuple queue, tuple state, SeatResponse response):
    """Unpickle: a replayer of ``arrays`` (the five columns and the rows or None) with the
    ``queue`` model (name, power) in the session ``state`` (owner, added, removed, skipped,
    ids), answering the seats by ``response`` (None: not)."""
    cdef Replayer replayer = Replayer(*arrays, *queue)
    replayer._response = response  # in its own session state (a new replayer restarts one)
    replayer.owner, replayer.added, replayer.removed, replayer.skipped = state[:4]
    for tape_id, oid in state[4].items():
        replayer._ids[tape_id] = oid
    return replayer
