"""Checking TOML tables against a schema, with errors that name the file, line and field.

`Field` describes one key; `check_table` fills defaults and checks types, ranges and unknown
keys of a parsed TOML table; `Config` is a checked experiment file, made of the typed sections
its tables are checked into (`Training`, `Testing`, `AgentEntry`, `Perturbation`,
`Tournament` and the `Role` of each of its roles, `Psro`, `Output`; its market an
`envs.spec.MarketSpec`), read by attribute; `Locator` finds the line of a field in the
text for the message::

    configs/x.toml, line 14: agents[1].id: unknown agent 'raq' (did you mean 'raql'?); ...
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tradearena.envs.errors import UserError, did_you_mean
from tradearena.envs.spec import MAX_SESSIONS

if TYPE_CHECKING:
    from tradearena.envs.spec import MarketSpec

__all__ = [
    "ANY_TABLE",
    "FILE_NAME_RULE",
    "REQUIRED",
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
# Each is built from its table once checked (`check_table` filled the defaults: the schema
# of `evaluation.experiment.config` is their one source), and read by attribute afterwards.


@dataclass(frozen=True)
class Training:
    """The ``[training]`` table: episodes per agent (or profile), greedy checkpoints every
    ``evaluate_every`` episodes (0: none) of ``evaluate_episodes`` each, ``sessions`` played at
    once, a saved checkpoint every ``checkpoint_every`` episodes (0: none)."""

    episodes: int
    evaluate_every: int
    evaluate_episodes: int
    sessions: int
    checkpoint_every: int


@dataclass(frozen=True)
class Testing:
    """The ``[testing]`` table: greedy test episodes per agent and condition."""

    episodes: int


@dataclass(frozen=True)
class AgentEntry:
    """One ``[[agents]]`` table: the agent ``id`` (a registry id or ``"module:ClassName"``),
    its ``label`` in the tables (once checked: the table's, else its class's name), the
    keywords ``params`` of its class, ``saved``: the saved agent it loads (the table's
    ``from``; once checked an absolute path; "" for a new agent), and ``train`` (False:
    frozen, only tested)."""

    id: str
    label: str = ""
    params: dict[str, Any] = dataclasses.field(default_factory=dict)
    saved: str = ""
    train: bool = True

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

    players: int
    mode: str  # "train-in-profile" or "pretrained"
    payoff: str  # "sharpe" or "pnl"
    sharpe_floor: float  # dollars
    weighting: str  # "tuyls" or "focal"
    # role name -> its Role; empty: one population (`evaluation.kinds.role_games`)
    roles: dict[str, Role] = dataclasses.field(default_factory=dict)
    reduced: int = 0  # players of the DPR game analysed (0: the full game)


@dataclass(frozen=True)
class Psro:
    """The ``[psro]`` table: the ``learner`` trained as each round's best response (its
    ``id``, ``label``, default the id's last part, and ``params``), at most ``rounds``
    rounds, and the deviation gain (payoff units) a response must exceed to join the game."""

    learner: AgentEntry
    rounds: int
    threshold: float


@dataclass(frozen=True)
class Perturbation:
    """One ``[[perturbations]]`` table: a test condition of a robustness experiment."""

    name: str
    type: str  # "adversary" or "zi"
    mode: str  # "takeover" or "trader" (adversary)
    p: float  # take-over probability per step (adversary, takeover)
    source: str  # label of the agent whose adversary acts (adversary)
    n_agents: int  # extra zero-intelligence traders (zi)


@dataclass(frozen=True)
class Output:
    """The ``[output]`` table: where the run goes, and whether it draws its figures."""

    dir: str
    figures: bool


@dataclass(frozen=True)
class LearnedFrom:
    """The ``[learned_from]`` table: the file names of the days a market was fitted to and
    the part of each day, [first, last] seconds after midnight (empty: not said)."""

    tapes: tuple[str, ...]
    window: tuple[float, ...]


@dataclass(frozen=True)
class Config:
    """A checked experiment file (`evaluation.experiment.config.load_config`): its tables as
    typed sections, read by attribute; frozen and picklable, so that jobs carry it to the
    workers.

    ``text`` is the file as run (TOML), what the run directory keeps as ``config.toml``: what
    the check added to the file written in (the labels it gave, a tape's absolute path, each
    file a trader names replaced by the run directory's copy, ``models/<n>/<name>``), the file
    as written otherwise. ``agent_folders``: where ``"module:ClassName"`` agents are
    imported from (the working directory and the file's folder, as the config was read)."""

    kind: str
    name: str
    seeds: int
    root_seed: int
    market: MarketSpec
    training: Training
    testing: Testing
    agents: tuple[AgentEntry, ...]
    perturbations: tuple[Perturbation, ...]
    tournament: Tournament
    psro: Psro
    output: Output
    learned_from: LearnedFrom
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
