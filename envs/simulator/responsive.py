"""How a replayed tape answers the seats' trades (the responsive replay): the model, which
`envs.simulator.response_estimate` estimates from the tape itself.

The tape's messages go on as recorded; what the seats take from its liquidity is carried
forward (`envs.simulator.seat_response` carries it out):

- the price: the tape's later prices are shifted by the seats' trades through a propagator.
  A trade of the tape's typical size alone moves the mid, ``l`` market orders later, as the
  tape's own market orders move it once the sign autocorrelation of the tape's order flow is
  taken out (the bare propagator of Bouchaud, Gefen, Potters and Wyart, "Fluctuations and
  response in financial markets", Quantitative Finance 2004: a seat's order at a random moment
  carries none of the information the tape's orders carry), less what the replay's own
  mechanics already move it (the volume it took, held out of the levels), in proportion to the
  tape's spread then (the impact of a market order goes with the spread: Wyart, Bouchaud,
  Kockelkoren, Potters and Vettorazzo, "Relation between bid-ask spread, impact and
  volatility in order-driven markets", Quantitative Finance 2008), with its permanent part.
  The seats' trades in one direction add up concavely in their volume, as a latent order book
  gives it (Donier, Bonart, Mastromatteo and Bouchaud, "A fully consistent, minimal model for
  non-linear market impact", Quantitative Finance 2015): ``Q`` lots in a row, however split,
  move the price ``(Q / reference) ** concavity`` times the kernel, the square-root law of
  metaorders at 0.5 (Toth et al., PRX 2011); ``reference`` is the size whose impact is the
  tape's average one (the tape's sizes' mean of ``v ** concavity``, to the ``1 /
  concavity``). A trade against the run is fresh. One day of a tape cannot tell that exponent
  apart from others (its own aggregate impact is too noisy), so it is the model's, stated;
  everything else is the tape's.
- the queues: the volume a trade took from the levels shown is held out of them for a time
  drawn from the tape's own refill times: after its market orders that emptied the best
  level, until the spread had closed again (back to at most its width before the order); after
  those that only thinned it, until the queue at that price was as long again or that price was
  no longer the best. The same side's withdrawal after a trade is the shift: the whole side
  moves away with it.
- orphans: a message of the tape about an order a seat already took follows the replay's rule
  (`envs.simulator.traders.MarketReplay`): a cancel takes the replay's volume at that price
  instead, and an execution whatever rests there, in time priority.

With no seat trading, the replay is the tape exactly.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from tradearena.envs.data.events import market_order_starts
from tradearena.envs.data.tapes import Tape
from tradearena.envs.simulator.seat_response import SeatResponse

__all__ = [
    "CONCAVITY",
    "QUANTILES",
    "SPREAD_WINDOW",
    "ResponseModel",
    "market_order_counts",
    "mean_spread",
    "trailing_spread",
]

CONCAVITY = 0.5
"""How a run of a seat's lots in one direction adds up: ``Q`` lots move the price as
``Q ** CONCAVITY`` (see the module docstring)."""
SPREAD_WINDOW = 1800.0
"""Seconds of the tape before a trade whose mean spread scales its impact."""
QUANTILES = 101
"""Quantiles kept of each refill-time distribution (0, 1%, ..., 100%)."""


def market_order_counts(tape: Tape) -> np.ndarray:
    """The tape's market orders up to and including each message, int64 (n,) (a sweep of
    executions is one order); made once per tape and shared by every replay of it."""
    if tape not in _COUNTS:
        _COUNTS[tape] = np.cumsum(market_order_starts(tape.messages), dtype=np.int64)
    return _COUNTS[tape]


_COUNTS: weakref.WeakKeyDictionary[Tape, np.ndarray] = weakref.WeakKeyDictionary()


def _spread_integral(tape: Tape) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(message times, the integral of the spread over time up to each, the time both sides
    were quoted up to each): the spread (ticks) after a message holds until the next."""
    time = tape.messages["time"].astype(float)
    spread = 2.0 * (tape.book_rows[:, 0] - tape.mids)  # NaN while a side is empty
    held = np.diff(time, append=time[-1])
    quoted = np.isfinite(spread)
    area = np.cumsum(np.where(quoted, spread, 0.0) * held)
    covered = np.cumsum(np.where(quoted, held, 0.0))
    return time, np.r_[0.0, area[:-1]], np.r_[0.0, covered[:-1]]


