"""The compiled modules' stubs (a ``.pyi`` beside each public ``.pyx``) say what the compiled
modules hold: the API reference reads a compiled module from its stub, so a stub that drifts
documents a function that is not there.

Each stub is run as Python (its bodies are ``...``) and compared with the compiled module:
the names it defines are the module's ``__all__``; its constants have the module's values;
its functions and methods the compiled ones' parameters (names, kinds, defaults), read with
`inspect` (Cython's functions are introspectable); its classes the compiled classes' public
members (methods, properties, public attributes). A compiled class's constructor
(``__cinit__`` or ``__init__`` of a ``cdef class``) shows no signature, so it is checked by
calling: with every parameter of the stub's ``__init__`` named, the call fails, if it
fails, on a value and not on a name (Cython's argument errors name the count or the name).
The docstrings live in the ``.pyx`` (docs/compiled_docstrings.py copies them onto the stubs
for the reference), so a stub gives none but its attributes'.
"""

from __future__ import annotations

import ast
import enum
import importlib
import inspect
import re
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted(
    path
    for folder in ("envs", "agents")
    for path in (ROOT / folder).rglob("*.pyx")
    if not path.name.startswith("_")
)
"""Every public compiled module's source."""
ARGUMENT_ERROR = re.compile(
    r"unexpected keyword argument|takes (exactly|at least|at most) \d+ positional|"
    r"needs keyword-only argument|missing \d+ required"
)
"""What a call's TypeError says when the parameters named do not fit the signature."""


def module_of(source: Path) -> types.ModuleType:
    """The compiled module built from ``source``, by its installed name."""
    parts = source.relative_to(ROOT).with_suffix("").parts
    return importlib.import_module(".".join(("tradearena", *parts)))


def stub_tree(source: Path) -> ast.Module:
    return ast.parse(source.with_suffix(".pyi").read_text())


def stub_of(source: Path) -> dict:
    """The stub beside ``source``, run: its names and their values."""
    namespace: dict = {"__name__": f"stub_{source.stem}"}
    exec(compile(stub_tree(source), str(source.with_suffix(".pyi")), "exec"), namespace)
    return namespace


def defined(tree: ast.Module | ast.ClassDef) -> list[str]:
    """The public names a stub's module or class body defines (functions, classes, names
    assigned or annotated), in order."""
    names = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.AnnAssign | ast.Assign):
            targets = [node.target] if isinstance(node, ast.AnnAssign) else node.targets
            names += [t.id for t in targets if isinstance(t, ast.Name)]
    return [name for name in names if not name.startswith("_")]


def parameters(function) -> list[tuple]:
    """(name, kind, default) of each of ``function``'s parameters."""
    return [(p.name, p.kind, p.default) for p in inspect.signature(function).parameters.values()]


def public_members(cls: type) -> set[str]:
    """The public names a compiled class defines itself (methods, properties, attributes)."""
    return {name for name in vars(cls) if not name.startswith("_")}


def constructor_error(cls: type, names: list[str]) -> str | None:
    """What a call of ``cls`` with each of ``names`` as a keyword (a value of no use) says
    about its arguments, or None when it fails on something else or not at all."""
    try:
        cls(**{name: object() for name in names})
    except TypeError as error:
        return str(error) if ARGUMENT_ERROR.search(str(error)) else None
    except Exception:  # a value refused: the names fit
        return None
    return None


def test_every_public_compiled_module_has_a_stub():
    """Eleven compiled modules are public; each has its stub, and no stub stands alone."""
    assert len(SOURCES) == 11
    assert [s for s in SOURCES if not s.with_suffix(".pyi").exists()] == []
    stubs = [p for f in ("envs", "agents") for p in (ROOT / f).rglob("*.pyi")]
    assert sorted(s.with_suffix(".pyx") for s in stubs) == SOURCES


@pytest.mark.parametrize("source", SOURCES, ids=lambda s: s.stem)
def test_the_stub_defines_the_modules_names_and_constants(source):
    """The stub's public names are the compiled module's ``__all__``, and each constant has
    the compiled module's value."""
    compiled, stub = module_of(source), stub_of(source)
    names = defined(stub_tree(source))
    assert sorted(names) == sorted(compiled.__all__)
    for name in names:
        if not isinstance(stub[name], type | types.FunctionType):
            assert stub[name] == getattr(compiled, name), name


