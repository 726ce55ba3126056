"""Reading a run directory: the config as run and every episode record.

A run directory holds ``config.toml`` (the file as run), ``results.sqlite`` (every finished
job), ``calibrations.json`` (the references' calibrations and tunings, computed once for the
run: `agents.calibration.keep`), the tables and the figures; `load_run` needs nothing but the
directory (not the data files or custom agents the run used), so a notebook can load any run.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from tradearena.evaluation.config import parse_config
from tradearena.evaluation.store import Store

__all__ = ["load_run"]


def load_run(directory: str | Path) -> tuple[dict, pd.DataFrame]:
    """(config as run, defaults filled in; all episode records) of a run directory."""
    directory = Path(directory)
    text = (directory / "config.toml").read_text()
    config = parse_config(text, source=str(directory / "config.toml"), complete=False)
    with Store(directory / "results.sqlite") as store:
        return config, store.episodes()
