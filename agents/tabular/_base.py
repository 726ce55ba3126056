"""What every tabular learner shares: sizes from spaces, seeding, step size, epsilon-greedy,
and the step its TD rule reads (`TabularAgent.transition`)."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces

from tradearena.agents._kernels import epsilon_greedy
from tradearena.agents.base import Agent, make_rng
from tradearena.agents.ensembles import Transition
from tradearena.agents.schedules import EpsilonGreedy, StepSize

__all__ = ["TabularAgent", "discrete_sizes"]


def discrete_sizes(
    n_states: int | None,
    n_actions: int | None,
    observation_space: spaces.Space | None,
    action_space: spaces.Space | None,
) -> tuple[int, int]:
    """(S, A) from explicit sizes or Discrete spaces; ValueError naming what is wrong."""
    sizes = []
    for label, n, space in (
        ("n_states", n_states, observation_space),
        ("n_actions", n_actions, action_space),
    ):
        if n is None and space is not None:
            if not isinstance(space, spaces.Discrete) or int(space.start) != 0:
                raise ValueError(f"{label}: tabular agents need Discrete(n) from 0, got {space}")
            n = int(space.n)
        if n is None or isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
            raise ValueError(f"{label} must be a positive int (or a Discrete space), got {n!r}")
        sizes.append(int(n))
    return sizes[0], sizes[1]


class TabularAgent(Agent):
    """Base of the tabular learners: acts epsilon-greedily on `values`, and learns from each
    step by its TD rule, `learn`, on the step's `transition`.

    Keyword parameters shared by all tabular learners:

    - ``n_states``, ``n_actions`` or ``observation_space``, ``action_space`` (Discrete).
    - ``gamma``: discount per decision step, in [0, 1] (default 0.99).
    - ``learning_rate``: float in (0, 1] (constant), ``"visits"`` (1/N(s,a), default),
      ``("visits", omega)`` (1/N(s,a)**omega) or ``"rescaled_linear"`` (see `StepSize`).
    - ``exploration``: epsilon, a float or ``("linear", start, end, duration_steps)`` or
      ``("exponential", start, end, half_life_steps)`` (default 0.1); t counts exploring
      `act` calls.
    - ``reward_scale``: rewards are multiplied by it before learning (dollars -> agent units;
      keep beta * TD error moderate), default 1.0.
    - ``seed``: seeds the agent's own Generator ``rng``, the source of every random draw.
    """

    learning = True
    stochastic = True
    observation = "tabular"
    _state: tuple[str, ...] = ("t",)

    def __init__(
        self,
        *,
        n_states: int | None = None,
        n_actions: int | None = None,
        observation_space: spaces.Space | None = None,
        action_space: spaces.Space | None = None,
        gamma: float = 0.99,
        learning_rate: float | str | tuple[str, float] = "visits",
        exploration: float | tuple = 0.1,
        reward_scale: float = 1.0,
        seed: int | None = None,
    ) -> None:
        self.n_states, self.n_actions = discrete_sizes(
            n_states, n_actions, observation_space, action_space
        )
        if not 0.0 <= gamma <= 1.0:
            raise ValueError(f"gamma must be in [0, 1], got {gamma}")
        if not (np.isfinite(reward_scale) and reward_scale > 0):
            raise ValueError(f"reward_scale must be a positive finite float, got {reward_scale}")
        self.gamma = float(gamma)
        self.reward_scale = float(reward_scale)
        self.step_size = StepSize(learning_rate, gamma)
        self.policy = EpsilonGreedy(self.n_actions, exploration)
        self.rng = make_rng(seed)
        self.t = 0

    def index(self, obs: Any) -> int:
        """The state index of a Discrete observation; ValueError outside range(n_states)."""
        s = int(obs)
        if not 0 <= s < self.n_states:
            raise ValueError(f"observation must be a state in range({self.n_states}), got {obs!r}")
        return s

    def transition(
        self, obs: Any, action: int, reward: float, next_obs: Any, terminated: bool
    ) -> Transition:
        """A step, given as `update` takes it, as the TD rules read it (`Transition`): the
        states' indices, the reward in agent units and the discount (0 where it terminated;
        a truncated step still bootstraps); ValueError for a state outside range(n_states)."""
        s, a, s2 = self.index(obs), int(action), self.index(next_obs)
        g = 0.0 if terminated else self.gamma
        return s, a, reward * self.reward_scale, s2, bool(terminated), g

    def update(
        self,
        obs: Any,
        action: int,
        reward: float,
        next_obs: Any,
        terminated: bool,
        truncated: bool,
    ) -> None:
        """`learn` from the step's `transition`."""
        self.learn(self.transition(obs, action, reward, next_obs, terminated))

    @abstractmethod
    def learn(self, t: Transition) -> None:
        """The learner's TD rule on one transition."""

    batched_update: ClassVar[bool] = False
    """Whether `apply_batch` is this class's `learn` over N transitions at once, which
    `update_batch` then calls; a subclass that changes `update` or `learn` declares False
    again."""
    batched_act: ClassVar[bool] = True
    """Whether `act` is `TabularAgent.act` (epsilon-greedy on `values`), which `act_batch` then
    does in one compiled call; a subclass that changes `act` declares False."""

    def update_batch(
        self,
        obs: Sequence[Any],
        actions: np.ndarray,
        rewards: np.ndarray,
        next_obs: Sequence[Any],
        terminated: np.ndarray,
        truncated: np.ndarray,
    ) -> None:
        if not self.batched_update:
            return super().update_batch(obs, actions, rewards, next_obs, terminated, truncated)
        self.apply_batch(*self.transitions(obs, actions, rewards, next_obs, terminated))

    def apply_batch(
        self, s: np.ndarray, a: np.ndarray, r: np.ndarray, s2: np.ndarray, g: np.ndarray
    ) -> None:
        """`update` over N transitions, given as `transitions` gives them (see
        `batched_update`)."""
        raise NotImplementedError(f"{type(self).__name__} has no batch form of update")

    def transitions(
        self,
        obs: Sequence[Any],
        actions: np.ndarray,
        rewards: np.ndarray,
        next_obs: Sequence[Any],
        terminated: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """N transitions as the compiled update takes them: states, actions, next states
        (int64), rewards in agent units and discounts (0 where terminated), all (N,);
        ValueError for a state outside range(n_states)."""
        s, s2 = self.states(obs), self.states(next_obs)
        r = np.asarray(rewards, dtype=np.float64) * self.reward_scale
        g = np.where(np.asarray(terminated, dtype=bool), 0.0, self.gamma)
        return s, np.ascontiguousarray(actions, dtype=np.int64), r, s2, g

    def states(self, obs: Sequence[Any]) -> np.ndarray:
        """Discrete observations as state indices, int64 (N,); ValueError outside
        range(n_states)."""
        states = np.ascontiguousarray(obs, dtype=np.int64)
        if states.size and states.view(np.uint64).max() >= self.n_states:  # negatives too
            raise ValueError(f"observations must be states in range({self.n_states})")
        return states

    @abstractmethod
    def values(self, state: int) -> np.ndarray:
        """What the greedy policy maximises at ``state``, shape (n_actions,)."""

    def values_batch(self, states: np.ndarray) -> np.ndarray:
        """`values` at each of ``states`` (int64 (N,)), float64 (N, n_actions)."""
        rows = [self.values(s) for s in states.tolist()]
        return np.array(rows, dtype=np.float64).reshape(len(states), self.n_actions)

    def act_batch(self, obs: Sequence[Any], explore: bool = True) -> np.ndarray:
        """`act` on each observation in order, in one compiled call while the learner acts as
        `TabularAgent.act` does (`batched_act`): the same actions, draws and step count."""
        if not (self.batched_act and type(self.policy) is EpsilonGreedy):
            return super().act_batch(obs, explore)
        states = self.states(obs)
        epsilon = self.policy.epsilons(self.t, len(states)) if explore else None
        actions = epsilon_greedy(self.values_batch(states), self.rng, epsilon)
        if explore:
            self.t += len(states)
        return actions

    def act(self, obs: Any, explore: bool = True) -> int:
        s = self.index(obs)
        action = self.policy(self.values(s), self.rng, self.t, explore)
        if explore:
            self.t += 1
        return action
