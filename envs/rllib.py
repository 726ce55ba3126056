"""RLlib's face of the market: named multi-agent environments, and a batched one for its
env runners.

Needs ``ray[rllib]`` (the ``rllib`` extra)::

    from ray.rllib.algorithms.ppo import PPOConfig
    from tradearena.envs.rllib import register_rllib_envs

    register_rllib_envs()
    config = (
        PPOConfig()
        .environment("tradearena-making-2")
        .multi_agent(policies={"seat_0", "seat_1"}, policy_mapping_fn=lambda aid, *_, **__: aid)
    )

`register_rllib_envs` names `envs.multi_agent.MarketParallelEnv` markets, wrapped in RLlib's
``ParallelPettingZooEnv``: ``tradearena-TASK-2`` (two learner seats) and
``tradearena-TASK-takeover`` (seat_0 and the take-over ``adversary``); ``env_config`` keywords
go to `MarketParallelEnv`. `BatchedEnvRunner` (``.env_runners(env_runner_cls=...)``) instead
steps the ``num_envs_per_env_runner`` sessions of each runner together through
`BatchedMarketEnv`, one compiled step for all of them (as ``gymnasium.make_vec`` does).
`ppo_config` is RLlib's PPO on one of the named markets, one policy per agent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.callbacks.utils import make_callback
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
from ray.rllib.env.env_context import EnvContext
from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner
from ray.rllib.env.vector.vector_multi_agent_env import VectorMultiAgentEnv
from ray.rllib.env.wrappers.pettingzoo_env import ParallelPettingZooEnv
from ray.tune.registry import register_env

from tradearena.envs.errors import UserError, not_one_of
from tradearena.envs.multi_agent import MarketParallelEnv
from tradearena.envs.spec import MarketSpec
from tradearena.envs.tasks import TASKS
from tradearena.envs.vector import seated_sessions

__all__ = [
    "AGENTS",
    "BatchedEnvRunner",
    "BatchedMarketEnv",
    "TAKEOVER_P",
    "market_env",
    "ppo_config",
    "register_rllib_envs",
    "takeover_env",
]

TAKEOVER_P = 0.2
"""Probability that the take-over adversary's action replaces seat_0's in a step."""
AGENTS = {"2": ("seat_0", "seat_1"), "takeover": ("seat_0", "adversary")}
"""The agents of ``tradearena-TASK-2`` and ``tradearena-TASK-takeover``."""


def market_env(env_config: dict[str, Any] | None = None) -> ParallelPettingZooEnv:
    """Two learner seats (``n_seats`` in ``env_config`` to change it) of a
    `MarketParallelEnv` made from ``env_config``'s keywords, as an RLlib ``MultiAgentEnv``."""
    keywords = {"n_seats": 2, **dict(env_config or {})}
    return ParallelPettingZooEnv(MarketParallelEnv(**keywords))


def takeover_env(env_config: dict[str, Any] | None = None) -> ParallelPettingZooEnv:
    """seat_0 and the take-over ``adversary`` (its action replaces seat_0's with probability
    ``p``, default `TAKEOVER_P`; its reward is minus seat_0's) in a `MarketParallelEnv` made
    from the other keywords of ``env_config``, as an RLlib ``MultiAgentEnv``."""
    keywords = dict(env_config or {})
    p = keywords.pop("p", TAKEOVER_P)
    return ParallelPettingZooEnv(MarketParallelEnv(1, takeover=("seat_0", p), **keywords))


def register_rllib_envs(tasks: Sequence[str] = tuple(TASKS)) -> list[str]:
    """Register ``tradearena-TASK-2`` (`market_env`) and ``tradearena-TASK-takeover``
    (`takeover_env`) with RLlib for each of ``tasks``; their names. An ``env_config`` given
    to RLlib overrides the task's market keywords."""
    names = []
    for task in tasks:
        for suffix, make in (("2", market_env), ("takeover", takeover_env)):
            name = f"tradearena-{task}-{suffix}"
            register_env(name, _with_task(make, task))
            names.append(name)
    return names


def _with_task(make: Any, task: str) -> Any:
    """``make`` called with ``task`` as the default of ``env_config``'s task."""
    return lambda env_config: make({"task": task, **dict(env_config or {})})


