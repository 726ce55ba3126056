"""Arrival times of the background traders beyond a constant rate: an intraday profile and
self-exciting (Hawkes) bursts.

A `Profile` gives relative arrival rates over equal bins of the trading day (mean 1), so a
trader's rate at time t is its mean rate times the profile there; arrivals follow it by a
change of time (`Profile.warp` maps seconds to profile-seconds, in which the process has a
constant rate). `Hawkes` adds self-excitation with an exponential kernel: each arrival at s
raises the intensity by ``branching * decay * exp(-decay (t - s))``, so it triggers
``branching`` further arrivals on average, ``1 / decay`` seconds later on average. Both are
drawn once per session from the trader's numpy Generator (`profile_times`, `hawkes_times`),
and the compiled flow carries out the rows they time like any others.

A trader's table gives them as ``profile = [w0, w1, ...]`` (relative rates per equal bin),
``profile = {shape = "u", ratio = 3.0, bins = 13}`` (the open and close ``ratio`` times as busy
as midday) and ``hawkes = {branching = 0.5, decay = 0.1}``; an unknown or bad value is a
`envs.errors.ParameterError` naming it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from numbers import Real

import numpy as np

from tradearena.envs.errors import ParameterError, known_keys, not_one_of, number
from tradearena.envs.simulator.draws import uniform

__all__ = [
    "SHAPES",
    "Hawkes",
    "Profile",
    "arrival_times",
    "hawkes_times",
    "profile_times",
    "spread_times",
]

SHAPES = ("u",)
"""Named profile shapes: "u", rate 1 + (ratio - 1) (2x - 1)^2 at the day's fraction x."""


@dataclass(frozen=True)
class Profile:
    """Relative arrival rates over ``len(weights)`` equal bins of the trading day, scaled to
    mean 1 (so a trader's rate keeps its mean over the day); before the day the first bin's
    rate holds, after it the last's."""

    weights: tuple[float, ...]

    def __post_init__(self) -> None:
        numbers = all(isinstance(x, Real) and not isinstance(x, bool) for x in self.weights)
        w = np.asarray(self.weights if numbers else [], dtype=np.float64)
        if w.ndim != 1 or not w.size or not np.all(np.isfinite(w)) or w.min() <= 0:
            raise ParameterError(
                ("profile",), f"must be positive relative rates, got {list(self.weights)!r}"
            )
        object.__setattr__(self, "weights", tuple((w / w.mean()).tolist()))

    @classmethod
    def u_shape(cls, ratio: float, bins: int = 13) -> Profile:
        """``bins`` bins whose rate at the day's fraction x (bin midpoints) is
        1 + (ratio - 1) (2x - 1)^2 before scaling: the open and close ``ratio`` times as busy
        as midday."""
        x = (np.arange(bins) + 0.5) / bins
        return cls(tuple((1 + (ratio - 1) * (2 * x - 1) ** 2).tolist()))

    @classmethod
    def of(cls, value: Profile | Sequence[float] | Mapping | None) -> Profile | None:
        """A profile from a trader table's ``profile``: a `Profile`, a list of relative rates,
        a table ``{shape, ratio, bins}``, or None (no profile)."""
        if value is None or isinstance(value, Profile):
            return value
        if isinstance(value, Mapping):
            known_keys("profile", value, ("shape", "ratio", "bins"))
            shape = value.get("shape", "u")
            if shape not in SHAPES:
                raise ParameterError(("profile", "shape"), not_one_of(shape, SHAPES))
            ratio = number(("profile", "ratio"), value.get("ratio", 3.0), low=0.0)
            bins = value.get("bins", 13)
            if not isinstance(bins, int) or isinstance(bins, bool) or bins < 1:
                raise ParameterError(("profile", "bins"), f"must be an integer >= 1, got {bins!r}")
            return cls.u_shape(ratio, bins)
        if isinstance(value, str) or not isinstance(value, Sequence | np.ndarray):
            raise ParameterError(
                ("profile",), f"must be a list of relative rates or a table, got {value!r}"
            )
        return cls(tuple(value.tolist() if isinstance(value, np.ndarray) else value))

    def _bins(self, day: tuple[float, float]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rates, bin starts in seconds, profile-seconds before each bin), shape (bins,)."""
        w = np.asarray(self.weights)
        width = (day[1] - day[0]) / len(w)
        starts = day[0] + width * np.arange(len(w))
        return w, starts, np.r_[0.0, np.cumsum(w[:-1] * width)]

    def warp(self, t: np.ndarray | float, day: tuple[float, float]) -> np.ndarray:
        """Profile-seconds from the day's start (``day``: its first and last second) to ``t``
        (seconds): the integral of the rates, negative before the day."""
        w, starts, before = self._bins(day)
        k = np.clip(np.searchsorted(starts, t, side="right") - 1, 0, len(w) - 1)
        return before[k] + w[k] * (np.asarray(t) - starts[k])

    def unwarp(self, u: np.ndarray, day: tuple[float, float]) -> np.ndarray:
        """The seconds at profile-seconds ``u``: the inverse of `warp`."""
        w, starts, before = self._bins(day)
        k = np.clip(np.searchsorted(before, u, side="right") - 1, 0, len(w) - 1)
        return starts[k] + (u - before[k]) / w[k]


@dataclass(frozen=True)
class Hawkes:
    """Self-excitation of exponential kernel: each arrival adds
    ``branching * decay * exp(-decay * lag)`` to the intensity (per second, ``lag`` seconds
    after it). ``branching`` (0 <= n < 1) is the mean number of arrivals one triggers,
    ``decay`` (per second) the kernel's rate; the mean rate is the baseline's / (1 - n)."""

    branching: float
    decay: float

    def __post_init__(self) -> None:
        if not (math.isfinite(self.branching) and 0 <= self.branching < 1):
            raise ParameterError(
                ("hawkes", "branching"), f"must be in [0, 1), got {self.branching!r}"
            )
        if not (math.isfinite(self.decay) and self.decay > 0):
            raise ParameterError(
                ("hawkes", "decay"), f"must be > 0 (per second), got {self.decay!r}"
            )

    @classmethod
    def of(cls, value: Hawkes | Mapping | None) -> Hawkes | None:
        """Self-excitation from a trader table's ``hawkes = {branching, decay}``, or None."""
        if value is None or isinstance(value, Hawkes):
            return value
        if not isinstance(value, Mapping):
            reason = f"must be a table of branching and decay, got {value!r}"
            raise ParameterError(("hawkes",), reason)
        known_keys("hawkes", value, ("branching", "decay"))
        for key in ("branching", "decay"):
            if key not in value:
                raise ParameterError(("hawkes", key), "is missing")
        return cls(*(number(("hawkes", key), value[key]) for key in ("branching", "decay")))


