"""Skill that carries over and the predictivity of a market: per-seed metrics and their paired
differences, the rank correlation of a zoo ranked by construction, and ``tradearena
transfer``'s known answer (a market against its own recorded day)."""

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from days import lobster_day  # tests/evaluation/days.py

from tradearena.envs.errors import UserError
from tradearena.envs.simulator.recording import synthetic_tape
from tradearena.envs.simulator.traders import light
from tradearena.envs.spec import MarketSpec
from tradearena.evaluation.analysis.metrics import bootstrap_ci
from tradearena.evaluation.analysis.transfer import (
    Predictivity,
    agreeing,
    paired_difference,
    predictivity,
    seed_metric,
    spearman,
)
from tradearena.evaluation.cli.main import main
from tradearena.evaluation.experiment.parallel import LocalExecutor
from tradearena.evaluation.market.transfer import (
    COLUMNS,
    Policy,
    Transfer,
    baseline_of,
    format_transfer,
    transfer,
    transfer_job,
    window_of,
    write_transfer,
    zoo,
)

OPEN = 34_200.0


def _records() -> pd.DataFrame:
    """Agent x seed x phase episodes with hand-chosen PnLs (dollars)."""
    rows = []
    pnls = {("q", 0): [1.0, 3.0], ("q", 1): [2.0, 2.0, 5.0], ("ref", 0): [4.0, 0.0]}
    for (agent, seed), values in pnls.items():
        rows += [{"agent": agent, "seed": seed, "phase": "test", "pnl": v} for v in values]
    rows.append({"agent": "q", "seed": 0, "phase": "train", "pnl": 100.0})
    return pd.DataFrame(rows)


@pytest.mark.filterwarnings(
    "ignore::tradearena.evaluation.analysis.metrics.DegenerateMetricWarning"
)
def test_seed_metric_is_the_test_episodes_metric_per_agent_and_seed():
    means = seed_metric(_records(), "mean_pnl")
    assert means.loc[0, "q"] == 2.0 and means.loc[1, "q"] == 3.0  # the train episode left out
    assert means.loc[0, "ref"] == 2.0 and np.isnan(means.loc[1, "ref"])
    sharpes = seed_metric(_records(), "sharpe")
    assert sharpes.loc[0, "q"] == pytest.approx(2.0 / np.sqrt(2.0))  # mean 2, sd (ddof 1) sqrt 2
    assert sharpes.loc[1, "q"] == pytest.approx(3.0 / np.sqrt(3.0))  # mean 3, sd sqrt 3


def test_paired_difference_takes_the_seeds_both_hold():
    a = pd.Series([1.0, 2.0, 3.0, np.nan], index=[0, 1, 2, 3])
    b = pd.Series([2.0, 2.0, 7.0, 1.0, 9.0], index=[0, 1, 2, 3, 4])
    interval = paired_difference(a, b)
    assert interval.estimate == pytest.approx(5.0 / 3.0)  # differences 1, 0, 4
    expected = bootstrap_ci(np.array([1.0, 0.0, 4.0]))
    assert (interval.low, interval.high) == (expected.low, expected.high)
    assert 0.0 <= interval.low < interval.estimate < interval.high <= 4.0


# ------------------------------------------------------------------------- predictivity
def _ranked(order, seeds=6, sessions=5, noise=0.1, seed=0):
    """PnL arrays (policies, seeds, sessions) whose policies' means are ``order``."""
    rng = np.random.default_rng(seed)
    means = np.asarray(order, float)[:, None, None]
    return means + noise * rng.standard_normal((len(order), seeds, sessions))


def test_a_zoo_ranked_alike_by_construction_has_rank_correlation_one():
    verdict = predictivity(_ranked([1, 2, 3, 4, 5]), _ranked([10, 20, 30, 40, 50], seed=1))
    assert verdict.rho == pytest.approx(1.0) and verdict.low == pytest.approx(1.0)
    assert verdict.pick == verdict.best == 4 and verdict.regret == 0.0


