"""Experiment files: TOML read once, checked against a schema, typed, defaults filled in.

Every mistake a user can make in a file (an unknown key, a wrong type, a value out of range,
an unknown agent or trader, a missing data file) raises `ConfigError` naming the file, the
line and the field, before any work is done::

    configs/x.toml, line 14: agents[1].id: unknown agent 'raq' (did you mean 'raql'?); ...

A checked file is a `Config` (`evaluation.experiment.schema`): typed, frozen sections that the
kinds, the command line and the reports read by attribute, and the file's text as run. The
``[market]`` table holds the fields of `envs.spec.MarketSpec`, with its defaults (its task's
market for the fields the task defaults), and is one. An agent is labelled in the tables by its
``label``, else by its class's ``name`` (a registry id's own). A ``"module:ClassName"`` agent is
imported from the installed packages, the folder the command runs in and the folders named to
the registry (`agents.add_folders`, the command's ``--agents-from``), never from the file's
folder (``agent_folders``, which the jobs carry to the workers).

Paths resolve against the file's folder: a tape, a saved agent (``from``), and every file a
trader names (the parameters its class declares in ``file_parameters``, say a learned flow's
``model``). Such a trader file is checked, with the files it names, before anything runs, and
a run keeps its own copy of it (`trader_files`): the text as run names the copies.
"""

from __future__ import annotations

import dataclasses
import os
import re
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import tomli_w

from tradearena import agents
from tradearena.agents.base import Agent
from tradearena.agents.saving import read_header
from tradearena.envs.errors import ParameterError, UserError, not_one_of
from tradearena.envs.simulator.traders import MAX_MEMBERS, TRADERS, build_trader
from tradearena.envs.spec import MarketSpec, SpecError, names_tape_file
from tradearena.evaluation.experiment.kinds import KINDS
from tradearena.evaluation.experiment.rollout import build_agent
from tradearena.evaluation.experiment.schema import (
    ANY_TABLE,
    FILE_NAME_RULE,
    MAX_EPISODES,
    MAX_JOBS,
    MAX_PLAYERS,
    MAX_ROUNDS,
    MAX_SEEDS,
    MAX_SESSIONS,
    REQUIRED,
    AgentEntry,
    Config,
    ConfigError,
    Field,
    LearnedFrom,
    Locator,
    Output,
    Perturbation,
    Psro,
    Role,
    Testing,
    Tournament,
    Training,
    check_table,
    file_name,
    is_file_name,
    non_negative,
    one_of,
    positive,
    within,
)
from tradearena.evaluation.experiment.trained import load_saved, saved_source

__all__ = [
    "MODELS",
    "AgentEntry",
    "Config",
    "ConfigError",
    "checked_market",
    "command_line",
    "config_tables",
    "dotted_keys",
    "load_config",
    "load_learned_from",
    "load_market",
    "market_table",
    "merge",
    "parse_config",
    "read_file",
    "read_text",
    "trader_files",
]

