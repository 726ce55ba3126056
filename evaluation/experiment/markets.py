"""The ``[market]`` table of an experiment file, or of a market file that the market's
studies read (`evaluation.market`: a fitted or learned market, a judge's market), checked into
an `envs.spec.MarketSpec` (`checked_market`): its traders' tables built with the files they
name (a run keeps its own copies, `trader_files`), its tape found and read, a session of it
opened; and ``[learned_from]``, what such a market learned from (`learned_from`)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tradearena.envs.errors import ParameterError, UserError, not_one_of
from tradearena.envs.simulator.traders import TRADERS, build_trader
from tradearena.envs.spec import MarketSpec, SpecError, names_tape_file
from tradearena.evaluation.experiment.schema import (
    MARKET,
    LearnedFrom,
    Locator,
    check_table,
)

__all__ = [
    "MODELS",
    "checked_market",
    "declared_files",
    "learned_from",
    "market_spec",
    "market_table",
    "trader_files",
]


MODELS = "models"
"""The run directory's folder of the files its traders name: the n-th (`trader_files`) in
``models/<n>/``, under its own name, beside the files it names."""


def checked_market(
    tables: dict[str, Any], where: Locator, base: Path, *, complete: bool = True
) -> MarketSpec:
    """The `MarketSpec` of the ``[market]`` table of a file's ``tables`` (none: the default
    market), its paths resolved against ``base``; checked as `load_config` checks it, or
    (``complete=False``) as `parse_config` checks a finished run's (its data files not looked
    for, a tape naming an environment variable kept as written); errors located by
    ``where``."""
    table = tables.get("market", {})
    if not isinstance(table, dict):
        raise where.error(("market",), f"expected a table, got {table!r}")
    checked = check_table(table, MARKET, ("market",), where)
    return market_spec(checked, where, base, complete=complete)


def market_spec(table: dict, where: Locator, base: Path, complete: bool) -> MarketSpec:
    """The checked market table as a `MarketSpec`: traders take their parameters, the files
    they name resolved against ``base`` (and, ``complete``, checked with the files they name:
    `envs.simulator.traders.Trader.file_parts`); the tape file (or a converted directory, or a
    recording's directory) resolved against ``base``, or against the current folder when an
    environment variable gave it, as ``--set`` does, and (``complete``) found and read to its
    end (a wrong file, a malformed row or a truncated recording is blamed on
    ``market.tape``); every value is one the spec accepts, and a session of it opens
    (`envs.spec.MarketSpec.check_session`: its faults are the market's, not a seat's)."""
    traders = tuple(
        _trader(trader, ("market", "traders", i), where, base, complete)
        for i, trader in enumerate(table["traders"])
    )
    tape = table["tape"]
    if names_tape_file(tape) and (complete or "$" not in tape):
        given = Path.cwd() if "$" in tape else base  # a variable's: from here
        path = Path(os.path.abspath(given / Path(_expanded(tape, where)).expanduser()))
        if complete and not path.exists():
            raise where.error(("market", "tape"), f"no such file or directory: {path}")
        tape = str(path)
    try:
        spec = MarketSpec(**{**table, "traders": traders, "tape": tape})
        if complete and spec.replays_file:
            spec.replayed_tape()  # read to its end once: bad content is the tape's, found here
        if complete:
            spec.check_session()  # what only a session shows: the market's, not a seat's
    except SpecError as error:
        raise where.error(("market", *error.path), error.reason) from None
    except UserError as error:
        raise where.error(("market", "tape"), str(error)) from None
    return spec


def _trader(trader: object, path: tuple, where: Locator, base: Path, complete: bool) -> dict:
    """A ``[[market.traders]]`` table of a known type, the files it names absolute (resolved
    against ``base``, links followed); checked (``complete``): those files and the files they
    name are regular files (`Trader.file_parts`), and the trader builds."""
    if not isinstance(trader, dict):
        raise where.error(
            path,
            f'expected a table {{type = "...", ...}} (one of {sorted(TRADERS)}), got {trader!r}',
        )
    kind = trader.get("type")
    if kind not in TRADERS:
        raise where.error((*path, "type"), not_one_of(kind, sorted(TRADERS)))
    cls, table = TRADERS[kind], dict(trader)
    try:
        for name in cls.file_parameters:
            if isinstance(table.get(name), str):
                given = Path(table[name]).expanduser()
                table[name] = str((given if given.is_absolute() else base / given).resolve())
                if complete:
                    cls.file_parts(name, Path(table[name]))
        if complete:
            build_trader(kind, {k: v for k, v in table.items() if k != "type"})
    except ParameterError as error:
        raise where.error((*path, *error.path), error.reason) from None
    return table


def _expanded(tape: str, where: Locator) -> str:
    """``tape`` with its environment variables (``$NAME`` or ``${NAME}``) replaced; one that
    is not set is a `ConfigError` saying how to give the file."""
    expanded = os.path.expandvars(tape)
    unset = re.search(r"\$\{?(\w+)", expanded)
    if unset:
        raise where.error(
            ("market", "tape"),
            f"{tape!r} names the environment variable {unset.group(1)}, which is not set: set "
            "it to a LOBSTER message file, or give the file with --set market.tape=FILE "
            "(`tradearena data` says where such files come from)",
        )
    return expanded


def declared_files(market: MarketSpec) -> Iterator[tuple[int, str, Path]]:
    """(trader index, parameter, file) of every file the market's traders name, in order."""
    for i, trader in enumerate(market.traders):
        if isinstance(trader, dict):
            for name in TRADERS[trader["type"]].file_parameters:
                if isinstance(trader.get(name), str):
                    yield i, name, Path(trader[name])


def trader_files(market: MarketSpec) -> list[tuple[str, list[Path]]]:
    """The files the traders of a checked ``market`` name, each with the files it names
    (`envs.simulator.traders.Trader.file_parts`): (the folder of a run directory that keeps
    its copy, ``models/<n>``, its files), in the order of the text as run's names."""
    return [
        (f"{MODELS}/{n}", TRADERS[market.traders[i]["type"]].file_parts(name, path))
        for n, (i, name, path) in enumerate(declared_files(market))
    ]


def market_table(spec: MarketSpec) -> dict[str, Any]:
    """``spec`` as a ``[market]`` table: every field the table holds (those that are None,
    which TOML cannot write, left out: they read back as None)."""
    return {k: v for k, v in spec.to_table().items() if k in MARKET and v is not None}


def learned_from(table: dict[str, Any]) -> LearnedFrom:
    return LearnedFrom(tuple(table["tapes"]), tuple(map(float, table["window"])))
