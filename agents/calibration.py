"""Calibrating the reference policies to the market they trade in, as practitioners do.

Everything here is estimated on *calibration sessions*: sessions of the market drawn from
``SeedSequence(CALIBRATION_SEED, spawn_key=(i,))``, a stream of its own, apart from every
experiment's training and test sessions (those are spawned from the experiment's
``root_seed`` with longer spawn keys), so a reference is never tuned on the sessions it is
scored on.

- `calibrate_market`: the mid's volatility sigma (ticks per step: the standard deviation,
  ddof 1, of the mid's change over a decision step) and the fill intensity
  ``lambda(delta) = A exp(-kappa delta)`` of a quote ``delta`` ticks from the mid (per step),
  from the market's own trades: a quote at distance delta on the ask (bid) side would have
  been reached in a step when a buyer- (seller-) initiated execution of that step printed at
  least delta ticks above (below) the mid at the step's start; with P(delta) the fraction
  of (step, side) pairs where it was, ``lambda = -ln(1 - P)`` and ``ln A - kappa delta`` is
  the least-squares line through ``ln lambda`` (a trade-through estimator on the market's
  own flow; it ignores the queue ahead of a quote, so it is an upper bound on a seat's
  fills). Replayed
  days and synthetic populations alike: the sessions run with ``record`` on and the book's
  log gives the executions.
- `best_parameter`: the value of a grid under which an agent's test Sharpe ratio (mean PnL
  over its standard deviation, ddof 1) is highest over tuning sessions drawn as above;
  the references' risk aversion and threshold are chosen with it.

Both are results: computed once per process (`once`), and kept in a file (`keep`) that a
run directory holds and every process of the run reuses (`reuse`) instead of computing
them again. A check that only builds the references (`untuned`: ``tradearena run
--dry-run``) calibrates their markets but leaves the tuning, hundreds of sessions, to the run.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from tradearena.agents.base import Agent
from tradearena.envs.data.tapes import Event
from tradearena.envs.seats import SeatedMarket
from tradearena.envs.spec import MarketSpec

__all__ = [
    "CALIBRATION_SEED",
    "TUNING_SESSIONS",
    "Calibration",
    "Tuning",
    "best_parameter",
    "calibrate_market",
    "calibration_seeds",
    "fill_intensity",
    "keep",
    "once",
    "reuse",
    "trade_reach",
    "tuned",
    "untuned",
]

T = TypeVar("T")

CALIBRATION_SEED = 314_159
"""Entropy of the calibration and tuning sessions (spawn keys (i,), apart from experiments')."""
TUNING_SESSIONS = 64
"""Sessions over which `best_parameter` compares its grid's values."""
DISTANCES = np.arange(0.5, 10.01, 0.5)
"""Distances from the mid (ticks) at which fill intensities are estimated."""


@dataclass(frozen=True)
class Calibration:
    """A market's estimated dynamics: ``sigma`` (ticks per step), the fill intensity
    ``A exp(-kappa delta)`` (``A`` per step, ``kappa`` per tick) and what it rests on
    (``sessions``, ``steps`` observed, ``distances`` used in the fit, ticks)."""

    sigma: float
    A: float
    kappa: float
    sessions: int
    steps: int
    distances: tuple[float, ...]

    def to_dict(self) -> dict[str, float | int | list[float]]:
        return {**dataclasses.asdict(self), "distances": list(self.distances)}


@dataclass(frozen=True)
class Tuning:
    """The grid value with the highest Sharpe ratio over ``sessions`` tuning sessions, with
    the Sharpe ratio of every grid value (``sharpes``, in grid order)."""

    best: float
    grid: tuple[float, ...]
    sharpes: tuple[float, ...]
    sessions: int


def calibration_seeds(n: int) -> list[np.random.SeedSequence]:
    """The first ``n`` calibration / tuning session seeds."""
    return [np.random.SeedSequence(CALIBRATION_SEED, spawn_key=(i,)) for i in range(n)]


def calibrate_market(spec: MarketSpec, sessions: int = 16) -> Calibration:
    """sigma, A and kappa of ``spec``'s market from ``sessions`` calibration sessions with no
    seat (see the module docstring); computed once per spec and process. Within `untuned` (a
    check) one not computed before stops at the first session after which it can be
    estimated (whether it can is all a check asks) and is kept nowhere."""
    if sessions < 2:
        raise ValueError(f"calibration needs at least 2 sessions, got {sessions}")
    key = ("market", spec, sessions)
    if _LEFT is not None and _key(key) not in _DONE:
        return _calibrate(spec, sessions, early=True)
    return once(key, lambda: _calibrate(spec, sessions))


_DONE: dict[tuple, Calibration | Tuning] = {}
_PORTABLE: set[tuple] = set()  # the keys of _DONE whose specs have tables (see `keep`)
_KINDS = {"Calibration": Calibration, "Tuning": Tuning}


def once(key: tuple, compute: Callable[[], T]) -> T:
    """``compute()``, computed once per process for ``key``: a tuple whose `MarketSpec`
    items stand for their tables (calibrations and tunings are pure functions of the spec),
    or read from a file of `keep` (see `reuse`)."""
    specs = [_spec_key(k) for k in key if isinstance(k, MarketSpec)]
    key = _key(key)
    if key not in _DONE:
        _DONE[key] = compute()
        if all(portable for _, portable in specs):
            _PORTABLE.add(key)
    return _DONE[key]


def _key(key: tuple) -> tuple:
    """``key`` as `once` keeps it: each `MarketSpec` by its table (`_spec_key`)."""
    return tuple(_spec_key(k)[0] if isinstance(k, MarketSpec) else k for k in key)


def keep(path: str | Path) -> None:
    """Write this process's calibrations and tunings to the JSON file ``path`` (with those
    it holds already): a list of ``{"key": [...], "kind": "Calibration" | "Tuning",
    "value": {...}}``, keyed by the markets' tables; those of specs without a table (a
    `Tape` object) are left out. Written whole, then renamed into place."""
    path = Path(path)
    reuse(path)
    entries = [
        {"key": list(key), "kind": type(value).__name__, "value": dataclasses.asdict(value)}
        for key, value in _DONE.items()
        if key in _PORTABLE
    ]
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(entries, indent=1) + "\n")
    temporary.replace(path)


