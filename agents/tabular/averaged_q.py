"""Tabular Averaged-Q (Averaged-DQN, Anschel et al. 2017): building block 2
of docs/algorithms.md#building-block-2-ensembles."""

from __future__ import annotations

from typing import Any

import numpy as np

from tradearena.agents.ensembles import SnapshotAverage, Transition
from tradearena.agents.tabular._base import TabularAgent

__all__ = ["AveragedQ"]


class AveragedQ(TabularAgent):
    """Q-learning whose target bootstraps from the average of the last K snapshots of Q:

        Qavg = mean of the last ``n_snapshots`` copies of Q, one taken every
               ``snapshot_period`` updates (the initial Q is the first)
        d = r + gamma * max_a' Qavg(s', a') - Q(s, a)
        Q(s, a) <- Q(s, a) + alpha(N(s, a)) * d

    Acting is epsilon-greedy on Qavg (`values`). Choice (``include_online``, default False,
    as Averaged-DQN averages the K previous target networks): whether the current Q is
    averaged in as well, for both target and acting. Defaults K = 10, C = 100 updates.
    """

    name = "averaged_q"
    description = "Tabular Averaged-DQN: targets from the mean of the last K snapshots of Q"
    _state = (
        *TabularAgent._state,
        "q",
        "visits",
        "updates",
        "average.snapshots",
        "average.count",
        "average.position",
        "average.average",
    )

    def __init__(
        self,
        *,
        n_snapshots: int = 10,
        snapshot_period: int = 100,
        include_online: bool = False,
        **params: Any,
    ) -> None:
        super().__init__(**params)
        if snapshot_period < 1:
            raise ValueError(f"snapshot_period must be >= 1 update, got {snapshot_period}")
        self.snapshot_period = snapshot_period
        self.include_online = include_online
        self.q = np.zeros((self.n_states, self.n_actions))
        self.visits = np.zeros((self.n_states, self.n_actions), dtype=np.int64)
        self.average = SnapshotAverage(self.q, n_snapshots)
        self.updates = 0

    def averaged(self, state: int) -> np.ndarray:
        """Qavg(state, .), shape (n_actions,)."""
        avg = self.average
        if not self.include_online:
            return avg.average[state]
        return (avg.average[state] * avg.count + self.q[state]) / (avg.count + 1)

    def values(self, state: int) -> np.ndarray:
        return self.averaged(state)

    def learn(self, t: Transition) -> None:
        s, a, r, s2, _, g = t
        q = self.q
        d = r + g * max(self.averaged(s2).tolist()) - q.item(s, a)
        n = self.visits.item(s, a) + 1
        self.visits[s, a] = n
        q[s, a] = q.item(s, a) + self.step_size(n) * d
        self.updates += 1
        if self.updates % self.snapshot_period == 0:
            self.average.add(q)
