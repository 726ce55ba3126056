"""DQN and Averaged-DQN: a contextual bandit with a known optimum, target variance, the replay
buffer, exact reductions, and state_dict / pickle round trips of every deep learner."""

import pickle

import numpy as np
import pytest
import torch

from tradearena import agents
from tradearena.agents.deep.buffers import ReplayBuffer

DEEP = ("dqn", "averaged_dqn", "deep_raql", "deep_ra2q", "deep_ra3q")
EYE = np.eye(4, dtype=np.float32)
CORRECT = np.array([0, 1, 2, 1])
"""Contextual bandit: 4 one-hot contexts, 3 actions, reward 1 + N(0, 0.1^2) for the right
action CORRECT[c], else N(0, 0.1^2). Optimal mean reward 1 (uniform contexts)."""


def _bandit_mean_reward(agent, steps, seed):
    """Train ``agent`` ``steps`` steps on the contextual bandit; greedy mean reward."""
    rng = np.random.default_rng(100 + seed)
    c = int(rng.integers(4))
    for _ in range(steps):
        a = agent.act(EYE[c])
        r = float(a == CORRECT[c]) + 0.1 * rng.normal()
        obs, c = EYE[c], int(rng.integers(4))
        agent.update(obs, a, r, EYE[c], True, False)
    return np.mean([agent.act(EYE[c], explore=False) == CORRECT[c] for c in range(4)])


