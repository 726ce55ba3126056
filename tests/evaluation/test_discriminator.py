"""The classifier two-sample test: window features against hand-computed values, the AUC
against scikit-learn's, and the known answers (same market: about 0.5; a plainly different
one: about 1; shuffled labels: 0.5)."""

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from tradearena.evaluation.analysis.discriminator import (
    MIN_WINDOWS,
    auc,
    classifier_test,
    day_windows,
    feature_aucs,
    own_day_test,
    window_features,
)
from tradearena.evaluation.analysis.realism import DayView

OPEN = 34_200.0


def toy_day(seed: int, *, rate: float = 2.0, minutes: int = 60, burst: float = 0.0) -> DayView:
    """A day of a simple market: messages at ``rate`` a second (with probability ``burst``
    each message is followed by a second at once, which makes arrivals bursty), a quarter of
    them trades of 100 or 37 shares, the mid a random walk of one tick with probability 0.1
    a message, a spread of 1 or 2 ticks."""
    rng = np.random.default_rng(seed)
    seconds = 60.0 * minutes
    n = rng.poisson(rate * seconds)
    time = np.sort(rng.uniform(OPEN, OPEN + seconds, n))
    if burst:
        echo = time[rng.random(n) < burst]
        time = np.sort(np.r_[time, echo + rng.exponential(0.01, len(echo))])
        time = time[time < OPEN + seconds]
        n = len(time)
    kind = rng.choice([1, 3, 4], size=n, p=[0.5, 0.25, 0.25])
    mid = 10_000 + np.cumsum(rng.choice([-1, 0, 1], size=n, p=[0.05, 0.9, 0.05]))
    half = rng.choice([0.5, 1.0], size=n)
    return DayView(
        time=time,
        kind=kind,
        size=rng.choice([100, 37], size=n),
        direction=rng.choice([-1, 1], size=n),
        bid=mid - half,
        ask=mid + half,
        bid_size=rng.integers(100, 500, n).astype(float),
        ask_size=rng.integers(100, 500, n).astype(float),
        tick_size=0.01,
        open=OPEN,
        close=OPEN + seconds,
    )


def test_auc_is_scikit_learns_with_ties():
    rng = np.random.default_rng(0)
    positive, negative = rng.integers(0, 5, 40).astype(float), rng.integers(0, 4, 70).astype(float)
    expected = roc_auc_score(np.r_[np.ones(40), np.zeros(70)], np.r_[positive, negative])
    assert auc(positive, negative) == pytest.approx(expected, abs=1e-12)
    assert auc(np.array([2.0, 3.0]), np.array([0.0, 1.0])) == 1.0
    assert math.isnan(auc(np.array([]), np.array([1.0])))


def test_window_features_by_hand():
    # two one-minute windows; window 0: a new order, a buy trade (sell resting) of 100 and a
    # sell trade of 50 (buy resting), the mid moving from 100.5 to 101.5 ticks at 30 s
    time = np.array([OPEN + 1, OPEN + 30, OPEN + 30, OPEN + 61, OPEN + 90])
    view = DayView(
        time=time,
        kind=np.array([1, 4, 4, 3, 1]),
        size=np.array([10, 100, 50, 5, 7]),
        direction=np.array([1, -1, 1, 1, 1]),
        bid=np.array([100.0, 101.0, 101.0, 101.0, 101.0]),
        ask=np.array([101.0, 102.0, 102.0, 104.0, 102.0]),
        bid_size=np.full(5, 200.0),
        ask_size=np.full(5, 400.0),
        tick_size=0.01,
        open=OPEN,
        close=OPEN + 120,
    )
    f = window_features(view, 60.0)
    assert list(f["start"]) == [OPEN, OPEN + 60]
    assert list(f["messages"]) == [3, 2]
    assert list(f["trades"]) == [2, 0]
    assert list(f["volume"]) == [150, 0]
    assert f["trade_size_mean"][0] == 75 and math.isnan(f["trade_size_mean"][1])
    assert f["round_lot_share"][0] == 0.5
    assert f["cancel_share"][1] == 0.5
    assert f["trade_imbalance"][0] == pytest.approx((100 - 50) / 150)
    assert list(f["mid_changes"]) == [1, 2]
    # the 1-s grid: mid 100.5 from OPEN+1 to +29, 101.5 from +30; the first second has none
    assert f["mid_return_bp"][0] == pytest.approx(math.log(101.5 / 100.5) * 1e4)
    assert f["rv_1s_bp2"][0] == pytest.approx((math.log(101.5 / 100.5) * 1e4) ** 2)
    assert f["spread_max_ticks"][1] == 3.0  # after the message at +61
    assert f["spread_mean_ticks"][0] == 1.0
    assert f["depth_touch"][0] == 300.0
    assert np.isnan(f["interarrival_cv"]).all()  # one gap a window (30 s holds one time)


