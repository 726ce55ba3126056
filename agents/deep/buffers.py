"""Replay memory of the deep learners: preallocated numpy arrays, samples as a NamedTuple.

Shaped like Stable-Baselines3's ``ReplayBuffer`` for one environment: a ring of
``buffer_size`` transitions. Only terminations are stored: a truncated step (time limit) keeps
``terminated = 0`` and so still bootstraps from its ``next_obs``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np
import torch

from tradearena.agents.base import check_memory

__all__ = ["ReplayBuffer", "ReplaySamples"]


class ReplaySamples(NamedTuple):
    """A minibatch of B transitions as tensors on the learner's device."""

    observations: torch.Tensor
    """(B, *obs_shape) float32."""
    actions: torch.Tensor
    """(B,) int64."""
    rewards: torch.Tensor
    """(B,) float32, agent units (environment reward times ``reward_scale``)."""
    next_observations: torch.Tensor
    """(B, *obs_shape) float32."""
    terminated: torch.Tensor
    """(B,) float32, 1.0 where the episode terminated (no bootstrap)."""
    masks: torch.Tensor | None
    """(B, k) float32 bootstrap weights (Poisson(1) counts), or None without masks."""


class ReplayBuffer:
    """Ring buffer of transitions, arrays preallocated at construction.

    Arrays: ``observations`` and ``next_observations`` (buffer_size, *obs_shape) float32,
    ``actions`` (buffer_size,) int64, ``rewards`` (buffer_size,) float32, ``terminated``
    (buffer_size,) float32 and, if ``n_masks`` > 0, ``masks`` (buffer_size, n_masks) float32.
    ``pos`` is the next slot to write; ``size`` the number of stored transitions.
    """

    def __init__(
        self,
        buffer_size: int,
        obs_shape: tuple[int, ...],
        n_masks: int = 0,
        device: torch.device | str = "cpu",
    ) -> None:
        if buffer_size < 1:
            raise ValueError(f"buffer_size must be >= 1, got {buffer_size}")
        observation = 4 * int(np.prod(obs_shape))  # bytes, float32
        check_memory("buffer_size", buffer_size, 2 * observation * buffer_size, "the observations")
        self.buffer_size = int(buffer_size)
        self.obs_shape = tuple(obs_shape)
        self.device = torch.device(device)
        self.observations = np.zeros((buffer_size, *self.obs_shape), dtype=np.float32)
        self.next_observations = np.zeros((buffer_size, *self.obs_shape), dtype=np.float32)
        self.actions = np.zeros(buffer_size, dtype=np.int64)
        self.rewards = np.zeros(buffer_size, dtype=np.float32)
        self.terminated = np.zeros(buffer_size, dtype=np.float32)
        self.masks = np.zeros((buffer_size, n_masks), dtype=np.float32) if n_masks else None
        self.pos = 0
        self.full = False

    @property
    def size(self) -> int:
        """Number of stored transitions (<= buffer_size)."""
        return self.buffer_size if self.full else self.pos

    def add(
        self,
        obs: Any,
        next_obs: Any,
        action: int,
        reward: float,
        terminated: bool,
        masks: np.ndarray | None = None,
    ) -> None:
        """Store one transition (``reward`` in agent units), overwriting the oldest if full."""
        i = self.pos
        self.observations[i] = obs
        self.next_observations[i] = next_obs
        self.actions[i] = action
        self.rewards[i] = reward
        self.terminated[i] = terminated
        if self.masks is not None:
            self.masks[i] = masks
        self.pos = (i + 1) % self.buffer_size
        self.full = self.full or self.pos == 0

    def sample(self, batch_size: int, rng: np.random.Generator) -> ReplaySamples:
        """``batch_size`` transitions drawn uniformly with replacement (one ``rng.integers``)."""
        idx = rng.integers(0, self.size, size=batch_size)

        def tensor(array: np.ndarray) -> torch.Tensor:
            return torch.from_numpy(array[idx]).to(self.device, non_blocking=True)

        return ReplaySamples(
            tensor(self.observations),
            tensor(self.actions),
            tensor(self.rewards),
            tensor(self.next_observations),
            tensor(self.terminated),
            None if self.masks is None else tensor(self.masks),
        )

    def _arrays(self) -> dict[str, np.ndarray]:
        arrays = {
            "observations": self.observations,
            "next_observations": self.next_observations,
            "actions": self.actions,
            "rewards": self.rewards,
            "terminated": self.terminated,
        }
        if self.masks is not None:
            arrays["masks"] = self.masks
        return arrays

    def state_dict(self, prefix: str = "buffer.") -> dict[str, Any]:
        """The stored rows (first ``size`` slots, copied) and the write position."""
        n = self.size
        state: dict[str, Any] = {prefix + k: v[:n].copy() for k, v in self._arrays().items()}
        state[prefix + "pos"] = self.pos
        state[prefix + "full"] = self.full
        return state

    def load_state_dict(self, state: Mapping[str, Any], prefix: str = "buffer.") -> None:
        """Restore `state_dict`; ValueError on rows that do not fit this buffer."""
        pos, full = int(state[prefix + "pos"]), bool(state[prefix + "full"])
        n = self.buffer_size if full else pos
        if not 0 <= pos < self.buffer_size + (not full):
            raise ValueError(f"{prefix}pos {pos} out of range for buffer_size {self.buffer_size}")
        for key, array in self._arrays().items():
            value = np.asarray(state[prefix + key])
            if value.shape != (n, *array.shape[1:]):
                raise ValueError(
                    f"state_dict[{prefix + key!r}] has shape {value.shape}, "
                    f"expected {(n, *array.shape[1:])}"
                )
            array[:n] = value
            array[n:] = 0
        self.pos, self.full = pos, full
