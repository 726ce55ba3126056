"""evaluation.experiment.runner end to end on tiny experiments: executors agree bit for bit, a
killed run resumes to the same results, failing jobs are recorded, and run directories are
guarded."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from tradearena import agents
from tradearena.agents import calibration
from tradearena.envs.data.tapes import write_lobster
from tradearena.envs.simulator.recording import synthetic_tape
from tradearena.evaluation.analysis.summary import summary_table
from tradearena.evaluation.cli.main import main
from tradearena.evaluation.experiment.config import load_config
from tradearena.evaluation.experiment.kinds import run_job
from tradearena.evaluation.experiment.parallel import LocalExecutor, RayExecutor
from tradearena.evaluation.experiment.rundir import load_run
from tradearena.evaluation.experiment.runner import plan, run_experiment
from tradearena.evaluation.experiment.store import Store

REPO = Path(__file__).resolve().parents[2]
PNG = b"\x89PNG\r\n\x1a\n"
FIGURES = ("learning_curves.png", "sharpe.png")  # a compare run's figures

ROBUSTNESS = """\
kind = "robustness"
seeds = 2

[market]
population = "light"
n_steps = 15
reward_scale = 0.01

[training]
episodes = 2

[testing]
episodes = 2

[[agents]]
id = "ra2q"
params = { k = 3 }

[[agents]]
id = "ra3q"
params = { k = 3 }

[[perturbations]]
name = "takeover"
type = "adversary"
p = 0.2

[[perturbations]]
name = "adversary_trader"
type = "adversary"
mode = "trader"

[[perturbations]]
name = "zi"
type = "zi"
n_agents = 20
"""

FLAKY = '''\
from tradearena.agents.base import Agent


class Flaky(Agent):
    """Holds for a few steps, then raises."""

    description = "fails after a few steps"

    def __init__(self, *, fail_after: int = 5) -> None:
        self.fail_after, self.steps = fail_after, 0

    def act(self, obs, explore=True):
        self.steps += 1
        if self.steps > self.fail_after:
            raise RuntimeError(f"flaky agent broke at step {self.steps}")
        return 1
'''


CONTRARIAN = """\
from tradearena.agents import Agent


class Contrarian(Agent):
    name = "contrarian"

    def __init__(self, *, threshold: float = 1.0, seed=None):
        self.threshold = threshold

    def act(self, obs, explore=True):
        ret = obs[3]
        return 0 if ret > self.threshold else 2 if ret < -self.threshold else 1
"""


def snapshot(directory: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under ``directory``: its bytes and modification time."""
    files = sorted(p for p in directory.rglob("*") if p.is_file())
    return {str(p.relative_to(directory)): (p.read_bytes(), p.stat().st_mtime_ns) for p in files}


def done_jobs(database: Path) -> int:
    """Jobs recorded as done in a (possibly still running) run's database; 0 before it exists."""
    if not database.exists():
        return 0
    db = sqlite3.connect(database, timeout=0.1)
    try:
        return db.execute("SELECT COUNT(*) FROM jobs WHERE status = 'done'").fetchone()[0]
    except sqlite3.OperationalError:  # no tables yet, or locked for a moment
        return 0
    finally:
        db.close()


def cli(*args: str) -> list[str]:
    """The command line of ``tradearena`` in a fresh Python."""
    return [sys.executable, "-m", "tradearena.evaluation.cli.main", *args]


def cli_env() -> dict[str, str]:
    """This environment, with the repository importable."""
    return {**os.environ, "PYTHONPATH": str(REPO)}


@pytest.fixture(scope="module")
def reference(tmp_path_factory, tiny_text) -> tuple[Path, Path]:
    """(config file, run directory) of the tiny experiment run with the LocalExecutor."""
    base = tmp_path_factory.mktemp("reference")
    path = base / "tiny.toml"
    path.write_text(tiny_text)
    outcome = run_experiment(path, LocalExecutor(progress=False), out=base / "run")
    assert outcome.failed == {} and outcome.skipped == 0
    return path, outcome.directory


@pytest.fixture
def flaky_module(tmp_path, monkeypatch):
    """A module ``flaky_agent`` with the agent class ``Flaky``, importable in this process."""
    (tmp_path / "flaky_agent.py").write_text(FLAKY)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop("flaky_agent", None)


