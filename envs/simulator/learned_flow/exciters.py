"""What an event of a tape (`envs.data.events`) is to the learned flow's excitation: its
`Exciter`, the event's kind and, for a cancel at the touch or a market order, whether it
emptied the best level of its side."""

from __future__ import annotations

from enum import IntEnum

import numpy as np

from tradearena.envs.data.events import EventKind, Events

__all__ = ["EMPTIED", "N_EXCITERS", "Exciter", "exciters"]


class Exciter(IntEnum):
    """What an event is to the flow's excitation: its kind, and for a cancel at the touch or
    a market order, whether it emptied the best level of its side (the best price moved
    away): the flow answers an emptied queue (refilling it, improving on the new spread)
    as it does not answer one that is still there."""

    LIMIT_TOUCH = 0
    LIMIT_INSIDE = 1
    LIMIT_BEHIND = 2
    CANCEL_TOUCH = 3
    CANCEL_BEHIND = 4
    MARKET = 5
    CANCEL_EMPTIED = 6  # a cancel at the touch that emptied the best level
    MARKET_EMPTIED = 7  # a market order that emptied the best level


N_EXCITERS = len(Exciter)
"""How many kinds of exciter there are."""
EMPTIED = {EventKind.CANCEL_TOUCH: Exciter.CANCEL_EMPTIED, EventKind.MARKET: Exciter.MARKET_EMPTIED}
"""The kinds of event that can empty the best level, and what they are when they do."""


def exciters(events: Events) -> np.ndarray:
    """Each of ``events``' `Exciter` (int64, (n,)), from its kind and whether it emptied the
    best level of its side."""
    out = np.asarray(events.kind, np.int64).copy()
    for before, after in EMPTIED.items():
        out[(out == before) & np.asarray(events.emptied, bool)] = after
    return out