class BatchedMarketEnv(VectorMultiAgentEnv):
    """``num_envs`` sessions of `MarketParallelEnv` (learner seats ``seat_0 ..``; keywords as
    `envs.vector.BatchedParallelEnv` takes them) as RLlib's ``VectorMultiAgentEnv``: `step`
    takes one action dict per session and returns one dict per session of observations,
    rewards, terminations and truncations (with ``"__all__"``) and infos (empty), all
    sessions advanced by one compiled step. A session that ends restarts on the next step
    (NEXT_STEP: its actions, if any, are ignored, its rewards are 0). Session i reset with
    seed s plays as `MarketParallelEnv` reset with seed s + i.

    RLlib's runner reads each session's agents and spaces through ``envs[i].unwrapped``:
    every session has the same, so each entry of ``envs`` is this object.
    """

    metadata = {"autoreset_mode": "next_step"}

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
        self.possible_agents, spec, kinds, self.sessions = seated_sessions(
            "BatchedMarketEnv",
            num_envs,
            n_seats,
            market_spec,
            observation,
            opposes,
            workers,
            market,
        )
        self.agents = list(self.possible_agents)
        self.num_envs = num_envs
        self.single_observation_spaces = {
            agent: spec.observation_space(kind) for agent, kind in zip(self.agents, kinds)
        }
        self.single_action_spaces = dict.fromkeys(self.agents, spec.action_space)
        self.single_observation_space = gym.spaces.Dict(self.single_observation_spaces)
        self.single_action_space = gym.spaces.Dict(self.single_action_spaces)
        self.envs = [self] * num_envs

    def get_observation_space(self, agent: str) -> gym.Space:
        """One session's observation space of ``agent``."""
        return self.single_observation_spaces[agent]

    def get_action_space(self, agent: str) -> gym.Space:
        """One session's action space of ``agent``."""
        return self.single_action_spaces[agent]

    def reset(
        self, *, seed: int | Sequence[int | None] | None = None, options: dict | None = None
    ) -> tuple[list[dict[str, Any]], list[dict[str, dict]]]:
        return self._per_session(self.sessions.reset(seed)), [{} for _ in range(self.num_envs)]

    def step(self, actions: list[dict[str, int]]) -> tuple[list, list, list, list, list]:
        """One step of every session; ``actions[i]``: session i's action per seat (an empty
        dict for a session restarting)."""
        joint = np.zeros((self.num_envs, len(self.agents)), dtype=np.int64)
        for i, chosen in enumerate(actions):
            for seat, agent in enumerate(self.agents):
                if agent in chosen:
                    joint[i, seat] = chosen[agent]
        obs, rewards, terminated, _ = self.sessions.step(joint)
        ends = [
            {**dict.fromkeys(self.agents, bool(t)), "__all__": bool(t)} for t in terminated.tolist()
        ]
        no = {**dict.fromkeys(self.agents, False), "__all__": False}
        return (
            self._per_session(obs),
            [dict(zip(self.agents, row)) for row in rewards.tolist()],
            ends,
            [dict(no) for _ in range(self.num_envs)],
            [{} for _ in range(self.num_envs)],
        )

    def _per_session(self, obs: list[np.ndarray]) -> list[dict[str, Any]]:
        """Per-seat arrays over the sessions -> one dict of the seats' observations per
        session."""
        return [dict(zip(self.agents, row)) for row in zip(*obs)]

    def close_extras(self, **kwargs: Any) -> None:
        self.sessions.close()


class BatchedEnvRunner(MultiAgentEnvRunner):
    """RLlib's multi-agent env runner over a `BatchedMarketEnv` of
    ``num_envs_per_env_runner`` sessions made from ``env_config``'s keywords (the config's
    ``env`` name is not used). Give it as ``.env_runners(env_runner_cls=BatchedEnvRunner)``."""

    def make_env(self) -> None:
        if self.env is not None:
            self.env.close()
        env_ctx = self.config.env_config
        if not isinstance(env_ctx, EnvContext):
            env_ctx = EnvContext(
                env_ctx, worker_index=self.worker_index, num_workers=self.config.num_env_runners
            )
        self.env = BatchedMarketEnv(self.config.num_envs_per_env_runner, **dict(env_ctx))
        self.num_envs = self.env.num_envs
        self._needs_initial_reset = True
        make_callback(
            "on_environment_created",
            callbacks_objects=self._callbacks,
            callbacks_functions=self.config.callbacks_on_environment_created,
            kwargs=dict(
                env_runner=self, metrics_logger=self.metrics, env=self.env, env_context=env_ctx
            ),
        )


def ppo_config(
    task: str = "making",
    seats: str = "2",
    *,
    market: dict[str, Any] | None = None,
    batch: int = 2000,
    minibatch: int = 250,
    epochs: int = 8,
    lr: float = 3e-4,
    hidden: Sequence[int] = (64, 64),
    sessions: int = 1,
    batched: bool = False,
    seed: int = 0,
) -> PPOConfig:
    """RLlib's PPO (its current API stack) on ``tradearena-TASK-SEATS`` (``seats``: "2" or
    "takeover", registered here), one policy per agent (`AGENTS`), trained on ``batch``
    env steps per iteration in ``minibatch``-step minibatches for ``epochs`` epochs at
    learning rate ``lr``, tanh MLPs of ``hidden`` units; one local env runner stepping
    ``sessions`` sessions (through `BatchedEnvRunner` when ``batched``, two seats only).
    ``market``: `MarketSpec` keywords over the task's."""
    if seats not in AGENTS:
        raise UserError(f"seats {not_one_of(seats, AGENTS)}")
    if batched and seats != "2":
        raise UserError("batched sessions seat learners only: seats must be '2'")
    register_rllib_envs([task])
    agents = AGENTS[seats]
    config = (
        PPOConfig()
        .environment(f"tradearena-{task}-{seats}", env_config={"task": task, **(market or {})})
        .env_runners(num_env_runners=0, num_envs_per_env_runner=sessions)
        .training(
            train_batch_size_per_learner=batch, minibatch_size=minibatch, num_epochs=epochs, lr=lr
        )
        .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=list(hidden)))
        .multi_agent(policies=set(agents), policy_mapping_fn=_same_name)
        .debugging(seed=seed)
    )
    return config.env_runners(env_runner_cls=BatchedEnvRunner) if batched else config


def _same_name(agent: str, *args: Any, **kwargs: Any) -> str:
    """RLlib's policy mapping: each agent trains the policy of its own name."""
    return agent