def test_a_day_without_messages_has_windows_of_nothing():
    """A simulated day of a market that does nothing: its windows count no message, and what
    they would measure is NaN (it raised an IndexError)."""
    none = np.array([])
    view = DayView(
        time=none,
        kind=none.astype(np.int64),
        size=none.astype(np.int64),
        direction=none.astype(np.int64),
        bid=none,
        ask=none,
        bid_size=none,
        ask_size=none,
        tick_size=0.01,
        open=OPEN,
        close=OPEN + 120,
    )
    f = window_features(view, 60.0)
    assert list(f["start"]) == [OPEN, OPEN + 60]
    assert list(f["messages"]) == [0, 0] and list(f["mid_changes"]) == [0, 0]
    measured = ["spread_mean_ticks", "depth_touch", "interarrival_cv", "rv_1s_bp2"]
    assert f[measured].isna().to_numpy().all()


def test_interarrival_cv_of_a_window():
    time = np.array([OPEN + 1, OPEN + 2, OPEN + 2, OPEN + 5])  # distinct gaps 1 and 3
    view = DayView(
        time=time,
        kind=np.ones(4, np.int64),
        size=np.ones(4, np.int64),
        direction=np.ones(4, np.int64),
        bid=np.full(4, 100.0),
        ask=np.full(4, 101.0),
        bid_size=np.ones(4),
        ask_size=np.ones(4),
        tick_size=0.01,
        open=OPEN,
        close=OPEN + 10,
    )
    assert window_features(view, 10.0)["interarrival_cv"][0] == pytest.approx(0.5)


def windows_of(real, simulated, seconds=60.0):
    return pd.concat(
        [day_windows(simulated, seconds, 1), day_windows(real, seconds, 0)], ignore_index=True
    )


def test_a_market_against_more_of_its_own_days_is_hard_to_tell():
    test = classifier_test(windows_of([toy_day(0)], [toy_day(s) for s in range(1, 6)]))
    assert test.auc < 0.65
    assert test.low < 0.5 + 0.2 and test.high > test.auc > test.low
    assert (test.real, test.simulated) == (60, 300)


def test_a_plainly_different_market_is_told_at_once():
    test = classifier_test(
        windows_of([toy_day(0)], [toy_day(s, rate=4.0, burst=0.5) for s in range(1, 6)])
    )
    assert test.auc > 0.97
    top = test.features.feature.iloc[:3].tolist()
    assert {"messages", "interarrival_cv"} & set(top)
    row = test.features.set_index("feature").loc["messages"]
    assert row.median_simulated > 2 * row.median_real


def test_shuffled_labels_give_one_half():
    windows = windows_of([toy_day(0)], [toy_day(s, rate=4.0) for s in range(1, 6)])
    shuffled = windows.assign(
        label=np.random.default_rng(1).permutation(windows["label"].to_numpy())
    )
    test = classifier_test(shuffled)
    assert abs(test.auc - 0.5) < 0.1
    assert test.low < 0.5 < test.high


def test_own_day_floor_and_too_few_windows():
    floor = own_day_test([toy_day(s) for s in range(6)], 60.0)
    assert floor.auc < 0.65 and floor.real == 60
    short = windows_of([toy_day(0, minutes=20)], [toy_day(1)])
    with pytest.raises(ValueError, match=f"at least {MIN_WINDOWS} windows a side; got 20 real"):
        classifier_test(short)


def test_feature_aucs_orders_by_separation():
    windows = pd.DataFrame(
        {"a": [1.0, 2, 3, 4], "b": [4.0, 1, 3, 2], "label": [0, 0, 1, 1], "group": [0, 0, 1, 1]}
    )
    table = feature_aucs(windows, ["b", "a"])
    assert table.feature.tolist() == ["a", "b"]
    assert table.auc.tolist() == [1.0, 0.5]
    assert table.median_real[0] == 1.5 and table.median_simulated[0] == 3.5
