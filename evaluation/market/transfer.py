"""Whether a market's verdicts hold on a real day (``tradearena transfer``).

A zoo of policies (`zoo`: the task's reference over a grid of its parameters and the
rule-based agents; the saved agents of runs given) is tested without training in the market
and on the real day's tape, over the same seeds and sessions on each side: seed index s,
session i meets the sessions of ``SeedSequence(root_seed, spawn_key=(s, i))`` whichever
policy plays. On the tape the seats' passive fills rest on the replay's queue model, an
assumption: every model the replay offers (`QUEUE_MODELS`) is tested, so that a verdict
can be seen not to rest on one. The market predicts well when it ranks the policies as the
tape does (`analysis.transfer.predictivity`).
"""

from __future__ import annotations

import math
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tradearena.envs.data.load import require_book
from tradearena.envs.errors import UserError, into, not_one_of, replacing, together
from tradearena.envs.seats import SeatedMarket
from tradearena.envs.simulator.replayer import QUEUE_MODELS
from tradearena.envs.spec import MarketSpec
from tradearena.evaluation.analysis.metrics import bootstrap_ci, sharpe
from tradearena.evaluation.analysis.transfer import Predictivity, agreeing, predictivity
from tradearena.evaluation.experiment.parallel import Executor, Study
from tradearena.evaluation.experiment.rollout import build_agent
from tradearena.evaluation.experiment.schema import AgentEntry
from tradearena.evaluation.experiment.store import JobResult
from tradearena.evaluation.market.sources import (
    LearnedHours,
    clock,
    held_out,
    hours_on,
    parse_source,
)

__all__ = [
    "MAX_SESSIONS_A_SIDE",
    "MIN_TRADING",
    "TASKS",
    "Baseline",
    "Policy",
    "Side",
    "Transfer",
    "baseline_of",
    "format_transfer",
    "market_of",
    "saved_policies",
    "session_pnl",
    "tape_market",
    "transfer",
    "transfer_job",
    "window_of",
    "write_transfer",
    "zoo",
]

TASKS = ("making", "execution")
"""The tasks a zoo is defined for."""
MIN_TRADING = 5
"""Fewest policies of a zoo that must trade for a rank correlation to mean anything."""
MAX_SESSIONS_A_SIDE = 10_000
"""The most sessions (``seeds`` x ``sessions``) a policy plays on one side: the zoo's
dozen policies on the market, the tape and the baseline under four queue models each play
them, a tenth of a second to a few seconds each, so more is days of work."""
AS_GRID = {"gamma": (0.01, 0.3), "sigma": (1.0, 8.0), "kappa": (0.1, 0.5, 2.0)}
"""Avellaneda-Stoikov's fixed parameters in the making zoo: risk aversion (per tick per
lot), volatility (ticks per step) and the fill intensity's decay (per tick)."""
SLICES = (2, 3, 5, 10, 15)
"""Passive TWAP's slice lengths (decision steps) in the execution zoo."""
EXECUTION_PNL = (
    "(an execution buys its parent order by the close: its PnL is minus the shortfall against "
    "the opening mid, shares the close's book could not sell valued at its mid; hold trades "
    "nothing until the last step, where the whole order is bought at market: it makes what "
    "the price fell, less that sweep's cost)"
)
"""What an execution zoo's PnL means, and its hold, under the verdict."""


@dataclass(frozen=True)
class Policy:
    """One policy of a zoo: ``label``, the agent ``id`` and its ``params``; a saved run's
    agent also has ``source`` (its ``RUN/agents/<label>``, one saved agent per seed index,
    taken in turn over ``saved_seeds``)."""

    label: str
    id: str
    params: dict[str, Any] = field(default_factory=dict)
    source: str = ""
    saved_seeds: int = 0


def zoo(task: str) -> list[Policy]:
    """The fixed policies of ``task``: making, Avellaneda-Stoikov quotes over `AS_GRID`;
    execution, TWAP and passive TWAP over `SLICES`; both, random and hold."""
    if task == "making":
        policies = [
            Policy(
                f"as g={g:g} s={s:g} k={k:g}",
                "avellaneda_stoikov",
                {"gamma": g, "sigma": s, "kappa": k},
            )
            for g in AS_GRID["gamma"]
            for s in AS_GRID["sigma"]
            for k in AS_GRID["kappa"]
        ]
    elif task == "execution":
        policies = [Policy("twap", "twap")] + [
            Policy(f"passive_twap l={n}", "passive_twap", {"slice_steps": n}) for n in SLICES
        ]
    else:
        raise UserError(f"--task: {not_one_of(task, TASKS)}")
    return policies + [Policy("random", "random"), Policy("hold", "hold")]


