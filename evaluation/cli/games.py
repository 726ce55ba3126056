"""``tradearena games FILE.csv``: the equilibria of a payoff table, printed (and written)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from tradearena.envs.errors import into, replacing

if TYPE_CHECKING:
    from tradearena.evaluation.analysis.games import Analysis


def games_command(args: argparse.Namespace) -> int:
    """``tradearena games FILE.csv [--roles R1,R2 | --reduce n] [--out DIR] [--resamples B]
    [--seed S]``."""
    from tradearena.evaluation.analysis.games import analyse, read_table, write_equilibria

    if args.roles:
        return _role_games(args)
    table = read_table(args.table, args.reduce)
    if args.reduce is not None:
        print(f"deviation-preserving reduction to {table.p} players")
    analysis = analyse(table, resamples=args.resamples, seed=args.seed)
    print(_report(analysis))
    if args.out:
        for path in write_equilibria(args.out, analysis, **_run_settings(Path(args.table))):
            print(path)
    return 0


def _run_settings(table: Path) -> dict[str, str]:
    """The payoff and weighting that name and draw the replicator dynamics of ``table``: a
    tournament's (its config.toml beside the table, as `tradearena run` wrote it), else the
    table's file name and the default weighting."""
    from tradearena.evaluation.experiment.config import parse_config

    config = table.parent / "config.toml"
    if config.is_file():
        as_run = parse_config(config.read_text(), source=str(config), complete=False)
        if as_run.kind == "tournament":
            settings = as_run.tournament
            return {"payoff": settings.payoff, "weighting": settings.weighting}
    return {"payoff": table.name}


def _role_games(args: argparse.Namespace) -> int:
    """A role game: its equilibria with each role's regret, welfare and deviation gains (no
    bootstrap)."""
    from tradearena.evaluation.analysis.games import (
        TOL,
        format_role_equilibria,
        read_role_table,
        role_frame,
    )
    from tradearena.evaluation.analysis.roles import role_equilibria

    roles = [r.strip() for r in args.roles.split(",") if r.strip()]
    table = read_role_table(args.table, roles)
    frame = role_frame(table, role_equilibria(table, tol=TOL))
    described = "; ".join(
        f"{r}: {n} players, {list(own)}"
        for r, n, own in zip(table.roles, table.players, table.strategies)
    )
    print(f"role game: {described}")
    print(format_role_equilibria(frame))
    if args.out:
        path = Path(args.out) / "equilibria.csv"
        with into(args.out), replacing(path) as temporary:
            frame.to_csv(temporary, index=False, float_format="%.10g")
        print(path)
    return 0


def _report(analysis: Analysis) -> str:
    """What ``tradearena games`` prints of a symmetric game: its equilibria with their
    intervals, its maximum-welfare profile, and where to sample next."""
    from tradearena.evaluation.analysis.games import equilibria_frame, format_equilibria

    table, best = analysis.table, analysis.best
    drawn = analysis.bootstrap
    source = ""
    if drawn is None and table.stderr is None:
        source = "; no intervals: the table has no stderr_<s> columns"
    profile = ", ".join(f"{s} {n}" for s, n in zip(table.strategies, best.counts))
    lines = [
        f"game: {table.p} players, strategies {list(table.strategies)}{source}",
        format_equilibria(equilibria_frame(analysis)) if analysis.found else "no equilibrium",
        "",
        f"maximum-welfare profile: {profile}: {best.welfare:.3g} per player",
    ]
    if drawn is not None and table.stderr is not None:
        lines.append(_sample_next(analysis))
    return "\n".join(lines)


def _sample_next(analysis: Analysis, top: int = 3) -> str:
    """The ``top`` profiles whose episodes would narrow the widest regret interval (the
    largest bound) most (`resampling.regret_variance`)."""
    from tradearena.evaluation.analysis.payoffs import profile_key
    from tradearena.evaluation.analysis.resampling import regret_variance

    bounds = analysis.bootstrap.regret_bound
    e = int(np.flatnonzero(bounds >= bounds.max() - 1e-12)[0])  # the first of equal ones
    shares = regret_variance(analysis.table, analysis.found[e].x)
    order = np.argsort(-shares, kind="stable")[:top]
    named = ", ".join(
        f"{profile_key(analysis.table.counts[r])} ({shares[r]:.0%})" for r in order if shares[r]
    )
    return (
        f"sample next, for the widest regret interval (equilibrium {e + 1}): "
        f"{named or 'nothing (no sampling variance)'}"
    )
