"""Tapes built message by message for the responsive replay's tests: a book that never moves
on its own, with or without small market orders of its own that it absorbs."""

from __future__ import annotations

import numpy as np

from tradearena.envs.data.tapes import EMPTY_ASK, EMPTY_BID, MESSAGE_DTYPE, Tape

PRICE = 1_000_000
"""The quiet book's best bid (ticks); its best ask is one tick above."""
DEPTH = 1_000
"""Lots at each of the quiet book's levels."""


def quiet_tape(
    seconds: float = 600.0,
    every: float = 0.1,
    *,
    levels: int = 1,
    trades_every: int = 0,
    open_time: float = 34_200.0,
) -> Tape:
    """A level-``levels`` tape (rows reconciled to, as a file's are) whose book is ``levels``
    levels of `DEPTH` lots a side, bid `PRICE` and ask one tick above, one tick apart, for
    ``seconds``: every ``every`` seconds a 10-lot order joins the best bid or ask (the sides
    alternate) and is deleted again half a step later. With ``trades_every`` (n > 0), every
    n-th of those orders is instead executed by a market order of the opposite side, so
    the tape holds market orders that move nothing."""
    rows, messages = [], []
    book = {1: [DEPTH] * levels, -1: [DEPTH] * levels}

    def row() -> list[int]:
        out = []
        for level in range(levels):
            out += [PRICE + 1 + level, book[-1][level], PRICE - level, book[1][level]]
        return out

    for k in range(int(seconds / every)):
        t = open_time + k * every
        side = 1 if k % 2 else -1
        price = PRICE if side > 0 else PRICE + 1
        book[side][0] += 10
        messages.append((t, 1, k + 1, 10, price, side))
        rows.append(row())
        book[side][0] -= 10
        kind = 4 if trades_every and k % trades_every == 0 else 3
        messages.append((t + every / 2, kind, k + 1, 10, price, side))
        rows.append(row())
    array = np.array(messages, dtype=MESSAGE_DTYPE)
    return Tape(array, np.array(rows, dtype=np.int64), 0.01, "quiet", complete=False)


def empty_row(levels: int) -> list[int]:
    """An orderbook row with every level empty."""
    return [EMPTY_ASK, 0, EMPTY_BID, 0] * levels
