"""Tests for agents.deep.encoders: shapes, initialisation, argument checks, the causal mask
of the transformer, and a memory task showing that a window reaches each sequence torso."""

import pytest
import torch
from torch import nn

from tradearena.agents.deep.encoders import TORSOS, make_torso

W, F = 8, 4
SEQUENCE = ("cnn", "gru", "lstm", "transformer")


# ------------------------------------------------------------------------- shapes and options
@pytest.mark.parametrize(
    ("name", "shape", "options"),
    [
        ("mlp", (F,), {}),
        ("mlp", (W, F), {"layers": 3}),
        ("cnn", (W, F), {}),
        ("cnn", (W, F), {"layers": 3, "kernel_size": 5}),
        ("gru", (W, F), {}),
        ("gru", (W, F), {"num_layers": 2}),
        ("lstm", (W, F), {}),
        ("lstm", (W, F), {"num_layers": 2}),
        ("transformer", (W, F), {}),
        ("transformer", (W, F), {"layers": 2, "heads": 2, "pooling": "mean", "causal": False}),
        ("transformer", (W, F), {"positional": "learned"}),
    ],
)
def test_output_shape_and_gradients(name, shape, options):
    """(batch, *input_shape) -> (batch, out_features), out_features = hidden, finite, and every
    parameter gets a gradient."""
    torch.manual_seed(0)
    torso = make_torso(name, shape, hidden=16, **options)
    assert torso.out_features == 16
    out = torso(torch.randn(5, *shape))
    assert out.shape == (5, 16)
    assert torch.isfinite(out).all()
    out.square().sum().backward()
    for param_name, param in torso.named_parameters():
        assert param.grad is not None and param.grad.abs().sum() > 0, param_name


def test_default_hidden():
    assert make_torso("mlp", (F,)).out_features == 64


def test_transformer_encode_shape():
    torso = make_torso("transformer", (W, F), hidden=16)
    assert torso.encode(torch.randn(3, W, F)).shape == (3, W, 16)


# ---------------------------------------------------------------------------- initialisation
@pytest.mark.parametrize("name", list(TORSOS))
def test_deterministic_init(name):
    """The same torch seed gives the same weights; another seed different ones."""
    shape = (F,) if name == "mlp" else (W, F)

    def weights(seed: int) -> dict[str, torch.Tensor]:
        torch.manual_seed(seed)
        return make_torso(name, shape, hidden=16).state_dict()

    first, again, other = weights(0), weights(0), weights(1)
    assert first.keys() == again.keys()
    assert all(torch.equal(first[key], again[key]) for key in first)
    assert any(not torch.equal(first[key], other[key]) for key in first)


def test_recurrent_init():
    """Zero biases but the LSTM forget gate (1); orthogonal hidden-to-hidden gate blocks."""
    lstm = make_torso("lstm", (W, F), hidden=8).rnn
    forget = torch.zeros(32)
    forget[8:16] = 1.0
    assert torch.equal(lstm.bias_ih_l0, forget)
    assert torch.equal(lstm.bias_hh_l0, torch.zeros(32))
    gru = make_torso("gru", (W, F), hidden=8).rnn
    assert torch.equal(gru.bias_ih_l0, torch.zeros(24))
    for block in gru.weight_hh_l0.detach().chunk(3):
        torch.testing.assert_close(block @ block.T, torch.eye(8), atol=1e-5, rtol=0)


def test_transformer_layers_start_different():
    """nn.TransformerEncoder clones one layer; the torso re-initialises each clone."""
    torso = make_torso("transformer", (W, F), hidden=16, layers=2)
    first, second = torso.encoder.layers
    assert not torch.equal(first.self_attn.in_proj_weight, second.self_attn.in_proj_weight)
    assert not torch.equal(first.linear1.weight, second.linear1.weight)


