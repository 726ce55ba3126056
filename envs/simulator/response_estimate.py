"""The responsive replay's model (`envs.simulator.responsive`) estimated from a tape: the bare
propagator of its market orders, by size, less what the replay's own mechanics move the price
(a probe of seat orders), and its refill times."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from tradearena.envs.data.events import market_events, market_order_starts
from tradearena.envs.data.tapes import Tape
from tradearena.envs.errors import UserError
from tradearena.envs.simulator.book import OrderBook
from tradearena.envs.simulator.responsive import (
    CONCAVITY,
    QUANTILES,
    ResponseModel,
    mean_spread,
)
from tradearena.envs.simulator.traders.replay import MarketReplay

__all__ = [
    "HORIZON",
    "LAGS",
    "MIN_ORDERS",
    "PROBE_EVERY",
    "MarketOrders",
    "bare_propagator",
    "estimate_response",
    "fit_kernel",
    "market_orders",
    "mechanical_response",
    "probe",
    "refill_times",
    "response_function",
    "responsive_model",
    "sign_autocorrelation",
    "size_edges",
    "size_scale",
]

LAGS = 300
"""The kernel's lags, the tape's market orders: beyond them a trade's shift is its permanent
part."""
MIN_ORDERS = 300
"""The fewest market orders (both sides quoted) the hours must hold to estimate the response
from."""
HORIZON = 300.0
"""Seconds after a market order within which a refill is looked for; a level not refilled by
then counts as refilled then."""
PROBE_EVERY = 30.0
"""Seconds between the probe's market orders (`probe`)."""
PASSES = 4
"""Probes of the hours the mechanical response is read from, each its orders
`PROBE_EVERY` / PASSES seconds after the last's."""


# ---------------------------------------------------------------------------- the tape's
@dataclass(frozen=True)
class MarketOrders:
    """A tape's market orders met with both sides quoted, each array of shape (n,), in time
    order: ``time`` (seconds after midnight), ``sign`` (+1 a buy, -1 a sell), ``size``
    (lots), ``mid`` (ticks, just before it), ``row`` (the index of the message before it),
    ``emptied`` (whether it emptied the best level it met)."""

    time: np.ndarray
    sign: np.ndarray
    size: np.ndarray
    mid: np.ndarray
    row: np.ndarray
    emptied: np.ndarray

    def __len__(self) -> int:
        return len(self.time)

    def take(self, rows: np.ndarray | slice) -> MarketOrders:
        """The orders selected by a boolean mask, index array or slice."""
        return MarketOrders(*(getattr(self, f)[rows] for f in self.__dataclass_fields__))


def market_orders(tape: Tape, first: float, last: float) -> MarketOrders:
    """The `MarketOrders` of ``tape`` at ``first <= time < last`` (seconds after midnight)."""
    orders = market_events(tape, first, last)
    row = np.maximum(np.searchsorted(tape.messages["time"], orders.time, side="left") - 1, 0)
    return MarketOrders(
        time=orders.time,
        sign=-orders.side.astype(np.int64),  # the side taken is the resting side
        size=orders.size.astype(np.int64),
        mid=tape.mids[row],
        row=row,
        emptied=orders.emptied.astype(bool),
    )


def size_edges(sizes: np.ndarray) -> np.ndarray:
    """Size buckets' upper edges (lots, int64): the terciles of ``sizes`` (fewer where they
    coincide), the last bucket open."""
    return np.unique(np.quantile(sizes, [1 / 3, 2 / 3], method="lower")).astype(np.int64)


# ------------------------------------------------------------------------------ statistics
def sign_autocorrelation(signs: np.ndarray, lags: np.ndarray) -> np.ndarray:
    """The autocorrelation of a sequence of order signs (+1/-1, shape (n,)) at each of
    ``lags`` (orders, each in [0, n)): the mean of (s_i - m)(s_{i+lag} - m) over the pairs
    over the variance, m the sequence's mean, shape like ``lags`` (Lillo and Farmer, "The
    long memory of the efficient market", 2004)."""
    s = np.asarray(signs, dtype=float)
    s = s - s.mean()
    variance = float(np.dot(s, s)) / len(s)
    lags = np.asarray(lags, dtype=np.int64)
    if np.any((lags < 0) | (lags >= len(s))):
        raise ValueError(f"lags must lie in [0, {len(s)}), got {lags.min()}..{lags.max()}")
    n = len(s)
    return np.array([np.dot(s[: n - k], s[k:]) / (n - k) / variance for k in lags.tolist()])


