"""RA3-Q against RA2-Q on a cliff walk where an adversary can take over the protagonist's action.

Grid of 4 x 6 cells, start bottom-left, goal bottom-right, the cells between them on the bottom
row a cliff (reward -20, episode ends); every other step -1. The short path runs along the cliff
edge, safer ones one or two rows up. At evaluation, with probability ``P_ADV`` the executed
action is the worst-case adversary's: a push toward the cliff (down).

Finding (not yet true, hence ``xfail(strict=True)``): RA3-Q's protagonist bootstraps from
``max_a Q_i(s', a)`` on the steps it acted, so the take-over changes which transitions it sees
but not its fixed point; it learns the same cliff-edge path as RA2-Q and has the same 5% quantile
under the adversary (on seeds 0-4, 2000 episodes: -26/-27 for both, identical returns). A
protagonist target of Tessler et al. (2019)'s probabilistic action-robust operator,
``(1 - p_adv) max_a Q(s', a) + p_adv Q(s', a_adversary(s'))``, would be needed for the claim.
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
    """Greedy protagonist; with probability P_ADV the executed action is DOWN (worst case)."""
    out = []
    for _ in range(episodes):
        s, total = START, 0.0
        for _ in range(HORIZON):
            a = DOWN if rng.random() < P_ADV else agent.act(s, explore=False)
            s, r, terminated = cliff_step(s, a)
            total += r
            if terminated:
                break
        out.append(total)
    return np.array(out)


def test_cliff_walk_worst_case_adversary_is_deterministic():
    assert cliff_step(START, RIGHT) == (START, -20.0, True)
    assert cliff_step(START - WIDTH + WIDTH - 1, DOWN) == (GOAL, -1.0, True)


@pytest.mark.xfail(
    strict=True, reason="RA3-Q protagonist bootstraps from max Q: same policy as RA2-Q"
)
def test_ra3q_has_higher_worst_case_return_than_ra2q():
    quantiles = {"ra2q": [], "ra3q": []}
    for seed in range(3):
        for name, params in (("ra2q", {}), ("ra3q", {"p_adv": P_ADV})):
            agent = train(name, seed, **params)
            returns = returns_under_adversary(agent, np.random.default_rng(100 + seed))
            quantiles[name].append(np.quantile(returns, 0.05))
    assert np.mean(quantiles["ra3q"]) > np.mean(quantiles["ra2q"]), quantiles
