"""The neural variant of a learned flow: a GRU over the event history in place of the Hawkes
excitation, in numpy (what the sampler runs; the training, with torch, is
`learned_flow.neural_fit`).

After each event the GRU reads it (its side and kind, one-hot, and the log of the seconds
since the event before) and sets, for the time until the next one, every (side, kind, state)
rate: ``exp(table)`` times the time of day's profile, plus a burst ``gamma`` that decays at
``delta`` per second from the event. The states, the profile, the marks, the depth and the
opening book are those of the parametric model it starts from (`EventModel`), whose rates
are the table's starting point; the table is capped at ten times that model's largest rate
and a burst at less than one event (`log_caps`), so that states the training never saw stay
tame and a burst's events die out.
Units: seconds, lots; rates per second.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tradearena.envs.data.events import N_EVENT_KINDS
from tradearena.envs.simulator.learned_flow import parameters
from tradearena.envs.simulator.learned_flow.model import DECAY_RANGE, EventModel
from tradearena.envs.simulator.learned_flow.model import check as check_base

__all__ = ["INPUTS", "NeuralModel", "check", "inputs", "is_neural"]

SIDED_KINDS = 2 * N_EVENT_KINDS
"""The (side, kind)s an event can be."""
INPUTS = SIDED_KINDS + 1
"""What the GRU reads of an event: its (side, kind) one-hot and the log seconds since the
event before."""
_WEIGHTS = ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "table_weight", "table_bias")
_WEIGHTS += ("burst_weight", "burst_bias")


BURST_EVENTS = 0.9
"""The most events a burst brings before it fades, over every side and kind together: below
one, so that the events a burst brings (each starting a burst of its own) die out."""


def log_caps(base: EventModel, log_delta):
    """(largest log-rate of the table, largest log-burst of one side and kind) for a base
    model and the log of the bursts' decay (a number or a torch tensor): ten times the
    base's largest rate; a burst that brings `BURST_EVENTS` events over every side and kind
    together."""
    return float(np.log(10.0 * base.mu.max())), log_delta + np.log(BURST_EVENTS / SIDED_KINDS)


def inputs(event: np.ndarray, dt: np.ndarray) -> np.ndarray:
    """The GRU's inputs (n, `INPUTS`) of events ``event`` (side index x N_EVENT_KINDS + kind, (n,))
    that came ``dt`` seconds after the one before ((n,))."""
    x = np.zeros((len(event), INPUTS))
    x[np.arange(len(event)), event] = 1.0
    x[:, -1] = np.log(np.asarray(dt, np.float64) + 1e-4) / 10.0
    return x


@dataclass(frozen=True, eq=False)
class NeuralModel:
    """A GRU's weights over a parametric model's states (see the module docstring).

    base: the `EventModel` whose states, profile, marks, depth and book it uses; weight_ih
    (3 H, INPUTS), weight_hh (3 H, H), bias_ih, bias_hh (3 H,): the GRU (torch's layout,
    gates r, z, n); table_weight (2 N_EVENT_KINDS cells, H), table_bias: the log-rates, rows
    [side index, kind, state]; burst_weight (2 N_EVENT_KINDS, H), burst_bias: the bursts' log-sizes
    (events per second at the event); delta: the bursts' decay, per second; meta: the
    training's figures."""

    base: EventModel
    weight_ih: np.ndarray
    weight_hh: np.ndarray
    bias_ih: np.ndarray
    bias_hh: np.ndarray
    table_weight: np.ndarray
    table_bias: np.ndarray
    burst_weight: np.ndarray
    burst_bias: np.ndarray
    delta: float
    meta: dict

    @property
    def table_cap(self) -> float:
        """The largest log-rate the table gives: ten times the base's largest rate, so that a
        state the training never saw cannot run away (nor the sampler's bound)."""
        return log_caps(self.base, np.log(self.delta))[0]

    @property
    def burst_cap(self) -> float:
        """The largest log-burst of one side and kind (`log_caps`)."""
        return log_caps(self.base, np.log(self.delta))[1]

    @property
    def hidden(self) -> int:
        """The GRU's width, H."""
        return self.weight_hh.shape[1]

    def step(self, h: np.ndarray, x: np.ndarray) -> np.ndarray:
        """The hidden state (H,) after reading input ``x`` (`INPUTS`,) from ``h``."""
        gi = self.weight_ih @ x + self.bias_ih
        gh = self.weight_hh @ h + self.bias_hh
        n = self.hidden
        r = 1.0 / (1.0 + np.exp(-(gi[:n] + gh[:n])))
        z = 1.0 / (1.0 + np.exp(-(gi[n : 2 * n] + gh[n : 2 * n])))
        c = np.tanh(gi[2 * n :] + r * gh[2 * n :])
        return (1.0 - z) * c + z * h

    def read(self, h: np.ndarray, event: int, dt: float) -> np.ndarray:
        """The hidden state (H,) after reading event ``event`` (side index x N_EVENT_KINDS + kind),
        ``dt`` seconds after the one before, from ``h``."""
        return self.step(h, inputs(np.array([event]), np.array([dt]))[0])

    def rates(self, h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """From hidden state ``h``: the rates table (2 N_EVENT_KINDS cells,) per second before the
        profile, and the bursts (2 N_EVENT_KINDS,) per second."""
        logits = (self.table_weight @ h + self.table_bias).reshape(2 * N_EVENT_KINDS, -1)
        logits = logits[:, self.base.pool].ravel()  # a sparse state takes its pool's rates
        table = np.exp(np.minimum(logits, self.table_cap))
        burst = np.exp(np.minimum(self.burst_weight @ h + self.burst_bias, self.burst_cap))
        return table, burst

    def save(self, path: str | Path) -> Path:
        """Write ``path`` (JSON) with the base model and the weights beside it (``path``'s
        stem + ``.base.json`` / ``.npz``); returns ``path``. A model `load` would refuse
        (`check`) is a `LearnedFlowError` naming ``path``, and nothing is written."""
        path = Path(path)
        check(self, str(path))
        base = self.base.save(path.with_name(f"{path.stem}.base.json"))
        arrays = {k: getattr(self, k) for k in _WEIGHTS}
        scalars = {"base": base.name, "delta": self.delta, "meta": self.meta}
        return parameters.write(path, "neural", scalars, arrays)

    @classmethod
    def load(cls, path: str | Path) -> NeuralModel:
        """The model `save` wrote to ``path``, checked; a `LearnedFlowError` naming the file
        and the field when it cannot be used."""
        path = Path(path)
        scalars, arrays = parameters.read(path, "neural", _WEIGHTS.__contains__)
        base_path = parameters.beside(path, scalars, "base")
        for name in _WEIGHTS:
            if name not in arrays:
                raise parameters.LearnedFlowError(
                    f"{path.parent / scalars['arrays']}: no array {name!r}"
                )
        base = EventModel.load(base_path)
        delta = float(parameters.field(path, scalars, "delta", (int, float)))
        meta = parameters.field(path, scalars, "meta", dict)
        model = cls(base=base, delta=delta, meta=meta, **{k: arrays[k] for k in _WEIGHTS})
        return check(model, str(path))


def is_neural(path: str | Path) -> bool:
    """Whether the parameter file ``path`` holds a neural flow."""
    return parameters.kind_of(path) == "neural"


def check(model: NeuralModel, where: str = "model") -> NeuralModel:
    """``model`` when a sampler can run it: its base checked (`learned_flow.model.check`),
    every weight finite and of the GRU's shape (hidden width H from ``weight_hh``), the
    bursts' decay within `learned_flow.model.DECAY_RANGE`; else a `LearnedFlowError` naming
    ``where`` and the field."""
    check_base(model.base, where)
    hidden = np.shape(model.weight_hh)[-1] if np.ndim(model.weight_hh) == 2 else -1
    rows = 2 * N_EVENT_KINDS * model.base.mu.shape[1]
    shapes = {
        "weight_ih": (3 * hidden, INPUTS),
        "weight_hh": (3 * hidden, hidden),
        "bias_ih": (3 * hidden,),
        "bias_hh": (3 * hidden,),
        "table_weight": (rows, hidden),
        "table_bias": (rows,),
        "burst_weight": (2 * N_EVENT_KINDS, hidden),
        "burst_bias": (2 * N_EVENT_KINDS,),
    }
    for name, shape in shapes.items():
        value = np.asarray(getattr(model, name))
        if hidden < 1 or value.shape != shape:
            raise parameters.LearnedFlowError(
                f"{where}: {name} must have shape {shape}, got {value.shape}"
            )
        if value.dtype.kind not in "iuf" or not np.isfinite(value).all():
            raise parameters.LearnedFlowError(f"{where}: {name} must be finite real numbers")
    low, high = DECAY_RANGE
    if not (isinstance(model.delta, int | float) and low <= model.delta <= high):
        raise parameters.LearnedFlowError(
            f"{where}: delta must be a decay in [{low:g}, {high:g}] per second, got {model.delta!r}"
        )
    return model
