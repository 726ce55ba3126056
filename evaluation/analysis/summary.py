"""The summary of a run: the per-episode metrics (`evaluation.analysis.metrics`) of each
agent and condition across seeds, with intervals; whether learning curves plateaued; the
field's metrics (gain-loss ratio, P&L-to-MAP, shortfall, the probability of beating the
reference).

Tables take episode records (one row per episode: the group columns, ``seed``, ``episode``,
``pnl`` in dollars, ...), as `evaluation.experiment.store` keeps them. A metric's interval is
across seeds (training runs), not across episodes.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Protocol

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from tradearena.evaluation.analysis.metrics import (
    ConfidenceInterval,
    DegenerateMetricWarning,
    _fraction_iv,
    _returns_iv,
    bootstrap_ci,
    outperformance,
    pnl_to_map,
    shortfall_bp,
    summarize,
)

__all__ = [
    "Checkpointing",
    "field_metrics",
    "plateau",
    "pooled_gain_loss",
    "run_summary",
    "summary_table",
]

_TABLE_METRICS = (
    "sharpe",
    "sortino",
    "max_drawdown",
    "cvar_5",
    "total_pnl",
    "mean_pnl",
    "std_pnl",
    "hit_rate",
)
"""The :func:`summarize` entries that :func:`summary_table` averages over seeds."""


def summary_table(
    df: pd.DataFrame, *, by: str | Sequence[str], value: str = "pnl", confidence: float = 0.95
) -> pd.DataFrame:
    """Metrics per group, averaged over seeds, with bootstrap confidence intervals across seeds.

    Args:
        df (pandas.DataFrame): One row per episode, with the columns in ``by``, ``"seed"`` and
            ``value``. Within a (group, seed) the rows are taken in frame order as the episodes'
            time order.
        by (str or sequence of str): Column(s) naming a group (e.g. ``"agent"`` or
            ``["agent", "condition"]``).
        value (str, optional): Column of per-episode returns in dollars (default ``"pnl"``).
        confidence (float, optional): Coverage of the intervals, in (0, 1) (default 0.95).

    Returns:
        pandas.DataFrame: One row per group: the ``by`` columns; for each metric ``m`` of
            :func:`summarize` (sharpe, sortino, max_drawdown, cvar_5, total_pnl, mean_pnl,
            std_pnl, hit_rate) the columns ``m``, ``m_low``, ``m_high``; then ``episodes``
            (total over seeds) and ``seeds``. Sorted by ``sharpe``, descending (NaN last; ties
            in group order).

    Notes:
        Two levels. First, within each (group, seed), :func:`summarize` turns that seed's episodes
        into one value per metric. Second, across the seeds of a group, ``m`` is the mean of those
        per-seed values and [``m_low``, ``m_high``] is :func:`bootstrap_ci` of that mean (seed 0),
        so the interval reflects variation between seeds (training runs), not between episodes.
        A seed whose metric is NaN is left out of that metric's mean and interval, and a group with
        one seed has NaN bounds; both with a :class:`DegenerateMetricWarning`.
    """
    keys = _table_iv(df, by, value)
    _fraction_iv(confidence, "confidence")

    per_seed = pd.DataFrame(
        [
            {**dict(zip([*keys, "seed"], key)), **summarize(episodes.to_numpy())}
            for key, episodes in df.groupby([*keys, "seed"], sort=True)[value]
        ]
    )
    rows = []
    for key, seeds in per_seed.groupby(keys, sort=True):
        row: dict[str, object] = dict(zip(keys, key))
        for metric in _TABLE_METRICS:
            interval = bootstrap_ci(seeds[metric].to_numpy(), np.mean, confidence=confidence)
            row[metric] = interval.estimate
            row[f"{metric}_low"] = interval.low
            row[f"{metric}_high"] = interval.high
        row["episodes"] = int(seeds["episodes"].sum())
        row["seeds"] = len(seeds)
        rows.append(row)
    table = pd.DataFrame(rows)
    return table.sort_values("sharpe", ascending=False, kind="stable", ignore_index=True)


def _table_iv(df: pd.DataFrame, by: str | Sequence[str], value: str) -> list[str]:
    """The group columns of :func:`summary_table`, after checking ``df``, ``by`` and ``value``."""
    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"df must be a pandas DataFrame, got {type(df).__name__}")
    keys = [by] if isinstance(by, str) else list(by)
    if not keys:
        raise ValueError("by must name at least one column")
    if "seed" in keys or value in keys:
        raise ValueError(f"by must not include 'seed' or the value column {value!r}, got {keys}")
    missing = [column for column in [*keys, "seed", value] if column not in df.columns]
    if missing:
        raise ValueError(f"df is missing the columns {missing}; it has {list(df.columns)}")
    if df.empty:
        raise ValueError("df has no rows")
    unlabelled = [column for column in [*keys, "seed"] if df[column].isna().any()]
    if unlabelled:
        raise ValueError(f"df has missing values in the key columns {unlabelled}")
    _returns_iv(df[value].to_numpy(), f"df[{value!r}]")
    return keys


class Checkpointing(Protocol):
    """What the analysis reads of an experiment's training settings (its ``[training]``
    table): greedy checkpoints every ``evaluate_every`` training episodes (0: none), of
    ``evaluate_episodes`` episodes each."""

    @property
    def evaluate_every(self) -> int: ...

    @property
    def evaluate_episodes(self) -> int: ...


def plateau(
    records: pd.DataFrame,
    *,
    training: Checkpointing | None = None,
    value: str = "pnl",
    windows: int = 10,
    z: float = 1.96,
) -> pd.DataFrame:
    """Whether each agent's learning curve has reached a plateau, and from which episode.

    The curve is a sequence of windows of episodes. With greedy checkpoints (phase "eval";
    ``training`` is the experiment's ``[training]`` table, whose ``evaluate_every`` and
    ``evaluate_episodes`` place them) each checkpoint is a window, and two checkpoints are
    compared session by session (the same sessions, paired). Without, the training episodes
    (every seed) are cut, from the last backwards, into windows of ``max(5, episodes //
    windows)``, compared as independent samples. Every window is compared with the last: the
    two agree when the change of the mean ``value`` is within ``z`` standard errors of that
    change (its 95% width by default), so a slow drift is caught too. The plateau starts at
    the earliest window from which every window agrees with the last; an agent whose last two
    windows disagree (or with fewer than two windows) has not plateaued.

    Returns one row per agent: ``plateaued`` (bool), ``plateau_episode`` (training episodes
    before the plateau starts; -1 when not reached), ``last_change`` and ``last_width`` (from
    the window before the last to the last, with its width, in the units of ``value``).
    """
    every = training.evaluate_every if training is not None else 0
    phase = (
        "eval" if every and not records.empty and (records["phase"] == "eval").any() else "train"
    )
    rows = []
    chosen = records[records["phase"] == phase] if not records.empty else records
    for agent, group in chosen.groupby("agent", sort=False):
        if phase == "eval":
            size = training.evaluate_episodes
            group = group.assign(point=group["episode"] // size, row=group["episode"] % size)
            table = group.pivot_table(index=["seed", "row"], columns="point", values=value)
            blocks = [table[c].to_numpy() for c in table.columns]
            firsts = [int(c) * every for c in table.columns]
        else:
            by_episode = group.pivot_table(index="episode", columns="seed", values=value)
            width = max(5, len(by_episode) // windows)
            starts = list(range(len(by_episode) - width, -1, -width))[::-1]
            blocks = [by_episode.iloc[i : i + width].to_numpy().ravel() for i in starts]
            firsts = [int(by_episode.index[i]) for i in starts]
        agree = [
            _agreement(blocks[-1], earlier, paired=phase == "eval", z=z) for earlier in blocks[:-1]
        ]
        first = len(agree)
        while first > 0 and agree[first - 1][2]:
            first -= 1
        plateaued = bool(agree) and agree[-1][2]
        rows.append(
            {
                "agent": agent,
                "plateaued": plateaued,
                "plateau_episode": firsts[first] if plateaued else -1,
                "last_change": agree[-1][0] if agree else np.nan,
                "last_width": agree[-1][1] if agree else np.nan,
            }
        )
    return pd.DataFrame(rows)


def _agreement(last: np.ndarray, earlier: np.ndarray, *, paired: bool, z: float) -> tuple:
    """(change of the mean from ``earlier`` to ``last``, its width z x s.e., within it); the
    width NaN, and so not within, where a side has one value (one seed of one session a
    checkpoint): no standard error to give (numpy warned of its degrees of freedom)."""
    if paired:
        diff = last - earlier
        change, se = diff.mean(), math.sqrt(_variance(diff) / diff.size)
    else:
        change = last.mean() - earlier.mean()
        se = math.sqrt(_variance(earlier) / earlier.size + _variance(last) / last.size)
    return change, z * se, bool(abs(change) <= z * se)


def _variance(values: np.ndarray) -> float:
    """The sample variance (ddof 1) of ``values``; NaN for fewer than two."""
    return float(values.var(ddof=1)) if values.size > 1 else math.nan


def run_summary(
    records: pd.DataFrame,
    training: Checkpointing | None = None,
    *,
    parent_order: int = 0,
    reference: str | None = None,
) -> pd.DataFrame:
    """The summary table of a run's episode records: test-episode metrics per condition and
    agent, mean over seeds with bootstrap intervals (`summary_table`), the mean ``exposure``
    (time-averaged |inventory|, shares), and each agent's `plateau` columns (``training``:
    the experiment's ``[training]`` table); empty without test episodes. NaN says a metric
    is undefined (an agent that never trades).

    Then the field's metrics (`field_metrics`): ``gain_loss`` and ``pnl_to_map`` ($/share),
    each the mean over seeds of the seed's value with its bootstrap interval; with a
    ``parent_order`` (shares, an execution) ``shortfall_bp`` likewise; with the
    ``reference``'s label ``p_beat_reference`` with its Wilson interval."""
    test = records[records["phase"] == "test"] if not records.empty else records
    if test.empty:
        return pd.DataFrame()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateMetricWarning)
        summary = summary_table(test, by=["condition", "agent"])
    if "exposure" in test:  # mean over seeds of each seed's mean exposure, shares
        by_seed = test.groupby(["condition", "agent", "seed"])["exposure"].mean()
        exposure = by_seed.groupby(["condition", "agent"]).mean().rename("exposure")
        summary = summary.merge(exposure.reset_index(), on=["condition", "agent"], how="left")
    curves = plateau(records, training=training)
    if not curves.empty:
        columns = ["agent", "plateaued", "plateau_episode"]
        summary = summary.merge(curves[columns], on="agent", how="left")
    field = field_metrics(test, parent_order=parent_order, reference=reference)
    return summary.merge(field, on=["condition", "agent"], how="left")


