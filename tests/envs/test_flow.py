"""The compiled background flow (`envs.simulator.flow.Flow`) gives the same sessions, to the bit, as
the
populations' own `orders` methods (the market's Python path)."""

from __future__ import annotations

import numpy as np
import pytest

from tradearena.envs.data.tapes import Tape
from tradearena.envs.simulator.latency import LogNormal
from tradearena.envs.simulator.market import Market
from tradearena.envs.simulator.orders import Kind, Orders
from tradearena.envs.simulator.recording import synthetic_tape
from tradearena.envs.simulator.traders import (
    MarketReplay,
    Metaorder,
    Momentum,
    ZeroIntelligence,
    light,
    rmsc04,
)
from tradearena.envs.simulator.traders.base import Trader


def session(traders: list[Trader], seed: int, n_steps: int, **market: object) -> dict:
    """A session with two seats trading at random; everything the market and the book show."""
    m = Market(traders, n_seats=2, n_steps=n_steps, **market)
    m.reset(seed)
    rng = np.random.default_rng(seed)
    compiled = m._compiled is not None
    while not m.done:
        orders = [
            [(int(Kind.MARKET), int(rng.choice([-1, 1])), 0, 100)],
            [(int(Kind.QUOTE), 1, int(m.last_mid) - int(rng.integers(1, 4)), 50)],
        ]
        m.step(orders)
    owners = m.trader_owners[-1].stop
    return {
        "compiled": compiled,
        "mids": m.mids().tolist(),
        "seen": m.seen_mids().tolist(),
        "spreads": m.spreads().tolist(),
        "summary": m.summary(),
        "accounts": [m.book.account(o) for o in range(owners)],
        "depth": m.book.depth(50),
    }


@pytest.fixture
def uncompiled(monkeypatch: pytest.MonkeyPatch):
    """Every population without a program: the market asks their `orders` each interval."""

    def patch() -> None:
        for cls in (*Trader.__subclasses__(),):
            monkeypatch.setattr(cls, "program", Trader.program)

    return patch


@pytest.mark.parametrize(
    ("population", "seed"),
    [(rmsc04, 0), (rmsc04, 1), (light, 2), (light, 3)],
)
def test_compiled_flow_equals_orders(population, seed, uncompiled):
    compiled = session(population(), seed, 120)
    uncompiled()
    plain = session(population(), seed, 120)
    assert compiled.pop("compiled") and not plain.pop("compiled")
    assert compiled == plain
    assert compiled["summary"]["fills"] > 500  # the flow traded: the comparison has teeth


@pytest.mark.parametrize("population", [rmsc04, light])
def test_compiled_flow_equals_orders_with_latency(population, uncompiled):
    """Orders in flight land in the middle of the flow and views are recorded inside it: on
    both paths alike."""
    latency = {"order_latency": LogNormal(median=10.0, sigma=1.0), "feed_latency": 45.0}
    compiled = session(population(), 4, 60, **latency)
    uncompiled()
    plain = session(population(), 4, 60, **latency)
    assert compiled.pop("compiled") and not plain.pop("compiled")
    assert compiled == plain
    assert compiled["seen"] != compiled["mids"]  # the views are late: the test has teeth


def test_compiled_flow_equals_orders_with_drift_windows_and_extra_zi(uncompiled):
    def traders() -> list[Trader]:
        return [*light(), ZeroIntelligence(30, drift=1e-3, q_max=2, arrival_rate=1 / 30)]

    kwargs = {"day_steps": 200, "warmup_seconds": 600.0}
    compiled = session(traders(), 5, 60, **kwargs)
    uncompiled()
    plain = session(traders(), 5, 60, **kwargs)
    assert compiled.pop("compiled") and not plain.pop("compiled")
    assert compiled == plain


MECHANISMS = {
    "profile": {"shape": "u", "ratio": 3.0},
    "hawkes": {"branching": 0.7, "decay": 0.2},
    "sizes": {"round_share": 0.4, "lots_mean": 1.5, "odd_median": 30, "odd_sigma": 0.8},
}


@pytest.mark.parametrize("population", [light, rmsc04])
@pytest.mark.parametrize("mechanisms", [*([name] for name in MECHANISMS), list(MECHANISMS)])
def test_compiled_flow_equals_orders_with_flow_mechanisms(population, mechanisms, uncompiled):
    """Profile, Hawkes arrivals and round-lot sizes (alone and together) shape the rows both
    paths carry out, over windows of a longer day (the profile spans the day)."""

    def traders(names: list[str]) -> list[Trader]:
        return [
            *population(**{name: MECHANISMS[name] for name in names}),
            Momentum(3, period=20.0, sizes=MECHANISMS["sizes"] if "sizes" in names else None),
        ]

    kwargs = {"day_steps": 390}
    compiled = session(traders(mechanisms), 8, 120, **kwargs)
    assert compiled["mids"] != session(traders([]), 8, 120, **kwargs)["mids"]  # they act
    uncompiled()
    plain = session(traders(mechanisms), 8, 120, **kwargs)
    assert compiled.pop("compiled") and not plain.pop("compiled")
    assert compiled == plain
    assert compiled["summary"]["fills"] > 500


@pytest.mark.parametrize("reconcile", [False, True])
def test_compiled_flow_equals_orders_on_a_replay(uncompiled, reconcile):
    """Also with every 5th delete dropped and the book reconciled to the rows, beside
    zero-intelligence traders."""
    tape = synthetic_tape(1, traders=light(), n_steps=60)
    if reconcile:
        keep = np.setdiff1d(np.arange(len(tape)), np.flatnonzero(tape.messages["type"] == 3)[::5])
        tape = Tape(tape.messages[keep].copy(), tape.book[keep].copy(), tape.tick_size)

    def traders() -> list[Trader]:
        return [MarketReplay(tape, reconcile=reconcile), ZeroIntelligence(20, q_max=2)]

    compiled = session(traders(), 0, 50)
    uncompiled()
    plain = session(traders(), 0, 50)
    assert compiled.pop("compiled") and not plain.pop("compiled")
    assert compiled == plain
    assert compiled["summary"]["fills"] > 100


def test_a_population_without_a_program_keeps_the_python_path():
    class Quiet(Trader):
        def orders(self, market, t0, t1, rng):
            return Orders.empty()

    market = Market([Quiet(), *light()], n_seats=0, n_steps=5)
    market.reset(0)
    assert market._compiled is None
    while not market.done:
        market.step()
    assert market.summary()["orders"] > 0


def test_compiled_flow_equals_orders_with_the_fundamental_options_and_metaorders(uncompiled):
    """Volatility regimes, a forecast horizon, a finer tick and metaorder traders: the rows are
    drawn at reset, so both paths carry out the same session."""

    def traders() -> list[Trader]:
        zi = ZeroIntelligence(
            20,
            arrival_rate=1 / 30,
            tick_scale=3.0,
            volatile_sigma=0.3,
            volatile_rate=1 / 600,
            calm_rate=1 / 300,
            horizon=900.0,
        )
        return [*light()[:1], zi, *light()[2:], Metaorder(3, parent_rate=1 / 300)]

    kwargs = {"initial_price": 22_000, "warmup_seconds": 600.0}
    compiled = session(traders(), 6, 120, **kwargs)
    uncompiled()
    plain = session(traders(), 6, 120, **kwargs)
    assert compiled.pop("compiled") and not plain.pop("compiled")
    assert compiled == plain
    assert compiled["summary"]["fills"] > 500
    assert abs(compiled["summary"]["close_mid"] - 22_000) < 2_000
