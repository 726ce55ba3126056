"""The neural variant of a learned flow (`learned_flow.neural.NeuralModel`) trained by maximum
likelihood with torch.

The likelihood is exact for the model's rates, which are constant between the book's state
changes apart from the decaying burst: the sum of the log-rates of the events that came,
less the integral of every rate over each stretch of constant state (`StatePath`). The GRU reads
the window in ``chunks`` parallel stretches of consecutive events (each from a zero state);
the table starts from the parametric model's rates; the last tenth of the window (in time)
is held out to stop the training when it no longer improves.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

try:
    import torch
except ImportError:  # the extra that brings it is not installed: `torch_or_error` says so
    torch = None

from tradearena.envs.data.events import N_EVENT_KINDS, Events, StatePath
from tradearena.envs.errors import UserError
from tradearena.envs.simulator.learned_flow.model import EventModel
from tradearena.envs.simulator.learned_flow.neural import (
    BURST_EVENTS,
    INPUTS,
    SIDED_KINDS,
    NeuralModel,
    inputs,
    log_caps,
)

__all__ = ["fit_neural", "log_likelihood", "torch_or_error"]

_START_DELTA = 1000.0
"""The bursts' decay the training starts from, per second; each burst starts at a tenth of
its cap."""


def torch_or_error():
    """torch, or a `UserError` naming the extra that installs it."""
    if torch is None:
        raise UserError(
            "--model neural trains with torch, which is not installed: pip install "
            "'tradearena[deep]' (or `pip install torch`)"
        )
    return torch


@contextmanager
def _default_dtype(dtype) -> Iterator[None]:
    """torch's default dtype set to ``dtype`` inside, and back to the one it was after."""
    found = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(found)


@dataclass
class _Window:
    """What the likelihood reads of a window, as torch tensors: per event its (side, kind)
    index, own-side state, profile level, seconds since the event before and the GRU's
    input; per stretch of constant state its next event, both sides' states, profile level,
    start and end (seconds after the event before it)."""

    event: object
    cell: object
    level: object
    gap: object
    x: object
    next_event: object
    cells: object
    stretch_level: object
    since: object
    until: object


def _window(ev: Events, path: StatePath, base: EventModel) -> _Window:
    side = (ev.side < 0).astype(np.int64)
    event = side * N_EVENT_KINDS + ev.kind.astype(np.int64)
    gap = np.diff(ev.time, prepend=path.time[0])
    quoted = path.spread > 0
    starts = path.time[quoted]
    ends = np.append(path.time, path.end)[1:][quoted]
    spread, bid, ask = path.spread[quoted], path.bid[quoted], path.ask[quoted]
    nxt = np.searchsorted(ev.time, starts, side="right")
    before = np.where(nxt > 0, ev.time[np.maximum(nxt - 1, 0)], path.time[0])
    pool = base.pool  # a sparse state takes its pool's rates
    cells = pool[np.stack([base.cell(spread, bid, ask), base.cell(spread, ask, bid)], axis=1)]
    t, real = torch.as_tensor, torch.get_default_dtype()
    return _Window(
        event=t(event),
        cell=t(pool[base.cell(ev.spread, ev.own, ev.other)]),
        level=t(base.relative_rate(ev.time), dtype=real),
        gap=t(gap, dtype=real),
        x=t(inputs(event, gap), dtype=real),
        next_event=t(nxt),
        cells=t(cells),
        stretch_level=t(base.relative_rate(starts), dtype=real),
        since=t(starts - before, dtype=real),
        until=t(ends - before, dtype=real),
    )


def _network(base: EventModel, hidden: int):
    """The GRU and its heads, the table's bias set to the parametric model's log-rates."""
    nn = torch.nn
    cells = base.mu.shape[1]
    net = nn.ModuleDict(
        {
            "gru": nn.GRU(INPUTS, hidden, batch_first=True),
            "table": nn.Linear(hidden, 2 * N_EVENT_KINDS * cells),
            "burst": nn.Linear(hidden, 2 * N_EVENT_KINDS),
        }
    )
    with torch.no_grad():
        net["table"].weight.mul_(0.1)
        start = np.log(np.maximum(np.concatenate([base.mu, base.mu]).ravel(), 1e-6))
        net["table"].bias.copy_(torch.as_tensor(start, dtype=torch.float32))
        net["burst"].weight.mul_(0.1)
        net["burst"].bias.fill_(math.log(_START_DELTA * BURST_EVENTS / SIDED_KINDS / 10))
    net.log_delta = nn.Parameter(torch.tensor(math.log(_START_DELTA)))
    return net


