"""After the progress bar, the analysis says which stage it is in, one line each."""

from __future__ import annotations

from tradearena.evaluation.experiment.parallel import LocalExecutor
from tradearena.evaluation.experiment.runner import run_experiment


def test_the_analysis_prints_a_line_per_stage_when_progress_shows(tiny_config, capsys):
    run_experiment(tiny_config, LocalExecutor(progress=False), out=tiny_config.parent / "quiet")
    assert "analysis:" not in capsys.readouterr().err
    run_experiment(tiny_config, LocalExecutor(progress=True), out=tiny_config.parent / "shown")
    stages = [line for line in capsys.readouterr().err.splitlines() if line.startswith("analysis")]
    assert stages[:3] == [
        "analysis: reading the records ...",
        "analysis: the tables ...",
        "analysis: the agents' cards ...",
    ]
    assert stages[-1].startswith("analysis: done in ") and stages[-1].endswith(" s")