def spread_times(
    n: int,
    t0: float,
    t1: float,
    rng: np.random.Generator,
    profile: Profile | None = None,
    day: tuple[float, float] = (0.0, 1.0),
) -> np.ndarray:
    """``n`` sorted times (seconds, float64, shape (n,)) in [t0, t1), independent with density
    proportional to ``profile``'s rate over ``day`` (uniform without one): uniform in
    profile-seconds, mapped back to seconds."""
    if profile is None:
        return np.sort(uniform(rng, t0, t1, n))
    u0, u1 = profile.warp(np.array([t0, t1]), day).tolist()
    times = profile.unwarp(np.sort(uniform(rng, u0, u1, n)), day)
    return np.clip(times, t0, np.nextafter(t1, t0))  # [t0, t1) despite rounding


def profile_times(
    rate: float,
    t0: float,
    t1: float,
    rng: np.random.Generator,
    profile: Profile | None = None,
    day: tuple[float, float] = (0.0, 1.0),
) -> np.ndarray:
    """Sorted arrival times (seconds, float64, shape (n,)) in [t0, t1) of a Poisson process of
    ``rate`` per second times ``profile``'s rate over ``day`` (a constant rate without one):
    a Poisson count of the interval's profile-seconds, then `spread_times`."""
    span = t1 - t0
    if profile is not None:
        u0, u1 = profile.warp(np.array([t0, t1]), day).tolist()
        span = u1 - u0  # profile-seconds
    return spread_times(rng.poisson(rate * span), t0, t1, rng, profile, day)


def arrival_times(
    rate: float,
    t0: float,
    t1: float,
    rng: np.random.Generator,
    profile: Profile | None = None,
    hawkes: Hawkes | None = None,
    day: tuple[float, float] = (0.0, 1.0),
) -> np.ndarray:
    """Sorted arrival times (seconds, shape (n,)) in [t0, t1) at a mean ``rate`` per second:
    `profile_times`, or with ``hawkes`` `hawkes_times` of baseline rate (1 - branching), whose
    stationary mean rate is ``rate`` (so self-excitation makes bursts, not more arrivals)."""
    if hawkes is None:
        return profile_times(rate, t0, t1, rng, profile, day)
    return hawkes_times(rate * (1 - hawkes.branching), hawkes, t0, t1, rng, profile, day)


def hawkes_times(
    baseline: float,
    hawkes: Hawkes,
    t0: float,
    t1: float,
    rng: np.random.Generator,
    profile: Profile | None = None,
    day: tuple[float, float] = (0.0, 1.0),
) -> np.ndarray:
    """Sorted arrival times (seconds, float64, shape (n,)) in [t0, t1) of a Hawkes process
    with no arrivals before t0: immigrants at ``baseline`` per second (times ``profile``'s
    rate, see `profile_times`), each arrival triggering a Poisson(``branching``) number of
    arrivals at Exp(``decay``) lags after it, generation after generation (the cluster
    representation: exactly the process of intensity baseline + the kernels of past
    arrivals)."""
    generation = profile_times(baseline, t0, t1, rng, profile, day)
    times = [generation]
    while generation.size:
        parents = np.repeat(generation, rng.poisson(hawkes.branching, generation.size))
        generation = parents + rng.exponential(1 / hawkes.decay, parents.size)
        generation = generation[generation < t1]
        times.append(generation)
    return np.sort(np.concatenate(times))
