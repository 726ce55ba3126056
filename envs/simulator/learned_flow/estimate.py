"""A learned flow estimated by maximum likelihood from a tape's events
(`envs.data.events`): the model of `learned_flow.model`.

The kernel sums R (`learned_flow.kernels.sums`) and, per state, the integral of each
kernel's sums over the time the book spent in it (`learned_flow.kernels.stretch_sums`) are
computed once per decay; for each choice of decays expectation-maximisation then splits each
event between the baseline and its exciters and updates mu (events per second of exposure
to each state), the profile and alpha in closed form, each iteration numpy over an (events,
kernels x 2 kinds) array, alpha's spectral radius held at most `MAX_RADIUS`. The excitation
is the same at every spread unless the estimate is asked for a gain by the spread's bucket
(``gain=True``: then alpha given the gain, the gain given alpha, the gain scaled to a
largest value of 1 per kind and alpha taking the scale, so that alpha's spectral radius
bounds the excitation's in every state; a gain per state would split each state's events
between two free rates). On the AMZN morning the gain made the market easier to tell from
the tape (a classifier's AUC 0.97 against 0.91 without), so it is off by default. The
decays are chosen on the grid `DECAYS` (one of each kernel's) by coordinate ascent of the
likelihood: from each kernel's middle value, each kernel's in turn, the others held, until
none moves, each choice's expectation-maximisation starting from the best fit so far. A
state seen by fewer than 20 events is pooled with its nearest neighbour, and the model's
``meta["pooled"]`` says which. Marks are counted (`learned_flow.marks`).

To change the number of kernels or the decays compared, change `DECAYS`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace

import numpy as np

from tradearena.envs.data.events import (
    N_EVENT_KINDS,
    Events,
    Revealed,
    StatePath,
    joined,
    revealed,
    window_events,
)
from tradearena.envs.data.load import TapeIdentity
from tradearena.envs.data.tapes import Tape, clock
from tradearena.envs.simulator.learned_flow import kernels
from tradearena.envs.simulator.learned_flow.exciters import N_EXCITERS, exciters
from tradearena.envs.simulator.learned_flow.marks import count_marks
from tradearena.envs.simulator.learned_flow.model import EventModel, spectral_radius
from tradearena.envs.simulator.learned_flow.parameters import LearnedFlowError
from tradearena.envs.simulator.learned_flow.state import StateGrid
from tradearena.envs.simulator.learned_flow.state import edges as bucket_edges

__all__ = [
    "DECAYS",
    "FAST",
    "MEDIUM",
    "MIN_EVENTS",
    "SLOW",
    "SLOWEST",
    "estimate",
    "fit_events",
    "kernel_sums",
    "log_likelihood",
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
"""The fewest events the tapes' windows must hold to learn from."""
MAX_RADIUS = 0.8
"""The largest spectral radius of the excitation the estimate allows: below critical, with
room, so that the flow's own events do not run away with its state (a near-critical
excitation multiplies whatever the simulated state gets wrong)."""
_POOL_BELOW = 20  # a state seen by fewer events is pooled with its neighbour
_ITERATIONS = 200
_TOLERANCE = 1e-7


Day = tuple[Events, StatePath]
"""One day's events and the book's states over the window they cover."""


# -------------------------------------------------------------------------------- the fit
@dataclass(frozen=True)
class _Data:
    """What the likelihood needs of one or more days: each event's kind, state, spread
    bucket, profile bin, time and the end of its day's window, and the seconds spent in each
    (bin, state) counting both sides of every day (exposure, (bins, cells))."""

    kind: np.ndarray
    cell: np.ndarray
    spread: np.ndarray
    bin: np.ndarray
    exposure: np.ndarray
    time: np.ndarray
    end: np.ndarray

    @classmethod
    def of(cls, days: Sequence[Day], model: EventModel) -> _Data:
        exposure = np.zeros((len(model.profile), model.mu.shape[1]))
        for _, path in days:
            quoted = path.spread > 0
            seconds, k = path.durations[quoted], model.bin_of(path.time[quoted])
            for own, other in ((path.bid, path.ask), (path.ask, path.bid)):
                c = model.cell(path.spread[quoted], own[quoted], other[quoted])
                np.add.at(exposure, (k, c), seconds)
        ev = joined([e for e, _ in days])
        end = np.concatenate([np.full(len(e), path.end) for e, path in days])
        cell = model.cell(ev.spread, ev.own, ev.other)
        spread = model.grid.spread_buckets(ev.spread)
        return cls(
            ev.kind.astype(np.int64), cell, spread, model.bin_of(ev.time), exposure, ev.time, end
        )


