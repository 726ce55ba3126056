"""RA2-Q (Gao, Lui and Hernandez-Leal 2021): k masked RAQL tables, act on Qbar - lam var."""

from __future__ import annotations

from typing import Any

import numpy as np

from tradearena.agents._kernels import risk_row, risk_rows
from tradearena.agents.ensembles import RiskTables, Transition, poisson_masks
from tradearena.agents.tabular._base import TabularAgent
from tradearena.agents.utility import RISK_AVERSE, make_utility

__all__ = ["RA2Q"]


class RA2Q(TabularAgent):
    """RA2-Q: k RAQL tables trained in parallel on bootstrap masks; risk-averse acting.

    For each transition (s, a, r, s'): draw m_i ~ Poisson(1) per table (``masks=True``; all
    ones if False) and update table i m_i times (choice: m_i = 0 skips it) by the RAQL rule,
    each table bootstrapping from itself (`RiskTables`):

        d_i = r + gamma * max_a' Q_i(s', a') - Q_i(s, a)
        Q_i(s, a) <- Q_i(s, a) + alpha(N_i(s, a)) * (u(d_i) - x0)

    Acting: epsilon-greedy on Qhat(s, .) = Qbar(s, .) - lam * var(s, .) (ddof=1, over the k
    tables). Choice ``head_per_episode`` (default False): act greedily on one table drawn
    uniformly at every `end_episode` (bootstrapped DQN) instead of on Qhat.

    Parameters: ``k`` tables (default 10), ``lam`` >= 0 (default 1.0, per agent reward unit),
    ``masks``, ``utility`` (`make_utility` spec, default exponential beta = -0.5), and those
    of `TabularAgent`. ``q`` is the (k, S, A) array of tables.
    """

    name = "ra2q"
    description = "RA2-Q: k masked RAQL tables, acting on mean - lam * variance"
    _state = (
        *TabularAgent._state,
        "tables.q",
        "tables.visits",
        "tables.utility.clipped",
        "head",
    )

    def __init__(
        self,
        *,
        k: int = 10,
        lam: float = 1.0,
        masks: bool = True,
        utility: Any = None,
        head_per_episode: bool = False,
        **params: Any,
    ) -> None:
        super().__init__(**params)
        if not lam >= 0.0:
            raise ValueError(f"lam must be >= 0, got {lam}")
        self.k, self.lam, self.masks = k, float(lam), masks
        self.head_per_episode = head_per_episode
        utility = make_utility(RISK_AVERSE if utility is None else utility)
        self.tables = RiskTables(k, self.n_states, self.n_actions, utility, self.step_size)
        self.head = int(self.rng.integers(k)) if head_per_episode else -1

    @property
    def q(self) -> np.ndarray:
        """The tables, shape (k, S, A)."""
        return self.tables.q

    def values(self, state: int) -> np.ndarray:
        if self.head >= 0:
            return self.tables.q[self.head, state]
        return risk_row(self.tables.q, state, self.lam)

    def values_batch(self, states: np.ndarray) -> np.ndarray:
        if self.head >= 0:
            return self.tables.q[self.head, states]
        return risk_rows(self.tables.q, states, self.lam)

    def learn(self, t: Transition) -> None:
        self.tables.update(t, poisson_masks(self.rng, self.k, self.masks))

    def apply_batch(
        self, s: np.ndarray, a: np.ndarray, r: np.ndarray, s2: np.ndarray, g: np.ndarray
    ) -> None:
        """`update` over N transitions in one compiled call, with the masks N calls draw."""
        counts = poisson_masks(self.rng, (len(s), self.k), self.masks)
        self.tables.update_batch(s, a, r, s2, g, counts)

    batched_update = True

    def end_episode(self) -> None:
        if self.head_per_episode:
            self.head = int(self.rng.integers(self.k))
