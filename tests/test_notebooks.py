"""The notebooks run top to bottom (nbclient) against a tiny tournament run made here."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tradearena.evaluation.experiment import run_experiment
from tradearena.evaluation.parallel import LocalExecutor

ROOT = Path(__file__).resolve().parents[1]

TINY_TOURNAMENT = """
kind = "tournament"
seeds = 1
[tournament]
players = 3
[market]
population = "light"
n_steps = 10
reward_scale = 0.01
[training]
episodes = 2
[testing]
episodes = 3
[[agents]]
id = "raql"
[[agents]]
id = "ra2q"
params = { k = 3 }
[[agents]]
id = "momentum"
"""


TINY_MAKING = """
kind = "compare"
seeds = 1
[market]
task = "making"
population = "light"
n_steps = 12
reward_scale = 0.01
[training]
episodes = 6
[testing]
episodes = 2
[output]
figures = false
[[agents]]
id = "raql"
"""


@pytest.fixture(scope="module")
def tournament_run(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("notebook-run")
    (work / "tiny.toml").write_text(TINY_TOURNAMENT)
    outcome = run_experiment(work / "tiny.toml", LocalExecutor(progress=False), out=work / "run")
    assert not outcome.failed
    return outcome.directory


def execute(
    name: str, run_dir: Path, monkeypatch, variable: str = "TRADEARENA_RUN_DIR"
) -> nbformat.NotebookNode:
    monkeypatch.setenv(variable, str(run_dir))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    notebook = nbformat.read(ROOT / "notebooks" / name, as_version=4)
    client = NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}
    )
    client.execute()
    return notebook


def stream_text(notebook: nbformat.NotebookNode) -> str:
    return "".join(
        out.get("text", "")
        for cell in notebook.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
        if out.get("output_type") == "stream"
    )


def images(notebook: nbformat.NotebookNode) -> list:
    """The PNG outputs of the executed notebook."""
    return [
        out
        for cell in notebook.cells
        for out in cell.get("outputs", [])
        if "image/png" in out.get("data", {})
    ]


def test_evolutionary_dynamics_notebook(tournament_run, monkeypatch):
    """Loads the run's payoff tables (3 seats, 3 strategies: 10 profiles), draws the fields
    and compares Sharpe with PnL payoffs."""
    notebook = execute("evolutionary_dynamics.ipynb", tournament_run, monkeypatch)
    text = stream_text(notebook)
    assert "p = 3 seats, k = 3 strategies ('raql', 'ra2q', 'momentum'), 10 profiles" in text
    assert "strategy the dynamics favour from the uniform mix" in text
    assert len(images(notebook)) == 2  # the flow line and the pair of simplex fields


def test_custom_agent_notebook(tournament_run, monkeypatch):
    """Writes an agent, passes the contract check, plays a tournament with no failed job."""
    notebook = execute("custom_agent.ipynb", tournament_run, monkeypatch)
    text = stream_text(notebook)
    assert "Contrarian (name 'contrarian') keeps the agent contract" in text
    assert "failed jobs: none" in text


def test_trained_agent_notebook(tmp_path, monkeypatch):
    """Loads the RAQL a tiny making run saved, draws its policy map, plays one session."""
    (tmp_path / "making.toml").write_text(TINY_MAKING)
    run = run_experiment(
        tmp_path / "making.toml", LocalExecutor(progress=False), out=tmp_path / "run"
    )
    notebook = execute("trained_agent.ipynb", run.directory, monkeypatch, "TRADEARENA_TRAINED_RUN")
    text = stream_text(notebook)
    assert "# raql, seed-0" in text  # the card
    assert "loaded raql: a Q-table of 60 states x 17 actions, 72 updates" in text
    assert "played one session: PnL $" in text
    assert len(images(notebook)) == 2  # the policy map and the two inventories
