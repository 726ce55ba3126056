"""The realism scorecard: each statistic against hand-computed series and closed forms, the
level-1 view of a tape, distances, and the ``tradearena realism`` command."""

import math

import numpy as np
import pandas as pd
import pytest
from days import lobster_day  # tests/evaluation/days.py
from matplotlib.figure import Figure
from scipy import stats

from tradearena.envs.data.load import TapeIdentity, load_tape
from tradearena.envs.data.tapes import EMPTY_ASK, EMPTY_BID, MESSAGE_DTYPE, Tape, write_lobster
from tradearena.envs.errors import UserError
from tradearena.envs.simulator.recording import synthetic_tape
from tradearena.envs.simulator.traders import light
from tradearena.evaluation.analysis.discriminator import classifier_test, day_windows
from tradearena.evaluation.analysis.realism import (
    DayView,
    acf,
    count_dispersion,
    day_facts,
    day_range_pct,
    excess_kurtosis,
    fact_distance,
    grid_mid,
    hill_index,
    hourly_move_mean_bp,
    interarrival_cv,
    interval,
    ks_distance,
    log_returns,
    not_available,
    order_flow,
    profiles,
    return_facts,
    spread_on_grid,
    summary_score,
    tail_share,
    trade_sizes,
    volume_last30_ratio,
    w1_distance,
)
from tradearena.evaluation.analysis.realism_plots import return_tails, tail_lines
from tradearena.evaluation.cli.main import main
from tradearena.evaluation.market.realism import (
    discriminate,
    format_verdict,
    measure,
    realism,
    scorecard,
)
from tradearena.evaluation.market.sources import (
    LearnedHours,
    RealismSource,
    clock,
    held_out,
    parse_source,
    tape_view,
)

OPEN = 34_200.0
REQUIRED = [
    "return_sd_1min_bp",
    "return_kurtosis_1min",
    "spread_mean_ticks",
    "day_range_pct",
    "trade_size_mean",
    "interarrival_cv",
]


def view(time, *, kind=None, size=None, bid=None, ask=None, close=None, tick_size=0.01):
    """A DayView of the given rows; by default new orders of 1 share, a one-tick spread at
    100 / 101 ticks, the session from OPEN to the last message."""
    time = np.asarray(time, dtype=float)
    n = len(time)
    kind = np.ones(n, np.int64) if kind is None else np.asarray(kind, np.int64)
    size = np.ones(n, np.int64) if size is None else np.asarray(size, np.int64)
    bid = np.full(n, 100.0) if bid is None else np.asarray(bid, float)
    ask = bid + 1 if ask is None else np.asarray(ask, float)
    return DayView(
        time=time,
        kind=kind,
        size=size,
        direction=np.ones(n, np.int64),
        bid=bid,
        ask=ask,
        bid_size=np.ones(n),
        ask_size=np.ones(n),
        tick_size=tick_size,
        open=OPEN,
        close=float(time[-1]) if close is None else close,
    )


def minute_mids(mids, close_minutes=None):
    """A view whose mid is ``mids[k]`` from one second after minute k: the 1-min grid sees
    mids[k] at minute k + 1 (and nothing at the open)."""
    mids = np.asarray(mids, float)
    times = OPEN + 60 * np.arange(len(mids)) + 1
    close = OPEN + 60 * (close_minutes or len(mids))
    return view(times, bid=mids - 1, ask=mids + 1, close=close)


# ---------------------------------------------------------------------------- returns
def test_grid_mid_is_the_last_mid_at_or_before_each_grid_time():
    v = view([OPEN + 30, OPEN + 60, OPEN + 61], bid=[99, 101, 103], ask=[101, 103, 105])
    grid, mid = grid_mid(v, 30.0)
    assert grid.tolist() == [OPEN, OPEN + 30, OPEN + 60]
    assert np.isnan(mid[0]) and mid[1:].tolist() == [100.0, 102.0]


def test_grid_mid_skips_one_sided_quotes():
    v = view([OPEN + 1, OPEN + 2], bid=[99, np.nan], ask=[101, 105], close=OPEN + 60)
    assert grid_mid(v, 60.0)[1][1] == 100.0


