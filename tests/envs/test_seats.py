"""Tests for tradearena.envs.seats.SeatedMarket, the one episode driver: every policy reads the
observation kind it declares, learners learn from the actions executed, outside seats act
through `step`."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tradearena.agents.base import Agent
from tradearena.envs.batch import BatchedMarket
from tradearena.envs.seats import ActionError, SeatedMarket
from tradearena.envs.spec import MarketSpec, SpecError
from tradearena.envs.trading_env import TradingEnv

SPEC = MarketSpec(population="light", n_steps=12, position_limit=300)


class Policy:
    """Plays ``action``; keeps what it is shown and the transitions it learns from."""

    def __init__(self, action: int, observation: str | None = None) -> None:
        self.action, self.seen, self.learned, self.ends = action, [], [], 0
        if observation is not None:
            self.observation = observation

    def act(self, obs, explore=True):
        self.seen.append((obs, explore))
        return self.action

    def update(self, obs, action, reward, next_obs, terminated, truncated):
        self.learned.append((action, reward, terminated))

    def end_episode(self):
        self.ends += 1


def kinds_seen(policy: Policy) -> set[str]:
    return {"features" if isinstance(o, np.ndarray) else "tabular" for o, _ in policy.seen}


def test_each_policy_reads_the_kind_it_declares():
    features, tabular, plain = Policy(1, "features"), Policy(1, "tabular"), Policy(1)
    table = SeatedMarket(SPEC, [features, tabular, plain])
    table.play(0)
    assert kinds_seen(features) == {"features"} and kinds_seen(tabular) == {"tabular"}
    assert kinds_seen(plain) == {"features"}  # no declaration: features
    assert all(o.shape == (8,) and o.dtype == np.float32 for o, _ in features.seen)
    assert all(0 <= o < 54 for o, _ in tabular.seen)


@pytest.mark.parametrize("kind", ["features", "tabular"])
def test_a_takeover_adversary_reads_its_own_kind(kind):
    """The adversary observes the taken-over seat's market in the kind it declares, whatever
    the seat's own kind."""
    adversary = Policy(2, kind)
    seat = Policy(0, "tabular" if kind == "features" else "features")
    table = SeatedMarket(SPEC, [seat], takeover=(0, 1.0), adversary=adversary)
    table.play(0)
    assert kinds_seen(adversary) == {kind} and len(adversary.seen) == 12
    assert all(not explore for _, explore in adversary.seen)
    assert table.market.account(0).inventory == 300  # every step was the adversary's buy


def test_learners_learn_from_the_executed_action_and_only_when_learning():
    learner, fixed, adversary = Policy(0, "tabular"), Policy(1), Policy(2)
    table = SeatedMarket(
        SPEC, [learner, fixed], learners=(0,), takeover=(0, 0.5), adversary=adversary
    )
    table.play(1, learn=False)
    assert learner.learned == [] and learner.ends == 0
    assert all(not explore for _, explore in learner.seen)
    table.play(1, learn=True)
    actions = [a for a, _, _ in learner.learned]
    assert len(actions) == 12 and set(actions) == {0, 2}  # its sells and the adversary's buys
    assert [t for _, _, t in learner.learned] == [False] * 11 + [True]
    assert learner.ends == 1 and fixed.learned == [] and adversary.learned == []
    assert all(explore for _, explore in learner.seen[12:])
    assert all(not explore for _, explore in fixed.seen)


def test_play_returns_what_each_seat_made():
    buyer, seller = Policy(2), Policy(0)
    results = SeatedMarket(SPEC, [buyer, seller]).play(3)
    assert [r["inventory"] for r in results] == [300, -300]
    assert all(r["steps"] == 12 and r["trades"] > 0 for r in results)


def test_outside_seats_act_through_step():
    table = SeatedMarket(SPEC, ["features", Policy(1, "tabular")])
    with pytest.raises(RuntimeError, match="reset"):
        table.step((2,))
    with pytest.raises(ValueError, match="policy in every seat"):
        table.play(0)
    obs = table.reset(0)
    assert isinstance(obs[0], np.ndarray) and isinstance(obs[1], int)
    _, rewards, done = table.step((2,))
    assert rewards.shape == (2,) and not done
    assert table.market.account(0).inventory == 100


def test_bad_seats_are_named():
    with pytest.raises(SpecError, match="seat 0"):
        SeatedMarket(SPEC, ["pixels"])
    with pytest.raises(ValueError, match="must hold policies"):
        SeatedMarket(SPEC, ["features"], learners=(0,))
    with pytest.raises(ValueError, match="needs an adversary"):
        SeatedMarket(SPEC, [Policy(1)], takeover=(0, 0.5))


