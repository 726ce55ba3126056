"""Stylized facts of one trading day as a level-1 order-book file shows it, and distances
between days.

A `DayView` holds what a level-1 LOBSTER file shows: one row per message (its time, type, size
and side) and the best bid and ask after it. Every fact is a function of a `DayView` alone, so a
real day and a simulated one are measured by the same code. Conventions:

- The mid after a message is (bid + ask) / 2 in ticks, undefined (NaN) while a side is empty.
- The mid on a grid of ``step`` seconds: grid times ``open + k step`` for ``k = 0 ..
  floor((close - open) / step)``; at each, the mid after the last message at or before it whose
  mid is defined (NaN before the first). Returns are ``log(mid_k / mid_{k-1})`` of consecutive
  grid points; those with an undefined end are dropped. Sample moments are population moments
  (``ddof=0``) unless a docstring says otherwise.
- Trades are the executions (types 4 visible and 5 hidden); a message of type 1 is a new order,
  types 2 and 3 are cancels (partial and whole).
- A fact the day is too short for (fewer returns than a lag, a bucket past the close) is NaN;
  `not_available` names them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "ABS_ACF_LAGS",
    "MIN_TAIL_RETURNS",
    "BUCKET_SECONDS",
    "PROFILE_BUCKETS",
    "RETURN_ACF_LAGS",
    "DayView",
    "acf",
    "count_dispersion",
    "day_facts",
    "day_range_pct",
    "distribution_distances",
    "excess_kurtosis",
    "fact_distance",
    "grid_mid",
    "hill_index",
    "hourly_move_mean_bp",
    "interarrival_cv",
    "interarrivals",
    "interval",
    "ks_distance",
    "log_returns",
    "mean_facts",
    "not_available",
    "order_flow",
    "profiles",
    "return_facts",
    "samples",
    "spread_on_grid",
    "summary_score",
    "tail_share",
    "trade_sizes",
    "volume_last30_ratio",
    "w1_distance",
]

BUCKET_SECONDS = 1800.0
"""Width of an intraday profile's bucket: 30 minutes."""
PROFILE_BUCKETS = 13
"""Buckets reported as facts: the 13 half hours of a 09:30-16:00 session."""
RETURN_ACF_LAGS = 5
"""Lags (minutes) of the autocorrelation of 1-min returns."""
ABS_ACF_LAGS = 20
"""Lags (minutes) of the autocorrelation of absolute 1-min returns."""
MIN_TAIL_RETURNS = 20
"""Fewest returns whose kurtosis, tail share and tail index are reported."""
TRADES = (4, 5)
"""Message types counted as trades (fills): visible and hidden executions."""
CANCELS = (2, 3)
"""Message types counted as cancels: partial and whole."""


@dataclass(frozen=True, eq=False)
class DayView:
    """One trading day as a level-1 file shows it; every array has shape (n,), in time order.

    time: seconds after midnight (float64). kind: LOBSTER event type (1 new, 2 partial cancel,
    3 delete, 4 visible execution, 5 hidden execution, 6 cross, 7 halt). size: shares (or
    lots). direction: +1 buy, -1 sell (the resting order's side). bid, ask: best prices after
    the message, in ticks (float64, integer-valued; NaN while that side is empty); bid_size,
    ask_size: shares there (0 when empty). tick_size: dollars per tick on one share (on one
    lot of a recording whose sizes are lots). open, close: the
    session, seconds after midnight (``open <= time < close`` or ``<=`` close). depth,
    depth_time: optional, the book's levels after every message that changed any of them,
    shape (m, 4 L) in a LOBSTER orderbook file's column order (ask price, ask size, bid
    price, bid size per level; prices in ticks, NaN where a level is empty) and their times
    (m,); None for a level-1 view.
    """

    time: np.ndarray
    kind: np.ndarray
    size: np.ndarray
    direction: np.ndarray
    bid: np.ndarray
    ask: np.ndarray
    bid_size: np.ndarray
    ask_size: np.ndarray
    tick_size: float
    open: float
    close: float
    depth: np.ndarray | None = None
    depth_time: np.ndarray | None = None

    def __post_init__(self) -> None:
        n = len(self.time)
        for name in ("kind", "size", "direction", "bid", "ask", "bid_size", "ask_size"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"{name} has {len(getattr(self, name))} rows, time has {n}")
        if (self.depth is None) != (self.depth_time is None) or (
            self.depth is not None and len(self.depth) != len(self.depth_time)
        ):
            raise ValueError("depth and depth_time go together, with one row per time")
        if not self.close > self.open:
            raise ValueError(f"close ({self.close}) must be after open ({self.open})")

    @property
    def minutes(self) -> float:
        """Length of the session in minutes."""
        return (self.close - self.open) / 60.0

    @property
    def levels(self) -> int:
        """Book levels the view shows on each side (1 without ``depth``)."""
        return 1 if self.depth is None else self.depth.shape[1] // 4

    @property
    def mid(self) -> np.ndarray:
        """Mid after each message, ticks (NaN while a side is empty)."""
        return (self.bid + self.ask) / 2.0