def test_alternating_mid_path_has_hand_computed_moments():
    # mids 100, 102, 100, ... (21 of them): returns a, -a, a, ... (20) with a = ln 1.02
    v = minute_mids([100, 102] * 10 + [100])
    a = math.log(1.02)
    returns, starts = log_returns(v, 60.0)
    np.testing.assert_allclose(returns, [a, -a] * 10)
    assert starts.tolist() == [OPEN + 60 * k for k in range(1, 21)]
    facts = return_facts(v, 1)
    assert facts["return_sd_1min_bp"] == pytest.approx(a * math.sqrt(20 / 19) * 1e4)
    assert facts["return_sd_1min_ticks"] == pytest.approx(2 * math.sqrt(20 / 19))
    assert facts["return_kurtosis_1min"] == pytest.approx(-2.0)
    assert facts["return_tail_share_1min"] == 0.0
    np.testing.assert_allclose(acf(returns, 3), [-0.95, 0.9, -0.85])
    # a handful of returns shows no tail: the tail facts are not reported below 20
    short = return_facts(minute_mids([100, 102, 100, 102, 100]), 1)
    assert short["return_sd_1min_bp"] == pytest.approx(a * math.sqrt(4 / 3) * 1e4)
    assert math.isnan(short["return_kurtosis_1min"]) and math.isnan(short["return_hill_1min"])


def test_acf_of_a_long_ar1_is_its_power_law():
    rng = np.random.default_rng(0)
    noise = rng.standard_normal(200_000)
    x = np.empty_like(noise)
    x[0] = noise[0]
    for t in range(1, len(x)):
        x[t] = 0.6 * x[t - 1] + noise[t]
    np.testing.assert_allclose(acf(x, 3), [0.6, 0.36, 0.216], atol=0.01)


def test_hill_index_of_a_pareto_sample():
    rng = np.random.default_rng(1)
    x = rng.pareto(3.0, 400_000) + 1.0  # P(X > x) = x^-3 from 1
    assert hill_index(x * rng.choice([-1, 1], len(x))) == pytest.approx(3.0, abs=0.05)


def test_kurtosis_and_tail_share_of_normal_and_laplace_samples():
    rng = np.random.default_rng(2)
    normal, laplace = rng.standard_normal(1_000_000), rng.laplace(size=1_000_000)
    assert excess_kurtosis(normal) == pytest.approx(0.0, abs=0.02)
    assert excess_kurtosis(laplace) == pytest.approx(3.0, abs=0.1)
    assert tail_share(normal) == pytest.approx(0.0027, abs=0.0003)
    assert tail_share(laplace) == pytest.approx(math.exp(-3 * math.sqrt(2)), abs=0.001)


# ---------------------------------------------------------------------- spread and trades
def test_spread_on_grid_counts_seconds():
    # spread 1 tick for 10 s, then 3 ticks for 30 s
    v = view([OPEN, OPEN + 10], bid=[100, 99], ask=[101, 102], close=OPEN + 40)
    spread = spread_on_grid(v)
    assert spread.tolist() == [1.0] * 10 + [3.0] * 30
    facts = day_facts(v)
    assert facts["spread_mean_ticks"] == 2.5 and facts["spread_median_ticks"] == 3.0


def test_trade_sizes_and_round_lots():
    v = view(OPEN + np.arange(5.0), kind=[4, 5, 4, 5, 1], size=[100, 50, 200, 30, 100])
    assert trade_sizes(v).tolist() == [100, 50, 200, 30]
    facts = day_facts(v)
    assert (facts["trade_size_mean"], facts["trade_size_median"]) == (95.0, 75.0)
    assert facts["round_lot_share"] == 0.5


def test_order_flow_per_minute():
    v = view(OPEN + np.arange(7.0), kind=[1, 1, 1, 1, 2, 3, 4], close=OPEN + 120)
    assert order_flow(v) == {
        "new_orders_per_min": 2.0,
        "cancels_per_min": 1.0,
        "fills_per_min": 0.5,
        "cancel_to_order": 0.5,
    }


# ---------------------------------------------------------------------------- arrivals
def test_poisson_arrivals_have_cv_and_dispersion_one():
    rng = np.random.default_rng(3)
    times = OPEN + np.cumsum(rng.exponential(0.1, 300_000))  # 10 a second
    v = view(times)
    assert interarrival_cv(v) == pytest.approx(1.0, abs=0.01)
    assert count_dispersion(v) == pytest.approx(1.0, abs=0.05)


