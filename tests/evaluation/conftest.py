"""Shared fixtures of the evaluation tests: tiny experiment files and one Ray session."""

from __future__ import annotations

from pathlib import Path

import pytest

# A compare experiment of 4 jobs (2 agents x 2 seeds) that runs in well under a second.
TINY = """\
kind = "compare"
name = "tiny"
seeds = 2

[market]
population = "light"
n_steps = 15

[training]
episodes = 2

[testing]
episodes = 2

[[agents]]
id = "q_learning"

[[agents]]
id = "ra2q"
params = { k = 3 }
"""

TINY_JOBS = ["q_learning/seed=0", "q_learning/seed=1", "ra2q/seed=0", "ra2q/seed=1"]


@pytest.fixture(scope="session")
def tiny_text() -> str:
    """The TOML text of the tiny compare experiment."""
    return TINY


@pytest.fixture(scope="session")
def tiny_jobs() -> list[str]:
    """The job ids of the tiny experiment, in plan order."""
    return list(TINY_JOBS)


@pytest.fixture
def tiny_config(tmp_path: Path) -> Path:
    """The tiny compare experiment as a file in a fresh temporary directory."""
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    return path


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests that use the Ray session share one pytest-xdist worker (``--dist
    loadgroup``), so that one Ray starts, not one per worker."""
    for item in items:
        if "ray_session" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("ray"))


@pytest.fixture(scope="session")
def ray_session():
    """One local Ray of 2 CPUs for every Ray test (starting Ray costs seconds); executors
    created while it is up join it and leave it running."""
    ray = pytest.importorskip("ray")
    ray.init(
        address="local",
        num_cpus=2,
        include_dashboard=False,
        logging_level="WARNING",
        log_to_driver=False,
    )
    yield ray
    ray.shutdown()
