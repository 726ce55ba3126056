"""A learned flow's parameters: a queue-reactive point process with Hawkes excitation.

An event of kind b (`EventKind`) on side s arrives at the rate

    lambda_bs(t) = mu[b, cell_s(t)] * profile(t)
                   + gain[b, spread(t)] * sum_k sum_e alpha[k, b, e] R_kes(t)
                                                     + alpha[k, b, E + e] R_ke(-s)(t)

where cell_s(t) is the book's state seen from side s (`learned_flow.state`), spread(t) its
spread's bucket, profile(t) the time of day's relative rate (bins of ``bin_seconds``, mean 1
over the fitted window; before and after it the first and last bin's), E the number of
exciters and R_kes(t) the sum over earlier events of exciter e on side s of kernel k
(`learned_flow.kernels`). An event's exciter (`Exciter`) is its kind and, for a cancel at the
touch or a market order, whether it emptied the best level: the flow answers an emptied
queue as it does not answer one that is still there. Each event excites every kind on its
own side and the opposite one through several kernels, from a fast one to a slowest one (a
sum of exponentials, as Bacry, Mastromatteo and Muzy 2015 approximate a power-law memory),
by at most alpha events on average (the branching ratio). The gain, in [0, 1] with 1 at some
spread of each kind, is how much of its excitation a kind receives at each spread: a limit
order cannot go inside a one-tick spread however many events call for one, a market order is
called by a narrow spread, and in a state that is not excited the rates are still the
state's. Bid and ask share the parameters (the state is mirrored). What each event carries
is drawn from its `Marks`.

Units: seconds, ticks, lots. The estimate is `learned_flow.estimate`; the compiled sampler
`learned_flow.sampler.EventSampler`; the files `learned_flow.parameters`.
"""

from __future__ import annotations

import math
import re
import reprlib
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import NoReturn

import numpy as np

from tradearena.envs.data.events import N_EVENT_KINDS, EventKind
from tradearena.envs.simulator.learned_flow import parameters
from tradearena.envs.simulator.learned_flow.exciters import EMPTIED, N_EXCITERS
from tradearena.envs.simulator.learned_flow.marks import FAMILIES, Distribution, Marks
from tradearena.envs.simulator.learned_flow.parameters import LearnedFlowError
from tradearena.envs.simulator.learned_flow.state import StateGrid

__all__ = [
    "MARK_RANGES",
    "MAX_DEPTH",
    "MAX_LOTS",
    "MAX_RATE",
    "MAX_TICKS",
    "MIN_RATE",
    "EventModel",
    "check",
    "spectral_radius",
]

_ARRAYS = ("spread_edges", "queue_edges", "mu", "alpha", "gain", "decays", "profile", "book")
"""The model's arrays, as its parameter file's arrays hold them (besides the marks)."""
_SCALARS = ("start", "bin_seconds", "depth", "tick_size", "lot_size")


