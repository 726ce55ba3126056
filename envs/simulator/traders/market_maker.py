"""Market makers: ladders of quotes on both sides of the mid, renewed periodically."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tradearena.envs.simulator.arrivals import Hawkes, arrival_times
from tradearena.envs.simulator.draws import uniform
from tradearena.envs.simulator.flow import periodic_times
from tradearena.envs.simulator.orders import Kind, Orders, Program, Rule
from tradearena.envs.simulator.traders.base import Trader, members, require, wake_period, window

if TYPE_CHECKING:
    from tradearena.envs.simulator.market import Market


class MarketMaker(Trader):
    """``n_agents`` market makers (after ABIDES' AdaptiveMarketMakerAgent, without the
    adaptive sizing).

    Each wakes every ``period`` seconds (its own random phase) and replaces its quotes with
    ``levels`` bids and ``levels`` asks of ``size`` shares: the best at ``half_spread`` ticks
    from the last mid (rounded outward), the others ``spacing`` ticks apart. This keeps a
    synthetic book liquid. With ``hawkes`` (``{branching, decay}``, see
    `envs.simulator.arrivals.Hawkes`) each wakes at the times of its own Hawkes process of
    mean rate 1 / ``period`` instead: quote updates in bursts, as fast liquidity providers
    send them.
    """

    def __init__(
        self,
        n_agents: int = 2,
        *,
        period: float = 60.0,
        levels: int = 10,
        half_spread: int = 1,
        spacing: int = 1,
        size: int = 100,
        hawkes: Hawkes | dict | None = None,
    ) -> None:
        require(isinstance(levels, int) and levels >= 1, "levels", "an integer >= 1", levels)
        require(isinstance(size, int) and size >= 1, "size", "an integer >= 1 shares", size)
        self.n_owners = members(n_agents)
        self.hawkes = Hawkes.of(hawkes)
        self.period, self.levels, self.half_spread = wake_period(period), levels, half_spread
        self.spacing, self.size = spacing, size
        # one wake-up: a cancel, then `levels` bids and `levels` asks
        steps = np.arange(levels) * spacing
        self.wake_kind = np.r_[Kind.CANCEL_ALL, np.full(2 * levels, Kind.LIMIT)]
        self.wake_side = np.r_[0, np.ones(levels, np.int64), -np.ones(levels, np.int64)]
        self.wake_offset = np.r_[0, -steps, steps]  # ticks from the best quote of its side

    def reset(self, market: Market, owners: range, rng: np.random.Generator) -> None:
        super().reset(market, owners, rng)
        start = market.start_time
        if self.hawkes is None:
            phase = start + uniform(rng, 0.0, self.period, self.n_owners)
            time, agents = periodic_times(phase, self.period, start, market.close_time)
        else:
            each = [
                arrival_times(1 / self.period, start, market.close_time, rng, hawkes=self.hawkes)
                for _ in range(self.n_owners)
            ]
            time = np.concatenate(each)
            agents = np.repeat(np.arange(self.n_owners), [len(times) for times in each])
            order = np.argsort(time, kind="stable")
            time, agents = time[order], agents[order]
        self.wakes = Orders.build(time, Kind.CANCEL_ALL, 0, 0, 0, owners.start + agents)

    def program(self) -> Program:
        return Program(
            self.wakes,
            Rule.MAKER,
            levels=self.levels,
            spacing=self.spacing,
            size=self.size,
            half_spread=self.half_spread,
        )

    def orders(self, market: Market, t0: float, t1: float, rng: np.random.Generator) -> Orders:
        """The reference of the compiled ``Rule.MAKER`` in envs/simulator/flow.pyx (`Flow`,
        which stands in for it once `program` is given); tests/envs/test_flow.py
        (``test_compiled_flow_equals_orders``) holds the two equal to the bit."""
        w = window(self.wakes.time, t0, t1)
        n, per_wake = w.stop - w.start, 1 + 2 * self.levels
        if not n:
            return Orders.empty()
        mid = market.last_mid
        bid = int(np.floor(mid - self.half_spread))
        ask = int(np.ceil(mid + self.half_spread))
        side = np.tile(self.wake_side, n)
        return Orders.build(
            np.repeat(self.wakes.time[w], per_wake),
            np.tile(self.wake_kind, n),
            side,
            np.tile(self.wake_offset, n) + np.where(side < 0, ask, bid),
            self.size,
            np.repeat(self.wakes.owner[w], per_wake),
        )
