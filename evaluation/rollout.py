"""One Job: build the market, fill the seats, train, then test; return per-episode records.

A Job is pure: its config and seed index in, records out. Every random draw comes from one
root ``numpy.random.SeedSequence(root_seed)`` addressed by spawn keys (seed index, then role,
seat or phase, episode), so a result never depends on which worker ran it, in what order, or
on how many workers there were. All agents of one seed index meet the same market randomness
(common random numbers), which sharpens comparisons.
"""

from __future__ import annotations

import json
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from gymnasium import spaces

import agents
from agents.base import Agent
from envs.market import Market
from envs.seats import SeatedMarket, load_tape
from envs.tapes import Tape, synthetic_tape
from envs.traders import Trader, light, rmsc04
from evaluation.config import trader_classes
from evaluation.store import EpisodeRecord, JobResult

__all__ = [
    "Job",
    "build_agent",
    "build_market",
    "episodes",
    "observation_kind",
    "play",
    "run_job",
    "trained_alone",
]

TRAIN, TEST, AGENT, ADVERSARY = 0, 1, 2, 3  # spawn-key roles


@dataclass(frozen=True)
class Job:
    """One unit of work: an experiment ``config`` (checked, plain data), the ``seed`` index and
    the labels of the agents it trains (one for a compare job, all for a robustness job)."""

    id: str
    seed: int
    labels: tuple[str, ...]
    config: dict


def seed_sequence(config: dict, *key: int) -> np.random.SeedSequence:
    """The SeedSequence at spawn key ``key`` under the experiment's root seed."""
    return np.random.SeedSequence(config["root_seed"], spawn_key=key)


def seed_int(config: dict, *key: int) -> int:
    """A non-negative int seed drawn from `seed_sequence` (for agents that take ints)."""
    return int(seed_sequence(config, *key).generate_state(1, np.uint64)[0] >> np.uint64(1))


# ----------------------------------------------------------------------------- building
def background(market: dict) -> list[Trader]:
    """The background population of a market table: explicit ``traders`` or a named one."""
    if market["traders"]:
        classes = trader_classes()
        return [
            classes[t["type"]](**{k: v for k, v in t.items() if k != "type"})
            for t in market["traders"]
        ]
    return light() if market["population"] == "light" else rmsc04()


@lru_cache(maxsize=8)
def _synthetic(market_json: str) -> Tape:
    """The synthetic day a market table records (cached per process: jobs share it)."""
    m = json.loads(market_json)
    return synthetic_tape(
        m["tape_seed"],
        traders=background(m),
        n_steps=max(m["day_steps"], m["n_steps"]),
        step_seconds=float(m["step_seconds"]),
    )


@lru_cache(maxsize=8)
def _file_tape(path: str) -> Tape:
    return load_tape(path)


def build_market(config: dict, n_seats: int, *, extra_zi: int = 0) -> Market:
    """The market of an experiment with ``n_seats`` seats (plus ``extra_zi`` ZI traders)."""
    from envs.seats import make_market

    m = config["market"]
    kwargs: dict[str, Any] = {
        "step_seconds": float(m["step_seconds"]),
        "position_limit": m["position_limit"],
        "fee_per_share": float(m["fee_per_share"]),
    }
    if not m["tape"]:
        return make_market(
            n_seats,
            traders=background(m),
            extra_zi=extra_zi,
            n_steps=m["n_steps"],
            tick_size=float(m["tick_size"]),
            **kwargs,
        )
    if m["tape"] == "synthetic":
        tape = _synthetic(json.dumps(m, sort_keys=True))
        kwargs["n_steps"] = m["n_steps"]
    else:
        tape = _file_tape(m["tape"])
        kwargs["n_steps"] = m["n_steps"]
    traders = background(m) if m["traders"] and m["tape"] != "synthetic" else []
    return make_market(n_seats, traders=traders, tape=tape, extra_zi=extra_zi, **kwargs)


