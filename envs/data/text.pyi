# The names, parameters and types of text.pyx, for type checkers and the API reference; the
# docstrings are the compiled module's (docs/compiled_docstrings.py).
from typing import Any, Final

import numpy as np

BINANCE_DEPTH: Final = 1
"""A Binance line's kind: a depth update."""
BINANCE_TRADE: Final = 2
"""A Binance line's kind: a trade."""
BINANCE_TICKER: Final = 3
"""A Binance line's kind: a book ticker."""
BINANCE_SNAPSHOT: Final = 4
"""A Binance line's kind: a depth snapshot."""
BINANCE_OTHER: Final = 5
"""A Binance line's kind: any other stream's."""
CSV_SKIP: Final = 0
"""A CSV column not read."""
CSV_INT: Final = 1
"""A CSV column of integers."""
CSV_DECIMAL: Final = 2
"""A CSV column of decimals, read exactly."""
CSV_ENUM: Final = 3
"""A CSV column of names, read as indexes into a list."""
CSV_BOOL: Final = 4
"""A CSV column of true / false."""
CSV_SAME: Final = 5
"""A CSV column every row of which holds the same text."""

class ScanError(Exception):
    def __init__(self, row: int, column: int, reason: str) -> None: ...

def scan_binance(text: bytes) -> dict[str, np.ndarray]: ...
def scan_csv(text: bytes, start: int, kinds: list[int], enums: list[Any]) -> list[Any]: ...
def format_csv(time: np.ndarray | None, decimals: int, table: np.ndarray) -> bytes: ...
