"""The Almgren-Chriss model market: optimal execution where the optimal schedule is known.

A seat sells ``shares`` lots over ``n_steps`` steps (one decision a step; whatever is left is
sold at the last step). The price is arithmetic Brownian motion with linear impact, as in
Almgren and Chriss (2000, "Optimal execution of portfolio transactions"), in dollars and lots:

    S_k = S_{k-1} + sigma * xi_k - gamma * n_k        (xi_k ~ N(0, 1); permanent impact)
    selling n_k lots at step k fills at S_{k-1} - eta * n_k   (temporary impact)

The reward of a step is the change of the seat's value, cash plus holdings x_k at S_k:

    r_k = -eta * n_k^2 - gamma * n_k * x_k + sigma * x_k * xi_k,

and an episode's rewards add up to minus the implementation shortfall against the arrival
price S_0. Given (k, x_{k-1}) and the action, the next state is certain and the reward
Gaussian with variance sigma^2 x_k^2, so an exponential utility's certainty equivalent of
each step is E[r_k] - (risk_aversion) * sigma^2 * x_k^2 with risk_aversion = -beta / 2: the
Almgren-Chriss mean-variance objective. `optimal_schedule` solves it exactly by dynamic
programming over whole lots: with ``risk_aversion = 0`` it is the risk-neutral optimum (an
even split, TWAP, when ``shares`` divides evenly), with ``risk_aversion > 0`` it front-loads.
It is also the fixed point of RAQL (exponential utility, beta = -2 risk_aversion) in this
market, which is what the tests check a learner against.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from tradearena.envs.rendering import trace_picture
from tradearena.envs.seats import in_space

__all__ = [
    "AlmgrenChrissMarket",
    "almgren_chriss_holdings",
    "optimal_schedule",
    "schedule_objective",
    "step_cost",
]


class AlmgrenChrissMarket(gym.Env):
    """Sell ``shares`` lots in ``n_steps`` steps; actions sell 0 .. ``max_trade`` lots.

    Observation: Discrete state ``k * (shares + 1) + x`` (k steps done, x lots left). Action
    a sells min(a, x) lots (all x at the last step). Reward: see the module docstring
    (dollars); ``info["shortfall"]`` at the end is the implementation shortfall (dollars).
    ``render_mode="rgb_array"`` draws the lots held after each step so far
    (`envs.rendering.trace_picture`).
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 1}

    def __init__(
        self,
        *,
        shares: int = 8,
        n_steps: int = 4,
        max_trade: int = 4,
        sigma: float = 1.0,
        eta: float = 1.0,
        gamma: float = 0.0,
        render_mode: str | None = None,
    ) -> None:
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        self.render_mode = render_mode
        if shares < 1 or n_steps < 1 or max_trade < 1:
            raise ValueError(
                f"need shares, n_steps, max_trade >= 1, got {shares, n_steps, max_trade}"
            )
        if sigma < 0 or eta <= 0 or gamma < 0:
            raise ValueError(f"need sigma >= 0, eta > 0, gamma >= 0, got {sigma, eta, gamma}")
        self.shares, self.n_steps, self.max_trade = shares, n_steps, max_trade
        self.sigma, self.eta, self.gamma = sigma, eta, gamma
        self.observation_space = spaces.Discrete(n_steps * (shares + 1))
        self.action_space = spaces.Discrete(max_trade + 1)
        self.k = self.left = 0
        self.held: list[int] = []
        self.shortfall = 0.0
        self.over = True  # no episode until reset

    def state(self) -> int:
        return self.k * (self.shares + 1) + self.left

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[int, dict]:
        super().reset(seed=seed)
        self.k, self.left, self.shortfall = 0, self.shares, 0.0
        self.held = [self.shares]  # lots held after each step, from the start
        self.over = False
        return self.state(), {}

    def step(self, action: Any) -> tuple[int, float, bool, bool, dict]:
        """One step; a RuntimeError when no episode is on (before `reset`, once it ended, or
        after `close`): a step then would leave the observation space."""
        if self.over:
            raise RuntimeError("no episode to step: call reset() (after its last step, or close)")
        if not in_space(self.action_space, action):
            raise ValueError(f"action {action!r} is not in {self.action_space}")
        last = self.k == self.n_steps - 1
        sold = self.left if last else min(int(action), self.left)
        self.left -= sold
        self.held.append(self.left)
        reward = -step_cost(sold, self.left, self.eta, self.gamma)
        reward += self.sigma * self.left * float(self.np_random.standard_normal())
        self.shortfall -= reward
        self.k += 1
        done = self.over = self.k == self.n_steps
        info = {"sold": sold, "left": self.left, "shortfall": self.shortfall}
        return (0 if done else self.state()), reward, done, False, info

    def close(self) -> None:
        """End the episode: `step` refuses until the next `reset`."""
        self.over = True
        super().close()

    def render(self) -> np.ndarray | None:
        if self.render_mode is None:
            return None
        return trace_picture(self.held, self.n_steps)