@dataclass(frozen=True, eq=False)
class EventModel:
    """A learned flow's parameters (see the module docstring). Arrays are float64.

    spread_edges, queue_edges: the state's bucket edges (ticks, lots; `StateGrid`); mu:
    (kinds, cells) events per second; alpha: (kernels, kinds, 2 exciters), [kernel, excited
    kind, exciter (`Exciter`) on the same side | on the opposite side]; gain: (kinds, spread
    buckets), in [0, 1]: the share of its excitation each kind receives at each spread;
    decays: (kernels,) per
    second; profile: (bins,) relative rates from ``start`` seconds after midnight,
    ``bin_seconds`` each; depth: the levels each side holds (see `learned_flow.sampler`);
    book: the opening book, (levels, 4) as ask offset, ask lots, bid offset, bid lots,
    offsets in ticks from the opening mid; tick_size, lot_size: the tape's ($ per tick,
    units per lot); meta: the tape, window, likelihood and pooled states (``pool``: each
    state's, the state whose rates it takes)."""

    spread_edges: np.ndarray
    queue_edges: np.ndarray
    mu: np.ndarray
    alpha: np.ndarray
    gain: np.ndarray
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

    @cached_property
    def grid(self) -> StateGrid:
        """The state's cells (`StateGrid` of the model's edges)."""
        return StateGrid(self.spread_edges, self.queue_edges)

    @property
    def shape(self) -> tuple[int, int, int]:
        """(spread buckets, queue buckets, queue buckets): the state's dimensions."""
        return self.grid.shape

    def cell(self, spread: np.ndarray, own: np.ndarray, other: np.ndarray) -> np.ndarray:
        """The state's index (int64) from the spread (ticks) and the best queues of the side
        seen from and the opposite one (lots), elementwise."""
        return self.grid.cell_of(spread, own, other)

    def bin_of(self, time: np.ndarray) -> np.ndarray:
        """The profile's bin (int64) at ``time`` (seconds after midnight): the first before
        the fitted bins, the last after them."""
        k = np.floor((np.asarray(time) - self.start) / self.bin_seconds).astype(np.int64)
        return np.clip(k, 0, len(self.profile) - 1)

    def relative_rate(self, time: np.ndarray) -> np.ndarray:
        """The profile at ``time`` (seconds after midnight), flat beyond the fitted bins."""
        return self.profile[self.bin_of(time)]

    @property
    def pool(self) -> np.ndarray:
        """Each state's pool (int64, (cells,)): the state whose rates it takes (itself
        unless it was seen by too few events)."""
        return np.asarray(self.meta.get("pool", range(self.mu.shape[1])), np.int64)

    @property
    def branching(self) -> float:
        """Events one event causes directly, on average over the exciters."""
        width = N_EXCITERS
        offspring = self.alpha[:, :, :width].sum(axis=(0, 1)) + self.alpha[:, :, width:].sum(
            axis=(0, 1)
        )
        return float(offspring.mean())

    @property
    def spectral_radius(self) -> float:
        """`spectral_radius` of the model's excitation."""
        return spectral_radius(self.alpha)

    # ---------------------------------------------------------------------------- files
    def save(self, path: str | Path) -> Path:
        """Write the model as ``path`` (JSON: scalars and where the arrays are) and
        ``path``'s stem + ``.npz`` beside it (the arrays), both or neither; returns the
        JSON's path. A model `load` would refuse (`check`) is a `LearnedFlowError` naming
        ``path``, and nothing is written."""
        check(self, str(path))
        arrays = {name: getattr(self, name) for name in _ARRAYS}
        for name, family in self.marks.items():
            for i, (values, p) in enumerate(family):
                arrays[f"marks.{name}.{i}.values"] = values
                arrays[f"marks.{name}.{i}.p"] = p
        scalars = {name: getattr(self, name) for name in _SCALARS}
        return parameters.write(Path(path), "events", {**scalars, "meta": self.meta}, arrays)

    @classmethod
    def load(cls, path: str | Path) -> EventModel:
        """The model `save` wrote to ``path``, checked (`check`); a `LearnedFlowError`
        naming the file and the field when it cannot be used."""
        path = Path(path)
        scalars, arrays = parameters.read(path, "events", _stored)
        npz = path.parent / scalars["arrays"]
        for name in _ARRAYS:
            if name not in arrays:
                raise LearnedFlowError(f"{npz}: no array {name!r}")

        def family(name: str) -> tuple[Distribution, ...]:
            out = []
            while (
                f"marks.{name}.{len(out)}.p" in arrays
                or f"marks.{name}.{len(out)}.values" in arrays
            ):
                key = f"marks.{name}.{len(out)}"
                if f"{key}.p" not in arrays or f"{key}.values" not in arrays:
                    raise LearnedFlowError(f"{npz}: {key} needs both its values and its p")
                out.append(Distribution(arrays[f"{key}.values"], arrays[f"{key}.p"]))
            if not out:
                raise LearnedFlowError(f"{npz}: no distribution of the marks' {name}")
            return tuple(out)

        numbers = (int, float)
        model = cls(
            **{name: arrays[name] for name in _ARRAYS},
            start=float(parameters.field(path, scalars, "start", numbers)),
            bin_seconds=float(parameters.field(path, scalars, "bin_seconds", numbers)),
            marks=Marks(**{name: family(name) for name in FAMILIES}),
            depth=parameters.field(path, scalars, "depth", int),
            tick_size=float(parameters.field(path, scalars, "tick_size", numbers)),
            lot_size=float(parameters.field(path, scalars, "lot_size", numbers)),
            meta=parameters.field(path, scalars, "meta", dict),
        )
        return check(model, str(path))


_MARK_ARRAY = re.compile(rf"marks\.({'|'.join(FAMILIES)})\.\d+\.(values|p)")
"""The name of a mark's array in the parameter file."""


def _stored(name: str) -> bool:
    """Whether ``name`` is one of the arrays `EventModel.save` writes (the others in a
    parameter file are never read)."""
    return name in _ARRAYS or bool(_MARK_ARRAY.fullmatch(name))


