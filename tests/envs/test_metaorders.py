"""Metaorder traders: parents split into children as stated, heavy-tailed sizes, long memory of
order signs, and impact measured by code checked on known models."""

from __future__ import annotations

import numpy as np
import pytest

from tradearena.envs.simulator.impact import metaorder_moves, parent_moves
from tradearena.envs.simulator.market import Market
from tradearena.envs.simulator.orders import Kind
from tradearena.envs.simulator.response_estimate import sign_autocorrelation
from tradearena.envs.simulator.traders import TRADERS, Metaorder, light
from tradearena.envs.simulator.traders.metaorder import Parents
from tradearena.envs.spec import MarketSpec, SpecError
from tradearena.evaluation.analysis.impact import impact_exponent


def one_day(trader: Metaorder, seed: int = 0, **market: object) -> Market:
    m = Market([trader], n_seats=0, **market)
    m.reset(seed)
    return m


def test_parents_are_split_into_children_of_their_sign():
    """Each parent's children (rows whose ref is its index) are market orders of its side and
    owner, child_size shares but the last, summing to its size unless the close cut them,
    from its start to its end; about child_rate of them per second."""
    meta = Metaorder(3, parent_rate=1 / 600, parent_min=50, child_size=20, child_rate=0.5)
    m = one_day(meta)
    rows, parents = meta.batch, meta.parents
    assert np.all(rows.kind == Kind.MARKET) and np.all(np.diff(rows.time) >= 0)
    assert np.all(rows.time < m.close_time) and len(parents.start) > 50
    gaps = []
    for p in range(len(parents.start)):
        mine = rows.ref == p
        assert np.all(rows.side[mine] == parents.side[p])
        assert len(np.unique(rows.owner[mine])) == 1
        assert rows.qty[mine].sum() == parents.qty[p] <= parents.size[p]
        assert np.all(rows.qty[mine][:-1] == 20)
        assert rows.time[mine][0] == parents.start[p] and rows.time[mine][-1] == parents.end[p]
        if parents.qty[p] < parents.size[p]:  # cut: its next child would come after the close
            assert parents.end[p] > m.close_time - 60.0
        gaps.append(np.diff(rows.time[mine]))
    assert np.mean(np.concatenate(gaps)) == pytest.approx(2.0, rel=0.05)


def test_parent_sizes_are_pareto():
    """P(Q > q) = (parent_min / q)^size_tail: for tail 1.5 and min 100, 1/8 beyond 400 and
    1/27 beyond 900; none beyond parent_max."""
    meta = Metaorder(200, parent_rate=1 / 60, parent_min=100, parent_max=10**9, size_tail=1.5)
    one_day(meta)
    size = meta.parents.size
    assert len(size) > 70_000
    assert np.mean(size > 400) == pytest.approx(1 / 8, abs=0.005)
    assert np.mean(size > 900) == pytest.approx(1 / 27, abs=0.003)
    capped = Metaorder(20, parent_rate=1 / 60, parent_min=100, parent_max=300)
    one_day(capped)
    assert capped.parents.size.max() == 300 and capped.parents.size.min() == 100


def test_order_signs_have_long_memory():
    """Children of a parent share its sign and parents' lengths are heavy-tailed: over 30 days
    (about 170,000 orders; standard error 1 / sqrt(n) = 0.0024) the signs stay correlated at
    lags of 100 and 300 orders, far above an exponential decay through lags 1 and 10."""
    meta = Metaorder(8, parent_rate=1 / 900)
    signs = np.concatenate([one_day(meta, seed).traders[0].batch.side for seed in range(30)])
    rho = sign_autocorrelation(signs, np.array([1, 10, 100, 300]))
    assert len(signs) > 150_000
    assert rho[0] > 0.3 and rho[2] > 0.05 and rho[3] > 0.015
    exponential = rho[0] * (rho[1] / rho[0]) ** (299 / 9)  # its value at lag 300
    assert rho[3] > 10 * exponential