_MARKET_TYPES: dict[str, tuple[type | tuple[type, ...], str]] = {
    "population": (str, 'background traders: "rmsc04", "light" or "none" (None: the task\'s)'),
    "traders": (list, 'explicit background tables {type = "ZeroIntelligence", ...}, replacing it'),
    "tape": (str, 'a LOBSTER message file, a converted directory, a recording, or "synthetic"'),
    "tape_format": (str, 'the tape\'s files: "lobster", "binance", "tardis" or "l3"'),
    "tape_seed": (int, 'seed of the day a "synthetic" tape records from the population'),
    "queue": (
        str,
        'how seats move up a replayed queue: "risk_averse", "power", "log" or "optimistic"',
    ),
    "queue_power": ((int, float), 'the exponent of the "power" queue model'),
    "responsive": (bool, "the replayed tape answers the seats' trades (the responsive replay)"),
    "response_hours": (
        list,
        "[first, last] seconds after midnight its answer is estimated from (None: the tape's)",
    ),
    "response_concavity": ((int, float), "how a seat's trades add up (0.5: the square root)"),
    "extra_zi": (int, "zero-intelligence traders added to the background"),
    "n_steps": (int, "decisions per episode (None: the task's; with a tape, its whole day)"),
    "day_steps": (int, "steps of the longer day each session is a window of (None: none)"),
    "window_steps": (list, "[first, last]: the steps of that day a session may open at"),
    "step_seconds": ((int, float), "seconds between decisions"),
    "open_time": ((int, float), "seconds after midnight the session opens (None: 09:30)"),
    "warmup_seconds": ((int, float), "seconds the background trades before the seats act"),
    "tick_size": ((int, float), "dollars per tick (None: $0.01, or the tape's)"),
    "initial_price": (int, "opening price in ticks (None: 10,000, or the tape's)"),
    "position_limit": (
        int,
        "shares (lots on a tape) a seat may hold either side (None: the task's)",
    ),
    "fee_per_share": ((int, float), "dollars charged per share (lot) filled"),
    "task": (str, "the task (`tradearena tasks`): defaults the fields left None"),
    "actions": (str, 'the action set: "trade", "quote" or "make" (None: the task\'s)'),
    "order_size": (int, "shares (lots on a tape) per order"),
    "reward_scale": ((int, float), "rewards are dollars times this (None: the task's)"),
    "inventory_penalty": (
        (int, float),
        "dollars per share^2 per step off the rewards (None: the task's)",
    ),
    "parent_order": (int, "shares to acquire by the close, negative to sell (None: the task's)"),
    "signal_noise": ((int, float), "ticks: deviation of a seat's look at the fundamental"),
    "windows": (list, "return windows of the features, in steps"),
    "depth_levels": (int, "book levels the features read"),
    "order_latency": (
        (int, float, dict),
        "seconds an order takes to reach the book, or a model table (constant, lognormal, "
        "empirical)",
    ),
    "feed_latency": ((int, float), "seconds by which the seats' view of the book lags"),
}
"""The TOML types of the `MarketSpec` fields an experiment file may set, and their meaning."""
_DEFAULTS = {f.name: f.default for f in dataclasses.fields(MarketSpec)}
MARKET = {
    name: Field(kind, _DEFAULTS[name], doc=doc) for name, (kind, doc) in _MARKET_TYPES.items()
}
"""The ``[market]`` table: `MarketSpec`'s fields and defaults; values are checked by it."""
AGENT = {
    "id": Field(str, REQUIRED, doc='a registry id (`tradearena agents`) or "module:ClassName"'),
    "label": Field(
        str, "", *file_name(optional=True), doc="its name in the tables (default: the class's name)"
    ),
    "params": Field(dict, ANY_TABLE, doc="keywords of the agent's class (default: none)"),
    "from": Field(str, "", doc="a saved agent, or a run's `agents/<label>` (`seed-<n>` per seed)"),
    "train": Field(bool, True, doc="false: frozen, only tested"),
}
PERTURBATION = {
    "name": Field(str, REQUIRED, *file_name(), doc="the test condition's name in the tables"),
    "type": Field(str, REQUIRED, *one_of("adversary", "zi"), doc="an adversary, or more ZI"),
    "mode": Field(
        str, "takeover", *one_of("takeover", "trader"), doc="adversary: takes seats or trades"
    ),
    "p": Field(
        (int, float), 0.2, lambda x: 0 <= x <= 1, "in [0, 1]", doc="take-over chance per step"
    ),
    "source": Field(str, "", doc="label of the agent whose adversary acts (adversary)"),
    "n_agents": Field(int, 50, *within(1, MAX_MEMBERS), doc="extra zero-intelligence traders (zi)"),
}
TOURNAMENT = {
    "players": Field(int, 4, *within(1, MAX_PLAYERS, "seats"), doc="seats of every profile"),
    "mode": Field(
        str,
        "train-in-profile",
        *one_of("train-in-profile", "pretrained"),
        doc="a profile's agents learn together, or each learns alone once and is frozen",
    ),
    "payoff": Field(
        str, "sharpe", *one_of("sharpe", "pnl"), doc="payoffs.csv: Sharpe ratio or mean PnL"
    ),
    "sharpe_floor": Field(
        (int, float),
        0.01,
        positive,
        "> 0 dollars",
        doc="dollars: the least PnL deviation a Sharpe ratio divides by",
    ),
    "weighting": Field(
        str, "tuyls", *one_of("tuyls", "focal"), doc="expected payoffs of the dynamics"
    ),
    "roles": Field(
        dict,
        ANY_TABLE,
        doc="a role game: role -> {seats, strategies} (labels of [[agents]]); {}: one population",
    ),
    "reduced": Field(
        int,
        0,
        non_negative,
        ">= 0 players (0: the full game)",
        doc="play only the deviation-preserving reduction to this many players",
    ),
}
PSRO = {
    "learner": Field(
        dict,
        {
            "id": Field(str, "", doc="the agent id trained as each round's best response"),
            "label": Field(
                str,
                "",
                *file_name(optional=True),
                doc="its label (the round is appended: <label>_r<round>)",
            ),
            "params": Field(dict, ANY_TABLE, doc="its keyword arguments"),
        },
        doc="the learner that grows the strategy set",
    ),
    "rounds": Field(int, 3, *within(1, MAX_ROUNDS), doc="rounds at most"),
    "threshold": Field(
        (int, float),
        0.0,
        non_negative,
        ">= 0 payoff units",
        doc="a response joins when it gains more than this against the equilibrium",
    ),
}
TOP = {
    "kind": Field(str, REQUIRED, *one_of(*KINDS), doc="what the experiment runs"),
    "name": Field(
        str,
        "",
        *file_name(optional=True),
        doc="its name: the default run directory is `runs/<name>`",
    ),
    "seeds": Field(int, 3, *within(1, MAX_SEEDS), doc="repetitions, each one market randomness"),
    "root_seed": Field(int, 0, non_negative, ">= 0", doc="the seed every job's seed derives from"),
    "market": Field(dict, MARKET, doc="the market every agent plays (`envs.spec.MarketSpec`)"),
    "training": Field(
        dict,
        {
            "episodes": Field(
                int,
                10,
                *within(0, MAX_EPISODES),
                doc="per agent (0: agents that do not learn)",
            ),
            "evaluate_every": Field(
                int,
                0,
                *within(0, MAX_EPISODES, "episodes (0: never)"),
                doc="episodes between checks",
            ),
            "evaluate_episodes": Field(
                int, 10, *within(1, MAX_EPISODES), doc="greedy episodes per check"
            ),
            "sessions": Field(
                int, 1, *within(1, MAX_SESSIONS, "sessions"), doc="sessions played at once"
            ),
            "checkpoint_every": Field(
                int,
                0,
                *within(0, MAX_EPISODES, "episodes (0: never)"),
                doc="episodes between saves",
            ),
        },
        doc="how each agent (or profile) learns before it is tested",
    ),
    "testing": Field(
        dict,
        {
            "episodes": Field(
                int, 5, *within(1, MAX_EPISODES), doc="greedy test episodes per condition"
            )
        },
        doc="the greedy episodes the tables are made of",
    ),
    "agents": Field(list, AGENT, doc="the agents, one table each, in the order of the tables"),
    "perturbations": Field(list, PERTURBATION, doc="test conditions (kind robustness)"),
    "tournament": Field(dict, TOURNAMENT, doc="the empirical game (kind tournament)"),
    "psro": Field(dict, PSRO, doc="the strategy set grown by learned responses (kind psro)"),
    "output": Field(
        dict,
        {
            "dir": Field(
                str, "", doc='the run directory ("": `runs/<name or kind>`; `--out` wins)'
            ),
            "figures": Field(bool, True, doc="draw the figures"),
        },
        doc="where the run goes",
    ),
    "learned_from": Field(
        dict,
        {
            "tapes": Field(
                list,
                [],
                lambda tapes: all(isinstance(t, str) for t in tapes),
                "file names (strings)",
                doc="the files of the days learned from (their names)",
            ),
            "window": Field(
                list,
                [],
                lambda w: w == [] or _day_window(w),
                "[first, last] with 0 <= first < last <= 86400",
                doc="seconds after midnight: the part of each day learned from ([]: not said)",
            ),
        },
        doc="what the market was fitted to (`tradearena fit` writes it; the judges read it)",
    ),
}
OPTIONAL_SECTIONS = ("perturbations",)
"""Tables that only some kinds read (`SECTIONS` of the kind's module)."""
ROLE_KEYS = ("seats", "strategies")
"""The keys of one role's table (``[tournament] roles``)."""
MODELS = "models"
"""The run directory's folder of the files its traders name: the n-th (`trader_files`) in
``models/<n>/``, under its own name, beside the files it names."""


