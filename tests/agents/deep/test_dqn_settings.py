"""The deep learners' practitioner settings, each against what it must compute: running
moments, the dueling head, the Double-DQN bootstrap, normalised inputs and rewards."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tradearena import agents
from tradearena.agents.deep.dqn import QNetwork
from tradearena.agents.deep.encoders import make_torso
from tradearena.agents.deep.normalization import RunningMoments


def test_running_moments_equal_the_moments_of_everything_folded():
    rng = np.random.default_rng(0)
    batches = [rng.normal(3.0, 2.0, size=(n, 4)) for n in (1, 7, 100, 2)]
    moments = RunningMoments((4,))
    for batch in batches:
        moments.update(batch)
    everything = np.concatenate(batches)
    assert moments.count == len(everything)
    np.testing.assert_allclose(moments.mean, everything.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(moments.std, everything.std(axis=0), rtol=1e-12)
    assert RunningMoments(()).std == 1.0  # nothing seen: unit scale


def test_dueling_head_is_value_plus_centred_advantages():
    torch.manual_seed(0)
    net = QNetwork(make_torso("mlp", (3,), hidden=8), n_actions=4, n_heads=2, dueling=True)
    x = torch.randn(5, 3)
    q = net(x)
    h = net.torso(x)
    value = net.value(h).view(5, 2, 1)
    advantage = net.head(h).view(5, 2, 4)
    torch.testing.assert_close(q, value + advantage - advantage.mean(dim=2, keepdim=True))
    torch.testing.assert_close(q.mean(dim=2), value[..., 0])


def _constant_heads(agent, online, target):
    """Make the online and target networks output the constants ``online`` / ``target``."""
    for net, values in ((agent.q_net, online), (agent.q_target, target)):
        with torch.no_grad():
            net.head.weight.zero_()
            net.head.bias.copy_(torch.tensor(values))


@pytest.mark.parametrize(("double", "expected"), [(True, 5.0), (False, 7.0)])
def test_double_dqn_values_the_online_networks_choice(double, expected):
    """Online Q = (1, 0), target Q = (5, 7): DQN bootstraps max target = 7, Double DQN the
    target's value of the online network's choice (action 0) = 5."""
    agent = agents.make("dqn", obs_shape=(2,), n_actions=2, seed=0, double=double)
    _constant_heads(agent, [1.0, 0.0], [5.0, 7.0])
    assert agent.target_values(np.zeros((3, 2)))[:, 0].tolist() == [expected] * 3


def test_inputs_are_standardised_by_the_stored_observations():
    """Once training starts the network's input statistics are the stored observations'
    per-feature mean and standard deviation (ddof 0)."""
    agent = agents.make(
        "dqn", obs_shape=(3,), n_actions=2, seed=0, learning_starts=50, train_freq=10
    )
    rng = np.random.default_rng(1)
    observations = rng.normal([0.0, 100.0, -5.0], [1.0, 30.0, 0.1], size=(61, 3))
    for t in range(60):
        agent.update(observations[t], 0, 0.0, observations[t + 1], False, False)
    stored = observations[:60]
    normalizer = agent.q_net.normalizer
    np.testing.assert_allclose(normalizer.mean.numpy(), stored.mean(axis=0), rtol=1e-5)
    np.testing.assert_allclose(normalizer.std.numpy(), stored.std(axis=0), rtol=1e-5)


def _trained_values(scale: float) -> np.ndarray:
    agent = agents.make(
        "dqn",
        obs_shape=(2,),
        n_actions=3,
        seed=4,
        learning_starts=64,
        train_freq=4,
        target_update_interval=50,
    )
    rng = np.random.default_rng(2)
    obs = rng.normal(size=(401, 2)).astype(np.float32)
    for t in range(400):
        action = agent.act(obs[t])
        reward = scale * (obs[t, 0] * (action - 1) + 0.1 * rng.normal())
        agent.update(obs[t], action, reward, obs[t + 1], False, False)
    return np.array([agent.values(o) for o in obs[:20]])


def test_normalised_rewards_make_learning_independent_of_the_reward_unit():
    """The same transitions paid in dollars or in hundredths: the same greedy actions, and
    values in the rewards' units 100 times apart (up to rounding), since each reward is
    divided by the stored rewards' standard deviation before it is learned."""
    dollars, hundredths = _trained_values(1.0), _trained_values(0.01)
    np.testing.assert_array_equal(dollars.argmax(axis=1), hundredths.argmax(axis=1))
    np.testing.assert_allclose(dollars, 100 * hundredths, rtol=1e-3, atol=1e-3)