def response_function(signs: np.ndarray, mids: np.ndarray, lags: int) -> np.ndarray:
    """R(l) = mean of sign_n (mid_{n+l} - mid_n) for l = 1..``lags``, ticks, shape (lags,):
    ``signs`` (+1 buy) and ``mids`` (ticks, just before each order; NaN ones left out) of one
    sequence of market orders, shape (n,)."""
    signs, mids = np.asarray(signs, float), np.asarray(mids, float)
    n = len(signs)
    out = np.full(lags, np.nan)
    for lag in range(1, min(lags, n - 1) + 1):
        moved = signs[: n - lag] * (mids[lag:] - mids[: n - lag])
        out[lag - 1] = np.nanmean(moved) if np.isfinite(moved).any() else np.nan
    return out


def bare_propagator(signs: np.ndarray, mids: np.ndarray, lags: int) -> np.ndarray:
    """The bare propagator G(l), l = 1..``lags`` (ticks, (lags,)): the mid's response to one
    market order with the correlation of the signs taken out, solving

        R(l) = sum_{0 <= k < l} G(l - k) C(k) + sum_{k >= 1} [G(l + k) - G(k)] C(k)

    (Bouchaud et al. 2004, eq. 9; R: `response_function`, C: `sign_autocorrelation`, G(0) = 0)
    over l = 1..lags, with G constant beyond ``lags`` and the sums cut at ``2 lags``."""
    n = len(signs)
    if lags < 1 or n <= 2 * lags:
        raise ValueError(f"need more than {2 * lags} orders for {lags} lags, got {n}")
    response = response_function(signs, mids, lags)
    if not np.all(np.isfinite(response)):
        raise ValueError("the mids leave a lag without a response")
    c = sign_autocorrelation(signs, np.arange(2 * lags + 1))
    column = np.minimum(np.arange(4 * lags + 1), lags) - 1  # G(j) for j > lags is G(lags)
    lag, k = np.meshgrid(np.arange(1, lags + 1), np.arange(2 * lags + 1), indexing="ij")
    row = lag - 1
    past = k < lag  # G(l - k) C(k), 0 <= k < l
    later = (k >= 1) & (k <= 2 * lags - lag)  # [G(l + k) - G(k)] C(k), the sum cut at 2 lags
    cells = np.concatenate(
        [
            row[past] * lags + column[(lag - k)[past]],
            row[later] * lags + column[(lag + k)[later]],
            row[later] * lags + column[k[later]],
        ]
    )
    terms = np.concatenate([c[k[past]], c[k[later]], -c[k[later]]])
    a = np.bincount(cells, terms, minlength=lags * lags).reshape(lags, lags)
    return np.linalg.lstsq(a, response, rcond=None)[0]


def fit_kernel(propagator: np.ndarray) -> np.ndarray:
    """A smooth, non-increasing kernel through a noisy bare propagator (ticks, (lags,)):
    ``g_inf + (g_1 - g_inf) (1 + (l - 1) / l_0) ** -beta``, fitted by least squares weighted by
    1 / l (the noise of a response grows as the square root of the lag), with ``0 <= g_inf
    <= g_1``; shape (lags,)."""
    lags = np.arange(1, len(propagator) + 1, dtype=float)
    from scipy.optimize import least_squares

    weight = 1 / np.sqrt(lags)
    top = max(float(np.max(propagator)), 1e-9)

    def shape(p: np.ndarray) -> np.ndarray:
        g1, share, scale, beta = p
        return g1 * (share + (1 - share) * (1 + (lags - 1) / scale) ** -beta)

    start = np.array([max(float(propagator[0]), 1e-9), 0.5, 10.0, 0.5])
    found = least_squares(
        lambda p: weight * (shape(p) - propagator),
        start,
        bounds=([0.0, 0.0, 1.0, 0.0], [2 * top, 1.0, 10.0 * len(lags), 3.0]),
    )
    return shape(found.x)


