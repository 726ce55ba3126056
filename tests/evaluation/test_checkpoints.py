"""Checkpoints inside a training job: a job stopped mid-training (killed, or failing) resumes
from its last checkpoint, not from scratch, to the records of an uninterrupted job."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from tradearena.envs.batch import BatchedMarket
from tradearena.envs.seats import SeatedMarket
from tradearena.evaluation.experiment.config import parse_config
from tradearena.evaluation.experiment.kinds import run_job
from tradearena.evaluation.experiment.parallel import LocalExecutor
from tradearena.evaluation.experiment.rundir import load_run
from tradearena.evaluation.experiment.runner import plan, run_experiment
from tradearena.evaluation.experiment.trained import Checkpoints

REPO = Path(__file__).resolve().parents[2]

LONG = """\
kind = "compare"
seeds = 1

[market]
task = "making"
population = "light"
n_steps = 30
reward_scale = 0.01

[training]
episodes = 300
evaluate_every = 50
evaluate_episodes = 2
checkpoint_every = 10

[testing]
episodes = 3

[output]
figures = false

[[agents]]
id = "ra2q"
params = { k = 3 }
"""


@pytest.fixture
def learning_episodes(monkeypatch) -> list[int]:
    """A list that grows by one per training episode played (one by one or batched)."""
    played: list[int] = []
    plain, batched = SeatedMarket.play, BatchedMarket.play

    def play(self, seed, *, learn=False):
        played.extend([1] if learn else [])
        return plain(self, seed, learn=learn)

    def play_batch(self, seeds, *, learn=False):
        played.extend([1] * len(seeds) if learn else [])
        return batched(self, seeds, learn=learn)

    monkeypatch.setattr(SeatedMarket, "play", play)
    monkeypatch.setattr(BatchedMarket, "play", play_batch)
    return played


def test_a_job_killed_mid_training_resumes_from_its_checkpoint(tmp_path, learning_episodes, capsys):
    """``kill -9`` once a checkpoint is kept; ``run --resume`` plays only the training
    episodes after it, ends with the uninterrupted run's records to the bit, and drops the
    checkpoints of the stored job."""
    path = tmp_path / "long.toml"
    path.write_text(LONG)
    out = tmp_path / "run"
    kept = out / "checkpoints" / "ra2q" / "seed=0" / "ra2q"
    args = ["run", str(path), "--executor", "local", "--out", str(out), "--no-progress"]
    command = [sys.executable, "-m", "tradearena.evaluation.cli.main", *args]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not list(kept.glob("episode-*")) and child.poll() is None:
            assert time.monotonic() < deadline, "no checkpoint within 2 minutes"
            time.sleep(0.002)
        child.send_signal(signal.SIGKILL)
    finally:
        child.kill()
        child.wait()
    assert child.returncode == -signal.SIGKILL
    (checkpoint,) = kept.glob("episode-*")
    done = int(checkpoint.name.removeprefix("episode-"))
    assert 10 <= done < 300 and done % 10 == 0, f"killed after {done} episodes"

    from tradearena.evaluation.cli.main import main

    assert main([*args, "--resume"]) == 0
    assert len(learning_episodes) == 300 - done
    assert not (out / "checkpoints").exists()
    whole = run_experiment(path, LocalExecutor(progress=False), out=tmp_path / "whole")
    pd.testing.assert_frame_equal(load_run(out)[1], load_run(whole.directory)[1], check_exact=True)


class Stop(Exception):
    """Raised to stop a job after some checkpoints."""


COMPARE_TRADER_BATCHED = """\
kind = "compare"
seeds = 1
[market]
population = "light"
n_steps = 12
reward_scale = 0.01
[training]
episodes = 9
sessions = 2
checkpoint_every = 4
[testing]
episodes = 2
[[agents]]
id = "ra3q"
params = { k = 3, adversary_mode = "trader" }
[[agents]]
id = "random"
"""

TOURNAMENT = """\
kind = "tournament"
seeds = 1
[tournament]
players = 3
[market]
population = "light"
n_steps = 12
reward_scale = 0.01
[training]
episodes = 9
evaluate_every = 3
evaluate_episodes = 2
checkpoint_every = 2
[testing]
episodes = 2
[[agents]]
id = "raql"
[[agents]]
id = "random"
[[agents]]
id = "dqn"
params = { hidden = 8, learning_starts = 10, batch_size = 4, buffer_size = 50 }
"""


ROBUST = """\
kind = "robustness"
seeds = 2
[market]
population = "light"
n_steps = 12
reward_scale = 0.01
[training]
episodes = 7
checkpoint_every = 3
[testing]
episodes = 2
[[agents]]
id = "ra2q"
params = { k = 3 }
[[agents]]
id = "ra3q"
params = { k = 3 }
[[perturbations]]
name = "takeover"
type = "adversary"
"""


@pytest.mark.parametrize(
    ("text", "job_id", "stops"),
    [
        (COMPARE_TRADER_BATCHED, "ra3q/seed=0", 2),  # a trader adversary seat; 2 sessions
        (COMPARE_TRADER_BATCHED, "random/seed=0", 1),  # a rule-based agent's generator
        (ROBUST, "all/seed=1", 4),  # the first agent trained (3, 6, 7), the second at 3
        (TOURNAMENT, "profile=1-1-1/rep=0", 2),  # three seats learning together; evals
    ],
)
def test_every_kind_resumes_from_its_last_checkpoint(
    tmp_path, monkeypatch, learning_episodes, text, job_id, stops
):
    """A job stopped after ``stops`` checkpoints reruns from them, playing only the training
    episodes after them, to the records of the job run without checkpoints."""
    config = parse_config(text)
    job = next(j for j in plan(config) if j.id == job_id)
    expected = run_job(job)
    assert expected.error is None, expected.error
    total = len(learning_episodes)
    job = dataclasses.replace(job, directory=str(tmp_path))
    save, kept, saved = Checkpoints.save, {}, []

    def stop_after(self, policies, done, records):
        save(self, policies, done, records)
        kept[self.root] = done  # the episodes each training table has kept
        saved.append(done)
        if len(saved) == stops:
            raise Stop(f"stopped after {done} episodes")

    monkeypatch.setattr(Checkpoints, "save", stop_after)
    assert "Stop: stopped after" in run_job(job).error
    monkeypatch.setattr(Checkpoints, "save", save)
    learning_episodes.clear()
    resumed = run_job(job)
    assert resumed.error is None, resumed.error
    assert resumed.records == expected.records
    assert len(learning_episodes) == total - sum(kept.values()) > 0
    assert Path(tmp_path, "agents").exists()
