"""Errors a user can cause: a bad input file, setting or argument, as opposed to a bug.

Every such error derives from `UserError`, so that the ``tradearena`` command can report it in
one line (exit 2) and let anything else surface with its traceback. It is a `ValueError`, so
code that catches ``ValueError`` keeps working. `did_you_mean` and `not_one_of` word a value
that is not one of a closed set of choices, with the nearest choice when one is close.
"""

from __future__ import annotations

from collections.abc import Iterable
from difflib import get_close_matches

__all__ = ["UserError", "did_you_mean", "not_one_of"]


class UserError(ValueError):
    """A problem the user can fix (an input file, a setting, a command-line argument); the
    message says what is wrong and where."""


def did_you_mean(given: object, choices: Iterable[object]) -> str:
    """``" (did you mean 'x'?)"`` for the choice nearest ``given`` (difflib's ratio at least
    0.6, case ignored), or "" when none is that close or ``given`` is not a string."""
    if not isinstance(given, str):
        return ""
    names = {str(choice).lower(): str(choice) for choice in choices}
    near = get_close_matches(given.lower(), list(names), n=1)
    return f" (did you mean {names[near[0]]!r}?)" if near else ""


def not_one_of(given: object, choices: Iterable[object]) -> str:
    """``"must be one of [...], got 'y' (did you mean 'x'?)"``."""
    choices = list(choices)
    return f"must be one of {choices}, got {given!r}{did_you_mean(given, choices)}"
