"""A learned flow's parameter files: a JSON file (its kind, the format's version, scalars and
the name of its arrays file) and a numpy ``.npz`` of arrays beside it, read and written
whole.

Reading checks the files as files: regular files only (no directory, device or FIFO), the
JSON an object of the expected kind and version, its arrays file a plain name in the same
folder, the ``.npz`` a real one with no pickled objects, only the arrays the model reads
read (each header first), every array real and numeric, nothing larger than `MAX_BYTES`
(a file, or what its arrays hold). What the values mean is the model's to check
(`learned_flow.model.check`). Every error is one `LearnedFlowError` naming the file and,
where it is one, the field. Writing goes to temporary files renamed when both are complete,
so that a failed write leaves the files there before, or none.
"""

from __future__ import annotations

import json
import math
import stat
import zipfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any

import numpy as np

from tradearena.envs.errors import UserError, replacing, together

__all__ = ["MAX_BYTES", "READ", "VERSION", "LearnedFlowError", "kind_of", "parts", "read", "write"]

VERSION = 3
"""The parameter files' format: 3 names the tapes learned from by their content
(`envs.data.load.TapeIdentity`); 2, still read, by their paths."""
READ = (2, VERSION)
"""The formats read."""
MAX_BYTES = 1 << 30
"""The largest parameter file (JSON or arrays) read, bytes."""
_KINDS = {"events": "tradearena learn --model events", "neural": "tradearena learn --model neural"}
"""The kinds of parameter file, and the command that writes each."""


class LearnedFlowError(UserError):
    """A tape, model or parameter file a learned flow cannot use; the message names it."""


def write(
    path: Path, kind: str, scalars: Mapping[str, Any], arrays: Mapping[str, np.ndarray]
) -> Path:
    """Write ``path`` (JSON: ``kind``, the version, ``scalars`` and the arrays file's name)
    and ``path``'s stem + ``.npz`` beside it (``arrays``), both or neither; returns
    ``path``."""
    path = Path(path)
    npz = path.with_suffix(".npz")
    if npz == path:
        raise LearnedFlowError(f"{path}: a parameter file must not be named .npz")
    document = {"kind": kind, "version": VERSION, "arrays": npz.name, **scalars}
    with together():
        with replacing(npz) as temporary:
            np.savez(temporary, **{k: np.asarray(v) for k, v in arrays.items()})
        with replacing(path) as temporary:
            temporary.write_text(json.dumps(document, indent=2, default=_plain) + "\n")
    return path


def _plain(value: object) -> object:
    """A numpy scalar as the number JSON writes."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not a JSON value")


def kind_of(path: str | Path) -> str | None:
    """The kind of the parameter file ``path`` ("events" or "neural"), or None when it is not
    a readable one."""
    try:
        return _document(Path(path)).get("kind")
    except LearnedFlowError:
        return None


def parts(path: str | Path) -> list[Path]:
    """The files a parameter file consists of: itself, its arrays and, for a neural flow, its
    base model's files, each a regular file beside it (checked as `read` checks them, without
    reading the arrays)."""
    path = Path(path)
    document = _document(path)
    out = [path, _regular(beside(path, document, "arrays"))]
    if document.get("kind") == "neural":  # its base model: an events flow's file
        base = beside(path, document, "base")
        if base.resolve() == path.resolve() or kind_of(base) != "events":
            raise LearnedFlowError(
                f"{path}: 'base' must name an events flow's file beside it, got "
                f"{document['base']!r}"
            )
        out += parts(base)
    return out


def read(
    path: Path, kind: str, wanted: Callable[[str], bool]
) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The scalars (the JSON) and the ``wanted`` arrays (float64; those whose names it
    accepts, the others never read) of the parameter file ``path`` of ``kind``, checked as
    the module docstring says."""
    path = Path(path)
    document = _document(path)
    found = (document.get("kind"), document.get("version"))
    if found[0] != kind or found[1] not in READ:
        raise LearnedFlowError(
            f"{path}: a {found[0]} flow of format {found[1]}; expected {kind}, format "
            f"{' or '.join(map(str, READ))}"
        )
    return _current(document), _arrays(path, field(path, document, "arrays", str), wanted)


