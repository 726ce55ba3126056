"""Metaorders' price moves read off simulated days: what `evaluation.analysis.impact` fits."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tradearena.envs.simulator.market import Market
from tradearena.envs.simulator.traders import Metaorder, Trader
from tradearena.envs.simulator.traders.metaorder import Parents

__all__ = ["metaorder_moves", "parent_moves"]


def parent_moves(
    parents: Parents, mids: np.ndarray, open_time: float, step_seconds: float
) -> np.ndarray:
    """Each parent's move in its own direction, ticks, shape (p,): its side times the mid at
    the first decision step at or after its end less the mid at the last step at or before
    its start (``mids[k]`` is the mid ``k`` steps of ``step_seconds`` after ``open_time``;
    times in seconds). Parents ending after the last mid get NaN."""
    first = np.floor((parents.start - open_time) / step_seconds).astype(np.int64)
    last = np.ceil((parents.end - open_time) / step_seconds).astype(np.int64)
    inside = (first >= 0) & (last < len(mids))
    out = np.full(len(first), np.nan)
    out[inside] = parents.side[inside] * (mids[last[inside]] - mids[first[inside]])
    return out


def metaorder_moves(
    traders: Sequence[Trader], days: int, step_seconds: float = 5.0
) -> tuple[np.ndarray, np.ndarray]:
    """The parents of the `Metaorder` populations among ``traders`` over ``days`` whole days
    (seeds 0 to days - 1, 09:30-16:00 in steps of ``step_seconds``): (shares sent, int64;
    moves, ticks, float64), shape (p,), parents whose move the mids cover."""
    market = Market(
        traders, n_seats=0, step_seconds=step_seconds, n_steps=int(23_400 / step_seconds)
    )
    sizes, moves = [], []
    for seed in range(days):
        market.reset(seed)
        while not market.done:
            market.step()
        for trader in market.traders:
            if isinstance(trader, Metaorder):
                move = parent_moves(trader.parents, market.mids(), market.open_time, step_seconds)
                sizes.append(trader.parents.qty[~np.isnan(move)])
                moves.append(move[~np.isnan(move)])
    return np.concatenate(sizes), np.concatenate(moves)