def step_cost(sold: int, left: int, eta: float, gamma: float) -> float:
    """Expected cost of selling ``sold`` lots with ``left`` held after (dollars)."""
    return eta * sold**2 + gamma * sold * left


def schedule_objective(
    market: AlmgrenChrissMarket, schedule: Sequence[int], risk_aversion: float = 0.0
) -> float:
    """The mean-variance objective of selling ``schedule[k]`` lots at step k (dollars): the
    expected reward less ``risk_aversion * sigma^2 * left^2``, summed over the steps."""
    left, total = market.shares, 0.0
    for sold in schedule:
        left -= sold
        cost = step_cost(sold, left, market.eta, market.gamma)
        total -= cost + risk_aversion * market.sigma**2 * left**2
    return total


def optimal_schedule(market: AlmgrenChrissMarket, risk_aversion: float = 0.0) -> tuple:
    """The exactly optimal policy of the mean-variance objective: per step, the expected
    reward less ``risk_aversion * sigma^2 * left^2``. Returns (values, actions, schedule):
    ``values[k, x]`` the optimal value from k steps done with x lots left, ``actions[k, x]``
    the lots to sell (ties: the fewest), and ``schedule`` the lots sold per step from the
    start, shape (n_steps,)."""
    n, big = market.n_steps, market.shares
    values = np.zeros((n + 1, big + 1))
    actions = np.zeros((n, big + 1), dtype=np.int64)
    penalty = risk_aversion * market.sigma**2
    for k in range(n - 1, -1, -1):
        for x in range(big + 1):
            choices = [x] if k == n - 1 else range(min(market.max_trade, x) + 1)
            best = -np.inf
            for sold in choices:
                left = x - sold
                cost = step_cost(sold, left, market.eta, market.gamma) + penalty * left**2
                value = -cost + values[k + 1, left]
                if value > best + 1e-12:
                    best, actions[k, x] = value, sold
            values[k, x] = best
    schedule, left = [], big
    for k in range(n):
        schedule.append(int(actions[k, left]))
        left -= schedule[-1]
    return values[:n], actions, np.array(schedule)


def almgren_chriss_holdings(market: AlmgrenChrissMarket, risk_aversion: float) -> np.ndarray:
    """The continuous Almgren-Chriss trajectory of holdings at steps 0 .. n_steps (lots,
    shape (n_steps + 1,)): x_k = X sinh(kappa (N - k)) / sinh(kappa N), with kappa from
    2 (cosh(kappa) - 1) = risk_aversion * sigma^2 / eta_tilde, eta_tilde = eta - gamma / 2
    (step length 1); a straight line (TWAP) for risk_aversion = 0. `optimal_schedule` is its
    solution in whole lots."""
    n, big = market.n_steps, market.shares
    k = np.arange(n + 1)
    eta_tilde = market.eta - market.gamma / 2
    if risk_aversion == 0:
        return big * (1 - k / n)
    kappa = np.arccosh(1 + risk_aversion * market.sigma**2 / (2 * eta_tilde))
    return big * np.sinh(kappa * (n - k)) / np.sinh(kappa * n)