def test_a_zoo_ranked_backwards_has_minus_one_and_the_regret_of_its_pick():
    real = _ranked([5, 4, 3, 2, 1], seed=1)
    verdict = predictivity(_ranked([1, 2, 3, 4, 5]), real)
    assert verdict.rho == pytest.approx(-1.0)
    assert (verdict.pick, verdict.best) == (4, 0)
    assert verdict.regret == pytest.approx(real[0].mean() - real[4].mean())


def test_an_unrelated_market_has_an_interval_around_zero():
    rng = np.random.default_rng(3)
    simulated = rng.standard_normal((8, 10, 5))
    verdict = predictivity(simulated, rng.standard_normal((8, 10, 5)))
    assert verdict.low < 0 < verdict.high
    assert spearman(np.ones(3), np.arange(3.0)) != spearman(np.ones(3), np.arange(3.0))  # NaN


# ---------------------------------------------------------------------- the transfer judge
MAKING = """\
[market]
task = "making"
population = "light"
n_steps = 20
"""


def test_a_market_against_its_own_recorded_day_ranks_the_zoo_alike(tmp_path, capsys):
    config = tmp_path / "light_making.toml"
    config.write_text(MAKING)
    messages, _ = lobster_day(tmp_path, "light_34200000_41400000", 120)
    result = transfer(
        str(config),
        str(messages),
        executor=LocalExecutor(progress=False, job=transfer_job),
        seeds=3,
        sessions=4,
        queues=("risk_averse", "optimistic"),
    )
    assert set(result.verdicts) == {"risk_averse", "optimistic"}
    for verdict in result.verdicts.values():
        assert verdict.rho > 0.8
    table = result.table
    assert set(table.side) == {"market", "tape/risk_averse", "tape/optimistic"}
    hold = table[table.policy == "hold"]
    assert (hold.mean_pnl == 0).all() and (hold.trades == 0).all()
    assert ((table.low <= table.mean_pnl) & (table.mean_pnl <= table.high)).all()
    paths = write_transfer(result, tmp_path / "out")
    assert [p.name for p in paths] == ["transfer.csv", "predictivity.csv", "transfer.png"]
    written = pd.read_csv(tmp_path / "out" / "predictivity.csv")
    assert list(written.queue) == ["risk_averse", "optimistic"]


def test_transfer_names_the_orderbook_file_a_message_file_needs(tmp_path, capsys):
    config = tmp_path / "m.toml"
    config.write_text(MAKING)
    messages, _ = lobster_day(tmp_path, "x_34200000_36000000", 30, book=False)
    assert main(["transfer", str(config), "--against", str(messages), "--executor", "local"]) == 2
    error = capsys.readouterr().err
    assert "need the tape's orderbook file beside it" in error
    assert "x_34200000_36000000_orderbook_1.csv" in error


def test_zoo_of_each_task_and_an_unknown_task():
    making = zoo("making")
    assert len(making) == 14 and making[-2:] == [Policy("random", "random"), Policy("hold", "hold")]
    assert {p.params["gamma"] for p in making[:-2]} == {0.01, 0.3}
    execution = zoo("execution")
    assert [p.id for p in execution[:2]] == ["twap", "passive_twap"]
    with pytest.raises(UserError, match="--task"):
        zoo("taker")


def test_from_gives_the_steps_whose_sessions_open_then(tmp_path):
    tape = synthetic_tape(11, traders=light(), levels=1, n_steps=120)
    spec = MarketSpec(task="making", tape=tape, n_steps=20)
    # the recorded day opens at its warm-up, 5 minutes before 09:30: 10:00 is step 35
    assert window_of(spec, OPEN + 30 * 60, None) == (35, 105)
    assert window_of(spec, None, (3, 4)) == (3, 4)
    with pytest.raises(
        UserError,
        match=r"^--from 11:20: no 20-minute session opening then ends by the day's close, "
        r"11:30 \(the last opens at 11:10\)$",
    ):  # in the option's own unit, the time of day, not in steps
        window_of(spec, OPEN + 110 * 60, None)


