"""Regime-switching volatility of the zero-intelligence traders' fundamental.

The fundamental's volatility follows a two-state continuous-time Markov chain (Hamilton's
regime model in continuous time): a calm regime of volatility ``calm_sigma`` and a volatile
one of ``volatile_sigma`` (ticks per sqrt second), entered at rate ``volatile_rate`` and left
at rate ``calm_rate`` (per second). Over stretches shorter than a regime the steps are
Gaussian; mixed over regimes they have heavy tails, and volatile stretches cluster. The
path is drawn once per session from the trader's generator (the regime at the session's
start from the stationary law, then exponential holding times), so the compiled flow and
the Python path see the same fundamental.

Closed forms (`VolatilityRegimes`): the stationary probability of the volatile regime is
p = volatile_rate / (volatile_rate + calm_rate); the stationary variance rate is
s2 = (1 - p) calm_sigma^2 + p volatile_sigma^2 (ticks^2 per second); a step over a time
short beside a regime's mean duration has excess kurtosis
3 ((1 - p) calm_sigma^4 + p volatile_sigma^4) / s2^2 - 3.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["VolatilityRegimes"]


@dataclass(frozen=True)
class VolatilityRegimes:
    """Two volatility regimes (ticks per sqrt second) and the rates (per second) of
    switching into the volatile one (``volatile_rate``) and back (``calm_rate``)."""

    calm_sigma: float
    volatile_sigma: float
    volatile_rate: float
    calm_rate: float

    @property
    def volatile_share(self) -> float:
        """The stationary probability of the volatile regime."""
        return self.volatile_rate / (self.volatile_rate + self.calm_rate)

    @property
    def variance_rate(self) -> float:
        """The stationary variance of the steps per second, ticks^2 per second."""
        p = self.volatile_share
        return (1 - p) * self.calm_sigma**2 + p * self.volatile_sigma**2

    @property
    def excess_kurtosis(self) -> float:
        """The excess kurtosis of a step short beside a regime (a scale mixture of normals)."""
        p = self.volatile_share
        fourth = (1 - p) * self.calm_sigma**4 + p * self.volatile_sigma**4
        return 3.0 * fourth / self.variance_rate**2 - 3.0

    def volatile(self, times: np.ndarray, start: float, rng: np.random.Generator) -> np.ndarray:
        """Whether the volatile regime holds at each of sorted ``times`` (seconds, shape (n,),
        all >= ``start``): bool, shape (n,). The regime at ``start`` is drawn from the
        stationary law, then holding times are exponential with the regime's leaving rate."""
        volatile_first = bool(rng.random() < self.volatile_share)
        end = float(times[-1]) if len(times) else start
        rates = np.array([self.volatile_rate, self.calm_rate])  # leaving calm, leaving volatile
        switches: list[np.ndarray] = []
        t, state, chunk = start, int(volatile_first), 64
        while t <= end:
            states = (state + np.arange(chunk)) % 2
            ends = t + np.cumsum(rng.standard_exponential(chunk) / rates[states])
            switches.append(ends)
            t, state = float(ends[-1]), (state + chunk) % 2
        passed = np.searchsorted(np.concatenate(switches), times, side="right")
        return (passed % 2 == 0) == volatile_first

    def sigma(self, times: np.ndarray, start: float, rng: np.random.Generator) -> np.ndarray:
        """The volatility at each of sorted ``times`` (ticks per sqrt second, shape (n,)),
        from `volatile`."""
        volatile = self.volatile(times, start, rng)
        return np.where(volatile, self.volatile_sigma, self.calm_sigma)
