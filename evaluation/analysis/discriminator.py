"""A classifier two-sample test: can a classifier tell a market's windows from a real day's?

Each day is cut into windows (one minute, ten seconds) from its open, and each window is
described by what a level-1 file shows of it (`window_features`), plus the depth behind the
touch when both days carry deeper levels. A gradient-boosted classifier
(scikit-learn's ``HistGradientBoostingClassifier``) learns real from simulated under
cross-validation grouped by contiguous blocks of the day (and by simulated day), so that a
window is always scored by a classifier that never saw its neighbours; the out-of-fold
scores give the ROC AUC (0.5: the classifier cannot tell them apart; 1: it always can) and a
bootstrap interval over blocks. Features that separate the two on their own are named with
their single-feature AUC and their medians on both sides.

What an AUC means is relative: a real day is one draw of the market's luck, so even a
market's own days are told from each other somewhat. `own_day_auc` measures that floor:
one of a market's days against its others, exactly as the real day is tested.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from tradearena.evaluation.analysis.realism import CANCELS, TRADES, DayView, grid_mid

__all__ = [
    "BLOCK_SECONDS",
    "FOLDS",
    "MIN_WINDOWS",
    "Discrimination",
    "auc",
    "classifier_test",
    "day_windows",
    "feature_aucs",
    "feature_columns",
    "own_day_test",
    "window_features",
]

BLOCK_SECONDS = 1800.0
"""Cross-validation blocks: contiguous 30 minutes of a day (shorter for a short day, see
`day_windows`)."""
FOLDS = 5
"""Cross-validation folds."""
MIN_WINDOWS = 30
"""Fewest windows a side (real, simulated) a test runs on."""
BOOTSTRAP = 200
"""Bootstrap replicates of the AUC's interval (blocks resampled on each side)."""


# ------------------------------------------------------------------------------ features
def _window_index(times: np.ndarray, open: float, seconds: float, n: int) -> np.ndarray:
    """The window of each time (``-1`` outside the ``n`` full windows from ``open``)."""
    index = np.floor((times - open) / seconds).astype(np.int64)
    return np.where((index >= 0) & (index < n), index, -1)


