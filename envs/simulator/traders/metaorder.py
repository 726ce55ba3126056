"""Metaorder traders: parent orders of heavy-tailed size split into child market orders."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from tradearena.envs.simulator.draws import uniform
from tradearena.envs.simulator.orders import Kind, Orders, Program
from tradearena.envs.simulator.traders.base import SIDES, Trader, members, require, window

if TYPE_CHECKING:
    from tradearena.envs.simulator.market import Market


class Parents(NamedTuple):
    """A session's parent orders, arrays of shape (p,) sorted by start: ``start`` and ``end``
    (seconds after midnight: the first and last child sent), ``side`` (+1 buy / -1 sell),
    ``size`` (shares asked) and ``qty`` (shares sent by the close), int64."""

    start: np.ndarray
    end: np.ndarray
    side: np.ndarray
    size: np.ndarray
    qty: np.ndarray


class Metaorder(Trader):
    """``n_agents`` institutional traders working parent orders (after Lillo, Mike and
    Farmer, 2005).

    Each agent starts parent orders as a Poisson process of ``parent_rate`` per second. A
    parent's size is Pareto: ``parent_min`` shares times U^(-1 / ``size_tail``) (tail
    exponent ``size_tail``; capped at ``parent_max`` shares), its side buy or sell with
    probability 1/2. It is sent as market orders of ``child_size`` shares (the last one the
    remainder), the first at its start and the others at Poisson times of ``child_rate`` per
    second, until done or the close; a child row's ``ref`` is its parent's index in
    `parents`.
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
        require(parent_rate > 0, "parent_rate", "> 0 per second", parent_rate)
        require(parent_min >= 1, "parent_min", ">= 1 shares", parent_min)
        require(parent_max >= parent_min, "parent_max", ">= parent_min shares", parent_max)
        require(size_tail > 0, "size_tail", "> 0", size_tail)
        require(child_size >= 1, "child_size", ">= 1 shares", child_size)
        require(child_rate > 0, "child_rate", "> 0 per second", child_rate)
        self.n_owners = members(n_agents)
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
        children = -(-size // self.child_size)
        parent = np.repeat(np.arange(n), children)
        first = np.cumsum(children) - children  # each parent's first child
        gap = rng.standard_exponential(len(parent)) / self.child_rate
        gap[first] = 0.0  # the first child at the parent's start
        elapsed = np.cumsum(gap)
        time = start[parent] + (elapsed - elapsed[first][parent])
        qty = np.minimum(
            self.child_size,
            size[parent] - (np.arange(len(parent)) - first[parent]) * self.child_size,
        )
        keep = time < t1  # each parent's children up to the close: a prefix of them
        parent, time, qty = parent[keep], time[keep], qty[keep]
        order = np.argsort(time, kind="stable")
        self.batch = Orders.build(
            time[order],
            Kind.MARKET,
            side[parent][order],
            0,
            qty[order],
            owners.start + agent[parent][order],
            parent[order].astype(np.int32),
        )
        sent = np.bincount(parent, qty, minlength=n).astype(np.int64)
        last = np.cumsum(np.bincount(parent, minlength=n)) - 1  # each one's last child kept
        self.parents = Parents(start, time[last], side.astype(np.int64), size, sent)

    def program(self) -> Program:
        return Program(self.batch)

    def orders(self, market: Market, t0: float, t1: float, rng: np.random.Generator) -> Orders:
        return self.batch.take(window(self.batch.time, t0, t1))