def test_simultaneous_messages_are_one_arrival():
    v = view([OPEN, OPEN + 1, OPEN + 1, OPEN + 1, OPEN + 3])
    assert interarrival_cv(v) == pytest.approx(0.5 / 1.5)  # gaps 1 and 2


def test_count_dispersion_of_a_hand_counted_series():
    # 10-s counts 1, 3, 0, 4 (full bins only): mean 2, variance 10 / 3
    times = [OPEN + 1] + [OPEN + 12] * 3 + [OPEN + 35] * 4
    assert count_dispersion(view(times, close=OPEN + 45)) == pytest.approx(5 / 3)


# --------------------------------------------------------------------------- profiles
def test_intraday_profile_of_a_known_schedule():
    # 13 half hours; bucket i holds i + 1 trades of 2 shares, at its middle
    times = np.concatenate([np.full(i + 1, OPEN + 1800 * i + 900) for i in range(13)])
    v = view(times, kind=np.full(len(times), 4), size=np.full(len(times), 2), close=OPEN + 23_400)
    volume, _ = profiles(v)
    np.testing.assert_allclose(volume, np.arange(1, 14) / 91)
    assert volume_last30_ratio(v) == pytest.approx(13 / (91 / 13))


def test_volatility_profile_is_the_rms_return_per_bucket():
    # 60 minutes; returns of +-1% in the first half hour, 0 in the second
    mids = 100 * np.r_[np.tile([1.0, 1.01], 15), np.full(31, 1.0)]
    _, volatility = profiles(minute_mids(mids, close_minutes=60))
    assert volatility[0] == pytest.approx(1e4 * math.sqrt(29 * math.log(1.01) ** 2 / 29))
    assert volatility[1] == pytest.approx(1e4 * math.log(1.01) / math.sqrt(30))


def test_range_and_hourly_move():
    v = view(OPEN + np.array([1, 3600, 7199.0]), bid=[99, 103, 97], ask=[101, 105, 99])
    assert day_range_pct(v) == pytest.approx(6.0)  # (104 - 98) / 100
    v = view(OPEN + np.array([1, 3601.0]), bid=[99, 103], ask=[101, 105], close=OPEN + 7200)
    assert hourly_move_mean_bp(v) == pytest.approx(abs(math.log(104 / 100)) * 1e4)


# --------------------------------------------------------------------------- bad input
def test_too_short_a_day_gives_named_nans():
    facts = day_facts(minute_mids([100, 101, 100, 102], close_minutes=4))
    missing = not_available(facts)
    assert "acf_return_1min_lag3" in missing and "acf_return_1min_lag2" not in missing
    assert {"return_sd_5min_bp", "volume_last30_ratio", "volume_profile_01"} <= set(missing)
    assert "return_sd_1min_bp" not in missing


def test_a_day_without_messages_is_all_not_available():
    empty = view(np.array([]), close=OPEN + 600)
    facts = day_facts(empty)
    assert set(REQUIRED) <= set(not_available(facts))
    assert facts["new_orders_per_min"] == 0.0


# --------------------------------------------------------------------------- distances
def test_fact_distances_by_kind():
    assert fact_distance("acf_return_1min_lag1", -0.26, 0.02) == pytest.approx(0.28)
    assert fact_distance("round_lot_share", 0.0, 0.38) == pytest.approx(0.38)
    assert fact_distance("return_kurtosis_1min", -1.0, 2.0) == pytest.approx(1.5)
    assert fact_distance("spread_mean_ticks", 2.0 * math.e, 2.0) == pytest.approx(1.0)
    assert fact_distance("spread_mean_ticks", 2.0 / math.e, 2.0) == pytest.approx(1.0)
    assert math.isnan(fact_distance("spread_mean_ticks", math.nan, 2.0))


def test_summary_score_weighs_families_equally():
    distances = {"acf_return_1min_lag1": 0.2, "acf_return_1min_lag2": 0.4}
    distances |= {"spread_mean_ticks": 1.0, "volume_profile_03": math.nan}
    assert summary_score(distances) == pytest.approx((0.3 + 1.0) / 2)


