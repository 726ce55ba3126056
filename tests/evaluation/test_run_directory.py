"""A run directory is self-contained and safe: it keeps its own copy of every file a trader
names (a learned flow's model and the files the model names) in a folder of its own, never
writing outside itself; each such file is checked before any job runs; the run reads again,
and evaluates, from any folder."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import tomllib
from pathlib import Path

import numpy as np
import pytest
from reference_flow import small_model  # tests/reference_flow.py

from tradearena.envs.data.events import N_EVENT_KINDS as KINDS
from tradearena.envs.errors import ParameterError
from tradearena.envs.simulator.learned_flow.model import EventModel
from tradearena.envs.simulator.traders import TRADERS, Noise
from tradearena.evaluation.cli.main import main
from tradearena.evaluation.experiment.config import ConfigError, load_config
from tradearena.evaluation.experiment.evaluate import evaluate_run
from tradearena.evaluation.experiment.parallel import LocalExecutor
from tradearena.evaluation.experiment.rundir import load_run
from tradearena.evaluation.experiment.runner import run_experiment

EXPERIMENT = """kind = "compare"
seeds = 1

[market]
task = "making"
n_steps = 3
traders = [{{ type = "LearnedFlow", model = "{model}" }}]

[training]
episodes = 1

[testing]
episodes = 2

[[agents]]
id = "random"

[output]
figures = false
"""


def saved(path: Path, rate: float = 0.2) -> Path:
    """`flow` saved as the parameter file ``path`` (its folder made), with its arrays beside
    it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return flow(rate).save(path)


def flow(rate: float = 0.2) -> EventModel:
    """A learned flow of ``rate`` events per second of every kind in every state, without
    excitation, on a book of 3 lots a side one tick from the mid."""
    return small_model(mu=np.full((KINDS, 8), rate), decays=(1.0,))


def experiment(folder: Path, model: str, name: str = "learned.toml") -> Path:
    """An experiment file in ``folder`` whose market is the learned flow at ``model`` (as
    written in the file)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(EXPERIMENT.format(model=model))
    return path


def files(root: Path, *, outside: Path) -> dict[str, str]:
    """Every file under ``root`` but those under ``outside``, by path: its SHA-256."""
    return {
        str(p): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_relative_to(outside)
    }


def run(config: Path, out: Path) -> int:
    """``tradearena run CONFIG --out OUT`` on the local executor: its exit status."""
    return main(["run", str(config), "--executor", "local", "--no-progress", "--out", str(out)])


def kept(out: Path, key: str = "model") -> str:
    """The file the run directory's config.toml gives its first trader as ``key``."""
    return tomllib.loads((out / "config.toml").read_text())["market"]["traders"][0][key]


@pytest.mark.parametrize(
    "layout",
    ["parent", "sibling folder", "absolute", "link", "out is the config's folder"],
)
def test_a_run_keeps_its_own_copy_of_the_model_and_writes_nowhere_else(layout, tmp_path):
    """Wherever the model lies (above the config's folder with another model of its name
    beside the config, in a folder beside it, at an absolute path, through a link of another
    name), the run directory keeps its copy of the model and of its arrays in ``models/0/``,
    its config.toml names that copy, no file outside it is written, and the run is complete
    (summary.csv); ``--out`` the config's own folder, which holds files and no run, is
    refused, and not a file is written."""
    folder = tmp_path / "exp"
    folder.mkdir()
    out = folder / "run"
    model = saved(tmp_path / "m.flow.json")
    if layout == "parent":  # another model of the same name beside the config
        saved(folder / "m.flow.json", rate=0.1)
    written = {
        "parent": "../m.flow.json",
        "sibling folder": "../shared/m.flow.json",
        "absolute": str(model),
        "link": "linked.json",
        "out is the config's folder": "m.flow.json",
    }[layout]
    if layout == "sibling folder":
        (tmp_path / "shared").mkdir()
        for part in tmp_path.glob("m.flow.*"):
            shutil.move(part, tmp_path / "shared" / part.name)
        model = tmp_path / "shared" / "m.flow.json"
    if layout == "link":
        (folder / "linked.json").symlink_to(model)
    if layout == "out is the config's folder":
        for part in tmp_path.glob("m.flow.*"):
            shutil.move(part, folder / part.name)
        model, out = folder / "m.flow.json", folder
    config = experiment(folder, written)
    before = files(tmp_path, outside=out / "models")
    if out == folder:
        assert run(config, out) == 2
        assert files(tmp_path, outside=out / "models") == before
        return
    assert run(config, out) == 0
    after = files(tmp_path, outside=out / "models")
    assert {k: v for k, v in after.items() if k in before} == before  # nothing overwritten
    new = sorted(Path(p).relative_to(out) for p in set(after) - set(before))
    assert all(not p.is_absolute() and ".." not in p.parts for p in new)  # all inside --out
    name = model.resolve().name
    assert kept(out) == f"models/0/{name}"
    arrays = model.resolve().parent / "m.flow.npz"
    assert (out / "models/0" / name).read_bytes() == model.read_bytes()
    assert (out / "models/0/m.flow.npz").read_bytes() == arrays.read_bytes()
    assert (out / "summary.csv").exists()


