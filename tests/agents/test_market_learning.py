"""Tabular RAQL and RA2-Q learn to profit from a trending replayed market (ReplayMarket-v0).

The tape is one recorded synthetic session of ``N_STEPS`` one-minute steps whose
zero-intelligence fundamental drifts up by ``DRIFT_TICKS`` over the session; replay makes
every episode the same market, so the learners must find "buy early, hold" from the tabular
observations. PnL is ``info["value"]`` at the close, in dollars.
"""

import gymnasium
import numpy as np
import pytest

from tradearena import (
    agents,
    envs,  # noqa: F401 (registers the tradearena/... ids)
)
from tradearena.envs.simulator.recording import synthetic_tape
from tradearena.envs.simulator.traders import MarketMaker, Noise, ZeroIntelligence

N_STEPS, DRIFT_TICKS = 30, 30
TRAIN_EPISODES, TEST_EPISODES, SEEDS = 20, 3, (0, 1, 2)
REWARD_SCALE = 0.1  # dollars -> agent units: per-step TD errors of a few units, |beta d| ~ 1


@pytest.fixture(scope="module")
def env():
    traders = [
        Noise(100),
        ZeroIntelligence(102, drift=DRIFT_TICKS / (N_STEPS * 60)),
        MarketMaker(2),
    ]
    tape = synthetic_tape(0, traders=traders, n_steps=N_STEPS)
    return gymnasium.make(
        "tradearena/ReplayMarket-v0", tape=tape, observation="tabular", n_steps=N_STEPS
    )


def episode(env, agent, seed, learn):
    """One session; returns the final marked-to-market value (dollars)."""
    obs, info = env.reset(seed=seed)
    done = False
    while not done:
        action = agent.act(obs, explore=learn)
        next_obs, reward, terminated, truncated, info = env.step(action)
        if learn:
            agent.update(obs, action, reward, next_obs, terminated, truncated)
        obs, done = next_obs, terminated or truncated
    agent.end_episode()
    return info["value"]


def mean_test_pnl(env, name, **params):
    pnl = []
    for seed in SEEDS:
        agent = agents.make(name, seed=seed, **params)
        if agent.learning:
            for e in range(TRAIN_EPISODES):
                episode(env, agent, 100 * seed + e, learn=True)
            utility = agent.tables.utility if hasattr(agent, "tables") else agent.utility
            assert utility.clipped == 0, "reward_scale too large: exp(beta * d) was clipped"
            pnl += [episode(env, agent, 10_000 + e, learn=False) for e in range(TEST_EPISODES)]
        else:  # random acts the same with or without explore
            pnl += [episode(env, agent, 10_000 + e, learn=True) for e in range(TEST_EPISODES)]
    return float(np.mean(pnl))


def test_raql_and_ra2q_profit_on_a_trending_tape(env):
    tabular = {
        "observation_space": env.observation_space,
        "action_space": env.action_space,
        "gamma": 0.99,
        "exploration": 0.2,
        "reward_scale": REWARD_SCALE,
    }
    random_pnl = mean_test_pnl(env, "random", n_actions=env.action_space.n)
    for name, params in (("raql", {}), ("ra2q", {"k": 5})):
        pnl = mean_test_pnl(env, name, **tabular, **params)
        assert pnl > 0.0, (name, pnl)
        assert pnl > random_pnl, (name, pnl, random_pnl)
