"""Observation wrappers: the recent history of observations, for sequence networks."""

from __future__ import annotations

from numbers import Integral

import gymnasium as gym
from gymnasium.wrappers import FrameStackObservation

__all__ = ["history"]


def history(env: gym.Env, length: int) -> FrameStackObservation:
    """``env`` observing its last ``length`` feature vectors, oldest first.

    ``env`` must observe a 1-D ``Box`` of F features (``TradingEnv`` with
    ``observation="features"``); the wrapped env observes a ``Box`` of shape ``(length, F)``
    and the same dtype (float32 for ``TradingEnv``), whose row ``-1`` is the current
    observation and row ``-1 - k`` the one k steps earlier. At reset the rows before the
    first observation are zeros.

    This is Gymnasium's ``FrameStackObservation(env, length, padding_type="zero")``, which in
    Gymnasium 1.x does exactly this: the bounds are the env's stacked ``length`` times, and
    each step returns a fresh array (a copy, safe to keep in a replay buffer). Its "zero" pad
    is clipped into the bounds, so it is a true zero for every feature whose range holds 0,
    as all of ``TradingEnv``'s do. It keeps references to the last ``length`` observations,
    so ``env`` must return a new array each step rather than overwrite one in place.
    """
    space = env.observation_space
    if not isinstance(space, gym.spaces.Box) or len(space.shape) != 1:
        raise ValueError(
            f"history needs an env observing a 1-D Box of features, got {space} "
            '(for TradingEnv, use observation="features")'
        )
    if isinstance(length, bool) or not isinstance(length, Integral) or length < 1:
        raise ValueError(f"history length must be a positive integer, got {length!r}")
    return FrameStackObservation(env, int(length), padding_type="zero")
