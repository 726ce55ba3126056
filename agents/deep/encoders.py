"""Torsos: networks mapping an observation (or a window of them) to a feature vector.

``make_torso(name, input_shape, hidden=64, **options)`` builds one; every torso takes a float
tensor of shape ``(batch, *input_shape)`` and returns ``(batch, torso.out_features)``. A head
(a ``Linear(out_features, n_actions)`` for a Q-network) goes on top.

- ``"mlp"``, any ``input_shape`` (``(F,)`` or ``(W, F)``): flatten, then ``layers`` x
  (Linear(hidden), ReLU).
- ``"cnn"``, ``(W, F)``: ``layers`` x (Conv1d over time, the F features as channels,
  ``kernel_size``, zero "same" padding, ReLU), mean over time, Linear(hidden), ReLU.
- ``"gru"``, ``"lstm"``, ``(W, F)``: a batch-first recurrent net over the window
  (``num_layers``); its last hidden state.
- ``"transformer"``, ``(W, F)``: Linear embedding to d_model = hidden, positional encoding,
  pre-norm ``nn.TransformerEncoder`` (causal by default), LayerNorm, last or mean position.

Initialisation is part of the torso and on by default: linear and convolution weights
orthogonal (gain sqrt(2) before a ReLU), recurrent input weights xavier and hidden-to-hidden
weights orthogonal (per gate), attention and embedding weights xavier, biases zero, and the
LSTM forget-gate bias 1. The recurrent and attention torsos fail silently without it:
``nn.TransformerEncoder`` deep-copies one layer, so with PyTorch's defaults every layer
starts identical, and an LSTM's forget gate starts at sigmoid(0) = 1/2, so the start of a
long window fades as 2^-W. Nothing raises; learning is just slower or stalls (on the W = 8
memory task of the tests both initialisations train; at W = 32, after 400 steps, the default
LSTM stayed at chance for two seeds, this one reached 82% for one of them), so keep the
initialisation when changing a torso.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from tradearena.agents.base import check_memory

__all__ = [
    "CNNTorso",
    "MLPTorso",
    "RecurrentTorso",
    "TORSOS",
    "TransformerTorso",
    "make_torso",
    "sinusoidal_encoding",
]

RELU_GAIN = math.sqrt(2.0)


def _init_linear(layer: nn.Linear | nn.Conv1d, gain: float) -> None:
    """Orthogonal weights with ``gain``, zero bias."""
    nn.init.orthogonal_(layer.weight, gain=gain)
    if layer.bias is not None:
        nn.init.zeros_(layer.bias)


def _window_shape(name: str, input_shape: tuple[int, ...]) -> tuple[int, int]:
    """``(W, F)`` from ``input_shape``, or a ValueError naming the torso."""
    if len(input_shape) != 2 or min(input_shape) <= 0:
        raise ValueError(
            f"the {name!r} torso expects input_shape (W, F) - a window of W feature vectors "
            f"of F features - got {tuple(input_shape)}"
        )
    return int(input_shape[0]), int(input_shape[1])


class MLPTorso(nn.Module):
    """Flatten ``(batch, *input_shape)``, then ``layers`` x (Linear(hidden), ReLU).

    Output ``(batch, hidden)``.
    """

    def __init__(self, input_shape: tuple[int, ...], hidden: int = 64, layers: int = 2) -> None:
        super().__init__()
        if not input_shape or min(input_shape) <= 0 or layers < 1:
            raise ValueError(
                f"the 'mlp' torso needs a non-empty input_shape of positive sizes and "
                f"layers >= 1, got input_shape {tuple(input_shape)}, layers {layers}"
            )
        modules: list[nn.Module] = [nn.Flatten()]
        width = math.prod(input_shape)
        for _ in range(layers):
            linear = nn.Linear(width, hidden)
            _init_linear(linear, RELU_GAIN)
            modules += [linear, nn.ReLU()]
            width = hidden
        self.net = nn.Sequential(*modules)
        self.out_features = hidden

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # the layers' own functions, not their modules' calls: the same arithmetic without
        # nn.Module's per-call bookkeeping, a third of a small network's forward pass
        x = x.flatten(1)
        for layer in self.net:
            if isinstance(layer, nn.Linear):
                x = torch.relu(F.linear(x, layer.weight, layer.bias))
        return x


class CNNTorso(nn.Module):
    """1-D convolutions over time of a window ``(batch, W, F)`` (the F features are the
    channels), zero ("same") padding, ReLU; mean over time; Linear(hidden), ReLU.

    The mean makes the torso shift-invariant except at the window's edges, where the zero
    padding tells it where the window starts and ends. Output ``(batch, hidden)``.
    """

    def __init__(
        self,
        input_shape: tuple[int, ...],
        hidden: int = 64,
        layers: int = 2,
        kernel_size: int = 3,
    ) -> None:
        super().__init__()
        _, n_features = _window_shape("cnn", input_shape)
        if layers < 1 or kernel_size < 1 or kernel_size % 2 == 0:
            raise ValueError(
                f"the 'cnn' torso needs layers >= 1 and an odd kernel_size, got layers "
                f"{layers}, kernel_size {kernel_size}"
            )
        convs: list[nn.Module] = []
        channels = n_features
        for _ in range(layers):
            conv = nn.Conv1d(channels, hidden, kernel_size, padding=kernel_size // 2)
            _init_linear(conv, RELU_GAIN)
            convs += [conv, nn.ReLU()]
            channels = hidden
        self.convs = nn.Sequential(*convs)
        self.out = nn.Linear(hidden, hidden)
        _init_linear(self.out, RELU_GAIN)
        self.out_features = hidden

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.convs(x.transpose(1, 2))  # (batch, hidden, W)
        return torch.relu(self.out(h.mean(dim=2)))


class RecurrentTorso(nn.Module):
    """A batch-first GRU or LSTM over the window ``(batch, W, F)``; the last layer's hidden
    state after the last step, ``(batch, hidden)``."""

    def __init__(
        self,
        input_shape: tuple[int, ...],
        hidden: int = 64,
        cell: str = "gru",
        num_layers: int = 1,
    ) -> None:
        super().__init__()
        _, n_features = _window_shape(cell, input_shape)
        rnn_class = {"gru": nn.GRU, "lstm": nn.LSTM}[cell]
        self.rnn = rnn_class(n_features, hidden, num_layers=num_layers, batch_first=True)
        for name, param in self.rnn.named_parameters():
            if name.startswith("weight_ih"):
                for gate in param.chunk(param.shape[0] // hidden):
                    nn.init.xavier_uniform_(gate)
            elif name.startswith("weight_hh"):
                for gate in param.chunk(param.shape[0] // hidden):
                    nn.init.orthogonal_(gate)
            else:
                nn.init.zeros_(param)
                if cell == "lstm" and name.startswith("bias_ih"):
                    nn.init.ones_(param[hidden : 2 * hidden])  # gates i, f, g, o: forget = 1
        self.out_features = hidden

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _, state = self.rnn(x)
        h_n = state[0] if isinstance(state, tuple) else state  # (num_layers, batch, hidden)
        return h_n[-1]


def sinusoidal_encoding(length: int, d_model: int) -> torch.Tensor:
    """The fixed positional encoding of "Attention is all you need", ``(length, d_model)``."""
    position = torch.arange(length, dtype=torch.float32)[:, None]
    frequency = torch.exp(
        torch.arange(0, d_model, 2, dtype=torch.float32) * (-math.log(1e4) / d_model)
    )
    encoding = torch.zeros(length, d_model)
    encoding[:, 0::2] = torch.sin(position * frequency)
    encoding[:, 1::2] = torch.cos(position * frequency[: d_model // 2])
    return encoding


class TransformerTorso(nn.Module):
    """A transformer encoder over the window ``(batch, W, F)``.

    Linear embedding to ``hidden`` (= d_model), plus a ``"sinusoidal"`` or ``"learned"``
    positional encoding, ``layers`` pre-norm encoder layers with ``heads`` heads and a
    feed-forward width of 2 * hidden (``causal``: position t attends to positions <= t only),
    a final LayerNorm. W is fixed by ``input_shape``. `encode` gives every
    position, ``(batch, W, hidden)``; `forward` pools them to ``(batch, hidden)``: the
    ``"last"`` position (which sees the whole window) or the ``"mean"``.
    """

    def __init__(
        self,
        input_shape: tuple[int, ...],
        hidden: int = 64,
        layers: int = 1,
        heads: int = 4,
        causal: bool = True,
        pooling: str = "last",
        positional: str = "sinusoidal",
        dropout: float = 0.0,
    ) -> None:
        super().__init__()
        length, n_features = _window_shape("transformer", input_shape)
        if hidden % heads != 0:
            raise ValueError(f"hidden ({hidden}) must be a multiple of heads ({heads})")
        if pooling not in ("last", "mean"):
            raise ValueError(f"pooling must be 'last' or 'mean', got {pooling!r}")
        if positional not in ("sinusoidal", "learned"):
            raise ValueError(f"positional must be 'sinusoidal' or 'learned', got {positional!r}")
        self.causal, self.pooling = causal, pooling
        self.embed = nn.Linear(n_features, hidden)
        if positional == "learned":
            self.position = nn.Parameter(0.02 * torch.randn(length, hidden))
        else:
            self.register_buffer("position", sinusoidal_encoding(length, hidden), persistent=False)
        layer = nn.TransformerEncoderLayer(
            hidden,
            heads,
            dim_feedforward=2 * hidden,
            dropout=dropout,
            batch_first=True,
            norm_first=True,
        )
        self.encoder = nn.TransformerEncoder(
            layer, layers, norm=nn.LayerNorm(hidden), enable_nested_tensor=False
        )
        mask = nn.Transformer.generate_square_subsequent_mask(length)
        self.register_buffer("mask", mask, persistent=False)
        for module in self.modules():
            if isinstance(module, nn.MultiheadAttention):
                nn.init.xavier_uniform_(module.in_proj_weight)
                nn.init.zeros_(module.in_proj_bias)
            elif isinstance(module, nn.Linear):
                nn.init.xavier_uniform_(module.weight)
                nn.init.zeros_(module.bias)
        self.out_features = hidden

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        """Every position's output, ``(batch, W, hidden)``."""
        h = self.embed(x) + self.position
        if self.causal:
            return self.encoder(h, mask=self.mask, is_causal=True)
        return self.encoder(h)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.encode(x)
        return h[:, -1] if self.pooling == "last" else h.mean(dim=1)


