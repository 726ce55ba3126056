"""Market makers: ladders of quotes on both sides of the mid, renewed periodically."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from envs.traders.base import Kind, Orders, Trader, periodic_times, window

if TYPE_CHECKING:
    from envs.market import Market


class MarketMaker(Trader):
    """``n_agents`` market makers (after ABIDES' AdaptiveMarketMakerAgent, without the
    adaptive sizing).

    Each wakes every ``period`` seconds (its own random phase) and replaces its quotes with
    ``levels`` bids and ``levels`` asks of ``size`` shares: the best at ``half_spread`` ticks
    from the last mid (rounded outward), the others ``spacing`` ticks apart. This keeps a
    synthetic book liquid.
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
    ) -> None:
        self.n_owners = n_agents
        self.period, self.levels, self.half_spread = period, levels, half_spread
        self.spacing, self.size = spacing, size
        # one wake-up: a cancel, then `levels` bids and `levels` asks
        steps = np.arange(levels) * spacing
        self._kind = np.r_[Kind.CANCEL_ALL, np.full(2 * levels, Kind.LIMIT)]
        self._side = np.r_[0, np.ones(levels, int), -np.ones(levels, int)]
        self._bid_offset = np.r_[0, -steps, np.zeros(levels, int)]  # from the best bid
        self._ask_offset = np.r_[0, np.zeros(levels, int), steps]  # from the best ask
        self._is_ask = self._side < 0

    def reset(self, market: Market, owners: range, rng: np.random.Generator) -> None:
        super().reset(market, owners, rng)
        start = market.open_time - market.warmup_seconds
        phase = start + rng.uniform(0.0, self.period, self.n_owners)
        self.time, agents = periodic_times(phase, self.period, start, market.close_time)
        self.owner = owners.start + agents

    def orders(self, market: Market, t0: float, t1: float, rng: np.random.Generator) -> Orders:
        w = window(self.time, t0, t1)
        wakes = w.stop - w.start
        if not wakes:
            return Orders.empty()
        mid = market.last_mid
        bid = int(np.floor(mid - self.half_spread))
        ask = int(np.ceil(mid + self.half_spread))
        price = np.where(self._is_ask, ask + self._ask_offset, bid + self._bid_offset)
        per_wake = len(self._kind)
        return Orders.build(
            np.repeat(self.time[w], per_wake),
            np.tile(self._kind, wakes),
            np.tile(self._side, wakes),
            np.tile(price, wakes),
            self.size,
            np.repeat(self.owner[w], per_wake),
        )
