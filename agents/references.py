"""Reference policies of the tasks: the textbook rule each task's learners are measured against.

`AvellanedaStoikov` quotes for the market-making task (action set ``make``); `TWAP` executes
the parent order of the execution task (action set ``execute``) with market orders, and
`PassiveTWAP` with child orders resting at the touch, crossing only what is left at each
slice's end (a second execution reference); `ValueAgent` trades on the signal of the
informed task.
"""

from __future__ import annotations

import math
from typing import Any

from tradearena.agents.base import Agent
from tradearena.agents.calibration import calibrate_market, tuned
from tradearena.envs.simulator.actions import MakeActions
from tradearena.envs.simulator.features import feature_names
from tradearena.envs.spec import MarketSpec

__all__ = ["TWAP", "AvellanedaStoikov", "PassiveTWAP", "ValueAgent"]


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

    Calibrated to its market by default, as practitioners calibrate it
    (`agents.calibration`): ``sigma`` and ``kappa`` left None are estimated from calibration
    sessions of the market (the mid's returns; fills against the distance to the mid), and
    ``gamma`` left None is the value of `GAMMAS` with the best Sharpe ratio over tuning
    sessions (never the experiment's own). ``calibration`` holds the values used and the
    estimates they came from.
    """

    name = "avellaneda_stoikov"
    description = "Avellaneda-Stoikov quotes, calibrated to the market (reference of making)"
    observation = "features"
    task = "making"  # the task it is the reference policy of
    GAMMAS = (0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0)
    """Risk aversions the calibration chooses among (per tick per lot)."""

    def __init__(
        self,
        *,
        market_spec: MarketSpec,
        gamma: float | None = None,
        sigma: float | None = None,
        kappa: float | None = None,
    ) -> None:
        if market_spec.action_set != "make":
            raise ValueError(
                f"{self.name} quotes with the 'make' action set, got {market_spec.action_set!r}"
            )
        self.calibration: dict[str, Any] = {}
        if sigma is None or kappa is None:
            estimate = calibrate_market(market_spec)
            self.calibration["market"] = estimate.to_dict()
            sigma = estimate.sigma if sigma is None else sigma
            kappa = estimate.kappa if kappa is None else kappa
        if gamma is None:
            gamma = tuned(
                (self.name, sigma, kappa),
                market_spec,
                lambda g: AvellanedaStoikov(
                    market_spec=market_spec, gamma=g, sigma=sigma, kappa=kappa
                ),
                self.GAMMAS,
                self.calibration,
                "gamma",
            )
        if not (gamma > 0 and sigma >= 0 and kappa > 0):
            raise ValueError(
                f"need gamma > 0, sigma >= 0, kappa > 0; got {gamma}, {sigma}, {kappa}"
            )
        self.gamma, self.sigma, self.kappa = float(gamma), float(sigma), float(kappa)
        self.calibration |= {"gamma": self.gamma, "sigma": self.sigma, "kappa": self.kappa}
        self.n_steps = market_spec.n_steps or 390
        self.lots = market_spec.position_limit / market_spec.order_size
        names = feature_names(market_spec.windows)
        self.columns = [names.index(n) for n in ("inventory", "spread", "time_left")]
        actions = MakeActions(market_spec.order_size)
        self.action_of = {quote: i for i, quote in enumerate(actions.quotes) if i >= 1}
        self.last_level = max(MakeActions.LEVELS)

    def quotes(
        self,
        inventory_lots: float,
        spread: float,
        steps_left: float,
        gamma: float | None = None,
        skew: int = 0,
    ) -> tuple:
        """(bid level, ask level) of the AS quotes, None for a side that is off; with risk
        aversion ``gamma`` (default its own) and both quotes moved ``skew`` ticks down (the
        bid away from the touch, the ask towards it; negative: up)."""
        gamma = self.gamma if gamma is None else gamma
        risk = gamma * self.sigma**2 * steps_left
        half = (risk + 2.0 / gamma * math.log1p(gamma / self.kappa)) / 2.0
        shift = inventory_lots * risk  # the reservation price lies this far below the mid
        levels = []
        for distance in (half + shift + skew, half - shift - skew):  # bid, ask: from the mid
            level = max(round(distance - spread / 2.0), 0)
            levels.append(None if level > self.last_level else level)
        return tuple(levels)

    def action(self, obs: Any, gamma: float | None = None, skew: int = 0) -> int:
        """The action of `quotes` at feature vector ``obs``."""
        inventory, spread, time_left = (float(obs[i]) for i in self.columns)
        quote = self.quotes(inventory * self.lots, spread, time_left * self.n_steps, gamma, skew)
        return self.action_of[quote]

    def act(self, obs: Any, explore: bool = True) -> int:
        return self.action(obs)


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
        done, steps_done = self.progress(obs)
        return self.cross(self.parent * (steps_done + 1) / self.n_steps - done)

    def progress(self, obs: Any) -> tuple[float, int]:
        """(shares of the parent order done, as the float32 features give them; decision
        steps done) at feature vector ``obs``."""
        inventory, time_left = (float(obs[i]) for i in self.columns)
        return abs(inventory) * self.limit, round((1.0 - time_left) * self.n_steps)

    def cross(self, behind: float) -> int:
        """The action that trades at market the whole lots (1 to 3) covering ``behind``
        shares, or none (1) when ``behind`` <= 0."""
        lots = min(math.ceil(behind / self.lot - 1e-9), 3)
        return 1 if lots <= 0 else 1 + lots  # 1: none; 2, 3, 4: 1, 2, 3 lots


class PassiveTWAP(TWAP):
    """Passive TWAP: the even schedule in slices, each slice's child order resting at the
    touch and only what is left of it crossed at the slice's end.

    Slice j spans decision steps [j L, (j + 1) L) of N (the last may be shorter) and brings
    the parent order to ``parent * min((j + 1) L, N) / N`` shares done. While behind that
    target, each step of the slice but its last rests one lot at the others' best price on
    the parent's side (action ``passive``: a bid when buying, kept in its queue while the
    price holds); at the slice's last step it cancels and crosses, at market, the whole lots
    (1 to 3) that cover what is still missing (a partial fill's remainder rounds up to a
    lot), and nothing when the resting order filled. ``slice_steps`` L >= 2 (default: the
    steps in which the schedule accrues one lot, ``ceil(N lot / parent)``, at least 2 and at
    most N: 3 steps for 1,000 shares in 30 steps of 100-share lots). Reads what `TWAP` reads.
    """

    name = "passive_twap"
    description = "TWAP resting at the touch, crossing each slice's remainder (execution)"

    def __init__(self, *, market_spec: MarketSpec, slice_steps: int | None = None) -> None:
        super().__init__(market_spec=market_spec)
        if slice_steps is None:
            slice_steps = min(
                max(2, math.ceil(self.n_steps * self.lot / self.parent)), self.n_steps
            )
        if not 2 <= slice_steps <= self.n_steps:
            raise ValueError(
                f"slice_steps must be in [2, n_steps={self.n_steps}] steps, got {slice_steps}"
            )
        self.slice_steps = int(slice_steps)

    def act(self, obs: Any, explore: bool = True) -> int:
        done, steps_done = self.progress(obs)
        done = round(done)  # whole shares
        end = min((steps_done // self.slice_steps + 1) * self.slice_steps, self.n_steps)
        behind = self.parent * end / self.n_steps - done
        if behind > 0 and steps_done + 1 < end:
            return 0  # passive: one lot resting at the touch
        return self.cross(behind)


class ValueAgent(Agent):
    """The value-agent rule of ABIDES: buy when the forecast of the fundamental (the feature
    ``signal``, bp over the mid) exceeds the mid by more than ``threshold`` bp, sell when it
    is below by more, else hold; one lot at market on the ``trade`` action set. ``threshold``
    left None is the value of `THRESHOLDS` with the best Sharpe ratio over tuning sessions of
    its market (`agents.calibration.tuned`); ``calibration`` holds it."""

    name = "value_agent"
    description = "Buys below, sells above its forecast (reference of the informed task)"
    observation = "features"
    task = "informed"
    THRESHOLDS = (0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0)
    """Thresholds the tuning chooses among, bp."""

    def __init__(self, *, market_spec: MarketSpec, threshold: float | None = None) -> None:
        if not market_spec.signal or market_spec.action_set != "trade":
            raise ValueError(f"{self.name} needs a signal and the 'trade' action set")
        self.calibration: dict[str, Any] = {}
        if threshold is None:
            threshold = tuned(
                (self.name,),
                market_spec,
                lambda t: ValueAgent(market_spec=market_spec, threshold=t),
                self.THRESHOLDS,
                self.calibration,
                "threshold",
            )
        if threshold < 0:
            raise ValueError(f"threshold must be >= 0 bp, got {threshold}")
        self.threshold = float(threshold)
        self.calibration["threshold"] = self.threshold
        self.column = feature_names(market_spec.windows, signal=True).index("signal")

    def act(self, obs: Any, explore: bool = True) -> int:
        signal = float(obs[self.column])
        return 2 if signal > self.threshold else 0 if signal < -self.threshold else 1
