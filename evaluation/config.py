"""Experiment files: TOML read, checked against a schema, defaults filled in.

Every mistake a user can make in a file (an unknown key, a wrong type, a value out of range,
an unknown agent or trader, a missing data file) raises `ConfigError` naming the file, the
line and the field, before any work is done::

    configs/x.toml, line 14: agents[1].id: unknown agent 'raq' (did you mean 'raql'?); ...

The ``[market]`` table holds the fields of `envs.spec.MarketSpec`, with its defaults (its
task's market for the fields the task defaults). An agent is labelled in the tables by its
``label``, else by its class's ``name`` (a registry id's own). A ``"module:ClassName"`` agent
is imported from the folder the command runs in or the file's folder (``agent_folders``, which
the jobs carry to the workers). The checked config is plain data (dicts, lists, numbers,
strings): jobs carry it to workers. The tables that only the experiment machinery reads are
checked into small typed sections once (`evaluation.schema.Training`, `Testing`,
`Tournament`, `Perturbation`, `Output`, whose defaults are the schema's below) and read by
attribute afterwards.
"""

from __future__ import annotations

import dataclasses
import os
import re
import tomllib
from pathlib import Path
from typing import Any

import tomli_w

from tradearena import agents
from tradearena.agents.base import Agent
from tradearena.agents.saving import read_header
from tradearena.envs.errors import ParameterError, UserError, not_one_of
from tradearena.envs.simulator.traders import TRADERS, build_trader
from tradearena.envs.spec import SYNTHETIC, MarketSpec, SpecError
from tradearena.evaluation.kinds import KINDS
from tradearena.evaluation.rollout import build_agent
from tradearena.evaluation.schema import (
    ANY_TABLE,
    REQUIRED,
    SECTIONS,
    ConfigError,
    Field,
    Locator,
    Perturbation,
    check_table,
    non_negative,
    one_of,
    positive,
)
from tradearena.evaluation.trained import load_saved, saved_source

__all__ = ["ConfigError", "config_text", "load_config", "load_market", "merge", "parse_config"]

_MARKET_TYPES: dict[str, type | tuple[type, ...]] = {
    "population": str,
    "traders": list,  # explicit background tables {type = "ZeroIntelligence", ...}
    "tape": str,  # a LOBSTER message file, a converted directory, or "synthetic"
    "tape_format": str,
    "tape_seed": int,
    "queue": str,
    "queue_power": (int, float),
    "extra_zi": int,
    "n_steps": int,
    "day_steps": int,
    "step_seconds": (int, float),
    "open_time": (int, float),
    "warmup_seconds": (int, float),
    "tick_size": (int, float),
    "initial_price": int,
    "position_limit": int,
    "fee_per_share": (int, float),
    "task": str,
    "actions": str,
    "order_size": int,
    "reward_scale": (int, float),
    "inventory_penalty": (int, float),
    "parent_order": int,
    "signal_noise": (int, float),
    "windows": list,
    "depth_levels": int,
    "order_latency": (int, float, dict),  # seconds, or a model table (envs.simulator.latency)
    "feed_latency": (int, float),
}
"""The TOML types of the `MarketSpec` fields an experiment file may set."""
_DEFAULTS = {f.name: f.default for f in dataclasses.fields(MarketSpec)}
MARKET = {name: Field(kind, _DEFAULTS[name]) for name, kind in _MARKET_TYPES.items()}
"""The ``[market]`` table: `MarketSpec`'s fields and defaults; values are checked by it."""
AGENT = {
    "id": Field(str, REQUIRED),
    "label": Field(str, ""),
    "params": Field(dict, ANY_TABLE),
    "from": Field(str, ""),  # a saved agent, or a run's agents/<label> (seed-<n> per seed)
    "train": Field(bool, True),  # false: frozen, only tested
}
PERTURBATION = {
    "name": Field(str, REQUIRED),
    "type": Field(str, REQUIRED, *one_of("adversary", "zi")),
    "mode": Field(str, "takeover", *one_of("takeover", "trader")),
    "p": Field((int, float), 0.2, lambda x: 0 <= x <= 1, "in [0, 1]"),
    "source": Field(str, ""),
    "n_agents": Field(int, 50, positive, "> 0"),
}
TOURNAMENT = {
    "players": Field(int, 4, positive, "> 0 seats"),
    "mode": Field(str, "train-in-profile", *one_of("train-in-profile", "pretrained")),
    "payoff": Field(str, "sharpe", *one_of("sharpe", "pnl")),
    "sharpe_floor": Field((int, float), 0.01, positive, "> 0 dollars"),
    "weighting": Field(str, "tuyls", *one_of("tuyls", "focal")),
}
TOP = {
    "kind": Field(str, REQUIRED, *one_of(*KINDS)),
    "name": Field(str, ""),
    "seeds": Field(int, 3, positive, "> 0"),
    "root_seed": Field(int, 0, non_negative, ">= 0"),
    "market": Field(dict, MARKET),
    "training": Field(
        dict,
        {
            "episodes": Field(int, 10, non_negative, ">= 0"),
            "evaluate_every": Field(int, 0, non_negative, ">= 0 episodes (0: never)"),
            "evaluate_episodes": Field(int, 10, positive, "> 0"),
            "sessions": Field(int, 1, positive, "> 0 sessions played at once"),
            "checkpoint_every": Field(int, 0, non_negative, ">= 0 episodes (0: never)"),
        },
    ),
    "testing": Field(dict, {"episodes": Field(int, 5, positive, "> 0")}),
    "agents": Field(list, AGENT),
    "perturbations": Field(list, PERTURBATION),
    "tournament": Field(dict, TOURNAMENT),
    "output": Field(dict, {"dir": Field(str, ""), "figures": Field(bool, True)}),
}
OPTIONAL_SECTIONS = ("perturbations",)

