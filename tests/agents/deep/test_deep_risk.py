"""Risk-sensitive deep learners: safe versus risky bandit, utility twin, and the adversary."""

import math

import numpy as np
import pytest
import torch

from tradearena import agents
from tradearena.agents.deep.risk import apply_utility, risk_values
from tradearena.agents.utility import Exponential, PiecewiseLinear
from tradearena.envs.trading_env import TradingEnv

OBS = np.ones(1, dtype=np.float32)
SCALE = 0.25
"""reward_scale: residuals stay inside the Huber loss's quadratic zone (|u(d)| < 1)."""
RISKY_CE = -2.0 * math.log(0.5 * math.exp(-0.5 * 3 * SCALE) + 0.5 * math.exp(0.5 * SCALE))
"""(1/beta) log E[exp(beta Y)] of the risky arm in agent units at beta = -0.5: 0.1882
(safe: 0.9 * SCALE = 0.225; means 0.25 and 0.225)."""


def _safe_or_risky(name, seed, steps=1300, **params):
    """Action 0: 0.9 always; action 1: +3 or -1 w.p. 1/2 (mean 1.0). Uniform exploration,
    one constant observation, every step terminates. The risky outcomes are dealt from
    shuffled pairs (+3, -1) (each still w.p. 1/2) so the buffer's risky mean is not itself
    noisy. 1000 steps are stored, then 300 gradient steps (batch 256, lr 3e-4)."""
    agent = agents.make(
        name,
        obs_shape=(1,),
        n_actions=2,
        seed=seed,
        reward_scale=SCALE,
        normalize_rewards=False,  # the values are checked in reward units
        normalize_observations=False,  # a constant input: the raw one
        exploration_initial_eps=1.0,
        exploration_final_eps=1.0,
        learning_rate=3e-4,
        learning_starts=1000,
        train_freq=1,
        batch_size=256,
        **params,
    )
    rng, deck = np.random.default_rng(100 + seed), []
    for _ in range(steps):
        a = agent.act(OBS)
        if a == 1 and not deck:
            deck = rng.permutation([3.0, -1.0]).tolist()
        agent.update(OBS, a, 0.9 if a == 0 else deck.pop(), OBS, True, False)
    return agent


@pytest.mark.parametrize(
    ("name", "params", "expected"),
    [
        ("dqn", {}, 1),
        ("deep_raql", {"utility": {"name": "exponential", "beta": -0.5}}, 0),
        ("deep_ra2q", {"utility": {"name": "exponential", "beta": -0.5}, "k": 5}, 0),
    ],
)
@pytest.mark.parametrize("seed", [0, 1])
def test_safe_versus_risky(name, params, expected, seed):
    agent = _safe_or_risky(name, seed, **params)
    values = agent.values(OBS)
    assert int(np.argmax(values)) == expected == agent.act(OBS, explore=False)
    assert values[0] == pytest.approx(0.9 * SCALE, abs=0.01)
    if name == "deep_raql":
        assert values[1] == pytest.approx(RISKY_CE, abs=0.02)


def test_torch_utility_matches_numpy():
    x = np.linspace(-100.0, 100.0, 41)
    for utility in (Exponential(-0.5), Exponential(0.5, clip=5.0), PiecewiseLinear(0.3)):
        twin = type(utility)(**{k: v for k, v in vars(utility).items() if k != "clipped"})
        expected = utility(x)
        got = apply_utility(twin, torch.tensor(x)).numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-12)
        assert twin.clipped == utility.clipped


def test_risk_values_mean_minus_variance():
    q = torch.tensor([[[1.0, 2.0], [3.0, 2.0]]])  # (B=1, k=2, A=2)
    assert risk_values(q, 0.5).tolist() == [[2.0 - 0.5 * 2.0, 2.0]]
    assert risk_values(q, 0.5, seeking=True).tolist() == [[3.0, 2.0]]
    assert risk_values(q[:, :1], 3.0).tolist() == [[1.0, 2.0]]


def test_ra2q_masks_are_poisson_and_weigh_heads():
    agent = agents.make(
        "deep_ra2q", obs_shape=(1,), n_actions=2, k=4, seed=0, learning_starts=10**6
    )
    for _ in range(2000):
        agent.update(OBS, 0, 1.0, OBS, True, False)
    masks = agent.buffer.masks[:2000]
    assert masks.shape == (2000, 4)
    assert masks.mean() == pytest.approx(1.0, abs=0.05) and (masks == 0).mean() == pytest.approx(
        math.exp(-1), abs=0.03
    )
    off = agents.make("deep_ra2q", obs_shape=(1,), n_actions=2, k=4, masks=False, seed=0)
    assert off.buffer.masks is None
    # a head masked out of the whole batch gets no gradient: its output rows stay put
    batch = agent.buffer.sample(8, agent.rng)._replace(masks=torch.tensor([[1.0, 0, 2, 0]] * 8))
    before = agent.q_net.head.weight.detach().clone().view(4, 2, -1)
    agent.train_step(batch)
    after = agent.q_net.head.weight.detach().view(4, 2, -1)
    assert torch.equal(before[[1, 3]], after[[1, 3]])
    assert not torch.equal(before[[0, 2]], after[[0, 2]])


def test_ra3q_takeover_trains_each_learner_on_its_steps():
    """p_adv = 0.3: the adversary executes about 30% of training steps and learns from
    -reward there; greedy acting never hands over; adversary_policy drives a market seat."""
    agent = agents.make(
        "deep_ra3q", obs_shape=(1,), n_actions=2, k=3, p_adv=0.3, seed=0, learning_starts=10**6
    )
    n = 1000
    for _ in range(n):
        a = agent.act(OBS)
        agent.update(OBS, a, 1.0, OBS, True, False)
    n_adv = agent.adversary.num_timesteps
    assert n_adv + agent.protagonist.num_timesteps == n
    assert n_adv / n == pytest.approx(0.3, abs=0.05)
    assert agent.adversary.buffer.rewards[:n_adv].tolist() == [-1.0] * n_adv
    assert agent.adversary.seeking and not agent.protagonist.seeking
    agent.act(OBS, explore=False)
    assert not agent.adversary_acted

    env = TradingEnv(n_steps=5)
    trained = agents.make(
        "deep_ra3q",
        observation_space=env.observation_space,
        action_space=env.action_space,
        k=3,
        seed=1,
    )
    market = TradingEnv(n_steps=5, adversary=trained.adversary_policy(seed=0), adversary_p=0.5)
    obs, _ = market.reset(seed=0)
    for _ in range(5):
        obs, *_ = market.step(trained.act(obs, explore=False))
