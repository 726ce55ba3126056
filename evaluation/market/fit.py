"""Fitting a background population to a real day by simulated moments (`tradearena fit`).

The real day's facts (`evaluation.analysis.realism.day_facts` of its level-1 view) are the
targets; a candidate, a point of the population's space of `market.search.FitParameter`, is
scored by simulating ``days`` sessions of its market and comparing the mean of each simulated
fact with the target, in units of the target's tolerance (its 95% interval's half-width over
the day's hours, or 25% of its value, whichever is wider)::

    distance(theta) = mean over facts f of ((mean_days f(theta) - f_real) / tolerance_f)^2

The search is `market.search.fit` (CMA-ES, with its memory of evaluations). The candidates of
a generation are jobs on the project's executors (local, or Ray locally or on a cluster).
"""

from __future__ import annotations

import json
import math
import os
import re
import time
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import tomli_w
from tqdm import tqdm

from tradearena.envs.errors import OutputError, UserError, into, not_one_of, replacing
from tradearena.envs.spec import MarketSpec
from tradearena.evaluation.experiment.parallel import Executor, Study
from tradearena.evaluation.experiment.store import JobResult
from tradearena.evaluation.market.search import FitParameter, FitResult, fit
from tradearena.evaluation.market.sources import clock, day_span, parse_source, simulate_days

__all__ = ["FitTarget", "fit_day", "objective", "write_market"]


@dataclass(frozen=True)
class FitTarget:
    """A real day's fact: its ``value`` and ``tolerance`` (same unit), the scale of the
    distance."""

    value: float
    tolerance: float


def objective(simulated: Sequence[Mapping[str, float]], targets: Mapping[str, FitTarget]) -> float:
    """The simulated-moments distance of one candidate: ``simulated`` holds one dict of facts
    per simulated day; facts that are NaN on every day, or whose target is NaN, are left out.
    0 is a perfect match; 1 means every fact is off by its tolerance."""
    terms = []
    for name, target in targets.items():
        values = np.array([day.get(name, math.nan) for day in simulated], dtype=float)
        if not np.isfinite(target.value) or not np.isfinite(values).any():
            continue
        terms.append(((np.nanmean(values) - target.value) / target.tolerance) ** 2)
    if not terms:
        raise UserError("fit: no fact is available on both the real and the simulated days")
    return float(np.mean(terms))


def _parent(table: Any, path: str) -> tuple[Any, int | str]:
    """The table or list holding the number at ``path`` (``"traders.1.arrival_rate"``: key,
    list index, key), and its key or index there."""
    *parents, last = path.split(".")
    node = table
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node, int(last) if isinstance(node, list) else last


def get_path(table: Mapping[str, Any], path: str) -> float:
    """The number at ``path`` in ``table``."""
    node, key = _parent(table, path)
    return float(node[key])


def set_path(table: dict, path: str, value: float) -> None:
    """``table`` with the number at ``path`` replaced, in place."""
    node, key = _parent(table, path)
    node[key] = value


# --------------------------------------------------------------------- a day's population
FITTED_FACTS = (
    "return_sd_1min_bp",
    "return_sd_5min_bp",
    "return_kurtosis_1min",
    "acf_return_1min_lag1",
    "day_range_pct",
    "hourly_move_mean_bp",
    "spread_mean_ticks",
    "trade_size_mean",
    "trade_size_median",
    "round_lot_share",
    "interarrival_cv",
    "count_dispersion_10s",
    "volume_last30_ratio",
    "new_orders_per_min",
    "fills_per_min",
    "cancel_to_order",
)
"""The facts a fit matches: those the flow mechanisms can move (`evaluation.analysis.realism`)."""

RELATIVE_TOLERANCE, ABSOLUTE_TOLERANCE = 0.25, 0.02
"""A fact's tolerance: 25% of the real value, and at least 0.02 (a correlation, a share)."""


def targets(days: Sequence[Mapping[str, float]]) -> dict[str, FitTarget]:
    """The fitted facts of the real ``days`` (their mean over days), each with its tolerance:
    the wider of 25% of the value and 0.02."""
    out = {}
    for name in FITTED_FACTS:
        values = np.array([day.get(name, math.nan) for day in days], dtype=float)
        value = float(np.nanmean(values)) if np.isfinite(values).any() else math.nan
        tolerance = max(RELATIVE_TOLERANCE * abs(value), ABSOLUTE_TOLERANCE)
        out[name] = FitTarget(value, tolerance if math.isfinite(value) else 1.0)
    return out


