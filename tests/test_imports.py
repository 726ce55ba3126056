"""The packages stack one way and hold no import circle.

Every import statement of envs/, agents/ and evaluation/ counts, wherever it stands: at the
top, inside a function, or in an ``if TYPE_CHECKING:`` block (a circle of type hints is a
circle of design even when Python never runs it).
``from a.b import c`` is an edge to ``a.b`` (and to ``a.b.c`` when that is a module), ``import
a.b`` one to ``a.b``; as in pylint's cyclic-import check, the parent packages that Python runs
on the way are not edges (a package's ``__init__`` re-exporting its own modules is no circle).
A circle is a strongly connected component of that module graph with more than one module.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("envs", "agents", "evaluation")
LAYER = {"envs": 0, "agents": 1, "evaluation": 2}


def modules() -> dict[str, Path]:
    """Module name -> file, for every module of the three packages."""
    out = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            out[name] = path
    return out


def graph() -> dict[str, set[str]]:
    """Module -> the project modules its execution imports."""
    names = modules()
    edges: dict[str, set[str]] = {name: set() for name in names}

    def add(source: str, target: str) -> None:
        if target in names and target != source:
            edges[source].add(target)

    for name, path in names.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    add(name, alias.name)
                continue
            if not isinstance(node, ast.ImportFrom):
                continue
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            add(name, base)
            for alias in node.names:
                add(name, f"{base}.{alias.name}")
    return edges


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(out)


def test_no_import_circles():
    found = circles(graph())
    assert found == [], f"import circles: {found}"


def test_packages_stack_one_way():
    """evaluation > agents > envs: a module never imports a package above its own."""
    upward = [
        (source, target)
        for source, targets in graph().items()
        for target in targets
        if LAYER[target.split(".")[0]] > LAYER[source.split(".")[0]]
    ]
    assert upward == []


def test_the_graph_sees_function_local_and_relative_imports():
    """The counting itself: a circle through a function-local import is found."""
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(edges) == [["a", "b", "c"]]
    assert (
        "tradearena.envs.simulator.traders.base" in graph()["tradearena.envs.simulator.traders"]
    )  # a package's own imports count
