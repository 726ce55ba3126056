"""Checking TOML tables against a schema, with errors that name the file, line and field.

`Field` describes one key; `check_table` fills defaults and checks types, ranges and unknown
keys of a parsed TOML table; `Config` is a checked experiment file, made of the typed sections
its tables are checked into (`Training`, `Testing`, `AgentEntry`, `Perturbation`,
`Tournament` and the `Role` of each of its roles, `Psro`, `Output`, `LearnedFrom`; its market
an `envs.spec.MarketSpec`, its table `MARKET`), read by attribute. The schema is declared
once: each key is a field of its section, whose metadata (`key`) holds its `Field`; the
tables (`TOP` and the tables in it) are read from the sections (`table_of`), and
docs/config.md from them (`evaluation.reports.reference`). `Locator` finds the line of a
field in the text for the message::

    configs/x.toml, line 14: agents[1].id: unknown agent 'raq' (did you mean 'raql'?); ...
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tradearena.envs.errors import UserError, did_you_mean
from tradearena.envs.simulator.traders import MAX_MEMBERS
from tradearena.envs.spec import MAX_SESSIONS, MarketSpec

__all__ = [
    "AGENT",
    "ANY_TABLE",
    "FILE_NAME_RULE",
    "KIND_NAMES",
    "LEARNER",
    "MARKET",
    "OPTIONAL_SECTIONS",
    "PERTURBATION",
    "PSRO",
    "REQUIRED",
    "ROLE_KEYS",
    "TOP",
    "TOURNAMENT",
    "AgentEntry",
    "Config",
    "ConfigError",
    "Field",
    "LearnedFrom",
    "Locator",
    "MAX_DAYS",
    "MAX_EPISODES",
    "MAX_JOBS",
    "MAX_PLAYERS",
    "MAX_PROFILES",
    "MAX_RESAMPLES",
    "MAX_ROUNDS",
    "MAX_SEEDS",
    "MAX_SESSIONS",
    "MAX_WORKERS",
    "Output",
    "Perturbation",
    "Psro",
    "Role",
    "Testing",
    "Tournament",
    "TYPE_NAMES",
    "Training",
    "check_table",
    "file_name",
    "key",
    "table_of",
    "is_file_name",
    "non_negative",
    "one_of",
    "positive",
    "within",
]

MAX_SEEDS = 10_000
"""The most repetitions (``seeds``) an experiment may have: studies report tens to hundreds."""
MAX_EPISODES = 10_000_000
"""The most episodes of one phase (training per agent, testing per condition, a greedy
check): 10^7 one-hour sessions are days of one core's time per agent already."""
MAX_PLAYERS = 1000
"""The most seats of a tournament's profiles (``[tournament] players``): the game's profiles
grow as players^(strategies - 1), and `MAX_JOBS` bounds what they make."""
MAX_PROFILES = 10_000_000
"""The most profiles a tournament's game may have (those of its ``players`` over its
strategies, or its roles'): they are listed before the jobs are planned (a reduced game's
too, to find those it reads), some seconds per million."""
MAX_ROUNDS = 1000
"""The most rounds of a PSRO experiment (``[psro] rounds``): each adds a strategy, and the
game's profiles grow with the strategies."""
MAX_JOBS = 100_000
"""The most jobs an experiment may plan (profiles x repetitions, agents x seeds, ...): a job
trains and tests for seconds to hours, so more is years of one core's time; the plan itself
is held in memory before the first job starts."""
MAX_DAYS = 1000
"""The most days of one market a command simulates at once (`tradearena realism` a market's
days, `tradearena fit` a candidate's): each is held as its level-1 view, some megabytes, until
all are measured."""
MAX_RESAMPLES = 100_000
"""The most bootstrap resamples of a payoff table (`tradearena games --resamples`): each is
a redrawn copy of the table, held at once."""
MAX_WORKERS = 1024
"""The most CPUs a local Ray may be started with (``--workers``): a worker process is started
and warmed for each."""


class ConfigError(UserError):
    """An experiment file that cannot be run; the message names file, line and field."""


@dataclass(frozen=True)
class Field:
    """One key of a table: its type, default (``REQUIRED`` if none), allowed values and what
    it means (one line, with its unit: the reference ``docs/config.md`` is made of these)."""

    type: type | tuple[type, ...]
    default: Any
    check: Callable[[Any], bool] | None = None
    rule: str = ""  # what ``check`` asks, for the message ("> 0", "one of ...")
    doc: str = ""


