"""Tabular ensembles, snapshot averaging, recentering and the adversarial pairing.

Building blocks 2-4 of docs/algorithms.md (`#building-block-2-ensembles` to
`#building-block-4-an-adversary`) as small pure functions and small classes. A TD step reads
one `Transition`. An ensemble of k Q tables is one float64 array of shape (k, S, A);
statistics are over axis 0. The pairing: `AdversarialPair` (who executes the protagonist's
action), `AdversarialLearner` (a protagonist and an adversary in one agent: RA3-Q's tabular
and deep forms) and `AdversarySeat` (the adversary as a learning agent of its own seat).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable
from typing import Any

import numpy as np

from tradearena.agents._kernels import risk_update, risk_update_batch
from tradearena.agents.base import Agent, check_memory, make_rng
from tradearena.agents.schedules import StepSize
from tradearena.agents.utility import Utility

__all__ = [
    "AdversarialLearner",
    "AdversarialPair",
    "AdversarySeat",
    "RiskTables",
    "SnapshotAverage",
    "Step",
    "Transition",
    "TransitionMemory",
    "generative_estimate",
    "mean_var",
    "poisson_masks",
    "risk_values",
]

Model = Callable[[int, int, np.random.Generator], tuple[float, int]]
"""A generative model: (state, action, rng) -> (reward, next_state), reward in agent units."""


Transition = tuple[int, int, float, int, bool, float]
"""One step as a TD rule reads it, ``(s, a, r, s2, terminated, g)``: the state and action
(indices), the reward (agent units), the next state, whether the session terminated there,
and the discount of the next state's value (gamma; 0 where it terminated: a truncated step
still bootstraps). A plain tuple, unpacked where it is read: the tabular learners' update
runs in Python, once per step."""


def poisson_masks(
    rng: np.random.Generator, k: int | tuple[int, int], enabled: bool = True
) -> np.ndarray:
    """Update counts m_i ~ Poisson(1), int64 of shape ``k`` ((k,), or (N, k) for N transitions:
    the same draws as N calls); all ones (no draw) if not ``enabled``."""
    if not enabled:
        return np.ones(k, dtype=np.int64)
    return rng.poisson(1.0, size=k)


def mean_var(tables: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and sample variance (ddof=1) over axis 0 of ``tables`` (k, ...); var = 0 if k = 1."""
    k = tables.shape[0]
    mean = tables.sum(axis=0) / k
    if k == 1:
        return mean, np.zeros_like(mean)
    return mean, ((tables - mean) ** 2).sum(axis=0) / (k - 1)


def risk_values(tables: np.ndarray, lam: float, seeking: bool = False) -> np.ndarray:
    """Qhat = Qbar - lam * var (risk-averse) or Qbar + lam * var (``seeking``), over axis 0.

    The reference of the compiled ``risk_row`` / ``risk_rows`` in agents/_kernels.pyx
    (tests/agents/test_kernels.py, ``test_risk_row_matches_risk_values``) and of the torch
    `agents.deep.risk.risk_values`."""
    mean, var = mean_var(tables)
    return mean + lam * var if seeking else mean - lam * var


class SnapshotAverage:
    """The average of the last ``n_snapshots`` snapshots of a Q table (Averaged-DQN).

    ``snapshots`` has shape (K, S, A); ``average`` is the mean of the ``count`` stored ones.
    """

    def __init__(self, q: np.ndarray, n_snapshots: int) -> None:
        if n_snapshots < 1:
            raise ValueError(f"n_snapshots must be >= 1, got {n_snapshots}")
        check_memory("n_snapshots", n_snapshots, 8 * n_snapshots * q.size, "the snapshots")
        self.snapshots = np.zeros((n_snapshots, *q.shape))
        self.count = 0
        self.position = 0
        self.average = np.zeros(q.shape)
        self.add(q)

    def add(self, q: np.ndarray) -> None:
        """Store a copy of ``q`` (replacing the oldest) and recompute ``average``."""
        self.snapshots[self.position] = q
        self.position = (self.position + 1) % len(self.snapshots)
        self.count = min(self.count + 1, len(self.snapshots))
        self.average = self.snapshots[: self.count].mean(axis=0)


