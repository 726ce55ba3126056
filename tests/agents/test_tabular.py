"""Tabular learners against known answers, exact reductions, and variance comparisons."""

import math

import numpy as np
import pytest

from tradearena import agents
from tradearena.agents._kernels import epsilon_greedy, risk_rows
from tradearena.agents.schedules import EpsilonGreedy

RISKY_VALUE = -2.0 * math.log(0.5 * math.exp(-1.5) + 0.5 * math.exp(0.5))  # 0.1325 at beta=-0.5


def test_raql_entropic_fixed_point():
    """One state, one action, gamma 0, reward +-1 w.p. 1/2, step 1/N: Q -> log cosh(b) / b."""
    rewards = np.random.default_rng(0).choice([-1.0, 1.0], size=200_000).tolist()
    results = {}
    for label, utility in (("exp", {"name": "exponential", "beta": -0.5}), ("id", "identity")):
        agent = agents.make("raql", n_states=1, n_actions=1, gamma=0.0, utility=utility, seed=0)
        for r in rewards:
            agent.update(0, 0, r, 0, True, False)
        results[label] = agent.q[0, 0]
    assert math.log(math.cosh(-0.5)) / -0.5 == pytest.approx(-0.2402, abs=1e-4)
    assert results["exp"] == pytest.approx(math.log(math.cosh(-0.5)) / -0.5, abs=0.01)
    assert results["id"] == pytest.approx(0.0, abs=0.01)


def _train_bandit(agent, steps=20_000, seed=1):
    """Action 0: safe, 0.9 always; action 1: risky, +3 or -1 w.p. 1/2 (mean 1.0)."""
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        a = agent.act(0)
        r = 0.9 if a == 0 else (3.0 if rng.random() < 0.5 else -1.0)
        agent.update(0, a, r, 0, True, False)
    return agent.act(0, explore=False)


@pytest.mark.parametrize(
    ("name", "params", "expected"),
    [
        ("q_learning", {}, 1),
        ("raql", {"utility": {"name": "exponential", "beta": -0.5}}, 0),
        ("ra2q", {"utility": {"name": "exponential", "beta": -0.5}, "k": 5}, 0),
    ],
)
def test_safe_versus_risky_bandit(name, params, expected):
    agent = agents.make(name, n_states=1, n_actions=2, gamma=0.0, exploration=1.0, seed=0, **params)
    assert _train_bandit(agent) == expected
    if name == "raql":
        assert agent.q[0, 1] == pytest.approx(RISKY_VALUE, abs=0.05)


def _stream(agent, steps=3000, n_states=6, n_actions=3, seed=7):
    """Drive ``agent`` on a random MDP (agent's own actions); return its actions."""
    rng = np.random.default_rng(seed)
    s, actions = 0, []
    for _ in range(steps):
        a = agent.act(s)
        s2 = int(rng.integers(n_states))
        r = float(rng.normal(a - 1.0, 1.0 + s))
        terminated = bool(rng.random() < 0.05)
        agent.update(s, a, r, s2, terminated, False)
        actions.append(a)
        if terminated:
            agent.end_episode()
            s2 = 0
        s = s2
    return actions


COMMON = {"n_states": 6, "n_actions": 3, "gamma": 0.9, "seed": 11, "exploration": 0.2}
EXP = {"name": "exponential", "beta": -0.3}


@pytest.mark.parametrize(
    ("reduced", "reference", "table"),
    [
        (
            ("ra2q", {"k": 1, "lam": 0.0, "masks": False, "utility": EXP}),
            ("raql", {"utility": EXP}),
            0,
        ),
        (("raql", {"utility": "identity"}), ("q_learning", {}), None),
        (
            ("ra21q", {"recenter": False, "k": 4, "utility": EXP}),
            ("ra2q", {"k": 4, "utility": EXP}),
            None,
        ),
        (("ra3q", {"adversary_mode": None, "k": 4}), ("ra2q", {"k": 4}), None),
        (("ra3q", {"p_adv": 0.0, "k": 4}), ("ra2q", {"k": 4}), None),
        (("ra3q", {"adversary_mode": "trader", "k": 4}), ("ra2q", {"k": 4}), None),
    ],
)
def test_exact_reductions(reduced, reference, table):
    a = agents.make(reduced[0], **COMMON, **reduced[1])
    b = agents.make(reference[0], **COMMON, **reference[1])
    assert _stream(a) == _stream(b)
    q_a = a.q if table is None else a.q[table]
    assert np.array_equal(q_a, b.q)
    assert np.count_nonzero(b.q) > 10


