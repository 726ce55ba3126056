"""The play of one profile: strategies seated together in one market (new agents, the
learners among them trained together, or frozen copies of the strategies a run saved), tested,
and each seat's payoff scored: what the tournament and PSRO kinds play their games with."""

from __future__ import annotations

import pandas as pd

from tradearena import agents
from tradearena.agents.base import Agent
from tradearena.envs.errors import UserError
from tradearena.envs.seats import SeatedMarket
from tradearena.envs.spec import MarketSpec
from tradearena.evaluation.analysis.metrics import floored_sharpe
from tradearena.evaluation.experiment.rollout import (
    AGENT,
    TEST,
    TRAIN,
    Job,
    episodes,
    keep_agent,
    seat_agent,
    seed_int,
)
from tradearena.evaluation.experiment.schema import AgentEntry
from tradearena.evaluation.experiment.store import EpisodeRecord
from tradearena.evaluation.experiment.trained import Checkpoints, agent_path

__all__ = ["play_profile", "saved_strategy", "seat_payoffs"]


def play_profile(job: Job, key: str, *, pretrained: bool) -> list[EpisodeRecord]:
    """Seat the strategies of ``job.labels`` (frozen copies of those the run directory saved
    for the job's repetition when ``pretrained``; else new agents, the learners among them
    trained together in the profile and then saved), test; records of every seat, condition
    = ``key``."""
    config = job.config
    specs = [config.agent(label) for label in job.labels]
    market = config.market
    seat_agents = [
        saved_strategy(job, spec, market)
        if pretrained
        else seat_agent(
            spec, market, job, seed_int(config, job.seed, AGENT, config.index(spec.label), seat)
        )
        for seat, spec in enumerate(specs)
    ]
    learners = () if pretrained else [seat for seat, spec in enumerate(specs) if spec.train]
    seated = SeatedMarket(market, seat_agents, learners=learners)
    common = {
        "condition": 0,
        "condition_name": key,
        "labels": list(job.labels),
        "recorded": range(len(specs)),
    }
    records = []
    if learners:
        checkpoints = Checkpoints.of(config, job, "profile")
        records += episodes(seated, config, job, phase=TRAIN, checkpoints=checkpoints, **common)
    if not pretrained:
        for seat, (spec, agent) in enumerate(zip(specs, seat_agents)):
            keep_agent(job, spec, agent, f"profile-{key}", f"seat-{seat}")
    return records + episodes(seated, config, job, phase=TEST, **common)


def saved_strategy(job: Job, spec: AgentEntry, market: MarketSpec) -> Agent:
    """A frozen copy of the strategy of ``spec`` that the training job of this repetition
    saved in the run directory."""
    if not job.directory:
        raise UserError(
            "a pretrained tournament's profiles seat the strategies its training jobs saved "
            "in the run directory: run it with `tradearena run` "
            "(tradearena.evaluation.experiment.runner)"
        )
    path = agent_path(job.directory, spec.label, job.seed)
    return agents.load(path, custom=(spec.id,), market=market)


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