# ----------------------------------------------------------------------------- executors
def test_ray_equals_local(reference, ray_session, tmp_path):
    """RayExecutor(workers=2) gives the local run's episode frame and summary.csv exactly,
    though its jobs ran in other processes and finished in any order."""
    path, local = reference
    outcome = run_experiment(
        path, RayExecutor(workers=2, progress=False), out=tmp_path / "ray", figures=False
    )
    assert outcome.failed == {}
    _, expected = load_run(local)
    _, got = load_run(outcome.directory)
    assert len(expected) == 4 * (2 + 2)  # jobs x (train + test episodes), one seat each
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    summary = (outcome.directory / "summary.csv").read_bytes()
    assert summary == (local / "summary.csv").read_bytes()
    assert ray_session.is_initialized()  # the executor joined the session, did not end it


def test_an_agent_of_a_named_folder_runs_locally_and_on_ray(
    ray_session, own_folders, tmp_path, monkeypatch, tiny_text
):
    """A "module:Class" agent saved beside the experiment file, its folder named
    (`agents.add_folders`, the command's --agents-from), run from another folder, loads in
    this process and in the Ray workers (which get the folder); the tables label it by its
    ``name``, and the run directory's config.toml says so, so that the run reads back alike
    without the module."""
    folder = tmp_path / "experiment"
    folder.mkdir()
    (folder / "contrarian.py").write_text(CONTRARIAN)
    custom = tiny_text.replace('id = "ra2q"\nparams = { k = 3 }', 'id = "contrarian:Contrarian"')
    path = folder / "custom.toml"
    path.write_text(custom + "\n[output]\nfigures = false\n")
    monkeypatch.chdir(tmp_path)
    agents.add_folders(folder)
    local = run_experiment(path, LocalExecutor(progress=False), out=tmp_path / "local")
    remote = run_experiment(path, RayExecutor(workers=2, progress=False), out=tmp_path / "ray")
    assert local.failed == remote.failed == {}
    assert sorted(local.summary["agent"]) == ["contrarian", "q_learning"]
    config, records = load_run(remote.directory)
    pd.testing.assert_frame_equal(records, load_run(local.directory)[1], check_exact=True)
    assert [a.label for a in config.agents] == ["q_learning", "contrarian"]
    assert sorted(set(records["job_id"])) == [
        "contrarian/seed=0",
        "contrarian/seed=1",
        "q_learning/seed=0",
        "q_learning/seed=1",
    ]


def test_a_custom_agents_card_gives_the_load_call_that_reads_it(
    own_folders, tmp_path, monkeypatch, tiny_text
):
    """The card of a "module:Class" agent names it in ``custom=``, and that call loads it; a
    registry id's card needs none."""
    (tmp_path / "contrarian.py").write_text(CONTRARIAN)
    custom = tiny_text.replace('id = "ra2q"\nparams = { k = 3 }', 'id = "contrarian:Contrarian"')
    path = tmp_path / "custom.toml"
    path.write_text(custom.replace("seeds = 2", "seeds = 1") + "\n[output]\nfigures = false\n")
    monkeypatch.chdir(tmp_path)
    run = run_experiment(path, LocalExecutor(progress=False), out=tmp_path / "run").directory
    saved = run / "agents" / "contrarian" / "seed-0"
    call = f"agents.load(\"{saved}\", custom=('contrarian:Contrarian',))"
    assert f"`{call}` reads it." in (saved / "card.md").read_text()
    loaded = agents.load(saved, custom=("contrarian:Contrarian",))
    assert type(loaded).__name__ == "Contrarian"
    plain = run / "agents" / "q_learning" / "seed-0"
    assert f'`agents.load("{plain}")` reads it.' in (plain / "card.md").read_text()


def test_a_finished_run_resumed_prints_its_tables_without_ray(reference, tmp_path, monkeypatch):
    """Every job stored: --resume with the Ray executor skips them all and writes the same
    summary.csv from the store, without starting Ray; the figures it has are kept, not drawn
    again; a run without them draws them."""
    path, local = reference
    run = tmp_path / "run"
    shutil.copytree(local, run)
    figures = {name: (run / name).stat().st_mtime_ns for name in FIGURES}
    monkeypatch.setattr(RayExecutor, "start", lambda self: pytest.fail("Ray was started"))
    outcome = run_experiment(path, RayExecutor(progress=False), out=run, resume=True)
    assert outcome.skipped == 4 and outcome.failed == {}
    assert (run / "summary.csv").read_bytes() == (local / "summary.csv").read_bytes()
    assert {name: (run / name).stat().st_mtime_ns for name in FIGURES} == figures
    for name in FIGURES:
        (run / name).unlink()
    run_experiment(path, RayExecutor(progress=False), out=run, resume=True)
    assert all((run / name).read_bytes().startswith(PNG) for name in FIGURES)


