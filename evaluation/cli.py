"""The ``tradearena`` command."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from envs.tapes import TapeError, load_lobster


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status (2 for a user error, named in one line)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (TapeError, ValueError, FileNotFoundError) as error:
        print(f"tradearena: error: {error}", file=sys.stderr)
        return 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tradearena",
        description="Risk-sensitive trading agents in a limit-order-book market.",
    )
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    session = commands.add_parser(
        "session", help="run one synthetic trading session and print its summary"
    )
    session.add_argument("--seed", type=int, default=0, help="session seed (default 0)")
    session.add_argument("--steps", type=int, default=390, help="one-minute steps (default 390)")
    session.set_defaults(func=run_session)

    data = commands.add_parser("data", help="market data files")
    data_commands = data.add_subparsers(required=True, metavar="ACTION")
    check = data_commands.add_parser(
        "check",
        help="validate LOBSTER files; with the orderbook file, measure replay fidelity",
        description="Validate a LOBSTER message file (and orderbook file). With the orderbook "
        "file, replay the messages through the book and print the fraction of events after "
        "which the best bid and ask (price and size) equal the file's row: from the messages "
        "alone, and with reconciliation to the file's levels.",
    )
    check.add_argument("messages", help="LOBSTER message file")
    check.add_argument("orderbook", nargs="?", help="LOBSTER orderbook file (optional)")
    check.add_argument(
        "--tick-size", type=float, default=0.01, help="dollars per tick (default 0.01)"
    )
    check.set_defaults(func=data_check)
    return parser


def run_session(args: argparse.Namespace) -> int:
    from envs.market import Market
    from envs.traders import rmsc04

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
        print(f"  {key:<12} {value:,.2f}" if isinstance(value, float) else f"  {key:<12} {value:,}")
    return 0


def data_check(args: argparse.Namespace) -> int:
    from envs.traders.replay import replay_fidelity

    start = time.perf_counter()
    tape = load_lobster(args.messages, args.orderbook, tick_size=args.tick_size)
    times = tape.messages["time"]
    print(
        f"{args.messages}: {len(tape):,} messages, {times[0]:.3f} s to {times[-1]:.3f} s, "
        f"valid (read in {time.perf_counter() - start:.2f} s)"
    )
    if tape.book is None:
        return 0
    print(f"{args.orderbook}: {len(tape.book):,} rows of {tape.levels} level(s), valid")
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


if __name__ == "__main__":
    sys.exit(main())