"""Tables that only some kinds read (`SECTIONS` of the kind's module)."""


def load_config(path: str | Path, overrides: dict | None = None) -> dict[str, Any]:
    """Read and check an experiment file; `ConfigError` names what is wrong and where.

    ``overrides`` (nested like the file, e.g. ``{"seeds": 1, "training": {"episodes": 2}}``)
    replace values of the file before it is checked; the config then records the merged file
    (comments dropped) as its text. A tape file among them (``{"market": {"tape": ...}}``) is
    the caller's: relative to the current folder, not to the file's."""
    path = Path(path)
    return parse_config(config_text(path, overrides), source=str(path), base=path.parent)


def config_text(path: str | Path, overrides: dict | None = None) -> str:
    """The TOML text of the experiment file at ``path`` with ``overrides`` applied (see
    `load_config`), unchecked."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as error:
        raise ConfigError(f"{path}: cannot read the experiment file: {error.strerror}") from None
    tape = (overrides or {}).get("market", {}).get("tape")
    if tape and tape != SYNTHETIC and "$" not in tape:
        overrides = merge(overrides, {"market": {"tape": os.path.abspath(Path(tape).expanduser())}})
    if overrides:
        try:
            text = tomli_w.dumps(merge(tomllib.loads(text), overrides))
        except tomllib.TOMLDecodeError as error:
            raise ConfigError(f"{path}: not valid TOML: {error}") from None
    return text


def load_market(path: str | Path) -> MarketSpec:
    """The `MarketSpec` of a TOML file's ``[market]`` table (an experiment file, or a file of
    that table alone), checked as `load_config` checks it; tape paths resolve against the
    file's folder. `ConfigError` names what is wrong and where."""
    path = Path(path)
    try:
        text = path.read_text()
        raw = tomllib.loads(text)
    except OSError as error:
        raise ConfigError(f"{path}: cannot read the market file: {error.strerror}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML: {error}") from None
    where = Locator(text, str(path))
    market = check_table(raw.get("market", {}), MARKET, ("market",), where)
    return _check_market(market, where, path.parent)


def merge(base: dict, overrides: dict) -> dict:
    """``base`` with ``overrides`` applied, tables merged key by key."""
    out = dict(base)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
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
    where = Locator(text, source)
    config = check_table(raw, TOP, (), where)
    config["output"]["dir"] = config["output"]["dir"] or f"runs/{config['name'] or config['kind']}"
    for key, section in SECTIONS.items():
        config[key] = section(**config[key])
    config["perturbations"] = [Perturbation(**table) for table in config["perturbations"]]
    if complete:
        base = base or Path.cwd()
        config["agent_folders"] = list(dict.fromkeys([os.getcwd(), str(base.resolve())]))
        agents.add_folders(*config["agent_folders"])
        named = _check_semantics(config, where, base)
        if named:  # labels the text must carry, so that a finished run reads as it ran
            for i, label in named.items():
                raw["agents"][i]["label"] = label
            text = tomli_w.dumps(raw)
    for spec in config["agents"]:
        spec["label"] = spec["label"] or spec["id"].rpartition(":")[2]
    config["source_text"] = text
    return config


