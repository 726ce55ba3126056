"""Heuristic payoff tables (N | U) of a symmetric empirical game (Tuyls et al. 2020).

A table describes a game of ``p`` players, each choosing one of ``k`` strategies. Row ``r`` is a
profile: the counts ``N[r] = (N_1, ..., N_k)`` of players on each strategy (``sum_j N_j = p``)
and the mean payoff ``U[r, i]`` of a player using strategy ``i`` in that profile. Layout, as in
OpenSpiel's ``egt/heuristic_payoff_table.py`` with the sampling error added:

====================  ============  ===================================================
array                 shape         meaning
====================  ============  ===================================================
``counts``            (rows, k)     int, players per strategy; each row sums to ``p``
``payoffs``           (rows, k)     float, mean payoff per strategy; NaN where count 0
``samples``           (rows, k)     int, payoff observations behind each cell (optional)
``stderr``            (rows, k)     float, standard error of each cell (optional)
====================  ============  ===================================================

A complete table has all ``C(p + k - 1, k - 1)`` profiles. On disk (``payoffs.csv`` in a run
directory) the columns are ``n_<s>``, ``u_<s>``, then ``samples_<s>`` and ``stderr_<s>`` when
known, for each strategy name ``<s>``. Bad input raises ``ValueError`` naming the parameter;
a frame without those columns, `TableFormatError`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

__all__ = ["FORMAT", "PayoffTable", "TableFormatError", "parse_profile", "profile_key"]

FORMAT = (
    "a payoff table has one row per profile of the game and, for each strategy s, a column "
    "n_s (the players playing s in that profile) and a column u_s (their mean payoff), "
    "optionally samples_s and stderr_s, as a tournament's payoffs.csv (docs/games.md)"
)
"""The table's format on disk, in words, for the messages about a file that is not one."""


class TableFormatError(ValueError):
    """A frame that is not a payoff table: it lacks the ``n_<s>`` or ``u_<s>`` columns
    (``missing``: the columns it lacks, "n_*" when it has no ``n_`` column at all)."""

    def __init__(self, missing: list[str]) -> None:
        self.missing = missing
        super().__init__(
            f"frame: needs n_<s> and u_<s> columns per strategy; missing {missing or 'n_*'}"
        )


def profile_key(counts: Sequence[int]) -> str:
    """The string key of a profile, e.g. ``(3, 1, 0) -> "3-1-0"``."""
    return "-".join(str(int(n)) for n in counts)


def parse_profile(key: object, k: int) -> tuple[int, ...]:
    """A profile given as a tuple/list of counts or a string key ("3-1-0", "(3, 1, 0)")."""
    if isinstance(key, str):
        counts = tuple(int(n) for n in re.findall(r"\d+", key))
    else:
        counts = tuple(int(n) for n in np.asarray(key).ravel())
    if len(counts) != k:
        raise ValueError(f"records: profile {key!r} has {len(counts)} counts, expected k = {k}")
    return counts