def _per_window(index: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """Sum of ``values`` per window (``index`` -1 left out), shape (n,)."""
    keep = index >= 0
    return np.bincount(index[keep], weights=values[keep], minlength=n)[:n]


def _row_mean(a: np.ndarray) -> np.ndarray:
    """Mean of each row's finite values (NaN for a row with none), shape (rows,)."""
    finite = np.isfinite(a)
    return _ratio(np.where(finite, a, 0.0).sum(axis=1), finite.sum(axis=1).astype(float))


def _row_extreme(a: np.ndarray, largest: bool) -> np.ndarray:
    """Largest (or smallest) finite value of each row (NaN for a row with none)."""
    fill = -np.inf if largest else np.inf
    out = (np.max if largest else np.min)(np.where(np.isfinite(a), a, fill), axis=1)
    return np.where(np.isfinite(out), out, np.nan)


def _ratio(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(b > 0, a / b, np.nan)


def _interarrival_cv(times: np.ndarray, index: np.ndarray, n: int) -> np.ndarray:
    """Per window, the CV (sd over mean, ddof 0) of the gaps between its distinct message
    times; NaN below 2 gaps."""
    keep = index >= 0
    t, w = times[keep], index[keep]
    distinct = (np.diff(t, prepend=-np.inf) > 0) | (np.diff(w, prepend=-1) != 0)
    t, w = t[distinct], w[distinct]
    same = np.diff(w) == 0
    gaps, where = np.diff(t)[same], w[1:][same]
    count = np.bincount(where, minlength=n)[:n].astype(float)
    total = np.bincount(where, weights=gaps, minlength=n)[:n]
    squares = np.bincount(where, weights=gaps * gaps, minlength=n)[:n]
    mean = _ratio(total, count)
    with np.errstate(invalid="ignore"):
        sd = np.sqrt(np.maximum(_ratio(squares, count) - mean * mean, 0.0))
    return np.where(count >= 2, _ratio(sd, mean), np.nan)


def window_features(view: DayView, seconds: float) -> pd.DataFrame:
    """One row per full window of ``seconds`` from ``view.open`` (column ``start``, seconds
    after midnight) and what a level-1 file shows of it:

    ``mid_return_bp`` (log return of the mid from its first value on the window's 1-s grid
    to the window's end, x 10^4), ``range_bp`` (highest less lowest mid on that grid over
    the first, x 10^4), ``rv_1s_bp2`` (sum
    of squared 1-s log returns of the mid, bp^2), ``spread_mean_ticks`` (on the 1-s grid),
    ``spread_max_ticks`` (after any message, and at the window's start), ``depth_touch``
    (mean of bid and ask size at the touch on the 1-s grid, shares), ``messages``,
    ``trades`` (executions), ``volume`` (shares executed), ``trade_size_mean``,
    ``round_lot_share`` (of trades, multiples of 100), ``cancel_share`` (of messages),
    ``interarrival_cv`` (of the gaps between distinct message times), ``trade_imbalance``
    ((buyer- less seller-initiated volume) / volume), ``mid_changes`` (messages after which
    the mid moved). With deeper levels (``view.depth``): ``depth_l{k}`` (mean size at level k,
    both sides, k >= 2) and ``book_span_ticks`` (ask less bid at the deepest level shown).
    A quantity with nothing to measure (no trade, no quote) is NaN."""
    n = int((view.close - view.open) // seconds)
    if n < 1:
        return pd.DataFrame({"start": np.empty(0)})
    starts = view.open + seconds * np.arange(n)
    index = _window_index(view.time, view.open, seconds, n)
    ones = np.ones(len(view.time))
    trade = np.isin(view.kind, TRADES)
    cancel = np.isin(view.kind, CANCELS)
    size = view.size.astype(float)
    messages = _per_window(index, ones, n)
    trades = _per_window(index, trade.astype(float), n)
    volume = _per_window(index, np.where(trade, size, 0.0), n)
    buyer = np.where(trade, -view.direction * size, 0.0)  # a resting sell hit: buyer-initiated
    mid = view.mid
    moved = np.r_[False, np.abs(np.diff(mid)) > 0] & np.isfinite(mid)

    # the 1-s grid: seconds.open .. close; its points in window k are k*s .. (k+1)*s - 1
    grid_times, grid = grid_mid(view, 1.0)
    per = int(round(seconds))
    points = grid[: n * per + 1]
    returns = np.diff(np.log(points)) * 1e4
    squared = np.where(np.isfinite(returns), returns * returns, 0.0)
    rv = squared.reshape(n, per).sum(axis=1)
    # the book after the last message before each grid point; before the first (or on a day
    # without any), the NaN appended after the last
    at = np.searchsorted(view.time, grid_times[: n * per], side="right") - 1
    state = np.where(at >= 0, at, len(view.time))
    spread = np.append(view.ask - view.bid, np.nan)[state].reshape(n, per)
    touch = np.append((view.bid_size + view.ask_size) / 2.0, np.nan)[state]
    window_mid = points[:-1].reshape(n, per)
    defined_mid = np.isfinite(window_mid)
    first_mid = np.where(
        defined_mid.any(axis=1), window_mid[np.arange(n), defined_mid.argmax(axis=1)], np.nan
    )
    last_mid = points[per::per]
    with np.errstate(invalid="ignore", divide="ignore", all="ignore"):
        mid_return = np.log(last_mid / first_mid) * 1e4
        with_end = np.c_[window_mid, last_mid]
        mid_range = (_row_extreme(with_end, True) - _row_extreme(with_end, False)) / first_mid
        spread_max = np.fmax(_row_extreme(spread, True), _window_max(index, view.ask - view.bid, n))
        columns = {
            "start": starts,
            "mid_return_bp": mid_return,
            "range_bp": mid_range * 1e4,
            "rv_1s_bp2": np.where(np.isfinite(first_mid), rv, np.nan),
            "spread_mean_ticks": _row_mean(spread),
            "spread_max_ticks": spread_max,
            "depth_touch": _row_mean(touch.reshape(n, per)),
            "messages": messages,
            "trades": trades,
            "volume": volume,
            "trade_size_mean": _ratio(volume, trades),
            "round_lot_share": _ratio(
                _per_window(index, (trade & (view.size % 100 == 0)).astype(float), n), trades
            ),
            "cancel_share": _ratio(_per_window(index, cancel.astype(float), n), messages),
            "interarrival_cv": _interarrival_cv(view.time, index, n),
            "trade_imbalance": _ratio(_per_window(index, buyer, n), volume),
            "mid_changes": _per_window(index, moved.astype(float), n),
        }
        columns |= _depth_features(view, grid_times[: n * per], n, per)
    return pd.DataFrame(columns)


def _window_max(index: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """Per window, the largest finite value (NaN with none)."""
    out = np.full(n, -np.inf)
    keep = (index >= 0) & np.isfinite(values)
    np.maximum.at(out, index[keep], values[keep])
    return np.where(np.isfinite(out), out, np.nan)


def _depth_features(view: DayView, grid: np.ndarray, n: int, per: int) -> dict[str, np.ndarray]:
    """``depth_l{k}`` (k >= 2) and ``book_span_ticks`` from ``view.depth`` on the 1-s grid;
    nothing for a level-1 view."""
    if view.depth is None or view.depth.shape[1] < 8:
        return {}
    at = np.searchsorted(view.depth_time, grid, side="right") - 1
    rows = view.depth[np.maximum(at, 0)]
    rows[at < 0] = np.nan  # a fancy-indexed copy: the view's depth is untouched
    levels = rows.shape[1] // 4
    out = {}
    for k in range(1, levels):
        both = (rows[:, 4 * k + 1] + rows[:, 4 * k + 3]) / 2.0
        out[f"depth_l{k + 1}"] = _row_mean(both.reshape(n, per))
    last = 4 * (levels - 1)
    ask, bid = rows[:, last], rows[:, last + 2]
    out["book_span_ticks"] = _row_mean((ask - bid).reshape(n, per))
    return out


def day_windows(views: Sequence[DayView], seconds: float, label: int) -> pd.DataFrame:
    """`window_features` of every day in ``views``, with ``label`` (1 simulated, 0 real),
    ``day`` (its index) and ``group``, the cross-validation block ``(label, day, block)``
    as one integer: contiguous `BLOCK_SECONDS` of the day (a tenth of the day when that is
    shorter, and never less than a window)."""
    frames = []
    for day, view in enumerate(views):
        frame = window_features(view, seconds)
        block = max(min(BLOCK_SECONDS, (view.close - view.open) / (2 * FOLDS)), seconds)
        blocks = ((frame["start"] - view.open) // block).astype(np.int64)
        frame["label"], frame["day"] = label, day
        frame["group"] = (label * 100_000 + day) * 1000 + blocks
        frames.append(frame)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


# -------------------------------------------------------------------------------- the test
def auc(positive: np.ndarray, negative: np.ndarray) -> float:
    """The ROC AUC of scores: P(a positive's score > a negative's) + P(tie) / 2, the
    Mann-Whitney statistic over ``len(positive) * len(negative)``; NaN when either is
    empty. NaN scores are left out."""
    positive = positive[~np.isnan(positive)]
    negative = negative[~np.isnan(negative)]
    if not (len(positive) and len(negative)):
        return math.nan
    from scipy.stats import rankdata

    ranks = rankdata(np.concatenate([positive, negative]))
    n = len(positive)
    return float((ranks[:n].sum() - n * (n + 1) / 2) / (n * len(negative)))


def feature_aucs(windows: pd.DataFrame, features: Sequence[str]) -> pd.DataFrame:
    """Per feature: ``auc`` (P(a simulated window's value > a real one's), `auc`),
    ``separation`` (|auc - 0.5| x 2: 0 none, 1 complete), ``median_real`` and
    ``median_simulated``; sorted by separation, largest first."""
    real = windows[windows["label"] == 0]
    simulated = windows[windows["label"] == 1]
    rows = []
    for name in features:
        a, b = simulated[name].to_numpy(float), real[name].to_numpy(float)
        value = auc(a, b)
        rows.append(
            {
                "feature": name,
                "auc": value,
                "separation": abs(value - 0.5) * 2,
                "median_real": float(np.nanmedian(b)) if np.isfinite(b).any() else math.nan,
                "median_simulated": float(np.nanmedian(a)) if np.isfinite(a).any() else math.nan,
            }
        )
    table = pd.DataFrame(rows)
    return table.sort_values("separation", ascending=False, ignore_index=True)


@dataclass(frozen=True)
class Discrimination:
    """A classifier two-sample test: ``auc`` of the out-of-fold scores with its bootstrap
    interval (``low``, ``high``, 95%), the windows on each side (``real``, ``simulated``),
    and ``features`` (`feature_aucs`)."""

    auc: float
    low: float
    high: float
    real: int
    simulated: int
    features: pd.DataFrame


def feature_columns(windows: pd.DataFrame) -> list[str]:
    """The feature columns of `day_windows` frames (every column but the bookkeeping)."""
    return [c for c in windows.columns if c not in ("start", "label", "day", "group")]


def classifier_test(
    windows: pd.DataFrame, *, seed: int = 0, folds: int = FOLDS, bootstrap: int = BOOTSTRAP
) -> Discrimination:
    """Tell ``windows`` (`day_windows` frames of both labels, concatenated) apart:
    out-of-fold scores of a ``HistGradientBoostingClassifier`` (default settings, balanced
    class weights) under ``StratifiedGroupKFold`` over the ``group`` blocks, their AUC, and
    its percentile interval over ``bootstrap`` resamples of the blocks of each side.
    ValueError (naming the count) below `MIN_WINDOWS` windows a side or ``folds`` blocks."""
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.model_selection import StratifiedGroupKFold

    counts = windows["label"].value_counts()
    real, simulated = int(counts.get(0, 0)), int(counts.get(1, 0))
    if min(real, simulated) < MIN_WINDOWS:
        raise ValueError(
            f"the classifier needs at least {MIN_WINDOWS} windows a side; got {real} real and "
            f"{simulated} simulated"
        )
    groups = windows["group"].to_numpy()
    for label in (0, 1):
        blocks = len(np.unique(groups[windows["label"].to_numpy() == label]))
        if blocks < 2:
            raise ValueError(f"the classifier needs at least 2 blocks a side; got {blocks}")
    features = feature_columns(windows)
    x = windows[features].to_numpy(float)
    y = windows["label"].to_numpy()
    scores = np.full(len(y), np.nan)
    n_blocks = min(len(np.unique(groups[y == label])) for label in (0, 1))
    splitter = StratifiedGroupKFold(n_splits=min(folds, n_blocks), shuffle=True, random_state=seed)
    for train, test in splitter.split(x, y, groups):
        model = HistGradientBoostingClassifier(class_weight="balanced", random_state=seed)
        model.fit(x[train], y[train])
        scores[test] = model.predict_proba(x[test])[:, 1]
    value = auc(scores[y == 1], scores[y == 0])
    low, high = _block_bootstrap(scores, y, groups, bootstrap, seed)
    return Discrimination(value, low, high, real, simulated, feature_aucs(windows, features))


def _block_bootstrap(
    scores: np.ndarray, labels: np.ndarray, groups: np.ndarray, replicates: int, seed: int
) -> tuple[float, float]:
    """95% percentile interval of the AUC over resamples of each side's blocks."""
    rng = np.random.default_rng(seed)
    sides = []
    for label in (1, 0):
        mine = groups[labels == label]
        values = scores[labels == label]
        blocks = [values[mine == g] for g in np.unique(mine)]
        sides.append(blocks)
    draws = []
    for _ in range(replicates):
        picked = [
            np.concatenate([blocks[i] for i in rng.integers(len(blocks), size=len(blocks))])
            for blocks in sides
        ]
        draws.append(auc(*picked))
    low, high = np.nanpercentile(draws, [2.5, 97.5])
    return float(low), float(high)


def own_day_test(
    views: Sequence[DayView], seconds: float, *, seed: int = 0, bootstrap: int = BOOTSTRAP
) -> Discrimination:
    """The floor of `classifier_test` for a market: its last day in ``views`` taken as the
    real one, against the days before it (ValueError below 2 days)."""
    if len(views) < 2:
        raise ValueError(f"the own-day test needs at least 2 days, got {len(views)}")
    windows = pd.concat(
        [day_windows(views[:-1], seconds, 1), day_windows(views[-1:], seconds, 0)],
        ignore_index=True,
    )
    return classifier_test(windows, seed=seed, bootstrap=bootstrap)