def dotted_keys(schema: dict[str, Field] = TOP, table: str = "") -> list[str]:
    """The keys of single values in an experiment file (``schema``'s), dotted by the tables
    that hold them (``seeds``, ``training.episodes``, ``market.n_steps``): what ``--set``
    replaces. Arrays of tables (``[[agents]]``) are left out."""
    keys = []
    for key, field in schema.items():
        name = f"{table}.{key}" if table else key
        if field.type is dict and isinstance(field.default, dict):
            keys += dotted_keys(field.default, name)
        elif not isinstance(field.default, dict):
            keys.append(name)
    return keys


def load_config(
    path: str | Path,
    overrides: dict | None = None,
    *,
    prepare: Callable[[Output], None] | None = None,
) -> Config:
    """Read and check an experiment file; `ConfigError` names what is wrong and where.

    ``overrides`` (nested like the file, e.g. ``{"seeds": 1, "training": {"episodes": 2}}``)
    replace values of the file before it is checked; the config then records the merged file
    (comments dropped) as its text. A tape file among them (``{"market": {"tape": ...}}``) is
    the caller's: relative to the current folder, not to the file's. ``prepare`` is called with
    the ``[output]`` table once the schema is checked, before any agent is built (the runner
    takes its run directory's calibrations there)."""
    path = Path(path)
    written = read_text(path, "experiment file")
    raw = _tables(written, str(path))
    text = written
    if overrides:
        market = overrides.get("market")
        tape = market.get("tape") if isinstance(market, dict) else None
        if isinstance(tape, str) and names_tape_file(tape) and "$" not in tape:
            here = os.path.abspath(Path(tape).expanduser())
            overrides = merge(overrides, {"market": {"tape": here}})
        raw = merge(raw, overrides)
        text = tomli_w.dumps(raw)
    where = Locator(written, str(path), given=command_line(overrides or {}))
    return _config(raw, text, where, base=path.parent, complete=True, prepare=prepare)