def refill_times(tape: Tape, orders: MarketOrders) -> tuple[np.ndarray, np.ndarray]:
    """Seconds the tape's flow took to refill after each of ``orders``, within `HORIZON` (a
    level not refilled by then counts `HORIZON`): (those that emptied the best level: until
    the spread was back at most its width before the order; those that thinned it: until the
    queue at that price was as long again, or that price no longer the best)."""
    time, rows = tape.messages["time"], tape.book_rows
    ask, ask_size, bid, bid_size = (rows[:, i] for i in range(4))
    spread = np.where((ask_size > 0) & (bid_size > 0), ask - bid, np.iinfo(np.int64).max)
    after = np.searchsorted(time, orders.time, side="right")
    ends = np.searchsorted(time, orders.time + HORIZON, side="right")
    emptied, thinned = [], []
    for i in range(len(orders)):
        before, span = orders.row[i], slice(int(after[i]), int(ends[i]))
        if orders.emptied[i]:
            back = spread[span] <= spread[before]
            emptied.append(_first_time(back, time[span], orders.time[i]))
            continue
        buy = orders.sign[i] > 0  # a buy takes the ask
        price, queue = (ask, ask_size) if buy else (bid, bid_size)
        back = (price[span] != price[before]) | (queue[span] >= queue[before])
        thinned.append(_first_time(back, time[span], orders.time[i]))
    return np.array(emptied, float), np.array(thinned, float)


def _first_time(back: np.ndarray, times: np.ndarray, start: float) -> float:
    """Seconds from ``start`` to the first of ``times`` where ``back`` holds (`HORIZON` if
    none)."""
    return float(times[int(np.argmax(back))] - start) if back.any() else HORIZON


def _quantiles(times: np.ndarray) -> np.ndarray:
    """`QUANTILES` quantiles of ``times`` (seconds); HORIZON's alone when there are none."""
    if not len(times):
        return np.full(QUANTILES, HORIZON)
    return np.quantile(times, np.linspace(0, 1, QUANTILES))


def probe(
    tape: Tape,
    model: ResponseModel,
    hours: tuple[float, float],
    sizes: np.ndarray,
    *,
    every: float = PROBE_EVERY,
    offset: float = 0.0,
    seed: int = 0,
) -> np.ndarray:
    """A seat's market orders in the replay of ``tape`` answering by ``model``: one every
    ``every`` seconds over ``hours`` from ``offset`` on, on a random side, of a size drawn from
    ``sizes`` (lots), the levels they took refilling at their times: the mid's move in each's
    direction ``l`` of the tape's market orders after it (ticks, (orders, lags); NaN where
    unread), read against the tape's own mid at the same moments, so that the tape's own
    moves cancel out."""
    replay = MarketReplay(tape, response=model)
    book, seat = OrderBook(recycle=True), 0
    rng = np.random.default_rng(seed)
    replay.start(book, 1, rng)
    replayer = replay.replayer
    lags = len(model.kernel)
    time, starts, tape_mid = tape.messages["time"], market_order_starts(tape.messages), tape.mids
    times = np.arange(hours[0] + offset, hours[1], every)
    signs = np.where(rng.random(len(times)) < 0.5, 1, -1)
    lots = rng.choice(sizes, len(times))
    moves = np.full((len(times), lags), np.nan)
    start_gap, live = np.zeros(len(times)), []  # live: [probe, lag]

    k = 0
    for ref in range(len(time)):
        while replayer.next_release <= time[ref]:  # levels refilling before the message
            book.now = replayer.next_release
            replayer.release(book)
        while k < len(times) and times[k] <= time[ref]:
            book.now = times[k]
            gap = _mid_gap(book, tape_mid, ref)
            book.market(int(signs[k]), int(lots[k]), seat)
            replayer.observe(book)
            if not math.isnan(gap):
                start_gap[k] = gap
                live.append([k, 0])
            k += 1
        if starts[ref] and live:
            gap = _mid_gap(book, tape_mid, ref)
            for p, lag in live:
                moves[p, lag] = signs[p] * (gap - start_gap[p])
            for entry in live:
                entry[1] += 1
            live = [entry for entry in live if entry[1] < lags]
        if k == len(times) and not live:
            break
        book.now = time[ref]
        replayer.handle(book, ref)
    return moves


