"""Named trading tasks: their market, what a seat may do, how its states are binned and their
reference policy.

A task is chosen by `MarketSpec.task` (an experiment file's ``[market] task``, or
``gymnasium.make(TASKS[name].gym_id)``); it supplies the defaults of the market (``market``:
the background population, the session's steps, the position limit, the reward scale and the
parent order), of the action set and of the tabular states, which a spec may still override.
Every task's market is the one its config (``configs/TASK.toml``; ``quickstart.toml`` for
``making``) runs: the light population, 60 one-minute steps, 500 shares either side, rewards
in dollars x 0.01; an execution buys 1,000 shares in 30 steps, rewards x 0.1.

- ``taker`` (``tradearena/SyntheticMarket-v0``): market orders that pay the spread (action set
  ``trade``). The hard task: with no signal worth the spread, holding is close to optimal,
  and learners mostly learn to hold.
- ``making`` (``tradearena/MarketMaking-v0``): resting quotes at levels behind the touch, with
  skew (action set ``make``); the spread is earned, inventory is the risk. Reference:
  Avellaneda-Stoikov quotes (``avellaneda_stoikov``).
- ``execution`` (``tradearena/Execution-v0``): acquire a parent order (``parent_order``
  shares, negative to sell) by the close, with passive or market child orders (action set
  ``execute``); scored against the opening mid (minus the implementation shortfall).
  Reference: TWAP (``twap``; ``passive_twap`` rests each slice's lot at the touch and
  crosses what is left). The Almgren-Chriss model market of `envs.execution_model`
  is its analytic counterpart.
- ``informed`` (``tradearena/InformedTrading-v0``): market orders (``trade``) with a noisy
  look at the zero-intelligence traders' fundamental each step (``signal_noise`` ticks),
  forecast to the close, as ABIDES value agents observe it (the feature ``signal``).
  Reference: the value-agent rule (``value_agent``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tradearena.envs.simulator.features import Discretizer, feature_names

__all__ = ["SESSION", "TASKS", "Task"]


SESSION: dict[str, Any] = {
    "population": "light",
    "n_steps": 60,
    "position_limit": 500,
    "reward_scale": 0.01,
    "inventory_penalty": 0.0,
    "parent_order": 0,
}
"""The market of the taker and informed tasks: the `MarketSpec` fields a task defaults
(population, one-minute steps per session, shares either side, reward multiplier, the
running inventory cost in the rewards ($/share^2/step), shares to acquire)."""


@dataclass(frozen=True)
class Task:
    """A task: ``actions`` (an `envs.simulator.actions` set name), ``states`` (windows -> the
    default
    `Discretizer`), ``reference`` (the agent id of its reference policy, "" for none), the
    Gymnasium id that opens it and ``market``, the `MarketSpec` fields it defaults (every
    key of `SESSION`)."""

    name: str
    gym_id: str
    actions: str
    states: Callable[[Sequence[int]], Discretizer]
    reference: str
    summary: str
    market: dict[str, Any] = field(default_factory=lambda: dict(SESSION))
    signal: bool = False  # seats observe a signal of the fundamental

    def gym_keywords(self) -> dict[str, Any]:
        """The keywords its Gymnasium id passes to `envs.trading_env.TradingEnv`."""
        return {"task": self.name}


def making_states(windows: Sequence[int]) -> Discretizer:
    """60 states for a market maker: inventory (fraction of the limit) below -0.5 / -0.1 /
    between / above 0.1 / 0.5, spread tight (< 1.5 ticks) or wide, imbalance below -0.2 /
    between / from 0.2 up, time left below / from one fifth."""
    return Discretizer(
        {
            "inventory": (-0.5, -0.1, 0.1, 0.5),
            "spread": (1.5,),
            "imbalance": (-0.2, 0.2),
            "time_left": (0.2,),
        },
        names=feature_names(windows),
    )


def execution_states(windows: Sequence[int]) -> Discretizer:
    """72 states for an execution: the fraction of the parent order done (inventory over the
    position limit, which an execution sets to the parent order) in 9 bins from -1 to 1,
    time left in quarters, spread tight (< 1.5 ticks) or wide."""
    done = (-0.875, -0.625, -0.375, -0.125, 0.125, 0.375, 0.625, 0.875)
    return Discretizer(
        {"inventory": done, "spread": (1.5,), "time_left": (0.25, 0.5, 0.75)},
        names=feature_names(windows),
    )


def informed_states(windows: Sequence[int]) -> Discretizer:
    """45 states for an informed trader: its signal below -3 / -1 / between / above 1 / 3 bp,
    inventory short / flat / long, time left below one fifth / to one half / above."""
    return Discretizer(
        {
            "inventory": (-1e-9, 1e-9),
            "time_left": (0.2, 0.5),
            "signal": (-3.0, -1.0, 1.0, 3.0),
        },
        names=feature_names(windows, signal=True),
    )


TASKS = {
    task.name: task
    for task in (
        Task(
            "taker",
            "tradearena/SyntheticMarket-v0",
            "trade",
            Discretizer.default,
            "",
            "market orders that pay the spread; holding is near optimal",
        ),
        Task(
            "making",
            "tradearena/MarketMaking-v0",
            "make",
            making_states,
            "avellaneda_stoikov",
            "resting quotes with levels and skew; earn the spread, carry the inventory risk",
            {**SESSION, "inventory_penalty": 2e-5},  # the learners' inventory-aware reward
        ),
        Task(
            "execution",
            "tradearena/Execution-v0",
            "execute",
            execution_states,
            "twap",
            "acquire a parent order by the close; minus the implementation shortfall",
            {
                **SESSION,
                "n_steps": 30,
                "position_limit": 1_000,
                "reward_scale": 0.1,
                "parent_order": 1_000,
            },
        ),
        Task(
            "informed",
            "tradearena/InformedTrading-v0",
            "trade",
            informed_states,
            "value_agent",
            "market orders with a noisy signal of the fundamental; the value-agent rule",
            signal=True,
        ),
    )
}
"""The tasks by name."""
