"""Experiment files: TOML read, checked against a schema, defaults filled in.

Every mistake a user can make in a file (an unknown key, a wrong type, a value out of range,
an unknown agent or trader, a missing data file) raises `ConfigError` naming the file, the
line and the field, before any work is done::

    configs/x.toml, line 14: agents[1].id: unknown agent 'raq'; known ids: [...]

The checked config is plain data (dicts, lists, numbers, strings): jobs carry it to workers.
"""

from __future__ import annotations

import inspect
import math
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["ConfigError", "KINDS", "load_config", "parse_config", "trader_classes"]

KINDS = ("compare", "robustness", "tournament")


class ConfigError(ValueError):
    """An experiment file that cannot be run; the message names file, line and field."""


@dataclass(frozen=True)
class Field:
    """One key of a table: its type, default (``REQUIRED`` if none) and allowed values."""

    type: type | tuple[type, ...]
    default: Any
    check: Callable[[Any], bool] | None = None
    rule: str = ""  # what ``check`` asks, for the message ("> 0", "one of ...")


REQUIRED = object()
ANY_TABLE = object()  # a free-form table (agent parameters): passed on as given


def _positive(x: Any) -> bool:
    return x > 0


def _non_negative(x: Any) -> bool:
    return x >= 0


def _one_of(*choices: str) -> tuple[Callable[[Any], bool], str]:
    return (lambda x: x in choices), f"one of {list(choices)}"


MARKET = {
    "population": Field(str, "rmsc04", *_one_of("rmsc04", "light")),
    "traders": Field(list, []),  # explicit background (or, with tape = "synthetic", the
    # population the day is recorded from); replaces `population`
    "tape": Field(str, ""),
    "tape_seed": Field(int, 0, _non_negative, ">= 0"),
    "n_steps": Field(int, 390, _positive, "> 0"),
    "day_steps": Field(int, 390, _positive, "> 0 steps of a recorded synthetic day"),
    "step_seconds": Field((int, float), 60.0, _positive, "> 0 seconds"),
    "position_limit": Field(int, 1_000, _positive, "> 0 shares"),
    "fee_per_share": Field((int, float), 0.0, _non_negative, ">= 0 dollars"),
    "tick_size": Field((int, float), 0.01, _positive, "> 0 dollars"),
    "reward_scale": Field((int, float), 0.01, _positive, "> 0"),
    "actions": Field(str, "trade", *_one_of("trade", "quote")),
    "order_size": Field(int, 100, _positive, "> 0 shares"),
    "extra_zi": Field(int, 0, _non_negative, ">= 0"),
}
AGENT = {
    "id": Field(str, REQUIRED),
    "label": Field(str, ""),
    "params": Field(dict, ANY_TABLE),
}
PERTURBATION = {
    "name": Field(str, REQUIRED),
    "type": Field(str, REQUIRED, *_one_of("adversary", "zi")),
    "mode": Field(str, "takeover", *_one_of("takeover", "trader")),
    "p": Field((int, float), 0.2, lambda x: 0 <= x <= 1, "in [0, 1]"),
    "source": Field(str, ""),
    "n_agents": Field(int, 50, _positive, "> 0"),
}
TOURNAMENT = {
    "players": Field(int, 4, _positive, "> 0 seats"),
    "mode": Field(str, "train-in-profile", *_one_of("train-in-profile", "pretrained")),
    "payoff": Field(str, "sharpe", *_one_of("sharpe", "pnl")),
    "sharpe_floor": Field((int, float), 0.01, _positive, "> 0 dollars"),
    "weighting": Field(str, "tuyls", *_one_of("tuyls", "focal")),
}
TOP = {
    "kind": Field(str, REQUIRED, *_one_of(*KINDS)),
    "name": Field(str, ""),
    "seeds": Field(int, 3, _positive, "> 0"),
    "root_seed": Field(int, 0, _non_negative, ">= 0"),
    "market": Field(dict, MARKET),
    "training": Field(dict, {"episodes": Field(int, 10, _non_negative, ">= 0")}),
    "testing": Field(dict, {"episodes": Field(int, 5, _positive, "> 0")}),
    "agents": Field(list, AGENT),
    "perturbations": Field(list, PERTURBATION),
    "tournament": Field(dict, TOURNAMENT),
    "output": Field(dict, {"dir": Field(str, ""), "figures": Field(bool, True)}),
}


def trader_classes() -> dict[str, type]:
    """Background trader types a config may name in ``[[market.traders]]``."""
    from envs.traders import MarketMaker, Momentum, Noise, ZeroIntelligence

    return {c.__name__: c for c in (ZeroIntelligence, Noise, Momentum, MarketMaker)}


