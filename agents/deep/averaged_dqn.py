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
from functools import partial
from typing import Any

import torch
from torch import nn

from tradearena.agents.deep.dqn import DQN, DQNSettings
from tradearena.agents.deep.plumbing import load_module_state, module_state

__all__ = ["AveragedDQN", "SnapshotAverage"]


class SnapshotAverage:
    """The `agents.deep.dqn.Target` of Averaged-DQN: a ring of ``n_stored`` frozen copies of
    the online network (the first stored when built); its Q-values are the mean over the
    snapshots stored so far, and over the online network too with ``include_online``."""

    def __init__(
        self, online: nn.Module, settings: DQNSettings, *, n_stored: int, include_online: bool
    ) -> None:
        self.online, self.include_online = online, include_online
        self.snapshots = [copy.deepcopy(online).requires_grad_(False) for _ in range(n_stored)]
        self.count, self.position = 1, 1 % n_stored

    def q(self, obs: torch.Tensor) -> torch.Tensor:
        """Qavg(obs), (B, 1, A)."""
        nets = self.snapshots[: self.count]
        if self.include_online:
            nets = [self.online, *nets]
        return torch.stack([net(obs) for net in nets]).mean(dim=0)

    def sync(self, online: nn.Module) -> None:
        """Copy ``online`` into the oldest slot of the ring."""
        self.snapshots[self.position].load_state_dict(online.state_dict())
        self.position = (self.position + 1) % len(self.snapshots)
        self.count = min(self.count + 1, len(self.snapshots))

    def state_dict(self) -> dict[str, Any]:
        state: dict[str, Any] = {"snapshot_count": self.count, "snapshot_position": self.position}
        for i, net in enumerate(self.snapshots):
            state.update(module_state(f"snapshots.{i}.", net))
        return state

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.count = int(state["snapshot_count"])
        self.position = int(state["snapshot_position"])
        for i, net in enumerate(self.snapshots):
            load_module_state(net, state, f"snapshots.{i}.")


class AveragedDQN(DQN):
    """`DQN` whose target and policy use the average of K target snapshots (`SnapshotAverage`).

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
        n_stored = n_snapshots - bool(include_online)
        ring = partial(SnapshotAverage, n_stored=n_stored, include_online=bool(include_online))
        super().__init__(target=ring, **params)
        self.n_snapshots, self.include_online = n_snapshots, bool(include_online)

    @property
    def config(self) -> dict[str, Any]:
        extra = {"n_snapshots": self.n_snapshots, "include_online": self.include_online}
        return {**super().config, **extra}

    def _acting_q(self, obs: torch.Tensor) -> torch.Tensor:
        """The policy acts on the snapshots' average too."""
        return self.target.q(obs)