def spectral_radius(alpha: np.ndarray) -> float:
    """The spectral radius of the offspring matrix over (side, kind) of an excitation
    ``alpha`` (kernels, kinds, 2 exciters), each kind taken as its most exciting exciter (a
    cancel at the touch or a market order as the one that empties the level, or not): below
    1 the excitation is stable (each generation of events smaller than the one before) at
    every gain, and the nearer 1 the more it multiplies the baseline."""
    total = alpha.sum(axis=0)  # (excited kind, exciter same side | opposite)
    width = total.shape[1] // 2
    columns = [[kind, EMPTIED[kind]] if kind in EMPTIED else [kind] for kind in EventKind]

    def worst(part: np.ndarray) -> np.ndarray:
        return np.stack([part[:, c].max(axis=1) for c in columns], axis=1)

    same, opposite = worst(total[:, :width]), worst(total[:, width:])
    matrix = np.block([[same, opposite], [opposite, same]])
    return float(np.max(np.abs(np.linalg.eigvals(matrix))))


MAX_RATE = 1e5
"""The most events per second a model's baseline may give, both sides together."""
MIN_RATE = 1e-3
"""The least events per second a model's baseline may give at its busiest, both sides
together (one in about 17 minutes): below it the market is dead, every session empty."""
MAX_DEPTH = 1_000
"""The most levels a side of a model's book may hold."""
MAX_CELLS = 100_000
"""The most states a model may have."""
MAX_BINS = 1_000_000
"""The most bins a model's profile may have."""
MAX_VALUES = 1_000_000
"""The most values a mark's distribution may have."""
MAX_TICKS = 1e6
"""The farthest a model places an order from a price it reads (a mark's ticks behind the best
or the deepest level, an opening level's offset from the mid), ticks."""
MAX_LOTS = 1e9
"""The most lots a model's order or level holds (a mark's size, a level added, an opening
level), and lots a market order takes per lot of the queue it meets: with prices of at most
a billion ticks (`envs.spec.MAX_PRICE_TICKS`) and `MAX_TICKS` more, a fill's cash (lots x
ticks) stays far inside the 64-bit integers the book counts it in."""
MARK_RANGES = {
    "sizes": MAX_LOTS,
    "queue": MAX_LOTS,
    "taken": MAX_LOTS,
    "inside": 1.0,
    "limit_behind": MAX_TICKS,
    "cancel_behind": MAX_TICKS,
    "gap": MAX_TICKS,
}
"""The largest value of each family of marks (`learned_flow.marks.FAMILIES`: lots, lots a
lot, a fraction of the spread, ticks)."""
MAX_WINDOW_SECONDS = 7 * 86_400.0
"""The latest a model's ``meta.window`` (the hours learned from) may end, seconds after
midnight: a week, as a session's times (`envs.spec.MAX_SESSION_SECONDS`)."""
DECAY_RANGE = (1e-6, 1e7)
"""The decays a kernel may have, per second: half-lives of about 8 days to 70 ns."""


def check(model: EventModel, where: str = "model") -> EventModel:
    """``model`` when a sampler can run it: every array of its shape, finite and in range,
    the edges sorted, each mark a distribution (values and probabilities of one length,
    probabilities >= 0 summing to 1) and each family of them as many as its definition holds
    (`learned_flow.marks.FAMILIES`), the excitation stable (spectral radius < 1) and some
    flow at all; else a `LearnedFlowError` naming ``where`` and the field."""
    fields = _Fields(model, where)
    grid = _checked_grid(fields)
    _check_excitation(fields, grid)
    _check_scalars(fields)
    _check_book(fields)
    _check_peak(fields, grid)
    _check_pool(fields, grid)
    _meta_check(model.meta, fields.fail)
    _check_marks(fields, grid)
    return model