class PayoffTable:
    """The heuristic payoff table (N | U) of ``p`` players over ``k`` strategies.

    Build it with `from_arrays`, `from_frame`, `read_csv`, `from_matrix` or `from_records`.
    The arrays are read-only; see the module docstring for the layout.
    """

    def __init__(
        self,
        counts: ArrayLike,
        payoffs: ArrayLike,
        *,
        samples: ArrayLike | None = None,
        stderr: ArrayLike | None = None,
        strategies: Sequence[str] | None = None,
    ) -> None:
        counts, payoffs, samples, stderr, strategies = _check_arrays(
            counts, payoffs, samples, stderr, strategies
        )
        for array in (counts, payoffs, samples, stderr):
            if array is not None:
                array.flags.writeable = False
        self._counts = counts
        self._payoffs = payoffs
        self._samples = samples
        self._stderr = stderr
        self._strategies = strategies
        self._rows = {tuple(row): r for r, row in enumerate(counts.tolist())}

    # ----------------------------------------------------------------- constructors
    @classmethod
    def from_arrays(
        cls,
        counts: ArrayLike,
        payoffs: ArrayLike,
        *,
        samples: ArrayLike | None = None,
        stderr: ArrayLike | None = None,
        strategies: Sequence[str] | None = None,
    ) -> PayoffTable:
        """A table from its arrays.

        Args:
            counts (array of int, shape (rows, k)): Players per strategy in each profile; every
                row sums to the same ``p``, no negative entry, no profile twice.
            payoffs (array of float, shape (rows, k)): Mean payoff per strategy; entries where
                the count is 0 are ignored (stored NaN), the others must be finite.
            samples (array of int, shape (rows, k), optional): Number of payoff observations
                behind each cell (0 where the count is 0).
            stderr (array of float, shape (rows, k), optional): Standard error of each cell (NaN
                where the count is 0, or with one sample).
            strategies (sequence of str, optional): Strategy names, default ``s0, ..., s{k-1}``.
        """
        return cls(counts, payoffs, samples=samples, stderr=stderr, strategies=strategies)

    @classmethod
    def from_frame(cls, frame: pd.DataFrame) -> PayoffTable:
        """Inverse of `to_frame`: strategies are read, in order, from the ``n_<s>`` columns."""
        strategies = [c[2:] for c in frame.columns if c.startswith("n_")]
        missing = [f"u_{s}" for s in strategies if f"u_{s}" not in frame]
        if not strategies or missing:
            raise TableFormatError(missing)

        def block(prefix: str) -> np.ndarray | None:
            names = [f"{prefix}{s}" for s in strategies]
            return frame[names].to_numpy() if all(n in frame for n in names) else None

        return cls(
            block("n_"),
            block("u_").astype(float),
            samples=block("samples_"),
            stderr=block("stderr_"),
            strategies=strategies,
        )

    @classmethod
    def read_csv(cls, path: str | Path) -> PayoffTable:
        """Read a table written by `to_csv` (``payoffs.csv`` in a run directory)."""
        return cls.from_frame(pd.read_csv(path))

    @classmethod
    def from_matrix(
        cls, matrix: ArrayLike, p: int = 2, *, strategies: Sequence[str] | None = None
    ) -> PayoffTable:
        """The complete table of a symmetric matrix game played by ``p`` players.

        ``matrix[i, j]`` is the payoff of strategy ``i`` against strategy ``j``. For ``p = 2``
        the row ``e_i + e_j`` holds ``U_i = A[i, j]``. For ``p > 2`` the game is pairwise
        (every player meets each of the other ``p - 1`` once) and payoffs are averaged:
        ``U_i(N) = sum_j (N_j - [i = j]) A[i, j] / (p - 1)``. With this construction the
        "focal" expected payoff is ``A x`` for every ``p``.
        """
        a = np.asarray(matrix, dtype=float)
        if a.ndim != 2 or a.shape[0] != a.shape[1] or a.shape[0] < 1 or not np.isfinite(a).all():
            raise ValueError(f"matrix: expected a finite square (k, k) array, got shape {a.shape}")
        if int(p) != p or p < 2:
            raise ValueError(f"p: expected an integer >= 2 players, got {p!r}")
        k = a.shape[0]
        counts = np.array(list(cls.profiles(int(p), k)), dtype=np.int64)
        others = counts[:, None, :] - np.eye(k, dtype=np.int64)[None]  # (rows, i, j)
        payoffs = np.einsum("rij,ij->ri", others, a) / (p - 1)
        return cls(counts, np.where(counts > 0, payoffs, np.nan), strategies=strategies)

    @classmethod
    def from_records(
        cls, records: pd.DataFrame, *, strategies: Sequence[str], value: str = "payoff"
    ) -> PayoffTable:
        """A table from per-seat records: one row per (profile, seat, repetition).

        Args:
            records (DataFrame): Columns ``profile`` (tuple of counts or a string key such as
                ``"3-1-0"``), ``strategy`` (a name in ``strategies``), ``repetition`` and
                ``value``.
            strategies (sequence of str): Strategy names, in the order of the counts in
                ``profile``.
            value (str): Column holding the payoff (e.g. Sharpe ratio or mean PnL).

        Notes:
            Cell ``(N, i)`` is the mean of ``value`` over the seats playing ``i`` in profile ``N``
            and over repetitions; ``samples`` is the number of values ``n`` and ``stderr`` is
            ``std(values, ddof=1) / sqrt(n)`` (NaN when ``n = 1``).
        """
        needed = ["profile", "strategy", "repetition", value]
        missing = [c for c in needed if c not in records]
        if missing:
            raise ValueError(f"records: missing columns {missing}; expected {needed}")
        strategies = list(strategies)
        unknown = sorted(set(records["strategy"]) - set(strategies))
        if unknown:
            raise ValueError(f"records: strategies {unknown} not in strategies {strategies}")
        k = len(strategies)
        frame = pd.DataFrame(
            {
                "profile": [parse_profile(key, k) for key in records["profile"]],
                "column": records["strategy"].map({s: i for i, s in enumerate(strategies)}),
                "value": records[value].astype(float),
            }
        )
        stats = frame.groupby(["profile", "column"], sort=True)["value"].agg(
            ["mean", "count", "std"]
        )
        profiles = sorted({key for key, _ in stats.index}, reverse=True)
        rows = {key: r for r, key in enumerate(profiles)}
        counts = np.array(profiles, dtype=np.int64)
        payoffs = np.full(counts.shape, np.nan)
        samples = np.zeros(counts.shape, dtype=np.int64)
        stderr = np.full(counts.shape, np.nan)
        for (key, i), (mean, n, std) in stats.iterrows():
            if counts[rows[key], i] == 0:
                raise ValueError(
                    f"records: strategy {strategies[i]!r} has values in profile {key} "
                    "where its count is 0"
                )
            payoffs[rows[key], i] = mean
            samples[rows[key], i] = n
            stderr[rows[key], i] = std / math.sqrt(n)
        return cls(counts, payoffs, samples=samples, stderr=stderr, strategies=strategies)

    # ------------------------------------------------------------------- accessors
    @staticmethod
    def profiles(p: int, k: int) -> Iterator[tuple[int, ...]]:
        """All ``C(p + k - 1, k - 1)`` profiles of ``p`` players over ``k`` strategies, in
        decreasing lexicographic order: ``(p, 0, ..., 0)`` first, ``(0, ..., 0, p)`` last."""
        if k == 1:
            yield (p,)
            return
        for first in range(p, -1, -1):
            for rest in PayoffTable.profiles(p - first, k - 1):
                yield (first, *rest)

    @property
    def counts(self) -> np.ndarray:
        """Players per strategy, int (rows, k)."""
        return self._counts

    @property
    def payoffs(self) -> np.ndarray:
        """Mean payoff per strategy, float (rows, k), NaN where the count is 0."""
        return self._payoffs

    @property
    def samples(self) -> np.ndarray | None:
        """Observations behind each cell, int (rows, k), or None if unknown."""
        return self._samples

    @property
    def stderr(self) -> np.ndarray | None:
        """Standard error of each cell, float (rows, k), or None if unknown."""
        return self._stderr

    @property
    def strategies(self) -> tuple[str, ...]:
        """Strategy names, length k."""
        return self._strategies

    @property
    def p(self) -> int:
        """Number of players."""
        return int(self._counts[0].sum())

    @property
    def k(self) -> int:
        """Number of strategies."""
        return self._counts.shape[1]

    @property
    def complete(self) -> bool:
        """True when every one of the ``C(p + k - 1, k - 1)`` profiles has a row."""
        return len(self) == math.comb(self.p + self.k - 1, self.k - 1)

    def __len__(self) -> int:
        return self._counts.shape[0]

    def __repr__(self) -> str:
        return (
            f"PayoffTable(p={self.p}, k={self.k}, rows={len(self)}, "
            f"strategies={list(self.strategies)})"
        )

    def row(self, profile: Sequence[int]) -> int | None:
        """Index of the row of ``profile`` (counts, length k), or None if absent."""
        return self._rows.get(tuple(int(n) for n in profile))

    def restrict(self, strategies: Sequence[int | str]) -> PayoffTable:
        """The sub-table of the profiles using only ``strategies`` (indices or names): the
        game on that face of the simplex. Rows keep their order."""
        columns = [self.strategies.index(s) if isinstance(s, str) else int(s) for s in strategies]
        if len(set(columns)) != len(columns) or not all(0 <= c < self.k for c in columns):
            raise ValueError(f"strategies: expected distinct strategies of {self.strategies}")
        others = np.setdiff1d(np.arange(self.k), columns)
        keep = (self._counts[:, others] == 0).all(axis=1)
        if not keep.any():
            raise ValueError(f"strategies: no profile of the table uses only {strategies}")

        def cut(array: np.ndarray | None) -> np.ndarray | None:
            return None if array is None else array[np.ix_(keep, columns)]

        return PayoffTable(
            cut(self._counts),
            cut(self._payoffs),
            samples=cut(self._samples),
            stderr=cut(self._stderr),
            strategies=[self.strategies[c] for c in columns],
        )

    def faces(self, size: int) -> Iterator[tuple[tuple[int, ...], PayoffTable]]:
        """Each set of ``size`` strategy indices with its sub-table (see `restrict`)."""
        for columns in combinations(range(self.k), size):
            yield columns, self.restrict(columns)

    # ---------------------------------------------------------------------- output
    def to_frame(self) -> pd.DataFrame:
        """Columns ``n_<s>``, ``u_<s>`` and, when known, ``samples_<s>``, ``stderr_<s>``."""
        blocks = [("n_", self._counts), ("u_", self._payoffs)]
        blocks += [(n, a) for n, a in (("samples_", self._samples), ("stderr_", self._stderr))]
        return pd.DataFrame(
            {
                f"{prefix}{s}": array[:, i]
                for prefix, array in blocks
                if array is not None
                for i, s in enumerate(self.strategies)
            }
        )

    def to_csv(self, path: str | Path) -> Path:
        """Write `to_frame` as CSV (full float precision); return the path."""
        path = Path(path)
        self.to_frame().to_csv(path, index=False, float_format="%.17g")
        return path


