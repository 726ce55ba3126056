"""The ``tradearena`` command's parser: one subcommand per function of `COMMANDS`, and the
argument types they read."""

from __future__ import annotations

import argparse
import tomllib
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, NoReturn

from tradearena.envs.data.convert import DEFAULT_BAND, FORMATS, MAX_BOOK_LEVELS
from tradearena.envs.errors import did_you_mean
from tradearena.envs.spec import MAX_STEPS
from tradearena.evaluation.cli.data import data_check, data_convert
from tradearena.evaluation.cli.experiments import (
    agents_command,
    calibrate_command,
    evaluate_command,
    plot_command,
    reproduce_command,
    run_command,
    tasks_command,
)
from tradearena.evaluation.cli.games import games_command
from tradearena.evaluation.cli.market import (
    MAX_SESSION_STEPS,
    fit_command,
    impact_command,
    learn_command,
    realism_command,
    response_command,
    run_session,
    transfer_command,
)
from tradearena.evaluation.experiment.schema import (
    MAX_DAYS,
    MAX_EPISODES,
    MAX_JOBS,
    MAX_PLAYERS,
    MAX_RESAMPLES,
    MAX_SEEDS,
    MAX_SESSIONS,
    MAX_WORKERS,
)


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


MAX_SCALE = 1000.0
"""The largest ``tradearena reproduce --scale``: the papers' experiments (8 seeds and 1,000
episodes at most) stay within an experiment's `MAX_SEEDS` and `MAX_EPISODES`."""


def scale(text: str) -> float:
    """An argparse type: a factor in (0, `MAX_SCALE`]."""
    value = positive_float(text)
    if value > MAX_SCALE:
        raise argparse.ArgumentTypeError(f"must be <= {MAX_SCALE:g}, got {text}")
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


def hours_of_day(text: str) -> tuple[float, float]:
    """An argparse type: FIRST,LAST, two times of day (`time_of_day`), FIRST before LAST,
    as seconds after midnight."""
    parts = text.split(",")
    if len(parts) != 2:
        raise argparse.ArgumentTypeError(f"expected FIRST,LAST (two times HH:MM), got {text!r}")
    first, last = (time_of_day(part.strip()) for part in parts)
    if not first < last:
        raise argparse.ArgumentTypeError(f"FIRST must come before LAST, got {text!r}")
    return first, last


def folder(text: str) -> str:
    """An argparse type: an existing folder."""
    if not Path(text).expanduser().is_dir():
        raise argparse.ArgumentTypeError(f"no such folder: {text!r}")
    return str(Path(text).expanduser())


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


def add_days_argument(parser: argparse.ArgumentParser, default: int) -> None:
    """``--days``: the days a judge simulates of each market."""
    parser.add_argument(
        "--days",
        type=integer_at_least(1, MAX_DAYS),
        default=default,
        help=f"days per market (default {default})",
    )


class Parser(argparse.ArgumentParser):
    """An `argparse.ArgumentParser` whose "invalid choice" names the nearest choice (what
    Python 3.14's ``suggest_on_error`` does) and whose errors are one line, exit status 2,
    as the command's other errors are (the usage is ``--help``'s)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        """argparse's, with the unknown options of a command that takes ``--set`` answered
        by the ``--set`` they may stand for (`set_hint`)."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}{set_hint(parsed, extras)}")
        return parsed

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        if action.choices is not None and value not in action.choices:
            choices = ", ".join(map(repr, action.choices))
            hint = did_you_mean(value, action.choices)
            raise argparse.ArgumentError(
                action, f"invalid choice: {value!r}{hint} (choose from {choices})"
            )


