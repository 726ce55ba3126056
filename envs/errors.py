"""Errors a user can cause: a bad input file, setting or argument, as opposed to a bug.

Every such error derives from `UserError`, so that the ``tradearena`` command can report it in
one line (exit 2) and let anything else surface with its traceback. It is a `ValueError`, so
code that catches ``ValueError`` keeps working. `did_you_mean` and `not_one_of` word a value
that is not one of a closed set of choices, with the nearest choice when one is close;
`ParameterError` names a parameter of a table (a trader's ``hawkes = {...}``) by its path, and
`known_keys` and `number` check such a table's keys and values; `keyword_hint` words a
misspelt keyword argument.
"""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Callable, Iterable, Mapping
from difflib import get_close_matches

__all__ = [
    "ParameterError",
    "UserError",
    "did_you_mean",
    "keyword_hint",
    "known_keys",
    "not_one_of",
    "number",
]


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


def keyword_hint(error: TypeError, target: Callable) -> str:
    """`did_you_mean` for the keyword a call of ``target`` did not take (``error``'s
    "unexpected keyword argument 'x'"), among the named parameters of ``target`` (a class:
    of every ``__init__`` along its MRO, which ``**params`` pass on to); "" for any other
    error."""
    found = re.search(r"unexpected keyword argument '(\w+)'", str(error))
    if not found:
        return ""
    callables = [k.__init__ for k in target.__mro__ if "__init__" in vars(k)]
    callables = callables if isinstance(target, type) else [target]
    names = set()
    for function in callables:
        try:
            parameters = inspect.signature(function).parameters.values()
        except (TypeError, ValueError):  # a builtin's __init__
            continue
        names |= {p.name for p in parameters if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
    return did_you_mean(found.group(1), sorted(names - {"self"}))


def not_one_of(given: object, choices: Iterable[object]) -> str:
    """``"must be one of [...], got 'y' (did you mean 'x'?)"``."""
    choices = list(choices)
    return f"must be one of {choices}, got {given!r}{did_you_mean(given, choices)}"


class ParameterError(UserError):
    """A parameter that cannot be used: ``path`` names it (a parameter, then a key inside it,
    e.g. ``("hawkes", "decay")``) and ``reason`` says why."""

    def __init__(self, path: str | tuple[str, ...], reason: str) -> None:
        self.path = (path,) if isinstance(path, str) else tuple(path)
        self.reason = reason
        super().__init__(f"{'.'.join(self.path)}: {reason}")


def known_keys(name: str, table: Mapping, keys: Iterable[str]) -> None:
    """Raise `ParameterError` for the first key of ``table`` (parameter ``name``) that is not
    one of ``keys``, with the nearest key."""
    keys = list(keys)
    for key in table:
        if key not in keys:
            hint = did_you_mean(key, keys)
            raise ParameterError((name, str(key)), f"no such parameter{hint}; {name} takes {keys}")


def number(path: tuple[str, ...], value: object, low: float | None = None) -> float:
    """``value`` as a finite float (above ``low`` when given), else `ParameterError` at
    ``path``."""
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or (low is not None and not value > low):
        rule = "a finite number" + ("" if low is None else f" > {low:g}")
        raise ParameterError(path, f"must be {rule}, got {value!r}")
    return float(value)
