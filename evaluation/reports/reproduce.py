"""Reproduce the source text's three experiments and write docs/results.md from the runs.

Every number in the report is read from the run directories this writes; nothing is typed by
hand. The report states for each claim of the source text whether it held here, with the
numbers side by side. Its prose, the source text's own numbers and the claims checked are
data, in docs/report.toml (`REPORT`).
"""

from __future__ import annotations

import shutil
import tomllib
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from tradearena.evaluation.analysis.alpharank import alpharank
from tradearena.evaluation.analysis.dynamics import rest_points, trajectory
from tradearena.evaluation.analysis.metrics import DegenerateMetricWarning
from tradearena.evaluation.analysis.payoffs import PayoffTable
from tradearena.evaluation.analysis.summary import Checkpointing
from tradearena.evaluation.experiment.config import load_config
from tradearena.evaluation.experiment.parallel import Executor
from tradearena.evaluation.experiment.rundir import load_run
from tradearena.evaluation.experiment.runner import run_experiment
from tradearena.evaluation.experiment.schema import Config

__all__ = [
    "EXPERIMENTS",
    "REPORT",
    "claims_section",
    "curve_variance",
    "reproduce",
    "value_variance",
    "write_report",
]

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
REPORT = Path(__file__).resolve().parents[2] / "docs" / "report.toml"
"""The report's prose, the source text's numbers and the claims it checks."""


@dataclass(frozen=True)
class Experiment:
    name: str
    config: str  # file in configs/
    optional: bool = False  # needs data the repository does not ship


EXPERIMENTS = (
    Experiment("sharpe", "paper_sharpe.toml"),
    Experiment("sharpe_lobster", "paper_sharpe_lobster.toml", optional=True),
    Experiment("robustness", "paper_robustness.toml"),
    Experiment("egta", "paper_egta.toml"),
    Experiment("risk_making", "paper_risk_making.toml"),
    Experiment("risk_execution", "paper_risk_execution.toml"),
    Experiment("deep_making", "paper_deep_making.toml"),
    Experiment("deep_execution", "paper_deep_execution.toml"),
)


def scaled(config_path: Path, scale: float) -> dict:
    """Overrides multiplying seeds and episodes by ``scale`` (1: the file as written)."""
    if scale == 1:
        return {}
    config = load_config(config_path)
    return {
        "seeds": max(1, round(config.seeds * scale)),
        "training": {"episodes": max(1, round(config.training.episodes * scale))},
        "testing": {"episodes": max(2, round(config.testing.episodes * scale))},
    }


def reproduce(
    executor: Executor,
    *,
    runs: Path = Path("runs"),
    docs: Path = Path("docs"),
    scale: float = 1.0,
    overrides: dict | None = None,
    experiments: tuple[Experiment, ...] = EXPERIMENTS,
) -> Path:
    """Run ``experiments`` into ``runs`` (resuming finished jobs) and write the report into
    ``docs``; returns the report's path. An optional experiment whose data file is missing
    is reported as skipped."""
    directories: dict[str, Path | str] = {}
    for experiment in experiments:
        path = CONFIGS / experiment.config
        merged = {**scaled(path, scale), **(overrides or {})}
        try:
            load_config(path, merged)
        except ValueError as error:
            if not experiment.optional:
                raise
            directories[experiment.name] = str(error)
            continue
        suffix = "" if scale == 1 else f"_x{scale:g}"
        out = runs / f"paper_{experiment.name}{suffix}"
        outcome = run_experiment(path, executor, out=out, resume=True, overrides=merged)
        if outcome.failed:
            raise RuntimeError(f"{experiment.config}: jobs failed: {sorted(outcome.failed)}")
        directories[experiment.name] = outcome.directory
    return write_report(directories, docs)


# ------------------------------------------------------------------------------- the report
def write_report(directories: dict[str, Path | str], docs: Path) -> Path:
    """docs/results.md (and its figures in docs/figures/) from the run directories; a value
    that is a string says why that experiment was skipped."""
    figures = docs / "figures"
    figures.mkdir(parents=True, exist_ok=True)
    text = tomllib.loads(REPORT.read_text())
    parts = [text["header"], "## Experiment 1: Sharpe comparison\n"]
    synthetic = "Replay of a synthetic day"
    parts.append(sharpe_section(directories["sharpe"], figures, synthetic, text["sharpe"]))
    lobster = directories.get("sharpe_lobster", "not run")
    if isinstance(lobster, Path):
        title = "Replay of a real LOBSTER day"
        parts.append(sharpe_section(lobster, figures, title, text["sharpe"], "lobster"))
    else:
        parts.append(f"### Replay of a real LOBSTER day\n\nSkipped: {lobster}\n")
    parts.append(robustness_section(directories["robustness"], figures, text["robustness"]))
    parts.append(egta_section(directories["egta"], figures))
    for section in ("risk", "deep"):
        runs = (directories[f"{section}_making"], directories[f"{section}_execution"])
        parts.append(claims_section(text[section], *runs, figures, section))
    parts.append(text["tried"])
    parts.append(runs_table(Path(directories["sharpe"]).parent))
    report = docs / "results.md"
    parts.append(kept_sections(report))
    report.write_text("\n".join(parts))
    return report


