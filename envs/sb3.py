"""Stable-Baselines3's face of a batched market: `MarketVecEnv`, a
`stable_baselines3.common.vec_env.VecEnv` over `envs.vector.MarketVectorEnv`.

Needs stable-baselines3 (not a dependency of tradearena itself)::

    from stable_baselines3 import PPO
    from tradearena.envs.sb3 import MarketVecEnv

    model = PPO("MlpPolicy", MarketVecEnv(16, task="making", population="light"))
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.vec_env import VecEnv

from tradearena.envs.vector import MarketVectorEnv

__all__ = ["MarketVecEnv"]


class MarketVecEnv(VecEnv):
    """``num_envs`` sessions of a single-seat market as an SB3 `VecEnv`; keywords as
    `envs.vector.MarketVectorEnv` takes them. As SB3 expects, a session that ends restarts in
    the same step, its last observation in ``infos[i]["terminal_observation"]``; `seed`
    seeds session i with seed + i at the next `reset`.

    A session that ends also reports its episode as SB3's ``VecMonitor`` does, in
    ``infos[i]["episode"]``: ``r`` the sum of its rewards (as returned, after
    ``reward_scale``), ``l`` its steps, ``t`` seconds since the env was made; so SB3 logs
    ``rollout/ep_rew_mean`` and ``ep_len_mean`` with no wrapper (a ``VecMonitor`` around it
    reports the same).
    """

    def __init__(self, num_envs: int = 16, **keywords: Any) -> None:
        self.venv = MarketVectorEnv(num_envs, autoreset_mode=AutoresetMode.SAME_STEP, **keywords)
        super().__init__(
            num_envs, self.venv.single_observation_space, self.venv.single_action_space
        )
        self._actions: np.ndarray | None = None
        self._returns = np.zeros(num_envs, np.float32)
        self._lengths = np.zeros(num_envs, np.int64)
        self._made = time.time()

    def reset(self) -> np.ndarray:
        obs, _ = self.venv.reset(seed=list(self._seeds))
        self._reset_seeds()
        self._reset_options()
        self._returns[:] = 0
        self._lengths[:] = 0
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict]]:
        obs, rewards, terminated, truncated, infos = self.venv.step(self._actions)
        rewards = rewards.astype(np.float32)
        dones = terminated | truncated
        self._returns += rewards
        self._lengths += 1
        out: list[dict] = [{} for _ in range(self.num_envs)]
        for i in np.flatnonzero(dones):
            out[i]["terminal_observation"] = infos["final_obs"][i]
            out[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
            out[i]["episode"] = {
                "r": float(self._returns[i]),
                "l": int(self._lengths[i]),
                "t": round(time.time() - self._made, 6),
            }
            self._returns[i], self._lengths[i] = 0, 0
        return obs, rewards, dones, out

    def close(self) -> None:
        self.venv.close()

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        """The vector env's attribute, once per session asked for (the sessions share it)."""
        return [getattr(self.venv, attr_name)] * len(self._indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        setattr(self.venv, attr_name, value)

    def env_method(self, method_name: str, *args: Any, indices: Any = None, **kwargs: Any) -> list:
        """Calls the vector env's method once and gives its answer for each session asked."""
        answer = getattr(self.venv, method_name)(*args, **kwargs)
        return [answer] * len(self._indices(indices))

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False] * len(self._indices(indices))

    def _indices(self, indices: Any) -> Sequence[int]:
        if indices is None:
            return range(self.num_envs)
        return [indices] if isinstance(indices, int) else list(indices)
