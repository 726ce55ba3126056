"""Tests for tradearena.envs.multi_agent.MarketParallelEnv: PettingZoo API conformance, defaults,
determinism, opposed and takeover adversaries, and argument checks."""

import numpy as np
import pytest
from pettingzoo.test import parallel_api_test

from tradearena.envs.multi_agent import MarketParallelEnv
from tradearena.envs.simulator.traders import MarketMaker, Noise, ZeroIntelligence


def small_traders() -> list:
    return [MarketMaker(2, levels=10), Noise(100), ZeroIntelligence(20, arrival_rate=1 / 60)]


def episode(env: MarketParallelEnv, seed: int, policy) -> list[tuple]:
    """Every (obs, rewards, terminations, truncations, infos) of one episode, reset included."""
    obs, infos = env.reset(seed=seed)
    out = [(obs, {}, {}, {}, infos)]
    step = 0
    while env.agents:
        out.append(env.step({agent: policy(agent, step) for agent in env.agents}))
        step += 1
    return out


def cycle(agent: str, step: int) -> int:
    return (step + int(agent[-1]) if agent[-1].isdigit() else step) % 3


def assert_same(a: list[tuple], b: list[tuple]) -> None:
    assert len(a) == len(b)
    for (obs_a, *rest_a), (obs_b, *rest_b) in zip(a, b, strict=True):
        assert obs_a.keys() == obs_b.keys()
        for agent in obs_a:
            np.testing.assert_array_equal(obs_a[agent], obs_b[agent])
        assert rest_a == rest_b


# -------------------------------------------------------------------------------- the API
@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"opposes": {"seat_1": "seat_0"}},
        {"takeover": ("seat_0", 0.5)},
        {"n_seats": 3, "observation": "tabular", "actions": "quote"},
    ],
)
def test_parallel_api(kwargs):
    """PettingZoo's parallel API test passes for plain, opposed, takeover and tabular/quote
    variants."""
    env = MarketParallelEnv(n_steps=30, traders=small_traders(), **kwargs)
    parallel_api_test(env, num_cycles=40)


def test_parallel_api_full_population():
    """The API test also passes with the default rmsc04 background."""
    parallel_api_test(MarketParallelEnv(n_steps=30), num_cycles=40)


def test_defaults():
    """No arguments: two learner seats in the taker task's market (60 one-minute steps of
    the light population), feature observations and trade actions."""
    env = MarketParallelEnv()
    assert env.possible_agents == ["seat_0", "seat_1"]
    assert env.agents == []
    assert env.market.n_seats == 2 and env.market.n_steps == 60
    assert len(env.market.traders) == 4
    assert env.action_space("seat_0").n == 3
    assert env.observation_space("seat_1").shape == (8,)
    assert env.observation_space("seat_0") is env.observation_space("seat_0")
    obs, infos = env.reset(seed=0)
    assert env.agents == ["seat_0", "seat_1"]
    assert set(obs) == set(infos) == {"seat_0", "seat_1"}
    obs, rewards, terms, truncs, infos = env.step({"seat_0": 2, "seat_1": 0})
    assert (infos["seat_0"]["inventory"], infos["seat_1"]["inventory"]) == (100, -100)
    assert not any(terms.values()) and not any(truncs.values())


# ---------------------------------------------------------------------------- determinism
def test_same_seed_same_episode():
    """Two envs with the same seed give dict-equal episodes; another seed differs."""
    make = lambda: MarketParallelEnv(n_steps=30, traders=small_traders())  # noqa: E731
    a, b = episode(make(), 3, cycle), episode(make(), 3, cycle)
    assert_same(a, b)
    assert len(a) == 31
    assert all(a[-1][2].values())
    c = episode(make(), 4, cycle)
    assert [s[4]["seat_0"]["mid"] for s in a] != [s[4]["seat_0"]["mid"] for s in c]


def test_seat_orders_are_executed_in_random_order():
    """Seats' orders go in a random order per step: with both seats buying, each seat gets
    the better (first) price on some steps."""
    env = MarketParallelEnv(n_steps=40, traders=small_traders(), position_limit=10_000)
    env.reset(seed=1)
    first = {"seat_0": 0, "seat_1": 0}
    for _ in range(40):
        cash_before = [a.cash for a in env.market.accounts]
        env.step({"seat_0": 2, "seat_1": 2})
        paid = [before - a.cash for before, a in zip(cash_before, env.market.accounts, strict=True)]
        if paid[0] != paid[1]:
            first["seat_0" if paid[0] < paid[1] else "seat_1"] += 1
    assert first["seat_0"] > 0 and first["seat_1"] > 0


