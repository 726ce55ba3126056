"""Order flow learned event by event: a queue-reactive point process with Hawkes excitation,
estimated by maximum likelihood from a tape's events (`envs.data.events`).

The model. An event of kind b (`envs.data.events.Kind`) on side s arrives at the rate

    lambda_bs(t) = mu[b, cell_s(t)] * profile(t)
                   + sum_k sum_b' alpha[k, b, b'] R_kb's(t) + alpha[k, b, K + b'] R_kb'(-s)(t)

where cell_s(t) is the book's state seen from side s (the spread's bucket, the bucket of
the best queue on side s and that of the opposite one: `EventModel.cell`), profile(t) the
time of day's relative rate (bins of ``bin_seconds``, mean 1 over the fitted window; before
and after it the first and last bin's), K the number of kinds, and R_kb's(t) = sum over
earlier events of kind b' on side s of decay_k * exp(-decay_k (t - t_j)): each event excites
every kind on its own side and the opposite one through four kernels k, from a fast one to
a slowest one (a sum of exponentials, as Bacry, Mastromatteo and Muzy 2015 approximate a
power-law memory), by alpha events on average (the branching ratio). Bid and ask share the
parameters (the state is mirrored).

Estimation. The kernel sums R are computed once per decay; for each choice of decays
expectation-maximisation then splits each event between the baseline and its exciters and
updates mu (events per second of exposure to each state), the profile and alpha in closed
form, each iteration numpy over an (events, kernels x 2 kinds) array. The decays are chosen
on the grid `DECAYS` (one of each kernel's) by coordinate ascent of the likelihood: from
each kernel's middle value, each kernel's in turn, the others held, until none moves. A
state seen by fewer than 20 events is pooled with its nearest neighbour, and the model's
``meta["pooled"]`` says which. Marks are counted: each kind's sizes, the offsets
of limit orders inside the spread (as a fraction of the spread, by spread bucket) and behind
the best, of cancels behind it, and the levels the tape reveals behind the best
(`envs.data.events.Revealed`).

Units: seconds, ticks, lots. The compiled sampler is `envs.simulator.learned.EventSampler`.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path as FilePath

import numpy as np

from tradearena.envs.data.events import (
    KINDS,
    Events,
    Kind,
    Path,
    Revealed,
    events,
    revealed,
    state_path,
)
from tradearena.envs.data.tapes import Tape
from tradearena.envs.errors import UserError

__all__ = [
    "DECAYS",
    "FAST",
    "MEDIUM",
    "EventModelError",
    "read_parameters",
    "write_parameters",
    "MIN_EVENTS",
    "SLOW",
    "SLOWEST",
    "EventModel",
    "Marks",
    "estimate",
    "fit_events",
    "kernel_sums",
    "window",
    "window_events",
]

FAST = (1000.0, 3000.0, 10000.0)
"""Decays (per second) the fit compares for the fast kernel: half-lives of 0.7 ms to 0.07 ms
(an order's replacement, a quote's flicker)."""
MEDIUM = (30.0, 100.0, 300.0)
"""Decays (per second) for the medium kernel: half-lives of 23 ms to 2.3 ms (bursts)."""
SLOW = (1.0, 3.0, 10.0)
"""Decays (per second) for the slow kernel: half-lives of 0.7 s to 70 ms (quotes following a
trade)."""
SLOWEST = (0.03, 0.1, 0.3)
"""Decays (per second) for the slowest kernel: half-lives of 23 s to 2.3 s (flow that goes on
in one direction: a trader working an order)."""
DECAYS = (FAST, MEDIUM, SLOW, SLOWEST)
"""The fit's grid of decays, one tuple per kernel."""
MIN_EVENTS = 3_000
"""The fewest events a tape's window must hold to learn from."""
VERSION = 1
"""The parameter file's format."""
_QUANTILES = (0.05, 0.25, 0.5, 0.75)
"""The quantiles of the spreads and of the best queues the states' buckets part at: the
quartiles, and the tail where the spread (a queue) is near its least, where the flow
changes most (an order cannot improve a one-tick spread; a short queue empties)."""
_POOL_BELOW = 20  # a state seen by fewer events is pooled with its neighbour
_ITERATIONS = 200
_TOLERANCE = 1e-7