def observation_kind(agent_class: type) -> str:
    """The observation an agent class reads: its ``observation`` attribute ("tabular" or
    "features", the default)."""
    return getattr(agent_class, "observation", "features")


def spaces_of(market: dict, kind: str) -> tuple[spaces.Space, spaces.Space]:
    """(observation space, action space) of a seat of a market table, for an observation
    ``kind``."""
    from envs.actions import make_actions
    from envs.features import Discretizer, feature_space

    if kind == "tabular":
        observation = spaces.Discrete(Discretizer.default().n_states)
    else:
        observation = feature_space()
    return observation, spaces.Discrete(make_actions(market["actions"], market["order_size"]).n)


def build_agent(
    spec: dict, observation_space: spaces.Space, action_space: spaces.Space, seed: int
) -> Agent:
    """An agent from its config table, given the seat's spaces and a seed (`agents.make`
    passes them to agents that take them)."""
    return agents.make(
        spec["id"],
        **{
            "observation_space": observation_space,
            "action_space": action_space,
            "seed": seed,
            **spec["params"],
        },
    )


def seated(config: dict, market: Market, kinds: list[str], **adversaries: Any) -> SeatedMarket:
    """The seats' view of ``market``, one observation kind per seat."""
    m = config["market"]
    return SeatedMarket(
        market,
        observation=kinds,
        actions=m["actions"],
        order_size=m["order_size"],
        reward_scale=float(m["reward_scale"]),
        **adversaries,
    )


# ----------------------------------------------------------------------------- episodes
def play(
    core: SeatedMarket,
    seat_agents: list[Agent],
    seed: np.random.SeedSequence,
    *,
    learn: bool,
    learners: tuple[int, ...] = (0,),
    adversary: Agent | None = None,
) -> list[dict[str, float]]:
    """One episode. Seats in ``learners`` explore and update when ``learn``; the others act
    greedily. With a take-over, ``adversary`` acts on the taken-over seat's tabular
    observation. Returns per seat: reward (sum, agent units), pnl (dollars), trades,
    inventory (shares), steps."""
    obs = core.reset(seed)
    totals = np.zeros(core.n_seats)
    steps = 0
    explore = [learn and i in learners for i in range(len(seat_agents))]
    while True:
        actions = [a.act(o, explore=e) for a, o, e in zip(seat_agents, obs, explore)]
        adversary_action = None
        if adversary is not None:
            seat = core.takeover[0]
            adversary_action = adversary.act(core.observe(seat, "tabular"), explore=False)
        next_obs, rewards, done = core.step(actions, adversary_action)
        if core.taken_over:
            actions[core.takeover[0]] = adversary_action
        if learn:
            for i in learners:
                seat_agents[i].update(obs[i], actions[i], rewards[i], next_obs[i], done, False)
        totals += rewards
        obs = next_obs
        steps += 1
        if done:
            break
    for i in learners:
        seat_agents[i].end_episode()
    market = core.market
    out = []
    for i in range(core.n_seats):
        account = market.account(i)
        out.append(
            {
                "reward": float(totals[i]),
                "pnl": market.value(i),
                "trades": account.trades,
                "inventory": account.inventory,
                "steps": steps,
            }
        )
    return out


def episodes(
    core: SeatedMarket,
    seat_agents: list[Agent],
    config: dict,
    job: Job,
    *,
    phase: int,
    condition: int,
    condition_name: str,
    labels: list[str],
    **kwargs: Any,
) -> list[EpisodeRecord]:
    """All episodes of one phase (train or test) under one condition, as records of the
    learner seats."""
    n = config["training" if phase == TRAIN else "testing"]["episodes"]
    learners = kwargs.get("learners", (0,))
    records = []
    for episode in range(n):
        seed = seed_sequence(config, job.seed, phase, condition, episode)
        result = play(core, seat_agents, seed, learn=phase == TRAIN, **kwargs)
        records += [
            EpisodeRecord(
                seat,
                labels[seat],
                "train" if phase == TRAIN else "test",
                condition_name,
                episode,
                **result[seat],
            )
            for seat in learners
        ]
    return records