def set_hint(parsed: argparse.Namespace, extras: list[str]) -> str:
    """For a command that takes ``--set`` given an unknown ``--KEY VALUE``: the ``--set`` of
    each key of the experiment file named KEY ("" when none is)."""
    if not hasattr(parsed, "set") or not extras[0].startswith("--"):
        return ""
    from tradearena.evaluation.experiment.config import dotted_keys

    name, _, value = extras[0][2:].partition("=")
    if not value:
        value = extras[1] if len(extras) > 1 and not extras[1].startswith("-") else "VALUE"
    keys = [k for k in dotted_keys() if k.rsplit(".", 1)[-1] == name.replace("-", "_")]
    sets = " or ".join(f"--set {key}={value}" for key in keys)
    return f"; a value of the experiment file is replaced with {sets}" if keys else ""


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
    add_agents_from_argument(run)
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
        type=scale,
        default=1.0,
        help=f"multiply seeds and episodes (e.g. 4 on a cluster; default 1, at most {MAX_SCALE:g})",
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
        "--episodes",
        type=integer_at_least(1, MAX_EPISODES),
        default=None,
        help="test episodes per agent",
    )
    add_executor_arguments(evaluate)
    add_agents_from_argument(evaluate)
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
    add_agents_from_argument(listing)
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
        "--resamples",
        type=integer_at_least(0, MAX_RESAMPLES),
        default=1000,
        help="bootstrap resamples (0: none)",
    )
    games.add_argument("--seed", type=integer_at_least(0), default=0, help="bootstrap seed")
    games.add_argument(
        "--roles",
        default=None,
        help="a role game: its role names, e.g. maker,taker (columns n_<role>_<strategy>)",
    )
    games.add_argument(
        "--reduce",
        type=integer_at_least(2, MAX_PLAYERS),
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
        "against its others. --from/--until judge only that part of every day; with --from the "
        "tape's own hours before it are judged against those after too (the floor), and each "
        "market in-sample, against the tape's hours it learned from (--learned, or what its "
        "file says). The verdict comes first; --verbose adds the scorecard.",
    )
    realism.add_argument("sources", nargs="+", metavar="SOURCE", help="a tape, .toml or id")
    realism.add_argument("--against", metavar="TAPE", help="the real day to compare with")
    add_days_argument(realism, 100)
    realism.add_argument(
        "--classifier-days",
        type=integer_at_least(1, MAX_DAYS),
        default=5,
        help="a market's days the classifier sees (default 5; its floor takes one more)",
    )
    add_window_arguments(realism, "judge")
    realism.add_argument(
        "--learned",
        type=hours_of_day,
        metavar="FIRST,LAST",
        help="the tape's hours (HH:MM,HH:MM) every market learned from, judged in-sample "
        "(default: what each market's file says)",
    )
    realism.add_argument("--out", help="write DIR/scorecard.csv and the figures there")
    realism.add_argument(
        "--verbose", action="store_true", help="print the scorecard's rows, not the verdict alone"
    )
    realism.set_defaults(func=realism_command)


def add_response_command(commands: argparse._SubParsersAction) -> None:
    """`tradearena response`: a market's answer to a seat's market order beside the tape's."""
    response = commands.add_parser(
        "response",
        help="how a market answers a market order, beside how the real day answers its own",
        description="After each of the TAPE's market orders: how far the mid moved in the "
        "order's direction 0.1, 1 and 10 seconds on, and whether the level it emptied was "
        "quoted again within them, by the order's size. Then the same after a seat's market "
        "orders of the tape's sizes in each MARKET (an experiment file's [market] table or a "
        "Gymnasium id, simulated over --days days, one order every 30 seconds): a market whose "
        "flow reacts as the tape's does answers the seat as the tape answers its own orders.",
    )
    response.add_argument("tape", metavar="TAPE", help="the real day (a tape)")
    response.add_argument("markets", nargs="+", metavar="MARKET", help="a .toml or id")
    add_days_argument(response, 5)
    add_window_arguments(response, "read")
    response.add_argument("--out", help="write DIR/response.csv and response.png there")
    response.set_defaults(func=response_command)


def add_impact_command(commands: argparse._SubParsersAction) -> None:
    """`tradearena impact`: the impact scorecard."""
    from tradearena.evaluation.market.impact import MAX_METAORDERS, MIN_METAORDERS, REPLAYS

    impact = commands.add_parser(
        "impact",
        help="how a market answers a seat's own trading: the impact scorecard",
        description="Trade in each MARKET over the TAPE's hours and hold what the market "
        "answers to the literature and to the tape itself: metaorders of child market orders "
        "(TWAP and participation-rate, 0.1-10% of the volume, 5 to 30 minutes; the "
        "square-root law, the relaxation after them), single market orders (their response "
        "against the tape's bare propagator, the spread's refill), a quoting seat's passive "
        "fills (their mark-outs against the tape's own), a seat that never trades (nothing may "
        "change), round trips and pump-and-dumps (none may earn). A MARKET is "
        f"{' or '.join(repr(r) for r in REPLAYS)} (the tape's plain replay, and its "
        "responsive replay, its answer estimated from the hours before --from, else from the "
        "whole tape), an experiment file's [market] table or a Gymnasium id. The verdict "
        "comes first; --verbose adds every check's value, interval and target.",
    )
    impact.add_argument("tape", metavar="TAPE", help="the real day (a tape)")
    impact.add_argument(
        "markets", nargs="+", metavar="MARKET", help="replay, responsive, a .toml or an id"
    )
    add_window_arguments(impact, "trade over")
    impact.add_argument(
        "--metaorders",
        type=integer_at_least(MIN_METAORDERS, MAX_METAORDERS),
        default=1000,
        help=f"metaorders a market (default 1,000; {MIN_METAORDERS} to {MAX_METAORDERS:,})",
    )
    impact.add_argument("--seed", type=integer_at_least(0, 2**32 - 1), default=0, help="seed")
    impact.add_argument("--out", help="write DIR/impact.csv and impact.png there")
    impact.add_argument(
        "--verbose", action="store_true", help="print every check, not the verdict alone"
    )
    add_executor_arguments(impact)
    impact.set_defaults(func=impact_command)


