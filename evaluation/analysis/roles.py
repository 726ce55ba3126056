"""Role-symmetric empirical games: players in roles (makers and takers, say), symmetric within
each role, and their Nash equilibria with a regret per role.

Role ``r`` has ``P_r`` players choosing among its ``k_r`` strategies. The ``K = sum_r k_r``
strategies are numbered role by role; a profile counts the players on each (shape (K,), role
``r``'s block summing to ``P_r``) and ``U[row, c]`` is the mean payoff of a player on strategy
``c`` in that profile (NaN where the count is 0). A mixture ``x`` (K,) is one mixture per role,
each block summing to 1.

The deviation payoff of strategy ``c`` of role ``r`` is its expected payoff when the other
``P_r - 1`` players of its role and all ``P_q`` players of each other role ``q`` are drawn from
their roles' mixtures::

    f_c(x) = sum_N U_c(N) prod_q multinomial(M_q; o_q) x_q^o_q,   o = N - e_c, M = P - e_r,

its deviation gain ``f_c(x) - x_r . f_r(x)`` and role ``r``'s regret the largest gain among its
strategies (payoff units). With one role this is `analysis.equilibria`.

Equilibria are found as in `analysis.equilibria`, by two methods kept when their regret is at
most ``tol``: "replicator", the two-population replicator dynamics (multiplicative weights per
role) from a product grid of starts, endpoints and time averages polished on their supports;
and "support", support enumeration over every combination of one support per role, solving
``f_c = f_d`` within each role's support.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import product

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import optimize

from tradearena.evaluation.analysis.dynamics import simplex_grid, support_starts
from tradearena.evaluation.analysis.equilibria import METHODS, check_methods, merge_candidates

__all__ = [
    "RoleEquilibrium",
    "RoleTable",
    "role_equilibria",
    "role_gains",
    "role_regret",
    "role_welfare",
]


@dataclass(frozen=True)
class RoleTable:
    """The payoff table of a role-symmetric game (module docstring).

    Attributes:
        roles (tuple of str): Role names, length R.
        players (tuple of int): Players per role, length R.
        strategies (tuple of tuple of str): Each role's strategy names.
        counts (numpy.ndarray of int, shape (rows, K)): Players per strategy in each profile.
        payoffs (numpy.ndarray of float, shape (rows, K)): Mean payoff per strategy; NaN where
            the count is 0.
    """

    roles: tuple[str, ...]
    players: tuple[int, ...]
    strategies: tuple[tuple[str, ...], ...]
    counts: np.ndarray
    payoffs: np.ndarray

    @classmethod
    def from_arrays(
        cls,
        roles: Mapping[str, tuple[int, Sequence[str]]],
        counts: ArrayLike,
        payoffs: ArrayLike,
    ) -> RoleTable:
        """A table from ``roles`` (name -> (players, strategy names), in order) and its
        arrays (rows, K). Bad input raises ``ValueError`` naming the role or array."""
        if not roles:
            raise ValueError("roles: expected at least one role")
        names = tuple(roles)
        players = tuple(int(n) for n, _ in roles.values())
        strategies = tuple(tuple(str(s) for s in names_) for _, names_ in roles.values())
        for role, n, own in zip(names, players, strategies):
            if n < 1 or not own or len(set(own)) != len(own):
                raise ValueError(
                    f"roles: role {role!r} needs >= 1 player and distinct strategies, got "
                    f"{n} players, {list(own)}"
                )
        counts = np.asarray(counts, dtype=np.int64)
        payoffs = np.array(payoffs, dtype=float)
        width = sum(len(own) for own in strategies)
        if counts.ndim != 2 or counts.shape[1] != width or payoffs.shape != counts.shape:
            raise ValueError(
                f"counts, payoffs: expected shape (rows, {width}), got {counts.shape} and "
                f"{payoffs.shape}"
            )
        table = cls(names, players, strategies, counts, np.where(counts > 0, payoffs, np.nan))
        sums = np.add.reduceat(counts, table.starts, axis=1)
        bad = np.flatnonzero((sums != np.array(players)).any(axis=1) | (counts < 0).any(axis=1))
        if bad.size:
            raise ValueError(
                f"counts: row {bad[0]} {counts[bad[0]].tolist()} does not put {list(players)} "
                f"players in the roles {list(names)}"
            )
        if not np.isfinite(table.payoffs[counts > 0]).all():
            raise ValueError("payoffs: a strategy that is played has no finite payoff")
        return table

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, roles: Sequence[str]) -> RoleTable:
        """A table from columns ``n_<role>_<strategy>`` and ``u_<role>_<strategy>``
        (`to_frame`) for the ``roles``, in order: a role's strategies are its ``n_<role>_``
        columns and its players their sum in the first row."""
        declared = {}
        for role in roles:
            own = [c[len(f"n_{role}_") :] for c in frame.columns if c.startswith(f"n_{role}_")]
            if not own:
                raise ValueError(f"roles: role {role!r} has no n_{role}_<strategy> column")
            declared[role] = (int(frame[[f"n_{role}_{s}" for s in own]].iloc[0].sum()), own)
        columns = [f"{role}_{s}" for role, (_, own) in declared.items() for s in own]
        missing = [c for c in frame.columns if c.startswith("n_") and c[2:] not in columns]
        missing += [f"u_{c}" for c in columns if f"u_{c}" not in frame]
        if missing:
            raise ValueError(f"roles: columns {missing} belong to no declared role {list(roles)}")
        counts = frame[[f"n_{c}" for c in columns]].to_numpy()
        return cls.from_arrays(declared, counts, frame[[f"u_{c}" for c in columns]].to_numpy(float))

    def to_frame(self) -> pd.DataFrame:
        """Columns ``n_<role>_<strategy>``, then ``u_<role>_<strategy>``."""
        names = self.columns
        data = {f"n_{c}": self.counts[:, i] for i, c in enumerate(names)}
        data.update({f"u_{c}": self.payoffs[:, i] for i, c in enumerate(names)})
        return pd.DataFrame(data)

    @property
    def columns(self) -> tuple[str, ...]:
        """``<role>_<strategy>`` for each of the K strategies."""
        return tuple(f"{r}_{s}" for r, own in zip(self.roles, self.strategies) for s in own)

    @property
    def starts(self) -> np.ndarray:
        """Index of each role's first strategy, shape (R,)."""
        return np.cumsum([0, *[len(own) for own in self.strategies[:-1]]])

    @property
    def role_of(self) -> np.ndarray:
        """Role index of each strategy, shape (K,)."""
        return np.repeat(np.arange(len(self.roles)), [len(own) for own in self.strategies])

    @property
    def complete(self) -> bool:
        """Whether every profile is present."""
        expected = math.prod(
            math.comb(n + len(own) - 1, len(own) - 1)
            for n, own in zip(self.players, self.strategies)
        )
        return len({tuple(row) for row in self.counts.tolist()}) == expected