def read_text(path: Path, what: str) -> str:
    """The UTF-8 text of the file at ``path``; `ConfigError` naming it (``what`` it is) and,
    for text that is not UTF-8, the line of the first byte that is not."""
    try:
        return path.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"{path}: cannot read the {what}: {error.strerror}") from None
    except UnicodeDecodeError as error:
        line = error.object[: error.start].count(b"\n") + 1
        raise ConfigError(
            f"{path}, line {line}: the {what} is not UTF-8 text (save it as UTF-8)"
        ) from None


def read_file(path: str | Path, what: str) -> tuple[dict[str, Any], Locator]:
    """The TOML tables of the file at ``path`` (``what`` it is, for messages) and the
    `Locator` of its text; `ConfigError` naming it when it cannot be read or is not TOML."""
    path = Path(path)
    text = read_text(path, what)
    return _tables(text, str(path)), Locator(text, str(path))


def _tables(text: str, source: str) -> dict[str, Any]:
    """The tables of the TOML ``text``; `ConfigError` naming ``source`` when it is not TOML."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{source}: not valid TOML: {error}") from None


def command_line(overrides: dict, prefix: tuple = ()) -> dict[tuple, str]:
    """Every value of the nested ``overrides`` as ``--set KEY=VALUE``, by its key path."""
    out = {}
    for key, value in overrides.items():
        path = prefix + (key,)
        if isinstance(value, dict):
            out.update(command_line(value, path))
        else:
            shown = value if isinstance(value, str) else tomli_w.dumps({"v": value})[4:].strip()
            out[path] = f"--set {'.'.join(path)}={shown}"
    return out


def _day_window(window: list) -> bool:
    """Whether ``window`` is [first, last], seconds after midnight, first before last."""
    numbers = all(isinstance(x, int | float) and not isinstance(x, bool) for x in window)
    return len(window) == 2 and numbers and 0 <= window[0] < window[1] <= 86_400


def load_learned_from(path: str | Path) -> LearnedFrom | None:
    """The ``[learned_from]`` table of the experiment file at ``path``, checked, or None when
    the file says nothing of what its market learned from. `ConfigError` names a bad value."""
    raw, where = read_file(path, "market file")
    schema = TOP["learned_from"].default
    table = check_table(raw.get("learned_from", {}), schema, ("learned_from",), where)
    return _learned_from(table) if table["window"] else None


def _learned_from(table: dict[str, Any]) -> LearnedFrom:
    return LearnedFrom(tuple(table["tapes"]), tuple(map(float, table["window"])))


def load_market(path: str | Path) -> MarketSpec:
    """The `MarketSpec` of a TOML file's ``[market]`` table (an experiment file, or a file of
    that table alone), checked as `load_config` checks it; its paths resolve against the
    file's folder. `ConfigError` names what is wrong and where."""
    path = Path(path)
    tables, where = read_file(path, "market file")
    return checked_market(tables, where, path.parent)


