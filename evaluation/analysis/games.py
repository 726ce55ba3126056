"""Equilibria of a payoff table: what the ``tradearena games`` command prints
(`evaluation.cli.games`) and a tournament's ``equilibria.csv``.

`analyse` finds the table's symmetric Nash equilibria (`analysis.equilibria`), bootstraps them
(`analysis.resampling`: from the seats' records when a run has them, else from the table's
standard errors, else no intervals) and finds the maximum-welfare profile. `equilibria_frame`
is the ``equilibria.csv`` table, one row per equilibrium:

============================  =========================================================
column                        meaning
============================  =========================================================
``p_<s>``                     share of strategy ``<s>`` in the mixture
``regret``                    largest deviation gain against it (payoff units; ~0)
``regret_low/high``           0 and the bootstrap's one-sided bound of its regret (the
                              ``level`` percentile, `Bootstrap.regret_bound`)
``welfare``                   expected payoff per player when all play it
``welfare_low/high``          its bootstrap percentile interval (`holding` its estimate)
``survival``                  share of resamples in which it is still an equilibrium
``p_<s>_low/high``            bootstrap interval of each share over the resamples where it
                              survives, widened to hold the share where it lies outside
                              (`holding`)
``gain_<s>``                  deviation gain of ``<s>``: its payoff against the mixture
                              minus the mixture's own
``methods``                   the methods that found it ("replicator", "support")
``bootstrap``                 what the resamples drew from (`resampling.SOURCES`; empty:
                              no intervals)
``resamples``, ``level``,     the resamples, the intervals' coverage and the seed
``seed``
============================  =========================================================

`format_equilibria` prints it with each estimate to 3 significant figures and its interval to
the estimate's decimals, under a line naming the bootstrap.

A role game's table (`role_frame`) has ``p_<role>_<strategy>``, ``regret`` (the largest of
the roles'), ``regret_<role>``, ``welfare_<role>``, ``gain_<role>_<strategy>`` and ``methods``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from tradearena.envs.errors import UserError, into, replacing, together
from tradearena.evaluation.analysis.dynamics import WEIGHTINGS
from tradearena.evaluation.analysis.equilibria import (
    Equilibrium,
    MaxWelfare,
    equilibria,
    max_welfare,
)
from tradearena.evaluation.analysis.payoffs import (
    FORMAT,
    PayoffTable,
    TableFormatError,
    profile_key,
)
from tradearena.evaluation.analysis.plots import equilibria_figure, save_dynamics, save_figure
from tradearena.evaluation.analysis.reduction import reduce_dpr
from tradearena.evaluation.analysis.resampling import Bootstrap, bootstrap
from tradearena.evaluation.analysis.roles import (
    RoleEquilibrium,
    RoleTable,
    role_welfare,
)

__all__ = [
    "Analysis",
    "analyse",
    "equilibria_frame",
    "format_equilibria",
    "format_role_equilibria",
    "payoff_file",
    "read_role_table",
    "read_table",
    "role_frame",
    "write_equilibria",
]

TOL = 1e-6
"""Largest regret of an equilibrium, payoff units."""
_ZERO = 1e-12
"""Values below this in size are printed as 0 (rounding of exact zeros)."""


@dataclass(frozen=True)
class Analysis:
    """A table's equilibria, their bootstrap (None without records or standard errors), its
    maximum-welfare profile and the bootstrap's seed."""

    table: PayoffTable
    found: list[Equilibrium]
    bootstrap: Bootstrap | None
    best: MaxWelfare
    seed: int = 0


def payoff_file(path: str | Path) -> Path:
    """``path``, a file; a `UserError` for a missing one, and for a directory one naming the
    payoff table inside it (a tournament's run directory holds ``payoffs.csv``)."""
    path = Path(path)
    if path.is_dir():
        inside = path / "payoffs.csv"
        where = f"its payoff table is {inside}" if inside.is_file() else "give a payoffs.csv"
        raise UserError(f"{path}: a directory, not a payoff table: {where}")
    if not path.is_file():
        raise UserError(f"{path}: no such payoff table")
    return path


def read_table(path: str | Path, reduce_to: int | None = None) -> PayoffTable:
    """The payoff table in ``path`` (the ``payoffs.csv`` format), reduced by DPR to
    ``reduce_to`` players when given (`analysis.reduction`: the file then needs only the
    profiles DPR reads); a missing file, a bad table, one of a single strategy or one missing
    profiles is a `UserError` naming the file."""
    path = payoff_file(path)
    try:
        table = PayoffTable.read_csv(path)
        if reduce_to is not None:
            table = reduce_dpr(table, reduce_to)
    except TableFormatError as error:
        lacks = f"no {', '.join(error.missing)} column" if error.missing else "no n_ column"
        raise UserError(f"{path}: not a payoff table ({lacks}): {FORMAT}") from error
    except (ValueError, pd.errors.ParserError) as error:
        raise UserError(f"{path}: {error}") from error
    if table.k < 2:
        raise UserError(
            f"{path}: a game needs at least 2 strategies (n_<s> columns), got "
            f"{table.k}: {list(table.strategies)}"
        )
    if not table.complete:
        missing = [
            profile_key(n) for n in PayoffTable.profiles(table.p, table.k) if table.row(n) is None
        ]
        shown = ", ".join(missing[:5]) + (
            f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        )
        raise UserError(
            f"{path}: equilibria need every profile of {table.p} players over "
            f"{list(table.strategies)}; missing {shown}"
        )
    return table


