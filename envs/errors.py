"""Errors a user can cause: a bad input file, setting or argument, as opposed to a bug.

Every such error derives from `UserError`, so that the ``tradearena`` command can report it in
one line (exit 2) and let anything else surface with its traceback. It is a `ValueError`, so
code that catches ``ValueError`` keeps working.
"""

from __future__ import annotations

__all__ = ["UserError"]


class UserError(ValueError):
    """A problem the user can fix (an input file, a setting, a command-line argument); the
    message says what is wrong and where."""