def _hidden_before(net, w: _Window, chunks: int):
    """The GRU's state before each event and after the last ((n + 1, H)): each of
    ``chunks`` stretches of consecutive events read from a zero state."""
    n = w.x.shape[0]
    length = -(-n // chunks)
    padded = torch.zeros(chunks * length, INPUTS)
    padded[:n] = w.x
    out, _ = net["gru"](padded.view(chunks, length, INPUTS))
    after = out.reshape(chunks * length, -1)[:n]
    before = torch.cat([torch.zeros(1, after.shape[1]), after], dim=0)
    first = torch.arange(n + 1) % length == 0
    first[n] = False
    return torch.where(first[:, None], torch.zeros_like(before), before)


def _nll(net, base: EventModel, w: _Window, chunks: int):
    """Minus the log-likelihood per event."""
    cells = base.mu.shape[1]
    h = _hidden_before(net, w, chunks)
    delta = torch.exp(net.log_delta)
    weight, bias = net["table"].weight, net["table"].bias
    rows = w.event * cells + w.cell
    he = h[:-1]
    log_table = (weight[rows] * he).sum(dim=1) + bias[rows]
    table_cap, burst_cap = log_caps(base, net.log_delta)
    log_burst = net["burst"](he).gather(1, w.event[:, None])[:, 0]
    burst = torch.exp(torch.minimum(log_burst, burst_cap))
    rate = torch.exp(log_table.clamp(max=table_cap)) * w.level + burst * torch.exp(-delta * w.gap)
    hs = h[w.next_event]
    side = torch.arange(2 * N_EVENT_KINDS) // N_EVENT_KINDS
    kind_rows = torch.arange(2 * N_EVENT_KINDS)[None, :] * cells + w.cells[:, side]
    table = torch.einsum("skh,sh->sk", weight[kind_rows], hs) + bias[kind_rows]
    seconds = w.until - w.since
    baseline = (torch.exp(table.clamp(max=table_cap)).sum(dim=1) * w.stretch_level * seconds).sum()
    bursts = torch.exp(torch.minimum(net["burst"](hs), burst_cap)).sum(dim=1)
    fading = (torch.exp(-delta * w.since) - torch.exp(-delta * w.until)) / delta
    compensator = baseline + (bursts * fading).sum()
    return -(torch.log(rate).sum() - compensator) / len(w.event)


def fit_neural(
    base: EventModel,
    ev: Events,
    path: StatePath,
    *,
    hidden: int = 32,
    chunks: int = 8,
    epochs: int = 200,
    minutes: float = 10.0,
    seed: int = 0,
    progress=None,
) -> NeuralModel:
    """Train the neural variant of ``base`` on events ``ev`` over states ``path`` (the
    window ``base`` was fitted on), Adam, full-window steps, stopped by the held-out last
    tenth after 10 epochs without improvement, at ``epochs`` or after ``minutes``;
    ``progress(epoch, train, held_out)`` after each epoch."""
    torch_or_error()
    torch.manual_seed(seed)
    cut = path.time[0] + 0.9 * (path.end - path.time[0])
    train_ev, held_ev = ev.take(ev.time < cut), ev.take(ev.time >= cut)
    first = int(np.searchsorted(path.time, cut, side="right")) - 1
    train_path = StatePath(path.time[: first + 1], *(a[: first + 1] for a in _states(path)), cut)
    held_time = path.time[first:].copy()
    held_time[0] = cut
    held_path = StatePath(held_time, *(a[first:] for a in _states(path)), path.end)
    train = _window(train_ev, train_path, base)
    held = _window(held_ev, held_path, base)
    net = _network(base, hidden)
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)
    best, best_state, stale, began = math.inf, None, 0, time.perf_counter()
    for epoch in range(epochs):
        optimizer.zero_grad()
        loss = _nll(net, base, train, chunks)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 10.0)
        optimizer.step()
        with torch.no_grad():
            score = float(_nll(net, base, held, 1))
        if progress is not None:
            progress(epoch, loss.item(), score)
        if score < best - 1e-4:
            best, stale = score, 0
            best_state = {k: v.detach().clone() for k, v in net.state_dict().items()}
        else:
            stale += 1
        if stale >= 10 or time.perf_counter() - began > 60 * minutes:
            break
    net.load_state_dict(best_state)
    meta = {
        "events": len(ev),
        "held_out_log_likelihood_per_event": -best,
        "epochs": epoch + 1,
        "seconds": time.perf_counter() - began,
        "hidden": hidden,
    }
    return _export(net, base, meta)


def _states(path: StatePath) -> tuple[np.ndarray, ...]:
    return path.spread, path.bid, path.ask


def _export(net, base: EventModel, meta: dict) -> NeuralModel:
    """The trained network as numpy arrays."""
    gru = net["gru"]

    def array(tensor) -> np.ndarray:
        return tensor.detach().double().numpy().copy()

    return NeuralModel(
        base=base,
        weight_ih=array(gru.weight_ih_l0),
        weight_hh=array(gru.weight_hh_l0),
        bias_ih=array(gru.bias_ih_l0),
        bias_hh=array(gru.bias_hh_l0),
        table_weight=array(net["table"].weight),
        table_bias=array(net["table"].bias),
        burst_weight=array(net["burst"].weight),
        burst_bias=array(net["burst"].bias),
        delta=math.exp(net.log_delta.item()),
        meta=meta,
    )


def log_likelihood(model: NeuralModel, ev: Events, path: StatePath) -> float:
    """The log-likelihood of ``ev`` over ``path`` under ``model``, nats per event, its GRU
    reading the events in one stretch (torch, double precision)."""
    torch_or_error()
    with _default_dtype(torch.float64), torch.no_grad():
        net = _network(model.base, model.hidden)
        gru = net["gru"]
        for name, value in (
            ("weight_ih_l0", model.weight_ih),
            ("weight_hh_l0", model.weight_hh),
            ("bias_ih_l0", model.bias_ih),
            ("bias_hh_l0", model.bias_hh),
        ):
            getattr(gru, name).copy_(torch.as_tensor(value))
        net["table"].weight.copy_(torch.as_tensor(model.table_weight))
        net["table"].bias.copy_(torch.as_tensor(model.table_bias))
        net["burst"].weight.copy_(torch.as_tensor(model.burst_weight))
        net["burst"].bias.copy_(torch.as_tensor(model.burst_bias))
        net.log_delta.copy_(torch.tensor(math.log(model.delta)))
        return -float(_nll(net, model.base, _window(ev, path, model.base), 1))
