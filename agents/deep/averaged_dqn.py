"""Averaged-DQN (Anschel, Baram and Shimkin 2017): bootstrap from the mean of K snapshots.

Every ``target_update_interval`` steps a copy of the online network joins a ring of the
last ``n_snapshots`` (K) snapshots; the TD target and the policy use their average::

    Qavg(s, a) = (1/K) sum_k Q(s, a; theta_k)
    y = r + gamma * (1 - terminated) * Qavg(s', a*),   a* = argmax_a' Qavg(s', a')

Choice ``include_online`` (default False, the paper's Algorithm 1, where the average runs
over the K previously learned networks theta_{i-1} .. theta_{i-K}): if True, the online
network is one of the K (the current network plus the last K - 1 snapshots). Until K
snapshots exist the average runs over those stored (the first is the initial network). With
``double`` (as `DQN`) the online network picks a*, and Qavg values it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import torch

from tradearena.agents.deep.dqn import DQN, load_module_state, module_state

__all__ = ["AveragedDQN"]


class AveragedDQN(DQN):
    """`DQN` whose target and policy use the average of K target snapshots.

    :param n_snapshots: K, the number of averaged networks (5).
    :param include_online: count the online network as one of the K (False).

    ``tau`` must be 1 (snapshots are copies). All other keywords as `DQN`.
    """

    name = "averaged_dqn"
    description = "Averaged-DQN: the target averages the last K target snapshots (Anschel 2017)"

    def __init__(self, *, n_snapshots: int = 5, include_online: bool = False, **params: Any):
        if isinstance(n_snapshots, bool) or not isinstance(n_snapshots, int) or n_snapshots < 1:
            raise ValueError(f"n_snapshots must be a positive int, got {n_snapshots!r}")
        if include_online and n_snapshots < 2:
            raise ValueError("include_online needs n_snapshots >= 2 (the online net is one)")
        if params.get("tau", 1.0) != 1.0:
            raise ValueError(
                f"averaged_dqn takes hard snapshots: tau must be 1, got {params['tau']}"
            )
        self.n_snapshots, self.include_online = n_snapshots, bool(include_online)
        super().__init__(**params)

    @property
    def config(self) -> dict[str, Any]:
        extra = {"n_snapshots": self.n_snapshots, "include_online": self.include_online}
        return {**super().config, **extra}

    @property
    def _n_stored(self) -> int:
        return self.n_snapshots - self.include_online

    def _build_targets(self) -> None:
        """A ring of K (K - 1 with ``include_online``) frozen copies; the first is stored."""
        self.snapshots = [
            copy.deepcopy(self.q_net).requires_grad_(False) for _ in range(self._n_stored)
        ]
        self.snapshot_count, self.snapshot_position = 1, 1 % self._n_stored

    def _sync_target(self) -> None:
        self.snapshots[self.snapshot_position].load_state_dict(self.q_net.state_dict())
        self.snapshot_position = (self.snapshot_position + 1) % self._n_stored
        self.snapshot_count = min(self.snapshot_count + 1, self._n_stored)

    def _average(self, obs: torch.Tensor) -> torch.Tensor:
        """Qavg(obs), (B, 1, A): mean over the stored snapshots (and the online network)."""
        nets = self.snapshots[: self.snapshot_count]
        if self.include_online:
            nets = [self.q_net, *nets]
        return torch.stack([net(obs) for net in nets]).mean(dim=0)

    def _acting_q(self, obs: torch.Tensor) -> torch.Tensor:
        return self._average(obs)

    def _target_q(self, obs: torch.Tensor) -> torch.Tensor:
        return self._average(obs)

    def _target_state(self) -> dict[str, Any]:
        state: dict[str, Any] = {
            "snapshot_count": self.snapshot_count,
            "snapshot_position": self.snapshot_position,
        }
        for i, net in enumerate(self.snapshots):
            state.update(module_state(f"snapshots.{i}.", net))
        return state

    def _load_target_state(self, state: Mapping[str, Any]) -> None:
        self.snapshot_count = int(state["snapshot_count"])
        self.snapshot_position = int(state["snapshot_position"])
        for i, net in enumerate(self.snapshots):
            load_module_state(net, state, f"snapshots.{i}.")
