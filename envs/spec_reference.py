"""The reference of a market's fields, ``docs/market.md``, generated from `MarketSpec`'s field
docstrings, so that the page cannot drift from them.

`market_reference` gives the Markdown: one row per field with its type, default and meaning.
``python -m tradearena.envs.spec_reference docs/market.md`` (``make docs``) writes it.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import sys
from pathlib import Path

from tradearena.envs import spec

__all__ = ["field_docs", "market_reference", "write_reference"]

_INTRO = """\
# The market's fields

Generated from the field docstrings of `MarketSpec` (`envs/spec.py`) by `make docs`; a test
fails when this page and the docstrings differ. Every field is a keyword of
`gym.make("tradearena/...")` and of `MarketParallelEnv`, and a key of an experiment file's
`[market]` table ([Experiment files](config.md)); a misspelt one is an error naming the nearest
field. Fields whose default is none take the task's value (`task`) or the tape's.

| field | type | default | meaning |
|---|---|---|---|
"""


def field_docs() -> dict[str, str]:
    """Field name -> its docstring (the string literal under it), on one line, in order."""
    tree = ast.parse(inspect.getsource(spec.MarketSpec))
    body = tree.body[0].body  # the class's statements
    return {
        node.target.id: " ".join(after.value.value.split())
        for node, after in zip(body, body[1:])
        if isinstance(node, ast.AnnAssign)
        and isinstance(after, ast.Expr)
        and isinstance(after.value, ast.Constant)
        and isinstance(after.value.value, str)
    }


def _annotations() -> dict[str, str]:
    tree = ast.parse(inspect.getsource(spec.MarketSpec))
    return {
        node.target.id: ast.unparse(node.annotation).replace(" | ", " or ")
        for node in tree.body[0].body
        if isinstance(node, ast.AnnAssign)
    }


def _default(field: dataclasses.Field) -> str:
    value = field.default_factory() if callable(field.default_factory) else field.default
    if value is None:
        return "none"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, str):
        return f'`"{value}"`'
    if isinstance(value, tuple):
        return f"`{list(value)}`"
    return f"`{value}`"


def market_reference() -> str:
    """The Markdown of ``docs/market.md``."""
    docs, types = field_docs(), _annotations()
    rows = []
    for field in dataclasses.fields(spec.MarketSpec):
        cells = (f"`{field.name}`", types[field.name], _default(field), docs[field.name])
        rows.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return _INTRO + "\n".join(rows) + "\n"


def write_reference(path: str | Path) -> Path:
    """Write `market_reference` to ``path``; returns it."""
    path = Path(path)
    path.write_text(market_reference())
    return path


if __name__ == "__main__":
    print(write_reference(sys.argv[1] if len(sys.argv) > 1 else "docs/market.md"))
