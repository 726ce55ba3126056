"""Saving and loading agents: `save` (`Agent.save`) writes a directory, `load` (`agents.load`)
builds the agent back from it; reading runs no code.

A saved agent is a directory of two files:

- ``agent.json``: the save format and tradearena versions; the registry id and keywords the
  agent was built with (`agents.make`: parameters, seed, observation and action spaces, the
  `MarketSpec` table); the seat's view of that market (`seat_view`: action set, features or
  tabular bins); the values of `Agent.state_dict` that are not arrays (counters, generator
  states, configs), with the name, shape and dtype of every array; the ``left_out`` state keys
  and the saver's ``notes`` (e.g. episodes trained).
- ``arrays.npz``: the state's numpy arrays by key (tables, network weights, Adam moments, the
  replay buffer unless left out), read with ``allow_pickle=False``.

`load` builds a fresh agent with `agents.make` and restores the
state with `Agent.load_state_dict`: the loaded agent acts and trains on exactly as the saved
one would. Nothing here knows an agent's state keys: whatever `Agent.state_dict` lists is
saved.
Problems are `SavedAgentError`\\s naming the file: another version (`VersionError`), state
that does not fit the agent (`StateError`), a market the agent was not made for
(`MarketMismatchError`).
"""

from __future__ import annotations

import json
import math
import shutil
import zipfile
from collections.abc import Callable, Iterable, Mapping
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from gymnasium import spaces

from tradearena.agents.base import MAX_ARRAY_BYTES
from tradearena.agents.registry import make, names
from tradearena.envs.data.tapes import Tape
from tradearena.envs.errors import UserError
from tradearena.envs.simulator.features import feature_names
from tradearena.envs.spec import OBSERVATIONS, MarketSpec

if TYPE_CHECKING:
    from tradearena.agents.base import Agent

__all__ = [
    "FORMAT",
    "MarketMismatchError",
    "SavedAgentError",
    "StateError",
    "VersionError",
    "episodes_trained",
    "load",
    "project_version",
    "read_header",
    "read_state",
    "save",
    "seat_view",
    "write_state",
]

FORMAT = 1
"""The layout of ``agent.json`` and ``arrays.npz`` this build writes and reads."""
HEADER, ARRAYS = "agent.json", "arrays.npz"
REPLAY = "buffer"
"""A state key with a part of this name (``"buffer.observations"``,
``"protagonist.buffer.pos"``) belongs to a replay memory, which ``save(buffer=False)`` leaves
out."""


class SavedAgentError(UserError):
    """A saved agent that cannot be written or read as asked; the message names the file."""


class VersionError(SavedAgentError):
    """The file was saved by another tradearena version or save format."""


class StateError(SavedAgentError):
    """The saved state does not fit the agent: missing, unknown or mis-shaped arrays or keys,
    or arrays holding NaN or infinity."""


class MarketMismatchError(SavedAgentError):
    """The agent was saved from a seat whose actions or observations differ from this one's."""


def project_version() -> str:
    """The installed tradearena version ("unknown" when run from a source tree only)."""
    try:
        return version("tradearena")
    except PackageNotFoundError:
        return "unknown"


