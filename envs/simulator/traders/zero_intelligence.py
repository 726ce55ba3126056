"""Zero-intelligence traders with private values (ABIDES' ZeroIntelligenceAgent)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tradearena.envs.simulator.arrivals import Hawkes, Profile
from tradearena.envs.simulator.draws import normal, poisson
from tradearena.envs.simulator.flow import linear_recursion
from tradearena.envs.simulator.fundamental import VolatilityRegimes
from tradearena.envs.simulator.orders import Kind, Orders, Program, Rule
from tradearena.envs.simulator.sizes import SizeMixture
from tradearena.envs.simulator.traders.base import (
    SIDES,
    Trader,
    members,
    order_sizes,
    poisson_times,
    require,
    size_range,
    window,
)

if TYPE_CHECKING:
    from tradearena.envs.simulator.market import Market


_REPLACE, _CANCEL_ALL = int(Kind.REPLACE), int(Kind.CANCEL_ALL)
_SIGNS = np.array([-1.0, 1.0])


MAX_HOLDINGS = 10**8
"""The most private values a zero-intelligence population may draw per session (``n_agents``
x ``q_max``, two values each, 8 bytes a value: 1.6 GB); ABIDES' rmsc04 draws 102 x 10."""


class ZeroIntelligence(Trader):
    """ZI agents with private values over a mean-reverting fundamental.

    The model of Byrd, Hybinette and Balch, "ABIDES" (2019), after Wah and Wellman (2017):
    the fundamental r_t (ticks) is an Ornstein-Uhlenbeck process toward the mean
    m_t = ``r_bar`` + ``drift`` * (t - start) (drift in ticks per second, 0 by default: a
    trending market otherwise) with rate ``kappa`` (per second) and volatility ``sigma``
    (ticks per sqrt second), plus megashocks
    arriving at ``shock_rate`` per second of size +-N(shock_mean, shock_std) ticks. Each agent
    has private values theta (2 q_max increments, sorted descending, N(0, private_value_std)
    ticks), one per lot of the mean order size, and arrives as a Poisson process of
    ``arrival_rate`` per second. On arrival it cancels its resting order, observes r_t with
    N(0, obs_noise) noise, forecasts the value at the close (mean reversion of the observation
    toward the mean), picks buy or sell at random and sends a limit order of ``size`` shares at
    its value (forecast + theta at its holdings) minus (buy) or plus (sell) a surplus drawn
    from ``surplus`` ticks. An agent at +-q_max lots only cancels instead of trading further
    that way.

    Flow mechanisms, off by default: ``profile`` (an `envs.simulator.arrivals.Profile`, a
    list of relative rates per equal bin of the day, or ``{shape = "u", ratio, bins}``) makes
    the arrival rate follow the day; ``hawkes`` (``{branching, decay}``) makes the
    population's arrivals self-exciting at the same mean rate; ``sizes`` (an
    `envs.simulator.sizes.SizeMixture` or its table) draws sizes with round lots instead of
    ``size``, and the private values' lot is then its mean.

    Options, all off by default (the model above): ``r_bar`` None reverts to the market's
    initial price. ``tick_scale`` (ticks per unit) multiplies every tick-denominated parameter
    (``sigma``, ``volatile_sigma``, ``shock_mean``, ``shock_std``, ``obs_noise``,
    ``private_value_std``, ``surplus``), so one number carries the population to a market
    with a finer tick (a $220 stock with a one-cent tick and a 13-tick spread). With
    ``volatile_sigma`` the volatility switches between ``sigma`` and ``volatile_sigma``
    (before scaling) at rates ``volatile_rate`` (calm to volatile) and ``calm_rate`` (back),
    per second (`envs.simulator.fundamental.VolatilityRegimes`). With ``horizon`` (seconds)
    agents forecast the value ``horizon`` seconds ahead, weighting the observed deviation by
    exp(-kappa horizon) the whole day, instead of the value at the close (exp(-kappa
    (close - t)), which makes the agents ignore the fundamental in the morning).
    """

    def __init__(
        self,
        n_agents: int = 102,
        *,
        r_bar: int | None = None,
        drift: float = 0.0,
        kappa: float = 1.67e-4,
        sigma: float = 0.05,
        shock_rate: float = 1 / 7200,
        shock_mean: float = 10.0,
        shock_std: float = 2.0,
        arrival_rate: float = 1 / 175,
        obs_noise: float = 1.0,
        private_value_std: float = 5.0,
        q_max: int = 10,
        surplus: tuple[int, int] = (0, 10),
        size: tuple[int, int] = (1, 100),
        profile: Profile | list[float] | dict | None = None,
        hawkes: Hawkes | dict | None = None,
        sizes: SizeMixture | dict | None = None,
        tick_scale: float = 1.0,
        volatile_sigma: float | None = None,
        volatile_rate: float = 1 / 3600,
        calm_rate: float = 1 / 1800,
        horizon: float | None = None,
    ) -> None:
        require(kappa > 0, "kappa", "> 0 (per second)", kappa)
        require(r_bar is None or r_bar > 0, "r_bar", "> 0 ticks or None", r_bar)
        require(0 < tick_scale < np.inf, "tick_scale", "> 0 ticks per unit", tick_scale)
        volatile = volatile_sigma is not None
        require(not volatile or volatile_sigma >= 0, "volatile_sigma", ">= 0", volatile_sigma)
        require(volatile_rate > 0, "volatile_rate", "> 0 per second", volatile_rate)
        require(calm_rate > 0, "calm_rate", "> 0 per second", calm_rate)
        require(horizon is None or horizon >= 0, "horizon", ">= 0 seconds or None", horizon)
        require(0 < arrival_rate < np.inf, "arrival_rate", "> 0 per second", arrival_rate)
        for name, value in (
            ("sigma", sigma),
            ("shock_rate", shock_rate),
            ("shock_std", shock_std),
            ("obs_noise", obs_noise),
            ("private_value_std", private_value_std),
        ):
            require(0 <= value < np.inf, name, "a finite number >= 0", value)
        self.n_owners = members(n_agents)
        whole = isinstance(q_max, int) and not isinstance(q_max, bool)
        held = f"an integer in [1, {MAX_HOLDINGS // self.n_owners:,}] for {self.n_owners:,} agents"
        require(whole and 1 <= q_max * self.n_owners <= MAX_HOLDINGS, "q_max", held, q_max)
        low, high = surplus if isinstance(surplus, tuple | list) and len(surplus) == 2 else (-1, -1)
        ok = all(isinstance(x, int) for x in (low, high)) and 0 <= low <= high
        require(ok, "surplus", "[low, high] ticks with 0 <= low <= high", surplus)
        self.r_bar, self.drift, self.kappa = r_bar, drift, kappa
        self.sigma = sigma * tick_scale
        self.shock_rate = shock_rate
        self.shock_mean, self.shock_std = shock_mean * tick_scale, shock_std * tick_scale
        self.arrival_rate, self.obs_noise = arrival_rate, obs_noise * tick_scale
        self.private_value_std, self.q_max = private_value_std * tick_scale, q_max
        self.surplus, self.size, self.tick_scale = surplus, size_range(size), tick_scale
        self.profile, self.hawkes = Profile.of(profile), Hawkes.of(hawkes)
        self.sizes = SizeMixture.of(sizes)
        self.lot = (size[0] + size[1]) / 2 if self.sizes is None else self.sizes.mean
        self.regimes = None
        if volatile:
            sigmas = (self.sigma, volatile_sigma * tick_scale)
            self.regimes = VolatilityRegimes(*sigmas, volatile_rate, calm_rate)
        self.horizon = horizon
        self.level = r_bar

    def reset(self, market: Market, owners: range, rng: np.random.Generator) -> None:
        super().reset(market, owners, rng)
        self.level = market.initial_price if self.r_bar is None else self.r_bar
        n = self.n_owners
        theta = normal(rng, 0.0, self.private_value_std, (n, 2 * self.q_max))
        self.theta = -np.sort(-theta, axis=1)  # descending: marginal value falls with holdings
        start = market.start_time
        self.time, agent = poisson_times(
            self.arrival_rate,
            n,
            start,
            market.close_time,
            rng,
            profile=self.profile,
            hawkes=self.hawkes,
            day=market.day,
        )
        m = len(self.time)
        self.start = start
        self.fundamental = self.fundamental_path(self.time, start, rng)
        obs = self.fundamental + normal(rng, 0.0, self.obs_noise, m)
        forecast = self._forecast(obs, self.time, market.close_time)
        side = SIDES[rng.integers(0, 2, size=m)]  # as rng.choice(SIDES, size=m) draws
        surplus = rng.integers(self.surplus[0], self.surplus[1] + 1, size=m) * self.tick_scale
        self.limit = forecast - side * surplus  # ticks, before the private value
        self.batch = Orders.build(
            self.time,
            Kind.REPLACE,
            side,
            0,
            order_sizes(self.size, self.sizes, m, rng),
            owners.start + agent,
        )

    def value_at(self, t: float) -> float:
        """The fundamental r (ticks) at time ``t`` of the session: its value at the last
        arrival up to ``t`` (the mean before the first)."""
        i = int(np.searchsorted(self.time, t, side="right")) - 1
        return float(self.fundamental[i]) if i >= 0 else float(self.mean(t, self.start))

    def forecast_close(self, observed: float, t: float, close: float) -> float:
        """The value the agents forecast from ``observed`` (ticks) at ``t``: at ``close``, the
        deviation from the mean decaying by exp(-kappa (close - t)); with ``horizon``,
        ``horizon`` seconds ahead, decaying by exp(-kappa horizon)."""
        return float(self._forecast(observed, t, close))

    def _forecast(
        self, observed: np.ndarray | float, t: np.ndarray | float, close: float
    ) -> np.ndarray | float:
        """`forecast_close` of observations at times ``t`` (arrays alike, or scalars)."""
        target = close if self.horizon is None else t + self.horizon
        deviation = (observed - self.mean(t, self.start)) * np.exp(-self.kappa * (target - t))
        return self.mean(target, self.start) + deviation

    def mean(self, t: np.ndarray | float, start: float) -> np.ndarray | float:
        """The level r reverts to at time ``t`` (ticks), for a session from ``start``:
        ``r_bar`` (the market's initial price when None) plus the drift."""
        return self.level + self.drift * (t - start)

    def fundamental_path(
        self, times: np.ndarray, start: float, rng: np.random.Generator
    ) -> np.ndarray:
        """r at sorted ``times`` (seconds), from the mean at ``start``: exact OU transitions of
        r - mean plus megashocks, shape like ``times``. With volatility regimes, each
        transition has the volatility of the regime at its start."""
        dt = np.diff(times, prepend=start)
        decay = np.exp(-self.kappa * dt)
        sigma = self.sigma
        if self.regimes is not None:
            sigma = self.regimes.sigma(times - dt, start, rng)  # interval starts
        std = sigma * np.sqrt((1 - decay**2) / (2 * self.kappa))
        kicks = std * normal(rng, 0.0, 1.0, len(times))
        shocks = poisson(rng, self.shock_rate * dt)
        for i in np.flatnonzero(shocks):
            sizes = rng.normal(self.shock_mean, self.shock_std, size=shocks[i])
            signs = _SIGNS[rng.integers(0, 2, size=shocks[i])]  # as rng.choice(_SIGNS, ...)
            kicks[i] += float(np.sum(signs * sizes))
        return self.mean(times, start) + linear_recursion(decay, kicks)  # r - mean, from 0

    def program(self) -> Program:
        return Program(
            self.batch,
            Rule.ZERO_INTELLIGENCE,
            value=self.limit,
            theta=self.theta,
            first_owner=self.owners.start,
            lot=self.lot,
            q_max=self.q_max,
        )

    def orders(self, market: Market, t0: float, t1: float, rng: np.random.Generator) -> Orders:
        """The reference of the compiled ``Rule.ZERO_INTELLIGENCE`` in envs/simulator/flow.pyx
        (`Flow`, which stands in for it once `program` is given); tests/envs/test_flow.py
        (``test_compiled_flow_equals_orders``) holds the two equal to the bit."""
        w = window(self.time, t0, t1)
        batch = self.batch.take(w)
        if not len(batch.time):
            return batch
        agent = batch.owner - self.owners.start
        holdings = market.book.positions(self.owners.start, self.owners.stop)[agent]
        units = np.rint(holdings / self.lot).astype(np.int64)
        index = units + (self.q_max - (batch.side < 0))  # buy: next lot's value; sell: last's
        allowed = (index >= 0) & (index < 2 * self.q_max)
        theta = self.theta[agent, np.minimum(np.maximum(index, 0), 2 * self.q_max - 1)]
        batch.price[:] = np.maximum(np.rint(self.limit[w] + theta), 1)
        batch.kind[:] = np.where(allowed, _REPLACE, _CANCEL_ALL)
        return batch
