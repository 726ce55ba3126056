"""The site's sections and its API reference: what `make docs` relies on, checked without
building it (mkdocs is the ``docs`` extra, not the tests').

The reference is written by hand in docs/reference/: the public faces first, then one page
per room. Every public module of the three packages (its Python modules, its packages and
its compiled modules, read from their stubs) is shown by exactly one ``::: module`` line, so
a new module is on no page until one names it, and none is shown twice. The pages find the
packages through ``build/namespace/tradearena``, setup.py's links to the folders under their
installed name (made when the extensions are built); the compiled modules' docstrings come
from docs/compiled_docstrings.py. A fresh clone builds with the README's commands
(``make docs``).
"""

from __future__ import annotations

import ast
import importlib.util
import re
import textwrap
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
REFERENCE = DOCS / "reference"
FOLDERS = ("envs", "agents", "evaluation")
SECTIONS = [
    "Get started",
    "Markets and data",
    "Learners",
    "Experiments and games",
    "Realism",
    "Results",
    "Reference",
]
DIRECTIVE = re.compile(r"^::: (\S+)\n((?:    .*\n)*)", re.M)


def config() -> dict:
    return yaml.safe_load((ROOT / "mkdocs.yml").read_text())


def python_handler() -> dict:
    (plugin,) = [p["mkdocstrings"] for p in config()["plugins"] if isinstance(p, dict)]
    return plugin["handlers"]["python"]


def public_modules() -> set[str]:
    """Every public module's installed name: Python modules, packages (their
    ``__init__.py``) and compiled modules (``.pyx``)."""
    found = set()
    for folder in FOLDERS:
        for path in (ROOT / folder).rglob("*.py*"):
            if path.suffix not in (".py", ".pyx"):
                continue
            parts = path.relative_to(ROOT).with_suffix("").parts
            parts = parts[:-1] if parts[-1] == "__init__" else parts
            if not any(part.startswith("_") for part in parts):
                found.add(".".join(("tradearena", *parts)))
    return found


def directives() -> list[tuple[str, str, dict]]:
    """(page, object, options) of each ``:::`` line of the reference's pages."""
    found = []
    for page in sorted(REFERENCE.rglob("*.md")):
        for name, block in DIRECTIVE.findall(page.read_text()):
            options = yaml.safe_load(textwrap.dedent(block)) if block else {}
            found.append((page.relative_to(DOCS).as_posix(), name, options.get("options", {})))
    return found


def nav_pages(items) -> list[str]:
    """The pages of a nav (sub)tree, in order."""
    pages = []
    for item in items:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        pages += nav_pages(value) if isinstance(value, list) else [value]
    return pages


def own_names(package: str) -> set[str]:
    """The public names a package's ``__init__.py`` defines itself (functions, classes,
    assignments; not what it imports)."""
    path = ROOT.joinpath(*package.split(".")[1:], "__init__.py")
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = [node.target] if isinstance(node, ast.AnnAssign) else node.targets
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return {name for name in names if not name.startswith("_")}


NUMPY_SECTION = re.compile(r"^\s*(\w[\w ]*)\n\s*-{3,}\s*$", re.M)
"""A numpy-style docstring section: its name, underlined by dashes."""


def test_the_docstrings_are_written_in_the_style_the_site_reads():
    """The site reads docstrings in the Google style (``Args:``, ``Returns:``): no module of
    the three packages underlines a numpy-style section (``Parameters`` over dashes), which it
    would show as plain text; ten modules of the analysis room did."""
    sources = [p for folder in FOLDERS for p in (ROOT / folder).rglob("*.py*")]
    underlined = sorted(
        (path.relative_to(ROOT).as_posix(), match.group(1))
        for path in sources
        if path.suffix in (".py", ".pyx", ".pyi", ".pxd")
        for match in NUMPY_SECTION.finditer(path.read_text())
    )
    assert underlined == []


def test_the_site_is_in_sections_and_every_page_is_in_one():
    """The nav is the seven sections in order, and every page of docs/ is in exactly one."""
    nav = config()["nav"]
    assert [next(iter(section)) for section in nav] == SECTIONS
    pages = nav_pages(nav)
    assert len(pages) == len(set(pages))
    on_disk = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    assert set(pages) == on_disk


def test_the_results_are_in_the_results_section_and_the_manual_holds_none():
    """The measured figures (the experiments', the judges' on the AMZN day, the benchmarks')
    are the Results section's pages; the pages that say how a market is judged and how the
    experiments are run, in their own sections, hold no table of figures."""
    sections = {next(iter(s)): nav_pages(next(iter(s.values()))) for s in config()["nav"]}
    assert sections["Results"] == ["results.md", "realism-results.md", "benchmarks.md"]
    assert "realism.md" in sections["Realism"]
    assert "reproducing.md" in sections["Experiments and games"]
    for manual in ("realism.md", "reproducing.md"):
        assert not re.search(r"^\|", (DOCS / manual).read_text(), re.M), manual


def test_every_public_module_is_on_exactly_one_page():
    """Each public module is shown by one ``:::`` line of the reference, and each such line
    shows a module (the pages document modules whole)."""
    shown = [name for _, name, _ in directives()]
    assert sorted(set(shown)) == sorted(shown), "a module shown twice"
    assert set(shown) == public_modules()


