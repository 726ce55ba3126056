"""Torch twins of the risk building blocks (`agents.utility`, `agents.ensembles`).

`apply_utility` evaluates a utility of `agents.utility` on a tensor with the same formula
(and the same ``clipped`` count) as its numpy version, the reference
(tests/agents/deep/test_deep_risk.py, ``test_torch_utility_matches_numpy``, holds them
equal); `risk_values` is Qbar -/+ lam * var over the heads axis, as
`agents.ensembles.risk_values`.
"""

from __future__ import annotations

from typing import Any

import torch

from tradearena.agents.utility import Exponential, Identity, PiecewiseLinear, Utility

__all__ = ["apply_utility", "risk_values", "utility_spec"]


def apply_utility(utility: Utility, x: torch.Tensor) -> torch.Tensor:
    """u(x) elementwise, same formulas as `agents.utility`.

    Exponential: ``expm1(clip(beta x, -clip, clip)) / beta``, adding the number of clipped
    elements to ``utility.clipped``; PiecewiseLinear: ``(1 -/+ kappa) x``; Identity: ``x``.
    """
    if isinstance(utility, Exponential) and utility.beta != 0.0:
        z = utility.beta * x
        n_over = int((z.abs() > utility.clip).sum())
        if n_over:
            utility.clipped += n_over
            z = z.clamp(-utility.clip, utility.clip)
        return torch.expm1(z) / utility.beta
    if isinstance(utility, PiecewiseLinear):
        return torch.where(x > 0, (1.0 - utility.kappa) * x, (1.0 + utility.kappa) * x)
    return x


def utility_spec(utility: Utility) -> dict[str, Any]:
    """The `agents.utility.make_utility` mapping that rebuilds ``utility``."""
    if isinstance(utility, Exponential):
        return {"name": "exponential", "beta": utility.beta, "clip": utility.clip}
    if isinstance(utility, PiecewiseLinear):
        return {"name": "piecewise_linear", "kappa": utility.kappa}
    if isinstance(utility, Identity):
        return {"name": "identity"}
    raise ValueError(f"unknown utility {utility!r}")


def risk_values(q: torch.Tensor, lam: float, seeking: bool = False) -> torch.Tensor:
    """Qbar - lam var (``seeking``: + lam var) over the heads axis of ``q`` (B, k, A) -> (B, A).

    var is the sample variance, ddof = 1; with k = 1 or lam = 0 it is Qbar (no variance term).
    """
    mean = q.mean(dim=1)
    if q.shape[1] == 1 or lam == 0.0:
        return mean
    var = q.var(dim=1, correction=1)
    return mean + lam * var if seeking else mean - lam * var
