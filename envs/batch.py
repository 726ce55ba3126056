"""Many sessions of one market stepped together: `BatchedMarket`, and `Restarting`, which
restarts them as Gymnasium's autoreset modes say.

`BatchedMarket` holds N independent sessions of a `MarketSpec` (each its own seed, background
population or replay window, and seats) and advances all of them with one call into compiled
code per decision step (`envs.simulator.flow.advance`), computing every seat's features with another
(`envs.simulator.observation.observe`); it returns arrays. Its faces are in `envs.vector`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from gymnasium.vector import AutoresetMode

from tradearena.envs.seats import Policy, SeatedMarket, checked_actions, seat_rewards
from tradearena.envs.simulator.features import RETURN_CAP, SPREAD_CAP
from tradearena.envs.simulator.flow import advance
from tradearena.envs.simulator.observation import observe
from tradearena.envs.spec import MarketSpec

__all__ = ["BatchedMarket", "Restarting", "session_seeds"]


def session_seeds(seed: int | Sequence[int | None] | None, n: int) -> list[int | None]:
    """One seed per session of ``n``: seed + i for session i, the given sequence, or None."""
    if seed is None or isinstance(seed, int | np.integer):
        return [None if seed is None else int(seed) + i for i in range(n)]
    seeds = list(seed)
    if len(seeds) != n:
        raise ValueError(f"{len(seeds)} seeds for {n} sessions")
    return seeds


class BatchedMarket:
    """``n_sessions`` sessions of ``spec`` with the same ``seats``, stepped together.

    ``seats``, ``learners``, ``opposes`` and ``extra_zi`` are as `SeatedMarket` takes them: a
    seat holds a `Policy` (asked for its actions with ``act_batch``, a learner updated with
    ``update_batch``, see `agents.Agent`) or an observation kind (an outside seat, whose
    actions the caller passes to `step`). `reset` starts the sessions given (all by default);
    `step` advances every session that is not done and returns (observations, rewards
    (N, seats), done (N,)); observations are one array per seat: features, float32 (N, F),
    or tabular states, int64 (N,). `play` runs whole episodes. Session i plays as a
    `SeatedMarket` of the same seats reset with the same seed, except that a learner meets
    the sessions' transitions in session order, step by step.
    """

    def __init__(
        self,
        spec: MarketSpec,
        n_sessions: int,
        seats: Sequence[Policy | str] = ("features",),
        *,
        learners: Sequence[int] = (),
        opposes: dict[int, int] | None = None,
        extra_zi: int = 0,
    ) -> None:
        if n_sessions < 1:
            raise ValueError(f"n_sessions must be >= 1, got {n_sessions}")
        self.spec, self.n_sessions = spec, n_sessions
        self.sessions = [
            SeatedMarket(spec, seats, learners=learners, opposes=opposes, extra_zi=extra_zi)
            for _ in range(n_sessions)
        ]
        self.markets = [s.market for s in self.sessions]
        first = self.sessions[0]
        self.n_seats, self.policies, self.kinds = first.n_seats, first.policies, first.kinds
        self.learners, self.opposes = first.learners, first.opposes
        self.outside = [seat for seat, policy in enumerate(self.policies) if policy is None]
        self.action_space = first.action_space
        self.fixed_orders = first.actions.fixed_orders
        self.observation_spaces = first.observation_spaces
        self.windows = first.windows
        self._features = np.zeros((n_sessions, *first.seat_features.shape[1:]), dtype=np.float32)
        self.done = np.ones(n_sessions, dtype=bool)
        self.started = np.zeros(n_sessions, dtype=bool)
        self.inventory = np.zeros((n_sessions, self.n_seats), dtype=np.int64)  # after a step
        self.observations: list[np.ndarray] = []

    @classmethod
    def like(cls, seated: SeatedMarket, n_sessions: int) -> BatchedMarket | None:
        """``n_sessions`` sessions seated as ``seated`` is (its spec, seats, learners,
        opposing seats and extra zero-intelligence traders); None when ``seated`` has a
        take-over adversary, which a batch does not seat."""
        if seated.takeover is not None or seated.adversary is not None:
            return None
        seats = [p if p is not None else k for p, k in zip(seated.policies, seated.kinds)]
        return cls(
            seated.spec,
            n_sessions,
            seats,
            learners=seated.learners,
            opposes=seated.opposes,
            extra_zi=seated.extra_zi,
        )

    def reset(
        self, seeds: Sequence[int | np.random.SeedSequence | None], which: Sequence[int] = ()
    ) -> list[np.ndarray]:
        """Start sessions ``which`` (all when empty) from ``seeds`` (one each); every seat's
        observations (as `step` returns them)."""
        which = list(which) or range(self.n_sessions)
        for i, seed in zip(which, seeds, strict=True):
            self.sessions[i].reset(seed)
            self.done[i], self.started[i] = False, True
        self.observations = self.observe()
        return self.observations

    def step(
        self, actions: np.ndarray | None = None, *, learn: bool = False
    ) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
        """One decision in every session that is not done: ``actions`` (N, outside seats) of
        the outside seats (rows of done sessions are ignored); the policies act on their own,
        learners exploring and learning when ``learn``. Rewards of done sessions are 0."""
        live = np.flatnonzero(~self.done)
        rows = slice(None) if len(live) == self.n_sessions else live  # a view when all are
        obs = self.observations
        executed = np.zeros((self.n_sessions, self.n_seats), dtype=np.int64)
        if self.outside:
            executed[:, self.outside] = np.asarray(actions).reshape(self.n_sessions, -1)
        for seat, policy in enumerate(self.policies):
            if policy is not None:
                explore = learn and seat in self.learners
                chosen = policy.act_batch(obs[seat][rows], explore=explore)
                executed[rows, seat] = checked_actions(policy, chosen, self.action_space)
        rewards = np.zeros((self.n_sessions, self.n_seats))
        rewards[rows] = self._advance(live, rows, executed[rows])
        if self.spec.signal:  # the stepped sessions' seats look at the fundamental again
            for i in live:
                session = self.sessions[i]
                session.signals = [session._signal() for _ in range(self.n_seats)]
        self.observations = self.observe()
        if learn:
            for seat in self.learners:
                self.policies[seat].update_batch(
                    obs[seat][rows],
                    executed[rows, seat],
                    rewards[rows, seat],
                    self.observations[seat][rows],
                    self.done[rows],
                    np.zeros(len(live), dtype=bool),
                )
        return self.observations, rewards, self.done.copy()

    def _advance(
        self, live: np.ndarray, rows: slice | np.ndarray, actions: np.ndarray
    ) -> np.ndarray:
        """Step sessions ``live`` (their rows of the batch's arrays: ``rows``) with each seat's
        action, int64 (len(live), seats); their rewards (len(live), seats). Their inventories
        after the step go to ``inventory``, whether they ended to ``done``."""
        markets = self.markets[rows] if isinstance(rows, slice) else [self.markets[i] for i in live]
        if self.fixed_orders is not None:
            orders = [list(map(self.fixed_orders.__getitem__, row)) for row in actions.tolist()]
        else:  # the sessions' action sets are alike: the first decodes for all
            decode = self.sessions[0].actions.orders_batch
            by_seat = [decode(actions[:, seat], markets, seat) for seat in range(self.n_seats)]
            orders = [list(row) for row in zip(*by_seat)]
        change = np.zeros((len(live), self.n_seats))
        mids = np.zeros((len(live), 2))
        inventory = np.zeros((len(live), self.n_seats), dtype=np.int64)
        ended = np.zeros(len(live), dtype=np.uint8)
        advance(markets, orders, change, mids, inventory, ended)
        self.inventory[rows] = inventory
        self.done[rows] = ended.view(bool)
        tick = self.markets[0].tick_size
        return seat_rewards(
            self.spec, change, mids[:, 0], mids[:, 1], tick, lambda: inventory, self.opposes
        )

    def observe(self) -> list[np.ndarray]:
        """Every seat's observations now, in the kind it reads: (N, F) or (N,) per seat
        (zeros in sessions never started)."""
        spec = self.spec
        x = self._features
        if self.started.all():
            markets, out = self.markets, x
        else:
            markets = [m for m, started in zip(self.markets, self.started) if started]
            out = np.zeros((len(markets), *x.shape[1:]), dtype=np.float32)
        observe(markets, self.n_seats, self.windows, spec.depth_levels, SPREAD_CAP, RETURN_CAP, out)
        if out is not x:
            x[:] = 0.0
            x[self.started] = out
        if spec.signal:
            for i in np.flatnonzero(self.started):
                x[i, :, -1] = np.clip(self.sessions[i].signals, -RETURN_CAP, RETURN_CAP)
        discretizer = self.sessions[0].discretizer
        return [
            discretizer.states(x[:, seat]) if kind == "tabular" else x[:, seat].copy()
            for seat, kind in enumerate(self.kinds)
        ]

    def play(
        self, seeds: Sequence[int | np.random.SeedSequence | None], *, learn: bool = False
    ) -> list[list[dict[str, float]]]:
        """One whole episode in each of the first len(seeds) sessions, every seat held by a
        policy; learners learn when ``learn``. Returns per session what `SeatedMarket.play`
        returns for it."""
        if None in self.policies:
            raise ValueError("play needs a policy in every seat; outside seats use step()")
        which = range(len(seeds))
        self.done[:] = True
        self.reset(seeds, which)
        totals = np.zeros((self.n_sessions, self.n_seats))
        held = np.zeros((self.n_sessions, self.n_seats))
        steps = 0
        while not self.done.all():
            live = ~self.done
            _, rewards, _ = self.step(learn=learn)
            totals += rewards
            held[live] += np.abs(self.inventory[live])
            steps += 1
        if learn:
            for seat in self.learners:
                for _ in which:
                    self.policies[seat].end_episode()
        return [self.sessions[i].results(totals[i], held[i] / steps, steps) for i in which]


class Restarting:
    """A `BatchedMarket`'s sessions, each with its own generator of session seeds, restarted
    as Gymnasium's autoreset modes say. Session i reset with seed s + i draws its sessions'
    seeds as a single environment reset with seed s + i does, so they play the same sessions.

    NEXT_STEP: a session that ends is restarted by the next `step`, which ignores its actions
    and gives its first observations with rewards 0. SAME_STEP: it is restarted by the step
    that ends it, and that step also gives the observations it ended on.
    """

    def __init__(self, batch: BatchedMarket, mode: AutoresetMode) -> None:
        if mode == AutoresetMode.DISABLED:
            raise ValueError("autoreset_mode must be NEXT_STEP or SAME_STEP")
        self.batch, self.mode = batch, mode
        n = batch.n_sessions
        self.generators = [np.random.default_rng() for _ in range(n)]
        self.pending = np.zeros(n, dtype=bool)

    @classmethod
    def of(
        cls,
        spec: MarketSpec,
        n_sessions: int,
        kinds: Sequence[str],
        mode: AutoresetMode | str,
        opposes: dict[int, int] | None = None,
    ) -> Restarting:
        """``n_sessions`` sessions of ``spec`` with outside seats of ``kinds`` (and
        ``opposes``), restarted as ``mode`` says."""
        return cls(BatchedMarket(spec, n_sessions, kinds, opposes=opposes), AutoresetMode(mode))

    def reset(self, seed: int | Sequence[int | None] | None) -> list[np.ndarray]:
        """Restart every session, reseeding from ``seed`` (session i: seed + i; or one seed
        per session; None keeps the generators); every seat's observations."""
        n = self.batch.n_sessions
        for i, s in enumerate(session_seeds(seed, n)):
            if s is not None:
                self.generators[i] = np.random.default_rng(s)
        self.pending[:] = False
        return self._start(range(n))

    def step(
        self, actions: np.ndarray
    ) -> tuple[list[np.ndarray], np.ndarray, np.ndarray, list[np.ndarray] | None]:
        """One step of every session, ``actions`` (N, seats) -> (observations per seat,
        rewards (N, seats), terminated (N,), with SAME_STEP and a session ending: the
        observations the step ended on, else None)."""
        batch = self.batch
        restarting = np.flatnonzero(self.pending)
        batch.done[restarting] = True  # these start again instead of stepping
        obs, rewards, done = batch.step(actions)
        terminated = done.copy()
        if len(restarting):
            obs = self._start(restarting)
            rewards[restarting] = 0.0
            terminated[restarting] = False
        final = None
        if self.mode == AutoresetMode.SAME_STEP and terminated.any():
            final = [o.copy() for o in obs]
            obs = self._start(np.flatnonzero(terminated))
        else:
            self.pending = terminated
        return obs, rewards, terminated, final

    def _start(self, which: Sequence[int]) -> list[np.ndarray]:
        """Reset sessions ``which`` from their generators; every seat's observations."""
        seeds = [int(self.generators[i].integers(2**63 - 1)) for i in which]
        return self.batch.reset(seeds, which)

    def close(self) -> None:
        """Nothing to stop: the sessions live in this process (see `envs.workers.Sharded`)."""
