"""The tables a command prints, as text: a run's summary, a tournament's game, aligned rows."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


def format_game(directory: Path, roles: bool = False) -> str | None:
    """A tournament's game as text: `format_payoffs` of its payoff table (of its DPR game when
    it has one), or a role game's table (``roles``: the run's game has roles); None for a run
    without one."""
    reduced = directory / "payoffs_reduced.csv"
    if reduced.exists():
        return format_payoffs(reduced)
    payoffs = directory / "payoffs.csv"
    if not payoffs.exists():
        return None
    if roles:
        import pandas as pd

        frame = pd.read_csv(payoffs)
        return f"role game payoff table ({payoffs.name})\n" + frame.round(3).to_string(index=False)
    return format_payoffs(payoffs)


def format_payoffs(path) -> str:
    """A tournament's payoff table and the rest points of its replicator dynamics, as text."""
    from tradearena.evaluation.analysis.dynamics import format_rest_points
    from tradearena.evaluation.analysis.payoffs import PayoffTable

    table = PayoffTable.read_csv(path)
    frame = table.to_frame()
    shown = [c for c in frame.columns if c.startswith(("n_", "u_"))]
    lines = [
        f"heuristic payoff table ({path.name}: {table.p} seats, {len(table)} profiles)",
        frame[shown].round(3).to_string(index=False),
        "",
        "rest points of the replicator dynamics (stability in the whole simplex):",
    ]
    lines.extend(f"  {line}" for line in format_rest_points(table))
    return "\n".join(lines)


def _sortino_text(row) -> str:
    """The Sortino ratio to three decimals; "no loss" where no test episode lost and the mean
    PnL is positive (no downside deviation to divide by: the ratio is unbounded); "no trades"
    for an agent that never trades."""
    if row.sortino != row.sortino and row.mean_pnl > 0:  # NaN
        return "no loss"
    return _undefined(row, row.sortino) or f"{row.sortino:.3f}"


def _undefined(row, value: float) -> str:
    """Why a metric's ``value`` is not a number, in words ("" for a finite one): "no loss"
    for inf (a ratio over losses, none), "no trades" for NaN of an agent that never held a
    share and made nothing (a ratio of zero over zero)."""
    if value == float("inf"):
        return "no loss"
    if value != value and row.get("exposure", 0.0) == 0 and row.mean_pnl == 0:
        return "no trades"
    return ""


def format_summary(summary) -> str:
    """The summary table as text, per condition: Sharpe and PnL with their intervals and the
    risk metrics, then the field's metrics (`_field_columns`)."""
    if summary.empty:
        return "(no test episodes)"
    lines = []
    for condition, rows in summary.groupby("condition", sort=False):
        lines.append(f"\ncondition: {condition}")
        table = rows.set_index("agent")
        columns = {
            "Sharpe": _ranged(table, "sharpe", 3),
            "mean PnL $": _ranged(table, "mean_pnl", 2),
            "Sortino": table.apply(_sortino_text, axis=1),
            "max DD $": table["max_drawdown"].map("{:.2f}".format),
            "CVaR 5% $": table["cvar_5"].map("{:.2f}".format),
            "hit rate": table["hit_rate"].map("{:.2f}".format),
            "|inv| sh": table["exposure"].map("{:.0f}".format),
            "seeds": table["seeds"],
        }
        if "plateaued" in table:
            columns["plateau"] = table.apply(_plateau_text, axis=1)
        import pandas as pd

        lines.append(pd.DataFrame(columns).to_string())
        if "gain_loss" in table:
            lines.append(pd.DataFrame(_field_columns(table)).to_string())
    return "\n".join(lines)


def _field_columns(table) -> dict:
    """The field's metrics of a condition's summary rows (indexed by agent), as text columns:
    gain-loss ratio, P&L-to-MAP ($/share), and where the run has them the shortfall (bp of
    the arrival price) and the probability of beating the reference, with 95% intervals."""
    columns = {
        "gain/loss": _ranged(table, "gain_loss", 2),
        "PnL/MAP $/sh": _ranged(table, "pnl_to_map", 4),
    }
    if "shortfall_bp" in table:
        columns["shortfall bp"] = _ranged(table, "shortfall_bp", 2)
    if "p_beat_reference" in table:  # "-": the reference itself, or no one session to pair
        beats = _ranged(table, "p_beat_reference", 2)
        columns["P(beat reference)"] = beats.where(table["p_beat_reference"].notna(), "-")
    return columns


def _ranged(table, column: str, digits: int):
    """Each row's ``column`` and its interval (``column``_low, _high) as text, "x [low, high]"
    to ``digits`` decimals; a value that is no number in words (`_undefined`), and a value
    with no interval said why (`_one_seed`)."""
    return table.apply(
        lambda r: (
            _undefined(r, r[column])
            or f"{r[column]:.{digits}f} "
            + (
                _one_seed(r)
                if r[column + "_low"] != r[column + "_low"]  # NaN: one seed's value alone
                else f"[{r[column + '_low']:.{digits}f}, {r[column + '_high']:.{digits}f}]"
            )
        ),
        axis=1,
    )


def _one_seed(row) -> str:
    """Why a metric has a value and no interval: the one seed of its run, or the one seed
    of several whose metric is a number (the others' are not: a seed that never traded has
    no Sharpe ratio), and one value has no spread to resample."""
    seeds = int(row.get("seeds", 1))
    return "[one seed: no interval]" if seeds == 1 else f"[1 of {seeds} seeds: no interval]"


def _plateau_text(row) -> str:
    """'from episode N' for an agent whose training curve plateaued, else 'not reached'."""
    if row.get("plateaued") is True or row.get("plateaued") == 1:
        return f"from episode {int(row.plateau_episode)}"
    return "not reached" if row.get("plateaued") is False else ""


def aligned(rows: Sequence[Sequence[str]]) -> str:
    """Rows of text as columns, each as wide as its widest cell, two spaces apart."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows
    )