class EventModelError(UserError):
    """A tape or parameter file a learned flow cannot use."""


@dataclass(frozen=True)
class Marks:
    """What an event carries besides its time and kind, as discrete distributions: each a
    pair (values, probabilities) of float64 arrays, shape (m,).

    sizes: per kind, lots (market orders: the fraction of the best queue they take);
    inside: per spread bucket, how far inside the spread a limit order
    goes, as a fraction of the spread (its ticks better than the best / the spread);
    limit_behind, cancel_behind: ticks behind the best; gap, queue: a level added behind the
    deepest (ticks behind it, lots)."""

    sizes: tuple[tuple[np.ndarray, np.ndarray], ...]
    inside: tuple[tuple[np.ndarray, np.ndarray], ...]
    limit_behind: tuple[np.ndarray, np.ndarray]
    cancel_behind: tuple[np.ndarray, np.ndarray]
    gap: tuple[np.ndarray, np.ndarray]
    queue: tuple[np.ndarray, np.ndarray]


@dataclass(frozen=True, eq=False)
class EventModel:
    """A learned flow's parameters (see the module docstring). Arrays are float64.

    spread_edges, queue_edges: bucket edges (ticks, lots): a value's bucket is how many edges
    are at or below it; mu: (KINDS, cells) events per second; alpha: (kernels, KINDS,
    2 KINDS), [kernel, excited kind, exciting kind on the same side | on the opposite side];
    decays: (kernels,) per second; profile: (bins,)
    relative rates from ``start`` seconds after midnight, ``bin_seconds`` each; depth: the
    levels each side holds (see `envs.simulator.learned`); book: the opening book, (levels,
    4) as ask offset, ask lots, bid offset, bid lots, offsets in ticks from the opening mid;
    tick_size, lot_size: the tape's ($ per tick, units per lot); meta: the tape, window,
    likelihood and pooled states (``pool``: each state's, the state whose rates it takes)."""

    spread_edges: np.ndarray
    queue_edges: np.ndarray
    mu: np.ndarray
    alpha: np.ndarray
    decays: np.ndarray
    profile: np.ndarray
    start: float
    bin_seconds: float
    marks: Marks
    depth: int
    book: np.ndarray
    tick_size: float
    lot_size: float
    meta: dict = field(default_factory=dict)

    @property
    def shape(self) -> tuple[int, int, int]:
        """(spread buckets, queue buckets, queue buckets): the state's dimensions."""
        nq = len(self.queue_edges) + 1
        return len(self.spread_edges) + 1, nq, nq

    def cell(self, spread: np.ndarray, own: np.ndarray, other: np.ndarray) -> np.ndarray:
        """The state's index (int64) from the spread (ticks) and the best queues of the side
        seen from and the opposite one (lots), elementwise."""
        _, nq, _ = self.shape
        sb = np.searchsorted(self.spread_edges, spread, side="right")
        qo = np.searchsorted(self.queue_edges, own, side="right")
        qp = np.searchsorted(self.queue_edges, other, side="right")
        return (sb * nq + qo) * nq + qp

    def relative_rate(self, time: np.ndarray) -> np.ndarray:
        """The profile at ``time`` (seconds after midnight), flat beyond the fitted bins."""
        k = np.floor((np.asarray(time) - self.start) / self.bin_seconds).astype(np.int64)
        return self.profile[np.clip(k, 0, len(self.profile) - 1)]

    @property
    def pool(self) -> np.ndarray:
        """Each state's pool (int64, (cells,)): the state whose rates it takes (itself
        unless it was seen by too few events)."""
        return np.asarray(self.meta.get("pool", range(self.mu.shape[1])), np.int64)

    @property
    def branching(self) -> float:
        """Events one event causes directly, on average over the exciting kinds."""
        return float(_offspring(self.alpha).mean())

    @property
    def spectral_radius(self) -> float:
        """The spectral radius of the offspring matrix over (side, kind): below 1 the
        excitation is stable (each generation of events smaller than the one before), and
        the nearer 1 the more it multiplies the baseline."""
        total = self.alpha.sum(axis=0)  # (excited kind, exciting kind same side | opposite)
        same, opposite = total[:, :KINDS], total[:, KINDS:]
        matrix = np.block([[same, opposite], [opposite, same]])
        return float(np.max(np.abs(np.linalg.eigvals(matrix))))

    def log_likelihood(self, ev: Events, path: Path) -> float:
        """The log-likelihood of ``ev`` with the book's states ``path`` (the window both
        cover), nats per event."""
        data = _Data.of(ev, path, self)
        lam, _ = _intensity(self, data, kernel_sums(ev, self.decays))
        total = np.log(lam).sum() - _compensator(self, data)
        return float(total / max(len(ev), 1))

    # ---------------------------------------------------------------------------- files
    def save(self, path: str | FilePath) -> FilePath:
        """Write the model as ``path`` (JSON: scalars and where the arrays are) and
        ``path``'s stem + ``.npz`` beside it (the arrays); returns the JSON's path."""
        path = FilePath(path)
        arrays = {
            "spread_edges": self.spread_edges,
            "queue_edges": self.queue_edges,
            "mu": self.mu,
            "alpha": self.alpha,
            "decays": self.decays,
            "profile": self.profile,
            "book": self.book,
        }
        for name, value in asdict(self.marks).items():
            pairs = value if isinstance(value[0], tuple) else (value,)
            for i, (values, probabilities) in enumerate(pairs):
                arrays[f"marks.{name}.{i}.values"] = values
                arrays[f"marks.{name}.{i}.p"] = probabilities
        np.savez(path.with_suffix(".npz"), **arrays)
        scalars = {
            "arrays": path.with_suffix(".npz").name,
            "start": self.start,
            "bin_seconds": self.bin_seconds,
            "depth": self.depth,
            "tick_size": self.tick_size,
            "lot_size": self.lot_size,
            "meta": self.meta,
        }
        return write_parameters(path, "events", scalars)

    @classmethod
    def load(cls, path: str | FilePath) -> EventModel:
        """The model `save` wrote to ``path``."""
        path = FilePath(path)
        scalars = read_parameters(path, "events")
        with np.load(path.parent / scalars["arrays"]) as stored:
            a = {k: stored[k] for k in stored.files}

        def pairs(name: str) -> tuple:
            count = sum(1 for k in a if k.startswith(f"marks.{name}.") and k.endswith(".p"))
            return tuple(
                (a[f"marks.{name}.{i}.values"], a[f"marks.{name}.{i}.p"]) for i in range(count)
            )

        marks = Marks(
            sizes=pairs("sizes"),
            inside=pairs("inside"),
            limit_behind=pairs("limit_behind")[0],
            cancel_behind=pairs("cancel_behind")[0],
            gap=pairs("gap")[0],
            queue=pairs("queue")[0],
        )
        keys = ("spread_edges", "queue_edges", "mu", "alpha", "decays", "profile")
        return cls(
            **{k: a[k] for k in keys},
            start=float(scalars["start"]),
            bin_seconds=float(scalars["bin_seconds"]),
            marks=marks,
            depth=int(scalars["depth"]),
            book=a["book"],
            tick_size=float(scalars["tick_size"]),
            lot_size=float(scalars["lot_size"]),
            meta=scalars["meta"],
        )


