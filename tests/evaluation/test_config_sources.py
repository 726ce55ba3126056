"""Every error of an experiment file names the file, or the ``--set`` value it came from, however
the run is started (with ``--out`` or into the config's own run directory)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tradearena.envs.data.tapes import load_lobster
from tradearena.envs.errors import UserError
from tradearena.evaluation.experiment.config import ConfigError
from tradearena.evaluation.experiment.parallel import LocalExecutor
from tradearena.evaluation.experiment.runner import run_experiment

GOOD = """kind = "compare"
name = "named"
seeds = 1

[market]
n_steps = 5

[[agents]]
id = "hold"
"""


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("seeds = 1", "seedz = 1"), r"^bad\.toml, line 3: seedz: unknown key"),
        (("seeds = 1", 'seeds = "one"'), r"^bad\.toml, line 3: seeds: expected an integer"),
        (("seeds = 1", "seeds = = 1"), r"^bad\.toml: not valid TOML: .*line 3"),
    ],
)
def test_a_file_error_names_the_file(tmp_path, monkeypatch, edit, message):
    monkeypatch.chdir(tmp_path)
    Path("bad.toml").write_text(GOOD.replace(*edit))
    with pytest.raises(ConfigError, match=message):
        run_experiment("bad.toml", LocalExecutor(progress=False))
    assert not Path("runs").exists()


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"training": {"episodez": 3}}, r"^--set training\.episodez=3: training\.episodez: unkn"),
        ({"seeds": "four"}, r"^--set seeds=four: seeds: expected an integer, got 'four'"),
    ],
)
def test_a_set_error_names_the_set_value(tmp_path, monkeypatch, overrides, message):
    monkeypatch.chdir(tmp_path)
    Path("good.toml").write_text(GOOD)
    with pytest.raises(ConfigError, match=message):
        run_experiment("good.toml", LocalExecutor(progress=False), overrides=overrides)


def test_a_trades_file_given_as_a_tape_points_to_the_data_command(tmp_path):
    trades = tmp_path / "trades.csv"
    trades.write_text("id,price,qty,quote_qty,time,is_buyer_maker\n1,100.5,0.1,10.05,1,true\n")
    with pytest.raises(UserError, match=r"line 1, column 1 \(time\): 'id' is not a number; "):
        load_lobster(trades)
    trades.write_text("1,100.5,0.1,1700000000000\n")
    with pytest.raises(UserError, match=r"4 columns, expected 6 .*: see `tradearena data`$"):
        load_lobster(trades)
