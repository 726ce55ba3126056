"""The market as its seats see it: observations, discrete actions, rewards, adversaries.

`SeatedMarket` is the one piece shared by the Gymnasium environment (one learner seat, the
others played by given policies) and the PettingZoo one (every seat a learner).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from gymnasium import spaces

from envs.actions import make_actions
from envs.features import Discretizer, feature_space, features
from envs.market import Market
from envs.tapes import Tape, load_lobster, synthetic_tape
from envs.traders import MarketReplay, Trader, ZeroIntelligence, rmsc04

__all__ = ["SeatedMarket", "make_market", "seated_market"]


def make_market(
    n_seats: int,
    *,
    traders: Sequence[Trader] | None = None,
    tape: Tape | str | Path | None = None,
    extra_zi: int = 0,
    **market_kwargs,
) -> Market:
    """A `Market` with ``n_seats`` seats and its background.

    With a ``tape`` (a `Tape`, or the path of a LOBSTER message file whose orderbook file sits
    beside it) the background is a `MarketReplay` of it, plus ``traders`` if given; the session
    opens at the tape's first message and lasts as many whole steps as the tape covers, or,
    with a shorter ``n_steps``, each session is a window of that day drawn at reset. Without
    one the background is ``traders`` (default: the rmsc04-sized population of
    `envs.traders.rmsc04`). ``extra_zi`` adds that many zero-intelligence traders (the ZI
    perturbation). Other keywords go to `Market`.
    """
    background = list(traders) if traders is not None else ([] if tape is not None else rmsc04())
    if tape is not None:
        tape = load_tape(tape)
        background.insert(0, MarketReplay(tape))
        first, last = float(tape.messages["time"][0]), float(tape.messages["time"][-1])
        step = market_kwargs.get("step_seconds", 60.0)
        day = int((last - math.floor(first)) // step) + 1  # steps that cover every message
        market_kwargs.setdefault("open_time", math.floor(first))
        market_kwargs["n_steps"] = min(market_kwargs.get("n_steps", day), day)
        if market_kwargs["n_steps"] < day:
            market_kwargs.setdefault("day_steps", day)  # episodes are windows of the day
        market_kwargs.setdefault("warmup_seconds", 0.0)
        market_kwargs.setdefault("tick_size", tape.tick_size)
        bids, asks = tape.initial_book()
        if bids and asks:
            market_kwargs.setdefault("initial_price", (bids[0][0] + asks[0][0]) // 2)
    if extra_zi:
        r_bar = market_kwargs.get("initial_price", 10_000)
        background.append(ZeroIntelligence(extra_zi, r_bar=r_bar))
    return Market(background, n_seats=n_seats, **market_kwargs)


def seated_market(
    n_seats: int,
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
    opposes: dict[int, int] | None = None,
    takeover: tuple[int, float] | None = None,
    **market_kwargs,
) -> SeatedMarket:
    """`make_market` (background, tape, ZI perturbation, `Market` keywords) seen through a
    `SeatedMarket` (observations, actions, rewards, adversaries): what both environments
    are built on."""
    market = make_market(n_seats, traders=traders, tape=tape, extra_zi=extra_zi, **market_kwargs)
    return SeatedMarket(
        market,
        observation=observation,
        actions=actions,
        order_size=order_size,
        reward_scale=reward_scale,
        windows=windows,
        depth_levels=depth_levels,
        discretizer=discretizer,
        opposes=opposes,
        takeover=takeover,
    )


def load_tape(tape: Tape | str | Path) -> Tape:
    """A `Tape` as is, or loaded from a LOBSTER message file (its orderbook file beside it,
    named as LOBSTER names it, is used when present)."""
    if isinstance(tape, Tape):
        return tape
    path = Path(tape)
    book = path.with_name(path.name.replace("_message_", "_orderbook_"))
    return load_lobster(path, book if book != path and book.exists() else None)


class SeatedMarket:
    """Observations, actions and rewards for the seats of a `Market`.

    observation: "features" (a Box of market features, see `envs.features`) or "tabular"
    (one Discrete state from ``discretizer``), for every seat or as a sequence per seat.
    actions: "trade" or "quote" (see `envs.actions`) with orders of ``order_size`` shares.
    Rewards are changes of marked-to-market value in dollars times ``reward_scale``.
    ``opposes`` maps a seat to the seat whose reward it receives negated (an adversarial
    trader). ``takeover`` = (seat, p): with probability p per step that seat's executed
    action is the adversary's (when one is given to `step`).
    """

    def __init__(
        self,
        market: Market,
        *,
        observation: str | Sequence[str] = "features",
        actions: str = "trade",
        order_size: int = 100,
        reward_scale: float = 1.0,
        windows: Sequence[int] = (1, 5, 15),
        depth_levels: int = 5,
        discretizer: Discretizer | None = None,
        opposes: dict[int, int] | None = None,
        takeover: tuple[int, float] | None = None,
    ) -> None:
        kinds = [observation] * market.n_seats if isinstance(observation, str) else observation
        if len(kinds) != market.n_seats or any(k not in ("features", "tabular") for k in kinds):
            raise ValueError(
                "observation must be 'features' or 'tabular', or one of them per seat "
                f"({market.n_seats} seats), got {observation!r}"
            )
        if not math.isfinite(reward_scale) or reward_scale <= 0:
            raise ValueError(f"reward_scale must be a positive number, got {reward_scale}")
        if takeover is not None and not 0.0 <= takeover[1] <= 1.0:
            raise ValueError(f"takeover probability must be in [0, 1], got {takeover[1]}")
        self.market = market
        self.actions = make_actions(actions, order_size)
        self.observations, self.reward_scale = list(kinds), reward_scale
        self.windows, self.depth_levels = tuple(windows), depth_levels
        self.discretizer = discretizer or Discretizer.default(self.windows)
        self.opposes = dict(opposes or {})
        self.takeover = takeover
        self.action_space = spaces.Discrete(self.actions.n)
        box = feature_space(self.windows, depth_levels)
        states = spaces.Discrete(self.discretizer.n_states)
        self.observation_spaces = [box if k == "features" else states for k in kinds]

    @property
    def n_seats(self) -> int:
        return self.market.n_seats

    def reset(self, seed: int | np.random.SeedSequence | None) -> list:
        """Start a session; the observation of every seat."""
        self.market.reset(seed)
        self.taken_over = False
        return [self.observe(seat) for seat in range(self.n_seats)]

    def observe(self, seat: int, kind: str | None = None) -> np.ndarray | int:
        """What ``seat`` observes now, as its own kind of observation or as ``kind``."""
        x = features(self.market, seat, windows=self.windows, depth_levels=self.depth_levels)
        return x if (kind or self.observations[seat]) == "features" else self.discretizer(x)

    def step(
        self, actions: Sequence[int], adversary_action: int | None = None
    ) -> tuple[list, np.ndarray, bool]:
        """Execute one action per seat; (observations, rewards (n_seats,), session over).

        With a takeover and an ``adversary_action``, the taken-over seat executes it with
        the takeover probability (drawn from the session's generator); ``taken_over`` says
        whether it did.
        """
        actions = list(actions)
        self.taken_over = False
        if self.takeover is not None and adversary_action is not None:
            seat, p = self.takeover
            if p > 0 and self.market.rng.random() < p:
                actions[seat] = adversary_action
                self.taken_over = True
        market = self.market
        orders = [self.actions.orders(int(a), market, seat) for seat, a in enumerate(actions)]
        rewards = market.step(orders) * self.reward_scale
        for seat, protagonist in self.opposes.items():
            rewards[seat] = -rewards[protagonist]
        observations = [self.observe(seat) for seat in range(self.n_seats)]
        return observations, rewards, market.done

    def info(self, seat: int) -> dict:
        """What a seat's account holds: inventory (shares), cash and value (dollars), pnl
        (dollars since the open), trades, the mid (ticks) and whether it was taken over."""
        market = self.market
        account = market.account(seat)
        return {
            "inventory": account.inventory,
            "cash": account.cash * market.tick_size - account.fees,
            "value": market.value(seat),
            "trades": account.trades,
            "mid": market.last_mid,
            "step": market.step_index,
            "taken_over": self.taken_over
            and self.takeover is not None
            and self.takeover[0] == seat,
        }


def default_tape() -> Tape:
    """The tape `tradearena/ReplayMarket-v0` replays when given none: a synthetic session
    recorded with seed 0 (cached for the process)."""
    global _DEFAULT_TAPE
    if _DEFAULT_TAPE is None:
        _DEFAULT_TAPE = synthetic_tape(seed=0)
    return _DEFAULT_TAPE


_DEFAULT_TAPE: Tape | None = None