def test_gymnasium_opponents_read_their_own_kind():
    """TradingEnv's opponents and adversary go through the same driver."""
    opponent = Policy(1, "tabular")
    env = TradingEnv(SPEC, opponents=[opponent], adversary=Policy(1), adversary_mode="trader")
    obs, _ = env.reset(seed=0)
    for _ in range(12):
        obs, *_ = env.step(1)
    assert isinstance(obs, np.ndarray) and kinds_seen(opponent) == {"tabular"}
    assert env.market.n_seats == 3 and env.core.opposes == {2: 0}


class Batched(Policy):
    """`Policy` over a batch: ``action`` for every session."""

    def act_batch(self, obs, explore=True):
        return np.full(len(obs), self.action)


@pytest.mark.parametrize("action", ["n", "np.int64(n)", -1, 1.7, "1"])
@pytest.mark.parametrize("actions", ["trade", "make"])
def test_an_action_outside_the_space_is_refused_naming_the_agent_value_and_space(action, actions):
    """A policy's action outside the seat's Discrete space (too large, negative, not an
    integer) is an `ActionError` naming the policy, the value and the space, one session at a
    time or batched, never executed as another action."""
    spec = MarketSpec(population="light", n_steps=12, position_limit=300, actions=actions)
    space = spec.action_space
    action = {"n": space.n, "np.int64(n)": np.int64(space.n)}.get(action, action)
    shown = re.escape(f"returned {action!r}, not in {space}")
    with pytest.raises(ActionError, match=rf"^Policy\.act {shown}$"):
        SeatedMarket(spec, [Policy(1), Policy(action)]).play(0)
    if not isinstance(action, str):
        with pytest.raises(ActionError, match=r"^Batched\.act_batch returned "):
            BatchedMarket(spec, 2, [Batched(1), Batched(action)]).play([0, 1])


def test_a_plain_callable_and_an_adversary_are_refused_too():
    """A plain callable in a seat, and a take-over adversary, are held to the space too."""

    def seven(obs):
        return 7

    with pytest.raises(ActionError, match=r"seven returned 7, not in Discrete\(3\)"):
        SeatedMarket(SPEC, [seven]).play(0)
    table = SeatedMarket(SPEC, [Policy(1)], takeover=(0, 1.0), adversary=Policy(-1))
    with pytest.raises(ActionError, match=r"^Policy\.act returned -1, not in Discrete\(3\)$"):
        table.play(0)


def test_the_default_batch_of_an_agent_keeps_what_act_returned():
    """`Agent.act_batch` does not cast: a float from ``act`` reaches the market's check."""

    class Fractional(Agent):
        def act(self, obs, explore=True):
            return 1.7

    with pytest.raises(ActionError, match=r"^Fractional\.act_batch returned 1\.7, not in "):
        BatchedMarket(SPEC, 2, [Fractional()]).play([0, 1])


@pytest.mark.parametrize("action", [2**70, -(2**70)])
def test_an_integer_beyond_int64_is_refused_as_any_bad_action(action):
    """Gymnasium's ``contains`` fails to cast it (OverflowError): every face refuses it as it
    refuses any action outside its space."""
    import gymnasium as gym

    from tradearena.envs.execution_model import AlmgrenChrissMarket
    from tradearena.envs.multi_agent import MarketParallelEnv
    from tradearena.envs.vector import MarketVectorEnv

    env = gym.make("tradearena/SyntheticMarket-v0")
    env.reset(seed=0)
    with pytest.raises(ValueError, match=rf"^action {action} is not in Discrete\(3\)$"):
        env.step(action)
    model = AlmgrenChrissMarket()
    model.reset(seed=0)
    with pytest.raises(ValueError, match=rf"^action {action} is not in Discrete\(5\)$"):
        model.step(action)
    parallel = MarketParallelEnv(n_seats=2)
    parallel.reset(seed=0)
    with pytest.raises(ValueError, match=r"^actions \{'seat_0': .* are not in Discrete\(3\)$"):
        parallel.step({"seat_0": action, "seat_1": 0})
    vector = MarketVectorEnv(num_envs=2)
    vector.reset(seed=0)
    with pytest.raises(ValueError, match=r"^actions \[.*\] are not in MultiDiscrete\(\[3 3\]\)$"):
        vector.step([action, 1])

    class Huge(Policy):
        def act_batch(self, obs, explore=True):
            return [self.action] * len(obs)

    with pytest.raises(ActionError, match=rf"^Huge\.act_batch returned {action}, not in "):
        BatchedMarket(SPEC, 2, [Huge(action)]).play([0, 1])
