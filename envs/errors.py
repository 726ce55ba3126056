"""Errors a user can cause: a bad input file, setting or argument, as opposed to a bug.

Every such error derives from `UserError`, so that the ``tradearena`` command can report it in
one line (exit 2) and let anything else surface with its traceback. It is a `ValueError`, so
code that catches ``ValueError`` keeps working. `did_you_mean` and `not_one_of` word a value
that is not one of a closed set of choices, with the nearest choice when one is close;
`ParameterError` names a parameter of a table (a trader's ``hawkes = {...}``) by its path, and
`known_keys` and `number` check such a table's keys and values, and `keyword_numbers` the
numbers of a class's keywords (finite, and of the kind it declares); `keyword_hint` words a
misspelt keyword argument. `OutputError` is a file that cannot be written (a read-only or
full disk, a file where a directory should be): `writing` turns such an error into one naming
the path, `replacing` writes a file under a temporary name and renames it when complete, so
that an interrupted write leaves nothing half written, and `together` renames a group of such
files at once; `into` makes a directory for them, removed again when they fail.
"""

from __future__ import annotations

import errno
import inspect
import math
import numbers
import os
import re
import sqlite3
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from difflib import get_close_matches
from pathlib import Path
from typing import Any

__all__ = [
    "OutputError",
    "ParameterError",
    "UserError",
    "did_you_mean",
    "keyword_hint",
    "keyword_numbers",
    "known_keys",
    "not_one_of",
    "number",
    "output_error",
    "into",
    "replacing",
    "together",
    "writing",
]


class UserError(ValueError):
    """A problem the user can fix (an input file, a setting, a command-line argument); the
    message says what is wrong and where."""


def did_you_mean(given: object, choices: Iterable[object]) -> str:
    """``" (did you mean 'x'?)"`` for the choice nearest ``given`` (difflib's ratio at least
    0.6, else the one choice that shares the longest start with it, of 3 characters or more:
    "maker" -> "making"; case ignored), or "" when none is that close or ``given`` is not a
    string."""
    if not isinstance(given, str):
        return ""
    names = {str(choice).lower(): str(choice) for choice in choices}
    near = get_close_matches(given.lower(), list(names), n=1) or _same_start(given.lower(), names)
    return f" (did you mean {names[near[0]]!r}?)" if near else ""


def _same_start(given: str, names: Iterable[str], least: int = 3) -> list[str]:
    """The one name that shares the longest start with ``given``, at least ``least``
    characters, in a list; [] when there is none or two share it."""
    shared = {name: len(os.path.commonprefix([given, name])) for name in names}
    longest = max(shared.values(), default=0)
    found = [name for name, length in shared.items() if length == longest]
    return found if longest >= least and len(found) == 1 else []


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


def keyword_numbers(target: type, given: Mapping[str, Any]) -> None:
    """`ParameterError` naming the first keyword of ``given`` (for the class ``target``) that
    holds a number that is not finite (NaN, an infinity, in a list or table too), or that
    ``target`` declares a number (annotated ``int`` or ``float``, alone or with ``None``)
    and is not one of that kind (a string, a bool, a float where an integer is declared).
    What range each number must lie in is the class's own check."""
    try:
        hints = typing.get_type_hints(target.__init__)
    except (NameError, TypeError, AttributeError):  # annotations it cannot resolve: none
        hints = {}
    for key, value in given.items():
        found = _not_finite(value)
        if found is not None:
            where, bad = found
            raise ParameterError((key, *where), f"must be a finite number, got {bad!r}")
        members = _members(hints.get(key))
        kinds = numbers.Real if float in members else numbers.Integral if int in members else None
        if kinds is None or value is None and type(None) in members:
            continue
        if isinstance(value, bool) or not isinstance(value, kinds):
            rule = "a number" if kinds is numbers.Real else "an integer"
            rule += " or none" if type(None) in members else ""
            raise ParameterError(key, f"must be {rule}, got {value!r}")


