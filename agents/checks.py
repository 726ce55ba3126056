"""`check_agent`: the contract every agent must keep, as small checks with plain messages."""

from __future__ import annotations

import copy
import pickle
from collections import Counter
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from tradearena.agents.base import STANDARD_KEYWORDS, Agent
from tradearena.agents.registry import raised
from tradearena.envs.errors import UserError

__all__ = ["AgentContractError", "ContractReport", "check_agent"]


class AgentContractError(UserError):
    """An agent breaks the contract; the message says which check and how (a user error: the
    command line reports it in one line and exits 2)."""


def _rollout(agent: Agent, env: gym.Env, seed: int, steps: int) -> list[int]:
    """Act (exploring) and update for ``steps`` env steps from ``env.reset(seed=seed)``."""
    obs, _ = env.reset(seed=seed)
    actions = []
    for _ in range(steps):
        action = agent.act(obs, explore=True)
        if not env.action_space.contains(action):
            raise AgentContractError(
                f"{type(agent).__name__}.act returned {action!r}, not in {env.action_space}"
            )
        actions.append(int(action))
        next_obs, reward, terminated, truncated, _ = env.step(action)
        agent.update(obs, action, reward, next_obs, terminated, truncated)
        obs = next_obs
        if terminated or truncated:
            agent.end_episode()
            obs, _ = env.reset()
    return actions


def _same_state(a: dict[str, Any], b: dict[str, Any]) -> bool:
    if a.keys() != b.keys():
        return False
    return all(
        np.array_equal(a[k], b[k]) if isinstance(a[k], np.ndarray) else a[k] == b[k] for k in a
    )


@dataclass(frozen=True)
class ContractReport:
    """What `check_agent` checked and saw: the agent's class and ``name``, the environment,
    the steps per rollout and the actions taken in the first one (action -> count)."""

    agent: str
    name: str
    environment: str
    steps: int
    actions: dict[int, int]
    state_keys: tuple[str, ...]
    learning: bool = False

    def __str__(self) -> str:
        taken = ", ".join(f"{a}: {n}" for a, n in sorted(self.actions.items()))
        keys = ", ".join(self.state_keys) or "none"
        return "\n".join(
            [
                f"{self.agent} (name {self.name!r}) keeps the agent contract "
                f"in {self.environment}:",
                f"  actions    {self.steps} steps, every action in the action space "
                f"(taken: {taken})",
                f"  seeding    two copies built alike took the same {self.steps} actions",
                "  pickle     a round trip continues with the same actions and training",
                f"  state_dict a round trip (keys: {keys}) continues with the same actions and "
                "training",
                "  learning   "
                + (
                    "yes: update is called after every step, one session or many"
                    if self.learning
                    else "no: act only (a learner sets learning = True)"
                ),
            ]
        )


def _describe(env: gym.Env) -> str:
    """The environment's Gymnasium id, else its class, with its task when it has one."""
    if env.spec is not None:
        return env.spec.id
    task = getattr(getattr(env.unwrapped, "market_spec", None), "task", None)
    return type(env.unwrapped).__name__ + (f" (task {task!r})" if task else "")


def _defines(cls: type, *attributes: str) -> type | None:
    """The class of ``cls``'s MRO, below `Agent`, whose body defines one of ``attributes``
    first, or None."""
    below = cls.__mro__[: cls.__mro__.index(Agent)]
    return next((c for c in below if any(a in vars(c) for a in attributes)), None)


def check_declarations(cls: type[Agent]) -> None:
    """Raise `AgentContractError` where what ``cls`` declares contradicts what it writes: an
    `Agent.update` with ``learning`` left False (the batched driver would skip it: sessions > 1
    would not train), or a tabular ``batched_update`` whose batch form (``apply_batch``) comes
    from another class than its `update` or its TD rule, ``learn`` (the batched driver would
    not run the new one)."""
    name = cls.__name__
    if _defines(cls, "update") is not None and not cls.learning:
        raise AgentContractError(
            f"{name} defines update but leaves learning = False: set the class attribute "
            "learning = True, or the markets of several sessions ([training] sessions > 1) "
            "never call update and it trains silently not at all"
        )
    updater = _defines(cls, "update", "learn")
    if getattr(cls, "batched_update", False) and _defines(cls, "apply_batch") is not updater:
        changed = "update" if "update" in vars(updater) else "learn"
        raise AgentContractError(
            f"{name} changes {changed} but keeps batched_update = True from "
            f"{_defines(cls, 'apply_batch').__name__}: set batched_update = False (or write "
            "apply_batch to match), or the markets of several sessions run the old update"
        )