def read_role_table(path: str | Path, roles: list[str]) -> RoleTable:
    """The role game in ``path`` (columns ``n_<role>_<strategy>``, ``u_<role>_<strategy>``);
    a missing file or a bad table or role declaration is a `UserError` naming the file."""
    path = payoff_file(path)
    try:
        table = RoleTable.from_frame(pd.read_csv(path), roles)
    except (ValueError, pd.errors.ParserError) as error:
        raise UserError(f"{path}: {error}") from error
    if not table.complete:
        raise UserError(f"{path}: equilibria need every profile of the role game {roles}")
    return table


def role_frame(table: RoleTable, found: list[RoleEquilibrium]) -> pd.DataFrame:
    """The equilibria table of a role game (module docstring)."""
    rows = []
    for e in found:
        row = {f"p_{c}": x for c, x in zip(table.columns, e.x)}
        row["regret"] = float(e.regret.max())
        row.update({f"regret_{r}": value for r, value in zip(table.roles, e.regret)})
        welfare = role_welfare(table, e.x)
        row.update({f"welfare_{r}": value for r, value in zip(table.roles, welfare)})
        row.update({f"gain_{c}": gain for c, gain in zip(table.columns, e.gains)})
        row["methods"] = "+".join(e.methods)
        rows.append(row)
    return pd.DataFrame(rows)


