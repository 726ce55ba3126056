"""Momentum traders: buy when the short moving average of the mid is above the long one."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tradearena.envs.simulator.draws import uniform
from tradearena.envs.simulator.flow import periodic_times
from tradearena.envs.simulator.orders import Kind, Orders, Program, Rule
from tradearena.envs.simulator.sizes import SizeMixture
from tradearena.envs.simulator.traders.base import (
    Trader,
    members,
    order_sizes,
    require,
    size_range,
    wake_period,
    window,
)

if TYPE_CHECKING:
    from tradearena.envs.simulator.market import Market


class Momentum(Trader):
    """``n_agents`` momentum traders (ABIDES' MomentumAgent).

    Each wakes every ``period`` seconds (its own random phase) and compares the mean of the
    last ``short`` and ``long`` mids the market recorded at its decision steps: short above
    long buys, below sells, with a limit order at the opposite best price (marketable) of
    ``size`` shares (or, with ``sizes``, from that `envs.simulator.sizes.SizeMixture`). No
    orders until ``long`` mids exist.
    """

    def __init__(
        self,
        n_agents: int = 12,
        *,
        period: float = 37.0,
        short: int = 20,
        long: int = 50,
        size: tuple[int, int] = (1, 10),
        sizes: SizeMixture | dict | None = None,
    ) -> None:
        require(isinstance(short, int) and short > 0, "short", "an integer > 0 mids", short)
        require(
            isinstance(long, int) and long > short, "long", f"an integer > short ({short})", long
        )
        self.n_owners = members(n_agents)
        self.period, self.short, self.long = wake_period(period), short, long
        self.size = size_range(size)
        self.sizes = SizeMixture.of(sizes)

    def reset(self, market: Market, owners: range, rng: np.random.Generator) -> None:
        super().reset(market, owners, rng)
        phase = uniform(rng, 0.0, self.period, self.n_owners) + market.open_time
        time, agents = periodic_times(phase, self.period, market.open_time, market.close_time)
        qty = order_sizes(self.size, self.sizes, len(time), rng)
        self.batch = Orders.build(time, Kind.LIMIT, 0, 0, qty, owners.start + agents)

    def program(self) -> Program:
        return Program(self.batch, Rule.MOMENTUM, short=self.short, long=self.long)

    def orders(self, market: Market, t0: float, t1: float, rng: np.random.Generator) -> Orders:
        """The reference of the compiled ``Rule.MOMENTUM`` in envs/simulator/flow.pyx (`Flow`,
        which stands in for it once `program` is given); tests/envs/test_flow.py
        (``test_compiled_flow_equals_orders``) holds the two equal to the bit."""
        mids = market.mids()
        bid, ask = market.book.best_bid(), market.book.best_ask()
        if len(mids) < self.long or bid is None or ask is None:
            return Orders.empty()
        short = np.add.reduce(mids[-self.short :]) / self.short
        long = np.add.reduce(mids[-self.long :]) / self.long
        if short == long:
            return Orders.empty()
        side, price = (1, ask[0]) if short > long else (-1, bid[0])
        batch = self.batch.take(window(self.batch.time, t0, t1))
        batch.side[:] = side
        batch.price[:] = price
        return batch