def test_distribution_distances_and_interval():
    a, b = np.array([0.0, 1.0]), np.array([1.0, 2.0])
    assert (ks_distance(a, a), ks_distance(a, b + 5)) == (0.0, 1.0)
    assert w1_distance(a, b) == 1.0
    rng = np.random.default_rng(5)
    tied, smooth = rng.integers(0, 20, 1000).astype(float), rng.normal(5, 3, 700)
    assert ks_distance(tied, smooth) == pytest.approx(stats.ks_2samp(tied, smooth).statistic)
    assert w1_distance(tied, smooth) == pytest.approx(stats.wasserstein_distance(tied, smooth))
    assert interval(np.arange(101.0).tolist() + [math.nan]) == pytest.approx((2.5, 97.5))


# ----------------------------------------------------------------------------- the view
def test_tape_view_keeps_what_a_level1_file_shows():
    messages = np.array(
        [
            (OPEN - 5, 1, 1, 10, 100, 1),  # before the open: dropped
            (OPEN + 1, 1, 2, 10, 101, -1),  # a new ask: top changes
            (OPEN + 2, 1, 3, 10, 99, 1),  # a deeper bid: top unchanged, dropped
            (OPEN + 3, 5, 0, 7, 100, -1),  # a hidden execution: kept
            (OPEN + 4, 3, 2, 10, 101, -1),  # the ask deleted: top changes
        ],
        dtype=MESSAGE_DTYPE,
    )
    book = np.array(
        [
            [EMPTY_ASK, 0, 100, 10, EMPTY_ASK, 0, EMPTY_BID, 0],
            [101, 10, 100, 10, EMPTY_ASK, 0, EMPTY_BID, 0],
            [101, 10, 100, 10, EMPTY_ASK, 0, 99, 10],
            [101, 10, 100, 10, EMPTY_ASK, 0, 99, 10],
            [EMPTY_ASK, 0, 100, 10, EMPTY_ASK, 0, 99, 10],
        ],
        dtype=np.int64,
    )
    v = tape_view(Tape(messages, book), OPEN, OPEN + 60)
    assert v.time.tolist() == [OPEN + 1, OPEN + 3, OPEN + 4]
    assert v.kind.tolist() == [1, 5, 3]
    assert v.bid.tolist() == [100, 100, 100]
    assert v.ask[:2].tolist() == [101, 101] and np.isnan(v.ask[2])
    assert (v.open, v.close) == (OPEN, OPEN + 60)


def test_a_source_against_itself_scores_zero():
    day = tape_view(synthetic_tape(1, traders=light(), levels=1, n_steps=60), OPEN, OPEN + 3600)
    reference = measure(RealismSource("real", [day], simulated=False))
    copies = measure(RealismSource("copies", [day, day], simulated=True))
    table = scorecard([reference, copies], reference).set_index(["fact", "source"])
    score = table.loc[("score", "copies")]
    assert (score.value, score.low, score.high) == (0.0, 0.0, 0.0)
    spread = table.loc[("spread_mean_ticks", "copies")]
    assert spread.value == spread.low == spread.high == day_facts(day)["spread_mean_ticks"]
    assert math.isnan(table.loc[("spread_mean_ticks", "real")].distance)


# ------------------------------------------------------------------------------ command
MARKET = """\
[market]
population = "light"
n_steps = 15
day_steps = 60
"""


def test_realism_command_writes_the_scorecard(tmp_path, capsys):
    config = tmp_path / "tiny.toml"
    config.write_text(MARKET)
    tape = synthetic_tape(7, traders=light(), levels=1, n_steps=60)
    messages = tmp_path / "day_message_1.csv"
    write_lobster(tape, messages, tmp_path / "day_orderbook_1.csv")
    out = tmp_path / "card"
    argv = ["realism", str(messages), str(config), "--days", "2", "--out", str(out), "--verbose"]
    assert main(argv) == 0
    table = pd.read_csv(out / "scorecard.csv")
    assert list(table.columns) == ["fact", "source", "value", "low", "high", "distance"]
    assert set(table.source) == {"day_message_1", "tiny"}
    simulated = table[table.source == "tiny"].set_index("fact")
    assert set(REQUIRED) <= set(simulated.index)
    assert np.isfinite(simulated.loc[REQUIRED + ["score"], ["value", "distance"]]).all().all()
    assert simulated.loc["score", "value"] == simulated.loc["score", "distance"] > 0
    real = table[table.source == "day_message_1"].set_index("fact")
    expected = day_facts(tape_view(tape, math.floor(tape.messages["time"][0]), None))
    assert real.loc["spread_mean_ticks", "value"] == pytest.approx(expected["spread_mean_ticks"])
    assert {p.name for p in out.glob("*.png")} == {
        "realism_tails.png",
        "realism_acf.png",
        "realism_profiles.png",
        "realism_distributions.png",
        "realism_classifier.png",
    }
    printed = capsys.readouterr().out
    assert "return_sd_1min_bp" in printed
    assert "tiny: not available (day too short): " in printed and "volume_profile_02" in printed
    # the classifier: the market against a recorded day of its own population
    auc = simulated.loc[["discriminator_auc", "discriminator_auc_10s"]]
    assert ((auc.low <= auc.value) & (auc.value <= auc.high)).all()
    assert (auc.value < 0.7).all() and auc.distance.isna().all()
    assert "tiny: classifier AUC" in printed