def build(cls: type[Agent], **params: Any) -> Agent:
    """``cls(**params)``; `AgentContractError` in one line if the constructor does not take
    those keywords, naming the agent and the keywords it is offered."""
    try:
        return cls(**params)
    except TypeError as error:
        given = ", ".join(f"{k}=..." for k in sorted(params))
        offered = ", ".join(sorted(STANDARD_KEYWORDS))
        raise AgentContractError(
            f"{cls.__name__}({given}) fails: {error}. An agent is built with keywords only: "
            f"it is offered {offered} and given those its constructor names (a learner reads "
            "its sizes from observation_space.n and action_space.n), plus its own parameters"
        ) from None


def check_agent(
    agent: type[Agent] | Agent, env: gym.Env, steps: int = 30, **params: Any
) -> ContractReport:
    """Raise `AgentContractError` saying what fails, or return a `ContractReport` of what
    was checked (its text says it line by line).

    ``agent``: a class (instantiated twice with ``params``) or an instance (deep-copied
    before use). Checks, each over ``steps`` environment steps of ``env``:

    1. actions lie in ``env.action_space`` (with updates after every step);
    2. two fresh copies with the same seed take the same actions;
    3. a pickle round trip continues with identical actions and identical training;
    4. a `Agent.state_dict` / `Agent.load_state_dict` round trip into a fresh copy does too.

    Before them, `check_declarations`: a class that writes `Agent.update` declares
    ``learning = True``; and a class is built by `build`, which says in one line which
    keywords it was offered when its constructor refuses them. An exception the agent's code
    raises (building it, acting, updating) fails the check too, naming the method, file and
    line.
    """
    cls = agent if isinstance(agent, type) else type(agent)
    check_declarations(cls)
    try:
        return _check(agent, env, steps, params)
    except AgentContractError:
        raise
    except Exception as error:  # noqa: BLE001 - the agent's own code, named in one line
        raise AgentContractError(f"{cls.__name__}: {raised(cls, error)}") from error


def _check(
    agent: type[Agent] | Agent, env: gym.Env, steps: int, params: dict[str, Any]
) -> ContractReport:
    if isinstance(agent, type):
        first, second = build(agent, **params), build(agent, **params)
    else:
        first, second = copy.deepcopy(agent), copy.deepcopy(agent)
    name = type(first).__name__
    fresh = copy.deepcopy(first)
    taken = _rollout(first, env, 0, steps)
    if taken != _rollout(second, env, 0, steps):
        raise AgentContractError(
            f"{name}: two copies built alike (same seed) took different actions; draw every "
            "random number from a Generator the agent owns"
        )
    try:
        clone = pickle.loads(pickle.dumps(first))
    except Exception as error:
        raise AgentContractError(f"{name} does not survive pickle: {error}") from error
    restored = fresh
    restored.load_state_dict(first.state_dict())
    reference = _rollout(first, env, 1, steps)
    for label, other in (("pickle", clone), ("state_dict", restored)):
        if _rollout(other, env, 1, steps) != reference:
            raise AgentContractError(f"{name}: after a {label} round trip the actions differ")
        if not _same_state(other.state_dict(), first.state_dict()):
            raise AgentContractError(
                f"{name}: after a {label} round trip continued training differs"
            )
    return ContractReport(
        agent=name,
        name=first.name,
        environment=_describe(env),
        steps=steps,
        actions=dict(Counter(taken)),
        state_keys=tuple(first.state_dict()),
        learning=first.learning,
    )