def checked_market(
    tables: dict[str, Any], where: Locator, base: Path, *, complete: bool = True
) -> MarketSpec:
    """The `MarketSpec` of the ``[market]`` table of a file's ``tables`` (none: the default
    market), its paths resolved against ``base``; checked as `load_config` checks it, or
    (``complete=False``) as `parse_config` checks a finished run's (its data files not looked
    for, a tape naming an environment variable kept as written); errors located by
    ``where``."""
    table = tables.get("market", {})
    if not isinstance(table, dict):
        raise where.error(("market",), f"expected a table, got {table!r}")
    checked = check_table(table, MARKET, ("market",), where)
    return _market(checked, where, base, complete=complete)


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
    text: str,
    *,
    source: str = "<config>",
    base: Path | None = None,
    complete: bool = True,
    where: Locator | None = None,
) -> Config:
    """Check the TOML ``text`` of an experiment; relative paths resolve against ``base``
    (default: the working directory). With ``complete=False`` only the schema is checked, the
    defaults filled and the market built (agents are not loaded, data files not looked for):
    reading a finished run's config. ``where`` locates errors (default: in ``text``
    itself)."""
    tables = _tables(text, source)
    where = where or Locator(text, source)
    return _config(tables, text, where, base=base or Path.cwd(), complete=complete)


def _config(
    raw: dict[str, Any],
    text: str,
    where: Locator,
    *,
    base: Path,
    complete: bool,
    prepare: Callable[[Output], None] | None = None,
) -> Config:
    """The `Config` of the tables ``raw`` of ``text`` (see `parse_config`)."""
    checked = check_table(raw, TOP, (), where)
    given = checked["output"]
    output = Output(given["dir"] or f"runs/{checked['name'] or checked['kind']}", given["figures"])
    if prepare is not None:
        prepare(output)
    folders: tuple[str, ...] = ()
    if complete:
        agents.add_folders(os.getcwd())
        folders = agents.folders()
        if not checked["agents"]:
            raise where.error(("agents",), "an experiment needs at least one [[agents]] table")
    market = _market(checked["market"], where, base, complete)
    if complete:
        entries = _checked_agents(checked, market, where, base)
        names = [table["name"] for table in checked["perturbations"]]
        _check_names(names, "perturbations", "name", where)
    else:
        entries = tuple(_entry(table, base) for table in checked["agents"])
    settings = checked["tournament"]
    learner = checked["psro"]["learner"]
    config = Config(
        kind=checked["kind"],
        name=checked["name"],
        seeds=checked["seeds"],
        root_seed=checked["root_seed"],
        market=market,
        training=Training(**checked["training"]),
        testing=Testing(**checked["testing"]),
        agents=entries,
        perturbations=_perturbations(checked["perturbations"], entries, complete),
        tournament=Tournament(**{**settings, "roles": _roles(settings["roles"], where)}),
        psro=Psro(**{**checked["psro"], "learner": _entry(learner, base)}),
        output=output,
        learned_from=_learned_from(checked["learned_from"]),
        text=text,
        agent_folders=folders,
    )
    if not complete:
        return config
    _check_kind(config, where)
    return dataclasses.replace(config, text=_as_run(raw, text, config))


