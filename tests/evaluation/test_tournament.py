"""Tournaments: every profile is planned and played; seat payoffs and the payoff table."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from tradearena.envs.seats import SeatedMarket
from tradearena.evaluation.experiment.config import parse_config
from tradearena.evaluation.experiment.kinds import run_job
from tradearena.evaluation.experiment.parallel import LocalExecutor
from tradearena.evaluation.experiment.profiles import seat_payoffs
from tradearena.evaluation.experiment.rollout import TEST, episodes, trained_alone
from tradearena.evaluation.experiment.rundir import load_run
from tradearena.evaluation.experiment.runner import plan, run_experiment
from tradearena.evaluation.experiment.schema import AgentEntry, Tournament
from tradearena.evaluation.kinds.tournament import payoff_table

TOURNAMENT = """\
kind = "tournament"
seeds = 2
[tournament]
players = 3
mode = "{mode}"
[market]
population = "light"
n_steps = 8
reward_scale = 0.01
[training]
episodes = 2
[testing]
episodes = 3
[[agents]]
id = "raql"
[[agents]]
id = "ra2q"
params = {{ k = 3 }}
[[agents]]
id = "hold"
"""


def config(mode: str) -> dict:
    return parse_config(TOURNAMENT.format(mode=mode))


@pytest.mark.parametrize("mode", ["train-in-profile", "pretrained"])
def test_plan_covers_every_profile_and_repetition(mode):
    """C(p + k - 1, k - 1) = C(5, 2) = 10 profiles of 3 seats over 3 strategies, x 2 reps;
    a job's seats list each strategy as often as its profile counts it. A pretrained
    tournament first trains each strategy per repetition (stage 0), then plays the profiles."""
    jobs = plan(config(mode))
    profiles = [job for job in jobs if job.id.startswith("profile=")]
    assert len(profiles) == math.comb(5, 2) * 2 == 20
    assert len({job.id for job in jobs}) == len(jobs)
    assert "profile=3-0-0/rep=0" in {j.id for j in profiles}
    one = next(job for job in jobs if job.id == "profile=2-0-1/rep=1")
    assert one.labels == ("raql", "raql", "hold") and one.seed == 1
    training = [job for job in jobs if job.stage == 0 and job not in profiles]
    if mode == "pretrained":
        assert [j.id for j in training] == [
            f"train/{s}/rep={r}" for s in ("raql", "ra2q", "hold") for r in (0, 1)
        ]
        assert {j.stage for j in profiles} == {1}
    else:
        assert training == [] and {j.stage for j in profiles} == {0}


def test_train_in_profile_records_every_seat():
    """Training then test records for all 3 seats, labelled by strategy, condition = profile."""
    job = next(j for j in plan(config("train-in-profile")) if j.id == "profile=1-1-1/rep=0")
    result = run_job(job)
    assert result.error is None
    records = pd.DataFrame([r.__dict__ for r in result.records])
    assert set(records["condition"]) == {"1-1-1"}
    counts = records.groupby(["phase", "seat", "agent"]).size().to_dict()
    assert counts == {
        ("test", 0, "raql"): 3,
        ("test", 1, "ra2q"): 3,
        ("test", 2, "hold"): 3,
        ("train", 0, "raql"): 2,
        ("train", 1, "ra2q"): 2,
        ("train", 2, "hold"): 2,
    }
    hold = records[records["agent"] == "hold"]
    assert (hold["trades"] == 0).all() and (hold["pnl"] == 0).all()


def test_pretrained_profiles_seat_frozen_copies_of_each_strategy(tmp_path):
    """Pretrained: each strategy is trained once per repetition, alone, and saved; a profile
    is only tested, and its records are those of a table seating frozen copies of the agents
    `trained_alone` gives (what the profile loads from the run directory)."""
    cfg = config("pretrained")
    (tmp_path / "t.toml").write_text(cfg.text)
    outcome = run_experiment(
        tmp_path / "t.toml", LocalExecutor(progress=False), out=tmp_path / "run"
    )
    assert outcome.failed == {}
    _, records = load_run(outcome.directory)
    phases = records.groupby(records["job_id"].str.startswith("train/"))["phase"].unique()
    assert set(phases[True]) == {"train"} and set(phases[False]) == {"test"}
    job = next(j for j in plan(cfg) if j.id == "profile=2-1-0/rep=1")
    copies = [trained_alone(cfg, job, cfg.agents[i], i)[0] for i in (0, 0, 1)]
    table = SeatedMarket(cfg.market, copies)
    expected = episodes(
        table,
        cfg,
        job,
        phase=TEST,
        condition=0,
        condition_name="2-1-0",
        labels=list(job.labels),
        recorded=range(3),
    )
    got = records[records["job_id"] == job.id].sort_values(["seat", "episode"])
    assert got["pnl"].tolist() == [r.pnl for r in sorted(expected, key=lambda r: r.seat)]
    assert (outcome.directory / "agents" / "ra2q" / "seed-1" / "agent.json").exists()
    alone = run_job(job)  # no run directory: nothing to load the strategies from
    assert "profiles seat the strategies its training jobs saved" in alone.error


def test_seat_payoffs_and_table_by_hand():
    """Sharpe payoff = mean / max(std, floor) of a seat's test PnL; the table cell is the
    mean over the strategy's seats and repetitions."""
    rows = []
    for seed, seat, agent, pnls in [
        (0, 0, "a", [1.0, 3.0]),  # mean 2, std sqrt(2): 1.41421
        (0, 1, "b", [0.0, 0.0]),  # std 0 < floor 0.01: 0 / 0.01 = 0
        (1, 0, "a", [2.0, 2.0]),  # mean 2, std 0: 2 / 0.01 = 200
        (1, 1, "b", [-1.0, 1.0]),  # mean 0: 0
    ]:
        for episode, pnl in enumerate(pnls):
            rows.append(
                {
                    "condition": "1-1",
                    "seed": seed,
                    "seat": seat,
                    "agent": agent,
                    "phase": "test",
                    "episode": episode,
                    "pnl": pnl,
                }
            )
    records = pd.DataFrame(rows)
    seats = seat_payoffs(records, payoff="sharpe", sharpe_floor=0.01)
    assert seats["payoff"].tolist() == pytest.approx([2 / math.sqrt(2), 0.0, 200.0, 0.0])
    assert seat_payoffs(records, payoff="pnl")["payoff"].tolist() == [2.0, 0.0, 2.0, 0.0]
    fake = SimpleNamespace(
        tournament=Tournament(
            players=2, mode="pretrained", payoff="sharpe", sharpe_floor=0.01, weighting="tuyls"
        ),
        agents=[AgentEntry("a", "a"), AgentEntry("b", "b")],
    )
    table = payoff_table(records, fake)
    assert table.counts.tolist() == [[1, 1]]
    np.testing.assert_allclose(table.payoffs, [[(2 / math.sqrt(2) + 200.0) / 2, 0.0]])
    assert table.samples.tolist() == [[2, 2]]
