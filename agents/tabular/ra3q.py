"""RA3-Q (Gao, Lui and Hernandez-Leal 2021): RA2-Q protagonist plus a risk-seeking adversary."""

from __future__ import annotations

from typing import Any

import numpy as np

from tradearena.agents._kernels import risk_argmax, risk_row
from tradearena.agents.ensembles import (
    AdversarialLearner,
    AdversarySeat,
    RiskTables,
    Step,
    Transition,
    poisson_masks,
)
from tradearena.agents.schedules import EpsilonGreedy
from tradearena.agents.tabular._base import TabularAgent
from tradearena.agents.utility import RISK_AVERSE, RISK_SEEKING, make_utility

__all__ = ["RA3Q", "AdversaryPolicy"]


class AdversaryPolicy(AdversarySeat):
    """The adversary of an `RA3Q` (``owner``) as an agent of its own seat, or a take-over
    policy; it learns as an `AdversarySeat`.

    Acts epsilon-greedily (the owner's ``adversary_exploration``; greedily with
    ``explore=False``) on Qbar_A + lam_A var_A of the owner's adversary tables (a live view),
    ties broken and exploration drawn with its own Generator.
    """

    name = "ra3q_adversary"
    observation = "tabular"
    description = "The risk-seeking adversary trained within RA3-Q"
    _state = ("t",)
    owner: RA3Q

    def __init__(self, owner: RA3Q, seed: int | None = None) -> None:
        super().__init__(owner, seed)
        self.policy = EpsilonGreedy(owner.n_actions, owner.adversary_exploration)
        self.t = 0

    def act(self, obs: Any, explore: bool = True) -> int:
        values = self.owner.adversary_values(self.owner.index(obs))
        action = self.policy(values, self.rng, self.t, explore)
        self.t += explore
        return action