def test_risk_argmax_is_argmax_of_risk_row():
    from tradearena.agents._kernels import risk_argmax, risk_row

    rng = np.random.default_rng(3)
    for k in (1, 4):
        q = rng.normal(size=(k, 5, 4))
        q[:, 4] = 0.0  # all tied: lowest index
        for s in range(5):
            for seeking in (False, True):
                expected = int(np.argmax(risk_row(q, s, 0.7, seeking)))
                assert risk_argmax(q, s, 0.7, seeking) == expected


@pytest.mark.parametrize("robust_target", [True, False])
@pytest.mark.parametrize("adversary_acted", [False, True])
def test_ra3q_probabilistic_action_robust_targets(robust_target, adversary_acted):
    """One update against the PR-MDP targets of Tessler et al. (2019), identity utility."""
    p, gamma, alpha = 0.3, 0.9, 0.5
    agent = agents.make(
        "ra3q",
        n_states=4,
        n_actions=3,
        gamma=gamma,
        k=3,
        lam=0.5,
        adversary_lam=0.5,
        masks=False,
        utility="identity",
        adversary_utility="identity",
        learning_rate=alpha,
        p_adv=p,
        robust_target=robust_target,
        seed=0,
    )
    rng = np.random.default_rng(12)
    agent.tables.q[:] = rng.normal(size=agent.tables.q.shape)
    agent.adversary.q[:] = rng.normal(size=agent.adversary.q.shape)
    q_p, q_a = agent.tables.q.copy(), agent.adversary.q.copy()
    a_p = int(np.argmax(agent.values(2)))  # greedy actions at s' = 2
    a_a = int(np.argmax(agent.adversary_values(2)))
    # on this draw the mixture matters: no table's own max is at the other learner's action
    assert (q_p[:, 2].argmax(axis=1) != a_a).all() and (q_a[:, 2].argmax(axis=1) != a_p).all()
    agent.adversary_acted = adversary_acted
    agent.update(1, 0, 2.0, 2, False, False)
    if adversary_acted:  # reward -r, executed policy at s': P w.p. 1 - p, A w.p. p
        boot = q_a[:, 2].max(axis=1)
        if robust_target:
            boot = (1 - p) * q_a[:, 2, a_p] + p * boot
        old, learner, expected = q_a, agent.adversary.q, -2.0 + gamma * boot
        untouched, before = agent.q, q_p
    else:
        boot = q_p[:, 2].max(axis=1)
        if robust_target:
            boot = (1 - p) * boot + p * q_p[:, 2, a_a]
        old, learner, expected = q_p, agent.q, 2.0 + gamma * boot
        untouched, before = agent.adversary.q, q_a
    np.testing.assert_allclose(learner[:, 1, 0], old[:, 1, 0] + alpha * (expected - old[:, 1, 0]))
    changed = np.zeros(old.shape, dtype=bool)
    changed[:, 1, 0] = True
    assert np.array_equal(learner[~changed], old[~changed])
    assert np.array_equal(untouched, before)


def test_ra3q_robust_target_not_bootstrapped_at_termination():
    params = {"n_states": 3, "n_actions": 2, "gamma": 0.9, "k": 2, "masks": False, "seed": 0}
    a, b = (agents.make("ra3q", robust_target=rt, **params) for rt in (True, False))
    for agent in (a, b):
        agent.adversary.q[:] = np.arange(12.0).reshape(2, 3, 2)
        agent.update(0, 1, -1.0, 2, True, False)
    assert np.array_equal(a.q, b.q)


