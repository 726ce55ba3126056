"""evaluation.analysis.metrics and .summary, the field's metrics beside Sharpe: gain-loss
ratio, P&L-to-MAP, implementation shortfall in bp, the Wilson interval and the probability of
outperforming the reference, each against a hand computation, and their columns in the run's
summary table."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from tradearena.evaluation.analysis.metrics import (
    DegenerateMetricWarning,
    gain_loss_ratio,
    outperformance,
    pnl_to_map,
    shortfall_bp,
    wilson_interval,
)
from tradearena.evaluation.analysis.summary import field_metrics, pooled_gain_loss, run_summary

Z = 1.959963984540054  # the standard normal quantile of 0.975


def test_gain_loss_ratio_hand_values():
    assert gain_loss_ratio([3.0, -1.0, 0.0, 2.0, -4.0]) == 1.0  # (3 + 2) / (1 + 4)
    assert gain_loss_ratio([1.0, -3.0]) == pytest.approx(1 / 3)
    assert gain_loss_ratio([-2.0, -1.0]) == 0.0  # no gains
    with pytest.warns(DegenerateMetricWarning, match="gain_loss_ratio: no return is below 0"):
        assert math.isnan(gain_loss_ratio([1.0, 0.0]))


def test_pooled_gain_loss_counts_the_seeds_without_a_loss():
    """Every episode of every seed in one ratio: a seed that never lost still adds its gains;
    no loss anywhere is inf, no trade anywhere NaN; the interval's ends are the ratios of
    whole-seed draws, inf where a draw holds no loss (the ratio unbounded above)."""
    seeds = [[4.0, -2.0], [6.0, 0.0], [2.0, 1.0]]
    interval = pooled_gain_loss(seeds)
    assert interval.estimate == pytest.approx((4 + 6 + 2 + 1) / 2)
    assert interval.low == pytest.approx(2.0) and interval.high == math.inf
    assert pooled_gain_loss([[1.0, 2.0], [3.0]]).estimate == math.inf
    assert math.isnan(pooled_gain_loss([[0.0], [0.0]]).estimate)
    one = pooled_gain_loss([[3.0, -1.0]])
    assert one.estimate == 3.0 and math.isnan(one.low) and math.isnan(one.high)


def test_pnl_to_map_hand_values():
    # mean PnL (4 - 1 + 3) / 3 = 2 dollars over mean |position| (10 + 30 + 20) / 3 = 20 shares
    assert pnl_to_map([4.0, -1.0, 3.0], [10.0, 30.0, 20.0]) == pytest.approx(0.1)
    assert pnl_to_map([-6.0], [4.0]) == -1.5
    with pytest.warns(DegenerateMetricWarning, match="mean absolute position is 0"):
        assert math.isnan(pnl_to_map([1.0, 2.0], [0.0, 0.0]))
    with pytest.raises(ValueError, match="positions must have the shape of returns"):
        pnl_to_map([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="positions must be >= 0 shares"):
        pnl_to_map([1.0], [-1.0])


def test_shortfall_bp_hand_values():
    # a buy of 1,000 at a $100 arrival: a score of -$10 is $10 paid over $100,000, 1 bp;
    # +$5 on $50,000 is 1 bp better than the arrival price
    np.testing.assert_allclose(shortfall_bp([-10.0, 5.0], [100.0, 50.0], 1000), [1.0, -1.0])
    # a sale of 400 at $25 ($10,000): sold $2 below the arrival value is 2 bp
    np.testing.assert_allclose(shortfall_bp([-2.0], [25.0], -400), [2.0])
    with pytest.raises(ValueError, match="parent_order must be a non-zero number of shares"):
        shortfall_bp([1.0], [100.0], 0)
    with pytest.raises(ValueError, match="arrival must be > 0"):
        shortfall_bp([1.0], [0.0], 100)


def test_wilson_interval_hand_values():
    # 8 of 10: centre (0.8 + z^2 / 20) / (1 + z^2 / 10) = 0.7166, half-width
    # z / (1 + z^2 / 10) sqrt(0.016 + z^2 / 400) = 0.2263
    eight = wilson_interval(8, 10)
    assert (eight.low, eight.high, eight.estimate) == pytest.approx((0.490162, 0.943318, 0.8))
    # 0 of 10: [0, (z^2 / 10) / (1 + z^2 / 10)], not the empty Wald interval
    zero = wilson_interval(0, 10)
    assert zero.low == 0.0 and zero.estimate == 0.0
    assert zero.high == pytest.approx((Z**2 / 10) / (1 + Z**2 / 10))
    # 10 of 10 mirrors it
    assert wilson_interval(10, 10).low == pytest.approx(1 - zero.high)
    with pytest.warns(DegenerateMetricWarning, match="no trials"):
        assert math.isnan(wilson_interval(0, 0).estimate)
    with pytest.raises(ValueError, match=r"successes must be an integer in \[0, n=3\]"):
        wilson_interval(4, 3)


def test_outperformance_counts_strict_wins_of_pairs():
    # pairs (2, 1) win, (1, 1) tie, (-1, -2) win, (3, 4) loss: 2 of 4
    interval = outperformance([2.0, 1.0, -1.0, 3.0], [1.0, 1.0, -2.0, 4.0])
    assert interval == wilson_interval(2, 4)
    assert interval.estimate == 0.5
    with pytest.raises(ValueError, match="reference must have the shape of returns"):
        outperformance([1.0, 2.0], [1.0])


def _episodes(agent, seed, pnls, exposure, arrival):
    return pd.DataFrame(
        {
            "condition": "clean",
            "agent": agent,
            "seed": seed,
            "episode": range(len(pnls)),
            "phase": "test",
            "pnl": pnls,
            "exposure": exposure,
            "arrival": arrival,
        }
    )


RECORDS = pd.concat(
    [
        _episodes("a", 0, [3.0, -1.0], [10.0, 30.0], 100.0),
        _episodes("a", 1, [5.0, -1.0], [20.0, 20.0], 50.0),
        _episodes("ref", 0, [1.0, -1.0], [0.0, 0.0], 100.0),
        _episodes("ref", 1, [1.0, -3.0], [10.0, 10.0], 50.0),
    ],
    ignore_index=True,
)


@pytest.mark.filterwarnings(
    "ignore::tradearena.evaluation.analysis.metrics.DegenerateMetricWarning"
)
def test_field_metrics_hand_values():
    table = field_metrics(RECORDS, parent_order=1000, reference="ref").set_index("agent")
    a, ref = table.loc["a"], table.loc["ref"]
    # gain-loss over both seeds: a (3 + 5) / (1 + 1) = 4, ref (1 + 1) / (1 + 3) = 0.5. With two
    # seeds the interval's ends are the two seeds' own ratios (a 3 / 1 and 5 / 1)
    assert (a.gain_loss, a.gain_loss_low, a.gain_loss_high) == pytest.approx((4.0, 3.0, 5.0))
    assert ref.gain_loss == pytest.approx(0.5)
    # P&L-to-MAP per seed: a 1 / 20 and 2 / 20; ref's seed 0 never held a share (NaN, left
    # out), seed 1: -1 / 10, one seed and no interval
    assert (a.pnl_to_map, a.pnl_to_map_low, a.pnl_to_map_high) == pytest.approx((0.075, 0.05, 0.1))
    assert ref.pnl_to_map == pytest.approx(-0.1) and math.isnan(ref.pnl_to_map_low)
    # shortfall of a, bp of $100,000 (seed 0) and $50,000 (seed 1): seed 0 mean(-0.3, 0.1),
    # seed 1 mean(-1.0, 0.2)
    assert (a.shortfall_bp, a.shortfall_bp_low, a.shortfall_bp_high) == pytest.approx(
        (-0.25, -0.4, -0.1)
    )
    # a beats ref in 3 of 4 sessions (3 > 1, -1 = -1 a tie, 5 > 1, -1 > -3)
    beat = wilson_interval(3, 4)
    assert (a.p_beat_reference, a.p_beat_reference_low, a.p_beat_reference_high) == (
        0.75,
        beat.low,
        beat.high,
    )
    assert math.isnan(ref.p_beat_reference)


def test_run_summary_appends_the_field_metrics_after_the_existing_columns():
    plain = run_summary(RECORDS)
    full = run_summary(RECORDS, parent_order=1000, reference="ref")
    field = ["gain_loss", "pnl_to_map"]
    bounds = [f"{m}{end}" for m in field for end in ("", "_low", "_high")]
    existing = list(plain.columns[: -len(bounds)])
    assert list(plain.columns) == [*existing, *bounds]
    assert existing[-3:] == ["episodes", "seeds", "exposure"]
    extra = [
        f"{m}{end}" for m in ("shortfall_bp", "p_beat_reference") for end in ("", "_low", "_high")
    ]
    assert list(full.columns) == [*existing, *bounds, *extra]
    pd.testing.assert_frame_equal(full[plain.columns], plain)


def test_no_outperformance_where_a_seed_and_episode_name_several_sessions():
    """An agent in two seats of the same sessions (a tournament's profiles): no pairing."""
    two_seats = pd.concat([RECORDS, RECORDS[RECORDS["agent"] == "a"]], ignore_index=True)
    table = field_metrics(two_seats, reference="ref").set_index("agent")
    assert math.isnan(table.loc["a", "p_beat_reference"])
    assert "shortfall_bp" not in table  # no parent order: no shortfall


def test_the_printed_table_says_no_trades_and_no_loss_in_words():
    """`tradearena run`'s table: an agent that never trades reads "no trades" where its ratios
    are 0 / 0, one that never lost "no loss" where they are unbounded; no "nan"."""
    from tradearena.evaluation.cli.text import format_summary

    records = pd.concat(
        [
            *(_episodes("hold", seed, [0.0, 0.0], [0.0, 0.0], 100.0) for seed in (0, 1)),
            *(_episodes("winner", seed, [2.0, 3.0 + seed], [5.0, 5.0], 100.0) for seed in (0, 1)),
            *(_episodes("mixed", seed, [4.0, -seed], [5.0, 5.0], 100.0) for seed in (0, 1)),
        ],
        ignore_index=True,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateMetricWarning)
        text = format_summary(run_summary(records))
    rows = {}
    for line in text.splitlines():
        if line.split():
            rows[line.split()[0]] = rows.get(line.split()[0], "") + line
    assert "nan" not in text
    # Sharpe, Sortino, gain/loss, PnL/MAP
    assert rows["hold"].count("no trades") == 4
    assert rows["winner"].count("no loss") == 2  # Sortino and gain/loss
    assert "8.00 [4.00, inf]" in rows["mixed"]  # (4 + 4) / 1; a draw of seed 0 twice: no loss
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateMetricWarning)
        text = format_summary(run_summary(records, reference="mixed"))
    assert "nan" not in text  # the reference's own P(beat reference) reads "-"
    reference = [line for line in text.splitlines() if line.startswith("mixed")][-1]
    assert reference.endswith(" -")