def _check_semantics(config: dict, where: Locator, base: Path) -> dict[int, str]:
    """What the schema cannot say: the market is usable, agents resolve and build in it, data
    files exist, the parts fit the kind. Labels the agents given none; returns those labels
    (by index) that differ from the id's last part, the label a finished run's file gives."""
    if not config["agents"]:
        raise where.error(("kind",), "an experiment needs at least one [[agents]] table")
    market = _check_market(config["market"], where, base)
    labels, named = [], {}
    for i, spec in enumerate(config["agents"]):
        try:
            cls = agents.resolve(spec["id"])
        except ValueError as error:
            raise where.error(("agents", i, "id"), str(error)) from None
        if not spec["label"]:
            spec["label"] = cls.name if cls.name != Agent.name else cls.__name__
            if spec["label"] != spec["id"].rpartition(":")[2]:
                named[i] = spec["label"]
        if spec["from"]:
            _check_saved(spec, market, config["seeds"], ("agents", i), where, base)
        else:
            try:
                build_agent(spec, market, seed=0)
            except (TypeError, ValueError) as error:
                raise where.error(("agents", i, "params"), str(error)) from None
        labels.append(spec["label"])
    for i, label in enumerate(labels):
        if label in labels[:i]:
            raise where.error(
                ("agents", i, "label"), f"agent labels must be distinct, got {labels}"
            )
    kind = KINDS[config["kind"]]
    for section in OPTIONAL_SECTIONS:
        if config[section] and section not in kind.SECTIONS:
            owners = " or ".join(repr(n) for n, k in KINDS.items() if section in k.SECTIONS)
            raise where.error(
                (section, 0), f"{section} belong to kind {owners}, not {config['kind']!r}"
            )
    kind.check(config, where)
    return named


def _check_saved(
    spec: dict, market: MarketSpec, seeds: int, path: tuple, where: Locator, base: Path
) -> None:
    """An agent table with ``from``: the saved agent of every seed index loads (this build
    wrote it, it is the table's ``id``, it fits this market); ``from`` made absolute
    (resolved against ``base``); no ``params`` (the saved ones are kept)."""
    if spec["params"]:
        raise where.error(path + ("params",), "an agent loaded with from keeps its saved params")
    source = Path(spec["from"]).expanduser()
    spec["from"] = str(source if source.is_absolute() else base / source)
    for seed in range(seeds):
        try:
            saved = read_header(saved_source(spec["from"], seed))["id"]
            if saved != spec["id"]:
                raise UserError(f"{saved_source(spec['from'], seed)} holds {saved!r}")
            load_saved(spec, market, seed)
        except UserError as error:
            raise where.error(path + ("from",), str(error)) from None


def _check_market(market: dict, where: Locator, base: Path) -> MarketSpec:
    """The market table as a `MarketSpec`: traders take their parameters, the tape file (or
    a converted directory, or a recording's directory) exists (resolved against ``base``,
    or against the current folder when an environment variable gave it, as ``--set``
    does), every value is one the spec accepts."""
    for i, spec in enumerate(market["traders"]):
        if not isinstance(spec, dict) or spec.get("type") not in TRADERS:
            got = spec.get("type") if isinstance(spec, dict) else spec
            raise where.error(("market", "traders", i, "type"), not_one_of(got, sorted(TRADERS)))
        try:
            build_trader(spec["type"], {k: v for k, v in spec.items() if k != "type"})
        except ParameterError as error:
            raise where.error(("market", "traders", i, *error.path), error.reason) from None
    if market["tape"] and market["tape"] != SYNTHETIC:
        tape = Path(_expanded(market["tape"], where)).expanduser()
        given = Path.cwd() if "$" in market["tape"] else base  # a variable's: from here
        tape = tape if tape.is_absolute() else given / tape
        if not tape.exists():
            raise where.error(("market", "tape"), f"no such file or directory: {tape}")
        market["tape"] = str(tape)
    try:
        return MarketSpec(**market)
    except SpecError as error:
        raise where.error(("market", *error.path), error.reason) from None


def _expanded(tape: str, where: Locator) -> str:
    """``tape`` with its environment variables (``$NAME`` or ``${NAME}``) replaced; one that
    is not set is a `ConfigError` saying how to give the file."""
    expanded = os.path.expandvars(tape)
    unset = re.search(r"\$\{?(\w+)", expanded)
    if unset:
        raise where.error(
            ("market", "tape"),
            f"{tape!r} names the environment variable {unset.group(1)}, which is not set: set "
            "it to a LOBSTER message file, or give the file with --set market.tape=FILE "
            "(`tradearena data` says where such files come from)",
        )
    return expanded
