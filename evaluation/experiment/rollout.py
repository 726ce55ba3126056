"""What every experiment kind shares: the Job, its seeds, its agents, its episodes.

A Job is pure: its config and seed index in, records out (and, given a run directory, the
agents it trained saved there, `evaluation.experiment.trained`). Every random draw comes from one
root ``numpy.random.SeedSequence(root_seed)`` addressed by spawn keys (seed index, then role,
seat or phase, episode), so a result never depends on which worker ran it, in what order, or
on how many workers there were. All agents of one seed index meet the same market randomness
(common random numbers), which sharpens comparisons.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tradearena import agents
from tradearena.agents.base import Agent
from tradearena.envs.batch import BatchedMarket
from tradearena.envs.seats import SeatedMarket, observation_kind
from tradearena.envs.spec import MarketSpec
from tradearena.evaluation.experiment.store import EpisodeRecord
from tradearena.evaluation.experiment.trained import (
    Checkpoints,
    agent_path,
    episodes_before,
    load_saved,
)

if TYPE_CHECKING:
    from tradearena.evaluation.experiment.schema import AgentEntry, Config

__all__ = [
    "Job",
    "build_agent",
    "episodes",
    "keep_agent",
    "opening_values",
    "seat_agent",
    "seed_int",
    "seed_sequence",
    "trained_alone",
]

TRAIN, TEST, AGENT, ADVERSARY, SPARRING, EVALUATE, OPPONENTS = 0, 1, 2, 3, 4, 5, 6  # spawn keys


@dataclass(frozen=True)
class Job:
    """One unit of an experiment's work: its ``config`` (a checked `Config`), the ``seed``
    index and the labels of the agents it trains (one for a compare job, all for a robustness
    job); a study of the market runs a `evaluation.experiment.parallel.Study` instead.
    Jobs of a ``stage`` run after every job of the stages before (a pretrained tournament's
    profiles after its strategies' training). ``directory``: the run directory, where the job
    saves its agents and checkpoints (`evaluation.experiment.trained`); "" for none."""

    id: str
    seed: int
    labels: tuple[str, ...]
    config: Config
    stage: int = 0
    directory: str = ""


def seed_sequence(config: Config, *key: int) -> np.random.SeedSequence:
    """The SeedSequence at spawn key ``key`` under the experiment's root seed."""
    return np.random.SeedSequence(config.root_seed, spawn_key=key)


def seed_int(config: Config, *key: int) -> int:
    """A non-negative int seed drawn from `seed_sequence` (for agents that take ints)."""
    return int(seed_sequence(config, *key).generate_state(1, np.uint64)[0] >> np.uint64(1))


# ----------------------------------------------------------------------------- building
def build_agent(spec: AgentEntry, market: MarketSpec, seed: int, episodes: int = 0) -> Agent:
    """A new agent of its config entry, in a seat of ``market`` (`agents.make` passes the
    spaces of the observation kind it reads, the seed, the spec and the planned training
    steps, ``episodes`` sessions of the market, to agents that take them)."""
    kind = observation_kind(agents.resolve(spec.id))
    steps = market.n_steps or market.market(0).n_steps
    return agents.make(
        spec.id,
        **{
            "observation_space": market.observation_space(kind),
            "action_space": market.action_space,
            "seed": seed,
            "market_spec": market,
            "total_timesteps": max(episodes * steps, 1),
            **spec.params,
        },
    )


def seat_agent(spec: AgentEntry, market: MarketSpec, job: Job, seed: int) -> Agent:
    """The agent of an experiment's agent entry in a seat of ``market``: the saved one its
    ``from`` names (for the job's seed index), or a new one seeded with ``seed``."""
    if spec.saved:
        return load_saved(spec, market, job.seed)
    return build_agent(spec, market, seed, job.config.training.episodes)


def keep_agent(job: Job, spec: AgentEntry, agent: Agent, *where: str) -> None:
    """Save ``agent`` (of agent entry ``spec``, trained by this job if ``spec.train``) in the
    job's run directory (`evaluation.experiment.trained.agent_path`), noting the training
    episodes it has had in all; nothing without a run directory."""
    if not job.directory:
        return
    trained = episodes_before(spec, job.seed)
    trained += job.config.training.episodes if spec.train else 0
    path = agent_path(job.directory, spec.label, job.seed, *where)
    agent.save(path, notes={"episodes_trained": trained})


# ----------------------------------------------------------------------------- episodes
def episodes(
    seated: SeatedMarket,
    config: Config,
    job: Job,
    *,
    phase: int,
    condition: int,
    condition_name: str,
    labels: Sequence[str],
    recorded: Sequence[int] = (0,),
    checkpoints: Checkpoints | None = None,
) -> list[EpisodeRecord]:
    """All episodes of one phase (train: the seated market's learners learn; test: greedy) under one
    condition, as records of the ``recorded`` seats, labelled by ``labels`` (one per seat).

    Training with ``[training] evaluate_every`` = E > 0 also evaluates: before the first and
    after every E-th training episode, ``evaluate_episodes`` greedy episodes, the same
    sessions at every checkpoint (so that checkpoints differ by the learning alone), recorded
    as phase "eval" with episode ``checkpoint * evaluate_episodes + i``; checkpoint c
    follows ``c * E`` training episodes.

    With ``[training] sessions`` = N > 1, up to N episodes are played at once in a batched
    market (`envs.batch.BatchedMarket`; not under a take-over adversary): each episode keeps
    its seed, and a greedy phase gives the same records as one by one (for agents whose
    greedy actions draw no random numbers), but a learner meets the N sessions' transitions
    step by step, in session order, rather than one whole episode after another.

    ``checkpoints`` (training): every seat's state and the records are kept whenever the
    episodes played pass a multiple of ``[training] checkpoint_every``, and at the end; a
    phase that finds one continues from it, to the records an uninterrupted phase gives."""
    training = config.training
    n = training.episodes if phase == TRAIN else config.testing.episodes
    every = training.evaluate_every if phase == TRAIN else 0
    name = "train" if phase == TRAIN else "test"
    sessions = training.sessions
    batch = BatchedMarket.like(seated, sessions) if sessions > 1 else None

    def play(seeds: list[np.random.SeedSequence], phase: str, first: int, learn: bool) -> None:
        """Episodes first, first + 1, ... from ``seeds``, N at a time."""
        for start in range(0, len(seeds), sessions):
            chunk = seeds[start : start + sessions]
            values = [
                [None] * seated.n_seats if learn else opening_values(seated, s) for s in chunk
            ]
            if batch is None:
                results = [seated.play(seed, learn=learn) for seed in chunk]
            else:
                results = batch.play(chunk, learn=learn)
            records.extend(
                EpisodeRecord(
                    seat,
                    labels[seat],
                    phase,
                    condition_name,
                    first + start + i,
                    **result[seat],
                    value=values[i][seat],
                )
                for i, result in enumerate(results)
                for seat in recorded
            )

    def evaluate(checkpoint: int) -> None:
        size = training.evaluate_episodes
        seeds = [seed_sequence(config, job.seed, EVALUATE, condition, i) for i in range(size)]
        play(seeds, "eval", checkpoint * size, learn=False)

    records: list[EpisodeRecord] = []
    done = 0
    if checkpoints is not None:
        done, records = checkpoints.restore(seated.policies)
    if every and done == 0:
        evaluate(0)
    while done < n:  # one batch of sessions at a time, none across a greedy checkpoint
        stop = min(n, (done // every + 1) * every if every else n, done + sessions)
        seeds = [seed_sequence(config, job.seed, phase, condition, e) for e in range(done, stop)]
        play(seeds, name, done, phase == TRAIN)
        before, done = done, stop
        if every and done % every == 0:
            evaluate(done // every)
        if checkpoints is not None and checkpoints.due(before, done, n):
            checkpoints.save(seated.policies, done, records)
    return records


def opening_values(seated: SeatedMarket, seed: np.random.SeedSequence) -> list[float | None]:
    """Each seat's greedy value estimate (the largest of its policy's ``values``, agent units)
    at the opening observation of the session of ``seed``; None for a policy without
    ``values`` (and no session opened when no policy has them). Leaves ``seed`` as it was
    (the session is opened from a copy of it, since a `SeedSequence` counts the children it
    spawns), so the episode plays the same session."""
    if not any(hasattr(policy, "values") for policy in seated.policies):
        return [None] * seated.n_seats
    observations = seated.reset(np.random.SeedSequence(seed.entropy, spawn_key=seed.spawn_key))
    return [
        float(np.max(policy.values(obs))) if hasattr(policy, "values") else None
        for policy, obs in zip(seated.policies, observations)
    ]


def trained_alone(
    config: Config, job: Job, spec: AgentEntry, index: int
) -> tuple[Agent, list[EpisodeRecord]]:
    """An agent trained alone in the clean market (unless its table says ``train = false``),
    with its training records, and kept in the run directory (`keep_agent`). An agent whose
    adversary trades (RA3-Q with ``adversary_mode = "trader"``) trains against it, seated
    opposite and learning too."""
    market = config.market
    agent = seat_agent(spec, market, job, seed_int(config, job.seed, AGENT, index))
    records: list[EpisodeRecord] = []
    if spec.train:
        seats: list[Agent] = [agent]
        adversary = agent.trader_adversary(seed_int(config, job.seed, SPARRING, index))
        if adversary is not None:
            seats.append(adversary)
        seated = SeatedMarket(
            market,
            seats,
            learners=range(len(seats)),
            opposes={1: 0} if adversary is not None else None,
        )
        records = episodes(
            seated,
            config,
            job,
            phase=TRAIN,
            condition=0,
            condition_name="clean",
            labels=[spec.label, "adversary"],
            checkpoints=Checkpoints.of(config, job, spec.label),
        )
    keep_agent(job, spec, agent)
    return agent, records