def test_realism_from_until_judge_part_of_the_day(tmp_path, capsys):
    config = tmp_path / "tiny.toml"
    config.write_text(MARKET)
    messages, tape = lobster_day(tmp_path, "day", 60, seed=7, levels=3)
    report = realism([str(config)], against=str(messages), days=2, start=OPEN + 600)
    table = report.table.set_index(["fact", "source"])
    late = day_facts(tape_view(tape, OPEN + 600, math.ceil(tape.messages["time"][-1])))
    value = table.loc[("spread_mean_ticks", "day_message_3"), "value"]
    assert value == pytest.approx(late["spread_mean_ticks"])
    assert set(report.tests["tiny"]) == {"discriminator_auc", "discriminator_auc_10s"}
    # both sides had 3 levels: the classifier saw the depth behind the touch
    features = set(report.tests["tiny"]["discriminator_auc"].features.feature)
    assert {"depth_l2", "depth_l3", "book_span_ticks"} <= features
    with pytest.raises(UserError, match="has nothing between 15:00 and its close"):
        realism([str(config)], against=str(messages), days=1, start=15 * 3600.0)


def test_tape_view_carries_the_depth_that_changed():
    tape = synthetic_tape(3, traders=light(), levels=2, n_steps=5)
    day = tape_view(tape, levels=2)
    assert day.levels == 2 and day.depth.shape[1] == 8
    rows = tape.book.astype(float)
    changed = np.r_[True, (np.diff(tape.book, axis=0) != 0).any(axis=1)]
    assert len(day.depth) == changed.sum()
    shown = rows[changed]
    shown[:, 0::4][tape.book[changed][:, 0::4] == EMPTY_ASK] = np.nan
    shown[:, 2::4][tape.book[changed][:, 2::4] == EMPTY_BID] = np.nan
    np.testing.assert_array_equal(day.depth, shown)
    assert tape_view(tape).levels == 1


def test_a_message_file_alone_names_the_orderbook_file_expected(tmp_path, capsys):
    messages, _ = lobster_day(tmp_path, "day_34200000_37800000", 5, seed=7, book=False)
    assert main(["realism", str(messages), "--days", "1"]) == 2
    error = capsys.readouterr().err
    assert "need the tape's orderbook file beside it" in error
    assert "day_34200000_37800000_orderbook_1.csv" in error


def test_realism_unknown_source_is_one_line_with_a_hint(capsys):
    assert main(["realism", "tradearena/MarketMakin-v0"]) == 2
    error = capsys.readouterr().err
    assert "neither a file nor a tradearena market id" in error
    assert "tradearena/MarketMaking-v0" in error


def test_realism_of_a_market_that_does_nothing_is_one_line(tmp_path, capsys):
    """A lone noise trader's market orders meet an empty book: no message shows on a level-1
    file of its days (an IndexError in the classifier's windows before)."""
    messages, _ = lobster_day(tmp_path, "x_34200000_36000000", 30)
    config = tmp_path / "quiet.toml"
    config.write_text('[market]\ntask = "making"\ntraders = [{type = "Noise", n_agents = 1}]\n')
    assert main(["realism", str(messages), str(config), "--days", "2"]) == 2
    assert capsys.readouterr().err == (
        "tradearena: error: quiet: none of its 2 simulated days shows a message from 09:30 to "
        "16:00 (no quote rests, no trade prints): a market that does nothing has no facts to "
        "judge\n"
    )


