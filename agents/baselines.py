"""Rule-based baseline agents for the ``trade`` action set (0 sell, 1 hold, 2 buy).

Observation each expects: `Random`, `Hold` and `ZeroIntelligenceAgent` take any
observation; `BuyAndHold`, `MomentumAgent` and `MeanReversion` read the Box feature vector of
`TradingEnv` (``observation="features"``), by the indices of
`envs.simulator.features.feature_names(windows)`: ``inventory`` (fraction of the position limit) and
``return_w`` (basis points).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tradearena.agents.base import Agent, make_rng
from tradearena.envs.simulator.features import DEFAULT_WINDOWS, feature_names

__all__ = [
    "BUY",
    "HOLD",
    "SELL",
    "BuyAndHold",
    "Hold",
    "MeanReversion",
    "MomentumAgent",
    "Random",
    "ZeroIntelligenceAgent",
]

SELL, HOLD, BUY = 0, 1, 2
"""The ``trade`` action set of `envs.simulator.actions.TradeActions`."""


def check_trade_actions(name: str, action_space: Any) -> None:
    """Rule-based traders speak the ``trade`` action set (Discrete(3)); say so otherwise."""
    if action_space is not None and getattr(action_space, "n", None) != 3:
        raise ValueError(
            f"{name} trades with the 'trade' action set (Discrete(3): sell, hold, buy), "
            f"got the action space {action_space}"
        )


class Random(Agent):
    """Uniform over ``n_actions`` (default 3, or the ``action_space``'s) from its own
    Generator (``seed``)."""

    name = "random"
    stochastic = True
    description = "Uniformly random actions"

    def __init__(
        self, *, n_actions: int = 3, action_space: Any = None, seed: int | None = None
    ) -> None:
        n_actions = int(action_space.n) if action_space is not None else n_actions
        if n_actions < 1:
            raise ValueError(f"n_actions must be >= 1, got {n_actions}")
        self.n_actions = n_actions
        self.rng = make_rng(seed)

    def act(self, obs: Any, explore: bool = True) -> int:
        return int(self.rng.integers(self.n_actions))


class Hold(Agent):
    """Always hold (action 1): never trades."""

    name = "hold"
    description = "Never trades (action 1, hold)"

    def act(self, obs: Any, explore: bool = True) -> int:
        return HOLD


class _FeatureRule(Agent):
    """Reads ``inventory`` and ``return_{window}`` from a feature vector."""

    def __init__(
        self,
        *,
        windows: Sequence[int] = DEFAULT_WINDOWS,
        window: int | None = None,
        observation_space: Any = None,
        action_space: Any = None,
    ) -> None:
        check_trade_actions(self.name, action_space)
        names = feature_names(windows)
        shape = getattr(observation_space, "shape", (len(names),))
        if shape != (len(names),):
            raise ValueError(
                f"{self.name} reads the feature vector of shape ({len(names)},) for windows "
                f"{tuple(windows)}; the observation space is {observation_space}"
            )
        window = min(windows) if window is None else window
        if f"return_{window}" not in names:
            raise ValueError(f"window must be one of windows {tuple(windows)}, got {window}")
        self.inventory_index = names.index("inventory")
        self.return_index = names.index(f"return_{window}")
        self.n_features = len(names)

    def features(self, obs: Any) -> tuple[float, float]:
        """(inventory fraction, return in bp) of a feature observation."""
        if np.ndim(obs) != 1 or len(obs) != self.n_features:
            raise ValueError(
                f"{self.name} expects the feature vector of shape ({self.n_features},) "
                f"(TradingEnv observation='features'), got {obs!r}"
            )
        return float(obs[self.inventory_index]), float(obs[self.return_index])


class BuyAndHold(_FeatureRule):
    """Buy while the inventory is flat or short, then hold (one ``order_size`` lot long)."""

    name = "buy_and_hold"
    description = "Buys one lot when flat or short, then holds"

    def act(self, obs: Any, explore: bool = True) -> int:
        inventory, _ = self.features(obs)
        return BUY if inventory <= 0.0 else HOLD


class MomentumAgent(_FeatureRule):
    """Buy after a rise, sell after a fall: ``return_{window}`` above ``threshold`` bp buys,
    below ``-threshold`` sells, else hold (defaults: the shortest window, 0.75 bp)."""

    name = "momentum"
    description = "Follows the last return: buys after a rise, sells after a fall"

    def __init__(self, *, threshold: float = 0.75, **params: Any) -> None:
        super().__init__(**params)
        if threshold < 0:
            raise ValueError(f"threshold must be >= 0 bp, got {threshold}")
        self.threshold = threshold

    def act(self, obs: Any, explore: bool = True) -> int:
        _, ret = self.features(obs)
        return BUY if ret > self.threshold else SELL if ret < -self.threshold else HOLD


class MeanReversion(MomentumAgent):
    """The opposite of `MomentumAgent`: sell after a rise above ``threshold`` bp, buy after a
    fall."""

    name = "mean_reversion"
    description = "Bets on reversal: sells after a rise, buys after a fall"

    def act(self, obs: Any, explore: bool = True) -> int:
        return 2 - super().act(obs, explore)


class ZeroIntelligenceAgent(Agent):
    """Trades at random (Gode and Sunder's zero intelligence, on the trade action set): buy
    or sell with probability ``p_trade`` / 2 each, else hold; its own Generator."""

    name = "zero_intelligence"
    stochastic = True
    description = "Random buys and sells with probability p_trade, else holds"

    def __init__(
        self, *, p_trade: float = 0.2, action_space: Any = None, seed: int | None = None
    ) -> None:
        check_trade_actions(self.name, action_space)
        if not 0.0 <= p_trade <= 1.0:
            raise ValueError(f"p_trade must be in [0, 1], got {p_trade}")
        self.p_trade = p_trade
        self.rng = make_rng(seed)

    def act(self, obs: Any, explore: bool = True) -> int:
        u = self.rng.random()
        return HOLD if u >= self.p_trade else SELL if u < self.p_trade / 2 else BUY
