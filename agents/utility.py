"""Utilities applied to the TD error: building block 1 of
docs/algorithms.md#building-block-1-utilities-on-the-td-error.

RAQL updates ``Q(s,a) += alpha * (u(d) - x0)`` with ``x0 = u(0)``; a concave ``u`` is
risk-averse, a convex one risk-seeking, the identity gives Q-learning. Each utility maps a
float to a float and an ndarray to an ndarray of the same shape.

These numpy formulas are the reference of two twins: the C one in agents/_kernels.pyx, which
the tabular learners update with (chosen by ``kernel_args``; tests/agents/test_kernels.py,
``test_risk_update_matches_python``, holds it equal), and the torch one of the deep learners,
`agents.deep.risk.apply_utility` (tests/agents/deep/test_deep_risk.py,
``test_torch_utility_matches_numpy``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from tradearena.agents._kernels import UtilityKind
from tradearena.envs.errors import did_you_mean, keyword_hint

__all__ = [
    "RISK_AVERSE",
    "RISK_SEEKING",
    "Exponential",
    "Identity",
    "PiecewiseLinear",
    "Utility",
    "make_utility",
]


class Identity:
    """u(x) = x, x0 = 0: Q-learning."""

    x0 = 0.0
    clipped = 0

    def __call__(self, x: Any) -> Any:
        return x

    def kernel_args(self) -> tuple[UtilityKind, float, float]:
        """(kind, parameter, clip) for `agents._kernels.risk_update`."""
        return UtilityKind.IDENTITY, 0.0, 0.0

    def __repr__(self) -> str:
        return "Identity()"


class Exponential:
    """Normalised exponential utility u(x) = (exp(beta x) - 1) / beta, u(0) = 0, u'(0) = 1.

    ``beta < 0`` is risk-averse, ``beta > 0`` risk-seeking, ``beta = 0`` the identity. Up to
    the factor 1/|beta| it is Shen et al.'s -exp(beta x) (same fixed point): for a one-step
    problem Q = (1/beta) log E[exp(beta Y)]. ``beta * x`` is clipped to [-clip, clip] before
    the exponential (no overflow); ``clipped`` counts the evaluations (array elements) that
    were clipped. ``x`` must be in the units the agent sees (rewards times ``reward_scale``).
    """

    x0 = 0.0

    def __init__(self, beta: float, clip: float = 30.0) -> None:
        if not np.isfinite(beta):
            raise ValueError(f"beta must be finite, got {beta}")
        if not clip > 0:
            raise ValueError(f"clip must be > 0, got {clip}")
        self.beta = float(beta)
        self.clip = float(clip)
        self.clipped = 0

    def __call__(self, x: Any) -> Any:
        beta = self.beta
        if beta == 0.0:
            return x
        z = np.multiply(beta, x)
        over = np.abs(z) > self.clip
        if np.ndim(z):
            n_over = int(np.count_nonzero(over))
            if n_over:
                self.clipped += n_over
                z = np.clip(z, -self.clip, self.clip)
            return np.expm1(z) / beta
        if over:
            self.clipped += 1
            z = np.clip(z, -self.clip, self.clip)
        # np.expm1 on scalars and arrays alike (math.expm1 and numpy's SIMD expm1 may differ in
        # the last ulp). The tabular learners apply the same formula compiled
        # (`agents._kernels.risk_update`, libm expm1), all of them, so they agree among themselves.
        return float(np.expm1(z)) / beta

    def kernel_args(self) -> tuple[UtilityKind, float, float]:
        """(kind, parameter, clip) for `agents._kernels.risk_update` (beta = 0: identity)."""
        if self.beta == 0.0:
            return UtilityKind.IDENTITY, 0.0, 0.0
        return UtilityKind.EXPONENTIAL, self.beta, self.clip

    def __repr__(self) -> str:
        return f"Exponential(beta={self.beta}, clip={self.clip})"


class PiecewiseLinear:
    """u(x) = (1 - kappa) x for x > 0, (1 + kappa) x otherwise; |kappa| < 1, x0 = 0.

    Mihatsch & Neuneier (2002): ``kappa > 0`` weighs losses more (risk-averse).
    """

    x0 = 0.0
    clipped = 0

    def __init__(self, kappa: float) -> None:
        if not -1.0 < kappa < 1.0:
            raise ValueError(f"kappa must satisfy |kappa| < 1, got {kappa}")
        self.kappa = float(kappa)

    def __call__(self, x: Any) -> Any:
        if np.ndim(x):
            return np.where(x > 0, (1.0 - self.kappa) * x, (1.0 + self.kappa) * x)
        return (1.0 - self.kappa) * x if x > 0 else (1.0 + self.kappa) * x

    def kernel_args(self) -> tuple[UtilityKind, float, float]:
        """(kind, parameter, clip) for `agents._kernels.risk_update`."""
        return UtilityKind.PIECEWISE_LINEAR, self.kappa, 0.0

    def __repr__(self) -> str:
        return f"PiecewiseLinear(kappa={self.kappa})"


Utility = Identity | Exponential | PiecewiseLinear

RISK_AVERSE = {"name": "exponential", "beta": -0.5}
"""Default utility of the risk-averse learners (beta per agent reward unit)."""
RISK_SEEKING = {"name": "exponential", "beta": 0.5}
"""Default utility of the adversaries."""

_KINDS = {"identity": Identity, "exponential": Exponential, "piecewise_linear": PiecewiseLinear}


def make_utility(spec: str | Mapping[str, Any] | Utility | None = "identity") -> Utility:
    """A utility from a name (``"identity"``), a mapping (``{"name": "exponential",
    "beta": -0.5}``), an instance (returned as is) or None (identity).

    Every utility has ``x0 = u(0)`` and a ``clipped`` count (always 0 but for Exponential).
    """
    if spec is None:
        return Identity()
    if isinstance(spec, Identity | Exponential | PiecewiseLinear):
        return spec
    if isinstance(spec, str):
        spec = {"name": spec}
    if not isinstance(spec, Mapping) or spec.get("name") not in _KINDS:
        name = spec.get("name") if isinstance(spec, Mapping) else None
        hint = did_you_mean(name, _KINDS)
        raise ValueError(f"utility must name one of {sorted(_KINDS)}, got {spec!r}{hint}")
    params = {key: value for key, value in spec.items() if key != "name"}
    try:
        return _KINDS[spec["name"]](**params)
    except TypeError as error:
        hint = keyword_hint(error, _KINDS[spec["name"]])
        raise ValueError(f"utility {spec!r}: {error}{hint}") from None