# ----------------------------------------------------------------------------- plain values
def _encode(value: Any, where: str) -> Any:
    """``value`` as JSON data: tuples, numpy scalars and Discrete / Box spaces tagged so that
    `_decode` gives them back equal; SavedAgentError naming ``where`` for anything else."""
    if value is None or isinstance(value, bool | str | int | float):
        return value
    if isinstance(value, np.generic):
        return _encode(value.item(), where)
    if isinstance(value, tuple):
        return {"__tuple__": [_encode(v, where) for v in value]}
    if isinstance(value, list):
        return [_encode(v, where) for v in value]
    if isinstance(value, Mapping):
        if not all(isinstance(k, str) for k in value):
            raise SavedAgentError(f"{where}: a dict with keys other than strings cannot be saved")
        return {k: _encode(v, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, spaces.Discrete):
        return {"__space__": "Discrete", "n": int(value.n), "start": int(value.start)}
    if isinstance(value, spaces.Box):
        low, high = value.low.tolist(), value.high.tolist()
        return {"__space__": "Box", "low": low, "high": high, "dtype": str(value.dtype)}
    kind = "an array inside another value" if isinstance(value, np.ndarray) else type(value)
    raise SavedAgentError(f"{where}: {kind} cannot be saved (arrays, plain values and spaces)")


def _decode(data: dict) -> Any:
    """The `json.loads` object hook undoing `_encode`'s tags."""
    if "__tuple__" in data:
        return tuple(data["__tuple__"])
    if data.get("__space__") == "Discrete":
        return spaces.Discrete(data["n"], start=data["start"])
    if data.get("__space__") == "Box":
        dtype = np.dtype(data["dtype"])
        low, high = np.array(data["low"], dtype), np.array(data["high"], dtype)
        return spaces.Box(low, high, dtype=dtype)
    return data


def _read_json(path: Path) -> dict:
    """The JSON object of ``path`` (tags decoded); `SavedAgentError` naming the file for one
    that is missing, not JSON, or not an object."""
    try:
        data = json.loads(path.read_text(), object_hook=_decode)
    except FileNotFoundError:
        raise SavedAgentError(f"{path.parent}: no saved agent here ({path.name} missing)") from None
    except (ValueError, KeyError, TypeError, RecursionError) as error:  # or nested too deep
        raise SavedAgentError(f"{path}: not a saved agent's file: {error}") from None
    if not isinstance(data, dict):
        raise SavedAgentError(f"{path}: not a saved agent's file: a JSON {type(data).__name__}")
    return data


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


_HEADER_FIELDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "id": (lambda v: isinstance(v, str) and bool(v), 'a registry id or "module:Class"'),
    "observation": (lambda v: v in OBSERVATIONS, f"one of {list(OBSERVATIONS)}"),
    "seed": (lambda v: v is None or _whole(v), "a non-negative integer or null"),
    "observation_space": (lambda v: v is None or isinstance(v, spaces.Space), "a space or null"),
    "action_space": (lambda v: v is None or isinstance(v, spaces.Space), "a space or null"),
    "params": (lambda v: isinstance(v, dict), "an object of keywords"),
    "market_spec": (lambda v: v is None or isinstance(v, dict), "a market table or null"),
    "view": (lambda v: v is None or isinstance(v, dict), "an object or null"),
    "left_out": (
        lambda v: isinstance(v, list) and all(isinstance(k, str) for k in v),
        "a list of state keys",
    ),
    "notes": (lambda v: isinstance(v, dict), "an object"),
    "state": (lambda v: isinstance(v, dict), "an object of plain values"),
    "arrays": (lambda v: isinstance(v, dict), "an object of {shape, dtype} by key"),
}
"""The fields of ``agent.json`` after its versions, and what each must be."""


def _check_fields(path: Path, header: Mapping[str, Any], fields: Iterable[str]) -> None:
    """`SavedAgentError` naming the file and the first of ``fields`` that is missing or not
    what `_HEADER_FIELDS` asks."""
    for field in fields:
        if field not in header:
            raise SavedAgentError(f"{path}: {field}: missing")
        ok, rule = _HEADER_FIELDS[field]
        if not ok(header[field]):
            raise SavedAgentError(f"{path}: {field}: must be {rule}, got {header[field]!r}")


