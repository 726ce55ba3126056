"""Experiment kind ``psro``: an empirical game whose strategy set grows by learning.

Start from the strategies of ``[[agents]]``, each trained alone once per repetition and saved
(as a pretrained tournament's are). Each round (`analysis.psro.psro`):

1. every profile of ``[tournament] players`` seats over the current strategies is played
   with frozen copies of the saved strategies (`experiment.profiles.play_profile`; the profiles of
   earlier rounds are not played again) and scored as a tournament scores them;
2. the game's equilibrium of largest support (focal deviation payoffs) is the round's
   mixture, with its regret;
3. the ``[psro] learner`` is trained, once per repetition, in a seat of its own against the
   other seats' strategies drawn from the mixture afresh for every training episode, and
   saved as the strategy ``<learner label>_r<round>``;
4. its profiles are played, and its deviation gain against the mixture measured (payoff
   units); it joins the game when the gain exceeds ``[psro] threshold``.

The loop stops when a response gains no more than the threshold, or after ``[psro] rounds``
rounds. Jobs are named by the strategies they seat, not by the round, so a resumed run skips
every job it stored and continues at the first round not finished; the jobs of one round run
in parallel on the executor (`drive` plans them round by round).

Tables: ``summary.csv``, ``psro.csv`` (one row per round: round, strategies, ``p_<s>`` the
mixture, regret, response, gain, added) and, per round, ``rounds/round-<r>/payoffs.csv`` (the
game solved) and ``extended.csv`` (that game with the round's response). Figures: learning
curves and ``psro.png`` (regret and gain per round, with the threshold).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from tradearena import agents
from tradearena.envs.seats import SeatedMarket
from tradearena.evaluation.analysis.payoffs import PayoffTable, profile_key
from tradearena.evaluation.analysis.plots import psro_figure, save_figure, save_learning_curves
from tradearena.evaluation.analysis.psro import Round, psro_rounds
from tradearena.evaluation.experiment.profiles import play_profile, saved_strategy, seat_payoffs
from tradearena.evaluation.experiment.rollout import (
    AGENT,
    OPPONENTS,
    TRAIN,
    Job,
    build_agent,
    keep_agent,
    seed_int,
    seed_sequence,
    trained_alone,
)
from tradearena.evaluation.experiment.schema import AgentEntry, Config, Locator
from tradearena.evaluation.experiment.store import EpisodeRecord
from tradearena.evaluation.experiment.tables import summary_tables

__all__ = [
    "Responding",
    "agent_entries",
    "check",
    "drive",
    "figures",
    "history",
    "plan",
    "profile_jobs",
    "response_label",
    "run",
    "tables",
]

SECTIONS = ("tournament", "psro")
"""Optional config tables this kind reads."""
STRATEGIES, PROFILES, RESPONSES = 0, 1, 2
"""Job stages: the initial strategies trained alone, profiles played, responses trained."""
ROUNDS = "rounds"
"""The run directory's folder of each round's tables."""


class Incomplete(Exception):
    """A round's game lacks profiles (a job of it failed): the loop stops there."""


@dataclasses.dataclass(frozen=True)
class Responding(Config):
    """The config of a round's response jobs: its agents the round's strategies, and the
    ``mixture`` (strategy label -> probability) the response's opponents are drawn from."""

    mixture: dict[str, float] = dataclasses.field(default_factory=dict)


def check(config: Config, where: Locator) -> None:
    """The learner is a registered agent that builds in the market, with a label of its own;
    the game has neither roles nor a reduction."""
    if not config.psro.learner.id:
        raise where.error(("psro", "learner", "id"), "a psro experiment names its learner")
    try:
        agents.resolve(config.psro.learner.id)
        build_agent(_response_spec(config, 1), config.market, seed=0)
    except (TypeError, ValueError) as error:
        raise where.error(("psro", "learner"), str(error)) from None
    if config.tournament.roles or config.tournament.reduced:
        raise where.error(("tournament",), "a psro game has one population and no reduction")
    taken = [response_label(config, r) for r in range(1, config.psro.rounds + 1)]
    clash = sorted(set(config.labels) & set(taken))
    if clash:
        raise where.error(("psro", "learner", "label"), f"responses {clash} clash with [[agents]]")


def response_label(config: Config, r: int) -> str:
    """The label of round ``r``'s response (rounds from 1): ``<learner label>_r<r>``."""
    return f"{config.psro.learner.label}_r{r}"


def _response_spec(config: Config, r: int) -> AgentEntry:
    """The agent entry of round ``r``'s response."""
    return dataclasses.replace(config.psro.learner, label=response_label(config, r))