def load_config(path: str | Path, overrides: dict | None = None) -> dict[str, Any]:
    """Read and check an experiment file; `ConfigError` names what is wrong and where.

    ``overrides`` (nested like the file, e.g. ``{"seeds": 1, "training": {"episodes": 2}}``)
    replace values of the file before it is checked; the config then records the merged file
    (comments dropped) as its text."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as error:
        raise ConfigError(f"{path}: cannot read the experiment file: {error.strerror}") from None
    if overrides:
        import tomli_w

        try:
            text = tomli_w.dumps(_merge(tomllib.loads(text), overrides))
        except tomllib.TOMLDecodeError as error:
            raise ConfigError(f"{path}: not valid TOML: {error}") from None
    return parse_config(text, source=str(path), base=path.parent)


def _merge(base: dict, overrides: dict) -> dict:
    """``base`` with ``overrides`` applied, tables merged key by key."""
    out = dict(base)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def parse_config(
    text: str, *, source: str = "<config>", base: Path | None = None, complete: bool = True
) -> dict:
    """Check the TOML ``text`` of an experiment; relative data paths resolve against ``base``
    (default: the working directory). With ``complete=False`` only the schema is checked and
    the defaults filled (agents are not loaded, data files not looked for): reading a
    finished run's config."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{source}: not valid TOML: {error}") from None
    where = _Locator(text, source)
    config = _table(raw, TOP, (), where)
    for spec in config["agents"]:
        spec["label"] = spec["label"] or spec["id"].rpartition(":")[2]
    config["output"]["dir"] = config["output"]["dir"] or f"runs/{config['name'] or config['kind']}"
    if complete:
        _check_semantics(config, where, base or Path.cwd())
    config["source_text"] = text
    return config


def _table(raw: dict, schema: dict[str, Field], path: tuple, where: _Locator) -> dict:
    unknown = sorted(set(raw) - set(schema))
    if unknown:
        near = _close(unknown[0], schema)
        raise where.error(path + (unknown[0],), f"unknown key{near}; allowed: {sorted(schema)}")
    out = {}
    for key, field in schema.items():
        here = path + (key,)
        if key not in raw:
            if field.default is REQUIRED:
                raise where.error(path, f"missing required key {key!r}")
            if isinstance(field.default, dict) and field.type is dict:
                out[key] = _table({}, field.default, here, where)
            elif field.default is ANY_TABLE:
                out[key] = {}
            else:
                out[key] = [] if isinstance(field.default, dict) else field.default
            continue
        out[key] = _value(raw[key], field, here, where)
    return out


def _value(value: Any, field: Field, path: tuple, where: _Locator) -> Any:
    expected = field.type if isinstance(field.type, tuple) else (field.type,)
    if isinstance(value, bool) and bool not in expected or not isinstance(value, expected):
        names = " or ".join(_TYPE_NAMES.get(t, t.__name__) for t in expected)
        raise where.error(path, f"expected {names}, got {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise where.error(path, f"expected a finite number, got {value!r}")
    if field.check is not None and not field.check(value):
        raise where.error(path, f"must be {field.rule}, got {value!r}")
    if isinstance(field.default, dict):  # a table, or an array of tables
        if field.type is dict:
            return _table(value, field.default, path, where)
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                raise where.error(path + (i,), f"expected a table, got {item!r}")
        return [_table(item, field.default, path + (i,), where) for i, item in enumerate(value)]
    return value


def _check_semantics(config: dict, where: _Locator, base: Path) -> None:
    """What the schema cannot say: agents resolve, data files exist, parts fit the kind."""
    import agents

    if not config["agents"]:
        raise where.error(("kind",), "an experiment needs at least one [[agents]] table")
    labels = []
    for i, spec in enumerate(config["agents"]):
        try:
            agents.resolve(spec["id"])
        except ValueError as error:
            raise where.error(("agents", i, "id"), str(error)) from None
        _check_agent_builds(spec, config["market"], ("agents", i, "params"), where)
        labels.append(spec["label"])
    for i, label in enumerate(labels):
        if label in labels[:i]:
            raise where.error(
                ("agents", i, "label"), f"agent labels must be distinct, got {labels}"
            )

    market = config["market"]
    classes = trader_classes()
    for i, spec in enumerate(market["traders"]):
        if not isinstance(spec, dict) or spec.get("type") not in classes:
            got = spec.get("type") if isinstance(spec, dict) else spec
            raise where.error(
                ("market", "traders", i, "type"), f"must be one of {sorted(classes)}, got {got!r}"
            )
        params = {k: v for k, v in spec.items() if k != "type"}
        _check_params(classes[spec["type"]], params, ("market", "traders", i), where)
    if market["tape"] and market["tape"] != "synthetic":
        tape = Path(market["tape"]).expanduser()
        tape = tape if tape.is_absolute() else base / tape
        if not tape.is_file():
            raise where.error(("market", "tape"), f"no such message file: {tape}")
        market["tape"] = str(tape)

    kind = config["kind"]
    if config["perturbations"] and kind != "robustness":
        raise where.error(
            ("perturbations", 0), f"perturbations belong to kind 'robustness', not {kind!r}"
        )
    if kind == "tournament" and len(config["agents"]) < 2:
        raise where.error(("kind",), "a tournament needs at least two strategies ([[agents]])")
    if kind == "robustness":
        if not config["perturbations"]:
            raise where.error(("kind",), "a robustness experiment needs [[perturbations]]")
        for i, p in enumerate(config["perturbations"]):
            if p["type"] == "adversary":
                sources = [s["label"] for s in config["agents"] if _has_adversary(s["id"])]
                p["source"] = p["source"] or (sources[0] if sources else "")
                if p["source"] not in sources:
                    raise where.error(
                        ("perturbations", i, "source"),
                        f"must name an agent that trains an adversary (e.g. ra3q); "
                        f"candidates: {sources}",
                    )


def _has_adversary(agent_id: str) -> bool:
    import agents

    return hasattr(agents.resolve(agent_id), "adversary_policy")


def _check_agent_builds(spec: dict, market: dict, path: tuple, where: _Locator) -> None:
    """The agent can be made with its parameters (in the market's spaces)."""
    import agents
    from evaluation.rollout import build_agent, observation_kind, spaces_of

    observation_space, action_space = spaces_of(
        market, observation_kind(agents.resolve(spec["id"]))
    )
    try:
        build_agent(spec, observation_space, action_space, seed=0)
    except (TypeError, ValueError) as error:
        raise where.error(path, str(error)) from None


def _check_params(cls: type, params: dict, path: tuple, where: _Locator) -> None:
    """Parameters must be keywords the class accepts (unless it takes ``**kwargs``)."""
    signature = inspect.signature(cls)
    accepts_any = any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values())
    if accepts_any:
        return
    allowed = [n for n, p in signature.parameters.items() if p.kind is not p.VAR_POSITIONAL]
    for key in params:
        if key not in allowed:
            raise where.error(
                path + (key,), f"{cls.__name__} takes no parameter {key!r}; it takes {allowed}"
            )


