"""RA2.1-Q (Gao, Lui and Hernandez-Leal 2021): RA2-Q with V-QL recentering per table."""

from __future__ import annotations

from typing import Any

import numpy as np

from tradearena.agents.ensembles import Transition, TransitionMemory, poisson_masks
from tradearena.agents.tabular.ra2q import RA2Q

__all__ = ["RA21Q"]


class RA21Q(RA2Q):
    """RA2-Q whose tables are recentered as in V-QL, the utility on the recentered TD error.

    Every ``epoch_length`` updates each table freezes Qref_i = Q_i and estimates
    Ttilde_i(s, a) = mean over the last ``n_recenter`` observed transitions from (s, a) of
    r + gamma max Qref_i(s', .) (online recentering; no generative model in a market). Then

        d_i = [r + gamma max Q_i(s', .)] - [r + gamma max Qref_i(s', .)] + Ttilde_i(s, a)
              - Q_i(s, a)
        Q_i(s, a) <- Q_i(s, a) + alpha(N_i(s, a)) * (u(d_i) - x0)

    (plain RA2-Q where (s, a) has no stored transition). Choice: the step size is the
    agent's ``learning_rate`` over all visits N_i(s, a), not V-QL's in-epoch rescaled linear
    one, so that ``recenter=False`` is RA2-Q exactly. Other parameters: see `RA2Q`.
    """

    name = "ra21q"
    description = "RA2.1-Q: RA2-Q with V-QL recentering, utility on the recentered TD error"
    batched_update = False
    _state = (
        *RA2Q._state,
        "updates",
        "v_ref",
        "ttilde",
        "filled",
        "memory.reward",
        "memory.next_state",
        "memory.live",
        "memory.count",
        "memory.added",
    )

    def __init__(
        self,
        *,
        recenter: bool = True,
        epoch_length: int = 1000,
        n_recenter: int = 20,
        **params: Any,
    ) -> None:
        super().__init__(**params)
        if epoch_length < 1:
            raise ValueError(f"epoch_length must be >= 1 update, got {epoch_length}")
        self.recenter, self.epoch_length = recenter, epoch_length
        self.memory = TransitionMemory(self.n_states, self.n_actions, n_recenter)
        self.v_ref = np.zeros((self.k, self.n_states))
        self.ttilde = np.zeros((self.k, self.n_states, self.n_actions))
        self.filled = np.zeros((self.n_states, self.n_actions), dtype=bool)
        self.updates = 0

    def learn(self, t: Transition) -> None:
        counts = poisson_masks(self.rng, self.k, self.masks)
        if not self.recenter:
            self.tables.update(t, counts)
            return
        if self.updates % self.epoch_length == 0:
            self.v_ref = self.tables.q.max(axis=2)
            ttilde, self.filled = self.memory.estimate(self.v_ref, self.gamma)
            self.ttilde = np.ascontiguousarray(ttilde)  # the compiled update reads it row-major
        self.updates += 1
        self.tables.update(t, counts, (self.v_ref, self.ttilde, self.filled))
        self.memory.add(t)