def light_population(
    tick_size: float, price: int, open_time: float, day_steps: int = 390
) -> dict[str, Any]:
    """The light population carried to a day's tick and price, every flow mechanism on at a
    middling setting: the starting point and layout of `LIGHT_SPACE`. A market table
    (`MarketSpec`'s fields): days of ``day_steps`` one-minute steps from ``open_time``
    (seconds after midnight), sessions of up to 60 of them."""
    sizes = {"round_share": 0.4, "lot": 100, "lots_mean": 1.5, "odd_median": 30, "odd_sigma": 0.8}
    return {
        "task": "making",
        "tick_size": tick_size,
        "initial_price": int(price),
        "open_time": float(open_time),
        "n_steps": min(60, day_steps),
        "day_steps": day_steps,
        "traders": [
            {
                "type": "Noise",
                "n_agents": 100,
                "sizes": dict(sizes),
                "profile": {"shape": "u", "ratio": 2.0, "bins": 13},
            },
            {
                "type": "ZeroIntelligence",
                "n_agents": 20,
                "arrival_rate": 1 / 60,
                "tick_scale": 14.0,
                "sigma": 0.05,
                "volatile_sigma": 0.2,
                "horizon": 600.0,
                "hawkes": {"branching": 0.5, "decay": 0.2},
                "profile": {"shape": "u", "ratio": 2.0, "bins": 13},
                "sizes": dict(sizes),
            },
            {
                "type": "MarketMaker",
                "n_agents": 1,
                "period": 30.0,
                "levels": 5,
                "half_spread": 6,
                "spacing": 4,
                "size": 100,
                "hawkes": {"branching": 0.5, "decay": 1.0},
            },
            {"type": "Momentum", "n_agents": 4},
            {"type": "Metaorder", "n_agents": 4, "parent_rate": 1 / 1800},
        ],
    }


LIGHT_SPACE = (
    FitParameter("traders.0.n_agents", 20, 2000, log=True),
    FitParameter("traders.1.arrival_rate", 1 / 600, 0.5, log=True),
    FitParameter("traders.1.tick_scale", 2.0, 40.0, log=True),
    FitParameter("traders.1.sigma", 0.005, 0.5, log=True),
    FitParameter("traders.1.volatile_sigma", 0.05, 3.0, log=True),
    FitParameter("traders.1.hawkes.branching", 0.0, 0.9),
    FitParameter("traders.1.profile.ratio", 1.0, 6.0),
    FitParameter("traders.1.sizes.round_share", 0.0, 0.9),
    FitParameter("traders.1.sizes.odd_median", 5.0, 150.0, log=True),
    FitParameter("traders.2.half_spread", 1, 20),
    FitParameter("traders.2.period", 0.5, 60.0, log=True),
    FitParameter("traders.2.levels", 1, 10),
    FitParameter("traders.2.hawkes.branching", 0.0, 0.95),
    FitParameter("traders.2.hawkes.decay", 0.1, 20.0, log=True),
    FitParameter("traders.4.parent_rate", 1 / 20000, 1 / 100, log=True),
)
"""What a fit of the light population moves (paths into `light_population`'s table)."""

INTEGER_PATHS = {"traders.0.n_agents", "traders.2.half_spread", "traders.2.levels"}
"""Parameters a trader takes as integers: rounded before the market is built."""


def candidate_table(base: Mapping[str, Any], parameters: Mapping[str, float]) -> dict[str, Any]:
    """A copy of the market table ``base`` with ``parameters`` (path -> value) set (integers
    rounded where a trader takes one)."""
    table = json.loads(json.dumps(base))
    for path, value in parameters.items():
        set_path(table, path, int(round(value)) if path in INTEGER_PATHS else float(value))
    return table


# ------------------------------------------------------------------------------ the command
FIT_SEED = 10_000
"""The fit's simulated days use seeds from here on: apart from the scorecard's (0 to 99), on
which a fitted market is then judged."""


