"""RA3-Q minimax: joint-action risk tables backed up by the maximin value of the stage game.

This project's construction, inspired by Nash-Q (Hu and Wellman 1998) as the source text
names it; it is not from the paper. With zero-sum rewards the Nash value of each stage
matrix game is its maximin value, a small linear program.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.optimize import linprog

from tradearena.agents.ensembles import RiskTables, Transition, mean_var, poisson_masks
from tradearena.agents.tabular._base import TabularAgent
from tradearena.agents.utility import RISK_AVERSE, make_utility

__all__ = ["RA3QMinimax", "maximin"]


def maximin(matrix: np.ndarray) -> tuple[np.ndarray, float]:
    """The row player's maximin mixed strategy x (m,) and value v of payoff ``matrix`` (m, n).

    v = max_x min_j sum_i x_i M[i, j]: a pure saddle point if there is one, else the LP
    max v s.t. M^T x >= v, sum x = 1, x >= 0 (scipy.optimize.linprog, HiGHS).
    """
    m, n = matrix.shape
    row_min, col_max = matrix.min(axis=1), matrix.max(axis=0)
    if row_min.max() == col_max.min():
        x = np.zeros(m)
        x[int(row_min.argmax())] = 1.0
        return x, float(row_min.max())
    cost = np.zeros(m + 1)
    cost[-1] = -1.0
    a_ub = np.hstack([-matrix.T, np.ones((n, 1))])
    a_eq = np.hstack([np.ones((1, m)), np.zeros((1, 1))])
    bounds = [(0.0, 1.0)] * m + [(None, None)]
    result = linprog(cost, A_ub=a_ub, b_ub=np.zeros(n), A_eq=a_eq, b_eq=[1.0], bounds=bounds)
    x = np.clip(result.x[:m], 0.0, None)
    return x / x.sum(), float(result.x[-1])


class RA3QMinimax(TabularAgent):
    """RA3-Q with joint-action tables Q_i(s, a_P, a_A), k of them (k, S, A, A).

    Update for a joint transition (s, a_P, a_A, r, s'), table i m_i ~ Poisson(1) times
    (``masks``), each table bootstrapping from the maximin value of its own stage game:

        d_i = r + gamma * val(Q_i(s', ., .)) - Q_i(s, a_P, a_A),   val = `maximin` value
        Q_i(s, a_P, a_A) <- Q_i(s, a_P, a_A) + alpha(N_i) * (u(d_i) - x0)

    Policies (mixed): the protagonist plays the maximin strategy of Qbar - ``lam`` var; the
    adversary (risk-seeking, maximising -Qbar + ``adversary_lam`` var) the maximin strategy
    of -(Qbar - adversary_lam var)^T. Each is mixed with epsilon-uniform exploration in
    training. Choice: both share the zero-sum tables and the protagonist's ``utility``.

    As a single-seat agent (``"takeover"``): `act` draws a_P and a_A and, in training, with
    probability ``p_adv`` executes a_A (else a_P); `update` uses the remembered (a_P, a_A),
    so Q(s, a_P, a_A) includes the take-over coin. Otherwise (e.g. a matrix game or an
    adversary seat) call `update_joint` with both actions.
    """

    name = "ra3q_minimax"
    description = "RA3-Q minimax: joint-action tables, maximin stage-game backups (Nash-Q style)"
    batched_act = False
    _state = (
        *TabularAgent._state,
        "tables.q",
        "tables.visits",
        "tables.utility.clipped",
        "joint_action",
    )

    def __init__(
        self,
        *,
        k: int = 5,
        lam: float = 1.0,
        masks: bool = True,
        utility: Any = None,
        p_adv: float = 0.2,
        adversary_lam: float = 1.0,
        **params: Any,
    ) -> None:
        super().__init__(**params)
        if not (lam >= 0.0 and adversary_lam >= 0.0):
            raise ValueError(f"lam and adversary_lam must be >= 0, got {lam}, {adversary_lam}")
        if not 0.0 <= p_adv <= 1.0:
            raise ValueError(f"p_adv must be in [0, 1], got {p_adv}")
        self.k, self.lam, self.masks, self.p_adv = k, float(lam), masks, p_adv
        self.adversary_lam = float(adversary_lam)
        utility = make_utility(RISK_AVERSE if utility is None else utility)
        n_joint = self.n_actions * self.n_actions
        self.tables = RiskTables(k, self.n_states, n_joint, utility, self.step_size)
        self.joint_action = (-1, -1)

    @property
    def q(self) -> np.ndarray:
        """The joint tables, shape (k, S, A, A): Q_i(s, a_P, a_A)."""
        return self.tables.q.reshape(self.k, self.n_states, self.n_actions, self.n_actions)

    def strategies(self, state: int) -> tuple[np.ndarray, np.ndarray, float]:
        """Protagonist and adversary maximin strategies (A,) each, and the protagonist's
        risk-adjusted stage value at ``state``."""
        mean, var = mean_var(self.q[:, state])
        x, value = maximin(mean - self.lam * var)
        y, _ = maximin(-(mean - self.adversary_lam * var).T)
        return x, y, value

    def values(self, state: int) -> np.ndarray:
        """Qhat(s, a_P, .) against the adversary's strategy: the protagonist's action values."""
        mean, var = mean_var(self.q[:, state])
        _, y, _ = self.strategies(state)
        return (mean - self.lam * var) @ y

    def _draw(self, probabilities: np.ndarray, explore: bool) -> int:
        eps = self.policy.epsilon(self.t) if explore else 0.0
        mixed = (1.0 - eps) * probabilities + eps / self.n_actions
        return int(self.rng.choice(self.n_actions, p=mixed / mixed.sum()))

    def act(self, obs: Any, explore: bool = True) -> int:
        s = self.index(obs)
        x, y, _ = self.strategies(s)
        a_p, a_a = self._draw(x, explore), self._draw(y, explore)
        self.joint_action = (a_p, a_a)
        taken_over = explore and self.p_adv > 0.0 and self.rng.random() < self.p_adv
        if explore:
            self.t += 1
        return a_a if taken_over else a_p

    def learn(self, t: Transition) -> None:
        """Learn from the joint action (a_P, a_A) the last `act` drew (the action executed
        is one of them)."""
        if self.joint_action[0] < 0:
            raise ValueError("update() needs a preceding act(); use update_joint() otherwise")
        self.learn_joint(t, *self.joint_action)

    def update_joint(
        self,
        obs: Any,
        action: int,
        adversary_action: int,
        reward: float,
        next_obs: Any,
        terminated: bool,
    ) -> None:
        """Learn from a joint transition (s, a_P, a_A, r, s'); ``reward`` is the protagonist's."""
        t = self.transition(obs, action, reward, next_obs, terminated)
        self.learn_joint(t, int(action), int(adversary_action))

    def learn_joint(self, t: Transition, action: int, adversary_action: int) -> None:
        """The rule (see the class docstring) for the joint action (``action``,
        ``adversary_action``) at the transition's state."""
        s, _, r, s2, terminated, g = t
        joint = action * self.n_actions + adversary_action
        counts = poisson_masks(self.rng, self.k, self.masks)
        tables, q, u = self.tables, self.q, self.tables.utility
        for round_ in range(int(counts.max())):
            for i in np.flatnonzero(counts > round_).tolist():
                v_next = 0.0 if terminated else maximin(q[i, s2])[1]
                d = r + g * v_next - tables.q.item(i, s, joint)
                n = tables.visits.item(i, s, joint) + 1
                tables.visits[i, s, joint] = n
                tables.q[i, s, joint] = tables.q.item(i, s, joint) + self.step_size(n) * (
                    u(d) - u.x0
                )
