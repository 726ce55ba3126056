"""The ``tradearena`` command.

A mistake the user can fix (a `envs.errors.UserError`: a bad experiment file, data file or
argument; a file named on the command line that does not exist; an output that cannot be
written, `envs.errors.output_error`) is reported in one line, ``tradearena: error: ...``, with
exit status 2. An interrupt (Ctrl-C) is one line too (for a run: what it stored), exit status
130. Anything else is a bug: it propagates with its traceback (exit status 1).
"""

from __future__ import annotations

import argparse
import functools
import inspect
import os
import sqlite3
import sys
import time
import tomllib
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from tradearena.envs.data.convert import (
    DEFAULT_BAND,
    FORMATS,
    META,
    ORDERBOOK,
    convert,
    load_converted,
    write_converted,
)
from tradearena.envs.data.tapes import load_lobster
from tradearena.envs.errors import UserError, did_you_mean, output_error

PATH_ARGUMENTS = ("config", "out", "run_dir", "messages", "orderbook", "runs", "docs", "inputs")
"""The arguments that name files or directories (a missing one is the user's mistake)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status (2 for a user error, named in one line)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    with warnings.catch_warnings():
        warnings.showwarning = functools.partial(one_line_warning, warnings.showwarning)
        return run_command_line(args)


def run_command_line(args: argparse.Namespace) -> int:
    """Run the command ``args`` names; a user error (or an interrupt) as one line."""
    try:
        return args.func(args)
    except KeyboardInterrupt as error:
        print(f"tradearena: interrupted{': ' if str(error) else ''}{error}", file=sys.stderr)
        return 130
    except UserError as error:
        return user_error(error)
    except FileNotFoundError as error:
        if not names_a_given_path(error, args):
            raise
        return user_error(error)
    except (OSError, sqlite3.OperationalError) as error:
        output = output_error(error, None if getattr(error, "filename", None) else args_out(args))
        if output is None:
            raise
        return user_error(output)


def one_line_warning(show: Callable[..., None], message, category, *where, **more) -> None:
    """`warnings.showwarning` for the command: a warning about the user's input
    (`envs.errors.UserError`, e.g. a tape too short to stand for a day) in one line, the
    others as ``show`` shows them."""
    if issubclass(category, UserError):
        print(f"tradearena: warning: {message}", file=sys.stderr)
    else:
        show(message, category, *where, **more)


def user_error(error: Exception) -> int:
    print(f"tradearena: error: {error}", file=sys.stderr)
    return 2


def args_out(args: argparse.Namespace) -> str | None:
    """Where the command writes: its ``--out``, else the run directory it writes into."""
    return getattr(args, "out", None) or getattr(args, "run_dir", None)


def names_a_given_path(error: FileNotFoundError, args: argparse.Namespace) -> bool:
    """Whether the missing file is a path given on the command line or lies under one."""
    if error.filename is None:
        return False
    missing = Path(os.path.abspath(error.filename))
    for name in PATH_ARGUMENTS:
        given = getattr(args, name, None)
        if given is not None and missing.is_relative_to(os.path.abspath(given)):
            return True
    return False


def integer_at_least(minimum: int, maximum: int | None = None):
    """An argparse type: an integer >= ``minimum`` (and <= ``maximum`` when given)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {value}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"must be <= {maximum:,}, got {value:,}")
        return value

    return parse


