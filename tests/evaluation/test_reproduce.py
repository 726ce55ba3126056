"""A smoke version of each paper config runs, and docs/results.md is written from the runs."""

from __future__ import annotations

import pandas as pd

from tradearena.evaluation.experiment.parallel import LocalExecutor
from tradearena.evaluation.experiment.schema import Training
from tradearena.evaluation.reports.reproduce import (
    EXPERIMENTS,
    KEPT,
    curve_variance,
    kept_sections,
    reproduce,
    value_variance,
)

SMOKE = {
    "seeds": 2,
    "training": {"episodes": 2},
    "testing": {"episodes": 3},
    "market": {"n_steps": 5, "day_steps": 15},  # execution: 1,000 shares in 5 steps
    "tournament": {"players": 2},
}


def test_paper_configs_run_and_the_report_quotes_the_runs(tmp_path):
    """Every non-optional paper config runs (tiny); the report's numbers are the runs'."""
    experiments = tuple(e for e in EXPERIMENTS if not e.optional)
    report = reproduce(
        LocalExecutor(progress=False),
        runs=tmp_path / "runs",
        docs=tmp_path / "docs",
        overrides=SMOKE,
        experiments=experiments,
    )
    text = report.read_text()
    for heading in (
        "Experiment 1: Sharpe comparison",
        "Experiment 2: robustness",
        "Experiment 3: empirical game",
        "Replay of a real LOBSTER day\n\nSkipped",
        "Risk-sensitive results",
        "Deep learners",
        "## The runs",
        "](reproducing.md)",  # how the runs are made and read: the manual's page
    ):
        assert heading in text
    summary = pd.read_csv(tmp_path / "runs" / "paper_sharpe" / "summary.csv")
    for _, row in summary.iterrows():
        assert f"| {row['agent']} | {row['sharpe']:.3f} [" in text
    robustness = pd.read_csv(tmp_path / "runs" / "paper_robustness" / "summary.csv")
    assert set(robustness["condition"]) == {"clean", "adversary", "takeover", "zi"}
    assert "| adversary |" in text and "0.5269" in text and "1.0692" in text
    assert text.count("held** here") + text.count("did not hold** here") == 3 + 6 + 8
    risk = pd.read_csv(tmp_path / "runs" / "paper_risk_making" / "summary.csv")
    exposure = risk.set_index("agent")["exposure"]
    assert f"(raql {exposure['raql']:.0f}, q_learning {exposure['q_learning']:.0f} shares)" in text
    figures = {p.name for p in (tmp_path / "docs" / "figures").iterdir()}
    assert {"sharpe_sharpe.png", "egta_dynamics.png", "egta_dynamics_pnl.png"} <= figures


def test_curve_variance_is_the_mean_over_checkpoints_of_the_variance_over_seeds():
    """Two checkpoints after the untrained one, two greedy episodes each, two seeds: agent a's
    checkpoint means are (1, 3) and (2, 6) over the seeds, variances 2 and 8: mean 5; the
    first checkpoint (episodes 0-1) is left out."""
    rows = []
    for seed, means in ((0, (100.0, 1.0, 2.0)), (1, (-100.0, 3.0, 6.0))):
        for checkpoint, mean in enumerate(means):
            for i, offset in enumerate((-0.5, 0.5)):
                episode = checkpoint * 2 + i
                rows.append(("a", seed, "eval", "clean", episode, mean + offset))
    records = pd.DataFrame(rows, columns=["agent", "seed", "phase", "condition", "episode", "pnl"])
    training = Training(
        episodes=4, evaluate_every=2, evaluate_episodes=2, sessions=1, checkpoint_every=0
    )
    assert curve_variance(records, training).to_dict() == {"a": 5.0}


def test_value_variance_is_the_variance_over_seeds_of_the_mean_test_estimate():
    """Seeds' mean estimates 0.02 and 0.06 (reward units, dollars x 0.01): $2 and $6,
    variance 8; an agent without estimates is left out."""
    rows = [
        ("a", 0, "test", "clean", 0, 0.01),
        ("a", 0, "test", "clean", 1, 0.03),
        ("a", 1, "test", "clean", 0, 0.06),
        ("a", 1, "eval", "clean", 0, 9.0),
        ("b", 0, "test", "clean", 0, None),
    ]
    records = pd.DataFrame(
        rows, columns=["agent", "seed", "phase", "condition", "episode", "value"]
    )
    assert value_variance(records, 0.01).round(9).to_dict() == {"a": 8.0}


def test_a_new_report_keeps_the_sections_after_the_kept_line(tmp_path):
    """What follows the `KEPT` line of docs/results.md (the carry-over experiment) survives a
    new report; a file without that line keeps nothing."""
    report = tmp_path / "results.md"
    report.write_text(f"# old report\n\n{KEPT}\n\n## Skill that carries over\n\n+66 [-45, 161]\n")
    assert kept_sections(report) == f"{KEPT}\n\n## Skill that carries over\n\n+66 [-45, 161]\n"
    report.write_text("# old report without the line\n")
    assert kept_sections(report) == ""
    assert kept_sections(tmp_path / "missing.md") == ""
