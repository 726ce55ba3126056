"""Tests for tradearena.envs.data.tapes: LOBSTER round trips, the initial book, bad files and time
slicing.

Fixtures are small tapes built here and written to tmp_path; no real market data is used.
"""

import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tradearena.envs.data.tapes import (
    EMPTY_ASK,
    EMPTY_BID,
    MESSAGE_DTYPE,
    Tape,
    TapeError,
    load_lobster,
    write_lobster,
)

Levels = list[tuple[int, int]]


def book_row(bids: Levels, asks: Levels, levels: int = 2) -> list[int]:
    """One order-book row (ask price, ask size, bid price, bid size per level), padded with
    empty levels."""
    asks = asks + [(EMPTY_ASK, 0)] * (levels - len(asks))
    bids = bids + [(EMPTY_BID, 0)] * (levels - len(bids))
    return [x for (ap, aq), (bp, bq) in zip(asks, bids, strict=True) for x in (ap, aq, bp, bq)]


def make_tape(messages: list[tuple], book: list[list[int]] | None, tick_size: float = 0.01) -> Tape:
    array = np.array(messages, dtype=MESSAGE_DTYPE)
    return Tape(array, None if book is None else np.array(book, np.int64), tick_size)


def assert_same(loaded: Tape, expected: Tape) -> None:
    """Exact equality of the arrays (values and dtypes) and tick size."""
    assert loaded.messages.dtype == MESSAGE_DTYPE
    assert loaded.messages.tolist() == expected.messages.tolist()
    if expected.book is None:
        assert loaded.book is None
    else:
        assert loaded.book.dtype == np.int64
        assert loaded.book.tolist() == expected.book.tolist()
    assert loaded.tick_size == expected.tick_size


# ------------------------------------------------------------------------------ round trips
SAMPLE = make_tape(
    [
        (34200.000000001, 1, 11885113, 21, 22381, 1),
        (34200.190226476, 4, 11885113, 21, 22381, 1),
        (34200.190226476, 5, 0, 100, 22384, -1),
        (34201.5, 3, 11534792, 26, 22375, 1),
        (36023.0, 7, 0, 0, -1, -1),
        (36323.0, 7, 0, 0, 0, -1),
        (36723.123456789, 7, 0, 0, 1, -1),
        (57599.959359650, 2, 11534793, 10, 22395, -1),
    ],
    [
        book_row([(22381, 21), (22375, 26)], [(22395, 100)]),
        book_row([(22375, 26)], [(22395, 100)]),
        book_row([(22375, 26)], [(22395, 100)]),
        book_row([], [(22395, 100)]),
        book_row([], [(22395, 100)]),
        book_row([], [(22395, 100)]),
        book_row([], [(22395, 100)]),
        book_row([(22370, 5)], [(22395, 90), (22396, 300)]),
    ],
)


@pytest.mark.parametrize("tick_size", [0.01, 0.0001, 0.05, 1.0])
def test_round_trip_with_book(tmp_path: Path, tick_size: float) -> None:
    tape = Tape(SAMPLE.messages, SAMPLE.book, tick_size)
    write_lobster(tape, tmp_path / "m.csv", tmp_path / "b.csv")
    loaded = load_lobster(tmp_path / "m.csv", tmp_path / "b.csv", tick_size=tick_size)
    assert_same(loaded, tape)
    assert loaded.source == str(tmp_path / "m.csv")
    assert len(loaded) == 8 and loaded.levels == 2


def test_round_trip_messages_only(tmp_path: Path) -> None:
    tape = Tape(SAMPLE.messages, None)
    write_lobster(tape, tmp_path / "m.csv")
    loaded = load_lobster(tmp_path / "m.csv")
    assert_same(loaded, tape)
    assert loaded.levels == 0 and loaded.initial_book() == ([], [])


