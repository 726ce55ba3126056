"""What the docs/ pages show runs as written: the learner page's class keeps the contract,
its command checks it, and its experiment file trains it (shortened here)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import numpy as np
import torch

from tradearena import agents
from tradearena.evaluation.cli.main import main

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


def test_the_sb3_page_calls_run_as_written():
    """docs/sb3.md's SB3 calls on the registered id (the first block) make the envs, and its
    recipe's block trains (here for 256 steps)."""
    first, recipe = blocks("python", (DOCS / "sb3.md").read_text())
    namespace: dict = {}
    exec(compile(first, "docs/sb3.md", "exec"), namespace)
    assert namespace["venv"].num_envs == 8 and namespace["model"].env.num_envs == 1
    exec(compile(recipe.replace("30_000", "256"), "docs/sb3.md", "exec"), namespace)
    assert namespace["ppo"].num_timesteps >= 256


def test_the_sb3_example_prints_a_line_per_policy(capsys, monkeypatch):
    """examples/sb3_making.py, shortened: the trained policy, random quoting and holding,
    each scored on the same test sessions (torch's threads as they were, after)."""
    monkeypatch.setattr(torch, "set_num_threads", lambda n: None)
    path = DOCS.parent / "examples" / "sb3_making.py"
    spec = importlib.util.spec_from_file_location("sb3_making", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    for algorithm in ("PPO", "DQN"):
        example.main(["--algorithm", algorithm, "--steps", "1100", "--test-sessions", "2"])
        lines = capsys.readouterr().out.splitlines()
        assert lines[0].startswith(f"{algorithm}: 1,100 steps (8 sessions) in ")
        assert [line.split(":")[0].strip() for line in lines[1:]] == [algorithm, "random", "hold"]
        assert lines[3].endswith("$  0.00 +- 0.00 per session (2 sessions)")
