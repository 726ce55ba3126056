"""What a learned flow's event carries besides its time, kind and side: its marks, each drawn
from an empirical distribution counted on the tape, defined once for the estimate, the
parameter files and the compiled samplers.

The marks come in families, each a tuple of distributions indexed by what it depends on
(`FAMILIES`): an order's size by its kind, how far inside the spread a limit order goes by
the spread's bucket, and single distributions for the offsets behind the best and for a
level added behind the deepest. The samplers take them flat (`Marks.flat`), with where each
family starts.

To change what a mark depends on, change its family here (its entry in `FAMILIES`, its
counting in `count_marks`) and where the samplers draw it (`learned_flow.sampler`,
``BookActor``).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import NamedTuple

import numpy as np

from tradearena.envs.simulator.learned_flow.events import (
    N_EVENT_KINDS,
    EventKind,
    Events,
    Revealed,
)
from tradearena.envs.simulator.learned_flow.state import StateGrid

__all__ = ["FAMILIES", "Distribution", "Marks", "count_marks", "distribution"]


class Distribution(NamedTuple):
    """A discrete distribution: its values and their probabilities (float64, (m,) each)."""

    values: np.ndarray
    p: np.ndarray


FAMILIES = {
    "sizes": "per event kind but market orders: lots",
    "taken": "per bucket of the queue a market order meets: the fraction of it taken",
    "inside": "per spread bucket: how far inside the spread a limit order goes, as a "
    "fraction of the spread",
    "limit_behind": "ticks behind the best of a limit order behind it",
    "cancel_behind": "ticks behind the best of a cancel behind it",
    "gap": "per spread bucket: ticks behind the deepest level of a level added behind it",
    "queue": "per spread bucket: lots of a level added behind the deepest",
}
"""The families of marks, in the order the samplers take them, and what each holds."""
if EventKind.MARKET != N_EVENT_KINDS - 1:  # sizes holds the kinds before it
    raise ImportError("the market order must be the last kind of event")


@dataclass(frozen=True)
class Marks:
    """A learned flow's marks (see the module docstring): one field per `FAMILIES` entry, a
    tuple of `Distribution`s for a family that depends on something, else one."""

    sizes: tuple[Distribution, ...]
    taken: tuple[Distribution, ...]
    inside: tuple[Distribution, ...]
    limit_behind: Distribution
    cancel_behind: Distribution
    gap: tuple[Distribution, ...]
    queue: tuple[Distribution, ...]

    def families(self) -> dict[str, tuple[Distribution, ...]]:
        """Each family's distributions, in `FAMILIES`' order."""
        return {
            f.name: (Distribution(*value),)
            if f.name in _SINGLE
            else tuple(Distribution(*d) for d in value)
            for f in fields(self)
            for value in (getattr(self, f.name),)
        }

    @classmethod
    def of_families(cls, families: dict[str, tuple[Distribution, ...]]) -> Marks:
        """The marks of `families`' form."""
        return cls(**{n: family[0] if n in _SINGLE else family for n, family in families.items()})

    def flat(self) -> tuple[list[Distribution], dict[str, int]]:
        """Every distribution in `FAMILIES`' order, and where each family starts in it."""
        out: list[Distribution] = []
        first: dict[str, int] = {}
        for name, family in self.families().items():
            first[name] = len(out)
            out.extend(family)
        return out, first


_SINGLE = {f.name for f in fields(Marks) if f.type == "Distribution"}
"""The families of one distribution (that depend on nothing)."""


def distribution(values: np.ndarray) -> Distribution:
    """The empirical distribution of ``values``; one value 1 with probability 1 when there
    are none."""
    if not len(values):
        return Distribution(np.ones(1), np.ones(1))
    distinct, counts = np.unique(values, return_counts=True)
    return Distribution(distinct.astype(np.float64), counts / counts.sum())


def count_marks(ev: Events, shown: Revealed, grid: StateGrid) -> Marks:
    """The marks of events ``ev``, with the levels ``shown`` behind the best, the spread and
    the queues bucketed by ``grid``."""
    spread = grid.spread_buckets(ev.spread)
    queue = grid.queue_buckets(ev.own)
    shown_spread = grid.spread_buckets(shown.spread)
    inside = ev.kind == EventKind.LIMIT_INSIDE
    market_kind = EventKind.MARKET
    market = ev.kind == market_kind
    taken = ev.size / np.maximum(ev.own, 1)
    behind = shown.gap > 0
    return Marks(
        sizes=tuple(
            distribution(ev.size[ev.kind == k]) for k in EventKind if k != EventKind.MARKET
        ),
        taken=tuple(distribution(taken[market & (queue == b)]) for b in range(grid.n_queue)),
        inside=tuple(
            distribution(ev.offset[inside & (spread == b)] / ev.spread[inside & (spread == b)])
            for b in range(grid.n_spread)
        ),
        limit_behind=distribution(ev.offset[ev.kind == EventKind.LIMIT_BEHIND]),
        cancel_behind=distribution(ev.offset[ev.kind == EventKind.CANCEL_BEHIND]),
        gap=tuple(
            distribution(shown.gap[behind & (shown_spread == b)]) for b in range(grid.n_spread)
        ),
        queue=tuple(
            distribution(shown.size[behind & (shown.size > 0) & (shown_spread == b)])
            for b in range(grid.n_spread)
        ),
    )
