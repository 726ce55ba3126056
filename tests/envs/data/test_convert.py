"""`tradearena data convert` and converted tapes in the product: the command's files and
summary, one-line errors that write nothing, `data check` on its output, `load_tape` on a
directory, a message file or a recording, and markets replaying a converted day (lots, the
opening price, sessions equal whether the recording is converted first or on the fly)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from recordings import at, depth, snapshot, trade, write

from tradearena.envs.data.convert import convert, write_converted
from tradearena.envs.data.files import FeedError
from tradearena.envs.data.load import load_tape
from tradearena.envs.data.tapes import TapeError
from tradearena.envs.spec import MarketSpec, SpecError
from tradearena.envs.trading_env import TradingEnv
from tradearena.evaluation.cli.main import main
from tradearena.evaluation.experiment.config import load_config


@pytest.fixture(scope="module")
def recording(tmp_path_factory) -> Path:
    """Two minutes of a book around 100.00 (tick 0.01, lot 0.001), one update and one trade
    a second."""
    lines = [snapshot(at(3_600), 1, [("100.00", "2.000")], [("100.02", "2.000")])]
    for k in range(120):
        t, bid, ask = 3_600 + 1 + k, f"{100 + k % 3 / 100:.2f}", f"{100.05 + k % 4 / 100:.2f}"
        lines.append(depth(at(t), 1_000 * k, 2 + k, 2 + k, [(bid, "1.500")], [(ask, "0.750")]))
        lines.append(trade(at(t + 0.5), 1_000 * k + 500, bid, "0.001", True))
    return write(tmp_path_factory.mktemp("rec") / "feed.txt", lines)


def test_convert_writes_the_tape_and_says_what_it_counted(recording, tmp_path, capsys):
    out = tmp_path / "tape"
    assert main(["data", "convert", "binance", str(recording), "--out", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    meta = json.loads((out / "meta.json").read_text())
    assert printed[0].startswith(f"binance BTCUSDT 2024-08-08: {meta['messages']:,} messages")
    assert "tick 0.01, lot 0.001" in printed[0]
    assert printed[1] == f"  wrote {out / 'message.csv'}, {out / 'orderbook.csv'} (10 levels), " + (
        f"{out / 'meta.json'}"
    )
    assert "depth_updates 120, depth_updates_applied 120" in printed[2]
    assert len((out / "orderbook.csv").read_text().splitlines()) == meta["messages"]

    assert main(["data", "check", str(out / "message.csv"), str(out / "orderbook.csv")]) == 0
    checked = capsys.readouterr().out
    assert "tick 0.01, lot 0.001; valid" in checked
    assert checked.count(": 1.0000 (") == 2  # both fidelities


def test_a_bad_recording_is_one_line_and_writes_nothing(recording, tmp_path, capsys):
    bad = write(tmp_path / "bad.txt", [*recording.read_text().splitlines()[:3], "1 {]"])
    out = tmp_path / "never"
    assert main(["data", "convert", "binance", str(bad), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"tradearena: error: {bad}, line 4: not valid JSON")
    assert not out.exists()
    assert main(["data", "convert", "binance", str(recording), "--out", str(out), "--tick", "x"])
    assert "tick must be a decimal number, got 'x'" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.filterwarnings("ignore::tradearena.envs.data.load.ThinTape")  # a short tape
def test_load_tape_takes_a_directory_a_message_file_or_a_recording(recording, tmp_path):
    conversion = convert("binance", [recording])
    message_file = write_converted(conversion, tmp_path / "tape")
    tapes = [
        load_tape(tmp_path / "tape"),
        load_tape(message_file),
        load_tape(recording, format="binance"),
        load_tape(recording.parent, format="binance"),  # a directory of the recording's files
    ]
    for tape in tapes:
        assert np.array_equal(tape.messages, conversion.tape.messages)
        assert np.array_equal(tape.book, conversion.tape.book)
        assert (tape.tick_size, tape.lot_size, tape.complete) == (0.01, 0.001, True)
    with pytest.raises(FeedError, match="unknown tape format 'csv'"):
        load_tape(recording, format="csv")
    with pytest.raises(SpecError, match="tape_format: must be one of"):
        MarketSpec(tape=str(recording), tape_format="csv")


@pytest.mark.filterwarnings("ignore::tradearena.envs.data.load.ThinTape")  # a short tape
def test_a_market_on_a_converted_day_counts_lots_and_opens_at_the_first_mid(recording, tmp_path):
    write_converted(convert("binance", [recording]), tmp_path / "tape")
    market = MarketSpec(tape=str(tmp_path / "tape"), task="making", order_size=1).market(1)
    assert market.tick_size == pytest.approx(0.01 * 0.001)  # dollars per tick of one lot
    assert market.initial_price == 10_001  # (100.02 + 100.00) / 2 in ticks, rounded down
    assert market.open_time == 3_600.0 and market.n_steps == 3  # 3,600.0 s to 3,721.5 s


@pytest.mark.filterwarnings("ignore::tradearena.envs.data.load.ThinTape")  # a short tape
def test_sessions_are_the_same_converted_first_or_on_the_fly(recording, tmp_path):
    write_converted(convert("binance", [recording]), tmp_path / "tape")
    runs = []
    for tape, tape_format in ((str(tmp_path / "tape"), "lobster"), (str(recording), "binance")):
        env = TradingEnv(tape=tape, tape_format=tape_format, step_seconds=10.0, order_size=100)
        env.reset(seed=3)
        runs.append([env.step(action)[1] for action in [2, 1, 1, 0, 1, 2, 2, 1, 0, 1, 1, 0]])
    assert runs[0] == runs[1]
    assert any(r != 0 for r in runs[0])  # the seat bought and sold 100 lots at market


@pytest.mark.filterwarnings("ignore::tradearena.envs.data.load.ThinTape")  # a short tape
def test_the_crypto_config_replays_a_converted_recording(recording, tmp_path, monkeypatch):
    """configs/crypto_btc.toml, its tape given by $BTC_MESSAGES, loads and builds its market."""
    write_converted(convert("binance", [recording]), tmp_path / "btcusdt")
    monkeypatch.setenv("BTC_MESSAGES", str(tmp_path / "btcusdt" / "message.csv"))
    config = Path(__file__).resolve().parents[3] / "configs" / "crypto_btc.toml"
    spec = load_config(config).market
    assert (spec.task, spec.queue, spec.order_size) == ("making", "power", 1000)
    market = spec.market(1)
    market.reset(0)
    assert market.traders[0].replayer.queue == ("power", 2.0)
    assert market.step_seconds == 10.0 and market.n_steps == 12


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, "{not json"])
def test_a_converted_tapes_meta_that_is_no_json_is_named(recording, tmp_path, text):
    """A converted directory whose meta.json is no JSON, or JSON nested too deep to read (a
    RecursionError traceback before): one TapeError naming the file."""
    out = tmp_path / "tape"
    write_converted(convert("binance", [recording]), out)
    (out / "meta.json").write_text(text)
    with pytest.raises(TapeError, match=rf"^{re.escape(str(out / 'meta.json'))}: not JSON \("):
        load_tape(out)
