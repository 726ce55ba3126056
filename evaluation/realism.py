"""The realism scorecard: days of real tapes and of simulated markets, seen as a level-1 file
shows them, and their stylized facts side by side (``tradearena realism``).

A source is a tape (a LOBSTER message file with its orderbook file, or a converted
recording's directory: one day) or a market (an experiment file's ``[market]`` table or a
Gymnasium id: ``days`` sessions with seeds 0, 1, ..., each recorded as a tape). Both become
`DayView` s through `tape_view`, so a simulated day is measured exactly as a real one: only
the messages a level-1 file holds, between the session's open and close.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from tradearena.envs.data.load import load_tape
from tradearena.envs.data.tapes import EMPTY_ASK, EMPTY_BID, Event, Tape
from tradearena.envs.errors import UserError, did_you_mean
from tradearena.envs.simulator.recording import synthetic_tape
from tradearena.envs.spec import SYNTHETIC, SYNTHETIC_DAY_STEPS, MarketSpec
from tradearena.evaluation.analysis.realism import (
    DayView,
    day_facts,
    distribution_distances,
    fact_distance,
    interval,
    mean_facts,
    not_available,
    samples,
    summary_score,
)
from tradearena.evaluation.config import load_market

__all__ = [
    "COLUMNS",
    "Measurement",
    "Source",
    "format_scorecard",
    "measure",
    "realism",
    "read_source",
    "scorecard",
    "simulate_days",
    "tape_view",
    "write_figures",
]

COLUMNS = ("fact", "source", "value", "low", "high", "distance")
"""The scorecard's columns (``scorecard.csv``)."""
_LOBSTER_SESSION = re.compile(r"_(\d+)_(\d+)_message_\d+$")
"""A LOBSTER file name's session: start and end, milliseconds after midnight."""
_ALWAYS_SHOWN = (Event.EXECUTE, Event.EXECUTE_HIDDEN, Event.CROSS, Event.HALT)
"""Messages a level-1 file holds whether or not the best quotes change."""


@dataclass(frozen=True)
class Source:
    """One scorecard column: ``label`` (a file's stem or an id), its ``days`` and whether they
    were ``simulated`` (a market's sessions) or read (a tape's one day)."""

    label: str
    days: list[DayView]
    simulated: bool


# ------------------------------------------------------------------------------ the view
def tape_view(tape: Tape, open: float | None = None, close: float | None = None) -> DayView:
    """The level-1 view of ``tape`` between ``open`` and ``close`` (seconds after midnight;
    default: the first message's second, and the last's rounded up): the messages after which
    the best bid or ask (price or size) changed, plus every execution, cross and halt, with
    ``open <= time <= close``. Prices stay in the tape's ticks; an empty side is NaN."""
    if tape.book is None:
        raise UserError(f"{tape.source}: the realism scorecard needs the tape's orderbook file")
    times = tape.messages["time"]
    open = math.floor(times[0]) if open is None else open
    close = math.ceil(times[-1]) if close is None else close
    top = tape.book[:, :4]
    changed = np.r_[True, (top[1:] != top[:-1]).any(axis=1)]
    keep = changed | np.isin(tape.messages["type"], _ALWAYS_SHOWN)
    keep &= (times >= open) & (times <= close)
    m, top = tape.messages[keep], top[keep].astype(float)
    ask, ask_size, bid, bid_size = top.T
    return DayView(
        time=m["time"].astype(float),
        kind=m["type"].astype(np.int64),
        size=m["size"].astype(np.int64),
        direction=m["direction"].astype(np.int64),
        bid=np.where(bid == EMPTY_BID, np.nan, bid),
        ask=np.where(ask == EMPTY_ASK, np.nan, ask),
        bid_size=bid_size,
        ask_size=ask_size,
        tick_size=tape.tick_size,
        open=float(open),
        close=float(close),
    )


def simulate_days(spec: MarketSpec, days: int, first_seed: int = 0) -> list[DayView]:
    """``days`` sessions of ``spec``'s market (seeds ``first_seed`` onwards), each a full day
    (``day_steps``, default 390 steps, or ``n_steps`` if longer), recorded as a tape with its
    top level and seen through `tape_view` from the open to the close."""
    steps = max(spec.day_steps or SYNTHETIC_DAY_STEPS, spec.n_steps or 0)
    full = replace(spec, n_steps=steps, day_steps=None, window_steps=None, tape=None)
    views = []
    for seed in range(first_seed, first_seed + days):
        market = full.market(0)
        tape = synthetic_tape(
            seed,
            traders=market.traders,
            levels=1,
            n_steps=market.n_steps,
            step_seconds=market.step_seconds,
            open_time=market.open_time,
            warmup_seconds=market.warmup_seconds,
            tick_size=market.tick_size,
            initial_price=market.initial_price,
        )
        views.append(tape_view(tape, market.open_time, market.close_time))
    return views


