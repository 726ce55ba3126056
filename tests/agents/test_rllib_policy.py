"""`RLlibPolicy`'s forward pass by hand: a linear layer, then tanh layers, greedy and sampled."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces

from tradearena import agents
from tradearena.envs.errors import UserError

BOX = spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)


def test_softmax_draws_and_argmax_of_a_linear_policy():
    """No hidden layer, weights 0 and biases (0, 0, ln 2): probabilities 1/4, 1/4, 1/2; the
    greedy action is 2 and 40,000 draws match the probabilities to 0.01."""
    policy = agents.make(
        "rllib_policy", hidden=[], observation_space=BOX, action_space=spaces.Discrete(3), seed=0
    )
    assert policy.sizes == [2, 3] and policy.parameters.shape == (2 * 3 + 3,)
    policy.parameters[-3:] = [0.0, 0.0, np.log(2.0)]
    obs = np.zeros((40_000, 2), dtype=np.float32)
    assert (policy.act_batch(obs, explore=False) == 2).all()
    counts = np.bincount(policy.act_batch(obs), minlength=3) / len(obs)
    np.testing.assert_allclose(counts, [0.25, 0.25, 0.5], atol=0.01)


def test_tanh_layers_by_hand():
    """One tanh layer of 2 units, weights [[1, 0], [0, 2]], biases 0; output weights
    [[1, 1], [1, -1]]: at x = (0.5, 0.25) the logits are tanh(0.5) +- tanh(0.5)."""
    policy = agents.make(
        "rllib_policy", hidden=[2], observation_space=BOX, action_space=spaces.Discrete(2)
    )
    (w1, b1), (w2, b2) = policy.layers()
    w1[:] = [[1.0, 0.0], [0.0, 2.0]]
    w2[:] = [[1.0, 1.0], [1.0, -1.0]]
    t = np.tanh(0.5)
    np.testing.assert_allclose(policy.logits(np.array([0.5, 0.25])), [2 * t, 0.0], atol=1e-6)
    assert policy.act(np.array([0.5, 0.25]), explore=False) == 0
    assert b1.sum() == b2.sum() == 0.0


def test_unknown_activation_and_non_box_observations():
    with pytest.raises(UserError, match=r"activation must be one of \['linear', 'relu', 'tanh'\]"):
        agents.make("rllib_policy", activation="gelu")
    with pytest.raises(UserError, match="reads features"):
        agents.make("rllib_policy", observation_space=spaces.Discrete(4))