KEPT = "<!-- Sections below are not written by `tradearena reproduce`: it keeps them. -->"
"""The line after which docs/results.md holds sections of other experiments (the carry-over's),
which a new report keeps as they are."""


def kept_sections(report: Path) -> str:
    """The part of ``report`` from the `KEPT` line on ("" when the file or the line is not
    there)."""
    text = report.read_text() if report.exists() else ""
    return text[text.index(KEPT) :] if KEPT in text else ""


def _summary(directory: Path) -> tuple[Config, pd.DataFrame, pd.DataFrame]:
    config, records = load_run(directory)
    summary = pd.read_csv(directory / "summary.csv")
    return config, records, summary


def _interval(row: pd.Series, metric: str) -> str:
    return f"{row[metric]:.3f} [{row[metric + '_low']:.3f}, {row[metric + '_high']:.3f}]"


def _metrics_table(rows: pd.DataFrame) -> str:
    lines = [
        "| agent | Sharpe | mean PnL ($) | sd PnL ($) | CVaR 5% ($) | exposure (shares) | "
        "hit rate | plateau | seeds x episodes |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for _, row in rows.iterrows():
        lines.append(
            f"| {row['agent']} | {_interval(row, 'sharpe')} | {_interval(row, 'mean_pnl')} | "
            f"{row['std_pnl']:.2f} | {row['cvar_5']:.2f} | {row.get('exposure', np.nan):.0f} | "
            f"{row['hit_rate']:.2f} | {_plateau(row)} | "
            f"{int(row['seeds'])} x {int(row['episodes'] / row['seeds'])} |"
        )
    return "\n".join(lines)


def _plateau(row: pd.Series) -> str:
    """'episode N' where the learning curve plateaued, 'not reached', or '-' (no curve)."""
    if "plateaued" not in row or pd.isna(row["plateaued"]):
        return "-"
    return f"episode {int(row['plateau_episode'])}" if row["plateaued"] else "not reached"


def _agents_table(config: Config) -> str:
    """The agents of a run and their parameters, as the run's config gives them."""
    lines = ["| agent | id | parameters |", "|---|---|---|"]
    for spec in config.agents:
        params = ", ".join(f"{k} = {v}" for k, v in spec.params.items()) or "defaults"
        lines.append(f"| {spec.label} | {spec.id} | {params} |")
    market = config.market
    lines.append("")
    lines.append(
        f"Market: task {market.task} ({market.action_set} actions of {market.order_size} "
        f"shares), position limit {market.position_limit} shares, reward scale "
        f"{market.reward_scale}, fees {market.fee_per_share} $/share."
    )
    return "\n".join(lines) + "\n"


def _copy_figure(directory: Path, name: str, figures: Path, prefix: str) -> str:
    source = directory / name
    if not source.exists():
        return ""
    target = figures / f"{prefix}_{name}"
    shutil.copyfile(source, target)
    return f"![{prefix} {name}](figures/{target.name})\n"


def _held(statement: str, held: bool) -> str:
    return f"- {statement}: **{'held' if held else 'did not hold'}** here."


def runs_table(runs: Path) -> str:
    """Every paper run found in ``runs`` (any scale), with its size and its headline numbers:
    mean test Sharpe per agent (and condition)."""
    lines = [
        "| run directory | kind | seeds | training episodes | test episodes | mean test Sharpe |",
        "|---|---|---|---|---|---|",
    ]
    for directory in sorted(runs.glob("paper_*")):
        if not (directory / "summary.csv").exists():
            continue
        config, _, summary = _summary(directory)
        if config.kind == "tournament":
            stable, end, _ = _dynamics_summary(PayoffTable.read_csv(directory / "payoffs.csv"))
            table = PayoffTable.read_csv(directory / "payoffs.csv")
            numbers = (
                f"dynamics from the uniform mix end near {table.strategies[int(np.argmax(end))]}"
            )
        else:
            numbers = "; ".join(
                f"{row.agent}{'' if row.condition == 'clean' else f' ({row.condition})'} "
                f"{row.sharpe:.3f}"
                for row in summary.itertuples()
            )
        lines.append(
            f"| `{directory.name}` | {config.kind} | {config.seeds} | "
            f"{config.training.episodes} | {config.testing.episodes} | {numbers} |"
        )
    return "Runs in this report's run folder:\n\n" + "\n".join(lines) + "\n"


def sharpe_section(
    directory: Path, figures: Path, title: str, text: dict, prefix: str = "sharpe"
) -> str:
    """One replay's Sharpe comparison; ``text``: the report's ``[sharpe]`` table."""
    config, _, summary = _summary(directory)
    rows = summary[summary["condition"] == "clean"].set_index("agent", drop=False)
    sharpe = rows["sharpe"]
    order = ["ra21q", "ra2q", "raql"]
    claim = all(a in sharpe for a in order) and sharpe["ra21q"] > sharpe["ra2q"] > sharpe["raql"]
    market = config.market
    source = "a synthetic day" if market.tape == "synthetic" else Path(market.tape).name
    lines = [
        f"### {title}\n",
        f"Replay of {source}; episodes are {market.n_steps}-minute windows of the day; "
        f"{config.training.episodes} training and {config.testing.episodes} test "
        f"episodes per seed; seeds {config.seeds} (root seed {config.root_seed}); "
        f"run directory `{directory}`.\n",
        _agents_table(config),
        _metrics_table(rows.sort_values("sharpe", ascending=False)),
        "",
        text["source"],
        _held("RA2.1-Q > RA2-Q > RAQL in mean test Sharpe ratio", claim)
        + f" (RA2.1-Q {sharpe.get('ra21q', np.nan):.3f}, RA2-Q {sharpe.get('ra2q', np.nan):.3f}, "
        f"RAQL {sharpe.get('raql', np.nan):.3f}; where the intervals overlap the ordering is "
        "not significant at these sample sizes.)",
        "",
        _copy_figure(directory, "sharpe.png", figures, prefix),
        _copy_figure(directory, "learning_curves.png", figures, prefix),
    ]
    return "\n".join(lines)


def robustness_section(directory: Path, figures: Path, text: dict) -> str:
    """The robustness tables; ``text``: the report's ``[robustness]`` table (the source's
    Sharpe ratios, Table 1)."""
    source = text["source_sharpe"]
    config, _, summary = _summary(directory)
    lines = [
        "## Experiment 2: robustness\n",
        f"RA2-Q and RA3-Q trained in the same clean market (replay of a synthetic day, "
        f"{config.market.n_steps}-minute windows, {config.training.episodes} training "
        f"episodes, {config.seeds} seeds), then tested under each condition "
        f"({config.testing.episodes} test episodes per seed); run directory "
        f"`{directory}`.\n",
        _agents_table(config),
    ]
    for condition, rows in summary.groupby("condition", sort=False):
        lines += [f"### Condition: {condition}\n", _metrics_table(rows), ""]
    lines.append(
        "| perturbation | RA2-Q here | RA3-Q here | RA2-Q source | RA3-Q source | "
        "RA3-Q above RA2-Q here |"
    )
    lines.append("|---|---|---|---|---|---|")
    sharpe = summary.set_index(["condition", "agent"])["sharpe"]
    verdicts = []
    for condition in ("adversary", "zi"):
        ours = (sharpe.get((condition, "ra2q"), np.nan), sharpe.get((condition, "ra3q"), np.nan))
        above = bool(ours[1] > ours[0])
        verdicts.append(_held(f"RA3-Q above RA2-Q under the {condition} perturbation", above))
        lines.append(
            f"| {condition} | {ours[0]:.4f} | {ours[1]:.4f} | "
            f"{source[condition]['ra2q']:.4f} | {source[condition]['ra3q']:.4f} | "
            f"{'yes' if above else 'no'} |"
        )
    lines += ["", *verdicts, ""]
    for condition in summary["condition"].unique():
        name = "sharpe.png" if condition == "clean" else f"sharpe_{condition}.png"
        lines.append(_copy_figure(directory, name, figures, "robustness"))
    return "\n".join(lines)


def _dynamics_summary(table: PayoffTable) -> tuple[list[str], np.ndarray, np.ndarray]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateMetricWarning)
        stable = [
            ", ".join(f"{s} {x:.2f}" for s, x in zip(table.strategies, point.x) if x > 1e-6)
            for point in rest_points(table)
            if point.kind == "stable"
        ]
    end = trajectory(table, np.full(table.k, 1 / table.k), t_max=100.0).x[-1]
    return stable, end, alpharank(table, alpha=10.0).pi


