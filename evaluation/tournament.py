"""Tournaments: every profile of p seats over k strategies, simulated and scored per seat.

A profile (n_1, ..., n_k), sum p, seats n_i agents of strategy i in one market; all
C(p+k-1, k-1) profiles are played, each ``seeds`` times (repetitions). Modes:

- ``train-in-profile``: the seated learners train together in that profile, then are tested;
- ``pretrained``: each strategy is trained once per repetition alone in the reference market
  (the compare setting) and frozen; every profile of that repetition seats copies of it.

Each seat's payoff is risk-sensitive by default, the floored Sharpe ratio of its test-episode
PnL (`evaluation.metrics.floored_sharpe` with ``sharpe_floor`` dollars, so that a seat that
never trades scores 0 and no payoff is infinite), or its mean test PnL (``payoff = "pnl"``).
The heuristic payoff table (N | U) averages the payoffs of a strategy's seats over repetitions.

Tables: ``summary.csv``, ``payoffs.csv`` (the config's payoff), ``payoffs_sharpe.csv`` and
``payoffs_pnl.csv``. Figures: learning curves and the replicator dynamics of both tables.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pandas as pd

from agents.base import Agent
from envs.seats import SeatedMarket
from evaluation.compare import tables as summary_tables
from evaluation.metrics import floored_sharpe
from evaluation.payoffs import PayoffTable, profile_key
from evaluation.plots import save_dynamics, save_learning_curves
from evaluation.rollout import (
    AGENT,
    TEST,
    TRAIN,
    Job,
    build_agent,
    episodes,
    market_spec,
    seed_int,
    trained_alone,
)
from evaluation.schema import Locator
from evaluation.store import EpisodeRecord

__all__ = ["check", "figures", "payoff_table", "plan", "run", "seat_payoffs", "tables"]

SECTIONS = ("tournament",)
"""Optional config tables this kind reads."""
PAYOFFS = ("sharpe", "pnl")
"""The payoffs a tournament is scored by."""


def check(config: dict, where: Locator) -> None:
    """A tournament needs at least two strategies."""
    if len(config["agents"]) < 2:
        raise where.error(("kind",), "a tournament needs at least two strategies ([[agents]])")


def plan(config: dict) -> list[Job]:
    """One job per (profile, repetition); a job's labels are its seats' strategies."""
    labels = [spec["label"] for spec in config["agents"]]
    p = config["tournament"]["players"]
    jobs = []
    for counts in PayoffTable.profiles(p, len(labels)):
        seats = tuple(label for label, n in zip(labels, counts) for _ in range(n))
        for rep in range(config["seeds"]):
            jobs.append(Job(f"profile={profile_key(counts)}/rep={rep}", rep, seats, config))
    return jobs


_PRETRAINED: dict[tuple[str, int, int], Agent] = {}  # (config text, strategy, repetition)


def _pretrained(config: dict, job: Job, index: int) -> Agent:
    """Strategy ``index`` trained alone for repetition ``job.seed``, once per process."""
    key = (config["source_text"], index, job.seed)
    if key not in _PRETRAINED:
        _PRETRAINED[key], _ = trained_alone(config, job, config["agents"][index], index)
    return copy.deepcopy(_PRETRAINED[key])


def run(job: Job) -> list[EpisodeRecord]:
    """Play one profile: seat the strategies, train them in the profile (or load the
    pretrained ones), test; records of every seat, condition = the profile's key (`profile_key`,
    e.g. ``"2-1-1"``)."""
    config = job.config
    index = {spec["label"]: i for i, spec in enumerate(config["agents"])}
    specs = [config["agents"][index[label]] for label in job.labels]
    market = market_spec(config)
    pretrained = config["tournament"]["mode"] == "pretrained"
    seat_agents = [
        _pretrained(config, job, index[spec["label"]])
        if pretrained
        else build_agent(
            spec,
            market,
            seed_int(config, job.seed, AGENT, index[spec["label"]], seat),
            config["training"]["episodes"],
        )
        for seat, spec in enumerate(specs)
    ]
    seats = range(len(specs))
    table = SeatedMarket(market, seat_agents, learners=() if pretrained else seats)
    counts = tuple(job.labels.count(spec["label"]) for spec in config["agents"])
    common = {
        "condition": 0,
        "condition_name": profile_key(counts),
        "labels": list(job.labels),
        "recorded": seats,
    }
    records = []
    if not pretrained:
        records += episodes(table, config, job, phase=TRAIN, **common)
    return records + episodes(table, config, job, phase=TEST, **common)


def seat_payoffs(
    records: pd.DataFrame, *, payoff: str = "sharpe", sharpe_floor: float = 0.01
) -> pd.DataFrame:
    """Each seat's payoff in each (profile, repetition) from its test episodes: columns
    profile, strategy, repetition, payoff. ``payoff``: "sharpe" (`floored_sharpe` of the
    episode PnLs, dollars) or "pnl" (mean episode PnL, dollars)."""
    test = records[records["phase"] == "test"]

    def score(pnl: pd.Series) -> float:
        values = pnl.to_numpy(float)
        return float(values.mean()) if payoff == "pnl" else floored_sharpe(values, sharpe_floor)

    grouped = test.groupby(["condition", "seed", "seat", "agent"], sort=True)["pnl"]
    out = grouped.apply(score).reset_index()
    out.columns = ["profile", "repetition", "seat", "strategy", "payoff"]
    return out[["profile", "strategy", "repetition", "seat", "payoff"]]


def payoff_table(records: pd.DataFrame, config: dict, payoff: str | None = None) -> PayoffTable:
    """The heuristic payoff table of a tournament run's records, with the config's payoff
    ("sharpe" or "pnl") unless ``payoff`` names one."""
    settings = config["tournament"]
    seats = seat_payoffs(
        records, payoff=payoff or settings["payoff"], sharpe_floor=settings["sharpe_floor"]
    )
    return PayoffTable.from_records(seats, strategies=[a["label"] for a in config["agents"]])


def tables(directory: Path, config: dict, records: pd.DataFrame) -> pd.DataFrame:
    """Write ``summary.csv`` and the payoff tables (when there are records); return the
    summary."""
    summary = summary_tables(directory, config, records)
    if not records.empty:
        payoff_table(records, config).to_csv(directory / "payoffs.csv")
        for payoff in PAYOFFS:
            payoff_table(records, config, payoff).to_csv(directory / f"payoffs_{payoff}.csv")
    return summary


def figures(directory: Path, config: dict, records: pd.DataFrame) -> list[Path]:
    """Learning curves and the replicator dynamics of the Sharpe and PnL payoff tables
    (``dynamics.png``, ``dynamics_pnl.png``)."""
    weighting = config["tournament"]["weighting"]
    written = save_learning_curves(directory, records)
    for payoff in PAYOFFS:
        table = PayoffTable.read_csv(directory / f"payoffs_{payoff}.csv")
        name = "dynamics.png" if payoff == "sharpe" else f"dynamics_{payoff}.png"
        written.append(save_dynamics(table, directory / name, payoff=payoff, weighting=weighting))
    return written