@pytest.mark.parametrize("source", SOURCES, ids=lambda s: s.stem)
def test_the_stubs_functions_take_the_compiled_parameters(source):
    """Each function of the stub takes the compiled function's parameters, in order, of the
    same kinds and defaults."""
    compiled, stub = module_of(source), stub_of(source)
    for name in defined(stub_tree(source)):
        if isinstance(stub[name], types.FunctionType):
            assert parameters(stub[name]) == parameters(getattr(compiled, name)), name


@pytest.mark.parametrize("source", SOURCES, ids=lambda s: s.stem)
def test_the_stubs_classes_have_the_compiled_members(source):
    """Each class of the stub defines the compiled class's public members (an enumeration its
    members, with their values), each method with the compiled method's parameters, the
    dunder methods it names too; its constructor takes the compiled constructor's
    parameters (compared, or by calling where the compiled class shows none)."""
    compiled, stub = module_of(source), stub_of(source)
    classes = [n for n in stub_tree(source).body if isinstance(n, ast.ClassDef)]
    for node in classes:
        ours, theirs = stub[node.name], getattr(compiled, node.name)
        if issubclass(theirs, enum.Enum):
            assert [(m.name, m.value) for m in ours] == [(m.name, m.value) for m in theirs]
            continue
        assert set(defined(node)) == public_members(theirs), node.name
        for name, value in vars(ours).items():
            if not isinstance(value, types.FunctionType) or name == "__init__":
                continue
            if name.startswith("__"):  # a slot (``__len__``): the compiled class defines it
                assert name in vars(theirs), (node.name, name)
            else:
                assert parameters(value) == parameters(getattr(theirs, name)), (node.name, name)
        if "__init__" not in vars(ours):
            continue
        init = vars(theirs).get("__init__")
        if hasattr(init, "__code__"):  # a Python class of the module: its signature shows
            assert parameters(vars(ours)["__init__"]) == parameters(init), node.name
            continue
        names = [p[0] for p in parameters(vars(ours)["__init__"])[1:]]
        assert constructor_error(theirs, names) is None, node.name
        assert constructor_error(theirs, [*names, "not_a_parameter"]) is not None, node.name


@pytest.mark.parametrize("source", SOURCES, ids=lambda s: s.stem)
def test_a_stub_documents_only_attributes(source):
    """The stub's module, classes and functions carry no docstring: theirs are the compiled
    module's, written once in the ``.pyx``."""
    tree = stub_tree(source)
    documented = [
        getattr(node, "name", "module")
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef)
        and ast.get_docstring(node) is not None
    ]
    assert documented == []


@pytest.mark.parametrize("source", SOURCES, ids=lambda s: s.stem)
def test_the_compiled_module_documents_what_its_stub_names(source):
    """The compiled module, each of its classes and functions and each method of a class
    has a docstring for the reference to copy onto the stub."""
    compiled, stub = module_of(source), stub_of(source)
    undocumented = [] if compiled.__doc__ else ["module"]
    for name in defined(stub_tree(source)):
        value = getattr(compiled, name)
        if isinstance(stub[name], type | types.FunctionType) and not value.__doc__:
            undocumented.append(name)
        if isinstance(stub[name], type) and not issubclass(value, enum.Enum):
            members = [(m, v) for m, v in vars(value).items() if not m.startswith("_")]
            undocumented += [f"{name}.{m}" for m, v in members if callable(v) and not v.__doc__]
    assert undocumented == []


def test_the_constructor_check_sees_a_wrong_name():
    """The check by calling: a name the constructor does not take, or one missing, is an
    argument error; the right names with values of no use are not."""
    from tradearena.envs.simulator.flow import Flow

    assert constructor_error(Flow, ["programs", "handlers"]) is None
    assert "unexpected keyword argument" in constructor_error(Flow, ["programs", "handler"])
    assert "takes exactly 2 positional" in constructor_error(Flow, ["programs"])
