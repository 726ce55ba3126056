# The names, parameters and types of seat_response.pyx, for type checkers and the API
# reference; the docstrings are the compiled module's and its source's
# (docs/compiled_docstrings.py).
import numpy as np

class SeatResponse:
    shift: int
    """Ticks added to the tape's prices now."""
    taken: int
    """Lots the seats took from the tape's liquidity this session."""
    counted: int
    """The tape's market orders so far (after the last message)."""
    orders: int
    """The seats' trades this session."""

    def __init__(
        self,
        kernel: np.ndarray,
        counts: np.ndarray,
        scale: np.ndarray,
        emptied: np.ndarray,
        thinned: np.ndarray,
        reference: float,
        concavity: float = 0.5,
    ) -> None: ...
    def __len__(self) -> int: ...
    def restart(self, rng: np.random.Generator | None = None) -> None: ...
    def copy(self) -> SeatResponse: ...
    def load(self, other: SeatResponse) -> None: ...
    @property
    def dither(self) -> float: ...
    @property
    def moved(self) -> float: ...
    @property
    def next_release(self) -> float: ...
    @property
    def held(self) -> list[tuple[int, int, int, float]]: ...