def mechanical_response(moves: np.ndarray) -> np.ndarray:
    """The mid's move (ticks, (lags,)) in the direction of a probe's orders (`probe`'s
    ``moves``, (n, lags)), each lag's mean taken over the lags within half of it either side
    (the response is smooth in the lag, its noise is not): what the replay's own mechanics
    make when its kernel is 0."""
    lags = moves.shape[1]
    out = np.zeros(lags)
    for lag in range(lags):
        window = moves[:, lag - lag // 2 : lag + lag // 2 + 1]
        if np.isfinite(window).any():
            out[lag] = np.nanmean(window)
    return out


def _mid_gap(book: OrderBook, tape_mid: np.ndarray, ref: int) -> float:
    """The book's mid less the tape's just before message ``ref`` (ticks; NaN while either
    has a side empty)."""
    mid = book.mid()
    before = tape_mid[ref - 1] if ref > 0 else math.nan
    return math.nan if mid is None else mid - before


def estimate_response(
    tape: Tape,
    first: float | None = None,
    last: float | None = None,
    *,
    concavity: float = CONCAVITY,
    lags: int = LAGS,
    seed: int = 0,
) -> ResponseModel:
    """The `ResponseModel` of ``tape`` estimated from its hours ``first`` to ``last``
    (seconds after midnight; None: the tape's first, last message): the bare propagator
    (`bare_propagator`, fitted by `fit_kernel`) of its market orders less the replay's own
    mechanics (`mechanical_response`), the size whose impact is their average one, the
    refill times (`refill_times`). A `UserError` when the hours
    hold fewer than `MIN_ORDERS` market orders."""
    if tape.book is None:
        raise UserError(f"{tape.source}: a responsive replay needs the tape's orderbook rows")
    times = tape.messages["time"]
    first = float(times[0]) if first is None else first
    last = float(times[-1]) + 1 if last is None else last
    orders = market_orders(tape, first, last)
    lags = min(lags, (len(orders) - 1) // 3)
    if len(orders) < MIN_ORDERS:
        raise UserError(
            f"{tape.source}: {len(orders)} market orders (both sides quoted) in the hours "
            f"{_clock(first)}-{_clock(last)}, too few to estimate how the tape answers a "
            f"trade: the responsive replay needs at least {MIN_ORDERS}"
        )
    propagator = fit_kernel(bare_propagator(orders.sign, orders.mid, lags))
    emptied, thinned = refill_times(tape, orders)
    model = ResponseModel(
        kernel=np.zeros(lags),
        reference=float(np.mean(orders.size.astype(float) ** concavity) ** (1 / concavity)),
        spread=mean_spread(tape, first, last),
        emptied=_quantiles(emptied),
        thinned=_quantiles(thinned),
        concavity=concavity,
        hours=(first, last),
        propagator=propagator,
        mechanical=np.zeros(lags),
        orders=len(orders),
    )
    moves = np.concatenate(
        [
            probe(tape, model, (first, last), orders.size, offset=o, seed=seed + j)
            for j, o in enumerate(np.arange(PASSES) * PROBE_EVERY / PASSES)
        ]
    )
    mechanical = mechanical_response(moves)
    return replace(model, kernel=np.maximum(propagator - mechanical, 0.0), mechanical=mechanical)


def size_scale(orders: MarketOrders, edges: np.ndarray) -> np.ndarray:
    """Each size bucket's (``edges``, `size_edges`) response one order on over all the
    orders' (their mean move in their direction), shape (buckets,): the bare propagator's
    size dependence, G(l, bucket) = G(l) size_scale[bucket] (1 each when the orders show no
    response)."""
    bucket = np.searchsorted(edges, orders.size, side="left")
    pooled = _lag_one(orders, np.ones(len(orders), bool))
    scale = np.array([_lag_one(orders, bucket == b) for b in range(len(edges) + 1)])
    return scale / pooled if pooled > 0 else np.ones(len(scale))


def _lag_one(orders: MarketOrders, chosen: np.ndarray) -> float:
    """The mean move one order on (ticks) after the ``chosen`` orders, in their direction."""
    following = np.append(orders.mid[1:], np.nan)
    moved = orders.sign * (following - orders.mid)
    moved = moved[chosen & np.isfinite(moved)]
    return float(moved.mean()) if len(moved) else math.nan


def _clock(seconds: float) -> str:
    hours, rest = divmod(int(round(seconds)), 3600)
    return f"{hours:02d}:{rest // 60:02d}"


@lru_cache(maxsize=8)
def responsive_model(
    tape: Tape, hours: tuple[float, float] | None, concavity: float
) -> ResponseModel:
    """`estimate_response` of ``tape`` over ``hours`` (None: the whole tape), once per
    process."""
    first, last = hours if hours is not None else (None, None)
    return estimate_response(tape, first, last, concavity=concavity)
