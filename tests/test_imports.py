"""The rooms stack one way, hold no import circle, and the agent contract imports light.

Module names are those installed: the folders ``envs/``, ``agents/`` and ``evaluation/`` are
``tradearena.envs``, ``tradearena.agents`` and ``tradearena.evaluation``. The rooms, from the
bottom: ``envs.data`` (tape formats and a tape's events) < ``envs.simulator.book`` (the compiled
order book) < ``envs.simulator.learned_flow`` (order flow learned from a tape, drawn against the
book) < ``envs.simulator`` (the market) < ``envs`` (its faces) < ``agents`` <
``evaluation.analysis`` (numbers and figures) < ``evaluation.experiment`` (the experiment
machinery) < ``evaluation.kinds`` (the experiment kinds) and ``evaluation.market`` (the market's
judges and fit), side by side < ``evaluation.reports`` < ``evaluation.cli`` (the command) <
``evaluation``; ``envs.errors`` is a leaf every room may import. No import points to a higher
room, nor from one of two side-by-side rooms to the other.

Every import statement counts, wherever it stands: at the top, inside a function, or in an
``if TYPE_CHECKING:`` block (a circle of type hints is a circle of design even when Python
never runs it). A module is all its files: its ``.py``, or a compiled module's ``.pyx``, its
``.pxd`` (the C declarations other compiled modules ``cimport``) and its ``.pyi`` (the
stub); a ``cimport`` is an import like any other, and a compiled module's imports all count
as top-level ones.
``from a.b import c`` is an edge to ``a.b`` (and to ``a.b.c`` when that is a module), ``import
a.b`` one to ``a.b``; as in pylint's cyclic-import check, the parent packages that Python runs
on the way are not edges (a package's ``__init__`` re-exporting its own modules is no circle).
A circle is a strongly connected component of that module graph with more than one module.
"""

from __future__ import annotations

import ast
import io
import re
import subprocess
import sys
import tokenize
from collections.abc import Iterator
from pathlib import Path

from tradearena.evaluation.experiment.kinds import KINDS