def _listed(path: Path, key: str, entry: Any) -> tuple[tuple[int, ...], np.dtype]:
    """(shape, dtype) of ``arrays[key]`` in the ``agent.json`` at ``path``; `StateError`
    unless it is a shape of whole numbers and a dtype of numbers (no objects) whose array
    takes at most `MAX_ARRAY_BYTES`."""
    where = f"{path}: arrays.{key}"
    shape, dtype = (
        (entry.get(k) for k in ("shape", "dtype")) if isinstance(entry, dict) else ((), None)
    )
    if not isinstance(shape, list) or not all(map(_whole, shape)) or not isinstance(dtype, str):
        raise StateError(f"{where}: expected {{shape: [n, ...], dtype: str}}, got {entry!r}")
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        raise StateError(f"{where}: {entry['dtype']!r} is not a dtype") from None
    if dtype.hasobject:
        raise StateError(f"{where}: arrays of objects are not read (they would be unpickled)")
    n_bytes = math.prod(shape) * dtype.itemsize
    if n_bytes > MAX_ARRAY_BYTES:
        raise StateError(
            f"{where}: {shape} of {dtype.str} would take {n_bytes / 2**30:,.1f} GiB, more than "
            f"the {MAX_ARRAY_BYTES // 2**30} GiB one array of an agent may"
        )
    return tuple(shape), dtype


# ----------------------------------------------------------------------------- state files
def write_state(
    directory: str | Path, state: Mapping[str, Any], header: Mapping[str, Any] | None = None
) -> None:
    """Write ``state`` (an `Agent.state_dict`) into the existing ``directory``: its arrays to
    ``arrays.npz``, everything else with ``header`` to ``agent.json``."""
    directory = Path(directory)
    arrays = {k: v for k, v in state.items() if isinstance(v, np.ndarray)}
    plain = {k: v for k, v in state.items() if not isinstance(v, np.ndarray)}
    with zipfile.ZipFile(directory / ARRAYS, "w") as archive:
        for key, array in arrays.items():
            if array.dtype.hasobject:
                raise SavedAgentError(f"state_dict[{key!r}]: arrays of objects cannot be saved")
            with archive.open(f"{key}.npy", "w", force_zip64=True) as file:
                contiguous = np.require(array, requirements="C")  # keeps 0-d arrays 0-d
                np.lib.format.write_array(file, contiguous, allow_pickle=False)
    listing = {k: {"shape": list(v.shape), "dtype": v.dtype.str} for k, v in arrays.items()}
    data = {**(header or {}), "state": plain, "arrays": listing}
    text = json.dumps(_encode(data, "state_dict"), indent=1, allow_nan=True)
    (directory / HEADER).write_text(text + "\n")