def reuse(path: str | Path) -> None:
    """Take the calibrations and tunings of the file ``path`` (written by `keep`; none when
    it does not exist) as this process's: `once` then returns them without computing."""
    path = Path(path)
    if not path.exists():
        return
    for entry in json.loads(path.read_text()):
        key = tuple(entry["key"])
        fields = {k: tuple(v) if isinstance(v, list) else v for k, v in entry["value"].items()}
        _DONE.setdefault(key, _KINDS[entry["kind"]](**fields))
        _PORTABLE.add(key)


def _spec_key(spec: MarketSpec) -> tuple[str, bool]:
    """A key of a spec and whether it is portable: its table (True), or its repr for a spec
    that has none (a `Tape` object; False)."""
    try:
        return json.dumps(spec.to_table(), sort_keys=True), True
    except TypeError:
        return repr(spec), False


def _calibrate(spec: MarketSpec, sessions: int, early: bool = False) -> Calibration:
    """The `Calibration` of ``sessions`` sessions; ``early``: of the first sessions after
    which the fill intensity can be fitted (as many more can only fit it too)."""
    market = dataclasses.replace(spec, record=True).market(0)
    moves: list[np.ndarray] = []
    reach: list[np.ndarray] = []  # per step and side: the farthest execution from the mid
    for seed in calibration_seeds(sessions):
        market.reset(seed)
        first = len(market.book.log)
        while not market.done:
            market.step()
        mids = market.mids()
        moves.append(np.diff(mids))
        log = np.array(market.book.log[first:])
        reach.append(trade_reach(log, mids, market.open_time, market.step_seconds))
        if early and _reached(np.concatenate(reach))[1].sum() >= 2:
            break
    move = np.concatenate(moves)
    A, kappa, used = fill_intensity(np.concatenate(reach))
    return Calibration(
        sigma=float(np.std(move[np.isfinite(move)], ddof=1)),
        A=A,
        kappa=kappa,
        sessions=len(moves),
        steps=len(move),
        distances=used,
    )


def fill_intensity(
    reach: np.ndarray, distances: np.ndarray = DISTANCES
) -> tuple[float, float, tuple[float, ...]]:
    """(A, kappa, distances used) of ``lambda(delta) = A exp(-kappa delta)`` from ``reach``
    (n,): how far from the mid (ticks) the executions of each of n (step, side) pairs went.
    P(delta) is the fraction that reached ``distances`` (ticks), lambda = -ln(1 - P), and the
    fit is least squares of ln lambda on delta over the distances where 0 < P < 1 with at
    least 5 pairs on each side of the threshold."""
    n = len(reach)
    hits, usable = _reached(reach, distances)
    if usable.sum() < 2:
        raise ValueError(
            f"too few executions ({n} step sides) to fit fill intensities at two distances"
        )
    p = hits[usable] / n
    slope, intercept = np.polyfit(distances[usable], np.log(-np.log1p(-p)), 1)
    return float(math.exp(intercept)), float(-slope), tuple(float(d) for d in distances[usable])


