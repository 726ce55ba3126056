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
checked into small typed sections once (`evaluation.experiment.schema.Training`, `Testing`,
`Tournament`, `Psro`, `Perturbation`, `Output`, whose defaults are the schema's below) and read by
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
from tradearena.envs.simulator.traders import MAX_MEMBERS, TRADERS, build_trader
from tradearena.envs.spec import SYNTHETIC, MarketSpec, SpecError
from tradearena.evaluation.experiment.kinds import KINDS
from tradearena.evaluation.experiment.rollout import build_agent
from tradearena.evaluation.experiment.schema import (
    ANY_TABLE,
    MAX_EPISODES,
    MAX_JOBS,
    MAX_PLAYERS,
    MAX_ROUNDS,
    MAX_SEEDS,
    MAX_SESSIONS,
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
    within,
)
from tradearena.evaluation.experiment.trained import load_saved, saved_source

__all__ = [
    "ConfigError",
    "command_line",
    "config_locator",
    "config_text",
    "load_config",
    "load_learned_from",
    "load_market",
    "merge",
    "parse_config",
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
    "label": Field(str, "", doc="its name in the tables (default: the class's name)"),
    "params": Field(dict, ANY_TABLE, doc="keywords of the agent's class (default: none)"),
    "from": Field(str, "", doc="a saved agent, or a run's `agents/<label>` (`seed-<n>` per seed)"),
    "train": Field(bool, True, doc="false: frozen, only tested"),
}
PERTURBATION = {
    "name": Field(str, REQUIRED, doc="the test condition's name in the tables"),
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
            "label": Field(str, "", doc="its label (the round is appended: <label>_r<round>)"),
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
    "name": Field(str, "", doc="its name: the default run directory is `runs/<name>`"),
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


def load_config(path: str | Path, overrides: dict | None = None) -> dict[str, Any]:
    """Read and check an experiment file; `ConfigError` names what is wrong and where.

    ``overrides`` (nested like the file, e.g. ``{"seeds": 1, "training": {"episodes": 2}}``)
    replace values of the file before it is checked; the config then records the merged file
    (comments dropped) as its text. A tape file among them (``{"market": {"tape": ...}}``) is
    the caller's: relative to the current folder, not to the file's."""
    path = Path(path)
    text, where = config_text(path, overrides), config_locator(path, overrides)
    return parse_config(text, source=str(path), base=path.parent, where=where)


def config_text(path: str | Path, overrides: dict | None = None) -> str:
    """The TOML text of the experiment file at ``path`` with ``overrides`` applied (see
    `load_config`), unchecked."""
    path = Path(path)
    text = read_text(path, "experiment file")
    market = (overrides or {}).get("market")
    tape = market.get("tape") if isinstance(market, dict) else None
    if isinstance(tape, str) and tape and tape != SYNTHETIC and "$" not in tape:
        overrides = merge(overrides, {"market": {"tape": os.path.abspath(Path(tape).expanduser())}})
    if overrides:
        try:
            text = tomli_w.dumps(merge(tomllib.loads(text), overrides))
        except tomllib.TOMLDecodeError as error:
            raise ConfigError(f"{path}: not valid TOML: {error}") from None
    return text


def config_locator(path: str | Path, overrides: dict | None = None) -> Locator:
    """The `Locator` of the experiment file at ``path``: lines of the file as written, and the
    keys ``overrides`` replaced named by their ``--set KEY=VALUE``."""
    path = Path(path)
    text = read_text(path, "experiment file")
    return Locator(text, str(path), given=command_line(overrides or {}))


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


def load_learned_from(path: str | Path) -> dict[str, Any] | None:
    """The ``[learned_from]`` table of the experiment file at ``path``, checked (``tapes``:
    file names; ``window``: [first, last], seconds after midnight), or None when the file
    says nothing of what its market learned from. `ConfigError` names a bad value."""
    raw, where = _market_file(Path(path))
    schema = TOP["learned_from"].default
    table = check_table(raw.get("learned_from", {}), schema, ("learned_from",), where)
    return table if table["window"] else None


def load_market(path: str | Path) -> MarketSpec:
    """The `MarketSpec` of a TOML file's ``[market]`` table (an experiment file, or a file of
    that table alone), checked as `load_config` checks it; tape paths resolve against the
    file's folder. `ConfigError` names what is wrong and where."""
    path = Path(path)
    raw, where = _market_file(path)
    market = check_table(raw.get("market", {}), MARKET, ("market",), where)
    return _check_market(market, where, path.parent)


def _market_file(path: Path) -> tuple[dict[str, Any], Locator]:
    """The tables of the TOML file at ``path`` and their `Locator`; `ConfigError` when it
    cannot be read or is not TOML."""
    text = read_text(path, "market file")
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML: {error}") from None
    return raw, Locator(text, str(path))


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
) -> dict:
    """Check the TOML ``text`` of an experiment; relative data paths resolve against ``base``
    (default: the working directory). With ``complete=False`` only the schema is checked and
    the defaults filled (agents are not loaded, data files not looked for): reading a
    finished run's config. ``where`` locates errors (default: in ``text`` itself;
    `config_locator` for a file with ``--set`` overrides)."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{source}: not valid TOML: {error}") from None
    where = where or Locator(text, source)
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
        # what the text must carry, so that a finished run reads as it ran and resumes only on
        # the same data: the labels its check gave, the file an environment variable named
        variable = "$" in raw.get("market", {}).get("tape", "")
        if named or variable:
            for i, label in named.items():
                raw["agents"][i]["label"] = label
            if variable:
                raw["market"]["tape"] = config["market"]["tape"]
            text = tomli_w.dumps(raw)
    for spec in config["agents"]:
        spec["label"] = spec["label"] or spec["id"].rpartition(":")[2]
    config["source_text"] = text
    config["source_tables"] = tomllib.loads(text)  # the tables as the text holds them
    return config


def _check_semantics(config: dict, where: Locator, base: Path) -> dict[int, str]:
    """What the schema cannot say: the market is usable, agents resolve and build in it, data
    files exist, the parts fit the kind. Labels the agents given none; returns those labels
    (by index) that differ from the id's last part, the label a finished run's file gives."""
    if not config["agents"]:
        raise where.error(("agents",), "an experiment needs at least one [[agents]] table")
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
    jobs = len(kind.plan(config))
    if jobs > MAX_JOBS:
        raise where.error(
            ("seeds",),
            f"the experiment plans {jobs:,} jobs ({config['seeds']:,} seeds), more than the "
            f"{MAX_JOBS:,} a run may have",
        )
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


def resolve_model(trader: dict, base: Path) -> None:
    """A learned flow's ``model`` file (a trader table's), relative to ``base``, made
    absolute in place; other tables are left alone."""
    if trader.get("type") == "LearnedFlow" and isinstance(trader.get("model"), str):
        model = Path(trader["model"]).expanduser()
        trader["model"] = str(model if model.is_absolute() else (base / model).resolve())


def _check_market(market: dict, where: Locator, base: Path) -> MarketSpec:
    """The market table as a `MarketSpec`: traders take their parameters (a learned flow's
    ``model`` file resolved against ``base``), the tape file (or
    a converted directory, or a recording's directory) exists (resolved against ``base``,
    or against the current folder when an environment variable gave it, as ``--set``
    does) and reads to its end (a wrong file, a malformed row or a truncated recording is
    blamed on ``market.tape``), every value is one the spec accepts."""
    for i, spec in enumerate(market["traders"]):
        if not isinstance(spec, dict):
            raise where.error(
                ("market", "traders", i),
                f'expected a table {{type = "...", ...}} (one of {sorted(TRADERS)}), got {spec!r}',
            )
        if spec.get("type") not in TRADERS:
            raise where.error(
                ("market", "traders", i, "type"), not_one_of(spec.get("type"), sorted(TRADERS))
            )
        resolve_model(spec, base)
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
        spec = MarketSpec(**market)
        if market["tape"] and market["tape"] != SYNTHETIC:
            spec.replayed_tape()  # read to its end once: bad content is the tape's, found here
    except SpecError as error:
        raise where.error(("market", *error.path), error.reason) from None
    except UserError as error:
        raise where.error(("market", "tape"), str(error)) from None
    return spec


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
