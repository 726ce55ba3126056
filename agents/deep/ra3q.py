"""Deep RA3-Q: a deep RA2-Q protagonist trained against a risk-seeking deep adversary.

Building block 4 of ALGORITHMS.md with two `DeepRA2Q` learners. The adversary has its own
network, target, optimizer and buffer; it learns from reward -r with a convex utility
(default exponential beta_A = +0.5) and acts on Qbar_A + lam_A var_A: it lowers the
protagonist's mean and raises its variance.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import numpy as np

from agents.base import Agent, check_keys, make_rng
from agents.deep.ra2q import DeepRA2Q
from agents.deep.risk import utility_spec
from agents.ensembles import AdversarialPair
from agents.utility import RISK_AVERSE, RISK_SEEKING, make_utility

__all__ = ["DeepAdversaryPolicy", "DeepRA3Q"]


class DeepAdversaryPolicy(Agent):
    """The adversary of a `DeepRA3Q` as a policy: greedy on Qbar_A + lam_A var_A (a live view
    of the adversary's network); with ``explore=True`` epsilon-greedy with constant
    ``epsilon`` from its own Generator."""

    name = "deep_ra3q_adversary"
    stochastic = True
    description = "The risk-seeking adversary trained within deep RA3-Q"

    def __init__(self, learner: DeepRA2Q, epsilon: float, seed: int | None = None) -> None:
        self.learner, self.epsilon = learner, float(epsilon)
        self.rng = make_rng(seed)

    def act(self, obs: Any, explore: bool = False) -> int:
        if explore and self.epsilon > 0.0 and self.rng.random() < self.epsilon:
            return int(self.rng.integers(self.learner.n_actions))
        return self.learner.act(obs, explore=False)


class DeepRA3Q(Agent):
    """Deep RA3-Q: `DeepRA2Q` protagonist and adversary learning at the same time.

    :param k, lam, masks, utility: the protagonist's (`DeepRA2Q`; utility default exponential
        beta = -0.5).
    :param adversary_mode: ``"takeover"`` (default): in training (``explore=True``) with
        probability ``p_adv`` the action `act` returns is the adversary's (the coin from this
        agent's Generator); `update` then trains the learner that acted. ``"trader"``: the
        adversary is another seat, trained through `update_adversary`. ``None``: no adversary
        (the protagonist alone: `DeepRA2Q`).
    :param p_adv: take-over probability per training step (0.2).
    :param adversary_utility: utility spec (default exponential beta_A = +0.5).
    :param adversary_lam: lam_A >= 0 of Qbar_A + lam_A var_A (1.0).
    :param adversary_exploration: the adversary's constant epsilon (0.1).
    :param protagonist_learns_all: the protagonist also learns (off-policy) from the steps the
        adversary executed (choice; default False).
    :param params: every other `DeepRA2Q` / `DQN` keyword, shared by both learners (network,
        buffer, optimiser, ``reward_scale``, ``seed``: the two learners and the coin get
        independent streams spawned from it).
    """

    name = "deep_ra3q"
    description = "Deep RA3-Q: deep RA2-Q protagonist trained against a risk-seeking adversary"
    stochastic = True
    learning = True
    observation = "features"

    def __init__(
        self,
        *,
        k: int = 10,
        lam: float = 1.0,
        masks: bool = True,
        utility: Any = None,
        adversary_mode: str | None = "takeover",
        p_adv: float = 0.2,
        adversary_utility: Any = None,
        adversary_lam: float = 1.0,
        adversary_exploration: float = 0.1,
        protagonist_learns_all: bool = False,
        seed: int | None = None,
        **params: Any,
    ) -> None:
        if not 0.0 <= adversary_exploration <= 1.0:
            raise ValueError(
                f"adversary_exploration must be in [0, 1], got {adversary_exploration}"
            )
        self.pairing = None if adversary_mode is None else AdversarialPair(adversary_mode, p_adv)
        self._config = {
            "k": k,
            "lam": lam,
            "masks": masks,
            "utility": utility_spec(make_utility(RISK_AVERSE if utility is None else utility)),
            "adversary_mode": adversary_mode,
            "p_adv": p_adv,
            "adversary_utility": utility_spec(
                make_utility(RISK_SEEKING if adversary_utility is None else adversary_utility)
            ),
            "adversary_lam": adversary_lam,
            "adversary_exploration": adversary_exploration,
            "protagonist_learns_all": protagonist_learns_all,
            "seed": seed,
            **params,
        }
        seeds = np.random.SeedSequence(seed).generate_state(3) if seed is not None else [None] * 3
        shared = {"k": k, "masks": masks, **params}
        self.protagonist = DeepRA2Q(
            lam=lam, utility=self._config["utility"], seed=_int(seeds[0]), **shared
        )
        adversary_params = {
            **shared,
            "exploration_initial_eps": adversary_exploration,
            "exploration_final_eps": adversary_exploration,
        }
        self.adversary = DeepRA2Q(
            lam=adversary_lam,
            seeking=True,
            utility=self._config["adversary_utility"],
            seed=_int(seeds[1]),
            **adversary_params,
        )
        self.protagonist_learns_all = bool(protagonist_learns_all)
        self.adversary_exploration = float(adversary_exploration)
        self.n_actions = self.protagonist.n_actions
        self.rng = make_rng(_int(seeds[2]))
        self.adversary_acted = False

    def values(self, obs: Any) -> np.ndarray:
        """The protagonist's Qbar - lam var at ``obs``, (n_actions,)."""
        return self.protagonist.values(obs)

    def adversary_values(self, obs: Any) -> np.ndarray:
        """The adversary's Qbar_A + lam_A var_A at ``obs``, (n_actions,)."""
        return self.adversary.values(obs)

    def act(self, obs: Any, explore: bool = True) -> int:
        action = self.protagonist.act(obs, explore)
        self.adversary_acted = bool(
            explore and self.pairing is not None and self.pairing.adversary_acts(self.rng)
        )
        if self.adversary_acted:
            action = self.adversary.act(obs, explore=True)
        return action

    def update(
        self,
        obs: Any,
        action: int,
        reward: float,
        next_obs: Any,
        terminated: bool,
        truncated: bool,
    ) -> None:
        """Train the learner that acted (the adversary on -reward)."""
        if self.adversary_acted:
            self.adversary.update(obs, action, -reward, next_obs, terminated, truncated)
        if not self.adversary_acted or self.protagonist_learns_all:
            self.protagonist.update(obs, action, reward, next_obs, terminated, truncated)
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
        """Train the adversary on its own seat's transition (``"trader"`` mode; ``reward`` is
        the adversary seat's, e.g. minus the protagonist's)."""
        self.adversary.update(obs, action, reward, next_obs, terminated, truncated)

    def adversary_policy(self, seed: int | None = None) -> DeepAdversaryPolicy:
        """The adversary as a policy object (``act(obs, explore=False)``), sharing its network."""
        return DeepAdversaryPolicy(self.adversary, self.adversary_exploration, seed)

    @property
    def config(self) -> dict[str, Any]:
        """The keyword arguments that rebuild this agent."""
        return copy.deepcopy(self._config)

    def state_dict(self) -> dict[str, Any]:
        """``config``, ``rng``, ``adversary_acted`` and both learners' states under
        ``protagonist.`` and ``adversary.``."""
        state: dict[str, Any] = {
            "config": self.config,
            "rng": copy.deepcopy(self.rng.bit_generator.state),
            "adversary_acted": self.adversary_acted,
        }
        for prefix, learner in (("protagonist.", self.protagonist), ("adversary.", self.adversary)):
            state.update({prefix + k: v for k, v in learner.state_dict().items()})
        return state

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore a `state_dict` (rebuilding first if ``config`` differs); ValueError naming
        unknown or missing keys."""
        if "config" not in state:
            raise ValueError("state_dict: missing keys ['config']")
        if state["config"] != self.config:
            type(self).__init__(self, **state["config"])
        check_keys(state, self.state_dict())
        self.rng.bit_generator.state = copy.deepcopy(state["rng"])
        self.adversary_acted = bool(state["adversary_acted"])
        for prefix, learner in (("protagonist.", self.protagonist), ("adversary.", self.adversary)):
            n = len(prefix)
            learner.load_state_dict({k[n:]: v for k, v in state.items() if k.startswith(prefix)})

    def __getstate__(self) -> dict[str, Any]:
        return self.state_dict()

    def __setstate__(self, state: dict[str, Any]) -> None:
        type(self).__init__(self, **state["config"])
        self.load_state_dict(state)


def _int(value: Any) -> int | None:
    return None if value is None else int(value)
