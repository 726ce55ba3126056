"""Tests for tradearena.envs.wrappers.history: the Gymnasium API, the (W, F) space, zero padding at
reset, and that each stacked observation is exactly the stack of the last W plain
observations."""

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from tradearena import envs  # noqa: F401 - registers the environment ids
from tradearena.envs.wrappers import history

ENV_ID = "tradearena/SyntheticMarket-v0"
W = 8


def make(**kwargs) -> gymnasium.Env:
    return gymnasium.make(ENV_ID, n_steps=20, **kwargs).unwrapped


@pytest.mark.filterwarnings("ignore:.*different from the unwrapped version")
def test_check_env_and_space():
    """Gymnasium's checker passes; the space is the env's Box stacked W times, float32."""
    inner = make()
    env = history(inner, W)
    check_env(env)
    space = env.observation_space
    assert isinstance(space, gymnasium.spaces.Box)
    assert space.shape == (W, *inner.observation_space.shape)
    assert space.dtype == np.float32
    np.testing.assert_array_equal(space.low, np.tile(inner.observation_space.low, (W, 1)))
    np.testing.assert_array_equal(space.high, np.tile(inner.observation_space.high, (W, 1)))


def test_history_is_the_last_observations():
    """After k steps the history is the last W plain observations (same seed and actions),
    oldest first, zero rows before the reset observation, and stays so across a reset."""
    rng = np.random.default_rng(0)
    plain, stacked = make(), history(make(), W)
    for seed in (3, 4):  # the second episode checks that reset clears the previous one
        seen = [plain.reset(seed=seed)[0]]
        obs, _ = stacked.reset(seed=seed)
        done = False
        while True:
            assert obs.shape == (W, seen[0].size) and obs.dtype == np.float32
            assert stacked.observation_space.contains(obs)
            pad = max(W - len(seen), 0)
            np.testing.assert_array_equal(obs[:pad], 0.0)
            np.testing.assert_array_equal(obs[pad:], np.stack(seen[-W:]))
            if done:
                break
            action = int(rng.integers(3))
            step, reward, terminated, truncated, _ = plain.step(action)
            obs, stacked_reward, done_w, truncated_w, _ = stacked.step(action)
            assert (stacked_reward, done_w, truncated_w) == (reward, terminated, truncated)
            seen.append(step)
            done = terminated or truncated
        assert len(seen) == 21  # 20 steps: the history has rolled past its padding


def test_returned_histories_are_copies():
    """A returned history is not changed by later steps (safe to store in a replay buffer)."""
    env = history(make(), W)
    first, _ = env.reset(seed=0)
    kept = first.copy()
    for _ in range(3):
        env.step(1)
    np.testing.assert_array_equal(first, kept)


@pytest.mark.parametrize("length", [0, -1, 2.5, True])
def test_bad_length(length):
    with pytest.raises(ValueError, match="history length"):
        history(make(), length)


def test_needs_a_feature_box():
    with pytest.raises(ValueError, match="1-D Box"):
        history(make(observation="tabular"), W)
