"""Every room of the three packages says what it holds, in its ``__init__.py``'s docstring,
and where a name stands for modules (or rooms) in two places, the rooms say why.

A name's holders are the modules and packages of that name. A module is spoken for by its
room (the package it is in), a package by itself: the docstring that speaks for each holder
names every other holder (``evaluation.analysis.realism`` in the docstring of
``evaluation.market``, and back), so a reader who meets one finds the other and the reason.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("envs", "agents", "evaluation")
DOCSTRING_ONLY = (
    "envs/simulator",
    "evaluation/analysis",
    "evaluation/cli",
    "evaluation/experiment",
    "evaluation/kinds",
    "evaluation/market",
    "evaluation/reports",
)
"""The rooms whose ``__init__.py`` is their docstring and nothing else (importing one runs
no code)."""


def rooms() -> list[Path]:
    """Every folder of the three packages that holds modules."""
    found = {p.parent for f in FOLDERS for p in (ROOT / f).rglob("*.py*") if p.suffix != ".pyc"}
    return sorted(d for d in found if "__pycache__" not in d.parts)


def dotted(path: Path) -> str:
    """A module's or folder's name without the namespace (``evaluation.market.realism``)."""
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def docstring(room: Path) -> str:
    return ast.get_docstring(ast.parse((room / "__init__.py").read_text())) or ""


def holders() -> dict[str, list[tuple[str, Path]]]:
    """Public name -> (holder, the room that speaks for it) of each module and package of
    that name."""
    found: dict[str, list[tuple[str, Path]]] = defaultdict(list)
    for room in rooms():
        if room.name not in FOLDERS:
            found[room.name].append((dotted(room), room))
        for path in room.iterdir():
            if path.suffix in (".py", ".pyx") and not path.name.startswith("_"):
                found[path.stem].append((dotted(path), room))
    return {name: places for name, places in found.items() if len(places) > 1}


def test_every_room_has_a_docstring():
    """Each room's ``__init__.py`` has a docstring of at least a sentence; the rooms listed
    in `DOCSTRING_ONLY` hold nothing else."""
    for room in rooms():
        assert len(docstring(room)) > 40, dotted(room)
    for name in DOCSTRING_ONLY:
        body = ast.parse((ROOT / name / "__init__.py").read_text()).body
        assert len(body) == 1 and isinstance(body[0], ast.Expr), name


def test_a_name_in_two_rooms_is_explained_in_both():
    """For each name held in two places or more, the docstring that speaks for each holder
    names every other holder."""
    unexplained = sorted(
        (name, held, other)
        for name, places in holders().items()
        for held, room in places
        for other, _ in places
        if other != held and f"`{other}`" not in docstring(room)
    )
    assert unexplained == []
