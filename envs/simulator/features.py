"""Observation features of one seat and a discretizer that turns them into tabular states.

A feature vector (float32, shape (F,)) holds, in the order of `feature_names(windows)`:

- ``inventory``: the seat's inventory / position limit, clipped to [-1, 1];
- ``imbalance``: (bid - ask) / (bid + ask) volume over the top ``depth_levels`` levels of each
  side, in [-1, 1], 0 when the book is empty;
- ``spread``: best ask - best bid in ticks, clipped to [0, SPREAD_CAP]; SPREAD_CAP while a side
  is empty (no quote is as illiquid as the widest spread);
- ``return_w`` for each window ``w``: log(mid_t / mid_{t-w}) in basis points over the market's
  mid history (one mid per decision step), clipped to [-RETURN_CAP, RETURN_CAP], 0 while fewer
  than w + 1 mids exist;
- ``time_left``: 1 - step_index / n_steps, in [0, 1];
- ``volatility``: the mid's realised volatility, the root mean square of its one-step log
  returns in basis points over the last max(windows) steps (fewer while fewer exist, 0 at
  the open), capped at RETURN_CAP: what the Avellaneda-Stoikov maker calls sigma;
- ``signal`` (only with ``signal``, the informed-trading task): the seat's forecast of the
  fundamental at the close, from a noisy observation of it, over the mid, in basis points,
  clipped to [-RETURN_CAP, RETURN_CAP] (see `envs.seats.SeatedMarket`).

`features` is called every environment step: it is compiled (`envs.simulator.observation`, which
also computes every seat's features of many markets in one call)."""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import TYPE_CHECKING

import numpy as np
from gymnasium import spaces

from tradearena.envs.errors import did_you_mean
from tradearena.envs.simulator.observation import discretize, fill_features, observe

if TYPE_CHECKING:
    from tradearena.envs.simulator.market import Market

__all__ = [
    "DEFAULT_WINDOWS",
    "FEATURE_NAMES",
    "RETURN_CAP",
    "SPREAD_CAP",
    "Discretizer",
    "feature_names",
    "feature_space",
    "features",
]

DEFAULT_WINDOWS = (1, 5, 15)
"""Return windows in decision steps."""
SPREAD_CAP = 50.0
"""Largest spread feature, ticks; also the value while a side of the book is empty."""
RETURN_CAP = 500.0
"""Largest absolute return feature, basis points."""


def feature_names(windows: Sequence[int] = DEFAULT_WINDOWS, signal: bool = False) -> list[str]:
    """Names of the features for return ``windows`` (distinct positive steps), in vector order
    (``signal`` last, when asked for)."""
    if not windows or len(set(windows)) != len(windows) or any(w < 1 for w in windows):
        raise ValueError(f"windows must be distinct positive step counts, got {tuple(windows)}")
    returns = (f"return_{w}" for w in windows)
    names = ["inventory", "imbalance", "spread", *returns, "time_left", "volatility"]
    return names + ["signal"] if signal else names


FEATURE_NAMES = tuple(feature_names())
"""Feature names for `DEFAULT_WINDOWS`."""


def feature_space(
    windows: Sequence[int] = DEFAULT_WINDOWS, depth_levels: int = 5, signal: bool = False
) -> spaces.Box:
    """The Box (float32, shape (F,)) holding every `features` vector of these arguments.

    The bounds do not depend on ``depth_levels``; it is only checked (>= 1).
    """
    if depth_levels < 1:
        raise ValueError(f"depth_levels must be >= 1, got {depth_levels}")
    feature_names(windows)  # validates them
    low = [-1.0, -1.0, 0.0, *[-RETURN_CAP] * len(windows), 0.0, 0.0] + [-RETURN_CAP] * signal
    high = [1.0, 1.0, SPREAD_CAP, *[RETURN_CAP] * len(windows), 1.0, RETURN_CAP]
    high += [RETURN_CAP] * signal
    return spaces.Box(np.array(low, np.float32), np.array(high, np.float32), dtype=np.float32)


def features(
    market: Market,
    seat: int,
    *,
    windows: Sequence[int] = DEFAULT_WINDOWS,
    depth_levels: int = 5,
    signal: float | None = None,
) -> np.ndarray:
    """The feature vector of ``seat`` (see the module docstring), float32, shape (F,); with
    ``signal`` (bp) appended last.

    ``market`` needs ``book``, ``mids()`` (ndarray of positive mids, ticks), ``account(seat)``,
    ``position_limit``, ``step_index`` and ``n_steps``, as `envs.simulator.market.Market` has;
    a market with feed latency shows its recorded view (`envs.simulator.observation.observe`).
    """
    if depth_levels < 1:
        raise ValueError(f"depth_levels must be >= 1, got {depth_levels}")
    if any(w < 1 for w in windows):
        raise ValueError(f"windows must be positive step counts, got {tuple(windows)}")
    out = np.empty(len(windows) + 5 + (signal is not None), dtype=np.float32)
    if getattr(market, "_seen_mids", None) is not None:  # feed latency: the view recorded
        seats = np.empty((1, market.n_seats, len(windows) + 5), dtype=np.float32)
        steps = np.asarray(windows, dtype=np.int64)
        observe([market], market.n_seats, steps, depth_levels, SPREAD_CAP, RETURN_CAP, seats)
        out[: seats.shape[2]] = seats[0, seat]
    else:
        _fill_now(market, seat, windows, depth_levels, out)
    if signal is not None:
        out[-1] = -RETURN_CAP if signal < -RETURN_CAP else min(signal, RETURN_CAP)
    return out


