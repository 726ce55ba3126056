"""A source the judges read, parsed once (`parse_source`): what it is, its label, whether its
days are simulated, the market it is, and the hours it learned from as its file names them."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from reference_flow import OPEN, known_model  # tests/reference_flow.py

from tradearena.envs.data.load import TapeIdentity, load_tape
from tradearena.envs.data.tapes import write_lobster
from tradearena.envs.errors import UserError
from tradearena.envs.simulator.recording import synthetic_tape
from tradearena.envs.simulator.traders import light
from tradearena.envs.simulator.traders.learned import LearnedFlow
from tradearena.evaluation.market.sources import LearnedHours, parse_source

FLOW = 'traders = [{type = "LearnedFlow", model = "flow.json"}]\ntick_size = 0.01\n'


@pytest.fixture
def day(tmp_path):
    """A LOBSTER message file (its orderbook beside it) of a short synthetic day."""
    messages = tmp_path / "day_34200000_57600000_message_1.csv"
    tape = synthetic_tape(3, traders=light(), n_steps=20, levels=1)
    write_lobster(tape, messages, tmp_path / "day_34200000_57600000_orderbook_1.csv")
    return messages


def test_a_tape_a_market_file_and_an_id_are_told_apart_once(tmp_path, day):
    """A tape is no market (its spec None, the error naming it), labelled by its file's stem;
    a market file is simulated, labelled by its stem; an id is simulated, labelled by
    itself; a market file that replays the tape is not simulated and is no market to seat;
    an unknown id is one line naming the nearest."""
    tape = parse_source(str(day))
    assert (tape.spec, tape.label, tape.simulated) == (None, day.stem, False)
    with pytest.raises(UserError, match=r"a tape, not a market \(an experiment file or a Gym"):
        tape.market()
    market = tmp_path / "thin.toml"
    market.write_text('[market]\npopulation = "light"\n')
    found = parse_source(str(market))
    assert (found.label, found.simulated, found.market().population) == ("thin", True, "light")
    named = parse_source("tradearena/MarketMaking-v0")
    assert (named.label, named.simulated) == ("tradearena/MarketMaking-v0", True)
    replay = tmp_path / "replay.toml"
    replay.write_text(f'[market]\ntape = "{day}"\n')
    replays = parse_source(str(replay))
    assert replays.spec.replays_file and not replays.simulated
    with pytest.raises(UserError, match=r"replay\.toml: replays the tape .*give a simulated"):
        replays.market()
    with pytest.raises(UserError, match="MarketMaking-v0"):
        parse_source("tradearena/MarketMakin-v0")


def test_the_hours_a_market_learned_from_are_an_attribute_of_its_source(tmp_path, day):
    """A learned flow's window and tapes (its model's meta, `LearnedFlow.learned_window`) are
    its market file's hours; a replay's are the hours it replays (the whole day of the
    tape); a population's and a tape's are None."""
    identity = {"name": day.name, "digest": "0123456789abcdef"}
    meta = {"window": [OPEN, OPEN + 1800.0], "tapes": [identity]}
    replace(known_model(), meta=meta).save(tmp_path / "flow.json")
    learned = tmp_path / "learned.toml"
    learned.write_text(f"[market]\n{FLOW}")
    flow = LearnedFlow(str(tmp_path / "flow.json"))
    assert flow.learned_window == (OPEN, OPEN + 1800.0, (TapeIdentity.read(identity),))
    assert parse_source(str(learned)).learned_hours == LearnedHours(
        OPEN, OPEN + 1800.0, (TapeIdentity.read(identity),), f"{learned}'s learned flow"
    )
    assert LearnedFlow(known_model()).learned_window is None
    replay = tmp_path / "replay.toml"
    replay.write_text(f'[market]\ntape = "{day}"\n')
    hours = parse_source(str(replay)).learned_hours
    time = load_tape(str(day)).messages["time"]
    first = math.floor(time[0])  # a replay opens at its tape's first second
    steps = int((time[-1] - first) // 60) + 1  # the minutes that cover every message
    assert (hours.first, hours.last) == (first, first + 60.0 * steps)
    assert (hours.tapes, hours.source) == ((TapeIdentity(day.name),), f"{replay} replays them")
    population = tmp_path / "population.toml"
    population.write_text('[market]\npopulation = "light"\n')
    assert parse_source(str(population)).learned_hours is None
    assert parse_source(str(day)).learned_hours is None