# ---------------------------------------------------------------------------- adversaries
def test_opposing_seat_reward_is_exactly_minus():
    """opposes={"seat_1": "seat_0"}: seat_1's reward is exactly minus seat_0's every step,
    though both trade for themselves."""
    env = MarketParallelEnv(n_steps=30, traders=small_traders(), opposes={"seat_1": "seat_0"})
    steps = episode(env, 2, cycle)
    assert env.possible_agents == ["seat_0", "seat_1"]
    nonzero = 0
    for _, rewards, *_ in steps[1:]:
        assert rewards["seat_1"] == -rewards["seat_0"]
        nonzero += rewards["seat_0"] != 0
    assert nonzero > 0
    assert env.market.account(1).trades > 0


def test_takeover_adversary_reward_and_frequency():
    """takeover=("seat_0", p): the adversary's reward is exactly minus seat_0's, and the share
    of steps where it acted is p within 5 standard errors; when it acts seat_0 executes its
    action."""
    p, n = 0.3, 1000
    env = MarketParallelEnv(
        n_steps=n,
        traders=[MarketMaker(2, levels=10, size=1000)],
        takeover=("seat_0", p),
        position_limit=10**9,
    )
    assert env.possible_agents == ["seat_0", "seat_1", "adversary"]
    obs, infos = env.reset(seed=5)
    np.testing.assert_array_equal(obs["adversary"], obs["seat_0"])
    taken = 0
    while env.agents:
        before = env.market.account(0).inventory
        # seat_0 sells, the adversary buys: the executed action shows in the inventory
        obs, rewards, _, _, infos = env.step({"seat_0": 0, "seat_1": 1, "adversary": 2})
        assert rewards["adversary"] == -rewards["seat_0"]
        np.testing.assert_array_equal(obs["adversary"], obs["seat_0"])
        flag = infos["seat_0"]["taken_over"]
        assert infos["adversary"]["taken_over"] == flag
        assert infos["seat_1"]["taken_over"] is False
        assert env.market.account(0).inventory - before == (100 if flag else -100)
        taken += flag
    assert abs(taken / n - p) < 5 * np.sqrt(p * (1 - p) / n)


def test_takeover_with_p_zero_never_acts():
    """p = 0: the adversary exists but never takes over."""
    env = MarketParallelEnv(n_steps=20, traders=small_traders(), takeover=("seat_1", 0.0))
    steps = episode(env, 0, lambda agent, step: 2)
    assert not any(s[4]["seat_1"]["taken_over"] for s in steps)
    assert all(s[1]["adversary"] == -s[1]["seat_1"] for s in steps[1:])


# ---------------------------------------------------------------------------- bad inputs
@pytest.mark.parametrize(
    "kwargs",
    [
        {"opposes": {"seat_5": "seat_0"}},
        {"opposes": {"seat_1": "bob"}},
        {"takeover": ("seat_2", 0.5)},
        {"takeover": ("adversary", 0.5)},
    ],
)
def test_unknown_seat_names_raise(kwargs):
    """Seat names that do not exist are refused, naming the bad seat."""
    with pytest.raises(ValueError, match="unknown seat"):
        MarketParallelEnv(n_steps=5, traders=small_traders(), **kwargs)


def test_other_bad_arguments():
    """No seats, a takeover probability outside [0, 1], or missing actions are refused; a
    finished episode refuses further steps."""
    with pytest.raises(ValueError, match="n_seats"):
        MarketParallelEnv(0)
    with pytest.raises(ValueError, match="probability"):
        MarketParallelEnv(n_steps=5, traders=small_traders(), takeover=("seat_0", 1.5))
    env = MarketParallelEnv(n_steps=2, traders=small_traders())
    env.reset(seed=0)
    with pytest.raises(ValueError, match="seat_1"):
        env.step({"seat_0": 1})
    env.step({"seat_0": 1, "seat_1": 1})
    env.step({"seat_0": 1, "seat_1": 1})
    assert env.agents == []
    with pytest.raises(RuntimeError, match="reset"):
        env.step({"seat_0": 1, "seat_1": 1})
