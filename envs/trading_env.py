"""`TradingEnv`: one learner seat in a limit-order-book market, as a Gymnasium environment."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from tradearena.envs.data.tapes import Tape
from tradearena.envs.rendering import book_picture
from tradearena.envs.seats import Policy, SeatedMarket, in_space
from tradearena.envs.simulator.market import Market
from tradearena.envs.spec import MarketSpec

__all__ = ["TradingEnv", "make_replay_env"]


class TradingEnv(gym.Env):
    """Trade one stock in a limit-order-book market against background traders.

    ## Description
    A trading session of ``n_steps`` decisions ``step_seconds`` apart (by default the task's
    market, `envs.tasks`: 60 one-minute steps from 09:30, position limit 500 shares, rewards
    in dollars x 0.01). The learner holds seat 0. Between its decisions the background traders
    (zero-intelligence, noise, momentum traders and market makers: the light population by
    default, ``population="rmsc04"`` for the population size of ABIDES' rmsc04; or a replay
    of a recorded tape) send their order flow to the book. Other seats, if any, are played by
    ``opponents``; an ``adversary`` may take over the learner's action or trade against it.

    ## Action Space
    ``Discrete(n)``, the action set ``actions`` (by default the task's; see
    `envs.simulator.actions`), with orders of ``order_size`` shares; in every set action 1
    trades nothing:

    - ``"trade"`` (the ``taker`` and ``informed`` tasks), ``Discrete(3)``: 0 sell at market,
      1 hold, 2 buy at market.
    - ``"quote"``, ``Discrete(7)``: 0 keep the quotes, 1 cancel them, 2 bid, 3 ask, 4 bid and
      ask at the best prices, 5 sell at market, 6 buy at market.
    - ``"make"`` (the ``making`` task), ``Discrete(17)``: 0 cancel the quotes and trade
      towards a flat inventory at market, 1 no quotes, 2-16 a bid and an ask (either may be
      off), each 0, 1 or 2 ticks behind the others' best on its side; an unchanged quote
      keeps its place in the queue.
    - ``"execute"`` (the ``execution`` task), ``Discrete(5)``: toward ``parent_order``, 0 one
      lot resting at the others' best on the parent's side, 1 nothing, 2-4 one to three lots
      at market; never more than what remains, and the last step trades what remains.

    Orders are clipped to the position limit (``position_limit`` shares).

    ## Observation Space
    ``observation="features"`` (default): ``Box`` of float32:

    | index | name | min | max | unit |
    |---|---|---|---|---|
    | 0 | inventory | -1 | 1 | fraction of the position limit |
    | 1 | imbalance | -1 | 1 | (bid - ask) / (bid + ask) volume, top ``depth_levels`` |
    | 2 | spread | 0 | see space | ticks |
    | 3.. | return_w, w in ``windows`` | see space | see space | mid log-return, basis points |
    | 3 + len(windows) | time_left | 0 | 1 | fraction of the session |
    | 4 + len(windows) | volatility | 0 | see space | realised, basis points per step |
    | last | signal (``informed`` task) | see space | see space | forecast over mid, bp |

    ``observation="tabular"``: ``Discrete(n)``, the features binned by a `Discretizer`.

    ## Rewards
    The change of the seat's marked-to-market value (cash plus inventory at the mid, less fees)
    over the step, in dollars, times ``reward_scale``.

    ## Starting State
    An empty account; the book after ``warmup_seconds`` of background flow (or the tape's
    initial book).

    ## Episode End
    Termination: the session closes after ``n_steps`` steps (time is part of the observation).
    Truncation: never by the environment itself.

    ## Arguments
    ``market_spec`` (a `envs.spec.MarketSpec`: background, tape, clock, action set, order
    size, reward scale, observation settings) and any of its fields as keywords, which replace
    the spec's (an unknown keyword is an error naming it); ``observation`` (the learner's
    kind, "features" or "tabular"); ``opponents`` (policies for seats 1.., each reading the
    observation kind it declares); ``adversary`` (a policy), ``adversary_mode`` ("takeover":
    with probability ``adversary_p`` the executed action is the adversary's; "trader": it
    trades its own seat, rewarded with minus the learner's reward).

    ## Rendering
    ``render_mode="ansi"``: the best five levels of the book, the mid, the inventory and the
    value as text. ``render_mode="rgb_array"`` (the mode Stable-Baselines3 asks for when it
    makes an env from its id): a (120, 200, 3) uint8 image of the same depth ladder beside
    the seat's value over the session (`envs.rendering.book_picture`).

    ## Version History
    v0: first version.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 1}

    def __init__(
        self,
        market_spec: MarketSpec | None = None,
        *,
        observation: str = "features",
        opponents: Sequence[Policy] = (),
        adversary: Policy | None = None,
        adversary_mode: str = "takeover",
        adversary_p: float = 0.2,
        render_mode: str | None = None,
        **market: Any,
    ) -> None:
        if adversary_mode not in ("takeover", "trader"):
            raise ValueError(
                f"adversary_mode must be 'takeover' or 'trader', got {adversary_mode!r}"
            )
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(
                f"render_mode must be None, 'ansi' or 'rgb_array', got {render_mode!r}"
            )
        self.market_spec = MarketSpec.from_keywords("TradingEnv", market_spec, **market)
        seats: list[Policy | str] = [observation, *opponents]
        trader = adversary is not None and adversary_mode == "trader"
        if trader:
            seats.append(adversary)
        self.core = SeatedMarket(
            self.market_spec,
            seats,
            opposes={len(seats) - 1: 0} if trader else None,
            takeover=(0, adversary_p) if adversary is not None and not trader else None,
            adversary=None if trader else adversary,
        )
        self.action_space = self.core.action_space
        self.observation_space = self.core.observation_spaces[0]
        self.render_mode = render_mode
        self._values: list[float] = []  # the seat's value after each step (dollars)

    @property
    def market(self) -> Market:
        """The underlying `envs.simulator.market.Market`."""
        return self.core.market

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        observations = self.core.reset(int(self.np_random.integers(2**63 - 1)))
        info = self.core.info(0)
        self._values = [info["value"]]
        return observations[0], info

    def step(self, action: int) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        plain = isinstance(action, int | np.integer) and 0 <= action < self.action_space.n
        if not plain and not in_space(self.action_space, action):
            raise ValueError(f"action {action!r} is not in {self.action_space}")
        observations, rewards, done = self.core.step((action,))
        info = self.core.info(0)
        self._values.append(info["value"])
        return observations[0], float(rewards[0]), done, False, info

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            return None
        market = self.market
        bids, asks = market.book.depth(5)
        if self.render_mode == "rgb_array":
            return book_picture(bids, asks, self._values, market.n_steps)
        info = self.core.info(0)
        rows = [f"step {market.step_index}/{market.n_steps}  mid {market.last_mid:.1f} ticks"]
        rows += [f"  ask {p:>8} x {q}" for p, q in reversed(asks)]
        rows += [f"  bid {p:>8} x {q}" for p, q in bids]
        rows.append(f"inventory {info['inventory']} shares, value ${info['value']:.2f}")
        return "\n".join(rows)


def make_replay_env(tape: Tape | str | Path = "synthetic", **kwargs: Any) -> TradingEnv:
    """`TradingEnv` replaying ``tape`` (default: a synthetic day recorded with seed 0)."""
    return TradingEnv(tape=tape, **kwargs)
