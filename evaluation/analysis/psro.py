"""The policy-space response oracle loop (PSRO; Lanctot et al. 2017) over a symmetric game,
with the table and the best response given as functions.

Each round solves the game restricted to the strategies so far (its equilibrium of largest
support, `equilibria.equilibria`, the meta-strategy), asks the oracle for a best response to
that mixture, and measures its deviation gain, ``f_new(x) - x . f(x)``, in the game extended
by it (payoff units). The loop stops when the gain is at most ``threshold`` (the mixture is
then a ``threshold``-equilibrium against everything the oracle can find) or after ``rounds``
rounds; otherwise the response joins the strategy set. The oracle may be exact (a best pure
strategy of a known game) or a learner trained against opponents drawn from the mixture.

References:
    Lanctot, M., Zambaldi, V., Gruslys, A., et al. (2017). A unified game-theoretic approach to
    multiagent reinforcement learning. NeurIPS 2017.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from tradearena.evaluation.analysis.equilibria import deviation_gains, equilibria
from tradearena.evaluation.analysis.payoffs import PayoffTable

__all__ = ["Round", "psro", "psro_rounds"]


@dataclass(frozen=True)
class Round:
    """One PSRO round.

    Attributes:
        strategies (tuple of str): The strategy set solved this round.
        mixture (numpy.ndarray, shape (len(strategies),)): Its equilibrium (the meta-strategy).
        regret (float): The mixture's regret in the restricted game (~0).
        response (str): The oracle's best response to the mixture.
        gain (float): The response's deviation gain against the mixture, payoff units.
        added (bool): Whether the response joined the strategy set (gain above the threshold,
            response new).
    """

    strategies: tuple[str, ...]
    mixture: np.ndarray
    regret: float
    response: str
    gain: float
    added: bool


def psro(
    table_of: Callable[[Sequence[str]], PayoffTable],
    best_response: Callable[[tuple[str, ...], np.ndarray], str],
    initial: Sequence[str],
    *,
    threshold: float,
    rounds: int,
) -> list[Round]:
    """Run PSRO from the strategies ``initial`` (module docstring).

    Args:
        table_of (callable): ``table_of(strategies)``: the complete `PayoffTable` of those
            strategies, in that order (sampling the profiles not yet played).
        best_response (callable): ``best_response(strategies, mixture)``: the name of a strategy
            responding to the mixture over ``strategies`` (a new one, or one already in the
            set).
        initial (sequence of str): Starting strategies, at least one.
        threshold (float): Largest deviation gain that stops the loop, payoff units (>= 0).
        rounds (int): Most rounds (>= 1).

    Returns:
        list of Round: One per round; the last has ``added`` False unless ``rounds`` ran out.
    """
    return list(psro_rounds(table_of, best_response, initial, threshold=threshold, rounds=rounds))


def psro_rounds(
    table_of: Callable[[Sequence[str]], PayoffTable],
    best_response: Callable[[tuple[str, ...], np.ndarray], str],
    initial: Sequence[str],
    *,
    threshold: float,
    rounds: int,
) -> Iterator[Round]:
    """`psro`'s rounds, each as soon as it is done (what an exception in ``table_of`` or
    ``best_response`` leaves of the loop is the rounds yielded before it)."""
    strategies = tuple(initial)
    if not strategies or len(set(strategies)) != len(strategies):
        raise ValueError(f"initial: expected distinct strategy names, got {list(initial)}")
    if not threshold >= 0:
        raise ValueError(f"threshold: expected a gain >= 0, got {threshold!r}")
    if int(rounds) != rounds or rounds < 1:
        raise ValueError(f"rounds: expected an integer >= 1, got {rounds!r}")
    for _ in range(int(rounds)):
        mixture, regret = _meta_strategy(table_of(strategies))
        response = best_response(strategies, mixture)
        extended = strategies if response in strategies else (*strategies, response)
        padded = np.append(mixture, np.zeros(len(extended) - len(strategies)))
        gain = float(deviation_gains(table_of(extended), padded)[extended.index(response)])
        added = response not in strategies and gain > threshold
        yield Round(strategies, mixture, regret, response, gain, added)
        if not added:
            return
        strategies = extended


def _meta_strategy(table: PayoffTable) -> tuple[np.ndarray, float]:
    """The equilibrium of largest support of ``table`` (a vertex for one strategy) and its
    regret."""
    if table.k == 1:
        return np.ones(1), 0.0
    found = equilibria(table)
    chosen = max(found, key=lambda e: len(e.support))
    return chosen.x, chosen.regret