def test_a_window_the_day_cannot_hold_and_a_window_beside_from_are_refused(tmp_path):
    """Both before any job: they were refused only by the first job, blamed on a policy, or
    (--from beside --window) --from was silently ignored."""
    tape = synthetic_tape(11, traders=light(), levels=1, n_steps=120)
    spec = MarketSpec(task="making", tape=tape, n_steps=20)
    with pytest.raises(
        UserError,
        match=r"^--window 0,100000: the tape's day has 125 steps, so "
        r"its 20-step sessions open at steps 0 to 105$",
    ):
        window_of(spec, None, (0, 100_000))
    assert window_of(spec, None, (0, 105)) == (0, 105)
    with pytest.raises(UserError, match="^--from and --window both say when sessions open"):
        window_of(spec, OPEN + 30 * 60, (3, 4))


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--window", "0,100000"], "--window 0,100000: the tape's day has 45 steps"),
        (["--window", "0,3", "--from", "09:40"], "--from and --window both say when"),
    ],
)
def test_transfer_refuses_a_window_before_any_job(option, message, tmp_path, monkeypatch, capsys):
    import tradearena.evaluation.market.transfer as judge

    config = tmp_path / "m.toml"
    config.write_text(MAKING)
    messages, _ = lobster_day(tmp_path, "x_34200000_36600000", 40)
    monkeypatch.setattr(judge, "transfer_job", None)  # no job may run
    argv = ["transfer", str(config), "--against", str(messages), "--executor", "local"]
    assert main([*argv, *option]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"tradearena: error: {message}") and error.count("\n") == 1


def test_transfer_says_a_message_file_given_as_the_market_is_a_tape(tmp_path, capsys):
    messages, _ = lobster_day(tmp_path, "x_34200000_36000000", 30)
    argv = ["transfer", str(messages), "--against", str(messages), "--executor", "local"]
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        f"tradearena: error: MARKET {messages}: a LOBSTER message file (a tape), not a market; "
        "give a market (an experiment file, .toml, or a Gymnasium id) and the real day after "
        "--against\n"
    )


def test_a_zoo_with_too_few_policies_that_trade_is_refused(tmp_path, monkeypatch):
    import tradearena.evaluation.market.transfer as judge

    config = tmp_path / "light_making.toml"
    config.write_text(MAKING)
    messages, _ = lobster_day(tmp_path, "light_34200000_36600000", 40)
    monkeypatch.setattr(judge, "zoo", lambda task: [Policy("hold", "hold"), Policy("r", "random")])
    with pytest.raises(UserError, match="only 1 of the zoo's 2 policies trade; .* at least 5"):
        transfer(
            str(config),
            str(messages),
            executor=LocalExecutor(progress=False, job=transfer_job),
            seeds=2,
            sessions=1,
            queues=("risk_averse",),
        )


# ------------------------------------------------------------------------- the baseline
def _replay_market(folder, tape, window, queue="risk_averse"):
    """A market file that is the replay of ``tape`` in sessions opening at ``window``."""
    config = folder / "morning_replay.toml"
    config.write_text(
        f'[market]\ntask = "making"\nn_steps = 20\ntape = "{tape}"\n'
        f'window_steps = {list(window)}\nqueue = "{queue}"\n'
    )
    return config


def test_a_market_that_is_the_replay_of_its_hours_meets_its_baseline_exactly(tmp_path, capsys):
    """The recorded day opens at 09:25 (its warm-up): sessions opening at steps 5-14 replay
    09:30-09:59, the hours before --from 10:00."""
    messages, _ = lobster_day(tmp_path, "light_34200000_41400000", 120)
    config = _replay_market(tmp_path, messages, (5, 14))
    result = transfer(
        str(config),
        str(messages),
        executor=LocalExecutor(progress=False, job=transfer_job),
        start=OPEN + 1800,
        seeds=2,
        sessions=2,
        queues=("risk_averse",),
    )
    assert str(result.hours) == "09:30-09:59" and result.opening == "10:00-11:10"
    rows = result.table.set_index(["side", "policy"]).sort_index()
    market, baseline = rows.loc["market"], rows.loc["baseline/risk_averse"]
    pd.testing.assert_frame_equal(market, baseline)
    assert market.trades.sum() > 0
    assert result.verdicts == result.baseline
    text = format_transfer(result).splitlines()
    assert text[1] == f"baseline: the replay of 09:30-09:59 ({config} replays them)"
    assert text[-1] == "  the market meets its replay exactly"
    paths = write_transfer(result, tmp_path / "out")
    written = pd.read_csv(paths[1])
    assert list(written.columns[:2]) == ["side", "queue"]
    assert list(written.side) == ["market", "baseline"]
    numbers = ["spearman", "low", "high", "pick", "best", "regret"]
    assert written.loc[0, numbers].tolist() == written.loc[1, numbers].tolist()