def analyse(
    table: PayoffTable,
    *,
    records: pd.DataFrame | None = None,
    resamples: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> Analysis:
    """Equilibria of ``table`` with bootstrap intervals over ``resamples`` resamples (from
    ``records``, columns profile, strategy, payoff, when given; else from the table's standard
    errors, as a tournament and ``tradearena games`` draw them; none when it has neither or
    ``resamples`` is 0), drawn with ``seed``."""
    found = equilibria(table, tol=TOL)
    drawn = None
    if resamples and (records is not None or table.stderr is not None) and found:
        mixtures = [e.x for e in found]
        drawn = bootstrap(
            table, mixtures, resamples=resamples, records=records, level=level, tol=TOL, seed=seed
        )
    return Analysis(table, found, drawn, max_welfare(table), seed)


def equilibria_frame(analysis: Analysis) -> pd.DataFrame:
    """The ``equilibria.csv`` table (module docstring); interval columns NaN without a
    bootstrap."""
    names = analysis.table.strategies
    rows = []
    drawn = analysis.bootstrap
    for e, found in enumerate(analysis.found):
        row = {f"p_{s}": x for s, x in zip(names, found.x)}
        row.update(regret=found.regret, regret_low=math.nan, regret_high=math.nan)
        row.update(welfare=found.welfare, welfare_low=math.nan, welfare_high=math.nan)
        row["survival"] = math.nan
        if drawn is not None:
            row["regret_low"], row["regret_high"] = 0.0, drawn.regret_bound[e]
            row["welfare_low"], row["welfare_high"] = holding(
                found.welfare, *drawn.welfare_interval[e]
            )
            row["survival"] = drawn.survival[e]
        shares = None if drawn is None else drawn.mixture_interval
        for i, s in enumerate(names):
            low, high = (
                (math.nan, math.nan) if shares is None else holding(found.x[i], *shares[e, i])
            )
            row[f"p_{s}_low"], row[f"p_{s}_high"] = low, high
        row.update({f"gain_{s}": gain for s, gain in zip(names, found.gains)})
        row["methods"] = "+".join(found.methods)
        row["bootstrap"] = "" if drawn is None else drawn.source
        row["resamples"] = 0 if drawn is None else drawn.regret.shape[1]
        row["level"] = math.nan if drawn is None else drawn.level
        row["seed"] = analysis.seed
        rows.append(row)
    return pd.DataFrame(rows)


def holding(estimate: float, low: float, high: float) -> tuple[float, float]:
    """A percentile interval [low, high] widened to hold its ``estimate`` where it lies
    outside (NaN bounds left as they are): the shares of an equilibrium are drawn over the
    resamples where it survives, which can all lean one way (of 1,000 resamples of the frozen
    tournament's third equilibrium, the 37% where it survives put RA3-Q's share at 0.079 to
    0.943, its estimate 0.963)."""
    if math.isnan(low) or math.isnan(high):
        return low, high
    return min(low, estimate), max(high, estimate)


DRAWN_FROM = {
    "stderr": "each cell's mean drawn normally with its standard error",
    "records": "each cell's values resampled with replacement",
}
"""What a bootstrap's resamples draw, in words, by `resampling.SOURCES`."""


def intervals_text(source: str, resamples: int, level: float, seed: int) -> str:
    """The bootstrap behind an equilibria table's intervals, in words."""
    return (
        f"{level:.0%} bootstrap intervals over {int(resamples):,} resamples (seed {int(seed)}), "
        f"{DRAWN_FROM[source]}; regret's one-sided, [0, its {level * 100:g}th percentile]: an "
        "equilibrium's regret is 0, the least a regret can be"
    )


def significant(
    value: float, low: float = math.nan, high: float = math.nan, figures: int = 3
) -> str:
    """``value`` to ``figures`` significant figures, and its interval [low, high] (when not
    NaN) to the same decimals ("0.384 [0.047, 0.713]"); a value of 0 takes its decimals from
    the interval's largest bound, and zeros print as "0"."""
    bounds = [abs(bound) for bound in (low, high) if not math.isnan(bound)]
    scale = abs(value) if abs(value) > _ZERO else max(bounds, default=0.0)
    decimals = (
        max(0, figures - 1 - math.floor(math.log10(scale)))
        if math.isfinite(scale) and scale > _ZERO
        else 0
    )

    def text(x: float) -> str:
        return "0" if abs(x) <= _ZERO else f"{x:.{decimals}f}"

    return text(value) + ("" if math.isnan(low) else f" [{text(low)}, {text(high)}]")


def format_role_equilibria(frame: pd.DataFrame) -> str:
    """A role game's equilibria table (`role_frame`) as text: each equilibrium's mixtures and
    regrets, then each strategy's deviation gain."""
    frame = frame.astype({c: float for c in frame if c != "methods"})  # as read or as found
    gains = [c for c in frame if c.startswith("gain_")]
    shown = frame.drop(columns=gains)
    return "\n".join(
        [
            "Nash equilibria (one mixture per role):",
            shown.round(4).to_string(index=False) if len(frame) else "no equilibrium",
            "",
            "deviation gains:",
            frame[gains].round(4).to_string(index=False),
        ]
    )


def format_equilibria(frame: pd.DataFrame | str | Path) -> str:
    """An ``equilibria.csv`` table (a frame or its path) as text: each equilibrium's mixture,
    regret and welfare with their intervals and survival, then each strategy's deviation
    gain (a role game's: `format_role_equilibria`)."""
    if not isinstance(frame, pd.DataFrame):
        frame = pd.read_csv(frame)
    if "survival" not in frame:  # a role game's (`role_frame`)
        return format_role_equilibria(frame)
    names = [
        c[2:] for c in frame.columns if c.startswith("p_") and not c.endswith(("_low", "_high"))
    ]

    shown = pd.DataFrame(
        {
            "mixture": frame.apply(
                lambda r: ", ".join(f"{s} {r[f'p_{s}']:.3f}" for s in names), axis=1
            ),
            "regret": frame.apply(
                lambda r: significant(r.regret, r.regret_low, r.regret_high), axis=1
            ),
            "welfare": frame.apply(
                lambda r: significant(r.welfare, r.welfare_low, r.welfare_high), axis=1
            ),
            "survival": frame["survival"].map(lambda v: "" if math.isnan(v) else f"{v:.2f}"),
            "found by": frame["methods"],
        }
    )
    shown.index = range(1, len(frame) + 1)
    gains = frame[[f"gain_{s}" for s in names]].astype(float).set_axis(names, axis=1)
    gains = gains.where(gains.abs() > _ZERO, 0.0)
    gains.index = shown.index
    drawn = frame[frame["bootstrap"].fillna("") != ""]
    method = "no intervals"
    if len(drawn):
        method = intervals_text(*drawn.iloc[0][["bootstrap", "resamples", "level", "seed"]])
    return "\n".join(
        [
            "Nash equilibria (symmetric mixtures):",
            f"({method})",
            shown.to_string(),
            "",
            "deviation gains (payoff of each strategy against the equilibrium, minus its own):",
            gains.round(4).to_string(),
        ]
    )


def write_equilibria(
    directory: str | Path, analysis: Analysis, *, payoff: str, weighting: str = WEIGHTINGS[0]
) -> list[Path]:
    """``equilibria.csv``, ``equilibria.png`` (the focal replicator field with the equilibria
    marked) and ``dynamics.png`` (the replicator dynamics under ``weighting``, titled with
    ``payoff``, as a tournament draws it: `plots.save_dynamics`) in ``directory``; returns
    their paths."""
    figure = equilibria_figure(analysis.table, [e.x for e in analysis.found])
    table_path = Path(directory) / "equilibria.csv"
    with into(directory), together():
        with replacing(table_path) as temporary:
            equilibria_frame(analysis).to_csv(temporary, index=False, float_format="%.10g")
        figure_path = save_figure(figure, Path(directory) / "equilibria.png")
        dynamics = save_dynamics(
            analysis.table, Path(directory) / "dynamics.png", payoff=payoff, weighting=weighting
        )
    return [table_path, figure_path, dynamics]
