"""Settings and fixtures of the whole test suite.

One thread per test process for torch's and the BLAS libraries' intra-op pools
(``OMP_NUM_THREADS=1``, read when they load, and inherited by the processes the tests start):
the tests' networks are tiny and the suite runs one process per core (pytest-xdist), where
extra pool threads only spin against each other. On a busy 2-core machine SB3's PPO on the
batched market took 219 s with torch's default pool and 3.7 s with one thread.

torch's CPU kernels pinned (`tradearena.envs.cpu`) before any test computes with torch, so
that the tests that compare a network's numbers with stored ones hold on every processor with
AVX2, whichever test a worker runs first.
"""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

from tradearena.envs.cpu import pin_cpu_arithmetic  # noqa: E402 (after the thread setting)

pin_cpu_arithmetic()

import sys  # noqa: E402 (after the thread setting, which must precede numpy's import)

import pytest  # noqa: E402

from tradearena.agents import registry  # noqa: E402


@pytest.fixture
def own_folders(monkeypatch, tmp_path):
    """For a test that lets agents be imported from folders of its own (under ``tmp_path``):
    ``sys.path`` and the registry's folders as they were after it, and the modules it
    imported from ``tmp_path`` forgotten."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(registry, "_FOLDERS", [])
    yield
    for name, module in list(sys.modules.items()):
        if str(getattr(module, "__file__", None) or "").startswith(str(tmp_path)):
            del sys.modules[name]
