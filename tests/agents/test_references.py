"""The market-making reference: Avellaneda-Stoikov quotes, by formula and in the market."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from tradearena import agents
from tradearena.envs.seats import SeatedMarket
from tradearena.envs.spec import MarketSpec

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
    """The classic result in this market: gamma = 0.1 against a nearly risk-neutral 0.001
    (sigma 0.6, kappa 1.5), over the same 20 sessions: less inventory at the close, a higher
    per-episode Sharpe."""
    averse_sharpe, averse_inventory = play(maker(0.1, sigma=0.6, kappa=1.5))
    neutral_sharpe, neutral_inventory = play(maker(0.001, sigma=0.6, kappa=1.5))
    assert averse_inventory < 0.6 * neutral_inventory
    assert averse_sharpe > 1.5 * neutral_sharpe > 0


EXECUTION = MarketSpec(
    task="execution",
    population="light",
    n_steps=30,
    parent_order=1000,
    position_limit=1000,
    reward_scale=0.1,
)


def test_twap_keeps_to_the_even_schedule():
    """After step k of 30, within one lot of 1000 k / 30 shares done; all done at the close."""
    market = SeatedMarket(EXECUTION, [agents.make("twap", market_spec=EXECUTION)])
    for seed in range(3):
        market.reset(seed)
        for k in range(1, 31):
            market.step()
            done = market.market.account(0).inventory
            assert abs(done - 1000 * k / 30) <= 100, (seed, k, done)
        assert done == 1000


def test_passive_twap_slices_the_execution_task_in_lots():
    """1,000 shares in 30 steps of 100-share lots: one lot a slice of 3 steps; L >= 2."""
    assert agents.make("passive_twap", market_spec=EXECUTION).slice_steps == 3
    with pytest.raises(ValueError, match=r"slice_steps must be in \[2, n_steps=30\]"):
        agents.make("passive_twap", market_spec=EXECUTION, slice_steps=1)
    small = dataclasses.replace(EXECUTION, parent_order=50)  # less than a lot: one slice
    assert agents.make("passive_twap", market_spec=small).slice_steps == 30


def test_passive_twap_rests_at_the_touch_and_crosses_the_remainder_at_the_slice_end():
    """A hand-built book (no background traders): others bid 200 at 9,999 and offer 500 at
    10,001. Buying 300 in 9 steps, slices of 3: in each slice the lot rests at the others'
    best bid for 2 steps and what is left is crossed at the slice's last step."""
    spec = MarketSpec(
        task="execution", population="none", n_steps=9, parent_order=300, position_limit=300
    )
    table = SeatedMarket(spec, [agents.make("passive_twap", market_spec=spec)])
    table.reset(0)
    book = table.market.book
    book.limit(1, 9_999, 200, owner=5)
    book.limit(-1, 10_001, 500, owner=5)

    def step(k: int) -> tuple[int, list[tuple[int, int, int]]]:
        """Step k: (inventory, the seat's resting orders as (side, price, shares))."""
        if k == 4:  # a seller hits the bid for 250: the others' 200 ahead, then 50 of ours
            book.market(-1, 250, owner=5)
        if k == 7:  # a seller takes our remaining 50, alone at 9,999 by then
            book.market(-1, 50, owner=5)
        table.step()
        return table.market.account(0).inventory, [o[1:] for o in book.owned(0)]

    rest = [(1, 9_999, 100)]
    # slice 1: rests a lot behind the others' 200, unfilled; crosses one lot at 10,001
    assert [step(k) for k in range(3)] == [(0, rest), (0, rest), (100, [])]
    # slice 2: 50 of the lot fill at 9,999, the 50 left rest in the queue; the slice end
    # crosses a whole lot for the missing 50 (ahead of the schedule by 50)
    assert [step(k) for k in range(3, 6)] == [(100, rest), (150, [(1, 9_999, 50)]), (250, [])]
    # slice 3: the 50 still to buy rest and fill at 9,999: nothing is crossed at its end
    assert [step(k) for k in range(6, 9)] == [(250, [(1, 9_999, 50)]), (300, []), (300, [])]
    # bought 200 at 10,001 and 100 at 9,999 against an arrival mid of 10,000 ticks of $0.01
    assert table.market.mids()[0] == 10_000
    assert table.score(0) == pytest.approx(-(200 * 0.01 - 100 * 0.01))


def execution_profile(agent, sessions=30):
    """(mean step by which half the order is done, sd of the score) over test sessions."""
    market = SeatedMarket(EXECUTION, [agent])
    halves, scores = [], []
    for seed in range(10_000, 10_000 + sessions):
        market.reset(seed)
        half, done = None, False
        while not done:
            _, _, done = market.step()
            if half is None and market.market.account(0).inventory >= 500:
                half = market.market.step_index
        halves.append(half)
        scores.append(market.score(0))
    return np.mean(halves), np.std(scores)


def test_a_risk_averse_learner_front_loads_the_execution():
    """Almgren-Chriss in the order book: RAQL (beta = -2 per agent unit, rewards x 0.1) gets
    half of the parent order done far earlier than risk-neutral Q-learning, and its
    shortfall varies less, after the same 1,000 training sessions."""
    profiles = {}
    for name, params in (
        ("q_learning", {}),
        ("raql", {"utility": {"name": "exponential", "beta": -2.0}}),
    ):
        agent = agents.make(
            name,
            observation_space=EXECUTION.observation_space("tabular"),
            action_space=EXECUTION.action_space,
            seed=0,
            **params,
        )
        trainer = SeatedMarket(EXECUTION, [agent], learners=(0,))
        for episode in range(1000):
            trainer.play(episode, learn=True)
        profiles[name] = execution_profile(agent)
    (neutral_half, neutral_sd), (averse_half, averse_sd) = profiles["q_learning"], profiles["raql"]
    assert averse_half < 0.5 * neutral_half
    assert averse_sd < 0.75 * neutral_sd


def value_agent_pnl(noise: float) -> float:
    spec = MarketSpec(
        task="informed", population="light", n_steps=60, position_limit=500, signal_noise=noise
    )
    market = SeatedMarket(spec, [agents.make("value_agent", market_spec=spec, threshold=2.0)])
    return np.mean([market.play(1000 + s)[0]["pnl"] for s in range(30)])


def test_the_value_agent_profits_from_a_sharp_signal_and_loses_on_a_blurred_one():
    """The same 30 sessions, threshold 2 bp: a 1-tick look at the fundamental earns (about $5
    a session), a 5-tick look makes the rule trade on noise and lose (about -$24)."""
    assert value_agent_pnl(1.0) > 0 > value_agent_pnl(5.0)
