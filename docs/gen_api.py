"""The API reference's pages, made when the site builds (the mkdocs-gen-files plugin runs
this script): one page per public module of tradearena.envs, tradearena.agents and
tradearena.evaluation, found by walking their folders, so that a module added or moved is
documented without editing a page. ``reference/SUMMARY.md`` is their navigation.

The folders install as `tradearena.X` (pyproject's package-dir: a PEP 420 namespace without
tradearena/__init__.py; envs/simulator and others are namespace packages too), which griffe
cannot find from the folders' names; the script links their files under
``build/docs-api/tradearena/``, the search path mkdocs.yml gives mkdocstrings.
Compiled modules (``.pyx``) have no Python source to read and get no page.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import mkdocs_gen_files

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("envs", "agents", "evaluation")
SEARCH_PATH = ROOT / "build" / "docs-api" / "tradearena"


def link_packages() -> None:
    """``build/docs-api/tradearena/<folder>/...``: each package's Python files linked in a
    tree of their folders, each folder with an ``__init__.py`` (an empty one where the folder
    is a namespace package, which griffe would not enter)."""
    shutil.rmtree(SEARCH_PATH, ignore_errors=True)
    for folder in PACKAGES:
        for source in (ROOT / folder).rglob("*.py"):
            link = SEARCH_PATH / source.relative_to(ROOT)
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(source)
    for directory in (SEARCH_PATH, *SEARCH_PATH.rglob("*")):
        if directory.is_dir() and not (directory / "__init__.py").exists():
            (directory / "__init__.py").touch()


def modules() -> list[tuple[str, ...]]:
    """The public modules' dotted parts (``("tradearena", "envs", "spec")``), packages
    (their ``__init__.py``) included, sorted."""
    found = []
    for folder in PACKAGES:
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if any(part.startswith("_") for part in parts):
                continue
            found.append(("tradearena", *parts))
    return sorted(found)


def write_pages() -> None:
    """One page per module, an index page, and the section's SUMMARY.md."""
    nav = mkdocs_gen_files.Nav()
    index = ["# API reference", "", "From the modules' docstrings, one page per module.", ""]
    for parts in modules():
        dotted = ".".join(parts)
        page = Path(*parts[1:]).with_suffix(".md")
        nav[parts[1:]] = page.as_posix()
        index.append(f"- [`{dotted}`]({page.as_posix()})")
        with mkdocs_gen_files.open(Path("reference", page), "w") as out:
            out.write(f"# `{dotted}`\n\n::: {dotted}\n")
    with mkdocs_gen_files.open("reference/index.md", "w") as out:
        out.write("\n".join(index) + "\n")
    with mkdocs_gen_files.open("reference/SUMMARY.md", "w") as out:
        out.write("* [API reference](index.md)\n")
        out.writelines(nav.build_literate_nav())


link_packages()
write_pages()
