"""Reference policies of the tasks: the textbook rule each task's learners are measured against.

`AvellanedaStoikov` quotes for the market-making task (action set ``make``); `TWAP` executes
the parent order of the execution task (action set ``execute``); `ValueAgent` trades on the
signal of the informed task.
"""

from __future__ import annotations

import math
from typing import Any

from agents.base import Agent
from envs.actions import MakeActions
from envs.features import feature_names
from envs.spec import MarketSpec

__all__ = ["TWAP", "AvellanedaStoikov", "ValueAgent"]


class AvellanedaStoikov(Agent):
    """Avellaneda and Stoikov (2008) quotes, placed on the ``make`` action set's levels.

    With inventory q (lots of ``order_size`` shares), tau steps left, mid s (ticks), the
    reservation price is r = s - q gamma sigma^2 tau and the quoted spread
    gamma sigma^2 tau + (2 / gamma) ln(1 + gamma / kappa): bid r - spread / 2, ask r + spread / 2.
    Each quote goes to the level (ticks behind the touch, the touch taken as mid +- half the
    observed spread) nearest it, 0 when inside the touch; beyond the last level that side is
    off. ``gamma``: risk aversion (per tick per lot; gamma -> 0 is the risk-neutral maker),
    ``sigma``: mid volatility (ticks per step), ``kappa``: decay of fill intensity with the
    distance from the mid (per tick). Reads the feature vector (inventory, spread, time left)
    and the seat's `MarketSpec` (steps, position limit, lot size).
    """

    name = "avellaneda_stoikov"
    description = "Avellaneda-Stoikov quotes (reference policy of the market-making task)"
    observation = "features"
    task = "making"  # the task it is the reference policy of

    def __init__(
        self,
        *,
        market_spec: MarketSpec,
        gamma: float = 0.1,
        sigma: float = 0.6,
        kappa: float = 1.5,
    ) -> None:
        if market_spec.action_set != "make":
            raise ValueError(
                f"{self.name} quotes with the 'make' action set, got {market_spec.action_set!r}"
            )
        if not (gamma > 0 and sigma >= 0 and kappa > 0):
            raise ValueError(
                f"need gamma > 0, sigma >= 0, kappa > 0; got {gamma}, {sigma}, {kappa}"
            )
        self.gamma, self.sigma, self.kappa = float(gamma), float(sigma), float(kappa)
        self.n_steps = market_spec.n_steps or 390
        self.lots = market_spec.position_limit / market_spec.order_size
        names = feature_names(market_spec.windows)
        self.columns = [names.index(n) for n in ("inventory", "spread", "time_left")]
        actions = MakeActions(market_spec.order_size)
        self.action_of = {quote: i for i, quote in enumerate(actions.quotes) if i >= 1}
        self.last_level = max(MakeActions.LEVELS)

    def quotes(self, inventory_lots: float, spread: float, steps_left: float) -> tuple:
        """(bid level, ask level) of the AS quotes, None for a side that is off."""
        risk = self.gamma * self.sigma**2 * steps_left
        half = (risk + 2.0 / self.gamma * math.log1p(self.gamma / self.kappa)) / 2.0
        shift = inventory_lots * risk  # the reservation price lies this far below the mid
        levels = []
        for distance in (half + shift, half - shift):  # bid, ask: ticks from the mid
            level = max(round(distance - spread / 2.0), 0)
            levels.append(None if level > self.last_level else level)
        return tuple(levels)

    def act(self, obs: Any, explore: bool = True) -> int:
        inventory, spread, time_left = (float(obs[i]) for i in self.columns)
        quote = self.quotes(inventory * self.lots, spread, time_left * self.n_steps)
        return self.action_of[quote]


class TWAP(Agent):
    """Time-weighted average price: keep up with an even schedule of the parent order.

    After step k of N, k / N of the parent order should be done: each step it trades at
    market the whole lots (1 to 3) that bring it to the schedule, or nothing when on or
    ahead of it (the last step trades whatever remains, by the action set's rule). Reads the
    feature vector (inventory, time left) and the seat's `MarketSpec` (parent order, lot,
    steps); acts on the ``execute`` action set.
    """

    name = "twap"
    description = "TWAP: an even schedule of market orders (reference of the execution task)"
    observation = "features"
    task = "execution"

    def __init__(self, *, market_spec: MarketSpec) -> None:
        if market_spec.action_set != "execute":
            raise ValueError(
                f"{self.name} trades with the 'execute' action set, got {market_spec.action_set!r}"
            )
        self.parent = abs(market_spec.parent_order)
        self.lot = market_spec.order_size
        self.limit = market_spec.position_limit
        self.n_steps = market_spec.n_steps or 390
        names = feature_names(market_spec.windows)
        self.columns = [names.index(n) for n in ("inventory", "time_left")]

    def act(self, obs: Any, explore: bool = True) -> int:
        inventory, time_left = (float(obs[i]) for i in self.columns)
        done = abs(inventory) * self.limit
        steps_done = round((1.0 - time_left) * self.n_steps)
        behind = self.parent * (steps_done + 1) / self.n_steps - done
        lots = min(math.ceil(behind / self.lot - 1e-9), 3)
        return 1 if lots <= 0 else 1 + lots  # 1: none; 2, 3, 4: 1, 2, 3 lots


class ValueAgent(Agent):
    """The value-agent rule of ABIDES: buy when the forecast of the fundamental (the feature
    ``signal``, bp over the mid) exceeds the mid by more than ``threshold`` bp, sell when it
    is below by more, else hold; one lot at market on the ``trade`` action set. The default
    2 bp (about twice the half-spread of the light population) was the best of 0.5, 1, 2
    and 4 bp over 30 sessions with ``signal_noise`` 1 tick."""

    name = "value_agent"
    description = "Buys below, sells above its forecast (reference of the informed task)"
    observation = "features"
    task = "informed"

    def __init__(self, *, market_spec: MarketSpec, threshold: float = 2.0) -> None:
        if not market_spec.signal or market_spec.action_set != "trade":
            raise ValueError(f"{self.name} needs a signal and the 'trade' action set")
        if threshold < 0:
            raise ValueError(f"threshold must be >= 0 bp, got {threshold}")
        self.threshold = float(threshold)
        self.column = feature_names(market_spec.windows, signal=True).index("signal")

    def act(self, obs: Any, explore: bool = True) -> int:
        signal = float(obs[self.column])
        return 2 if signal > self.threshold else 0 if signal < -self.threshold else 1