def write_parameters(path: FilePath, kind: str, scalars: dict) -> FilePath:
    """Write a learned flow's parameter file ``path`` (JSON: its ``kind``, the format's
    version and ``scalars``); returns ``path``."""
    path.write_text(json.dumps({"kind": kind, "version": VERSION, **scalars}, indent=2) + "\n")
    return path


def read_parameters(path: FilePath, kind: str) -> dict:
    """The JSON of a learned flow's parameter file of ``kind`` ("events" or "neural");
    `EventModelError` naming the file when it is missing, not one, or of another kind or
    version."""
    if not path.is_file():
        raise EventModelError(f"{path}: no such file (`tradearena fit --model {kind}` writes one)")
    try:
        scalars = json.loads(path.read_text())
        found = (scalars["kind"], scalars["version"])
    except (OSError, ValueError, KeyError, TypeError) as error:
        reason = f"not a learned flow's parameter file ({error})"
        raise EventModelError(f"{path}: {reason}") from None
    if found != (kind, VERSION):
        raise EventModelError(
            f"{path}: a {found[0]} flow of format {found[1]}; expected {kind}, format {VERSION}"
        )
    return scalars


# -------------------------------------------------------------------------------- the fit
@dataclass(frozen=True)
class _Data:
    """What the likelihood needs of a window: each event's kind, state and profile bin, and
    the seconds spent in each (bin, state) counting both sides (exposure, (bins, cells))."""

    kind: np.ndarray
    cell: np.ndarray
    bin: np.ndarray
    exposure: np.ndarray
    time: np.ndarray
    end: float

    @classmethod
    def of(cls, ev: Events, path: Path, model: EventModel) -> _Data:
        bins, cells = len(model.profile), model.mu.shape[1]
        cell = model.cell(ev.spread, ev.own, ev.other)

        def bin_of(t: np.ndarray) -> np.ndarray:
            k = np.floor((t - model.start) / model.bin_seconds).astype(np.int64)
            return np.clip(k, 0, bins - 1)

        exposure = np.zeros((bins, cells))
        quoted = path.spread > 0
        seconds, k = path.durations[quoted], bin_of(path.time[quoted])
        for own, other in ((path.bid, path.ask), (path.ask, path.bid)):
            c = model.cell(path.spread[quoted], own[quoted], other[quoted])
            np.add.at(exposure, (k, c), seconds)
        return cls(ev.kind.astype(np.int64), cell, bin_of(ev.time), exposure, ev.time, path.end)


