"""The API reference's Griffe extension for the compiled modules (mkdocs.yml names it).

Griffe reads a compiled module from the stub beside its source (``book.pyi`` beside
``book.pyx``): its names, parameters and types. The docstrings are written once, in the
``.pyx``: this extension copies them onto the stub, from the compiled module, imported (the
module's, its classes', functions', methods' and properties'), and from the source (a
module attribute's, the string under its assignment). A stub gives the docstrings of the
attributes that have none in the source.
"""

from __future__ import annotations

import importlib
import inspect
import re
from typing import Any

import griffe


def _modules(module: griffe.Module) -> list[griffe.Module]:
    """``module`` and its submodules, at every depth."""
    found = [module]
    for member in module.members.values():
        if not member.is_alias and member.is_module:
            found += _modules(member)
    return found


def _document(obj: griffe.Object, doc: str | None, loader: griffe.GriffeLoader) -> None:
    """``doc`` as ``obj``'s docstring, parsed as the loader parses docstrings, unless it has
    one."""
    if obj.docstring is None and doc:
        obj.docstring = griffe.Docstring(
            inspect.cleandoc(doc),
            parent=obj,
            parser=loader.docstring_parser,
            parser_options=loader.docstring_options,
        )


def _copy(obj: griffe.Object, runtime: Any, loader: griffe.GriffeLoader) -> None:
    """The docstrings of ``runtime`` (a compiled object) and of its members on ``obj`` (its
    stub) and its members: modules, classes, functions and properties carry theirs (a
    property of a compiled class is a getset descriptor)."""
    described = obj.is_module or obj.is_class or obj.is_function
    if described or inspect.isgetsetdescriptor(runtime) or isinstance(runtime, property):
        _document(obj, getattr(runtime, "__doc__", None), loader)
    if obj.is_module or obj.is_class:
        for name, member in obj.members.items():
            if not member.is_alias and not name.startswith("_") and name in dir(runtime):
                _copy(member, inspect.getattr_static(runtime, name), loader)


def _attributes(module: griffe.Module, source: str, loader: griffe.GriffeLoader) -> None:
    """Each module attribute's docstring from ``source`` (the ``.pyx``): the string right
    under its one-line assignment."""
    for name, member in module.members.items():
        if not member.is_alias and member.is_attribute:
            found = re.search(rf'^{name} = [^\n]*\n"""(.*?)"""', source, re.M | re.S)
            _document(member, found and found.group(1), loader)


class CompiledDocstrings(griffe.Extension):
    """The compiled modules' docstrings on their stubs, once a package is loaded."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        for module in _modules(pkg):
            path = module.filepath
            if not isinstance(path, list) and path is not None and path.suffix == ".pyi":
                _copy(module, importlib.import_module(module.path), loader)
                _attributes(module, path.with_suffix(".pyx").read_text(), loader)
