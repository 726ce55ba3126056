"""The ``tradearena`` command.

A mistake the user can fix (a `envs.errors.UserError`: a bad experiment file, data file or
argument; a file named on the command line that does not exist; an output that cannot be
written, `envs.errors.output_error`) is reported in one line, ``tradearena: error: ...``, with
exit status 2. An interrupt (Ctrl-C) is one line too (for a run: what it stored), exit status
130, and so is a termination (SIGTERM, as ``kill`` sends), which is raised as an interrupt so
that a file being written is removed rather than left half written. Anything else is a bug: it
propagates with its traceback (exit status 1).
"""

from __future__ import annotations

import argparse
import functools
import os
import signal
import sqlite3
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from tradearena.envs.errors import UserError, output_error
from tradearena.evaluation.cli.parser import build_parser

PATH_ARGUMENTS = ("config", "out", "run_dir", "messages", "orderbook", "runs", "docs", "inputs")
"""The arguments that name files or directories (a missing one is the user's mistake)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status (2 for a user error, named in one line)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    with warnings.catch_warnings(), terminated_as_interrupt():
        warnings.showwarning = functools.partial(one_line_warning, warnings.showwarning)
        return run_command_line(args)


class Terminated(KeyboardInterrupt):
    """A SIGTERM, raised where the command is, as Ctrl-C's interrupt is."""


@contextmanager
def terminated_as_interrupt() -> Iterator[None]:
    """Inside the block, a SIGTERM raises `Terminated` (an interrupt), so that what cleans up
    after an interrupt (a file written under a temporary name removed, a run's store
    closed) runs on it too; the handler before is put back after. In another thread than
    the main one, where no handler can be set, nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum: int, frame: object) -> None:
        raise Terminated("terminated")

    before = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


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


if __name__ == "__main__":
    sys.exit(main())
