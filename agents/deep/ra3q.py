"""Deep RA3-Q: a deep RA2-Q protagonist trained against a risk-seeking deep adversary.

Building block 4 of docs/algorithms.md#building-block-4-an-adversary with two `DeepRA2Q`
learners. The adversary has its own network, target, optimizer and buffer; it learns from
reward -r with a convex utility (default exponential beta_A = +0.5) and acts on
Qbar_A + lam_A var_A: it lowers the protagonist's mean and raises its variance.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import numpy as np

from tradearena.agents.base import STANDARD_KEYWORDS, make_rng
from tradearena.agents.deep.configured import ConfiguredAgent
from tradearena.agents.deep.ra2q import DeepRA2Q
from tradearena.agents.deep.risk import utility_spec
from tradearena.agents.ensembles import AdversarialLearner, AdversarySeat, Step
from tradearena.agents.utility import RISK_AVERSE, RISK_SEEKING, make_utility

__all__ = ["DeepAdversaryPolicy", "DeepRA3Q"]


class DeepAdversaryPolicy(AdversarySeat):
    """The adversary of a `DeepRA3Q` (``owner``) as an agent of its own seat, or a take-over
    policy; it learns as an `AdversarySeat`.

    Greedy on Qbar_A + lam_A var_A of the owner's adversary network (a live view); with
    ``explore=True`` epsilon-greedy with the owner's constant ``adversary_exploration``, drawn
    from its own Generator.
    """

    name = "deep_ra3q_adversary"
    observation = "features"
    description = "The risk-seeking adversary trained within deep RA3-Q"
    owner: DeepRA3Q

    def act(self, obs: Any, explore: bool = True) -> int:
        epsilon = self.owner.adversary_exploration
        if explore and epsilon > 0.0 and self.rng.random() < epsilon:
            return int(self.rng.integers(self.owner.n_actions))
        return self.owner.adversary.act(obs, explore=False)


class DeepRA3Q(AdversarialLearner, ConfiguredAgent):
    """Deep RA3-Q: `DeepRA2Q` protagonist and adversary learning at the same time.

    :param k, lam, masks, utility: the protagonist's (`DeepRA2Q`; utility default exponential
        beta = -0.5).
    :param adversary_mode: ``"takeover"`` (default): in training (``explore=True``) with
        probability ``p_adv`` the action `act` returns is the adversary's (the coin from this
        agent's Generator); `update` then trains the learner that acted. ``"trader"``: the
        adversary trades a seat of its own, the agent `trader_adversary` gives, whose
        `DeepAdversaryPolicy.update` trains it (`update_adversary`). ``None``: no adversary
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
    observation = "features"
    takes = STANDARD_KEYWORDS - {"market_spec"}  # ``**params`` go to both DeepRA2Q learners

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
        self.pair(adversary_mode, p_adv, protagonist_learns_all)
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
        self.adversary_exploration = float(adversary_exploration)
        self.n_actions = self.protagonist.n_actions
        self.rng = make_rng(_int(seeds[2]))

    def values(self, obs: Any) -> np.ndarray:
        """The protagonist's Qbar - lam var at ``obs``, (n_actions,)."""
        return self.protagonist.values(obs)

    def adversary_values(self, obs: Any) -> np.ndarray:
        """The adversary's Qbar_A + lam_A var_A at ``obs``, (n_actions,)."""
        return self.adversary.values(obs)

    def act(self, obs: Any, explore: bool = True) -> int:
        return self.executed(obs, self.protagonist.act(obs, explore), explore)

    def adversary_action(self, obs: Any) -> int:
        return self.adversary.act(obs, explore=True)

    def learn_protagonist(self, step: Step) -> None:
        self.protagonist.update(*step)

    def learn_adversary(self, step: Step, takeover: bool) -> None:
        self.adversary.update(*step)

    def adversary_policy(self, seed: int | None = None) -> DeepAdversaryPolicy:
        """The adversary as an agent sharing its network (e.g. ``act(obs, explore=False)`` in
        an evaluation); ``seed`` seeds its own Generator."""
        return DeepAdversaryPolicy(self, seed)

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
        for prefix, learner in self._learners():
            state.update({prefix + k: v for k, v in learner.state_dict().items()})
        return state

    def _restore(self, state: Mapping[str, Any]) -> None:
        self.rng.bit_generator.state = copy.deepcopy(state["rng"])
        self.adversary_acted = bool(state["adversary_acted"])
        for prefix, learner in self._learners():
            n = len(prefix)
            learner.load_state_dict({k[n:]: v for k, v in state.items() if k.startswith(prefix)})

    def _learners(self) -> tuple[tuple[str, DeepRA2Q], ...]:
        return ("protagonist.", self.protagonist), ("adversary.", self.adversary)


def _int(value: Any) -> int | None:
    return None if value is None else int(value)
