# The names, parameters and types of book.pyx, for type checkers and the API reference; the
# docstrings are the compiled module's (docs/compiled_docstrings.py).
from enum import IntEnum
from typing import Any, Final, NamedTuple

import numpy as np

LIMIT: Final = 1
"""A limit order row (`OrderBook.run`)."""
MARKET: Final = 2
"""A market order row."""
REPLACE: Final = 3
"""Cancel the owner's resting orders on the row's side, then a limit order."""
CANCEL_ALL: Final = 4
"""Cancel every resting order of the row's owner."""
HANDLE: Final = 5
"""A row its owner's handler carries out (``handlers[owner].handle(book, ref)``)."""
QUOTE: Final = 6
"""The owner's resting orders on the row's side made one order at its price (`OrderBook.quote`)."""
MAX_QTY: Final = 9007199254740991
"""The most shares (lots) one order holds: 2**53 - 1."""

class Side(IntEnum):
    BUY = 1
    SELL = -1

class Fill(NamedTuple):
    price: int
    qty: int
    maker_order: int
    maker_owner: int
    taker_owner: int
    taker_side: int

class OrderBook:
    volume: int
    """Shares traded."""
    trades: int
    """Fills."""
    now: float
    """The time that stamps recorded messages, seconds."""
    log: list[tuple] | None
    """The recorded LOBSTER messages (with ``record=True``; else None)."""

    def __init__(self, record: bool = False, recycle: bool = False) -> None: ...
    def limit(self, side: int, price: int, qty: int, owner: int = 0) -> tuple[int, list[Fill]]: ...
    def market(self, side: int, qty: int, owner: int = 0) -> list[Fill]: ...
    def immediate(self, side: int, price: int, qty: int, owner: int = 0) -> list[Fill]: ...
    def cancel(self, order_id: int, qty: int | None = None) -> int: ...
    def cancel_owner(self, owner: int) -> int: ...
    def quote(
        self, side: int, price: int, qty: int, owner: int = 0
    ) -> tuple[int, int, list[Fill]]: ...
    def reduce(self, side: int, price: int, qty: int, owner: int | None = None) -> int: ...
    def run(
        self,
        time: np.ndarray,
        kind: np.ndarray,
        side: np.ndarray,
        price: np.ndarray,
        qty: np.ndarray,
        owner: np.ndarray,
        ref: np.ndarray,
        handlers: dict[int, Any],
        collect: bool = True,
    ) -> tuple[list[Fill], int, int]: ...
    def submit(self, kind: int, side: int, price: int, qty: int, owner: int) -> list[Fill]: ...
    def best_bid(self) -> tuple[int, int] | None: ...
    def best_ask(self) -> tuple[int, int] | None: ...
    def mid(self) -> float | None: ...
    def depth(self, levels: int = 10) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]: ...
    def account(self, owner: int) -> tuple[int, int, int, int]: ...
    def positions(self, start: int, stop: int) -> np.ndarray: ...
    def owned(self, owner: int) -> list[tuple[int, int, int, int]]: ...
    def volume_at(self, side: int, price: int) -> int: ...
    def resting(self, order_id: int) -> int: ...
    def order(self, order_id: int) -> tuple[int, int, int, int] | None: ...
    def orders_at(self, side: int, price: int) -> list[tuple[int, int, int]]: ...
    def __len__(self) -> int: ...
    def copy(self, record: bool | None = None) -> OrderBook: ...

def top_levels(messages: np.ndarray, levels: int) -> np.ndarray: ...
