"""Fixtures of the agents' tests."""

import pytest
import torch


@pytest.fixture
def one_thread():
    """Tiny networks: one intra-op thread is fastest and avoids oversubscription."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
