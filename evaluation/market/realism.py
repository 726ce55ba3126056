"""The realism scorecard: the stylized facts of days of real tapes and of simulated markets
(`evaluation.market.sources`) side by side, and the classifier's tests of each market
against the tape (``tradearena realism``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from tradearena.envs.errors import UserError, into, replacing, together
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
from tradearena.evaluation.market.sources import (
    LearnedHours,
    RealismSource,
    Source,
    clock,
    distinct_labels,
    held_out,
    hours_on,
    parse_source,
)

__all__ = [
    "CLASSIFIER_DAYS",
    "COLUMNS",
    "DISCRIMINATORS",
    "IN_SAMPLE",
    "OWN_DAY",
    "Judged",
    "Report",
    "discriminate",
    "discriminator_rows",
    "format_features",
    "Measurement",
    "format_scorecard",
    "format_verdict",
    "measure",
    "realism",
    "scorecard",
    "write_classifier_figure",
    "write_realism_figures",
]

COLUMNS = ("fact", "source", "value", "low", "high", "distance")
"""The scorecard's columns (``scorecard.csv``)."""


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


def _beside(held: Discrimination, floor: Discrimination) -> str:
    """Where a market's AUC ``held`` stands against the ``floor``'s, lower being better (the
    floor is the real hours' own AUC): a pass at or below its estimate, a pass within chance
    inside its interval, a fail above it."""
    if held.auc <= floor.auc:
        return "passes: told no more easily than the floor"
    if held.auc <= floor.high:
        return "passes within chance: above the floor, inside its interval"
    return "fails: told more easily than the floor, beyond its interval"


def format_verdict(report: Report) -> str:
    """The verdict in a few lines: per market its classifier AUC on the tape's hours judged
    (1-min windows, with its interval) and its scorecard distance, beside the floor's, and
    its in-sample AUC; whether it passes the floor (held out: lower is better) and is told
    from the hours it learned from (in-sample); with a floor, where the other floor (the
    replay) is judged; then the judgments that could not be made, and why."""
    minute = "discriminator_auc"
    score = report.table[report.table.fact == "score"].set_index("source").value

    def auc(test: Discrimination) -> str:
        return f"{test.auc:.3f} [{test.low:.3f}, {test.high:.3f}]"

    def distance(label: str) -> str:
        return f"scorecard distance {score[label]:.3g}" if label in score else ""

    floor = report.floor
    rows: list[tuple[str, str, str]] = []
    if floor is not None:
        rows.append(
            (f"floor: its own {floor.hours}", auc(floor.tests[minute]), distance(floor.label))
        )
    for label, tests in report.tests.items():
        held, tail = tests[minute], distance(label)
        if floor is not None:
            tail += "; " + _beside(held, floor.tests[minute])
        rows.append((label, auc(held), tail))
        if label in report.in_sample:
            judged = report.in_sample[label]
            inside = judged.tests[minute]
            told = "told" if inside.low > 0.5 else "not told"
            learned = f"{told} from the hours it learned from"
            rows.append((f"  in-sample, {judged.hours}", auc(inside), learned))
    lines = [
        f"classifier AUC on 1-min windows against {report.reference} {report.hours} (lower "
        "is better; 0.5: it cannot tell them apart, 1: it always can):"
    ]
    width = max((len(row[0]) for row in rows), default=0)
    lines += [f"  {name:{width}}  {value}  {tail}" for name, value, tail in rows]
    if floor is not None:
        lines.append(
            "the other floor, the replay of the hours a market learned from, is judged by "
            "ranking a strategy zoo: tradearena transfer MARKET --against TAPE --from "
            + report.hours.split("-")[0]
        )
    return "\n".join(lines + report.notes)


# ------------------------------------------------------------------------------ the command
IN_SAMPLE = "_in_sample"
"""The suffix of the scorecard facts of a market judged in-sample: its days against the
tape's hours it learned from (``discriminator_auc_in_sample``, ...)."""


@dataclass(frozen=True)
class Judged:
    """A classifier judgment beside the held-out one: the ``label`` of what was judged, the
    ``hours`` (HH:MM-HH:MM) and its `discriminate` ``tests``."""

    label: str
    hours: str
    tests: dict[str, Discrimination]


