"""Zero-intelligence traders with private values (ABIDES' ZeroIntelligenceAgent)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tradearena.envs.simulator.draws import normal, poisson
from tradearena.envs.simulator.flow import linear_recursion
from tradearena.envs.simulator.orders import Kind, Orders, Program, Rule
from tradearena.envs.simulator.traders.base import SIDES, Trader, poisson_times, window

if TYPE_CHECKING:
    from tradearena.envs.simulator.market import Market


_REPLACE, _CANCEL_ALL = int(Kind.REPLACE), int(Kind.CANCEL_ALL)
_SIGNS = np.array([-1.0, 1.0])


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
    """

    def __init__(
        self,
        n_agents: int = 102,
        *,
        r_bar: int = 10_000,
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
    ) -> None:
        if kappa <= 0:
            raise ValueError(f"kappa must be > 0 (per second), got {kappa}")
        self.n_owners = n_agents
        self.r_bar, self.drift, self.kappa, self.sigma = r_bar, drift, kappa, sigma
        self.shock_rate, self.shock_mean, self.shock_std = shock_rate, shock_mean, shock_std
        self.arrival_rate, self.obs_noise = arrival_rate, obs_noise
        self.private_value_std, self.q_max = private_value_std, q_max
        self.surplus, self.size = surplus, size
        self.lot = (size[0] + size[1]) / 2

    def reset(self, market: Market, owners: range, rng: np.random.Generator) -> None:
        super().reset(market, owners, rng)
        n = self.n_owners
        theta = normal(rng, 0.0, self.private_value_std, (n, 2 * self.q_max))
        self.theta = -np.sort(-theta, axis=1)  # descending: marginal value falls with holdings
        start = market.start_time
        self.time, agent = poisson_times(self.arrival_rate, n, start, market.close_time, rng)
        m = len(self.time)
        self.start = start
        self.fundamental = self.fundamental_path(self.time, start, rng)
        obs = self.fundamental + normal(rng, 0.0, self.obs_noise, m)
        forecast = self._forecast(obs, self.time, market.close_time)
        side = SIDES[rng.integers(0, 2, size=m)]  # as rng.choice(SIDES, size=m) draws
        surplus = rng.integers(self.surplus[0], self.surplus[1] + 1, size=m)
        self.limit = forecast - side * surplus  # ticks, before the private value
        self.batch = Orders.build(
            self.time,
            Kind.REPLACE,
            side,
            0,
            rng.integers(self.size[0], self.size[1] + 1, size=m, dtype=np.int32),
            owners.start + agent,
        )

    def value_at(self, t: float) -> float:
        """The fundamental r (ticks) at time ``t`` of the session: its value at the last
        arrival up to ``t`` (the mean before the first)."""
        i = int(np.searchsorted(self.time, t, side="right")) - 1
        return float(self.fundamental[i]) if i >= 0 else float(self.mean(t, self.start))

    def forecast_close(self, observed: float, t: float, close: float) -> float:
        """The value at ``close`` forecast from ``observed`` (ticks) at ``t``: the deviation
        from the mean decays by exp(-kappa (close - t)), as the agents forecast."""
        return float(self._forecast(observed, t, close))

    def _forecast(
        self, observed: np.ndarray | float, t: np.ndarray | float, close: float
    ) -> np.ndarray | float:
        """`forecast_close` of observations at times ``t`` (arrays alike, or scalars)."""
        deviation = (observed - self.mean(t, self.start)) * np.exp(-self.kappa * (close - t))
        return self.mean(close, self.start) + deviation

    def mean(self, t: np.ndarray | float, start: float) -> np.ndarray | float:
        """The level r reverts to at time ``t`` (ticks), for a session from ``start``."""
        return self.r_bar + self.drift * (t - start)

    def fundamental_path(
        self, times: np.ndarray, start: float, rng: np.random.Generator
    ) -> np.ndarray:
        """r at sorted ``times`` (seconds), from the mean at ``start``: exact OU transitions of
        r - mean plus megashocks, shape like ``times``."""
        dt = np.diff(times, prepend=start)
        decay = np.exp(-self.kappa * dt)
        std = self.sigma * np.sqrt((1 - decay**2) / (2 * self.kappa))
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