def test_a_run_keeps_its_calibration_and_resumes_without_recalibrating(
    tmp_path, tiny_text, monkeypatch
):
    """A run with the making task's reference writes calibrations.json (the market's
    calibration and the tuning of gamma, keyed by the market's table); resumed in a process
    that has computed neither, the check and the jobs read them back: no session is played."""
    monkeypatch.setattr(calibration, "_DONE", {})
    monkeypatch.setattr(calibration, "_PORTABLE", set())
    path = tmp_path / "making.toml"
    path.write_text(
        tiny_text.replace('population = "light"', 'task = "making"\npopulation = "light"')
        + '\n[[agents]]\nid = "avellaneda_stoikov"\n'
    )
    first = run_experiment(path, LocalExecutor(progress=False), out=tmp_path / "run")
    kept = json.loads((tmp_path / "run" / "calibrations.json").read_text())
    assert sorted(entry["kind"] for entry in kept) == ["Calibration", "Tuning"]
    table = json.dumps(load_config(path).market.to_table(), sort_keys=True)
    assert [e["key"] for e in kept if e["kind"] == "Calibration"] == [["market", table, 16]]

    monkeypatch.setattr(calibration, "_DONE", {})  # a new process
    monkeypatch.setattr(calibration, "_PORTABLE", set())
    monkeypatch.setattr(calibration, "calibration_seeds", lambda n: pytest.fail("calibrated"))
    with sqlite3.connect(tmp_path / "run" / "results.sqlite") as db:  # every job again,
        db.execute("DELETE FROM episodes")  # from the kept values
        db.execute("DELETE FROM jobs")
    db.close()
    again = run_experiment(path, LocalExecutor(progress=False), out=tmp_path / "run", resume=True)
    pd.testing.assert_frame_equal(again.summary, first.summary)


