"""With rewards normalised (the default), the risk-neutral DQN still estimates means: on a
safe-or-risky bandit it picks the risky arm (mean 1.0 over 0.9), and deep RAQL with beta = -0.5
the safe one (the risky arm's certainty equivalent is below 0.9 at that risk aversion)."""

import numpy as np
import pytest

from tradearena import agents

OBS = np.ones(1, dtype=np.float32)


def _bandit(name, seed, updates=6000, **params):
    """gamma 0: action 0 pays 0.9, action 1 pays +3 or -1 with equal chance; uniform
    exploration; one constant observation; ``updates`` gradient steps (one per stored step
    after the first 500). Returns the agent's Q values of the two arms, in normalised units."""
    agent = agents.make(
        name,
        obs_shape=(1,),
        n_actions=2,
        seed=seed,
        gamma=0.0,
        normalize_observations=False,
        exploration_initial_eps=1.0,
        exploration_final_eps=1.0,
        learning_starts=500,
        train_freq=1,
        total_timesteps=updates + 500,
        **params,
    )
    rng = np.random.default_rng(seed)
    for _ in range(updates + 500):
        a = agent.act(OBS)
        reward = 0.9 if a == 0 else float(rng.choice([3.0, -1.0]))
        agent.update(OBS, a, reward, OBS, True, False)
    return agent.act(OBS, explore=False)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_dqn_estimates_means_and_picks_the_risky_arm(seed):
    assert _bandit("dqn", seed) == 1


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_deep_raql_averse_picks_the_safe_arm(seed):
    utility = {"name": "exponential", "beta": -0.5}
    assert _bandit("deep_raql", seed, utility=utility) == 0