# ----------------------------------------------------------------------------- the sources
def read_source(name: str, days: int) -> Source:
    """The source ``name`` names: an experiment file (``.toml``: its ``[market]`` table), a
    tape (a LOBSTER message file, its orderbook file beside it; a converted directory), or a
    Gymnasium id of a tradearena market. A market whose ``tape`` is a file is that tape."""
    path = Path(name)
    if path.suffix == ".toml":
        return _market_source(load_market(path), path.stem, days)
    if path.exists():
        return _tape_source(load_tape(path), _label(path))
    return _market_source(_gym_spec(name), name, days)


def _label(path: Path) -> str:
    return path.name if path.is_dir() else path.stem


def _tape_source(tape: Tape, label: str) -> Source:
    session = _LOBSTER_SESSION.search(Path(tape.source).stem)
    bounds = (int(session[1]) / 1000, int(session[2]) / 1000) if session else (None, None)
    return Source(label, [tape_view(tape, *bounds)], simulated=False)


def _market_source(spec: MarketSpec, label: str, days: int) -> Source:
    if spec.tape is not None and spec.tape != SYNTHETIC:
        return _tape_source(spec.replayed_tape(), label)
    return Source(label, simulate_days(spec, days), simulated=True)


def _gym_spec(name: str) -> MarketSpec:
    """The `MarketSpec` a tradearena Gymnasium id builds its market from."""
    import gymnasium

    import tradearena.envs  # noqa: F401  (registers the ids)

    markets = {
        env_id: spec.kwargs
        for env_id, spec in gymnasium.registry.items()
        if str(spec.entry_point).startswith("tradearena.envs.trading_env:")
    }
    if name not in markets:
        raise UserError(
            f"{name!r} is neither a file nor a tradearena market id{did_you_mean(name, markets)}"
            f" (ids: {', '.join(sorted(markets))})"
        )
    return MarketSpec.from_keywords(name, **markets[name])


# ----------------------------------------------------------------------------- the table
@dataclass(frozen=True)
class Measurement:
    """A source's days measured: `day_facts` and `samples` of each day, in day order."""

    label: str
    simulated: bool
    facts: list[dict[str, float]]
    samples: list[dict[str, np.ndarray]]


def measure(source: Source) -> Measurement:
    """Every fact and distribution of each of ``source``'s days."""
    facts = [day_facts(view) for view in source.days]
    return Measurement(source.label, source.simulated, facts, [samples(v) for v in source.days])


def scorecard(measured: Sequence[Measurement], reference: Measurement) -> pd.DataFrame:
    """One row per fact and source (`COLUMNS`): ``value`` (a simulated source's mean over its
    days, a tape's value; NaN: not available), ``low``/``high`` (the central 95% of a
    simulated source's days), ``distance`` to ``reference``'s value (`fact_distance`).
    Distribution rows ``ks_*`` and ``w1_*`` compare the source's pooled days with the
    reference day (distance: the KS statistic; W1 over the reference's mean absolute deviation
    from its median). A ``score`` row per source other than the reference: `summary_score` of
    its distances; its interval, that of each day's own score."""
    ref_facts, ref_samples = reference.facts[0], reference.samples[0]
    scales = {f"w1_{name}": _mean_deviation(x) for name, x in ref_samples.items()}

    def distances(values: dict[str, float]) -> dict[str, float]:
        out = {}
        for name, value in values.items():
            if name in ref_facts:
                out[name] = fact_distance(name, value, ref_facts[name])
            else:
                scale = scales.get(name, 1.0)
                out[name] = value / scale if scale > 0 else math.nan
        return out

    rows = []
    for source in measured:
        per_day = source.facts
        values = mean_facts(per_day)
        distance = dict.fromkeys(values, np.nan)
        if source is not reference:
            pooled = {k: np.concatenate([s[k] for s in source.samples]) for k in ref_samples}
            values |= distribution_distances(pooled, ref_samples)
            per_day = [
                facts | distribution_distances(s, ref_samples)
                for facts, s in zip(per_day, source.samples)
            ]
            per_day = [d | {"score": summary_score(distances(d))} for d in per_day]
            distance = distances(values)
            values["score"] = distance["score"] = summary_score(distance)
        for name, value in values.items():
            low, high = interval(d[name] for d in per_day) if source.simulated else (np.nan,) * 2
            rows.append((name, source.label, value, low, high, distance[name]))
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _mean_deviation(x: np.ndarray) -> float:
    """Mean absolute deviation from the median: the W1 distance of ``x`` from its median."""
    return float(np.mean(np.abs(x - np.median(x)))) if len(x) else math.nan