def _current(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` as the current format reads it: format 2's tapes, paths (``meta.tape``,
    ``meta.tapes``), as their names alone."""
    meta = document.get("meta")
    if document["version"] == VERSION or not isinstance(meta, dict):
        return document
    meta = dict(meta)
    paths = meta.pop("tapes", [meta["tape"]] if meta.get("tape") else [])
    meta.pop("tape", None)
    if paths:
        meta["tapes"] = [{"name": Path(str(p)).name} for p in paths]
    return {**document, "version": VERSION, "meta": meta}


def field(path: Path, document: Mapping[str, Any], name: str, kind: type | tuple[type, ...]) -> Any:
    """``document[name]``, of type ``kind`` (a number finite), else a `LearnedFlowError`
    naming ``path`` and the field."""
    if name not in document:
        raise LearnedFlowError(f"{path}: no field {name!r}")
    value = document[name]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    number = float in kinds or int in kinds
    ok = isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)
    if ok and number and isinstance(value, int | float) and not math.isfinite(value):
        ok = False
    if not ok:
        wanted = " or ".join(k.__name__ for k in kinds)
        shown = (
            json.dumps(value)
            if isinstance(value, int | float | str | None)
            else type(value).__name__
        )
        raise LearnedFlowError(f"{path}: {name} must be a finite {wanted}, got {shown}")
    return value


def beside(path: Path, document: Mapping[str, Any], name: str) -> Path:
    """The file the field ``name`` of ``path``'s JSON names: a plain file name in ``path``'s
    folder (no folders, no ``..``)."""
    given = field(path, document, name, str)
    if not given or Path(given).name != given or given in (".", ".."):
        raise LearnedFlowError(f"{path}: {name!r} must name a file beside it, got {given!r}")
    return path.parent / given


def _regular(path: Path) -> Path:
    """``path`` when it is a regular file of at most `MAX_BYTES`, else a `LearnedFlowError`."""
    try:
        status = path.stat()
    except OSError as error:
        reason = "no such file" if isinstance(error, FileNotFoundError) else error.strerror
        raise LearnedFlowError(
            f"{path}: {reason} (`{' or '.join(_KINDS.values())}` writes one)"
        ) from None
    if not stat.S_ISREG(status.st_mode):
        raise LearnedFlowError(f"{path}: not a regular file")
    if status.st_size > MAX_BYTES:
        raise LearnedFlowError(f"{path}: {status.st_size:,} bytes, more than {MAX_BYTES:,}")
    return path


def _document(path: Path) -> dict[str, Any]:
    """The JSON object of ``path``."""
    try:
        document = json.loads(_regular(path).read_bytes())
    except (OSError, ValueError, RecursionError) as error:  # RecursionError: nested too deep
        raise LearnedFlowError(f"{path}: not a learned flow's parameter file ({error})") from None
    if not isinstance(document, dict):
        raise LearnedFlowError(f"{path}: not a learned flow's parameter file (not a JSON object)")
    return document


def _arrays(path: Path, name: str, wanted: Callable[[str], bool]) -> dict[str, np.ndarray]:
    """The ``wanted`` arrays of the ``.npz`` the JSON ``path`` names ``name``, as float64:
    each member's header read first (its type real, what it holds, with the members read
    before, at most `MAX_BYTES`), so that a header claiming more is refused before any of it
    is read, and a member not wanted is never read."""
    npz = _regular(beside(path, {"arrays": name}, "arrays"))
    out: dict[str, np.ndarray] = {}
    left = MAX_BYTES
    try:
        with zipfile.ZipFile(npz) as archive:
            for info in archive.infolist():
                key = info.filename.removesuffix(".npy")
                if not wanted(key):
                    continue
                with archive.open(info) as member:
                    shape, dtype = _header(member)
                if dtype.kind not in "iuf":
                    raise LearnedFlowError(
                        f"{npz}: {key} must hold real numbers, got dtype {dtype}"
                    )
                size = math.prod(shape) * dtype.itemsize
                if size > left:
                    raise LearnedFlowError(
                        f"{npz}: {key} holds {math.prod(shape):,} numbers of {dtype.itemsize} "
                        f"bytes, more than the {MAX_BYTES:,} bytes a parameter file may hold"
                    )
                left -= size
                with archive.open(info) as member:
                    out[key] = np.lib.format.read_array(member, allow_pickle=False).astype(
                        np.float64
                    )
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, KeyError) as error:
        if isinstance(error, LearnedFlowError):
            raise
        raise LearnedFlowError(f"{npz}: not a numpy .npz of arrays ({error})") from None
    return out


def _header(member: IO[bytes]) -> tuple[tuple[int, ...], np.dtype]:
    """The shape and type an ``.npy`` stream's header declares (ValueError when it is none)."""
    version = np.lib.format.read_magic(member)
    if version == (1, 0):
        shape, _, dtype = np.lib.format.read_array_header_1_0(member)
    elif version == (2, 0):
        shape, _, dtype = np.lib.format.read_array_header_2_0(member)
    else:
        raise ValueError(f"an .npy of format {version}")
    return shape, dtype
