"""Experiment files: TOML read once, checked against a schema, typed, defaults filled in.

Every mistake a user can make in a file (an unknown key, a wrong type, a value out of range,
an unknown agent or trader, a missing data file) raises `ConfigError` naming the file, the
line and the field, before any work is done::

    configs/x.toml, line 14: agents[1].id: unknown agent 'raq' (did you mean 'raql'?); ...

A checked file is a `Config` (`evaluation.experiment.schema`): typed, frozen sections that the
kinds, the command line and the reports read by attribute, and the file's text as run. The
``[market]`` table holds the fields of `envs.spec.MarketSpec`, with its defaults (its task's
market for the fields the task defaults), and is one. An agent is labelled in the tables by its
``label``, else by its class's ``name`` (a registry id's own). A ``"module:ClassName"`` agent is
imported from the installed packages, the folder the command runs in and the folders named to
the registry (`agents.add_folders`, the command's ``--agents-from``), never from the file's
folder (``agent_folders``, which the jobs carry to the workers).

Paths resolve against the file's folder: a tape, a saved agent (``from``), and every file a
trader names (the parameters its class declares in ``file_parameters``, say a learned flow's
``model``). Such a trader file is checked, with the files it names, before anything runs, and
a run keeps its own copy of it (`evaluation.experiment.markets.trader_files`): the text as
run names the copies.

This module reads the files (`load_config`, `parse_config`, `load_market`,
`load_learned_from`, the ``--set`` overrides); `evaluation.experiment.checking` checks an
experiment's tables into its `Config` and `evaluation.experiment.markets` the ``[market]``
table, an experiment's or a market file's; the schema they check against is
`evaluation.experiment.schema`'s.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import tomli_w

from tradearena.envs.spec import MarketSpec, names_tape_file
from tradearena.evaluation.experiment.checking import checked_config
from tradearena.evaluation.experiment.markets import checked_market, learned_from
from tradearena.evaluation.experiment.schema import (
    TOP,
    AgentEntry,
    Config,
    ConfigError,
    Field,
    LearnedFrom,
    Locator,
    Output,
    check_table,
)

__all__ = [
    "AgentEntry",
    "Config",
    "ConfigError",
    "command_line",
    "dotted_keys",
    "load_config",
    "load_learned_from",
    "load_market",
    "merge",
    "parse_config",
    "read_file",
    "read_text",
]


def dotted_keys(schema: dict[str, Field] = TOP, table: str = "") -> list[str]:
    """The keys of single values in an experiment file (``schema``'s), dotted by the tables
    that hold them (``seeds``, ``training.episodes``, ``market.n_steps``): what ``--set``
    replaces. Arrays of tables (``[[agents]]``) are left out."""
    keys = []
    for key, field in schema.items():
        name = f"{table}.{key}" if table else key
        if field.type is dict and isinstance(field.default, dict):
            keys += dotted_keys(field.default, name)
        elif not isinstance(field.default, dict):
            keys.append(name)
    return keys


def load_config(
    path: str | Path,
    overrides: dict | None = None,
    *,
    prepare: Callable[[Output], None] | None = None,
) -> Config:
    """Read and check an experiment file; `ConfigError` names what is wrong and where.

    ``overrides`` (nested like the file, e.g. ``{"seeds": 1, "training": {"episodes": 2}}``)
    replace values of the file before it is checked; the config then records the merged file
    (comments dropped) as its text. A tape file among them (``{"market": {"tape": ...}}``) is
    the caller's: relative to the current folder, not to the file's. ``prepare`` is called with
    the ``[output]`` table once the schema is checked, before any agent is built (the runner
    takes its run directory's calibrations there)."""
    path = Path(path)
    written = read_text(path, "experiment file")
    raw = _tables(written, str(path))
    text = written
    if overrides:
        market = overrides.get("market")
        tape = market.get("tape") if isinstance(market, dict) else None
        if isinstance(tape, str) and names_tape_file(tape) and "$" not in tape:
            here = os.path.abspath(Path(tape).expanduser())
            overrides = merge(overrides, {"market": {"tape": here}})
        raw = merge(raw, overrides)
        text = tomli_w.dumps(raw)
    where = Locator(written, str(path), given=command_line(overrides or {}))
    return checked_config(raw, text, where, base=path.parent, complete=True, prepare=prepare)


def parse_config(
    text: str,
    *,
    source: str = "<config>",
    base: Path | None = None,
    complete: bool = True,
    where: Locator | None = None,
) -> Config:
    """Check the TOML ``text`` of an experiment; relative paths resolve against ``base``
    (default: the working directory). With ``complete=False`` only the schema is checked, the
    defaults filled and the market built (agents are not loaded, data files not looked for):
    reading a finished run's config. ``where`` locates errors (default: in ``text``
    itself)."""
    tables = _tables(text, source)
    where = where or Locator(text, source)
    return checked_config(tables, text, where, base=base or Path.cwd(), complete=complete)


def read_text(path: Path, what: str) -> str:
    """The UTF-8 text of the file at ``path``; `ConfigError` naming it (``what`` it is) and,
    for text that is not UTF-8, the line of the first byte that is not."""
    try:
        return path.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"{path}: cannot read the {what}: {error.strerror}") from None
    except UnicodeDecodeError as error:
        line = error.object[: error.start].count(b"\n") + 1
        raise ConfigError(
            f"{path}, line {line}: the {what} is not UTF-8 text (save it as UTF-8)"
        ) from None


def read_file(path: str | Path, what: str) -> tuple[dict[str, Any], Locator]:
    """The TOML tables of the file at ``path`` (``what`` it is, for messages) and the
    `Locator` of its text; `ConfigError` naming it when it cannot be read or is not TOML."""
    path = Path(path)
    text = read_text(path, what)
    return _tables(text, str(path)), Locator(text, str(path))


def _tables(text: str, source: str) -> dict[str, Any]:
    """The tables of the TOML ``text``; `ConfigError` naming ``source`` when it is not TOML."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{source}: not valid TOML: {error}") from None


def command_line(overrides: dict, prefix: tuple = ()) -> dict[tuple, str]:
    """Every value of the nested ``overrides`` as ``--set KEY=VALUE``, by its key path."""
    out = {}
    for key, value in overrides.items():
        path = prefix + (key,)
        if isinstance(value, dict):
            out.update(command_line(value, path))
        else:
            shown = value if isinstance(value, str) else tomli_w.dumps({"v": value})[4:].strip()
            out[path] = f"--set {'.'.join(path)}={shown}"
    return out


def merge(base: dict, overrides: dict) -> dict:
    """``base`` with ``overrides`` applied, tables merged key by key."""
    out = dict(base)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def load_market(path: str | Path) -> MarketSpec:
    """The `MarketSpec` of a TOML file's ``[market]`` table (an experiment file, or a file of
    that table alone), checked as `load_config` checks it; its paths resolve against the
    file's folder. `ConfigError` names what is wrong and where."""
    path = Path(path)
    tables, where = read_file(path, "market file")
    return checked_market(tables, where, path.parent)


def load_learned_from(path: str | Path) -> LearnedFrom | None:
    """The ``[learned_from]`` table of the experiment file at ``path``, checked, or None when
    the file says nothing of what its market learned from. `ConfigError` names a bad value."""
    raw, where = read_file(path, "market file")
    schema = TOP["learned_from"].default
    table = check_table(raw.get("learned_from", {}), schema, ("learned_from",), where)
    return learned_from(table) if table["window"] else None
