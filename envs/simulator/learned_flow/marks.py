"""What a learned flow's event carries besides its time, kind and side: its marks, each drawn
from an empirical distribution counted on the tape, defined once for the estimate, the
check, the parameter files and the compiled samplers.

The marks come in families (`FAMILIES`), each one distribution per value of what it depends
on (`By`): an order's size by its kind, how far inside the spread a limit order goes by the
spread's bucket, one distribution for the offsets behind the best, and so on. A family's
definition says how many distributions it holds on a state grid (`Family.count`); the
counting (`count_marks`) splits the tape's values by it, `learned_flow.model.check` asks for
as many, and the samplers (`learned_flow.sampler`, ``BookActor.mark``) lay their tables out
from it and pick the distribution of the event at hand by it.

To add a family: its entry in `FAMILIES`, its values on the tape in `_samples`, and where
the samplers draw it (``BookActor`` in `learned_flow.sampler`); to make a family depend on
something else, change its `By` in `FAMILIES`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from enum import IntEnum
from typing import NamedTuple

import numpy as np

from tradearena.envs.data.events import N_EVENT_KINDS, EventKind, Events, Revealed
from tradearena.envs.simulator.learned_flow.state import StateGrid

__all__ = ["FAMILIES", "By", "Distribution", "Family", "Marks", "count_marks", "distribution"]


class Distribution(NamedTuple):
    """A discrete distribution: its values and their probabilities (float64, (m,) each)."""

    values: np.ndarray
    p: np.ndarray


class By(IntEnum):
    """What a family's distributions are indexed by."""

    NOTHING = 0  # one distribution
    KIND = 1  # the event's kind, market orders aside (their size is the share they take)
    QUEUE = 2  # the bucket of the lots at the best of the event's side
    SPREAD = 3  # the spread's bucket


class Family(NamedTuple):
    """A family of marks: what its distributions are indexed by, and what each holds."""

    by: By
    holds: str

    def count(self, grid: StateGrid) -> int:
        """How many distributions the family holds on the state ``grid``."""
        return {
            By.NOTHING: 1,
            By.KIND: N_EVENT_KINDS - 1,
            By.QUEUE: grid.n_queue,
            By.SPREAD: grid.n_spread,
        }[self.by]


FAMILIES: dict[str, Family] = {
    "sizes": Family(By.KIND, "lots of a limit order or a cancel"),
    "taken": Family(By.QUEUE, "the share of the queue it meets a market order takes"),
    "inside": Family(
        By.SPREAD, "how far inside the spread a limit order goes, as a share of the spread"
    ),
    "limit_behind": Family(By.NOTHING, "ticks behind the best of a limit order behind it"),
    "cancel_behind": Family(By.NOTHING, "ticks behind the best of a cancel behind it"),
    "gap": Family(By.SPREAD, "ticks behind the deepest level of a level added behind it"),
    "queue": Family(By.SPREAD, "lots of a level added behind the deepest"),
}
"""The families of marks, by name, in the order the samplers take them: the one definition
of each."""
if EventKind.MARKET != N_EVENT_KINDS - 1:  # By.KIND holds the kinds before it
    raise ImportError("the market order must be the last kind of event")


class Marks(Mapping[str, tuple[Distribution, ...]]):
    """A learned flow's marks: per family of `FAMILIES`, in its order, the family's
    distributions (a tuple, in the order of what the family is indexed by); built with one
    keyword per family, each a sequence of (values, p) pairs."""

    def __init__(self, **families: Sequence[tuple[np.ndarray, np.ndarray]]) -> None:
        if set(families) != set(FAMILIES):
            raise TypeError(f"Marks takes the families {list(FAMILIES)}, got {sorted(families)}")
        self._families = {n: tuple(Distribution(*d) for d in families[n]) for n in FAMILIES}

    def __getitem__(self, name: str) -> tuple[Distribution, ...]:
        return self._families[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._families)

    def __len__(self) -> int:
        return len(self._families)

    def replace(self, **families: Sequence[tuple[np.ndarray, np.ndarray]]) -> Marks:
        """These marks with ``families`` (by name) in place of theirs."""
        return Marks(**{**self, **families})

    def flat(self) -> tuple[list[Distribution], dict[str, int]]:
        """Every distribution in `FAMILIES`' order, and where each family starts in it."""
        out: list[Distribution] = []
        first: dict[str, int] = {}
        for name, family in self.items():
            first[name] = len(out)
            out.extend(family)
        return out, first


def distribution(values: np.ndarray) -> Distribution:
    """The empirical distribution of ``values``; one value 1 with probability 1 when there
    are none."""
    if not len(values):
        return Distribution(np.ones(1), np.ones(1))
    distinct, counts = np.unique(values, return_counts=True)
    return Distribution(distinct.astype(np.float64), counts / counts.sum())


class _Sample(NamedTuple):
    """A family's values on the tape, and for each what the family may be indexed by (None:
    what the values do not carry)."""

    values: np.ndarray
    keys: dict[By, np.ndarray]


def _samples(ev: Events, shown: Revealed, grid: StateGrid) -> dict[str, _Sample]:
    """Each family's values in events ``ev`` and the levels ``shown`` behind the best (see
    `FAMILIES`), with the kinds and the buckets of the states they met."""

    def of_events(rows: np.ndarray, values: np.ndarray) -> _Sample:
        keys = {
            By.NOTHING: np.zeros(len(values), np.int64),
            By.KIND: ev.kind[rows].astype(np.int64),
            By.QUEUE: grid.queue_buckets(ev.own[rows]),
            By.SPREAD: grid.spread_buckets(ev.spread[rows]),
        }
        return _Sample(values, keys)

    def of_levels(rows: np.ndarray, values: np.ndarray) -> _Sample:
        keys = {
            By.NOTHING: np.zeros(len(values), np.int64),
            By.SPREAD: grid.spread_buckets(shown.spread[rows]),
        }
        return _Sample(values, keys)

    kind = ev.kind
    limit, market = kind != EventKind.MARKET, kind == EventKind.MARKET
    inside = kind == EventKind.LIMIT_INSIDE
    behind = kind == EventKind.LIMIT_BEHIND
    cancel = kind == EventKind.CANCEL_BEHIND
    level = shown.gap > 0
    queued = level & (shown.size > 0)
    return {
        "sizes": of_events(limit, ev.size[limit]),
        "taken": of_events(market, ev.size[market] / np.maximum(ev.own[market], 1)),
        "inside": of_events(inside, ev.offset[inside] / ev.spread[inside]),
        "limit_behind": of_events(behind, ev.offset[behind]),
        "cancel_behind": of_events(cancel, ev.offset[cancel]),
        "gap": of_levels(level, shown.gap[level]),
        "queue": of_levels(queued, shown.size[queued]),
    }


def count_marks(ev: Events, shown: Revealed, grid: StateGrid) -> Marks:
    """The marks of events ``ev``, with the levels ``shown`` behind the best, the spread and
    the queues bucketed by ``grid``: each family's values split by what it is indexed by
    (`FAMILIES`)."""
    families = {}
    for name, sample in _samples(ev, shown, grid).items():
        family = FAMILIES[name]
        if family.by not in sample.keys:
            raise ValueError(
                f"marks.{name} cannot be indexed by {family.by.name}: its values on the tape "
                "do not carry it"
            )
        key = sample.keys[family.by]
        families[name] = [distribution(sample.values[key == i]) for i in range(family.count(grid))]
    return Marks(**families)