def _number(text: str) -> float:
    """``text`` as a float, or the argparse error that it is not a number."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def positive_float(text: str) -> float:
    """An argparse type: a finite number > 0."""
    value = _number(text)
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
    return value


def non_negative_float(text: str) -> float:
    """An argparse type: a finite number >= 0."""
    value = _number(text)
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text}")
    return value


def tick_size(text: str) -> float:
    """An argparse type: dollars per tick, a positive multiple of $0.0001 (LOBSTER's unit)."""
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value.is_finite() or value <= 0 or value % Decimal("0.0001") != 0:
        raise argparse.ArgumentTypeError(f"must be a positive multiple of $0.0001, got {text}")
    return float(value)


def time_of_day(text: str) -> float:
    """An argparse type: a time of day, HH:MM or HH:MM:SS, as seconds after midnight."""
    parts = text.split(":")
    try:
        numbers = [int(p) for p in parts]
    except ValueError:
        numbers = []
    if len(numbers) not in (2, 3) or not all(0 <= n < 60 for n in numbers[1:]):
        raise argparse.ArgumentTypeError(f"expected a time of day HH:MM, got {text!r}")
    if not 0 <= numbers[0] < 24:
        raise argparse.ArgumentTypeError(f"hours must be 0-23, got {text!r}")
    return float(numbers[0] * 3600 + numbers[1] * 60 + (numbers[2] if len(numbers) == 3 else 0))


def add_window_arguments(parser: argparse.ArgumentParser, what: str) -> None:
    """``--from`` and ``--until`` (times of day): the part of each day ``what`` uses."""
    parser.add_argument(
        "--from",
        dest="start",
        type=time_of_day,
        metavar="HH:MM",
        help=f"{what} only what comes at or after this time of day (default: the open)",
    )
    parser.add_argument(
        "--until",
        dest="end",
        type=time_of_day,
        metavar="HH:MM",
        help=f"{what} only what comes before this time of day (default: the close)",
    )


class Parser(argparse.ArgumentParser):
    """An `argparse.ArgumentParser` whose "invalid choice" names the nearest choice (what
    Python 3.14's ``suggest_on_error`` does)."""

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        if action.choices is not None and value not in action.choices:
            choices = ", ".join(map(repr, action.choices))
            hint = did_you_mean(value, action.choices)
            raise argparse.ArgumentError(
                action, f"invalid choice: {value!r}{hint} (choose from {choices})"
            )


def override(text: str) -> dict:
    """An argparse type: ``KEY=VALUE`` with a dotted key (``market.tape=day.csv``) as nested
    overrides; the value is read as TOML (``seeds=2``, ``output.figures=false``), else as a
    string."""
    key, sep, value = text.partition("=")
    if not sep or not key or any(not part for part in key.split(".")):
        raise argparse.ArgumentTypeError(
            f"expected KEY=VALUE (e.g. market.tape=day.csv), got {text!r}"
        )
    try:
        parsed: Any = tomllib.loads(f"value = {value}")["value"]
    except tomllib.TOMLDecodeError:
        parsed = value
    for part in reversed(key.split(".")):
        parsed = {part: parsed}
    return parsed


def build_parser() -> argparse.ArgumentParser:
    """The command's parser: one subcommand per function of `COMMANDS`."""
    parser = Parser(
        prog="tradearena",
        description="Risk-sensitive trading agents in a limit-order-book market.",
    )
    commands = parser.add_subparsers(required=True, metavar="COMMAND", parser_class=Parser)
    for add in COMMANDS:
        add(commands)
    return parser


def add_run_command(commands: argparse._SubParsersAction) -> None:
    """`tradearena run CONFIG`: run an experiment file."""
    run = commands.add_parser(
        "run",
        help="run an experiment file (train, test, store, tables, figures)",
        description="Run an experiment file: its jobs run in parallel (Ray by default), every "
        "finished job is stored in RUN_DIR/results.sqlite, then the summary table and the "
        "figures are written. The file is checked before anything runs.",
    )
    run.add_argument("config", help="experiment file (TOML), e.g. configs/quickstart.toml")
    add_executor_arguments(run)
    run.add_argument("--out", default=None, help="run directory (default: the file's output.dir)")
    run.add_argument(
        "--resume",
        action="store_true",
        help="continue an interrupted run in the same directory: finished jobs are skipped, "
        "the others continue from their last checkpoint ([training] checkpoint_every); a "
        "finished run prints its table and keeps its figures (`tradearena plot` redraws them)",
    )
    run.add_argument(
        "--dry-run", action="store_true", help="check the file and list the jobs, run nothing"
    )
    run.add_argument(
        "--set",
        metavar="KEY=VALUE",
        type=override,
        action="append",
        default=[],
        help="replace a value of the file (repeatable): --set market.tape=DAY_message_1.csv "
        "(a path from the current folder), --set seeds=2",
    )
    run.set_defaults(func=run_command)


def add_reproduce_command(commands: argparse._SubParsersAction) -> None:
    """`tradearena reproduce`: the paper's experiments and docs/results.md."""
    reproduce = commands.add_parser(
        "reproduce",
        help="run the source text's three experiments and write docs/results.md",
        description="Run configs/paper_sharpe.toml, paper_sharpe_lobster.toml (when "
        "$LOBSTER_MESSAGES names its data file), paper_robustness.toml, paper_egta.toml, "
        "the risk-sensitive paper_risk_making.toml and paper_risk_execution.toml, and the deep "
        "learners' paper_deep_making.toml and paper_deep_execution.toml into RUNS/paper_* "
        "(resuming finished jobs), then write DOCS/results.md and its figures from those runs.",
    )
    reproduce.add_argument(
        "--scale",
        type=positive_float,
        default=1.0,
        help="multiply seeds and episodes (e.g. 4 on a cluster; default 1)",
    )
    add_executor_arguments(reproduce)
    reproduce.add_argument("--runs", default="runs", help="where the run directories go")
    reproduce.add_argument("--docs", default="docs", help="where results.md goes")
    reproduce.set_defaults(func=reproduce_command)


def add_evaluate_command(commands: argparse._SubParsersAction) -> None:
    """`tradearena evaluate RUN_DIR`: test a run's saved agents again."""
    evaluate = commands.add_parser(
        "evaluate",
        help="test a run's saved agents again, on its own market or another",
        description="Test every saved agent of RUN_DIR (frozen, as its testing began) on the "
        "run's own market and test seeds, which reproduces the run's test table, or on the "
        "[market] of FILE (with FILE's [testing] and [[perturbations]] when it has them), "
        "into a new run directory with the same tables and figures.",
    )
    evaluate.add_argument("run_dir", help="a run directory with saved agents (agents/)")
    evaluate.add_argument(
        "--config", default=None, metavar="FILE", help="an experiment file whose market to use"
    )
    evaluate.add_argument(
        "--episodes", type=integer_at_least(1), default=None, help="test episodes per agent"
    )
    add_executor_arguments(evaluate)
    evaluate.add_argument(
        "--out", default=None, help="where to write (default RUN_DIR/evaluate[-FILE's name])"
    )
    evaluate.add_argument(
        "--resume", action="store_true", help="continue an interrupted evaluation in --out"
    )
    evaluate.set_defaults(func=evaluate_command)


def add_plot_command(commands: argparse._SubParsersAction) -> None:
    """`tradearena plot RUN_DIR`: every figure a run directory supports."""
    plot = commands.add_parser("plot", help="draw every figure a run directory supports")
    plot.add_argument("run_dir", help="a run directory (holds config.toml and results.sqlite)")
    plot.set_defaults(func=plot_command)


def add_agents_command(commands: argparse._SubParsersAction) -> None:
    """`tradearena agents`: the agent ids, or the contract check of one."""
    listing = commands.add_parser(
        "agents", help="list the agent ids, one line each, or check one against the contract"
    )
    listing.add_argument(
        "--check",
        metavar="ID",
        help="run agents.check_agent on ID (a registry id, entry point or "
        "package.module:ClassName) in the default market; exit 2 naming the check it fails",
    )
    listing.set_defaults(func=agents_command)


def add_games_command(commands: argparse._SubParsersAction) -> None:
    """`tradearena games`: equilibria of a payoff table."""
    games = commands.add_parser(
        "games",
        help="Nash equilibria of a payoff table, with regrets and bootstrap intervals",
        description="Find the symmetric Nash equilibria of a payoff table in the payoffs.csv "
        "format, each with its regret, welfare and deviation gains and, when the table has "
        "stderr_<s> columns, bootstrap intervals; and the maximum-welfare profile.",
    )
    games.add_argument("table", help="payoff table (CSV: n_<s>, u_<s>[, samples_<s>, stderr_<s>])")
    games.add_argument("--out", default=None, help="write equilibria.csv and equilibria.png here")
    games.add_argument(
        "--resamples", type=integer_at_least(0), default=1000, help="bootstrap resamples (0: none)"
    )
    games.add_argument("--seed", type=integer_at_least(0), default=0, help="bootstrap seed")
    games.add_argument(
        "--roles",
        default=None,
        help="a role game: its role names, e.g. maker,taker (columns n_<role>_<strategy>)",
    )
    games.add_argument(
        "--reduce",
        type=integer_at_least(2),
        default=None,
        metavar="N",
        help="analyse the deviation-preserving reduction to N players (the table needs only "
        "its profiles)",
    )
    games.set_defaults(func=games_command)


def add_tasks_command(commands: argparse._SubParsersAction) -> None:
    """`tradearena tasks`: the trading tasks."""
    tasks = commands.add_parser("tasks", help="list the trading tasks, one line each")
    tasks.set_defaults(func=tasks_command)


def add_calibrate_command(commands: argparse._SubParsersAction) -> None:
    """`tradearena calibrate CONFIG`: the task's reference policy calibrated."""
    calibrate = commands.add_parser(
        "calibrate",
        help="calibrate the task's reference policy to a config's market and print the values",
    )
    calibrate.add_argument("config", help="an experiment file (its [market] table is used)")
    calibrate.set_defaults(func=calibrate_command)


def add_session_command(commands: argparse._SubParsersAction) -> None:
    """`tradearena session`: one synthetic session's summary."""
    session = commands.add_parser(
        "session", help="run one synthetic trading session and print its summary"
    )
    session.add_argument(
        "--seed", type=integer_at_least(0), default=0, help="session seed (default 0)"
    )
    session.add_argument(
        "--steps",
        type=integer_at_least(1, MAX_SESSION_STEPS),
        default=390,
        help=f"one-minute steps (default 390, at most {MAX_SESSION_STEPS:,})",
    )
    session.set_defaults(func=run_session)


def add_realism_command(commands: argparse._SubParsersAction) -> None:
    """`tradearena realism`: the realism scorecard."""
    realism = commands.add_parser(
        "realism",
        help="how real a market looks: stylized facts of tapes and simulated days side by side",
        description="Measure each SOURCE's stylized facts as a level-1 file shows them (returns, "
        "tails, autocorrelations, intraday profiles, spread, trade sizes, order flow, "
        "arrivals, range) and compare them with the --against tape (default: the first tape "
        "among the sources). A source is a tape (a LOBSTER message file with its orderbook "
        "file beside it, or a converted directory) or a market (an experiment file's [market] "
        "table, or a Gymnasium id) simulated over --days days. Each market is also judged by "
        "a classifier that tries to tell its one-minute and ten-second windows from the real "
        "day's (ROC AUC: 0.5 cannot tell, 1 always can), beside the AUC of one of its own days "
        "against its others. --from/--until judge only that part of every day.",
    )
    realism.add_argument("sources", nargs="+", metavar="SOURCE", help="a tape, .toml or id")
    realism.add_argument("--against", metavar="TAPE", help="the real day to compare with")
    realism.add_argument(
        "--days", type=integer_at_least(1), default=100, help="days per market (default 100)"
    )
    realism.add_argument(
        "--classifier-days",
        type=integer_at_least(1),
        default=5,
        help="a market's days the classifier sees (default 5; its floor takes one more)",
    )
    add_window_arguments(realism, "judge")
    realism.add_argument("--out", help="write DIR/scorecard.csv and the figures there")
    realism.set_defaults(func=realism_command)


def step_window(text: str) -> tuple[int, int]:
    """An argparse type: FIRST,LAST, the decision steps of a day at which sessions open."""
    parts = text.split(",")
    try:
        first, last = (int(p) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected FIRST,LAST (two steps), got {text!r}") from None
    if not 0 <= first <= last:
        raise argparse.ArgumentTypeError(f"need 0 <= FIRST <= LAST, got {text!r}")
    return first, last


def add_transfer_command(commands: argparse._SubParsersAction) -> None:
    """`tradearena transfer MARKET --against TAPE`: the predictivity of a policy zoo."""
    transfer = commands.add_parser(
        "transfer",
        help="does a market rank strategies as the real day does? a policy zoo on both",
        description="Test a zoo of fixed policies (the task's reference over a grid of its "
        "parameters, random and hold, and the saved agents of --agents runs) without training "
        "in MARKET (an experiment file or a Gymnasium id) and on the real day TAPE, over the "
        "same seeds and sessions, and judge the market by its rank correlation with the tape "
        "(Spearman, with a bootstrap interval over seeds) and by the real PnL of the policy it "
        "would pick (its regret against the tape's best). On the tape passive fills rest on "
        "the replay's queue model: every model is reported. Writes transfer.csv, "
        "predictivity.csv and transfer.png with --out.",
    )
    transfer.add_argument("market", metavar="MARKET", help="a .toml or a Gymnasium id")
    transfer.add_argument("--against", required=True, metavar="TAPE", help="the real day")
    transfer.add_argument(
        "--task", choices=("making", "execution"), help="the zoo's task (default: the market's)"
    )
    transfer.add_argument(
        "--window",
        type=step_window,
        metavar="FIRST,LAST",
        help="the tape's steps at which sessions open (default: any; see --from)",
    )
    transfer.add_argument(
        "--from",
        dest="start",
        type=time_of_day,
        metavar="HH:MM",
        help="sessions on the tape open at or after this time of day (and end by its close)",
    )
    transfer.add_argument(
        "--agents", nargs="+", default=(), metavar="RUN_DIR", help="runs whose saved agents join"
    )
    transfer.add_argument(
        "--seeds", type=integer_at_least(2), default=4, help="seeds a side (default 4)"
    )
    transfer.add_argument(
        "--sessions", type=integer_at_least(1), default=10, help="sessions a seed (default 10)"
    )
    add_executor_arguments(transfer)
    transfer.add_argument("--out", help="write DIR/transfer.csv, predictivity.csv, transfer.png")
    transfer.set_defaults(func=transfer_command)


def add_fit_command(commands: argparse._SubParsersAction) -> None:
    """`tradearena fit`: a population fitted to a real day."""
    fitting = commands.add_parser(
        "fit",
        help="fit a population to a real day by simulated moments; writes a market file",
        description="Fit the population's parameters (its flow mechanisms included) to the real "
        "day(s) of TAPE by simulated moments: CMA-ES from --restarts starts, each candidate "
        "scored on --days simulated days against the day's facts (tradearena realism). "
        "Writes OUT, an experiment file whose [market] table is the fitted market, and "
        "OUT.fit.jsonl, the candidates' scores (--resume goes on from it).",
    )
    fitting.add_argument("tapes", nargs="+", metavar="TAPE", help="a real day (a tape)")
    fitting.add_argument("--population", default="light", help="the population fitted")
    fitting.add_argument(
        "--budget", type=integer_at_least(1), default=400, help="candidates (default 400)"
    )
    fitting.add_argument(
        "--minutes", type=positive_float, default=10.0, help="stop after this long (default 10)"
    )
    fitting.add_argument(
        "--days", type=integer_at_least(1), default=8, help="days per candidate (default 8)"
    )
    fitting.add_argument(
        "--restarts", type=integer_at_least(1), default=3, help="CMA-ES starts (default 3)"
    )
    fitting.add_argument("--executor", choices=["ray", "local"], default="ray")
    fitting.add_argument("--workers", type=integer_at_least(1), help="Ray CPUs (default all)")
    add_window_arguments(fitting, "learn from")
    fitting.add_argument("--resume", action="store_true", help="go on from OUT.fit.jsonl")
    fitting.add_argument("--out", required=True, help="the market file written (.toml)")
    fitting.set_defaults(func=fit_command)


def add_data_command(commands: argparse._SubParsersAction) -> None:
    """`tradearena data check|convert`: market data files."""
    data = commands.add_parser(
        "data",
        help="market data files: where they come from, checking them",
        description=DATA_SOURCES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    data.set_defaults(func=lambda args: data.print_help() or 0)
    data_commands = data.add_subparsers(metavar="ACTION")
    check = data_commands.add_parser(
        "check",
        help="validate LOBSTER files; with the orderbook file, measure replay fidelity",
        description="Validate a LOBSTER message file (and orderbook file), or a converted "
        "recording's (meta.json beside them: prices in ticks, sizes in lots). With the "
        "orderbook file, replay the messages through the book and print the fraction of events "
        "after which the best bid and ask (price and size) equal the file's row: from the "
        "messages alone, and with reconciliation to the file's levels.",
    )
    check.add_argument("messages", help="LOBSTER message file")
    check.add_argument("orderbook", nargs="?", help="LOBSTER orderbook file (optional)")
    check.add_argument(
        "--tick-size", type=tick_size, default=0.01, help="dollars per tick (default 0.01)"
    )
    check.set_defaults(func=data_check)
    convert = data_commands.add_parser(
        "convert",
        help="convert an exchange recording into a tape (LOBSTER-style files and meta.json)",
        description="Convert a recording (binance: combined-stream lines; tardis: "
        "incremental_book_L2 and trades CSVs; l3: orders and trades CSVs; gzip or plain) into "
        "OUT/message.csv and OUT/orderbook.csv in LOBSTER's columns (prices in ticks, sizes in "
        "lots) and OUT/meta.json (the tick, the lot and what was dropped or found). Nothing is "
        "written when the recording has a bad line.",
    )
    convert.add_argument("format", choices=sorted(FORMATS), help="the recording's format")
    convert.add_argument("inputs", nargs="+", metavar="INPUT", help="the recording's files")
    convert.add_argument("--out", required=True, help="directory to write the tape into")
    convert.add_argument(
        "--levels", type=integer_at_least(1), default=10, help="orderbook levels (default 10)"
    )
    convert.add_argument("--tick", help="price step (default: the largest dividing every price)")
    convert.add_argument("--lot", help="size step (default: the largest dividing every size)")
    convert.add_argument(
        "--band",
        type=non_negative_float,
        default=DEFAULT_BAND,
        help="drop new quotes more than this fraction away from the last trade price "
        f"(default {DEFAULT_BAND}; 0: keep all)",
    )
    convert.set_defaults(func=data_convert)


COMMANDS = (
    add_run_command,
    add_reproduce_command,
    add_evaluate_command,
    add_plot_command,
    add_agents_command,
    add_games_command,
    add_tasks_command,
    add_calibrate_command,
    add_session_command,
    add_realism_command,
    add_transfer_command,
    add_fit_command,
    add_data_command,
)
"""The subcommands, in the order the help lists them."""


DATA_SOURCES = """\
Replay needs a tape of order-book messages; none ships with tradearena.

Without data: `tape = "synthetic"` in an experiment's [market] table (or
tradearena.envs.simulator.recording.synthetic_tape() in Python) records a day of the synthetic
market and replays it.

LOBSTER (lobsterdata.com): free sample days of NASDAQ stocks (e.g. AMZN,
2012-06-21, levels 1 to 10) on its website, any stock and day with an
academic subscription. A day is two CSV files, SYMBOL_DATE_..._message_N.csv
and ..._orderbook_N.csv; `tradearena data check` reads them. A config replays
one with `tape = "PATH/..._message_N.csv"` (the orderbook file beside it is
used for reconciliation); `tradearena run CONFIG --set market.tape=PATH` gives
a config its tape on the command line, and `tape = "$NAME"` reads it from the
environment variable NAME (configs/paper_sharpe_lobster.toml:
LOBSTER_MESSAGES=PATH tradearena run configs/paper_sharpe_lobster.toml).

Exchange recordings: crypto exchanges publish their order books as public
streams (e.g. Binance's diff-depth, book-ticker and trade streams); recorders
such as hftbacktest's collector save them. They replay once converted to
LOBSTER's message format (time, type, order id, size, price x 10000,
direction)."""


def add_executor_arguments(parser: argparse.ArgumentParser) -> None:
    """--executor, --workers, --address and --no-progress, for the commands that run jobs."""
    parser.add_argument(
        "--executor",
        choices=("ray", "local"),
        default="ray",
        help="ray (default; a local Ray or a cluster) or local (in this process)",
    )
    parser.add_argument(
        "--workers",
        type=integer_at_least(1),
        default=None,
        help="CPUs for a local Ray (default: all cores)",
    )
    parser.add_argument(
        "--address",
        default=None,
        help="address of a running Ray cluster (default: $RAY_ADDRESS, else local)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


@contextmanager
def executor_from(args: argparse.Namespace, **job: Any) -> Iterator:
    """The executor the arguments ask for (``job=``: the function that runs a job, default
    its kind's), closed (Ray shut down if it started it) after; a Ray cluster is connected to
    first, so that one that does not answer is refused before anything is written."""
    from tradearena.evaluation.experiment.parallel import RayExecutor, make_executor

    executor = make_executor(
        args.executor,
        workers=args.workers,
        address=args.address,
        progress=not args.no_progress,
        **job,
    )
    try:
        if isinstance(executor, RayExecutor) and executor.address:
            executor.connect()
        yield executor
    finally:
        executor.close()


def run_command(args: argparse.Namespace) -> int:
    from tradearena.evaluation.experiment.config import load_config, merge
    from tradearena.evaluation.experiment.runner import plan, run_experiment

    overrides = functools.reduce(merge, args.set, {})
    if args.dry_run:
        config = load_config(args.config, overrides)
        from tradearena.evaluation.experiment.kinds import KINDS, Driven

        jobs = plan(config)
        later = isinstance(KINDS[config["kind"]], Driven)  # the later rounds follow its results
        first = " in its first round (the next are planned from its results)" if later else ""
        print(f"{args.config}: {config['kind']} experiment, {len(jobs)} jobs{first}, valid")
        for job in jobs:
            print(f"  {job.id}")
        return 0
    with executor_from(args) as executor:
        outcome = run_experiment(
            args.config, executor, out=args.out, resume=args.resume, overrides=overrides
        )
    return report(outcome)


def evaluate_command(args: argparse.Namespace) -> int:
    from tradearena.evaluation.experiment.evaluate import evaluate_run

    with executor_from(args) as executor:
        outcome = evaluate_run(
            args.run_dir,
            executor,
            file=args.config,
            episodes=args.episodes,
            out=args.out,
            resume=args.resume,
        )
    return report(outcome)


def report(outcome) -> int:
    """Print what a run did (its payoff or summary table, its directory, its failed jobs);
    the exit status: 1 if a job failed."""
    if outcome.skipped:
        print(f"resumed: {outcome.skipped} finished jobs skipped")
    print(format_game(outcome.directory) or format_summary(outcome.summary))
    equilibria = outcome.directory / "equilibria.csv"
    if equilibria.exists():
        from tradearena.evaluation.analysis.games import format_equilibria

        print("\n" + format_equilibria(equilibria))
    print(f"\nrun directory: {outcome.directory}")
    if outcome.failed:
        print(f"{len(outcome.failed)} job(s) failed:", file=sys.stderr)
        for job_id, error in outcome.failed.items():
            print(f"  {job_id}: {error.strip().splitlines()[-1]}", file=sys.stderr)
        return 1
    return 0


def format_game(directory: Path) -> str | None:
    """A tournament's game as text: `format_payoffs` of its payoff table (of its DPR game when
    it has one), or a role game's table; None for a run without one."""
    reduced = directory / "payoffs_reduced.csv"
    if reduced.exists():
        return format_payoffs(reduced)
    payoffs = directory / "payoffs.csv"
    if not payoffs.exists():
        return None
    if tomllib.loads((directory / "config.toml").read_text()).get("tournament", {}).get("roles"):
        import pandas as pd

        frame = pd.read_csv(payoffs)
        return f"role game payoff table ({payoffs.name})\n" + frame.round(3).to_string(index=False)
    return format_payoffs(payoffs)


def format_payoffs(path) -> str:
    """A tournament's payoff table and the rest points of its replicator dynamics, as text."""
    from tradearena.evaluation.analysis.dynamics import format_rest_points
    from tradearena.evaluation.analysis.payoffs import PayoffTable

    table = PayoffTable.read_csv(path)
    frame = table.to_frame()
    shown = [c for c in frame.columns if c.startswith(("n_", "u_"))]
    lines = [
        f"heuristic payoff table ({path.name}: {table.p} seats, {len(table)} profiles)",
        frame[shown].round(3).to_string(index=False),
        "",
        "rest points of the replicator dynamics (stability in the whole simplex):",
    ]
    lines.extend(f"  {line}" for line in format_rest_points(table))
    return "\n".join(lines)


def _sortino_text(row) -> str:
    """The Sortino ratio to three decimals; "no loss" where no test episode lost and the mean
    PnL is positive (no downside deviation to divide by: the ratio is unbounded); "no trades"
    for an agent that never trades."""
    if row.sortino != row.sortino and row.mean_pnl > 0:  # NaN
        return "no loss"
    return _undefined(row, row.sortino) or f"{row.sortino:.3f}"


def _undefined(row, value: float) -> str:
    """Why a metric's ``value`` is not a number, in words ("" for a finite one): "no loss"
    for inf (a ratio over losses, none), "no trades" for NaN of an agent that never held a
    share and made nothing (a ratio of zero over zero)."""
    if value == float("inf"):
        return "no loss"
    if value != value and row.get("exposure", 0.0) == 0 and row.mean_pnl == 0:
        return "no trades"
    return ""


def format_summary(summary) -> str:
    """The summary table as text, per condition: Sharpe and PnL with their intervals and the
    risk metrics, then the field's metrics (`_field_columns`)."""
    if summary.empty:
        return "(no test episodes)"
    lines = []
    for condition, rows in summary.groupby("condition", sort=False):
        lines.append(f"\ncondition: {condition}")
        table = rows.set_index("agent")
        columns = {
            "Sharpe": _ranged(table, "sharpe", 3),
            "mean PnL $": _ranged(table, "mean_pnl", 2),
            "Sortino": table.apply(_sortino_text, axis=1),
            "max DD $": table["max_drawdown"].map("{:.2f}".format),
            "CVaR 5% $": table["cvar_5"].map("{:.2f}".format),
            "hit rate": table["hit_rate"].map("{:.2f}".format),
            "|inv| sh": table["exposure"].map("{:.0f}".format),
            "seeds": table["seeds"],
        }
        if "plateaued" in table:
            columns["plateau"] = table.apply(_plateau_text, axis=1)
        import pandas as pd

        lines.append(pd.DataFrame(columns).to_string())
        if "gain_loss" in table:
            lines.append(pd.DataFrame(_field_columns(table)).to_string())
    return "\n".join(lines)


def _field_columns(table) -> dict:
    """The field's metrics of a condition's summary rows (indexed by agent), as text columns:
    gain-loss ratio, P&L-to-MAP ($/share), and where the run has them the shortfall (bp of
    the arrival price) and the probability of beating the reference, with 95% intervals."""
    columns = {
        "gain/loss": _ranged(table, "gain_loss", 2),
        "PnL/MAP $/sh": _ranged(table, "pnl_to_map", 4),
    }
    if "shortfall_bp" in table:
        columns["shortfall bp"] = _ranged(table, "shortfall_bp", 2)
    if "p_beat_reference" in table:  # "-": the reference itself, or no one session to pair
        beats = _ranged(table, "p_beat_reference", 2)
        columns["P(beat reference)"] = beats.where(table["p_beat_reference"].notna(), "-")
    return columns


def _ranged(table, column: str, digits: int):
    """Each row's ``column`` and its interval (``column``_low, _high) as text, "x [low, high]"
    to ``digits`` decimals; a value that is no number in words (`_undefined`)."""
    return table.apply(
        lambda r: (
            _undefined(r, r[column])
            or f"{r[column]:.{digits}f} "
            f"[{r[column + '_low']:.{digits}f}, {r[column + '_high']:.{digits}f}]"
        ),
        axis=1,
    )


def _plateau_text(row) -> str:
    """'from episode N' for an agent whose training curve plateaued, else 'not reached'."""
    if row.get("plateaued") is True or row.get("plateaued") == 1:
        return f"from episode {int(row.plateau_episode)}"
    return "not reached" if row.get("plateaued") is False else ""


def reproduce_command(args: argparse.Namespace) -> int:
    from tradearena.evaluation.reports.reproduce import reproduce

    with executor_from(args) as executor:
        report = reproduce(executor, runs=Path(args.runs), docs=Path(args.docs), scale=args.scale)
    print(f"report: {report}")
    return 0


def games_command(args: argparse.Namespace) -> int:
    from tradearena.evaluation.analysis.games import games_command as analyse_games

    return analyse_games(args)


def plot_command(args: argparse.Namespace) -> int:
    from tradearena.evaluation.experiment.runner import write_figures

    for path in write_figures(args.run_dir):
        print(path)
    return 0


def agents_command(args: argparse.Namespace) -> int:
    from tradearena import agents
    from tradearena.envs.tasks import TASKS
    from tradearena.envs.trading_env import TradingEnv

    if args.check:
        agents.add_folders(os.getcwd())
        cls = agents.resolve(args.check)
        env = TradingEnv(observation=cls.observation, **TASKS[cls.task].gym_keywords())
        standard = {"observation_space": env.observation_space, "action_space": env.action_space}
        standard |= {"seed": 0, "market_spec": env.market_spec}
        report = agents.check_agent(
            cls, env, **{k: v for k, v in standard.items() if k in cls.takes}
        )
        print(report)
        return 0
    print(aligned(list(agents.describe().items())))
    return 0


def tasks_command(args: argparse.Namespace) -> int:
    from tradearena.envs.spec import MarketSpec
    from tradearena.envs.tasks import TASKS

    rows = [("task", "Gymnasium id", "actions", "market", "reference")]
    for task in TASKS.values():
        spec = MarketSpec(task=task.name)
        market = (
            f"{spec.population}, {spec.n_steps} steps, limit {spec.position_limit:,}, "
            f"reward x {spec.reward_scale:g}"
            + (f", buys {spec.parent_order:,}" if spec.parent_order else "")
        )
        rows.append((task.name, task.gym_id, spec.action_set, market, task.reference or "-"))
    print(aligned(rows))
    print()
    width = max(map(len, TASKS))
    for task in TASKS.values():
        print(f"{task.name:<{width}}  {task.summary}")
    return 0


def calibrate_command(args: argparse.Namespace) -> int:
    from tradearena.envs.tasks import TASKS
    from tradearena.evaluation.experiment.config import load_config
    from tradearena.evaluation.experiment.rollout import build_agent, market_spec

    config = load_config(args.config)
    market = market_spec(config)
    reference = TASKS[market.task].reference
    if not reference:
        print(f"task {market.task!r} has no reference policy to calibrate")
        return 0
    specs = [s for s in config["agents"] if s["id"] == reference]
    specs = specs or [{"id": reference, "label": reference, "params": {}}]
    for spec in specs:
        calibration = build_agent(spec, market, seed=0).calibration
        estimate = calibration.pop("market", None)
        if estimate is not None:
            print(
                f"market ({estimate['sessions']} calibration sessions, {estimate['steps']} "
                f"steps): sigma {estimate['sigma']:.3f} ticks/step; fills "
                f"{estimate['A']:.3f} exp(-{estimate['kappa']:.3f} delta) per step, delta "
                f"{min(estimate['distances'])}-{max(estimate['distances'])} ticks from the mid"
            )
        tuned = {k: v for k, v in calibration.items() if k.endswith("_sharpes")}
        values = ", ".join(f"{k} {v:.4g}" for k, v in calibration.items() if k not in tuned)
        print(f"{spec['label']}: {values}")
        for key, sharpes in tuned.items():
            grid = ", ".join(f"{g:g}: {s:.2f}" for g, s in sharpes.items())
            print(f"  tuning Sharpe by {key.removesuffix('_sharpes')}: {grid}")
    return 0


def aligned(rows: Sequence[Sequence[str]]) -> str:
    """Rows of text as columns, each as wide as its widest cell, two spaces apart."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows
    )


def run_session(args: argparse.Namespace) -> int:
    from tradearena.envs.simulator.market import Market
    from tradearena.envs.simulator.traders import rmsc04

    market = Market(rmsc04(), n_seats=0, n_steps=args.steps)
    start = time.perf_counter()
    market.reset(args.seed)
    while not market.done:
        market.step()
    seconds = time.perf_counter() - start
    summary = market.summary()
    print(
        f"synthetic session, seed {args.seed}: {summary['steps']} one-minute steps "
        f"simulated in {seconds:.2f} s"
    )
    for key, value in summary.items():
        number = f"{value:,.2f}" if isinstance(value, float) else f"{value:,}"
        unit = SESSION_UNITS.get(key, "")
        if unit == "ticks":
            unit += f" (${value * market.tick_size:,.4f})"
        print(f"  {key:<12} {number} {unit}".rstrip())
    return 0


MAX_SESSION_STEPS = 390 * 256
"""The longest `tradearena session`, in one-minute steps: a year of trading days (the market
keeps arrays of a session's steps)."""
SESSION_UNITS = {
    "volume": "shares",
    "mean_spread": "ticks",
    "open_mid": "ticks",
    "close_mid": "ticks",
    "low_mid": "ticks",
    "high_mid": "ticks",
}
"""The unit of each `Market.summary` value `tradearena session` prints (counts have none);
prices in ticks are followed by their dollars."""


def fit_command(args: argparse.Namespace) -> int:
    """`tradearena fit`: refused when --budget is less than one CMA-ES generation per restart
    (what the fit evaluates at least) or a tape is too short to stand for a day."""
    from tradearena.envs.data.load import ThinTape
    from tradearena.evaluation.market.fit import command, fit

    generation = inspect.signature(fit).parameters["popsize"].default
    if args.budget < generation * args.restarts:
        raise UserError(
            f"--budget {args.budget}: a fit evaluates at least one generation of {generation} "
            f"candidates per restart ({args.restarts} restarts: {generation * args.restarts}); "
            "give a larger --budget or fewer --restarts"
        )
    with warnings.catch_warnings():
        warnings.simplefilter("error", ThinTape)
        return command(args)


def transfer_command(args: argparse.Namespace) -> int:
    from tradearena.evaluation.market.transfer import command, transfer_job

    with executor_from(args, job=transfer_job) as executor:
        return command(args, executor)


def realism_command(args: argparse.Namespace) -> int:
    from tradearena.envs.data.load import without_orderbooks
    from tradearena.evaluation.market.realism import command

    args.sources = without_orderbooks(args.sources)  # a LOBSTER day named by both its files
    return command(args)


def data_check(args: argparse.Namespace) -> int:
    from tradearena.envs.data.load import PartialTape, ThinTape, orderbook_beside, partial, thin
    from tradearena.envs.simulator.traders.replay import replay_fidelity

    start = time.perf_counter()
    if Path(args.messages).with_name(META).exists():  # a converted recording
        tape = load_converted(args.messages, args.orderbook)
        units = f"tick {tape.tick_size:g}, lot {tape.lot_size:g}; "
    else:
        beside = orderbook_beside(args.messages)
        if args.orderbook is None and beside is not None and beside.exists():
            args.orderbook = str(beside)
        tape = load_lobster(args.messages, args.orderbook, tick_size=args.tick_size)
        units = ""
    times = tape.messages["time"]
    print(
        f"{args.messages}: {len(tape):,} messages, {times[0]:.3f} s to {times[-1]:.3f} s, "
        f"{units}valid (read in {time.perf_counter() - start:.2f} s)"
    )
    if (reason := thin(tape)) is not None:
        warnings.warn(ThinTape(reason), stacklevel=1)
    if (reason := partial(tape)) is not None:
        warnings.warn(PartialTape(reason), stacklevel=1)
    if tape.book is None:
        return 0
    print(
        f"{args.orderbook or 'orderbook'}: {len(tape.book):,} rows of {tape.levels} level(s), valid"
    )
    for reconcile in (False, True):
        start = time.perf_counter()
        report = replay_fidelity(tape, reconcile=reconcile)
        label = "with reconciliation" if reconcile else "messages alone     "
        print(
            f"  replay fidelity, {label}: {report.fidelity:.4f} "
            f"({report.messages:,} events, {time.perf_counter() - start:.2f} s; "
            f"added {report.added:,} shares, removed {report.removed:,}, "
            f"unmatched cancels {report.skipped:,})"
        )
    return 0


def data_convert(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    conversion = convert(
        args.format, args.inputs, levels=args.levels, tick=args.tick, lot=args.lot, band=args.band
    )
    seconds = time.perf_counter() - start
    path = write_converted(conversion, args.out)
    meta = conversion.meta
    times = conversion.tape.messages["time"]
    print(
        f"{meta['format']} {meta['symbol'] or ''} {meta['date']}: {meta['messages']:,} messages, "
        f"{times[0]:.3f} s to {times[-1]:.3f} s after midnight UTC, tick {meta['tick_size']}, "
        f"lot {meta['lot_size']} (converted in {seconds:.2f} s)"
    )
    book, meta_file = path.with_name(ORDERBOOK), path.with_name(META)
    print(f"  wrote {path}, {book} ({args.levels} levels), {meta_file}")
    counts = ", ".join(f"{name} {value:,}" for name, value in meta["counts"].items())
    print(f"  counts: {counts}")
    for gap in meta["gaps"]:
        print(f"  gap: {gap}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