@pytest.mark.parametrize("name", ["dqn", "averaged_dqn"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_contextual_bandit_reaches_optimum(name, seed):
    """Within 600 environment steps (250 gradient steps of batch 64), >= 95% of optimal."""
    steps = 600
    agent = agents.make(
        name,
        obs_shape=(4,),
        n_actions=3,
        seed=seed,
        learning_rate=3e-3,
        learning_starts=100,
        train_freq=2,
        target_update_interval=50,
        total_timesteps=steps,
        exploration_fraction=0.5,
    )
    assert _bandit_mean_reward(agent, steps, seed) >= 0.95


def _target_trace(name, seed, steps=300, **params):
    """One state, 2 actions, reward 1 + N(0, 1), gamma 0.5, no termination (Q* = 2). Returns
    the bootstrap value max_a Q_target(s, a) every 10 steps over the second half."""
    obs = np.ones(1, dtype=np.float32)
    agent = agents.make(
        name,
        obs_shape=(1,),
        n_actions=2,
        seed=seed,
        gamma=0.5,
        normalize_rewards=False,  # Q* is checked in reward units
        normalize_observations=False,  # a constant input: the raw one
        exploration_initial_eps=1.0,
        exploration_final_eps=1.0,
        learning_starts=100,
        train_freq=1,
        target_update_interval=10,
        **params,
    )
    rng = np.random.default_rng(100 + seed)
    trace = []
    for t in range(steps):
        a = agent.act(obs)
        agent.update(obs, a, 1.0 + rng.normal(), obs, False, False)
        if t >= steps // 2 and t % 10 == 0:
            trace.append(agent.target_values(obs[None])[0, 0])
    return np.array(trace)


def test_averaged_dqn_lowers_target_variance():
    """Measure: the variance across 4 seeds (ddof 1) of the bootstrap value at the state,
    averaged over 15 checkpoints in steps 150..290. Averaging K = 5 snapshots lowers it."""
    spread = {}
    for name, params in (("dqn", {}), ("averaged_dqn", {"n_snapshots": 5})):
        traces = np.array([_target_trace(name, seed, **params) for seed in range(4)])
        spread[name] = traces.var(axis=0, ddof=1).mean()
    assert spread["averaged_dqn"] < 0.8 * spread["dqn"]


def test_replay_buffer_ring_and_terminations():
    buffer = ReplayBuffer(3, (2,), n_masks=2)
    for i in range(4):
        buffer.add([i, i], [i + 1, i + 1], i % 3, float(i), terminated=i == 3, masks=[1, 0])
    assert buffer.size == 3 and buffer.pos == 1 and buffer.full
    assert buffer.observations[:, 0].tolist() == [3, 1, 2]
    assert buffer.terminated.tolist() == [1.0, 0.0, 0.0]
    batch = buffer.sample(5, np.random.default_rng(0))
    assert batch.observations.shape == (5, 2) and batch.masks.shape == (5, 2)
    assert batch.actions.dtype == torch.int64 and batch.rewards.dtype == torch.float32
    restored = ReplayBuffer(3, (2,), n_masks=2)
    restored.load_state_dict(buffer.state_dict())
    assert np.array_equal(restored.observations, buffer.observations) and restored.pos == 1
    with pytest.raises(ValueError, match="shape"):
        ReplayBuffer(3, (3,), n_masks=2).load_state_dict(buffer.state_dict())


def test_truncation_bootstraps_and_termination_does_not():
    agent = agents.make("dqn", obs_shape=(1,), n_actions=2, seed=0, learning_starts=10**6)
    agent.update([0.0], 0, 1.0, [1.0], terminated=False, truncated=True)
    agent.update([0.0], 0, 1.0, [1.0], terminated=True, truncated=False)
    assert agent.buffer.terminated[:2].tolist() == [0.0, 1.0]


def _stream(agent, steps, seed, obs_shape=(3,)):
    """Drive ``agent`` on random transitions (its own actions); return the actions."""
    rng = np.random.default_rng(seed)
    obs, actions = rng.normal(size=obs_shape).astype(np.float32), []
    for _ in range(steps):
        a = agent.act(obs)
        next_obs = rng.normal(size=obs_shape).astype(np.float32)
        terminated = bool(rng.random() < 0.1)
        agent.update(obs, a, float(rng.normal(a, 1.0)), next_obs, terminated, False)
        actions.append(a)
        obs = next_obs
    return actions


def _assert_same_state(a, b):
    assert a.keys() == b.keys()
    for key in a:
        if isinstance(a[key], np.ndarray):
            assert np.array_equal(a[key], b[key]), key
        else:
            assert a[key] == b[key], key


SMALL = {
    "obs_shape": (3,),
    "n_actions": 3,
    "buffer_size": 50,
    "learning_starts": 20,
    "batch_size": 16,
    "train_freq": 1,
    "target_update_interval": 10,
    "total_timesteps": 200,
    "hidden": 16,
}


def _params(name):
    return {**SMALL, "k": 3} if name in ("deep_ra2q", "deep_ra3q") else SMALL


@pytest.mark.parametrize("name", DEEP)
def test_round_trip_acts_and_trains_identically(name):
    """After 60 steps (buffer wrapped, Adam started), a state_dict loaded into an agent built
    alike, an agent built by from_state and a pickle copy act identically and end with
    identical state 40 steps on."""
    agent = agents.make(name, seed=3, **_params(name))
    restored = agents.make(name, seed=3, **_params(name))
    _stream(agent, 60, seed=0)
    restored.load_state_dict(agent.state_dict())
    rebuilt = type(agent).from_state(agent.state_dict())
    copied = pickle.loads(pickle.dumps(agent))
    _assert_same_state(restored.state_dict(), agent.state_dict())
    reference = _stream(agent, 40, seed=1)
    for other in (restored, rebuilt, copied):
        assert _stream(other, 40, seed=1) == reference
        _assert_same_state(other.state_dict(), agent.state_dict())
    learner = agent.protagonist if name == "deep_ra3q" else agent
    assert learner.n_updates > 40


@pytest.mark.parametrize(
    ("name", "parts"),
    [("dqn", ("q_net", "q_target", "optimizer", "buffer", "rng")), ("deep_ra3q", ("adversary",))],
)
def test_load_state_dict_restores_in_place_and_names_config(name, parts):
    """load_state_dict keeps the agent's objects (networks, buffer, learners); a state of
    another config is refused, naming the keys that differ."""
    agent = agents.make(name, seed=3, **_params(name))
    before = [getattr(agent, part) for part in parts]
    agent.load_state_dict(agents.make(name, seed=3, **_params(name)).state_dict())
    assert all(getattr(agent, part) is old for part, old in zip(parts, before, strict=True))
    other = agents.make(name, seed=9, **{**_params(name), "hidden": 8})
    with pytest.raises(ValueError, match=r"config differs in \['hidden', 'seed'\].*from_state"):
        agent.load_state_dict(other.state_dict())


@pytest.mark.parametrize("name", DEEP)
def test_state_dict_names_bad_keys(name):
    agent = agents.make(name, seed=0, **SMALL)
    state = agent.state_dict()
    with pytest.raises(ValueError, match=r"unknown keys \['extra'\]"):
        agent.load_state_dict({**state, "extra": 1})
    key = next(k for k in state if k.endswith("q_net.head.weight"))
    with pytest.raises(ValueError, match="shape"):
        agent.load_state_dict({**state, key: np.zeros((1, 1), dtype=np.float32)})


def test_same_seed_same_network_and_global_torch_state_untouched():
    before = torch.random.get_rng_state()
    first, second = agents.make("dqn", seed=4), agents.make("dqn", seed=4)
    assert torch.equal(before, torch.random.get_rng_state())
    _assert_same_state(first.state_dict(), second.state_dict())
    other = agents.make("dqn", seed=5).state_dict()
    assert not np.array_equal(other["q_net.head.weight"], first.state_dict()["q_net.head.weight"])


def test_reductions_are_exact():
    """deep_raql with the identity utility is dqn; deep_ra2q with k = 1, lam = 0, masks off
    is deep_raql (same seed: same actions, same parameters)."""
    identity = {**SMALL, "utility": "identity"}
    runs = [
        ("dqn", SMALL),
        ("deep_raql", identity),
        ("deep_ra2q", {**identity, "k": 1, "lam": 0.0, "masks": False}),
    ]
    states, actions = [], []
    for name, params in runs:
        agent = agents.make(name, seed=2, **params)
        actions.append(_stream(agent, 80, seed=0))
        states.append({k: v for k, v in agent.state_dict().items() if k.startswith("q_")})
    assert actions[0] == actions[1] == actions[2]
    _assert_same_state(states[0], states[1])
    _assert_same_state(states[1], states[2])


def test_bad_parameters_name_the_field():
    with pytest.raises(ValueError, match="buffer_size"):
        agents.make("dqn", buffer_size=0)
    with pytest.raises(ValueError, match="tau"):
        agents.make("averaged_dqn", tau=0.5)
    with pytest.raises(ValueError, match="lam"):
        agents.make("deep_ra2q", lam=-1.0)
    with pytest.raises(ValueError, match="observation_space must be a Box"):
        import gymnasium as gym

        agents.make("dqn", observation_space=gym.spaces.Discrete(4))
