"""Code that comes with what a user receives does not run: a run directory given to
``evaluate`` (or an experiment file run from elsewhere) is no folder agents are imported from
unless the user names it (``--agents-from``), and a ``"module:ClassName"`` id runs none of its
module's code (nor its package's) before the module is found and, read as text, binds the
class."""

from __future__ import annotations

import shutil
import sys

import pytest

from tradearena.agents import registry
from tradearena.envs.errors import UserError
from tradearena.evaluation.cli.main import main

MARK = "import pathlib\npathlib.Path(__file__).with_name('{name}.ran').write_text('ran')\n"
"""The first lines of a module that leaves ``<name>.ran`` beside it when its code runs."""
AGENT = "from tradearena.agents.tabular.q_learning import QLearning as Evil\n"


def ran(folder) -> list[str]:
    """The markers the modules in ``folder`` left: whose code ran."""
    return sorted(path.stem for path in folder.rglob("*.ran"))


def test_a_received_run_directory_runs_none_of_its_code(
    tmp_path, tiny_text, monkeypatch, capsys, own_folders
):
    """A run directory with ``evil.py`` beside its config.toml, which names ``evil:Evil``:
    ``evaluate`` refuses it in one line naming the folders searched and ``--agents-from``,
    writes nothing and runs none of evil.py; so does ``run`` of its config.toml from
    elsewhere; named with ``--agents-from``, its code is the user's to run."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tiny.toml").write_text(tiny_text.replace("seeds = 2", "seeds = 1"))
    argv = ["--executor", "local", "--no-progress"]
    assert main(["run", "tiny.toml", "--out", "run", *argv]) == 0
    received = tmp_path / "received"
    shutil.copytree(tmp_path / "run", received)
    (received / "evil.py").write_text(MARK.format(name="evil") + AGENT)
    config = received / "config.toml"
    evil = 'id = "evil:Evil"\nlabel = "ra2q"'
    config.write_text(config.read_text().replace('id = "ra2q"', evil))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    capsys.readouterr()
    registry._FOLDERS.clear()  # a new command, in another folder
    monkeypatch.chdir(elsewhere)
    for command in (["evaluate", str(received)], ["run", str(config), "--out", "again"]):
        assert main([*command, *argv]) == 2
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1, err
        assert (
            "cannot load agent 'evil:Evil': no module 'evil' among the installed packages or in "
            f"the folders searched ({elsewhere}); save it as evil.py in the folder you run "
            "from, or name its folder with --agents-from" in err
        )
        assert ran(tmp_path) == []
    assert not (received / "evaluate").exists() and not (elsewhere / "again").exists()
    main(["evaluate", str(received), "--agents-from", str(received), *argv])
    assert ran(tmp_path) == ["evil"]


PACKAGE = {
    "marked.py": MARK.format(name="marked") + "class Agent:\n    pass\n\ndef helper():\n    pass\n",
    "pkg/__init__.py": MARK.format(name="pkg"),
    "pkg/inner.py": MARK.format(name="inner") + "X = 1\n",
    "starred.py": MARK.format(name="starred") + "from marked import *\n",
}
"""Modules in the user's folder, each leaving a marker when its code runs."""

IDS = {
    "marked:Missing": ("marked has no 'Missing'", []),
    "marked:helper": ("helper is a function, not a class", []),
    "marked:agent": ("marked has no 'agent' (did you mean 'Agent'?)", []),
    "pkg.inner:Missing": ("pkg.inner has no 'Missing'", []),
    "pkg.nowhere:X": ("no module 'pkg.nowhere' among the installed packages", []),
    "nowhere.inner:X": ("no module 'nowhere.inner' among the installed packages", []),
    "this:X": ("this has no 'X'", []),
    # a class it binds: imported (what it is is checked after)
    "marked:Agent": ("resolves to <class 'marked.Agent'>, not a subclass", ["marked"]),
    # a star import: only the module can say, so it runs
    "starred:Missing": ("starred has no 'Missing'", ["marked", "starred"]),
}
"""Each id: the refusal it gets, and the modules whose code ran to get it."""


@pytest.mark.parametrize("name", list(IDS))
def test_an_id_runs_no_code_before_its_class_is_found(name, tmp_path, monkeypatch, own_folders):
    """Each id is refused naming what is missing, and only where the module's text cannot
    say (a star import) or binds the class does any of its code run; the id's packages are
    looked into, never imported, to find it; ``this:X`` prints nothing (Python's "this" is
    not imported)."""
    for path, text in PACKAGE.items():
        (tmp_path / path).parent.mkdir(exist_ok=True)
        (tmp_path / path).write_text(text)
    monkeypatch.chdir(tmp_path)
    registry.add_folders(tmp_path)
    had_this = "this" in sys.modules
    message, running = IDS[name]
    with pytest.raises(UserError) as refused:
        registry.resolve(name)
    assert message in str(refused.value)
    assert ran(tmp_path) == running
    assert ("this" in sys.modules) == had_this