# ------------------------------------------------------------------------------ returns
def grid_mid(view: DayView, step: float) -> tuple[np.ndarray, np.ndarray]:
    """(grid times in seconds after midnight, mid in ticks) on the grid ``open + k step``,
    k = 0 .. floor((close - open) / step): the mid after the last message at or before each
    grid time whose mid is defined; NaN before the first such message."""
    grid = view.open + step * np.arange(int((view.close - view.open) // step) + 1)
    mid = view.mid
    defined = ~np.isnan(mid)
    times, mids = view.time[defined], mid[defined]
    index = np.searchsorted(times, grid, side="right") - 1
    out = np.where(index >= 0, mids[np.maximum(index, 0)] if len(mids) else np.nan, np.nan)
    return grid, out


def log_returns(view: DayView, step: float) -> tuple[np.ndarray, np.ndarray]:
    """(log returns of the mid over consecutive grid points of ``step`` seconds, the start time
    of each, seconds after midnight), shape (m,) each; returns with an undefined end dropped."""
    grid, mid = grid_mid(view, step)
    returns = np.diff(np.log(mid))
    keep = np.isfinite(returns)
    return returns[keep], grid[:-1][keep]


def excess_kurtosis(x: np.ndarray) -> float:
    """m4 / m2^2 - 3 with population moments (0 for a normal sample), the plain moment ratio,
    not the bias-corrected G2 of pandas' ``Series.kurt``; NaN below 4 values or with no
    spread."""
    if len(x) < 4:
        return math.nan
    d = x - x.mean()
    m2 = np.mean(d * d)
    return float(np.mean(d**4) / m2**2 - 3.0) if m2 > 0 else math.nan


def tail_share(x: np.ndarray) -> float:
    """Share of values more than 3 sample sd (ddof=1) from the mean (0.0027 for a normal
    sample); NaN below 2 values or with no spread."""
    if len(x) < 2:
        return math.nan
    sd = x.std(ddof=1)
    return float(np.mean(np.abs(x - x.mean()) > 3 * sd)) if sd > 0 else math.nan


def hill_index(x: np.ndarray, fraction: float = 0.1) -> float:
    """Hill estimate of the tail index of |x|: with the nonzero |x| sorted descending
    (X_1 >= X_2 >= ...) and k = floor(fraction * their count), ``k / sum_{i<=k} log(X_i /
    X_{k+1})`` (alpha of a Pareto tail P(|X| > x) ~ x^-alpha). NaN when k < 2. Returns that
    take a few values only (a mid that moves by a tick or two) tie at the top and give a large,
    unstable estimate: no tail to speak of."""
    a = np.sort(np.abs(x[x != 0]))[::-1]
    k = int(fraction * len(a))
    if k < 2:
        return math.nan
    logs = np.log(a[:k] / a[k])
    total = logs.sum()
    return float(k / total) if total > 0 else math.nan


def acf(x: np.ndarray, lags: int) -> np.ndarray:
    """Sample autocorrelation at lags 1..``lags``, shape (lags,): ``sum_t (x_t - m)(x_{t+l} -
    m) / sum_t (x_t - m)^2`` with m the mean of all of x (the usual estimator, as
    statsmodels' acf, not pandas' ``Series.autocorr``, the Pearson correlation of the shifted
    pairs, which differs by O(lag / n)); NaN at lags >= len(x) and when x has no spread."""
    out = np.full(lags, np.nan)
    d = x - x.mean() if len(x) else x
    denominator = float(np.dot(d, d))
    if denominator <= 0:
        return out
    for lag in range(1, min(lags, len(x) - 1) + 1):
        out[lag - 1] = np.dot(d[:-lag], d[lag:]) / denominator
    return out


def return_facts(view: DayView, minutes: int) -> dict[str, float]:
    """Facts of the ``minutes``-min log returns of the mid: ``return_sd_{m}min_bp`` (sample
    sd, ddof=1, x 10^4), ``return_sd_{m}min_ticks`` (sample sd of the mid's changes over the
    same grid, ticks), ``return_kurtosis_{m}min`` (`excess_kurtosis`),
    ``return_tail_share_{m}min`` (`tail_share`), ``return_hill_{m}min`` (`hill_index`); the
    three tail facts NaN below `MIN_TAIL_RETURNS` returns (a handful of returns shows no
    tail)."""
    returns, _ = log_returns(view, 60.0 * minutes)
    _, mid = grid_mid(view, 60.0 * minutes)
    changes = np.diff(mid)
    changes = changes[np.isfinite(changes)]
    two, tails = len(returns) >= 2, len(returns) >= MIN_TAIL_RETURNS
    return {
        f"return_sd_{minutes}min_bp": float(returns.std(ddof=1) * 1e4) if two else math.nan,
        f"return_sd_{minutes}min_ticks": float(changes.std(ddof=1)) if two else math.nan,
        f"return_kurtosis_{minutes}min": excess_kurtosis(returns) if tails else math.nan,
        f"return_tail_share_{minutes}min": tail_share(returns) if tails else math.nan,
        f"return_hill_{minutes}min": hill_index(returns) if tails else math.nan,
    }


# ------------------------------------------------------------------------------ profiles
def _bucket(view: DayView, times: np.ndarray) -> np.ndarray:
    return ((times - view.open) // BUCKET_SECONDS).astype(np.int64)


def _n_buckets(view: DayView) -> int:
    return math.ceil((view.close - view.open) / BUCKET_SECONDS)


def profiles(view: DayView) -> tuple[np.ndarray, np.ndarray]:
    """(volume, volatility) per 30-min bucket from the open, shape (ceil(minutes / 30),) each:
    volume, the bucket's share of the day's traded shares (trades: types 4 and 5); volatility,
    the root mean square of the 1-min returns starting in the bucket, bp (NaN without one)."""
    n = _n_buckets(view)
    trades = np.isin(view.kind, TRADES)
    volume = np.bincount(
        np.clip(_bucket(view, view.time[trades]), 0, n - 1),
        weights=view.size[trades].astype(float),
        minlength=n,
    )
    total = volume.sum()
    volume = volume / total if total > 0 else np.full(n, np.nan)
    returns, starts = log_returns(view, 60.0)
    buckets = _bucket(view, starts)
    squares = np.bincount(buckets, weights=returns**2, minlength=n)
    counts = np.bincount(buckets, minlength=n)
    with np.errstate(invalid="ignore", divide="ignore"):
        volatility = np.sqrt(squares / counts) * 1e4
    return volume, volatility


def volume_last30_ratio(view: DayView) -> float:
    """Traded shares in the session's last 30 minutes over the mean per 30 minutes (the day's
    traded shares x 1800 / session seconds); NaN for a session under an hour or without
    trades."""
    if view.close - view.open < 2 * BUCKET_SECONDS:
        return math.nan
    trades = np.isin(view.kind, TRADES)
    sizes, times = view.size[trades].astype(float), view.time[trades]
    total = sizes.sum()
    if total <= 0:
        return math.nan
    last = sizes[times >= view.close - BUCKET_SECONDS].sum()
    return float(last / (total * BUCKET_SECONDS / (view.close - view.open)))


# ------------------------------------------------------------------------- spread, trades
def spread_on_grid(view: DayView) -> np.ndarray:
    """Spread (ask - bid, ticks) on the 1-s grid ``open + k``, k = 0 .. floor(close - open)
    - 1: the quote after the last message at or before each second (a time-weighted sample);
    seconds before the first two-sided quote or with a side empty are dropped."""
    grid = view.open + np.arange(int(view.close - view.open))
    index = np.searchsorted(view.time, grid, side="right") - 1
    index = index[index >= 0]
    spread = view.ask[index] - view.bid[index]
    return spread[np.isfinite(spread)]


def trade_sizes(view: DayView) -> np.ndarray:
    """Sizes of the trades (types 4 and 5: one per resting order filled), shares."""
    return view.size[np.isin(view.kind, TRADES)].astype(float)


def order_flow(view: DayView) -> dict[str, float]:
    """Messages per minute of the session at the best levels: ``new_orders_per_min`` (type 1),
    ``cancels_per_min`` (types 2, 3), ``fills_per_min`` (types 4, 5), and
    ``cancel_to_order`` (cancels / new orders; NaN without new orders)."""
    new = np.count_nonzero(view.kind == 1)
    cancels = np.count_nonzero(np.isin(view.kind, CANCELS))
    fills = np.count_nonzero(np.isin(view.kind, TRADES))
    return {
        "new_orders_per_min": new / view.minutes,
        "cancels_per_min": cancels / view.minutes,
        "fills_per_min": fills / view.minutes,
        "cancel_to_order": cancels / new if new else math.nan,
    }


# ------------------------------------------------------------------------------- arrivals
def interarrivals(view: DayView) -> np.ndarray:
    """Seconds between consecutive distinct message times (messages stamped at one instant,
    such as the fills of one sweeping order, count as one arrival), shape (distinct - 1,)."""
    return np.diff(np.unique(view.time))


def interarrival_cv(view: DayView) -> float:
    """Coefficient of variation (sd, ddof=0, over mean) of `interarrivals`: 1 for a Poisson
    process; NaN below 2 gaps."""
    gaps = interarrivals(view)
    return float(gaps.std() / gaps.mean()) if len(gaps) >= 2 and gaps.mean() > 0 else math.nan


def count_dispersion(view: DayView, window: float = 10.0) -> float:
    """Variance (ddof=1) over mean of the message counts (every message) in consecutive
    ``window``-second bins from the open (full bins only): 1 for a Poisson process; NaN below
    2 bins or without messages."""
    bins = int((view.close - view.open) // window)
    if bins < 2:
        return math.nan
    index = ((view.time - view.open) // window).astype(np.int64)
    counts = np.bincount(index[(index >= 0) & (index < bins)], minlength=bins)
    mean = counts.mean()
    return float(counts.var(ddof=1) / mean) if mean > 0 else math.nan


# ---------------------------------------------------------------------------------- range
def day_range_pct(view: DayView) -> float:
    """(highest - lowest mid after any message) / the first defined mid, percent."""
    mid = view.mid[~np.isnan(view.mid)]
    return float((mid.max() - mid.min()) / mid[0] * 100) if len(mid) else math.nan


def hourly_move_mean_bp(view: DayView) -> float:
    """Mean absolute log return of the mid over consecutive 60-min grid points, bp; NaN for a
    session under an hour."""
    returns, _ = log_returns(view, 3600.0)
    return float(np.abs(returns).mean() * 1e4) if len(returns) else math.nan


# ---------------------------------------------------------------------------------- facts
def _median_or_nan(x: np.ndarray) -> float:
    return float(np.median(x)) if len(x) else math.nan


def day_facts(view: DayView) -> dict[str, float]:
    """Every scalar fact of the day, by stable name (NaN where the day is too short):

    returns (`return_facts`, m = 1 and 5); ``acf_return_1min_lag{1..5}`` and
    ``acf_abs_return_1min_lag{1..20}`` (`acf` of the 1-min returns and of their absolute
    values); ``acf_abs_deseasoned_1min_lag{1..20}`` (`acf` of |r| / the volatility profile of
    its bucket); ``volume_profile_{00..12}`` and ``volatility_profile_{00..12}``
    (`profiles`, bucket i starting 30 i min after the open); ``volume_last30_ratio``;
    ``spread_mean_ticks`` and ``spread_median_ticks`` (of `spread_on_grid`);
    ``trade_size_mean``, ``trade_size_median`` (shares), ``round_lot_share`` (share of trades
    whose size is a multiple of 100); `order_flow`'s four; ``interarrival_cv``;
    ``count_dispersion_10s``; ``day_range_pct``; ``hourly_move_mean_bp``.
    """
    facts = return_facts(view, 1) | return_facts(view, 5)
    returns, starts = log_returns(view, 60.0)
    absolute = np.abs(returns)
    volume, volatility = profiles(view)
    scale = volatility[_bucket(view, starts)] / 1e4
    with np.errstate(invalid="ignore", divide="ignore"):
        deseasoned = absolute / scale
    deseasoned = deseasoned[np.isfinite(deseasoned)]
    for name, series, lags in (
        ("acf_return_1min", returns, RETURN_ACF_LAGS),
        ("acf_abs_return_1min", absolute, ABS_ACF_LAGS),
        ("acf_abs_deseasoned_1min", deseasoned, ABS_ACF_LAGS),
    ):
        facts |= {f"{name}_lag{i + 1}": float(v) for i, v in enumerate(acf(series, lags))}
    for name, profile in (("volume_profile", volume), ("volatility_profile", volatility)):
        padded = np.full(PROFILE_BUCKETS, np.nan)
        padded[: min(len(profile), PROFILE_BUCKETS)] = profile[:PROFILE_BUCKETS]
        facts |= {f"{name}_{i:02d}": float(v) for i, v in enumerate(padded)}
    facts["volume_last30_ratio"] = volume_last30_ratio(view)
    spread = spread_on_grid(view)
    facts["spread_mean_ticks"] = float(spread.mean()) if len(spread) else math.nan
    facts["spread_median_ticks"] = _median_or_nan(spread)
    sizes = trade_sizes(view)
    facts["trade_size_mean"] = float(sizes.mean()) if len(sizes) else math.nan
    facts["trade_size_median"] = _median_or_nan(sizes)
    facts["round_lot_share"] = float(np.mean(sizes % 100 == 0)) if len(sizes) else math.nan
    facts |= order_flow(view)
    facts["interarrival_cv"] = interarrival_cv(view)
    facts["count_dispersion_10s"] = count_dispersion(view)
    facts["day_range_pct"] = day_range_pct(view)
    facts["hourly_move_mean_bp"] = hourly_move_mean_bp(view)
    return facts


def not_available(facts: Mapping[str, float]) -> list[str]:
    """The names of the facts that are NaN (the day was too short for them), in order."""
    return [name for name, value in facts.items() if math.isnan(value)]


def samples(view: DayView) -> dict[str, np.ndarray]:
    """The day's distributions, compared with `distribution_distances`: ``return_1min_bp``
    (1-min log returns x 10^4), ``spread_ticks`` (`spread_on_grid`), ``trade_size`` (shares),
    ``interarrival_s`` (`interarrivals`, seconds)."""
    returns, _ = log_returns(view, 60.0)
    return {
        "return_1min_bp": returns * 1e4,
        "spread_ticks": spread_on_grid(view),
        "trade_size": trade_sizes(view),
        "interarrival_s": interarrivals(view),
    }


# ------------------------------------------------------------------------------ distances
_BOUNDED = re.compile(r"^(acf_|volume_profile_)|_share")
"""Facts bounded in [-1, 1] (correlations, shares): compared by absolute difference."""
_SIGNED = re.compile(r"^return_kurtosis_")
"""Facts of either sign (excess kurtosis): compared by relative error."""


def fact_distance(name: str, value: float, reference: float) -> float:
    """How far ``value`` is from the ``reference`` day's, dimensionless (0: equal):

    - a correlation or a share (``acf_*``, ``volume_profile_*``, ``*_share*``): the absolute
      difference ``|value - reference|``;
    - an excess kurtosis (either sign): the relative error ``|value - reference| /
      |reference|``;
    - any other fact (positive: sizes, spreads, rates, ratios, sd): the relative error on a
      log scale, ``|ln(value / reference)|`` (about the relative error when small; 1 for a
      factor e either way, so an overshoot weighs as much as an undershoot).

    NaN where either is NaN, or the reference is 0 (or a positive fact is not)."""
    if math.isnan(value) or math.isnan(reference):
        return math.nan
    if _BOUNDED.search(name):
        return abs(value - reference)
    if _SIGNED.search(name):
        return abs(value - reference) / abs(reference) if reference else math.nan
    return abs(math.log(value / reference)) if value > 0 and reference > 0 else math.nan


def _ks_w1(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """(KS statistic, W1 distance) of two samples from the gap ``|F_a - F_b|`` between their
    empirical CDFs, a step function that changes only at the pooled values; NaNs when a
    sample is empty."""
    if not (len(a) and len(b)):
        return math.nan, math.nan
    a, b = np.sort(a), np.sort(b)
    grid = np.sort(np.concatenate([a, b]))
    gaps = np.abs(
        np.searchsorted(a, grid, side="right") / len(a)
        - np.searchsorted(b, grid, side="right") / len(b)
    )
    return float(gaps.max()), float(np.dot(gaps[:-1], np.diff(grid)))


def ks_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sample Kolmogorov-Smirnov statistic, ``sup_x |F_a(x) - F_b(x)|`` of the empirical
    CDFs, in [0, 1]; NaN when a sample is empty."""
    return _ks_w1(a, b)[0]


def w1_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Wasserstein-1 distance between the samples' empirical distributions, ``integral |F_a -
    F_b| dx``, in their unit; NaN when a sample is empty."""
    return _ks_w1(a, b)[1]


def distribution_distances(
    sample: Mapping[str, np.ndarray], reference: Mapping[str, np.ndarray]
) -> dict[str, float]:
    """``ks_{name}`` and ``w1_{name}`` (`ks_distance`, `w1_distance`) for every distribution
    of `samples` in both, in name order."""
    out = {}
    for name in sample.keys() & reference.keys():
        out[f"ks_{name}"], out[f"w1_{name}"] = _ks_w1(sample[name], reference[name])
    return dict(sorted(out.items()))


def _group(name: str) -> str:
    """A fact's family: its name without a lag or bucket suffix (``acf_return_1min``)."""
    return re.sub(r"_(lag\d+|\d\d)$", "", name)


def summary_score(distances: Mapping[str, float]) -> float:
    """Mean over fact families (a name without its ``_lagN`` or ``_NN`` bucket suffix) of the
    family's mean finite distance, so that 20 lags weigh as much as one scalar; 0 is a
    perfect match; NaN when no distance is finite."""
    families: dict[str, list[float]] = {}
    for name, distance in distances.items():
        if math.isfinite(distance):
            families.setdefault(_group(name), []).append(distance)
    if not families:
        return math.nan
    return float(np.mean([np.mean(values) for values in families.values()]))


def interval(values: Iterable[float], level: float = 0.95) -> tuple[float, float]:
    """(low, high) percentiles holding the central ``level`` of the finite ``values`` (over
    simulated days: where one day's fact falls); NaN without any."""
    finite = np.asarray([v for v in values if math.isfinite(v)], dtype=float)
    if not len(finite):
        return math.nan, math.nan
    tail = 50.0 * (1.0 - level)
    low, high = np.percentile(finite, [tail, 100.0 - tail])
    return float(low), float(high)


def mean_facts(days: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Each fact's mean over ``days`` (NaN days left out; NaN when every day is)."""
    out = {}
    for name in days[0]:
        finite = [d[name] for d in days if math.isfinite(d[name])]
        out[name] = float(np.mean(finite)) if finite else math.nan
    return out
