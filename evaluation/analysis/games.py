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
``regret_low/high``           bootstrap percentile interval of its regret
``welfare``                   expected payoff per player when all play it
``welfare_low/high``          its bootstrap interval
``survival``                  share of resamples in which it is still an equilibrium
``p_<s>_low/high``            bootstrap interval of each share (where it survives)
``gain_<s>``                  deviation gain of ``<s>``: its payoff against the mixture
                              minus the mixture's own
``methods``                   the methods that found it ("replicator", "support")
============================  =========================================================

A role game's table (`role_frame`) has ``p_<role>_<strategy>``, ``regret`` (the largest of
the roles'), ``regret_<role>``, ``welfare_<role>``, ``gain_<role>_<strategy>`` and ``methods``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from tradearena.envs.errors import UserError, into, replacing, together
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
from tradearena.evaluation.analysis.plots import equilibria_figure, save_figure
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
    """A table's equilibria, their bootstrap (None without records or standard errors) and
    its maximum-welfare profile."""

    table: PayoffTable
    found: list[Equilibrium]
    bootstrap: Bootstrap | None
    best: MaxWelfare


def read_table(path: str | Path, reduce_to: int | None = None) -> PayoffTable:
    """The payoff table in ``path`` (the ``payoffs.csv`` format), reduced by DPR to
    ``reduce_to`` players when given (`analysis.reduction`: the file then needs only the
    profiles DPR reads); a missing file, a bad table, one of a single strategy or one missing
    profiles is a `UserError` naming the file."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such payoff table")
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
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such payoff table")
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
    errors; none when it has neither or ``resamples`` is 0)."""
    found = equilibria(table, tol=TOL)
    drawn = None
    if resamples and (records is not None or table.stderr is not None) and found:
        mixtures = [e.x for e in found]
        drawn = bootstrap(
            table, mixtures, resamples=resamples, records=records, level=level, tol=TOL, seed=seed
        )
    return Analysis(table, found, drawn, max_welfare(table))


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
            row["regret_low"], row["regret_high"] = drawn.regret_interval[e]
            row["welfare_low"], row["welfare_high"] = drawn.welfare_interval[e]
            row["survival"] = drawn.survival[e]
        shares = None if drawn is None else drawn.mixture_interval
        for i, s in enumerate(names):
            low, high = (math.nan, math.nan) if shares is None else shares[e, i]
            row[f"p_{s}_low"], row[f"p_{s}_high"] = low, high
        row.update({f"gain_{s}": gain for s, gain in zip(names, found.gains)})
        row["methods"] = "+".join(found.methods)
        rows.append(row)
    return pd.DataFrame(rows)


def format_equilibria(frame: pd.DataFrame | str | Path) -> str:
    """An ``equilibria.csv`` table (a frame or its path) as text: each equilibrium's mixture,
    regret and welfare with their intervals and survival, then each strategy's deviation
    gain."""
    if not isinstance(frame, pd.DataFrame):
        frame = pd.read_csv(frame)
    names = [
        c[2:] for c in frame.columns if c.startswith("p_") and not c.endswith(("_low", "_high"))
    ]

    def interval(value: float, low: float, high: float) -> str:
        return f"{value if abs(value) > _ZERO else 0.0:.4g}" + (
            "" if math.isnan(low) else f" [{low:.4g}, {high:.4g}]"
        )

    shown = pd.DataFrame(
        {
            "mixture": frame.apply(
                lambda r: ", ".join(f"{s} {r[f'p_{s}']:.3f}" for s in names), axis=1
            ),
            "regret": frame.apply(
                lambda r: interval(r.regret, r.regret_low, r.regret_high), axis=1
            ),
            "welfare": frame.apply(
                lambda r: interval(r.welfare, r.welfare_low, r.welfare_high), axis=1
            ),
            "survival": frame["survival"].map(lambda v: "" if math.isnan(v) else f"{v:.2f}"),
            "found by": frame["methods"],
        }
    )
    shown.index = range(1, len(frame) + 1)
    gains = frame[[f"gain_{s}" for s in names]].set_axis(names, axis=1)
    gains = gains.where(gains.abs() > _ZERO, 0.0)
    gains.index = shown.index
    return "\n".join(
        [
            "Nash equilibria (symmetric mixtures; intervals: bootstrap percentiles):",
            shown.to_string(),
            "",
            "deviation gains (payoff of each strategy against the equilibrium, minus its own):",
            gains.round(4).to_string(),
        ]
    )


def write_equilibria(directory: str | Path, analysis: Analysis) -> list[Path]:
    """``equilibria.csv`` and ``equilibria.png`` (the focal replicator field with the
    equilibria marked) in ``directory``; returns their paths."""
    figure = equilibria_figure(analysis.table, [e.x for e in analysis.found])
    table_path = Path(directory) / "equilibria.csv"
    with into(directory), together():
        with replacing(table_path) as temporary:
            equilibria_frame(analysis).to_csv(temporary, index=False, float_format="%.10g")
        figure_path = save_figure(figure, Path(directory) / "equilibria.png")
    return [table_path, figure_path]
