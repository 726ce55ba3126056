"""Experiment kind ``robustness``: agents trained in the clean market, tested under
perturbations.

One job per seed trains every agent (an adversary comes from one of them, e.g. RA3-Q), then
tests each in the clean market and under each ``[[perturbations]]`` entry: the adversary
taking over the agent's actions with probability p, or trading against it from its own seat
(rewarded with minus the agent's reward), or extra zero-intelligence traders. The adversary
reads the observation kind it declares (tabular for RA3-Q, features for deep RA3-Q).
Tables and figures as for ``compare``, one row and one chart per condition.
"""

from __future__ import annotations

from tradearena import agents
from tradearena.agents.base import Agent
from tradearena.envs.seats import SeatedMarket
from tradearena.envs.simulator.traders import MAX_MEMBERS
from tradearena.evaluation.experiment.rollout import (
    ADVERSARY,
    TEST,
    Job,
    episodes,
    seed_int,
    trained_alone,
)
from tradearena.evaluation.experiment.schema import Config, Locator, Perturbation
from tradearena.evaluation.experiment.store import EpisodeRecord
from tradearena.evaluation.experiment.tables import (  # compare's summary, per condition
    summary_figures as figures,
)
from tradearena.evaluation.experiment.tables import summary_tables as tables

__all__ = ["check", "figures", "plan", "run", "tables"]

SECTIONS = ("perturbations",)
"""Optional config tables this kind reads."""


def check(config: Config, where: Locator) -> None:
    """Perturbations are given; each adversary names an agent that trains one (the config
    gave one without a ``source`` the first such agent); the extra zero-intelligence traders
    of a "zi" condition, with the market's, make a population of at most `MAX_MEMBERS`."""
    if not config.perturbations:
        raise where.error(("kind",), "a robustness experiment needs [[perturbations]]")
    sources = [s.label for s in config.agents if agents.resolve(s.id).trains_adversary]
    for i, perturbation in enumerate(config.perturbations):
        extra = config.market.extra_zi
        if perturbation.type == "zi" and perturbation.n_agents + extra > MAX_MEMBERS:
            raise where.error(
                ("perturbations", i, "n_agents"),
                f"with the market's extra_zi ({extra:,}), more than {MAX_MEMBERS:,} traders",
            )
        if perturbation.type == "adversary" and perturbation.source not in sources:
            raise where.error(
                ("perturbations", i, "source"),
                f"must name an agent that trains an adversary (e.g. ra3q); candidates: {sources}",
            )


def plan(config: Config) -> list[Job]:
    """One job per seed, training and testing every agent."""
    labels = tuple(config.labels)
    return [Job(f"all/seed={s}", s, labels, config) for s in range(config.seeds)]


def run(job: Job) -> list[EpisodeRecord]:
    """Train every agent alone, then test each under every condition."""
    config = job.config
    trained, records = {}, []
    for index, spec in enumerate(config.agents):
        trained[spec.label], train_records = trained_alone(config, job, spec, index)
        records += train_records
    conditions: list[Perturbation | None] = [None, *config.perturbations]  # None: clean
    for label, agent in trained.items():
        for c, condition in enumerate(conditions):
            seated = _condition(config, job, agent, trained, c, condition)
            records += episodes(
                seated,
                config,
                job,
                phase=TEST,
                condition=c,
                condition_name="clean" if condition is None else condition.name,
                labels=[label, "adversary"],
            )
    return records


def _condition(
    config: Config,
    job: Job,
    agent: Agent,
    trained: dict[str, Agent],
    c: int,
    condition: Perturbation | None,
) -> SeatedMarket:
    """The market of test condition ``c`` (None: the clean market) with ``agent`` in seat 0."""
    market = config.market
    if condition is None:
        return SeatedMarket(market, [agent])
    if condition.type == "zi":
        return SeatedMarket(market, [agent], extra_zi=condition.n_agents)
    adversary = trained[condition.source].adversary_policy(seed_int(config, job.seed, ADVERSARY, c))
    if condition.mode == "trader":
        return SeatedMarket(market, [agent, adversary], opposes={1: 0})
    return SeatedMarket(market, [agent], takeover=(0, float(condition.p)), adversary=adversary)