class _Fields:
    """A model's fields as `check` reads them, each check failing with a `LearnedFlowError`
    that names the place (``where``) and the field."""

    def __init__(self, model: EventModel, where: str) -> None:
        self.model, self.where = model, where

    def fail(self, name: str, reason: str) -> NoReturn:
        raise LearnedFlowError(f"{self.where}: {name} {reason}")

    def array(self, name: str, ndim: int, low: float = 0.0, high: float = math.inf) -> np.ndarray:
        """The field ``name``: an array of real numbers with ``ndim`` dimensions, finite,
        in [low, high]."""
        value = getattr(self.model, name)
        if not isinstance(value, np.ndarray) or value.dtype.kind not in "iuf":
            self.fail(name, f"must be an array of real numbers, got {type(value).__name__}")
        if value.ndim != ndim:
            self.fail(name, f"must have {ndim} dimension(s), got shape {value.shape}")
        if not np.isfinite(value).all():
            self.fail(name, "must be finite")
        if value.size and (value.min() < low or value.max() > high):
            self.fail(
                name, f"must lie in [{low:g}, {high:g}], got [{value.min():g}, {value.max():g}]"
            )
        return value

    def shaped(self, name: str, shape: tuple[int, ...], what: str = "") -> None:
        """The array field ``name`` of ``shape`` (``what``: its axes, in words)."""
        found = getattr(self.model, name).shape
        if found != shape:
            self.fail(name, f"must have shape {shape}{f' ({what})' if what else ''}, got {found}")

    def scalar(self, name: str, low: float, high: float = math.inf, kind: type = float) -> None:
        """The field ``name``: a finite number (an integer when ``kind`` is int) in [low,
        high]."""
        value = getattr(self.model, name)
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if kind is int and ok and value != int(value):
            ok = False
        if not ok or not math.isfinite(value) or not low <= value <= high:
            self.fail(
                name, f"must be a finite {kind.__name__} in [{low:g}, {high:g}], got {value!r}"
            )


def _checked_grid(fields: _Fields) -> StateGrid:
    """The model's state grid, its edges increasing and its cells at most `MAX_CELLS`."""
    for name in ("spread_edges", "queue_edges"):
        edges = fields.array(name, 1, 1.0, 1e12)
        if np.any(np.diff(edges) <= 0):
            fields.fail(name, f"must be increasing, got {edges.tolist()}")
    grid = fields.model.grid
    if grid.cells > MAX_CELLS:
        fields.fail(
            "spread_edges", f"and queue_edges make {grid.cells:,} states, more than {MAX_CELLS:,}"
        )
    return grid


def _check_excitation(fields: _Fields, grid: StateGrid) -> None:
    """The baseline rates, the kernels' decays, alpha (stable), the gain and the profile."""
    fields.array("mu", 2)
    fields.shaped("mu", (N_EVENT_KINDS, grid.cells))
    decays = fields.array("decays", 1, *DECAY_RANGE)
    if not 1 <= len(decays) <= 16:
        fields.fail("decays", f"must give 1 to 16 kernels, got {len(decays)}")
    fields.array("alpha", 3)
    fields.shaped("alpha", (len(decays), N_EVENT_KINDS, 2 * N_EXCITERS))
    radius = fields.model.spectral_radius
    if not radius < 1:
        fields.fail("alpha", f"is explosive: spectral radius {radius:.3f} >= 1")
    fields.array("gain", 2, 0.0, 1.0)
    fields.shaped("gain", (N_EVENT_KINDS, grid.n_spread), "kinds, spread buckets")
    profile = fields.array("profile", 1, 0.0, 1e3)
    if not 1 <= len(profile) <= MAX_BINS:
        fields.fail("profile", f"must have 1 to {MAX_BINS:,} bins, got {len(profile):,}")


def _check_scalars(fields: _Fields) -> None:
    """The clock, the depth, the tick and the lot."""
    fields.scalar("start", 0.0, 1e7)
    fields.scalar("bin_seconds", 1e-3, 1e7)
    fields.scalar("depth", 1, MAX_DEPTH, int)
    fields.scalar("tick_size", 1e-12, 1e9)
    fields.scalar("lot_size", 1e-12, 1e12)


def _check_book(fields: _Fields) -> None:
    """The opening book: (levels, 4), whole lots >= 0 with some on each side, offsets within
    `MAX_TICKS` of the mid."""
    book = fields.array("book", 2, -MAX_LOTS, MAX_LOTS)
    if book.shape[1:] != (4,) or not 1 <= len(book) <= MAX_DEPTH:
        fields.fail(
            "book", f"must have shape (levels, 4) with 1 to {MAX_DEPTH:,} levels, got {book.shape}"
        )
    lots, offsets = book[:, [1, 3]], book[:, [0, 2]]
    if (lots < 0).any() or not (book[:, 1] > 0).any() or not (book[:, 3] > 0).any():
        fields.fail("book", "must hold lots >= 0, some on each side")
    if (lots != np.round(lots)).any():
        fields.fail("book", "must hold whole lots")
    if np.abs(offsets).max() > MAX_TICKS:
        fields.fail("book", f"offsets must lie within {MAX_TICKS:g} ticks of the mid")


