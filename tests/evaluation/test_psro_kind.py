"""The ``psro`` experiment kind on a tiny market: the game grows by a learned response per
round, the gains it records are the deviation gains of its saved tables, and a resumed run
runs only the rounds it had not finished."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tradearena.agents.saving import read_header
from tradearena.evaluation.analysis.equilibria import deviation_gains, regret
from tradearena.evaluation.analysis.payoffs import PayoffTable
from tradearena.evaluation.cli.main import main
from tradearena.evaluation.experiment.config import ConfigError, parse_config
from tradearena.evaluation.experiment.kinds import run_job
from tradearena.evaluation.experiment.parallel import LocalExecutor
from tradearena.evaluation.experiment.runner import plan, run_experiment
from tradearena.evaluation.experiment.store import JobResult, Store

PSRO = """\
kind = "psro"
seeds = 1
[tournament]
players = 2
payoff = "pnl"
[psro]
learner = {{ id = "raql" }}
rounds = 2
threshold = 0.0
[market]
population = "light"
n_steps = 8
reward_scale = 0.01
[training]
episodes = 4
[testing]
episodes = 3
[[agents]]
id = "{initial}"
"""

ROUND_0 = ["train/random/rep=0", "profile=random:2/rep=0", "respond/raql_r1/rep=0"]
ROUND_0 += ["profile=random:1,raql_r1:1/rep=0", "profile=raql_r1:2/rep=0"]
ROUND_1 = ["respond/raql_r2/rep=0", "profile=random:1,raql_r2:1/rep=0"]
ROUND_1 += ["profile=raql_r1:1,raql_r2:1/rep=0", "profile=raql_r2:2/rep=0"]


class Interrupted(Exception):
    """Stands for a run killed part way."""


def _runner(ran: list[str], stop_after: int | None = None):
    """A job function for `LocalExecutor` that notes the ids it runs and raises
    `Interrupted` instead of running job number ``stop_after``."""

    def job(job):
        if len(ran) == stop_after:
            raise Interrupted
        ran.append(job.id)
        return run_job(job)

    return job


@pytest.fixture(scope="module")
def whole(tmp_path_factory) -> tuple[Path, list[str]]:
    """An uninterrupted run from the random strategy, and the jobs it ran in order."""
    base = tmp_path_factory.mktemp("psro")
    path = base / "psro.toml"
    path.write_text(PSRO.format(initial="random"))
    ran: list[str] = []
    run_experiment(path, LocalExecutor(progress=False, job=_runner(ran)), out=base / "run")
    return base / "run", ran


def test_rounds_play_only_the_new_profiles_and_grow_the_game(whole):
    """Round 0 solves the game of {random}, trains raql_r1 against it, plays the profiles
    with raql_r1; round 1 adds raql_r2's profiles; no profile is played twice."""
    directory, ran = whole
    assert ran == ROUND_0 + ROUND_1
    frame = pd.read_csv(directory / "psro.csv")
    assert list(frame["strategies"]) == ["random", "random raql_r1"]
    assert list(frame["response"]) == ["raql_r1", "raql_r2"]
    assert list(frame["added"]) == [True, False]  # the stop: raql_r2 gains no more than 0
    sizes = [
        (
            PayoffTable.read_csv(directory / f"rounds/round-{r}/payoffs.csv").k,
            PayoffTable.read_csv(directory / f"rounds/round-{r}/extended.csv").k,
        )
        for r in range(2)
    ]
    assert sizes == [(1, 2), (2, 3)]
    for label in ("raql_r1", "raql_r2"):
        saved = directory / "agents" / label / "seed-0"
        assert read_header(saved)["id"] == "raql"
        card = (saved / "card.md").read_text()
        assert "`raql`, trained 4 episodes in all, 4 of them in this run (psro" in card
        assert f'label = "{label}"' in card
    assert (directory / "psro.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_gains_are_the_deviation_gains_of_the_saved_tables(whole):
    """Each round's gain is raql_r<r+1>'s deviation gain against the round's mixture in the
    extended table; the mixture is an equilibrium of the table solved; round 0's, against the
    pure random mixture of 2 seats, is U_r1(random 1, r1 1) - U_random(random 2) by hand."""
    directory, _ = whole
    frame = pd.read_csv(directory / "psro.csv")
    for r, row in frame.iterrows():
        solved = PayoffTable.read_csv(directory / f"rounds/round-{r}/payoffs.csv")
        extended = PayoffTable.read_csv(directory / f"rounds/round-{r}/extended.csv")
        x = row[[f"p_{s}" for s in solved.strategies]].to_numpy(float)
        assert regret(solved, x) <= 1e-6
        gain = deviation_gains(extended, np.append(x, 0.0))[-1]
        np.testing.assert_allclose(row["gain"], gain, rtol=1e-8, atol=1e-10)
    first = PayoffTable.read_csv(directory / "rounds/round-0/extended.csv")
    by_hand = first.payoffs[first.row((1, 1)), 1] - first.payoffs[first.row((2, 0)), 0]
    np.testing.assert_allclose(frame["gain"][0], by_hand, rtol=1e-8)
    assert frame["gain"][0] > 0 >= frame["gain"][1]


def test_resume_skips_the_finished_round(whole, tmp_path):
    """Killed when round 1's response was to be trained, the resumed run runs round 1's
    jobs only, and ends with the uninterrupted run's table to the last bit."""
    path = tmp_path / "psro.toml"
    path.write_text(PSRO.format(initial="random"))
    out = tmp_path / "run"
    first: list[str] = []
    with pytest.raises(Interrupted):
        run_experiment(path, LocalExecutor(progress=False, job=_runner(first, 5)), out=out)
    assert first == ROUND_0
    assert not (out / "psro.csv").exists()
    again: list[str] = []
    outcome = run_experiment(
        path, LocalExecutor(progress=False, job=_runner(again)), out=out, resume=True
    )
    assert again == ROUND_1
    assert outcome.skipped == len(ROUND_0)
    expected = (whole[0] / "psro.csv").read_text()
    assert (out / "psro.csv").read_text() == expected
    with Store(out / "results.sqlite") as store:
        assert store.finished() == set(ROUND_0 + ROUND_1)


def test_a_failed_response_keeps_the_finished_rounds(whole, tmp_path):
    """Round 1's response fails: its profiles cannot seat it and fail too, the loop stops,
    and psro.csv holds round 0 alone, as the whole run has it."""
    path = tmp_path / "psro.toml"
    path.write_text(PSRO.format(initial="random"))

    def job(job):
        if job.id == ROUND_1[0]:
            return JobResult(job.id, job.seed, (), 0.0, "Traceback: no response")
        return run_job(job)

    outcome = run_experiment(path, LocalExecutor(progress=False, job=job), out=tmp_path / "run")
    assert sorted(outcome.failed) == sorted(ROUND_1)
    frame = pd.read_csv(tmp_path / "run" / "psro.csv")
    expected = pd.read_csv(whole[0] / "psro.csv").head(1)
    shown = ["round", "strategies", "p_random", "p_raql_r1", "regret", "response", "gain"]
    assert list(frame.columns) == [*shown, "added"]
    pd.testing.assert_frame_equal(frame, expected[frame.columns], check_dtype=False)


def test_plan_is_the_first_rounds_game(tmp_path, capsys):
    """Before any result the plan is the initial strategies' training and their profiles;
    ``--dry-run`` says so."""
    jobs = plan(parse_config(PSRO.format(initial="random")))
    assert [job.id for job in jobs] == ROUND_0[:2]
    assert [job.stage for job in jobs] == [0, 1]
    path = tmp_path / "psro.toml"
    path.write_text(PSRO.format(initial="random"))
    assert main(["run", str(path), "--dry-run"]) == 0
    assert "psro experiment, 2 jobs in its first round (the next are planned" in (
        capsys.readouterr().out
    )


def test_learner_errors_name_the_field():
    """The learner must be given and known; a response may not take an agent's label; the
    game is one population without reduction."""
    text = PSRO.format(initial="random")
    cases = {
        'learner = { id = "" }': r"psro\.learner\.id: a psro experiment names its learner",
        'learner = { id = "raqll" }': r"psro\.learner: unknown agent 'raqll'",
        'learner = { id = "raql", label = "random" }': (
            r"psro\.learner\.label: responses \['random_r1'\] clash with \[\[agents\]\]"
        ),
    }
    for learner, message in cases.items():
        changed = text.replace('learner = { id = "raql" }', learner)
        if "label" in learner:
            changed = changed.replace('id = "random"', 'id = "random"\nlabel = "random_r1"')
        with pytest.raises(ConfigError, match=message):
            parse_config(changed)
    reduced = text.replace("players = 2", "players = 3\nreduced = 2")
    with pytest.raises(ConfigError, match="tournament: a psro game has one population and no"):
        parse_config(reduced)