def test_a_run_of_a_run_directorys_own_config_resumes_into_it(tmp_path):
    """The run directory's config.toml, run again into its own directory with --resume, names
    the copies it holds: each is its own source, left as it is."""
    out = tmp_path / "run"
    saved(tmp_path / "m.flow.json")
    assert run(experiment(tmp_path, "m.flow.json"), out) == 0
    copy = (out / "models/0/m.flow.json").read_bytes()
    args = ["run", str(out / "config.toml"), "--executor", "local", "--no-progress"]
    assert main([*args, "--out", str(out), "--resume"]) == 0
    assert (out / "models/0/m.flow.json").read_bytes() == copy


@pytest.mark.parametrize(
    ("arrays", "message"),
    [
        ("../m.flow.npz", r"'arrays' must name a file beside it, got '\.\./m\.flow\.npz'"),
        ("sub/m.flow.npz", r"'arrays' must name a file beside it, got 'sub/m\.flow\.npz'"),
        ("gone.npz", r"gone\.npz: no such file"),
        ("folder.npz", r"folder\.npz: not a regular file"),
    ],
    ids=["up a folder", "in a folder", "missing", "a folder"],
)
def test_a_model_naming_arrays_outside_its_folder_is_refused_before_any_job(
    arrays, message, tmp_path, capsys
):
    """A model whose JSON names its arrays anywhere but as a regular file beside it is refused
    by the config's check: exit 2, one line naming ``market.traders[0].model`` and the file,
    no run directory (the arrays exist where the JSON points, so loading them would pass)."""
    folder = tmp_path / "exp"
    model = saved(folder / "m.flow.json")
    (folder / "sub").mkdir()
    (folder / "folder.npz").mkdir()
    shutil.copy(folder / "m.flow.npz", tmp_path / "m.flow.npz")
    shutil.copy(folder / "m.flow.npz", folder / "sub" / "m.flow.npz")
    scalars = json.loads(model.read_text()) | {"arrays": arrays}
    model.write_text(json.dumps(scalars))
    out = folder / "run"
    assert run(experiment(folder, "m.flow.json"), out) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert re.search(r"line 7: market\.traders\[0\]\.model: .*" + message, err)
    assert not out.exists()


def test_arrays_under_another_name_are_kept_with_the_model(tmp_path):
    """A model whose arrays file has a name of its own (not the model's stem) is kept with it:
    the run is complete and reads again from its directory alone."""
    folder = tmp_path / "exp"
    model = saved(folder / "m.flow.json")
    (folder / "m.flow.npz").rename(folder / "weights.npz")
    model.write_text(json.dumps(json.loads(model.read_text()) | {"arrays": "weights.npz"}))
    out = tmp_path / "run"
    assert run(experiment(folder, "m.flow.json"), out) == 0
    assert sorted(p.name for p in (out / "models/0").iterdir()) == ["m.flow.json", "weights.npz"]
    shutil.rmtree(folder)
    config, records = load_run(out)
    assert config.market.traders[0]["model"] == str(out.resolve() / "models/0/m.flow.json")
    assert (records["phase"] == "test").sum() == 2 and (out / "summary.csv").exists()


def test_a_neural_flows_base_and_its_arrays_are_parts_of_its_file(tmp_path):
    """A neural flow's file names its weights and its base model, which names its own arrays:
    all four are the file's parts, in that order; a base outside its folder is refused."""
    neural = {"kind": "neural", "arrays": "n.npz", "base": "n.base.json"}
    (tmp_path / "n.json").write_text(json.dumps(neural))
    (tmp_path / "n.base.json").write_text(json.dumps({"kind": "events", "arrays": "n.base.npz"}))
    (tmp_path / "n.npz").write_bytes(b"")
    (tmp_path / "n.base.npz").write_bytes(b"")
    parts = TRADERS["LearnedFlow"].file_parts("model", tmp_path / "n.json")
    assert [p.name for p in parts] == ["n.json", "n.npz", "n.base.json", "n.base.npz"]
    (tmp_path / "n.json").write_text(json.dumps({**neural, "base": "../n.base.json"}))
    with pytest.raises(ParameterError, match=r"'base' must name a file beside it"):
        TRADERS["LearnedFlow"].file_parts("model", tmp_path / "n.json")


@pytest.fixture
def learned_run(tmp_path) -> Path:
    """A finished run of a learned market whose config lay beside its model."""
    folder = tmp_path / "exp"
    saved(folder / "m.flow.json")
    out = tmp_path / "run"
    assert run(experiment(folder, "m.flow.json"), out) == 0
    return out


