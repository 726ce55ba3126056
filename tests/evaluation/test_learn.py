"""`tradearena learn`: a day's flow learned and written as an experiment file that
the market, the command and Gymnasium read."""

from __future__ import annotations

import json
import math
import shutil
import tomllib
from dataclasses import asdict, replace
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from days import lobster_day  # tests/evaluation/days.py

from tradearena.envs.data.load import TapeIdentity, load_tape
from tradearena.envs.errors import UserError
from tradearena.envs.simulator.learned_flow.model import EventModel
from tradearena.envs.simulator.learned_flow.neural import NeuralModel
from tradearena.envs.spec import MarketSpec
from tradearena.evaluation.cli.main import main
from tradearena.evaluation.experiment.config import ConfigError, load_market
from tradearena.evaluation.market.fit import check_out
from tradearena.evaluation.market.sources import LearnedHours, hours_on, learned_hours

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


def test_the_judges_read_the_hours_learned_from_in_the_flow_file(learned):
    """`tradearena realism` and `transfer` judge a learned market beside the hours its flow
    file says it learned from: the window and the tape's name."""
    folder, out, model, until = learned
    hours = learned_hours(str(out))
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


@pytest.mark.parametrize("window", [["--until", "08:00"], ["--from", "12:45", "--until", "10:00"]])
def test_a_window_with_no_events_is_refused_in_one_line_of_times(learned, window, capsys):
    """A window before the tape's first event, or one that ends before it starts: a line
    naming the window as the options give it (HH:MM), after the fits' progress bar, no
    traceback; exit status 2."""
    folder, *_ = learned
    day = folder / "day_message_1.csv"
    out = folder / "empty.toml"
    assert main(["learn", str(day), *window, "--out", str(out)]) == 2
    start = window[1] if window[0] == "--from" else "09:25"  # the tape's first message
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"tradearena: error: {day}: 0 events between {start} and {window[-1]}, "
        "too few to learn order flow from (at least 3,000)"
    )
    assert not out.exists()


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
    hours = learned_hours(str(out))
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
    hours = learned_hours(str(old / "learned.toml"))
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
