"""Deep RA2-Q: deep RAQL on k heads of a shared torso with Poisson(1) bootstrap masks.

Each head i bootstraps from its own target head: d_i = r + gamma max_a' Q'_i(s', a') -
Q_i(s, a), and is regressed on ``stopgrad(Q_i + u(d_i) - x0)``. Every stored transition
carries masks m_i ~ Poisson(1) (drawn once, when stored), which weigh head i's loss on it
(the deep counterpart of updating table i m_i times). The policy acts epsilon-greedily on
Qhat = Qbar - lam var over the heads (var with ddof = 1); ``seeking=True`` gives
Qbar + lam var (the adversary of `agents.deep.ra3q`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from tradearena.agents.deep.dqn import Heads
from tradearena.agents.deep.raql import DeepRAQL

__all__ = ["DeepRA2Q"]


class DeepRA2Q(DeepRAQL):
    """`DeepRAQL` with ``k`` heads, bootstrap masks and a mean-variance policy.

    :param k: number of heads (10).
    :param lam: variance weight of the policy, >= 0 (1.0), in (agent units)^-1.
    :param masks: store Poisson(1) masks (True); False weighs every head 1 (no draws).
    :param seeking: act on Qbar + lam var instead of Qbar - lam var (False).

    With k = 1, lam = 0 and masks off it is `DeepRAQL` exactly (same seed, same actions and
    parameters). All other keywords as `DeepRAQL`.
    """

    name = "deep_ra2q"
    description = "Deep RA2-Q: k masked heads on a shared torso, acting on Qbar - lam var"

    def __init__(
        self,
        *,
        k: int = 10,
        lam: float = 1.0,
        masks: bool = True,
        seeking: bool = False,
        **params: Any,
    ) -> None:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"k (number of heads) must be a positive int, got {k!r}")
        if not lam >= 0.0:
            raise ValueError(f"lam must be >= 0, got {lam}")
        heads = Heads(k, float(lam), bool(masks), bool(seeking))
        super().__init__(heads=heads, **params)

    @property
    def config(self) -> dict[str, Any]:
        return {**super().config, **dataclasses.asdict(self.heads)}
