"""examples/your_day.py, the guide's path from a day's files to a verdict, walked on a
recorded day with tiny budgets: every step runs, and each leaves what the next reads."""

import importlib.util
from pathlib import Path

import pandas as pd

from tradearena.envs.data.tapes import write_lobster
from tradearena.envs.simulator.recording import synthetic_tape
from tradearena.envs.simulator.traders import light

EXAMPLE = Path(__file__).parents[1] / "examples" / "your_day.py"


def example():
    """examples/your_day.py as a module."""
    spec = importlib.util.spec_from_file_location("your_day", EXAMPLE)
    your_day = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(your_day)
    return your_day


def test_the_help_says_all_it_does():
    """--help: the docstring's first paragraph whole, then what DAY may be."""
    text = " ".join(example().parser().format_help().split())
    assert "Your own day, from its files to a verdict: check the files, learn the morning's" in text
    assert "test them on the real afternoon beside a zoo of fixed policies. positional" in text
    assert text.endswith("to see the path work, not to judge a market.")


def test_the_path_from_a_day_to_a_verdict(tmp_path, capsys):
    your_day = example()
    tape = synthetic_tape(5, traders=light(), levels=1, n_steps=130)
    day = tmp_path / "day_34200000_42000000_message_1.csv"
    write_lobster(tape, day, tmp_path / "day_34200000_42000000_orderbook_1.csv")
    out = tmp_path / "out"
    assert your_day.walk(day, "10:30", out, quick=True, local=True) == 0
    printed = capsys.readouterr().out
    assert f"$ tradearena learn {day} --until 10:30 --out {out / 'market.toml'}" in printed
    header = (out / "market.toml").read_text().splitlines()
    assert header[0] == f"# Order flow learned from {day.name} by `tradearena learn --model events`"
    assert (out / "market.flow.json").exists()  # the path walks the market README presents
    card = pd.read_csv(out / "judged" / "scorecard.csv").set_index(["fact", "source"])
    assert 0.0 <= card.loc[("discriminator_auc", "market"), "value"] <= 1.0
    zoo = pd.read_csv(out / "transfer" / "transfer.csv")
    assert {"trained/q_learning", "trained/avellaneda_stoikov"} <= set(zoo.policy)
    assert (out / "transfer" / "transfer.png").exists()
