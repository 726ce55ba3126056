"""Ecosystem compatibility: Stable-Baselines3's DQN trains on the registered market."""

import gymnasium as gym
import pytest

from tradearena import envs  # noqa: F401 (registers tradearena/SyntheticMarket-v0)

sb3 = pytest.importorskip("stable_baselines3")
from stable_baselines3.common.env_checker import check_env  # noqa: E402


def test_sb3_dqn_trains_on_synthetic_market():
    """SB3's env checker passes; DQN learns for 300 steps (10 sessions of 30 steps) through
    gymnasium.make's standard wrappers only; predict returns actions of the space."""
    env = gym.make("tradearena/SyntheticMarket-v0", n_steps=30)
    check_env(env.unwrapped, warn=False)
    model = sb3.DQN(
        "MlpPolicy",
        env,
        learning_starts=100,
        buffer_size=1000,
        batch_size=32,
        train_freq=4,
        policy_kwargs={"net_arch": [64, 64]},
        seed=0,
        device="cpu",
    )
    model.learn(total_timesteps=300)
    obs, _ = env.reset(seed=1)
    for _ in range(30):
        action, _ = model.predict(obs, deterministic=True)
        assert env.action_space.contains(int(action))
        obs, _, terminated, truncated, _ = env.step(int(action))
        if terminated or truncated:
            break
    assert terminated
