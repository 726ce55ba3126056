"""Tests for the tradearena command (tradearena.evaluation.cli.main.main): data check, session, and
which errors are the user's (one line, exit 2) and which are bugs (a traceback, exit 1)."""

import errno
import re
import signal
import socket
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from tradearena import agents
from tradearena.agents.calibration import calibrate_market
from tradearena.envs.data.load import CrossedBook, ThinTape, load_tape
from tradearena.envs.data.tapes import Tape, write_lobster
from tradearena.envs.simulator.market import Market
from tradearena.envs.simulator.recording import synthetic_tape
from tradearena.envs.simulator.traders import rmsc04
from tradearena.envs.tasks import TASKS
from tradearena.evaluation.cli.main import main, terminated_as_interrupt
from tradearena.evaluation.experiment.config import load_config


@pytest.fixture(scope="module")
def tape() -> Tape:
    return synthetic_tape(0, n_steps=10, levels=1)


@pytest.fixture
def files(tmp_path: Path, tape: Tape) -> tuple[Path, Path]:
    messages, orderbook = tmp_path / "message.csv", tmp_path / "orderbook.csv"
    write_lobster(tape, messages, orderbook)
    return messages, orderbook


def fidelity_lines(out: str) -> dict[str, tuple[float, int, int, int, int]]:
    """The two fidelity lines: label -> (fidelity, events, added, removed, unmatched)."""
    pattern = re.compile(
        r"replay fidelity, (messages alone|with reconciliation)\s*: (\d\.\d{4}) \(([\d,]+) "
        r"events, [\d.]+ s; added ([\d,]+) shares, removed ([\d,]+), unmatched cancels ([\d,]+)\)"
    )
    found = {}
    for label, fidelity, *counts in pattern.findall(out):
        found[label] = (float(fidelity), *(int(c.replace(",", "")) for c in counts))
    return found


def test_data_check_prints_both_fidelities(files, tape, capsys):
    """A recorded tape with its level-1 book: exit 0, the file summaries, and fidelity 1.0000
    from the messages alone and with reconciliation, over every message; a one-line warning
    that its fifteen minutes are too short to stand for a day."""
    messages, orderbook = files
    assert main(["data", "check", str(messages), str(orderbook)]) == 0
    out, err = capsys.readouterr()
    assert err.count("\n") == 1
    assert err.startswith(f"tradearena: warning: {messages}: ")
    assert "trades over 15.0 minutes, too few to stand for a day" in err
    n = len(tape)
    assert f"{messages}: {n:,} messages" in out and "valid" in out
    assert f"{orderbook}: {n:,} rows of 1 level(s), valid" in out
    assert fidelity_lines(out) == {
        "messages alone": (1.0, n, 0, 0, 0),
        "with reconciliation": (1.0, n, 0, 0, 0),
    }


def test_data_check_messages_only(files, tape, capsys):
    """Without the orderbook file only the message file is validated: no fidelity lines."""
    assert main(["data", "check", str(files[0])]) == 0
    out, _ = capsys.readouterr()
    assert f"{len(tape):,} messages" in out
    assert "fidelity" not in out


def test_data_check_damaged_tape_reports_lower_fidelity(tmp_path, tape, capsys):
    """A tape missing some deletes scores below 1 from messages alone and 1 with
    reconciliation, which reports the shares it removed."""
    kinds = tape.messages["type"]
    deletes = [i for i, k in enumerate(kinds.tolist()) if k == 3][::5]
    keep = [i for i in range(len(tape)) if i not in set(deletes)]
    damaged = Tape(tape.messages[keep].copy(), tape.book[keep].copy(), tape.tick_size)
    write_lobster(damaged, tmp_path / "m.csv", tmp_path / "b.csv")
    assert main(["data", "check", str(tmp_path / "m.csv"), str(tmp_path / "b.csv")]) == 0
    lines = fidelity_lines(capsys.readouterr().out)
    assert lines["messages alone"][0] < 1.0
    assert lines["with reconciliation"][0] == 1.0
    assert lines["with reconciliation"][3] > 0  # removed shares


