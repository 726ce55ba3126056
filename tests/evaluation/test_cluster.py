"""The quickstart run as a user runs it, on a two-node Ray cluster on loopback and with the
local executor: the same records, bit for bit, the DQN's included.

Both runs are `tradearena run` in processes of their own, in the environment of a user's
shell: none of the thread variables the suite sets for itself (``OMP_NUM_THREADS``, ...),
so a process's libraries size their thread pools by the machine's cores, as they do for a
user (the test means something on a machine with more than one core).
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import tomli_w

from tradearena.evaluation.experiment.store import Store

REPO = Path(__file__).resolve().parents[2]
THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "RAY_ADDRESS",
)


def small_quickstart(tmp_path: Path) -> Path:
    """configs/quickstart.toml with fewer seeds, steps and episodes (the same agents and
    market), the DQN learning from its 20th transition on, a gradient step at every one."""
    config = tomllib.loads((REPO / "configs" / "quickstart.toml").read_text())
    config["seeds"] = 2
    config["market"]["n_steps"] = 20
    config["training"] = {"episodes": 4}
    config["testing"]["episodes"] = 2
    for agent in config["agents"]:
        if agent["id"] == "dqn":
            agent["params"] = {"learning_starts": 20, "train_freq": 1}
    path = tmp_path / "quickstart.toml"
    path.write_text(tomli_w.dumps(config))
    return path


def run(config: Path, out: Path, *options: str) -> pd.DataFrame:
    """`tradearena run` in a process of its own with the environment as it is now; its
    episode records."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tradearena.evaluation.cli.main",
            "run",
            str(config),
            "--no-progress",
        ]
        + ["--out", str(out), *options],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    with Store(out / "results.sqlite") as store:
        return store.episodes()


def test_quickstart_on_a_two_node_cluster_equals_local(tmp_path, monkeypatch):
    """`tradearena run --address` against a head and a worker node (one CPU each, started by
    `ray.cluster_utils.Cluster`) records what `--executor local` records, every float equal."""
    cluster_utils = pytest.importorskip("ray.cluster_utils")
    for name in THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    path = small_quickstart(tmp_path)
    local = run(path, tmp_path / "local", "--executor", "local")

    cluster = cluster_utils.Cluster(
        initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False}
    )
    try:
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        remote = run(path, tmp_path / "cluster", "--address", cluster.address)
    finally:
        cluster.shutdown()
    pd.testing.assert_frame_equal(remote, local, check_exact=True)
    assert set(local["agent"]) == {
        "dqn",
        "q_learning",
        "raql",
        "ra2q",
        "avellaneda_stoikov",
        "hold",
        "random",
    }
    # the DQN trained: its greedy value estimates at the test sessions' openings differ
    values = local.loc[(local["agent"] == "dqn") & (local["phase"] == "test"), "value"]
    assert len(values) == 4 and np.isfinite(values).all() and values.nunique() > 1
    pd.testing.assert_frame_equal(
        pd.read_csv(tmp_path / "cluster" / "summary.csv"),
        pd.read_csv(tmp_path / "local" / "summary.csv"),
    )
