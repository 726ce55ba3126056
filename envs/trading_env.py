"""`TradingEnv`: one learner seat in a limit-order-book market, as a Gymnasium environment."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym

from envs.features import Discretizer
from envs.seats import default_tape, seated_market
from envs.tapes import Tape
from envs.traders import Trader

__all__ = ["Policy", "TradingEnv", "act_with"]

Policy = Callable[[Any], int] | Any
"""A fixed policy for a seat: a callable obs -> action, or an object with
``act(obs, explore=False)`` (every `agents.Agent`)."""


def act_with(policy: Policy, obs: Any) -> int:
    """The action ``policy`` takes at ``obs``, greedily."""
    act = getattr(policy, "act", None)
    return int(act(obs, explore=False) if act is not None else policy(obs))


class TradingEnv(gym.Env):
    """Trade one stock in a limit-order-book market against background traders.

    ## Description
    A trading session of ``n_steps`` decisions ``step_seconds`` apart (default 390 one-minute
    steps, 09:30 to 16:00). The learner holds seat 0. Between its decisions the background
    traders (zero-intelligence, noise, momentum traders and market makers by default, the
    population size of ABIDES' rmsc04; or a replay of a recorded tape) send their order flow
    to the book. Other seats, if any, are played by ``opponents``; an ``adversary`` may take
    over the learner's action or trade against it.

    ## Action Space
    ``Discrete(3)`` by default (``actions="trade"``): 0 sell ``order_size`` shares at market,
    1 hold, 2 buy ``order_size`` at market. ``actions="quote"`` gives ``Discrete(7)``: keep
    quotes, cancel, bid, ask, bid+ask at the best prices, sell, buy (see `envs.actions`).
    Orders are clipped to the position limit (``position_limit`` shares).

    ## Observation Space
    ``observation="features"`` (default): ``Box`` of float32:

    | index | name | min | max | unit |
    |---|---|---|---|---|
    | 0 | inventory | -1 | 1 | fraction of the position limit |
    | 1 | imbalance | -1 | 1 | (bid - ask) / (bid + ask) volume, top ``depth_levels`` |
    | 2 | spread | 0 | see space | ticks |
    | 3.. | return_w, w in ``windows`` | see space | see space | mid log-return, basis points |
    | last | time_left | 0 | 1 | fraction of the session |

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
    ``traders`` (background population), ``tape`` (a `Tape` or LOBSTER message file to
    replay), ``extra_zi`` (zero-intelligence traders added: the ZI perturbation),
    ``observation``, ``actions``, ``order_size`` (shares), ``reward_scale``, ``windows``
    (steps), ``depth_levels``, ``discretizer``, ``opponents`` (policies for seats 1..),
    ``adversary`` (a policy), ``adversary_mode`` ("takeover": with probability
    ``adversary_p`` the executed action is the adversary's; "trader": it trades its own seat,
    rewarded with minus the learner's reward), and the `Market` keywords (``n_steps``,
    ``step_seconds``, ``tick_size``, ``position_limit``, ``fee_per_share``, ...).

    ## Version History
    v0: first version.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(
        self,
        *,
        traders: Sequence[Trader] | None = None,
        tape: Tape | str | Path | None = None,
        extra_zi: int = 0,
        observation: str | Sequence[str] = "features",
        actions: str = "trade",
        order_size: int = 100,
        reward_scale: float = 1.0,
        windows: Sequence[int] = (1, 5, 15),
        depth_levels: int = 5,
        discretizer: Discretizer | None = None,
        opponents: Sequence[Policy] = (),
        adversary: Policy | None = None,
        adversary_mode: str = "takeover",
        adversary_p: float = 0.2,
        render_mode: str | None = None,
        **market_kwargs: Any,
    ) -> None:
        if adversary_mode not in ("takeover", "trader"):
            raise ValueError(
                f"adversary_mode must be 'takeover' or 'trader', got {adversary_mode!r}"
            )
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self.opponents = list(opponents)
        self.adversary, self.adversary_mode = adversary, adversary_mode
        trader_seat = adversary is not None and adversary_mode == "trader"
        n_seats = 1 + len(self.opponents) + trader_seat
        self.core = seated_market(
            n_seats,
            traders=traders,
            tape=tape,
            extra_zi=extra_zi,
            observation=observation,
            actions=actions,
            order_size=order_size,
            reward_scale=reward_scale,
            windows=windows,
            depth_levels=depth_levels,
            discretizer=discretizer,
            opposes={n_seats - 1: 0} if trader_seat else None,
            takeover=(0, adversary_p) if adversary is not None and not trader_seat else None,
            **market_kwargs,
        )
        self.action_space = self.core.action_space
        self.observation_space = self.core.observation_spaces[0]
        self.render_mode = render_mode
        self._observations: list = []

    @property
    def market(self):
        """The underlying `envs.market.Market`."""
        return self.core.market

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        session_seed = int(self.np_random.integers(2**63 - 1))
        self._observations = self.core.reset(session_seed)
        return self._observations[0], self.core.info(0)

    def step(self, action: int) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self._observations:
            raise RuntimeError("call reset() before step()")
        if not self.action_space.contains(action):
            raise ValueError(f"action {action!r} is not in {self.action_space}")
        observations = self._observations
        actions = [int(action)] + [
            act_with(policy, observations[seat + 1]) for seat, policy in enumerate(self.opponents)
        ]
        adversary_action = None
        if self.adversary is not None:
            if self.adversary_mode == "trader":
                actions.append(act_with(self.adversary, observations[-1]))
            else:
                adversary_action = act_with(self.adversary, observations[0])
        self._observations, rewards, done = self.core.step(actions, adversary_action)
        return self._observations[0], float(rewards[0]), done, False, self.core.info(0)

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        market = self.market
        bids, asks = market.book.depth(5)
        info = self.core.info(0)
        rows = [f"step {market.step_index}/{market.n_steps}  mid {market.last_mid:.1f} ticks"]
        rows += [f"  ask {p:>8} x {q}" for p, q in reversed(asks)]
        rows += [f"  bid {p:>8} x {q}" for p, q in bids]
        rows.append(f"inventory {info['inventory']} shares, value ${info['value']:.2f}")
        return "\n".join(rows)


def make_replay_env(tape: Tape | str | Path | None = None, **kwargs: Any) -> TradingEnv:
    """`TradingEnv` replaying ``tape`` (default: a synthetic session recorded with seed 0)."""
    return TradingEnv(tape=tape if tape is not None else default_tape(), **kwargs)
