"""The Almgren-Chriss model market: rewards add up to minus the shortfall, the exact
schedule solves the mean-variance objective, and matches the closed form in fine lots."""

from __future__ import annotations

import itertools

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from tradearena import envs  # noqa: F401 (registers the ids)
from tradearena.envs.execution_model import (
    AlmgrenChrissMarket,
    almgren_chriss_holdings,
    optimal_schedule,
    schedule_objective,
)


def test_the_env_keeps_the_gymnasium_api_and_sells_everything():
    market = AlmgrenChrissMarket(sigma=2.0, gamma=0.5)
    check_env(market, skip_render_check=True)
    assert gymnasium.make("tradearena/AlmgrenChriss-v0", shares=6).unwrapped.shares == 6
    state, _ = market.reset(seed=1)
    rewards, done = [], False
    while not done:
        state, reward, done, _, info = market.step(0)  # never sell: all at the last step
        rewards.append(reward)
    assert info["left"] == 0 and info["sold"] == market.shares
    assert info["shortfall"] == pytest.approx(-sum(rewards))
    market.reset(seed=1)
    with pytest.raises(ValueError, match="not in Discrete"):
        market.step(9)


def test_rewards_are_minus_the_shortfall_against_arrival():
    """Same noise, direct bookkeeping: cash from fills at S_{k-1} - eta n, prices moved by
    sigma xi - gamma n; the shortfall is X S_0 - cash."""
    market = AlmgrenChrissMarket(sigma=1.5, eta=0.7, gamma=0.3)
    market.reset(seed=4)
    noise = np.random.default_rng(0)
    market.np_random = np.random.default_rng(0)
    price, cash, total = 100.0, 0.0, 0.0
    for action in (3, 1, 2, 0):
        _, reward, _, _, info = market.step(action)
        sold = info["sold"]
        cash += sold * (price - market.eta * sold)
        price += market.sigma * noise.standard_normal() - market.gamma * sold
        total += reward
    assert total == pytest.approx(cash - market.shares * 100.0)


@pytest.mark.parametrize("risk_aversion", [0.0, 0.0625, 0.25, 1.0])
def test_the_schedule_is_the_best_of_every_schedule(risk_aversion):
    market = AlmgrenChrissMarket(sigma=2.0, gamma=0.4)
    _, _, schedule = optimal_schedule(market, risk_aversion)
    trades = range(market.max_trade + 1)
    best = max(
        schedule_objective(market, (*first, market.shares - sum(first)), risk_aversion)
        for first in itertools.product(trades, repeat=market.n_steps - 1)
        if sum(first) <= market.shares
    )
    assert schedule_objective(market, schedule, risk_aversion) == pytest.approx(best)


def test_risk_neutral_is_twap_and_risk_averse_front_loads():
    market = AlmgrenChrissMarket(sigma=2.0)
    assert optimal_schedule(market, 0.0)[2].tolist() == [2, 2, 2, 2]
    assert optimal_schedule(market, 0.0625)[2].tolist() == [3, 2, 2, 1]
    assert optimal_schedule(market, 0.25)[2].tolist() == [4, 2, 1, 1]


def test_in_fine_lots_the_schedule_is_the_closed_form():
    market = AlmgrenChrissMarket(shares=200, max_trade=200, sigma=0.1, eta=0.01)
    _, _, schedule = optimal_schedule(market, 0.25)
    holdings = market.shares - np.cumsum([0, *schedule])
    assert np.abs(holdings - almgren_chriss_holdings(market, 0.25)).max() <= 0.5
    assert np.allclose(almgren_chriss_holdings(market, 0.0), [200, 150, 100, 50, 0])


@pytest.mark.parametrize("when", ["before reset", "after its last step", "after close"])
def test_no_step_is_taken_without_an_episode(when):
    """A step before `reset`, after the episode's last step or after `close`: a RuntimeError
    saying to reset (it went on stepping, its observations outside the space and
    ``terminated`` false); a reset starts a new episode."""
    env = AlmgrenChrissMarket(shares=4, n_steps=2, max_trade=2)
    if when != "before reset":
        env.reset(seed=0)
    if when == "after its last step":
        assert env.step(1)[2] is False and env.step(1)[2] is True
    if when == "after close":
        env.close()
    with pytest.raises(RuntimeError, match=r"^no episode to step: call reset\(\)"):
        env.step(1)
    obs, _ = env.reset(seed=0)
    assert env.observation_space.contains(obs) and env.step(1)[0] == 1 * 5 + 3