REQUIRED = object()
ANY_TABLE = object()  # a free-form table (agent parameters): passed on as given


def positive(x: Any) -> bool:
    return x > 0


def non_negative(x: Any) -> bool:
    return x >= 0


class _OneOf:
    """A check that a value is one of ``choices`` (which it keeps, for "did you mean")."""

    def __init__(self, choices: tuple[str, ...]) -> None:
        self.choices = choices

    def __call__(self, x: Any) -> bool:
        return x in self.choices


def within(low: int, high: int, unit: str = "") -> tuple[Callable[[Any], bool], str]:
    """A check that a value lies in [``low``, ``high``], and its rule (with ``unit``)."""
    return (lambda x: low <= x <= high), f"in [{low:,}, {high:,}]{unit and ' ' + unit}"


def one_of(*choices: str) -> tuple[Callable[[Any], bool], str]:
    return _OneOf(choices), f"one of {list(choices)}"


_FILE_NAME = re.compile(r"[A-Za-z0-9_.-]+")
FILE_NAME_RULE = "a plain file name (letters, digits, '_', '.', '-'; not '.' or '..')"
"""What `is_file_name` asks, for messages."""


def is_file_name(text: str) -> bool:
    """Whether ``text`` can name a file or folder alone, the same on every file system
    (what becomes one: an agent's label, a condition's or an experiment's name)."""
    return bool(_FILE_NAME.fullmatch(text)) and text not in (".", "..")


def file_name(optional: bool = False) -> tuple[Callable[[Any], bool], str]:
    """A check that a value `is_file_name` (or, ``optional``, is empty: the default), and
    its rule."""
    return (lambda x: optional and x == "" or is_file_name(x)), FILE_NAME_RULE


def check_table(raw: dict, schema: dict[str, Field], path: tuple, where: Locator) -> dict:
    """``raw`` checked against ``schema`` with defaults filled in; `ConfigError` (located by
    ``where``) for an unknown or missing key or a bad value."""
    unknown = sorted(set(raw) - set(schema))
    if unknown:
        near = did_you_mean(unknown[0], schema)
        raise where.error(path + (unknown[0],), f"unknown key{near}; allowed: {sorted(schema)}")
    out = {}
    for key, field in schema.items():
        here = path + (key,)
        if key not in raw:
            if field.default is REQUIRED:
                raise where.error(path, f"missing required key {key!r}")
            if isinstance(field.default, dict) and field.type is dict:
                out[key] = check_table({}, field.default, here, where)
            elif field.default is ANY_TABLE:
                out[key] = {}
            else:
                out[key] = [] if isinstance(field.default, dict) else field.default
            continue
        out[key] = _value(raw[key], field, here, where)
    return out