def test_baseline_hours_are_given_or_named_and_else_refused(tmp_path, capsys):
    """--baseline FIRST,LAST replays those hours; with --from, a market whose file names no
    hours, hours outside the day, hours holding no session, or hours that overlap those
    judged: one line, exit 2, nothing written."""
    messages, tape = lobster_day(tmp_path, "light_34200000_41400000", 120)
    probe = MarketSpec(task="making", tape=str(messages), n_steps=20)
    assert baseline_of("m.toml", probe, (OPEN, OPEN + 1800), needed=True).steps == (5, 15)
    config = tmp_path / "light_making.toml"
    config.write_text(MAKING)
    assert baseline_of(str(config), probe, None, needed=False) == (
        "its file names no hours it learned from"
    )
    out = tmp_path / "out"
    argv = ["transfer", str(config), "--against", str(messages), "--executor", "local"]
    argv += ["--seeds", "2", "--sessions", "1", "--out", str(out)]
    cases = [
        (
            ["--from", "10:00"],
            f"{config}: no replay to judge it beside: its file names no hours it learned from "
            "(--baseline FIRST,LAST, two times HH:MM, names the tape's hours to replay)",
        ),
        (
            ["--from", "10:00", "--baseline", "08:00,09:45"],
            "--baseline 08:00,09:45: light_34200000_41400000_message_1.csv's day (09:30-11:30) "
            "does not hold the hours 08:00-09:45",
        ),
        (
            ["--from", "10:00", "--baseline", "09:30,09:45"],
            f"{config}: no replay to judge it beside: the hours 09:30-09:45 hold no 20-step "
            "session of the tape (--baseline FIRST,LAST, two times HH:MM, names the tape's "
            "hours to replay)",
        ),
        (  # the baseline's hours leak into those judged
            ["--from", "10:00", "--baseline", "09:30,10:50"],
            "--from 10:00: the hours judged overlap 09:30-10:50, learned from (--baseline "
            "09:30,10:50): judge hours held out of them (--from 10:50 or later)",
        ),
    ]
    for extra, message in cases:
        assert main([*argv, *extra]) == 2
        assert capsys.readouterr().err == f"tradearena: error: {message}\n"
    assert not out.exists()


def test_queue_models_that_agree_are_one_line_and_one_column():
    table = pd.DataFrame(
        [
            (p, side, pnl, pnl - 1, pnl + 1, 0.0, 0.0, 0.0, 1.0)
            for side, scale in (("market", 1.0), ("tape/a", 2.0), ("tape/b", 2.0), ("tape/c", -1.0))
            for p, pnl in (("x", 1.0 * scale), ("y", 2.0 * scale), ("z", 3.0 * scale))
        ],
        columns=list(COLUMNS),
    )
    same = Predictivity(1.0, 1.0, 1.0, 2, 2, 0.0)
    result = Transfer(
        table,
        {"a": same, "b": same, "c": Predictivity(-1.0, -1.0, -1.0, 2, 0, 6.0)},
        "m",
        "day",
        task="making",
    )
    text = format_transfer(result, verbose=True).splitlines()
    assert text[:6] == [
        "m against day: the making zoo (3 policies)",
        "queue models a, b:",
        "  market    Spearman 1.00 [1.00, 1.00], regret $0.00 a session (it picks 'z')",
        "queue model c:",
        "  market    Spearman -1.00 [-1.00, -1.00], regret $6.00 a session (it picks 'z')",
        "",
    ]
    assert text[7].split() == ["side", "market", "tape/a=b", "tape/c"]
    assert text[-1].split() == ["z", "3.00", "6.00", "-3.00"]
    assert agreeing({"a": np.array([1.0, np.nan]), "b": np.array([1.0, np.nan])}) == {
        "a": ["a", "b"]
    }