def test_sign_autocorrelation_by_hand():
    alternating = np.tile([1, -1], 50)
    np.testing.assert_allclose(sign_autocorrelation(alternating, np.array([1, 2, 3])), [-1, 1, -1])
    pairs = np.tile([1, 1, -1, -1], 25)  # +1 at lag 0, 0 at 1 (sum 0 over pairs), -1 at lag 2
    assert sign_autocorrelation(pairs, np.array([2]))[0] == pytest.approx(-1.0)
    assert sign_autocorrelation(pairs, np.array([1]))[0] == pytest.approx(1 / 99, abs=0.02)


@pytest.mark.parametrize("delta", [0.5, 0.8])
def test_impact_exponent_recovers_a_known_power_law(delta):
    """move = 0.3 Q^delta times log-normal noise of mean 1, plus Gaussian noise: the fitted
    exponent is delta within 0.03 and the prefactor 0.3 within 15%."""
    rng = np.random.default_rng(7)
    size = 100 * (1 - rng.random(50_000)) ** (-1 / 1.5)
    noise = np.exp(rng.normal(-0.5 * 0.3**2, 0.3, size.shape))
    move = 0.3 * size**delta * noise + rng.normal(0, 2.0, size.shape)
    fit = impact_exponent(size, move)
    assert fit.exponent == pytest.approx(delta, abs=0.03)
    assert fit.prefactor == pytest.approx(0.3, rel=0.15)


def test_impact_exponent_of_exact_bins():
    """Two sizes, each a bin of its own, moves exactly 2 sqrt(Q): exponent 0.5, prefactor 2."""
    size = np.r_[np.full(30, 100.0), np.full(30, 10_000.0)]
    fit = impact_exponent(size, 2 * np.sqrt(size), n_bins=2)
    assert fit.exponent == pytest.approx(0.5, abs=1e-12)
    assert fit.prefactor == pytest.approx(2.0, rel=1e-12)


def test_parent_moves_by_hand():
    """Steps of 10 s from 100 s; a buy from 112 s to 131 s reads mids[1] -> mids[4]; a sell
    from 100 s to 120 s reads mids[0] -> mids[2]; one ending past the mids gets NaN."""
    mids = np.array([10.0, 11.0, 13.0, 12.0, 16.0])
    parents = Parents(
        np.array([112.0, 100.0, 120.0]),
        np.array([131.0, 120.0, 160.0]),
        np.array([1, -1, 1]),
        np.full(3, 100),
        np.full(3, 100),
    )
    moves = parent_moves(parents, mids, 100.0, 10.0)
    assert moves[:2].tolist() == [5.0, -3.0] and np.isnan(moves[2])


def test_metaorder_impact_in_the_synthetic_market_is_concave():
    """Parents of the light market with metaorder traders (40 days, 5 s steps): the mean
    move grows with size, more than 2.5x from the smallest bin to the largest (sizes more than
    10x apart), with an exponent below 1 (concave impact)."""
    size, move = metaorder_moves([*light(), Metaorder()], 40)
    assert len(size) > 1_500 and np.all(size >= 1)
    fit = impact_exponent(size, move, n_bins=8)
    assert 0.2 < fit.exponent < 1.0
    assert fit.size[-1] > 10 * fit.size[0] and fit.move[-1] > 2.5 * fit.move[0]


def test_metaorders_are_a_trader_type_with_checked_parameters():
    assert TRADERS["Metaorder"] is Metaorder
    spec = MarketSpec(traders=({"type": "Metaorder", "n_agents": 2, "size_tail": 1.2},))
    assert spec.market(0).traders[0].size_tail == 1.2
    with pytest.raises(SpecError) as error:
        MarketSpec(traders=({"type": "Metaorder", "child_sise": 5},))
    assert error.value.path == ("traders", 0, "child_sise")
    assert "(did you mean 'child_size'?)" in str(error.value)
    with pytest.raises(SpecError) as error:
        MarketSpec(traders=({"type": "Metaorder", "parent_max": 10},))
    assert error.value.path == ("traders", 0, "parent_max")
    assert "must be >= parent_min shares, got 10" in str(error.value)