# ----------------------------------------------------------------------------- resuming
def test_kill_and_resume(tmp_path, tiny_text, tiny_jobs):
    """A run killed with SIGKILL after some jobs are stored resumes, skipping them, to the
    exact episode frame of an uninterrupted run: no row lost or duplicated."""
    train = 40
    text = tiny_text.replace("[training]\nepisodes = 2", f"[training]\nepisodes = {train}")
    path = tmp_path / "long.toml"
    path.write_text(text + "\n[output]\nfigures = false\n")
    out = tmp_path / "run"
    database = out / "results.sqlite"

    args = cli("run", str(path), "--executor", "local", "--out", str(out), "--no-progress")
    child = subprocess.Popen(
        args,
        cwd=tmp_path,
        env=cli_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while done_jobs(database) == 0 and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        child.send_signal(signal.SIGKILL)
    finally:
        child.kill()
        child.wait()
    assert child.returncode == -signal.SIGKILL
    stored = done_jobs(database)
    assert 1 <= stored < len(tiny_jobs), f"killed after {stored} jobs: make the jobs longer"

    resumed = subprocess.run(
        [*args, "--resume"],
        cwd=tmp_path,
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert f"resumed: {stored} finished jobs skipped" in resumed.stdout

    whole = run_experiment(path, LocalExecutor(progress=False), out=tmp_path / "whole")
    _, expected = load_run(whole.directory)
    _, got = load_run(out)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    assert len(got) == len(tiny_jobs) * 1 * (train + 2)  # jobs x seats x episodes
    assert not got.duplicated(["job_id", "seat", "phase", "condition", "episode"]).any()
    with Store(database) as store:
        jobs = store.jobs()
        assert jobs["job_id"].tolist() == tiny_jobs  # unique, sorted, all there
        assert set(jobs["status"]) == {"done"}
        assert store.failed() == {}
    with sqlite3.connect(database) as db:
        assert db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 2
    db.close()


def test_ctrl_c_is_one_line_saying_what_is_stored(
    tmp_path, tiny_text, tiny_jobs, monkeypatch, capsys
):
    """Ctrl-C while the jobs run: exit 130 and one line, the jobs stored and that --resume
    goes on; resumed, the run skips them and finishes."""
    path = tmp_path / "tiny.toml"
    path.write_text(tiny_text)
    out = tmp_path / "run"
    record = Store.record

    def interrupted(store, result):
        if store.finished():
            raise KeyboardInterrupt
        record(store, result)

    monkeypatch.setattr(Store, "record", interrupted)
    args = ["run", str(path), "--executor", "local", "--no-progress", "--out", str(out)]
    assert main(args) == 130
    err = capsys.readouterr().err
    assert err == (
        f"tradearena: interrupted: 1 finished jobs stored in {out / 'results.sqlite'}; the "
        "same command with --resume goes on from them\n"
    )
    monkeypatch.undo()
    assert main([*args, "--resume"]) == 0
    assert "resumed: 1 finished jobs skipped" in capsys.readouterr().out


def test_a_run_cut_while_drawing_draws_every_figure_when_resumed(tmp_path, tiny_text, monkeypatch):
    """A run cut after its first figure is drawn leaves none (they appear together); the
    finished run resumed then draws them all."""
    from matplotlib.figure import Figure

    path = tmp_path / "tiny.toml"
    path.write_text(tiny_text)
    out = tmp_path / "run"
    savefig, drawn = Figure.savefig, []

    def cut(figure, *args, **kwargs):
        if drawn:
            raise KeyboardInterrupt
        drawn.append(savefig(figure, *args, **kwargs))

    monkeypatch.setattr(Figure, "savefig", cut)
    with pytest.raises(KeyboardInterrupt):
        run_experiment(path, LocalExecutor(progress=False), out=out)
    assert drawn and sorted(p.name for p in out.iterdir() if p.suffix == ".png") == []
    monkeypatch.undo()
    run_experiment(path, LocalExecutor(progress=False), out=out, resume=True)
    assert sorted(p.name for p in out.glob("*.png")) == sorted(FIGURES)


def test_resume_with_changed_config(reference, tmp_path, tiny_text):
    """--resume with an edited file is refused with a clear error; the run is left as it was
    (config.toml, jobs, episodes, no new run row)."""
    path, local = reference
    run = tmp_path / "run"
    shutil.copytree(local, run)
    changed = tmp_path / "changed.toml"
    changed.write_text(tiny_text.replace("seeds = 2", "seeds = 3"))
    with Store(run / "results.sqlite") as store:
        before = store.jobs(), store.episodes()
    with pytest.raises(ValueError, match="the config changed since the run in .* started"):
        run_experiment(changed, LocalExecutor(progress=False), out=run, resume=True)
    assert (run / "config.toml").read_text() == tiny_text
    with Store(run / "results.sqlite") as store:
        pd.testing.assert_frame_equal(store.jobs(), before[0])
        pd.testing.assert_frame_equal(store.episodes(), before[1])
    with sqlite3.connect(run / "results.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 1
    db.close()


def test_existing_run_needs_resume(reference, tmp_path, capsys):
    """``run`` into a directory that holds a run, without --resume: exit 2, a one-line error
    that says to pass --resume, and not a byte or timestamp of the directory changed."""
    path, local = reference
    run = tmp_path / "run"
    shutil.copytree(local, run)
    refused_untouched(
        ["run", str(path), "--executor", "local", "--out", str(run), "--no-progress"],
        run,
        f"{run} already holds a run: pass --resume to continue it, or --out a new directory",
        capsys,
    )


def refused_untouched(argv: list[str], folder: Path, message: str, capsys) -> None:
    """``argv`` is refused with the one line ``message`` (exit 2, nothing on stdout), and not
    a byte or timestamp of ``folder`` changed."""
    before = snapshot(folder)
    assert main(argv) == 2
    stdout, stderr = capsys.readouterr()
    assert stdout == ""
    assert stderr.splitlines() == [f"tradearena: error: {message}"]
    assert snapshot(folder) == before


@pytest.mark.parametrize("resume", [False, True])
def test_a_folder_of_other_files_is_not_written_into(reference, tmp_path, capsys, resume):
    """``run --out`` a folder of the user's files that holds no run (a config.toml and a
    summary.csv of their own), with or without --resume: exit 2, one line, and not a byte or
    timestamp of the folder changed; an empty folder, or one holding only a cut run's lock,
    takes the run."""
    path, _ = reference
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "config.toml").write_text("my notes\n")
    (mine / "summary.csv").write_text("a,b\n1,2\n")
    argv = ["run", str(path), "--executor", "local", "--no-progress", "--out", str(mine)]
    refused_untouched(
        argv + ["--resume"] * resume,
        mine,
        f"{mine} holds files and no run (no results.sqlite): give --out a new or empty "
        "directory, so that none of them is overwritten",
        capsys,
    )
    empty = tmp_path / "empty"
    (empty / ".lock").parent.mkdir()
    (empty / ".lock").write_text("")
    assert (
        main(["run", str(path), "--executor", "local", "--no-progress", "--out", str(empty)]) == 0
    )
    assert (empty / "results.sqlite").exists()


# ----------------------------------------------------------------------------- failures
def test_failing_agent(flaky_module, tmp_path, tiny_text, capsys):
    """A custom "module:Class" agent that raises in act(): its jobs are recorded failed with
    the traceback, the other jobs finish, and ``run`` exits 1 naming the failed jobs. A resumed
    run retries only the failed jobs."""
    text = tiny_text.replace('id = "ra2q"\nparams = { k = 3 }', 'id = "flaky_agent:Flaky"')
    path = tmp_path / "flaky.toml"
    path.write_text(text + "\n[output]\nfigures = false\n")
    out = tmp_path / "run"
    argv = ["run", str(path), "--executor", "local", "--out", str(out), "--no-progress"]
    assert main(argv) == 1
    stdout, stderr = capsys.readouterr()
    failed = ["Flaky/seed=0", "Flaky/seed=1"]
    assert stderr.splitlines() == [
        "2 job(s) failed:",
        *(f"  {job}: RuntimeError: flaky agent broke at step 6" for job in failed),
    ]
    with Store(out / "results.sqlite") as store:
        errors = store.failed()
        assert sorted(errors) == failed
        for error in errors.values():
            assert error.startswith("Traceback (most recent call last):")
            assert "flaky_agent.py" in error
            assert error.rstrip().endswith("RuntimeError: flaky agent broke at step 6")
        assert store.finished() == {"q_learning/seed=0", "q_learning/seed=1"}
        episodes = store.episodes()
    assert set(episodes["job_id"]) == {"q_learning/seed=0", "q_learning/seed=1"}
    assert len(episodes) == 2 * (2 + 2)
    summary = pd.read_csv(out / "summary.csv")
    assert summary["agent"].tolist() == ["q_learning"]

    assert main([*argv, "--resume"]) == 1
    stdout, stderr = capsys.readouterr()
    assert "resumed: 2 finished jobs skipped" in stdout
    assert "2 job(s) failed:" in stderr
    with Store(out / "results.sqlite") as store:
        assert len(store.jobs()) == 4 and sorted(store.failed()) == failed
        pd.testing.assert_frame_equal(store.episodes(), episodes)


# ----------------------------------------------------------------------------- kinds
ROBUSTNESS_CONDITIONS = ["clean", "takeover", "adversary_trader", "zi"]


def check_robustness(records: pd.DataFrame, summary: pd.DataFrame) -> None:
    """One summary row per (condition, agent); the adversary-trader condition records only
    the learner's seat; 2 jobs of (2 agents x 2 training + 2 agents x 4 conditions x 2 test)
    episodes."""
    assert sorted(zip(summary["condition"], summary["agent"])) == sorted(
        (c, a) for c in ROBUSTNESS_CONDITIONS for a in ("ra2q", "ra3q")
    )
    assert set(summary["seeds"]) == {2} and set(summary["episodes"]) == {2 * 2}
    assert sorted(set(records["job_id"])) == ["all/seed=0", "all/seed=1"]
    assert len(records) == 2 * (2 * 2 + 2 * len(ROBUSTNESS_CONDITIONS) * 2)
    trader = records[records["condition"] == "adversary_trader"]
    assert len(trader) == 2 * 2 * 2
    assert set(trader["seat"]) == {0} and set(trader["agent"]) == {"ra2q", "ra3q"}
    assert set(records["agent"]) == {"ra2q", "ra3q"}
    assert set(records.loc[records["phase"] == "train", "condition"]) == {"clean"}


def test_robustness_jobs(tmp_path):
    """The robustness jobs themselves (run_job, no store): every agent under clean and each
    perturbation, summarised per (condition, agent)."""
    path = tmp_path / "robust.toml"
    path.write_text(ROBUSTNESS)
    rows = []
    for job in plan(load_config(path)):
        result = run_job(job)
        assert result.error is None, result.error
        rows += [{"job_id": job.id, "seed": job.seed, **r.__dict__} for r in result.records]
    records = pd.DataFrame(rows)
    test = records[records["phase"] == "test"]
    check_robustness(records, summary_table(test, by=["condition", "agent"]))


def test_robustness_experiment(tmp_path):
    """A tiny robustness experiment runs end to end and its stored results check out (every
    agent of a robustness job is recorded at seat 0: the store must key rows by agent too)."""
    path = tmp_path / "robust.toml"
    path.write_text(ROBUSTNESS)
    outcome = run_experiment(
        path, LocalExecutor(progress=False), out=tmp_path / "run", figures=False
    )
    assert outcome.failed == {}
    _, records = load_run(outcome.directory)
    check_robustness(records, outcome.summary)


# ----------------------------------------------------------------------------- determinism
def test_plan_and_jobs_are_deterministic(tiny_config, tiny_jobs, reference):
    """plan() gives the same job ids in the same order for every load of the file, and
    run_job on the same Job twice gives identical records (those the reference run stored)."""
    first, second = plan(load_config(tiny_config)), plan(load_config(tiny_config))
    assert [job.id for job in first] == tiny_jobs
    assert first == second
    job = first[-1]
    a, b = run_job(job), run_job(job)
    assert a.error is None and a.records == b.records and len(a.records) == 4
    _, stored = load_run(reference[1])
    rows = stored[stored["job_id"] == job.id].drop(columns=["job_id", "seed"])
    expected = pd.DataFrame([r.__dict__ for r in a.records])
    expected = expected.sort_values(["seat", "phase", "condition", "episode"], ignore_index=True)
    pd.testing.assert_frame_equal(
        rows.reset_index(drop=True), expected[rows.columns], check_dtype=False, check_exact=True
    )


@pytest.mark.parametrize("tape", ["", "synthetic"])
def test_job_order_does_not_matter(tmp_path, tiny_text, tape):
    """Jobs run in one process in reverse order give the records of a forward pass: nothing
    (a cached market tape, a global random state) leaks from one job into the next."""
    path = tmp_path / "tiny.toml"
    path.write_text(tiny_text.replace("n_steps = 15", f'n_steps = 15\ntape = "{tape}"'))
    jobs = plan(load_config(path))
    forward = {job.id: run_job(job).records for job in jobs}
    backward = {job.id: run_job(job).records for job in reversed(jobs)}
    assert forward == backward
    assert len({records[0].pnl for records in forward.values()}) > 1  # seeds and agents differ


# ----------------------------------------------------------------------------- figures
def test_figures(reference, tmp_path, capsys):
    """A run writes learning_curves.png and sharpe.png; ``plot RUN_DIR`` redraws them."""
    run = tmp_path / "run"
    shutil.copytree(reference[1], run)
    names = list(FIGURES)
    for name in names:
        assert (run / name).read_bytes().startswith(PNG)
        (run / name).unlink()
    assert main(["plot", str(run)]) == 0
    assert sorted(capsys.readouterr().out.split()) == sorted(str(run / n) for n in names)
    for name in names:
        data = (run / name).read_bytes()
        assert data.startswith(PNG) and len(data) > 1000


def test_training_in_batched_sessions(tmp_path):
    """``[training] sessions``: every episode and checkpoint is recorded once under its own
    number; a rule-based agent's records equal the one-by-one run's (greedy, no draws); a
    learner's differ (it meets the sessions' transitions interleaved) but its training
    episodes are the same markets."""
    text = """\
kind = "compare"
seeds = 1

[market]
task = "making"
population = "light"
n_steps = 10

[training]
episodes = 7
evaluate_every = 3
evaluate_episodes = 2
sessions = SESSIONS

[testing]
episodes = 3

[[agents]]
id = "avellaneda_stoikov"

[[agents]]
id = "q_learning"
"""
    records = {}
    for sessions in (1, 3):
        path = tmp_path / f"batched_{sessions}.toml"
        path.write_text(text.replace("SESSIONS", str(sessions)))
        jobs = plan(load_config(path))
        records[sessions] = {job.id: run_job(job).records for job in jobs}
    maker = "avellaneda_stoikov/seed=0"
    assert records[3][maker] == records[1][maker]
    learner = [r.__dict__ for r in records[3]["q_learning/seed=0"]]
    numbers = {(r["phase"], r["episode"]) for r in learner}
    assert numbers == {
        *(("train", e) for e in range(7)),
        *(("eval", e) for e in range(2 * 3)),  # checkpoints 0, 1 (after 3), 2 (after 6)
        *(("test", e) for e in range(3)),
    }
    assert len(learner) == len(numbers)
    serial = [r.__dict__ for r in records[1]["q_learning/seed=0"]]
    assert learner != serial


HOLD_LOCK = """
import sys, time
from pathlib import Path
from tradearena.evaluation.experiment.runner import locked

with locked(Path(sys.argv[1])):
    print("locked", flush=True)
    time.sleep(120)
"""


def test_a_run_directory_another_run_writes_is_refused_naming_its_process(
    reference, tmp_path, capsys
):
    """``run --resume`` into a directory that another process is writing (it holds the
    directory's lock): exit 2, one line naming that process, nothing run; the lock goes with
    its holder, even one killed with SIGKILL, and the run then resumes."""
    path, run = reference
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(copy)],
        env=cli_env(),
        stdout=subprocess.PIPE,
        text=True,
    )
    argv = ["run", str(path), "--executor", "local", "--out", str(copy), "--resume"]
    try:
        assert holder.stdout.readline() == "locked\n"
        assert main(argv) == 2
        out, err = capsys.readouterr()
        assert out == ""
        assert err == (
            f"tradearena: error: {copy} is being written by another run (pid {holder.pid}): "
            "wait for it to finish, or give another directory with --out\n"
        )
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    assert main(argv) == 0
    assert "resumed: 4 finished jobs skipped" in capsys.readouterr().out


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_a_damaged_results_database_is_one_line_naming_it(damage, reference, tmp_path, capsys):
    """A ``results.sqlite`` that is not a database, or is cut short: ``plot`` and ``run
    --resume`` exit 2 with one line naming the file."""
    path, run = reference
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    database = copy / "results.sqlite"
    for stale in ("results.sqlite-wal", "results.sqlite-shm"):
        (copy / stale).unlink(missing_ok=True)
    data = database.read_bytes()
    database.write_bytes(b"not a database\n" * 100 if damage == "garbage" else data[:4096])
    for argv in (
        ["plot", str(copy)],
        ["run", str(path), "--executor", "local", "--out", str(copy), "--resume"],
    ):
        assert main(argv) == 2
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1
        assert err.startswith(f"tradearena: error: {database}: not a readable results database (")


def test_a_resume_refuses_data_that_changed_since_the_run_started(tmp_path, tiny_text, capsys):
    """The run records its tape's size and hash (``inputs.json``); ``--resume`` with the same
    tape goes on, with a tape replaced between a kill and the resume it is refused (exit 2,
    one line naming the file), so that no table mixes two days."""
    tape = tmp_path / "day_message_1.csv"
    write_lobster(synthetic_tape(0, n_steps=5), tape)
    path = tmp_path / "day.toml"
    path.write_text(tiny_text.replace("n_steps = 15", f'n_steps = 4\ntape = "{tape.name}"'))
    run = tmp_path / "run"
    argv = ["run", str(path), "--executor", "local", "--out", str(run), "--no-progress"]
    assert main(argv) == 0
    recorded = json.loads((run / "inputs.json").read_text())
    assert list(recorded) == [str(tape)] and recorded[str(tape)]["bytes"] == tape.stat().st_size
    assert main([*argv, "--resume"]) == 0
    capsys.readouterr()
    write_lobster(synthetic_tape(1, n_steps=5), tape)
    assert main([*argv, "--resume"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        f"tradearena: error: {tape} changed since the run in {run} started (inputs.json records "
        "its data files): restore it, or start a new run directory\n"
    )