# ------------------------------------------------------------------------------ bad arguments
def test_unknown_name_lists_valid_ones():
    with pytest.raises(ValueError, match="mlp, cnn, gru, lstm, transformer"):
        make_torso("resnet", (W, F))


@pytest.mark.parametrize("name", SEQUENCE)
@pytest.mark.parametrize("shape", [(F,), (2, W, F), (W, 0)])
def test_sequence_torsos_need_a_window(name, shape):
    with pytest.raises(ValueError, match=rf"'{name}' torso expects input_shape \(W, F\)"):
        make_torso(name, shape)


def test_bad_transformer_options():
    with pytest.raises(ValueError, match="multiple of heads"):
        make_torso("transformer", (W, F), hidden=30, heads=4)
    with pytest.raises(ValueError, match="pooling"):
        make_torso("transformer", (W, F), pooling="max")
    with pytest.raises(ValueError, match="positional"):
        make_torso("transformer", (W, F), positional="rotary")


def test_unknown_option_is_rejected():
    with pytest.raises(TypeError, match="kernel_size"):
        make_torso("gru", (W, F), kernel_size=3)


# --------------------------------------------------------------------------------- causality
@pytest.mark.parametrize("layers", [1, 2])
@pytest.mark.parametrize("training", [True, False])
def test_causal_transformer_ignores_the_future(layers, training):
    """With the causal mask, position t of `encode` does not depend on inputs after t; without
    it, it does. Also in eval mode without gradients, where PyTorch may take its fused path."""
    torch.manual_seed(0)
    causal = make_torso("transformer", (W, F), hidden=16, layers=layers).train(training)
    free = make_torso("transformer", (W, F), hidden=16, layers=layers, causal=False)
    free.train(training)
    x = torch.randn(4, W, F)
    with torch.set_grad_enabled(training):
        for t in range(W - 1):
            future = x.clone()
            future[:, t + 1 :] += torch.randn(4, W - t - 1, F)
            past, later = slice(None, t + 1), slice(t + 1, None)
            torch.testing.assert_close(causal.encode(future)[:, past], causal.encode(x)[:, past])
            assert not torch.allclose(causal.encode(future)[:, later], causal.encode(x)[:, later])
            assert not torch.allclose(free.encode(future)[:, past], free.encode(x)[:, past])


# ------------------------------------------------------------------------------- memory task
def memory_batch(n: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` windows (n, W, F) of standard normal features; the label is the sign of feature 0
    at the window's first position, W - 1 steps before the last."""
    x = torch.randn(n, W, F, generator=generator)
    return x, (x[:, 0, 0] > 0).long()


def memory_accuracy(name: str, steps: int = 300) -> float:
    """Train torso + linear head as a classifier on the memory task (cross-entropy, Adam,
    batch 64, fixed seeds); the accuracy on 2000 held-out windows. The "mlp" sees only the
    last feature vector."""
    torch.manual_seed(0)
    last_only = name == "mlp"
    torso = make_torso(name, (F,) if last_only else (W, F), hidden=32)
    model = nn.Sequential(torso, nn.Linear(torso.out_features, 2))
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    train = torch.Generator().manual_seed(1)
    for _ in range(steps):
        x, y = memory_batch(64, train)
        loss = nn.functional.cross_entropy(model(x[:, -1] if last_only else x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    x, y = memory_batch(2000, torch.Generator().manual_seed(2))
    with torch.no_grad():
        predicted = model(x[:, -1] if last_only else x).argmax(dim=1)
    return (predicted == y).float().mean().item()


@pytest.mark.parametrize("name", SEQUENCE)
def test_sequence_torsos_remember_the_window(name):
    """Every sequence torso recovers a sign seen W - 1 steps back: the window reaches it."""
    assert memory_accuracy(name) >= 0.9


def test_last_observation_alone_is_at_chance():
    """Without the window the label is unpredictable: the task needs memory."""
    assert memory_accuracy("mlp") < 0.6