def _entry(table: dict[str, Any], base: Path, named: str = "") -> AgentEntry:
    """The `AgentEntry` of a checked agent table (or of PSRO's learner, which has neither
    ``from`` nor ``train``): labelled by its ``label``, else ``named``, else its id's last
    part (what a finished run's text reads as); its ``from`` resolved against ``base``."""
    saved = table.get("from", "")
    return AgentEntry(
        id=table["id"],
        label=table["label"] or named or _written_label(table),
        params=table["params"],
        saved=os.path.abspath(base / Path(saved).expanduser()) if saved else "",
        train=table.get("train", True),
    )


def _written_label(table: dict[str, Any]) -> str:
    """The label of an agent table as a finished run reads it: its ``label``, else its id's
    last part."""
    return table.get("label") or table["id"].rpartition(":")[2]


def _checked_agents(
    checked: dict, market: MarketSpec, where: Locator, base: Path
) -> tuple[AgentEntry, ...]:
    """The agents of a checked file: each resolves (labelled by its class's name when the
    table gives none) and builds in ``market``, or loads from where its ``from`` says for
    every seed; their labels are distinct."""
    entries = []
    for i, table in enumerate(checked["agents"]):
        try:
            cls = agents.resolve(table["id"])
        except ValueError as error:
            raise where.error(("agents", i, "id"), str(error)) from None
        entry = _entry(table, base, cls.name if cls.name != Agent.name else cls.__name__)
        if entry.saved:
            _check_saved(entry, table, market, checked["seeds"], ("agents", i), where)
        else:
            try:
                build_agent(entry, market, seed=0)
            except (TypeError, ValueError) as error:
                raise where.error(("agents", i, "params"), str(error)) from None
        entries.append(entry)
    _check_names([entry.label for entry in entries], "agents", "label", where)
    return tuple(entries)


def _check_names(names: list[str], tables: str, key: str, where: Locator) -> None:
    """The ``key`` of each of the ``tables`` (its ``names``, each one folder of the run
    directory: an agent's label, a condition's name) a plain file name (`is_file_name`: a
    label taken from a class's ``name`` too), and no two alike, case aside (as a file
    system that ignores case would make them)."""
    folded = [name.casefold() for name in names]
    for i, name in enumerate(names):
        if not is_file_name(name):
            raise where.error(
                (tables, i, key), f"must be {FILE_NAME_RULE}, got {name!r} (set {key} = ...)"
            )
        if folded[i] in folded[:i]:
            raise where.error(
                (tables, i, key), f"{tables}' {key}s must be distinct, case aside, got {names}"
            )


def _check_saved(
    entry: AgentEntry, table: dict, market: MarketSpec, seeds: int, path: tuple, where: Locator
) -> None:
    """An agent table with ``from``: no ``params`` (the saved ones are kept), and the saved
    agent of every seed index loads (this build wrote it, it is the table's ``id``, it fits
    this market)."""
    if table["params"]:
        raise where.error(path + ("params",), "an agent loaded with from keeps its saved params")
    for seed in range(seeds):
        try:
            saved = read_header(saved_source(entry.saved, seed))["id"]
            if saved != entry.id:
                raise UserError(f"{saved_source(entry.saved, seed)} holds {saved!r}")
            load_saved(entry, market, seed)
        except UserError as error:
            raise where.error(path + ("from",), str(error)) from None


def _perturbations(
    tables: list[dict], entries: tuple[AgentEntry, ...], complete: bool
) -> tuple[Perturbation, ...]:
    """The test conditions; checked (``complete``), an adversary without a ``source`` is the
    first agent's that trains one."""
    conditions = tuple(Perturbation(**table) for table in tables)
    if not complete or all(c.type != "adversary" or c.source for c in conditions):
        return conditions
    sources = [e.label for e in entries if agents.resolve(e.id).trains_adversary]
    first = next(iter(sources), "")
    return tuple(
        dataclasses.replace(c, source=first) if c.type == "adversary" and not c.source else c
        for c in conditions
    )


