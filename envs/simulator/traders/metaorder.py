"""Metaorder traders: parent orders of heavy-tailed size split into child market orders."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from tradearena.envs.simulator.draws import uniform
from tradearena.envs.simulator.orders import Kind, Orders, Program
from tradearena.envs.simulator.traders.base import SIDES, Trader, require, window

if TYPE_CHECKING:
    from tradearena.envs.simulator.market import Market


class Parents(NamedTuple):
    """A session's parent orders, arrays of shape (p,) sorted by start: ``start`` and ``end``
    (seconds after midnight: the first and last child), ``side`` (+1 buy / -1 sell) and
    ``qty`` (shares sent by the close, int64)."""

    start: np.ndarray
    end: np.ndarray
    side: np.ndarray
    qty: np.ndarray


class Metaorder(Trader):
    """``n_agents`` institutional traders working parent orders (after Lillo, Mike and
    Farmer, 2005).

    Each agent starts parent orders as a Poisson process of ``parent_rate`` per second. A
    parent's size is Pareto: ``parent_min`` shares times U^(-1 / ``size_tail``) (tail
    exponent ``size_tail``; capped at ``parent_max`` shares), its side buy or sell with
    probability 1/2. It is sent as market orders of ``child_size`` shares (the last one the
    remainder), one every 1 / ``child_rate`` seconds from its start, until done or the close.
    Children of one parent share its sign, and parents' durations are heavy-tailed, so the
    signs of the market's orders have long memory (autocorrelation decaying as a power of the
    lag, exponent about ``size_tail`` - 1). Everything is drawn at `reset`; `parents` keeps
    the parents for measuring their impact.
    """

    def __init__(
        self,
        n_agents: int = 4,
        *,
        parent_rate: float = 1 / 1800,
        parent_min: int = 200,
        parent_max: int = 20_000,
        size_tail: float = 1.5,
        child_size: int = 20,
        child_rate: float = 1 / 10,
    ) -> None:
        require(n_agents >= 1, "n_agents", ">= 1", n_agents)
        require(parent_rate > 0, "parent_rate", "> 0 per second", parent_rate)
        require(parent_min >= 1, "parent_min", ">= 1 shares", parent_min)
        require(parent_max >= parent_min, "parent_max", ">= parent_min shares", parent_max)
        require(size_tail > 0, "size_tail", "> 0", size_tail)
        require(child_size >= 1, "child_size", ">= 1 shares", child_size)
        require(child_rate > 0, "child_rate", "> 0 per second", child_rate)
        self.n_owners = n_agents
        self.parent_rate, self.parent_min, self.parent_max = parent_rate, parent_min, parent_max
        self.size_tail, self.child_size, self.child_rate = size_tail, child_size, child_rate

    def reset(self, market: Market, owners: range, rng: np.random.Generator) -> None:
        super().reset(market, owners, rng)
        t0, t1 = market.open_time, market.close_time
        n = rng.poisson(self.parent_rate * self.n_owners * (t1 - t0))
        start = np.sort(uniform(rng, t0, t1, n))
        agent = rng.integers(0, self.n_owners, size=n, dtype=np.int32)
        side = SIDES[rng.integers(0, 2, size=n)]
        pareto = self.parent_min * (1.0 - rng.random(n)) ** (-1.0 / self.size_tail)
        size = np.minimum(np.floor(pareto), self.parent_max).astype(np.int64)
        period = 1.0 / self.child_rate
        fit = np.ceil((t1 - start) / period).astype(np.int64)  # children before the close
        children = np.minimum(-(-size // self.child_size), fit)
        parent = np.repeat(np.arange(n), children)
        k = np.arange(len(parent)) - np.repeat(np.cumsum(children) - children, children)
        time = start[parent] + k * period
        qty = np.minimum(self.child_size, size[parent] - k * self.child_size)
        order = np.argsort(time, kind="stable")
        self.batch = Orders.build(
            time[order],
            Kind.MARKET,
            side[parent][order],
            0,
            qty[order],
            owners.start + agent[parent][order],
        )
        sent = np.minimum(size, children * self.child_size)
        self.parents = Parents(start, start + (children - 1) * period, side.astype(np.int64), sent)

    def program(self) -> Program:
        return Program(self.batch)

    def orders(self, market: Market, t0: float, t1: float, rng: np.random.Generator) -> Orders:
        return self.batch.take(window(self.batch.time, t0, t1))