def kernel_sums(ev: Events, decays: np.ndarray) -> np.ndarray:
    """R (events, kernels x 2 KINDS): for each event and kernel k, the sum over the earlier
    events of each kind on its own side (columns 0..KINDS-1 of the kernel's block) and on the
    opposite side (KINDS..) of decay_k * exp(-decay_k dt), dt seconds ago (events at one
    time stamp count in their order)."""
    decays = np.asarray(decays, np.float64)
    n, kernels = len(ev), len(decays)
    out = np.empty((n, kernels, 2, KINDS))
    running = np.zeros((kernels, 2, KINDS))  # [kernel, side index (0 bid, 1 ask), kind]
    times, kinds = ev.time.tolist(), ev.kind.tolist()
    sides = (ev.side < 0).astype(np.int64).tolist()
    last = times[0] if n else 0.0
    column = decays[:, None]
    for i in range(n):
        running *= np.exp(-decays * (times[i] - last))[:, None, None]
        last = times[i]
        s = sides[i]
        out[i, :, 0] = running[:, s]
        out[i, :, 1] = running[:, 1 - s]
        running[:, s, kinds[i]] += column[:, 0]
    return out.reshape(n, -1)


def _offspring(alpha: np.ndarray) -> np.ndarray:
    """Per exciting kind, the events it causes directly on both sides, (KINDS,)."""
    return alpha[:, :, :KINDS].sum(axis=(0, 1)) + alpha[:, :, KINDS:].sum(axis=(0, 1))


def _flat(alpha: np.ndarray) -> np.ndarray:
    """(KINDS, kernels x 2 KINDS): each excited kind's row, in `kernel_sums`' columns."""
    return alpha.transpose(1, 0, 2).reshape(KINDS, -1)


def _intensity(model: EventModel, data: _Data, sums: np.ndarray) -> tuple[np.ndarray, ...]:
    """Each event's intensity and its baseline part, (n,) each."""
    base = model.mu[data.kind, data.cell] * model.profile[data.bin]
    return base + np.einsum("ij,ij->i", _flat(model.alpha)[data.kind], sums), base


def _remaining(data: _Data, decays: np.ndarray) -> np.ndarray:
    """The kernel mass the events have inside the window, in `kernel_sums`' columns
    (kernels x 2 KINDS,): per kernel, per exciting kind (same and opposite side alike)."""
    out = []
    for decay in decays:
        mass = 1.0 - np.exp(-decay * (data.end - data.time))
        by_kind = np.bincount(data.kind, weights=mass, minlength=KINDS)
        out += [by_kind, by_kind]
    return np.concatenate(out)


def _compensator(model: EventModel, data: _Data) -> float:
    """The expected number of events over the window."""
    baseline = (model.mu @ (data.exposure.T @ model.profile)).sum()
    excited = _flat(model.alpha).sum(axis=0) @ _remaining(data, model.decays)
    return float(baseline + excited)