def saved_policies(run_dir: str | Path) -> list[Policy]:
    """The agents a run saved (its config's agents: label and id), each a `Policy` labelled
    ``<run>/<label>``; UserError naming the directory when it saved none, or when its
    config.toml cannot be read."""
    from tradearena.agents.saving import HEADER
    from tradearena.evaluation.experiment.rundir import run_config_of
    from tradearena.evaluation.experiment.trained import AGENTS, agent_path

    directory = Path(run_dir)
    if not (directory / "config.toml").is_file():
        raise UserError(f"--agents {run_dir}: not a run directory (no config.toml)")
    try:
        config = run_config_of(directory)
    except UserError as error:
        raise UserError(f"--agents {run_dir}: {error}") from None
    policies = []
    for entry in config.agents:
        if (agent_path(directory, entry.label, 0) / HEADER).exists():
            source = str(directory.resolve() / AGENTS / entry.label)
            label = f"{directory.name}/{entry.label}"
            policies.append(Policy(label, entry.id, {}, source, config.seeds))
    if not policies:
        raise UserError(f"--agents {run_dir}: the run saved no agent trained alone")
    return policies


# -------------------------------------------------------------------------------- markets
KEPT = (
    "task",
    "actions",
    "order_size",
    "n_steps",
    "step_seconds",
    "position_limit",
    "fee_per_share",
    "reward_scale",
    "inventory_penalty",
    "parent_order",
    "windows",
    "depth_levels",
    "order_latency",
    "feed_latency",
)
"""What a seat sees and may do: the fields a tape's market takes from the market judged."""


def market_of(name: str, task: str | None) -> MarketSpec:
    """The market ``name`` names (an experiment file's ``[market]`` or a Gymnasium id), as
    ``task`` (default: its own) sets a seat in it."""
    spec = parse_source(name).spec
    if spec is None:
        raise UserError(
            f"MARKET {name}: {_what_file(Path(name))}, not a market; give a market (an "
            "experiment file, .toml, or a Gymnasium id) and the real day after --against"
        )
    if task is not None and task not in TASKS:
        raise UserError(f"--task: {not_one_of(task, TASKS)}")
    task = task or spec.task
    if task not in TASKS:
        raise UserError(f"{name}: its task is {spec.task!r}; give --task ({' or '.join(TASKS)})")
    if task != spec.task:  # the market's background and clock; the seat of the task
        keep = {f: getattr(spec, f) for f in MarketSpec.__dataclass_fields__ if f not in KEPT}
        spec = MarketSpec(**{**keep, "discretizer": None, "task": task})
    return spec


def _what_file(path: Path) -> str:
    """What the existing ``path`` holds, as a user would name it: a LOBSTER file, a
    converted recording's directory, or any other file or directory."""
    from tradearena.envs.data.convert import META
    from tradearena.envs.data.load import orderbook_beside

    if path.is_dir():
        return "a converted recording (a tape)" if (path / META).exists() else "a directory"
    if orderbook_beside(path) is not None:
        return "a LOBSTER message file (a tape)"
    if "_orderbook_" in path.name:
        return "a LOBSTER orderbook file (a tape's)"
    return "a file that is not an experiment file (.toml)"


def tape_market(
    market: MarketSpec, tape: str, window: tuple[int, int] | None, queue: str
) -> MarketSpec:
    """The seat of ``market`` on the tape ``tape`` (its own day, price, tick and lot),
    sessions opening at the steps of ``window``, passive fills under the replay's ``queue``
    model."""
    seat = {f: getattr(market, f) for f in KEPT}
    return MarketSpec(**seat, tape=tape, window_steps=window, queue=queue)


