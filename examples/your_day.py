"""Your own day, from its files to a verdict: check the files, learn the morning's order flow,
judge the market it makes on the afternoon it never saw, train agents in it, and test them on
the real afternoon beside a zoo of fixed policies.

    python examples/your_day.py DAY [--split HH:MM] [--out DIR] [--quick]

DAY is a LOBSTER message file (its orderbook file beside it, as LOBSTER names it) or a
directory `tradearena data convert` wrote from an exchange's recording (sizes are then the
recording's lots, and a tick is worth the tape's tick times its lot: every dollar figure
comes out in the instrument's own units). Each step is a `tradearena` command, printed
before it runs, so the same path can be walked by hand; ``--quick`` shrinks the budgets of
the steps after `learn` (whose time is the morning's: about two minutes for a busy one) to
see the path work, not to judge a market.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from tradearena.evaluation.cli.main import main as tradearena

QUICK = {
    "realism": ["--days", "2"],
    "run": ["--set", "seeds=2", "--set", "training.episodes=10", "--set", "testing.episodes=2"],
    "transfer": ["--seeds", "2", "--sessions", "2"],
}
"""What ``--quick`` adds to each command."""
LOCAL = ["--executor", "local"]
"""Every job in this process (what a test wants; leave it out to run on a local Ray)."""


def files_of(day: Path) -> list[str]:
    """The files `tradearena data check` reads for ``day``: a message file and the orderbook
    file beside it, or a converted directory's pair."""
    if day.is_dir():
        return [str(day / "message.csv"), str(day / "orderbook.csv")]
    return [str(day), str(day.with_name(day.name.replace("_message_", "_orderbook_")))]


def steps(day: Path, split: str, out: Path, quick: bool, local: bool) -> list[list[str]]:
    """The commands of the path, in order (see the module docstring)."""
    market, trained = out / "market.toml", out / "trained"

    def extra(name: str, executor: bool = True) -> list[str]:
        return (QUICK.get(name, []) if quick else []) + (LOCAL if local and executor else [])

    return [
        ["data", "check", *files_of(day)],
        ["learn", str(day), "--until", split, "--out", str(market)],
        [
            "realism",
            str(day),
            str(market),
            "--from",
            split,
            "--out",
            str(out / "judged"),
            *extra("realism", executor=False),
        ],
        ["run", str(market), "--out", str(trained), *extra("run")],
        [
            "transfer",
            str(market),
            "--against",
            str(day),
            "--from",
            split,
            "--agents",
            str(trained),
            "--out",
            str(out / "transfer"),
            *extra("transfer"),
        ],
    ]


def walk(day: Path, split: str, out: Path, *, quick: bool = False, local: bool = False) -> int:
    """Run the path's commands; the exit status of the first that fails, else 0."""
    for command in steps(day, split, out, quick, local):
        print(f"\n$ tradearena {shlex.join(command)}", flush=True)
        status = tradearena(command)
        if status:
            return status
    print(f"\nthe verdicts: {out / 'judged'} (classifier), {out / 'transfer'} (zoo and agents)")
    return 0


def parser() -> argparse.ArgumentParser:
    """The command line: the docstring's first paragraph as the description, the one on DAY
    after the options."""
    paragraphs = __doc__.split("\n\n")
    command = argparse.ArgumentParser(description=paragraphs[0], epilog=paragraphs[2])
    command.add_argument("day", type=Path, help="a LOBSTER message file or a converted directory")
    command.add_argument(
        "--split", default="12:45", help="learn before, judge after (HH:MM, default 12:45)"
    )
    command.add_argument(
        "--out",
        type=Path,
        default=Path("runs/your_day"),
        help="where the market, the judges' files and the run go (default runs/your_day)",
    )
    command.add_argument("--quick", action="store_true", help="tiny budgets: see the path work")
    command.add_argument("--local", action="store_true", help="every job in this process")
    return command


if __name__ == "__main__":
    args = parser().parse_args()
    sys.exit(walk(args.day, args.split, args.out, quick=args.quick, local=args.local))