class TransitionMemory:
    """Per (s, a) ring buffer of the last ``size`` transitions (r, s', terminated).

    Arrays of shape (S, A, size); ``count[s, a]`` (<= size) entries are filled.
    """

    def __init__(self, n_states: int, n_actions: int, size: int) -> None:
        if size < 1:
            raise ValueError(f"memory size must be >= 1, got {size}")
        check_memory("n_recenter", size, 8 * n_states * n_actions * size, "the transitions")
        self.size = size
        self.reward = np.zeros((n_states, n_actions, size))
        self.next_state = np.zeros((n_states, n_actions, size), dtype=np.int64)
        self.live = np.zeros((n_states, n_actions, size))
        """1.0 where the transition did not terminate (its next state bootstraps)."""
        self.count = np.zeros((n_states, n_actions), dtype=np.int64)
        self.added = np.zeros((n_states, n_actions), dtype=np.int64)

    def add(self, t: Transition) -> None:
        """Store the reward, next state and whether it terminated of transition ``t`` from
        (s, a), in place of the oldest one from there."""
        s, a, r, s2, terminated, _ = t
        i = self.added[s, a] % self.size
        self.reward[s, a, i] = r
        self.next_state[s, a, i] = s2
        self.live[s, a, i] = 0.0 if terminated else 1.0
        self.added[s, a] += 1
        self.count[s, a] = min(self.count[s, a] + 1, self.size)

    def estimate(self, v_ref: np.ndarray, gamma: float) -> tuple[np.ndarray, np.ndarray]:
        """Ttilde(s, a) = mean over stored transitions of r + gamma * v_ref(s').

        ``v_ref`` is max_a Qref(s, a), shape (S,) or (k, S); returns Ttilde of shape (S, A)
        or (k, S, A) and the boolean ``filled`` (S, A) (Ttilde is 0 where nothing is stored).
        """
        valid = np.arange(self.size) < self.count[..., None]
        targets = self.reward + gamma * self.live * v_ref[..., self.next_state]
        total = np.where(valid, targets, 0.0).sum(axis=-1)
        filled = self.count > 0
        return total / np.maximum(self.count, 1), filled