def window_of(
    spec: MarketSpec, start: float | None, window: tuple[int, int] | None
) -> tuple[int, int] | None:
    """The steps at which ``spec``'s sessions may open: ``window`` (`UserError` naming
    ``--window`` unless its day holds it), or, from ``start`` (seconds after midnight), every
    step at or after it whose session ends by the close (None: any); `UserError` when both
    are given."""
    if window is not None and start is not None:
        raise UserError("--from and --window both say when sessions open: give one of them")
    if window is None and start is None:
        return None
    market = spec.market(0)
    day = market.day_steps or market.n_steps
    last = day - market.n_steps
    if window is not None:
        if window[1] > last:
            raise UserError(
                f"--window {window[0]},{window[1]}: the tape's day has {day} steps, so its "
                f"{market.n_steps}-step sessions open at steps 0 to {last}"
            )
        return window
    first = max(math.ceil((start - market.day_open) / market.step_seconds), 0)
    if first > last:
        close, opens = (clock(market.day_open + s * market.step_seconds) for s in (day, last))
        minutes = market.n_steps * market.step_seconds / 60
        raise UserError(
            f"--from {clock(start)}: no {minutes:g}-minute session opening then ends by the "
            f"day's close, {close} (the last opens at {opens})"
        )
    return first, last


@dataclass(frozen=True)
class Baseline:
    """The replay a market is judged beside: the tape's ``hours`` (`LearnedHours`) replayed
    in sessions opening at the tape's steps ``steps`` (first, last)."""

    hours: LearnedHours
    steps: tuple[int, int]


def baseline_of(
    market: str, tape: MarketSpec, given: tuple[float, float] | None, needed: bool
) -> Baseline | str:
    """The replay of the hours the market ``market`` learned from on the day of ``tape`` (a
    tape's market, `tape_market`): ``given`` ([first, last] seconds after midnight, from
    ``--baseline``) or the hours its file names (`Source.learned_hours`). Without them, or when the
    day does not hold them whole sessions, the reason why; a `UserError` instead when the
    hours were ``given`` or the baseline is ``needed``. The replay's sessions open and close
    on the tape's steps nearest to the hours' ends."""
    if given is not None:
        hours = LearnedHours(*given, (), f"--baseline {clock(given[0])},{clock(given[1])}")
        hours = hours_on(hours, str(tape.tape), given=True)
    else:
        named = parse_source(market).learned_hours
        hours = (
            "its file names no hours it learned from"
            if named is None
            else hours_on(named, str(tape.tape), given=False)
        )
    if not isinstance(hours, str):
        day = tape.market(0)
        step, n = day.step_seconds, day.n_steps
        first = max(round((hours.first - day.day_open) / step), 0)  # to the nearest step
        last = round((hours.last - day.day_open) / step) - n
        if first <= last:
            return Baseline(hours, (first, last))
        hours = f"the hours {hours} hold no {n}-step session of the tape"
    if given is not None or needed:
        raise UserError(
            f"{market}: no replay to judge it beside: {hours} (--baseline FIRST,LAST, two "
            "times HH:MM, names the tape's hours to replay)"
        )
    return hours


# ------------------------------------------------------------------------------- sessions
def session_pnl(
    spec: MarketSpec, policy: Policy, seeds: int, sessions: int, root_seed: int
) -> np.ndarray:
    """PnL (dollars) and trades of ``policy`` alone in ``spec``'s market, shape (seeds,
    sessions, 2): seed index s, session i plays ``SeedSequence(root_seed, spawn_key=(s, i))``
    greedily, with the saved agent of seed index ``s % saved_seeds`` for a saved policy."""
    out = np.zeros((seeds, sessions, 2))
    for s in range(seeds):
        agent = _agent(policy, spec, s, root_seed)
        seated = SeatedMarket(spec, [agent])
        for i in range(sessions):
            result = seated.play(np.random.SeedSequence(root_seed, spawn_key=(s, i)))[0]
            out[s, i] = result["pnl"], result["trades"]
    return out


def _agent(policy: Policy, spec: MarketSpec, seed: int, root_seed: int):
    entry = AgentEntry(policy.id, policy.label, policy.params, saved=policy.source)
    if policy.source:
        from tradearena.evaluation.experiment.trained import load_saved

        return load_saved(entry, spec, seed % policy.saved_seeds)
    entropy = np.random.SeedSequence(root_seed, spawn_key=(seed,)).generate_state(1)[0]
    return build_agent(entry, spec, int(entropy))


@dataclass(frozen=True)
class Side:
    """The work of one transfer job: ``policy`` in ``market`` (one side: the market, or the
    tape under a queue model), ``seeds`` x ``sessions`` sessions under ``root_seed``."""

    market: MarketSpec
    policy: Policy
    seeds: int
    sessions: int
    root_seed: int