def kernel_sums(ev: Events, decays: np.ndarray) -> np.ndarray:
    """R (events, kernels x 2 exciters) of one day's events ``ev`` for kernels of ``decays``
    (per second): `learned_flow.kernels.sums` of their exciters."""
    return kernels.sums(ev.time, ev.side, exciters(ev), decays, N_EXCITERS)


def _days_sums(days: Sequence[Day], decays: np.ndarray) -> np.ndarray:
    """`kernel_sums` of each day, one after another (no day excites another)."""
    return np.vstack([kernel_sums(ev, decays) for ev, _ in days])


def log_likelihood(model: EventModel, ev: Events, path: StatePath) -> float:
    """The log-likelihood of ``ev`` under ``model`` with the book's states ``path`` (the
    window both cover), nats per event."""
    days = [(ev, path)]
    data = _Data.of(days, model)
    masses = np.hstack([_excited(days, model, d) for d in model.decays])
    return _score(model, data, _days_sums(days, model.decays), masses)


def _excited(days: Sequence[Day], model: EventModel, decay: float) -> np.ndarray:
    """(cells, 2 exciters), in `kernel_sums`' columns for one kernel of ``decay`` per second:
    per state, the integral over the time the book spent in it (seen from either side) of
    the kernel's sums of the events on the side seen from (columns 0..exciters-1) and on the
    opposite side (exciters..): what the excitation of one unit of alpha gives there."""
    sources, cells = N_EXCITERS, model.mu.shape[1]
    out = np.zeros((cells, 2, sources))
    for ev, path in days:
        quoted = path.spread > 0
        starts = path.time[quoted]
        ends = np.append(path.time[1:], path.end)[quoted]
        spent = kernels.stretch_sums(ev.time, ev.side, exciters(ev), starts, ends, [decay], sources)
        spent = spent[:, 0]  # (stretches, side index, kinds)
        spread, bid, ask = path.spread[quoted], path.bid[quoted], path.ask[quoted]
        for cell, own in ((model.cell(spread, bid, ask), 0), (model.cell(spread, ask, bid), 1)):
            np.add.at(out[:, 0], cell, spent[:, own])
            np.add.at(out[:, 1], cell, spent[:, 1 - own])
    return out.reshape(cells, -1)


def _score(model: EventModel, data: _Data, sums: np.ndarray, masses: np.ndarray) -> float:
    """The log-likelihood per event of the events ``data`` holds (kernel sums ``sums``,
    the excitation's exposure per state ``masses``)."""
    lam, _ = _intensity(model, data, sums)
    total = np.log(lam).sum() - _compensator(model, data, masses)
    return float(total / max(len(data.kind), 1))


def _flat(alpha: np.ndarray) -> np.ndarray:
    """(kinds, kernels x 2 exciters): each excited kind's row, in `kernel_sums`' columns."""
    return alpha.transpose(1, 0, 2).reshape(N_EVENT_KINDS, -1)


def _intensity(model: EventModel, data: _Data, sums: np.ndarray) -> tuple[np.ndarray, ...]:
    """Each event's intensity and its baseline part, (n,) each."""
    base = model.mu[data.kind, data.cell] * model.profile[data.bin]
    excited = np.einsum("ij,ij->i", _flat(model.alpha)[data.kind], sums)
    return base + model.gain[data.kind, data.spread] * excited, base


def _compensator(model: EventModel, data: _Data, masses: np.ndarray) -> float:
    """The expected number of events over the window (``masses``: `_excited`, the chosen
    kernels' side by side)."""
    baseline = (model.mu @ (data.exposure.T @ model.profile)).sum()
    excited = (model.gain * (_flat(model.alpha) @ _by_spread_rows(masses, model).T)).sum()
    return float(baseline + excited)


def _by_spread_rows(masses: np.ndarray, model: EventModel) -> np.ndarray:
    """``masses`` ((cells, columns), `_excited`) summed over each spread bucket's cells:
    (spread buckets, columns)."""
    return masses.reshape(model.grid.n_spread, -1, masses.shape[1]).sum(axis=1)


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
    data: _Data, pool: np.ndarray, weight: np.ndarray | float, exposure: np.ndarray
) -> np.ndarray:
    """(kinds, cells): each event's ``weight`` counted in its state's pool, over the pool's
    ``exposure`` ((cells,) seconds, or (kinds, cells)); each state takes its pool's."""
    cells = exposure.shape[-1]
    counts = np.zeros((N_EVENT_KINDS, cells))
    np.add.at(counts, (data.kind, pool[data.cell]), weight)
    pooled = np.zeros(np.broadcast_shapes(exposure.shape, (cells,)))
    np.add.at(pooled.T, pool, exposure.T)
    pooled = np.broadcast_to(pooled, counts.shape)
    return np.divide(counts, pooled, out=np.zeros_like(counts), where=pooled > 0)[:, pool]


