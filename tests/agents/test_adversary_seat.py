"""The RA3-Q adversaries as learning seats: `trader_adversary`, `update` through the owner,
shared state across pickling, and learning against a fixed protagonist (no market)."""

import pickle

import numpy as np
import pytest

from tradearena import agents

TABULAR = {"n_states": 4, "n_actions": 3, "k": 3, "gamma": 0.9, "seed": 2}
DEEP = {
    "obs_shape": (4,),
    "n_actions": 3,
    "k": 2,
    "hidden": 8,
    "buffer_size": 64,
    "learning_starts": 8,
    "batch_size": 8,
    "train_freq": 1,
    "target_update_interval": 10,
    "device": "cpu",
    "seed": 2,
}
EYE = np.eye(4, dtype=np.float32)
pytestmark = pytest.mark.usefixtures("one_thread")  # tiny networks


def _make(name, **params):
    return agents.make(name, **(TABULAR if name == "ra3q" else DEEP), **params)


def _obs(name, state):
    return state if name == "ra3q" else EYE[state]


def _transitions(name, n, seed=0):
    """``n`` random transitions (obs, action, reward, next_obs, terminated, truncated)."""
    rng = np.random.default_rng(seed)
    for _ in range(n):
        s, s2, a = (int(x) for x in rng.integers(0, (4, 4, 3)))
        terminated = bool(rng.random() < 0.2)
        yield _obs(name, s), a, float(rng.normal()), _obs(name, s2), terminated, False


def _adversary_state(agent):
    if agent.name == "ra3q":
        return {"q": agent.adversary.q, "visits": agent.adversary.visits}
    return {k: v for k, v in agent.adversary.state_dict().items() if k.startswith("q_")}


@pytest.mark.parametrize(("name", "policy"), [("ra3q", "tabular"), ("deep_ra3q", "features")])
def test_trader_adversary_only_in_trader_mode(name, policy):
    for mode in ("takeover", None):
        assert _make(name, adversary_mode=mode).trader_adversary(seed=0) is None
    seat = _make(name, adversary_mode="trader").trader_adversary(seed=0)
    assert seat.learning and seat.stochastic and seat.observation == policy
    assert type(seat).observation == policy  # declared on the class, read by drivers


@pytest.mark.parametrize("name", ["ra3q", "deep_ra3q"])
def test_seat_update_trains_the_adversary_as_update_adversary(name):
    """AdversaryPolicy.update (tabular) and DeepAdversaryPolicy.update (deep) change the
    owner's adversary exactly as update_adversary does, and nothing else."""
    through_seat, direct = (_make(name, adversary_mode="trader") for _ in range(2))
    seat = through_seat.trader_adversary(seed=0)
    start = {k: v.copy() for k, v in _adversary_state(direct).items()}
    for transition in _transitions(name, 30):
        seat.update(*transition)
        direct.update_adversary(*transition)
    changed, expected = _adversary_state(through_seat), _adversary_state(direct)
    for key, value in expected.items():
        assert np.array_equal(changed[key], value), key
    assert any(not np.array_equal(start[k], v) for k, v in expected.items())
    if name == "ra3q":
        assert not through_seat.tables.q.any()  # the protagonist did not learn
    else:
        assert through_seat.adversary.n_updates > 0
        assert through_seat.protagonist.num_timesteps == 0


@pytest.mark.parametrize("name", ["ra3q", "deep_ra3q"])
def test_pickled_together_the_seat_keeps_training_its_owner(name):
    agent = _make(name, adversary_mode="trader")
    owner, seat = pickle.loads(pickle.dumps((agent, agent.trader_adversary(seed=0))))
    assert seat.owner is owner
    before = {k: v.copy() for k, v in _adversary_state(owner).items()}
    for transition in _transitions(name, 12):
        seat.update(*transition)
    assert any(not np.array_equal(before[k], v) for k, v in _adversary_state(owner).items())


def _greedy_return(seat, name, n_steps):
    """The adversary seat's expected return over the toy episode, greedy (ties: uniform)."""
    total = 0.0
    for t in range(n_steps):
        values = seat.owner.adversary_values(_obs(name, t))
        best = np.flatnonzero(values == values.max())
        total += np.mean(1.0 - best)  # -(protagonist's reward), see below
    return total


@pytest.mark.parametrize(("name", "episodes"), [("ra3q", 150), ("deep_ra3q", 100)])
def test_adversary_seat_learns_to_hurt_a_fixed_protagonist(name, episodes):
    """A fixed protagonist always holds one lot long for 3 steps; each step the adversary
    sells (0), holds (1) or buys (2), moving the price by a - 1 + noise, so the protagonist
    earns a - 1 + noise and the adversary seat minus that. Driven only through act / update
    / end_episode, the adversary's greedy return rises to its maximum, 3 (sell every step)."""
    n_steps, rng = 3, np.random.default_rng(0)
    seat = _make(name, adversary_mode="trader", adversary_exploration=0.3).trader_adversary(1)
    before = _greedy_return(seat, name, n_steps)
    for _ in range(episodes):
        for t in range(n_steps):
            obs = _obs(name, t)
            action = seat.act(obs, explore=True)
            protagonist_reward = action - 1.0 + 0.1 * rng.normal()
            next_obs, terminated = _obs(name, t + 1), t == n_steps - 1
            seat.update(obs, action, -protagonist_reward, next_obs, terminated, False)
        seat.end_episode()
    after = _greedy_return(seat, name, n_steps)
    assert before < after == 3.0
    assert [seat.act(_obs(name, t), explore=False) for t in range(n_steps)] == [0] * n_steps
