"""An experiment file's tables checked into a `Config` (`checked_config`): the schema's keys
(`evaluation.experiment.schema`), the market (`evaluation.experiment.markets`), the agents
(each built once, in a seat of the market: its parameters and its saved state checked), the
test conditions, the roles and what the kind asks; and the file's text as run (`config_tables`
writes a config's tables back)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import tomli_w

from tradearena import agents
from tradearena.agents.base import Agent
from tradearena.agents.saving import read_header
from tradearena.envs.errors import UserError
from tradearena.envs.spec import MarketSpec
from tradearena.evaluation.experiment.kinds import KINDS
from tradearena.evaluation.experiment.markets import (
    MODELS,
    declared_files,
    learned_from,
    market_spec,
    market_table,
)
from tradearena.evaluation.experiment.rollout import build_agent
from tradearena.evaluation.experiment.schema import (
    FILE_NAME_RULE,
    MAX_JOBS,
    OPTIONAL_SECTIONS,
    ROLE_KEYS,
    TOP,
    AgentEntry,
    Config,
    Locator,
    Output,
    Perturbation,
    Psro,
    Role,
    Testing,
    Tournament,
    Training,
    check_table,
    is_file_name,
)
from tradearena.evaluation.experiment.trained import load_saved, saved_source

__all__ = ["checked_config", "config_tables"]


def checked_config(
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
    market = market_spec(checked["market"], where, base, complete)
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
        learned_from=learned_from(checked["learned_from"]),
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
    for n, (i, name, path) in enumerate(declared_files(config.market)):
        edits.append((traders[i], name, f"{MODELS}/{n}/{path.name}"))
    if not edits:
        return text
    for table, key, value in edits:
        table[key] = value
    return tomli_w.dumps(raw)


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