def _roles(roles: dict[str, Any], where: Locator) -> dict[str, Role]:
    """The roles of ``[tournament] roles``: each a table of `ROLE_KEYS`, ``seats`` an integer
    >= 1, ``strategies`` distinct labels (that they are the agents' is the tournament's
    check)."""
    out = {}
    for role, table in roles.items():
        here = ("tournament", "roles", role)
        if not isinstance(table, dict) or set(table) != set(ROLE_KEYS):
            raise where.error(here, f"expected a table of {sorted(ROLE_KEYS)}, got {table!r}")
        seats, own = table["seats"], table["strategies"]
        if isinstance(seats, bool) or not isinstance(seats, int) or seats < 1:
            raise where.error((*here, "seats"), f"must be an integer >= 1, got {seats!r}")
        distinct = isinstance(own, list) and all(isinstance(s, str) for s in own)
        if not distinct or not own or len(set(own)) != len(own):
            raise where.error((*here, "strategies"), f"expected distinct labels, got {own!r}")
        out[role] = Role(seats, tuple(own))
    return out


def _check_kind(config: Config, where: Locator) -> None:
    """What the schema cannot say of the parts: each optional table belongs to the kind, the
    kind's own check passes, and the experiment plans at most `MAX_JOBS` jobs."""
    kind = KINDS[config.kind]
    for section in OPTIONAL_SECTIONS:
        if getattr(config, section) and section not in kind.SECTIONS:
            owners = " or ".join(repr(n) for n, k in KINDS.items() if section in k.SECTIONS)
            raise where.error(
                (section, 0), f"{section} belong to kind {owners}, not {config.kind!r}"
            )
    kind.check(config, where)
    jobs = len(kind.plan(config))
    if jobs > MAX_JOBS:
        raise where.error(
            ("seeds",),
            f"the experiment plans {jobs:,} jobs ({config.seeds:,} seeds), more than the "
            f"{MAX_JOBS:,} a run may have",
        )


def _as_run(raw: dict[str, Any], text: str, config: Config) -> str:
    """The text as run of a checked ``config`` read from ``text`` (whose tables are ``raw``):
    what a finished run must read as it ran, from its own directory, and resume only on the
    same data. The labels the check gave, the tape's absolute path (the file an environment
    variable named), saved agents' absolute paths, and the run directory's copy of each file
    a trader names (`trader_files`); ``text`` itself when none of these changes it (its
    comments kept)."""
    edits: list[tuple[dict, str, object]] = []  # (table, key, value as run)
    for table, entry in zip(raw.get("agents", []), config.agents):
        if _written_label(table) != entry.label:
            edits.append((table, "label", entry.label))
        if entry.saved and table.get("from") != entry.saved:
            edits.append((table, "from", entry.saved))
    market = raw.get("market", {})
    tape = config.market.tape
    if config.market.replays_file and market.get("tape") != tape:
        edits.append((market, "tape", tape))
    traders = market.get("traders", [])
    for n, (i, name, path) in enumerate(_declared(config.market)):
        edits.append((traders[i], name, f"{MODELS}/{n}/{path.name}"))
    if not edits:
        return text
    for table, key, value in edits:
        table[key] = value
    return tomli_w.dumps(raw)


# ----------------------------------------------------------------------------- the market
def _market(table: dict, where: Locator, base: Path, complete: bool) -> MarketSpec:
    """The checked market table as a `MarketSpec`: traders take their parameters, the files
    they name resolved against ``base`` (and, ``complete``, checked with the files they name:
    `envs.simulator.traders.Trader.file_parts`); the tape file (or a converted directory, or a
    recording's directory) resolved against ``base``, or against the current folder when an
    environment variable gave it, as ``--set`` does, and (``complete``) found and read to its
    end (a wrong file, a malformed row or a truncated recording is blamed on
    ``market.tape``); every value is one the spec accepts, and a session of it opens
    (`envs.spec.MarketSpec.check_session`: its faults are the market's, not a seat's)."""
    traders = tuple(
        _trader(trader, ("market", "traders", i), where, base, complete)
        for i, trader in enumerate(table["traders"])
    )
    tape = table["tape"]
    if names_tape_file(tape) and (complete or "$" not in tape):
        given = Path.cwd() if "$" in tape else base  # a variable's: from here
        path = Path(os.path.abspath(given / Path(_expanded(tape, where)).expanduser()))
        if complete and not path.exists():
            raise where.error(("market", "tape"), f"no such file or directory: {path}")
        tape = str(path)
    try:
        spec = MarketSpec(**{**table, "traders": traders, "tape": tape})
        if complete and spec.replays_file:
            spec.replayed_tape()  # read to its end once: bad content is the tape's, found here
        if complete:
            spec.check_session()  # what only a session shows: the market's, not a seat's
    except SpecError as error:
        raise where.error(("market", *error.path), error.reason) from None
    except UserError as error:
        raise where.error(("market", "tape"), str(error)) from None
    return spec