def generative_estimate(
    model: Model,
    v_ref: np.ndarray,
    n_actions: int,
    gamma: float,
    n_samples: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """Ttilde(s, a) = mean over ``n_samples`` fresh draws of r + gamma * v_ref(s'), (S, A).

    ``v_ref`` has shape (S,); the model is called S * A * n_samples times (Wainwright 2019).
    """
    n_states = v_ref.shape[-1]
    ttilde = np.zeros((n_states, n_actions))
    for s in range(n_states):
        for a in range(n_actions):
            draws = [model(s, a, rng) for _ in range(n_samples)]
            ttilde[s, a] = sum(r + gamma * v_ref[s2] for r, s2 in draws) / n_samples
    return ttilde


class RiskTables:
    """k Q tables (k, S, A) trained by the RAQL rule, each on its own Poisson(1) count.

    For a transition (s, a, r, s') table i is updated ``counts[i]`` times with
    ``d_i = r + gamma * max Q_i(s', .) - Q_i(s, a)`` and
    ``Q_i(s, a) += alpha(N_i(s, a)) * (u(d_i) - x0)`` (building blocks 1 and 2). With a
    recentering ``(v_ref, ttilde, filled)``, where ``filled[s, a]`` the target becomes
    ``[r + gamma max Q_i(s')] - [r + gamma v_ref_i(s')] + ttilde_i(s, a)`` (building block 3,
    utility applied to the recentered TD error: RA2.1-Q). With a ``mix`` ``(b, w_max, w_b)``
    the bootstrap value ``max Q_i(s', .)`` becomes ``w_max * max Q_i(s', .) + w_b * Q_i(s', b)``
    (the probabilistic action-robust target of RA3-Q, building block 4).
    """

    def __init__(
        self, k: int, n_states: int, n_actions: int, utility: Utility, step_size: StepSize
    ) -> None:
        if k < 1:
            raise ValueError(f"k (number of tables) must be >= 1, got {k}")
        check_memory("k", k, 8 * k * n_states * n_actions, "the Q tables")
        self.q = np.zeros((k, n_states, n_actions))
        self.visits = np.zeros((k, n_states, n_actions), dtype=np.int64)
        self.utility = utility
        self.step_size = step_size
        ukind, up, clip = utility.kernel_args()
        skind, sp = step_size.kernel_args()
        # the kernel's rule arguments, converted once (an enum member costs a conversion
        # per call; utility and step size never change)
        self._rule = (int(ukind), up, clip, int(skind), sp)

    def update(
        self,
        t: Transition,
        counts: np.ndarray,
        recenter: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
        mix: tuple[int, float, float] | None = None,
    ) -> None:
        """Apply the rule for transition ``t`` ``counts[i]`` times to table i (compiled:
        `risk_update`)."""
        ukind, up, clip, skind, sp = self._rule
        s, a, r, s2, _, g = t
        if recenter is None and mix is None:
            clipped = risk_update(
                self.q, self.visits, s, a, r, s2, g, counts, ukind, up, clip, skind, sp
            )
        else:
            if recenter is not None and recenter[2][s, a]:
                v_ref, ttilde = recenter[0], recenter[1]
            else:
                v_ref = ttilde = None
            fixed, w_max, w_fixed = (-1, 1.0, 0.0) if mix is None else mix
            clipped = risk_update(
                *(self.q, self.visits, s, a, r, s2, g, counts, ukind, up, clip, skind, sp),
                *(v_ref, ttilde, fixed, w_max, w_fixed),
            )
        if clipped:
            self.utility.clipped += clipped

    def update_batch(
        self,
        s: np.ndarray,
        a: np.ndarray,
        r: np.ndarray,
        s2: np.ndarray,
        g: np.ndarray,
        counts: np.ndarray,
    ) -> None:
        """`update` for N transitions in order, in one compiled call: int64 ``s``, ``a``,
        ``s2``, float ``r`` and ``g`` (each transition's discount, 0 where it terminated), all
        (N,), and ``counts`` (N, k)."""
        clipped = risk_update_batch(self.q, self.visits, s, a, r, s2, g, counts, *self._rule)
        if clipped:
            self.utility.clipped += clipped


class AdversarialPair:
    """Who executes the protagonist seat's action (building block 4).

    ``mode="takeover"``: with probability ``p_adv`` the adversary's action replaces the
    protagonist's (probabilistic action-robust MDP); ``"trader"``: the adversary trades its
    own seat, the protagonist always executes its own action. The coin is drawn from the
    caller's Generator, and not at all when ``p_adv`` is 0.
    """

    def __init__(self, mode: str = "takeover", p_adv: float = 0.2) -> None:
        if mode not in ("takeover", "trader"):
            raise ValueError(f"adversary_mode must be 'takeover' or 'trader', got {mode!r}")
        if not 0.0 <= p_adv <= 1.0:
            raise ValueError(f"p_adv must be in [0, 1], got {p_adv}")
        self.mode = mode
        self.p_adv = p_adv

    def adversary_acts(self, rng: np.random.Generator) -> bool:
        """Whether the adversary executes this step's action on the protagonist's seat."""
        return self.mode == "takeover" and self.p_adv > 0.0 and rng.random() < self.p_adv


Step = tuple[Any, int, float, Any, bool, bool]
"""One transition as `Agent.update` takes it, ``(obs, action, reward, next_obs, terminated,
truncated)`` (reward in the market's units)."""


class AdversarialLearner(Agent):
    """A protagonist and an adversary learning at the same time, in one agent (building
    block 4): the pairing of RA3-Q, the same for its tabular and deep forms.

    `executed` says whose action the protagonist's seat executes (``"takeover"``: in
    training, with probability p_adv, the adversary's); `update` trains the learner that
    acted, the adversary on minus the reward (and the protagonist as well when it learns
    from all steps); `update_adversary` trains the adversary on its own seat's steps
    (``"trader"``: the seat `trader_adversary` gives). A form calls `pair` when it is built
    and writes the two learners' parts: `adversary_action`, `learn_protagonist`,
    `learn_adversary` and `adversary_policy`.
    """

    stochastic = True
    learning = True
    trains_adversary = True

    def pair(self, mode: str | None, p_adv: float, protagonist_learns_all: bool) -> None:
        """The pairing: ``mode`` ``"takeover"``, ``"trader"`` or None (no adversary: the
        protagonist alone), the take-over probability ``p_adv``, and whether the protagonist
        also learns (off-policy) from the steps the adversary executed."""
        self.pairing = None if mode is None else AdversarialPair(mode, p_adv)
        self.protagonist_learns_all = bool(protagonist_learns_all)
        self.adversary_acted = False

    def executed(self, obs: Any, action: int, explore: bool) -> int:
        """The action the protagonist's seat executes at ``obs``, ``action`` being the
        protagonist's: the adversary's (`adversary_action`) when it takes over, which it
        does only in training (the coin from ``self.rng``)."""
        self.adversary_acted = bool(
            explore and self.pairing is not None and self.pairing.adversary_acts(self.rng)
        )
        return self.adversary_action(obs) if self.adversary_acted else action

    def update(
        self,
        obs: Any,
        action: int,
        reward: float,
        next_obs: Any,
        terminated: bool,
        truncated: bool,
    ) -> None:
        """Train the learner that acted on the protagonist's seat: the adversary on
        -``reward`` when it took over, else (or also, with ``protagonist_learns_all``) the
        protagonist."""
        if self.adversary_acted:
            step = (obs, action, -reward, next_obs, terminated, truncated)
            self.learn_adversary(step, takeover=True)
        if not self.adversary_acted or self.protagonist_learns_all:
            self.learn_protagonist((obs, action, reward, next_obs, terminated, truncated))
        self.adversary_acted = False

    def update_adversary(
        self,
        obs: Any,
        action: int,
        reward: float,
        next_obs: Any,
        terminated: bool,
        truncated: bool,
    ) -> None:
        """Train the adversary on its own seat's step (``"trader"`` mode; ``reward`` is the
        adversary seat's, e.g. minus the protagonist's)."""
        self.learn_adversary((obs, action, reward, next_obs, terminated, truncated), False)

    def trader_adversary(self, seed: int | None = None) -> Agent | None:
        """The adversary to seat opposite the protagonist in training, learning as it trades,
        if the mode is ``"trader"``; else None."""
        trader = self.pairing is not None and self.pairing.mode == "trader"
        return self.adversary_policy(seed) if trader else None

    @abstractmethod
    def adversary_action(self, obs: Any) -> int:
        """The adversary's action at ``obs`` when it takes over (exploring as in training)."""

    @abstractmethod
    def learn_protagonist(self, step: Step) -> None:
        """The protagonist's learning step."""

    @abstractmethod
    def learn_adversary(self, step: Step, takeover: bool) -> None:
        """The adversary's learning step (the reward its own): on the protagonist's seat
        after a ``takeover``, else on a seat of its own."""

    @abstractmethod
    def adversary_policy(self, seed: int | None = None) -> Agent:
        """The adversary as an agent of its own, sharing its learned state."""


class AdversarySeat(Agent):
    """The adversary of an RA3-Q learner (``owner``) as an agent of its own seat.

    `update` trains the owner's adversary through ``owner.update_adversary`` on this seat's
    transition (``reward``: the seat's own, minus the protagonist's in an opposed market), so
    that a driver knowing only `Agent` trains it like any learner; `end_episode` is a no-op
    (the owner's episode ends with the protagonist's). The learned state lives in the owner,
    to be saved there; pickled together, seat and owner keep sharing it. Subclasses `act`.
    """

    stochastic = True
    learning = True

    def __init__(self, owner: Any, seed: int | None = None) -> None:
        self.owner = owner
        self.rng = make_rng(seed)

    def update(
        self,
        obs: Any,
        action: int,
        reward: float,
        next_obs: Any,
        terminated: bool,
        truncated: bool,
    ) -> None:
        """Train the owner's adversary on this seat's transition (``owner.update_adversary``)."""
        self.owner.update_adversary(obs, action, reward, next_obs, terminated, truncated)