@dataclass(frozen=True)
class Candidate:
    """A fit's candidate to simulate: its ``market`` table, the number of ``days`` and the
    part of each day the fit learns from (``start``, ``end``: seconds after midnight, or
    None)."""

    market: dict[str, Any]
    days: int
    start: float | None = None
    end: float | None = None


def day_job(job: Study[Candidate]) -> JobResult:
    """One candidate's simulated days (``job.work``); the result's records are the days'
    fact dicts (`day_facts`), in seed order, from seed `FIT_SEED`."""
    from tradearena.evaluation.analysis.realism import day_facts

    start = time.perf_counter()
    candidate = job.work
    try:
        spec = MarketSpec(**candidate_market(candidate.market))
        span = {"start": candidate.start, "end": candidate.end}
        views = simulate_days(spec, candidate.days, first_seed=FIT_SEED, **span)
        facts = tuple(day_facts(view) for view in views)
    except Exception:  # noqa: BLE001 - a candidate the market refuses scores as the worst
        return JobResult(job.id, job.seed, (), time.perf_counter() - start, traceback.format_exc())
    return JobResult(job.id, job.seed, facts, time.perf_counter() - start)


def candidate_market(table: Mapping[str, Any]) -> dict[str, Any]:
    """A market table as `MarketSpec` takes it (trader tables as tuples)."""
    return {**table, "traders": tuple(table["traders"])}


def fit_day(
    tapes: Sequence[str],
    *,
    population: str = "light",
    budget: int = 400,
    minutes: float | None = None,
    days: int = 8,
    restarts: int = 3,
    executor: Executor,
    memory: Path | None = None,
    start: float | None = None,
    end: float | None = None,
) -> tuple[FitResult, dict[str, Any], dict[str, FitTarget]]:
    """Fit ``population`` to the real days of ``tapes`` (`evaluation.market.sources.Source`),
    learning only from what lies between ``start`` and ``end`` (seconds after midnight; None:
    the open, the close) of each day, simulated days seen the same way: (the result, the
    fitted market table, a whole day long, and the targets). The search spends its
    ``budget`` of candidates, and so gives the same fit on any machine; with ``minutes`` it
    also stops once they have passed (then the fit depends on the machine's speed)."""
    from tradearena.evaluation.analysis.realism import day_facts

    if population not in POPULATIONS:
        raise UserError(f"--population: {not_one_of(population, sorted(POPULATIONS))}")
    real = [parse_source(name) for name in tapes]
    for source in real:
        if source.simulated:
            raise UserError(f"{source.name}: a fit needs a real day (a tape), not a market")
    views = [view for source in real for view in source.read(1, start=start, end=end).days]
    first = real[0].read(1).days[0]  # the whole session: the fitted market's day
    mids = (first.bid + first.ask) / 2
    price = int(round(float(mids[np.isfinite(mids)][0])))
    day_steps = max(int(round((first.close - first.open) / 60)), 1)
    base, space = POPULATIONS[population](first.tick_size, price, first.open, day_steps)
    goal = targets([day_facts(view) for view in views])

    def evaluate(candidates: list[dict[str, float]]) -> list[float]:
        jobs = [
            Study(f"candidate-{i}", 0, Candidate(candidate_table(base, c), days, start, end))
            for i, c in enumerate(candidates)
        ]
        results = {r.job_id: r for r in executor.run(jobs)}
        return [
            objective(results[job.id].records, goal) if results[job.id].error is None else math.inf
            for job in jobs
        ]

    origin = {p.path: get_path(base, p.path) for p in space}
    with tqdm(total=budget, unit="candidate", dynamic_ncols=True) as bar:

        def progress(spent: int, best: float) -> None:
            bar.set_postfix(best=f"{best:.3g}", refresh=False)
            bar.update(spent - bar.n)

        result = fit(
            space,
            evaluate,
            start=origin,
            budget=budget,
            seconds=math.inf if minutes is None else 60.0 * minutes,
            restarts=restarts,
            memory=memory,
            progress=progress,
        )
    return result, candidate_table(base, result.parameters), goal


POPULATIONS = {
    "light": lambda *day: (light_population(*day), LIGHT_SPACE),
}
"""The populations a fit can start from: name -> (tick $, price ticks, open s, day steps) ->
(market table, space)."""