def test_realism_needs_a_tape(tmp_path, capsys):
    config = tmp_path / "tiny.toml"
    config.write_text(MARKET)
    assert main(["realism", str(config), "--days", "1"]) == 2
    assert "no tape to compare with" in capsys.readouterr().err


# ---------------------------------------------------------------------- the floors
def test_a_tapes_hours_against_themselves_cannot_be_told_apart():
    """The minutes of one day's hours, every other one labelled simulated, cross-validated
    by 10-minute blocks holding both: the classifier cannot tell them (AUC near 0.5, inside
    its interval), the judge's zero of the floors."""
    day = tape_view(synthetic_tape(1, traders=light(), levels=1, n_steps=120), OPEN, OPEN + 7200)
    windows = day_windows([day], 60.0, 0)
    windows["label"] = np.arange(len(windows)) % 2
    windows["group"] = (windows["start"] - OPEN) // 600
    test = classifier_test(windows)
    assert test.low <= 0.5 <= test.high and abs(test.auc - 0.5) < 0.1
    assert test.real == test.simulated == 60


LONG_DAY = MARKET.replace("day_steps = 60", "day_steps = 120")
"""MARKET's days two hours long (09:30-11:30): the recorded days' hours after a --from."""


def hours_market(folder, window, tapes):
    """LONG_DAY with a [learned_from] table naming ``window`` (seconds) of ``tapes``."""
    config = folder / "tiny.toml"
    names = ", ".join(f'"{t}"' for t in tapes)
    learned = f"\n[learned_from]\ntapes = [{names}]\nwindow = {list(window)}\n"
    config.write_text(LONG_DAY + learned)
    return config


def test_realism_from_judges_the_floor_and_each_market_in_sample(tmp_path, capsys):
    messages, tape = lobster_day(tmp_path, "day", 120, seed=7)
    split = OPEN + 55 * 60  # 10:25; the recorded day runs 09:25-11:30
    config = hours_market(tmp_path, (OPEN, OPEN + 3000), [messages.name])
    out = tmp_path / "card"
    report = realism([str(config)], against=str(messages), days=2, start=split, out=str(out))
    # the floor: the tape's own hours before --from, judged as a market against those after
    times = tape.messages["time"]
    morning = tape_view(tape, math.floor(times[0]), split)
    afternoon = tape_view(tape, split, math.ceil(times[-1]))
    windows = pd.concat(
        [day_windows([morning], 60.0, 1), day_windows([afternoon], 60.0, 0)], ignore_index=True
    )
    expected = classifier_test(windows)
    hours = f"{clock(math.floor(times[0]))}-10:25"  # from the recorded day's first second
    assert report.floor.label == f"day_message_1 {hours}" and report.floor.hours == hours
    table = pd.read_csv(out / "scorecard.csv").set_index(["fact", "source"])
    floor = table.loc[("discriminator_auc", report.floor.label)]
    assert (floor.value, floor.low, floor.high) == pytest.approx(
        (expected.auc, expected.low, expected.high)
    )
    score = table.loc[("score", report.floor.label), "value"]
    assert score > 0 and math.isfinite(score)  # the morning's facts' distance to the afternoon's
    spread = table.loc[("spread_mean_ticks", report.floor.label), "value"]
    assert spread == pytest.approx(day_facts(morning)["spread_mean_ticks"])
    # in-sample: the market's days against the tape over the hours its file names
    assert report.in_sample["tiny"].hours == "09:30-10:20"
    inside = discriminate(
        parse_source(str(config)).read(2, start=OPEN, end=OPEN + 3000),
        parse_source(str(messages)).read(1, start=OPEN, end=OPEN + 3000),
        days=2,
    )
    for fact, test in inside.items():
        row = table.loc[(fact + "_in_sample", "tiny")]
        assert (row.value, row.low, row.high) == pytest.approx((test.auc, test.low, test.high))
    assert set(inside) == {"discriminator_auc", "discriminator_auc_10s"}
    verdict = format_verdict(report).splitlines()
    assert verdict[0] == (
        "classifier AUC on 1-min windows against day_message_1 10:25-11:30 (lower is better; "
        "0.5: it cannot tell them apart, 1: it always can):"
    )
    assert verdict[1].split()[:4] == ["floor:", "its", "own", hours]
    assert f"{expected.auc:.3f} [{expected.low:.3f}, {expected.high:.3f}]" in verdict[1]
    held = report.tests["tiny"]["discriminator_auc"]
    beside = (
        "passes: told no more easily than the floor"
        if held.auc <= expected.auc
        else "passes within chance: above the floor, inside its interval"
        if held.auc <= expected.high
        else "fails: told more easily than the floor, beyond its interval"
    )
    assert verdict[2].startswith("  tiny ") and verdict[2].endswith(beside)
    assert verdict[3].startswith("    in-sample, 09:30-10:20 ")
    assert verdict[4:] == [
        "the other floor, the replay of the hours a market learned from, is judged by ranking "
        "a strategy zoo: tradearena transfer MARKET --against TAPE --from 10:25"
    ]
    assert report.missing["tiny"][0] == "the part judged, 10:25-11:30, is too short for them"


