"""Noise traders: each trades once in the session, at a random time, in a random direction."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tradearena.envs.simulator.draws import uniform
from tradearena.envs.simulator.orders import Kind, Orders, Program
from tradearena.envs.simulator.traders.base import SIDES, Trader, window

if TYPE_CHECKING:
    from tradearena.envs.simulator.market import Market


class Noise(Trader):
    """``n_agents`` noise traders (ABIDES' NoiseAgent): each wakes once at a time drawn
    uniformly over the session and sends a market order of ``size`` shares (uniform integer
    range), buy or sell with probability 1/2."""

    def __init__(self, n_agents: int = 1000, *, size: tuple[int, int] = (1, 100)) -> None:
        self.n_owners = n_agents
        self.size = size

    def reset(self, market: Market, owners: range, rng: np.random.Generator) -> None:
        super().reset(market, owners, rng)
        n = self.n_owners
        self.batch = Orders.build(
            np.sort(uniform(rng, market.open_time, market.close_time, n)),
            Kind.MARKET,
            SIDES[rng.integers(0, 2, size=n)],  # as rng.choice(SIDES, size=n) draws
            0,
            rng.integers(self.size[0], self.size[1] + 1, size=n, dtype=np.int32),
            owners.start + rng.permutation(n).astype(np.int32),
        )

    def program(self) -> Program:
        return Program(self.batch)

    def orders(self, market: Market, t0: float, t1: float, rng: np.random.Generator) -> Orders:
        return self.batch.take(window(self.batch.time, t0, t1))
