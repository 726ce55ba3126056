"""What the docs/ pages show runs as written: the learner page's class keeps the contract,
its command checks it, and its experiment file trains it (shortened here)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from tradearena import agents
from tradearena.evaluation.cli import main

DOCS = Path(__file__).resolve().parents[1] / "docs"


def blocks(language: str, text: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, re.S)


SHORT = [
    *("--set", "seeds=1", "--set", "market.n_steps=10", "--set", "training.episodes=16"),
    *("--set", "training.evaluate_every=8", "--set", "training.evaluate_episodes=2"),
    *("--set", "testing.episodes=2"),
]
"""The learner page's run, shortened: one seed, 16 training sessions of 10 steps."""


def test_the_learner_page_runs(tmp_path, monkeypatch, capsys):
    """Its class saved as sarsa.py passes `agents --check`; its experiment file, run with the
    page's command (shortened, on the local executor), trains it: the saved agent's Q-table
    is no longer zeros, in a batched market of 8 sessions."""
    text = (DOCS / "learner.md").read_text()
    (code,) = blocks("python", text)
    (config,) = blocks("toml", text)
    check, run = blocks("sh", text)
    monkeypatch.chdir(tmp_path)
    Path("sarsa.py").write_text(code)
    Path("sarsa.toml").write_text(config)
    assert main(check.split()[1:]) == 0
    assert "learning   yes" in capsys.readouterr().out
    assert main([*run.split()[1:], "--executor", "local", "--no-progress", *SHORT]) == 0
    assert "expected_sarsa" in capsys.readouterr().out
    agent = agents.load("runs/sarsa/agents/expected_sarsa/seed-0", custom=["sarsa:ExpectedSarsa"])
    assert np.abs(agent.q).sum() > 0
