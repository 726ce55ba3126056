# The names, parameters and types of flow.pyx, for type checkers and the API reference; the
# docstrings are the compiled module's (docs/compiled_docstrings.py).
from typing import Any, Final

import numpy as np

from tradearena.envs.simulator.book import OrderBook

MAX_AT_ONE_TIME: Final = 1000000
"""The most rows `Flow` carries out at one time before it counts its clock as stopped (a
tape's rows at one time stamp are some thousands at most; a learned flow's draws at times so
large that their waits are below the spacing of floating-point seconds would repeat
forever): a RuntimeError then, as an interrupt (Ctrl-C), looked for every few thousand rows,
stops it."""

class MarketState:
    t: float
    """Market time, seconds after midnight."""
    last_mid: float
    """The last known mid, ticks."""
    step_seconds: float
    """A decision step's length, seconds."""
    tick_size: float
    """Dollars per tick."""
    fee_per_share: float
    """Dollars per share traded."""
    step_index: int
    """Decision steps taken this session."""
    n_steps: int
    """Decision steps in a session."""
    n_orders: int
    """Orders submitted this session."""
    n_cancels: int
    """Orders cancelled this session."""
    position_limit: int
    """The most shares a seat may hold either way."""
    book: OrderBook
    """The session's order book."""

    @property
    def done(self) -> bool: ...

def advance(
    markets: list[Any],
    orders: list[Any],
    change: np.ndarray,
    mids: np.ndarray | None = None,
    inventory: np.ndarray | None = None,
    ended: np.ndarray | None = None,
) -> None: ...
def submit(book: OrderBook, seat: int, orders: Any, limit: int) -> tuple[int, int]: ...
def make_orders(
    markets: list[Any], actions: np.ndarray, seat: int, levels: np.ndarray, size: int
) -> list[list[Any]]: ...

class Flow:
    def __init__(self, programs: list[Any], handlers: dict[int, Any]) -> None: ...
    def cursors(self) -> list[int]: ...
    def seek(self, cursors: list[int]) -> None: ...
    def run(
        self, book: OrderBook, t0: float, t1: float, last_mid: float, mids: np.ndarray
    ) -> tuple[int, int]: ...
    def open(
        self, book: OrderBook, t0: float, t1: float, last_mid: float, mids: np.ndarray
    ) -> None: ...
    def until(self, book: OrderBook, limit: float) -> tuple[int, int]: ...

def linear_recursion(decay: np.ndarray, kicks: np.ndarray) -> np.ndarray: ...
def periodic_times(
    phase: np.ndarray, period: float, t0: float, t1: float
) -> tuple[np.ndarray, np.ndarray]: ...