# ----------------------------------------------------------------------------- kinds
def trained_alone(
    config: dict, job: Job, spec: dict, index: int
) -> tuple[Agent, list[EpisodeRecord]]:
    """An agent trained alone in the clean market, with its training records."""
    cls = agents.resolve(spec["id"])
    core = seated(config, build_market(config, 1), [observation_kind(cls)])
    agent = build_agent(
        spec,
        core.observation_spaces[0],
        core.action_space,
        seed_int(config, job.seed, AGENT, index),
    )
    records = episodes(
        core,
        [agent],
        config,
        job,
        phase=TRAIN,
        condition=0,
        condition_name="clean",
        labels=[spec["label"]],
    )
    return agent, records


def run_compare(job: Job) -> list[EpisodeRecord]:
    """Train one agent in the clean market, then test it there."""
    config = job.config
    (label,) = job.labels
    index, spec = next((i, s) for i, s in enumerate(config["agents"]) if s["label"] == label)
    agent, records = trained_alone(config, job, spec, index)
    core = seated(config, build_market(config, 1), [observation_kind(type(agent))])
    return records + episodes(
        core, [agent], config, job, phase=TEST, condition=0, condition_name="clean", labels=[label]
    )


def run_robustness(job: Job) -> list[EpisodeRecord]:
    """Train every agent in the clean market, then test each in the clean market and under
    each perturbation: an adversary trained within another agent (e.g. RA3-Q) taking over
    or trading against it, or extra zero-intelligence traders."""
    config = job.config
    trained, records = {}, []
    for index, spec in enumerate(config["agents"]):
        trained[spec["label"]], train_records = trained_alone(config, job, spec, index)
        records += train_records
    conditions = [{"name": "clean", "type": "clean"}, *config["perturbations"]]
    for label, agent in trained.items():
        kind = observation_kind(type(agent))
        for c, condition in enumerate(conditions):
            kwargs: dict[str, Any] = {}
            if condition["type"] == "zi":
                core = seated(
                    config, build_market(config, 1, extra_zi=condition["n_agents"]), [kind]
                )
            elif condition["type"] == "adversary" and condition["mode"] == "trader":
                policy = trained[condition["source"]].adversary_policy(
                    seed_int(config, job.seed, ADVERSARY, c)
                )
                core = seated(config, build_market(config, 2), [kind, "tabular"], opposes={1: 0})
                agent_pair = [agent, policy]
                records += episodes(
                    core,
                    agent_pair,
                    config,
                    job,
                    phase=TEST,
                    condition=c,
                    condition_name=condition["name"],
                    labels=[label, "adversary"],
                )
                continue
            elif condition["type"] == "adversary":
                kwargs["adversary"] = trained[condition["source"]].adversary_policy(
                    seed_int(config, job.seed, ADVERSARY, c)
                )
                core = seated(
                    config, build_market(config, 1), [kind], takeover=(0, float(condition["p"]))
                )
            else:
                core = seated(config, build_market(config, 1), [kind])
            records += episodes(
                core,
                [agent],
                config,
                job,
                phase=TEST,
                condition=c,
                condition_name=condition["name"],
                labels=[label],
                **kwargs,
            )
    return records


def runner(kind: str) -> Callable[[Job], list[EpisodeRecord]]:
    """The job function of an experiment kind."""
    if kind == "tournament":
        from evaluation.tournament import run_tournament

        return run_tournament
    return {"compare": run_compare, "robustness": run_robustness}[kind]


def run_job(job: Job) -> JobResult:
    """Run a job; an exception (a custom agent's bug, say) becomes a failed result with its
    traceback instead of propagating."""
    start = time.perf_counter()
    try:
        records = runner(job.config["kind"])(job)
    except Exception:  # noqa: BLE001 - recorded with its traceback; the other jobs go on
        return JobResult(job.id, job.seed, (), time.perf_counter() - start, traceback.format_exc())
    return JobResult(job.id, job.seed, tuple(records), time.perf_counter() - start)