def field_metrics(
    test: pd.DataFrame, *, parent_order: int = 0, reference: str | None = None
) -> pd.DataFrame:
    """The field's metrics of test episodes, one row per (condition, agent).

    ``test``: episode records (columns condition, agent, seed, episode, pnl, and for the
    ones asked for exposure and arrival). :func:`pooled_gain_loss` of the seeds' PnLs; per
    seed, :func:`pnl_to_map` of the PnLs over the ``exposure`` (each episode's mean |inventory|,
    shares) and, with a non-zero ``parent_order`` (shares), the mean :func:`shortfall_bp`
    against each episode's ``arrival`` price ($/share); each column ``m`` is the mean over
    seeds with ``m_low``, ``m_high`` its 95% bootstrap interval (as `summary_table`). With
    ``reference`` (an agent label), ``p_beat_reference``: :func:`outperformance` of each
    agent over the reference on the episodes both played (same condition, seed and episode:
    the same session), with its 95% Wilson interval; NaN for the reference itself, when the
    reference did not play, and when a seed and episode do not name one session (an agent in
    several seats, as in a tournament).
    """
    per_seed = {
        "pnl_to_map": lambda e: pnl_to_map(e["pnl"].to_numpy(), e["exposure"].to_numpy()),
    }
    if parent_order:
        per_seed["shortfall_bp"] = lambda e: float(
            shortfall_bp(e["pnl"].to_numpy(), e["arrival"].to_numpy(), parent_order).mean()
        )
    keys = ["condition", "agent"]
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateMetricWarning)
        for key, group in test.groupby(keys, sort=True):
            seeds = [episodes for _, episodes in group.groupby("seed", sort=True)]
            row: dict[str, object] = dict(zip(keys, key))
            row |= _columns("gain_loss", pooled_gain_loss([e["pnl"].to_numpy() for e in seeds]))
            for name, metric in per_seed.items():
                interval = bootstrap_ci(np.array([metric(e) for e in seeds]), np.mean)
                row |= _columns(name, interval)
            if reference is not None:
                row |= _columns("p_beat_reference", _beats(test, key, reference))
            rows.append(row)
    return pd.DataFrame(rows)


