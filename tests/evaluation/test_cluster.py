"""The quickstart on a two-node Ray cluster on loopback gives the local executor's summary."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pandas as pd
import pytest
import tomli_w

from tradearena.evaluation.experiment import run_experiment
from tradearena.evaluation.parallel import LocalExecutor

REPO = Path(__file__).resolve().parents[2]


def small_quickstart(tmp_path: Path) -> Path:
    """configs/quickstart.toml with fewer seeds and episodes (the same agents and market)."""
    config = tomllib.loads((REPO / "configs" / "quickstart.toml").read_text())
    config["seeds"] = 2
    config["training"]["episodes"] = 3
    config["testing"]["episodes"] = 2
    path = tmp_path / "quickstart.toml"
    path.write_text(tomli_w.dumps(config))
    return path


def test_quickstart_on_a_two_node_cluster_equals_local(tmp_path):
    """`tradearena run --address` against a head and a worker node (one CPU each, started by
    `ray.cluster_utils.Cluster`) writes the summary.csv that the local executor writes."""
    cluster_utils = pytest.importorskip("ray.cluster_utils")
    path = small_quickstart(tmp_path)
    local = run_experiment(path, LocalExecutor(progress=False), out=tmp_path / "local")

    cluster = cluster_utils.Cluster(
        initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False}
    )
    try:
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
        done = subprocess.run(
            [sys.executable, "-m", "tradearena.evaluation.cli", "run", str(path), "--no-progress"]
            + ["--address", cluster.address, "--out", str(tmp_path / "cluster")],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        cluster.shutdown()
    assert done.returncode == 0, done.stderr[-2000:]
    got = pd.read_csv(tmp_path / "cluster" / "summary.csv")
    pd.testing.assert_frame_equal(got, pd.read_csv(local.directory / "summary.csv"))
    assert set(got["agent"]) == {
        "dqn",
        "q_learning",
        "raql",
        "ra2q",
        "avellaneda_stoikov",
        "hold",
        "random",
    }
