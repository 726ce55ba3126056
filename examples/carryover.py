"""Skill that carries over: the tables of docs/results.md from the test runs of the carry-over
experiment (configs/carryover_*.toml).

    python examples/carryover.py TASK REFERENCE LABEL=TEST_DIR...

Each TEST_DIR is a training run's evaluation on the real afternoon (`tradearena evaluate
RUN_DIR --config configs/carryover_test_TASK.toml`), labelled by its training market, e.g.
``light=runs/carryover/making_light/evaluate-carryover_test_making``; the first label is
the baseline of the paired differences. Prints markdown: per agent and training market the
test mean PnL and Sharpe ratio over seeds with 95% bootstrap intervals and the mean final
inventory (shares, signed: a position the test's price drift pays or costs); then, seed by
seed, each market's agent minus the baseline market's same agent, and minus the REFERENCE
agent (the task's reference, calibrated to the test market) on the same sessions.
"""

from __future__ import annotations

import sys
import warnings

from tradearena.evaluation.analysis.metrics import DegenerateMetricWarning, bootstrap_ci
from tradearena.evaluation.analysis.transfer import paired_difference, seed_metric
from tradearena.evaluation.experiment.rundir import load_run

METRICS = {"mean_pnl": "mean PnL $", "sharpe": "Sharpe"}


def _cell(interval) -> str:
    return f"{interval.estimate:.2f} [{interval.low:.2f}, {interval.high:.2f}]"


def _final_inventory(records, agent: str) -> float:
    """The agent's mean inventory (shares, signed) at the end of its test episodes."""
    test = records[(records["phase"] == "test") & (records["agent"] == agent)]
    return float(test["inventory"].mean())


def main(task: str, reference: str, *runs: str) -> None:
    warnings.simplefilter("ignore", DegenerateMetricWarning)
    labels = [run.partition("=")[0] for run in runs]
    records = {label: load_run(run.partition("=")[2])[1] for label, run in zip(labels, runs)}
    metric = {(m, lab): seed_metric(records[lab], m) for m in METRICS for lab in labels}
    agents = list(metric["mean_pnl", labels[0]].columns)
    print(f"### {task}: test on the real afternoon, by training market\n")
    header = " | ".join(f"{name}, {lab}" for name in METRICS.values() for lab in labels)
    header += " | " + " | ".join(f"final inventory, {lab}" for lab in labels)
    print(f"| agent | {header} |\n|---|" + "---|" * ((len(METRICS) + 1) * len(labels)))
    for agent in agents:
        cells = [
            _cell(bootstrap_ci(metric[m, lab][agent].dropna())) for m in METRICS for lab in labels
        ]
        cells += [f"{_final_inventory(records[lab], agent):+.0f}" for lab in labels]
        print(f"| {agent} | " + " | ".join(cells) + " |")
    base = labels[0]
    print(f"\n### {task}: paired by seed (mean over seeds of the per-seed difference)\n")
    print(
        f"| agent | trained on | mean PnL $, - {base} | Sharpe, - {base} | "
        f"mean PnL $, - {reference} | Sharpe, - {reference} |"
    )
    print("|---|---|---|---|---|---|")
    for agent in (a for a in agents if a != reference):
        for label in labels:
            against = [(base, agent)] * (label != base) + [(label, reference)]
            cells = [
                _cell(paired_difference(metric[m, lab][other], metric[m, label][agent]))
                for lab, other in against
                for m in METRICS
            ]
            cells = ["-", "-"] * (label == base) + cells
            print(f"| {agent} | {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    main(*sys.argv[1:])