def egta_section(directory: Path, figures: Path) -> str:
    config, _, _ = _summary(directory)
    tables = {p: PayoffTable.read_csv(directory / f"payoffs_{p}.csv") for p in ("sharpe", "pnl")}
    text = [
        "## Experiment 3: empirical game\n",
        f"{config.tournament.players} seats over {len(config.agents)} strategies "
        f"({len(tables['sharpe'])} profiles), each profile played {config.seeds} times in a "
        f"synthetic market ({config.tournament.mode}: {config.training.episodes} "
        f"training and {config.testing.episodes} test episodes); weighting "
        f"{config.tournament.weighting}; run directory `{directory}`.\n",
        _agents_table(config),
        "| payoff | stable rest points (in the whole simplex) | shares after t = 100 from the "
        "uniform mix | alpha-rank (alpha = 10) |",
        "|---|---|---|---|",
    ]
    favoured = {}
    for payoff, table in tables.items():
        stable, end, rank = _dynamics_summary(table)
        favoured[payoff] = table.strategies[int(np.argmax(end))]
        shares = ", ".join(f"{s} {x:.2f}" for s, x in zip(table.strategies, end))
        ranks = ", ".join(f"{s} {x:.2f}" for s, x in zip(table.strategies, rank))
        text.append(f"| {payoff} | {'; '.join(stable) or 'none'} | {shares} | {ranks} |")
    same = favoured["sharpe"] == favoured["pnl"]
    text += [
        "",
        f"- Does the risk-sensitive payoff change which strategy the dynamics favour? "
        f"From the uniform mix the dynamics end near {favoured['sharpe']} with Sharpe payoffs "
        f"and near {favoured['pnl']} with mean-PnL payoffs: "
        f"**{'no, the same strategy' if same else 'yes, a different strategy'}**.",
        "",
        _copy_figure(directory, "dynamics.png", figures, "egta"),
        _copy_figure(directory, "dynamics_pnl.png", figures, "egta"),
    ]
    return "\n".join(text)