def _trader(trader: object, path: tuple, where: Locator, base: Path, complete: bool) -> dict:
    """A ``[[market.traders]]`` table of a known type, the files it names absolute (resolved
    against ``base``, links followed); checked (``complete``): those files and the files they
    name are regular files (`Trader.file_parts`), and the trader builds."""
    if not isinstance(trader, dict):
        raise where.error(
            path,
            f'expected a table {{type = "...", ...}} (one of {sorted(TRADERS)}), got {trader!r}',
        )
    kind = trader.get("type")
    if kind not in TRADERS:
        raise where.error((*path, "type"), not_one_of(kind, sorted(TRADERS)))
    cls, table = TRADERS[kind], dict(trader)
    try:
        for name in cls.file_parameters:
            if isinstance(table.get(name), str):
                given = Path(table[name]).expanduser()
                table[name] = str((given if given.is_absolute() else base / given).resolve())
                if complete:
                    cls.file_parts(name, Path(table[name]))
        if complete:
            build_trader(kind, {k: v for k, v in table.items() if k != "type"})
    except ParameterError as error:
        raise where.error((*path, *error.path), error.reason) from None
    return table


def _declared(market: MarketSpec) -> Iterator[tuple[int, str, Path]]:
    """(trader index, parameter, file) of every file the market's traders name, in order."""
    for i, trader in enumerate(market.traders):
        if isinstance(trader, dict):
            for name in TRADERS[trader["type"]].file_parameters:
                if isinstance(trader.get(name), str):
                    yield i, name, Path(trader[name])


def trader_files(market: MarketSpec) -> list[tuple[str, list[Path]]]:
    """The files the traders of a checked ``market`` name, each with the files it names
    (`envs.simulator.traders.Trader.file_parts`): (the folder of a run directory that keeps
    its copy, ``models/<n>``, its files), in the order of the text as run's names."""
    return [
        (f"{MODELS}/{n}", TRADERS[market.traders[i]["type"]].file_parts(name, path))
        for n, (i, name, path) in enumerate(_declared(market))
    ]


def market_table(spec: MarketSpec) -> dict[str, Any]:
    """``spec`` as a ``[market]`` table: every field the table holds (those that are None,
    which TOML cannot write, left out: they read back as None)."""
    return {k: v for k, v in spec.to_table().items() if k in MARKET and v is not None}


def config_tables(config: Config) -> dict[str, Any]:
    """``config`` as the tables of an experiment file, every key written out: the file that
    `parse_config` reads back to it (its paths absolute, as the config holds them)."""
    settings = dataclasses.asdict(config.tournament)
    settings["roles"] = {
        role: {"seats": r.seats, "strategies": list(r.strategies)}
        for role, r in config.tournament.roles.items()
    }
    learner = config.psro.learner
    return {
        "kind": config.kind,
        "name": config.name,
        "seeds": config.seeds,
        "root_seed": config.root_seed,
        "market": market_table(config.market),
        "training": dataclasses.asdict(config.training),
        "testing": dataclasses.asdict(config.testing),
        "agents": [entry.table() for entry in config.agents],
        "perturbations": [dataclasses.asdict(p) for p in config.perturbations],
        "tournament": settings,
        "psro": {
            "learner": {"id": learner.id, "label": learner.label, "params": learner.params},
            "rounds": config.psro.rounds,
            "threshold": config.psro.threshold,
        },
        "output": dataclasses.asdict(config.output),
    }


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