def _pools(counts: np.ndarray, shape: tuple[int, int, int]) -> np.ndarray:
    """Each state's pool (int64, (cells,)): itself when ``counts`` (events per state) reaches
    `_POOL_BELOW`, else the nearest state that does (opposite queue, then own queue, then
    spread bucket closest)."""
    grid = np.array(np.unravel_index(np.arange(counts.size), shape)).T
    rich = np.flatnonzero(counts >= _POOL_BELOW)
    if not rich.size:
        return np.zeros(counts.size, np.int64)
    weight = np.array([100.0, 10.0, 1.0])  # a spread bucket away costs most
    distance = (np.abs(grid[:, None, :] - grid[None, rich, :]) * weight).sum(axis=2)
    pool = rich[np.argmin(distance, axis=1)]
    pool[rich] = rich
    return pool


def _pooled_rates(
    data: _Data, pool: np.ndarray, weight: np.ndarray | float, seconds: np.ndarray
) -> np.ndarray:
    """(KINDS, cells) events per second: each event's ``weight`` counted in its state's
    pool, over the pool's ``seconds`` of exposure ((cells,)); each state takes its pool's."""
    counts = np.zeros((KINDS, len(seconds)))
    np.add.at(counts, (data.kind, pool[data.cell]), weight)
    pooled = np.zeros(len(seconds))
    np.add.at(pooled, pool, seconds)
    return np.divide(counts, pooled, out=np.zeros_like(counts), where=pooled > 0)[:, pool]


def _em(model: EventModel, data: _Data, sums: np.ndarray, pool: np.ndarray) -> EventModel:
    """Expectation-maximisation from ``model`` at its decays, states pooled by ``pool``."""
    width = data.exposure.sum(axis=1)  # seconds per bin, both sides
    remaining = _remaining(data, model.decays)
    mu, profile, excitation = model.mu.copy(), model.profile.copy(), _flat(model.alpha)
    previous = -np.inf
    for _ in range(_ITERATIONS):
        base = mu[data.kind, data.cell] * profile[data.bin]
        parts = excitation[data.kind] * sums
        lam = base + parts.sum(axis=1)
        share = base / lam
        likelihood = np.log(lam).sum()
        excitation = np.zeros_like(excitation)
        np.add.at(excitation, data.kind, parts / lam[:, None])
        excitation /= np.maximum(remaining, 1e-12)
        mu = _pooled_rates(data, pool, share, data.exposure.T @ profile)
        by_bin = np.bincount(data.bin, weights=share, minlength=len(profile))
        expected = data.exposure @ mu.sum(axis=0)
        profile = np.divide(by_bin, expected, out=np.ones_like(by_bin), where=expected > 0)
        scale = (profile * width).sum() / width.sum()
        profile, mu = profile / scale, mu * scale
        if abs(likelihood - previous) < _TOLERANCE * abs(likelihood):
            break
        previous = likelihood
    alpha = excitation.reshape(KINDS, -1, 2 * KINDS).transpose(1, 0, 2)
    return _replace(model, mu=mu, profile=profile, alpha=alpha)


def _replace(model: EventModel, **changes) -> EventModel:
    fields = {k: getattr(model, k) for k in model.__dataclass_fields__}
    return EventModel(**{**fields, **changes})


