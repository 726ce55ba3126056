"""The zero-intelligence traders' fundamental options: volatility regimes against their closed
forms, a price level and tick of the user's choosing, and the forecast horizon that keeps the
morning moving."""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import pytest

from tradearena.envs.simulator.fundamental import VolatilityRegimes
from tradearena.envs.simulator.market import Market
from tradearena.envs.simulator.traders import ZeroIntelligence, light
from tradearena.envs.spec import MarketSpec, SpecError

CONFIGS = Path(__file__).resolve().parents[2] / "configs"

# calm 1, volatile 3 ticks/sqrt s; volatile a third of the time (rates 1/100 in, 1/50 out)
REGIMES = {"sigma": 1.0, "volatile_sigma": 3.0, "volatile_rate": 0.01, "calm_rate": 0.02}


def test_closed_forms_of_the_regimes():
    """p = 0.01 / 0.03 = 1/3; s2 = 2/3 + 9/3 = 11/3; kurtosis 3 (2/3 + 81/3) / (11/3)^2 - 3."""
    regimes = VolatilityRegimes(1.0, 3.0, 0.01, 0.02)
    assert regimes.volatile_share == pytest.approx(1 / 3, rel=1e-15)
    assert regimes.variance_rate == pytest.approx(11 / 3, rel=1e-15)
    assert regimes.excess_kurtosis == pytest.approx(3 * (83 / 3) / (11 / 3) ** 2 - 3, rel=1e-14)
    assert VolatilityRegimes(2.0, 2.0, 0.5, 0.1).excess_kurtosis == pytest.approx(0.0, abs=1e-14)


def test_regimes_hold_their_stationary_shares_and_mean_durations():
    """Over 10^6 s (about 6,700 cycles): a third of the time volatile; runs of the volatile
    regime last 1 / calm_rate = 50 s on average, calm ones 1 / volatile_rate = 100 s."""
    regimes = VolatilityRegimes(1.0, 3.0, 0.01, 0.02)
    times = np.arange(1_000_000, dtype=float)
    volatile = regimes.volatile(times, 0.0, np.random.default_rng(0))
    assert volatile.mean() == pytest.approx(1 / 3, abs=0.01)
    edges = np.flatnonzero(np.diff(volatile.astype(np.int8)))
    runs = np.diff(edges)  # alternate volatile and calm runs, in seconds on a 1 s grid
    first = 0 if volatile[edges[0] + 1] else 1  # the first whole run's regime
    volatile_runs, calm_runs = runs[first::2], runs[1 - first :: 2]
    # a run on the 1 s grid is the exponential holding time rounded: mean about 1 / rate
    assert volatile_runs.mean() == pytest.approx(50.0, rel=0.04)
    assert calm_runs.mean() == pytest.approx(100.0, rel=0.04)


def test_fundamental_steps_have_the_regimes_variance_and_kurtosis():
    """With almost no mean reversion, one-second steps are a scale mixture of normals: variance
    11/3 ticks^2 and excess kurtosis 3.175 (closed form), against 0 for one regime."""
    zi = ZeroIntelligence(1, kappa=1e-9, shock_rate=0.0, r_bar=1_000, **REGIMES)
    times = np.arange(1.0, 2_000_001.0)
    steps = np.diff(zi.fundamental_path(times, 0.0, np.random.default_rng(3)))
    z = (steps - steps.mean()) / steps.std()
    assert steps.var() == pytest.approx(zi.regimes.variance_rate, rel=0.03)
    assert np.mean(z**4) - 3 == pytest.approx(zi.regimes.excess_kurtosis, rel=0.08)
    plain = ZeroIntelligence(1, kappa=1e-9, shock_rate=0.0, r_bar=1_000, sigma=1.0)
    calm = np.diff(plain.fundamental_path(times, 0.0, np.random.default_rng(3)))
    assert np.mean(((calm - calm.mean()) / calm.std()) ** 4) - 3 == pytest.approx(0.0, abs=0.02)


def test_fundamental_level_has_the_stationary_variance_of_the_mixture():
    """With mean reversion kappa = 0.01 /s the level's variance is s2 / (2 kappa) = 183.3."""
    zi = ZeroIntelligence(1, kappa=0.01, shock_rate=0.0, r_bar=1_000, **REGIMES)
    times = np.arange(1.0, 2_000_001.0)
    level = zi.fundamental_path(times, 0.0, np.random.default_rng(4))[10_000:]
    assert level.var() == pytest.approx((11 / 3) / 0.02, rel=0.05)
    assert level.mean() == pytest.approx(1_000.0, abs=1.0)