def test_a_responsive_replay_is_judged_beside_its_plain_replay_and_may_not_learn_the_hours_judged(
    tmp_path, capsys
):
    """The responsive replay of the morning, its answer estimated from the morning (09:25-
    11:00), runs the zoo on the morning beside the plain replay of the same hours; one whose
    answer comes from hours reaching into those judged is refused in one line before any
    work."""
    messages, _ = lobster_day(tmp_path, "light_34200000_48600000", 240)
    config = tmp_path / "responsive.toml"
    hours = f"{OPEN - 300:.0f}, {OPEN + 5400:.0f}"  # the recorded day opens at 09:25
    config.write_text(
        f'[market]\ntask = "making"\nn_steps = 20\ntape = "{messages}"\nwindow_steps = [5, 70]\n'
        f"responsive = true\nresponse_hours = [{hours}]\n"
    )
    result = transfer(
        str(config),
        str(messages),
        executor=LocalExecutor(progress=False, job=transfer_job),
        start=OPEN + 5400,
        seeds=2,
        sessions=2,
        queues=("risk_averse",),
    )
    assert str(result.hours) == "09:30-10:55" and "baseline/risk_averse" in set(result.table.side)
    argv = ["transfer", str(config), "--against", str(messages), "--executor", "local"]
    argv += ["--seeds", "2", "--sessions", "1", "--from", "10:55"]
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        "tradearena: error: --from 10:55: the hours judged overlap 09:25-11:00, learned from "
        f"({config}'s response_hours): judge hours held out of them (--from 11:00 or later)\n"
    )


def test_a_judgment_of_months_is_refused_before_any_work(tmp_path, capsys):
    """`transfer --seeds 10000 --sessions 1024` (10^7 sessions a policy and side, months of
    work, accepted before): exit 2, one line naming the product and the bound."""
    config = tmp_path / "light_making.toml"
    config.write_text(MAKING)
    argv = ["transfer", str(config), "--against", str(tmp_path / "day_message_1.csv")]
    argv += ["--seeds", "10000", "--sessions", "1024", "--executor", "local"]
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        "tradearena: error: --seeds 10,000 x --sessions 1,024: 10,240,000 sessions a policy and "
        "side, more than the 10,000 a judgment may play\n"
    )


def test_an_execution_zoo_says_what_its_pnl_is_and_what_hold_makes():
    """The verdict of an execution zoo explains its PnL under its first line, and what it
    says holds: hold buys its parent order at the last step, and its PnL is minus the
    shortfall against the opening mid, what the close's book could not sell at its mid."""
    from tradearena import agents
    from tradearena.envs.seats import SeatedMarket
    from tradearena.evaluation.market.transfer import EXECUTION_PNL

    predictivity = Predictivity(0.5, 0.1, 0.9, 0, 0, 1.0)
    result = Transfer(
        pd.DataFrame({"policy": ["twap", "hold"]}),
        {"risk_averse": predictivity},
        "market",
        "day",
        task="execution",
    )
    assert format_transfer(result).splitlines()[1] == EXECUTION_PNL
    assert EXECUTION_PNL not in format_transfer(replace(result, task="making"))
    spec = MarketSpec(task="execution", population="light", n_steps=20)
    seated = SeatedMarket(spec, [agents.make("hold")])
    (played,) = seated.play(3)
    market, parent = seated.market, seated.spec.parent_order
    open_mid, close_mid = (mid * market.tick_size for mid in (market.mids()[0], market.last_mid))
    paid = -seated.info(0)["cash"]  # dollars, fees included, all at the last step
    unsold = parent - played["inventory"]  # what the close's book could not sell
    shortfall = paid + unsold * close_mid - parent * open_mid
    assert played["pnl"] == pytest.approx(-shortfall) and played["trades"] > 0