def test_in_sample_needs_hours_on_this_tape_and_says_why_not(tmp_path, capsys):
    messages, _ = lobster_day(tmp_path, "day", 90, seed=7)
    config = tmp_path / "tiny.toml"
    config.write_text(LONG_DAY)
    report = realism([str(config)], against=str(messages), days=1, start=OPEN + 3000)
    assert report.notes == [
        "tiny: no in-sample judgment: its file names no hours it learned from "
        "(--learned FIRST,LAST gives them)"
    ]
    config = hours_market(tmp_path, (OPEN, OPEN + 2400), ["other_message_1.csv"])
    report = realism([str(config)], against=str(messages), days=1)
    digest = TapeIdentity.of(load_tape(messages)).digest  # the judged day, by content
    assert report.notes == [
        "tiny: no in-sample judgment: it learned from other_message_1.csv, not from "
        f"day_message_1.csv (messages {digest})"
    ]
    assert report.floor is None and not report.in_sample
    # hours given on the command line are judged on this tape, whatever the file says
    report = realism([str(config)], against=str(messages), days=1, learned=(OPEN, OPEN + 2400))
    assert report.in_sample["tiny"].hours == "09:30-10:10" and not report.notes


def test_hours_the_tape_does_not_hold_are_one_line_and_nothing_written(tmp_path, capsys):
    messages, _ = lobster_day(tmp_path, "day_34200000_39600000", 90, seed=7)
    config = tmp_path / "tiny.toml"
    config.write_text(MARKET)
    out = tmp_path / "card"
    argv = ["realism", str(messages), str(config), "--days", "1", "--out", str(out)]
    assert main([*argv, "--learned", "08:00,10:00"]) == 2
    error = capsys.readouterr().err
    assert error == (
        "tradearena: error: --learned 08:00,10:00: day_34200000_39600000_message_1.csv's day "
        "(09:30-11:00) does not hold the hours 08:00-10:00\n"
    )
    with pytest.raises(SystemExit) as exit:
        main([*argv, "--learned", "10:00,9:00"])
    assert exit.value.code == 2
    assert "argument --learned: FIRST must come before LAST" in capsys.readouterr().err
    assert not out.exists()
    # the file's own hours outside the day: no in-sample row, and one line saying why
    outside = hours_market(tmp_path, (OPEN + 7200, OPEN + 9000), [messages.name])
    report = realism([str(outside)], against=str(messages), days=1)
    assert report.notes == [
        "tiny: no in-sample judgment: day_34200000_39600000_message_1.csv's day (09:30-11:00) "
        "does not hold the hours 11:30-12:00"
    ]
    assert not report.table.fact.str.endswith("_in_sample").any()


def test_the_verdict_comes_first_and_the_scorecard_with_verbose(tmp_path, capsys):
    messages, tape = lobster_day(tmp_path, "day", 90, seed=7)
    config = hours_market(tmp_path, (OPEN, OPEN + 2400), [messages.name])
    argv = ["realism", str(messages), str(config), "--days", "2", "--from", "10:10"]
    assert main(argv) == 0
    brief = capsys.readouterr().out.splitlines()
    assert brief[0].startswith("classifier AUC on 1-min windows against day_message_1 10:10-")
    first = clock(math.floor(tape.messages["time"][0]))
    assert brief[1].startswith(f"  floor: its own {first}-10:10")
    assert brief[2].startswith("  tiny ") and "the floor" in brief[2]
    assert brief[3].startswith("    in-sample, 09:30-10:10 ")
    assert brief[4].startswith("the other floor, the replay of the hours a market learned ")
    assert brief[5].startswith("(--verbose: the scorecard's ") and len(brief) == 6
    assert main([*argv, "--verbose"]) == 0
    full = capsys.readouterr().out
    assert full.splitlines()[:5] == brief[:5]
    assert "return_sd_1min_bp" in full and "tiny: classifier AUC" in full
    assert "tiny: not available (the part judged, 10:10-" in full


