"""Noise traders: each trades once in the session, at a random time, in a random direction."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tradearena.envs.simulator.arrivals import Profile, spread_times
from tradearena.envs.simulator.orders import Kind, Orders, Program
from tradearena.envs.simulator.sizes import SizeMixture
from tradearena.envs.simulator.traders.base import (
    SIDES,
    Trader,
    members,
    order_sizes,
    size_range,
    window,
)

if TYPE_CHECKING:
    from tradearena.envs.simulator.market import Market


class Noise(Trader):
    """``n_agents`` noise traders (ABIDES' NoiseAgent): each wakes once at a time drawn
    uniformly over the session and sends a market order of ``size`` shares (uniform integer
    range), buy or sell with probability 1/2. With ``profile`` (see
    `envs.simulator.arrivals.Profile`) the times follow the day's profile instead; with
    ``sizes`` (see `envs.simulator.sizes.SizeMixture`) sizes have round lots."""

    def __init__(
        self,
        n_agents: int = 1000,
        *,
        size: tuple[int, int] = (1, 100),
        profile: Profile | list[float] | dict | None = None,
        sizes: SizeMixture | dict | None = None,
    ) -> None:
        self.n_owners = members(n_agents)
        self.size = size_range(size)
        self.profile, self.sizes = Profile.of(profile), SizeMixture.of(sizes)

    def reset(self, market: Market, owners: range, rng: np.random.Generator) -> None:
        super().reset(market, owners, rng)
        n = self.n_owners
        self.batch = Orders.build(
            spread_times(n, market.open_time, market.close_time, rng, self.profile, market.day),
            Kind.MARKET,
            SIDES[rng.integers(0, 2, size=n)],  # as rng.choice(SIDES, size=n) draws
            0,
            order_sizes(self.size, self.sizes, n, rng),
            owners.start + rng.permutation(n).astype(np.int32),
        )

    def program(self) -> Program:
        return Program(self.batch)

    def orders(self, market: Market, t0: float, t1: float, rng: np.random.Generator) -> Orders:
        return self.batch.take(window(self.batch.time, t0, t1))
