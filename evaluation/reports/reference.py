"""The reference of experiment files, ``docs/config.md``, generated from the schema that checks
them (`evaluation.experiment.schema.TOP`), so that it cannot drift from it.

`config_reference` gives the Markdown: one section per table (``[market]``, ``[training]``,
``[[agents]]``, ...), one row per key with its TOML type, default, allowed values and meaning.
``python -m tradearena.evaluation.reports.reference docs/config.md`` (``make docs``) writes it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tradearena.evaluation.experiment.kinds import KINDS
from tradearena.evaluation.experiment.schema import (
    ANY_TABLE,
    OPTIONAL_SECTIONS,
    REQUIRED,
    TOP,
    TYPE_NAMES,
    Field,
)

__all__ = ["config_reference", "write_reference"]

_INTRO = """\
# Experiment files: the reference

Generated from the schema that checks the files (`evaluation/experiment/schema.py`) by `make docs`;
a test fails when this page and the schema differ. `tradearena run FILE --dry-run` checks a file
against it and lists its jobs; `--set KEY=VALUE` (e.g. `--set market.n_steps=30`) replaces a value
of the file. A mistake is one line naming the file, the line and the key (or the `--set` that gave
it). `configs/` holds a file of every kind.

Kinds (`kind`): {kinds}. Tables only some kinds read: {optional}.

The run directory is `output.dir`, by default `runs/<name>` (or `runs/<kind>` without a
name), relative to the folder the command runs in; `--out DIR` replaces it. Tape paths are
relative to the file's folder (to the current folder when given with `--set` or through an
environment variable, `$NAME`). Agents that do not learn (`hold`, `random`, a reference
policy) need no training: `[training] episodes = 0` for a file of them alone, or
`train = false` in an agent's table to test it frozen beside learners.
"""


def _type(field: Field) -> str:
    kinds = field.type if isinstance(field.type, tuple) else (field.type,)
    if isinstance(field.default, dict) and field.type is list:
        return "array of tables"
    if {int, float} <= set(kinds):  # an integer is a number too
        kinds = tuple(k for k in kinds if k is not int)
    return " or ".join(TYPE_NAMES[k].removeprefix("an ").removeprefix("a ") for k in kinds)


def _default(field: Field, key: str = "") -> str:
    if isinstance(field.default, dict):
        return f"see `[{key}]`"
    if field.default is REQUIRED:
        return "required"
    if field.default is ANY_TABLE:
        return "`{}`"
    value: Any = field.default
    if value is None:
        return "none"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, str):
        return f'`"{value}"`'
    if isinstance(value, tuple | list):
        return f"`{list(value)}`"
    return f"`{value}`"


def _row(key: str, field: Field, table: str = "") -> str:
    allowed = field.rule or "-"
    cells = (f"`{key}`", _type(field), _default(field, f"{table}.{key}"), allowed, field.doc)
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def _section(title: str, doc: str, schema: dict[str, Field], name: str = "") -> list[str]:
    """The table ``name`` (dotted) headed ``title``, then each table nested in it, in turn."""
    heading = f"## `{title}`" if title else "## Top level"
    lines = [heading, "", doc[0].upper() + doc[1:] + ".", ""]
    lines += ["| key | type | default | allowed | meaning |", "|---|---|---|---|---|"]
    lines += [_row(key, field, name) for key, field in schema.items()]
    lines.append("")
    for key, field in schema.items():
        if isinstance(field.default, dict) and name:
            lines += _section(f"[{name}.{key}]", field.doc, field.default, f"{name}.{key}")
    return lines


def config_reference() -> str:
    """The Markdown of ``docs/config.md``: the top-level keys, then every table of `TOP` (an
    array of tables as ``[[name]]``) with each key's type, default, rule and meaning."""
    tables = {key: field for key, field in TOP.items() if isinstance(field.default, dict)}
    plain = {key: field for key, field in TOP.items() if key not in tables}
    optional = ", ".join(
        f"`{section}` (kind {' or '.join(n for n, k in KINDS.items() if section in k.SECTIONS)})"
        for section in (*OPTIONAL_SECTIONS, "tournament", "psro")
    )
    kinds = ", ".join(f"`{name}`" for name in KINDS)
    lines = [_INTRO.format(kinds=kinds, optional=optional)]
    lines += _section("", "the keys outside any table", plain)
    for key, field in tables.items():
        title = f"[[{key}]]" if field.type is list else f"[{key}]"
        lines += _section(title, field.doc, field.default, key)
    return "\n".join(lines).rstrip("\n") + "\n"


def write_reference(path: str | Path) -> Path:
    """Write `config_reference` to ``path``; returns it."""
    path = Path(path)
    path.write_text(config_reference())
    return path


if __name__ == "__main__":
    print(write_reference(sys.argv[1] if len(sys.argv) > 1 else "docs/config.md"))