def read_state(
    directory: str | Path, template: Mapping[str, Any] | None = None, owner: str = "the agent"
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(header, state) of a directory `write_state` wrote; `StateError` naming the arrays
    that are missing, unknown or not of the shape and dtype the header lists. With a
    ``template`` (the `Agent.state_dict` of ``owner``, built to receive the state), the listed
    arrays must be its arrays, of its dtypes and shapes (a replay memory's, its rows aside),
    before anything is read; every array's own header is checked against the listing, and its
    size in the archive against both, before its data are read."""
    directory = Path(directory)
    header = _read_json(directory / HEADER)
    _check_fields(directory / HEADER, {"state": {}, "arrays": {}, **header}, ("state", "arrays"))
    listing = {
        key: _listed(directory / HEADER, key, entry)
        for key, entry in header.pop("arrays", {}).items()
    }
    state = dict(header.pop("state", {}))
    path = directory / ARRAYS
    if template is not None:
        _check_fits(path, listing, template, owner)
    return header, {**state, **_read_arrays(path, listing)}


def _check_fits(
    path: Path,
    listing: Mapping[str, tuple[tuple[int, ...], np.dtype]],
    template: Mapping,
    owner: str,
) -> None:
    """`StateError` unless every listed array is one of ``template``'s arrays, of its dtype
    and shape (a replay memory's, or one empty in the template: of its row's shape, any number
    of rows, `MAX_ARRAY_BYTES` bounding them)."""
    for key, (shape, dtype) in listing.items():
        expected = template.get(key)
        if not isinstance(expected, np.ndarray):
            raise StateError(
                f"{path}: the saved state does not fit {owner}: it has no array {key!r}"
            )
        # a replay memory's rows, or an array that grows from empty (an optimizer's moments)
        rows = REPLAY in key.split(".") or expected.shape[:1] == (0,)
        fits = shape[1:] == expected.shape[1:] if rows else shape == expected.shape
        fits = fits and len(shape) == expected.ndim
        if not fits or dtype != expected.dtype:
            raise StateError(
                f"{path}: the saved state does not fit {owner}: {key!r} is listed as {dtype.str} "
                f"shape {shape}, expected {expected.dtype.str} shape {expected.shape}"
            )


def _read_arrays(
    path: Path, listing: Mapping[str, tuple[tuple[int, ...], np.dtype]]
) -> dict[str, np.ndarray]:
    """The arrays of the archive at ``path``, each read only once its own header says it is
    the array ``listing`` names and the archive holds exactly its bytes (nothing larger is
    inflated); never unpickling."""
    try:
        with zipfile.ZipFile(path) as archive:
            entries = {info.filename.removesuffix(".npy"): info for info in archive.infolist()}
            found = {key: _array_header(archive, info) for key, info in entries.items()}
            missing, unknown = sorted(set(listing) - set(found)), sorted(set(found) - set(listing))
            if missing or unknown:
                raise StateError(f"{path}: missing arrays {missing}, unknown arrays {unknown}")
            arrays = {}
            for key, (shape, fortran, dtype, offset) in found.items():
                if (shape, dtype) != listing[key]:
                    raise StateError(
                        f"{path}: {key!r} is {dtype.str} {list(shape)}, {HEADER} says "
                        f"{listing[key][1].str} {list(listing[key][0])}"
                    )
                n_bytes = math.prod(shape) * dtype.itemsize
                if entries[key].file_size != offset + n_bytes:
                    raise StateError(
                        f"{path}: {key!r} holds {entries[key].file_size:,} bytes, not the "
                        f"{offset + n_bytes:,} of a {dtype.str} {list(shape)} array"
                    )
                with archive.open(entries[key]) as file:
                    file.read(offset)
                    flat = np.frombuffer(file.read(n_bytes), dtype=dtype).copy()
                arrays[key] = flat.reshape(shape[::-1]).T if fortran else flat.reshape(shape)
                _check_finite(path, key, arrays[key])
    except FileNotFoundError:
        raise StateError(f"{path}: missing") from None
    except StateError:
        raise
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as error:
        raise StateError(f"{path}: not readable without unpickling: {error}") from None
    return arrays


def _check_finite(path: Path, key: str, array: np.ndarray) -> None:
    """`StateError` naming ``path`` and the array ``key`` when ``array`` holds a NaN or an
    infinity (a table or network that diverged: it would act on garbage)."""
    if array.dtype.kind in "fc" and not np.isfinite(array).all():
        where = tuple(int(i) for i in np.argwhere(~np.isfinite(array))[0])
        raise StateError(
            f"{path}: {key!r} holds {array[where]} at index {list(where)}; a saved agent's "
            "numbers must be finite (was it saved after its values diverged?)"
        )


def _array_header(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo
) -> tuple[tuple[int, ...], bool, np.dtype, int]:
    """(shape, Fortran order, dtype, bytes before the data) from the npy header of an entry
    of ``archive``, its data unread; ValueError for an array of objects or another format."""
    headers = {1: np.lib.format.read_array_header_1_0, 2: np.lib.format.read_array_header_2_0}
    with archive.open(info) as file:
        major, _ = np.lib.format.read_magic(file)
        if major not in headers:
            raise ValueError(f"{info.filename}: npy format {major}, not 1 or 2")
        shape, fortran, dtype = headers[major](file)
        if dtype.hasobject:
            raise ValueError(f"{info.filename} is an array of objects")
        return shape, fortran, dtype, file.tell()


# ----------------------------------------------------------------------------- the market
def seat_view(spec: MarketSpec, observation: str) -> dict[str, Any]:
    """What a seat of ``spec`` reading ``observation`` ("features" or "tabular") acts on and
    sees: the action set and its size, the feature names, and for tabular seats the bins of
    each feature. Two markets with equal views can seat the same agent."""
    view: dict[str, Any] = {
        "actions": spec.action_set,
        "n_actions": int(spec.action_space.n),
        "observation": observation,
        "features": feature_names(spec.windows, spec.signal),
    }
    if observation == "tabular":
        view["bins"] = {k: list(v) for k, v in spec.state_discretizer().bins.items()}
    return view


def _market_table(spec: MarketSpec | None) -> dict[str, Any] | None:
    """The `MarketSpec` as its plain table, or None when it holds objects (a `Tape`, traders
    given as objects) rather than data."""
    if spec is None or isinstance(spec.tape, Tape) or not all(map(_is_table, spec.traders)):
        return None
    return spec.to_table()


def _is_table(trader: Any) -> bool:
    return isinstance(trader, Mapping)


# ----------------------------------------------------------------------------- save / load
def save(
    agent: Any,
    path: str | Path,
    *,
    buffer: bool = True,
    notes: Mapping[str, Any] | None = None,
) -> Path:
    """Write ``agent`` (an `agents.Agent` built by `agents.make` or `agents.load`: its
    ``recipe`` says how) to the directory ``path``, replacing a saved agent there; returns the
    path. ``buffer=False`` leaves the replay memory out (the loaded agent acts the same, but
    learns on from an empty memory). ``notes``: plain data kept in the header (the engine
    writes ``episodes_trained``)."""
    recipe = getattr(agent, "recipe", None)  # an tradearena.agents.registry.Recipe
    if recipe is None:
        raise SavedAgentError(
            f"{type(agent).__name__} was not built by agents.make: build it with "
            "agents.make(id, ...) (or agents.load) to save it"
        )
    keywords = dict(recipe.keywords)
    market = keywords.pop("market_spec", None)
    if market is not None and _market_table(market) is None and "market_spec" in type(agent).takes:
        raise SavedAgentError(
            f"{recipe.id}: its MarketSpec holds objects (a Tape or traders), not data: give "
            "the tape as a path and the traders as tables to save it"
        )
    observation = agent.observation
    state = agent.state_dict()
    left_out = [] if buffer else sorted(k for k in state if REPLAY in k.split("."))
    header = {
        "format": FORMAT,
        "tradearena": project_version(),
        "id": recipe.id,
        "observation": observation,
        "seed": keywords.pop("seed", None),
        "observation_space": keywords.pop("observation_space", None),
        "action_space": keywords.pop("action_space", None),
        "params": keywords,
        "market_spec": _market_table(market),
        "view": None if market is None else seat_view(market, observation),
        "left_out": left_out,
        "notes": dict(notes or {}),
    }
    kept = {k: v for k, v in state.items() if k not in left_out}
    return _replace_directory(Path(path), lambda tmp: write_state(tmp, kept, header))


def _replace_directory(path: Path, write: Callable[[Path], None]) -> Path:
    """Write a directory through ``write`` into a sibling, then put it in place of ``path``
    (which must be missing, empty, or a saved agent), so that readers never see half of it."""
    if path.exists() and any(path.iterdir()) and not (path / HEADER).exists():
        raise SavedAgentError(f"{path}: exists and is not a saved agent; choose a new directory")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp, old = (path.with_name(f".{path.name}.{part}") for part in ("writing", "replaced"))
    for stale in (tmp, old):
        shutil.rmtree(stale, ignore_errors=True)
    tmp.mkdir()
    write(tmp)
    if path.exists():
        path.rename(old)
    tmp.rename(path)
    shutil.rmtree(old, ignore_errors=True)
    return path


def read_header(path: str | Path) -> dict[str, Any]:
    """The header of the saved agent at ``path`` (``agent.json`` without the state), after
    checking its versions: `VersionError` unless this build wrote it."""
    file = Path(path) / HEADER
    header = _read_json(file)
    saved = (header.get("format"), header.get("tradearena"))
    if saved != (FORMAT, project_version()):
        raise VersionError(
            f"{file}: saved by tradearena {saved[1]} (format {saved[0]}); this "
            f"is tradearena {project_version()} (format {FORMAT}): load it with that version"
        )
    _check_fields(file, header, _HEADER_FIELDS)
    kept = [key for key in header["left_out"] if REPLAY not in key.split(".")]
    if kept:
        raise SavedAgentError(
            f"{file}: left_out: {kept} are not a replay memory's ({REPLAY!r}) keys: only those "
            "may be left out of a saved agent"
        )
    for key in ("state", "arrays"):
        header.pop(key, None)
    return header


def episodes_trained(path: str | Path) -> int:
    """The training episodes the saved agent at ``path`` had (its notes' ``episodes_trained``,
    0 when not noted)."""
    episodes = read_header(path)["notes"].get("episodes_trained", 0)
    if not _whole(episodes):
        raise SavedAgentError(
            f"{Path(path) / HEADER}: notes.episodes_trained: must be a non-negative integer, "
            f"got {episodes!r}"
        )
    return episodes


def load(
    path: str | Path, *, custom: Iterable[str] = (), market: MarketSpec | None = None
) -> Agent:
    """The agent saved at ``path``, built with `agents.make` and restored to its saved state.

    ``custom``: the ``"module:Class"`` ids that may be imported (a file naming another one is
    refused); registered ids always may. ``market``: the market the agent will sit in; it is
    built for that market (its spec and spaces), and `MarketMismatchError` names what differs
    when the seat's actions or observations are not those it was saved from. Errors:
    `VersionError`, `StateError`, `SavedAgentError` (all naming the file)."""
    path = Path(path)
    header = read_header(path)
    agent_id = header["id"]
    if agent_id not in names() and agent_id not in set(custom):
        raise SavedAgentError(
            f"{path}: saved agent {agent_id!r} is not a registered id; pass it in custom= "
            "(a config names it as the agent's id) to import its module"
        )
    standard = {
        "seed": header["seed"],
        "observation_space": header["observation_space"],
        "action_space": header["action_space"],
    }
    saved_market = header["market_spec"]
    if market is not None:
        here = {
            "observation_space": market.observation_space(header["observation"]),
            "action_space": market.action_space,
        }
        saved, now = header["view"], seat_view(market, header["observation"])
        if saved is None:  # saved from no market: its spaces are what it was made for
            saved = {k: v for k, v in standard.items() if k in here and v is not None}
            now = {k: here[k] for k in saved}
        if saved != now:
            raise MarketMismatchError(
                f"{path}: {agent_id} was saved from a seat with other actions or observations "
                f"than this market's: saved {'; '.join(_differences(saved, now))}"
            )
        standard |= {**here, "market_spec": market}
    elif saved_market is not None:
        try:
            standard["market_spec"] = MarketSpec(**saved_market)
        except (TypeError, ValueError) as error:
            raise SavedAgentError(f"{path / HEADER}: market_spec: {error}") from None
    keywords = {k: v for k, v in standard.items() if v is not None}
    try:
        agent = make(agent_id, **header["params"], **keywords)
    except (TypeError, ValueError) as error:
        raise SavedAgentError(
            f"{path / HEADER}: params: {agent_id} cannot be built from them: {error}"
        ) from None
    template = agent.state_dict()
    _, state = read_state(path, template, agent_id)
    state |= {key: template[key] for key in header["left_out"] if key in template}
    try:
        agent.load_state_dict(state)
    except (ValueError, KeyError, TypeError) as error:
        raise StateError(f"{path}: the saved state does not fit {agent_id}: {error}") from None
    return agent


def _differences(saved: Mapping[str, Any], here: Mapping[str, Any]) -> list[str]:
    """``"key <saved> here <here>"`` for each key whose values differ."""
    return [
        f"{key} {saved.get(key)!r} here {here.get(key)!r}"
        for key in sorted(saved.keys() | here.keys())
        if saved.get(key) != here.get(key)
    ]
