# The names, parameters and types of observation.pyx, for type checkers and the API
# reference; the docstrings are the compiled module's (docs/compiled_docstrings.py).
from typing import Any

import numpy as np

from tradearena.envs.simulator.book import OrderBook

def discretize(
    x: np.ndarray, columns: np.ndarray, edges: np.ndarray, ends: np.ndarray, out: np.ndarray
) -> None: ...
def fill_features(
    book: OrderBook,
    inventory: int,
    position_limit: int,
    mids: np.ndarray,
    step_index: int,
    n_steps: int,
    windows: np.ndarray,
    depth_levels: int,
    spread_cap: float,
    return_cap: float,
    out: np.ndarray,
) -> None: ...
def observe(
    markets: list[Any],
    n_seats: int,
    windows: np.ndarray,
    depth_levels: int,
    spread_cap: float,
    return_cap: float,
    out: np.ndarray,
) -> None: ...
def volumes(book: OrderBook, depth_levels: int) -> tuple[int, int]: ...