def _distribution(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The empirical distribution of ``values``: (distinct values, probabilities); one value
    1 with probability 1 when there are none."""
    if not len(values):
        return np.ones(1), np.ones(1)
    distinct, counts = np.unique(values, return_counts=True)
    return distinct.astype(np.float64), counts / counts.sum()


def _marks(ev: Events, shown: Revealed, spread_edges: np.ndarray) -> Marks:
    bucket = np.searchsorted(spread_edges, ev.spread, side="right")
    inside = ev.kind == Kind.LIMIT_INSIDE
    return Marks(
        sizes=tuple(
            _distribution(ev.size[ev.kind == k] / (ev.own[ev.kind == k] if k == Kind.MARKET else 1))
            for k in Kind
        ),
        inside=tuple(
            _distribution(ev.offset[inside & (bucket == b)] / ev.spread[inside & (bucket == b)])
            for b in range(len(spread_edges) + 1)
        ),
        limit_behind=_distribution(ev.offset[ev.kind == Kind.LIMIT_BEHIND]),
        cancel_behind=_distribution(ev.offset[ev.kind == Kind.CANCEL_BEHIND]),
        gap=_distribution(shown.gap[shown.gap > 0]),
        queue=_distribution(shown.size[shown.size > 0]),
    )


def _edges(values: np.ndarray) -> np.ndarray:
    """The distinct `_QUANTILES` of ``values`` (bucket edges), above the least value."""
    q = np.ceil(np.quantile(values, _QUANTILES))
    return np.unique(np.maximum(q, values.min() + 1))


def _opening_book(tape: Tape, row: int) -> np.ndarray:
    """The first book row from ``row`` on that shows both sides (a recording builds its book
    over its first messages), as (levels, 4) offsets from its mid (ticks) and lots."""
    rows = tape.book_rows
    both = (rows[row:, 1] > 0) & (rows[row:, 3] > 0)
    row += int(np.argmax(both)) if both.any() else 0
    book = rows[row].reshape(-1, 4).astype(np.float64)
    mid = (book[0, 0] + book[0, 2]) / 2
    out = book.copy()
    out[:, 0] = np.where(book[:, 1] > 0, book[:, 0] - mid, 0)
    out[:, 2] = np.where(book[:, 3] > 0, book[:, 2] - mid, 0)
    return out


def fit_events(
    tape: Tape,
    *,
    start: float | None = None,
    end: float | None = None,
    decays: tuple[tuple[float, ...], ...] = DECAYS,
    bin_seconds: float = 1800.0,
) -> EventModel:
    """The learned flow of ``tape``'s window [start, end) seconds after midnight (default:
    the whole tape): `estimate` on its events, with the levels it reveals behind the best,
    its depth (at least 2) and its book at the window's start as the opening book."""
    times = tape.messages["time"]
    lo = float(times[0]) if start is None else float(start)
    hi = float(times[-1]) if end is None else float(end)
    ev, path = window_events(tape, lo, hi)
    if len(ev) < MIN_EVENTS:
        raise EventModelError(
            f"{tape.source}: {len(ev):,} events between {lo:.0f} s and {hi:.0f} s, too few to "
            f"learn order flow from (at least {MIN_EVENTS:,})"
        )
    first_row = max(int(np.searchsorted(times, lo)) - 1, 0)
    model = estimate(
        ev,
        path,
        decays=decays,
        bin_seconds=bin_seconds,
        shown=revealed(tape),
        book=_opening_book(tape, first_row),
        depth=max(tape.levels, 2),
        tick_size=tape.tick_size,
        lot_size=tape.lot_size,
    )
    return _replace(model, meta={"tape": tape.source, **model.meta})


