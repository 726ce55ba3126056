# The names, parameters and types of builder.pyx, for type checkers and the API reference;
# the docstrings are the compiled module's (docs/compiled_docstrings.py).
from typing import Final

import numpy as np

LEVEL: Final = 1
"""By level: the volume at (side, price) set."""
SNAPSHOT_BEGIN: Final = 2
"""By level: a snapshot that replaces the whole book begins."""
SNAPSHOT_END: Final = 3
"""By level: the snapshot ends."""
TRADE: Final = 4
"""A trade against the maker's side (by order: naming the maker)."""
CREATE: Final = 5
"""By order: a new order."""
CHANGE: Final = 6
"""By order: an order's new price and remaining volume."""
DELETE: Final = 7
"""By order: an order deleted."""

def build(
    kind: np.ndarray,
    side: np.ndarray,
    price: np.ndarray,
    qty: np.ndarray,
    order: np.ndarray,
    time: np.ndarray,
    levels: int,
    band: float,
    reference: int,
    by_order: bool,
) -> tuple[dict[str, np.ndarray], np.ndarray, dict[str, int]]: ...
