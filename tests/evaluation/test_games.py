"""evaluation.analysis.games: the `tradearena games` command and a tournament's equilibria.csv."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tradearena.evaluation.analysis.equilibria import regret
from tradearena.evaluation.analysis.games import (
    analyse,
    equilibria_frame,
    holding,
    significant,
)
from tradearena.evaluation.analysis.payoffs import PayoffTable
from tradearena.evaluation.analysis.plots import equilibria_figure
from tradearena.evaluation.analysis.reduction import dpr_profiles
from tradearena.evaluation.analysis.roles import RoleTable
from tradearena.evaluation.cli.main import main

COORDINATION = [[2.0, 0.0], [0.0, 1.0]]  # equilibria (1, 0), (0, 1), (1/3, 2/3)


def _coordination(stderr: float | None) -> PayoffTable:
    exact = PayoffTable.from_matrix(COORDINATION, 3, strategies=["maker", "taker"])
    present = exact.counts > 0
    return PayoffTable.from_arrays(
        exact.counts,
        exact.payoffs,
        samples=np.where(present, 20, 0),
        stderr=None if stderr is None else np.where(present, stderr, np.nan),
        strategies=exact.strategies,
    )


def test_games_prints_and_writes_the_equilibria(tmp_path, capsys):
    path = _coordination(0.0).to_csv(tmp_path / "payoffs.csv")
    assert main(["games", str(path), "--out", str(tmp_path / "out"), "--resamples", "50"]) == 0
    out = capsys.readouterr().out
    assert "maker 0.333, taker 0.667" in out
    assert "maximum-welfare profile: maker 3, taker 0: 2 per player" in out
    assert "sample next, for the widest regret interval (equilibrium 1): nothing" in out
    frame = pd.read_csv(tmp_path / "out" / "equilibria.csv")
    assert list(frame.columns[:7]) == [
        "p_maker",
        "p_taker",
        "regret",
        "regret_low",
        "regret_high",
        "welfare",
        "welfare_low",
    ]
    np.testing.assert_allclose(frame[["p_maker", "p_taker"]], [[1, 0], [0, 1], [1 / 3, 2 / 3]])
    # zero standard errors: every resample is the table itself
    np.testing.assert_allclose(frame[["regret", "regret_low", "regret_high"]], 0.0, atol=1e-9)
    np.testing.assert_allclose(frame["welfare"], [2.0, 1.0, 2 / 3])
    np.testing.assert_allclose(frame["survival"], 1.0)
    # the taker's gain against all makers: A[1, 0] - A[0, 0] = -2
    np.testing.assert_allclose(frame["gain_taker"][0], -2.0)
    assert (tmp_path / "out" / "equilibria.png").stat().st_size > 0


def test_a_table_without_standard_errors_has_no_intervals(tmp_path, capsys):
    path = _coordination(None).to_csv(tmp_path / "payoffs.csv")
    assert main(["games", str(path)]) == 0
    assert "no intervals: the table has no stderr_<s> columns" in capsys.readouterr().out
    frame = equilibria_frame(analyse(PayoffTable.read_csv(path)))
    assert frame[["regret_low", "regret_high", "survival"]].isna().all().all()


def test_a_missing_profile_is_one_line_naming_it(tmp_path, capsys):
    frame = _coordination(0.1).to_frame().drop(index=1)  # the profile (2, 1)
    frame.to_csv(tmp_path / "partial.csv", index=False)
    assert main(["games", str(tmp_path / "partial.csv")]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "missing 2-1" in error and "partial.csv" in error
    assert main(["games", str(tmp_path / "absent.csv")]) == 2
    assert "absent.csv: no such payoff table" in capsys.readouterr().err


def test_a_run_directory_given_as_the_table_points_to_its_payoffs(tmp_path, capsys):
    """`games runs/tournament`: one line naming the payoffs.csv inside (a role game too)."""
    _coordination(0.1).to_csv(tmp_path / "payoffs.csv")
    for extra in ([], ["--roles", "maker,taker"]):
        assert main(["games", str(tmp_path), *extra]) == 2
        assert capsys.readouterr().err == (
            f"tradearena: error: {tmp_path}: a directory, not a payoff table: its payoff "
            f"table is {tmp_path / 'payoffs.csv'}\n"
        )


TOURNAMENT = """\
kind = "tournament"
seeds = 2
[tournament]
players = 2
[market]
population = "light"
n_steps = 8
reward_scale = 0.01
[training]
episodes = 1
[testing]
episodes = 3
[[agents]]
id = "raql"
[[agents]]
id = "hold"
"""


def test_a_tournament_writes_and_prints_its_equilibria(tmp_path, capsys):
    """The run's equilibria, and `tradearena games` on its payoffs.csv with the run's seed:
    the same table, intervals and figures, the method named in both outputs, and every
    interval holding its estimate."""
    (tmp_path / "t.toml").write_text(TOURNAMENT)
    run = ["run", str(tmp_path / "t.toml"), "--executor", "local", "--no-progress"]
    assert main([*run, "--out", str(tmp_path / "r")]) == 0
    printed = capsys.readouterr().out
    assert "Nash equilibria (symmetric mixtures" in printed
    table = PayoffTable.read_csv(tmp_path / "r" / "payoffs.csv")
    frame = pd.read_csv(tmp_path / "r" / "equilibria.csv")
    mixtures = frame[["p_raql", "p_hold"]].to_numpy()
    assert len(frame) >= 1
    np.testing.assert_allclose(regret(table, mixtures), 0.0, atol=1e-6)
    assert (frame["regret_low"] <= frame["regret_high"]).all()
    assert (tmp_path / "r" / "equilibria.png").exists()
    games = ["games", str(tmp_path / "r" / "payoffs.csv"), "--seed", "0"]
    assert main([*games, "--out", str(tmp_path / "g")]) == 0
    again = capsys.readouterr().out
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "g" / "equilibria.csv"), frame)
    method = (
        "95% bootstrap intervals over 1,000 resamples (seed 0), each cell's mean drawn normally "
        "with its standard error; regret's one-sided, [0, its 95th percentile]"
    )
    assert method in printed and method in again
    block = printed[printed.index("Nash equilibria") : printed.index("\n\nrun directory")]
    assert block in again
    assert (frame["regret_low"] == 0).all() and (frame["regret"] <= frame["regret_high"]).all()
    assert ((frame.welfare_low <= frame.welfare) & (frame.welfare <= frame.welfare_high)).all()
    for s in ("raql", "hold"):
        share, low, high = frame[f"p_{s}"], frame[f"p_{s}_low"], frame[f"p_{s}_high"]
        assert ((low <= share) & (share <= high)).all()
    for name in ("equilibria.png", "dynamics.png"):
        assert (tmp_path / "g" / name).stat().st_size > 0
    assert "sharpe payoffs, tuyls weighting" in _title(tmp_path / "r" / "config.toml")


def _title(config) -> str:
    """The title `tradearena games` gives the dynamics of the table beside ``config``."""
    from tradearena.evaluation.cli.games import _run_settings

    settings = _run_settings(config.parent / "payoffs.csv")
    return f"{settings['payoff']} payoffs, {settings['weighting']} weighting"


@pytest.mark.parametrize(
    "value, low, high, text",
    [
        (0.384, 0.04735, 0.7133, "0.384 [0.047, 0.713]"),
        (0.0, 0.0, 0.30471, "0 [0, 0.305]"),
        (4.5331, 4.0232, 5.1012, "4.53 [4.02, 5.10]"),
        (1234.5, 1000.2, 1500.9, "1234 [1000, 1501]"),
        (-0.000123456, np.nan, np.nan, "-0.000123"),
        (0.0, 0.0, 0.0, "0 [0, 0]"),
    ],
)
def test_estimates_print_to_three_significant_figures(value, low, high, text):
    """The estimate to 3 significant figures, its interval to the same decimals."""
    assert significant(value, low, high) == text


def _stars(figure) -> list[np.ndarray]:
    return [
        c.get_offsets() for ax in figure.axes for c in ax.collections if c.get_gid() == "equilibria"
    ]


def test_the_figure_marks_each_equilibrium_where_it_lies():
    two = equilibria_figure(_coordination(None), [np.array([1 / 3, 2 / 3])])
    np.testing.assert_allclose(_stars(two)[0], [[1 / 3, 0.0]])  # share of the first on the line
    rps = PayoffTable.from_matrix([[0, -1, 1], [1, 0, -1], [-1, 1, 0]])
    (centre,) = _stars(equilibria_figure(rps, [np.full(3, 1 / 3)]))
    np.testing.assert_allclose(centre, [[0.5, np.sqrt(3) / 6]])  # the triangle's centroid
    four = PayoffTable.from_matrix(np.eye(4))
    faces = _stars(equilibria_figure(four, [np.array([0.5, 0.5, 0, 0])]))
    assert len(faces) == 2  # the faces (0, 1, 2) and (0, 1, 3) hold the support {0, 1}
    np.testing.assert_allclose(faces[0], [[0.5, 0.0]])


def test_games_with_roles_prints_each_roles_mixture_and_regret(tmp_path, capsys):
    # matching pennies between the roles: each mixes (1/2, 1/2)
    counts = [[1, 0, 1, 0], [1, 0, 0, 1], [0, 1, 1, 0], [0, 1, 0, 1]]
    nan = np.nan
    payoffs = [[1, nan, -1, nan], [-1, nan, nan, 1], [nan, -1, 1, nan], [nan, 1, nan, -1]]
    table = RoleTable.from_arrays(
        {"even": (1, ["h", "t"]), "odd": (1, ["h", "t"])}, counts, payoffs
    )
    table.to_frame().to_csv(tmp_path / "pennies.csv", index=False)
    argv = ["games", str(tmp_path / "pennies.csv"), "--roles", "even,odd", "--out", str(tmp_path)]
    assert main(argv) == 0
    assert "even: 1 players, ['h', 't']; odd: 1 players, ['h', 't']" in capsys.readouterr().out
    frame = pd.read_csv(tmp_path / "equilibria.csv")
    np.testing.assert_allclose(frame[["p_even_h", "p_even_t", "p_odd_h", "p_odd_t"]], [[0.5] * 4])
    np.testing.assert_allclose(frame[["regret", "regret_even", "regret_odd"]], 0.0, atol=1e-12)
    np.testing.assert_allclose(frame[["welfare_even", "welfare_odd"]], 0.0, atol=1e-12)
    assert main(["games", str(tmp_path / "pennies.csv"), "--roles", "even"]) == 2
    assert "belong to no declared role ['even']" in capsys.readouterr().err


def test_games_reduces_a_many_seat_table(tmp_path, capsys):
    # the 61-seat coordination game, only the 15 profiles DPR to 6 players reads
    full = PayoffTable.from_matrix(COORDINATION, 61, strategies=["maker", "taker"])
    needed = dpr_profiles(61, 6, 2)
    rows = [full.row(n) for n in needed]
    stderr = np.where(needed > 0, 0.0, np.nan)
    partial = PayoffTable.from_arrays(
        needed, full.payoffs[rows], stderr=stderr, strategies=full.strategies
    )
    path = partial.to_csv(tmp_path / "seats61.csv")
    assert main(["games", str(path), "--reduce", "6", "--out", str(tmp_path)]) == 0
    assert "deviation-preserving reduction to 6 players" in capsys.readouterr().out
    frame = pd.read_csv(tmp_path / "equilibria.csv")
    np.testing.assert_allclose(frame[["p_maker", "p_taker"]], [[1, 0], [0, 1], [1 / 3, 2 / 3]])
    assert main(["games", str(path)]) == 2  # unreduced, the 61-seat table lacks profiles
    assert "missing" in capsys.readouterr().err


def test_an_interval_is_widened_to_hold_its_estimate():
    """The frozen tournament's third equilibrium: RA3-Q's share 0.963 over the 37% of
    resamples where it survives lay in [0.079, 0.943]."""
    assert holding(0.963, 0.079, 0.943) == (0.079, 0.963)
    assert holding(0.02, 0.013, 0.571) == (0.013, 0.571)
    assert all(np.isnan(holding(0.5, np.nan, np.nan)))