def transfer_job(job: Study[Side]) -> JobResult:
    """One policy on one side (``job.work``); its records, one ``(pnl, trades)`` pair per
    session in (seed, session) order."""
    start = time.perf_counter()
    side = job.work
    try:
        values = session_pnl(side.market, side.policy, side.seeds, side.sessions, side.root_seed)
    except Exception:  # noqa: BLE001 - reported with the policy it failed for
        return JobResult(job.id, job.seed, (), time.perf_counter() - start, traceback.format_exc())
    records = tuple(tuple(map(float, pair)) for pair in values.reshape(-1, 2))
    return JobResult(job.id, job.seed, records, time.perf_counter() - start)


# -------------------------------------------------------------------------------- judging
@dataclass(frozen=True)
class Transfer:
    """The zoo tested in a market and on a tape: ``table`` (`write_transfer`'s rows), per
    queue model of the tape the market's `Predictivity` (``verdicts``) and its baseline's
    (``baseline``: the replay of the hours it learned from under the same queue model, when
    there is one, `baseline_of`), the zoo's ``task``, the tape's sessions' ``opening``
    (HH:MM-HH:MM, "" for any) and ``notes``: why there is no baseline."""

    table: pd.DataFrame
    verdicts: dict[str, Predictivity]
    market: str
    tape: str
    baseline: dict[str, Predictivity] = field(default_factory=dict)
    hours: LearnedHours | None = None
    task: str = ""
    opening: str = ""
    notes: tuple[str, ...] = ()


def transfer(
    market: str,
    against: str,
    *,
    executor: Executor,
    task: str | None = None,
    window: tuple[int, int] | None = None,
    start: float | None = None,
    agents: Sequence[str] = (),
    seeds: int = 4,
    sessions: int = 10,
    root_seed: int = 0,
    queues: Sequence[str] = QUEUE_MODELS,
    baseline: tuple[float, float] | None = None,
) -> Transfer:
    """Test the zoo of ``task`` (and the saved agents of the runs ``agents``) in ``market``
    and on the tape ``against`` (its sessions opening in ``window``, or from ``start``,
    seconds after midnight; the same window in the market when its day is as long), over
    ``seeds`` x ``sessions`` sessions a side, on ``executor``; the tape under each of
    ``queues``, and beside the market the replay of the tape's hours it learned from
    (``baseline``, [first, last] seconds after midnight, or what its file names; needed with
    ``start``) under each of ``queues`` too."""
    if seeds * sessions > MAX_SESSIONS_A_SIDE:
        raise UserError(
            f"--seeds {seeds:,} x --sessions {sessions:,}: {seeds * sessions:,} sessions a policy "
            f"and side, more than the {MAX_SESSIONS_A_SIDE:,} a judgment may play"
        )
    spec = market_of(market, task)
    policies = zoo(spec.task) + [p for run in agents for p in saved_policies(run)]
    probe = tape_market(spec, against, None, queues[0])
    require_book(probe.replayed_tape(), "the transfer judge's sessions")
    steps = window_of(probe, start, window)
    replay = baseline_of(market, probe, baseline, needed=start is not None)
    if start is not None and isinstance(replay, Baseline):
        held_out(replay.hours, start)  # the sessions judged, from start, held out of them
    _no_leak(market, spec, against, start)
    sides = {"market": _same_window(spec, steps)}
    if isinstance(replay, Baseline):
        sides |= {f"baseline/{q}": tape_market(spec, against, replay.steps, q) for q in queues}
    sides |= {f"tape/{q}": tape_market(spec, against, steps, q) for q in queues}
    jobs = [
        Study(f"{side}|{policy.label}", 0, Side(side_spec, policy, seeds, sessions, root_seed))
        for side, side_spec in sides.items()
        for policy in policies
    ]
    results = {r.job_id: r for r in executor.run(jobs)}
    failed = [r for r in results.values() if r.error is not None]
    if failed:
        last = failed[0].error.strip().splitlines()[-1]
        raise UserError(f"{failed[0].job_id.split('|', 1)[1]}: {last}")

    def values(side: str) -> np.ndarray:  # (policies, seeds, sessions, 2)
        return np.array(
            [results[f"{side}|{p.label}"].records for p in policies], dtype=float
        ).reshape(len(policies), seeds, sessions, 2)

    measured = {side: values(side) for side in sides}
    trading = (measured["market"][..., 1].sum(axis=(1, 2)) > 0) | np.any(
        [
            m[..., 1].sum(axis=(1, 2)) > 0
            for side, m in measured.items()
            if side.startswith("tape/")
        ],
        axis=0,
    )
    if trading.sum() < MIN_TRADING:
        raise UserError(
            f"only {int(trading.sum())} of the zoo's {len(policies)} policies trade; a rank "
            f"correlation needs at least {MIN_TRADING}"
        )
    real = {q: measured[f"tape/{q}"][..., 0] for q in queues}
    replayed = {q: measured[f"baseline/{q}"][..., 0] for q in queues if f"baseline/{q}" in sides}
    return Transfer(
        _rows(policies, measured),
        {q: predictivity(measured["market"][..., 0], real[q]) for q in queues},
        Path(market).stem,
        Path(against).stem,
        {q: predictivity(pnl, real[q]) for q, pnl in replayed.items()},
        replay.hours if isinstance(replay, Baseline) else None,
        spec.task,
        _opening(probe, steps),
        () if isinstance(replay, Baseline) else (f"no baseline: {replay}",),
    )


