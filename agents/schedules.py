"""Step sizes and exploration schedules: small pure functions and two tiny helpers.

Step sizes take a visit count n >= 1 (updates of one (s, a), this one included); epsilon
schedules take the number of environment steps t taken so far.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from tradearena.agents._kernels import StepKind

__all__ = [
    "EpsilonGreedy",
    "StepSize",
    "exponential_schedule",
    "greedy_action",
    "linear_schedule",
    "make_epsilon",
]


class StepSize:
    """alpha(n) for the n-th update of a state-action pair.

    ``spec`` is one of: a float in (0, 1] (constant); ``"visits"`` (1/n); ``("visits",
    omega)`` (1/n**omega, omega in (0.5, 1]); ``"rescaled_linear"`` (1 / (1 + (1 - gamma) n),
    Wainwright 2019, needs ``gamma``).
    """

    def __init__(self, spec: float | str | tuple[str, float], gamma: float | None = None) -> None:
        self.spec = spec
        self.constant: float | None = None
        self.omega = 1.0
        self.rescale = 0.0
        if isinstance(spec, int | float) and not isinstance(spec, bool):
            if not 0.0 < spec <= 1.0:
                raise ValueError(f"learning_rate must be in (0, 1], got {spec}")
            self.constant = float(spec)
        elif spec == "visits":
            pass
        elif isinstance(spec, tuple | list) and len(spec) == 2 and spec[0] == "visits":
            if not 0.5 < spec[1] <= 1.0:
                raise ValueError(f"learning_rate omega must be in (0.5, 1], got {spec[1]}")
            self.omega = float(spec[1])
        elif spec == "rescaled_linear":
            if gamma is None or not 0.0 <= gamma < 1.0:
                raise ValueError(
                    f"learning_rate 'rescaled_linear' needs gamma in [0, 1), got {gamma}"
                )
            self.rescale = 1.0 - gamma
        else:
            raise ValueError(
                "learning_rate must be a float in (0, 1], 'visits', ('visits', omega) or "
                f"'rescaled_linear', got {spec!r}"
            )

    def __call__(self, n: Any) -> Any:
        """alpha for visit count ``n`` (int or int array, >= 1)."""
        if self.constant is not None:
            return self.constant if np.ndim(n) == 0 else np.full(np.shape(n), self.constant)
        if self.rescale:
            return 1.0 / (1.0 + self.rescale * n)
        if self.omega == 1.0:
            return 1.0 / n
        return 1.0 / n**self.omega

    def kernel_args(self) -> tuple[StepKind, float]:
        """(kind, parameter) for `agents._kernels.risk_update`."""
        if self.constant is not None:
            return StepKind.CONSTANT, self.constant
        if self.rescale:
            return StepKind.RESCALED_LINEAR, self.rescale
        if self.omega == 1.0:
            return StepKind.VISITS, 0.0
        return StepKind.VISITS_POWER, self.omega

    def __repr__(self) -> str:
        return f"StepSize({self.spec!r})"


def linear_schedule(start: float, end: float, duration: int, t: int) -> float:
    """Linear from ``start`` at t = 0 to ``end`` at t = duration, then ``end`` (CleanRL)."""
    slope = (end - start) / duration
    return max(slope * t + start, end) if end <= start else min(slope * t + start, end)


def exponential_schedule(start: float, end: float, half_life: float, t: int) -> float:
    """``end + (start - end) * 2 ** (-t / half_life)``: decays from ``start`` towards ``end``."""
    return end + (start - end) * math.exp(-math.log(2.0) * t / half_life)


def _constant(value: float, t: int) -> float:
    return value


def make_epsilon(spec: float | tuple) -> Callable[[int], float]:
    """An epsilon schedule t -> epsilon from ``spec`` (picklable).

    ``spec``: a float in [0, 1] (constant); ``("linear", start, end, duration)``;
    ``("exponential", start, end, half_life)``. Durations and half-lives in steps.
    """
    if isinstance(spec, int | float) and not isinstance(spec, bool):
        if not 0.0 <= spec <= 1.0:
            raise ValueError(f"exploration epsilon must be in [0, 1], got {spec}")
        return functools.partial(_constant, float(spec))
    kinds = {"linear": linear_schedule, "exponential": exponential_schedule}
    if not (isinstance(spec, tuple | list) and len(spec) == 4 and spec[0] in kinds):
        raise ValueError(
            "exploration must be a float, ('linear', start, end, duration) or "
            f"('exponential', start, end, half_life), got {spec!r}"
        )
    _, start, end, length = spec
    if not (0.0 <= start <= 1.0 and 0.0 <= end <= 1.0 and length > 0):
        raise ValueError(f"exploration {spec!r}: start, end in [0, 1] and a positive length")
    return functools.partial(kinds[spec[0]], float(start), float(end), length)


def greedy_action(values: np.ndarray, rng: np.random.Generator) -> int:
    """argmax of ``values`` (shape (A,)), ties broken uniformly at random with ``rng``."""
    values = values.tolist()
    best = max(values)
    if values.count(best) == 1:  # the usual case, without building the list of ties
        return values.index(best)
    ties = [a for a, v in enumerate(values) if v == best]
    return ties[int(rng.integers(len(ties)))]


class EpsilonGreedy:
    """Epsilon-greedy over ``n_actions`` with an epsilon schedule of the step count.

    With probability epsilon(t) a uniform action, else `greedy_action`; one ``rng.random()``
    draw per exploring call (none when epsilon(t) is 0), all from the agent's Generator.
    """

    def __init__(self, n_actions: int, exploration: float | tuple = 0.1) -> None:
        self.n_actions = n_actions
        self.epsilon = make_epsilon(exploration)
        self.constant = self.epsilon.args[0] if self.epsilon.func is _constant else None
        """epsilon if the schedule is constant (read once, not called per step), else None."""

    def epsilons(self, t: int, n: int) -> np.ndarray:
        """epsilon at steps t .. t + n - 1, float64 (n,)."""
        if self.constant is not None:
            return np.full(n, float(self.constant))
        return np.array([self.epsilon(t + i) for i in range(n)], dtype=np.float64)

    def __call__(
        self, values: np.ndarray, rng: np.random.Generator, t: int, explore: bool = True
    ) -> int:
        if explore:
            eps = self.constant
            if eps is None:
                eps = self.epsilon(t)
            if eps > 0.0 and rng.random() < eps:
                return int(rng.integers(self.n_actions))
        return greedy_action(values, rng)
