"""Tournaments with roles: the role game's profiles are planned, its payoff table splits a
label's seats by role, `tradearena games --roles` reads it, and its equilibria are written."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tradearena.evaluation.analysis.games import format_equilibria, read_role_table
from tradearena.evaluation.analysis.plots import role_dynamics_figure
from tradearena.evaluation.analysis.roles import RoleTable, role_regret
from tradearena.evaluation.cli.main import main
from tradearena.evaluation.experiment.config import ConfigError, parse_config
from tradearena.evaluation.experiment.parallel import LocalExecutor
from tradearena.evaluation.experiment.profiles import seat_payoffs
from tradearena.evaluation.experiment.rundir import load_run
from tradearena.evaluation.experiment.runner import plan, run_experiment

ROLES = """\
kind = "tournament"
seeds = 1
[tournament]
mode = "pretrained"
payoff = "pnl"
roles = {{ maker = {{ seats = 2, strategies = ["hold", "random"] }}, {taker} }}
[market]
population = "light"
n_steps = 8
reward_scale = 0.01
[training]
episodes = 2
[testing]
episodes = 3
[[agents]]
id = "hold"
[[agents]]
id = "random"
[[agents]]
id = "momentum"
"""
TAKER = 'taker = { seats = 1, strategies = ["momentum", "random"] }'
PROFILES = ["2-0+1-0", "2-0+0-1", "1-1+1-0", "1-1+0-1", "0-2+1-0", "0-2+0-1"]


def test_plan_seats_each_role_block_in_order():
    """3 maker profiles (2 seats over 2) x 2 taker profiles (1 seat over 2) = 6; the seats
    are the makers' then the taker's."""
    jobs = plan(parse_config(ROLES.format(taker=TAKER)))
    profiles = [job for job in jobs if job.stage == 1]
    assert [job.id for job in profiles] == [f"profile={key}/rep=0" for key in PROFILES]
    seats = {job.id: job.labels for job in profiles}
    assert seats["profile=1-1+0-1/rep=0"] == ("hold", "random", "random")
    assert seats["profile=0-2+1-0/rep=0"] == ("random", "random", "momentum")


def test_role_tables_and_equilibria(tmp_path, capsys):
    """The cell of (role, strategy) is the mean payoff of that role's seats on it: random as
    maker (seat 1) and as taker (seat 2) are two columns; equilibria.csv has one mixture per
    role, whose regret the table confirms."""
    path = tmp_path / "roles.toml"
    path.write_text(ROLES.format(taker=TAKER))
    run_experiment(path, LocalExecutor(progress=False), out=tmp_path / "run")
    table = read_role_table(tmp_path / "run" / "payoffs.csv", ["maker", "taker"])
    assert table.columns == ("maker_hold", "maker_random", "taker_momentum", "taker_random")
    assert table.players == (2, 1) and table.complete
    config, records = load_run(tmp_path / "run")
    seats = seat_payoffs(records, payoff="pnl").set_index(["profile", "seat"])["payoff"]
    row = table.counts.tolist().index([1, 1, 0, 1])
    np.testing.assert_allclose(
        table.payoffs[row],
        [seats["1-1+0-1", 0]] + [seats["1-1+0-1", 1]] + [np.nan, seats["1-1+0-1", 2]],
    )
    row = table.counts.tolist().index([0, 2, 1, 0])
    maker = (seats["0-2+1-0", 0] + seats["0-2+1-0", 1]) / 2
    np.testing.assert_allclose(table.payoffs[row], [np.nan, maker, seats["0-2+1-0", 2], np.nan])
    found = pd.read_csv(tmp_path / "run" / "equilibria.csv")
    shares = found[[f"p_{c}" for c in table.columns]].to_numpy()
    assert len(found) >= 1
    np.testing.assert_allclose(shares[:, :2].sum(axis=1), 1.0)
    np.testing.assert_allclose(shares[:, 2:].sum(axis=1), 1.0)
    for x, (_, e) in zip(shares, found.iterrows()):
        regret = role_regret(table, x)
        np.testing.assert_allclose(
            regret, e[["regret_maker", "regret_taker"]].to_numpy(float), atol=1e-9
        )
        assert regret.max() <= 1e-6
    assert (tmp_path / "run" / "dynamics.png").read_bytes()[:4] == b"\x89PNG"
    assert main(["games", str(tmp_path / "run" / "payoffs.csv"), "--roles", "maker,taker"]) == 0
    printed = capsys.readouterr().out
    assert "maker: 2 players, ['hold', 'random']" in printed
    # what `tradearena run` prints of the run's equilibria.csv: the same table
    shown = format_equilibria(tmp_path / "run" / "equilibria.csv")
    assert shown.startswith("Nash equilibria (one mixture per role):") and shown in printed


def test_role_dynamics_by_hand():
    """A dominant strategy's share follows the logistic curve of multiplicative weights:
    x_good / x_bad grows by exp(h (1 - 0)) a step, h = 0.1 / range = 0.1, so after n steps
    x_good = 1 / (1 + exp(-0.1 n)); a role with one strategy keeps share 1. In matching
    pennies every gain is 0 at the centre, which the dynamics never leave."""
    nan = np.nan
    table = RoleTable.from_arrays(
        {"a": (1, ["good", "bad"]), "b": (1, ["only"])},
        [[1, 0, 1], [0, 1, 1]],
        [[1.0, nan, 0.5], [nan, 0.0, 0.5]],
    )
    figure = role_dynamics_figure(table, steps=50)
    lines = {line.get_gid(): line for ax in figure.axes for line in ax.get_lines()}
    time, good = lines["a_good"].get_data()
    np.testing.assert_allclose(time, 0.1 * np.arange(51))
    np.testing.assert_allclose(good, 1 / (1 + np.exp(-0.1 * np.arange(51))), rtol=1e-12)
    np.testing.assert_allclose(lines["a_bad"].get_ydata(), 1 - good, rtol=1e-12)
    np.testing.assert_array_equal(lines["b_only"].get_ydata(), 1.0)
    pennies = RoleTable.from_arrays(
        {"even": (1, ["h", "t"]), "odd": (1, ["h", "t"])},
        [[1, 0, 1, 0], [1, 0, 0, 1], [0, 1, 1, 0], [0, 1, 0, 1]],
        [[1, nan, -1, nan], [-1, nan, nan, 1], [nan, -1, 1, nan], [nan, 1, nan, -1]],
    )
    figure = role_dynamics_figure(pennies, steps=20, mixtures=[np.full(4, 0.5)])
    for ax in figure.axes:
        for line in ax.get_lines():
            np.testing.assert_allclose(line.get_ydata(), 0.5, atol=1e-15)


@pytest.mark.parametrize(
    ("taker", "message"),
    [
        (
            'taker = { seats = 1, strategies = ["momentum", "twap"] }',
            r"tournament\.roles\.taker\.strategies: \['twap'\] are not \[\[agents\]\] labels",
        ),
        (
            'taker = { seats = 0, strategies = ["momentum"] }',
            r"tournament\.roles\.taker\.seats: must be an integer >= 1, got 0",
        ),
        ("taker = { seats = 1 }", r"tournament\.roles\.taker: expected a table of"),
        (
            'taker = { seats = 1, strategies = ["random"] }',
            r"tournament\.roles: agents \['momentum'\] play in no role",
        ),
    ],
)
def test_an_inconsistent_role_declaration_names_the_field(taker, message):
    with pytest.raises(ConfigError, match=message):
        parse_config(ROLES.format(taker=taker))