def _value(value: Any, field: Field, path: tuple, where: Locator) -> Any:
    expected = field.type if isinstance(field.type, tuple) else (field.type,)
    if isinstance(value, bool) and bool not in expected or not isinstance(value, expected):
        names = " or ".join(TYPE_NAMES.get(t, t.__name__) for t in expected)
        raise where.error(path, f"expected {names}, got {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise where.error(path, f"expected a finite number, got {value!r}")
    if field.check is not None and not field.check(value):
        hint = did_you_mean(value, getattr(field.check, "choices", ()))
        raise where.error(path, f"must be {field.rule}, got {value!r}{hint}")
    if isinstance(field.default, dict):  # a table, or an array of tables
        if field.type is dict:
            return check_table(value, field.default, path, where)
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                raise where.error(path + (i,), f"expected a table, got {item!r}")
        return [
            check_table(item, field.default, path + (i,), where) for i, item in enumerate(value)
        ]
    return value


# ----------------------------------------------------------------------------- typed sections
# Each section is declared once: each key of its table is a field of its class, whose
# metadata (`key`) holds the key's `Field` (type, default, check, doc); `table_of` reads a
# class's table from them. A section is built from its table once checked (`check_table`
# filled the defaults) and read by attribute afterwards.


def key(
    kind: type | tuple[type, ...],
    default: Any = REQUIRED,
    check: Callable[[Any], bool] | None = None,
    rule: str = "",
    *,
    doc: str,
    name: str = "",
    attribute: Any = dataclasses.MISSING,
) -> Any:
    """A field of a section that is the key ``name`` (default: the field's name) of its
    table: its `Field` in the field's metadata. ``attribute``: the field's own default, where
    the class is built without the key (`AgentEntry` in code)."""
    field = Field(kind, default, check, rule, doc)
    metadata = {"key": field, "name": name}
    if attribute is ANY_TABLE:
        return dataclasses.field(default_factory=dict, metadata=metadata)
    return dataclasses.field(default=attribute, metadata=metadata)


def table_of(section: type) -> dict[str, Field]:
    """The table of ``section`` (a class of `key` fields), key -> `Field`, in the order of
    its fields."""
    return {
        f.metadata["name"] or f.name: f.metadata["key"]
        for f in dataclasses.fields(section)
        if "key" in f.metadata
    }


def _day_window(window: list) -> bool:
    """Whether ``window`` is [first, last], seconds after midnight, first before last."""
    numbers = all(isinstance(x, int | float) and not isinstance(x, bool) for x in window)
    return len(window) == 2 and numbers and 0 <= window[0] < window[1] <= 86_400


@dataclass(frozen=True)
class Training:
    """The ``[training]`` table: episodes per agent (or profile), greedy checkpoints every
    ``evaluate_every`` episodes (0: none) of ``evaluate_episodes`` each, ``sessions`` played at
    once, a saved checkpoint every ``checkpoint_every`` episodes (0: none)."""

    episodes: int = key(
        int, 10, *within(0, MAX_EPISODES), doc="per agent (0: agents that do not learn)"
    )
    evaluate_every: int = key(
        int, 0, *within(0, MAX_EPISODES, "episodes (0: never)"), doc="episodes between checks"
    )
    evaluate_episodes: int = key(int, 10, *within(1, MAX_EPISODES), doc="greedy episodes per check")
    sessions: int = key(int, 1, *within(1, MAX_SESSIONS, "sessions"), doc="sessions played at once")
    checkpoint_every: int = key(
        int, 0, *within(0, MAX_EPISODES, "episodes (0: never)"), doc="episodes between saves"
    )


@dataclass(frozen=True)
class Testing:
    """The ``[testing]`` table: greedy test episodes per agent and condition."""

    episodes: int = key(int, 5, *within(1, MAX_EPISODES), doc="greedy test episodes per condition")


@dataclass(frozen=True)
class AgentEntry:
    """One ``[[agents]]`` table: the agent ``id`` (a registry id or ``"module:ClassName"``),
    its ``label`` in the tables (once checked: the table's, else its class's name), the
    keywords ``params`` of its class, ``saved``: the saved agent it loads (the table's
    ``from``; once checked an absolute path; "" for a new agent), and ``train`` (False:
    frozen, only tested)."""

    id: str = key(str, doc='a registry id (`tradearena agents`) or "module:ClassName"')
    label: str = key(
        str,
        "",
        *file_name(optional=True),
        doc="its name in the tables (default: the class's name)",
        attribute="",
    )
    params: dict[str, Any] = key(
        dict, ANY_TABLE, doc="keywords of the agent's class (default: none)", attribute=ANY_TABLE
    )
    saved: str = key(
        str,
        "",
        doc="a saved agent, or a run's `agents/<label>` (`seed-<n>` per seed)",
        name="from",
        attribute="",
    )
    train: bool = key(bool, True, doc="false: frozen, only tested", attribute=True)

    def table(self) -> dict[str, Any]:
        """The entry as an ``[[agents]]`` table (``id`` and ``label``, the other keys when they
        are not their defaults)."""
        out: dict[str, Any] = {"id": self.id, "label": self.label}
        if self.params:
            out["params"] = dict(self.params)
        if self.saved:
            out["from"] = self.saved
        if not self.train:
            out["train"] = False
        return out


@dataclass(frozen=True)
class Role:
    """One role of a role game (``[tournament] roles``): its ``seats`` and the labels of the
    agents (``strategies``) that may play it."""

    seats: int
    strategies: tuple[str, ...]


@dataclass(frozen=True)
class Tournament:
    """The ``[tournament]`` table: an empirical game of ``players`` seats."""

    players: int = key(int, 4, *within(1, MAX_PLAYERS, "seats"), doc="seats of every profile")
    mode: str = key(
        str,
        "train-in-profile",
        *one_of("train-in-profile", "pretrained"),
        doc="a profile's agents learn together, or each learns alone once and is frozen",
    )
    payoff: str = key(
        str, "sharpe", *one_of("sharpe", "pnl"), doc="payoffs.csv: Sharpe ratio or mean PnL"
    )
    sharpe_floor: float = key(
        (int, float),
        0.01,
        positive,
        "> 0 dollars",
        doc="dollars: the least PnL deviation a Sharpe ratio divides by",
    )
    weighting: str = key(
        str, "tuyls", *one_of("tuyls", "focal"), doc="expected payoffs of the dynamics"
    )
    # role name -> its Role; empty: one population (`evaluation.kinds.role_games`)
    roles: dict[str, Role] = key(
        dict,
        ANY_TABLE,
        doc="a role game: role -> {seats, strategies} (labels of [[agents]]); {}: one population",
        attribute=ANY_TABLE,
    )
    reduced: int = key(
        int,
        0,
        non_negative,
        ">= 0 players (0: the full game)",
        doc="play only the deviation-preserving reduction to this many players",
        attribute=0,
    )


LEARNER = {
    "id": Field(str, "", doc="the agent id trained as each round's best response"),
    "label": Field(
        str,
        "",
        *file_name(optional=True),
        doc="its label (the round is appended: <label>_r<round>)",
    ),
    "params": Field(dict, ANY_TABLE, doc="its keyword arguments"),
}
"""The ``[psro.learner]`` table, checked into an `AgentEntry` (neither ``from`` nor
``train``: a learner is new and learns)."""


@dataclass(frozen=True)
class Psro:
    """The ``[psro]`` table: the ``learner`` trained as each round's best response (its
    ``id``, ``label``, default the id's last part, and ``params``), at most ``rounds``
    rounds, and the deviation gain (payoff units) a response must exceed to join the game."""

    learner: AgentEntry = key(dict, LEARNER, doc="the learner that grows the strategy set")
    rounds: int = key(int, 3, *within(1, MAX_ROUNDS), doc="rounds at most")
    threshold: float = key(
        (int, float),
        0.0,
        non_negative,
        ">= 0 payoff units",
        doc="a response joins when it gains more than this against the equilibrium",
    )


@dataclass(frozen=True)
class Perturbation:
    """One ``[[perturbations]]`` table: a test condition of a robustness experiment."""

    name: str = key(str, REQUIRED, *file_name(), doc="the test condition's name in the tables")
    type: str = key(str, REQUIRED, *one_of("adversary", "zi"), doc="an adversary, or more ZI")
    mode: str = key(
        str, "takeover", *one_of("takeover", "trader"), doc="adversary: takes seats or trades"
    )
    p: float = key(
        (int, float), 0.2, lambda x: 0 <= x <= 1, "in [0, 1]", doc="take-over chance per step"
    )
    source: str = key(str, "", doc="label of the agent whose adversary acts (adversary)")
    n_agents: int = key(
        int, 50, *within(1, MAX_MEMBERS), doc="extra zero-intelligence traders (zi)"
    )


@dataclass(frozen=True)
class Output:
    """The ``[output]`` table: where the run goes, and whether it draws its figures."""

    dir: str = key(str, "", doc='the run directory ("": `runs/<name or kind>`; `--out` wins)')
    figures: bool = key(bool, True, doc="draw the figures")


@dataclass(frozen=True)
class LearnedFrom:
    """The ``[learned_from]`` table: the file names of the days a market was fitted to and
    the part of each day, [first, last] seconds after midnight (empty: not said)."""

    tapes: tuple[str, ...] = key(
        list,
        [],
        lambda tapes: all(isinstance(t, str) for t in tapes),
        "file names (strings)",
        doc="the files of the days learned from (their names)",
    )
    window: tuple[float, ...] = key(
        list,
        [],
        lambda w: w == [] or _day_window(w),
        "[first, last] with 0 <= first < last <= 86400",
        doc="seconds after midnight: the part of each day learned from ([]: not said)",
    )


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
_MARKET_DEFAULTS = {f.name: f.default for f in dataclasses.fields(MarketSpec)}
MARKET = {
    name: Field(kind, _MARKET_DEFAULTS[name], doc=doc)
    for name, (kind, doc) in _MARKET_TYPES.items()
}
"""The ``[market]`` table: `MarketSpec`'s fields and defaults; values are checked by it."""
KIND_NAMES = ("compare", "psro", "robustness", "tournament")
"""The experiment kinds (`evaluation.experiment.kinds.KINDS`: each a module of
`evaluation.kinds`)."""


@dataclass(frozen=True, kw_only=True)
class Config:
    """A checked experiment file (`evaluation.experiment.config.load_config`): its tables as
    typed sections, read by attribute; frozen and picklable, so that jobs carry it to the
    workers. Its fields are the file's keys (`TOP`), then:

    ``text`` is the file as run (TOML), what the run directory keeps as ``config.toml``: what
    the check added to the file written in (the labels it gave, a tape's absolute path, each
    file a trader names replaced by the run directory's copy, ``models/<n>/<name>``), the file
    as written otherwise. ``agent_folders``: where ``"module:ClassName"`` agents are
    imported from (the working directory and the file's folder, as the config was read)."""

    kind: str = key(str, REQUIRED, *one_of(*KIND_NAMES), doc="what the experiment runs")
    name: str = key(
        str,
        "",
        *file_name(optional=True),
        doc="its name: the default run directory is `runs/<name>`",
    )
    seeds: int = key(int, 3, *within(1, MAX_SEEDS), doc="repetitions, each one market randomness")
    root_seed: int = key(int, 0, non_negative, ">= 0", doc="the seed every job's seed derives from")
    market: MarketSpec = key(
        dict, MARKET, doc="the market every agent plays (`envs.spec.MarketSpec`)"
    )
    training: Training = key(
        dict, table_of(Training), doc="how each agent (or profile) learns before it is tested"
    )
    testing: Testing = key(
        dict, table_of(Testing), doc="the greedy episodes the tables are made of"
    )
    agents: tuple[AgentEntry, ...] = key(
        list, table_of(AgentEntry), doc="the agents, one table each, in the order of the tables"
    )
    perturbations: tuple[Perturbation, ...] = key(
        list, table_of(Perturbation), doc="test conditions (kind robustness)"
    )
    tournament: Tournament = key(
        dict, table_of(Tournament), doc="the empirical game (kind tournament)"
    )
    psro: Psro = key(
        dict, table_of(Psro), doc="the strategy set grown by learned responses (kind psro)"
    )
    output: Output = key(dict, table_of(Output), doc="where the run goes")
    learned_from: LearnedFrom = key(
        dict,
        table_of(LearnedFrom),
        doc="what the market was fitted to (`tradearena fit` writes it; the judges read it)",
    )
    text: str
    agent_folders: tuple[str, ...] = ()

    @property
    def labels(self) -> list[str]:
        """The agents' labels, in the order of the file."""
        return [entry.label for entry in self.agents]

    def index(self, label: str) -> int:
        """The position of the agent labelled ``label`` among `agents`."""
        return self.labels.index(label)

    def agent(self, label: str) -> AgentEntry:
        """The agent labelled ``label``."""
        return self.agents[self.index(label)]


TOP = table_of(Config)
"""An experiment file's top-level keys and tables, read from `Config`'s fields."""
AGENT = TOP["agents"].default
PERTURBATION = TOP["perturbations"].default
TOURNAMENT = TOP["tournament"].default
PSRO = TOP["psro"].default
OPTIONAL_SECTIONS = ("perturbations",)
"""Tables that only some kinds read (`SECTIONS` of the kind's module)."""
ROLE_KEYS = ("seats", "strategies")
"""The keys of one role's table (``[tournament] roles``)."""


TYPE_NAMES = {
    int: "an integer",
    float: "a number",
    str: "a string",
    bool: "true or false",
    list: "an array",
    dict: "a table",
}
"""A TOML type's name in messages and in the reference."""


class Locator:
    """Finds the line of a field in the TOML text, for messages.

    It follows table headers (``[a.b]``, ``[[agents]]`` counted per array) and ``key =``
    lines; a field inside an inline table is reported at the line of the inline table. A
    field that ``given`` holds (its key path -> the ``--set KEY=VALUE`` that replaced it) is
    named by that instead: its value came from the command line, not from a line of the file.
    """

    _HEADER = re.compile(r"^\s*(\[\[?)\s*([A-Za-z0-9_.\-\"' ]+?)\s*\]\]?\s*(#.*)?$")
    _KEY = re.compile(r"^\s*([A-Za-z0-9_\-]+|\"[^\"]*\")\s*=")

    def __init__(self, text: str, source: str, given: dict[tuple, str] | None = None) -> None:
        self.source = source
        self.given = given or {}
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
        for key, command_line in self.given.items():
            if path[: len(key)] == key:
                return ConfigError(f"{command_line}: {dotted}: {message}")
        line = self.line(path)
        at = f"{self.source}, line {line}" if line else self.source
        return ConfigError(f"{at}: {dotted or 'top level'}: {message}")