@dataclass(frozen=True)
class RoleEquilibrium:
    """A role-symmetric Nash equilibrium: ``x`` (K,) one mixture per role; ``regret`` (R,) per
    role; ``gains`` (K,) per strategy; ``support`` the strategies played; ``methods`` those
    that found it."""

    x: np.ndarray
    regret: np.ndarray
    gains: np.ndarray
    support: tuple[int, ...]
    methods: tuple[str, ...]


def _weights(table: RoleTable, x: np.ndarray) -> np.ndarray:
    """``W`` (M, rows, K) with ``f_c(x_m) = sum_r W[m, r, c] U[r, c]`` for mixtures (M, K)."""
    width = table.counts.shape[1]
    role_of = table.role_of
    log_factorial = np.array([math.lgamma(n + 1) for n in range(max(table.players) + 1)])
    others = table.counts[:, None, :] - np.eye(width, dtype=np.int64)[None]  # (rows, c, j)
    valid = (others >= 0).all(axis=2)
    others = np.clip(others, 0, None)
    size = np.array(table.players)[None, :] - np.eye(
        len(table.roles), dtype=np.int64
    )  # (c-role, q)
    size = size[role_of]  # (c, q): others in role q for a deviator on c
    log_coefficient = log_factorial[size].sum(axis=1)[None, :] - log_factorial[others].sum(axis=2)
    monomial = np.prod(x[:, None, None, :] ** others[None], axis=3)  # (M, rows, c)
    return np.where(valid[None], np.exp(log_coefficient)[None] * monomial, 0.0)


def _payoffs(table: RoleTable, x: np.ndarray) -> np.ndarray:
    """Deviation payoffs (M, K) at mixtures (M, K)."""
    return np.einsum("mrc,rc->mc", _weights(table, x), np.nan_to_num(table.payoffs))


def _gains(table: RoleTable, x: np.ndarray) -> np.ndarray:
    """Deviation gains (M, K) at mixtures (M, K)."""
    f = _payoffs(table, x)
    mean = np.add.reduceat(x * f, table.starts, axis=1)  # (M, R)
    return f - mean[:, table.role_of]


def _check(table: RoleTable, x: ArrayLike) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    width = table.counts.shape[1]
    if x.ndim not in (1, 2) or x.shape[-1] != width:
        raise ValueError(f"x: expected shape ({width},) or (M, {width}), got {x.shape}")
    sums = np.add.reduceat(np.atleast_2d(x), table.starts, axis=1)
    if (x < -1e-9).any() or (np.abs(sums - 1) > 1e-9).any():
        raise ValueError("x: each role's mixture must be non-negative and sum to 1")
    return x


def role_gains(table: RoleTable, x: ArrayLike) -> np.ndarray:
    """Deviation gain of each strategy (K,) against its role at mixture ``x`` (K,), or (M, K)
    for mixtures (M, K); payoff units."""
    x = _check(table, x)
    return _gains(table, np.atleast_2d(x)).reshape(x.shape)


