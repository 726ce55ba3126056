"""`tradearena fit --model events`: a day's flow learned and written as an experiment file that
the market, the command and Gymnasium read."""

from __future__ import annotations

import tomllib

import gymnasium as gym
import numpy as np
import pytest
from days import lobster_day  # tests/evaluation/days.py

from tradearena.envs.simulator.eventmodel import EventModel
from tradearena.envs.spec import MarketSpec
from tradearena.evaluation.cli.main import main
from tradearena.evaluation.experiment.config import ConfigError, load_market


@pytest.fixture(scope="module")
def learned(tmp_path_factory):
    """A light day of 200 minutes learned up to its 150th minute: (folder, output, model)."""
    folder = tmp_path_factory.mktemp("learned")
    day, tape = lobster_day(folder, "day", 200)
    until = float(tape.messages["time"][0]) + 150 * 60
    clock = f"{int(until // 3600):02d}:{int(until % 3600 // 60):02d}"
    out = folder / "out" / "learned.toml"
    assert main(["fit", str(day), "--model", "events", "--until", clock, "--out", str(out)]) == 0
    return folder, out, EventModel.load(out.parent / "learned.flow.json"), until


def test_the_written_file_is_an_experiment_of_the_learned_market(learned):
    folder, out, model, until = learned
    text = out.read_text()
    assert "by `tradearena fit --model events`" in text and "events" in text.splitlines()[1]
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
