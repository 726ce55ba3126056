"""``tradearena evaluate``: test a run's saved agents again, on its own market or another.

The evaluation is an experiment of its own: the run's config with every agent table replaced
by ``from = "RUN_DIR/agents/<label>"`` and ``train = false`` (the agents as their testing
began, frozen), run into a new directory with the same tables and figures. Unchanged, it
gives the run's own test records, so its summary's test columns equal the run's. A FILE's
``[market]`` replaces the run's (its ``[testing]`` and ``[[perturbations]]`` too, when it has
them; perturbations make the evaluation a robustness experiment): train on the synthetic
market, test on a real day; train in one population, test under an adversary. A market whose
actions or observations differ from an agent's is an error naming the agent.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import tomli_w

from tradearena.envs.errors import UserError
from tradearena.evaluation.experiment.config import ConfigError, parse_config
from tradearena.evaluation.experiment.parallel import Executor
from tradearena.evaluation.experiment.rundir import check_run_dir
from tradearena.evaluation.experiment.runner import RunOutcome, run_config
from tradearena.evaluation.experiment.trained import AGENTS, check_saved_agents

__all__ = ["evaluate_run", "evaluation_config"]

FROM_FILE = ("market", "testing", "perturbations")
"""The tables of an evaluation's FILE that replace the run's."""


def evaluation_config(
    run_dir: str | Path,
    file: str | Path | None = None,
    episodes: int | None = None,
    out: str | Path | None = None,
) -> dict:
    """The checked config that tests the saved agents of ``run_dir`` on its own market, or on
    the ``[market]`` of ``file`` (with its ``[testing]`` and ``[[perturbations]]`` when
    given), ``episodes`` test episodes each (default: as the run or the file says), into
    ``out`` (its ``output.dir``; default the run's)."""
    run_dir = check_run_dir(run_dir).resolve()
    text = (run_dir / "config.toml").read_text()
    as_run = parse_config(text, source=str(run_dir / "config.toml"), complete=False)
    raw = tomllib.loads(text)
    if as_run["kind"] == "tournament" and as_run["tournament"].mode == "train-in-profile":
        raise UserError(
            f"{run_dir}: its tournament trained the seats in their profiles, so no agent was "
            "trained alone; evaluate a compare, robustness or pretrained run"
        )
    labels = [spec["label"] for spec in as_run["agents"]]
    check_saved_agents(run_dir, labels, as_run["seeds"])
    raw["agents"] = [
        {
            "id": s["id"],
            "label": s["label"],
            "from": str(run_dir / AGENTS / s["label"]),
            "train": False,
        }
        for s in as_run["agents"]
    ]
    if file is not None:
        raw |= _tables_of(Path(file))
        if raw.get("perturbations"):
            if as_run["kind"] == "tournament":
                raise UserError(f"{file}: a tournament run is evaluated without perturbations")
            raw["kind"] = "robustness"
    if episodes is not None:
        raw.setdefault("testing", {})["episodes"] = episodes
    if out is not None:
        raw.setdefault("output", {})["dir"] = str(out)
    source = f"evaluate {run_dir}" + (f" on {file}" if file is not None else "")
    return parse_config(tomli_w.dumps(raw), source=source)


def evaluate_run(
    run_dir: str | Path,
    executor: Executor,
    *,
    file: str | Path | None = None,
    episodes: int | None = None,
    out: str | Path | None = None,
    resume: bool = False,
) -> RunOutcome:
    """Test the saved agents of ``run_dir`` (see `evaluation_config`) into ``out`` (default
    ``RUN_DIR/evaluate``, or ``RUN_DIR/evaluate-<FILE's stem>``); ``resume`` continues an
    interrupted evaluation there."""
    name = "evaluate" if file is None else f"evaluate-{Path(file).stem}"
    out = Path(out or Path(run_dir, name))
    return run_config(evaluation_config(run_dir, file, episodes, out), executor, out, resume=resume)


def _read(path: Path) -> dict[str, Any]:
    """The TOML tables of ``path``; ConfigError naming it when it is not TOML."""
    try:
        return tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML: {error}") from None


def _tables_of(file: Path) -> dict[str, Any]:
    """The tables of ``file`` that an evaluation takes, a tape path made absolute (resolved
    against the file's directory, as a run resolves it; one naming an environment variable
    is left for the config's check to expand); ConfigError without a [market]."""
    raw = _read(file)
    if "market" not in raw:
        raise ConfigError(f"{file}: no [market] table to evaluate on")
    market = raw["market"]
    tape = market.get("tape", "")
    relative = not Path(tape).expanduser().is_absolute()
    if tape and tape != "synthetic" and "$" not in tape and relative:
        market["tape"] = str(file.resolve().parent / Path(tape).expanduser())
    return {name: raw[name] for name in FROM_FILE if name in raw}
