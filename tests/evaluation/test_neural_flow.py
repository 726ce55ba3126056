"""The neural variant of a learned flow: its numpy GRU is torch's, its likelihood reduces to
the parametric model's where the GRU has nothing to say, training raises the likelihood it
is trained on, and its sampler runs in a market."""

from __future__ import annotations

import pickle
import subprocess
import sys

import numpy as np
import pytest
import torch
from reference_flow import OPEN, reference_events, small_model  # tests/reference_flow.py

from tradearena.envs.data.events import N_EVENT_KINDS
from tradearena.envs.simulator.book import OrderBook
from tradearena.envs.simulator.learned_flow.estimate import log_likelihood as event_log_likelihood
from tradearena.envs.simulator.learned_flow.model import EventModel
from tradearena.envs.simulator.learned_flow.neural import INPUTS, NeuralModel, inputs
from tradearena.envs.simulator.learned_flow.neural_fit import fit_neural, log_likelihood
from tradearena.envs.simulator.market import Market
from tradearena.envs.simulator.traders.learned import LearnedFlow, open_book


def base_model(excited: bool) -> EventModel:
    """Two spread buckets, two queue buckets, the excitation on or off."""
    return small_model(excitation=0.4 if excited else 0.0)


def quiet_network(base: EventModel, hidden: int = 4) -> NeuralModel:
    """A GRU whose heads ignore it: the table is the base's log-rates, bursts negligible."""
    rng = np.random.default_rng(0)
    cells = base.mu.shape[1]
    return NeuralModel(
        base=base,
        weight_ih=rng.normal(size=(3 * hidden, INPUTS)),
        weight_hh=rng.normal(size=(3 * hidden, hidden)),
        bias_ih=rng.normal(size=3 * hidden),
        bias_hh=rng.normal(size=3 * hidden),
        table_weight=np.zeros((2 * N_EVENT_KINDS * cells, hidden)),
        table_bias=np.log(np.maximum(np.concatenate([base.mu, base.mu]).ravel(), 1e-300)),
        burst_weight=np.zeros((2 * N_EVENT_KINDS, hidden)),
        burst_bias=np.full(2 * N_EVENT_KINDS, -60.0),
        delta=10.0,
        meta={},
    )


@pytest.fixture(scope="module")
def flow():
    """An hour of the excited base model's flow, drawn by the Python reference."""
    base = base_model(excited=True)
    book = OrderBook()
    book.now = OPEN
    open_book(book, base, 10_000, range(2))
    rng = np.random.default_rng(5)
    return reference_events(base, book, range(2), rng, OPEN, OPEN + 3600)


def test_the_numpy_gru_is_torchs():
    torch.manual_seed(0)
    gru = torch.nn.GRU(INPUTS, 5, batch_first=True).double()
    x = inputs(np.array([0, 7, 11, 3]), np.array([0.1, 0.002, 3.0, 0.5]))
    expected, _ = gru(torch.as_tensor(x)[None])
    model = quiet_network(base_model(False), hidden=5)
    weights = {k: getattr(gru, f"{k}_l0").detach().numpy() for k in ("weight_ih", "weight_hh")}
    weights |= {k: getattr(gru, f"{k}_l0").detach().numpy() for k in ("bias_ih", "bias_hh")}
    model = NeuralModel(**{**model.__dict__, **weights})
    h = np.zeros(5)
    for row, want in zip(x, expected[0].detach().numpy()):
        h = model.step(h, row)
        assert h == pytest.approx(want, abs=1e-12)


def test_a_gru_with_nothing_to_say_has_the_parametric_likelihood(flow):
    """Heads that ignore the GRU and no bursts: the neural rates are the base's baseline,
    so the likelihood is the parametric model's with no excitation, to the digit."""
    ev, path = flow
    plain = base_model(excited=False)
    assert log_likelihood(quiet_network(plain), ev, path) == pytest.approx(
        event_log_likelihood(plain, ev, path), rel=1e-9
    )


@pytest.mark.parametrize("found", [torch.float32, torch.float64])
def test_the_likelihood_leaves_torchs_default_dtype_as_it_found_it(flow, found):
    """The likelihood is computed in double precision and the default dtype set back to the
    one it was, whichever that was."""
    ev, path = flow
    before = torch.get_default_dtype()
    torch.set_default_dtype(found)
    try:
        log_likelihood(quiet_network(base_model(excited=False)), ev, path)
        assert torch.get_default_dtype() == found
    finally:
        torch.set_default_dtype(before)


def test_training_raises_the_likelihood_of_excited_flow(flow):
    """Started from the base's rates with no excitation, the GRU learns some of the flow's
    excitation in 60 epochs (a clock that cannot stop it first, so that a busy machine trains
    as a quiet one): its likelihood of the flow rises above its start's."""
    ev, path = flow
    plain = base_model(excited=False)
    trained = fit_neural(plain, ev, path, hidden=8, chunks=4, epochs=60, minutes=600.0)
    assert trained.meta["epochs"] > 1
    assert log_likelihood(trained, ev, path) > event_log_likelihood(plain, ev, path) + 0.01


def test_the_neural_sampler_runs_in_a_market_and_pickles():
    model = quiet_network(base_model(excited=False))
    market = Market(
        [LearnedFlow(model)],
        n_seats=1,
        n_steps=10,
        step_seconds=60.0,
        open_time=OPEN,
        warmup_seconds=0.0,
        tick_size=0.01,
        initial_price=10_000,
    )
    market.reset(2)
    for _ in range(4):
        market.step()
    copy = pickle.loads(pickle.dumps(market))
    for m in (market, copy):
        while not m.done:
            m.step()
    assert market.traders[0].sampler.events > 100
    assert copy.summary() == market.summary()
    bids, asks = market.book.depth(10)
    assert len(bids) >= 2 and len(asks) >= 2 and bids[0][0] < asks[0][0]


def test_a_neural_model_saved_and_loaded_is_the_same(tmp_path):
    model = quiet_network(base_model(excited=False))
    again = NeuralModel.load(model.save(tmp_path / "flow.json"))
    assert np.array_equal(again.weight_hh, model.weight_hh)
    assert np.array_equal(again.base.mu, model.base.mu) and again.delta == model.delta
    assert isinstance(LearnedFlow(tmp_path / "flow.json").model, NeuralModel)


def test_without_torch_the_error_names_the_extra():
    """In an interpreter where torch cannot be imported, the module imports and
    `torch_or_error` names the extra that installs torch."""
    code = (
        "import builtins, sys\n"
        "real = builtins.__import__\n"
        "def no_torch(name, *args, **kwargs):\n"
        "    if name == 'torch' or name.startswith('torch.'):\n"
        "        raise ImportError(\"No module named 'torch'\")\n"
        "    return real(name, *args, **kwargs)\n"
        "builtins.__import__ = no_torch\n"
        "from tradearena.envs.simulator.learned_flow.neural_fit import torch_or_error\n"
        "from tradearena.envs.errors import UserError\n"
        "try:\n"
        "    torch_or_error()\n"
        "except UserError as error:\n"
        "    print(error)\n"
    )
    said = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert "tradearena[deep]" in said
