"""Calibrating the references: estimators against known answers, tuning on its own sessions."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tradearena import agents
from tradearena.agents import calibration
from tradearena.agents.calibration import (
    CALIBRATION_SEED,
    best_parameter,
    calibrate_market,
    calibration_seeds,
    fill_intensity,
    trade_reach,
)
from tradearena.envs.data.tapes import Event
from tradearena.envs.seats import SeatedMarket
from tradearena.envs.spec import MarketSpec

LIGHT = MarketSpec(
    task="making", population="light", n_steps=60, position_limit=500, reward_scale=0.01
)


@pytest.mark.parametrize(("A", "kappa"), [(5.0, 1.5), (0.8, 0.6)])
def test_fill_intensity_recovers_the_exponential_law(A, kappa):
    """Reaches drawn so that P(reach >= delta) = 1 - exp(-A exp(-kappa delta)) exactly (the
    inverse of the survival function): the fit recovers A and kappa within 5%."""
    u = np.random.default_rng(0).random(40_000)
    reach = np.maximum((math.log(A) - np.log(-np.log1p(-u))) / kappa, 0.0)
    fitted_A, fitted_kappa, used = fill_intensity(reach)
    assert fitted_A == pytest.approx(A, rel=0.05)
    assert fitted_kappa == pytest.approx(kappa, rel=0.05)
    assert len(used) >= 2


def test_fill_intensity_needs_executions_at_two_distances():
    with pytest.raises(ValueError, match="too few executions"):
        fill_intensity(np.zeros(100))


def test_trade_reach_of_a_hand_built_log():
    """Two steps of 60 s from 100 s, mids 1000, 1002, 1001 (ticks). Step 0: a buyer lifts an
    ask at 1003 (3 above), then at 1001; a seller hits a bid at 998 (2 below). Step 1: one
    buy at 1001 (1 below the mid: reach 0); a new order and a warm-up trade are ignored."""
    log = np.array(
        [
            (90.0, Event.EXECUTE, 1, 100, 990, 1),  # before the open
            (100.0, Event.EXECUTE, 2, 100, 1003, -1),
            (110.0, Event.EXECUTE, 3, 100, 1001, -1),
            (120.0 - 1e-9, Event.EXECUTE, 4, 100, 998, 1),
            (130.0, Event.NEW, 5, 100, 1010, -1),
            (150.0, Event.EXECUTE, 6, 100, 1001, -1),
        ],
        dtype=float,
    )
    reach = trade_reach(log, np.array([1000.0, 1002.0, 1001.0]), 100.0, 60.0)
    np.testing.assert_array_equal(reach, [3.0, 2.0, 0.0, 0.0])


def test_calibration_sessions_are_apart_from_experiments():
    """Experiments spawn (seed, role, ...) under their root seed; calibration (i,) under its
    own entropy: no calibration session is an experiment's session."""
    seeds = calibration_seeds(3)
    assert [s.spawn_key for s in seeds] == [(0,), (1,), (2,)]
    assert all(s.entropy == CALIBRATION_SEED for s in seeds)


def test_calibrated_light_market():
    """The light population's mid moves about half a tick a step and fills decay by about 2
    per tick, the hand-set values the reference used before (0.6, 1.5) being near these."""
    calibration = calibrate_market(LIGHT)
    assert 0.4 < calibration.sigma < 0.8
    assert 1.0 < calibration.kappa < 3.0
    assert calibration.steps == 16 * 60
    assert calibrate_market(LIGHT) is calibration  # once per process


def test_a_kept_calibration_is_reused_in_a_new_process(tmp_path, monkeypatch):
    """`keep` writes the process's calibrations and tunings, keyed by the market's table; a
    process that `reuse`s the file gets the same values without computing them, and the
    reference built from them is the one built from computed values."""
    monkeypatch.setattr(calibration, "_DONE", {})
    monkeypatch.setattr(calibration, "_PORTABLE", set())
    built = agents.make("avellaneda_stoikov", market_spec=LIGHT)
    computed = calibrate_market(LIGHT)
    calibration.keep(tmp_path / "calibrations.json")

    monkeypatch.setattr(calibration, "_DONE", {})  # a new process
    monkeypatch.setattr(calibration, "_PORTABLE", set())
    calibration.reuse(tmp_path / "calibrations.json")
    assert calibration.once(("market", LIGHT, 16), lambda: pytest.fail("computed")) == computed
    again = agents.make("avellaneda_stoikov", market_spec=LIGHT)
    assert again.calibration == built.calibration
    assert (again.gamma, again.sigma, again.kappa) == (built.gamma, built.sigma, built.kappa)
    other = MarketSpec(task="making", n_steps=61)  # another market: not in the file
    assert calibration.once(("market", other, 16), lambda: "computed") == "computed"


def test_a_check_calibrates_as_far_as_it_can_tell_and_tunes_nothing(monkeypatch):
    """Within `untuned`: the light market's calibration stops after its first session (it
    can be estimated), a market maker alone (no trade) is still refused after all 16, the
    reference takes its grid's first gamma, and nothing is kept for the run."""
    monkeypatch.setattr(calibration, "_DONE", {})
    with calibration.untuned() as left:
        assert calibrate_market(LIGHT).sessions == 1
        quiet = MarketSpec(task="making", traders=({"type": "MarketMaker", "n_agents": 1},))
        with pytest.raises(ValueError, match=r"too few executions \(1920 step sides\)"):
            calibrate_market(quiet)
        assert agents.make("avellaneda_stoikov", market_spec=LIGHT).gamma == 0.001
    assert left == ["gamma over 7 values x 64 sessions"] and calibration._DONE == {}
    assert calibrate_market(LIGHT).sessions == 16  # outside: the whole calibration, kept


def test_best_parameter_is_the_argmax_of_the_tuning_sharpes():
    tuning = best_parameter(
        LIGHT,
        lambda g: agents.make("avellaneda_stoikov", market_spec=LIGHT, gamma=g),
        (0.01, 0.3),
        sessions=8,
    )
    assert tuning.best == tuning.grid[int(np.nanargmax(tuning.sharpes))]
    assert len(tuning.sharpes) == 2 and tuning.sessions == 8


def test_calibrated_reference_trades_on_the_rmsc04_day():
    """On a whole rmsc04 day (390 steps, limit 1,000 shares, dollars) the hand-set reference
    (gamma 0.1, sigma 0.6, kappa 1.5) quotes so wide that it barely trades; the calibrated
    one holds several times its inventory and earns more over the same 8 sessions."""
    spec = MarketSpec(
        task="making", population="rmsc04", n_steps=390, position_limit=1000, reward_scale=1.0
    )
    calibrated = agents.make("avellaneda_stoikov", market_spec=spec)
    assert calibrated.gamma in calibrated.GAMMAS and calibrated.gamma < 0.1
    hand_set = agents.make("avellaneda_stoikov", market_spec=spec, gamma=0.1, sigma=0.6, kappa=1.5)
    figures = {}
    for name, agent in (("calibrated", calibrated), ("hand_set", hand_set)):
        table = SeatedMarket(spec, [agent])
        results = [table.play(20_000 + s)[0] for s in range(8)]
        pnl = np.array([r["pnl"] for r in results])
        figures[name] = (pnl.mean(), np.mean([r["exposure"] for r in results]))
    assert figures["calibrated"][1] > 3 * figures["hand_set"][1]
    assert figures["calibrated"][0] > figures["hand_set"][0]
