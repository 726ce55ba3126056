"""`tradearena learn`: a day's flow learned and written as an experiment file that
the market, the command and Gymnasium read."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import tomllib
from dataclasses import asdict, replace
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from days import lobster_day  # tests/evaluation/days.py

from tradearena.envs.data.load import TapeIdentity, load_tape
from tradearena.envs.data.tapes import EMPTY_ASK, EMPTY_BID, write_lobster
from tradearena.envs.errors import UserError
from tradearena.envs.simulator.learned_flow.estimate import fit_events
from tradearena.envs.simulator.learned_flow.model import EventModel
from tradearena.envs.simulator.learned_flow.neural import NeuralModel
from tradearena.envs.simulator.learned_flow.parameters import LearnedFlowError
from tradearena.envs.simulator.recording import synthetic_tape
from tradearena.envs.simulator.traders import light
from tradearena.envs.spec import MarketSpec
from tradearena.evaluation.cli.main import main
from tradearena.evaluation.experiment.config import ConfigError, load_market
from tradearena.evaluation.market.fit import check_out
from tradearena.evaluation.market.learn import one_market
from tradearena.evaluation.market.sources import LearnedHours, hours_on, parse_source

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def learned(tmp_path_factory):
    """A light day of 200 minutes learned up to its 150th minute: (folder, output, model)."""
    folder = tmp_path_factory.mktemp("learned")
    day, tape = lobster_day(folder, "day", 200)
    until = float(tape.messages["time"][0]) + 150 * 60
    clock = f"{int(until // 3600):02d}:{int(until % 3600 // 60):02d}"
    out = folder / "out" / "learned.toml"
    assert main(["learn", str(day), "--until", clock, "--out", str(out)]) == 0
    return folder, out, EventModel.load(out.parent / "learned.flow.json"), until


def test_the_written_file_is_an_experiment_of_the_learned_market(learned):
    folder, out, model, until = learned
    text = out.read_text()
    assert "by `tradearena learn --model events`" in text and "events" in text.splitlines()[1]
    table = tomllib.loads(text)
    assert table["market"]["traders"] == [{"type": "LearnedFlow", "model": "learned.flow.json"}]
    assert model.meta["window"][1] == pytest.approx(until, abs=60)
    assert model.meta["events"] >= 3000


def test_the_learned_market_runs_from_its_file_and_through_gymnasium(learned, monkeypatch):
    folder, out, model, _ = learned
    monkeypatch.chdir(folder)  # the model's path is read relative to the experiment file
    spec = load_market(out)
    assert isinstance(spec, MarketSpec)
    market = spec.market(n_seats=1)
    market.reset(0)
    for _ in range(5):
        market.step()
    assert market.traders[0].sampler.events > 0
    env = gym.make("tradearena/MarketMaking-v0", market_spec=spec)
    obs, _ = env.reset(seed=1)
    for _ in range(3):
        obs, reward, *_ = env.step(env.action_space.sample())
    assert np.isfinite(reward)


def test_a_missing_model_file_is_named(tmp_path):
    (tmp_path / "m.toml").write_text(
        '[market]\ntraders = [{type = "LearnedFlow", model = "gone.flow.json"}]\n'
    )
    with pytest.raises(ConfigError, match=r"market\.traders\[0\]\.model.*gone\.flow\.json"):
        load_market(tmp_path / "m.toml")


def test_an_out_that_is_the_tape_or_not_a_market_file_is_refused_before_any_work(learned, capsys):
    """`learn` and `fit` refuse an --out that would replace the tape (or its orderbook file),
    that is no .toml file, or whose files a directory stands in the way of: one line, exit
    2, the tape unchanged and nothing written."""
    folder, *_ = learned
    day = folder / "day_message_1.csv"
    before = day.read_bytes()
    (folder / "in_the_way.flow.json").mkdir()
    cases = [
        (["learn", str(day), "--out", str(day)], "must be a .toml file"),
        (["learn", str(day), "--out", str(folder / "x.csv")], "must be a .toml file"),
        (["learn", str(day), "--out", str(folder / "in_the_way.toml")], "is in the way"),
        (["fit", str(day), "--out", str(day)], "must be a .toml file"),
    ]
    for argv, message in cases:
        files = set(folder.iterdir())
        assert main(argv) == 2
        error = capsys.readouterr().err.strip().splitlines()
        assert len(error) == 1 and message in error[0], error
        assert set(folder.iterdir()) == files
    assert day.read_bytes() == before
    tape = folder / "day.toml"  # a tape whose own name is a market file's
    with pytest.raises(UserError, match="a file of the tape"):
        check_out(tape, [str(tape)])


def test_a_failed_write_leaves_no_file(learned, tmp_path, monkeypatch):
    """The experiment file, the flow's parameters and their arrays appear together or not at
    all: a full disk while the arrays are written leaves none of them."""
    import errno

    _, _, model, _ = learned
    from tradearena.evaluation.market import learn

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(np, "savez", full)
    out = tmp_path / "m.toml"
    with pytest.raises(Exception, match="No space left"):
        learn.write_learned(out, model, {"task": "making"})
    assert list(tmp_path.iterdir()) == []


def test_a_bad_flow_file_is_blamed_on_its_trader(tmp_path, learned):
    """A flow file that cannot be used is named with its trader's field when the experiment
    file is read, before any agent is calibrated against its market."""
    _, out, model, _ = learned
    broken = model.save(tmp_path / "broken.flow.json")
    text = broken.read_text().replace('"start": ', '"start": NaN, "was": ')
    broken.write_text(text)
    trader = '{type = "LearnedFlow", model = "broken.flow.json"}'
    (tmp_path / "m.toml").write_text(f'[market]\ntask = "making"\ntraders = [{trader}]\n')
    blamed = r"market\.traders\[0\]\.model: .*broken\.flow\.json: start"
    with pytest.raises(ConfigError, match=blamed):
        load_market(tmp_path / "m.toml")


MARKET_FAULTS = {
    "another tick": ({}, "tick_size = 0.05", r"model: was learned at a tick of \$0\.01 a lot; "),
    "half a lot in the book": (
        {"book": lambda book: book + [0, 0.5, 0, 0]},
        "",
        r"model: .*m\.flow\.json: book must hold whole lots$",
    ),
    "a near-zero rate": (
        {"mu": lambda mu: mu * 1e-300},
        "",
        r"model: .*m\.flow\.json: mu and the profile give at most [\d.e-]+ events a second; "
        r"must be in \[0\.001, 100000\]$",
    ),
}
"""Learned markets whose faults show only when a session opens (or, where the file shows
them, when it is read): the arrays of its file changed, a line of the market, the refusal."""


@pytest.mark.parametrize("case", list(MARKET_FAULTS))
def test_a_learned_markets_fault_is_the_markets_not_a_seats(case, tmp_path, learned, capsys):
    """A learned market at another tick than its flow's, whose opening book holds half a lot,
    or whose rates are near zero, with the reference (calibrated in that market during the
    check) in a seat: `run` refuses it naming the market's trader, never the seat; exit 2,
    nothing written."""
    _, out, model, _ = learned
    changes, line, message = MARKET_FAULTS[case]
    model.save(tmp_path / "m.flow.json")
    with np.load(tmp_path / "m.flow.npz") as stored:
        arrays = {key: stored[key] for key in stored.files}
    np.savez(
        tmp_path / "m.flow.npz", **{k: changes.get(k, np.asarray)(v) for k, v in arrays.items()}
    )
    trader = '{type = "LearnedFlow", model = "m.flow.json"}'
    config = tmp_path / "m.toml"
    config.write_text(
        f'kind = "compare"\nseeds = 1\n[market]\ntask = "making"\nn_steps = 5\n{line}\n'
        f'traders = [{trader}]\n[[agents]]\nid = "avellaneda_stoikov"\n'
    )
    assert main(["run", str(config), "--dry-run"]) == 2
    _, err = capsys.readouterr()
    assert err.count("\n") == 1 and "agents[" not in err, err
    assert re.search(r"market\.traders\[0\]\." + message, err), err


def test_a_model_its_loader_would_refuse_is_not_written(learned, tmp_path):
    """`EventModel.save` (and so `learn`, which writes through it) of a model `check` refuses
    (rates of a burst tape's 4e7 events a second, say): a LearnedFlowError naming the file,
    and no file written."""
    _, _, model, _ = learned
    with pytest.raises(LearnedFlowError, match=r"m\.flow\.json: mu and the profile give at most"):
        replace(model, mu=model.mu * 1e6).save(tmp_path / "m.flow.json")
    assert list(tmp_path.iterdir()) == []


def test_the_judges_read_the_hours_learned_from_in_the_flow_file(learned):
    """`tradearena realism` and `transfer` judge a learned market beside the hours its flow
    file says it learned from: the window and the tape's name."""
    folder, out, model, until = learned
    hours = parse_source(str(out)).learned_hours
    assert (hours.first, hours.last) == tuple(model.meta["window"])
    assert [t.name for t in hours.tapes] == ["day_message_1.csv"]
    assert hours.last == pytest.approx(until, abs=60)


def test_several_days_are_learned_as_one_flow(learned, tmp_path, capsys):
    """`learn DAY1 DAY2`: one flow of both days' events (rates and profile pooled; no day
    excites the other), the header naming both; `--model neural` takes one tape."""
    folder, _, one, until = learned
    other, _ = lobster_day(tmp_path, "other", 200, seed=12)
    clock = f"{int(until // 3600):02d}:{int(until % 3600 // 60):02d}"
    out = tmp_path / "two.toml"
    days = [str(folder / "day_message_1.csv"), str(other)]
    assert main(["learn", *days, "--until", clock, "--out", str(out)]) == 0
    both = EventModel.load(tmp_path / "two.flow.json")
    names = [tape["name"] for tape in both.meta["tapes"]]
    assert names == ["day_message_1.csv", "other_message_1.csv"] and both.meta["days"] == 2
    assert both.meta["events"] > one.meta["events"] + 3000
    assert out.read_text().startswith(
        "# Order flow learned from 2 days (day_message_1.csv, other_message_1.csv) by "
    )
    capsys.readouterr()
    neural = ["learn", *days, "--model", "neural", "--out", str(tmp_path / "n.toml")]
    assert main(neural) == 2
    assert capsys.readouterr().err == (
        "tradearena: error: --model neural learns from one tape, got 2\n"
    )


AMZN = "AMZN_2012-06-2{}_34200000_57600000"
GOOG = "GOOG_2012-06-22_34200000_57600000"
PART = "AMZN_2012-06-21_34200000_45000000"


def scaled_day(folder, name: str, factor: int):
    """A light day whose prices are ``factor`` times the usual ones, as LOBSTER files."""
    tape = synthetic_tape(11, traders=light(), levels=1, n_steps=40, initial_price=10_000 * factor)
    messages = folder / f"{name}_message_1.csv"
    write_lobster(tape, messages, folder / f"{name}_orderbook_1.csv")
    return messages


def grid_day(folder, name: str):
    """A light day whose every price lies on a grid of 5 ticks (its book's too)."""
    tape = synthetic_tape(11, traders=light(), levels=1, n_steps=40)
    m, book = tape.messages.copy(), tape.book.copy()
    m["price"] = np.where(m["price"] > 0, m["price"] // 5 * 5, m["price"])
    for column, empty, side in ((0, EMPTY_ASK, -1), (2, EMPTY_BID, 1)):  # asks up, bids down
        prices = book[:, column]
        book[:, column] = np.where(prices == empty, empty, side * (side * prices // 5 * 5))
    messages = folder / f"{name}_message_1.csv"
    write_lobster(
        replace(tape, messages=m, book=book), messages, folder / f"{name}_orderbook_1.csv"
    )
    return messages


POOLS = {
    "one file twice": (lambda f: [f / "a_message_1.csv"] * 2, "are the same file"),
    "a copy": (lambda f: [f / "a_message_1.csv", f / "copy_message_1.csv"], "the same messages"),
    "two parts of one day": (
        lambda f: [
            f / f"{PART}_message_1.csv",
            f / f"{AMZN}_message_1.csv".format(1),
        ],
        "are the same day",
    ),
    "levels 1 and 5 of one morning": (
        lambda f: [f / f"{AMZN}_message_1.csv".format(1), f / f"{AMZN}_message_5.csv".format(1)],
        "are the same day",
    ),
    "two tickers": (
        lambda f: [
            f / f"{AMZN}_message_1.csv".format(1),
            f / f"{GOOG}_message_1.csv",
        ],
        "the days are of 2 tickers (AMZN, GOOG): learn from days of one market, or pass --mixed",
    ),
    "two depths": (
        lambda f: [f / f"{AMZN}_message_1.csv".format(1), f / f"{AMZN}_message_5.csv".format(2)],
        "the days hold books of 1 and 5 levels: learn from days",
    ),
    "another grid": (
        lambda f: [f / "a_message_1.csv", f / "grid_message_1.csv"],
        "the days quote on grids of 1 and 5 ticks: learn from days",
    ),
    "ten times the price": (
        lambda f: [f / "a_message_1.csv", f / "dear_message_1.csv"],
        "the days trade at prices 10.0 times apart (median",
    ),
}
"""Tapes that are not distinct days of one market: which files, and the refusal."""


@pytest.fixture(scope="module")
def pool_days(tmp_path_factory):
    """The days of `POOLS`, written once."""
    folder = tmp_path_factory.mktemp("pools")
    lobster_day(folder, "a", 40)
    for name in ("message", "orderbook"):
        shutil.copy(folder / f"a_{name}_1.csv", folder / f"copy_{name}_1.csv")
    lobster_day(folder, PART, 40, seed=3)
    for day, seed in ((1, 4), (2, 5)):
        for levels in (1, 5):
            lobster_day(folder, AMZN.format(day), 40, seed=seed + levels, levels=levels)
    lobster_day(folder, GOOG, 40, seed=6)
    scaled_day(folder, "dear", 10)
    grid_day(folder, "grid")
    return folder


@pytest.mark.parametrize("case", list(POOLS))
def test_days_that_are_not_one_markets_are_refused_before_the_fit(case, pool_days, capsys):
    """`learn DAY1 DAY2` of a file twice, a copy, two parts or two depths of one day, two
    tickers, two depths, another grid of prices or ten times the price: exit 2, one line
    saying which (and, where a user could mean it, how to pool them anyway), nothing
    written; `one_market` with ``mixed`` pools the days a user could mean."""
    tapes, message = POOLS[case]
    paths = [str(p) for p in tapes(pool_days)]
    out = pool_days / "out" / "pooled.toml"
    assert main(["learn", *paths, "--out", str(out)]) == 2
    _, err = capsys.readouterr()
    assert err.count("\n") == 1 and message in err, err
    assert not out.parent.exists()
    if "--mixed" in message:
        one_market(paths, [load_tape(p) for p in paths], mixed=True)


WINDOWS = {
    "after the tape": (["--from", "10:45"], "a", "has nothing between 10:45 and its close"),
    "before the tape": (["--until", "09:00"], "a", "has nothing between its open and 09:00"),
    "reversed": (["--from", "09:45", "--until", "09:40"], "a", "nothing between 09:45 and 09:40"),
    "one tape empty in it": (["--from", "09:55"], "short", "nothing between 09:55 and its close"),
}
"""Windows a day has no messages in: the arguments, the day named, the refusal."""


@pytest.mark.parametrize("case", list(WINDOWS))
def test_a_window_without_messages_is_one_line_in_times_of_day(case, pool_days, capsys):
    """`learn` with a window after the tape, before it, reversed, or empty in one of two
    tapes: exit 2, one line naming the tape, its session and the window in HH:MM, before
    any fit; nothing written."""
    arguments, named, message = WINDOWS[case]
    lobster_day(pool_days, "short", 20, seed=7)
    days = [str(pool_days / f"{name}_message_1.csv") for name in dict.fromkeys(["a", named])]
    out = pool_days / "windowed" / "w.toml"
    assert main(["learn", *days, *arguments, "--out", str(out)]) == 2
    _, err = capsys.readouterr()
    assert err.count("\n") == 1, err
    assert err.startswith(f"tradearena: error: {named}_message_1: its session (09:25") and (
        message in err
    ), err
    assert not out.parent.exists()


@pytest.mark.parametrize(
    ("start", "end", "message"),
    [
        (38_700.0, None, "no messages from 10:45 until 10:09:57"),
        (None, 32_400.0, "no messages from 09:25 until 09:00"),
        (35_100.0, 34_800.0, "no messages from 09:45 until 09:40"),
    ],
)
def test_fitting_a_window_without_messages_names_it_in_times_of_day(start, end, message):
    """`fit_events` on a window after the tape, before it or reversed: a LearnedFlowError
    naming the tape and the window in HH:MM (an IndexError before)."""
    tape = synthetic_tape(11, traders=light(), levels=1, n_steps=40)
    with pytest.raises(LearnedFlowError) as refused:
        fit_events(tape, start=start, end=end)
    assert str(refused.value) == (
        f"synthetic_tape(seed=11): {message} (it runs from 09:25 to 10:09:57)"
    )


def test_learning_a_burst_tape_writes_nothing_its_market_refuses(tmp_path, capsys):
    """A day whose messages come in bursts (every 30 s, microseconds apart) learns rates of
    millions of events a second, which its market's loader refuses: `learn` says so in one
    line naming the day and writes nothing (it wrote a market its own loader refused)."""
    tape = synthetic_tape(11, traders=light(), levels=1, n_steps=90)
    m = tape.messages.copy()
    m["time"] = np.maximum.accumulate(m["time"] // 30 * 30 + np.arange(len(m)) % 7 * 1e-6)
    day = tmp_path / "burst_message_1.csv"
    write_lobster(replace(tape, messages=m), day, tmp_path / "burst_orderbook_1.csv")
    out = tmp_path / "out" / "burst.toml"
    assert main(["learn", str(day), "--out", str(out)]) == 2
    err = capsys.readouterr().err.splitlines()[-1]
    assert err.startswith(
        "tradearena: error: the flow learned from burst_message_1.csv cannot run: mu and the "
        "profile give at most "
    ), err
    assert not out.parent.exists()


def test_a_read_only_out_is_found_before_the_fit(pool_days, monkeypatch, capsys):
    """`learn --out` into a folder that cannot be written (a read-only disk; here `os.access`
    says so): exit 2, one line naming it, and no fit run (it was found after the fit)."""
    folder = pool_days / "read_only"
    folder.mkdir(exist_ok=True)
    real = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: Path(path) != folder and real(path, mode))
    monkeypatch.setattr("tradearena.evaluation.market.learn.fit_events", pytest.fail)
    out = folder / "sub" / "m.toml"
    assert main(["learn", str(pool_days / "a_message_1.csv"), "--out", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"tradearena: error: cannot write {out}: {folder} is not a folder that can be written\n"
    )


def test_the_flow_names_its_tape_by_content_and_keeps_no_folder(learned):
    """The flow file names the day by its messages' digest (with its ticker and date when
    its name gives them) and its file's name: no folder of the machine that learned it."""
    folder, out, model, _ = learned
    text = (out.parent / "learned.flow.json").read_text()
    assert str(folder) not in text and json.loads(text)["version"] == 3
    tape = load_tape(folder / "day_message_1.csv")
    assert model.meta["tapes"] == [asdict(TapeIdentity.of(tape))]
    assert len(model.meta["tapes"][0]["digest"]) == 16 and "tape" not in model.meta
    lobster = TapeIdentity.of(
        replace(tape, source="/x/AMZN_2012-06-21_34200000_57600000_message_1.csv")
    )
    assert (lobster.ticker, lobster.date) == ("AMZN", "2012-06-21")


def test_a_renamed_and_moved_tape_is_the_tape_it_learned_from(learned, tmp_path):
    """The judges take the day under another name in another folder (the same messages) as
    the one the market learned from, and tell another day apart, naming both by content."""
    folder, out, *_ = learned
    moved = tmp_path / "elsewhere" / "amzn_morning_message_1.csv"
    moved.parent.mkdir()
    shutil.copy(folder / "day_message_1.csv", moved)
    shutil.copy(folder / "day_orderbook_1.csv", moved.parent / "amzn_morning_orderbook_1.csv")
    hours = parse_source(str(out)).learned_hours
    on = hours_on(hours, str(moved), given=False)
    assert isinstance(on, LearnedHours) and on.last == math.ceil(hours.last)
    other, _ = lobster_day(tmp_path, "other", 200, seed=12)
    digest = TapeIdentity.of(load_tape(other)).digest
    assert hours_on(hours, str(other), given=False) == (
        f"it learned from day_message_1.csv (messages {hours.tapes[0].digest}), not from "
        f"other_message_1.csv (messages {digest})"
    )


def test_a_flow_file_of_format_2_still_loads_and_names_its_tape_by_name(learned, tmp_path):
    """A flow file written before (format 2: the tape's path) loads; its tape is known by
    its file's name, as it was."""
    folder, out, *_ = learned
    old = tmp_path / "old"
    shutil.copytree(out.parent, old)
    document = json.loads((old / "learned.flow.json").read_text())
    path = str(folder / "day_message_1.csv")
    document["version"] = 2
    document["meta"] = {**document["meta"], "tape": path, "tapes": [path]}
    (old / "learned.flow.json").write_text(json.dumps(document))
    assert EventModel.load(old / "learned.flow.json").meta["tapes"] == [
        {"name": "day_message_1.csv"}
    ]
    hours = parse_source(str(old / "learned.toml")).learned_hours
    assert hours.tapes == (TapeIdentity("day_message_1.csv"),)
    assert isinstance(hours_on(hours, path, given=False), LearnedHours)


@pytest.mark.parametrize(
    "path",
    [
        "configs/amzn_learned.flow.json",
        "docs/realism/amzn_learned_l5.flow.json",
        "docs/realism/amzn_neural.flow.json",
    ],
)
def test_the_committed_learned_markets_name_their_days_by_content(path):
    """The learned markets the repository holds load, in the current format, their days named
    by content with no folder."""
    file = ROOT / path
    model = (NeuralModel if json.loads(file.read_text())["kind"] == "neural" else EventModel).load(
        file
    )
    meta = getattr(model, "base", model).meta
    (day,) = meta["tapes"]
    assert (day["ticker"], day["date"]) == ("AMZN", "2012-06-21") and len(day["digest"]) == 16
    assert day["name"].startswith("AMZN_2012-06-21_34200000_57600000_message_")
    documents = [file, file.with_name(file.name.replace(".flow.json", ".flow.base.json"))]
    for document in (d for d in documents if d.exists()):
        assert (
            json.loads(document.read_text())["version"] == 3 and "/work" not in document.read_text()
        )
