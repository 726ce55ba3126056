"""Deep RAQL: DQN whose regression target carries a utility of the TD error (Shen et al. 2014).

With d = y - Q(s, a) the TD error against the target network, Q(s, a) is regressed on::

    stopgrad(Q(s, a) + u(d) - x0)

so the gradient step on the squared error is the RAQL rule ``Q += alpha (u(d) - x0)``
(docs/algorithms.md#building-block-1-utilities-on-the-td-error), exactly: `DQN`'s loss is
the squared error, whose gradient is the residual u(d) - x0 unclipped, so the fixed point
is E[u(d)] = x0. With
``normalize_rewards`` (the default) the TD errors are in units of the rewards' running
standard deviation, so beta is a risk aversion per standard deviation of a step's reward,
whatever the market's reward unit; without it, per agent reward unit (choose
``reward_scale`` then). With the identity utility the target is y itself: exactly `DQN`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from tradearena.agents.deep.dqn import DQN
from tradearena.agents.deep.risk import apply_utility, utility_spec
from tradearena.agents.utility import RISK_AVERSE, Identity, make_utility

__all__ = ["DeepRAQL"]


class DeepRAQL(DQN):
    """`DQN` regressing on ``stopgrad(Q(s, a) + u(d) - x0)``.

    :param utility: a `agents.utility.make_utility` spec (default exponential beta = -0.5 per
        standard deviation of a step's reward with ``normalize_rewards``, else per agent reward
        unit); all other keywords as `DQN`.
    """

    name = "deep_raql"
    description = "Deep RAQL: DQN regressing on Q + u(TD error) - x0 (risk-sensitive utility)"

    def __init__(self, *, utility: Any = None, **params: Any) -> None:
        super().__init__(**params)
        self.utility = make_utility(RISK_AVERSE if utility is None else utility)

    @property
    def config(self) -> dict[str, Any]:
        return {**super().config, "utility": utility_spec(self.utility)}

    def _regression_target(self, q_sa: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        if isinstance(self.utility, Identity):
            return y
        q = q_sa.detach()
        return q + apply_utility(self.utility, y - q) - self.utility.x0

    def state_dict(self) -> dict[str, Any]:
        """`DQN.state_dict` plus ``utility.clipped`` (count of clipped exponentials)."""
        return {**super().state_dict(), "utility.clipped": self.utility.clipped}

    def _restore(self, state: Mapping[str, Any]) -> None:
        super()._restore(state)
        self.utility.clipped = int(state["utility.clipped"])