def _check_arrays(
    counts: ArrayLike,
    payoffs: ArrayLike,
    samples: ArrayLike | None,
    stderr: ArrayLike | None,
    strategies: Sequence[str] | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None, tuple[str, ...]]:
    """The one validation step of `PayoffTable`; returns owned, normalised arrays."""
    raw = np.asarray(counts)
    if raw.ndim != 2 or raw.shape[0] < 1 or raw.shape[1] < 1:
        raise ValueError(f"counts: expected a (rows, k) array, got shape {raw.shape}")
    if raw.dtype.kind not in "iu" and not (
        raw.dtype.kind == "f" and np.isfinite(raw).all() and (raw == np.round(raw)).all()
    ):
        raise ValueError(f"counts: expected integers, got dtype {raw.dtype}")
    counts = raw.astype(np.int64)
    if (counts < 0).any():
        r = int(np.argwhere(counts < 0)[0, 0])
        raise ValueError(f"counts: negative count in row {r}: {counts[r].tolist()}")
    totals = counts.sum(axis=1)
    if (totals != totals[0]).any() or totals[0] < 1:
        raise ValueError(
            f"counts: every row must sum to the same number of players p >= 1; "
            f"row sums are {sorted(set(totals.tolist()))}"
        )
    unique, seen = np.unique(counts, axis=0, return_counts=True)
    if (seen > 1).any():
        raise ValueError(f"counts: duplicate profiles {unique[seen > 1].tolist()}")
    shape = counts.shape
    payoffs = np.array(payoffs, dtype=float)
    if payoffs.shape != shape:
        raise ValueError(f"payoffs: shape {payoffs.shape} differs from counts shape {shape}")
    present = counts > 0
    bad = present & ~np.isfinite(payoffs)
    if bad.any():
        r, i = np.argwhere(bad)[0]
        raise ValueError(
            f"payoffs: missing (non-finite) payoff for present strategy {i} in row {r}, "
            f"profile {counts[r].tolist()}"
        )
    payoffs[~present] = np.nan
    if samples is not None:
        samples = np.array(samples)
        if samples.shape != shape:
            raise ValueError(f"samples: shape {samples.shape} differs from counts shape {shape}")
        samples = np.where(present, np.nan_to_num(samples.astype(float)), 0).astype(np.int64)
        if (samples < 0).any():
            raise ValueError("samples: negative sample count")
    if stderr is not None:
        stderr = np.array(stderr, dtype=float)
        if stderr.shape != shape:
            raise ValueError(f"stderr: shape {stderr.shape} differs from counts shape {shape}")
        if (stderr[np.isfinite(stderr)] < 0).any():
            raise ValueError("stderr: negative standard error")
        stderr[~present] = np.nan
    k = shape[1]
    names = tuple(f"s{i}" for i in range(k)) if strategies is None else tuple(map(str, strategies))
    if len(names) != k or len(set(names)) != k:
        raise ValueError(f"strategies: expected {k} distinct names, got {list(names)}")
    return counts, payoffs, samples, stderr, names