def _em(
    model: EventModel,
    data: _Data,
    sums: np.ndarray,
    masses: np.ndarray,
    pool: np.ndarray,
    radius: float,
    fit_gain: bool,
) -> EventModel:
    """Expectation-maximisation from ``model`` at its decays (kernel sums ``sums``, the
    excitation's exposure per state ``masses``), states pooled by ``pool``, the excitation's
    spectral radius held at most ``radius`` (each update beyond it scaled back to it), the
    gain fitted when ``fit_gain`` (else held at the model's)."""
    width = data.exposure.sum(axis=1)  # seconds per bin, both sides
    mu, profile, excitation = model.mu.copy(), model.profile.copy(), _flat(model.alpha)
    gain = model.gain.copy()
    masses = _by_spread_rows(masses, model)  # (spread buckets, kernels x 2 kinds)
    previous = -np.inf
    for _ in range(_ITERATIONS):
        base = mu[data.kind, data.cell] * profile[data.bin]
        parts = gain[data.kind, data.spread][:, None] * excitation[data.kind] * sums
        excited = parts.sum(axis=1)
        lam = base + excited
        share = base / lam
        likelihood = np.log(lam).sum()
        heard = np.zeros_like(excitation)
        np.add.at(heard, data.kind, parts / lam[:, None])
        excitation = heard / np.maximum(gain @ masses, 1e-12)
        if fit_gain:
            called = np.zeros_like(gain)
            np.add.at(called, (data.kind, data.spread), excited / lam)
            exposed = excitation @ masses.T
            gain = np.divide(called, exposed, out=np.zeros_like(gain), where=exposed > 0)
            top = gain.max(axis=1, keepdims=True)
            gain, excitation = (
                np.divide(gain, top, out=np.ones_like(gain), where=top > 0),
                (excitation * top),
            )
        found = spectral_radius(_alpha(excitation))
        if found > radius:
            excitation *= radius / found
        mu = _pooled_rates(data, pool, share, data.exposure.T @ profile)
        by_bin = np.bincount(data.bin, weights=share, minlength=len(profile))
        expected = data.exposure @ mu.sum(axis=0)
        profile = np.divide(by_bin, expected, out=np.ones_like(by_bin), where=expected > 0)
        scale = (profile * width).sum() / width.sum()
        profile, mu = profile / scale, mu * scale
        if abs(likelihood - previous) < _TOLERANCE * abs(likelihood):
            break
        previous = likelihood
    return replace(model, mu=mu, profile=profile, alpha=_alpha(excitation), gain=gain)


def _alpha(excitation: np.ndarray) -> np.ndarray:
    """`_flat`'s inverse: alpha (kernels, kinds, 2 kinds)."""
    return excitation.reshape(N_EVENT_KINDS, -1, 2 * N_EXCITERS).transpose(1, 0, 2)


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
    tapes: Tape | Sequence[Tape],
    *,
    start: float | None = None,
    end: float | None = None,
    decays: tuple[tuple[float, ...], ...] = DECAYS,
    bin_seconds: float = 1800.0,
    radius: float = MAX_RADIUS,
    gain: bool = False,
    progress: Callable[[tuple[float, ...], float], None] | None = None,
) -> EventModel:
    """The learned flow of one or more days' tapes, each in its window [start, end) seconds
    after midnight (default: the whole tape): `estimate` on their events (no day excites
    another; rates, profile and marks pooled over the days), with the levels they reveal
    behind the best in those windows, the deepest tape's depth (at least 2) and the first
    day's book at its window's start as the opening book. The days must share a tick."""
    tapes = [tapes] if isinstance(tapes, Tape) else list(tapes)
    ticks = {(t.tick_size, t.lot_size) for t in tapes}
    if len(ticks) > 1:
        raise LearnedFlowError(
            f"the days differ in tick and lot ({sorted(ticks)}): learn from days of one market"
        )
    days, shown = [], []
    for tape in tapes:
        times = tape.messages["time"]
        lo = float(times[0]) if start is None else float(start)
        hi = float(times[-1]) if end is None else float(end)
        if not np.any((times >= lo) & (times < hi)):
            raise LearnedFlowError(
                f"{tape.source}: no messages from {clock(lo)} until {clock(hi)} (it runs "
                f"from {clock(times[0])} to {clock(times[-1])})"
            )
        days.append(window_events(tape, lo, hi))
        levels = revealed(tape)
        shown.append(levels.take((levels.time >= lo) & (levels.time < hi)))
    count = sum(len(ev) for ev, _ in days)
    if count < MIN_EVENTS:
        what = tapes[0].source if len(tapes) == 1 else f"{len(tapes)} tapes"
        raise LearnedFlowError(
            f"{what}: {count:,} events from {clock(days[0][1].time[0])} until "
            f"{clock(days[0][1].end)}, too few to learn order flow from (at least "
            f"{MIN_EVENTS:,})"
        )
    first = tapes[0]
    row = max(int(np.searchsorted(first.messages["time"], days[0][1].time[0])) - 1, 0)
    model = estimate(
        days,
        decays=decays,
        bin_seconds=bin_seconds,
        shown=joined(shown),
        book=_opening_book(first, row),
        depth=max(max(t.levels for t in tapes), 2),
        tick_size=first.tick_size,
        lot_size=first.lot_size,
        radius=radius,
        gain=gain,
        progress=progress,
    )
    named = [asdict(TapeIdentity.of(t)) for t in tapes]  # by content, with no folder
    return replace(model, meta={"tapes": named, **model.meta})


