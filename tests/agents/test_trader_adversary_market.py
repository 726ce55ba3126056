"""The RA3-Q adversary as a trader learns in a market, driven only by `SeatedMarket`.

Seat 0 is a fixed protagonist (`buy_and_hold`: buys one large lot, then holds); seat 1 is the
trader adversary of an RA3-Q learner, opposed to seat 0 (its reward is minus seat 0's). The
lot is large next to the light population's depth, so the adversary's own market orders
move the price that marks seat 0's position: selling hurts it. The driver calls the
adversary's `update` (and through it `RA3Q.update_adversary`) on every training step; its
greedy return over fixed test sessions rises with training.
"""

import numpy as np
import pytest

from tradearena import agents
from tradearena.envs.seats import SeatedMarket
from tradearena.envs.spec import MarketSpec

SPEC = MarketSpec(
    population="light", n_steps=30, order_size=2000, position_limit=20_000, reward_scale=0.01
)
TRAIN_EPISODES, TEST_SEEDS = 600, range(10_000, 10_020)


def greedy_return(market: SeatedMarket) -> float:
    """Mean over the test sessions of the adversary seat's return, nobody exploring."""
    return float(np.mean([market.play(seed)[1]["reward"] for seed in TEST_SEEDS]))


@pytest.mark.parametrize("seed", [0, 1])
def test_trader_adversary_return_rises_against_a_fixed_protagonist(seed, monkeypatch):
    protagonist = agents.make("buy_and_hold", action_space=SPEC.action_space)
    owner = agents.make(
        "ra3q",
        observation_space=SPEC.observation_space("tabular"),
        action_space=SPEC.action_space,
        adversary_mode="trader",
        adversary_exploration=0.3,
        seed=seed,
    )
    adversary = owner.trader_adversary(seed=100 + seed)
    market = SeatedMarket(SPEC, [protagonist, adversary], learners=(1,), opposes={1: 0})
    updates = []
    learn = owner.update_adversary
    monkeypatch.setattr(owner, "update_adversary", lambda *t: (updates.append(t), learn(*t)))
    before = greedy_return(market)
    assert not updates and not owner.adversary.q.any()
    for episode in range(TRAIN_EPISODES):
        market.play(episode, learn=True)
    after = greedy_return(market)
    assert len(updates) == TRAIN_EPISODES * SPEC.n_steps
    assert after > before + 0.05, (before, after)
    assert not owner.tables.q.any()  # the protagonist's tables: untouched in trader mode