def check_out(out: Path, tapes: Sequence[str], files: Sequence[Path] = ()) -> None:
    """Refuse, before any work, an ``out`` that is not a .toml file, whose ``files`` (it,
    by default) would replace a file of one of the ``tapes`` or a directory, or whose folder
    (or the nearest that exists above it, where it would be made) cannot be written (a
    read-only disk, found before the fit rather than after it)."""
    if out.suffix != ".toml":
        raise UserError(f"--out {out}: the market file written must be a .toml file")
    folder = next(p for p in out.absolute().parents if p.exists())
    if not (folder.is_dir() and os.access(folder, os.W_OK | os.X_OK)):
        raise OutputError(f"cannot write {out}: {folder} is not a folder that can be written")
    taken = {p.resolve(): tape for tape in tapes for p in _tape_files(Path(tape))}
    for path in files or [out]:
        if path.resolve() in taken:
            raise UserError(
                f"--out {out}: would write {path}, a file of the tape {taken[path.resolve()]}"
            )
        if path.exists() and not path.is_file():
            raise UserError(f"--out {out}: {path} is in the way (not a file)")


def _tape_files(tape: Path) -> list[Path]:
    """A tape's files: the file named and, for a LOBSTER message file, its orderbook file; for
    a directory, what it holds."""
    if tape.is_dir():
        return [p for p in tape.iterdir() if p.is_file()]
    return [tape, tape.with_name(tape.name.replace("_message_", "_orderbook_"))]


def write_market(
    path: Path,
    table: Mapping[str, Any],
    result: FitResult,
    tapes: Sequence[str],
    window: tuple[float | None, float | None] = (None, None),
) -> Path:
    """``path``: an experiment file (the quickstart's agents on the fitted market) whose
    ``[market]`` table `tradearena run`, `tradearena realism` and `load_market` read; its
    header says what was fitted to what (the tapes, the ``window`` of each day learned from,
    seconds after midnight or None, and the version of tradearena), and each parameter's
    spread over the restarts; its ``[learned_from]`` table says the tapes and the window
    (None made the first day's open or close) for the judges."""
    from tradearena.agents.saving import project_version

    spread = result.spread()
    start, end = window
    learned = {"tapes": [Path(t).name for t in tapes], "window": list(day_span(tapes[0], *window))}
    lines = [
        f"# A population fitted to {', '.join(Path(t).name for t in tapes)} by `tradearena fit`",
        f"# (simulated moments, CMA-ES): distance {result.distance:.4g} after "
        f"{result.evaluations} candidates in {result.seconds / 60:.1f} min"
        + (" (--minutes stopped it first: the best so far)" if result.stopped_early else ""),
        f"# Learned from {'the open' if start is None else clock(start)} to "
        f"{'the close' if end is None else clock(end)} of each day, with tradearena "
        f"{project_version()}.",
        "# Each fitted parameter: its value; mean and sd over the restarts' bests (a large sd",
        "# is what the day does not identify; one restart has none).",
    ]
    for name, value in result.parameters.items():
        mean, sd = spread[name]
        over = f"restarts: {mean:.4g} +- {sd:.2g}" if len(result.restarts) > 1 else "one restart"
        lines.append(f"#   {name} = {value:.6g}   ({over})")
    with into(path.parent), replacing(path) as temporary:
        text = tomli_w.dumps(experiment_table(path.stem, table) | {"learned_from": learned})
        temporary.write_text("\n".join(lines) + "\n\n" + text)
    return path


def experiment_table(name: str, market: Mapping[str, Any]) -> dict[str, Any]:
    """An experiment of the quickstart's agents (Q-learning, the reference, hold) on
    ``market``: what `tradearena fit` writes around the market it fits or learns; ``name``
    (the output file's stem) made a plain file name, as an experiment's must be."""
    return {
        "kind": "compare",
        "name": re.sub(r"[^A-Za-z0-9_.-]", "_", name).strip(".") or "market",
        "seeds": 4,
        "root_seed": 0,
        "market": dict(market),
        "training": {"episodes": 600, "evaluate_every": 50, "evaluate_episodes": 10},
        "testing": {"episodes": 30},
        "agents": [{"id": "q_learning"}, {"id": "avellaneda_stoikov"}, {"id": "hold"}],
    }