def estimate(
    days: Sequence[Day],
    *,
    decays: tuple[tuple[float, ...], ...] = DECAYS,
    bin_seconds: float = 1800.0,
    shown: Revealed | None = None,
    book: np.ndarray | None = None,
    depth: int = 2,
    tick_size: float = 0.01,
    lot_size: float = 1.0,
    edges: tuple[np.ndarray, np.ndarray] | None = None,
    radius: float = MAX_RADIUS,
    gain: bool = False,
    progress: Callable[[tuple[float, ...], float], None] | None = None,
) -> EventModel:
    """The model of the events of ``days`` (each day's events and the book's states over its
    window; the days' windows at one time of day): the decays (one of each kernel's tuple in
    ``decays``, per second) found by coordinate ascent of the likelihood, the rest by
    expectation-maximisation (see the module docstring), the excitation's spectral radius at
    most ``radius``, its gain by the spread's bucket fitted when ``gain`` (else 1 in every
    bucket: the excitation the same at every spread); ``progress(decays, likelihood)`` is
    called after each choice of decays is fitted. ``shown``: the levels behind the best
    (none: one tick behind, one lot);
    ``book``: the opening book ((levels, 4), see `EventModel`; none: one lot a tick either
    side of the mid); ``edges``: the spread's and the queues' bucket edges (none: the
    `learned_flow.state.QUANTILES` of the spreads the events met and of the best queues)."""
    if not decays or not all(decays):
        raise ValueError(f"decays must give each kernel at least one decay, got {decays}")
    if not 0 <= radius < 1:
        raise ValueError(f"radius must be in [0, 1), got {radius}")
    ev = joined([e for e, _ in days])
    grid = _state_grid(days, ev, edges)
    lo, hi = _window(days)
    nothing = Revealed(*(np.zeros(0) for _ in range(4)))
    model = EventModel(
        spread_edges=grid.spread_edges,
        queue_edges=grid.queue_edges,
        mu=np.zeros((N_EVENT_KINDS, grid.cells)),
        alpha=np.zeros((len(decays), N_EVENT_KINDS, 2 * N_EXCITERS)),
        gain=np.ones((N_EVENT_KINDS, grid.n_spread)),
        decays=np.array([candidates[0] for candidates in decays], np.float64),
        profile=np.ones(max(1, math.ceil((hi - lo) / bin_seconds))),
        start=lo,
        bin_seconds=bin_seconds,
        marks=count_marks(ev, nothing if shown is None else shown, grid),
        depth=depth,
        book=np.array([[0.5, 1.0, -0.5, 1.0]]) if book is None else book,
        tick_size=tick_size,
        lot_size=lot_size,
    )
    fits = _Fits(days, model, decays, radius, gain, progress)
    best = fits.ascend()
    return replace(fits.fitted(best), meta=_meta(model, days, fits, best))


def _window(days: Sequence[Day]) -> tuple[float, float]:
    """The seconds after midnight the days' windows span: (earliest start, latest end)."""
    return min(float(path.time[0]) for _, path in days), max(float(path.end) for _, path in days)


