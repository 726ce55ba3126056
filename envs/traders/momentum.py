"""Momentum traders: buy when the short moving average of the mid is above the long one."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from envs.traders.base import Kind, Orders, Trader, periodic_times, window

if TYPE_CHECKING:
    from envs.market import Market


class Momentum(Trader):
    """``n_agents`` momentum traders (ABIDES' MomentumAgent).

    Each wakes every ``period`` seconds (its own random phase) and compares the mean of the
    last ``short`` and ``long`` mids the market recorded at its decision steps: short above
    long buys, below sells, with a limit order at the opposite best price (marketable) of
    ``size`` shares. No orders until ``long`` mids exist.
    """

    def __init__(
        self,
        n_agents: int = 12,
        *,
        period: float = 37.0,
        short: int = 20,
        long: int = 50,
        size: tuple[int, int] = (1, 10),
    ) -> None:
        if not 0 < short < long:
            raise ValueError(f"need 0 < short < long, got short={short}, long={long}")
        self.n_owners = n_agents
        self.period, self.short, self.long, self.size = period, short, long, size

    def reset(self, market: Market, owners: range, rng: np.random.Generator) -> None:
        super().reset(market, owners, rng)
        phase = rng.uniform(0.0, self.period, self.n_owners) + market.open_time
        self.time, agents = periodic_times(phase, self.period, market.open_time, market.close_time)
        self.owner = owners.start + agents
        self.qty = rng.integers(self.size[0], self.size[1] + 1, size=len(self.time))

    def orders(self, market: Market, t0: float, t1: float, rng: np.random.Generator) -> Orders:
        mids = market.mids()
        bid, ask = market.book.best_bid(), market.book.best_ask()
        if len(mids) < self.long or bid is None or ask is None:
            return Orders.empty()
        short, long = mids[-self.short :].mean(), mids[-self.long :].mean()
        if short == long:
            return Orders.empty()
        side, price = (1, ask[0]) if short > long else (-1, bid[0])
        w = window(self.time, t0, t1)
        return Orders.build(self.time[w], Kind.LIMIT, side, price, self.qty[w], self.owner[w])
