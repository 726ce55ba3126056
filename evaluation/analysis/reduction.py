"""Deviation-preserving reduction (DPR) of a symmetric game of many players (Wah, Wright and
Wellman 2016; Wiedenbeck and Wellman 2012).

A game of ``N`` players is analysed as one of ``n < N``. In the reduced profile ``m``
(``sum m = n``) a player on strategy ``s`` sees its ``n - 1`` opponents ``m - e_s``; DPR scales
them up to ``N - 1`` full-game opponents, so the reduced payoff is a full-game payoff::

    U_s(m) = U^N_s(e_s + c (m - e_s)),    c = (N - 1) / (n - 1),

with ``c`` an integer. A single player's deviation in the reduced game is a single player's
deviation in the full game, which is why DPR keeps equilibria well; when payoffs are linear in
the opponents' shares (pairwise games) the reduced game has exactly the full game's deviation
payoffs and equilibria. Only the full profiles of `dpr_profiles` need sampling: for ``N = 61``,
``n = 6`` and three strategies, 63 of the full game's 1,953.

References:
    Wiedenbeck, B. and Wellman, M. P. (2012). Scaling simulation-based game analysis through
    deviation-preserving reduction. AAMAS 2012.
    Wah, E., Wright, M. and Wellman, M. P. (2016). Welfare effects of market making in continuous
    double auctions. Journal of Artificial Intelligence Research 59, 613-650.
"""

from __future__ import annotations

import numpy as np

from tradearena.evaluation.analysis.payoffs import PayoffTable, profile_key

__all__ = ["dpr_profiles", "reduce_dpr"]


def _scale(players: int, reduced: int) -> int:
    """``c = (N - 1) / (n - 1)``, checked to be an integer."""
    if int(reduced) != reduced or not 2 <= reduced <= players:
        raise ValueError(f"reduced: expected an integer in [2, {players}], got {reduced!r}")
    if (players - 1) % (reduced - 1):
        raise ValueError(
            f"reduced: {players} - 1 players must be a multiple of reduced - 1 = {reduced - 1}"
        )
    return (players - 1) // (reduced - 1)


def _full(reduced_profiles: np.ndarray, strategy: int, scale: int) -> np.ndarray:
    """The full profiles (rows, k) a player on ``strategy`` sees from ``reduced_profiles``."""
    own = np.eye(reduced_profiles.shape[1], dtype=np.int64)[strategy]
    return own + scale * (reduced_profiles - own)


def dpr_profiles(players: int, reduced: int, k: int) -> np.ndarray:
    """The distinct full-game profiles (rows, k) of ``players`` over ``k`` strategies that the
    DPR game of ``reduced`` players reads, in `PayoffTable.profiles` order."""
    scale = _scale(players, reduced)
    small = np.array(list(PayoffTable.profiles(reduced, k)), dtype=np.int64)
    needed = {
        tuple(row) for s in range(k) for row in _full(small[small[:, s] > 0], s, scale).tolist()
    }
    return np.array([n for n in PayoffTable.profiles(players, k) if n in needed], dtype=np.int64)


def reduce_dpr(full: PayoffTable, reduced: int) -> PayoffTable:
    """The DPR game of ``reduced`` players of the ``N``-player table ``full`` (module
    docstring); ``full`` needs only the rows of `dpr_profiles`. Samples and standard errors
    come with the cells they are read from. A needed profile that ``full`` lacks raises
    ``ValueError`` naming it."""
    scale = _scale(full.p, reduced)
    small = np.array(list(PayoffTable.profiles(reduced, full.k)), dtype=np.int64)
    payoffs = np.full(small.shape, np.nan)
    samples = None if full.samples is None else np.zeros(small.shape, dtype=np.int64)
    stderr = None if full.stderr is None else np.full(small.shape, np.nan)
    for s in range(full.k):
        rows = np.flatnonzero(small[:, s] > 0)
        for r, profile in zip(rows, _full(small[rows], s, scale)):
            source = full.row(profile)
            if source is None:
                raise ValueError(
                    f"full: DPR needs the profile {profile_key(profile)} of {full.p} players"
                )
            payoffs[r, s] = full.payoffs[source, s]
            if samples is not None:
                samples[r, s] = full.samples[source, s]
            if stderr is not None:
                stderr[r, s] = full.stderr[source, s]
    return PayoffTable(small, payoffs, samples=samples, stderr=stderr, strategies=full.strategies)