def _close(key: str, schema: dict) -> str:
    from difflib import get_close_matches

    match = get_close_matches(key, list(schema), n=1)
    return f" (did you mean {match[0]!r}?)" if match else ""


_TYPE_NAMES = {
    int: "an integer",
    float: "a number",
    str: "a string",
    bool: "true or false",
    list: "an array",
    dict: "a table",
}


class _Locator:
    """Finds the line of a field in the TOML text, for messages.

    It follows table headers (``[a.b]``, ``[[agents]]`` counted per array) and ``key =``
    lines; a field inside an inline table is reported at the line of the inline table.
    """

    _HEADER = re.compile(r"^\s*(\[\[?)\s*([A-Za-z0-9_.\-\"' ]+?)\s*\]\]?\s*(#.*)?$")
    _KEY = re.compile(r"^\s*([A-Za-z0-9_\-]+|\"[^\"]*\")\s*=")

    def __init__(self, text: str, source: str) -> None:
        self.source = source
        self.lines: list[tuple[tuple, int]] = []  # (path, line number)
        table: tuple = ()
        counts: dict[tuple, int] = {}
        for number, line in enumerate(text.splitlines(), start=1):
            header = self._HEADER.match(line)
            if header:
                names = tuple(part.strip().strip("\"'") for part in header.group(2).split("."))
                if header.group(1) == "[[":
                    counts[names] = counts.get(names, -1) + 1
                    table = self._indexed(names, counts)
                else:
                    table = self._indexed(names, counts)
                self.lines.append((table, number))
                continue
            key = self._KEY.match(line)
            if key:
                self.lines.append((table + (key.group(1).strip('"'),), number))

    @staticmethod
    def _indexed(names: tuple, counts: dict[tuple, int]) -> tuple:
        """``("market", "traders")`` -> ``("market", "traders", i)`` for arrays of tables."""
        out: tuple = ()
        for name in names:
            out += (name,)
            if out in counts:
                out += (counts[out],)
        return out

    def line(self, path: tuple) -> int | None:
        best, best_len = None, -1
        for where, number in self.lines:
            n = 0
            while n < min(len(where), len(path)) and where[n] == path[n]:
                n += 1
            if n == len(where) and n > best_len:
                best, best_len = number, n
        return best

    def error(self, path: tuple, message: str) -> ConfigError:
        dotted = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")
        line = self.line(path)
        at = f"{self.source}, line {line}" if line else self.source
        return ConfigError(f"{at}: {dotted or 'top level'}: {message}")
