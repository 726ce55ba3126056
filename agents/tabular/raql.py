"""Risk-averse Q-learning (RAQL, Shen et al. 2014): building block 1 of
docs/algorithms.md#building-block-1-utilities-on-the-td-error."""

from __future__ import annotations

from typing import Any

import numpy as np

from tradearena.agents.ensembles import RiskTables, Transition
from tradearena.agents.tabular._base import TabularAgent
from tradearena.agents.utility import RISK_AVERSE, Utility, make_utility

__all__ = ["RAQL"]

_ONCE = np.ones(1, dtype=np.int64)
"""Update count of the single table: once per transition."""


class RAQL(TabularAgent):
    """RAQL: Q-learning with a utility on the TD error. For a transition (s, a, r, s')

        d = r + gamma * max_a' Q(s', a') - Q(s, a)      (no bootstrap if terminated)
        Q(s, a) <- Q(s, a) + alpha(N(s, a)) * (u(d) - x0),   x0 = u(0)

    Fixed point E[u(r + gamma max Q(s', .) - Q(s, a))] = x0; with u = Exponential(beta) a
    one-step problem gives Q = (1/beta) log E[exp(beta r)].

    ``utility``: a `make_utility` spec, default ``{"name": "exponential", "beta": -0.5}``
    (risk-averse; beta per agent reward unit, see ``reward_scale``). Other parameters: see
    `TabularAgent`. The learner is `agents.ensembles.RiskTables` with k = 1 (``tables``),
    so that RA2-Q with k = 1, lam = 0 and no masks is RAQL to the bit; ``q`` (S, A) float64
    and ``visits`` (S, A) int64 are views of its only table.
    """

    name = "raql"
    description = "Risk-averse Q-learning: a utility applied to the TD error (Shen et al. 2014)"
    _state = (*TabularAgent._state, "tables.q", "tables.visits", "tables.utility.clipped")

    def __init__(self, *, utility: Any = None, **params: Any) -> None:
        super().__init__(**params)
        utility = make_utility(RISK_AVERSE if utility is None else utility)
        self.tables = RiskTables(1, self.n_states, self.n_actions, utility, self.step_size)

    @property
    def q(self) -> np.ndarray:
        """Q(s, a), shape (S, A): the only table."""
        return self.tables.q[0]

    @property
    def visits(self) -> np.ndarray:
        """N(s, a), shape (S, A) int64."""
        return self.tables.visits[0]

    @property
    def utility(self) -> Utility:
        """The utility u of the TD error."""
        return self.tables.utility

    def values(self, state: int) -> np.ndarray:
        return self.tables.q[0, state]

    def values_batch(self, states: np.ndarray) -> np.ndarray:
        return self.tables.q[0, states]

    def learn(self, t: Transition) -> None:
        self.tables.update(t, _ONCE)

    def apply_batch(
        self, s: np.ndarray, a: np.ndarray, r: np.ndarray, s2: np.ndarray, g: np.ndarray
    ) -> None:
        """`update` over N transitions in one compiled call."""
        self.tables.update_batch(s, a, r, s2, g, np.ones((len(s), 1), dtype=np.int64))

    batched_update = True
