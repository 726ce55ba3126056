"""Tabular Q-learning (Watkins 1989): the identity-utility row of
docs/algorithms.md#the-learners."""

from __future__ import annotations

from typing import Any

import numpy as np

from tradearena.agents._kernels import UtilityKind, risk_update_batch
from tradearena.agents.ensembles import Transition
from tradearena.agents.tabular._base import TabularAgent

__all__ = ["QLearning"]


class QLearning(TabularAgent):
    """Q-learning: for a transition (s, a, r, s')

        d = r + gamma * max_a' Q(s', a') - Q(s, a)      (no bootstrap if terminated)
        Q(s, a) <- Q(s, a) + alpha(N(s, a)) * d

    ``q`` (S, A) float64; ``visits`` N(s, a) (S, A) int64. Parameters: see `TabularAgent`.
    Truncation still bootstraps.
    """

    name = "q_learning"
    description = "Tabular Q-learning (risk-neutral baseline learner)"
    _state = (*TabularAgent._state, "q", "visits")

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.q = np.zeros((self.n_states, self.n_actions))
        self.visits = np.zeros((self.n_states, self.n_actions), dtype=np.int64)

    def values(self, state: int) -> np.ndarray:
        return self.q[state]

    def values_batch(self, states: np.ndarray) -> np.ndarray:
        return self.q[states]

    def learn(self, t: Transition) -> None:
        s, a, r, s2, _, g = t
        q = self.q
        d = r + g * max(q[s2].tolist()) - q.item(s, a)
        n = self.visits.item(s, a) + 1
        self.visits[s, a] = n
        q[s, a] = q.item(s, a) + self.step_size(n) * d

    def apply_batch(
        self, s: np.ndarray, a: np.ndarray, r: np.ndarray, s2: np.ndarray, g: np.ndarray
    ) -> None:
        """`update` over N transitions in one compiled call (the RAQL kernel with the
        identity utility on this one table)."""
        once = np.ones((len(s), 1), dtype=np.int64)
        identity = (int(UtilityKind.IDENTITY), 0.0, 0.0)
        skind, sp = self.step_size.kernel_args()
        risk_update_batch(
            self.q[None], self.visits[None], s, a, r, s2, g, once, *identity, int(skind), sp
        )

    batched_update = True
