# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
# distutils: language = c++
"""The difference the seats make to a replayed tape, carried forward (the responsive replay),
compiled: `SeatResponse` is what `envs.simulator.replayer.Replayer` asks before and after each
of the tape's messages when the replay answers the seats.

Between two of the tape's messages the seats may trade with the replay's orders (a market
order, a limit order that crosses). What they took, net, is *observed* at the next message
(or at the start of the next interval): the replay's own position changed by it.

- The price: each such trade moves the mid by its amplitude times ``kernel[l - 1]`` ticks in
  the seats' direction, where ``l`` counts the market orders since it, the tape's and the
  seats' (1 until the next one, the kernel's last lag for any later one: its permanent part);
  the moves add up, and the tape's prices are shifted by ``floor(D + dither)`` ticks, their
  sum ``D`` rounded with the session's ``dither`` uniform in [0, 1), so that the shift is
  ``D`` on average over sessions. A trade's amplitude is the tape's spread then over the
  model's (the trailing spread, ``scale``: the impact of a market order goes with the spread)
  times what its lots add to a concave function of the seats' run of lots in its direction
  (``run``: their lots in it within the kernel's lags, less those against it, at least 0):
  ``((run + lots) / reference) ** concavity - (run / reference) ** concavity``. A fresh trade
  of ``reference`` lots moves the price the kernel; ``Q`` lots in a row move it ``(Q /
  reference) ** concavity`` times that however they are split (the square-root law at 0.5);
  a trade against the run, or with none, is fresh.
- The queues: on a tape whose rows the replay reconciles to, the volume a trade took from the
  levels the book showed is held out of that side (its levels thinner from the best down,
  whatever the tape's prices do meanwhile) until it has refilled: a time drawn from the tape's
  own refill times after its market orders, those that emptied the best level (``emptied``)
  or only thinned it (``thinned``); at that time (``next_release``, which the replay's flow
  keeps like a message of the tape's) the book is reconciled again to the tape's last row,
  the volume back in it.
With no trade by a seat, the shift is 0 and nothing is held: the replay is the tape's.
"""

import numpy as np

from libc.math cimport INFINITY, floor, pow
from libcpp.vector cimport vector

from tradearena.envs.simulator.book cimport OrderBook, i64, position

__all__ = ["SeatResponse"]


