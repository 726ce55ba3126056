"""Bad inputs given to the command, one table of them: tapes (`data check`), exchange
recordings (`data convert`), payoff tables (`games`) and experiment files (`run`). Each is
refused with exit status 2 and one line naming the file and the line or field at fault, and
leaves nothing behind: no output directory, no file beside the inputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tradearena.envs.data.tapes import write_lobster
from tradearena.envs.simulator.recording import synthetic_tape
from tradearena.evaluation.cli.main import main

MIDNIGHT_NS = 1_723_075_200 * 10**9


def lobster(folder: Path, message_row: int | None = None, book_row: int | None = None, **cells):
    """A recorded day's LOBSTER files in ``folder``, with ``cells`` (column index -> text)
    replaced on line ``message_row`` of the message file or ``book_row`` of the orderbook file
    (0-based)."""
    messages, book = folder / "day_message_1.csv", folder / "day_orderbook_1.csv"
    write_lobster(synthetic_tape(0, n_steps=5, levels=1), messages, book)
    for path, row in ((messages, message_row), (book, book_row)):
        if row is not None:
            lines = path.read_text().splitlines()
            fields = lines[row].split(",")
            for column, text in cells.items():
                fields[int(column.removeprefix("c"))] = text
            lines[row] = ",".join(fields)
            path.write_text("\n".join(lines) + "\n")
    return [str(messages), str(book)]


def binance(folder: Path, price: str = "100.00", qty: str = "0.001") -> list[str]:
    """A Binance recording: a snapshot, a depth update and a trade at ``price`` of ``qty``
    (line 3)."""
    snapshot = {"lastUpdateId": 1, "bids": [["99.99", "1.000"]], "asks": [["100.01", "1.000"]]}
    update = {"e": "depthUpdate", "E": 1_000, "s": "BTCUSDT", "U": 2, "u": 2}
    update |= {"b": [["99.98", "0.500"]], "a": []}
    trade = {"e": "trade", "E": 2_000, "s": "BTCUSDT", "t": 1, "p": price, "q": qty}
    trade |= {"T": 2_000, "m": True, "M": True}
    lines = [
        f"{MIDNIGHT_NS + 10**9} {json.dumps(snapshot)}",
        f"{MIDNIGHT_NS + 2 * 10**9} "
        + json.dumps({"stream": "btcusdt@depth@100ms", "data": update}),
        f"{MIDNIGHT_NS + 3 * 10**9} " + json.dumps({"stream": "btcusdt@trade", "data": trade}),
    ]
    path = folder / "feed.txt"
    path.write_text("\n".join(lines) + "\n")
    return [str(path)]


def payoffs(folder: Path, text: str | bytes) -> list[str]:
    path = folder / "payoffs.csv"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return [str(path)]


def experiment(folder: Path, data: bytes, *extra: str) -> list[str]:
    path = folder / "x.toml"
    path.write_bytes(data)
    return [str(path), "--executor", "local", *extra]


TINY = 'kind = "compare"\nname = "cafe"  # café\n[market]\npopulation = "light"\n'
TINY += 'n_steps = 15\n[[agents]]\nid = "hold"\n'

CASES = {
    "negative first time": (
        "data check",
        lambda d: lobster(d, message_row=0, c0="-1.5"),
        "day_message_1.csv, line 1, column 1 (time): time -1.5 is negative",
    ),
    "size above 2**53 - 1": (
        "data check",
        lambda d: lobster(d, message_row=1, c3=str(2**53)),
        f"day_message_1.csv, line 2, column 4 (size): size {2**53} is more than",
    ),
    "book size above 2**53 - 1": (
        "data check",
        lambda d: lobster(d, book_row=0, c1=str(2**53)),
        "day_orderbook_1.csv, line 1, column 2 (ask_size_1): size",
    ),
    "unknown event type": (
        "data check",
        lambda d: lobster(d, message_row=2, c1="9"),
        "day_message_1.csv, line 3, column 2 (type): unknown event type 9",
    ),
    "trade at price 0": (
        "data convert binance",
        lambda d: binance(d, price="0.00"),
        "feed.txt, line 3: trade price 0 is not positive",
    ),
    "trade of quantity 0": (
        "data convert binance",
        lambda d: binance(d, qty="0.000"),
        "feed.txt, line 3: trade quantity 0 is not positive",
    ),
    "one strategy": (
        "games",
        lambda d: payoffs(d, "n_a,u_a\n2,1.5\n"),
        "payoffs.csv: a game needs at least 2 strategies (n_<s> columns), got 1: ['a']",
    ),
    "missing profile": (
        "games",
        lambda d: payoffs(d, "n_a,n_b,u_a,u_b\n2,0,1.0,\n"),
        "payoffs.csv: equilibria need every profile of 2 players over ['a', 'b']; missing",
    ),
    "Latin-1 experiment file": (
        "run",
        lambda d: experiment(d, TINY.encode("latin-1")),
        "x.toml, line 2: the experiment file is not UTF-8 text",
    ),
    "UTF-16 experiment file": (
        "run",
        lambda d: experiment(d, TINY.encode("utf-16")),
        "x.toml, line 1: the experiment file is not UTF-8 text",
    ),
    "binary experiment file": (
        "run",
        lambda d: experiment(d, bytes(range(256))),  # a newline, then byte 0x80 on line 2
        "x.toml, line 2: the experiment file is not UTF-8 text",
    ),
    "LOBSTER's orderbook file given as the tape": (
        "response",
        lambda d: [lobster(d)[1], "tradearena/MarketMaking-v0"],
        "day_orderbook_1.csv: LOBSTER's orderbook file (the book after each message), not its "
        "messages: give the message file, day_message_1.csv,",
    ),
    "a market where the tape goes (response MARKET TAPE)": (
        "response",
        lambda d: [experiment(d, TINY.encode())[0], lobster(d)[0]],
        "x.toml: an experiment file (a market), not a tape: give a LOBSTER message file",
    ),
    "--set market=1": (
        "run",
        lambda d: experiment(d, TINY.encode(), "--set", "market=1"),
        "--set market=1: market: expected a table, got 1",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_input_is_one_line_and_leaves_nothing(case, tmp_path, capsys):
    command, make, message = CASES[case]
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    arguments = make(inputs)
    before = sorted(inputs.iterdir())
    out = tmp_path / "out"
    writes = [] if command == "data check" else ["--out", str(out)]
    assert main([*command.split(), *arguments, *writes]) == 2
    printed, err = capsys.readouterr()
    assert printed == ""
    assert err.count("\n") == 1 and err.startswith("tradearena: error: ")
    assert message in err
    assert not out.exists()
    assert sorted(inputs.iterdir()) == before
