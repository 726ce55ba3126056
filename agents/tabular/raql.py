"""Risk-averse Q-learning (RAQL, Shen et al. 2014): ALGORITHMS.md building block 1."""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.tabular._base import TabularAgent
from agents.utility import RISK_AVERSE, Utility, make_utility

__all__ = ["RAQL"]


class RAQL(TabularAgent):
    """RAQL: Q-learning with a utility on the TD error. For a transition (s, a, r, s')

        d = r + gamma * max_a' Q(s', a') - Q(s, a)      (no bootstrap if terminated)
        Q(s, a) <- Q(s, a) + alpha(N(s, a)) * (u(d) - x0),   x0 = u(0)

    Fixed point E[u(r + gamma max Q(s', .) - Q(s, a))] = x0; with u = Exponential(beta) a
    one-step problem gives Q = (1/beta) log E[exp(beta r)].

    ``utility``: a `make_utility` spec, default ``{"name": "exponential", "beta": -0.5}``
    (risk-averse; beta per agent reward unit, see ``reward_scale``). Other parameters: see
    `TabularAgent`. ``q`` (S, A) float64, ``visits`` (S, A) int64.
    """

    name = "raql"
    description = "Risk-averse Q-learning: a utility applied to the TD error (Shen et al. 2014)"
    _state = (*TabularAgent._state, "q", "visits", "utility.clipped")

    def __init__(self, *, utility: Any = None, **params: Any) -> None:
        super().__init__(**params)
        self.utility: Utility = make_utility(RISK_AVERSE if utility is None else utility)
        self.q = np.zeros((self.n_states, self.n_actions))
        self.visits = np.zeros((self.n_states, self.n_actions), dtype=np.int64)

    def values(self, state: int) -> np.ndarray:
        return self.q[state]

    def update(
        self,
        obs: Any,
        action: int,
        reward: float,
        next_obs: Any,
        terminated: bool,
        truncated: bool,
    ) -> None:
        s, a, s2 = self.index(obs), int(action), self.index(next_obs)
        q, u = self.q, self.utility
        g = 0.0 if terminated else self.gamma
        d = reward * self.reward_scale + g * max(q[s2].tolist()) - q.item(s, a)
        n = self.visits.item(s, a) + 1
        self.visits[s, a] = n
        q[s, a] = q.item(s, a) + self.step_size(n) * (u(d) - u.x0)
