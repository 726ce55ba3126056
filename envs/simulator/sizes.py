"""Order sizes from a mixture with round lots, the shape of a real tape's sizes: a share of
orders are whole round lots (100 shares, or k of them), the rest odd lots of a log-normal size.

A trader's table gives it as ``sizes = {round_share = 0.4, lot = 100, lots_mean = 1.5,
odd_median = 30, odd_sigma = 0.8}`` (or ``lots = [w1, w2, ...]``, weights of 1, 2, ... lots,
instead of ``lots_mean``); it replaces the trader's uniform ``size`` range. An unknown or bad
value is a `envs.errors.ParameterError` naming it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from tradearena.envs.errors import ParameterError, known_keys, number

__all__ = ["SizeMixture"]

_KEYS = ("round_share", "lot", "lots_mean", "lots", "odd_median", "odd_sigma")


@dataclass(frozen=True)
class SizeMixture:
    """Order sizes (shares): with probability ``round_share`` k round lots of ``lot`` shares,
    k geometric of mean ``lots_mean`` (k >= 1), or k drawn with weights ``lots`` (of 1, 2, ...
    lots) when given; otherwise an odd lot, a log-normal of median ``odd_median`` shares and
    log-sd ``odd_sigma`` rounded to whole shares and kept within [1, lot - 1]."""

    round_share: float = 0.4
    lot: int = 100
    lots_mean: float = 1.5
    lots: tuple[float, ...] | None = None
    odd_median: float = 30.0
    odd_sigma: float = 0.8

    def __post_init__(self) -> None:
        def bad(key: str, rule: str) -> ParameterError:
            return ParameterError(("sizes", key), f"must be {rule}, got {getattr(self, key)!r}")

        if not 0 <= self.round_share <= 1:
            raise bad("round_share", "a probability in [0, 1]")
        if not isinstance(self.lot, int) or isinstance(self.lot, bool) or self.lot < 2:
            raise bad("lot", "an integer >= 2 shares")
        if not self.lots_mean >= 1:
            raise bad("lots_mean", ">= 1 lots")
        if self.lots is not None:
            w = np.asarray(self.lots, dtype=np.float64)
            if w.ndim != 1 or not w.size or not np.all(np.isfinite(w)) or w.min() < 0:
                raise bad("lots", "non-negative weights of 1, 2, ... lots")
            if not w.sum() > 0:
                raise bad("lots", "weights with a positive sum")
            object.__setattr__(self, "lots", tuple((w / w.sum()).tolist()))
        if not 1 <= self.odd_median < self.lot:
            raise bad("odd_median", f"in [1, {self.lot}) shares")
        if not self.odd_sigma > 0:
            raise bad("odd_sigma", "> 0")

    @classmethod
    def of(cls, value: SizeMixture | Mapping | None) -> SizeMixture | None:
        """A mixture from a trader table's ``sizes = {...}`` (see the module), or None."""
        if value is None or isinstance(value, SizeMixture):
            return value
        if not isinstance(value, Mapping):
            raise ParameterError(("sizes",), f"must be a table of {list(_KEYS)}, got {value!r}")
        known_keys("sizes", value, _KEYS)
        if "lots" in value and "lots_mean" in value:
            raise ParameterError(("sizes", "lots"), "give lots or lots_mean, not both")
        given = {}
        for key, item in value.items():
            if key == "lots":
                if isinstance(item, str) or not isinstance(item, list | tuple):
                    raise ParameterError(("sizes", key), f"must be a list of weights, got {item!r}")
                given[key] = tuple(number(("sizes", key), w) for w in item)
            elif key == "lot":
                given[key] = item  # checked as an integer
            else:
                given[key] = number(("sizes", key), item)
        return cls(**given)

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` sizes (shares, int32, shape (n,)) drawn from ``rng``: n uniforms (round or
        odd), n lot counts, n standard normals (the odd lots), in that order."""
        round_lot = rng.random(n) < self.round_share
        if self.lots is None:
            k = rng.geometric(1 / self.lots_mean, n)
        else:
            k = 1 + rng.choice(len(self.lots), n, p=self.lots)
        odd = np.rint(self.odd_median * np.exp(self.odd_sigma * rng.standard_normal(n)))
        odd = np.clip(odd, 1, self.lot - 1)
        return np.where(round_lot, self.lot * k, odd).astype(np.int32)

    @property
    def mean_lots(self) -> float:
        """The mean number of lots of a round-lot order."""
        if self.lots is None:
            return self.lots_mean
        return float(np.dot(np.arange(1, len(self.lots) + 1), self.lots))

    @property
    def mean_odd(self) -> float:
        """The mean odd lot, shares: the sum over j of j times the log-normal's probability of
        rounding to j (the ends taking the tails)."""
        bounds = np.arange(1.5, self.lot - 1)  # between j and j + 1, for j = 1 .. lot - 2
        z = np.log(bounds / self.odd_median) / self.odd_sigma
        cdf = [0.5 * (1 + math.erf(x / math.sqrt(2))) for x in z.tolist()]
        mass = np.diff(np.r_[0.0, cdf, 1.0])
        return float(np.dot(np.arange(1, self.lot), mass))

    @property
    def mean(self) -> float:
        """The mean order size, shares."""
        rounds = self.round_share * self.lot * self.mean_lots
        return rounds + (1 - self.round_share) * self.mean_odd