def role_welfare(table: RoleTable, x: ArrayLike) -> np.ndarray:
    """Expected payoff per player of each role (R,) when all play ``x`` (K,):
    ``x_r . f_r(x)``."""
    x = _check(table, x)
    return np.add.reduceat(x * _payoffs(table, np.atleast_2d(x))[0], table.starts)


def role_regret(table: RoleTable, x: ArrayLike) -> np.ndarray:
    """Regret of each role (R,) at mixture ``x`` (K,), or (M, R) for mixtures (M, K)."""
    gains = role_gains(table, x)
    return np.maximum.reduceat(gains, table.starts, axis=-1)


def role_equilibria(
    table: RoleTable,
    *,
    methods: tuple[str, ...] = METHODS,
    grid: int = 4,
    tol: float = 1e-6,
    same: float = 0.01,
    steps: int = 4000,
) -> list[RoleEquilibrium]:
    """The role-symmetric Nash equilibria of a complete table, each once (module docstring;
    parameters as `equilibria.equilibria`, ``grid`` the resolution per role)."""
    if not table.complete:
        raise ValueError("table: equilibria need every profile of the role game")
    check_methods(methods)
    candidates: list[tuple[np.ndarray, str]] = []
    if "support" in methods:
        candidates += [(x, "support") for x in _support_candidates(table, grid)]
    if "replicator" in methods:
        candidates += [(x, "replicator") for x in _replicator_candidates(table, grid, steps)]
    found = merge_candidates(candidates, lambda x: _gains(table, x[None])[0].max(), tol, same)
    out = []
    for x, by in found:
        gains = _gains(table, x[None])[0]
        regret = np.maximum.reduceat(gains, table.starts)
        support = tuple(int(i) for i in np.flatnonzero(x > 0))
        out.append(RoleEquilibrium(x, regret, gains, support, by))
    return sorted(out, key=lambda e: (len(e.support), tuple(-e.x)))


def _blocks(table: RoleTable) -> list[np.ndarray]:
    return [np.arange(s, s + len(own)) for s, own in zip(table.starts, table.strategies)]


def _replicator_candidates(table: RoleTable, grid: int, steps: int) -> list[np.ndarray]:
    grids = [simplex_grid(len(own), grid) for own in table.strategies]
    x = np.array([np.concatenate(parts) for parts in product(*grids)])
    spread = np.nanmax(table.payoffs) - np.nanmin(table.payoffs)
    eta = 0.1 / spread if spread > 0 else 0.0
    average = np.zeros_like(x)
    for step in range(steps):
        x = x * np.exp(eta * _gains(table, x))
        x /= np.add.reduceat(x, table.starts, axis=1)[:, table.role_of]
        if step >= steps // 2:
            average += x
    average /= steps - steps // 2
    return [_polish(table, y) for y in np.concatenate([x, average])]


def _polish(table: RoleTable, x: np.ndarray) -> np.ndarray:
    """``x`` with shares below 1e-3 cut, then solved on that support when possible."""
    cut = np.where(x < 1e-3, 0.0, x)
    cut /= np.add.reduceat(cut, table.starts)[table.role_of]
    supports = [block[cut[block] > 0] for block in _blocks(table)]
    solved = _solve_supports(table, supports, cut)
    return cut if solved is None else solved


def _support_candidates(table: RoleTable, grid: int) -> list[np.ndarray]:
    """Solutions on every product of one support per role, from each of its starts
    (`dynamics.support_starts`)."""
    out = []
    for supports, parts in support_starts(_blocks(table), grid):
        start = np.zeros(table.counts.shape[1])
        for support, share in zip(supports, parts):
            start[support] = share
        solved = _solve_supports(table, supports, start)
        if solved is not None:
            out.append(solved)
    return out


def _solve_supports(
    table: RoleTable, supports: Sequence[np.ndarray], start: np.ndarray
) -> np.ndarray | None:
    """The mixture on ``supports`` (one array of strategy indices per role) near ``start`` at
    which each role's supported strategies earn the same, when inside; else None."""
    free = [s[:-1] for s in supports]
    if all(f.size == 0 for f in free):
        x = np.zeros_like(start)
        for s in supports:
            x[s] = 1.0
        return x

    def mix(y: np.ndarray) -> np.ndarray:
        x = np.zeros_like(start)
        at = 0
        for s, f in zip(supports, free):
            x[f] = y[at : at + f.size]
            x[s[-1]] = 1.0 - y[at : at + f.size].sum()
            at += f.size
        return x

    def residual(y: np.ndarray) -> np.ndarray:
        f = _payoffs(table, mix(y)[None])[0]
        return np.concatenate([f[s[:-1]] - f[s[-1]] for s in supports])

    y0 = np.concatenate([start[f] for f in free])
    solution = optimize.least_squares(
        residual, y0, bounds=(0.0, 1.0), xtol=1e-13, ftol=1e-13, gtol=1e-13
    )
    x = mix(solution.x)
    inside = all(x[s].min() > 1e-9 for s in supports)
    return x if inside and np.abs(residual(solution.x)).max() < 1e-10 else None
