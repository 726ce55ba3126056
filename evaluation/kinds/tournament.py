"""Tournaments: every profile of p seats over k strategies, simulated and scored per seat.

A profile (n_1, ..., n_k), sum p, seats n_i agents of strategy i in one market; all
C(p+k-1, k-1) profiles are played, each ``seeds`` times (repetitions). Modes:

- ``train-in-profile``: the seated learners train together in that profile, then are tested
  (a strategy with ``train = false`` stays frozen; a profile with no learner is only tested);
- ``pretrained``: each strategy is trained once per repetition alone in the reference market
  (the compare setting) by a job of its own, and saved; then every profile of that
  repetition seats frozen copies of the saved strategies and is only tested.

Each seat's payoff is risk-sensitive by default, the floored Sharpe ratio of its test-episode
PnL (`evaluation.analysis.metrics.floored_sharpe` with ``sharpe_floor`` dollars, so that a seat that
never trades scores 0 and no payoff is infinite), or its mean test PnL (``payoff = "pnl"``).
The heuristic payoff table (N | U) averages the payoffs of a strategy's seats over repetitions.

Tables: ``summary.csv``, ``payoffs.csv`` (the config's payoff), ``payoffs_sharpe.csv`` and
``payoffs_pnl.csv``, and ``equilibria.csv``: the Nash equilibria of ``payoffs.csv`` with their
regrets and bootstrap intervals, each cell's mean drawn from its standard error, as
``tradearena games payoffs.csv`` draws them (`evaluation.analysis.games`). Figures:
learning curves, the replicator dynamics of both tables and the equilibria (``equilibria.png``).

Roles (``[tournament] roles``, `evaluation.kinds.role_games`) make the game role-symmetric: its
profiles, payoff tables (``n_<role>_<strategy>`` columns) and equilibria (one mixture per
role) are the role game's. Many seats (``[tournament] reduced = n``): only the full-game
profiles that the deviation-preserving reduction to ``n`` players reads are played
(`analysis.reduction`); ``payoffs.csv`` holds them, ``payoffs_reduced.csv`` the reduced game,
whose equilibria and dynamics are reported.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from tradearena.evaluation.analysis.games import TOL, analyse, equilibria_frame, role_frame
from tradearena.evaluation.analysis.payoffs import PayoffTable, profile_key
from tradearena.evaluation.analysis.plots import (
    equilibria_figure,
    role_dynamics_figure,
    save_dynamics,
    save_figure,
    save_learning_curves,
)
from tradearena.evaluation.analysis.reduction import dpr_profiles, reduce_dpr
from tradearena.evaluation.analysis.roles import RoleTable, role_equilibria
from tradearena.evaluation.experiment.profiles import play_profile, seat_payoffs
from tradearena.evaluation.experiment.rollout import (
    Job,
    trained_alone,
)
from tradearena.evaluation.experiment.schema import MAX_JOBS, MAX_PROFILES, Config, Locator
from tradearena.evaluation.experiment.store import EpisodeRecord
from tradearena.evaluation.experiment.tables import summary_tables
from tradearena.evaluation.kinds.role_games import check_roles, role_key, role_profiles, role_table

__all__ = [
    "check",
    "figures",
    "payoff_table",
    "plan",
    "role_tables",
    "run",
    "solved",
    "tables",
]

SECTIONS = ("tournament",)
"""Optional config tables this kind reads."""
PAYOFFS = ("sharpe", "pnl")
"""The payoffs a tournament is scored by."""


def check(config: Config, where: Locator) -> None:
    """A tournament needs at least two strategies, roles declared as
    `role_games.check_roles` asks, and a reduction DPR can make (``players - 1`` a multiple
    of ``reduced - 1``), of a game without roles."""
    if len(config.agents) < 2:
        raise where.error(("kind",), "a tournament needs at least two strategies ([[agents]])")
    settings = config.tournament
    if settings.roles:
        check_roles(config, where)
    _check_size(config, where)
    if settings.reduced:
        if settings.roles:
            raise where.error(("tournament", "reduced"), "reduces a game without roles")
        try:
            dpr_profiles(settings.players, settings.reduced, len(config.agents))
        except ValueError as error:
            raise where.error(("tournament", "reduced"), str(error).partition(": ")[2]) from None


def _check_size(config: Config, where: Locator) -> None:
    """`ConfigError` naming ``players`` (or ``roles``) when the game has more than
    `MAX_PROFILES` profiles, or (a game played in full) its profiles times the repetitions
    make more than `MAX_JOBS` jobs; counted, not listed."""
    settings = config.tournament
    if settings.roles:
        field = ("tournament", "roles")
        games = [(t.seats, len(t.strategies)) for t in settings.roles.values()]
    else:
        field = ("tournament", "players")
        games = [(settings.players, len(config.agents))]
    profiles = math.prod(math.comb(seats + n - 1, n - 1) for seats, n in games)
    game = ", ".join(f"{seats:,} seats over {n} strategies" for seats, n in games)
    if profiles > MAX_PROFILES:
        raise where.error(
            field, f"a game of {game} has {profiles:,} profiles, more than {MAX_PROFILES:,}"
        )
    jobs = profiles * config.seeds
    if not settings.reduced and jobs > MAX_JOBS:
        raise where.error(
            field,
            f"a game of {game} has {profiles:,} profiles: {jobs:,} jobs over "
            f"{config.seeds:,} seeds, more than the {MAX_JOBS:,} a run may have",
        )


def _profiles(config: Config) -> list[tuple[str, tuple[str, ...]]]:
    """Every profile: (its key, its seats' labels); with roles, the role game's
    (`role_games.role_profiles`); with ``reduced``, only those its DPR game reads
    (`analysis.reduction.dpr_profiles`)."""
    settings = config.tournament
    if settings.roles:
        return list(role_profiles(settings.roles))
    labels = config.labels
    if settings.reduced:
        profiles = map(tuple, dpr_profiles(settings.players, settings.reduced, len(labels)))
    else:
        profiles = PayoffTable.profiles(settings.players, len(labels))
    return [
        (profile_key(counts), tuple(label for label, n in zip(labels, counts) for _ in range(n)))
        for counts in profiles
    ]


def solved(table: PayoffTable, config: Config) -> PayoffTable | None:
    """The game whose equilibria and dynamics a tournament reports: ``table``, or its DPR
    game of ``[tournament] reduced`` players; None when it lacks a profile that game needs."""
    reduced = config.tournament.reduced
    if not reduced:
        return table if table.complete else None
    try:
        return reduce_dpr(table, reduced)
    except ValueError:
        return None


def plan(config: Config) -> list[Job]:
    """One job per (profile, repetition); a job's labels are its seats' strategies. A
    pretrained tournament first has one job per (strategy, repetition) training it (stage 0;
    the profiles are stage 1)."""
    pretrained = config.tournament.mode == "pretrained"
    jobs = []
    if pretrained:
        jobs += [
            Job(f"train/{label}/rep={rep}", rep, (label,), config)
            for label in config.labels
            for rep in range(config.seeds)
        ]
    for key, seats in _profiles(config):
        for rep in range(config.seeds):
            jobs.append(Job(f"profile={key}/rep={rep}", rep, seats, config, int(pretrained)))
    return jobs


def run(job: Job) -> list[EpisodeRecord]:
    """A pretrained strategy's training job: train it alone (`trained_alone`, which saves it).
    A profile: `play_profile`, condition = the profile's key (`profile_key`, e.g.
    ``"2-1-1"``)."""
    config = job.config
    settings = config.tournament
    pretrained = settings.mode == "pretrained"
    if pretrained and job.stage == 0:
        (label,) = job.labels
        return trained_alone(config, job, config.agent(label), config.index(label))[1]
    if settings.roles:
        return play_profile(job, role_key(settings.roles, job.labels), pretrained=pretrained)
    counts = tuple(job.labels.count(label) for label in config.labels)
    return play_profile(job, profile_key(counts), pretrained=pretrained)


def payoff_table(records: pd.DataFrame, config: Config, payoff: str | None = None) -> PayoffTable:
    """The heuristic payoff table of a tournament run's records, with the config's payoff
    ("sharpe" or "pnl") unless ``payoff`` names one."""
    settings = config.tournament
    seats = seat_payoffs(
        records, payoff=payoff or settings.payoff, sharpe_floor=settings.sharpe_floor
    )
    return PayoffTable.from_records(seats, strategies=[a.label for a in config.agents])


def tables(directory: Path, config: Config, records: pd.DataFrame) -> pd.DataFrame:
    """Write ``summary.csv``, the payoff tables and, when the table has every profile,
    ``equilibria.csv`` (when there are records; a role game's: `role_tables`); return the
    summary."""
    summary = summary_tables(directory, config, records)
    if records.empty:
        return summary
    settings = config.tournament
    if settings.roles:
        role_tables(directory, config, records)
        return summary
    seats = seat_payoffs(records, payoff=settings.payoff, sharpe_floor=settings.sharpe_floor)
    table = PayoffTable.from_records(seats, strategies=config.labels)
    table.to_csv(directory / "payoffs.csv")
    for payoff in PAYOFFS:
        payoff_table(records, config, payoff).to_csv(directory / f"payoffs_{payoff}.csv")
    game = solved(table, config)
    if game is not None:
        if settings.reduced:
            game.to_csv(directory / "payoffs_reduced.csv")
        # the bootstrap draws the cells from their standard errors, as `tradearena games` does
        # from the payoffs.csv written above: the same intervals from the table alone
        analysis = analyse(game, seed=config.root_seed)
        frame = equilibria_frame(analysis)
        frame.to_csv(directory / "equilibria.csv", index=False, float_format="%.10g")
    return summary


def role_tables(directory: Path, config: Config, records: pd.DataFrame) -> None:
    """A role game's ``payoffs.csv`` (the config's payoff), ``payoffs_sharpe.csv`` and
    ``payoffs_pnl.csv`` (`role_games.role_table`), and, when complete, ``equilibria.csv``
    (`games.role_frame`: ``p_<role>_<strategy>``, each role's regret)."""
    settings = config.tournament
    names = {"payoffs.csv": settings.payoff, **{f"payoffs_{p}.csv": p for p in PAYOFFS}}
    for name, payoff in names.items():
        seats = seat_payoffs(records, payoff=payoff, sharpe_floor=settings.sharpe_floor)
        table = role_table(seats, settings.roles)
        table.to_frame().to_csv(directory / name, index=False, float_format="%.10g")
        if name == "payoffs.csv" and table.complete:
            frame = role_frame(table, role_equilibria(table, tol=TOL))
            frame.to_csv(directory / "equilibria.csv", index=False, float_format="%.10g")


def _role_figure(directory: Path) -> list[Path]:
    """A role game's ``dynamics.png`` (`role_dynamics_figure` of ``payoffs.csv`` with the
    equilibria of ``equilibria.csv``), when the game is complete."""
    if not (directory / "equilibria.csv").exists():
        return []
    found = pd.read_csv(directory / "equilibria.csv")
    roles = [c.removeprefix("regret_") for c in found.columns if c.startswith("regret_")]
    table = RoleTable.from_frame(pd.read_csv(directory / "payoffs.csv"), roles)
    mixtures = list(found[[f"p_{c}" for c in table.columns]].to_numpy())
    return [save_figure(role_dynamics_figure(table, mixtures=mixtures), directory / "dynamics.png")]


def figures(directory: Path, config: Config, records: pd.DataFrame) -> list[Path]:
    """Learning curves, the replicator dynamics of the Sharpe and PnL payoff tables
    (``dynamics.png``, ``dynamics_pnl.png``) and the equilibria of ``equilibria.csv`` on the
    focal replicator field of ``payoffs.csv`` (``equilibria.png``); each table's DPR game
    (`solved`) when ``[tournament] reduced`` is set; a role game's dynamics as trajectories
    (`_role_figure`)."""
    weighting = config.tournament.weighting
    written = save_learning_curves(directory, records)
    if config.tournament.roles:
        return written + _role_figure(directory)
    for payoff in PAYOFFS:
        table = solved(PayoffTable.read_csv(directory / f"payoffs_{payoff}.csv"), config)
        name = "dynamics.png" if payoff == "sharpe" else f"dynamics_{payoff}.png"
        if table is not None:
            path = directory / name
            written.append(save_dynamics(table, path, payoff=payoff, weighting=weighting))
    if (directory / "equilibria.csv").exists():
        table = solved(PayoffTable.read_csv(directory / "payoffs.csv"), config)
        found = pd.read_csv(directory / "equilibria.csv")
        mixtures = found[[f"p_{s}" for s in table.strategies]].to_numpy()
        figure = equilibria_figure(table, list(mixtures))
        written.append(save_figure(figure, directory / "equilibria.png"))
    return written
