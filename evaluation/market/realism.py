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

from tradearena.envs.data.load import load_tape, missing_book
from tradearena.envs.data.tapes import EMPTY_ASK, EMPTY_BID, Event, Tape
from tradearena.envs.errors import UserError, did_you_mean, into, replacing, together
from tradearena.envs.simulator.recording import synthetic_tape
from tradearena.envs.spec import SYNTHETIC, SYNTHETIC_DAY_STEPS, MarketSpec
from tradearena.evaluation.analysis.discriminator import (
    Discrimination,
    classifier_test,
    day_windows,
    own_day_test,
)
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
from tradearena.evaluation.experiment.config import load_market

__all__ = [
    "CLASSIFIER_DAYS",
    "COLUMNS",
    "DISCRIMINATORS",
    "OWN_DAY",
    "Report",
    "clipped",
    "clock",
    "discriminate",
    "discriminator_rows",
    "format_features",
    "gym_spec",
    "Measurement",
    "RealismSource",
    "format_scorecard",
    "measure",
    "realism",
    "read_source",
    "scorecard",
    "simulate_days",
    "tape_levels",
    "tape_view",
    "write_classifier_figure",
    "write_realism_figures",
]

COLUMNS = ("fact", "source", "value", "low", "high", "distance")
"""The scorecard's columns (``scorecard.csv``)."""
_LOBSTER_SESSION = re.compile(r"_(\d+)_(\d+)_message_\d+$")
"""A LOBSTER file name's session: start and end, milliseconds after midnight."""
_ALWAYS_SHOWN = (Event.EXECUTE, Event.EXECUTE_HIDDEN, Event.CROSS, Event.HALT)
"""Messages a level-1 file holds whether or not the best quotes change."""


@dataclass(frozen=True)
class RealismSource:
    """One scorecard column: ``label`` (a file's stem or an id), its ``days`` and whether they
    were ``simulated`` (a market's sessions) or read (a tape's one day)."""

    label: str
    days: list[DayView]
    simulated: bool