def _state_grid(
    days: Sequence[Day], ev: Events, edges: tuple[np.ndarray, np.ndarray] | None
) -> StateGrid:
    """The state's cells: of ``edges`` (spread, queues), or of the `QUANTILES` of the
    spreads the events ``ev`` met and of the best queues of the days' states."""
    if edges is not None:
        return StateGrid(*edges)
    queues = np.concatenate([np.concatenate([p.bid, p.ask]) for _, p in days])
    return StateGrid(bucket_edges(ev.spread), bucket_edges(queues))


class _Fits:
    """The fits of a model's rates, profile and excitation at each choice of decays tried
    on the grid ``decays`` (expectation-maximisation, `_em`), each made once from the days'
    data, kernel sums and excitation's exposure, computed once per decay."""

    def __init__(
        self,
        days: Sequence[Day],
        model: EventModel,
        decays: tuple[tuple[float, ...], ...],
        radius: float,
        gain: bool,
        progress: Callable[[tuple[float, ...], float], None] | None,
    ) -> None:
        self.model, self.decays, self.radius, self.gain = model, decays, radius, gain
        self.progress = progress
        self.data = _Data.of(days, model)
        self.seen = np.bincount(self.data.cell, minlength=model.grid.cells)
        self.pool = _pools(self.seen, model.shape)
        self.start_mu = _pooled_rates(self.data, self.pool, 0.5, self.data.exposure.sum(axis=0))
        every = sorted(set().union(*decays))
        self.sums = {d: _days_sums(days, np.array([d])) for d in every}
        self.masses = {d: _excited(days, model, d) for d in every}
        self.by_decays: dict[tuple[float, ...], tuple[float, EventModel]] = {}

    def likelihood(self, chosen: tuple[float, ...], start: EventModel | None = None) -> float:
        """The likelihood per event of the decays ``chosen``, fitted once, from ``start``'s
        rates, profile and excitation (None: flat ones)."""
        if chosen not in self.by_decays:
            if start is None:
                flat = 0.5 * min(self.radius, 0.5) / (2 * len(chosen) * N_EXCITERS)
                alpha = np.full((len(chosen), N_EVENT_KINDS, 2 * N_EXCITERS), flat)
                start = replace(self.model, mu=self.start_mu, alpha=alpha)
            guess = replace(start, decays=np.array(chosen, np.float64))
            sums = np.hstack([self.sums[d] for d in chosen])
            masses = np.hstack([self.masses[d] for d in chosen])
            fitted = _em(guess, self.data, sums, masses, self.pool, self.radius, self.gain)
            likelihood = _score(fitted, self.data, sums, masses)
            self.by_decays[chosen] = (likelihood if np.isfinite(likelihood) else -np.inf), fitted
            if self.progress is not None:
                self.progress(chosen, self.by_decays[chosen][0])
        return self.by_decays[chosen][0]

    def fitted(self, chosen: tuple[float, ...]) -> EventModel:
        """The model fitted at the decays ``chosen``."""
        return self.by_decays[chosen][1]

    def ascend(self) -> tuple[float, ...]:
        """The decays of the best likelihood found by coordinate ascent on the grid: from
        each kernel's middle value, each kernel's decay in turn, the others held, each trial
        starting from the best fit so far, until none moves."""
        best = tuple(grid[len(grid) // 2] for grid in self.decays)
        self.likelihood(best)
        moved = True
        while moved:
            moved = False
            for k, grid in enumerate(self.decays):
                for d in grid:
                    trial = best[:k] + (d,) + best[k + 1 :]
                    if self.likelihood(trial, self.fitted(best)) > self.likelihood(best):
                        best, moved = trial, True
        return best


def _meta(model: EventModel, days: Sequence[Day], fits: _Fits, best: tuple[float, ...]) -> dict:
    """What the fit says of itself: the window, the days and events, the likelihood at the
    decays ``best`` and at each choice tried, and the states pooled with a neighbour."""
    pooled = [
        {
            "state": model.grid.describe(c),
            "events": int(fits.seen[c]),
            "pooled_with": model.grid.describe(p),
        }
        for c, p in enumerate(fits.pool.tolist())
        if p != c
    ]
    table = {", ".join(f"{d:g}" for d in chosen): v for chosen, (v, _) in fits.by_decays.items()}
    return {
        "window": list(_window(days)),
        "days": len(days),
        "events": sum(len(ev) for ev, _ in days),
        "log_likelihood_per_event": fits.likelihood(best),
        "by_decays": table,
        "pooled": pooled,
        "pool": fits.pool.tolist(),
    }
