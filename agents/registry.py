"""Agent ids -> classes: the built-ins, ``"package.module:ClassName"`` and entry points.

Third-party packages register agents under the entry-point group ``agents``
(``name = "package.module:ClassName"``). A ``"module:ClassName"`` of the user's own is
imported from the installed packages or from the folders `add_folders` named (the command
names the current folder and those given with ``--agents-from``, never a folder because a
file it reads lies there; a run's workers get the same folders). Nothing runs before the
class is known to be there: the module is found without importing it (nor its package) and,
when it is a source file, read for a class of that name first (`_load_path`), so that an id
naming a module it does not define (``"this:X"``) executes none of its code.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
import traceback
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from tradearena.agents.base import STANDARD_KEYWORDS, Agent
from tradearena.envs.errors import (
    ParameterError,
    UserError,
    did_you_mean,
    keyword_hint,
    keyword_numbers,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "Recipe",
    "add_folders",
    "describe",
    "folders",
    "make",
    "names",
    "raised",
    "resolve",
]

ENTRY_POINT_GROUP = "tradearena.agents"

BUILTIN = {
    "random": "tradearena.agents.baselines:Random",
    "hold": "tradearena.agents.baselines:Hold",
    "buy_and_hold": "tradearena.agents.baselines:BuyAndHold",
    "momentum": "tradearena.agents.baselines:MomentumAgent",
    "mean_reversion": "tradearena.agents.baselines:MeanReversion",
    "zero_intelligence": "tradearena.agents.baselines:ZeroIntelligenceAgent",
    "avellaneda_stoikov": "tradearena.agents.references:AvellanedaStoikov",
    "twap": "tradearena.agents.references:TWAP",
    "passive_twap": "tradearena.agents.references:PassiveTWAP",
    "value_agent": "tradearena.agents.references:ValueAgent",
    "alpha_as": "tradearena.agents.hybrid:AlphaAS",
    "rllib_policy": "tradearena.agents.rllib:RLlibPolicy",
    "q_learning": "tradearena.agents.tabular.q_learning:QLearning",
    "raql": "tradearena.agents.tabular.raql:RAQL",
    "averaged_q": "tradearena.agents.tabular.averaged_q:AveragedQ",
    "vql": "tradearena.agents.tabular.vql:VQL",
    "ra2q": "tradearena.agents.tabular.ra2q:RA2Q",
    "ra21q": "tradearena.agents.tabular.ra21q:RA21Q",
    "ra3q": "tradearena.agents.tabular.ra3q:RA3Q",
    "ra3q_minimax": "tradearena.agents.tabular.ra3q_minimax:RA3QMinimax",
    "dqn": "tradearena.agents.deep.dqn:DQN",
    "averaged_dqn": "tradearena.agents.deep.averaged_dqn:AveragedDQN",
    "deep_raql": "tradearena.agents.deep.raql:DeepRAQL",
    "deep_ra2q": "tradearena.agents.deep.ra2q:DeepRA2Q",
    "deep_ra3q": "tradearena.agents.deep.ra3q:DeepRA3Q",
}
"""Built-in registry ids and where their classes live."""


def _plugins() -> dict[str, Any]:
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def names() -> list[str]:
    """Registry ids: the built-ins, then installed ``agents`` entry points."""
    return list(BUILTIN) + sorted(set(_plugins()) - set(BUILTIN))


_FOLDERS: list[str] = []
"""The folders `add_folders` added to ``sys.path``, in order."""


def add_folders(*paths: str | Path) -> None:
    """Let ``"module:ClassName"`` ids import modules from the folders ``paths`` too (each
    made absolute and appended to ``sys.path`` once)."""
    for path in paths:
        folder = str(Path(path).resolve())
        if folder not in _FOLDERS:
            _FOLDERS.append(folder)
        if folder not in sys.path:
            sys.path.append(folder)


def folders() -> tuple[str, ...]:
    """The folders `add_folders` added, in order (absolute)."""
    return tuple(_FOLDERS)


def raised(cls: type, error: BaseException) -> str:
    """What ``error``, raised by the code of the class ``cls``, says: its type and message
    and, where the class's module appears in its traceback, the method, file and line
    (``"RuntimeError in __init__ (my_agents.py, line 4): boom"``)."""
    where = ""
    module = sys.modules.get(cls.__module__)
    source = getattr(module, "__file__", None)
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == source]
    if frames:
        frame = frames[-1]
        where = f" in {frame.name} ({Path(frame.filename).name}, line {frame.lineno})"
    return f"{type(error).__name__}{where}: {error}"


def _load_path(path: str) -> Any:
    """The object ``path`` (``"package.module:Name"``) names, its module imported only once
    it is found (`_find_spec`, which imports nothing) and, for a source file, read to bind
    ``Name`` to a class, an import or an assignment (`_bound_names`); else `UserError`."""
    module_name, _, attr = path.partition(":")
    if not all(part.isidentifier() for part in module_name.split(".")) or not attr.isidentifier():
        raise UserError(
            f"cannot load agent {path!r}: expected 'package.module:ClassName' (names joined by "
            "dots, no path: save the module in the folder you run from, or name its folder "
            "with --agents-from)"
        )
    if module_name not in sys.modules:
        _check_source(path, module_name, attr)
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise UserError(f"cannot load agent {path!r}: {error}") from None
    except Exception as error:  # noqa: BLE001 - the module's own code failed on import
        raise UserError(
            f"cannot load agent {path!r}: importing {module_name} raised "
            f"{type(error).__name__}: {error}"
        ) from error
    if not hasattr(module, attr):
        public = [n for n in dir(module) if not n.startswith("_")]
        hint = did_you_mean(attr, public)
        raise UserError(f"cannot load agent {path!r}: {module_name} has no {attr!r}{hint}")
    return getattr(module, attr)


def _check_source(path: str, module_name: str, attr: str) -> None:
    """`UserError` unless the module of the id ``path`` is found among the installed
    packages and the folders searched and, when it is a source file, its top level binds
    ``attr`` otherwise than by a ``def``: all of it said before any of its code runs."""
    spec = _find_spec(module_name)
    if spec is None:
        searched = ", ".join(_FOLDERS) or "no folder of your own"
        raise UserError(
            f"cannot load agent {path!r}: no module {module_name!r} among the installed "
            f"packages or in the folders searched ({searched}); save it as "
            f"{module_name.replace('.', '/')}.py in the folder you run from, or name its "
            "folder with --agents-from"
        )
    source = spec.origin or ""
    if not source.endswith(".py"):
        return  # compiled or built in: nothing to read
    try:
        names = _bound_names(Path(source))
    except SyntaxError as error:
        where = f"{Path(error.filename or source).name}, line {error.lineno}"
        raise UserError(f"cannot load agent {path!r}: {where}: {error.msg}") from None
    except (OSError, ValueError) as error:
        raise UserError(f"cannot load agent {path!r}: cannot read {source}: {error}") from None
    if names is None:
        return  # a star import or a module __getattr__: the module itself must say
    if names.get(attr) == "def":
        raise UserError(f"cannot load agent {path!r}: {attr} is a function, not a class")
    if attr not in names:
        hint = did_you_mean(attr, [n for n in names if not n.startswith("_")])
        raise UserError(f"cannot load agent {path!r}: {module_name} has no {attr!r}{hint}")


def _find_spec(name: str) -> importlib.machinery.ModuleSpec | None:
    """Where the module ``name`` would be imported from, found the way ``import`` finds it
    but without executing anything: a dotted name's packages are looked into, not imported
    (`importlib.util.find_spec` would import them). None when it is nowhere."""
    parent, _, _ = name.rpartition(".")
    if not parent or parent in sys.modules:
        try:
            return importlib.util.find_spec(name)
        except (ImportError, ValueError):
            return None
    outer = _find_spec(parent)
    if outer is None or outer.submodule_search_locations is None:
        return None
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        spec = find(name, outer.submodule_search_locations) if find else None
        if spec is not None:
            return spec
    return None


def _bound_names(source: Path) -> dict[str, str] | None:
    """The names the top level of the Python file ``source`` binds, each with how ("class",
    "def" or "other": an assignment or an import), read without running it (the bodies of
    top-level ``if``, ``try`` and ``with`` blocks included); None when it cannot tell (a star
    import, a module ``__getattr__``)."""
    names: dict[str, str] = {}
    pending = list(ast.parse(source.read_bytes(), filename=str(source)).body)
    while pending:
        node = pending.pop(0)
        if isinstance(node, ast.ClassDef):
            names[node.name] = "class"
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if node.name == "__getattr__":
                return None
            names[node.name] = "def"
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                if alias.name == "*":
                    return None
                names[alias.asname or alias.name.partition(".")[0]] = "other"
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names |= {n.id: "other" for n in ast.walk(target) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.If | ast.Try | ast.With):
            pending += [*node.body, *getattr(node, "orelse", []), *getattr(node, "finalbody", [])]
            pending += [n for handler in getattr(node, "handlers", []) for n in handler.body]
    return names


def resolve(name: str) -> type[Agent]:
    """The agent class of a registry id, an entry point or ``"package.module:ClassName"``."""
    if name in BUILTIN:
        cls = _load_path(BUILTIN[name])
    elif ":" in name:
        cls = _load_path(name)
    else:
        plugins = _plugins()
        if name not in plugins:
            raise UserError(
                f"unknown agent {name!r}{did_you_mean(name, names())}; known ids: {names()}, "
                "or 'package.module:ClassName'"
            )
        cls = plugins[name].load()
    if not (isinstance(cls, type) and issubclass(cls, Agent)):
        raise UserError(f"agent {name!r} resolves to {cls!r}, not a subclass of agents.Agent")
    return cls


@dataclass(frozen=True)
class Recipe:
    """How `make` built an agent: its id and every keyword given (standard ones included,
    taken or not), kept as the agent's ``recipe`` so that `Agent.save` can record them."""

    id: str
    keywords: dict[str, Any]