def _fill_now(
    market: Market, seat: int, windows: Sequence[int], depth_levels: int, out: np.ndarray
) -> None:
    """The features of ``seat`` from the book now into ``out`` (F,)."""
    fill_features(
        market.book,
        market.account(seat).inventory,
        market.position_limit,
        np.ascontiguousarray(market.mids(), dtype=np.float64),
        market.step_index,
        market.n_steps,
        np.asarray(windows, dtype=np.int64),
        depth_levels,
        SPREAD_CAP,
        RETURN_CAP,
        out,
    )


class Discretizer:
    """Maps a feature vector to one tabular state: a mixed-radix index over binned features.

    ``bins[name]`` are the strictly increasing edges of a feature; its bin is
    ``np.digitize(value, edges)`` (``bisect_right``): 0 below the first edge, ``len(edges)``
    at or above the last. Edges are rounded to float32, the features' dtype, so a feature
    equal to an edge falls in the bin above it. Features not in ``bins`` are ignored. Used
    features are ordered as in ``names``, the first the most significant digit (row-major, as
    `np.ravel_multi_index`); ``n_states`` is the product of ``len(edges) + 1``.
    """

    def __init__(
        self,
        bins: Mapping[str, Sequence[float]] | None = None,
        names: Sequence[str] = FEATURE_NAMES,
    ) -> None:
        names = tuple(names)
        if len(set(names)) != len(names):
            raise ValueError(f"feature names must be distinct, got {list(names)}")
        bins = {} if bins is None else bins
        unknown = [name for name in bins if name not in names]
        if unknown:
            hint = did_you_mean(unknown[0], names)
            raise ValueError(f"unknown features {unknown}{hint}; allowed: {list(names)}")
        self.names = names
        self.bins: dict[str, tuple[float, ...]] = {}
        for name in names:
            if name not in bins:
                continue
            array = np.asarray(bins[name], dtype=np.float32)
            if array.ndim != 1 or not array.size:
                raise ValueError(
                    f"feature {name!r}: edges must be a non-empty sequence, got {bins[name]!r}"
                )
            edges = tuple(array.tolist())
            if not all(math.isfinite(e) for e in edges) or any(a >= b for a, b in pairwise(edges)):
                raise ValueError(
                    f"feature {name!r}: edges must be finite and strictly increasing (as "
                    f"float32), got {tuple(bins[name])}"
                )
            self.bins[name] = edges
        # per used feature: its index, its edges (for `__call__`) and its number of bins; the
        # same for `states`, as arrays for the compiled `discretize`
        self._plan = [(names.index(n), e, len(e) + 1) for n, e in self.bins.items()]
        self._columns = np.array([i for i, *_ in self._plan], dtype=np.int64)
        self._edges = np.array([x for _, e, _ in self._plan for x in e], dtype=np.float64)
        self._ends = np.cumsum([len(e) for _, e, _ in self._plan], dtype=np.int64)
        self.n_states = math.prod(radix for *_, radix in self._plan)

    @classmethod
    def default(cls, windows: Sequence[int] = DEFAULT_WINDOWS) -> Discretizer:
        """54 states: inventory short / flat / long, imbalance below -0.2 / between / from 0.2
        up, return over the shortest window below -0.75 / between / from 0.75 bp, time left
        below / from one half.

        The return edges sit between the half-tick and one-tick moves of a mid near 10,000
        ticks (about 0.5 and 1 bp), so one tick either way counts as a move: edges at exactly
        +-1 bp would call a tick up (0.99995 bp) flat and a tick down (-1.00005 bp) down.
        """
        return cls(
            {
                "inventory": (-1e-9, 1e-9),
                "imbalance": (-0.2, 0.2),
                f"return_{min(windows)}": (-0.75, 0.75),
                "time_left": (0.5,),
            },
            names=feature_names(windows),
        )

    def __call__(self, x: np.ndarray | Sequence[float]) -> int:
        """The state index in range(n_states) of feature vector ``x``, shape (F,)."""
        values = x.tolist() if isinstance(x, np.ndarray) else x
        if len(values) != len(self.names):
            raise ValueError(f"expected {len(self.names)} features, got {len(values)}")
        state = 0
        for i, edges, radix in self._plan:
            state = state * radix + bisect_right(edges, values[i])
        return state

    def states(self, x: np.ndarray) -> np.ndarray:
        """The state indices of feature vectors ``x``, shape (..., F) -> int64 (...); the same
        as calling the discretizer on each vector."""
        if x.shape[-1] != len(self.names):
            raise ValueError(f"expected {len(self.names)} features, got {x.shape[-1]}")
        rows = np.asarray(x, dtype=np.float64).reshape(-1, x.shape[-1])
        out = np.empty(len(rows), dtype=np.int64)
        discretize(rows, self._columns, self._edges, self._ends, out)
        return out.reshape(x.shape[:-1])

    def decode(self, state: int) -> dict[str, int]:
        """The bin index of each used feature in ``state`` (for debugging)."""
        if not 0 <= state < self.n_states:
            raise ValueError(f"state must be in range({self.n_states}), got {state}")
        digits = {}
        for name in reversed(self.bins):
            state, digits[name] = divmod(state, len(self.bins[name]) + 1)
        return dict(reversed(digits.items()))

    def __repr__(self) -> str:
        return f"Discretizer(bins={self.bins}, n_states={self.n_states})"
