"""Experiment kind ``compare``: each agent trained alone, then tested, in one market.

One job per (agent, seed); all agents of a seed index meet the same market randomness.
Tables: ``summary.csv`` (test metrics per agent with intervals over seeds; with the task's
reference among the agents, each agent's probability of beating it, session by session).
Figures: learning curves and Sharpe bars (`evaluation.experiment.tables`).
"""

from __future__ import annotations

from tradearena.envs.seats import SeatedMarket
from tradearena.evaluation.experiment.rollout import TEST, Job, episodes, trained_alone
from tradearena.evaluation.experiment.schema import Config, Locator
from tradearena.evaluation.experiment.store import EpisodeRecord
from tradearena.evaluation.experiment.tables import summary_figures as figures
from tradearena.evaluation.experiment.tables import summary_tables as tables

__all__ = ["check", "figures", "plan", "run", "tables"]

SECTIONS: tuple[str, ...] = ()
"""Optional config tables this kind reads (besides market, training, testing, agents)."""


def check(config: Config, where: Locator) -> None:
    """Nothing beyond the common checks: any agents compare."""


def plan(config: Config) -> list[Job]:
    """One job per (agent, seed), agents in file order."""
    return [
        Job(f"{label}/seed={s}", s, (label,), config)
        for label in config.labels
        for s in range(config.seeds)
    ]


def run(job: Job) -> list[EpisodeRecord]:
    """Train one agent in the clean market, then test it there."""
    config = job.config
    (label,) = job.labels
    agent, records = trained_alone(config, job, config.agent(label), config.index(label))
    seated = SeatedMarket(config.market, [agent])
    return records + episodes(
        seated, config, job, phase=TEST, condition=0, condition_name="clean", labels=[label]
    )
