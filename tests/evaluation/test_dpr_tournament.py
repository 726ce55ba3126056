"""Tournaments of many seats reduced by DPR: the plan plays exactly the profiles the reduced
game reads, and the run reports the reduced game's equilibria."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tradearena.evaluation.analysis.equilibria import regret
from tradearena.evaluation.analysis.payoffs import PayoffTable, profile_key
from tradearena.evaluation.analysis.reduction import dpr_profiles, reduce_dpr
from tradearena.evaluation.experiment.config import ConfigError, load_config, parse_config
from tradearena.evaluation.experiment.parallel import LocalExecutor
from tradearena.evaluation.experiment.runner import plan, run_experiment

SHIPPED = Path(__file__).resolve().parents[2] / "configs" / "dpr_61.toml"

SMALL = """\
kind = "tournament"
seeds = 2
[tournament]
players = 7
reduced = {reduced}
mode = "pretrained"
payoff = "pnl"
[market]
task = "making"
population = "light"
n_steps = 8
[training]
episodes = 0
[testing]
episodes = 3
[[agents]]
id = "hold"
train = false
[[agents]]
id = "random"
train = false
"""


def test_the_shipped_plan_is_exactly_the_dpr_profiles():
    """61 seats over 3 strategies reduced to 6: the 63 profiles of `dpr_profiles`, each per
    repetition, in its order, and not one of the other 1,890 of the full game."""
    config = load_config(SHIPPED)
    jobs = [job for job in plan(config) if job.stage == 1]  # after the strategies' stage 0
    profiles = sorted({job.id.split("/")[0].removeprefix("profile=") for job in jobs})
    expected = [profile_key(row) for row in dpr_profiles(61, 6, 3)]
    assert len(expected) == 63
    assert profiles == sorted(expected)
    assert len(jobs) == 63 * config.seeds
    assert [job.id for job in jobs[:2]] == [f"profile={expected[0]}/rep={r}" for r in (0, 1)]
    seats = jobs[0].labels
    assert len(seats) == 61 and seats.count(config.agents[0].label) == 61


def test_a_reduced_run_solves_the_dpr_game(tmp_path):
    """7 seats over 2 strategies reduced to 3 players (3 full seats per reduced opponent):
    DPR reads 6 of the 8 profiles (not 5-2 or 2-5); payoffs_reduced.csv is `reduce_dpr` of
    payoffs.csv, and equilibria.csv holds the reduced game's equilibria, each of regret ~0."""
    path = tmp_path / "small.toml"
    path.write_text(SMALL.format(reduced=3))
    keys = ("7-0", "6-1", "4-3", "3-4", "1-6", "0-7")
    assert [job.id for job in plan(load_config(path)) if job.stage == 1] == [
        f"profile={key}/rep={r}" for key in keys for r in (0, 1)
    ]
    run_experiment(path, LocalExecutor(progress=False), out=tmp_path / "run")
    full = PayoffTable.read_csv(tmp_path / "run" / "payoffs.csv")
    game = PayoffTable.read_csv(tmp_path / "run" / "payoffs_reduced.csv")
    assert full.p == 7 and len(full) == 6 and game.p == 3 and game.complete
    # reduced 2-1: a hold player's 2 opponents (1 hold, 1 random) are 3 + 3 full seats, so
    # it is a hold seat of 4-3; the random player's (2 holds) make it a random seat of 6-1
    row = game.row((2, 1))
    assert game.payoffs[row, 0] == full.payoffs[full.row((4, 3)), 0]
    assert game.payoffs[row, 1] == full.payoffs[full.row((6, 1)), 1]
    np.testing.assert_array_equal(game.payoffs, reduce_dpr(full, 3).payoffs)
    found = pd.read_csv(tmp_path / "run" / "equilibria.csv")
    assert len(found) >= 1
    for _, e in found.iterrows():
        assert regret(game, e[["p_hold", "p_random"]].to_numpy(float)) <= 1e-6


@pytest.mark.parametrize(
    ("reduced", "message"),
    [
        (5, r"tournament\.reduced: 7 - 1 players must be a multiple of reduced - 1 = 4"),
        (8, r"tournament\.reduced: expected an integer in \[2, 7\], got 8"),
    ],
)
def test_an_impossible_reduction_names_the_field(reduced, message):
    """DPR needs an integer number of full seats per reduced opponent."""
    with pytest.raises(ConfigError, match=message):
        parse_config(SMALL.format(reduced=reduced))