# ------------------------------------------------------------------------------ figures
def test_tail_lines_step_at_the_distinct_values():
    ax = tail_lines({"a": np.array([1.0, 1.0, 2.0, 4.0, 0.0])}, "size", "Sizes")
    (line,) = ax.get_lines()
    x, y = line.get_data()
    assert list(x) == [1.0, 2.0, 4.0] and list(y) == [1.0, 0.5, 0.25]


def test_return_tails_draw_each_source_and_the_gaussian():
    figure = Figure()
    ax = figure.add_subplot()
    rng = np.random.default_rng(4)
    assert return_tails({"a": rng.standard_normal(100), "b": rng.laplace(size=100)}, ax) is ax
    labels = [line.get_label() for line in ax.get_lines()]
    assert labels == ["a", "b", "Gaussian"]


def test_a_recordings_view_prices_a_tick_of_one_lot():
    tape = synthetic_tape(7, traders=light(), levels=1, n_steps=5)
    lots = Tape(tape.messages, tape.book, tick_size=0.01, lot_size=1e-6, complete=True)
    assert tape_view(lots).tick_size == pytest.approx(1e-8)  # as the replay prices it
    assert tape_view(tape).tick_size == 0.01


@pytest.mark.parametrize("command", ["realism", "response"])
@pytest.mark.parametrize("layout", ["one file twice", "two files of one name"])
def test_two_sources_of_one_label_are_refused_before_any_work(command, layout, tmp_path, capsys):
    """`realism` and `response` given one market twice, or two markets whose files share a
    name in two folders (a table by label kept one; realism broke after its work): exit 2,
    one line naming both, nothing written."""
    day, _ = lobster_day(tmp_path, "day", 30)
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "m.toml").write_text('[market]\npopulation = "light"\n')
    second = "a" if layout == "one file twice" else "b"
    markets = [str(tmp_path / "a" / "m.toml"), str(tmp_path / second / "m.toml")]
    out = tmp_path / "out"
    assert main([command, str(day), *markets, "--days", "2", "--out", str(out)]) == 2
    _, err = capsys.readouterr()
    assert err == (
        f"tradearena: error: {markets[0]} and {markets[1]} would both be labelled 'm': give "
        "each source once, under a name of its own (rename or copy one)\n"
    )
    assert not out.exists()


@pytest.mark.parametrize("declared", ["--learned", "[learned_from]"])
def test_hours_judged_that_overlap_those_learned_from_are_refused(declared, tmp_path, capsys):
    """`realism DAY MARKET --from 10:20` of a market that learned from 09:30-10:50 of that
    day (said by --learned, or by its file's [learned_from]): the hours judged are not held
    out of those learned from; exit 2, one line, nothing written. From 10:50 they are."""
    day, _ = lobster_day(tmp_path, "day", 100)
    market = tmp_path / "m.toml"
    market.write_text('[market]\npopulation = "light"\n')
    argv = ["realism", str(day), str(market), "--from", "10:20", "--days", "2"]
    if declared == "--learned":
        argv += ["--learned", "09:30,10:50"]
        source = "--learned 09:30,10:50"
    else:
        market.write_text(
            market.read_text()
            + f'[learned_from]\ntapes = ["{day.name}"]\nwindow = [34200, 39000]\n'
        )
        source = f"{market} [learned_from]"
    out = tmp_path / "out"
    assert main([*argv, "--out", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"tradearena: error: --from 10:20: the hours judged overlap 09:30-10:50, learned from "
        f"({source}): judge hours held out of them (--from 10:50 or later)\n"
    )
    assert not out.exists()
    hours = LearnedHours(34_200.0, 39_000.0, (), "x")
    held_out(hours, 39_000.0)
    held_out(hours, 30_000.0, 34_200.0)  # judged before them
