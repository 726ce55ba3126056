"""Alpha-AS: a learner that adjusts the Avellaneda-Stoikov quotes instead of choosing its own.

After Falces Marin, Diaz Pardo de Vera and Lopez Gonzalo, "A reinforcement learning approach
to improve the performance of the Avellaneda-Stoikov market-making algorithm" (PLoS ONE
2022): each step a Q-learner picks one of ``len(RISK) x len(SKEWS)`` adjustments, a multiple
of the calibrated risk aversion and a skew of both quotes in ticks, and the seat quotes
what Avellaneda-Stoikov quotes under them (`agents.references.AvellanedaStoikov.quotes`).
The learner (``learner``: any registered id that reads features, DQN by default) sees the
market's features and learns from the market's rewards over its own adjustment actions; at
worst it learns the reference itself (multiple 1, skew 0).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from tradearena.agents.base import Agent
from tradearena.agents.references import AvellanedaStoikov
from tradearena.agents.registry import make, resolve
from tradearena.envs.spec import MarketSpec

__all__ = ["AlphaAS"]


class AlphaAS(Agent):
    """A Q-learner over adjustments of the Avellaneda-Stoikov quotes (see the module).

    :param market_spec: the seat's market (the ``make`` action set); the reference is
        calibrated to it.
    :param learner: registry id of the learner over the adjustments (features only).
    :param params: the learner's keywords (``learning_rate``, ``hidden``, ...).

    Adjustment ``i`` is ``(RISK[i // len(SKEWS)], SKEWS[i % len(SKEWS)])``: the risk
    aversion's multiple and the skew (ticks; positive lowers both quotes, to sell).
    """

    name = "alpha_as"
    description = "Alpha-AS: a DQN adjusts Avellaneda-Stoikov's risk aversion and skew"
    stochastic = True
    learning = True
    observation = "features"
    task = "making"  # the task it plays
    RISK = (0.25, 1.0, 4.0)
    """Multiples of the calibrated risk aversion."""
    SKEWS = (-1, 0, 1)
    """Skews of both quotes, ticks."""

    def __init__(
        self,
        *,
        market_spec: MarketSpec,
        learner: str = "dqn",
        observation_space: gym.Space | None = None,
        seed: int | None = None,
        total_timesteps: int | None = None,
        **params: Any,
    ) -> None:
        if resolve(learner).observation != "features":
            raise ValueError(f"alpha_as needs a learner that reads features, got {learner!r}")
        self.reference = AvellanedaStoikov(market_spec=market_spec)
        self.adjustments = [(m * self.reference.gamma, s) for m in self.RISK for s in self.SKEWS]
        keywords = {"total_timesteps": total_timesteps} if total_timesteps is not None else {}
        self.learner = make(
            learner,
            observation_space=observation_space or market_spec.observation_space(),
            action_space=gym.spaces.Discrete(len(self.adjustments)),
            seed=seed,
            **keywords,
            **params,
        )
        self.chosen = np.zeros(0, dtype=np.int64)
        """The adjustments of the last `act` / `act_batch`, which the next update learns."""

    def _quote(self, obs: Any, adjustment: int) -> int:
        gamma, skew = self.adjustments[adjustment]
        return self.reference.action(obs, gamma, skew)

    def act(self, obs: Any, explore: bool = True) -> int:
        adjustment = self.learner.act(obs, explore)
        self.chosen = np.array([adjustment], dtype=np.int64)
        return self._quote(obs, adjustment)

    def act_batch(self, obs: Sequence[Any], explore: bool = True) -> np.ndarray:
        self.chosen = np.asarray(self.learner.act_batch(obs, explore), dtype=np.int64)
        return np.array([self._quote(o, a) for o, a in zip(obs, self.chosen.tolist())])

    def update(
        self,
        obs: Any,
        action: int,
        reward: float,
        next_obs: Any,
        terminated: bool,
        truncated: bool,
    ) -> None:
        """Learn the adjustment chosen at ``obs`` (the market ``action`` follows from it)."""
        self.learner.update(obs, int(self.chosen[0]), reward, next_obs, terminated, truncated)

    def update_batch(
        self,
        obs: Sequence[Any],
        actions: np.ndarray,
        rewards: np.ndarray,
        next_obs: Sequence[Any],
        terminated: np.ndarray,
        truncated: np.ndarray,
    ) -> None:
        if len(actions) != len(self.chosen):
            raise ValueError(f"{len(actions)} transitions after {len(self.chosen)} actions")
        self.learner.update_batch(obs, self.chosen, rewards, next_obs, terminated, truncated)

    def end_episode(self) -> None:
        self.learner.end_episode()

    def values(self, obs: Any) -> np.ndarray:
        """The learner's values of the adjustments at ``obs``, (len(adjustments),)."""
        return self.learner.values(obs)

    def state_dict(self) -> dict[str, Any]:
        return {**self.learner.state_dict(), "chosen": self.chosen.copy()}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.learner.load_state_dict({k: v for k, v in state.items() if k != "chosen"})
        self.chosen = np.asarray(state["chosen"], dtype=np.int64).copy()
