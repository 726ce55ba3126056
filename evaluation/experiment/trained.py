"""Trained agents in a run directory: where each is saved, its card, a job's checkpoints.

Layout under the run directory:

- ``agents/<label>/seed-<n>/``: the agent of seed index n (a tournament's repetition) as it
  was when its testing began, saved by `Agent.save` (`agents.load` reads it), with
  ``card.md`` (`write_cards`). A tournament whose seats train in their profiles saves each
  seat's under ``agents/<label>/seed-<n>/profile-<key>/seat-<i>/``.
- ``checkpoints/<job id>/<unit>/episode-<e>/``: a job's training after e episodes (every
  seat's state and the records so far, `Checkpoints`), the latest only; what ``--resume``
  continues from; removed once the job is stored.

A job reads and writes these itself, so on a cluster the run directory must lie on a
filesystem its workers share (as a replayed tape's file must); a checkpoint a worker cannot
see only means that job trains again from its start, to the same records.
"""

from __future__ import annotations

import json
import shutil
import warnings
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
import tomli_w

from tradearena import agents
from tradearena.agents.base import Agent
from tradearena.agents.saving import (
    HEADER,
    episodes_trained,
    read_header,
    read_state,
    write_state,
)
from tradearena.envs.errors import UserError
from tradearena.envs.spec import MarketSpec
from tradearena.evaluation.analysis.metrics import DegenerateMetricWarning, sharpe
from tradearena.evaluation.experiment.store import EpisodeRecord

if TYPE_CHECKING:
    from tradearena.evaluation.experiment.schema import AgentEntry, Config

__all__ = [
    "Checkpoints",
    "agent_path",
    "discard_checkpoints",
    "load_saved",
    "saved_source",
    "write_cards",
]

AGENTS, CHECKPOINTS, CARD = "agents", "checkpoints", "card.md"


def agent_path(directory: str | Path, label: str, seed: int, *where: str) -> Path:
    """``directory/agents/<label>/seed-<seed>[/<where>...]``: where the run keeps an agent."""
    return Path(directory, AGENTS, label, f"seed-{seed}", *where)


def saved_source(path: str | Path, seed: int) -> Path:
    """The saved agent a config's ``from = path`` gives seed index ``seed``: ``path`` itself
    when it holds one, else its ``seed-<seed>`` (a run's ``agents/<label>``)."""
    path = Path(path)
    return path if (path / HEADER).exists() else path / f"seed-{seed}"


def load_saved(spec: AgentEntry, market: MarketSpec, seed: int) -> Agent:
    """The saved agent of an experiment's agent entry with ``from`` (seed index ``seed``),
    seated in ``market``; its own id may be imported when it is a ``module:Class``."""
    return agents.load(saved_source(spec.saved, seed), custom=(spec.id,), market=market)


def episodes_before(spec: AgentEntry, seed: int) -> int:
    """Training episodes the agent of ``spec`` had before this run (its ``from``'s notes)."""
    if not spec.saved:
        return 0
    return episodes_trained(saved_source(spec.saved, seed))


# ----------------------------------------------------------------------------- checkpoints
class Checkpoints:
    """The checkpoints of one training table of a job (``unit``: the agent's label, or
    "profile"), every ``every`` training episodes, in ``root``."""

    def __init__(self, root: Path, every: int) -> None:
        self.root, self.every = root, every

    @classmethod
    def of(cls, config: Config, job: Any, unit: str) -> Checkpoints | None:
        """The checkpoints of ``job`` for ``unit`` (``job``: an
        `evaluation.experiment.rollout.Job`), or None when the job has no run directory or
        ``[training] checkpoint_every`` is 0."""
        every = config.training.checkpoint_every
        if not (every and job.directory):
            return None
        return cls(Path(job.directory, CHECKPOINTS, job.id, unit), every)

    def due(self, before: int, after: int, last: int) -> bool:
        """Whether training from episode ``before`` to ``after`` (of ``last``) passed a
        checkpoint: a multiple of ``every``, or the end of training."""
        return after // self.every > before // self.every or after == last

    def save(self, policies: Sequence[Any], done: int, records: list[EpisodeRecord]) -> None:
        """Keep every seat's state and ``records`` after ``done`` training episodes (written
        aside, then renamed into place; older checkpoints removed)."""
        writing = self.root / ".writing"
        shutil.rmtree(writing, ignore_errors=True)
        writing.mkdir(parents=True)
        for seat, policy in enumerate(policies):
            (writing / f"seat-{seat}").mkdir()
            write_state(writing / f"seat-{seat}", policy.state_dict())
        progress = {"done": done, "records": [asdict(r) for r in records]}
        (writing / "progress.json").write_text(json.dumps(progress))
        writing.rename(self.root / f"episode-{done:09d}")
        for old in self._kept()[:-1]:
            shutil.rmtree(old)

    def restore(self, policies: Sequence[Any]) -> tuple[int, list[EpisodeRecord]]:
        """Load the latest checkpoint's states into ``policies`` (the seats, as saved);
        (episodes done, records so far), or (0, []) with none."""
        kept = self._kept()
        if not kept:
            return 0, []
        latest = kept[-1]
        for seat, policy in enumerate(policies):
            _, state = read_state(latest / f"seat-{seat}", policy.state_dict())
            policy.load_state_dict(state)
        progress = json.loads((latest / "progress.json").read_text())
        return progress["done"], [EpisodeRecord(**r) for r in progress["records"]]

    def _kept(self) -> list[Path]:
        return sorted(self.root.glob("episode-*")) if self.root.exists() else []