def test_the_public_faces_come_first():
    """The reference's first pages show the faces a user calls: the Gymnasium market and its
    spec, the compiled core, the learned flow, the agents, the experiments, the games and the
    judges; the rooms' pages come after them."""
    (reference,) = [s["Reference"] for s in config()["nav"] if "Reference" in s]
    pages = nav_pages(reference)
    rooms = pages.index("reference/rooms/index.md")
    assert all(page.startswith("reference/rooms/") for page in pages[rooms:])
    faces = {name: page for page, name, _ in directives() if page in pages[:rooms]}
    for module in (
        "tradearena.envs",
        "tradearena.envs.spec",
        "tradearena.envs.trading_env",
        "tradearena.envs.multi_agent",
        "tradearena.envs.simulator.market",
        "tradearena.envs.simulator.book",
        "tradearena.envs.simulator.flow",
        "tradearena.envs.simulator.replayer",
        "tradearena.envs.simulator.learned_flow.sampler",
        "tradearena.envs.simulator.traders.learned",
        "tradearena.envs.simulator.learned_flow.model",
        "tradearena.envs.simulator.learned_flow.estimate",
        "tradearena.agents.base",
        "tradearena.evaluation.experiment.config",
        "tradearena.evaluation.experiment.runner",
        "tradearena.evaluation.analysis.games",
        "tradearena.evaluation.market.realism",
        "tradearena.evaluation.market.transfer",
        "tradearena.evaluation.market.response",
    ):
        assert module in faces, module


def test_a_package_shows_what_it_defines_and_not_what_it_imports():
    """A package shown with ``members: false`` defines no public name of its own, and one
    shown with a list of members lists exactly its own (what it imports is shown, once, in
    the module that defines it)."""
    packages = {m for m in public_modules() if ROOT.joinpath(*m.split(".")[1:]).is_dir()}
    for _, name, options in directives():
        if name in packages:
            members = options.get("members", True)
            assert members is not True, f"{name} would show its imports again"
            assert set(members or ()) == own_names(name), name


@pytest.mark.parametrize("folder", FOLDERS)
def test_the_reference_reads_the_folders_under_their_installed_name(folder):
    """mkdocstrings searches build/namespace, where setup.py links each folder as
    ``tradearena/<folder>``; no page is generated at build time, so a fresh clone's first
    ``make docs`` finds every package."""
    assert python_handler()["paths"] == ["build/namespace"]
    link = ROOT / "build" / "namespace" / "tradearena" / folder
    assert link.is_symlink() and link.resolve() == ROOT / folder
    assert f'"{folder}"' in (ROOT / "setup.py").read_text().split("def namespace", 1)[1]
    assert "FORCE" in (ROOT / "Makefile").read_text().split("$(VENV)/.compiled:", 1)[1]


def test_every_folder_is_a_package_the_reference_can_enter():
    """Griffe enters only folders with an ``__init__.py``: every folder holding modules has
    one."""
    folders = {p.parent for f in FOLDERS for p in (ROOT / f).rglob("*.py*")}
    missing = sorted(
        d.relative_to(ROOT).as_posix()
        for d in folders
        if "__pycache__" not in d.parts and not (d / "__init__.py").exists()
    )
    assert missing == []


def test_the_build_has_what_its_configuration_names():
    """The docs extra brings every plugin and the theme mkdocs.yml uses, the Griffe
    extension it names exists, docstrings are read in one style, and the old generated
    reference's plugins are gone."""
    import tomllib

    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    installed = {re.split(r"[<>=\[ ]", d)[0] for d in extra["optional-dependencies"]["docs"]}
    assert installed == {"mkdocs", "mkdocs-material", "mkdocstrings"}
    plugins = [p if isinstance(p, str) else next(iter(p)) for p in config()["plugins"]]
    assert plugins == ["search", "offline", "mkdocstrings"]  # search: mkdocs's; offline: Material's
    assert config()["theme"]["name"] == "material"
    options = python_handler()["options"]
    assert options["docstring_style"] == "google"
    (extension,) = options["extensions"]
    path, name = extension.split(":")
    assert f"class {name}(griffe.Extension)" in (ROOT / path).read_text()
    assert path.removeprefix("docs/") in config()["exclude_docs"].split()
    assert "offline.py" in config()["exclude_docs"].split()  # the hook, not a page


def test_the_site_loads_nothing_from_the_internet_and_works_from_disk():
    """`make docs` builds a site to open from disk, offline: the theme's fonts the system's
    (Material's default fetches Roboto from Google's servers on every page), pages as files,
    the search index as a script, and the 404 page's links relative to the site's root
    (MkDocs makes them absolute, ``/...``, which from disk is the disk's root)."""
    site = config()
    assert site["theme"]["font"] is False and site["use_directory_urls"] is False
    assert "offline" in site["plugins"] and site["hooks"] == ["docs/offline.py"]
    spec = importlib.util.spec_from_file_location("offline", ROOT / "docs" / "offline.py")
    offline = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(offline)
    for template, base in (("404.html", "."), ("sitemap.xml", "/")):
        assert offline.on_template_context({"base_url": "/"}, template)["base_url"] == base