def _reached(reach: np.ndarray, distances: np.ndarray = DISTANCES) -> tuple[np.ndarray, np.ndarray]:
    """Per distance, how many of ``reach``'s pairs reached it, and whether a fit may use it
    (at least 5 pairs on each side of it: both counts only grow with more sessions)."""
    hits = (np.asarray(reach)[:, None] >= distances[None, :]).sum(axis=0)
    return hits, (hits >= 5) & (len(reach) - hits >= 5)


def trade_reach(
    log: np.ndarray, mids: np.ndarray, open_time: float, step_seconds: float
) -> np.ndarray:
    """Per step and side, (2 * steps,) as (step 0 ask, step 0 bid, step 1 ask, ...): how far
    beyond the step's opening mid (ticks) the step's executions printed on that side, 0 with
    none. ``log`` (n, 6): LOBSTER messages (time s, type, id, size, price ticks, direction:
    the resting order's side); ``mids`` (steps + 1,): the mid at the open and after each
    step, ticks."""
    steps = len(mids) - 1
    reach = np.zeros((steps, 2))
    if len(log):
        executed = log[log[:, 1] == Event.EXECUTE]
        step = ((executed[:, 0] - open_time) // step_seconds).astype(np.int64)
        inside = (step >= 0) & (step < steps)
        executed, step = executed[inside], step[inside]
        side = executed[:, 5]  # +1: a bid was hit (seller-initiated)
        distance = np.where(side > 0, mids[step] - executed[:, 4], executed[:, 4] - mids[step])
        np.maximum.at(reach, (step, (side > 0).astype(np.int64)), np.maximum(distance, 0.0))
    return reach.reshape(-1)


def best_parameter(
    spec: MarketSpec,
    make_agent: Callable[[float], Agent],
    grid: Sequence[float],
    sessions: int = TUNING_SESSIONS,
) -> Tuning:
    """The value of ``grid`` whose agent (``make_agent(value)``, acting greedily) has the
    highest Sharpe ratio of PnL over ``sessions`` tuning sessions of ``spec``'s market (ties:
    the first); a Sharpe ratio is NaN (never best) when the PnL does not vary."""
    if sessions < 2 or not grid:
        raise ValueError(f"need at least 2 sessions and a non-empty grid, got {sessions}")
    seeds = calibration_seeds(sessions)
    sharpes = []
    for value in grid:
        seated = SeatedMarket(spec, [make_agent(value)])
        pnl = np.array([seated.play(seed)[0]["pnl"] for seed in seeds])
        sd = pnl.std(ddof=1)
        sharpes.append(float(pnl.mean() / sd) if sd > 0 else math.nan)
    finite = [s if math.isfinite(s) else -math.inf for s in sharpes]
    best = int(np.argmax(finite))
    return Tuning(float(grid[best]), tuple(float(g) for g in grid), tuple(sharpes), sessions)


def tuned(
    key: tuple,
    spec: MarketSpec,
    make_agent: Callable[[float], Agent],
    grid: Sequence[float],
    record: dict[str, Any],
    name: str,
) -> float:
    """The `best_parameter` of ``grid`` on ``spec``'s market, computed once per process for
    ``key`` (`once`); the Sharpe ratio of every grid value goes into ``record[name +
    "_sharpes"]``."""
    if _LEFT is not None and _key((*key, spec)) not in _DONE:
        _LEFT.append(f"{name} over {len(grid)} values x {TUNING_SESSIONS} sessions")
        return grid[0]
    tuning = once((*key, spec), lambda: best_parameter(spec, make_agent, grid))
    record[f"{name}_sharpes"] = dict(zip(tuning.grid, tuning.sharpes))
    return tuning.best


_LEFT: list[str] | None = None  # within `untuned`: the tunings left to the run


@contextmanager
def untuned() -> Iterator[list[str]]:
    """Within it, `tuned` tunes nothing it has not tuned before: it gives its grid's first
    value (kept nowhere) and adds what it left (``"gamma over 7 values x 64 sessions"``) to
    the list this yields. For a check that the references build in their markets, whose
    calibration (`calibrate_market`) still runs: a tuning cannot fail, it only chooses."""
    global _LEFT
    _LEFT = []
    try:
        yield _LEFT
    finally:
        _LEFT = None
