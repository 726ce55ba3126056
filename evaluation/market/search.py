"""The search of a fit (`market.fit`): CMA-ES over a space of `FitParameter`, remembering
every evaluation in a file so that an interrupted search resumes.

CMA-ES (Hansen's `cma`, a well-kept derivative-free optimiser that copes with the noise of
simulated moments and needs no gradient) searches the unit cube the space maps onto its
bounds (log-scaled where a parameter spans decades), from ``restarts`` independent starts.
Every evaluation is appended to the memory (`Evaluations`, ``evaluations.jsonl`` in the fit's
folder), so an interrupted fit resumes where it stopped (the optimiser is seeded: it asks the
same candidates again and finds their scores there). Each restart's best candidate is kept;
the spread of each parameter over the restarts' bests says what the day does not identify.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tradearena.envs.errors import UserError

__all__ = ["Evaluations", "FitParameter", "FitResult", "fit"]


@dataclass(frozen=True)
class FitParameter:
    """One fitted number: ``path`` in the market table (``"traders.1.arrival_rate"``: key,
    list index, key), searched in [``low``, ``high``], on a log scale when ``log``."""

    path: str
    low: float
    high: float
    log: bool = False

    def __post_init__(self) -> None:
        if not self.low < self.high or (self.log and self.low <= 0):
            raise UserError(
                f"fit parameter {self.path}: bounds must be 0 < low < high on a log "
                f"scale, low < high otherwise; got [{self.low}, {self.high}]"
            )

    def value(self, unit: float) -> float:
        """The parameter at ``unit`` in [0, 1] (clipped)."""
        u = min(max(unit, 0.0), 1.0)
        if self.log:
            return float(
                math.exp(math.log(self.low) + u * (math.log(self.high) - math.log(self.low)))
            )
        return float(self.low + u * (self.high - self.low))

    def unit(self, value: float) -> float:
        """Inverse of `value`."""
        if self.log:
            return (math.log(value) - math.log(self.low)) / (
                math.log(self.high) - math.log(self.low)
            )
        return (value - self.low) / (self.high - self.low)


@dataclass
class FitResult:
    """What a fit found: the best ``parameters`` (path -> value) and their ``distance``, the best
    of each restart, the evaluations made, the seconds taken and whether the budget ran out
    before the optimiser converged (``stopped_early``)."""

    parameters: dict[str, float]
    distance: float
    restarts: list[tuple[dict[str, float], float]] = field(default_factory=list)
    evaluations: int = 0
    seconds: float = 0.0
    stopped_early: bool = False

    def spread(self) -> dict[str, tuple[float, float]]:
        """Each parameter's mean and standard deviation over the restarts' bests (relative
        to the mean: a large one is what the day does not identify)."""
        out = {}
        for name in self.parameters:
            values = np.array([best[name] for best, _ in self.restarts])
            sd = float(values.std(ddof=1)) if len(values) > 1 else math.nan
            out[name] = (float(values.mean()), sd)
        return out


class Evaluations:
    """The fit's memory: candidate key -> distance, appended to ``path`` (JSON lines) as each
    evaluation finishes, and read back on resume."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.known: dict[str, float] = {}
        if path is not None and path.exists():
            for line in path.read_text().splitlines():
                if line.strip():
                    row = json.loads(line)
                    self.known[row["key"]] = row["distance"]

    @staticmethod
    def key(units: Sequence[float], restart: int) -> str:
        return f"{restart}:" + ",".join(f"{u:.12g}" for u in units)

    def add(self, key: str, parameters: Mapping[str, float], distance: float) -> None:
        self.known[key] = distance
        if self.path is not None:
            with self.path.open("a") as out:
                row = {"key": key, "parameters": dict(parameters), "distance": distance}
                out.write(json.dumps(row) + "\n")


def fit(
    space: Sequence[FitParameter],
    evaluate: Callable[[list[dict[str, float]]], list[float]],
    *,
    start: Mapping[str, float] | None = None,
    budget: int = 400,
    seconds: float = math.inf,
    restarts: int = 3,
    popsize: int = 8,
    seed: int = 0,
    memory: Path | None = None,
    progress: Callable[[int, float], None] | None = None,
) -> FitResult:
    """Minimise ``evaluate`` (a batch of candidates, path -> value, to their distances) over
    ``space`` with CMA-ES: ``restarts`` runs of at most ``budget // restarts`` evaluations each,
    the first from ``start`` (the base population's values) and the others from random points,
    all stopping once ``seconds`` have passed. ``memory``: the JSON-lines file of `Evaluations`
    (resume). ``progress(evaluations, best distance)`` is called after each generation."""
    import cma

    if not space:
        raise UserError("fit: the space has no parameter to fit")
    memo = Evaluations(memory)
    rng = np.random.default_rng(seed)
    t0, spent, best = time.perf_counter(), 0, None
    result = FitResult({}, math.inf)
    for restart in range(restarts):
        if start is not None and restart == 0:
            x0 = [min(max(p.unit(start[p.path]), 0.05), 0.95) for p in space]
        else:
            x0 = list(rng.uniform(0.2, 0.8, len(space)))
        options = {
            "bounds": [0.0, 1.0],
            "popsize": popsize,
            "seed": seed * 1000 + restart + 1,
            "verbose": -9,
        }
        # CMA-ES needs two coordinates at least: a one-parameter space gets an inert second
        es = cma.CMAEvolutionStrategy(x0 + [0.5] * (len(x0) < 2), 0.25, options)
        restart_best: tuple[dict[str, float], float] | None = None
        allowance = spent + max(budget // restarts, popsize)
        while not es.stop() and spent + popsize <= allowance:
            if time.perf_counter() - t0 > seconds:
                result.stopped_early = True
                break
            units = es.ask()
            candidates = [{p.path: p.value(u) for p, u in zip(space, x)} for x in units]
            keys = [Evaluations.key(x[: len(space)], restart) for x in units]
            todo = [i for i, k in enumerate(keys) if k not in memo.known]
            for i, distance in zip(todo, evaluate([candidates[i] for i in todo])):
                memo.add(keys[i], candidates[i], distance)
            distances = [memo.known[k] for k in keys]
            es.tell(units, distances)
            spent += len(units)
            for candidate, distance in zip(candidates, distances):
                if restart_best is None or distance < restart_best[1]:
                    restart_best = (candidate, distance)
            if progress is not None:
                progress(spent, min(restart_best[1], best[1] if best else math.inf))
        if restart_best is not None:
            result.restarts.append(restart_best)
            if best is None or restart_best[1] < best[1]:
                best = restart_best
        if result.stopped_early:
            break
    if best is None:
        raise UserError("fit: the budget ended before any candidate was evaluated")
    result.parameters, result.distance = best
    result.evaluations, result.seconds = spent, time.perf_counter() - t0
    return result