def _check_peak(fields: _Fields, grid: StateGrid) -> None:
    """Some flow, at least `MIN_RATE` and at most `MAX_RATE` events a second at the busiest
    state and time of day."""
    model = fields.model
    baseline = model.mu.sum(axis=0).reshape(grid.shape)
    peak = float((baseline + baseline.transpose(0, 2, 1)).max() * model.profile.max())
    if not MIN_RATE <= peak <= MAX_RATE:
        fields.fail(
            "mu",
            f"and the profile give at most {peak:g} events a second; must be in "
            f"[{MIN_RATE:g}, {MAX_RATE:g}]",
        )


def _check_pool(fields: _Fields, grid: StateGrid) -> None:
    """Each state's pool (``meta["pool"]``), a state."""
    pool = np.asarray(fields.model.meta.get("pool", range(grid.cells)))
    if (
        pool.shape != (grid.cells,)
        or pool.dtype.kind not in "iu"
        or not ((pool >= 0) & (pool < grid.cells)).all()
    ):
        fields.fail("meta.pool", f"must give each of the {grid.cells} states a state")


def _check_marks(fields: _Fields, grid: StateGrid) -> None:
    """Each family of marks as many distributions as its definition holds on ``grid``, each
    a distribution (`_distribution_check`) of values within the family's range."""
    for name, family in fields.model.marks.items():
        count = FAMILIES[name].count(grid)
        if len(family) != count:
            fields.fail(f"marks.{name}", f"must hold {count} distributions, got {len(family)}")
        for i, (values, p) in enumerate(family):
            _distribution_check(f"marks.{name}.{i}", values, p, fields.fail, MARK_RANGES[name])


def _meta_check(meta: dict, fail) -> None:
    """What the judges read of a model's ``meta`` (`tradearena learn` writes it): the
    ``window`` learned from, [first, last] seconds after midnight with 0 <= first < last
    <= a week, and the ``tapes`` it came from, where given: each a table of strings, its
    ``name`` (a file name, no folder) and its ``digest``, ``ticker`` and ``date``
    (`envs.data.load.TapeIdentity`)."""
    if "window" in meta:
        window = meta["window"]
        ok = isinstance(window, list | tuple) and len(window) == 2
        ok = ok and all(isinstance(x, int | float) and not isinstance(x, bool) for x in window)
        if not (ok and 0 <= window[0] < window[1] <= MAX_WINDOW_SECONDS):
            fail(
                "meta.window",
                f"must be [first, last] seconds after midnight with 0 <= first < last <= "
                f"{MAX_WINDOW_SECONDS:,.0f}, got {reprlib.repr(window)}",
            )
    tapes = meta.get("tapes", [])
    fields = {"name", "digest", "ticker", "date"}
    ok = isinstance(tapes, list) and all(
        isinstance(t, dict)
        and "name" in t
        and set(t) <= fields
        and all(isinstance(v, str) for v in t.values())
        and t["name"]
        and Path(t["name"]).name == t["name"]
        for t in tapes
    )
    if not ok:
        fail(
            "meta.tapes",
            "must be a list of tables of a file name (name, no folder) and its digest, "
            f"ticker and date, got {reprlib.repr(tapes)}",
        )


def _distribution_check(name: str, values: np.ndarray, p: np.ndarray, fail, largest: float) -> None:
    """A mark's distribution: values and probabilities 1-D of one length (1 to `MAX_VALUES`),
    finite, values in [0, ``largest``], probabilities >= 0 summing to 1."""
    values, p = np.asarray(values), np.asarray(p)
    if values.dtype.kind not in "iuf" or p.dtype.kind not in "iuf":
        fail(name, "must hold real numbers")
    if values.ndim != 1 or p.shape != values.shape or not 1 <= len(values) <= MAX_VALUES:
        fail(
            name,
            f"needs 1 to {MAX_VALUES:,} values and as many probabilities, got "
            f"{values.shape} and {p.shape}",
        )
    if not (np.isfinite(values).all() and np.isfinite(p).all()):
        fail(name, "must be finite")
    if values.min() < 0 or values.max() > largest:
        fail(name, f"values must lie in [0, {largest:g}], got [{values.min():g}, {values.max():g}]")
    if p.min() < 0 or abs(p.sum() - 1.0) > 1e-6:
        fail(name, f"probabilities must be >= 0 and sum to 1, got sum {p.sum():g}")