def pooled_gain_loss(
    seeds: Sequence[ArrayLike], *, confidence: float = 0.95, n_resamples: int = 2000, seed: int = 0
) -> ConfidenceInterval:
    """The gain-loss ratio of every episode of every seed (``seeds``: one array of per-episode
    PnLs, dollars, per seed), with a percentile bootstrap interval over the seeds.

    ``estimate = sum(gains) / sum(losses)`` over all the episodes (as `gain_loss_ratio`), so
    that a seed without a losing episode still counts; ``inf`` when no episode lost and some
    gained, NaN when none gained nor lost (no trades). The interval resamples whole seeds
    (``n_resamples`` draws of as many seeds, with replacement, drawn from
    ``numpy.random.default_rng(seed)``) and takes the ratio of each draw's sums, ``inf`` for
    a draw without a loss; its ends are order statistics (the inverted-CDF quantiles: no
    interpolation, so an end may be ``inf``, the ratio unbounded above). One seed: NaN ends.
    """
    gains = np.array([np.maximum(np.asarray(p, float), 0.0).sum() for p in seeds])
    losses = np.array([np.maximum(-np.asarray(p, float), 0.0).sum() for p in seeds])

    def ratio(g: np.ndarray, loss: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(
                loss > 0, g / np.where(loss > 0, loss, 1.0), np.where(g > 0, np.inf, np.nan)
            )

    estimate = float(ratio(gains.sum(), losses.sum()))
    if len(seeds) < 2 or np.isnan(estimate):
        return ConfidenceInterval(np.nan, np.nan, estimate)
    draws = np.random.default_rng(seed).integers(0, len(seeds), size=(n_resamples, len(seeds)))
    ratios = ratio(gains[draws].sum(axis=1), losses[draws].sum(axis=1))
    ratios = ratios[~np.isnan(ratios)]  # draws of seeds that never traded
    alpha = 1.0 - confidence
    low, high = np.quantile(ratios, [alpha / 2, 1.0 - alpha / 2], method="inverted_cdf")
    return ConfidenceInterval(float(low), float(high), estimate)


def _columns(name: str, interval: ConfidenceInterval) -> dict[str, float]:
    """The table columns ``name``, ``name_low``, ``name_high`` of ``interval``."""
    return {name: interval.estimate, f"{name}_low": interval.low, f"{name}_high": interval.high}


def _beats(test: pd.DataFrame, key: tuple, reference: str) -> ConfidenceInterval:
    """`outperformance` of agent ``key`` = (condition, agent) over ``reference`` on the
    sessions both played (same condition, seed and episode); NaN for the reference itself
    and where a seed and episode name several of either's episodes."""
    condition, agent = key
    if agent == reference:
        return ConfidenceInterval(np.nan, np.nan, np.nan)
    session = ["seed", "episode"]
    here = test[test["condition"] == condition]
    mine, theirs = here[here["agent"] == agent], here[here["agent"] == reference]
    if mine.duplicated(session).any() or theirs.duplicated(session).any():
        return ConfidenceInterval(np.nan, np.nan, np.nan)  # several seats: no one session
    pairs = mine.merge(theirs[[*session, "pnl"]], on=session, suffixes=("", "_ref"))
    return outperformance(pairs["pnl"].to_numpy(), pairs["pnl_ref"].to_numpy())