cdef class SeatResponse:
    """The seats' difference to a replayed tape of ``counts.shape[0]`` messages.

    ``kernel`` (float64, (lags,), ticks >= 0): the shift one fresh trade of ``reference``
    lots makes ``l`` market orders after it, ``kernel[l - 1]``, constant past the last lag;
    ``counts`` (int64, (messages,)): the tape's market orders up to and including each
    message; ``scale`` (float64, (messages,), > 0): the tape's spread after each message over
    the model's; ``emptied``, ``thinned`` (float64, (q,) with q >= 2, seconds, increasing):
    quantiles at 0, 1 / (q - 1), ..., 1 of the time a level takes to refill after a market
    order that emptied, thinned it; ``reference`` (lots, > 0) and ``concavity`` in (0, 1]."""

    def __init__(
        self, kernel, counts, scale, emptied, thinned, double reference, double concavity=0.5
    ):
        kernel = np.ascontiguousarray(kernel, dtype=np.float64)
        counts = np.ascontiguousarray(counts, dtype=np.int64)
        scale = np.ascontiguousarray(scale, dtype=np.float64)
        emptied = np.ascontiguousarray(emptied, dtype=np.float64)
        thinned = np.ascontiguousarray(thinned, dtype=np.float64)
        if kernel.ndim != 1 or not kernel.shape[0]:
            raise ValueError(f"kernel must be (lags,), got shape {kernel.shape}")
        if not (np.all(np.isfinite(kernel)) and np.all(kernel >= 0)):
            raise ValueError("kernel must be finite ticks >= 0")
        if counts.ndim != 1 or np.any(np.diff(counts) < 0):
            raise ValueError("counts must be (messages,) and never decrease")
        if scale.shape != counts.shape or not np.all(np.isfinite(scale) & (scale > 0)):
            raise ValueError(f"scale must be {counts.shape[0]} finite factors > 0")
        for name, times in (("emptied", emptied), ("thinned", thinned)):
            if times.ndim != 1 or times.shape[0] < 2 or not np.all(np.isfinite(times)):
                raise ValueError(f"{name} must be at least 2 finite quantiles, seconds")
            if times[0] < 0 or np.any(np.diff(times) < 0):
                raise ValueError(f"{name} must be quantiles: increasing seconds >= 0")
        if not 0 < reference < INFINITY:
            raise ValueError(f"reference must be lots > 0, got {reference}")
        if not 0 < concavity <= 1:
            raise ValueError(f"concavity must be in (0, 1], got {concavity}")
        self._arrays = (kernel, counts, scale, emptied, thinned, reference, concavity)
        self._kernel, self._counts, self._scale = kernel, counts, scale
        self._emptied, self._thinned = emptied, thinned
        self._reference, self._concavity = reference, concavity
        self.restart()

    def __len__(self) -> int:
        """The tape's messages."""
        return self._counts.shape[0]

    def restart(self, rng=None) -> None:
        """Begin a session: nothing traded, nothing held; ``rng`` (a numpy Generator, None:
        the dither 0 and refills at the median) draws the dither and the refill times."""
        self._trades.clear()
        self._deficits.clear()
        self._target.clear()
        self._counted = self._position = 0
        self._last = -1
        self._permanent = self._moved = 0.0
        self.shift = self.taken = self.counted = self.orders = 0
        self._rng = rng
        self._dither = float(rng.random()) if rng is not None else 0.0

    def copy(self) -> SeatResponse:
        """A response of the same tape and model in the same session state."""
        cdef SeatResponse new = SeatResponse.__new__(SeatResponse)
        new._arrays, new._kernel = self._arrays, self._kernel
        new._counts, new._scale = self._counts, self._scale
        new._emptied, new._thinned = self._emptied, self._thinned
        new._reference, new._concavity = self._reference, self._concavity
        new._rng, new._dither = self._rng, self._dither
        new.load(self)
        return new

    def load(self, SeatResponse other not None) -> None:
        """Take ``other``'s session state (trades, held volume, the last row, counts), not its
        generator nor its dither; ``other`` answers for the same tape and model."""
        same = all(a is b for a, b in zip(self._arrays[:5], other._arrays[:5]))
        if not same or self._arrays[5:] != other._arrays[5:]:
            raise ValueError("load takes the state of a response of the same tape and model")
        self._trades, self._deficits, self._target = other._trades, other._deficits, other._target
        self._counted = other._counted
        self._position, self._permanent, self._moved = other._position, other._permanent, other._moved
        self._last = other._last
        self.shift, self.taken, self.counted = other.shift, other.taken, other.counted
        self.orders = other.orders

    @property
    def dither(self) -> float:
        """The session's rounding offset of the shift, in [0, 1)."""
        return self._dither

    @property
    def moved(self) -> float:
        """Ticks the seats' trades move the tape's prices, before the rounding, as of the
        last shift computed."""
        return self._moved

    @property
    def next_release(self) -> float:
        """The first time (seconds after midnight) a level held refills (inf: none held)."""
        return self._next_release()

    @property
    def held(self) -> list[tuple[int, int, int, float]]:
        """The volume held out of the levels: (side, lots, until seconds after midnight)."""
        return [(d.side, d.qty, d.until) for d in self._deficits]

    def __reduce__(self):
        state = (
            [(t.weight, t.lots, t.first) for t in self._trades],
            [(d.side, d.qty, d.until) for d in self._deficits],
            list(self._target),
            (self._counted, self._position, self._permanent, self._moved),
            self._last,
            self._dither,
            (self.shift, self.taken, self.counted, self.orders),
        )
        return _restore, (self._arrays, self._rng, state)

    # ------------------------------------------------------------------------ the replay's
    cdef int _observe(self, OrderBook book, i64 owner) except -1:
        """What the seats took from ``owner``'s (the replay's) orders since its last message,
        net, as a trade now (``book.now``): its shift, and the volume held out of the levels
        of the last row it took it from; 1 when they took anything, else 0."""
        cdef i64 now_position = position(book, owner)
        cdef i64 change = now_position - self._position
        if change == 0:
            return 0
        self._position = now_position
        cdef int side = 1 if change > 0 else -1  # the side taken: +1 bids (the seats sold)
        cdef i64 lots = change if change > 0 else -change
        cdef Trade trade
        self.orders += 1
        trade.weight = -side * self._amplitude(-side, lots) * self._scale[max(self._last, 0)]
        trade.lots, trade.first = -side * lots, self.counted + self.orders
        self._trades.push_back(trade)
        self._counted = -1  # the shift is computed afresh
        self.taken += lots
        self._hold(side, lots, book.now)
        return 1

    cdef double _amplitude(self, int side, i64 lots) noexcept:
        """What ``lots`` traded on ``side`` (+1 buying) add, in units of a fresh trade of the
        reference size, to the concave function of the seats' run in that direction: their
        lots in it within the kernel's lags less those against it, at least 0."""
        cdef double run = 0.0, r = self._reference
        cdef Trade trade
        for trade in self._trades:
            run += side * trade.lots
        run = run if run > 0 else 0.0
        return pow((run + lots) / r, self._concavity) - pow(run / r, self._concavity)

    cdef double _next_release(self) noexcept:
        """The first time (seconds after midnight) a level held refills (inf: none held)."""
        cdef double first = INFINITY
        cdef Deficit deficit
        for deficit in self._deficits:
            if deficit.until < first:
                first = deficit.until
        return first

    cdef int _hold(self, int side, i64 lots, double now) except -1:
        """Hold ``lots`` taken from ``side`` out of its shown levels (at most what the last row
        showed there), refilling after a time drawn as for an emptied best level when they
        were at least the best level's, else as for a thinned one."""
        cdef Py_ssize_t levels = self._target.size() // 4, i
        cdef Py_ssize_t column = 2 if side > 0 else 0
        cdef i64 shown = 0
        for i in range(levels):
            shown += self._target[4 * i + column + 1]
        if not levels or shown <= 0:
            return 0
        cdef Deficit deficit
        deficit.side, deficit.qty = side, lots if lots < shown else shown
        deficit.until = now + self._refill(lots >= self._target[column + 1])
        self._deficits.push_back(deficit)
        return 0

    cdef double _refill(self, bint emptied) except? -1:
        """A refill time (seconds) drawn from the quantiles of ``emptied`` or thinned levels."""
        cdef const double[::1] times = self._emptied if emptied else self._thinned
        cdef double u = float(self._rng.random()) if self._rng is not None else 0.5
        cdef double at = u * (times.shape[0] - 1)
        cdef Py_ssize_t j = <Py_ssize_t>floor(at)
        if j >= times.shape[0] - 1:
            return times[times.shape[0] - 1]
        return times[j] + (at - j) * (times[j + 1] - times[j])

    cdef i64 _shift(self, i64 count) except? -1:
        """The shift (ticks) with ``count`` of the tape's market orders before the message
        at hand (and the seats' trades so far)."""
        count += self.orders
        if count == self._counted:
            return self.shift
        cdef Py_ssize_t lags = self._kernel.shape[0], j, kept = 0
        cdef i64 lag
        cdef double moved = 0.0
        cdef Trade trade
        for j in range(<Py_ssize_t>self._trades.size()):
            trade = self._trades[j]
            lag = count - trade.first  # 0: before the next market order
            if lag >= lags - 1:  # past the kernel's lags: its permanent part
                self._permanent += trade.weight * self._kernel[lags - 1]
                continue
            moved += trade.weight * self._kernel[lag]
            self._trades[kept] = trade
            kept += 1
        self._trades.resize(kept)
        self._moved = moved + self._permanent
        self.shift = <i64>floor(self._moved + self._dither)
        self._counted = count
        return self.shift

    cdef const i64* _targeted(self, const i64* row, Py_ssize_t levels, double now) except NULL:
        """The row to reconcile to: ``row`` (the tape's, 4 x ``levels``) shifted, each side
        thinner by the volume held out of it, from its best level down; the deficits that
        have refilled by ``now`` dropped."""
        cdef Py_ssize_t i, j, k, kept = 0, column
        cdef i64 held[2]  # lots held out of the asks, the bids
        held[0] = held[1] = 0
        for j in range(<Py_ssize_t>self._deficits.size()):
            if self._deficits[j].until > now:
                held[self._deficits[j].side > 0] += self._deficits[j].qty
                self._deficits[kept] = self._deficits[j]
                kept += 1
        self._deficits.resize(kept)
        self._target.resize(4 * levels)
        cdef i64 size, price, took
        for i in range(levels):
            for k in range(2):
                column = 2 * k
                price, size = row[4 * i + column], row[4 * i + column + 1]
                if size > 0:
                    took = size if held[k] > size else held[k]
                    size, held[k] = size - took, held[k] - took
                    price += self.shift
                self._target[4 * i + column], self._target[4 * i + column + 1] = price, size
        return self._target.data()

    cdef void _settled(self, OrderBook book, i64 owner, Py_ssize_t ref) noexcept:
        """After the tape's message ``ref``: the replay's position as the seats left it, and
        the tape's market orders up to it."""
        self._position = position(book, owner)
        self.counted = self._counts[ref]
        self._last = ref


def _restore(tuple arrays, object rng, tuple state):
    """Unpickle: a response of ``arrays`` (kernel, counts, scale, emptied, thinned,
    reference, concavity) with the generator ``rng`` in the session ``state``."""
    cdef SeatResponse response = SeatResponse(*arrays)
    trades, deficits, target, numbers, last, dither, public = state
    cdef Trade trade
    cdef Deficit deficit
    for trade.weight, trade.lots, trade.first in trades:
        response._trades.push_back(trade)
    for deficit.side, deficit.qty, deficit.until in deficits:
        response._deficits.push_back(deficit)
    for value in target:
        response._target.push_back(value)
    response._counted, response._position, response._permanent, response._moved = numbers
    response._last, response._dither = last, dither
    response.shift, response.taken, response.counted, response.orders = public
    response._rng = rng
    return response
