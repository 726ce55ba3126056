"""`tradearena fit` end to end on a day recorded from a known market: the fit recovers the
arrival rate that made the day, writes a market file that `load_market` reads, resumes
from its memory, and refuses what it cannot fit in one line."""

import math
from types import SimpleNamespace

import pytest

from tradearena.envs.data.load import TapeIdentity
from tradearena.envs.data.tapes import write_lobster
from tradearena.envs.simulator.recording import synthetic_tape
from tradearena.envs.spec import MarketSpec
from tradearena.evaluation.cli.main import main
from tradearena.evaluation.experiment.config import load_market
from tradearena.evaluation.market import fit as fitting
from tradearena.evaluation.market.fit import candidate_market, light_population
from tradearena.evaluation.market.search import FitParameter
from tradearena.evaluation.market.sources import parse_source

OPEN, STEPS, RATE = 34_200.0, 30, 1 / 20
"""A 30-minute day of the light population whose zero-intelligence traders arrive once
every 20 s each."""


def known_population(*day) -> dict:
    """`light_population` with its market maker waking on a grid (no bursts): a day whose
    order flow the ZI rate alone shapes, so that two short days show it."""
    table = light_population(*day)
    del table["traders"][2]["hawkes"]
    return table


@pytest.fixture
def day(tmp_path, monkeypatch):
    """The known day as a LOBSTER pair, and a fit space of the ZI arrival rate alone."""
    table = known_population(0.01, 22_000, OPEN, STEPS)
    table["traders"][1]["arrival_rate"] = RATE
    spec = MarketSpec(**candidate_market(table))
    market = spec.market(0)
    tape = synthetic_tape(
        3,
        traders=market.traders,
        levels=1,
        n_steps=STEPS,
        open_time=OPEN,
        tick_size=0.01,
        initial_price=22_000,
    )
    messages = tmp_path / "known_message_1.csv"
    write_lobster(tape, messages, tmp_path / "known_orderbook_1.csv")
    space = (FitParameter("traders.1.arrival_rate", 1 / 200, 1.0, log=True),)
    monkeypatch.setitem(fitting.POPULATIONS, "light", lambda *d: (known_population(*d), space))
    return messages


def run(messages, out, *extra):
    argv = ["fit", str(messages), "--budget", "24", "--days", "2", "--restarts", "1"]
    return main([*argv, "--executor", "local", "--out", str(out), *extra])


def test_the_fit_recovers_the_rate_that_made_the_day(day, tmp_path, capsys):
    out = tmp_path / "fitted.toml"
    assert run(day, out) == 0
    fitted = load_market(out)
    rate = fitted.traders[1]["arrival_rate"]
    assert abs(math.log(rate / RATE)) < math.log(1.6)  # within a factor 1.6 of 1/20 s
    assert fitted.tick_size == 0.01
    assert abs(fitted.initial_price - 22_000) < 200  # the day's first mid, in ticks
    header = out.read_text().splitlines()
    assert header[0].startswith("# A population fitted to known_message_1.csv")
    assert header[5] == f"#   traders.1.arrival_rate = {rate:.6g}   (one restart)"
    printed = capsys.readouterr().out  # one restart: no sd, and said so, not "nan"
    assert "traders.1.arrival_rate" in printed and "nan" not in printed
    assert "(one restart: no sd over restarts to show what the day does not identify)" in printed


def test_a_fit_resumes_from_its_memory(day, tmp_path, capsys, monkeypatch):
    out = tmp_path / "fitted.toml"
    assert run(day, out) == 0
    first = out.read_text()
    assert run(day, out) == 2  # its memory exists: say so, change nothing
    assert "--resume to go on" in capsys.readouterr().err
    monkeypatch.setattr(fitting, "day_job", None)  # nothing may be simulated again
    assert run(day, out, "--resume") == 0
    assert out.read_text().split("\n", 2)[2] == first.split("\n", 2)[2]


def test_an_unknown_population_is_one_line_with_a_hint(day, tmp_path, capsys):
    assert run(day, tmp_path / "x.toml", "--population", "lite") == 2
    assert "did you mean 'light'" in capsys.readouterr().err


def test_a_fit_learns_only_before_until_and_says_so(day, tmp_path, monkeypatch):
    seen = []
    job = fitting.day_job
    monkeypatch.setattr(fitting, "day_job", lambda j: seen.append(j.work) or job(j))
    out = tmp_path / "morning.toml"
    assert run(day, out, "--until", "09:45") == 0
    assert {(c.start, c.end) for c in seen} == {(None, OPEN + 900)}
    header = out.read_text().splitlines()[2]
    assert header.startswith("# Learned from the open to 09:45 of each day, with tradearena ")
    fitted = load_market(out)  # the tape's whole day (its warm-up from 09:25 too), not 15 min
    assert fitted.day_steps == STEPS + 5 and OPEN - 300 <= fitted.open_time < OPEN - 290
    # the hours learned from, for the judges: the day's first second to --until
    hours = parse_source(str(out)).learned_hours
    assert (hours.first, hours.last) == (fitted.open_time, OPEN + 900)
    assert hours.tapes == (TapeIdentity(day.name),)  # [learned_from] names the file


def test_the_default_fit_is_the_same_on_a_slow_machine(day, tmp_path, monkeypatch, capsys):
    """The default fit spends its budget whatever the clock says: on a machine where every
    look at the clock finds ten minutes more gone it evaluates all its candidates and ends
    where a fast machine does (a wall-clock stop made a busy machine's fit worse)."""
    from tradearena.evaluation.market import search

    ticks = iter(range(0, 10**9, 600))  # seconds
    monkeypatch.setattr(search, "time", SimpleNamespace(perf_counter=lambda: next(ticks)))
    out = tmp_path / "slow.toml"
    assert run(day, out) == 0
    assert "stopped" not in capsys.readouterr().out
    assert "distance 1.351 after 24 candidates" in out.read_text().splitlines()[1]
    rate = load_market(out).traders[1]["arrival_rate"]
    assert abs(math.log(rate / RATE)) < math.log(1.6)  # within a factor 1.6 of 1/20 s
