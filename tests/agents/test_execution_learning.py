"""Learners in the Almgren-Chriss model market, against its exactly optimal schedules.

Risk-neutral Q-learning learns TWAP exactly; RAQL with an exponential utility (beta) learns
the mean-variance optimum with risk aversion -beta / 2 (its fixed point in this market, see
`envs.execution_model`): it front-loads, as Almgren-Chriss predicts for a positive risk
aversion. beta = -0.125 with sigma = 2 gives sigma^2 risk_aversion = 0.25: optimum
[3, 2, 2, 1], whose objective is within 0.5 of [4, 2, 1, 1]'s, so the learner is held to the
objective (within 0.5) rather than to one schedule.
"""

from __future__ import annotations

import numpy as np
import pytest

from tradearena import agents
from tradearena.envs.execution_model import (
    AlmgrenChrissMarket,
    optimal_schedule,
    schedule_objective,
)

MARKET = AlmgrenChrissMarket(sigma=2.0)
EPISODES, SEEDS = 20_000, (0, 1, 2)
BETA = -0.125


def trained_schedule(name: str, seed: int, **params) -> tuple[list[int], agents.Agent]:
    agent = agents.make(
        name,
        observation_space=MARKET.observation_space,
        action_space=MARKET.action_space,
        gamma=1.0,
        seed=seed,
        **params,
    )
    for episode in range(EPISODES):
        state, _ = MARKET.reset(seed=1_000_000 * seed + episode)
        done = False
        while not done:
            action = agent.act(state, explore=True)
            following, reward, done, _, _ = MARKET.step(action)
            agent.update(state, action, reward, following, done, False)
            state = following
        agent.end_episode()
    state, _ = MARKET.reset(seed=0)
    schedule = []
    for _ in range(MARKET.n_steps):
        state, _, _, _, info = MARKET.step(agent.act(state, explore=False))
        schedule.append(info["sold"])
    return schedule, agent


@pytest.mark.parametrize("seed", SEEDS)
def test_q_learning_learns_twap(seed):
    schedule, agent = trained_schedule("q_learning", seed)
    values, _, twap = optimal_schedule(MARKET, 0.0)
    assert schedule == twap.tolist() == [2, 2, 2, 2]
    start = MARKET.shares  # state of k = 0 steps done, all lots left
    assert agent.values(start)[2] == pytest.approx(values[0, start], abs=0.5)  # -16


@pytest.mark.parametrize("seed", SEEDS)
def test_risk_averse_raql_front_loads_to_the_almgren_chriss_optimum(seed):
    risk_aversion = -BETA / 2
    schedule, _ = trained_schedule("raql", seed, utility={"name": "exponential", "beta": BETA})
    _, _, best = optimal_schedule(MARKET, risk_aversion)
    assert (
        schedule_objective(MARKET, schedule, risk_aversion)
        >= schedule_objective(MARKET, best, risk_aversion) - 0.5
    )
    holdings = MARKET.shares - np.cumsum(schedule)
    twap_holdings = MARKET.shares - np.cumsum([2, 2, 2, 2])
    assert schedule[0] > 2 and (holdings <= twap_holdings).all()
