"""RA3-Q against RA2-Q on a cliff walk where an adversary can take over the protagonist's action.

Grid of 4 x 6 cells, start bottom-left, goal bottom-right, the cells between them on the bottom
row a cliff (reward -20, episode ends); every other step -1. The short path runs along the cliff
edge, safer ones one or two rows up. At evaluation, with probability ``P_ADV`` the executed
action is the worst-case adversary's: a push toward the cliff (down).

RA3-Q trains with take-over probability ``P_ADV`` and its default ``robust_target`` (the
probabilistic action-robust target of Tessler et al. 2019). Findings, seeds 0-19, 1500 training
episodes, 500 evaluation episodes each (RA2-Q / RA3-Q):

- RA2-Q learns the cliff-edge path: falls 54-61% of the episodes, mean return -16.8 to -17.9.
- RA3-Q learns a route one or two rows up (the exact risk-neutral PR-MDP optimum takes the
  second row; a push down is followed by a step back up): falls 6-22%, mean return -13.8 to
  -15.2 (19 seeds; seed 16 has not converged at 1500 episodes: its greedy policy loops at the
  top-left corner, -40; at 3000 episodes it falls 8%, mean -14.8). With
  ``robust_target=False`` RA3-Q bootstraps from max Q and learns exactly RA2-Q's policy
  (identical returns on seeds 0-9).
- The 5% quantile is *not* better for RA3-Q (hence that test's ``xfail(strict=True)``): it
  is a fall for both, and the safer route falls later, after more -1 steps: -26/-27 for RA2-Q,
  -28 to -31 for RA3-Q (the exact PR-MDP optimum: -29). Against a push down with probability
  0.2 no route does much better on this statistic: fixed routes along row 2 / 1 / 0 (100,000
  episodes) fall 59% / 18% / 4.6%, 5% quantiles -27 / -29 / -27.
"""

import numpy as np
import pytest

import agents

HEIGHT, WIDTH = 4, 6
UP, RIGHT, DOWN, LEFT = range(4)
START, GOAL = (HEIGHT - 1) * WIDTH, HEIGHT * WIDTH - 1
P_ADV, HORIZON = 0.2, 40


def cliff_step(s: int, a: int) -> tuple[int, float, bool]:
    """(next state, reward, terminated) of the cliff walk."""
    row, col = divmod(s, WIDTH)
    row = max(row - 1, 0) if a == UP else min(row + 1, HEIGHT - 1) if a == DOWN else row
    col = min(col + 1, WIDTH - 1) if a == RIGHT else max(col - 1, 0) if a == LEFT else col
    if row == HEIGHT - 1 and 0 < col < WIDTH - 1:
        return START, -20.0, True
    s2 = row * WIDTH + col
    return s2, -1.0, s2 == GOAL


def train(name, seed, episodes=1500, **params):
    agent = agents.make(
        name,
        n_states=HEIGHT * WIDTH,
        n_actions=4,
        gamma=0.95,
        learning_rate=0.2,
        reward_scale=0.1,  # beta * TD error stays within ~1 at beta = -0.5
        k=5,
        seed=seed,
        **params,
    )
    for _ in range(episodes):
        s = START
        for t in range(HORIZON):
            a = agent.act(s)
            s2, r, terminated = cliff_step(s, a)
            agent.update(s, a, r, s2, terminated, t == HORIZON - 1 and not terminated)
            s = s2
            if terminated:
                break
        agent.end_episode()
    return agent


def returns_under_adversary(agent, rng, episodes=500):
    """Greedy protagonist; with probability P_ADV the executed action is DOWN (worst case).

    Returns the episode returns and whether each episode ended in the cliff."""
    out, fell = [], []
    for _ in range(episodes):
        s, total, cliff = START, 0.0, False
        for _ in range(HORIZON):
            a = DOWN if rng.random() < P_ADV else agent.act(s, explore=False)
            s, r, terminated = cliff_step(s, a)
            total += r
            if terminated:
                cliff = s != GOAL
                break
        out.append(total)
        fell.append(cliff)
    return np.array(out), np.array(fell)


@pytest.fixture(scope="module")
def evaluations():
    """{name: [(returns, fell) per seed 0-2]} under the adversary."""
    results = {"ra2q": [], "ra3q": []}
    for seed in range(3):
        for name, params in (("ra2q", {}), ("ra3q", {"p_adv": P_ADV})):
            agent = train(name, seed, **params)
            results[name].append(returns_under_adversary(agent, np.random.default_rng(100 + seed)))
    return results


def test_cliff_walk_worst_case_adversary_is_deterministic():
    assert cliff_step(START, RIGHT) == (START, -20.0, True)
    assert cliff_step(START - WIDTH + WIDTH - 1, DOWN) == (GOAL, -1.0, True)


def test_ra3q_falls_less_and_has_higher_mean_return_under_adversary(evaluations):
    """Seeds 0-2: mean return -14.5 vs -17.6, fall rate 0.11 vs 0.60 (RA3-Q vs RA2-Q); over
    seeds 0-19 (but 16, not converged) the per-seed gaps are >= 1.9 and >= 0.36."""
    mean = {n: np.mean([r.mean() for r, _ in runs]) for n, runs in evaluations.items()}
    fall = {n: np.mean([f.mean() for _, f in runs]) for n, runs in evaluations.items()}
    assert mean["ra3q"] > mean["ra2q"] + 1.5, mean
    assert fall["ra3q"] < fall["ra2q"] - 0.3, fall


@pytest.mark.xfail(
    strict=True,
    reason="5% quantile is a cliff fall for both; RA3-Q's safer route falls later (see top)",
)
def test_ra3q_has_higher_worst_case_return_than_ra2q(evaluations):
    quantiles = {n: [np.quantile(r, 0.05) for r, _ in runs] for n, runs in evaluations.items()}
    assert np.mean(quantiles["ra3q"]) > np.mean(quantiles["ra2q"]), quantiles