def _compared(frame: pd.DataFrame, claim: dict) -> str:
    """A held / did not hold line for a claim of the report (``statement``: the metric of agent
    ``lower`` below that of agent ``higher``), with both values (agents are the index)."""
    metric, low, high = claim["metric"], claim["lower"], claim["higher"]
    a, b = frame.loc[low, metric], frame.loc[high, metric]
    digits, unit = (0 if metric == "exposure" else 3), claim.get("unit", "")
    verdict = _held(claim["statement"], bool(a < b))
    return verdict + f" ({low} {a:.{digits}f}, {high} {b:.{digits}f}{unit})"


def claims_section(text: dict, making: Path, execution: Path, figures: Path, name: str) -> str:
    """A section of claims checked in a market-making and an execution run (``text``: the
    report's ``[risk]`` or ``[deep]`` table: title, intro, and per run its claims)."""
    blocks = (("making", making), ("execution", execution))
    return "\n".join(
        [
            f"## {text['title']}\n",
            text["intro"].format(making=making, execution=execution) + "\n",
            *(
                _claims_block(text[run], directory, figures, f"{name}_{run}")
                for run, directory in blocks
            ),
        ]
    )


def curve_variance(records: pd.DataFrame, training: Checkpointing) -> pd.Series:
    """Per agent, the variance over seeds (ddof 1) of the greedy learning curve, averaged over
    its checkpoints after the first (the untrained network), dollars^2: how much a learner's
    progress depends on its seed."""
    evals = records[(records["phase"] == "eval") & (records["condition"] == "clean")]
    checkpoint = evals["episode"] // training.evaluate_episodes
    curves = evals[checkpoint > 0].assign(checkpoint=checkpoint)
    per_seed = curves.groupby(["agent", "checkpoint", "seed"])["pnl"].mean()
    return per_seed.groupby(["agent", "checkpoint"]).var(ddof=1).groupby("agent").mean()


def value_variance(records: pd.DataFrame, reward_scale: float) -> pd.Series:
    """Per agent, the variance over seeds (ddof 1) of its mean value estimate at the opening
    observations of its test episodes, in dollars^2 (estimates are in reward units, dollars x
    ``reward_scale``); agents without estimates are left out."""
    tests = records[(records["phase"] == "test") & (records["condition"] == "clean")]
    per_seed = tests.dropna(subset=["value"]).groupby(["agent", "seed"])["value"].mean()
    return (per_seed / reward_scale).groupby("agent").var(ddof=1)


def _claims_block(text: dict, directory: Path, figures: Path, name: str) -> str:
    """One result: its run's clean-market table, its claims (``text``: title, intro,
    claims), its figure."""
    config, records, summary = _summary(directory)
    frame = summary[summary["condition"] == "clean"].set_index("agent", drop=False)
    frame = frame.assign(
        curve_variance=curve_variance(records, config.training),
        value_variance=value_variance(records, config.market.reward_scale),
    )
    return "\n".join(
        [
            f"### {text['title']}\n",
            f"{text['intro']}\n",
            _metrics_table(frame.sort_values("sharpe", ascending=False)),
            "",
            *(_compared(frame, claim) for claim in text["claims"]),
            "",
            _copy_figure(directory, "learning_curves.png", figures, name),
        ]
    )
