"""A session's clock: every time a market's description gives is bounded (a week of seconds
after midnight), a compiled flow whose time stops advancing raises instead of running
forever, and an interrupt (Ctrl-C) stops a long compiled loop within moments. The cases that
would hang before run in a child process under a time limit and a memory limit."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from reference_flow import OPEN  # tests/reference_flow.py

from tradearena.envs.simulator.flow import MAX_AT_ONE_TIME
from tradearena.envs.spec import MAX_SESSION_SECONDS, MarketSpec, SpecError

MEMORY = 2 << 30
"""The child's address-space limit, bytes."""
SECONDS = 20
"""The child's time limit, seconds."""


@pytest.mark.parametrize("opens", [math.nan, math.inf, -math.inf, 1e16, 1e308, -1.0, 7 * 86_401.0])
def test_an_open_time_beyond_a_week_is_refused(opens):
    """``open_time`` must lie in [0, a week] seconds after midnight: NaN, infinities, times
    far beyond (whose float seconds are coarser than a flow's waits) and negative ones are
    refused naming the field."""
    with pytest.raises(SpecError, match=r"^open_time: must be in \[0, 604,800\] seconds"):
        MarketSpec(population="light", n_steps=5, open_time=opens)
    assert MarketSpec(population="light", n_steps=5, open_time=MAX_SESSION_SECONDS).open_time


CHILD = textwrap.dedent(
    f"""
    import resource, sys
    resource.setrlimit(resource.RLIMIT_AS, ({MEMORY}, {MEMORY}))
    sys.path.insert(0, {os.path.dirname(os.path.dirname(__file__))!r})
    import numpy as np
    from reference_flow import small_model
    from tradearena.envs.simulator.market import Market
    from tradearena.envs.simulator.traders.learned import LearnedFlow
    opens, steps, step_seconds, scale = (float(a) for a in sys.argv[1:])
    model = small_model()
    model = type(model)(**{{**vars(model), "mu": model.mu * scale}})
    market = Market(
        [LearnedFlow(model)], n_seats=0, n_steps=int(steps), step_seconds=step_seconds,
        open_time=opens, warmup_seconds=0.0, tick_size=0.01, initial_price=10_000,
    )
    market.reset(0)
    print("started", flush=True)
    market.step()
    print("stepped", market.traders[0].sampler.events, flush=True)
    """
)


def child(*arguments: float) -> subprocess.Popen:
    """The child running a learned market of ``arguments`` (open time, steps, seconds a step,
    rates' scale), its output piped."""
    argv = [sys.executable, "-c", CHILD, *map(str, arguments)]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_a_flow_whose_clock_stops_raises_instead_of_running_forever():
    """A learned market of 1,400 events a second opened (past the spec's check) at 1e16 s,
    where float seconds are 2 s apart and its waits far shorter: its events land at one time
    forever; the compiled flow raises, naming the time, after `MAX_AT_ONE_TIME` rows there."""
    process = child(1e16, 5, 60.0, 1000.0)
    try:
        out, err = process.communicate(timeout=SECONDS)
    finally:
        process.kill()
    assert process.returncode == 1, err
    assert err.rstrip().splitlines()[-1] == (
        "RuntimeError: the background flow's clock stopped at 1e+16 s: more than "
        f"{MAX_AT_ONE_TIME:,} rows at that time (times this large leave no room between its "
        "events; a session's times lie within a week)"
    )


def test_an_interrupt_stops_a_long_compiled_loop_within_a_second():
    """A learned market's one step of five days at 1,000 events a second (months of the
    compiled loop's time) is interrupted (SIGINT, as Ctrl-C sends) a moment after it starts:
    the child ends with a KeyboardInterrupt within a second, not when the step is done."""
    process = child(OPEN, 1, 5 * 86_400.0, 700.0)
    try:
        assert process.stdout.readline() == "started\n"
        time.sleep(0.5)
        process.send_signal(signal.SIGINT)
        sent = time.perf_counter()
        out, err = process.communicate(timeout=SECONDS)
        waited = time.perf_counter() - sent
    finally:
        process.kill()
    assert err.rstrip().splitlines()[-1] == "KeyboardInterrupt", err
    assert "stepped" not in out
    assert waited < 1.0
