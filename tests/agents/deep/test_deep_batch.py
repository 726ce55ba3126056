"""Deep learners on batched markets: one forward pass acts for N sessions as N calls of `act`
would, and a learner trains through `envs.batch.BatchedMarket`."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tradearena import agents
from tradearena.envs.batch import BatchedMarket
from tradearena.envs.seats import SeatedMarket
from tradearena.envs.spec import MarketSpec

SPEC = MarketSpec(population="light", n_steps=12, task="making", reward_scale=0.01)


def deep(agent_id: str, **params) -> agents.Agent:
    return agents.make(
        agent_id,
        observation_space=SPEC.observation_space("features"),
        action_space=SPEC.action_space,
        seed=3,
        **params,
    )


@pytest.mark.parametrize("agent_id", ["dqn", "averaged_dqn", "deep_raql", "deep_ra2q"])
@pytest.mark.parametrize("explore", [False, True])
def test_act_batch_is_act_one_by_one(agent_id, explore, one_thread):
    batched, single = deep(agent_id), deep(agent_id)
    obs = (
        np.random.default_rng(0)
        .normal(0.0, 2.0, size=(64, SPEC.observation_space().shape[0]))
        .astype(np.float32)
    )
    got = batched.act_batch(obs, explore=explore)
    assert got.tolist() == [single.act(o, explore=explore) for o in obs]
    assert batched.rng.random() == single.rng.random()  # the same draws were made


def test_one_session_batch_trains_dqn_exactly_as_the_episode_driver(one_thread):
    settings = {"learning_starts": 20, "train_freq": 4, "target_update_interval": 30}
    serial, batched = deep("dqn", **settings), deep("dqn", **settings)
    driver = SeatedMarket(SPEC, [serial], learners=[0])
    batch = BatchedMarket(SPEC, 1, [batched], learners=[0])
    for episode in range(4):
        assert batch.play([episode], learn=True) == [driver.play(episode, learn=True)]
    for a, b in zip(serial.q_net.parameters(), batched.q_net.parameters()):
        assert torch.equal(a, b)


def test_dqn_learns_from_every_session_of_a_batch(one_thread):
    learner = deep("dqn", learning_starts=20, train_freq=4)
    batch = BatchedMarket(SPEC, 8, [learner], learners=[0])
    results = batch.play(list(range(8)), learn=True)
    assert len(results) == 8 and {r[0]["steps"] for r in results} == {12}
    assert learner.num_timesteps == 8 * 12 and learner.buffer.size == 8 * 12