def test_written_text_is_lobster_format(tmp_path: Path) -> None:
    """Prices as dollars x 10000, halt codes and dummy prices as LOBSTER writes them."""
    tape = make_tape(
        [(34200.5, 1, 7, 100, 22381, 1), (36023.0, 7, 0, 0, -1, -1)],
        [book_row([(22381, 100)], []), book_row([(22381, 100)], [])],
    )
    write_lobster(tape, tmp_path / "m.csv", tmp_path / "b.csv")
    assert (tmp_path / "m.csv").read_text() == "34200.5,1,7,100,2238100,1\n36023.0,7,0,0,-1,-1\n"
    assert (tmp_path / "b.csv").read_text() == 2 * (
        "9999999999,0,2238100,100,9999999999,0,-9999999999,0\n"
    )


def test_write_book_without_book_fails(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no order book"):
        write_lobster(Tape(SAMPLE.messages, None), tmp_path / "m.csv", tmp_path / "b.csv")


@st.composite
def tapes(draw: st.DrawFn) -> Tape:
    n = draw(st.integers(1, 30))
    levels = draw(st.integers(1, 3))
    times = sorted(draw(st.lists(st.floats(0, 86_400), min_size=n, max_size=n)))
    messages = []
    for time in times:
        kind = draw(st.integers(1, 7))
        if kind == 7:
            messages.append((time, 7, 0, 0, draw(st.sampled_from([-1, 0, 1])), -1))
        else:
            order_id = draw(st.integers(0, 2**40))
            size, price = draw(st.integers(1, 10**6)), draw(st.integers(1, 10**7))
            messages.append((time, kind, order_id, size, price, draw(st.sampled_from([-1, 1]))))
    level = st.one_of(st.none(), st.tuples(st.integers(1, 10**7), st.integers(1, 10**6)))
    book = []
    for _ in range(n):
        row = []
        for _ in range(levels):
            ask, bid = draw(level), draw(level)
            row += [EMPTY_ASK, 0] if ask is None else list(ask)
            row += [EMPTY_BID, 0] if bid is None else list(bid)
        book.append(row)
    tick_size = draw(st.sampled_from([0.0001, 0.01, 0.05, 0.25]))
    return make_tape(messages, book, tick_size)


@settings(max_examples=60, deadline=None)
@given(tapes())
def test_round_trip_property(tape: Tape) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        messages, book = Path(tmp, "m.csv"), Path(tmp, "b.csv")
        write_lobster(tape, messages, book)
        assert_same(load_lobster(messages, book, tick_size=tape.tick_size), tape)


def test_hidden_executions_between_ticks_round_down(tmp_path: Path) -> None:
    """A hidden order can execute at the midpoint: accepted, price rounded down to a tick."""
    (tmp_path / "m.csv").write_text("34200.1,5,0,100,2238150,-1\n34200.2,6,0,10,2238199,1\n")
    assert load_lobster(tmp_path / "m.csv").messages["price"].tolist() == [22381, 22381]


# ----------------------------------------------------------------------------- initial book
PRE_BIDS = [(10008, 100), (10007, 400)]
PRE_ASKS = [(10010, 300), (10011, 200)]


@pytest.mark.parametrize(
    ("message", "bids_after", "asks_after", "bids_before", "asks_before"),
    [
        pytest.param(
            (1, 50, 10008, 1),
            [(10008, 150), (10007, 400)],
            PRE_ASKS,
            PRE_BIDS,
            PRE_ASKS,
            id="new-joins-level",
        ),
        pytest.param(
            (1, 70, 10009, -1),
            PRE_BIDS,
            [(10009, 70), (10010, 300)],
            PRE_BIDS,
            [(10010, 300)],  # the level the new one pushed out of the row is unknown
            id="new-opens-level",
        ),
        pytest.param(
            (1, 10, 10005, 1), PRE_BIDS, PRE_ASKS, PRE_BIDS, PRE_ASKS, id="new-beyond-row"
        ),
        pytest.param(
            (2, 100, 10010, -1),
            PRE_BIDS,
            [(10010, 200), (10011, 200)],
            PRE_BIDS,
            PRE_ASKS,
            id="partial-cancel",
        ),
        pytest.param(
            (3, 100, 10008, 1),
            [(10007, 400), (10006, 250)],  # a deeper level moved into the row
            PRE_ASKS,
            PRE_BIDS,
            PRE_ASKS,
            id="delete-best-level",
        ),
        pytest.param(
            (3, 400, 10007, 1),
            [(10008, 100)],
            PRE_ASKS,
            PRE_BIDS,
            PRE_ASKS,
            id="delete-into-empty-slot",
        ),
        pytest.param(
            (4, 300, 10010, -1),
            PRE_BIDS,
            [(10011, 200)],
            PRE_BIDS,
            PRE_ASKS,
            id="execute-resting-sell",
        ),
        pytest.param(
            (4, 60, 10008, 1),
            [(10008, 40), (10007, 400)],
            PRE_ASKS,
            PRE_BIDS,
            PRE_ASKS,
            id="execute-resting-buy",
        ),
        pytest.param(
            (5, 20, 10009, -1), PRE_BIDS, PRE_ASKS, PRE_BIDS, PRE_ASKS, id="hidden-execution"
        ),
        pytest.param((7, 0, -1, -1), PRE_BIDS, PRE_ASKS, PRE_BIDS, PRE_ASKS, id="halt"),
    ],
)
def test_initial_book(
    message: tuple[int, int, int, int],
    bids_after: Levels,
    asks_after: Levels,
    bids_before: Levels,
    asks_before: Levels,
) -> None:
    kind, size, price, direction = message
    tape = make_tape(
        [(34200.0, kind, 1, size, price, direction)], [book_row(bids_after, asks_after)]
    )
    assert tape.initial_book() == (bids_before, asks_before)


def test_initial_book_rejects_a_new_order_larger_than_its_level() -> None:
    tape = make_tape([(34200.0, 1, 1, 500, 10008, 1)], [book_row(PRE_BIDS, PRE_ASKS)])
    with pytest.raises(TapeError, match="memory: the first message adds 500 shares at 10008 ticks"):
        tape.initial_book()


# -------------------------------------------------------------------------------- bad files
MESSAGES = [
    "34200.1,1,1,100,1000000,1",
    "34200.2,1,2,50,1000100,-1",
    "34200.3,4,1,30,1000000,1",
    "34200.4,7,0,0,-1,-1",
]
BOOK = [
    "9999999999,0,1000000,100",
    "1000100,50,1000000,100",
    "1000100,50,1000000,70",
    "1000100,50,1000000,70",
]
Edit = Callable[[list[str]], list[str] | None]  # new lines of a file, or None: no file


def replace(line: int, text: str) -> Edit:
    return lambda lines: lines[: line - 1] + [text] + lines[line:]


def drop(line: int) -> Edit:
    return lambda lines: lines[: line - 1] + lines[line:]


def empty(lines: list[str]) -> list[str]:
    return []


def missing(lines: list[str]) -> None:
    return None


M, B = "msgs\\.csv", "book\\.csv"
BAD_FILES = [
    ("missing-file", "m", missing, rf"{M}: cannot read the file"),
    ("empty-messages", "m", empty, rf"{M}: the file is empty"),
    ("empty-book", "b", empty, rf"{B}: the file is empty"),
    ("too-many-columns", "m", replace(3, MESSAGES[2] + ",9"), rf"{M}, line 3: 7 columns, exp"),
    ("too-few-columns", "m", replace(3, "34200.3,4,1,30,1000000"), rf"{M}, line 3: 5 columns"),
    ("short-first-line", "m", replace(1, "34200.1,1,1,100,1000000"), rf"{M}, line 1: 5 colu"),
    ("blank-line", "m", replace(2, ""), rf"{M}, line 2: empty line"),
    (
        "not-a-number",
        "m",
        replace(2, "34200.2,1,2,50,abc,-1"),
        rf"{M}, line 2, column 5 \(price\): 'abc' is not a number",
    ),
    (
        "nan-time",
        "m",
        replace(4, "nan,7,0,0,-1,-1"),
        rf"{M}, line 4, column 1 \(time\): 'nan' is not a number",
    ),
    (
        "not-an-integer",
        "m",
        replace(2, "34200.2,1,2,2.5,1000100,-1"),
        rf"{M}, line 2, column 4 \(size\): '2.5' is not an integer",
    ),
    (
        "time-backwards",
        "m",
        replace(3, "34200.15,4,1,30,1000000,1"),
        rf"{M}, line 3, column 1 \(time\): time 34200.15 is earlier than 34200.2",
    ),
    (
        "zero-size",
        "m",
        replace(2, "34200.2,1,2,0,1000100,-1"),
        rf"{M}, line 2, column 4 \(size\): size 0 is not a positive number",
    ),
    (
        "negative-size",
        "m",
        replace(3, "34200.3,4,1,-30,1000000,1"),
        rf"{M}, line 3, column 4 \(size\): size -30 is not a positive number",
    ),
    (
        "negative-first-time",
        "m",
        replace(1, "-1.5,1,1,100,1000000,1"),
        rf"{M}, line 1, column 1 \(time\): time -1.5 is negative \(seconds after midnight\)",
    ),
    (
        "a time of 1e16 s",
        "m",
        replace(1, "1e16,1,1,100,1000000,1"),
        rf"{M}, line 1, column 1 \(time\): time 1e\+16 is more than a week \(604,800 s\) after "
        "midnight",
    ),
    (
        "size-above-2**53-1",
        "m",
        replace(2, f"34200.2,1,2,{2**53},1000100,-1"),
        rf"{M}, line 2, column 4 \(size\): size {2**53} is more than 9,007,199,254,740,991",
    ),
    (
        "book-size-above-2**53-1",
        "b",
        replace(2, f"1000100,{2**53},1000000,100"),
        rf"{B}, line 2, column 2 \(ask_size_1\): size {2**53} is more than",
    ),
    (
        "unknown-type",
        "m",
        replace(2, "34200.2,8,2,50,1000100,-1"),
        rf"{M}, line 2, column 2 \(type\): unknown event type 8",
    ),
    (
        "type-zero",
        "m",
        replace(1, "34200.1,0,1,100,1000000,1"),
        rf"{M}, line 1, column 2 \(type\): unknown event type 0",
    ),
    (
        "bad-direction",
        "m",
        replace(2, "34200.2,1,2,50,1000100,0"),
        rf"{M}, line 2, column 6 \(direction\): direction 0 is not 1 \(buy\) or -1 \(sell\)",
    ),
    (
        "price-off-tick",
        "m",
        replace(2, "34200.2,1,2,50,1000150,-1"),
        rf"{M}, line 2, column 5 \(price\): price 1000150 is not a multiple of the tick \(100 ",
    ),
    (
        "price-not-positive",
        "m",
        replace(3, "34200.3,4,1,30,-100,1"),
        rf"{M}, line 3, column 5 \(price\): price -100 is not positive",
    ),
    (
        "book-not-a-number",
        "b",
        replace(3, "1000100,x,1000000,70"),
        rf"{B}, line 3, column 2 \(ask_size_1\): 'x' is not a number",
    ),
    (
        "book-columns-not-4-per-level",
        "b",
        replace(1, BOOK[0] + ",1"),
        rf"{B}, line 1: 5 columns, but an order-book file has 4 per level",
    ),
    (
        "book-ragged",
        "b",
        replace(3, BOOK[2] + "," + BOOK[2]),
        rf"{B}, line 3: 8 columns, expected 4 as on line 1",
    ),
    (
        "book-negative-size",
        "b",
        replace(2, "1000100,-50,1000000,100"),
        rf"{B}, line 2, column 2 \(ask_size_1\): size -50 is negative",
    ),
    (
        "book-price-off-tick",
        "b",
        replace(2, "1000100,50,1000001,100"),
        rf"{B}, line 2, column 3 \(bid_price_1\): price 1000001 is not a multiple of the tick",
    ),
    (
        "book-dummy-with-size",
        "b",
        replace(1, "9999999999,5,1000000,100"),
        rf"{B}, line 1, column 2 \(ask_size_1\): size 5 at an empty level",
    ),
    (
        "book-too-short",
        "b",
        drop(4),
        rf"{M} has 4 lines but .*{B} has 3: .*\(line 4 of .*{M} has no counterpart\)",
    ),
    (
        "book-too-long",
        "b",
        lambda lines: lines + [BOOK[3]],
        rf"{M} has 4 lines but .*{B} has 5: .*\(line 5 of .*{B} has no counterpart\)",
    ),
]


@pytest.mark.parametrize(
    ("target", "edit", "pattern"),
    [pytest.param(*case[1:], id=case[0]) for case in BAD_FILES],
)
def test_bad_files(tmp_path: Path, target: str, edit: Edit, pattern: str) -> None:
    """Each file differs from a good pair by one edit; the error names file, line and column."""
    paths = {"m": tmp_path / "msgs.csv", "b": tmp_path / "book.csv"}
    for key, lines in (("m", MESSAGES), ("b", BOOK)):
        if key == target:
            lines = edit(lines)
        if lines is not None:
            paths[key].write_text("".join(line + "\n" for line in lines))
    with pytest.raises(TapeError, match=pattern):
        load_lobster(paths["m"], paths["b"])


def test_good_fixture_loads(tmp_path: Path) -> None:
    """The pair the bad-file cases start from is valid; halt prices are kept as codes."""
    (tmp_path / "msgs.csv").write_text("\n".join(MESSAGES) + "\n")
    (tmp_path / "book.csv").write_text("\n".join(BOOK) + "\n")
    tape = load_lobster(tmp_path / "msgs.csv", tmp_path / "book.csv")
    assert tape.messages["price"].tolist() == [10000, 10001, 10000, -1]
    assert tape.book[0].tolist() == [EMPTY_ASK, 0, 10000, 100]


@pytest.mark.parametrize("tick_size", [0, -0.01, 0.00005, 0.012345])
def test_bad_tick_size(tmp_path: Path, tick_size: float) -> None:
    with pytest.raises(ValueError, match="tick_size must be a positive multiple of"):
        load_lobster(tmp_path / "msgs.csv", tick_size=tick_size)


def test_tape_checks_array_shapes() -> None:
    with pytest.raises(ValueError, match="messages must be a 1-D MESSAGE_DTYPE array"):
        Tape(np.zeros(3), None)
    with pytest.raises(ValueError, match=r"book must be an int64 array of shape \(8, 4 \* levels"):
        Tape(SAMPLE.messages, np.zeros((8, 6), np.int64))


# -------------------------------------------------------------------------------- time slice
@pytest.fixture
def five_messages(tmp_path: Path) -> tuple[Tape, Path, Path]:
    """Times 1, 2, 2, 3, 4; message i is a buy of 10 + i at 100 + i, alone in book row i."""
    times = [1.0, 2.0, 2.0, 3.0, 4.0]
    tape = make_tape(
        [(t, 1, i, 10 + i, 100 + i, 1) for i, t in enumerate(times)],
        [book_row([(100 + i, 10 + i)], []) for i in range(5)],
    )
    write_lobster(tape, tmp_path / "m.csv", tmp_path / "b.csv")
    return tape, tmp_path / "m.csv", tmp_path / "b.csv"


@pytest.mark.parametrize(
    ("start", "end", "rows"),
    [(2.0, 4.0, [1, 2, 3]), (None, 2.0, [0]), (3.5, None, [4]), (1.0, 4.5, [0, 1, 2, 3, 4])],
)
def test_start_end_slice(
    five_messages: tuple[Tape, Path, Path], start: float | None, end: float | None, rows: list
) -> None:
    """start <= time < end keeps the messages and their book rows."""
    tape, messages, book = five_messages
    loaded = load_lobster(messages, book, start=start, end=end)
    assert loaded.messages.tolist() == tape.messages[rows].tolist()
    assert loaded.book.tolist() == tape.book[rows].tolist()
    assert loaded.initial_book() == ([], [])  # before the first kept order, its level was empty


def test_empty_slice_fails(five_messages: tuple[Tape, Path, Path]) -> None:
    _, messages, book = five_messages
    with pytest.raises(ValueError, match=r"no messages with 2.5 <= time < 3.0; .* 1.0 to 4.0"):
        load_lobster(messages, book, start=2.5, end=3.0)
