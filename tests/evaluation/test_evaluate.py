"""``tradearena evaluate`` and agent tables with ``from`` / ``train``: a run's saved agents
tested again reproduce its test table exactly; other markets, perturbations and bad inputs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tradearena import agents
from tradearena.evaluation.cli.main import main
from tradearena.evaluation.experiment.evaluate import _tables_of
from tradearena.evaluation.experiment.parallel import LocalExecutor
from tradearena.evaluation.experiment.rundir import load_run
from tradearena.evaluation.experiment.runner import run_experiment

MAKING = """\
kind = "compare"
seeds = 2

[market]
task = "making"
population = "light"
n_steps = 10
reward_scale = 0.01

[training]
episodes = 4
evaluate_every = 2
evaluate_episodes = 2

[testing]
episodes = 3

[output]
figures = false

[[agents]]
id = "raql"

[[agents]]
id = "avellaneda_stoikov"

[[agents]]
id = "random"

[[agents]]
id = "dqn"
params = { hidden = 8, learning_starts = 5, batch_size = 4, buffer_size = 100 }
"""

PRETRAINED = """\
kind = "tournament"
seeds = 2
[tournament]
players = 2
mode = "pretrained"
[market]
task = "making"
population = "light"
n_steps = 8
reward_scale = 0.01
[training]
episodes = 3
[testing]
episodes = 3
[output]
figures = false
[[agents]]
id = "raql"
[[agents]]
id = "ra2q"
params = { k = 3 }
[[agents]]
id = "random"
"""


def run(tmp_path: Path, text: str, name: str = "run") -> Path:
    (tmp_path / f"{name}.toml").write_text(text)
    outcome = run_experiment(
        tmp_path / f"{name}.toml", LocalExecutor(progress=False), out=tmp_path / name
    )
    assert outcome.failed == {}
    return outcome.directory


def evaluate(*args: str) -> int:
    return main(["evaluate", *args, "--executor", "local", "--no-progress"])


def stored_tests(directory: Path) -> pd.DataFrame:
    _, records = load_run(directory)
    return records[records["phase"] == "test"].reset_index(drop=True)


@pytest.fixture(scope="module")
def making_run(tmp_path_factory) -> Path:
    return run(tmp_path_factory.mktemp("making"), MAKING)


def test_evaluate_reproduces_the_runs_test_table_exactly(making_run, capsys):
    """Tabular, deep, reference and random agents, loaded frozen, give the run's test
    records and summary to the bit; the evaluation trains nothing."""
    assert evaluate(str(making_run)) == 0
    out = making_run / "evaluate"
    assert f"run directory: {out}" in capsys.readouterr().out
    pd.testing.assert_frame_equal(stored_tests(out), stored_tests(making_run), check_exact=True)
    _, records = load_run(out)
    assert set(records["phase"]) == {"test"}
    summary, expected = pd.read_csv(out / "summary.csv"), pd.read_csv(making_run / "summary.csv")
    pd.testing.assert_frame_equal(summary, expected[summary.columns], check_exact=True)
    assert "plateau_episode" in expected and "plateau_episode" not in summary


def test_evaluate_on_another_market(making_run, tmp_path):
    """A FILE's [market] (a replayed synthetic day) and --episodes: the same agents, other
    sessions, 2 test episodes each."""
    file = tmp_path / "replay.toml"
    file.write_text(
        '[market]\ntask = "making"\ntape = "synthetic"\nn_steps = 10\nreward_scale = 0.01\n'
    )
    assert evaluate(str(making_run), "--config", str(file), "--episodes", "2") == 0
    records = stored_tests(making_run / "evaluate-replay")
    assert len(records) == 4 * 2 * 2  # agents x seeds x episodes
    own = stored_tests(making_run)
    assert not np.array_equal(records["pnl"], own[own["episode"] < 2]["pnl"])


def test_evaluate_under_perturbations(making_run, tmp_path):
    """Perturbations in FILE make the evaluation a robustness experiment: every agent in the
    clean market and with 30 extra zero-intelligence traders."""
    file = tmp_path / "zi.toml"
    file.write_text(
        MAKING.split("[training]")[0]
        + '[[perturbations]]\nname = "zi"\ntype = "zi"\nn_agents = 30\n'
    )
    assert evaluate(str(making_run), "--config", str(file), "--out", str(tmp_path / "zi")) == 0
    summary = pd.read_csv(tmp_path / "zi" / "summary.csv")
    assert sorted(set(summary["condition"])) == ["clean", "zi"] and len(summary) == 8
    clean = stored_tests(tmp_path / "zi")
    clean = clean[clean["condition"] == "clean"].drop(columns="job_id").reset_index(drop=True)
    own = stored_tests(making_run).drop(columns="job_id")
    pd.testing.assert_frame_equal(
        clean.sort_values(["agent", "seed", "episode"], ignore_index=True),
        own.sort_values(["agent", "seed", "episode"], ignore_index=True),
        check_exact=True,
    )


def test_another_action_set_is_a_named_error(making_run, tmp_path, capsys):
    file = tmp_path / "taker.toml"
    file.write_text('[market]\ntask = "taker"\npopulation = "light"\nn_steps = 10\n')
    assert evaluate(str(making_run), "--config", str(file)) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert "agents[0].from: " in line and "raql was saved from a seat with other actions" in line
    assert "actions 'make' here 'trade'" in line
    assert not (making_run / "evaluate-taker").exists()


def test_pretrained_tournament_evaluates_to_the_same_payoffs(tmp_path):
    directory = run(tmp_path, PRETRAINED)
    assert evaluate(str(directory)) == 0
    for name in ("payoffs.csv", "payoffs_pnl.csv"):
        assert (directory / "evaluate" / name).read_bytes() == (directory / name).read_bytes()


def test_runs_without_agents_trained_alone_are_named(tmp_path, capsys):
    co_trained = run(tmp_path, PRETRAINED.replace('"pretrained"', '"train-in-profile"'), "co")
    assert (co_trained / "agents/ra2q/seed-1/profile-0-2-0/seat-1/agent.json").exists()
    assert evaluate(str(co_trained)) == 2
    assert "trained the seats in their profiles" in capsys.readouterr().err
    assert evaluate(str(tmp_path / "nothing")) == 2
    assert "nothing" in capsys.readouterr().err


def test_an_agent_from_a_saved_one(making_run, tmp_path):
    """``from`` + ``train = false``: the agent is the saved one, frozen (no training records,
    saved again unchanged). ``from`` trained further: it goes on from the saved state."""
    saved = making_run / "agents" / "raql"
    text = MAKING.split("[[agents]]")[0] + f'[[agents]]\nid = "raql"\nfrom = "{saved}"\n'
    further = run(tmp_path, text, "further")
    frozen = run(tmp_path, text.replace(f'"{saved}"', f'"{saved}"\ntrain = false'), "frozen")
    for seed in (0, 1):
        source = agents.load(saved / f"seed-{seed}")
        same = agents.load(frozen / "agents" / "raql" / f"seed-{seed}")
        np.testing.assert_array_equal(same.q, source.q)
        assert same.t == source.t
        on = agents.load(further / "agents" / "raql" / f"seed-{seed}")
        assert on.t == source.t + 4 * 10  # four more training episodes of 10 steps
        header = json.loads((further / "agents/raql" / f"seed-{seed}" / "agent.json").read_text())
        assert header["notes"] == {"episodes_trained": 8}
    _, records = load_run(frozen)
    assert set(records["phase"]) == {"test"}
    card = (further / "agents/raql/seed-0/card.md").read_text()
    assert "trained 8 episodes in all, 4 of them in this run" in card


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('id = "raql"\nfrom = "{saved}"\nparams = {{ k = 2 }}', r"agents\[0\].params: an agent "),
        ('id = "ra2q"\nfrom = "{saved}"', r"agents\[0\].from: .*seed-0 holds 'raql'"),
        ('id = "raql"\nfrom = "{saved}/nothing"', r"agents\[0\].from: .*agent.json missing"),
    ],
)
def test_bad_from_tables_are_named(making_run, tmp_path, table, message):
    from tradearena.evaluation.experiment.config import ConfigError, load_config

    saved = making_run / "agents" / "raql"
    path = tmp_path / "bad.toml"
    path.write_text(MAKING.split("[[agents]]")[0] + "[[agents]]\n" + table.format(saved=saved))
    with pytest.raises(ConfigError, match=message):
        load_config(path)


def test_a_tape_from_the_environment_is_left_for_the_config_to_expand(tmp_path):
    """A relative tape is resolved against the file's folder; one naming an environment
    variable is kept as written (the config's check expands it, and names it when unset)."""
    file = tmp_path / "other.toml"
    file.write_text('[market]\ntask = "making"\ntape = "$SOME_MESSAGES"\n')
    assert _tables_of(file)["market"]["tape"] == "$SOME_MESSAGES"
    file.write_text('[market]\ntask = "making"\ntape = "day_message_1.csv"\n')
    assert _tables_of(file)["market"]["tape"] == str(tmp_path.resolve() / "day_message_1.csv")
