"""Worker processes' plumbing: the shared board, the links' waits, and a worker's failure."""

from __future__ import annotations

import multiprocessing as mp
import threading
import time

import numpy as np
import pytest

from tradearena.envs.vector import MarketVectorEnv
from tradearena.envs.workers import ANSWERED, PARENT_SLEEPS, STEP, Board, Link

LIGHT = {"population": "light", "n_steps": 5}


def _fill(board: Board) -> None:
    board["b"][:] = np.arange(6).reshape(2, 3) * 1.5
    board["a"][1] = 7


def test_a_board_lays_out_its_fields_apart_and_a_spawned_process_writes_into_it():
    board = Board({"a": (np.int64, (3,)), "b": (np.float32, (2, 3)), "c": (np.bool_, ())})
    assert [board.offsets[k] for k in "abc"] == [0, 64, 128]
    assert board["b"].shape == (2, 3) and board["b"].dtype == np.float32
    assert board["c"].shape == () and board["c"].dtype == np.bool_
    process = mp.get_context("spawn").Process(target=_fill, args=(board,))
    process.start()
    process.join(timeout=60)
    assert process.exitcode == 0
    assert board["a"].tolist() == [0, 7, 0]
    assert board["b"].tolist() == [[0.0, 1.5, 3.0], [4.5, 6.0, 7.5]]


@pytest.mark.parametrize("spin", [0.0, 5.0])
def test_a_link_waits_until_the_counter_moves_asleep_or_spinning(spin):
    """With no spin the waiting side sleeps at once and is rung awake; with a long one it
    sees the counter move while spinning. Either way it returns the new value."""
    control = np.zeros(16, dtype=np.int64)
    ours, theirs = mp.Pipe()
    waiting, posting = Link(control, ours, spin), Link(control, theirs, spin)

    def post_later() -> None:
        time.sleep(0.05)
        posting.post(ANSWERED, 3, PARENT_SLEEPS)

    thread = threading.Thread(target=post_later)
    thread.start()
    assert waiting.wait(ANSWERED, 0, PARENT_SLEEPS) == 3
    thread.join()
    assert control[PARENT_SLEEPS] == 0  # awake again
    theirs.close()
    with pytest.raises(EOFError):  # the other side is gone
        Link(control, ours, 0.0).wait(ANSWERED, 3, PARENT_SLEEPS)


def test_a_failing_step_in_a_worker_is_raised_and_leaves_the_sessions_in_step():
    """A worker's share fails (an action with no order): its error is raised here, its
    sessions did not move, and the next step answers for the next actions."""
    stepped, still = MarketVectorEnv(4, **LIGHT), MarketVectorEnv(4, **LIGHT)
    shared = MarketVectorEnv(4, workers=2, **LIGHT)
    try:
        for env in (stepped, still, shared):
            env.reset(seed=4)
        ones = np.ones((2, 1), dtype=np.int64)
        with pytest.raises(IndexError):
            shared.sessions._ask(STEP, [ones, np.full((2, 1), 99)])
        stepped.step(np.ones(4, dtype=np.int64))  # where this process's share went
        actions = np.array([2, 0, 1, 2])
        a, b, c = stepped.step(actions), still.step(actions), shared.step(actions)
        for x, y, z in zip(a[:4], b[:4], c[:4]):
            assert np.array_equal(z[:2], x[:2]) and np.array_equal(z[2:], y[2:])
    finally:
        shared.close()
