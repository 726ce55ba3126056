"""Many sessions of one market stepped together: `BatchedMarket` and its Gymnasium face.

`BatchedMarket` holds N independent sessions of a `MarketSpec` (each its own seed, background
population or replay window, and seats) and advances all of them with one call into compiled
code per decision step (`envs.flow.advance`), computing every seat's features with another
(`envs.observation.observe`); it returns arrays. `MarketVectorEnv` is the
`gymnasium.vector.VectorEnv` of one seat per session, which ``gymnasium.make_vec`` gives for the
project's single-seat ids. Session i behaves exactly as a `TradingEnv` seeded with seed + i.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from envs.features import RETURN_CAP, SPREAD_CAP
from envs.flow import advance
from envs.observation import observe
from envs.seats import SeatedMarket, seat_rewards
from envs.spec import MarketSpec

__all__ = ["BatchedMarket", "MarketVectorEnv"]


class BatchedMarket:
    """``n_sessions`` sessions of ``spec`` with outside seats of the observation ``kinds``
    (one per seat), stepped together.

    `reset` starts the sessions given (all by default) from their seeds; `step` takes each
    active session's actions, shape (N, seats), and returns (observations, rewards (N, seats),
    done (N,)). Observations are features, float32 (N, seats, F), or tabular states, int64
    (N, seats), when every seat reads "tabular". Sessions that are done stay done until reset.
    """

    def __init__(
        self, spec: MarketSpec, n_sessions: int, kinds: Sequence[str] = ("features",)
    ) -> None:
        if n_sessions < 1:
            raise ValueError(f"n_sessions must be >= 1, got {n_sessions}")
        if len(set(kinds)) > 1:
            raise ValueError(f"the seats of a batch read one observation kind, got {kinds}")
        self.spec, self.n_sessions, self.kinds = spec, n_sessions, tuple(kinds)
        self.sessions = [SeatedMarket(spec, kinds) for _ in range(n_sessions)]
        self.markets = [s.market for s in self.sessions]
        first = self.sessions[0]
        self.n_seats = first.n_seats
        self.action_space = first.action_space
        self.observation_space = first.observation_spaces[0]
        self.tabular = self.kinds[0] == "tabular"
        self.windows = np.asarray(spec.windows, dtype=np.int64)
        n_features = len(spec.windows) + 4 + spec.signal
        self._features = np.zeros((n_sessions, self.n_seats, n_features), dtype=np.float32)
        self.done = np.ones(n_sessions, dtype=bool)

    def reset(
        self, seeds: Sequence[int | np.random.SeedSequence | None], which: Sequence[int] = ()
    ) -> np.ndarray:
        """Start sessions ``which`` (all when empty) from ``seeds`` (one each); every
        session's observation (as `step` returns them)."""
        which = list(which) or range(self.n_sessions)
        for i, seed in zip(which, seeds, strict=True):
            self.sessions[i].reset(seed)
            self.done[i] = False
        return self.observe()

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One decision in every session that is not done; ``actions`` (N, seats) (the rows
        of done sessions are ignored). Rewards of done sessions are 0."""
        actions = np.asarray(actions).reshape(self.n_sessions, self.n_seats).tolist()
        live = np.flatnonzero(~self.done).tolist()
        markets = [self.markets[i] for i in live]
        orders = []
        for i in live:
            session, market = self.sessions[i], self.markets[i]
            orders.append(
                [session.actions.orders(a, market, seat) for seat, a in enumerate(actions[i])]
            )
        mid_before = np.array([m.last_mid for m in markets])
        change = np.zeros((len(live), self.n_seats))
        advance(markets, orders, change)
        mid_after = np.array([m.last_mid for m in markets])
        inventory = np.zeros((len(live), self.n_seats), dtype=np.int64)
        for row, market in zip(inventory, markets):
            row[:] = market.book.positions(0, self.n_seats)
        tick = self.markets[0].tick_size
        rewards = np.zeros((self.n_sessions, self.n_seats))
        rewards[live] = seat_rewards(self.spec, change, mid_before, mid_after, tick, inventory, {})
        self.done[live] = [m.done for m in markets]
        if self.spec.signal:  # the stepped sessions' seats look at the fundamental again
            for i in live:
                session = self.sessions[i]
                session.signals = [session._signal() for _ in range(self.n_seats)]
        return self.observe(), rewards, self.done.copy()

    def observe(self) -> np.ndarray:
        """Every seat's observation now, shape (N, seats, F) (features) or (N, seats)."""
        spec = self.spec
        observe(
            self.markets,
            self.n_seats,
            self.windows,
            spec.depth_levels,
            SPREAD_CAP,
            RETURN_CAP,
            self._features,
        )
        x = self._features
        if spec.signal:
            for i, session in enumerate(self.sessions):
                x[i, :, -1] = np.clip(session.signals, -RETURN_CAP, RETURN_CAP)
        return self.sessions[0].discretizer.states(x) if self.tabular else x.copy()


