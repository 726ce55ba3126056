"""Known answers for the examples' own measures (`examples/trade_impact.py`)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from tradearena.envs.data.tapes import MESSAGE_DTYPE, Tape

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def example(name: str):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_market_order_and_the_quote_it_fills():
    """The book is 100 x 110 (mid 105) until a market order empties the bid at 10 s and the
    ask comes down to 106 (mid 101, 4 ticks against the side hit). The quote two ticks under
    the first minute's mid, at 103, is the one filled (once in three minutes: 20 an hour),
    and marked out at 101 - 103 = -2 ticks at every horizon."""
    rows = [
        (0.0, 1, 1, 300, 100, 1),
        (10.0, 4, 1, 300, 100, 1),  # the bid taken whole: 96 revealed
        (10.5, 1, 2, 10, 106, -1),  # the ask comes down
        (200.0, 1, 3, 5, 90, 1),
    ]
    book = [[110, 200, 100, 300], [110, 200, 96, 50], [106, 10, 96, 50], [106, 10, 96, 50]]
    tape = Tape(np.array(rows, MESSAGE_DTYPE), np.array(book, np.int64))
    trade_impact = example("trade_impact")
    assert trade_impact.impact(tape, 0.0) == (1, [-4.0, -4.0, -4.0])
    rate, marks = trade_impact.quote_markout(tape, 0.0, 200.0)
    assert rate == pytest.approx(20.0)
    assert marks == [-2.0, -2.0, -2.0]
