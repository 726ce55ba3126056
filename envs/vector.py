"""The faces of a batched market: `MarketVectorEnv` (a `gymnasium.vector.VectorEnv`, what
``gymnasium.make_vec`` gives for the project's single-seat ids) and `BatchedParallelEnv`
(PettingZoo's parallel step with an array per agent), over a `envs.batch.BatchedMarket` in this
process or shared out to worker processes (`envs.workers.Sharded`). Session i behaves exactly
as the single environment seeded with seed + i.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from tradearena.envs.batch import Restarting
from tradearena.envs.errors import UserError
from tradearena.envs.multi_agent import opposing_seats, seat_index, seat_names
from tradearena.envs.seats import integer_actions
from tradearena.envs.spec import MAX_SESSIONS, MarketSpec, observation_kinds
from tradearena.envs.workers import Sharded

__all__ = ["BatchedParallelEnv", "MarketVectorEnv", "seated_sessions", "sessions"]


def sessions(
    spec: MarketSpec,
    n_sessions: int,
    kinds: Sequence[str],
    mode: AutoresetMode,
    workers: int,
    opposes: dict[int, int] | None = None,
) -> Restarting | Sharded:
    """The restarting sessions behind a face: in this process (``workers`` = 1) or shared
    out to ``workers`` processes (this one and ``workers - 1`` more); `UserError` for a
    number of sessions (``num_envs``) that is not an integer in [1, `MAX_SESSIONS`]."""
    whole = isinstance(n_sessions, numbers.Integral) and not isinstance(n_sessions, bool)
    if not (whole and 1 <= n_sessions <= MAX_SESSIONS):
        raise UserError(
            f"num_envs must be an integer in [1, {MAX_SESSIONS:,}] sessions, got {n_sessions!r}"
        )
    if workers == 1:
        return Restarting.of(spec, n_sessions, kinds, mode, opposes)
    return Sharded(spec, n_sessions, kinds, mode, workers, opposes=opposes)


def seated_sessions(
    face: str,
    num_envs: int,
    n_seats: int,
    market_spec: MarketSpec | None,
    observation: str | Sequence[str],
    opposes: dict[str, str] | None,
    workers: int,
    market: dict[str, Any],
) -> tuple[list[str], MarketSpec, list[str], Restarting | Sharded]:
    """What a batched face of ``n_seats`` learner seats stands on: (its agents ``seat_0 ..``,
    the market from ``market_spec`` or the ``market`` keywords (errors name ``face``), one
    observation kind per seat, ``num_envs`` `sessions` restarting on the next step, each
    adversary of ``opposes`` ({adversary: protagonist}) playing against its protagonist)."""
    agents = seat_names(n_seats)
    spec = MarketSpec.from_keywords(face, market_spec, **market)
    kinds = observation_kinds(observation, n_seats)
    opposing = opposing_seats(opposes, agents)
    restarting = sessions(spec, num_envs, kinds, AutoresetMode.NEXT_STEP, workers, opposing)
    return agents, spec, kinds, restarting


class MarketVectorEnv(VectorEnv):
    """``num_envs`` sessions of a single-seat market task as one `gymnasium.vector.VectorEnv`.

    Takes what `TradingEnv` takes for the market (``market_spec`` and its fields as keywords)
    and the seat's ``observation`` kind; no opponents or adversaries. Session i with
    ``reset(seed=s)`` plays exactly as ``TradingEnv`` reset with seed s + i. Sessions that end
    are restarted as ``autoreset_mode`` says (`envs.batch.Restarting`; NEXT_STEP by default,
    as Gymnasium's; with SAME_STEP the last observation is in ``infos["final_obs"]``). Infos
    are empty otherwise. ``workers`` > 1 shares the sessions out to that many processes (this
    one and ``workers - 1`` worker processes, which `close` stops); the sessions are the same.
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP}
    sessions: Restarting | Sharded | None = None
    """The sessions; None until made (a constructor that raised leaves nothing to close)."""

    def __init__(
        self,
        num_envs: int = 16,
        market_spec: MarketSpec | None = None,
        *,
        observation: str = "features",
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        workers: int = 1,
        **market: Any,
    ) -> None:
        mode = AutoresetMode(autoreset_mode)
        spec = MarketSpec.from_keywords("MarketVectorEnv", market_spec, **market)
        self.market_spec = spec
        self.sessions = sessions(spec, num_envs, (observation,), mode, workers)
        self.metadata = {"autoreset_mode": mode}
        self.num_envs = num_envs
        self.single_action_space = spec.action_space
        self.single_observation_space = spec.observation_space(observation)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.observation_space = batch_space(self.single_observation_space, num_envs)

    def reset(
        self,
        *,
        seed: int | Sequence[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[np.ndarray, dict[str, Any]]:
        (obs,) = self.sessions.reset(seed)
        return obs, {}

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        chosen = integer_actions(actions, (self.num_envs,), self.single_action_space.n)
        if chosen is None:
            raise ValueError(f"actions {actions!r} are not in {self.action_space}")
        (obs,), rewards, terminated, final = self.sessions.step(chosen.reshape(-1, 1))
        infos = {} if final is None else {"final_obs": final[0], "_final_obs": terminated}
        return obs, rewards[:, 0], terminated, np.zeros(self.num_envs, dtype=bool), infos

    def close_extras(self, **kwargs: Any) -> None:
        if self.sessions is not None:
            self.sessions.close()


class BatchedParallelEnv:
    """``num_envs`` sessions of `envs.multi_agent.MarketParallelEnv` stepped together: its
    agents ``seat_0 .. seat_{n-1}``, each with an array over the sessions in every dict that
    PettingZoo's parallel API returns (observations (N, ...), rewards, terminations,
    truncations (N,)); `step` takes one action array (N,) per agent. Takes what
    `MarketParallelEnv` takes but a take-over adversary. Session i reset with seed s + i plays
    as `MarketParallelEnv` reset with seed s + i; sessions that end restart on the next step
    (NEXT_STEP: their actions are ignored and their rewards are 0). Infos are empty.
    ``workers`` > 1 shares the sessions out to that many processes (this one and
    ``workers - 1`` worker processes, which `close` stops).
    """

    metadata = {"name": "tradearena_market_batched_v0", "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(
        self,
        num_envs: int = 16,
        n_seats: int = 2,
        *,
        market_spec: MarketSpec | None = None,
        observation: str | Sequence[str] = "features",
        opposes: dict[str, str] | None = None,
        workers: int = 1,
        **market: Any,
    ) -> None:
        self.possible_agents, self.spec, self.kinds, self.sessions = seated_sessions(
            "BatchedParallelEnv",
            num_envs,
            n_seats,
            market_spec,
            observation,
            opposes,
            workers,
            market,
        )
        self.num_envs = num_envs
        self.agents: list[str] = []

    def observation_space(self, agent: str) -> gym.Space:
        """One session's observation space of ``agent``."""
        return self.spec.observation_space(
            self.kinds[seat_index(agent, self.possible_agents, "agent")]
        )

    def action_space(self, agent: str) -> gym.Space:
        """One session's action space of ``agent``."""
        seat_index(agent, self.possible_agents, "agent")
        return self.spec.action_space

    def reset(
        self, seed: int | None = None, options: dict | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, dict]]:
        self.agents = list(self.possible_agents)
        obs = self.sessions.reset(seed)
        return dict(zip(self.agents, obs)), {agent: {} for agent in self.agents}

    def step(self, actions: dict[str, np.ndarray]) -> tuple[dict, dict, dict, dict, dict]:
        if not self.agents:
            raise RuntimeError("call reset() before step()")
        missing = [agent for agent in self.agents if agent not in actions]
        if missing:
            raise ValueError(f"no actions for agents {missing}")
        per_agent = [
            integer_actions(actions[agent], (self.num_envs,), self.spec.action_space.n)
            for agent in self.agents
        ]
        if any(chosen is None for chosen in per_agent):
            raise ValueError(
                f"actions must be ({self.num_envs},) arrays in {self.spec.action_space} per agent"
            )
        joint = np.stack(per_agent, axis=1)
        obs, rewards, terminated, _ = self.sessions.step(joint)
        truncated = np.zeros(self.num_envs, dtype=bool)
        return (
            dict(zip(self.agents, obs)),
            {agent: rewards[:, i] for i, agent in enumerate(self.agents)},
            dict.fromkeys(self.agents, terminated),
            dict.fromkeys(self.agents, truncated),
            {agent: {} for agent in self.agents},
        )

    def close(self) -> None:
        """Stops the worker processes, if any."""
        self.sessions.close()
