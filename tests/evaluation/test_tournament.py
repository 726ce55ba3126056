"""Tournaments: every profile is planned and played; seat payoffs and the payoff table."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from evaluation.config import parse_config
from evaluation.experiment import plan
from evaluation.kinds import run_job
from evaluation.tournament import payoff_table, seat_payoffs

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
    a job's seats list each strategy as often as its profile counts it."""
    jobs = plan(config(mode))
    assert len(jobs) == math.comb(5, 2) * 2 == 20
    assert len({job.id for job in jobs}) == 20
    profiles = {job.id.split("/")[0] for job in jobs}
    assert "profile=3-0-0" in profiles and "profile=1-1-1" in profiles
    one = next(job for job in jobs if job.id == "profile=2-0-1/rep=1")
    assert one.labels == ("raql", "raql", "hold") and one.seed == 1


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


def test_pretrained_strategies_are_the_same_agent_in_every_profile():
    """In pretrained mode a strategy is trained once per repetition, alone, and frozen: the
    profiles of one repetition seat identical copies of it; a job has no training records."""
    from evaluation.tournament import _pretrained

    cfg = config("pretrained")
    jobs = {j.id: j for j in plan(cfg)}
    first = _pretrained(cfg, jobs["profile=3-0-0/rep=0"], 0)
    other = _pretrained(cfg, jobs["profile=1-1-1/rep=0"], 0)
    next_rep = _pretrained(cfg, jobs["profile=1-1-1/rep=1"], 0)
    assert first is not other
    np.testing.assert_array_equal(first.q, other.q)
    assert not np.array_equal(first.q, next_rep.q)
    result = run_job(jobs["profile=3-0-0/rep=0"])
    assert result.error is None and {r.phase for r in result.records} == {"test"}


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
    fake = {
        "tournament": {"payoff": "sharpe", "sharpe_floor": 0.01},
        "agents": [{"label": "a"}, {"label": "b"}],
    }
    table = payoff_table(records, fake)
    assert table.counts.tolist() == [[1, 1]]
    np.testing.assert_allclose(table.payoffs, [[(2 / math.sqrt(2) + 200.0) / 2, 0.0]])
    assert table.samples.tolist() == [[2, 2]]