def step_window(text: str) -> tuple[int, int]:
    """An argparse type: FIRST,LAST, the decision steps of a day at which sessions open."""
    parts = text.split(",")
    try:
        first, last = (int(p) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected FIRST,LAST (two steps), got {text!r}") from None
    if not 0 <= first <= last:
        raise argparse.ArgumentTypeError(f"need 0 <= FIRST <= LAST, got {text!r}")
    if last >= MAX_STEPS:
        raise argparse.ArgumentTypeError(
            f"LAST must be < {MAX_STEPS:,} (steps of a day), got {text!r}"
        )
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
        "the replay's queue model: every model is reported. Beside the market, the replay of "
        "the tape's hours it learned from (--baseline, or what its file says; needed with "
        "--from) is judged the same way: the baseline it must beat. Writes transfer.csv, "
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
        help="the tape's steps at which sessions open (default: any; or --from, not both)",
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
        "--seeds",
        type=integer_at_least(2, MAX_SEEDS),
        default=4,
        help="seeds a side (default 4)",
    )
    transfer.add_argument(
        "--sessions",
        type=integer_at_least(1, MAX_SESSIONS),
        default=10,
        help="sessions a seed (default 10)",
    )
    transfer.add_argument(
        "--baseline",
        type=hours_of_day,
        metavar="FIRST,LAST",
        help="the tape's hours (HH:MM,HH:MM) whose replay the market is judged beside "
        "(default: the hours its file says it learned from; needed with --from)",
    )
    add_executor_arguments(transfer)
    transfer.add_argument("--out", help="write DIR/transfer.csv, predictivity.csv, transfer.png")
    transfer.add_argument(
        "--verbose", action="store_true", help="print every policy's PnL, not the verdict alone"
    )
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
        "--budget",
        type=integer_at_least(1, MAX_JOBS),
        default=400,
        help="candidates (default 400)",
    )
    fitting.add_argument(
        "--minutes",
        type=positive_float,
        default=None,
        help="stop after this long, with the best so far (default: when the budget is spent, "
        "the same fit on any machine)",
    )
    fitting.add_argument(
        "--days",
        type=integer_at_least(1, MAX_DAYS),
        default=8,
        help="days per candidate (default 8)",
    )
    fitting.add_argument(
        "--restarts",
        type=integer_at_least(1, MAX_JOBS),
        default=3,
        help="CMA-ES starts (default 3)",
    )
    fitting.add_argument("--executor", choices=["ray", "local"], default="ray")
    fitting.add_argument(
        "--workers", type=integer_at_least(1, MAX_WORKERS), help="Ray CPUs (default all)"
    )
    add_window_arguments(fitting, "fit to")
    fitting.add_argument("--resume", action="store_true", help="go on from OUT.fit.jsonl")
    fitting.add_argument("--out", required=True, help="the market file written (.toml)")
    fitting.set_defaults(func=fit_command)


def add_learn_command(commands: argparse._SubParsersAction) -> None:
    """`tradearena learn`: order flow learned from a real day, event by event."""
    learning = commands.add_parser(
        "learn",
        help="learn a day's order flow event by event; writes a market file",
        description="Learn the order flow of the TAPEs' messages event by event: a "
        "queue-reactive point process with Hawkes excitation, by maximum likelihood (--model "
        "events; several days of one market make one flow, their rates and profile pooled), "
        "or the same with a GRU over the events in place of the excitation, trained with torch "
        "(--model neural, one day). Writes OUT, an experiment file whose market runs the "
        "learned flow, and its parameters beside it (OUT's stem + .flow.json and the files it "
        "names).",
    )
    learning.add_argument("tapes", nargs="+", metavar="TAPE", help="real days (tapes)")
    learning.add_argument(
        "--model",
        choices=["events", "neural"],
        default="events",
        help="events (default): the point process; neural: its GRU variant (needs torch)",
    )
    learning.add_argument(
        "--minutes",
        type=positive_float,
        help="--model neural: stop its training after this long (default 10)",
    )
    add_window_arguments(learning, "learn from")
    learning.add_argument(
        "--mixed",
        action="store_true",
        help="pool days of different tickers, book depths or prices (more than twice apart), "
        "refused otherwise as not one market's days",
    )
    learning.add_argument("--out", required=True, help="the market file written (.toml)")
    learning.add_argument(
        "--verbose", action="store_true", help="list the sparse states pooled with a neighbour"
    )
    learning.set_defaults(func=learn_command)


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
        "--levels",
        type=integer_at_least(1, MAX_BOOK_LEVELS),
        default=10,
        help="orderbook levels (default 10)",
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
    add_response_command,
    add_impact_command,
    add_transfer_command,
    add_fit_command,
    add_learn_command,
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


def add_agents_from_argument(parser: argparse.ArgumentParser) -> None:
    """--agents-from, for the commands that load agents."""
    parser.add_argument(
        "--agents-from",
        metavar="DIR",
        type=folder,
        action="append",
        default=[],
        help='a folder to import "module:ClassName" agents from, besides the installed '
        "packages and the current folder (repeatable): their code runs. A run directory or "
        "an experiment file's folder is never searched unless named here",
    )


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
        type=integer_at_least(1, MAX_WORKERS),
        default=None,
        help="CPUs for a local Ray (default: all cores)",
    )
    parser.add_argument(
        "--address",
        default=None,
        help="address of a running Ray cluster (default: $RAY_ADDRESS, else local)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