def _round_config(config: Config, strategies: Sequence[str]) -> Config:
    """``config`` with the responses among ``strategies`` added to its agents (frozen)."""
    responses = len([s for s in strategies if s not in config.labels])
    specs = [
        dataclasses.replace(_response_spec(config, r), train=False) for r in range(1, responses + 1)
    ]
    return dataclasses.replace(config, agents=(*config.agents, *specs))


def _key(labels: Sequence[str]) -> str:
    """A profile's name by its strategies' labels and counts, e.g. ``"hold:1,raql:2"`` (the
    same in every round, whatever the strategy set)."""
    return ",".join(f"{label}:{labels.count(label)}" for label in sorted(set(labels)))


def plan(config: Config) -> list[Job]:
    """The first round's jobs: each initial strategy trained alone per repetition, then
    every profile over them (later rounds: `drive`)."""
    return profile_jobs(config, config.labels)


def profile_jobs(config: Config, strategies: Sequence[str]) -> list[Job]:
    """The jobs of the game over ``strategies``: the initial strategies' training (stage
    `STRATEGIES`), then every profile of ``[tournament] players`` seats per repetition."""
    round_config = _round_config(config, strategies)
    jobs = [
        Job(f"train/{label}/rep={rep}", rep, (label,), config, STRATEGIES)
        for label in config.labels
        for rep in range(config.seeds)
    ]
    for counts in PayoffTable.profiles(config.tournament.players, len(strategies)):
        seats = tuple(s for s, n in zip(strategies, counts) for _ in range(n))
        jobs += [
            Job(f"profile={_key(seats)}/rep={rep}", rep, seats, round_config, PROFILES)
            for rep in range(config.seeds)
        ]
    return jobs


def _response_jobs(config: Config, strategies: Sequence[str], mixture: np.ndarray) -> list[Job]:
    """Round ``r``'s response trained against ``mixture`` over ``strategies``, per
    repetition."""
    r = len(strategies) - len(config.agents) + 1
    label = response_label(config, r)
    shares = {s: float(x) for s, x in zip(strategies, mixture)}
    round_config = _round_config(config, [*strategies, label])
    responding = Responding(**vars(round_config), mixture=shares)
    return [
        Job(f"respond/{label}/rep={rep}", rep, (label,), responding, RESPONSES)
        for rep in range(config.seeds)
    ]


def history(
    config: Config,
    table_of: Callable[[Sequence[str]], PayoffTable],
    respond: Callable[[tuple[str, ...], np.ndarray], None] | None = None,
) -> Iterator[Round]:
    """The PSRO rounds of ``config`` (`analysis.psro.psro_rounds` from its agents' labels),
    each as it is done, the games read by ``table_of``; ``respond(strategies, mixture)`` first
    trains each round's response when given."""

    def best_response(strategies: tuple[str, ...], mixture: np.ndarray) -> str:
        if respond is not None:
            respond(strategies, mixture)
        return response_label(config, len(strategies) - len(config.agents) + 1)

    settings = config.psro
    return psro_rounds(
        table_of,
        best_response,
        config.labels,
        threshold=settings.threshold,
        rounds=settings.rounds,
    )


def drive(
    config: Config,
    execute: Callable[[list[Job]], None],
    records: Callable[[str], pd.DataFrame],
) -> None:
    """Run the rounds: each round's profiles, then its response, through ``execute`` (which
    skips the jobs stored already; `evaluation.experiment.runner.Execution`), each game read from
    ``records("test")``, the test records stored so far. Stops early, leaving the failed jobs
    to the run's report, when a round's game cannot be completed."""

    def table_of(strategies: Sequence[str]) -> PayoffTable:
        execute(profile_jobs(config, strategies))
        return game(records("test"), config, strategies)

    with contextlib.suppress(Incomplete):
        for _ in history(config, table_of, lambda s, x: execute(_response_jobs(config, s, x))):
            pass


def game(records: pd.DataFrame, config: Config, strategies: Sequence[str]) -> PayoffTable:
    """The payoff table over ``strategies`` of a PSRO run's test records (`seat_payoffs`
    with the tournament's payoff); `Incomplete` when a profile has no records."""
    keys = {}
    for counts in PayoffTable.profiles(config.tournament.players, len(strategies)):
        keys[_key([s for s, n in zip(strategies, counts) for _ in range(n)])] = counts
    mine = records[records["condition"].isin(list(keys))]
    if set(mine["condition"]) != set(keys) or mine.empty:
        missing = sorted(set(keys) - set(mine["condition"]))
        raise Incomplete(f"the game over {list(strategies)} has no records of {missing}")
    settings = config.tournament
    seats = seat_payoffs(mine, payoff=settings.payoff, sharpe_floor=settings.sharpe_floor)
    seats["profile"] = seats["profile"].map(lambda key: profile_key(keys[key]))
    return PayoffTable.from_records(seats, strategies=list(strategies))