def test_a_learned_runs_directory_evaluates_from_any_folder(learned_run, tmp_path, monkeypatch):
    """``evaluate RUN`` of a learned market, from a folder that holds no model (the config's
    folder gone too): the run's own market, its frozen agents' test records those the run
    recorded."""
    shutil.rmtree(tmp_path / "exp")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    outcome = evaluate_run(learned_run, LocalExecutor(progress=False))
    assert outcome.failed == {}
    test = load_run(learned_run)[1].query("phase == 'test'")
    again = load_run(outcome.directory)[1].query("phase == 'test'")
    assert test["pnl"].abs().sum() > 0  # the random agent trades
    np.testing.assert_array_equal(again["pnl"].to_numpy(), test["pnl"].to_numpy())
    assert kept(outcome.directory) == "models/0/m.flow.json"


def test_evaluate_on_a_file_reads_its_model_beside_the_file(learned_run, tmp_path, monkeypatch):
    """``evaluate RUN --config FILE``: the FILE's learned market's model is read beside the
    FILE, wherever the command runs; an evaluation on the same market gives the run's
    records."""
    other = tmp_path / "other"
    saved(other / "m.flow.json")
    file = experiment(other, "m.flow.json", "market.toml")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    args = ["evaluate", str(learned_run), "--config", str(file), "--executor", "local"]
    assert main([*args, "--no-progress"]) == 0
    records = load_run(learned_run / "evaluate-market")[1].query("phase == 'test'")
    test = load_run(learned_run)[1].query("phase == 'test'")
    np.testing.assert_array_equal(records["pnl"].to_numpy(), test["pnl"].to_numpy())


class Counted(Noise):
    """Noise traders as many as the number written in the file ``counts``: a trader of a file
    parameter that is not a learned flow's."""

    file_parameters = ("counts",)

    def __init__(self, counts: str) -> None:
        super().__init__(int(Path(counts).read_text()))


def test_any_trader_that_declares_a_file_has_it_checked_and_kept(tmp_path, monkeypatch):
    """The file parameters a trader class declares are resolved against the config's folder,
    checked before any job, and kept in the run directory, whatever the trader: no trader is
    known by its name."""
    monkeypatch.setitem(TRADERS, "Counted", Counted)
    (tmp_path / "n.txt").write_text("7\n")
    text = EXPERIMENT.replace('type = "LearnedFlow", model', 'type = "Counted", counts')
    text = text.replace('task = "making"', 'task = "taker"')
    path = tmp_path / "exp" / "counted.toml"
    path.parent.mkdir()
    path.write_text(text.format(model="../n.txt"))
    assert load_config(path).market.traders[0]["counts"] == str(tmp_path / "n.txt")
    out = tmp_path / "run"
    assert run(path, out) == 0
    assert kept(out, "counts") == "models/0/n.txt" and (out / "models/0/n.txt").read_text() == "7\n"
    (tmp_path / "n.txt").unlink()
    missing = r"line 7: market\.traders\[0\]\.counts: .*n\.txt: no such file"
    with pytest.raises(ConfigError, match=missing):
        load_config(path)


def test_a_deleted_figure_is_drawn_again_on_resume(tiny_config, tmp_path):
    """A finished run resumed with one of its figures deleted draws it again (the others are
    there: the run knows which it drew)."""
    out = tmp_path / "run"
    run_experiment(tiny_config, LocalExecutor(progress=False), out=out)
    drawn = sorted(p.name for p in out.glob("*.png"))
    assert drawn == ["learning_curves.png", "sharpe.png"]
    (out / "sharpe.png").unlink()
    run_experiment(tiny_config, LocalExecutor(progress=False), out=out, resume=True)
    assert sorted(p.name for p in out.glob("*.png")) == drawn
    assert json.loads((out / "figures.json").read_text()) == drawn


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b'kind = "compare"\n[[agents]]\nid = "caf\xe9"\n', r"line 3: the run's config is not UTF"),
        (b'kind = "compare"\nseeds = = 2\n', r"not valid TOML: .*line 2"),
        (b'kind = "compare"\n[[agents]]\nlabel = "x"\n', r"agents\[0\]: missing required key"),
    ],
    ids=["not UTF-8", "not TOML", "an agent without id"],
)
def test_transfer_names_a_run_whose_config_cannot_be_read(text, message, tmp_path, capsys):
    """``transfer --agents RUN`` whose config.toml is not UTF-8, not TOML, or has an agent
    without ``id``: exit 2, one line naming --agents and the file."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "config.toml").write_bytes(text)
    args = ["transfer", "tradearena/MarketMaking-v0", "--against", str(tmp_path / "day.csv")]
    assert main([*args, "--agents", str(run_dir), "--executor", "local"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.startswith(f"tradearena: error: --agents {run_dir}: {run_dir / 'config.toml'}")
    assert re.search(message, err)
