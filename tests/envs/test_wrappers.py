"""Tests for envs.wrappers.window: the Gymnasium API, the (W, F) space, zero padding at reset,
and that each windowed observation is exactly the stack of the last W plain observations."""

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import envs  # noqa: F401 - registers the environment ids
from envs.wrappers import window

ENV_ID = "tradearena/SyntheticMarket-v0"
W = 8


def make(**kwargs) -> gymnasium.Env:
    return gymnasium.make(ENV_ID, n_steps=20, **kwargs).unwrapped


@pytest.mark.filterwarnings("ignore:.*different from the unwrapped version")
def test_check_env_and_space():
    """Gymnasium's checker passes; the space is the env's Box stacked W times, float32."""
    inner = make()
    env = window(inner, W)
    check_env(env)
    space = env.observation_space
    assert isinstance(space, gymnasium.spaces.Box)
    assert space.shape == (W, *inner.observation_space.shape)
    assert space.dtype == np.float32
    np.testing.assert_array_equal(space.low, np.tile(inner.observation_space.low, (W, 1)))
    np.testing.assert_array_equal(space.high, np.tile(inner.observation_space.high, (W, 1)))


def test_window_is_the_last_observations():
    """After k steps the window is the last W plain observations (same seed and actions),
    oldest first, zero rows before the reset observation, and stays so across a reset."""
    rng = np.random.default_rng(0)
    plain, windowed = make(), window(make(), W)
    for seed in (3, 4):  # the second episode checks that reset clears the previous one
        history = [plain.reset(seed=seed)[0]]
        obs, _ = windowed.reset(seed=seed)
        done = False
        while True:
            assert obs.shape == (W, history[0].size) and obs.dtype == np.float32
            assert windowed.observation_space.contains(obs)
            pad = max(W - len(history), 0)
            np.testing.assert_array_equal(obs[:pad], 0.0)
            np.testing.assert_array_equal(obs[pad:], np.stack(history[-W:]))
            if done:
                break
            action = int(rng.integers(3))
            step, reward, terminated, truncated, _ = plain.step(action)
            obs, windowed_reward, done_w, truncated_w, _ = windowed.step(action)
            assert (windowed_reward, done_w, truncated_w) == (reward, terminated, truncated)
            history.append(step)
            done = terminated or truncated
        assert len(history) == 21  # 20 steps: the window has rolled past its padding


def test_returned_windows_are_copies():
    """A returned window is not changed by later steps (safe to store in a replay buffer)."""
    env = window(make(), W)
    first, _ = env.reset(seed=0)
    kept = first.copy()
    for _ in range(3):
        env.step(1)
    np.testing.assert_array_equal(first, kept)


@pytest.mark.parametrize("length", [0, -1, 2.5, True])
def test_bad_length(length):
    with pytest.raises(ValueError, match="window length"):
        window(make(), length)


def test_needs_a_feature_box():
    with pytest.raises(ValueError, match="1-D Box"):
        window(make(observation="tabular"), W)
