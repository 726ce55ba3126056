"""alpha-Rank: the pure strategies of an empirical game ranked by the stationary distribution
of a chain over monomorphic populations, each mutant fixing with the Fermi probability.

References:
    Omidshafiei, S., Papadimitriou, C., Piliouras, G., et al. (2019). alpha-Rank: multi-agent
    evaluation by evolution. Scientific Reports 9, 9937.
    Traulsen, A., Nowak, M. A. and Pacheco, J. M. (2006). Stochastic dynamics of invasion and
    fixation. Physical Review E 74, 011909.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special, stats
from scipy.sparse.csgraph import connected_components

from tradearena.evaluation.analysis.payoffs import PayoffTable

__all__ = ["AlphaRank", "alpharank"]


@dataclass(frozen=True)
class AlphaRank:
    """Single-population alpha-Rank of the pure strategies.

    Attributes:
        pi (numpy.ndarray, shape (k,)): Stationary distribution of the chain over monomorphic
            populations (the ranking).
        fixation (numpy.ndarray, shape (k, k)): ``fixation[s, r]``: probability that one ``r``
            mutant takes over a population of ``s`` (diagonal 0).
        transitions (numpy.ndarray, shape (k, k)): Row-stochastic transition matrix
            ``T[s, r] = fixation[s, r] / (k - 1)``.
        closed_classes (tuple of tuple of int): Closed communicating classes of the chain; more
            than one means the chain is reducible (fixation probabilities underflowed to 0) and
            ``pi`` is their uniform mix.
    """

    pi: np.ndarray
    fixation: np.ndarray
    transitions: np.ndarray
    closed_classes: tuple[tuple[int, ...], ...]


def alpharank(table: PayoffTable, alpha: float = 10.0, *, m: int | None = None) -> AlphaRank:
    """Single-population alpha-Rank (Omidshafiei et al. 2019, Sec. "alpha-Rank", Eq. 3-4).

    Args:
        table (PayoffTable): Payoffs; needs the rows of the two-strategy profiles that the
            fitnesses below use (for ``m = p``: every profile with exactly two strategies
            present).
        alpha (float): Selection intensity, ``>= 0``; ``alpha -> inf`` is the alpha-Rank limit.
        m (int, optional): Population size, ``>= p``; default ``p``.

    Returns:
        AlphaRank

    Notes:
        A population of ``m`` individuals, ``n`` of them playing the mutant ``r`` and ``m - n``
        the resident ``s``. Each individual plays the ``p``-player game with ``p - 1`` others drawn
        without replacement from the rest of the population (hypergeometric; for ``m = p`` this is
        the single profile ``n e_r + (m - n) e_s``) and its fitness is its expected table payoff.
        With ``Delta(n) = f_r(n) - f_s(n)`` the Fermi (pairwise-comparison) fixation probability of
        one mutant is (Traulsen et al. 2006)::

            rho[s, r] = 1 / (1 + sum_{l=1}^{m-1} exp(-alpha sum_{n=1}^{l} Delta(n))),

        computed as ``exp(-logsumexp(...))`` so large ``alpha`` underflows to 0 instead of
        overflowing (neutral mutants: ``1 / m``). The chain over monomorphic populations moves
        ``s -> r`` with probability ``rho[s, r] / (k - 1)``. Its stationary distribution is solved
        on each closed communicating class (edges: fixation probabilities that are > 0 in floating
        point) by Grassmann-Taksar-Heyman elimination on log-probabilities (no subtractions, no
        underflow when probabilities span hundreds of orders of magnitude); transient states get
        0 and, when several classes are closed, each gets mass ``1 / (number of classes)``
        (uniform tie-break, reported in ``closed_classes``).
    """
    if not (isinstance(table, PayoffTable) and table.k >= 2):
        raise ValueError("table: expected a PayoffTable with k >= 2 strategies")
    if not (np.isfinite(alpha) and alpha >= 0):
        raise ValueError(f"alpha: expected a finite selection intensity >= 0, got {alpha!r}")
    p, k = table.p, table.k
    m = p if m is None else m
    if int(m) != m or m < max(p, 2):
        raise ValueError(f"m: expected an integer population size >= p = {p}, got {m!r}")
    m = int(m)
    log_fixation = np.full((k, k), -np.inf)
    for s in range(k):
        for r in range(k):
            if r != s:
                delta = _fitness_gap(table, s, r, m)
                exponents = np.concatenate([[0.0], -alpha * np.cumsum(delta)])
                log_fixation[s, r] = -special.logsumexp(exponents)
    fixation = np.exp(log_fixation)
    transitions = fixation / (k - 1)
    transitions[np.diag_indices(k)] = 1.0 - transitions.sum(axis=1)
    classes = _closed_classes(fixation > 0)
    pi = np.zeros(k)
    for members in classes:
        index = list(members)
        pi[index] += _gth(log_fixation[np.ix_(index, index)]) / len(classes)
    return AlphaRank(pi, fixation, transitions, classes)


def _fitness_gap(table: PayoffTable, s: int, r: int, m: int) -> np.ndarray:
    """``Delta(n) = f_r(n) - f_s(n)`` for ``n = 1 .. m - 1`` mutants ``r`` among residents
    ``s``, shape (m - 1,); see `alpharank`."""
    p, k = table.p, table.k

    def payoff(n_r: int, strategy: int) -> float:
        profile = np.zeros(k, dtype=np.int64)
        profile[r], profile[s] = n_r, p - n_r
        row = table.row(profile)
        if row is None:
            raise ValueError(f"table: alpha-rank needs the missing profile {profile.tolist()}")
        return float(table.payoffs[row, strategy])

    def expected(strategy: int, mutants_among_others: int) -> float:
        # j of the p - 1 co-players are mutants: hypergeometric over the other m - 1
        weights = stats.hypergeom.pmf(np.arange(p), m - 1, mutants_among_others, p - 1)
        own = 1 if strategy == r else 0
        return sum(w * payoff(j + own, strategy) for j, w in enumerate(weights) if w > 0)

    return np.array([expected(r, n - 1) - expected(s, n) for n in range(1, m)])


def _closed_classes(edges: np.ndarray) -> tuple[tuple[int, ...], ...]:
    """Closed strongly connected components of the directed graph ``edges`` (k, k)."""
    count, labels = connected_components(edges, directed=True, connection="strong")
    closed = []
    for c in range(count):
        inside = labels == c
        if not edges[np.ix_(inside, ~inside)].any():
            closed.append(tuple(np.flatnonzero(inside).tolist()))
    return tuple(closed)


def _gth(log_rates: np.ndarray) -> np.ndarray:
    """Stationary distribution of the irreducible chain with off-diagonal rates (n, n), given
    as logarithms (the diagonal is ignored).

    Grassmann, Taksar & Heyman (1985) state reduction, carried out on logarithms
    (``logaddexp`` for sums) so that products of tiny fixation probabilities do not underflow.
    """
    a = log_rates.astype(float)
    n = a.shape[0]
    for last in range(n - 1, 0, -1):
        a[:last, last] -= special.logsumexp(a[last, :last])
        a[:last, :last] = np.logaddexp(a[:last, :last], a[:last, last, None] + a[None, last, :last])
    log_pi = np.zeros(n)
    for j in range(1, n):
        log_pi[j] = special.logsumexp(log_pi[:j] + a[:j, j])
    return np.exp(log_pi - special.logsumexp(log_pi))
