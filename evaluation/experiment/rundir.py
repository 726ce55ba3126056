"""Reading a run directory: the config as run and every episode record.

A run directory holds ``config.toml`` (the file as run), ``results.sqlite`` (every finished
job), ``calibrations.json`` (the references' calibrations and tunings, computed once for the
run: `agents.calibration.keep`), ``models/`` (the files its traders name), the tables and the
figures; `load_run` needs nothing but the directory (not the data files or custom agents the
run used; the paths of its config.toml resolve against the directory, wherever the reader
runs), so a notebook can load any run. `check_run_dir` says, in one line naming the
directory as given, when a path is none.
`find_run_dir` finds a relative run directory wherever the notebook's kernel started (the
repository root, or ``notebooks/``, where Jupyter starts it).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from tradearena.envs.errors import UserError
from tradearena.evaluation.experiment.config import parse_config, read_text
from tradearena.evaluation.experiment.schema import Config
from tradearena.evaluation.experiment.store import Store

__all__ = [
    "RUN_FILES",
    "check_run_dir",
    "find_run_dir",
    "load_run",
    "project_root",
    "run_config_of",
]

PROJECT_FILE = "pyproject.toml"
"""The file that marks the repository root."""
RUN_FILES = ("config.toml", "results.sqlite")
"""The files every run directory holds (`tradearena run` writes them before any job runs)."""


def project_root(start: str | Path | None = None) -> Path | None:
    """The nearest folder at or above ``start`` (default: the working directory) that holds
    `PROJECT_FILE`, or None."""
    here = Path(start or Path.cwd()).resolve()
    return next((d for d in (here, *here.parents) if (d / PROJECT_FILE).is_file()), None)


def find_run_dir(path: str | Path) -> Path:
    """The run directory ``path``: as given when absolute or found from the working
    directory, else relative to the repository root (`project_root`), so that
    ``runs/tournament`` is found from ``notebooks/`` too. `UserError` naming the places
    looked in when neither holds it."""
    path = Path(path).expanduser()
    if path.is_absolute() or path.is_dir():
        return path
    root = project_root()
    if root is not None and (root / path).is_dir():
        return root / path
    places = f"{Path.cwd()}" + (f" or {root}" if root is not None else "")
    raise UserError(
        f"no run directory {str(path)!r} in {places}: run the experiment first, or give the "
        "directory's absolute path"
    )


def check_run_dir(directory: str | Path, files: Sequence[str] = RUN_FILES) -> Path:
    """``directory`` as a `Path` when it is a run directory (it holds ``files``), else
    `UserError` naming it as given: "no run directory at runs/nope", or the files it lacks."""
    directory = Path(directory)
    if not directory.is_dir():
        raise UserError(f"no run directory at {directory}")
    missing = [name for name in files if not (directory / name).is_file()]
    if missing:
        raise UserError(
            f"{directory} is not a run directory: it holds no {' and no '.join(missing)} "
            "(`tradearena run CONFIG --out DIR` makes one)"
        )
    return directory


def run_config_of(directory: str | Path) -> Config:
    """The config of a run directory as run (its ``config.toml``, defaults filled in, its
    paths resolved against the directory; `check_run_dir`); `ConfigError` naming the file and
    the line when it cannot be read (not UTF-8, not TOML, a table without a key it needs)."""
    directory = check_run_dir(directory, ["config.toml"])
    path = directory / "config.toml"
    text = read_text(path, "run's config")
    return parse_config(text, source=str(path), base=directory.absolute(), complete=False)


def load_run(directory: str | Path) -> tuple[Config, pd.DataFrame]:
    """(config as run, defaults filled in, `run_config_of`; all episode records) of a run
    directory."""
    config = run_config_of(check_run_dir(directory))
    with Store(Path(directory) / "results.sqlite") as store:
        return config, store.episodes()