@dataclass(frozen=True)
class Report:
    """What `realism` finds: the scorecard ``table`` (`COLUMNS`), per source the facts
    ``missing`` and why (the day, or the part of it judged, too short for them), per
    simulated source its classifier ``tests`` (`discriminate`) against the tape
    ``reference`` seen over ``hours``; the ``floor`` (the tape's own hours before ``--from``
    judged against those after, when there are some), per market its ``in_sample``
    judgment, and ``notes``: one line for each judgment that could not be made, and why."""

    table: pd.DataFrame
    missing: dict[str, tuple[str, list[str]]]
    tests: dict[str, dict[str, Discrimination]]
    reference: str = ""
    hours: str = ""
    floor: Judged | None = None
    in_sample: dict[str, Judged] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def realism(
    names: Sequence[str],
    *,
    against: str | None = None,
    days: int = 100,
    out: str | None = None,
    start: float | None = None,
    end: float | None = None,
    classifier_days: int = CLASSIFIER_DAYS,
    learned: tuple[float, float] | None = None,
) -> Report:
    """The scorecard of the sources ``names`` (`parse_source`, ``days`` days a market, seen
    from ``start`` to ``end``, seconds after midnight) against the tape ``against`` (default:
    the first tape among them), with the classifier tests of each market (its first
    ``classifier_days`` days). With ``start``, the floor: the tape's hours before it judged
    as a market against those after (its facts and its classifier tests under the label
    "TAPE HH:MM-HH:MM"). Each market is also judged in-sample, against the tape's hours it
    learned from (``learned``, [first, last] seconds after midnight, or what its file says,
    `Source.learned_hours`; facts ``discriminator_auc_in_sample`` and ``..._10s_in_sample``). With
    ``out``, also ``out``/scorecard.csv and the figures."""
    span = {"start": start, "end": end}
    given_names = [*([against] if against is not None else []), *names]
    distinct_labels(given_names)
    parsed = {name: parse_source(name) for name in given_names}
    tapes = [name for name in given_names if not parsed[name].simulated]
    if against is not None and against not in tapes:
        raise UserError(f"--against {against}: must be a tape, not a market")
    if not tapes:
        raise UserError("no tape to compare with: give --against TAPE or a tape as a source")
    given = None
    if learned is not None:
        given = LearnedHours(*learned, (), f"--learned {clock(learned[0])},{clock(learned[1])}")
        given = hours_on(given, tapes[0], given=True)
    if start is not None:  # the hours judged held out of those each market learned from
        for name in (name for name in names if parsed[name].simulated):
            named = given or parsed[name].learned_hours
            hours = named and (given or hours_on(named, tapes[0], given=False))
            if isinstance(hours, LearnedHours):
                held_out(hours, start, end)
    read = {name: parsed[name].read(days, **span, levels=MAX_LEVELS) for name in tapes}
    reference = read[tapes[0]]
    levels = reference.days[0].levels
    for name in names:
        if name not in read:
            read[name] = parsed[name].read(days, **span, levels=levels)
    sources = ([reference] if against is not None else []) + [read[name] for name in names]
    for source in sources:
        if source.simulated and not any(len(day.time) for day in source.days):
            day = source.days[0]
            raise UserError(
                f"{source.label}: none of its {len(source.days)} simulated days shows a message "
                f"from {clock(day.open)} to {clock(day.close)} (no quote rests, no trade "
                "prints): a market that does nothing has no facts to judge"
            )
    measured = [measure(source) for source in sources]
    ref = measured[sources.index(reference)]
    tests = {
        s.label: discriminate(s, reference, days=classifier_days) for s in sources if s.simulated
    }
    notes: list[str] = []
    morning, floor = _floor(parsed[tapes[0]], reference, start, levels, notes)
    before = [measure(morning)] if morning else []
    rows = scorecard(measured + before, ref)
    in_sample, seen = {}, min(classifier_days, days)  # the days the held-out tests saw
    for name in names:
        if read[name].simulated:
            judged = _in_sample(parsed[name], parsed[tapes[0]], given, seen, levels)
            if isinstance(judged, Judged):
                in_sample[judged.label] = judged
            else:
                notes.append(f"{read[name].label}: no in-sample judgment: {judged}")
    extra = [row for label, t in tests.items() for row in discriminator_rows(label, t)]
    if floor:
        extra += discriminator_rows(floor.label, floor.tests)
    for j in in_sample.values():
        extra += [(row[0] + IN_SAMPLE, *row[1:]) for row in discriminator_rows(j.label, j.tests)]
    table = pd.concat([rows, pd.DataFrame(extra, columns=list(COLUMNS))], ignore_index=True)
    if out is not None:
        with into(out) as directory, together():  # all the files, or none
            with replacing(directory / "scorecard.csv") as temporary:
                table.to_csv(temporary, index=False)
            write_realism_figures(measured, directory)
            if tests:
                write_classifier_figure(sources, reference, tests, directory)
    hours = "-".join(clock(t) for t in (reference.days[0].open, reference.days[0].close))
    reason = "day too short"
    if start is not None or end is not None:  # what --from/--until left is too short
        reason = f"the part judged, {hours}, is too short for them"
    missing = {
        m.label: (
            f"the hours before --from, {floor.hours}, are too short for them"
            if floor and m.label == floor.label
            else reason,
            absent,
        )
        for m in measured + before
        if (absent := not_available(mean_facts(m.facts)))
    }
    return Report(table, missing, tests, reference.label, hours, floor, in_sample, notes)


def _floor(
    tape: Source, reference: RealismSource, start: float | None, levels: int, notes: list[str]
) -> tuple[RealismSource, Judged] | tuple[None, None]:
    """The tape's own hours before ``start`` as a source, and their classifier tests
    against ``reference`` (its hours from ``start``); Nones (and why in ``notes``) without
    ``start`` or when those hours are too few to judge."""
    if start is None:
        return None, None
    try:
        morning = tape.read(1, end=start, levels=levels)
        hours = f"{clock(morning.days[0].open)}-{clock(start)}"
        morning = replace(morning, label=f"{reference.label} {hours}")
        return morning, Judged(morning.label, hours, discriminate(morning, reference, days=1))
    except UserError as error:
        notes.append(f"no floor (the tape's hours before --from against those after): {error}")
        return None, None


def _in_sample(
    market: Source,
    tape: Source,
    given: LearnedHours | None,
    days: int,
    levels: int,
) -> Judged | str:
    """The ``market`` judged against the hours of ``tape`` it learned from (``given``, else
    what its file says): its first ``days`` days seen over those hours against the tape's;
    else why not. With ``given`` hours, a judgment that cannot be made is a `UserError`."""
    hours = given
    if hours is None:
        if market.learned_hours is None:
            return "its file names no hours it learned from (--learned FIRST,LAST gives them)"
        hours = hours_on(market.learned_hours, tape.name, given=False)
        if isinstance(hours, str):
            return hours
    span = {"start": hours.first, "end": hours.last, "levels": levels}
    try:
        tests = discriminate(market.read(days, **span), tape.read(1, **span), days=days)
    except UserError as error:
        if given is not None:
            raise
        return str(error)
    return Judged(market.label, str(hours), tests)


MAX_LEVELS = 10
"""Book levels a tape is read with, at most (LOBSTER's deepest files)."""