TORSOS: dict[str, type[nn.Module]] = {
    "mlp": MLPTorso,
    "cnn": CNNTorso,
    "gru": RecurrentTorso,
    "lstm": RecurrentTorso,
    "transformer": TransformerTorso,
}


def make_torso(
    name: str, input_shape: tuple[int, ...], *, hidden: int = 64, **options
) -> nn.Module:
    """The torso ``name`` for inputs ``(batch, *input_shape)``, output ``(batch, hidden)``.

    ``options`` go to the torso's class: ``layers`` (mlp, cnn, transformer), ``kernel_size``
    (cnn), ``num_layers`` (gru, lstm), ``heads``, ``causal``, ``pooling``, ``positional``,
    ``dropout`` (transformer). The module's ``out_features`` is its output width.
    """
    if name not in TORSOS:
        raise ValueError(f"unknown torso {name!r}; valid names: {', '.join(TORSOS)}")
    if isinstance(hidden, bool) or not isinstance(hidden, int) or hidden < 1:
        raise ValueError(f"hidden must be a positive int, got {hidden!r}")
    width = max(hidden, math.prod(input_shape))  # the widest layer's inputs
    check_memory("hidden", hidden, 4 * 4 * hidden * width, "a layer's weights")  # 4 gates
    if name in ("gru", "lstm"):
        options["cell"] = name
    return TORSOS[name](tuple(input_shape), hidden, **options)
