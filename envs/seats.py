"""`SeatedMarket`: a market with a policy, or an outside caller, in every seat.

It is the one episode driver of the project: the Gymnasium env (the caller holds seat 0,
policies the others), the PettingZoo env (the caller holds every seat) and the experiment
engine (policies everywhere, some of them learning) all step a market through it. Every
policy reads the observation kind it declares (its ``observation`` attribute, "features" or
"tabular"), adversaries included.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tradearena.envs.errors import UserError, not_one_of
from tradearena.envs.simulator.actions import make_actions
from tradearena.envs.simulator.features import RETURN_CAP, SPREAD_CAP, feature_names, features
from tradearena.envs.simulator.observation import observe
from tradearena.envs.simulator.traders import ZeroIntelligence
from tradearena.envs.spec import OBSERVATIONS, MarketSpec, SpecError

__all__ = [
    "ActionError",
    "Policy",
    "SeatedMarket",
    "checked_actions",
    "in_space",
    "integer_actions",
    "observation_kind",
    "seat_rewards",
]

SIGNAL_KEY = 2**32 - 1
"""Spawn-key entry of the seats' signal stream under a session's seed."""

Policy = Callable[[Any], int] | Any
"""What may sit in a seat: an object with ``act(obs, explore)`` (every `agents.Agent`; a
learner also has ``update(obs, action, reward, next_obs, terminated, truncated)`` and
``end_episode()``) or a plain callable ``obs -> action``."""


def observation_kind(policy: Policy, default: str = "features") -> str:
    """The observation ``policy`` reads: its ``observation`` attribute, else ``default``."""
    return _checked_kind(getattr(policy, "observation", default), policy)


def _checked_kind(kind: str, who: Any) -> str:
    if kind not in OBSERVATIONS:
        raise SpecError("observation", f"{who!r} reads {kind!r}; {not_one_of(kind, OBSERVATIONS)}")
    return kind


class ActionError(UserError):
    """A policy chose an action that is not in its seat's action space."""


def in_space(space: Any, action: Any) -> bool:
    """Whether ``action`` lies in ``space`` (Gymnasium's ``contains``), an integer too large
    for the space's dtype (which ``contains`` fails to cast) outside it."""
    try:
        return bool(space.contains(action))
    except OverflowError:
        return False


def integer_actions(actions: Any, shape: tuple[int, ...], n: int) -> np.ndarray | None:
    """``actions`` (a batch of them, as a batched face is given) as an int64 array when they
    are integers of ``shape``, each in [0, ``n``), else None: floats, even whole ones, are
    refused, as the single environment's ``Discrete`` refuses them (and bools)."""
    given = np.asarray(actions)
    if given.dtype.kind not in "iu" or given.shape != shape:
        return None
    if given.size and not 0 <= given.min() <= given.max() < n:
        return None
    return given.astype(np.int64)


def _refused(policy: Policy, method: str, action: Any, space: Any) -> ActionError:
    """The `ActionError` naming ``policy`` (its class and ``method``, or a plain callable's
    name), the ``action`` it chose and the ``space``."""
    if hasattr(policy, method):
        who = f"{type(policy).__name__}.{method}"
    else:  # a plain callable
        who = getattr(policy, "__qualname__", repr(policy))
    return ActionError(f"{who} returned {action!r}, not in {space}")


def _act(policy: Policy, obs: Any, explore: bool, space: Any) -> int:
    """The action ``policy`` chooses at ``obs``; `ActionError` unless it lies in ``space``
    (a ``Discrete``)."""
    act = getattr(policy, "act", None)
    action = act(obs, explore=explore) if act is not None else policy(obs)
    if type(action) is int or isinstance(action, np.integer):  # the usual case, checked cheaply
        if 0 <= action < space.n:
            return int(action)
    elif in_space(space, action):
        return int(action)
    raise _refused(policy, "act", action, space)