def test_tick_scale_multiplies_every_tick_parameter():
    zi = ZeroIntelligence(
        2, tick_scale=14.0, sigma=0.05, volatile_sigma=0.2, obs_noise=1.0, private_value_std=5.0
    )
    assert (zi.sigma, zi.obs_noise, zi.private_value_std) == (0.05 * 14.0, 14.0, 70.0)
    assert (zi.shock_mean, zi.shock_std) == (140.0, 28.0)
    assert (zi.regimes.calm_sigma, zi.regimes.volatile_sigma) == (0.05 * 14.0, 0.2 * 14.0)


def test_a_220_dollar_stock_in_cents_with_a_13_tick_spread():
    """configs/stock_220.toml: starts at 22,000 ticks of $0.01 ($220; the open, after the
    warm-up, within 50 ticks), the fundamental reverts there (r_bar left to the market), and
    the spread averages 13 ticks over ten days."""
    table = tomllib.loads((CONFIGS / "stock_220.toml").read_text())["market"]
    spec = MarketSpec(**(table | {"n_steps": 390}))
    market = spec.market(0)
    spreads, closes = [], []
    for seed in range(10):
        market.reset(seed)
        assert market.mids()[0] * market.tick_size == pytest.approx(220.0, abs=0.5)
        while not market.done:
            market.step()
        spreads.append(np.nanmean(market.spreads()))
        closes.append(market.mids()[-1])
    zi = market.traders[1]
    assert zi.level == 22_000 and zi.private_value_std == 70.0
    assert np.abs(zi.theta).mean() == pytest.approx(70.0 * np.sqrt(2 / np.pi), rel=0.15)
    assert np.mean(spreads) == pytest.approx(13.0, abs=1.5)
    assert abs(np.mean(closes) - 22_000) < 0.05 * 22_000  # within 5% of the level at the close


def hourly_moves(horizon: float | None, days: int = 30) -> np.ndarray:
    """Mean absolute hourly move of the mid (ticks) in each of the day's 6.5 hours, light
    population with its zero-intelligence traders forecasting at ``horizon``."""
    traders = light()
    traders[1] = ZeroIntelligence(20, arrival_rate=1 / 60, horizon=horizon)
    market = Market(traders, n_seats=0, n_steps=390)
    moves = []
    for seed in range(days):
        market.reset(seed)
        while not market.done:
            market.step()
        moves.append(np.abs(np.diff(market.mids()[::60])))
    return np.mean(moves, axis=0)


def test_a_forecast_horizon_unfreezes_the_morning():
    """Weighting by exp(-kappa (close - t)) leaves the first hour still (exp(-3.9) = 0.02 of a
    deviation counts at the open); a 600 s horizon weights every hour by exp(-0.1) = 0.90, so
    the first hour moves about as much as the later ones."""
    frozen, moving = hourly_moves(None), hourly_moves(600.0)
    assert frozen[0] / frozen[-1] < 0.3
    assert moving[0] / moving[-1] > 0.5
    assert moving[0] > 3 * frozen[0]


def test_forecast_with_a_horizon_by_hand():
    """Deviation 10 ticks at t, kappa 1e-3, horizon 500 s: 10 exp(-0.5) above the mean."""
    zi = ZeroIntelligence(1, r_bar=1_000, kappa=1e-3, horizon=500.0)
    market = Market([zi], n_seats=0, n_steps=5)
    market.reset(0)
    assert zi.forecast_close(1_010.0, 40_000.0, 57_600.0) == 1_000 + 10.0 * np.exp(-0.5)
    zi.horizon = None  # to the close: 17,600 s away
    assert zi.forecast_close(1_010.0, 40_000.0, 57_600.0) == 1_000 + 10.0 * np.exp(-17.6)


@pytest.mark.parametrize(
    "table, field, words",
    [
        ({"volatile_sigam": 0.1}, "volatile_sigam", "(did you mean 'volatile_sigma'?)"),
        ({"horizn": 60.0}, "horizn", "(did you mean 'horizon'?)"),
        ({"calm_rate": -1.0}, "calm_rate", "must be > 0 per second, got -1.0"),
        ({"volatile_sigma": -0.1}, "volatile_sigma", "must be >= 0, got -0.1"),
        ({"tick_scale": 0.0}, "tick_scale", "must be > 0 ticks per unit, got 0.0"),
        ({"horizon": -5.0}, "horizon", "must be >= 0 seconds or None, got -5.0"),
    ],
)
def test_bad_fundamental_parameters_name_their_field(table, field, words):
    with pytest.raises(SpecError) as error:
        MarketSpec(traders=({"type": "Noise"}, {"type": "ZeroIntelligence", **table}))
    assert error.value.path == ("traders", 1, field)
    assert words in str(error.value)