def test_data_check_bad_file_is_one_line_naming_file_and_line(files, capsys):
    """An unknown event type on line 3: exit 2 and one stderr line naming file and line."""
    messages, orderbook = files
    lines = messages.read_text().splitlines(keepends=True)
    fields = lines[2].split(",")
    fields[1] = "9"
    lines[2] = ",".join(fields)
    messages.write_text("".join(lines))
    assert main(["data", "check", str(messages), str(orderbook)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith("tradearena: error: ")
    assert f"{messages}, line 3, column 2 (type)" in err
    assert "unknown event type 9" in err


def test_data_check_reports_crossed_book_rows(files, tape, capsys):
    """Rows whose best bid is at or above the best ask (lines 5 and 9 of the orderbook file):
    a one-line warning with their count and the first, and the file is not called valid; a
    command that reads the tape (`load_tape`) warns it too."""
    messages, orderbook = files
    lines = orderbook.read_text().splitlines(keepends=True)
    for line in (5, 9):
        ask, ask_size, _, bid_size = lines[line - 1].split(",")
        lines[line - 1] = ",".join([ask, ask_size, str(int(ask) + 100), bid_size])
    orderbook.write_text("".join(lines))
    first = int(lines[4].split(",")[0])
    assert main(["data", "check", str(messages), str(orderbook)]) == 0
    out, err = capsys.readouterr()
    assert (
        f"tradearena: warning: {messages}: 2 of its {len(tape):,} orderbook rows are crossed "
        "or locked (best bid at or above best ask), the first on line 5 of the orderbook file: "
        f"bid {(first + 100) / 10_000:g} >= ask {first / 10_000:g} dollars\n"
    ) in err
    assert f"{orderbook}: {len(tape):,} rows of 1 level(s), readable" in out
    assert "level(s), valid" not in out
    with warnings.catch_warnings(record=True) as caught:  # as every command reads a tape
        warnings.simplefilter("always")
        load_tape(messages, orderbook=orderbook)
    assert [type(w.message) for w in caught] == [ThinTape, CrossedBook]
    assert "2 of its" in str(caught[1].message)


def test_data_check_missing_file(tmp_path, capsys):
    """A file that does not exist: exit 2 and one line naming it."""
    missing = tmp_path / "nope.csv"
    assert main(["data", "check", str(missing)]) == 2
    _, err = capsys.readouterr()
    assert err.count("\n") == 1 and str(missing) in err


def test_data_check_mismatched_lengths(files, capsys):
    """A book file with one row fewer than the messages: exit 2, both files named."""
    messages, orderbook = files
    orderbook.write_text("".join(orderbook.read_text().splitlines(keepends=True)[:-1]))
    assert main(["data", "check", str(messages), str(orderbook)]) == 2
    _, err = capsys.readouterr()
    assert err.count("\n") == 1 and str(messages) in err and str(orderbook) in err


def test_session_prints_the_summary(capsys):
    """`session --steps 5` exits 0 and prints the session's own order, fill and volume counts
    (the same as running the market with seed 0 directly)."""
    assert main(["session", "--steps", "5"]) == 0
    out, _ = capsys.readouterr()
    market = Market(rmsc04(), n_seats=0, n_steps=5)
    market.reset(0)
    while not market.done:
        market.step()
    summary = market.summary()
    assert out.startswith("synthetic session, seed 0: 5 one-minute steps")
    printed = {
        key: (number, unit)
        for key, number, unit in re.findall(r"^  (\w+)\s+([\d,.]+) ?(.*)$", out, re.MULTILINE)
    }
    for key in ("steps", "orders", "cancels", "fills", "volume"):
        assert int(printed[key][0].replace(",", "")) == summary[key]
    assert summary["orders"] > 0 and summary["fills"] > 0
    number, unit = printed["close_mid"]
    assert float(number.replace(",", "")) == pytest.approx(summary["close_mid"], abs=0.005)
    assert unit == f"ticks (${summary['close_mid'] * 0.01:,.4f})"  # $0.01 a tick
    assert printed["volume"][1] == "shares" and printed["fills"][1] == ""


def test_session_seed_changes_the_session(capsys):
    """Another seed prints other counts."""
    main(["session", "--steps", "5", "--seed", "0"])
    first = capsys.readouterr().out
    main(["session", "--steps", "5", "--seed", "1"])
    second = capsys.readouterr().out
    assert "seed 1" in second
    pick = lambda out: re.findall(r"^  (?:orders|fills|volume)\s+(\S+)$", out, re.M)  # noqa: E731
    assert pick(first) != pick(second)


def test_usage_errors_exit_with_argparse_status():
    """An unknown command is an argparse usage error (SystemExit 2)."""
    with pytest.raises(SystemExit) as exc:
        main(["nonsense"])
    assert exc.value.code == 2


@pytest.mark.parametrize(
    "argv, message",
    [
        (["reproduce", "--scale", "0"], "argument --scale: must be > 0, got 0"),
        (["session", "--steps", "0"], "argument --steps: must be >= 1, got 0"),
        (["session", "--seed", "-1"], "argument --seed: must be >= 0, got -1"),
        (["run", "x.toml", "--workers", "0"], "argument --workers: must be >= 1, got 0"),
        (
            ["data", "check", "m.csv", "--tick-size", "0.00005"],
            "argument --tick-size: must be a positive multiple of $0.0001, got 0.00005",
        ),
    ],
)
def test_bad_argument_values_are_usage_errors(argv, message, capsys):
    """Out-of-range argument values are argparse usage errors: exit 2, the argument named."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_missing_run_directory_is_a_user_error(tmp_path, capsys):
    """`plot` on a directory that does not exist: exit 2, one line naming it."""
    missing = tmp_path / "no_run"
    assert main(["plot", str(missing)]) == 2
    _, err = capsys.readouterr()
    assert err.count("\n") == 1 and err.startswith("tradearena: error: ")
    assert str(missing) in err


@pytest.mark.parametrize(
    "error",
    [
        RuntimeError("internal bug"),
        ValueError("internal bug"),
        FileNotFoundError(2, "No such file or directory", "/nonexistent/internal.file"),
    ],
)
def test_internal_errors_propagate(error, monkeypatch, capsys):
    """An exception that is not a user error (a ValueError too, or a missing file that the
    command line does not name) is not turned into a one-line user error: it propagates."""

    def broken(*args, **kwargs):
        raise error

    monkeypatch.setattr("tradearena.evaluation.experiment.config.load_config", broken)
    with pytest.raises(type(error), match="internal"):
        main(["run", "configs/quickstart.toml", "--dry-run"])
    assert "tradearena: error" not in capsys.readouterr().err


def test_internal_error_exits_1_with_a_traceback():
    """Run as a program, an internal error exits with status 1 and prints its traceback."""
    program = (
        "import sys\n"
        "import tradearena.evaluation.experiment.config\n"
        "def broken(*args, **kwargs):\n"
        "    raise ValueError('internal bug')\n"
        "tradearena.evaluation.experiment.config.load_config = broken\n"
        "from tradearena.evaluation.cli.main import main\n"
        "sys.exit(main(['run', 'configs/quickstart.toml', '--dry-run']))\n"
    )
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, "-c", program], cwd=root, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1
    assert "Traceback (most recent call last)" in done.stderr
    assert done.stderr.rstrip().endswith("ValueError: internal bug")
    assert "tradearena: error" not in done.stderr


UNSEEDED_AGENT = '''
import numpy as np
from tradearena.agents.base import Agent


class Unseeded(Agent):
    """Draws from a generator it does not seed: breaks the contract's seeding check."""

    def __init__(self, action_space=None, seed=None):
        self.action_space = action_space
        self.rng = np.random.default_rng()

    def act(self, obs, explore=False):
        return int(self.rng.integers(self.action_space.n))
'''


def test_agent_check_reports_a_builtin_and_names_a_broken_agent(
    tmp_path, monkeypatch, capsys, own_folders
):
    """`agents --check`: a built-in keeps the contract (exit 0) and the report says what was
    checked; an agent in the current folder that breaks it is a user error, exit 2 with one
    line naming the agent and the check; a module found nowhere names the folders searched."""
    assert main(["agents", "--check", "ra2q"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "RA2Q (name 'ra2q') keeps the agent contract in TradingEnv (task 'taker'):"
    assert [line.split()[0] for line in out[1:]] == [
        *("actions", "seeding", "pickle", "state_dict", "learning")
    ]
    assert out[2] == "  seeding    two copies built alike took the same 30 actions"
    (tmp_path / "unseeded_agent.py").write_text(UNSEEDED_AGENT)
    monkeypatch.chdir(tmp_path)
    assert main(["agents", "--check", "unseeded_agent:Unseeded"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tradearena: error: Unseeded: two copies")
    assert main(["agents", "--check", "nowhere:Agent"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        "tradearena: error: cannot load agent 'nowhere:Agent': no module 'nowhere'"
    )
    assert "folders searched (" in err and f"{tmp_path.resolve()})" in err


def test_tasks_are_an_aligned_table_with_each_task_market(capsys):
    """Every task's row: its id, actions, market and reference, each column at the header's
    place (the execution row included)."""
    assert main(["tasks"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = lines[0]
    columns = [header.index(name) for name in ("Gymnasium id", "actions", "market", "reference")]
    for task, line in zip(TASKS.values(), lines[1:]):
        cells = (task.gym_id, task.actions, "light,", task.reference or "-")
        assert line.startswith(task.name + " ")
        for column, cell in zip(columns, cells):
            assert line[column - 2 : column] == "  " and line[column:].startswith(cell)
    assert "light, 30 steps, limit 1,000, reward x 0.1, buys 1,000" in lines[3]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["rnu"], "invalid choice: 'rnu' (did you mean 'run'?)"),
        (["run", "x.toml", "--executor", "rey"], "invalid choice: 'rey' (did you mean 'ray'?)"),
        (["run", "x.toml", "--set", "seeds"], "expected KEY=VALUE"),
    ],
)
def test_a_mistyped_choice_names_the_nearest(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_data_says_where_data_comes_from(capsys):
    """`tradearena data` with no action: where tapes come from (synthetic, LOBSTER, exchange
    recordings) and how a config is given one; exit 0."""
    assert main(["data"]) == 0
    out = capsys.readouterr().out
    for text in ("synthetic_tape()", "lobsterdata.com", "Binance", "--set market.tape=PATH"):
        assert text in out


REPLAY = """\
kind = "compare"
seeds = 1

[market]
task = "making"
tape = "$TRADEARENA_TEST_TAPE"
n_steps = 3

[training]
episodes = 1

[[agents]]
id = "hold"
"""


def test_a_replay_config_takes_its_tape_from_the_command_line_or_the_environment(
    files, tmp_path, monkeypatch, capsys
):
    """A config whose tape names an environment variable: unset, exit 2 saying how to give the
    file; set (a relative path from the current folder), or overridden with --set
    market.tape=PATH (a path from the current folder too), the run plans its jobs."""
    messages, _ = files
    config = tmp_path / "configs" / "replay.toml"
    config.parent.mkdir()
    config.write_text(REPLAY)
    monkeypatch.delenv("TRADEARENA_TEST_TAPE", raising=False)
    assert main(["run", str(config), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "market.tape: '$TRADEARENA_TEST_TAPE' names the environment variable" in err
    assert "--set market.tape=FILE" in err
    monkeypatch.chdir(tmp_path)
    assert main(["run", str(config), "--dry-run", "--set", f"market.tape={messages.name}"]) == 0
    assert "1 jobs, valid" in capsys.readouterr().out
    monkeypatch.setenv("TRADEARENA_TEST_TAPE", str(messages))
    assert main(["run", str(config), "--dry-run", "--set", "seeds=2"]) == 0
    assert "2 jobs, valid" in capsys.readouterr().out
    monkeypatch.chdir(messages.parent)  # a relative path in the variable: from here
    monkeypatch.setenv("TRADEARENA_TEST_TAPE", messages.name)
    assert main(["run", str(config), "--dry-run"]) == 0


def test_a_dry_run_calibrates_the_reference_but_leaves_its_tuning_to_the_run(
    tmp_path, monkeypatch, capsys
):
    """The reference's market is calibrated as far as it takes to know that it can be (one
    session here, of 16), but its risk aversion, 7 x 64 sessions of the market (of a neural
    flow's, 237 s), is tuned only when the experiment runs; the dry run says so."""
    import tradearena.agents.calibration as calibration

    config = tmp_path / "making.toml"
    config.write_text(
        TINY_RUN.replace("[market]", '[market]\ntask = "making"').replace(
            'id = "q_learning"', 'id = "avellaneda_stoikov"'
        )
    )
    monkeypatch.setattr(calibration, "_DONE", {})
    monkeypatch.setattr(calibration, "best_parameter", lambda *a, **k: pytest.fail("tuned"))
    estimates, calibrate = [], calibration._calibrate
    monkeypatch.setattr(
        calibration,
        "_calibrate",
        lambda *a, **k: estimates.append(calibrate(*a, **k)) or estimates[-1],
    )
    assert main(["run", str(config), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "1 jobs, valid\n" in out
    assert out.endswith(
        "\ntuned when it runs, before its jobs: gamma over 7 values x 64 sessions\n"
    )
    assert [e.sessions for e in estimates] == [1] and calibration._DONE == {}  # kept nowhere


def test_calibrate_prints_the_estimates_and_the_tuned_risk_aversion(capsys):
    """The quickstart's market: the estimates and the chosen gamma are the reference's own
    (what an experiment of this config seats), with the tuning Sharpe of every gamma."""
    path = Path(__file__).resolve().parents[1] / "configs" / "quickstart.toml"
    assert main(["calibrate", str(path)]) == 0
    out = capsys.readouterr().out
    spec = load_config(path).market
    estimate = calibrate_market(spec)
    maker = agents.make("avellaneda_stoikov", market_spec=spec)
    assert f"sigma {estimate.sigma:.3f} ticks/step" in out
    assert f"{estimate.A:.3f} exp(-{estimate.kappa:.3f} delta)" in out
    assert f"avellaneda_stoikov: gamma {maker.gamma:.4g}," in out
    assert out.count(": ") >= len(maker.GAMMAS)


def test_calibrate_says_when_a_task_has_no_reference(tmp_path, capsys):
    config = tmp_path / "taker.toml"
    config.write_text(
        'kind = "compare"\nname = "t"\nseeds = 1\n[market]\ntask = "taker"\n'
        '[training]\nepisodes = 1\n[testing]\nepisodes = 2\n[[agents]]\nid = "hold"\n'
    )
    assert main(["calibrate", str(config)]) == 0
    assert "has no reference policy" in capsys.readouterr().out


def test_a_sortino_with_no_losing_episode_reads_no_loss():
    """The summary prints "no loss" for a NaN Sortino ratio when the mean PnL is positive (no
    episode below the target: no downside to divide by), nan when nothing was earned, and
    the ratio to three decimals otherwise."""
    import pandas as pd

    from tradearena.evaluation.cli.text import format_summary

    base = dict.fromkeys(["sharpe", "sharpe_low", "sharpe_high", "max_drawdown", "cvar_5"], 0.0)
    base |= {"mean_pnl_low": 0.0, "mean_pnl_high": 0.0, "hit_rate": 1.0, "exposure": 3.0}
    rows = [
        {"agent": "winner", "mean_pnl": 5.0, "sortino": float("nan")},
        {"agent": "hold", "mean_pnl": 0.0, "sortino": float("nan")},
        {"agent": "mixed", "mean_pnl": 1.0, "sortino": 0.4472136},
    ]
    summary = pd.DataFrame([base | row | {"condition": "clean", "seeds": 2} for row in rows])
    _, _, header, _, *lines = format_summary(summary).splitlines()
    end = header.index("Sortino") + len("Sortino")  # the column is right-aligned under it
    sortino = {line.split()[0]: line[end - 7 : end].strip() for line in lines}
    assert sortino == {"winner": "no loss", "hold": "nan", "mixed": "0.447"}


def test_a_value_without_interval_says_why():
    """A metric that is a number for one seed only (the other seeds never traded: no Sharpe
    ratio) has no interval, and the summary says so in its place instead of [nan, nan]."""
    import numpy as np
    import pandas as pd

    from tradearena.evaluation.analysis.summary import summary_table
    from tradearena.evaluation.cli.text import format_summary

    episodes = pd.DataFrame(
        {
            "agent": "raql",
            "seed": np.repeat([0, 1, 2, 3], 5),
            "pnl": [3.0, -1.0, 2.0, 4.0, 0.5] + [0.0] * 15,
        }
    )
    with pytest.warns(Warning):  # the seeds without a ratio, left out
        summary = summary_table(episodes, by="agent").assign(condition="clean", exposure=2.0)
    text = format_summary(summary)
    assert "nan" not in text
    (row,) = [line for line in text.splitlines() if line.startswith("raql")]
    assert row.split("  ")[1].strip() == f"{summary.sharpe[0]:.3f} [1 of 4 seeds: no interval]"
    one = format_summary(summary.assign(seeds=1))
    assert f"{summary.sharpe[0]:.3f} [one seed: no interval]" in one


@pytest.mark.parametrize(
    ("given", "hint"),
    [
        (["--seeds", "2"], "; a value of the experiment file is replaced with --set seeds=2"),
        (
            ["--episodes=20"],
            "; a value of the experiment file is replaced with --set training.episodes=20 or "
            "--set testing.episodes=20",
        ),
        (
            ["--n-steps", "30"],
            "; a value of the experiment file is replaced with --set market.n_steps=30",
        ),
        (["--colour", "red"], ""),
    ],
)
def test_an_option_that_is_a_key_of_the_file_points_to_set(given, hint, capsys):
    """`run FILE --seeds 2`: one line, exit 2, naming the --set of each key of that name."""
    with pytest.raises(SystemExit) as exit:
        main(["run", "configs/quickstart.toml", *given])
    assert exit.value.code == 2
    assert capsys.readouterr().err == (
        f"tradearena: error: unrecognized arguments: {' '.join(given)}{hint}\n"
    )


TINY_RUN = """\
kind = "compare"
name = "tiny"
seeds = 1

[market]
population = "light"
n_steps = 15

[training]
episodes = 2

[testing]
episodes = 2

[[agents]]
id = "q_learning"
"""


@pytest.fixture(scope="module")
def written_inputs(tmp_path_factory) -> dict[str, list[str]]:
    """The inputs of each command that writes: argv without --out, for a finished run, a
    payoff table, a LOBSTER day and a Binance recording."""
    folder = tmp_path_factory.mktemp("inputs")
    (folder / "tiny.toml").write_text(TINY_RUN)
    run = folder / "run"
    assert main(["run", str(folder / "tiny.toml"), "--executor", "local", "--out", str(run)]) == 0
    day = folder / "day_message_1.csv"
    write_lobster(synthetic_tape(0, n_steps=30, levels=1), day, folder / "day_orderbook_1.csv")
    table = folder / "payoffs.csv"
    table.write_text("n_a,n_b,u_a,u_b\n2,0,1.0,\n1,1,0.0,0.0\n0,2,,2.0\n")
    recording = folder / "feed.txt"
    recording.write_text(
        f'{10**18} {{"lastUpdateId":1,"bids":[["99.99","1.000"]],"asks":[["100.01","1.000"]]}}\n'
    )
    local = ["--executor", "local", "--no-progress"]
    return {
        "run": ["run", str(folder / "tiny.toml"), *local],
        "evaluate": ["evaluate", str(run), *local],
        "data convert": ["data", "convert", "binance", str(recording)],
        "games": ["games", str(table), "--resamples", "0"],
        "realism": ["realism", str(day), "--days", "1"],
        "fit": ["fit", str(day), "--executor", "local", "--budget", "8", "--restarts", "1"],
        "transfer": [
            "transfer",
            "tradearena/MarketMaking-v0",
            "--against",
            str(day),
            "--seeds",
            "2",
            "--sessions",
            "1",
            *local,
        ],
    }


@pytest.mark.parametrize(
    "command", ["run", "evaluate", "data convert", "games", "realism", "fit", "transfer"]
)
def test_an_out_that_is_a_file_is_one_line_naming_it(command, written_inputs, tmp_path, capsys):
    """--out an existing file (or below one): exit 2, one line naming the path; the file is
    as it was."""
    blocking = tmp_path / "file"
    blocking.write_text("mine\n")
    out = blocking / "market.toml" if command == "fit" else blocking
    capsys.readouterr()
    assert main([*written_inputs[command], "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"tradearena: error: cannot write {blocking}")
    assert blocking.read_text() == "mine\n"
    assert sorted(tmp_path.iterdir()) == [blocking]


def test_a_read_only_out_is_one_line_naming_it(written_inputs, tmp_path, monkeypatch, capsys):
    """A directory that cannot be made (read-only): exit 2, one line naming it."""

    def refused(self, *args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied", str(self))

    monkeypatch.setattr(Path, "mkdir", refused)
    for command in ("run", "evaluate", "data convert", "games"):
        out = tmp_path / command.replace(" ", "_")
        assert main([*written_inputs[command], "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert err == f"tradearena: error: cannot write {out}: Permission denied\n"


def _disk_full(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


@pytest.mark.parametrize(
    ("command", "write"),
    [
        ("data convert", "pathlib.Path.write_bytes"),
        ("games", "matplotlib.figure.Figure.savefig"),
        ("run", "matplotlib.figure.Figure.savefig"),
        ("realism", "matplotlib.figure.Figure.savefig"),
        ("transfer", "matplotlib.figure.Figure.savefig"),
        ("fit", "pathlib.Path.write_text"),
    ],
)
def test_a_full_disk_leaves_no_part_written(
    command, write, written_inputs, tmp_path, monkeypatch, capsys
):
    """A write that fails for want of space: exit 2, one line naming the file, and none of
    the command's files (tape, tables with figures, figures) half there."""
    monkeypatch.setattr(write, _disk_full)
    out = tmp_path / "out"
    target = out.with_suffix(".toml") if command == "fit" else out  # fit writes a .toml
    capsys.readouterr()
    assert main([*written_inputs[command], "--out", str(target)]) == 2
    err = capsys.readouterr().err
    if command == "fit":  # its progress bar comes before
        err = err.rsplit("\n", 2)[-2] + "\n"
    assert err.count("\n") == 1 and "No space left on device" in err
    assert err.startswith(f"tradearena: error: cannot write {out}")
    left = sorted(p.name for p in out.rglob("*")) if out.exists() else []
    assert not [name for name in left if name.endswith((".png", ".csv.partial", "meta.json"))]
    assert not [name for name in left if ".partial" in name]
    if command != "run":  # a run keeps its store (--resume goes on), and redraws then
        assert not out.exists()


BROKEN_AGENTS = """\
from tradearena.agents.base import Agent


class FailsToBuild(Agent):
    def __init__(self, **params):
        raise RuntimeError("no model file")

    def act(self, obs, explore=True):
        return 0


class FailsToAct(Agent):
    def act(self, obs, explore=True):
        return {}["missing"]
"""


@pytest.mark.parametrize(
    ("agent", "message"),
    [
        (
            "broken_agents:FailsToBuild",
            "FailsToBuild: RuntimeError in __init__ (broken_agents.py, line 6): no model file",
        ),
        (
            "broken_agents:FailsToAct",
            "FailsToAct: KeyError in act (broken_agents.py, line 14): 'missing'",
        ),
        ("syntax_error:Agent", "cannot load agent 'syntax_error:Agent': syntax_error.py, line 1: "),
        ("../../x:Y", "cannot load agent '../../x:Y': expected 'package.module:ClassName'"),
    ],
)
def test_an_agent_whose_code_fails_is_one_line_naming_it(
    agent, message, tmp_path, monkeypatch, capsys, own_folders
):
    """`agents --check` and `run` of an agent whose module does not compile, whose
    ``__init__`` or ``act`` raises, or whose id is a path: exit 2, one line naming the agent
    and where its code failed; the run writes nothing."""
    (tmp_path / "broken_agents.py").write_text(BROKEN_AGENTS)
    (tmp_path / "syntax_error.py").write_text("def broken(:\n")
    monkeypatch.chdir(tmp_path)
    assert main(["agents", "--check", agent]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"tradearena: error: {message}")
    if "FailsToAct" in agent:  # acting is the jobs' business: a failed job, recorded
        return
    config = tmp_path / "x.toml"
    config.write_text(TINY_RUN.replace('"q_learning"', repr(agent).replace("'", '"')))
    assert main(["run", str(config), "--executor", "local", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "agents[0]" in err and message.split(": ", 1)[1] in err
    assert not (tmp_path / "r").exists()


def test_a_session_too_long_to_hold_is_a_usage_error(capsys):
    """`session --steps 10**12` is refused by the argument parser, naming the most allowed."""
    with pytest.raises(SystemExit) as exit:
        main(["session", "--steps", str(10**12)])
    assert exit.value.code == 2
    assert "argument --steps: must be <= 99,840, got 1,000,000,000,000" in capsys.readouterr().err


def test_an_unreachable_cluster_is_refused_before_anything_is_written(tmp_path, capsys):
    """--address of a port nobody listens on: exit 2 within seconds, one line naming the
    address, and no run directory."""
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    config = tmp_path / "x.toml"
    config.write_text(TINY_RUN)
    out = tmp_path / "run"
    assert main(["run", str(config), "--address", f"127.0.0.1:{port}", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"tradearena: error: --address 127.0.0.1:{port}: no Ray cluster")
    assert not out.exists()


def test_realism_takes_a_lobster_day_named_by_both_its_files(written_inputs, capsys):
    """`realism MESSAGE.csv ORDERBOOK.csv` reads the day once, as `realism MESSAGE.csv`."""
    messages = written_inputs["realism"][1]
    orderbook = messages.replace("_message_", "_orderbook_")
    assert main(["realism", messages, "--days", "1"]) == 0
    alone = capsys.readouterr().out
    assert main(["realism", messages, orderbook, "--days", "1"]) == 0
    assert capsys.readouterr().out == alone
    assert main(["realism", orderbook, messages, "--days", "1"]) == 0
    assert capsys.readouterr().out == alone


def test_a_tape_too_short_for_a_day_is_named_with_its_counts(tmp_path, capsys):
    """A 20-line tape: `realism` and `run` warn in one line with its trades and minutes;
    `fit` refuses it (exit 2) and writes no market."""
    messages = tmp_path / "short_message_1.csv"
    tape = synthetic_tape(0, n_steps=10, levels=1)
    short = Tape(tape.messages[:20].copy(), tape.book[:20].copy(), tape.tick_size)
    write_lobster(short, messages, tmp_path / "short_orderbook_1.csv")
    counts = "0 trades over 0.3 minutes, too few to stand for a day"
    assert main(["realism", str(messages), "--days", "1"]) == 0
    err = capsys.readouterr().err
    assert err.startswith(f"tradearena: warning: {messages}: {counts}") and err.count("\n") == 1
    config = tmp_path / "x.toml"
    config.write_text(TINY_RUN.replace("[market]", f'[market]\ntape = "{messages}"'))
    assert main(["run", str(config), "--executor", "local", "--out", str(tmp_path / "r")]) == 0
    assert f"tradearena: warning: {messages}: {counts}" in capsys.readouterr().err
    market = tmp_path / "fitted" / "market.toml"
    assert main(["fit", str(messages), "--executor", "local", "--out", str(market)]) == 2
    assert capsys.readouterr().err.startswith(f"tradearena: error: {messages}: {counts}")
    assert not market.exists()


@pytest.mark.parametrize(
    ("argument", "message"),
    [
        (
            ["--budget", "2"],
            "--budget 2: a fit evaluates at least one generation of 8 "
            "candidates per restart (3 restarts: 24)",
        ),
        (["--minutes", "nan"], "argument --minutes: must be > 0, got nan"),
    ],
)
def test_a_fit_that_cannot_keep_its_limits_is_refused(argument, message, tmp_path, capsys):
    messages = tmp_path / "day_message_1.csv"
    write_lobster(synthetic_tape(0, n_steps=30, levels=1), messages)
    argv = ["fit", str(messages), "--executor", "local", "--out", str(tmp_path / "m.toml")]
    try:
        status = main([*argv, *argument])
    except SystemExit as exit:  # the argument parser's
        status = exit.code
    assert status == 2
    assert message in capsys.readouterr().err
    assert sorted(tmp_path.iterdir()) == [messages]


BOUNDED = [
    ("realism d.csv --days 1000000000", "--days: must be <= 1,000, got 1,000,000,000"),
    ("realism d.csv --classifier-days 1001", "--classifier-days: must be <= 1,000, got 1,001"),
    (
        "transfer m.toml --against d.csv --sessions 100000",
        "--sessions: must be <= 1,024, got 100,000",
    ),
    (
        "transfer m.toml --against d.csv --seeds 1000000000",
        "--seeds: must be <= 10,000, got 1,000,000,000",
    ),
    (
        "transfer m.toml --against d.csv --window 0,1000000",
        "--window: LAST must be < 1,000,000 (steps of a day), got '0,1000000'",
    ),
    (
        "transfer m.toml --against d.csv --workers 100000",
        "--workers: must be <= 1,024, got 100,000",
    ),
    ("fit d.csv --out m.toml --budget 1000000", "--budget: must be <= 100,000, got 1,000,000"),
    ("fit d.csv --out m.toml --days 1001", "--days: must be <= 1,000, got 1,001"),
    ("fit d.csv --out m.toml --restarts 100001", "--restarts: must be <= 100,000, got 100,001"),
    ("fit d.csv --out m.toml --workers 1025", "--workers: must be <= 1,024, got 1,025"),
    ("run c.toml --workers 1025", "--workers: must be <= 1,024, got 1,025"),
    ("evaluate r --episodes 10000001", "--episodes: must be <= 10,000,000, got 10,000,001"),
    ("games t.csv --resamples 100001", "--resamples: must be <= 100,000, got 100,001"),
    ("games t.csv --reduce 1001", "--reduce: must be <= 1,000, got 1,001"),
    ("data convert binance x.gz --out o --levels 101", "--levels: must be <= 100, got 101"),
    ("reproduce --scale 1e9", "--scale: must be <= 1000, got 1e9"),
]
"""Each count a command takes beyond its bound, and the error's end (`argparse`'s, after
``argument``)."""


@pytest.mark.parametrize(("command", "message"), BOUNDED)
def test_every_count_a_command_takes_is_bounded_as_it_is_parsed(command, message, capsys):
    """Refused before anything is read or run (`realism --days 10^9` grew 47 MB/s,
    `transfer --sessions 100000` never ended, `--seeds 10^9` failed in the first job), in one
    error line naming the flag and the bound."""
    argv = command.split()
    with pytest.raises(SystemExit) as exit:
        main(argv)
    assert exit.value.code == 2
    name = " ".join(argv[: 2 if argv[0] == "data" else 1])
    assert (
        capsys.readouterr().err.splitlines()[-1] == f"tradearena {name}: error: argument {message}"
    )


@pytest.mark.parametrize("command", ["evaluate", "plot"])
def test_a_run_directory_that_is_not_there_is_named_as_given(
    command, tmp_path, monkeypatch, capsys
):
    """`evaluate runs/nope` and `plot runs/nope`: one line naming the directory as typed (not
    an errno, not an absolute path), exit 2; a folder without a run's files says which."""
    monkeypatch.chdir(tmp_path)
    local = ["--executor", "local"] if command == "evaluate" else []
    assert main([command, "runs/nope", *local]) == 2
    assert capsys.readouterr().err == "tradearena: error: no run directory at runs/nope\n"
    (tmp_path / "runs" / "empty").mkdir(parents=True)
    assert main([command, "runs/empty", *local]) == 2
    assert capsys.readouterr().err == (
        "tradearena: error: runs/empty is not a run directory: it holds no config.toml and no "
        "results.sqlite (`tradearena run CONFIG --out DIR` makes one)\n"
    )


@pytest.mark.parametrize(
    "argv, line",
    [
        (
            ["realism", "day.csv", "--from", "12.45"],
            "tradearena realism: error: argument --from: expected a time of day HH:MM, got '12.45'",
        ),
        (
            ["transfer", "market.toml", "--against", "day.csv", "--task", "maker"],
            "tradearena transfer: error: argument --task: invalid choice: 'maker' (did you mean "
            "'making'?) (choose from 'making', 'execution')",
        ),
        ([], "tradearena: error: the following arguments are required: COMMAND"),
    ],
)
def test_an_argument_error_is_one_line(argv, line, capsys):
    """The argument parser's errors are one line, without its usage block, exit 2."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert capsys.readouterr().err == line + "\n"


def test_games_on_a_file_that_is_not_a_payoff_table_says_what_one_is(tmp_path, capsys):
    """A CSV without the n_<s>/u_<s> columns: one line naming the file and what it lacks,
    and what a payoff table is."""
    table = tmp_path / "prices.csv"
    table.write_text("time,price\n1,100\n")
    assert main(["games", str(table)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"tradearena: error: {table}: not a payoff table (no n_ column): a ")
    assert "for each strategy s, a column n_s (the players playing s in that profile)" in err
    table.write_text("n_a,n_b,u_a\n2,0,1.0\n1,1,0.5\n0,2,\n")
    assert main(["games", str(table)]) == 2
    assert "not a payoff table (no u_b column)" in capsys.readouterr().err


@pytest.mark.parametrize("command", [["fit", "--executor", "local"], ["learn"]])
def test_a_window_ending_after_the_close_is_refused(command, tmp_path, capsys):
    """`fit DAY --until 17:45` and `learn DAY --until 17:45` on a day that closes at 16:00:
    one line naming the close, exit 2, nothing written (they used to learn the whole day)."""
    messages = tmp_path / "day_34200000_57600000_message_1.csv"
    orderbook = tmp_path / "day_34200000_57600000_orderbook_1.csv"
    write_lobster(synthetic_tape(0, n_steps=30, levels=1), messages, orderbook)
    out = tmp_path / "fitted" / "m.toml"
    argv = [command[0], str(messages), "--until", "17:45", *command[1:], "--out", str(out)]
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        "tradearena: error: day_34200000_57600000_message_1: --until 17:45 is after the day's "
        "close (16:00; the day runs 09:30-16:00): give a time inside it, or no --until for the "
        "whole day\n"
    )
    assert not out.parent.exists()


def test_plotting_a_run_of_no_finished_job_says_so(tmp_path, monkeypatch, capsys, own_folders):
    """`plot` of a run whose every job failed (its agent raises in act): exit 2, one line
    saying no job finished and how to run them again (it drew nothing and said nothing)."""
    (tmp_path / "broken_agents.py").write_text(BROKEN_AGENTS)
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "x.toml"
    config.write_text(TINY_RUN.replace('"q_learning"', '"broken_agents:FailsToAct"'))
    run = tmp_path / "run"
    assert (
        main(["run", str(config), "--executor", "local", "--no-progress", "--out", str(run)]) == 1
    )
    capsys.readouterr()
    assert main(["plot", str(run)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == (
        f"tradearena: error: {run}: no job of the run finished (1 failed), so there is nothing "
        "to draw: `tradearena run CONFIG --out DIR --resume` runs them again\n"
    )


TERMINATED = """
import sys, time
from pathlib import Path
from tradearena.envs.errors import replacing
from tradearena.evaluation.cli.main import terminated_as_interrupt
with terminated_as_interrupt(), replacing(Path(sys.argv[1])) as temporary:
    temporary.write_text("half of it")
    print("writing", flush=True)
    time.sleep(30)
"""


def test_a_termination_during_a_write_leaves_no_part_of_it(tmp_path):
    """SIGTERM (what `kill` sends) while the command writes a file under its temporary name:
    the termination is raised as an interrupt, so the temporary file is removed (a hidden
    ``.partial`` file was left before); the handler before is put back after."""
    child = subprocess.Popen(
        [sys.executable, "-c", TERMINATED, str(tmp_path / "table.csv")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout.readline() == "writing\n"
        assert [p.name for p in tmp_path.iterdir()] == [".table.partial.csv"]
        child.terminate()
        _, err = child.communicate(timeout=20)
    finally:
        child.kill()
    assert err.rstrip().splitlines()[-1] == "tradearena.evaluation.cli.main.Terminated: terminated"
    assert list(tmp_path.iterdir()) == []
    before = signal.getsignal(signal.SIGTERM)
    with terminated_as_interrupt():
        assert signal.getsignal(signal.SIGTERM) is not before
    assert signal.getsignal(signal.SIGTERM) is before
