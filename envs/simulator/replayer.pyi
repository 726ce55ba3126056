# The names, parameters and types of replayer.pyx, for type checkers and the API reference;
# the docstrings are the compiled module's and its source's (docs/compiled_docstrings.py).
from typing import Final

import numpy as np

from tradearena.envs.simulator.book import Fill, OrderBook
from tradearena.envs.simulator.seat_response import SeatResponse

QUEUE_MODELS: Final = ("risk_averse", "power", "log", "optimistic")

class Replayer:
    owner: int
    """The owner of the replayed orders this session."""
    added: int
    """Shares reconciliation put in this session."""
    removed: int
    """Shares reconciliation took out this session."""
    skipped: int
    """Shares of cancels that found nothing to remove this session."""

    def __init__(
        self,
        kind: np.ndarray,
        order_id: np.ndarray,
        size: np.ndarray,
        price: np.ndarray,
        direction: np.ndarray,
        rows: np.ndarray | None = None,
        queue: str = "risk_averse",
        queue_power: float = 2.0,
        response: SeatResponse | None = None,
    ) -> None: ...
    @property
    def reconcile(self) -> bool: ...
    @property
    def ids(self) -> dict[int, int]: ...
    @property
    def response(self) -> SeatResponse | None: ...
    def restart(self, owner: int, rng: np.random.Generator | None = None) -> None: ...
    def copy(self) -> Replayer: ...
    def load(self, other: Replayer) -> None: ...
    @property
    def queue(self) -> tuple[str, float]: ...
    def __len__(self) -> int: ...
    @property
    def next_release(self) -> float: ...
    def release(self, book: OrderBook) -> None: ...
    def observe(self, book: OrderBook) -> None: ...
    def handle(self, book: OrderBook, ref: int) -> list[Fill]: ...