def _members(hint: object) -> tuple[object, ...]:
    """The types a union annotation ``hint`` allows, or ``hint`` alone."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return typing.get_args(hint)
    return (hint,)


def _not_finite(value: object) -> tuple[tuple[str, ...], float] | None:
    """The path (keys, indices; () for ``value`` itself) to the first float inside ``value``
    that is NaN or an infinity, and that float; None when there is none."""
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral):
        return None if math.isfinite(value) else ((), value)
    items = value.items() if isinstance(value, Mapping) else None
    if items is None and isinstance(value, list | tuple):
        items = enumerate(value)
    for key, item in items or ():
        inner = _not_finite(item)
        if inner is not None:
            return (str(key), *inner[0]), inner[1]
    return None


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


class OutputError(UserError):
    """A file or directory that cannot be written; the message names it and says why."""


OUTPUT_ERRNOS = frozenset(
    {
        errno.EACCES,
        errno.EPERM,
        errno.EROFS,
        errno.ENOSPC,
        errno.EDQUOT,
        errno.EFBIG,
        errno.EEXIST,
        errno.ENOTDIR,
        errno.EISDIR,
    }
)
"""The errors of writing that the user can fix: permissions, a read-only or full disk, a file
where a directory should be (or the other way round)."""
SQLITE_OUTPUT_ERRORS = (
    "unable to open database file",
    "attempt to write a readonly database",
    "database or disk is full",
    "disk I/O error",
)
"""SQLite's words for the same errors (it raises them without an errno)."""


def output_error(error: BaseException, path: str | os.PathLike | None = None) -> OutputError | None:
    """``error`` as an `OutputError` naming ``path`` (default: the file the error names), or
    None when it is not one of `OUTPUT_ERRNOS` (or `SQLITE_OUTPUT_ERRORS`) or names no file."""
    if isinstance(error, OSError) and error.errno in OUTPUT_ERRNOS:
        reason = error.strerror or os.strerror(error.errno)
        if error.errno in (errno.EEXIST, errno.ENOTDIR):
            reason = "a file is in the way of a directory"
        where = path if path is not None else error.filename
    elif isinstance(error, sqlite3.OperationalError) and str(error) in SQLITE_OUTPUT_ERRORS:
        reason, where = str(error), path
    else:
        return None
    if where is None:
        return None
    return OutputError(f"cannot write {os.fspath(where)}: {reason}")


@contextmanager
def writing(path: str | os.PathLike) -> Iterator[None]:
    """An error of writing (`output_error`) raised inside the block becomes an `OutputError`
    naming ``path`` (a file, or the directory written into)."""
    try:
        yield
    except (OSError, sqlite3.OperationalError) as error:
        converted = output_error(error, path)
        if converted is None:
            raise
        raise converted from error


_HELD: ContextVar[list[tuple[Path, Path]] | None] = ContextVar("held", default=None)
"""The files `replacing` wrote inside `together` (temporary, final), renamed when it ends."""


@contextmanager
def replacing(path: str | os.PathLike) -> Iterator[Path]:
    """A temporary path beside ``path`` (hidden, with the same suffix, so that a writer that
    goes by the suffix writes the same format) to write ``path``'s content to: renamed onto
    ``path`` when the block completes (inside `together`, when that ends), removed when it
    raises (an error of writing raised as an `OutputError` naming ``path``)."""
    path = Path(path)
    temporary = path.with_name(f".{path.stem}.partial{path.suffix}")
    held = _HELD.get()
    with writing(path):
        try:
            yield temporary
            if held is None:
                os.replace(temporary, path)
            else:
                held.append((temporary, path))
        except BaseException:
            _remove(temporary)
            raise


@contextmanager
def together() -> Iterator[None]:
    """The files `replacing` writes inside the block appear together when it completes, or
    none of them when it raises (a run cut while drawing its figures leaves none new); inside
    another such block, with that block's files."""
    if _HELD.get() is not None:
        yield
        return
    held: list[tuple[Path, Path]] = []
    token = _HELD.set(held)
    try:
        yield
    except BaseException:
        for temporary, _ in held:
            _remove(temporary)
        raise
    finally:
        _HELD.reset(token)
    for temporary, path in held:
        with writing(path):
            os.replace(temporary, path)


@contextmanager
def into(directory: str | os.PathLike) -> Iterator[Path]:
    """``directory``, made if needed (an error of writing raised as an `OutputError` naming
    it), for a block that writes into it (with `replacing`); removed again when the block
    raises, if it was made for it and is empty."""
    directory = Path(directory)
    made = not directory.exists()
    with writing(directory):
        directory.mkdir(parents=True, exist_ok=True)
    try:
        yield directory
    except BaseException:
        if made:
            with suppress(OSError):
                directory.rmdir()
        raise


def _remove(path: Path) -> None:
    with suppress(OSError):
        path.unlink(missing_ok=True)
