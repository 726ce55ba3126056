"""The rooms stack one way, hold no import circle, and the agent contract imports light.

Module names are those installed: the folders ``envs/``, ``agents/`` and ``evaluation/`` are
``tradearena.envs``, ``tradearena.agents`` and ``tradearena.evaluation``. The rooms, from the
bottom: ``envs.data`` (tape formats) < ``envs.simulator.learned_flow`` (order flow learned
from a tape) < ``envs.simulator`` (the market) < ``envs`` (its faces)
< ``agents`` < ``evaluation.analysis`` (numbers and figures) < ``evaluation.experiment`` (the
experiment machinery) < ``evaluation.kinds`` (the experiment kinds) and ``evaluation.market``
(the market's judges and fit), side by side < ``evaluation.reports`` < ``evaluation.cli`` (the
command) < ``evaluation``; ``envs.errors`` is a leaf every room may import. No import points to
a higher room, nor from one of two side-by-side rooms to the other.

Every import statement counts, wherever it stands: at the top, inside a function, or in an
``if TYPE_CHECKING:`` block (a circle of type hints is a circle of design even when Python
never runs it).
``from a.b import c`` is an edge to ``a.b`` (and to ``a.b.c`` when that is a module), ``import
a.b`` one to ``a.b``; as in pylint's cyclic-import check, the parent packages that Python runs
on the way are not edges (a package's ``__init__`` re-exporting its own modules is no circle).
A circle is a strongly connected component of that module graph with more than one module.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

from tradearena.evaluation.experiment.kinds import KINDS

ROOT = Path(__file__).resolve().parents[1]
NAMESPACE = "tradearena"
FOLDERS = ("envs", "agents", "evaluation")
LEAF = "tradearena.envs.errors"
FLOORS = (
    ("tradearena.envs.data",),
    ("tradearena.envs.simulator.learned_flow",),
    ("tradearena.envs.simulator",),
    ("tradearena.envs",),
    ("tradearena.agents",),
    ("tradearena.evaluation.analysis",),
    ("tradearena.evaluation.experiment",),
    ("tradearena.evaluation.kinds", "tradearena.evaluation.market"),
    ("tradearena.evaluation.reports",),
    ("tradearena.evaluation.cli",),
    ("tradearena.evaluation",),
)
"""The rooms, floor by floor from the bottom; a module is in the longest room its name starts
with. The rooms of one floor (the experiment kinds, the market's judges) know nothing of each
other."""
ROOMS = tuple(r for rooms in FLOORS for r in rooms)
LAZY = {
    ("tradearena.agents.base", "tradearena.agents.saving"): "Agent.save imports the saving "
    "code (and with it the market) when called, so that the contract itself stays light",
}
"""The one import inside a function that closes a circle by design, and why."""


def modules() -> dict[str, Path]:
    """Installed module name -> file, for every module of the three folders."""
    out = {}
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join([NAMESPACE, *(parts[:-1] if parts[-1] == "__init__" else parts)])
            out[name] = path
    return out


def room(module: str) -> str:
    """The room holding ``module``: the longest of `ROOMS` its name starts with."""
    return max((r for r in ROOMS if module == r or module.startswith(f"{r}.")), key=len)


def floor(module: str) -> int:
    """The index in `FLOORS` of the floor of ``module``'s room."""
    return next(i for i, rooms in enumerate(FLOORS) if room(module) in rooms)


def _local_imports(tree: ast.Module) -> set[int]:
    """The ids of the import nodes standing inside a function body."""
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    return {
        id(node)
        for function in ast.walk(tree)
        if isinstance(function, functions)
        for node in ast.walk(function)
        if isinstance(node, ast.Import | ast.ImportFrom)
    }


def graph(lazy: bool = True) -> dict[str, set[str]]:
    """Module -> the project modules its execution imports; ``lazy=False`` leaves out the
    function-local imports declared in `LAZY`."""
    names = modules()
    edges: dict[str, set[str]] = {name: set() for name in names}

    for source, path in names.items():
        tree = ast.parse(path.read_text())
        local = _local_imports(tree)

        def add(target: str, node: ast.AST, source: str = source, local: set = local) -> None:
            declared = id(node) in local and (source, target) in LAZY
            if target in names and target != source and (lazy or not declared):
                edges[source].add(target)

        package = source if path.name == "__init__.py" else source.rpartition(".")[0]
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    add(alias.name, node)
                continue
            if not isinstance(node, ast.ImportFrom):
                continue
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            add(base, node)
            for alias in node.names:
                add(f"{base}.{alias.name}", node)
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
    """No circle, once the declared lazy imports are left out (and only those: each is a
    function-local import that exists)."""
    found = circles(graph(lazy=False))
    assert found == [], f"import circles: {found}"
    edges, kept = graph(), graph(lazy=False)
    assert all(target in edges[source] - kept[source] for source, target in LAZY)


def test_rooms_stack_one_way():
    """No import points to a higher floor, nor to another room of its own floor;
    ``envs.errors`` imports no project module."""
    edges = graph()
    upward = sorted(
        (source, target)
        for source, targets in edges.items()
        for target in targets
        if target != LEAF and floor(target) > floor(source)
    )
    assert upward == []
    sideways = sorted(
        (source, target)
        for source, targets in edges.items()
        for target in targets
        if floor(target) == floor(source) and room(target) != room(source)
    )
    assert sideways == []
    assert edges[LEAF] == set()


def test_the_kinds_and_the_market_know_nothing_of_each_other():
    """``evaluation.kinds`` and ``evaluation.market`` import nothing of each other, and no
    experiment kind imports another kind's module."""
    kinds, market = "tradearena.evaluation.kinds", "tradearena.evaluation.market"
    edges = graph()
    crossing = sorted(
        (source, target)
        for source, targets in edges.items()
        for target in targets
        if {room(source), room(target)} == {kinds, market}
    )
    assert crossing == []
    names = {f"{kinds}.{name}" for name in KINDS}
    assert names <= set(edges)
    assert sorted((s, t) for s in names for t in edges[s] if t in names) == []


def test_the_analysis_knows_no_agent_and_no_market():
    """``evaluation.analysis`` imports, of the project, only itself and ``envs.errors``."""
    analysis = "tradearena.evaluation.analysis"
    outside = sorted(
        (source, target)
        for source, targets in graph().items()
        if room(source) == analysis
        for target in targets
        if target != LEAF and room(target) != analysis
    )
    assert outside == []


LEARNED_FLOW = (
    ("events",),
    ("state", "kernels"),
    ("marks", "parameters"),
    ("model",),
    ("estimate", "neural", "sampler"),
    ("neural_fit",),
)
"""The learned flow's modules, floor by floor from the bottom (the compiled ones, state,
kernels and sampler, included)."""


def _learned_flow_imports() -> dict[str, set[str]]:
    """Module of the learned flow -> the modules of the learned flow it imports or cimports,
    by their short names, read from the import lines of its .py, .pyx and .pxd files
    (`graph` sees no compiled module)."""
    package = re.escape("tradearena.envs.simulator.learned_flow")
    folder = ROOT / "envs" / "simulator" / "learned_flow"
    edges: dict[str, set[str]] = {}
    for path in folder.glob("*.p[yx]*"):
        text = path.read_text()
        found = re.findall(rf"^\s*from {package}\.(\w+) c?import", text, re.M)
        found += re.findall(rf"^\s*from {package} import (\w+)", text, re.M)
        edges.setdefault(path.stem, set()).update(set(found) - {path.stem})
    return edges


def test_the_learned_flows_modules_stack_one_way():
    """Each module of the learned flow imports only modules of floors below its own in
    `LEARNED_FLOW`, and every module of it has a floor."""
    level = {name: i for i, names in enumerate(LEARNED_FLOW) for name in names}
    edges = _learned_flow_imports()
    assert set(edges) - {"__init__"} == set(level)
    wrong = sorted((s, t) for s, targets in edges.items() for t in targets if level[t] >= level[s])
    assert wrong == []


def test_every_module_has_a_room():
    """The rooms cover the three folders, and the room of a module is its longest prefix."""
    assert {room(m) for m in modules()} == set(ROOMS)
    assert room("tradearena.envs.simulator.traders.noise") == "tradearena.envs.simulator"
    assert room("tradearena.envs.spec") == "tradearena.envs"
    assert room("tradearena.evaluation.analysis.metrics") == "tradearena.evaluation.analysis"
    assert floor("tradearena.evaluation.kinds.psro") == floor("tradearena.evaluation.market.fit")


def test_the_graph_sees_function_local_and_relative_imports():
    """The counting itself: a circle through a function-local import is found."""
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(edges) == [["a", "b", "c"]]
    assert (
        "tradearena.envs.simulator.traders.base" in graph()["tradearena.envs.simulator.traders"]
    )  # a package's own imports count


def loaded_after(statements: str, *tops: str) -> list[str]:
    """The modules of the packages ``tops`` (and those named in full) that a fresh
    interpreter has loaded after running ``statements``, sorted."""
    code = (
        f"import sys\n{statements}\n"
        f"print(*sorted(m for m in sys.modules if m in {tops} or m.split('.')[0] in {tops}))"
    )
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT.parent
    ).stdout.split()