# ------------------------------------------------------------------------------ the view
def tape_view(
    tape: Tape, open: float | None = None, close: float | None = None, *, levels: int = 1
) -> DayView:
    """The level-1 view of ``tape`` between ``open`` and ``close`` (seconds after midnight;
    default: the first message's second, and the last's rounded up): the messages after which
    the best bid or ask (price or size) changed, plus every execution, cross and halt, with
    ``open <= time <= close``. Prices stay in the tape's ticks, sizes in its lots, and the
    view's tick is what a tick is worth on one lot (as the replay prices it); an empty side
    is NaN. With
    ``levels`` > 1 (at most the tape's), the view's ``depth`` holds the book's first
    ``levels`` levels after every message that changed them."""
    if tape.book is None:
        raise missing_book(tape, "the realism judges")
    times = tape.messages["time"]
    open = math.floor(times[0]) if open is None else open
    close = math.ceil(times[-1]) if close is None else close
    inside = (times >= open) & (times <= close)
    top = tape.book[:, :4]
    changed = np.r_[True, (top[1:] != top[:-1]).any(axis=1)]
    keep = (changed | np.isin(tape.messages["type"], _ALWAYS_SHOWN)) & inside
    m, top = tape.messages[keep], top[keep].astype(float)
    ask, ask_size, bid, bid_size = top.T
    depth = depth_time = None
    if levels > 1:
        rows = tape.book[:, : 4 * min(levels, tape.book.shape[1] // 4)]
        moved = np.r_[True, (rows[1:] != rows[:-1]).any(axis=1)] & inside
        depth, depth_time = rows[moved].astype(float), times[moved].astype(float)
        depth[:, 0::4][rows[moved][:, 0::4] == EMPTY_ASK] = np.nan
        depth[:, 2::4][rows[moved][:, 2::4] == EMPTY_BID] = np.nan
    return DayView(
        time=m["time"].astype(float),
        kind=m["type"].astype(np.int64),
        size=m["size"].astype(np.int64),
        direction=m["direction"].astype(np.int64),
        bid=np.where(bid == EMPTY_BID, np.nan, bid),
        ask=np.where(ask == EMPTY_ASK, np.nan, ask),
        bid_size=bid_size,
        ask_size=ask_size,
        tick_size=tape.tick_size * tape.lot_size,
        open=float(open),
        close=float(close),
        depth=depth,
        depth_time=depth_time,
    )


def tape_levels(tape: Tape) -> int:
    """Book levels of ``tape``'s orderbook rows (0 without them)."""
    return 0 if tape.book is None else tape.book.shape[1] // 4


def simulate_days(
    spec: MarketSpec,
    days: int,
    first_seed: int = 0,
    *,
    start: float | None = None,
    end: float | None = None,
    levels: int = 1,
) -> list[DayView]:
    """``days`` sessions of ``spec``'s market (seeds ``first_seed`` onwards), each a full day
    (``day_steps``, default 390 steps, or ``n_steps`` if longer), recorded as a tape with its
    top ``levels`` and seen through `tape_view` from the open (or ``start``, seconds after
    midnight, when later) to the close (or ``end``, when earlier)."""
    steps = max(spec.day_steps or SYNTHETIC_DAY_STEPS, spec.n_steps or 0)
    full = replace(spec, n_steps=steps, day_steps=None, window_steps=None, tape=None)
    views = []
    for seed in range(first_seed, first_seed + days):
        market = full.market(0)
        tape = synthetic_tape(
            seed,
            traders=market.traders,
            levels=levels,
            n_steps=market.n_steps,
            step_seconds=market.step_seconds,
            open_time=market.open_time,
            warmup_seconds=market.warmup_seconds,
            tick_size=market.tick_size,
            initial_price=market.initial_price,
        )
        bounds = clipped(market.open_time, market.close_time, start, end, f"{spec.task} market")
        views.append(tape_view(tape, *bounds, levels=levels))
    return views


def clipped(
    open: float, close: float, start: float | None, end: float | None, what: str
) -> tuple[float, float]:
    """(open, close) of a session cut to ``start``..``end`` (seconds after midnight, None:
    no cut); UserError naming ``what`` when nothing of the session is left."""
    low = open if start is None else max(open, start)
    high = close if end is None else min(close, end)
    if not high > low:
        raise UserError(
            f"{what}: its session ({clock(open)}-{clock(close)}) has nothing between "
            f"{clock(start) if start is not None else 'its open'} and "
            f"{clock(end) if end is not None else 'its close'}"
        )
    return low, high


def clock(seconds: float) -> str:
    """Seconds after midnight as HH:MM (HH:MM:SS when not a whole minute)."""
    hours, rest = divmod(int(round(seconds)), 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours:02d}:{minutes:02d}" + (f":{secs:02d}" if secs else "")


# ----------------------------------------------------------------------------- the sources
def read_source(
    name: str,
    days: int,
    *,
    start: float | None = None,
    end: float | None = None,
    levels: int = 1,
) -> RealismSource:
    """The source ``name`` names: an experiment file (``.toml``: its ``[market]`` table), a
    tape (a LOBSTER message file, its orderbook file beside it; a converted directory), or a
    Gymnasium id of a tradearena market. A market whose ``tape`` is a file is that tape. Its
    days are seen from ``start`` to ``end`` (seconds after midnight; None: the session's
    open, close) with ``levels`` book levels (at most what a tape has)."""
    path = Path(name)
    if path.suffix == ".toml":
        return _market_source(load_market(path), path.stem, days, start, end, levels)
    if path.exists():
        return _tape_source(load_tape(path), _label(path), start, end, levels)
    return _market_source(gym_spec(name), name, days, start, end, levels)


def _label(path: Path) -> str:
    return path.name if path.is_dir() else path.stem


def _tape_source(
    tape: Tape, label: str, start: float | None, end: float | None, levels: int
) -> RealismSource:
    session = _LOBSTER_SESSION.search(Path(tape.source).stem)
    times = tape.messages["time"]
    if session:
        open, close = int(session[1]) / 1000, int(session[2]) / 1000
    else:
        open, close = math.floor(times[0]), math.ceil(times[-1])
    if end is not None and end > close:
        raise UserError(
            f"{label}: --until {clock(end)} is after the day's close ({clock(close)}; the day "
            f"runs {clock(open)}-{clock(close)}): give a time inside it, or no --until for the "
            "whole day"
        )
    bounds = clipped(open, close, start, end, label)
    view = tape_view(tape, *bounds, levels=min(levels, tape_levels(tape)))
    return RealismSource(label, [view], simulated=False)


def _market_source(
    spec: MarketSpec, label: str, days: int, start: float | None, end: float | None, levels: int
) -> RealismSource:
    if spec.tape is not None and spec.tape != SYNTHETIC:
        return _tape_source(spec.replayed_tape(), label, start, end, levels)
    return RealismSource(
        label, simulate_days(spec, days, start=start, end=end, levels=levels), True
    )


def gym_spec(name: str) -> MarketSpec:
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
    """A source's days measured: `day_facts` and `samples` of each day, in day order, and
    where the days were first seen (``open``: seconds after midnight, the session's open or
    ``--from``, which the intraday profiles start at)."""

    label: str
    simulated: bool
    facts: list[dict[str, float]]
    samples: list[dict[str, np.ndarray]]
    open: float


def measure(source: RealismSource) -> Measurement:
    """Every fact and distribution of each of ``source``'s days."""
    facts = [day_facts(view) for view in source.days]
    days = [samples(v) for v in source.days]
    return Measurement(source.label, source.simulated, facts, days, source.days[0].open)


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
def write_realism_figures(measured: Sequence[Measurement], out: Path) -> list[Path]:
    """``out``/realism_tails.png, realism_acf.png, realism_profiles.png and
    realism_distributions.png: each source's days pooled (samples) or averaged (ACF,
    profiles)."""
    from matplotlib.figure import Figure

    from tradearena.evaluation.analysis import realism_plots as plots
    from tradearena.evaluation.analysis.plots import save_figure

    opens = {m.label: m.open for m in measured}

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
                averaged("volume_profile_"),
                "share of the volume judged",
                "Volume",
                ax,
                opens=opens,
            ),
            lambda ax: plots.profile_lines(
                averaged("volatility_profile_"),
                "rms 1-min return, bp",
                "Volatility",
                ax,
                opens=opens,
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
        paths.append(save_figure(figure, out / name, dpi=100))
    return paths


def write_classifier_figure(
    sources: Sequence[RealismSource],
    reference: RealismSource,
    tests: dict[str, dict[str, Discrimination]],
    out: Path,
    top: int = 6,
) -> Path:
    """``out``/realism_classifier.png: the 1-min window features that separate most (the
    ``top`` of any market, by single-feature AUC), real against each market, one panel
    each, with each market's single-feature AUC in its title."""
    from matplotlib.figure import Figure

    from tradearena.evaluation.analysis import realism_plots as plots
    from tradearena.evaluation.analysis.plots import save_figure

    separation: dict[str, float] = {}
    for t in tests.values():
        for row in t["discriminator_auc"].features.itertuples():
            separation[row.feature] = max(separation.get(row.feature, 0.0), row.separation)
    names = sorted(separation, key=separation.get, reverse=True)[:top]
    seconds = DISCRIMINATORS["discriminator_auc"]
    frames = {reference.label: day_windows(reference.days, seconds, 0)}
    for s in sources:
        if s.label in tests:
            frames[s.label] = day_windows(s.days[:CLASSIFIER_DAYS], seconds, 1)
    columns = min(3, len(names))
    rows = -(-len(names) // columns)
    figure = Figure(figsize=(4.2 * columns, 3.2 * rows), layout="constrained")
    axes = figure.subplots(rows, columns, squeeze=False).ravel()
    for i, (ax, name) in enumerate(zip(axes, names)):
        values = {label: frame[name].to_numpy(float) for label, frame in frames.items()}
        aucs = {
            label: t["discriminator_auc"].features.set_index("feature").auc[name]
            for label, t in tests.items()
        }
        plots.feature_histograms(values, name, aucs, ax, legend=i == 0)
    for ax in axes[len(names) :]:
        ax.set_axis_off()
    figure.suptitle("What tells the markets' minutes from the real day's")
    return save_figure(figure, out / "realism_classifier.png", dpi=100)


# ------------------------------------------------------------------------- the classifier
DISCRIMINATORS = {"discriminator_auc": 60.0, "discriminator_auc_10s": 10.0}
"""The classifier's scorecard facts and their windows, seconds."""
OWN_DAY = "discriminator_auc_own_day"
"""The scorecard fact of a market's floor: one of its days against its others (1-min
windows)."""
CLASSIFIER_DAYS = 5
"""Simulated days the classifier sees by default (the floor takes one more when there)."""


def discriminate(
    source: RealismSource, reference: RealismSource, *, days: int = CLASSIFIER_DAYS, seed: int = 0
) -> dict[str, Discrimination]:
    """The classifier two-sample tests of a simulated ``source`` against the ``reference``
    day: per fact of `DISCRIMINATORS` its first ``days`` days against the reference's
    windows, and `OWN_DAY` when it has a day more (`analysis.discriminator.own_day_test`).
    UserError naming the source when a side has too few windows."""
    simulated = source.days[:days]
    real = reference.days
    levels = min(real[0].levels, simulated[0].levels)
    if levels < real[0].levels or levels < simulated[0].levels:
        real, simulated = _levels(real, levels), _levels(simulated, levels)
    out = {}
    try:
        for fact, seconds in DISCRIMINATORS.items():
            windows = pd.concat(
                [day_windows(simulated, seconds, 1), day_windows(real, seconds, 0)],
                ignore_index=True,
            )
            out[fact] = classifier_test(windows, seed=seed)
        if len(source.days) > days:
            minute = DISCRIMINATORS["discriminator_auc"]
            out[OWN_DAY] = own_day_test(source.days[: days + 1], minute, seed=seed)
    except ValueError as error:
        raise UserError(f"{source.label} against {reference.label}: {error}") from None
    return out


def _levels(views: Sequence[DayView], levels: int) -> list[DayView]:
    """``views`` with their depth cut to ``levels`` levels (none for 1)."""
    if levels <= 1:
        return [replace(v, depth=None, depth_time=None) for v in views]
    return [replace(v, depth=v.depth[:, : 4 * levels]) for v in views]


def discriminator_rows(label: str, tests: dict[str, Discrimination]) -> list[tuple]:
    """Scorecard rows (`COLUMNS`) of a source's classifier tests: the AUC and its interval
    (no distance: an AUC is its own scale, 0.5 where the classifier cannot tell)."""
    return [(fact, label, t.auc, t.low, t.high, math.nan) for fact, t in tests.items()]


def format_features(label: str, tests: dict[str, Discrimination], top: int = 5) -> str:
    """The features that tell ``label``'s 1-min windows from the real day's most, as text:
    single-feature AUC and the medians on both sides."""
    test = tests["discriminator_auc"]
    lines = [
        f"{label}: classifier AUC {test.auc:.3f} [{test.low:.3f}, {test.high:.3f}] on 1-min "
        f"windows ({test.real} real, {test.simulated} simulated)"
        + (
            f"; one of its own days against the others: {tests[OWN_DAY].auc:.3f}"
            if OWN_DAY in tests
            else ""
        )
    ]
    lines.append(f"  {'feature':20} {'AUC':>6} {'median real':>12} {'simulated':>12}")
    for row in test.features.head(top).itertuples():
        lines.append(
            f"  {row.feature:20} {row.auc:6.3f} {row.median_real:12.4g} "
            f"{row.median_simulated:12.4g}"
        )
    return "\n".join(lines)


# ------------------------------------------------------------------------------ the command
@dataclass(frozen=True)
class Report:
    """What `realism` finds: the scorecard ``table`` (`COLUMNS`), per source the facts
    ``missing`` (day too short), and per simulated source its classifier ``tests``
    (`discriminate`)."""

    table: pd.DataFrame
    missing: dict[str, list[str]]
    tests: dict[str, dict[str, Discrimination]]


def realism(
    names: Sequence[str],
    *,
    against: str | None = None,
    days: int = 100,
    out: str | None = None,
    start: float | None = None,
    end: float | None = None,
    classifier_days: int = CLASSIFIER_DAYS,
) -> Report:
    """The scorecard of the sources ``names`` (`read_source`, ``days`` days a market, seen
    from ``start`` to ``end``, seconds after midnight) against the tape ``against`` (default:
    the first tape among them), with the classifier tests of each market (its first
    ``classifier_days`` days); with ``out``, also ``out``/scorecard.csv and the figures."""
    span = {"start": start, "end": end}
    tapes = [name for name in [against, *names] if name is not None and not _is_market(name)]
    if against is not None and against not in tapes:
        raise UserError(f"--against {against}: must be a tape, not a market")
    if not tapes:
        raise UserError("no tape to compare with: give --against TAPE or a tape as a source")
    read = {name: read_source(name, days, **span, levels=MAX_LEVELS) for name in tapes}
    reference = read[tapes[0]]
    levels = reference.days[0].levels
    for name in names:
        if name not in read:
            read[name] = read_source(name, days, **span, levels=levels)
    sources = ([reference] if against is not None else []) + [read[name] for name in names]
    measured = [measure(source) for source in sources]
    ref = measured[sources.index(reference)]
    rows = scorecard(measured, ref)
    tests = {
        s.label: discriminate(s, reference, days=classifier_days) for s in sources if s.simulated
    }
    extra = [row for label, t in tests.items() for row in discriminator_rows(label, t)]
    table = pd.concat([rows, pd.DataFrame(extra, columns=list(COLUMNS))], ignore_index=True)
    missing = {m.label: not_available(mean_facts(m.facts)) for m in measured}
    if out is not None:
        with into(out) as directory, together():  # all the files, or none
            with replacing(directory / "scorecard.csv") as temporary:
                table.to_csv(temporary, index=False)
            write_realism_figures(measured, directory)
            if tests:
                write_classifier_figure(sources, reference, tests, directory)
    missing = {label: names for label, names in missing.items() if names}
    return Report(table, missing, tests)


MAX_LEVELS = 10
"""Book levels a tape is read with, at most (LOBSTER's deepest files)."""


def _is_market(name: str) -> bool:
    """Whether the source ``name`` is simulated (a market file or id, not a tape)."""
    path = Path(name)
    if path.suffix == ".toml":
        spec = load_market(path)
        return spec.tape is None or spec.tape == SYNTHETIC
    if path.exists():
        return False
    gym_spec(name)  # an id, or the error that names the nearest
    return True
