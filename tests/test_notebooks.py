"""The notebooks run top to bottom (nbclient) against a tiny tournament run made here."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tradearena.envs.errors import UserError
from tradearena.evaluation.analysis.dynamics import rest_points
from tradearena.evaluation.analysis.payoffs import PayoffTable
from tradearena.evaluation.cli.text import format_payoffs
from tradearena.evaluation.experiment.parallel import LocalExecutor
from tradearena.evaluation.experiment.rundir import find_run_dir, project_root
from tradearena.evaluation.experiment.runner import run_experiment

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()

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
    name: str,
    run_dir: Path,
    monkeypatch,
    variable: str = "TRADEARENA_RUN_DIR",
    start: Path = ROOT / "notebooks",
) -> nbformat.NotebookNode:
    """Run the notebook ``name`` with its kernel started in ``start`` (``notebooks/``, as
    Jupyter starts it) and ``variable`` naming ``run_dir`` relative to the repository root,
    as a user who runs it from there writes it."""
    monkeypatch.setenv(variable, os.path.relpath(run_dir, ROOT))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    notebook = nbformat.read(ROOT / "notebooks" / name, as_version=4)
    client = NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(start)}}
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


def test_find_run_dir_looks_from_here_then_from_the_root(tmp_path, monkeypatch):
    """A relative run directory is found from the working directory first, else from the
    repository root (the folder of pyproject.toml); one in neither is a UserError naming both."""
    monkeypatch.chdir(ROOT / "notebooks")
    assert project_root() == ROOT
    assert find_run_dir("configs") == ROOT / "configs"
    (tmp_path / "configs").mkdir()
    monkeypatch.chdir(tmp_path)
    assert find_run_dir("configs") == Path("configs")
    assert project_root() is None
    with pytest.raises(UserError, match=f"^no run directory 'runs/x' in {tmp_path}: "):
        find_run_dir("runs/x")


@pytest.mark.parametrize("start", [ROOT / "notebooks", ROOT], ids=["notebooks", "root"])
def test_evolutionary_dynamics_notebook(tournament_run, monkeypatch, start):
    """Loads the run's payoff tables (3 seats, 3 strategies: 10 profiles), draws the fields
    and compares Sharpe with PnL payoffs, its kernel started in notebooks/ or the root."""
    notebook = execute("evolutionary_dynamics.ipynb", tournament_run, monkeypatch, start=start)
    text = stream_text(notebook)
    assert "p = 3 seats, k = 3 strategies ('raql', 'ra2q', 'momentum'), 10 profiles" in text
    assert "strategy the dynamics favour from the uniform mix" in text
    assert len(images(notebook)) == 2  # the flow line and the pair of simplex fields


def test_notebook_and_command_agree_on_stability(tmp_path, monkeypatch):
    """Four strategies where a dominates the face {a, b, c} but d invades pure a: judged in
    the face a would be stable; the notebook and the command both judge it in the whole
    simplex (a saddle invaded by d) and print the same rest points, line for line."""
    a = [[3, 3, 3, 1], [1, 2, 1, 0], [1, 1, 2, 0], [4, 0, 0, 2]]
    table = PayoffTable.from_matrix(a, strategies=("a", "b", "c", "d"))
    assert rest_points(table.restrict(("a", "b", "c")))[0].kind == "stable"
    for name in ("payoffs.csv", "payoffs_sharpe.csv", "payoffs_pnl.csv"):
        table.to_csv(tmp_path / name)
    command = format_payoffs(tmp_path / "payoffs.csv").split("(stability in the whole simplex):\n")
    text = stream_text(execute("evolutionary_dynamics.ipynb", tmp_path, monkeypatch))
    shown = text.split("rest points with Sharpe payoffs:\n")[1].split("rest points with")[0]
    assert shown.rstrip("\n") == command[1]
    assert "  saddle   (a 1.00, b 0.00, c 0.00, d 0.00) invaded by d" in command[1].splitlines()


def test_custom_agent_notebook(tournament_run, monkeypatch):
    """Writes an agent, passes the contract check, plays a tournament with no failed job and
    shows its payoff field as an image."""
    notebook = execute("custom_agent.ipynb", tournament_run, monkeypatch)
    text = stream_text(notebook)
    assert "Contrarian (name 'contrarian') keeps the agent contract" in text
    assert "failed jobs: none" in text
    assert len(images(notebook)) == 1  # the simplex field, shown, not its text repr


@pytest.fixture(scope="module")
def making_run(tmp_path_factory) -> Path:
    """A tiny making run (a RAQL trained and saved)."""
    work = tmp_path_factory.mktemp("making-run")
    (work / "making.toml").write_text(TINY_MAKING)
    return run_experiment(
        work / "making.toml", LocalExecutor(progress=False), out=work / "run"
    ).directory


def test_trained_agent_notebook(making_run, monkeypatch):
    """Loads the RAQL a tiny making run saved, draws its policy map, plays one session."""
    notebook = execute("trained_agent.ipynb", making_run, monkeypatch, "TRADEARENA_TRAINED_RUN")
    text = stream_text(notebook)
    assert "# raql, seed-0" in text  # the card
    assert "loaded raql: a Q-table of 60 states x 17 actions, 72 updates" in text
    assert "played one session: PnL $" in text
    assert len(images(notebook)) == 2  # the policy map and the two inventories


def test_the_readmes_command_saves_the_notebook_it_runs(making_run, tmp_path):
    """README's ``jupyter execute`` line, run on a copy of the notebook beside a ``runs/``
    folder: the notebook, its outputs and figures included, saved where the line says
    (``jupyter execute`` alone shows and saves nothing)."""
    line = re.search(
        r"`\.venv/bin/(jupyter\s+execute\s+notebooks/trained_agent\.ipynb[^`]*)`", README
    )
    command = line.group(1).split()
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "runs" / "quickstart").mkdir(parents=True)  # as `make run` leaves it
    shutil.copy(ROOT / "notebooks" / "trained_agent.ipynb", tmp_path / "notebooks")
    saved = re.search(r"saves it[^`]*`([^`]+\.ipynb)`", README).group(1)
    env = {**os.environ, "TRADEARENA_TRAINED_RUN": str(making_run)}
    jupyter = str(Path(sys.executable).parent / command[0])
    subprocess.run([jupyter, *command[1:]], cwd=tmp_path, env=env, check=True, timeout=300)
    assert len(images(nbformat.read(tmp_path / saved, as_version=4))) == 2


def test_every_documented_jupyter_execute_saves_what_it_runs():
    """Each ``jupyter execute`` line of README and the manual names where it saves the
    notebook it runs (``--output``, a path from the notebook's folder)."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    lines = [
        (page.name, line)
        for page in pages
        for line in re.findall(r"`[^`]*/jupyter\s+execute[^`]*`", page.read_text())
    ]
    assert len(lines) >= 3 and [n for n, line in lines if "--output ../runs/" not in line] == []