def discard_checkpoints(directory: str | Path, job_id: str) -> None:
    """Remove a stored job's checkpoints, and the folders they leave empty."""
    root = Path(directory, CHECKPOINTS)
    path = root / job_id
    shutil.rmtree(path, ignore_errors=True)
    folder = path.parent
    while folder.is_relative_to(root) and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
        folder = folder.parent


# ----------------------------------------------------------------------------- cards
def write_cards(
    directory: Path,
    config: Config,
    records: pd.DataFrame,
    entries: dict[str, AgentEntry] | None = None,
) -> list[Path]:
    """A ``card.md`` beside every saved agent of the run: the config excerpt that made it
    (its market: the task and the fields that differ from the task's market; its agent
    table), its training (episodes, learning-curve summary) and its test Sharpe ratios.
    ``entries``: the agent entry of each label (default: the config's; a kind that adds
    strategies, as PSRO does, gives theirs too)."""
    written = []
    if entries is None:
        entries = {entry.label: entry for entry in config.agents}
    market = config.market.to_table()
    task = MarketSpec(task=config.market.task).to_table()
    changed = {k: v for k, v in market.items() if v is not None and (k == "task" or v != task[k])}
    for header in sorted(Path(directory, AGENTS).glob(f"*/seed-*/**/{HEADER}")):
        path = header.parent
        label, seed, *where = path.relative_to(directory, AGENTS).parts
        if label not in entries:
            continue
        excerpt = tomli_w.dumps({"market": changed})
        excerpt += "\n" + tomli_w.dumps({"agents": [entries[label].table()]})
        mine = _records_of(records, label, int(seed.removeprefix("seed-")), where)
        text = _card(path, label, config, excerpt, mine)
        (path / CARD).write_text(text)
        written.append(path / CARD)
    return written


def _records_of(records: pd.DataFrame, label: str, seed: int, where: list[str]) -> pd.DataFrame:
    """The records of one saved agent: its label and seed; a seat of a profile, that seat."""
    mine = records[(records["agent"] == label) & (records["seed"] == seed)]
    if where:  # profile-<key>/seat-<i>
        profile, seat = where[0].removeprefix("profile-"), int(where[1].removeprefix("seat-"))
        mine = mine[(mine["condition"] == profile) & (mine["seat"] == seat)]
    return mine


def _load_call(path: Path, agent_id: str) -> str:
    """The `agents.load` call that reads the agent saved at ``path``: a ``"module:Class"``
    id must be allowed by name (``custom=``)."""
    custom = f", custom=({agent_id!r},)" if ":" in agent_id else ""
    return f'agents.load("{path}"{custom})'


def _card(path: Path, label: str, config: Config, excerpt: str, mine: pd.DataFrame) -> str:
    """The card's Markdown: what the agent is, how it trained and how it tested."""
    header = read_header(path)
    trained = episodes_trained(path)
    phases = {phase: mine[mine["phase"] == phase] for phase in ("train", "eval", "test")}
    lines = [
        f"# {label}, {path.name}",
        "",
        f"`{header['id']}`, trained {trained} episodes in "
        f"all, {len(phases['train'])} of them in this run ({config.kind} experiment, root "
        f"seed {config.root_seed}). `{_load_call(path, header['id'])}` reads it.",
        "",
    ]
    pnl = phases["train"].sort_values("episode")["pnl"].to_numpy(float)
    if len(pnl) >= 2:
        tenth = max(1, len(pnl) // 10)
        lines.append(
            f"- learning curve: mean training PnL ${pnl[:tenth].mean():.2f} over the first "
            f"{tenth} episodes, ${pnl[-tenth:].mean():.2f} over the last {tenth}"
        )
    if not phases["eval"].empty:
        training = config.training
        points = phases["eval"].groupby(phases["eval"]["episode"] // training.evaluate_episodes)
        means = points["pnl"].mean()
        lines.append(
            f"- greedy checkpoints: mean PnL ${means.iloc[0]:.2f} before training, "
            f"${means.iloc[-1]:.2f} after {int(means.index[-1]) * training.evaluate_every} "
            "training episodes"
        )
    test = phases["test"]
    groups = list(test.groupby("condition", sort=False))
    if config.kind in ("tournament", "psro") and len(groups) > 1:  # in every profile
        groups = [(f"all {len(groups)} profiles", test)]
    for condition, group in groups:
        values = group.sort_values("episode")["pnl"].to_numpy(float)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateMetricWarning)
            ratio = sharpe(values)
        lines.append(
            f"- test ({condition}): Sharpe {ratio:.3f} per episode, mean PnL "
            f"${values.mean():.2f} over {len(values)} episodes"
        )
    return "\n".join([*lines, "", "```toml", excerpt.rstrip(), "```", ""])


def check_saved_agents(directory: Path, labels: Sequence[str], seeds: int) -> None:
    """UserError unless every label has a saved agent per seed index under ``directory``."""
    for label in labels:
        for seed in range(seeds):
            path = agent_path(directory, label, seed)
            if not (path / HEADER).exists():
                inside = "profile-*/seat-*" if path.is_dir() else "nothing"
                raise UserError(
                    f"{directory}: no saved agent {label!r} for seed {seed} ({path} holds "
                    f"{inside}); evaluate tests agents trained alone"
                )
