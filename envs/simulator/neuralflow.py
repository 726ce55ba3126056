"""The neural variant of a learned flow: a GRU over the event history in place of the Hawkes
excitation, in numpy (what the sampler runs; the training, with torch, is
`evaluation.market.neural`).

After each event the GRU reads it (its side and kind, one-hot, and the log of the seconds
since the event before) and sets, for the time until the next one, every (side, kind, state)
rate: ``exp(table)`` times the time of day's profile, plus a burst ``gamma`` that decays at
``delta`` per second from the event. The states, the profile, the marks, the depth and the
opening book are those of the parametric model it starts from (`EventModel`), whose rates
are the table's starting point; the table is capped at ten times that model's largest rate
and a burst at two events (`log_caps`), so that states the training never saw stay tame.
Units: seconds, lots; rates per second.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tradearena.envs.data.events import KINDS
from tradearena.envs.simulator.eventmodel import EventModel, read_parameters, write_parameters

__all__ = ["INPUTS", "NeuralModel", "inputs", "is_neural"]

INPUTS = 2 * KINDS + 1
"""What the GRU reads of an event: its (side, kind) one-hot and the log seconds since the
event before."""
_WEIGHTS = ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "table_weight", "table_bias")
_WEIGHTS += ("burst_weight", "burst_bias")


def log_caps(base: EventModel, log_delta):
    """(largest log-rate of the table, largest log-burst) for a base model and the log of the
    bursts' decay (a number or a torch tensor): ten times the base's largest rate; two
    events per burst on average."""
    return float(np.log(10.0 * base.mu.max())), log_delta + np.log(2.0)


def inputs(event: np.ndarray, dt: np.ndarray) -> np.ndarray:
    """The GRU's inputs (n, `INPUTS`) of events ``event`` (side index x KINDS + kind, (n,))
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
    gates r, z, n); table_weight (2 KINDS cells, H), table_bias: the log-rates, rows
    [side index, kind, state]; burst_weight (2 KINDS, H), burst_bias: the bursts' log-sizes
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
        """The largest log-burst: one that brings two events on average before it fades."""
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
        """The hidden state (H,) after reading event ``event`` (side index x KINDS + kind),
        ``dt`` seconds after the one before, from ``h``."""
        return self.step(h, inputs(np.array([event]), np.array([dt]))[0])

    def rates(self, h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """From hidden state ``h``: the rates table (2 KINDS cells,) per second before the
        profile, and the bursts (2 KINDS,) per second."""
        logits = (self.table_weight @ h + self.table_bias).reshape(2 * KINDS, -1)
        logits = logits[:, self.base.pool].ravel()  # a sparse state takes its pool's rates
        table = np.exp(np.minimum(logits, self.table_cap))
        burst = np.exp(np.minimum(self.burst_weight @ h + self.burst_bias, self.burst_cap))
        return table, burst

    def save(self, path: str | Path) -> Path:
        """Write ``path`` (JSON) with the base model and the weights beside it (``path``'s
        stem + ``.base.json`` / ``.npz``); returns ``path``."""
        path = Path(path)
        base = self.base.save(path.with_name(f"{path.stem}.base.json"))
        np.savez(path.with_suffix(".npz"), **{k: getattr(self, k) for k in _WEIGHTS})
        scalars = {
            "base": base.name,
            "arrays": path.with_suffix(".npz").name,
            "delta": self.delta,
            "meta": self.meta,
        }
        return write_parameters(path, "neural", scalars)

    @classmethod
    def load(cls, path: str | Path) -> NeuralModel:
        """The model `save` wrote to ``path``."""
        path = Path(path)
        scalars = read_parameters(path, "neural")
        with np.load(path.parent / scalars["arrays"]) as stored:
            weights = {k: stored[k] for k in _WEIGHTS}
        base = EventModel.load(path.parent / scalars["base"])
        return cls(base=base, delta=float(scalars["delta"]), meta=scalars["meta"], **weights)


def is_neural(path: str | Path) -> bool:
    """Whether the parameter file ``path`` holds a neural flow."""
    try:
        return json.loads(Path(path).read_text()).get("kind") == "neural"
    except (OSError, ValueError, AttributeError):
        return False