def format_scorecard(table: pd.DataFrame) -> str:
    """The scorecard as text: one line per fact, per source its value (with the 95% interval
    of a simulated source's days) and its distance to the reference; "n/a": not available."""

    def cell(row: pd.Series) -> str:
        if math.isnan(row.value):
            return "n/a"
        text = f"{row.value:.4g}"
        if not math.isnan(row.low):
            text += f" [{row.low:.3g}, {row.high:.3g}]"
        return text + ("" if math.isnan(row.distance) else f" d={row.distance:.3g}")

    cells = table.assign(cell=table.apply(cell, axis=1))
    wide = cells.pivot(index="fact", columns="source", values="cell")
    wide = wide.reindex(index=table.fact.unique(), columns=table.source.unique()).fillna("")
    return wide.to_string()


# --------------------------------------------------------------------------- the figures
def write_figures(measured: Sequence[Measurement], out: Path) -> list[Path]:
    """``out``/realism_tails.png, realism_acf.png, realism_profiles.png and
    realism_distributions.png: each source's days pooled (samples) or averaged (ACF,
    profiles)."""
    from matplotlib.figure import Figure

    from tradearena.evaluation.analysis import realism_plots as plots

    def pooled(name: str) -> dict[str, np.ndarray]:
        return {m.label: np.concatenate([s[name] for s in m.samples]) for m in measured}

    def averaged(prefix: str) -> dict[str, np.ndarray]:
        out = {}
        for m in measured:
            values = mean_facts(m.facts)
            out[m.label] = np.array([v for k, v in values.items() if k.startswith(prefix)])
        return out

    panels = {
        "realism_tails.png": [lambda ax: plots.return_tails(pooled("return_1min_bp"), ax)],
        "realism_acf.png": [
            lambda ax: plots.acf_lines(averaged("acf_return_1min_lag"), "1-min returns", ax),
            lambda ax: plots.acf_lines(
                averaged("acf_abs_return_1min_lag"), "absolute 1-min returns", ax
            ),
        ],
        "realism_profiles.png": [
            lambda ax: plots.profile_lines(
                averaged("volume_profile_"), "share of the day's volume", "Volume", ax
            ),
            lambda ax: plots.profile_lines(
                averaged("volatility_profile_"), "rms 1-min return, bp", "Volatility", ax
            ),
        ],
        "realism_distributions.png": [
            lambda ax: plots.tail_lines(pooled("spread_ticks"), "spread, ticks", "Spread", ax),
            lambda ax: plots.tail_lines(pooled("trade_size"), "trade size", "Trade sizes", ax),
        ],
    }
    paths = []
    for name, draws in panels.items():
        figure = Figure(figsize=(6.4 * len(draws), 4.0), layout="constrained")
        for ax, draw in zip(figure.subplots(1, len(draws), squeeze=False)[0], draws):
            draw(ax)
        figure.savefig(out / name, dpi=100)
        paths.append(out / name)
    return paths


# ------------------------------------------------------------------------------ the command
def realism(
    names: Sequence[str], *, against: str | None = None, days: int = 100, out: str | None = None
) -> tuple[pd.DataFrame, dict[str, list[str]]]:
    """The scorecard of the sources ``names`` (`read_source`, ``days`` days a market) against
    the tape ``against`` (default: the first tape among them), and per source the facts not
    available; with ``out``, also ``out``/scorecard.csv and the figures."""
    sources = [read_source(name, days) for name in names]
    if against is not None:
        reference = read_source(against, days)
        if reference.simulated:
            raise UserError(f"--against {against}: must be a tape, not a market")
        sources.insert(0, reference)
    else:
        tapes = [s for s in sources if not s.simulated]
        if not tapes:
            raise UserError("no tape to compare with: give --against TAPE or a tape as a source")
        reference = tapes[0]
    measured = [measure(source) for source in sources]
    ref = measured[sources.index(reference)]
    table = scorecard(measured, ref)
    missing = {m.label: not_available(mean_facts(m.facts)) for m in measured}
    if out is not None:
        directory = Path(out)
        directory.mkdir(parents=True, exist_ok=True)
        table.to_csv(directory / "scorecard.csv", index=False)
        write_figures(measured, directory)
    return table, {label: names for label, names in missing.items() if names}


def command(args) -> int:
    """``tradearena realism``: print the scorecard (and where it was written)."""
    table, missing = realism(args.sources, against=args.against, days=args.days, out=args.out)
    print(format_scorecard(table))
    for label, names in missing.items():
        print(f"\n{label}: not available (day too short): {', '.join(names)}")
    if args.out is not None:
        print(f"\nwrote {Path(args.out) / 'scorecard.csv'} and realism_*.png")
    return 0
