"""Variance-reduced Q-learning (V-QL, Wainwright 2019): building block 3 of
docs/algorithms.md#building-block-3-recentering."""

from __future__ import annotations

from typing import Any

import numpy as np

from tradearena.agents.ensembles import (
    Model,
    Transition,
    TransitionMemory,
    generative_estimate,
)
from tradearena.agents.tabular._base import TabularAgent

__all__ = ["VQL"]


class VQL(TabularAgent):
    """Q-learning recentered around a reference frozen at the start of each epoch.

    Every ``epoch_length`` updates: Qref <- Q, and Ttilde(s, a) estimates the Bellman
    operator at Qref, the mean of r + gamma max_a' Qref(s', a') over N transitions from
    (s, a): the last ``n_recenter`` observed ones (online, default; (s, a) with none stored
    use the plain Q-learning target) or ``n_recenter`` fresh draws of ``model`` (generative,
    as in the paper). Inside the epoch, for (s, a, r, s'):

        target = [r + gamma max Q(s', .)] - [r + gamma max Qref(s', .)] + Ttilde(s, a)
        Q(s, a) <- (1 - alpha) Q(s, a) + alpha * target,  alpha = learning_rate(n)

    with ``learning_rate`` default ``"rescaled_linear"``: alpha = 1 / (1 + (1 - gamma) n),
    and n (choice, ``step_count``): ``"state_action"`` (default) counts this epoch's updates
    of (s, a), ``"epoch"`` all of this epoch's updates. ``model(s, a, rng) -> (reward,
    next_state)`` must give rewards in agent units; ``model_samples`` counts its calls.
    """

    name = "vql"
    description = "Variance-reduced Q-learning: recentered updates (Wainwright 2019)"
    _state = (
        *TabularAgent._state,
        "q",
        "q_ref",
        "ttilde",
        "filled",
        "epoch_visits",
        "updates",
        "model_samples",
        "memory.reward",
        "memory.next_state",
        "memory.live",
        "memory.count",
        "memory.added",
    )

    def __init__(
        self,
        *,
        epoch_length: int = 1000,
        n_recenter: int = 20,
        model: Model | None = None,
        step_count: str = "state_action",
        learning_rate: float | str | tuple[str, float] = "rescaled_linear",
        **params: Any,
    ) -> None:
        super().__init__(learning_rate=learning_rate, **params)
        if epoch_length < 1:
            raise ValueError(f"epoch_length must be >= 1 update, got {epoch_length}")
        if n_recenter < 1:
            raise ValueError(f"n_recenter must be >= 1 transition, got {n_recenter}")
        if step_count not in ("state_action", "epoch"):
            raise ValueError(f"step_count must be 'state_action' or 'epoch', got {step_count!r}")
        self.epoch_length, self.n_recenter = epoch_length, n_recenter
        self.model, self.step_count = model, step_count
        shape = (self.n_states, self.n_actions)
        self.q = np.zeros(shape)
        self.q_ref = np.zeros(shape)
        self.ttilde = np.zeros(shape)
        self.filled = np.zeros(shape, dtype=bool)
        self.epoch_visits = np.zeros(shape, dtype=np.int64)
        self.memory = TransitionMemory(self.n_states, self.n_actions, n_recenter)
        self.updates = 0
        self.model_samples = 0

    def values(self, state: int) -> np.ndarray:
        return self.q[state]

    def values_batch(self, states: np.ndarray) -> np.ndarray:
        return self.q[states]

    def start_epoch(self) -> None:
        """Freeze Qref = Q and estimate Ttilde at Qref (online memory or generative model)."""
        self.q_ref = self.q.copy()
        v_ref = self.q_ref.max(axis=1)
        if self.model is None:
            self.ttilde, self.filled = self.memory.estimate(v_ref, self.gamma)
        else:
            self.ttilde = generative_estimate(
                self.model, v_ref, self.n_actions, self.gamma, self.n_recenter, self.rng
            )
            self.filled = np.ones_like(self.filled)
            self.model_samples += self.n_states * self.n_actions * self.n_recenter
        self.epoch_visits[:] = 0

    def learn(self, t: Transition) -> None:
        if self.updates % self.epoch_length == 0:
            self.start_epoch()
        self.updates += 1
        s, a, r, s2, _, g = t
        q = self.q
        target = r + g * max(q[s2].tolist())
        if self.filled[s, a]:
            target += self.ttilde.item(s, a) - (r + g * max(self.q_ref[s2].tolist()))
        n = self.epoch_visits.item(s, a) + 1
        self.epoch_visits[s, a] = n
        alpha = self.step_size(n if self.step_count == "state_action" else self._epoch_n())
        q[s, a] = (1.0 - alpha) * q.item(s, a) + alpha * target
        if self.model is None:
            self.memory.add(t)

    def _epoch_n(self) -> int:
        return (self.updates - 1) % self.epoch_length + 1