class RA3Q(AdversarialLearner, TabularAgent):
    """RA3-Q: an RA2-Q protagonist and an adversary learning at the same time.

    The protagonist is RA2-Q (``k``, ``lam``, ``masks``, ``utility``; see `RA2Q`). The
    adversary has k tables of its own trained by the same rule on reward -r with a convex
    utility (``adversary_utility``, default exponential beta_A = +0.5) and acts
    epsilon-greedily (``adversary_exploration``) on Qbar_A + ``adversary_lam`` * var_A: it
    lowers the protagonist's mean and raises its variance.

    ``adversary_mode``: ``"takeover"`` (default): in training (``explore=True``) with
    probability ``p_adv`` the action `act` returns is the adversary's (the coin and its draws
    come from this agent's Generator); `update` then trains the learner that acted (choice
    ``protagonist_learns_all``, default False: the protagonist also learns off-policy from
    the adversary's steps). ``"trader"``: the adversary trades a seat of its own, the agent
    `trader_adversary` gives, whose `AdversaryPolicy.update` trains it (`update_adversary`)
    on that seat's transitions; `act` is the protagonist's. ``None``: no adversary (RA2-Q
    exactly). `adversary_policy` gives the adversary as an agent for an evaluation.

    ``robust_target`` (default True; used in ``"takeover"`` mode with ``p_adv`` > 0, ignored
    otherwise): the TD targets are those of the probabilistic action-robust MDP of Tessler,
    Efroni and Mannor (2019, "Action Robust Reinforcement Learning", PR-MDP), whose executed
    policy at s' is the protagonist's with probability 1 - p_adv and the adversary's with
    probability p_adv. Per table i, the protagonist bootstraps from
    ``(1 - p_adv) * max_b Q_P,i(s', b) + p_adv * Q_P,i(s', a_A(s'))`` with a_A(s') the
    adversary's greedy action on Qbar_A + lam_A var_A, and the adversary (reward -r) from
    ``(1 - p_adv) * Q_A,i(s', a_P(s')) + p_adv * max_b Q_A,i(s', b)`` with a_P(s') the
    protagonist's greedy action on Qbar_P - lam var_P (greedy: ties to the lowest index; no
    exploration in the target). Each table keeps its own max, as in RA2-Q, so that the
    rule with p_adv = 0 is RA2-Q's bit for bit (the mixture is then not computed at all).
    With ``robust_target=False`` both learners bootstrap from ``max_b Q_i(s', b)``: the
    take-over then changes which transitions they see, not their fixed points. The source
    text names the pairing but not the target: this is this project's choice where the
    source text is silent.
    """

    name = "ra3q"
    description = "RA3-Q: RA2-Q protagonist trained against a risk-seeking adversary"
    batched_act = False
    _state = (
        *TabularAgent._state,
        "tables.q",
        "tables.visits",
        "tables.utility.clipped",
        "adversary.q",
        "adversary.visits",
        "adversary.utility.clipped",
        "adversary_acted",
    )

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
        adversary_exploration: float | tuple = 0.1,
        protagonist_learns_all: bool = False,
        robust_target: bool = True,
        **params: Any,
    ) -> None:
        super().__init__(**params)
        if not (lam >= 0.0 and adversary_lam >= 0.0):
            raise ValueError(f"lam and adversary_lam must be >= 0, got {lam}, {adversary_lam}")
        self.k, self.lam, self.masks = k, float(lam), masks
        self.adversary_lam = float(adversary_lam)
        table_args = (k, self.n_states, self.n_actions)
        utility = make_utility(RISK_AVERSE if utility is None else utility)
        self.tables = RiskTables(*table_args, utility, self.step_size)
        adversary_utility = make_utility(
            RISK_SEEKING if adversary_utility is None else adversary_utility
        )
        self.adversary = RiskTables(*table_args, adversary_utility, self.step_size)
        self.pair(adversary_mode, p_adv, protagonist_learns_all)
        self.adversary_exploration = adversary_exploration
        self.adversary_greedy = EpsilonGreedy(self.n_actions, adversary_exploration)
        self.robust_target = bool(robust_target)
        robust = robust_target and adversary_mode == "takeover" and p_adv > 0.0
        self.target_p_adv = float(p_adv) if robust else 0.0
        """The take-over probability in the TD targets (0.0: plain max targets)."""

    @property
    def q(self) -> np.ndarray:
        """The protagonist's tables, shape (k, S, A)."""
        return self.tables.q

    def values(self, state: int) -> np.ndarray:
        return risk_row(self.tables.q, state, self.lam)

    def adversary_values(self, state: int) -> np.ndarray:
        """Qbar_A + lam_A var_A at ``state``: what the adversary maximises, (n_actions,)."""
        return risk_row(self.adversary.q, state, self.adversary_lam, seeking=True)

    def act(self, obs: Any, explore: bool = True) -> int:
        s = self.index(obs)
        action = self.executed(s, self.policy(self.values(s), self.rng, self.t, explore), explore)
        if explore:
            self.t += 1
        return action

    def adversary_action(self, obs: Any) -> int:
        """Epsilon-greedy on Qbar_A + lam_A var_A (`adversary_values`) at state ``obs``."""
        return self.adversary_greedy(self.adversary_values(obs), self.rng, self.t)

    def learn(self, t: Transition) -> None:
        """RA2-Q's rule on the protagonist's tables; with robust targets, bootstrapping from
        its max w.p. 1 - p_adv and from the adversary's greedy action at s' w.p. p_adv."""
        _, _, _, s2, terminated, _ = t
        p, mix = self.target_p_adv, None
        if p > 0.0 and not terminated:
            mix = (risk_argmax(self.adversary.q, s2, self.adversary_lam, True), 1.0 - p, p)
        self.tables.update(t, poisson_masks(self.rng, self.k, self.masks), mix=mix)

    def learn_protagonist(self, step: Step) -> None:
        self.learn(self.transition(*step[:5]))

    def learn_adversary(self, step: Step, takeover: bool) -> None:
        """RA2-Q's rule on the adversary's tables; after a take-over with robust targets,
        bootstrapping from the protagonist's greedy action at s' w.p. 1 - p_adv and from
        its max w.p. p_adv."""
        t = self.transition(*step[:5])
        _, _, _, s2, terminated, _ = t
        p, mix = self.target_p_adv, None
        if takeover and p > 0.0 and not terminated:
            mix = (risk_argmax(self.tables.q, s2, self.lam), p, 1.0 - p)
        self.adversary.update(t, poisson_masks(self.rng, self.k, self.masks), mix=mix)

    def adversary_policy(self, seed: int | None = None) -> AdversaryPolicy:
        """The adversary as an agent sharing its tables (e.g. ``act(obs, explore=False)`` in an
        evaluation); ``seed`` seeds its own Generator."""
        return AdversaryPolicy(self, seed)
