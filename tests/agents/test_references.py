"""The market-making reference: Avellaneda-Stoikov quotes, by formula and in the market."""

from __future__ import annotations

import math

import numpy as np
import pytest

import agents
from envs.seats import SeatedMarket
from envs.spec import MarketSpec

MAKING = MarketSpec(
    task="making", population="light", n_steps=60, position_limit=500, reward_scale=0.01
)


def maker(gamma: float, **params) -> agents.Agent:
    return agents.make("avellaneda_stoikov", market_spec=MAKING, gamma=gamma, **params)


def test_quotes_follow_the_formula():
    """Flat: symmetric, at the level nearest half the AS spread beyond the touch. Long: the
    reservation price drops by q gamma sigma^2 tau, so the bid backs off and the ask joins."""
    agent = maker(0.1, sigma=0.6, kappa=1.5)
    half = (0.1 * 0.36 * 10 + 20 * math.log1p(0.1 / 1.5)) / 2  # tau = 10 steps
    level = round(half - 1.0)  # spread 2 ticks: the touch is 1 tick from the mid
    assert agent.quotes(0.0, 2.0, 10) == (level, level)
    assert agent.quotes(1.0, 2.0, 10) == (round(half + 0.36 - 1.0), 0)
    assert agent.quotes(-1.0, 2.0, 10) == (0, round(half + 0.36 - 1.0))
    assert agent.quotes(4.0, 2.0, 60) == (None, 0)  # far beyond the last level: bid off
    assert agent.quotes(1.0, 2.0, 0) == agent.quotes(0.0, 2.0, 0)  # no time left, no skew


def test_only_the_make_action_set():
    with pytest.raises(ValueError, match="'make' action set"):
        agents.make("avellaneda_stoikov", market_spec=MarketSpec())


def play(agent, sessions=20):
    market = SeatedMarket(MAKING, [agent])
    results = [market.play(10_000 + s)[0] for s in range(sessions)]
    pnl = np.array([r["pnl"] for r in results])
    return pnl.mean() / pnl.std(ddof=1), np.mean([abs(r["inventory"]) for r in results])


def test_a_risk_averse_maker_holds_less_inventory_and_has_the_higher_sharpe():
    """The classic result in this market: gamma = 0.1 against a nearly risk-neutral 0.001,
    over the same 20 sessions: less inventory at the close, a higher per-episode Sharpe."""
    averse_sharpe, averse_inventory = play(maker(0.1))
    neutral_sharpe, neutral_inventory = play(maker(0.001))
    assert averse_inventory < 0.6 * neutral_inventory
    assert averse_sharpe > 1.5 * neutral_sharpe > 0
