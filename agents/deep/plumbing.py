"""The deep learners' plumbing: devices, module and Adam state as arrays, shape and value checks.

Nothing here is part of an algorithm: `agents.deep.dqn` reads top to bottom without it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from tradearena.envs.simulator.features import feature_space

__all__ = [
    "COUNT",
    "FLAG",
    "NON_NEGATIVE",
    "POSITIVE",
    "TAU",
    "UNIT",
    "Rule",
    "adam_state",
    "check_seed",
    "check_settings",
    "load_adam_state",
    "load_module_state",
    "module_state",
    "network_shapes",
    "resolve_device",
    "setting",
]


def resolve_device(device: str | torch.device) -> torch.device:
    """``"auto"``: cuda if available, else cpu; anything else as `torch.device`. ValueError
    naming ``device`` for one torch does not know or, cuda, this machine does not have."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError):
        raise ValueError(
            f'device: {device!r} is not a torch device ("cpu", "cuda", "auto")'
        ) from None
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(
            f'device: {device!r}, but this machine has no CUDA device: use "cpu" or "auto"'
        )
    return resolved


# ----------------------------------------------------------------------------- state as arrays
def module_state(prefix: str, module: nn.Module) -> dict[str, np.ndarray]:
    """``{prefix + name: array}`` for the module's parameters and buffers (copies, on cpu)."""
    return {prefix + k: v.detach().cpu().numpy().copy() for k, v in module.state_dict().items()}


def load_module_state(module: nn.Module, state: Mapping[str, Any], prefix: str) -> None:
    """Load `module_state` arrays into ``module``; ValueError naming a key of the wrong shape."""
    tensors = {}
    for name, current in module.state_dict().items():
        value = torch.as_tensor(np.asarray(state[prefix + name]))
        if value.shape != current.shape:
            raise ValueError(
                f"state_dict[{prefix + name!r}] has shape {tuple(value.shape)}, "
                f"expected {tuple(current.shape)}"
            )
        tensors[name] = value
    module.load_state_dict(tensors)


def adam_state(optimizer: torch.optim.Adam, prefix: str = "optimizer.") -> dict[str, np.ndarray]:
    """Adam's moments flattened over all parameters (P,) and its step count per tensor (T,);
    empty arrays before the first step."""
    params = [p for group in optimizer.param_groups for p in group["params"]]
    states = [optimizer.state.get(p, {}) for p in params]
    if not all(states):
        empty = np.zeros(0, dtype=np.float32)
        return {prefix + k: empty.copy() for k in ("exp_avg", "exp_avg_sq", "step")}
    flat = {
        k: torch.cat([s[k].detach().reshape(-1).cpu() for s in states]).numpy()
        for k in ("exp_avg", "exp_avg_sq")
    }
    step = np.array([float(s["step"]) for s in states], dtype=np.float32)
    return {
        prefix + "exp_avg": flat["exp_avg"],
        prefix + "exp_avg_sq": flat["exp_avg_sq"],
        prefix + "step": step,
    }


def load_adam_state(
    optimizer: torch.optim.Adam, state: Mapping[str, Any], prefix: str = "optimizer."
) -> None:
    """Restore `adam_state` arrays; ValueError if their sizes do not fit the parameters."""
    params = [p for group in optimizer.param_groups for p in group["params"]]
    exp_avg, exp_avg_sq, step = (
        np.asarray(state[prefix + k], dtype=np.float32) for k in ("exp_avg", "exp_avg_sq", "step")
    )
    optimizer.state.clear()
    if step.size == 0:
        return
    total = sum(p.numel() for p in params)
    if exp_avg.shape != (total,) or exp_avg_sq.shape != (total,) or step.shape != (len(params),):
        raise ValueError(
            f"state_dict[{prefix!r}*]: Adam state of sizes {exp_avg.shape}, {exp_avg_sq.shape}, "
            f"{step.shape} does not fit {len(params)} tensors of {total} parameters"
        )
    offset = 0
    for p, n_steps in zip(params, step):
        n = p.numel()
        optimizer.state[p] = {
            "step": torch.tensor(float(n_steps), dtype=torch.float32, device=p.device),
            "exp_avg": torch.from_numpy(exp_avg[offset : offset + n].copy()).view_as(p).to(p),
            "exp_avg_sq": torch.from_numpy(exp_avg_sq[offset : offset + n].copy()).view_as(p).to(p),
        }
        offset += n


# ----------------------------------------------------------------------------- checks
def network_shapes(
    obs_shape: tuple[int, ...] | None,
    n_actions: int | None,
    observation_space: gym.Space | None,
    action_space: gym.Space | None,
) -> tuple[tuple[int, ...], int]:
    """(obs_shape, n_actions) from explicit sizes, spaces, or the default market features."""
    if obs_shape is None:
        space = observation_space if observation_space is not None else feature_space()
        if not isinstance(space, gym.spaces.Box):
            raise ValueError(f"observation_space must be a Box (features), got {space}")
        obs_shape = space.shape
    if n_actions is None:
        if action_space is None:
            n_actions = 3
        elif isinstance(action_space, gym.spaces.Discrete) and int(action_space.start) == 0:
            n_actions = int(action_space.n)
        else:
            raise ValueError(f"action_space must be Discrete(n) from 0, got {action_space}")
    obs_shape = tuple(int(n) for n in obs_shape)
    if not obs_shape or min(obs_shape) < 1 or int(n_actions) < 1:
        raise ValueError(
            f"need a non-empty obs_shape and n_actions >= 1, got {obs_shape}, {n_actions}"
        )
    return obs_shape, int(n_actions)


def check_seed(seed: Any) -> int | None:
    """``seed`` as an int, or None; ValueError unless a non-negative int or None."""
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be a non-negative int or None, got {seed!r}")
    return int(seed)


class Rule(NamedTuple):
    """What a hyper-parameter must be: ``test(value)``, said as ``expected``; kept as ``cast``."""

    test: Callable[[Any], bool]
    expected: str
    cast: type

    def holds(self, value: Any) -> bool:
        try:
            return bool(self.test(value))
        except TypeError:  # not a number at all
            return False


def _is_count(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | np.integer) and value >= 1


POSITIVE = Rule(lambda v: np.isfinite(v) and v > 0, "a positive finite float", float)
COUNT = Rule(_is_count, "a positive int", int)
NON_NEGATIVE = Rule(lambda v: v >= 0, ">= 0", int)
UNIT = Rule(lambda v: 0.0 <= v <= 1.0, "in [0, 1]", float)
TAU = Rule(lambda v: 0.0 < v <= 1.0, "in (0, 1]", float)
FLAG = Rule(lambda v: isinstance(v, bool | np.bool_), "True or False", bool)


def setting(default: Any, rule: Rule | None = None) -> Any:
    """A settings dataclass field of ``default`` that `check_settings` holds to ``rule``."""
    return dataclasses.field(default=default, metadata={"rule": rule})


def check_settings(settings: Any) -> None:
    """Check and cast every field of the frozen dataclass ``settings`` by its `setting` rule:
    ValueError naming the first out of range."""
    for field in dataclasses.fields(settings):
        rule, value = field.metadata["rule"], getattr(settings, field.name)
        if rule is None:
            continue
        if not rule.holds(value):
            raise ValueError(f"{field.name} must be {rule.expected}, got {value!r}")
        object.__setattr__(settings, field.name, rule.cast(value))