class RandomMDP:
    """S states, A actions, P(s'|s,a) ~ Dirichlet(1), mean rewards U(0, 1), noise N(0, 1)."""

    def __init__(self, rng, n_states=20, n_actions=3):
        self.n_states, self.n_actions = n_states, n_actions
        self.p = rng.dirichlet(np.ones(n_states), size=(n_states, n_actions))
        self.r = rng.uniform(0.0, 1.0, (n_states, n_actions))
        self.cumulative = np.cumsum(self.p, axis=2)

    def __call__(self, s, a, rng):
        s2 = int(np.searchsorted(self.cumulative[s, a], rng.random(), side="right"))
        return self.r[s, a] + rng.normal(), min(s2, self.n_states - 1)

    def q_star(self, gamma):
        q = np.zeros((self.n_states, self.n_actions))
        for _ in range(1000):
            q = self.r + gamma * self.p @ q.max(axis=1)
        return q


def _synchronous(agent, mdp, sweeps, rng):
    for _ in range(sweeps):
        for s in range(mdp.n_states):
            for a in range(mdp.n_actions):
                r, s2 = mdp(s, a, rng)
                agent.update(s, a, r, s2, False, False)


def test_vql_beats_q_learning_with_generative_model():
    """Same budget of 600 samples per (s, a): Q-learning 600 synchronous sweeps; V-QL three
    epochs of 100 recentering samples + 100 sweeps. Both with alpha = 1/(1 + (1-gamma) n)."""
    gamma, errors = 0.9, {"q_learning": [], "vql": []}
    for seed in range(5):
        mdp = RandomMDP(np.random.default_rng(seed))
        q_star = mdp.q_star(gamma)
        sizes = {"n_states": 20, "n_actions": 3, "gamma": gamma, "seed": seed}
        ql = agents.make("q_learning", learning_rate="rescaled_linear", **sizes)
        _synchronous(ql, mdp, 600, np.random.default_rng(seed + 100))
        vql = agents.make("vql", model=mdp, n_recenter=100, epoch_length=100 * 60, **sizes)
        _synchronous(vql, mdp, 300, np.random.default_rng(seed + 100))
        assert vql.model_samples + 300 * 60 == 600 * 60 == ql.visits.sum()
        errors["q_learning"].append(np.abs(ql.q - q_star).max())
        errors["vql"].append(np.abs(vql.q - q_star).max())
    assert np.mean(errors["vql"]) < 0.8 * np.mean(errors["q_learning"])


def _noisy_chain(agent, episodes, rng, length=5):
    """States 0..length-1, one action, reward N(0, 1) each step; Q(0) = 0."""
    for _ in range(episodes):
        for s in range(length):
            agent.update(s, 0, rng.normal(), min(s + 1, length - 1), s == length - 1, False)
    return agent.values(0)[0]


def test_averaged_q_lowers_spread_at_start_state():
    spread = {}
    for name, params in (
        ("q_learning", {}),
        ("averaged_q", {"n_snapshots": 10, "snapshot_period": 20}),
    ):
        values = [
            _noisy_chain(
                agents.make(
                    name, n_states=5, n_actions=1, gamma=0.99, learning_rate=0.1, seed=s, **params
                ),
                400,
                np.random.default_rng(s),
            )
            for s in range(10)
        ]
        spread[name] = np.std(values)
    assert spread["averaged_q"] < 0.7 * spread["q_learning"]


def test_minimax_matching_pennies():
    agent = agents.make(
        "ra3q_minimax", n_states=1, n_actions=2, gamma=0.0, k=3, utility="identity", seed=0
    )
    rng = np.random.default_rng(0)
    for _ in range(1000):
        a_p, a_a = rng.integers(2, size=2)
        agent.update_joint(0, a_p, a_a, 1.0 if a_p == a_a else -1.0, 0, True)
    x, y, value = agent.strategies(0)
    np.testing.assert_allclose(x, [0.5, 0.5], atol=0.02)
    np.testing.assert_allclose(y, [0.5, 0.5], atol=0.02)
    assert value == pytest.approx(0.0, abs=0.05)
    greedy = [agent.act(0, explore=False) for _ in range(400)]
    assert np.mean(greedy) == pytest.approx(0.5, abs=0.1)