def checked_actions(policy: Policy, actions: Any, space: Any) -> np.ndarray:
    """``actions`` (what ``policy.act_batch`` returned, one per session) as an integer array;
    `ActionError` naming the first that is not in ``space`` (a ``Discrete``)."""
    actions = np.asarray(actions)
    if actions.dtype.kind in "iu" and actions.ndim == 1:
        values = actions.tolist()  # Python's min and max beat numpy's on a few sessions
        if not values or (min(values) >= 0 and max(values) < space.n):
            return actions
    for action in actions.ravel().tolist():
        if not in_space(space, action):
            raise _refused(policy, "act_batch", action, space)
    return actions.astype(np.int64)


def seat_rewards(
    spec: MarketSpec,
    change: np.ndarray,
    mid_before: float | np.ndarray,
    mid_after: float | np.ndarray,
    tick_size: float,
    inventory: Callable[[], np.ndarray],
    opposes: dict[int, int],
) -> np.ndarray:
    """The seats' rewards from their change of value over a step (dollars, shape (..., seats),
    changed in place): less, with a parent order, its change of value (mids in ticks, shape
    (...) or scalars; ``tick_size`` dollars), less the inventory penalty on the seats'
    inventories (shares, like ``change``; ``inventory()`` asked only then), times the reward
    scale; an opposing seat gets minus its protagonist's."""
    rewards = change
    if spec.parent_order:  # against holding the parent order from the open
        moved = np.subtract(mid_after, mid_before)
        rewards -= spec.parent_order * np.expand_dims(moved, -1) * tick_size
    if spec.inventory_penalty:
        rewards -= spec.inventory_penalty * inventory().astype(float) ** 2
    if spec.reward_scale != 1.0:  # x * 1.0 is x: skip a ufunc call on every step
        rewards *= spec.reward_scale
    for seat, protagonist in opposes.items():
        rewards[..., seat] = -rewards[..., protagonist]
    return rewards