def run(job: Job) -> list[EpisodeRecord]:
    """An initial strategy trained alone (`trained_alone`, which saves it); a profile played
    by frozen copies (condition: the profile's `_key`); or a response trained (`_respond`)."""
    config = job.config
    if job.stage == STRATEGIES:
        (label,) = job.labels
        return trained_alone(config, job, config.agent(label), config.index(label))[1]
    if job.stage == PROFILES:
        return play_profile(job, _key(job.labels), pretrained=True)
    return _respond(job)


def _respond(job: Job) -> list[EpisodeRecord]:
    """Train the learner of ``job`` in seat 0 for ``[training] episodes`` episodes, its
    ``players - 1`` opponents drawn from the job's mixture for each episode (frozen copies of
    the saved strategies), then save it; its training records (condition ``respond``)."""
    config = job.config
    (label,) = job.labels
    index = config.index(label)
    spec = dataclasses.replace(config.agents[index], train=True)
    market = config.market
    episodes = config.training.episodes
    learner = build_agent(spec, market, seed_int(config, job.seed, AGENT, index), episodes)
    names = list(config.mixture)
    shares = np.array([config.mixture[s] for s in names])
    draw = np.random.default_rng(seed_sequence(config, job.seed, OPPONENTS, index))
    seated: dict[tuple[str, ...], SeatedMarket] = {}
    records = []
    for e in range(episodes):
        picked = draw.choice(len(names), size=config.tournament.players - 1, p=shares)
        opponents = tuple(names[i] for i in sorted(picked))
        if opponents not in seated:
            seats = [learner, *(saved_strategy(job, config.agent(s), market) for s in opponents)]
            seated[opponents] = SeatedMarket(market, seats, learners=(0,))
        result = seated[opponents].play(seed_sequence(config, job.seed, TRAIN, 0, e), learn=True)
        records.append(EpisodeRecord(0, label, "train", "respond", e, **result[0], value=None))
    keep_agent(job, spec, learner)
    return records


def agent_entries(config: Config) -> dict[str, AgentEntry]:
    """The entry of every strategy the run may save, for its cards: the file's
    ``[[agents]]`` and each round's response (the learner's, labelled)."""
    out = {entry.label: entry for entry in config.agents}
    for r in range(1, config.psro.rounds + 1):
        out[response_label(config, r)] = _response_spec(config, r)
    return out


def tables(directory: Path, config: Config, records: pd.DataFrame) -> pd.DataFrame:
    """Write ``summary.csv``, and ``psro.csv`` with each round's tables (module docstring)
    for the rounds whose games are complete; return the summary."""
    summary = summary_tables(directory, config, records)
    solved: dict[tuple[str, ...], PayoffTable] = {}

    def table_of(strategies: Sequence[str]) -> PayoffTable:
        solved[tuple(strategies)] = game(records, config, strategies)
        return solved[tuple(strategies)]

    rounds: list[Round] = []
    with contextlib.suppress(Incomplete):  # the rounds finished before it are kept
        for found in history(config, table_of):
            rounds.append(found)
    if not rounds:
        return summary
    everyone = list(max(solved, key=len))
    rows = []
    for r, found in enumerate(rounds):
        folder = directory / ROUNDS / f"round-{r}"
        folder.mkdir(parents=True, exist_ok=True)
        solved[found.strategies].to_csv(folder / "payoffs.csv")
        solved[(*found.strategies, found.response)].to_csv(folder / "extended.csv")
        shares = dict(zip(found.strategies, found.mixture))
        rows.append(
            {
                "round": r,
                "strategies": " ".join(found.strategies),
                **{f"p_{s}": shares.get(s, 0.0) for s in everyone},
                "regret": found.regret,
                "response": found.response,
                "gain": found.gain,
                "added": found.added,
            }
        )
    pd.DataFrame(rows).to_csv(directory / "psro.csv", index=False, float_format="%.10g")
    return summary


def figures(directory: Path, config: Config, records: pd.DataFrame) -> list[Path]:
    """Learning curves and ``psro.png`` (when ``psro.csv`` was written)."""
    written = save_learning_curves(directory, records)
    if (directory / "psro.csv").exists():
        frame = pd.read_csv(directory / "psro.csv")
        figure = psro_figure(frame["round"], frame["regret"], frame["gain"], config.psro.threshold)
        written.append(save_figure(figure, directory / "psro.png"))
    return written