def estimate(
    ev: Events,
    path: Path,
    *,
    decays: tuple[tuple[float, ...], ...] = DECAYS,
    bin_seconds: float = 1800.0,
    shown: Revealed | None = None,
    book: np.ndarray | None = None,
    depth: int = 2,
    tick_size: float = 0.01,
    lot_size: float = 1.0,
    edges: tuple[np.ndarray, np.ndarray] | None = None,
) -> EventModel:
    """The model of events ``ev`` over the book's states ``path`` (both from ``path.time[0]``
    to ``path.end`` seconds): the decays (one of each kernel's tuple in ``decays``, per
    second) found by coordinate ascent of the likelihood, the rest by
    expectation-maximisation (see the module docstring). ``shown``: the levels behind the
    best (none: one tick behind, one lot);
    ``book``: the opening book ((levels, 4), see `EventModel`; none: one lot a tick either
    side of the mid); ``edges``: the spread's and the queues' bucket edges (none: the
    `_QUANTILES` of the spreads the events met and of the best queues)."""
    if not decays or not all(decays):
        raise ValueError(f"decays must give each kernel at least one decay, got {decays}")
    lo, hi = float(path.time[0]), float(path.end)
    spread_edges, queue_edges = edges or (
        _edges(ev.spread),
        _edges(np.concatenate([path.bid, path.ask])),
    )
    nothing = Revealed(np.ones(0, np.int64), np.ones(0, np.int64))
    model = EventModel(
        spread_edges=spread_edges,
        queue_edges=queue_edges,
        mu=np.zeros((KINDS, (len(spread_edges) + 1) * (len(queue_edges) + 1) ** 2)),
        alpha=np.zeros((len(decays), KINDS, 2 * KINDS)),
        decays=np.array([grid[0] for grid in decays], np.float64),
        profile=np.ones(max(1, math.ceil((hi - lo) / bin_seconds))),
        start=lo,
        bin_seconds=bin_seconds,
        marks=_marks(ev, nothing if shown is None else shown, spread_edges),
        depth=depth,
        book=np.array([[0.5, 1.0, -0.5, 1.0]]) if book is None else book,
        tick_size=tick_size,
        lot_size=lot_size,
    )
    cells = model.mu.shape[1]
    data = _Data.of(ev, path, model)
    seen = np.bincount(data.cell, minlength=cells)
    pool = _pools(seen, model.shape)
    start_mu = _pooled_rates(data, pool, 0.5, data.exposure.sum(axis=0))
    sums_of = {d: kernel_sums(ev, np.array([d])) for d in sorted(set().union(*decays))}
    fits: dict[tuple[float, ...], tuple[float, EventModel]] = {}

    def fit(chosen: tuple[float, ...]) -> float:
        """The likelihood per event of the decays ``chosen``, fitted once."""
        if chosen not in fits:
            guess = _replace(
                model,
                decays=np.array(chosen, np.float64),
                mu=start_mu,
                alpha=np.full((len(chosen), KINDS, 2 * KINDS), 0.5 / (2 * len(chosen) * KINDS)),
            )
            sums = np.hstack([sums_of[d] for d in chosen])
            fitted = _em(guess, data, sums, pool)
            lam, _ = _intensity(fitted, data, sums)
            likelihood = float((np.log(lam).sum() - _compensator(fitted, data)) / len(ev))
            fits[chosen] = (likelihood if np.isfinite(likelihood) else -np.inf), fitted
        return fits[chosen][0]

    best = tuple(grid[len(grid) // 2] for grid in decays)
    moved = True
    while moved:  # coordinate ascent: each kernel's decay in turn, the others held
        moved = False
        for k, grid in enumerate(decays):
            for d in grid:
                trial = best[:k] + (d,) + best[k + 1 :]
                if fit(trial) > fit(best):
                    best, moved = trial, True
    best_likelihood, fitted = fits[best]
    table = {", ".join(f"{d:g}" for d in chosen): value for chosen, (value, _) in fits.items()}
    pooled = [
        {"state": _describe(c, model), "events": int(seen[c]), "pooled_with": _describe(p, model)}
        for c, p in enumerate(pool.tolist())
        if p != c
    ]
    meta = {
        "window": [lo, hi],
        "events": len(ev),
        "log_likelihood_per_event": best_likelihood,
        "by_decays": table,
        "pooled": pooled,
        "pool": pool.tolist(),
    }
    return _replace(fitted, meta=meta)


def window_events(tape: Tape, lo: float, hi: float) -> tuple[Events, Path]:
    """The tape's events in [lo, hi) seconds met with both sides quoted, and the book's
    states over that window."""
    every = events(tape)
    ev = every.take((every.time >= lo) & (every.time < hi) & (every.spread > 0))
    return ev, window(state_path(tape), lo, hi)


def window(path: Path, lo: float, hi: float) -> Path:
    """``path`` cut to [lo, hi): the state at ``lo`` is the one in force then."""
    first = max(int(np.searchsorted(path.time, lo, side="right")) - 1, 0)
    last = int(np.searchsorted(path.time, hi))
    time = path.time[first:last].copy()
    if len(time):
        time[0] = max(time[0], lo)
    return Path(time, path.spread[first:last], path.bid[first:last], path.ask[first:last], hi)


def _describe(cell: int, model: EventModel) -> str:
    """A state in words: its buckets' ranges."""
    sb, qo, qp = np.unravel_index(cell, model.shape)

    def span(edges: np.ndarray, b: int, unit: str) -> str:
        low = "0" if b == 0 else f"{edges[b - 1]:g}"
        return f"{low}+ {unit}" if b == len(edges) else f"{low}-{edges[b] - 1:g} {unit}"

    return (
        f"spread {span(model.spread_edges, sb, 'ticks')}, own queue "
        f"{span(model.queue_edges, qo, 'lots')}, opposite {span(model.queue_edges, qp, 'lots')}"
    )
