"""Every deep learner's test runs tiny networks on one torch thread."""

import pytest


@pytest.fixture(autouse=True)
def tiny_networks(one_thread):
    """Applies `one_thread` (tests/agents/conftest.py) to every test here."""