def test_importing_the_agent_contract_loads_no_market_and_no_pandas():
    """``from tradearena.agents import Agent``, in a fresh interpreter, leaves no module of
    ``tradearena.envs`` and no pandas loaded: of this project, the package and its base only."""
    loaded = loaded_after("from tradearena.agents import Agent", "tradearena", "pandas")
    assert loaded == ["tradearena", "tradearena.agents", "tradearena.agents.base"]


def test_a_compare_run_loads_no_plotting_and_no_game_analysis_until_it_draws():
    """Checking and running a compare experiment (its kind looked up) loads neither
    matplotlib nor scipy nor another kind's module: a finished run resumed answers fast."""
    statements = (
        "from tradearena.evaluation.experiment.runner import run_experiment\n"
        "from tradearena.evaluation.experiment.kinds import KINDS\n"
        "KINDS['compare']"
    )
    others = ("tradearena.evaluation.kinds.tournament", "tradearena.evaluation.kinds.psro")
    assert loaded_after(statements, "matplotlib", "scipy", *others) == []


def test_the_faces_a_plain_install_offers_import_only_default_dependencies():
    """The market's faces the README shows without an extra (Gymnasium, PettingZoo, the
    batched market) import, at the top of the module, only packages that `pip install`
    brings (``[project] dependencies``), so a plain install can use them."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    installed = {re.split(r"[<>=\[ ]", d)[0].replace("-", "_") for d in project["dependencies"]}
    for name in ("multi_agent", "trading_env", "vector", "spec"):
        tree = ast.parse((ROOT / "envs" / f"{name}.py").read_text())
        top = {
            (node.module if isinstance(node, ast.ImportFrom) else alias.name).split(".")[0]
            for node in tree.body
            if isinstance(node, ast.Import | ast.ImportFrom) and not getattr(node, "level", 0)
            for alias in node.names
        }
        third_party = top - set(sys.stdlib_module_names) - {NAMESPACE, "__future__"}
        assert third_party <= installed, (name, third_party - installed)
    assert "pettingzoo" in installed
