"""The compiled top of the book (`envs.simulator.book.top_levels`) against its plain-Python
reference (`envs.simulator.recording.book_snapshots`): equal to the bit on recorded days of both
populations and on messages written by hand."""

import numpy as np
import pytest

from tradearena.envs.data.tapes import EMPTY_ASK, EMPTY_BID, MESSAGE_DTYPE
from tradearena.envs.simulator.book import top_levels
from tradearena.envs.simulator.recording import book_snapshots, synthetic_tape
from tradearena.envs.simulator.traders import light, rmsc04

E_ASK, E_BID = EMPTY_ASK, EMPTY_BID


def messages(*rows: tuple) -> np.ndarray:
    """(type, order id, size, price, direction) rows as a MESSAGE_DTYPE array, 1 s apart."""
    return np.array([(float(i), *row) for i, row in enumerate(rows)], dtype=MESSAGE_DTYPE)


@pytest.mark.parametrize(("population", "seed"), [(light, 0), (light, 5), (rmsc04, 1)])
def test_top_levels_equal_the_reference_on_recorded_days(population, seed):
    """A full recorded day (390 steps) of each population: every row, at 1 and 5 levels."""
    tape = synthetic_tape(seed, traders=population(), levels=5, n_steps=390)
    assert len(tape.messages) > 1_000
    for levels in (1, 5):
        compiled = top_levels(tape.messages, levels)
        assert compiled.dtype == np.int64 and compiled.shape == (len(tape.messages), 4 * levels)
        assert np.array_equal(compiled, book_snapshots(tape.messages, levels))
    assert np.array_equal(top_levels(tape.messages, 5), tape.book)


def test_top_levels_by_hand():
    """Empty sides, a level that fills up and empties, partial cancels, executions, a new
    order that crosses (it trades, as the reference's book does), and types that touch no
    order (5: hidden execution, 7: halt): rows computed by hand, two levels a side."""
    tape = messages(
        (1, 1, 100, 1_000, 1),  # bid 100 @ 1000; no ask
        (1, 2, 50, 1_010, -1),  # ask 50 @ 1010
        (1, 3, 30, 999, 1),  # second bid level
        (2, 1, 40, 1_000, 1),  # partial cancel: bid 60 @ 1000
        (4, 2, 20, 1_010, -1),  # execution: ask 30 @ 1010
        (5, 0, 7, 1_005, 1),  # hidden execution: nothing rests
        (1, 4, 10, 1_000, 1),  # joins the best bid: 70 @ 1000
        (3, 1, 60, 1_000, 1),  # delete: 10 @ 1000 left
        (4, 2, 30, 1_010, -1),  # the ask fills: no ask
        (1, 5, 25, 998, -1),  # a sell that crosses: takes 10 @ 1000 and 15 @ 999
        (7, 0, 0, -1, 0),  # halt
        (3, 3, 15, 999, 1),  # the rest of the bids: both sides empty
    )
    # per level, as Tape.book: ask price, ask size, bid price, bid size
    expected = np.array(
        [
            [E_ASK, 0, 1_000, 100, E_ASK, 0, E_BID, 0],
            [1_010, 50, 1_000, 100, E_ASK, 0, E_BID, 0],
            [1_010, 50, 1_000, 100, E_ASK, 0, 999, 30],
            [1_010, 50, 1_000, 60, E_ASK, 0, 999, 30],
            [1_010, 30, 1_000, 60, E_ASK, 0, 999, 30],
            [1_010, 30, 1_000, 60, E_ASK, 0, 999, 30],
            [1_010, 30, 1_000, 70, E_ASK, 0, 999, 30],
            [1_010, 30, 1_000, 10, E_ASK, 0, 999, 30],
            [E_ASK, 0, 1_000, 10, E_ASK, 0, 999, 30],
            [E_ASK, 0, 999, 15, E_ASK, 0, E_BID, 0],
            [E_ASK, 0, 999, 15, E_ASK, 0, E_BID, 0],
            [E_ASK, 0, E_BID, 0, E_ASK, 0, E_BID, 0],
        ],
        dtype=np.int64,
    )
    assert np.array_equal(top_levels(tape, 2), expected)
    assert np.array_equal(book_snapshots(tape, 2), expected)


def test_top_levels_with_no_messages_or_no_levels():
    """No messages: no rows; no levels: empty rows, one per message."""
    none = messages()
    assert top_levels(none, 3).shape == book_snapshots(none, 3).shape == (0, 12)
    one = messages((1, 1, 5, 100, 1))
    assert top_levels(one, 0).shape == book_snapshots(one, 0).shape == (1, 0)


def test_top_levels_refuses_what_the_reference_refuses():
    """An order id no new message named, and a new order of no shares, raise in both."""
    unknown = messages((1, 1, 5, 100, 1), (3, 9, 5, 100, 1))
    for build in (top_levels, book_snapshots):
        with pytest.raises(KeyError):
            build(unknown, 1)
        with pytest.raises(ValueError, match="qty must be"):
            build(messages((1, 1, 0, 100, 1)), 1)
