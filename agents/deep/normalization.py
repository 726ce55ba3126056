"""Running statistics that put the deep learners' inputs and rewards on a unit scale.

The market's features span very different ranges (inventory in [-1, 1], returns in basis
points, the spread in ticks) and its rewards are dollars times whatever ``reward_scale`` the
market was given; a network learns best when both are near unit scale, whatever the market.
As Stable-Baselines3's ``VecNormalize`` does, the learners keep running moments of what they
have stored and use them at the network's input (``(x - mean) / std``, clipped) and on the
sampled rewards (``r / std``: divided, never shifted, so the sign of a reward and the optimal
policy stay the same). The replay buffer keeps the raw values; the moments are folded in
from the rows stored since the last training phase, so they are a pure function of the
transitions seen.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
from torch import nn

__all__ = ["InputNormalizer", "RunningMoments"]


class RunningMoments:
    """Count, mean and sum of squared deviations of vectors of ``shape`` (float64), merged a
    batch at a time (Chan, Golub and LeVeque's pairwise update, exact up to rounding)."""

    def __init__(self, shape: tuple[int, ...] = ()) -> None:
        self.count = 0
        self.mean = np.zeros(shape)
        self.m2 = np.zeros(shape)
        self.std = self._spread()
        """The standard deviation (ddof 0); 1 where fewer than 2 values or no spread: kept
        with the moments (a learner divides by it at every step)."""

    def update(self, batch: np.ndarray) -> None:
        """Fold in ``batch`` (n, *shape)."""
        n = len(batch)
        if n == 0:
            return
        batch = np.asarray(batch, dtype=np.float64)
        mean = batch.mean(axis=0)
        m2 = ((batch - mean) ** 2).sum(axis=0)
        total = self.count + n
        delta = mean - self.mean
        self.mean = self.mean + delta * (n / total)
        self.m2 = self.m2 + m2 + delta**2 * (self.count * n / total)
        self.count = total
        self.std = self._spread()

    def _spread(self) -> np.ndarray:
        if self.count < 2:
            return np.ones_like(self.mean)
        std = np.sqrt(self.m2 / self.count)
        return np.where(std > 1e-8, std, 1.0)

    def state_dict(self, prefix: str) -> dict[str, Any]:
        return {
            prefix + "count": self.count,
            prefix + "mean": self.mean.copy(),
            prefix + "m2": self.m2.copy(),
        }

    def load_state_dict(self, state: Mapping[str, Any], prefix: str) -> None:
        mean, m2 = (np.asarray(state[prefix + k], dtype=np.float64) for k in ("mean", "m2"))
        if mean.shape != self.mean.shape or m2.shape != self.m2.shape:
            raise ValueError(
                f"state_dict[{prefix + 'mean'!r}] has shape {mean.shape}, "
                f"expected {self.mean.shape}"
            )
        self.count, self.mean, self.m2 = int(state[prefix + "count"]), mean, m2
        self.std = self._spread()


class InputNormalizer(nn.Module):
    """``clamp((x - mean) / std, -clip, clip)`` over the last axis (F features); ``mean`` and
    ``std`` are buffers (saved with the network, copied into its targets), identity until
    `set` is called."""

    def __init__(self, n_features: int, clip: float = 10.0) -> None:
        super().__init__()
        self.clip = float(clip)
        self.register_buffer("mean", torch.zeros(n_features))
        self.register_buffer("std", torch.ones(n_features))

    def set(self, moments: RunningMoments) -> None:
        """Take ``moments``' mean and std."""
        with torch.no_grad():
            self.mean.copy_(torch.as_tensor(moments.mean, dtype=torch.float32))
            self.std.copy_(torch.as_tensor(moments.std, dtype=torch.float32))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ((x - self.mean) / self.std).clamp(-self.clip, self.clip)