class SeatedMarket:
    """The market of ``spec`` with one entry of ``seats`` per seat.

    A seat holds a `Policy`, which the driver asks for its action, or an observation kind
    ("features" or "tabular"): an outside seat, whose action the caller passes to `step`.
    ``learners`` are the policy seats that explore and learn when a step or episode is run
    with ``learn=True`` (their ``update`` is called with the action executed, their
    ``end_episode`` at the end); the others act greedily.

    Adversaries: ``opposes`` maps a seat to the seat whose reward it receives negated (an
    adversarial trader, a seat like any other). ``takeover = (seat, p)``: each step, with
    probability p (drawn from the session's generator) that seat executes the action of
    ``adversary``: a `Policy` (asked on that seat's market, in the kind it declares) or an
    observation kind (the caller passes the adversary's action to `step`).

    Rewards are changes of marked-to-market value in dollars, less the spec's inventory
    penalty, times ``spec.reward_scale``.
    ``extra_zi`` adds zero-intelligence traders to the spec's background.
    """

    def __init__(
        self,
        spec: MarketSpec,
        seats: Sequence[Policy | str],
        *,
        learners: Sequence[int] = (),
        opposes: dict[int, int] | None = None,
        takeover: tuple[int, float] | None = None,
        adversary: Policy | str | None = None,
        extra_zi: int = 0,
    ) -> None:
        n_seats = len(seats)
        self.spec = spec
        self.market = spec.market(n_seats, extra_zi=extra_zi)
        self.extra_zi = extra_zi
        self.policies = [None if isinstance(s, str) else s for s in seats]
        self.kinds = [
            _checked_kind(s, f"seat {i}") if isinstance(s, str) else observation_kind(s)
            for i, s in enumerate(seats)
        ]
        self.learners = tuple(learners)
        if any(self.policies[i] is None for i in self.learners):
            raise ValueError(f"learner seats {self.learners} must hold policies")
        self.opposes = dict(opposes or {})
        if takeover is not None:
            if not 0.0 <= takeover[1] <= 1.0:
                raise ValueError(f"takeover probability must be in [0, 1], got {takeover[1]}")
            if adversary is None:
                raise ValueError("a takeover needs an adversary (a policy or an observation kind)")
        self.takeover = takeover
        self.adversary = None if isinstance(adversary, str) else adversary
        if takeover is not None:
            default = self.kinds[takeover[0]]
            self.adversary_kind = adversary if isinstance(adversary, str) else None
            self.adversary_kind = observation_kind(self.adversary, self.adversary_kind or default)
        self.actions = make_actions(spec.action_set, spec.order_size, spec.parent_order)
        self.action_space = spec.action_space
        self.observation_spaces = [spec.observation_space(kind) for kind in self.kinds]
        self.discretizer = spec.state_discretizer()
        self.observations: list = []
        self.taken_over = False
        self.informant = None  # the zero-intelligence population whose fundamental signals
        if spec.signal:
            self.informant = next(
                (t for t in self.market.traders if isinstance(t, ZeroIntelligence)), None
            )
            if self.informant is None:
                raise SpecError(
                    "task",
                    f"{spec.task!r} signals the fundamental of zero-intelligence traders; the "
                    "background has none (use population 'light' or 'rmsc04', or add some)",
                )
        self.signals: list[float | None] = [None] * self.n_seats
        self.windows = np.asarray(spec.windows, dtype=np.int64)  # steps, for `observe`
        n_features = len(feature_names(spec.windows, spec.signal))
        self.seat_features = np.zeros((1, n_seats, n_features), dtype=np.float32)

    @property
    def n_seats(self) -> int:
        return self.market.n_seats

    def observe(self, seat: int, kind: str | None = None) -> np.ndarray | int:
        """What ``seat`` observes now, in its own kind or in ``kind``."""
        spec = self.spec
        x = features(
            self.market,
            seat,
            windows=spec.windows,
            depth_levels=spec.depth_levels,
            signal=self.signals[seat],
        )
        return x if (kind or self.kinds[seat]) == "features" else self.discretizer(x)

    def _observe_all(self) -> list:
        """Every seat's observation now (drawing the seats' signals first, when signalled),
        all seats' features in one compiled call (`observe` gives each the same)."""
        if self.informant is not None:
            self.signals = [self._signal() for _ in range(self.n_seats)]
        spec, x = self.spec, self.seat_features
        observe(
            [self.market], self.n_seats, self.windows, spec.depth_levels, SPREAD_CAP, RETURN_CAP, x
        )
        if spec.signal:
            x[0, :, -1] = np.clip(self.signals, -RETURN_CAP, RETURN_CAP)
        return [
            x[0, seat].copy() if kind == "features" else self.discretizer(x[0, seat])
            for seat, kind in enumerate(self.kinds)
        ]

    def _signal(self) -> float:
        """One noisy look at the fundamental, forecast to the close, over the mid (bp)."""
        market, informant = self.market, self.informant
        seen = informant.value_at(market.t) + self.signal_rng.normal(0.0, self.spec.signal_noise)
        forecast = informant.forecast_close(seen, market.t, market.close_time)
        return 1e4 * (forecast - market.last_mid) / market.last_mid

    def adversary_observation(self) -> np.ndarray | int:
        """What the take-over adversary observes now: the taken-over seat's market."""
        return self.observe(self.takeover[0], self.adversary_kind)

    # ---------------------------------------------------------------------------- driving
    def reset(self, seed: int | np.random.SeedSequence | None) -> list:
        """Start a session; the observation of every seat."""
        seq = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
        self.market.reset(seq)
        # the signals' own stream, beside the market's (which spawns the first children)
        self.signal_rng = np.random.default_rng(
            np.random.SeedSequence(seq.entropy, spawn_key=(*seq.spawn_key, SIGNAL_KEY))
        )
        self.taken_over = False
        self.observations = self._observe_all()
        return self.observations

    def step(
        self,
        actions: Sequence[int] = (),
        adversary_action: int | None = None,
        *,
        learn: bool = False,
    ) -> tuple[list, np.ndarray, bool]:
        """One decision: ``actions`` of the outside seats (in seat order) and, for an outside
        take-over adversary, ``adversary_action``; the policies act on their own. Returns
        (observations, rewards (n_seats,), session over). ``taken_over`` says whether the
        adversary's action was executed."""
        if not self.observations:
            raise RuntimeError("call reset() before step()")
        obs = self.observations
        given = iter(actions)
        executed = [
            int(next(given))
            if policy is None
            else _act(policy, o, learn and i in self.learners, self.action_space)
            for i, (policy, o) in enumerate(zip(self.policies, obs))
        ]
        if self.adversary is not None:
            adversary = self.adversary_observation()
            adversary_action = _act(self.adversary, adversary, False, self.action_space)
        self.taken_over = False
        if self.takeover is not None and adversary_action is not None:
            seat, p = self.takeover
            if p > 0 and self.market.rng.random() < p:
                executed[seat] = int(adversary_action)
                self.taken_over = True
        market = self.market
        orders = [self.actions.orders(a, market, seat) for seat, a in enumerate(executed)]
        mid = market.last_mid
        change = market.step(orders)
        rewards = seat_rewards(
            self.spec,
            change,
            mid,
            market.last_mid,
            market.tick_size,
            lambda: market.book.positions(0, self.n_seats),
            self.opposes,
        )
        done = market.done
        self.observations = self._observe_all()
        if learn:
            for i in self.learners:
                self.policies[i].update(
                    obs[i], executed[i], rewards[i], self.observations[i], done, False
                )
        return self.observations, rewards, done

    def play(
        self, seed: int | np.random.SeedSequence | None, *, learn: bool = False
    ) -> list[dict[str, float]]:
        """One whole episode with every seat held by a policy; learners learn when ``learn``.
        Returns per seat: reward (sum, reward units), pnl (the `score`, dollars), trades,
        inventory (at the end, shares), exposure (|inventory| after each step, averaged over
        the steps, shares), steps, arrival (the opening mid, dollars per share)."""
        if None in self.policies:
            raise ValueError("play needs a policy in every seat; outside seats use step()")
        self.reset(seed)
        totals = np.zeros(self.n_seats)
        held = np.zeros(self.n_seats)
        steps, done = 0, False
        while not done:
            _, rewards, done = self.step(learn=learn)
            totals += rewards
            held += np.abs(self.market.book.positions(0, self.n_seats))
            steps += 1
        if learn:
            for i in self.learners:
                self.policies[i].end_episode()
        return self.results(totals, held / steps, steps)

    def results(
        self, totals: np.ndarray, exposure: np.ndarray, steps: int
    ) -> list[dict[str, float]]:
        """What `play` returns for the episode just played, from each seat's summed rewards
        and time-averaged |inventory| (shape (n_seats,))."""
        out = []
        arrival = float(self.market.mids()[0] * self.market.tick_size)
        for seat in range(self.n_seats):
            account = self.market.account(seat)
            out.append(
                {
                    "reward": float(totals[seat]),
                    "pnl": self.score(seat),
                    "trades": account.trades,
                    "inventory": account.inventory,
                    "exposure": float(exposure[seat]),
                    "steps": steps,
                    "arrival": arrival,
                }
            )
        return out

    def score(self, seat: int) -> float:
        """The seat's score so far, dollars: its marked-to-market value; with a parent order,
        less the parent order's change of value since the open (minus the implementation
        shortfall against the opening mid, once the parent order is done)."""
        return self._scored(self.market.value(seat))

    def _scored(self, value: float) -> float:
        """A seat's score from its marked-to-market ``value`` (dollars; see `score`)."""
        market = self.market
        if self.spec.parent_order:
            value -= (
                self.spec.parent_order * (market.last_mid - market.mids()[0]) * market.tick_size
            )
        return value

    def info(self, seat: int) -> dict:
        """What a seat's account holds: inventory (shares), cash, value and score (dollars,
        see `score`), trades, the mid (ticks) and whether it was taken over."""
        market = self.market
        account = market.account(seat)
        value = account.value(market.last_mid, market.tick_size)
        return {
            "inventory": account.inventory,
            "cash": account.cash * market.tick_size - account.fees,
            "value": value,
            "score": self._scored(value),
            "trades": account.trades,
            "mid": market.last_mid,
            "step": market.step_index,
            "taken_over": self.taken_over
            and self.takeover is not None
            and self.takeover[0] == seat,
        }