def _no_leak(name: str, spec: MarketSpec, against: str, start: float | None) -> None:
    """A `UserError` when ``spec`` is a responsive replay of the tape ``against`` whose
    answer is estimated from hours the tape is judged on (from ``start``, seconds after
    midnight; None: the whole day): it would have learned from them (`held_out`)."""
    if not spec.responsive or Path(str(spec.tape)).resolve() != Path(against).resolve():
        return
    if spec.response_hours is None or start is None:
        judged = f"from {clock(start)}" if start is not None else "the whole day"
        raise UserError(
            f"{name}: its responsive replay learns how the tape answers a trade from the whole "
            f"tape, and the tape is judged {judged}: give [market] response_hours before the "
            "hours judged, and --from"
        )
    held_out(LearnedHours(*spec.response_hours, (), f"{name}'s response_hours"), start)


def _opening(tape: MarketSpec, steps: tuple[int, int] | None) -> str:
    """When the sessions of ``tape``'s market open at ``steps``, HH:MM-HH:MM ("" for any)."""
    if steps is None:
        return ""
    market = tape.market(0)
    return "-".join(clock(market.day_open + s * market.step_seconds) for s in steps)


def _same_window(spec: MarketSpec, window: tuple[int, int] | None) -> MarketSpec:
    """``spec`` with its sessions opening in ``window`` when its day holds it, else as it
    is (a market with no day of its own opens every session at its open)."""
    if window is None or spec.day_steps is None:
        return spec
    if window[1] > spec.day_steps - (spec.n_steps or 0):
        return spec
    return replace(spec, window_steps=window)


COLUMNS = (
    "policy",
    "side",
    "mean_pnl",
    "low",
    "high",
    "sharpe",
    "sharpe_low",
    "sharpe_high",
    "trades",
)
"""`transfer.csv`'s columns: per policy and side ("market", "baseline/<queue model>": the
replay of the hours the market learned from, or "tape/<queue model>") the mean PnL a session
(dollars) with its 95% bootstrap interval over seeds, the Sharpe ratio of the sessions' PnL
with its interval over sessions, and the mean trades a session."""


def _rows(policies: Sequence[Policy], measured: dict[str, np.ndarray]) -> pd.DataFrame:
    """`COLUMNS` rows of every policy on every side (``measured``: side -> (policies,
    seeds, sessions, 2) PnL and trades)."""
    rows = []
    for side, m in measured.items():
        for p, values in zip(policies, m):
            pnl = values[..., 0]
            mean = bootstrap_ci(pnl.mean(axis=1), n_resamples=1000)
            ratio = (
                bootstrap_ci(pnl.reshape(-1), _sharpe, n_resamples=1000)
                if np.ptp(pnl) > 0
                else None
            )
            rows.append(
                (
                    p.label,
                    side,
                    float(pnl.mean()),
                    mean.low,
                    mean.high,
                    _sharpe(pnl.reshape(-1)),
                    ratio.low if ratio else math.nan,
                    ratio.high if ratio else math.nan,
                    float(values[..., 1].mean()),
                )
            )
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _sharpe(x: np.ndarray) -> float:
    return sharpe(x) if len(x) > 1 and np.ptp(x) > 0 else math.nan


# ------------------------------------------------------------------------------- writing
def _verdict_line(name: str, v: Predictivity, labels: Sequence[str]) -> str:
    return (
        f"  {name:9} Spearman {v.rho:.2f} [{v.low:.2f}, {v.high:.2f}], regret "
        f"${v.regret:.2f} a session (it picks {labels[v.pick]!r})"
    )


