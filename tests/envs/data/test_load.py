"""`envs.data.load`: a tape too short to stand for a day is named with its counts, a
message file without its orderbook file is named with the file expected, and a LOBSTER day
named by both its files is one tape."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from tradearena.envs.data.load import (
    MIN_MINUTES,
    MIN_TRADES,
    PartialTape,
    ThinTape,
    load_tape,
    partial,
    thin,
    without_orderbooks,
)
from tradearena.envs.data.tapes import Event, Tape, write_lobster
from tradearena.envs.simulator.recording import synthetic_tape


def _trades(tape: Tape) -> int:
    kinds = tape.messages["type"]
    return int(((kinds == Event.EXECUTE) | (kinds == Event.EXECUTE_HIDDEN)).sum())


def test_a_tape_is_thin_below_its_trades_or_minutes():
    day = synthetic_tape(0, n_steps=60, levels=1)
    assert _trades(day) >= MIN_TRADES and thin(day) is None
    head = Tape(day.messages[:20].copy(), day.book[:20].copy(), day.tick_size, "head.csv")
    minutes = (head.messages["time"][-1] - head.messages["time"][0]) / 60
    assert thin(head) == (
        f"head.csv: {_trades(head)} trades over {minutes:.1f} minutes, too few to stand for a "
        "day (a session replaying it trades little, its facts are noise): at least "
        f"{MIN_TRADES} trades over {MIN_MINUTES} minutes"
    )


def test_loading_a_thin_tape_warns(tmp_path: Path):
    messages = tmp_path / "day_message_1.csv"
    write_lobster(
        synthetic_tape(0, n_steps=5, levels=1), messages, tmp_path / "day_orderbook_1.csv"
    )
    with pytest.warns(ThinTape, match="day_message_1.csv: .* too few to stand for a day"):
        load_tape(messages)
    day = tmp_path / "long_message_1.csv"
    write_lobster(synthetic_tape(0, n_steps=60, levels=1), day, tmp_path / "long_orderbook_1.csv")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_tape(day)


def test_an_orderbook_file_beside_its_message_file_is_left_out():
    day = ["d/X_message_1.csv", "d/X_orderbook_1.csv"]
    assert without_orderbooks(day) == ["d/X_message_1.csv"]
    assert without_orderbooks(day[::-1]) == ["d/X_message_1.csv"]
    assert without_orderbooks(["d/X_orderbook_1.csv"]) == ["d/X_orderbook_1.csv"]  # alone
    other = ["d/X_message_1.csv", "e/X_orderbook_1.csv", "run.toml"]
    assert without_orderbooks(other) == other


def test_a_message_file_without_its_orderbook_file_warns_naming_it(tmp_path: Path, capsys):
    from tradearena.evaluation.cli.main import main

    day = synthetic_tape(0, n_steps=60, levels=1)
    messages = tmp_path / "day_34200000_37800000_message_1.csv"
    write_lobster(day, messages, tmp_path / "kept_apart.csv")
    expected = tmp_path / "day_34200000_37800000_orderbook_1.csv"
    with pytest.warns(PartialTape, match=f"expected beside it: {expected}"):
        assert load_tape(messages).book is None
    assert partial(synthetic_tape(0, n_steps=5, levels=1)) is None  # a complete tape
    assert main(["data", "check", str(messages)]) == 0
    err = capsys.readouterr().err
    assert err.startswith("tradearena: warning: ") and err.count("\n") == 1
    assert "replayed from its messages alone" in err and "2.7% of messages" in err
    (tmp_path / "kept_apart.csv").rename(expected)  # beside it: found, replayed exactly
    with warnings.catch_warnings():
        warnings.simplefilter("error", PartialTape)
        assert load_tape(messages).book is not None
    assert main(["data", "check", str(messages)]) == 0
    assert "replay fidelity, with reconciliation: 1.0000" in capsys.readouterr().out