ROOT = Path(__file__).resolve().parents[1]
NAMESPACE = "tradearena"
FOLDERS = ("envs", "agents", "evaluation")
LEAF = "tradearena.envs.errors"
FLOORS = (
    ("tradearena.envs.data",),
    ("tradearena.envs.simulator.book",),
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


SOURCES = ("*.py", "*.pyi", "*.pyx", "*.pxd")
"""A module's files: its Python source, or a compiled module's stub, code and C
declarations."""


def modules() -> dict[str, list[Path]]:
    """Installed module name -> its files, for every module of the three folders."""
    out: dict[str, list[Path]] = {}
    for folder in FOLDERS:
        for pattern in SOURCES:
            for path in sorted((ROOT / folder).rglob(pattern)):
                parts = path.relative_to(ROOT).with_suffix("").parts
                name = ".".join([NAMESPACE, *(parts[:-1] if parts[-1] == "__init__" else parts)])
                out.setdefault(name, []).append(path)
    return out


def room(module: str, floors: tuple[tuple[str, ...], ...] = FLOORS) -> str:
    """The room holding ``module``: the longest room of ``floors`` its name starts with."""
    rooms = (r for names in floors for r in names if module == r or module.startswith(f"{r}."))
    return max(rooms, key=len)


def floor(module: str, floors: tuple[tuple[str, ...], ...] = FLOORS) -> int:
    """The index in ``floors`` of the floor of ``module``'s room."""
    return next(i for i, rooms in enumerate(floors) if room(module, floors) in rooms)


def upward(
    edges: dict[str, set[str]], floors: tuple[tuple[str, ...], ...] = FLOORS
) -> list[tuple[str, str]]:
    """The imports of ``edges`` that point to a higher floor of ``floors`` (``envs.errors``,
    the leaf, excepted), sorted."""
    return sorted(
        (source, target)
        for source, targets in edges.items()
        for target in targets
        if target != LEAF and floor(target, floors) > floor(source, floors)
    )


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


_PASSED_OVER = {
    tokenize.COMMENT,
    tokenize.NL,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.ENCODING,
    tokenize.STRING,
}
"""The tokens `_import_lines` passes over: what is not code, and the layout."""


def _import_lines(text: str) -> Iterator[str]:
    """The logical lines of Cython source ``text`` that import or cimport, as Python import
    statements (``cimport`` read as ``import``); strings and comments are passed over."""
    words: list[str] = []
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type in (tokenize.NEWLINE, tokenize.ENDMARKER) or token.string == ";":
            if words and words[0] in ("from", "import", "cimport"):
                yield " ".join("import" if word == "cimport" else word for word in words)
            words = []
        elif token.type not in _PASSED_OVER:
            words.append(token.string)


def syntax(path: Path) -> ast.Module:
    """A module file's statements: all of a ``.py`` or ``.pyi``, the import lines of a
    ``.pyx`` or ``.pxd`` (`_import_lines`)."""
    text = path.read_text()
    if path.suffix in (".pyx", ".pxd"):
        return ast.parse("\n".join(_import_lines(text)))
    return ast.parse(text)


def graph(lazy: bool = True) -> dict[str, set[str]]:
    """Module -> the project modules its execution (or compilation) imports; ``lazy=False``
    leaves out the function-local imports declared in `LAZY`."""
    names = modules()
    edges: dict[str, set[str]] = {name: set() for name in names}

    for source, paths in names.items():
        for path in paths:
            tree = syntax(path)
            local = _local_imports(tree)

            def add(target: str, node: ast.AST, source: str = source, local: set = local) -> None:
                declared = id(node) in local and (source, target) in LAZY
                if target in names and target != source and (lazy or not declared):
                    edges[source].add(target)

            package = source if path.stem == "__init__" else source.rpartition(".")[0]
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
    assert upward(edges) == []
    sideways = sorted(
        (source, target)
        for source, targets in edges.items()
        for target in targets
        if floor(target) == floor(source) and room(target) != room(source)
    )
    assert sideways == []
    assert edges[LEAF] == set()


SIMULATOR = "tradearena.envs.simulator"
BOOK, LEARNED = f"{SIMULATOR}.book", f"{SIMULATOR}.learned_flow"


def test_the_compiled_modules_are_in_the_graph_with_their_cimports():
    """Every compiled module is a module of the graph, with every ``cimport`` of the project
    that its .pyx and .pxd hold (as a plain search of their lines finds them): the learned
    flow's state and sampler cimport the book, and the simulator's flow the learned flow's
    sampler."""
    edges, names = graph(), modules()
    compiled = {name for name, paths in names.items() if {p.suffix for p in paths} & {".pyx"}}
    assert len(compiled) == len(list(ROOT.glob("[ae]*/**/*.pyx"))) == 12
    for name in compiled:
        text = "\n".join(p.read_text() for p in names[name] if p.suffix in (".pyx", ".pxd"))
        cimported = set(re.findall(rf"^\s*from ({NAMESPACE}\.[\w.]+) cimport", text, re.M))
        assert cimported <= edges[name], name
    assert BOOK in edges[f"{LEARNED}.state"] & edges[f"{LEARNED}.sampler"]
    assert f"{LEARNED}.sampler" in edges[f"{SIMULATOR}.flow"]


def test_a_cimport_upward_fails_the_floors():
    """`upward` names a cimport that points up. On the floors as they were drawn before the
    compiled modules were read (the learned flow below the whole simulator, the book in it),
    the learned flow's cimports of the book point up; on the floors of `FLOORS` (the book
    below the learned flow) none does; and a hand-made graph in which the book cimports the
    learned flow's sampler is named."""
    edges = graph()
    before = tuple(f for f in FLOORS if f != (BOOK,))
    assert [edge for edge in upward(edges, before) if edge[1] == BOOK] == [
        (f"{LEARNED}.sampler", BOOK),
        (f"{LEARNED}.state", BOOK),
    ]
    assert upward(edges) == []
    made = {BOOK: {f"{LEARNED}.sampler"}, f"{LEARNED}.sampler": {BOOK}}
    assert upward(made) == [(BOOK, f"{LEARNED}.sampler")]


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


def test_of_the_evaluation_only_learn_knows_the_learned_flow():
    """A judge reads a tape's events from the tapes (``envs.data.events``), not from the model
    it judges: of ``evaluation``, only ``evaluation.market.learn`` (which learns a flow)
    imports a module of ``envs.simulator.learned_flow``; ``response`` reads the events."""
    edges = graph()
    knowing = sorted(
        source
        for source, targets in edges.items()
        if source.startswith("tradearena.evaluation")
        and any(room(target) == LEARNED for target in targets)
    )
    assert knowing == ["tradearena.evaluation.market.learn"]
    assert "tradearena.envs.data.events" in edges["tradearena.evaluation.market.response"]


LEARNED_FLOW = (
    ("exciters",),
    ("state", "kernels"),
    ("marks", "parameters"),
    ("model",),
    ("estimate", "neural", "sampler"),
    ("neural_fit",),
)
"""The learned flow's modules, floor by floor from the bottom (the compiled ones, state,
kernels and sampler, included)."""


def test_the_learned_flows_modules_stack_one_way():
    """Each module of the learned flow imports (or cimports) only modules of floors below its
    own in `LEARNED_FLOW`, and every module of it has a floor."""
    level = {f"{LEARNED}.{name}": i for i, names in enumerate(LEARNED_FLOW) for name in names}
    edges = graph()
    assert {m for m in edges if room(m) == LEARNED} - {LEARNED} == set(level)
    wrong = sorted((s, t) for s in level for t in edges[s] if t in level and level[t] >= level[s])
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