def make(name: str, **params: Any) -> Agent:
    """A new agent: ``resolve(name)(**params)``, with its `Recipe` as ``agent.recipe``. The
    `STANDARD_KEYWORDS` (``observation_space``, ``action_space``, ``seed``, ``market_spec``)
    are passed only to agents that take them (`Agent.takes`); ValueError for an unknown id or
    parameter, or a number that is not finite or not of the kind the class declares
    (`envs.errors.keyword_numbers`)."""
    cls = resolve(name)
    taken = {k: v for k, v in params.items() if k not in STANDARD_KEYWORDS or k in cls.takes}
    try:
        keyword_numbers(cls, taken)
    except ParameterError as error:
        raise UserError(f"agent {name!r}: {error}") from None
    try:
        agent = cls(**taken)
    except TypeError as error:
        raise UserError(f"agent {name!r}: {error}{keyword_hint(error, cls)}") from None
    except ValueError:
        raise
    except Exception as error:  # noqa: BLE001 - the agent's own code: named, in one line
        raise UserError(f"agent {name!r}: {raised(cls, error)}") from error
    object.__setattr__(agent, "recipe", Recipe(name, dict(params)))  # frozen dataclasses too
    return agent


def describe() -> dict[str, str]:
    """Registry id -> one-line description."""
    return {name: resolve(name).description for name in names()}
