"""Known answers of the flow mechanisms (`envs.simulator.arrivals`, `envs.simulator.sizes`): the
Hawkes process's mean rate, branching ratio and compensator, the intraday profile's bin counts,
the size mixture's round-lot share and mean, and the checks of their parameters."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from tradearena.envs.errors import ParameterError
from tradearena.envs.simulator.arrivals import (
    Hawkes,
    Profile,
    arrival_times,
    hawkes_times,
    profile_times,
    spread_times,
)
from tradearena.envs.simulator.market import Market
from tradearena.envs.simulator.sizes import SizeMixture
from tradearena.envs.simulator.traders import MarketMaker, Noise, ZeroIntelligence
from tradearena.envs.spec import MarketSpec, SpecError

MU, N, BETA = 1.0, 0.6, 2.0  # baseline per second, branching ratio, decay per second
T, BURN = 40_000.0, 200.0  # seconds simulated, seconds dropped before the process is stationary


def count_variance(rate: float, n: float, beta: float, window: float) -> float:
    """Var N(window) of a stationary exponential Hawkes process of mean ``rate``: its
    covariance density is c(u) = rate beta n (2 - n) / (2 (1 - n)) exp(-kappa |u|),
    kappa = beta (1 - n) (Hawkes 1971), so Var = rate W + 2 integral (W - u) c(u) du."""
    kappa = beta * (1 - n)
    c = rate * beta * n * (2 - n) / (2 * (1 - n))
    return rate * window + 2 * c * (window / kappa - (1 - math.exp(-kappa * window)) / kappa**2)


@pytest.fixture(scope="module")
def hawkes_sample() -> np.ndarray:
    times = hawkes_times(MU, Hawkes(N, BETA), 0.0, T, np.random.default_rng(7))
    return times[times >= BURN]


def test_hawkes_mean_rate_is_baseline_over_one_minus_branching(hawkes_sample):
    rate = MU / (1 - N)  # 2.5 per second
    span = T - BURN
    sd = math.sqrt(count_variance(rate, N, BETA, span))  # about 7.9 rates' worth of counts
    assert abs(len(hawkes_sample) - rate * span) < 4 * sd
    assert np.all(np.diff(hawkes_sample) >= 0)


def test_hawkes_branching_ratio_from_the_dispersion_of_counts(hawkes_sample):
    """var/mean of counts in windows of W seconds is Var N(W) / (rate W); solving it for n
    (it rises with n) recovers the branching ratio, within 4 standard errors of a sample
    variance of K windows (sd of the ratio about F sqrt(2 / (K - 1)))."""
    window = 50.0
    edges = np.arange(BURN, T + 1e-9, window)
    counts = np.histogram(hawkes_sample, edges)[0]
    ratio = counts.var(ddof=1) / counts.mean()

    def dispersion(n: float) -> float:
        rate = MU / (1 - n)
        return count_variance(rate, n, BETA, window) / (rate * window)

    low, high = 0.0, 0.99
    for _ in range(60):  # bisection
        mid = (low + high) / 2
        low, high = (mid, high) if dispersion(mid) < ratio else (low, mid)
    k = len(counts)
    tolerance = 4 * math.sqrt(2 / (k - 1)) * (1 - N) / 2  # dn/dF = (1 - n)^3 / 2, F = (1-n)^-2
    # 1/(1-n)^2 - (1/(1-n)^2 - 1) / (kappa W) (e^-40 negligible): 6.25 - 5.25 / 40
    assert dispersion(N) == pytest.approx(6.25 - 5.25 / 40, rel=1e-12)
    assert abs(low - N) < tolerance


@pytest.mark.parametrize("profile", [None, Profile((3.0, 1.0, 0.5, 2.0))])
def test_time_rescaled_hawkes_inter_arrivals_are_unit_exponential(profile):
    """The time-rescaling theorem: the compensator's increments between arrivals are Exp(1)
    (KS distance within the 1% critical value 1.63 / sqrt(m)); with a profile the baseline is
    MU times its rate."""
    day = (0.0, 4000.0)
    times = hawkes_times(MU, Hawkes(N, BETA), 0.0, 4000.0, np.random.default_rng(3), profile, day)
    warped = times if profile is None else profile.warp(times, day)
    base = MU * np.diff(warped, prepend=0.0)
    excited = np.empty(len(times))
    s, last = 0.0, 0.0  # s: sum of exp(-beta (t - t_j)) over past arrivals, at the last one
    for i, t in enumerate(times.tolist()):
        fade = math.exp(-BETA * (t - last))
        excited[i] = N * s * (1 - fade)  # the kernels' integral since the last arrival
        s, last = s * fade + 1.0, t
    rescaled = base + excited
    distance = stats.kstest(rescaled, "expon").statistic
    assert len(times) > 8000
    assert distance < 1.63 / math.sqrt(len(times))


def test_hawkes_keeps_the_mean_rate_it_is_given():
    """`arrival_times` with self-excitation: baseline rate (1 - n), mean rate the one given."""
    rate, span = 3.0, 20_000.0
    times = arrival_times(rate, 0.0, span, np.random.default_rng(5), hawkes=Hawkes(0.5, 1.0))
    sd = math.sqrt(count_variance(rate, 0.5, 1.0, span))
    assert abs(len(times) - rate * span) < 4 * sd + 4 * rate / (0.5 * 1.0)  # + start's transient


def test_u_shape_hand_computed():
    """ratio 3 over 4 bins: 1 + 2 (2x - 1)^2 at x = 1/8, 3/8, 5/8, 7/8 is 2.125, 1.125,
    1.125, 2.125, scaled to mean 1 (by 1.625)."""
    w = Profile.u_shape(3.0, bins=4).weights
    assert w == pytest.approx([2.125 / 1.625, 1.125 / 1.625, 1.125 / 1.625, 2.125 / 1.625])
    assert Profile.of({"shape": "u", "ratio": 3.0, "bins": 4}).weights == w


def test_profile_warp_is_the_integral_of_the_rates_and_unwarp_inverts_it():
    profile = Profile((1.0, 3.0))  # scaled to 0.5, 1.5 over bins of 50 s
    day = (100.0, 200.0)
    t = np.array([90.0, 100.0, 125.0, 150.0, 175.0, 200.0, 210.0])
    expected = [-5.0, 0.0, 12.5, 25.0, 62.5, 100.0, 115.0]  # first bin's rate before the day
    assert profile.warp(t, day).tolist() == pytest.approx(expected)
    assert profile.unwarp(np.array(expected), day) == pytest.approx(t)


def test_profile_bin_counts_follow_the_curve():
    """A Poisson process of 5 per second over a 4,000 s day: each 1,000 s bin's count is
    Poisson of 5,000 times its scaled weight (within 4 sd); noise times likewise share out."""
    profile = Profile((3.0, 1.0, 1.0, 3.0))  # 1.5, 0.5, 0.5, 1.5
    day = (0.0, 4000.0)
    times = profile_times(5.0, 0.0, 4000.0, np.random.default_rng(11), profile, day)
    counts = np.histogram(times, np.linspace(0, 4000, 5))[0]
    expected = 5000 * np.array([1.5, 0.5, 0.5, 1.5])
    assert np.all(np.abs(counts - expected) < 4 * np.sqrt(expected))
    spread = spread_times(40_000, 0.0, 4000.0, np.random.default_rng(12), profile, day)
    share = np.histogram(spread, np.linspace(0, 4000, 5))[0] / 40_000
    p = np.array([0.375, 0.125, 0.125, 0.375])
    assert np.all(np.abs(share - p) < 4 * np.sqrt(p * (1 - p) / 40_000))
    assert spread.min() >= 0 and spread.max() < 4000 and np.all(np.diff(spread) >= 0)


def test_zero_intelligence_arrivals_follow_the_profile_over_the_day():
    """A day of 390 one-minute steps from 09:30 (the warm-up at the first bin's rate): twice
    as many arrivals in the first and last quarters as in the two middle ones."""
    market = Market([ZeroIntelligence(100, arrival_rate=1 / 20, profile=[2, 1, 1, 2])], n_seats=0)
    market.reset(0)
    (trader,) = market.traders
    quarter = 390 * 60 / 4
    counts = np.histogram(trader.time, 34_200 + quarter * np.arange(5))[0]
    expected = 5 * quarter * np.array([4, 2, 2, 4]) / 3  # 5 per second, weights scaled to mean 1
    assert np.all(np.abs(counts - expected) < 4 * np.sqrt(expected))


def test_a_bursty_market_maker_wakes_at_its_mean_rate_in_hawkes_bursts():
    """With ``hawkes``, each maker's wake-ups are a Hawkes process of mean rate 1 / period:
    over a day of 390 minutes (the warm-up too) two makers' counts are within 4 sd of 2 day /
    period, and the var/mean of their counts in 60 s windows is the closed form's (within 4
    standard errors); without it they wake on a grid, one wake-up per period each."""
    period, hawkes = 2.0, Hawkes(0.6, 0.5)
    market = Market([MarketMaker(2, period=period, hawkes=hawkes)], n_seats=0)
    market.reset(0)
    (maker,) = market.traders
    day = market.close_time - market.start_time
    times, owners = maker.wakes.time, maker.wakes.owner
    assert np.all(np.diff(times) >= 0) and set(owners.tolist()) == {0, 1}
    rate = 1 / period
    sd = math.sqrt(2 * count_variance(rate, hawkes.branching, hawkes.decay, day))
    transient = 2 * rate * hawkes.branching / (hawkes.decay * (1 - hawkes.branching))
    assert abs(len(times) - 2 * rate * day) < 4 * sd + transient
    window, k = 60.0, int(day // 60)
    counts = np.histogram(times[owners == 0], market.start_time + window * np.arange(k + 1))[0]
    dispersion = count_variance(rate, hawkes.branching, hawkes.decay, window) / (rate * window)
    assert abs(counts.var(ddof=1) / counts.mean() - dispersion) < 4 * dispersion * math.sqrt(
        2 / (k - 1)
    )
    grid = Market([MarketMaker(2, period=period)], n_seats=0)
    grid.reset(0)
    assert abs(len(grid.traders[0].wakes.time) - 2 * day / period) <= 2


def test_a_market_makers_bad_hawkes_is_named():
    with pytest.raises(SpecError, match=r"traders\[0\]\.hawkes\.branching: must be in \[0, 1\)"):
        MarketSpec(traders=({"type": "MarketMaker", "hawkes": {"branching": 1, "decay": 1}},))


def test_size_mixture_round_lot_share_and_mean():
    """With probability 0.38 a geometric number of lots (mean 1.5) of 100 shares, else a
    log-normal odd lot (median 30, sigma 0.8) rounded into [1, 99]: the round-lot share and
    the mean within 4 standard errors of 200,000 draws; the closed-form mean against scipy's
    log-normal."""
    mix = SizeMixture(round_share=0.38, lot=100, lots_mean=1.5, odd_median=30, odd_sigma=0.8)
    n = 200_000
    sizes = mix.draw(np.random.default_rng(2), n)
    round_lots = sizes % 100 == 0
    assert sizes.dtype == np.int32 and sizes.min() >= 1
    assert np.all(sizes[~round_lots] <= 99)
    assert abs(round_lots.mean() - 0.38) < 4 * math.sqrt(0.38 * 0.62 / n)
    lognormal = stats.lognorm(0.8, scale=30)
    j = np.arange(1, 100)
    mass = np.diff(np.r_[0.0, lognormal.cdf(np.arange(1.5, 99)), 1.0])
    odd = float(np.dot(j, mass))
    assert mix.mean_odd == pytest.approx(odd, rel=1e-12)
    assert mix.mean == pytest.approx(0.38 * 150 + 0.62 * odd, rel=1e-12)
    assert abs(sizes.mean() - mix.mean) < 4 * sizes.std() / math.sqrt(n)
    assert sizes[round_lots].mean() / 100 == pytest.approx(1.5, abs=4 * math.sqrt(0.75 / 76_000))


def test_size_mixture_with_lot_weights():
    mix = SizeMixture.of({"round_share": 1.0, "lots": [1, 1, 2]})
    assert mix.lots == (0.25, 0.25, 0.5)
    assert mix.mean == pytest.approx(100 * (1 * 0.25 + 2 * 0.25 + 3 * 0.5))  # 225 shares
    sizes = mix.draw(np.random.default_rng(0), 40_000)
    assert set(np.unique(sizes).tolist()) == {100, 200, 300}


def test_zero_intelligence_private_value_lot_is_the_mixture_mean():
    mix = SizeMixture(round_share=0.5)
    assert ZeroIntelligence(3, sizes=mix).lot == mix.mean
    assert ZeroIntelligence(3).lot == 50.5  # (1 + 100) / 2


@pytest.mark.parametrize(
    ("table", "path", "words"),
    [
        ({"hawkes": {"branching": 0.5, "decy": 1.0}}, "hawkes.decy", "did you mean 'decay'?"),
        ({"hawkes": {"branching": 1.0, "decay": 1.0}}, "hawkes.branching", "in [0, 1)"),
        ({"hawkes": {"branching": 0.5}}, "hawkes.decay", "is missing"),
        ({"hawkes": {"branching": 0.5, "decay": -1}}, "hawkes.decay", "> 0 (per second)"),
        ({"profile": {"shape": "u", "ration": 2}}, "profile.ration", "did you mean 'ratio'?"),
        ({"profile": {"shape": "w"}}, "profile.shape", "must be one of ['u'], got 'w'"),
        ({"profile": [1.0, 0.0]}, "profile", "positive relative rates"),
        ({"profile": [1.0, "x"]}, "profile", "positive relative rates"),
        ({"profile": "u"}, "profile", "a list of relative rates or a table"),
        ({"sizes": {"round_shares": 0.4}}, "sizes.round_shares", "did you mean 'round_share'?"),
        ({"sizes": {"round_share": 1.4}}, "sizes.round_share", "a probability in [0, 1]"),
        ({"sizes": {"odd_median": 120}}, "sizes.odd_median", "in [1, 100) shares"),
        ({"sizes": {"lots": [1], "lots_mean": 2}}, "sizes.lots", "not both"),
        ({"sizes": {"lot": 1.5}}, "sizes.lot", "an integer >= 2 shares"),
        ({"hawks": {"branching": 0.5}}, "hawks", "did you mean 'hawkes'?"),
    ],
)
def test_a_bad_mechanism_parameter_is_named(table, path, words):
    with pytest.raises(SpecError) as error:
        MarketSpec(traders=({"type": "ZeroIntelligence", **table},))
    assert str(error.value).startswith(f"traders[0].{path}: ")
    assert words in str(error.value)


def test_noise_takes_profile_and_sizes_but_not_hawkes():
    with pytest.raises(SpecError, match=r"traders\[0\]\.hawkes: Noise takes no parameter"):
        MarketSpec(traders=({"type": "Noise", "hawkes": {"branching": 0.5, "decay": 1.0}},))
    with pytest.raises(ParameterError, match="profile: must be positive"):
        Noise(5, profile=[])