class MarketVectorEnv(VectorEnv):
    """``num_envs`` sessions of a single-seat market task as one `gymnasium.vector.VectorEnv`.

    Takes what `TradingEnv` takes for the market (``market_spec`` and its fields as keywords)
    and the seat's ``observation`` kind; no opponents or adversaries. Session i with
    ``reset(seed=s)`` plays exactly as ``TradingEnv`` reset with seed s + i. Sessions that end
    are reset by the next `step` (``autoreset_mode`` NEXT_STEP, Gymnasium's default: that
    step ignores their action and returns their first observation with reward 0) or by the
    step that ends them (SAME_STEP: the last observation is in ``infos["final_obs"]``).
    Infos are empty otherwise.
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(
        self,
        num_envs: int = 16,
        market_spec: MarketSpec | None = None,
        *,
        observation: str = "features",
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        **market: Any,
    ) -> None:
        mode = AutoresetMode(autoreset_mode)
        if mode == AutoresetMode.DISABLED:
            raise ValueError("autoreset_mode must be NEXT_STEP or SAME_STEP")
        self.metadata = {"autoreset_mode": mode}
        self.market_spec = MarketSpec.from_keywords("MarketVectorEnv", market_spec, **market)
        self.batch = BatchedMarket(self.market_spec, num_envs, (observation,))
        self.num_envs = num_envs
        self.single_action_space = self.batch.action_space
        self.single_observation_space = self.batch.observation_space
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self._generators = [seeding.np_random()[0] for _ in range(num_envs)]
        self._autoreset = np.zeros(num_envs, dtype=bool)

    def reset(
        self,
        *,
        seed: int | Sequence[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[np.ndarray, dict[str, Any]]:
        if seed is None or isinstance(seed, int):
            seeds = [None if seed is None else seed + i for i in range(self.num_envs)]
        else:
            seeds = list(seed)
            if len(seeds) != self.num_envs:
                raise ValueError(f"{len(seeds)} seeds for {self.num_envs} sessions")
        for i, s in enumerate(seeds):
            if s is not None:
                self._generators[i], _ = seeding.np_random(s)
        obs = self._start(range(self.num_envs))
        self._autoreset[:] = False
        return obs[:, 0], {}

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        actions = np.asarray(actions)
        if not self.action_space.contains(actions.astype(self.action_space.dtype)):
            raise ValueError(f"actions {actions!r} are not in {self.action_space}")
        infos: dict[str, Any] = {}
        restarting = np.flatnonzero(self._autoreset)
        if len(restarting):  # NEXT_STEP: these sessions start again instead of stepping
            self.batch.done[restarting] = True
        obs, rewards, done = self.batch.step(actions.reshape(self.num_envs, 1))
        rewards = rewards[:, 0]
        terminated = done.copy()
        if len(restarting):
            obs = self._start(restarting)
            rewards[restarting] = 0.0
            terminated[restarting] = False
        if self.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP and terminated.any():
            infos = {"final_obs": obs[:, 0].copy(), "_final_obs": terminated.copy()}
            obs = self._start(np.flatnonzero(terminated))
        else:
            self._autoreset = terminated
        return obs[:, 0], rewards, terminated, np.zeros(self.num_envs, dtype=bool), infos

    def _start(self, which: Sequence[int]) -> np.ndarray:
        """Reset sessions ``which`` from their generators; every session's observation."""
        seeds = [int(self._generators[i].integers(2**63 - 1)) for i in which]
        return self.batch.reset(seeds, which)