def _against_replay(market: Predictivity, replay: Predictivity) -> str:
    """Whether the market beats its replay: ranks the zoo at least as well (Spearman) and
    picks at least as well (regret), in words."""
    if (market.rho, market.low, market.high, market.regret) == (
        replay.rho,
        replay.low,
        replay.high,
        replay.regret,
    ):
        return "  the market meets its replay exactly"
    worse = [
        text
        for text, fails in (
            ("it ranks the zoo worse", not market.rho >= replay.rho),
            ("its pick costs more", market.regret > replay.regret),
        )
        if fails
    ]
    if worse:
        return f"  the market does not beat its replay: {' and '.join(worse)}"
    return "  the market beats its replay: it ranks the zoo at least as well and picks as well"


def format_transfer(result: Transfer, verbose: bool = False) -> str:
    """The verdict first (for an execution zoo, what its PnL means: `EXECUTION_PNL`): per
    group of queue models that agree, the market's rank correlation with the tape and its
    pick's regret, its baseline's (the replay of the hours it learned from) and whether it
    beats it; then why there is no baseline; with
    ``verbose``, each policy's mean PnL a session on every side (sides that agree in one
    column)."""
    labels = list(result.table.policy.unique())
    policies = len(labels)
    opening = f", sessions opening {result.opening}" if result.opening else ""
    zoo = f"the {result.task} zoo ({policies} policies){opening}"
    lines = [f"{result.market} against {result.tape}: {zoo}"]
    if result.task == "execution":
        lines.append(EXECUTION_PNL)
    if result.hours is not None:
        lines.append(f"baseline: the replay of {result.hours} ({result.hours.source})")

    def numbers(q: str) -> np.ndarray:
        judged = [result.verdicts[q]] + ([result.baseline[q]] if q in result.baseline else [])
        return np.array([(v.rho, v.low, v.high, v.pick, v.regret) for v in judged])

    shown = {q: numbers(q) for q in result.verdicts}
    for first, queues in agreeing(shown).items():
        name = "queue models " + ", ".join(queues) if len(queues) > 1 else f"queue model {first}"
        lines.append(f"{name}:")
        lines.append(_verdict_line("market", result.verdicts[first], labels))
        if first in result.baseline:
            lines.append(_verdict_line("baseline", result.baseline[first], labels))
            lines.append(_against_replay(result.verdicts[first], result.baseline[first]))
    lines += result.notes
    if verbose:
        wide = result.table.pivot(index="policy", columns="side", values="mean_pnl")
        wide = wide.reindex(index=labels, columns=result.table.side.unique())
        groups = agreeing({side: wide[side].to_numpy() for side in wide.columns})
        merged = wide[list(groups)].rename(
            columns={
                first: first.split("/")[0] + "/" + "=".join(s.split("/")[-1] for s in sides)
                if len(sides) > 1
                else first
                for first, sides in groups.items()
            }
        )
        lines += ["", "mean PnL a session, dollars (sides that agree share a column):"]
        lines.append(merged.to_string(float_format=lambda x: f"{x:.2f}"))
    return "\n".join(lines)


def write_transfer(result: Transfer, out: Path) -> list[Path]:
    """``out``/transfer.csv (`COLUMNS`), ``out``/predictivity.csv (per side, "market" or
    "baseline", and queue model: rho, its interval, the pick, the best and the regret) and
    ``out``/transfer.png (simulated against real mean PnL, one point a policy, per queue
    model; the baseline's beside)."""
    from matplotlib.figure import Figure

    from tradearena.evaluation.analysis.plots import save_figure
    from tradearena.evaluation.analysis.realism_plots import transfer_scatter

    paths = [out / "transfer.csv", out / "predictivity.csv", out / "transfer.png"]
    labels = list(result.table.policy.unique())
    verdicts = pd.DataFrame(
        [
            {
                "side": side,
                "queue": q,
                "spearman": v.rho,
                "low": v.low,
                "high": v.high,
                "pick": labels[v.pick],
                "best": labels[v.best],
                "regret": v.regret,
            }
            for side, judged in (("market", result.verdicts), ("baseline", result.baseline))
            for q, v in judged.items()
        ]
    )
    figure = Figure(figsize=(9.6, 5.6), layout="constrained")
    transfer_scatter(
        result.table,
        {"market": result.verdicts, "baseline": result.baseline},
        result.market,
        result.tape,
        figure.add_subplot(),
    )
    with into(out), together():  # all three, or none
        for table, path in ((result.table, paths[0]), (verdicts, paths[1])):
            with replacing(path) as temporary:
                table.to_csv(temporary, index=False)
        save_figure(figure, paths[2], dpi=100)
    return paths
