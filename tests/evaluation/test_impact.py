"""Tests for the impact scorecard: its statistics on inputs whose answers are known
(evaluation.analysis.impact), the scripts it trades (evaluation.market.impact), the tape's own
passive fills read by hand, and the judge end to end on a recorded day (``tradearena
impact``): the plain replay fails what it must, a seat that never trades changes nothing, bad
input is one line."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from tests.evaluation.days import lobster_day
from tradearena.envs.data.tapes import MESSAGE_DTYPE, Tape
from tradearena.envs.errors import UserError
from tradearena.evaluation.analysis.impact import (
    CHECKS,
    Target,
    decay_exponent,
    decay_shape,
    ks_p,
    ratio_of_means,
    relaxation,
    square_root_law,
)
from tradearena.evaluation.experiment.parallel import LocalExecutor
from tradearena.evaluation.market.impact import (
    COLUMNS,
    GRID,
    MIN_METAORDERS,
    STEP,
    TapeFacts,
    format_impact,
    impact,
    impact_job,
    metaorder_scripts,
    passive_fills,
    single_scripts,
    tape_facts,
    trip_scripts,
)


# ---------------------------------------------------------------------------- statistics
def test_the_square_root_law_is_fitted_back():
    """Impacts made as 0.002 + 0.5 (Q/V)^0.5 with a little noise give back the exponent
    and the prefactor, each inside its interval."""
    rng = np.random.default_rng(0)
    share = np.exp(rng.uniform(np.log(1e-5), np.log(1e-2), 800))
    impact = 0.002 + 0.5 * np.sqrt(share) + rng.normal(0, 0.001, 800)
    law = square_root_law(share, impact)
    assert law.exponent.estimate == pytest.approx(0.5, abs=0.02)
    assert law.prefactor.estimate == pytest.approx(0.5, rel=0.1)
    assert law.exponent.low <= 0.5 <= law.exponent.high
    assert law.intercept == pytest.approx(0.002, abs=0.001)
    flat = square_root_law(share, np.zeros_like(share))  # a market that never moved: no law
    assert math.isnan(flat.exponent.estimate) and math.isnan(flat.prefactor.estimate)


def test_relaxation_is_the_ratio_of_the_mean_impacts():
    at_end, later = np.array([2.0, 4.0, 6.0]), np.array([1.0, 3.0, 2.0])
    assert relaxation(at_end, later).estimate == pytest.approx(0.5)
    assert math.isnan(relaxation(np.zeros(3), later).estimate)  # no impact to relax from


def test_the_decay_exponent_is_fitted_back():
    """Metaorders whose impact after their end follows `decay_shape` with exponent 0.6 and
    a permanent third: the fit finds 0.6; the shape is 1 at the end and falls as u^-0.6."""
    u = np.array([0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0])
    assert decay_shape(np.array([0.0]), 0.6, 0.3)[0] == pytest.approx(1.0)
    far = decay_shape(np.array([1e4, 2e4]), 0.6, 0.0)
    assert far[1] / far[0] == pytest.approx(2**-0.6, rel=1e-3)
    rng = np.random.default_rng(1)
    peak = rng.uniform(5, 15, 300)
    impacts = np.column_stack([peak, peak[:, None] * decay_shape(u, 0.6, 1 / 3)])
    found = decay_exponent(u, impacts + rng.normal(0, 0.05, impacts.shape))
    assert found.estimate == pytest.approx(0.6, abs=0.03)


def test_ratio_of_means_and_ks():
    reference = np.array([1.0, 2.0, 3.0, 4.0])
    assert ratio_of_means(2 * reference, reference).estimate == pytest.approx(2.0)
    assert ratio_of_means(np.array([1.0, np.nan]), np.array([2.0, 5.0])).estimate == 0.5
    sample = np.linspace(0, 1, 200)
    assert ks_p(sample, sample) == pytest.approx(1.0)
    assert ks_p(sample, sample + 5) < 1e-10
    assert math.isnan(ks_p(np.array([]), sample))


def test_the_targets_hold_as_stated():
    assert list(CHECKS) == [
        "null_seat_differences",
        "sqrt_exponent",
        "sqrt_prefactor",
        "relaxation",
        "decay_exponent",
        "response_1",
        "response_10",
        "refill_ks_p",
        "passive_markout_1s",
        "passive_markout_10s",
        "round_trip_pnl",
        "pump_dump_pnl",
    ]
    assert CHECKS["null_seat_differences"].holds(0, math.nan)
    assert not CHECKS["null_seat_differences"].holds(1, math.nan)
    assert CHECKS["sqrt_exponent"].holds(0.5, 0.4) and not CHECKS["sqrt_exponent"].holds(0.7, 0.6)
    assert CHECKS["refill_ks_p"].holds(0.2, math.nan) and not CHECKS["refill_ks_p"].holds(0.01, 0)
    pnl = CHECKS["round_trip_pnl"]
    assert pnl.holds(-5.0, -9.0) and pnl.holds(1.0, -0.5) and not pnl.holds(3.0, 1.0)
    assert not Target(0.8, 1.25).holds(math.nan, math.nan)


# ------------------------------------------------------------------------ the tape's facts
def test_passive_fills_by_hand():
    """A bid joins behind 30 lots, is executed, and the mid falls 1 tick a second later: its
    fill had 30 ahead and marks out 1 tick against it at 1 s, 2 at 10 s; an ask that set a new
    best price had nothing ahead."""
    rows = [
        # ask price, ask lots, bid price, bid lots after each message
        (102, 10, 100, 30),
        (102, 10, 100, 50),  # 1: order 7 joins the bid behind 30
        (101, 5, 100, 50),  # 2: order 8, a new best ask
        (101, 5, 100, 30),  # 3: order 7 executed
        (101, 5, 99, 40),  # 4: the bid falls a tick (mid 100.5 -> 100)
        (101, 5, 98, 40),  # 5: and another (mid 99.5)
    ]
    messages = [
        (100.0, 1, 1, 10, 102, -1),
        (100.5, 1, 7, 20, 100, 1),
        (100.6, 1, 8, 5, 101, -1),
        (101.0, 4, 7, 20, 100, 1),
        (102.0, 3, 9, 30, 100, 1),
        (105.0, 3, 10, 10, 99, 1),
    ]
    tape = Tape(np.array(messages, MESSAGE_DTYPE), np.array(rows, np.int64))
    fills = passive_fills(tape, 0.0, 200.0)
    assert fills.time.tolist() == [101.0]
    assert fills.ahead.tolist() == [30.0]
    # the mid before the fill 100.5; 1 s on (102.0) 100.0, 10 s on (111) 99.5
    assert fills.moves.tolist() == [[0.5, 1.0]]
    assert passive_fills(tape, 0.0, 200.0, ids={8}).time.tolist() == []


# ---------------------------------------------------------------------------- the scripts
@pytest.fixture(scope="module")
def facts_and_tape(tmp_path_factory):
    messages, tape = lobster_day(tmp_path_factory.mktemp("day"), "DAY", 240)
    return tape_facts(tape, 34_200.0 + 7_200.0, 34_200.0 + 14_400.0), messages


def test_metaorders_are_split_and_timed_as_they_say(facts_and_tape):
    """Each metaorder's children add up to it, none larger than the tape's median order; a
    TWAP's are evenly spaced, a participation-rate one's follow the tape's volume; all within
    the duration, sessions of 3 durations within the hours, starts on the grid."""
    facts: TapeFacts = facts_and_tape[0]
    orders = metaorder_scripts(facts, 60, seed=3)
    assert [o.kind for o in orders[:4]] == ["twap", "pov", "twap", "pov"]
    for order in orders:
        script = order.script
        assert script.lots.sum() == order.lots and script.lots.max() <= facts.child
        assert set(script.side.tolist()) == {order.side}
        assert np.all(np.diff(script.at) >= 0) and script.at[-1] < order.duration / STEP
        assert (script.start - facts.first) % GRID == 0
        assert script.start + 3 * order.duration <= facts.last
        assert 0.001 <= order.participation <= 0.1
        if order.kind == "twap" and len(script.at) > 2:
            gaps = np.diff(script.at)
            assert gaps.max() - gaps.min() <= 1
    assert len({o.script.start for o in orders}) > 10


def test_round_trips_buy_then_sell_what_they_bought(facts_and_tape):
    facts = facts_and_tape[0]
    for pump in (False, True):
        for script in trip_scripts(facts, 10, pump=pump, seed=1):
            bought = script.lots[script.side > 0].sum()
            assert bought == script.lots[script.side < 0].sum() > 0
            assert script.at[script.side > 0].max() < script.at[script.side < 0].min()
    singles = single_scripts(facts, 20, seed=2)
    assert all(len(s.at) == 1 and s.at[0] < GRID / STEP for s in singles)


# ---------------------------------------------------------------------------- the judge
@pytest.fixture(scope="module")
def scorecard(facts_and_tape, tmp_path_factory):
    messages = facts_and_tape[1]
    out = tmp_path_factory.mktemp("impact")
    found = impact(
        str(messages),
        ["replay", "responsive"],
        executor=LocalExecutor(progress=False, job=impact_job),
        start=34_200.0 + 7_200.0,
        metaorders=MIN_METAORDERS,
        singles=60,
        trips=10,
        out=str(out),
    )
    return found, out


def test_the_scorecard_judges_both_replays_and_writes_its_files(scorecard):
    """Every check of each market, in order, with its target; the plain replay does not
    answer a single order (its response is the mechanics' alone, put back at the next
    message) where the responsive replay does; a seat that never trades changes nothing in
    either; the files written; the verdict first."""
    found, out = scorecard
    table = found.table
    assert list(table.columns) == list(COLUMNS)
    assert table.market.tolist() == ["replay"] * 12 + ["responsive"] * 12
    assert table.check.tolist() == list(CHECKS) * 2
    rows = table.set_index(["market", "check"])
    for market in ("replay", "responsive"):
        assert rows.loc[(market, "null_seat_differences"), "value"] == 0
        assert rows.loc[(market, "null_seat_differences"), "holds"]
    assert rows.loc[("replay", "response_10"), "value"] < 0.2
    assert rows.loc[("responsive", "response_10"), "value"] > 0.5
    written = pd.read_csv(out / "impact.csv")
    assert written.check.tolist() == table.check.tolist()
    assert (out / "impact.png").stat().st_size > 10_000
    text = format_impact(found)
    assert text.splitlines()[1].startswith("  replay: ") and "checks hold" in text


def test_bad_input_is_one_line(facts_and_tape, tmp_path):
    messages = facts_and_tape[1]
    executor = LocalExecutor(progress=False, job=impact_job)
    with pytest.raises(UserError, match="--metaorders 3: give 20 to 20,000"):
        impact(str(messages), ["replay"], executor=executor, metaorders=3)
    stray = tmp_path / "notes.txt"
    stray.write_text("x")
    with pytest.raises(UserError, match="not an experiment file"):
        impact(str(messages), [str(stray)], executor=executor, metaorders=MIN_METAORDERS)
    with pytest.raises(UserError, match="has nothing between"):
        impact(str(messages), ["replay"], executor=executor, start=20 * 3600.0)
    with pytest.raises(UserError, match="responsive: .* give --from"):
        impact(str(messages), ["responsive"], executor=executor, metaorders=MIN_METAORDERS)
    learned_all_day = tmp_path / "responsive.toml"
    learned_all_day.write_text(f'[market]\ntape = "{messages}"\nresponsive = true\n')
    with pytest.raises(UserError, match="overlap .*responsive.toml's response_hours"):
        impact(str(messages), [str(learned_all_day)], executor=executor, start=11 * 3600.0)


def test_the_command_prints_the_verdict_and_refuses_bad_input(facts_and_tape, tmp_path, capsys):
    """``tradearena impact``: too few metaorders, and a responsive replay whose hours hold too
    few market orders, one line and exit 2 with nothing written."""
    from tradearena.evaluation.cli.main import main

    messages = str(facts_and_tape[1])
    with pytest.raises(SystemExit) as exited:
        main(["impact", messages, "replay", "--metaorders", "5", "--executor", "local"])
    assert exited.value.code == 2
    assert "argument --metaorders: must be >= 20, got 5" in capsys.readouterr().err
    out = tmp_path / "short"
    code = main(
        ["impact", messages, "responsive", "--from", "09:40", "--until", "10:30"]
        + ["--metaorders", "20", "--executor", "local", "--no-progress", "--out", str(out)]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "response_hours" in err
    assert "needs at least 300" in err and not out.exists()


def test_the_figure_panels_draw_each_market_beside_the_references():
    """Each panel draws a line per market on the axes it is given, beside its reference (the
    square-root law, 2/3 of the peak, the tape's propagator); a market whose bins all fall
    below zero draws nothing on the log axes."""
    from matplotlib.figure import Figure

    from tradearena.evaluation.analysis.impact_plots import (
        relaxation_curves,
        response_by_lag,
        square_root_points,
    )

    share = np.geomspace(1e-5, 1e-2, 50)
    curves = {
        "a": {
            "share": share,
            "impact": 0.5 * np.sqrt(share),
            "relaxation": np.ones(3),
            "response": np.ones(4),
        },
        "b": {
            "share": share,
            "impact": -np.ones(50),
            "relaxation": np.zeros(3),
            "response": np.zeros(4),
        },
    }
    axes = Figure().subplots(1, 3)
    square_root_points(curves, axes[0])
    labels = [line.get_label() for line in axes[0].get_lines()]
    assert labels == ["a", "b", "square root, Y = 0.5"]
    assert len(axes[0].get_lines()[1].get_xdata()) == 0 and axes[0].get_xscale() == "log"
    relaxation_curves(curves, np.array([0.5, 1.0, 3.0]), axes[1])
    assert [line.get_label() for line in axes[1].get_lines()][:2] == ["a", "b"]
    assert axes[1].get_lines()[0].get_xdata().tolist() == [0.0, 0.5, 1.0, 3.0]
    response_by_lag(curves, np.full(4, 1.3), axes[2])
    tape = [line for line in axes[2].get_lines() if line.get_label().startswith("the tape")]
    assert tape[0].get_ydata().tolist() == [1.3] * 4


def test_the_learned_flow_never_sweeps_into_a_seats_far_quote():
    """A seat bidding one lot at half the mid and asking at half again, in the committed
    learned market: the flow's market orders stop at the population's deepest level, and its
    depth rule rebuilds a swept side where the sweep went, not behind the seat's far quote;
    so the book, the seat's orders aside, is the market's without the seat (the null
    seat). Before, a sell larger than the population's two bid levels (at
    46149.5 s in this session) bought the seat's bid at half the price."""
    from dataclasses import replace

    from tradearena.evaluation.experiment.config import load_market
    from tradearena.evaluation.market.impact import _differences, _far_quotes, session_spec

    spec = load_market("configs/amzn_learned.toml")
    logs = []
    for seats in (1, 0):
        market = replace(session_spec(spec, 45_900.0, 30, 60.0), record=True).market(seats)
        market.reset(0)
        quotes: set[int] = set()
        while not market.done:
            market.step([_far_quotes(market.last_mid)] if seats else [])
            if seats:
                quotes.update(order[0] for order in market.book.owned(0))
        logs.append([row for row in market.book.log if row[2] not in quotes])
    assert _differences(*logs) == 0 and len(logs[0]) > 1_000