def mean_spread(tape: Tape, first: float, last: float) -> float:
    """The tape's time-weighted mean spread from ``first`` to ``last`` (seconds after
    midnight), ticks; NaN when no side was quoted then."""
    time, area, covered = _spread_integral(tape)
    at = np.interp([first, last], time, area), np.interp([first, last], time, covered)
    span = at[1][1] - at[1][0]
    return float((at[0][1] - at[0][0]) / span) if span > 0 else float("nan")


def trailing_spread(tape: Tape) -> np.ndarray:
    """The tape's time-weighted mean spread over the `SPREAD_WINDOW` seconds before each
    message (what of it the tape holds), ticks, float64 (n,); made once per tape."""
    if tape not in _TRAILING:
        time, area, covered = _spread_integral(tape)
        back = np.maximum(time - SPREAD_WINDOW, time[0])
        span = covered - np.interp(back, time, covered)
        total = area - np.interp(back, time, area)
        spread = 2.0 * (tape.book_rows[:, 0] - tape.mids)
        fallback = np.nanmean(spread) if np.isfinite(spread).any() else 1.0
        _TRAILING[tape] = np.where(span > 0, total / np.where(span > 0, span, 1.0), fallback)
    return _TRAILING[tape]


_TRAILING: weakref.WeakKeyDictionary[Tape, np.ndarray] = weakref.WeakKeyDictionary()
_SCALES: weakref.WeakKeyDictionary[Tape, dict[float, np.ndarray]] = weakref.WeakKeyDictionary()


@dataclass(frozen=True, eq=False)
class ResponseModel:
    """What the responsive replay of a tape answers the seats with (the module docstring
    says how), estimated from the tape's ``hours`` (first, last: seconds after midnight) by
    `envs.simulator.response_estimate.estimate_response`.

    kernel: float64 (lags,), ticks >= 0: the shift one fresh trade of ``reference`` lots
    makes ``l`` market orders after it, ``kernel[l - 1]``, constant past the last lag, when
    the tape's spread is ``spread`` (ticks: its mean over the hours); emptied, thinned:
    float64 (`QUANTILES`,), seconds: quantiles of the refill times; concavity: how a run of
    lots adds up. For the record: propagator (lags,), the tape's bare propagator (ticks,
    fitted); mechanical (lags,), the replay's own mechanics' part of it (ticks); orders: the
    market orders estimated from."""

    kernel: np.ndarray
    reference: float
    spread: float
    emptied: np.ndarray
    thinned: np.ndarray
    concavity: float
    hours: tuple[float, float]
    propagator: np.ndarray
    mechanical: np.ndarray
    orders: int

    def seat_response(self, tape: Tape) -> SeatResponse:
        """The compiled response of this model to the seats on ``tape``'s messages."""
        scales = _SCALES.setdefault(tape, {})
        if self.spread not in scales:  # made once per tape and spread, shared by its replays
            scales[self.spread] = np.clip(trailing_spread(tape) / self.spread, 0.1, 10.0)
        return SeatResponse(
            self.kernel,
            market_order_counts(tape),
            scales[self.spread],
            self.emptied,
            self.thinned,
            self.reference,
            self.concavity,
        )

    def summary(self) -> dict[str, float]:
        """The model in a few numbers: a fresh trade's shift 1, 10 and 100 market orders on
        and its permanent part (ticks), the reference size (lots), the median refill times
        (seconds)."""
        lags = len(self.kernel)
        return {
            **{f"kernel_{lag}": float(self.kernel[min(lag, lags) - 1]) for lag in (1, 10, 100)},
            "kernel_permanent": float(self.kernel[-1]),
            "reference_lots": self.reference,
            "refill_emptied_median_s": float(np.median(self.emptied)),
            "refill_thinned_median_s": float(np.median(self.thinned)),
            "orders": float(self.orders),
        }
