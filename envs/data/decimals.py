"""Prices and quantities read as exact decimals (`Decimals`: an integer mantissa and a count
of decimals per value) and divided by the tick and the lot (`to_steps`): a value that is not
a whole number of them is never rounded."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, NamedTuple

import numpy as np

from tradearena.envs.data.files import FeedError, Source

__all__ = ["MAX_LOTS", "Decimals", "Steps", "to_steps"]

MAX_LOTS = 2**53 - 1
"""The most lots one order of the book holds (`envs.simulator.book.MAX_QTY`): 64-bit sizes
exact as float64, 90 million units in lots of 1E-8."""


@dataclass
class Decimals:
    """Decimal values read exactly (value = mantissa / 10**decimals), with the file and the
    line (0-based row of its `Source`) each came from, for errors."""

    mantissa: np.ndarray  # int64
    decimals: np.ndarray  # int8
    source: np.ndarray  # index into the sources
    row: np.ndarray

    def __len__(self) -> int:
        return len(self.mantissa)

    @staticmethod
    def join(parts: Sequence[Decimals]) -> Decimals:
        """The values of ``parts``, one after another."""
        if not parts:
            empty = np.zeros(0, np.int64)
            return Decimals(empty, empty.astype(np.int8), empty, empty)
        return Decimals(
            *(np.concatenate([getattr(p, f) for p in parts]) for f in Decimals.__annotations__)
        )

    @staticmethod
    def of_tables(
        files: Sequence[tuple[Source, dict[str, Any]]], column: str, sources: Sequence[Source]
    ) -> Decimals:
        """Column ``column`` (decimal) of ``files`` as one `Decimals`, each value knowing its
        source (its index in ``sources``) and row."""
        parts = []
        for source, columns in files:
            mantissa, decimals = columns[column]
            n = len(mantissa)
            index = np.full(n, sources.index(source))
            parts.append(Decimals(mantissa, decimals, index, np.arange(n)))
        return Decimals.join(parts)

    def text(self, i: int) -> str:
        """Value ``i`` as the decimal it was written as (trailing zeros dropped)."""
        return str(Decimal(int(self.mantissa[i])).scaleb(-int(self.decimals[i])))

    def steps(
        self,
        step: Decimal | None,
        what: str,
        sources: Sequence[Source],
        column: str | None = None,
    ) -> tuple[np.ndarray, Decimal, np.ndarray]:
        """(values in whole steps (int64), the step, mask of values off the step's grid) with
        the step given (``step``) or, when None, inferred as the largest step dividing every
        value (the gcd). A value too large for int64 at the finest scale is a `FeedError`
        naming ``what``, its file and line."""
        scale = int(self.decimals.max(initial=0))
        if step is not None:
            scale = max(scale, -int(step.as_tuple().exponent))
        power = (scale - self.decimals).astype(np.int64)
        factor = np.power(10, power, dtype=np.int64)
        too_large = self.mantissa > np.iinfo(np.int64).max // factor
        if too_large.any():
            i = int(np.argmax(too_large))
            raise FeedError(
                f"{self._where(i, sources, column)}: {what} {self.text(i)} has too many digits "
                f"next to the finest {what} of the recording (1e-{scale})"
            )
        scaled = self.mantissa * factor
        if step is None:
            units = int(np.gcd.reduce(scaled)) if len(scaled) else 0
            units = units or 10**scale
            step = Decimal(units).scaleb(-scale).normalize()
        else:
            units = int(step.scaleb(scale))
        off = scaled % units != 0
        return scaled // units, step, off

    def _where(self, i: int, sources: Sequence[Source], column: str | None) -> str:
        return sources[int(self.source[i])].where(int(self.row[i]), column)

    def fail_at(
        self, mask: np.ndarray, sources: Sequence[Source], message: str, column: str | None = None
    ) -> None:
        """Raise a `FeedError` at the first value where ``mask`` holds: '<where>: <message>'
        with {value} replaced by its text."""
        if mask.any():
            i = int(np.argmax(mask))
            where = self._where(i, sources, column)
            raise FeedError(f"{where}: {message.format(value=self.text(i))}")


class Steps(NamedTuple):
    """A recording's prices and quantities in whole steps: ``price`` (ticks) and ``qty``
    (lots), int64; the ``tick`` and ``lot``; ``off_grid``, the prices not on the tick's grid
    (quotes a reader drops: no order of the instrument can rest there)."""

    price: np.ndarray
    qty: np.ndarray
    tick: Decimal
    lot: Decimal
    off_grid: np.ndarray


def to_steps(
    prices: Decimals,
    quantities: Decimals,
    traded: np.ndarray,
    tick: Decimal | None,
    lot: Decimal | None,
    sources: Sequence[Source],
    columns: tuple[str | None, str | None] = (None, None),
) -> Steps:
    """``prices`` and ``quantities`` in ticks and lots (given, or inferred: see
    `Decimals.steps`). A quantity that is not a whole number of lots or more than an order of
    the book holds (`MAX_LOTS`), or a trade (where ``traded`` holds) whose price or quantity
    is not positive or whose price is off the tick's grid, is a `FeedError` naming its file,
    line and column (``columns``: of the prices, of the quantities)."""
    price_column, qty_column = columns
    price, tick, off_grid = prices.steps(tick, "price", sources, price_column)
    qty, lot, off_lot = quantities.steps(lot, "quantity", sources, qty_column)
    quantities.fail_at(
        off_lot, sources, f"quantity {{value}} is not a multiple of the lot {lot}", qty_column
    )
    quantities.fail_at(
        qty > MAX_LOTS,
        sources,
        f"quantity {{value}} is more than {MAX_LOTS:,} lots of {lot}, the most one order of "
        "the book holds (give a larger --lot)",
        qty_column,
    )
    prices.fail_at(
        traded & (price <= 0), sources, "trade price {value} is not positive", price_column
    )
    quantities.fail_at(
        traded & (qty <= 0), sources, "trade quantity {value} is not positive", qty_column
    )
    prices.fail_at(
        traded & off_grid,
        sources,
        f"trade price {{value}} is not a multiple of the tick {tick}",
        price_column,
    )
    return Steps(price, qty, tick, lot, off_grid)
