"""``tradearena evaluate``: test a run's saved agents again, on its own market or another.

The evaluation is an experiment of its own: the run's config with every agent table replaced
by ``from = "RUN_DIR/agents/<label>"`` and ``train = false`` (the agents as their testing
began, frozen), run into a new directory with the same tables and figures. Unchanged, it
gives the run's own test records, so its summary's test columns equal the run's. A FILE's
``[market]`` replaces the run's (its ``[testing]`` and ``[[perturbations]]`` too, when it has
them; perturbations make the evaluation a robustness experiment): train on the synthetic
market, test on a real day; train in one population, test under an adversary. A market whose
actions or observations differ from an agent's is an error naming the agent. The run's paths
resolve against its directory and a FILE's against the FILE's folder, wherever the command
runs.
"""

from __future__ import annotations

from pathlib import Path

import tomli_w

from tradearena.envs.errors import UserError
from tradearena.evaluation.experiment.checking import config_tables
from tradearena.evaluation.experiment.config import ConfigError, parse_config, read_file
from tradearena.evaluation.experiment.markets import checked_market, market_table
from tradearena.evaluation.experiment.parallel import Executor
from tradearena.evaluation.experiment.rundir import check_run_dir, run_config_of
from tradearena.evaluation.experiment.runner import RunOutcome, run_config
from tradearena.evaluation.experiment.schema import AgentEntry, Config
from tradearena.evaluation.experiment.trained import AGENTS, check_saved_agents

__all__ = ["evaluate_run", "evaluation_config"]

FROM_FILE = ("testing", "perturbations")
"""The tables of an evaluation's FILE that replace the run's, besides its ``[market]``."""


def evaluation_config(
    run_dir: str | Path,
    file: str | Path | None = None,
    episodes: int | None = None,
    out: str | Path | None = None,
) -> Config:
    """The checked config that tests the saved agents of ``run_dir`` on its own market, or on
    the ``[market]`` of ``file`` (with its ``[testing]`` and ``[[perturbations]]`` when
    given), ``episodes`` test episodes each (default: as the run or the file says), into
    ``out`` (its ``output.dir``; default the run's)."""
    run_dir = check_run_dir(run_dir).resolve()
    as_run = run_config_of(run_dir)
    if as_run.kind == "tournament" and as_run.tournament.mode == "train-in-profile":
        raise UserError(
            f"{run_dir}: its tournament trained the seats in their profiles, so no agent was "
            "trained alone; evaluate a compare, robustness or pretrained run"
        )
    check_saved_agents(run_dir, as_run.labels, as_run.seeds)
    tables = config_tables(as_run)
    tables["agents"] = [
        AgentEntry(s.id, s.label, saved=str(run_dir / AGENTS / s.label), train=False).table()
        for s in as_run.agents
    ]
    if file is not None:
        tables |= _tables_of(Path(file))
        if tables["perturbations"]:
            if as_run.kind == "tournament":
                raise UserError(f"{file}: a tournament run is evaluated without perturbations")
            tables["kind"] = "robustness"
    if episodes is not None:
        tables["testing"] = {**tables["testing"], "episodes": episodes}
    if out is not None:
        tables["output"] = {**tables["output"], "dir": str(out)}
    source = f"evaluate {run_dir}" + (f" on {file}" if file is not None else "")
    return parse_config(tomli_w.dumps(tables), source=source, base=run_dir)


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


def _tables_of(file: Path) -> dict:
    """The tables of ``file`` that an evaluation takes: its ``[market]``, its paths resolved
    against the file's folder (one naming an environment variable is left for the config's
    check to expand), and its tables of `FROM_FILE`; ConfigError without a [market]."""
    raw, where = read_file(file, "market file")
    if "market" not in raw:
        raise ConfigError(f"{file}: no [market] table to evaluate on")
    market = market_table(checked_market(raw, where, file.resolve().parent, complete=False))
    return {"market": market, **{name: raw[name] for name in FROM_FILE if name in raw}}