@pytest.mark.parametrize(
    ("agent_id", "params"),
    [
        ("q_learning", {}),
        ("raql", {"utility": {"name": "exponential", "beta": -0.5}}),
        ("ra2q", {"k": 4}),
        ("ra2q", {"k": 3, "masks": False, "lam": 0.5}),
        ("ra21q", {"k": 3}),
    ],
)
def test_update_batch_equals_updates_one_by_one(agent_id, params):
    """One compiled call for N transitions leaves the tables, visits and generator exactly
    as N calls of `update` (RA2.1-Q, which recenters, keeps the one-by-one default)."""
    rng = np.random.default_rng(5)
    n = 400
    obs, next_obs = rng.integers(0, 6, size=n), rng.integers(0, 6, size=n)
    actions = rng.integers(0, 3, size=n)
    rewards = rng.normal(0.0, 2.0, size=n)
    terminated = rng.random(n) < 0.1
    batched, single = (
        agents.make(agent_id, n_states=6, n_actions=3, seed=1, **params) for _ in range(2)
    )
    batched.update_batch(obs, actions, rewards, next_obs, terminated, np.zeros(n, bool))
    for transition in zip(obs, actions, rewards, next_obs, terminated):
        single.update(*transition, False)
    for key, value in single.state_dict().items():
        assert np.array_equal(np.asarray(batched.state_dict()[key]), np.asarray(value)), key
    assert batched.rng.random() == single.rng.random()


@pytest.mark.parametrize(
    ("agent_id", "params"),
    [
        ("q_learning", {"exploration": 0.3}),
        ("raql", {"exploration": ("linear", 1.0, 0.05, 300)}),
        ("ra2q", {"k": 4, "exploration": ("exponential", 0.9, 0.0, 50)}),
        ("ra2q", {"k": 3, "head_per_episode": True}),
        ("ra21q", {"k": 3}),
        ("vql", {}),
        ("averaged_q", {}),
        ("ra3q", {"k": 2}),
        ("ra3q_minimax", {}),
    ],
)
def test_act_batch_equals_acts_one_by_one(agent_id, params):
    """Acting for N sessions at once gives the actions, step count and generator state of N
    calls of `act` in order: fresh tables (every action tied), then after some learning, with
    and without exploration."""
    rng = np.random.default_rng(7)
    batched, single = (
        agents.make(agent_id, n_states=6, n_actions=4, seed=2, **params) for _ in range(2)
    )
    for phase in range(3):
        obs = rng.integers(0, 6, size=50)
        for explore in (True, False):
            got = batched.act_batch(obs, explore=explore)
            expected = [single.act(o, explore=explore) for o in obs]
            assert got.dtype == np.int64 and got.tolist() == expected, (phase, explore)
        assert batched.t == single.t
        transitions = (obs, rng.integers(0, 4, size=50), rng.normal(size=50), obs[::-1])
        for agent in (batched, single):
            for o, a, r, o2 in zip(*transitions):
                agent.update(o, a, r, o2, False, False)
    assert batched.rng.random() == single.rng.random()
    with pytest.raises(ValueError, match="range"):
        batched.act_batch(np.array([0, 6]))


def test_epsilon_greedy_draws_as_numpy():
    """The compiled batch policy makes `EpsilonGreedy`'s draws: random epsilons per row, ties
    among up to 200 actions, the generator left in the same state."""
    for seed in range(6):
        g = np.random.default_rng(seed)
        n_actions = [1, 2, 7, 200][seed % 4]
        values = g.integers(0, 3, size=(300, n_actions)).astype(float)
        epsilon = g.choice([0.0, 0.2, 1.0], size=300)
        mine, numpy_s = np.random.default_rng(seed + 10), np.random.default_rng(seed + 10)
        policy = EpsilonGreedy(n_actions, 0.5)
        expected = []
        for row, eps in zip(values, epsilon):
            policy.constant = eps
            expected.append(policy(row, numpy_s, 0))
        assert epsilon_greedy(values, mine, epsilon).tolist() == expected
        assert mine.bit_generator.state == numpy_s.bit_generator.state
    with pytest.raises(ValueError, match="2 epsilons for 3 rows"):
        epsilon_greedy(np.zeros((3, 2)), mine, np.zeros(2))
    with pytest.raises(TypeError, match="numpy Generator, got RandomState"):
        epsilon_greedy(np.zeros((3, 2)), np.random.RandomState(0))
    with pytest.raises(ValueError, match="state 6 is not in range"):
        risk_rows(np.zeros((2, 6, 3)), np.array([0, 6]), 0.5)
