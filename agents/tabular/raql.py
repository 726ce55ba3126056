"""Risk-averse Q-learning (RAQL, Shen et al. 2014): ALGORITHMS.md building block 1."""

from __future__ import annotations

from typing import Any

import numpy as np

from agents._kernels import risk_update
from agents.tabular._base import TabularAgent
from agents.utility import RISK_AVERSE, Utility, make_utility

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
    `TabularAgent`. ``q`` (S, A) float64, ``visits`` (S, A) int64. The update is the
    compiled rule of `agents.ensembles.RiskTables` on one table (`agents._kernels`), so that
    RA2-Q with k = 1, lam = 0 and no masks is RAQL to the bit.
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
        u = self.utility
        ukind, up, clip = u.kernel_args()
        skind, sp = self.step_size.kernel_args()
        g = 0.0 if terminated else self.gamma
        # the compiled rule of an ensemble of one table (RA2-Q with k = 1 agrees to the bit)
        clipped = risk_update(
            self.q[None],
            self.visits[None],
            s,
            a,
            reward * self.reward_scale,
            s2,
            g,
            _ONCE,
            ukind,
            up,
            clip,
            skind,
            sp,
        )
        if clipped:
            u.clipped += clipped
